"""pytest configuration shared by the package tests, doctests and notebook checks."""

import os
from pathlib import Path

from hypothesis import settings

ROOT = Path(__file__).resolve().parent
CACHE = ROOT / ".cache"

# Nothing outside the checkout may change an output. Every cache and per-user
# configuration that the tests or the notebook kernels (started by nbval, which
# inherit this environment) read lives under the git-ignored .cache/ folder: a
# matplotlib font cache written by another environment once made a chapter print
# "findfont" warnings. The Makefile exports the same variables; setdefault lets a
# caller (the portability check) choose its own Numba cache.
CACHE_DIRS = {
    "MPLCONFIGDIR": CACHE / "matplotlib",
    "NUMBA_CACHE_DIR": CACHE / "numba",
    "XDG_CACHE_HOME": CACHE,
    "IPYTHONDIR": CACHE / "ipython",
    "JUPYTER_CONFIG_DIR": CACHE / "jupyter" / "config",
    "JUPYTER_DATA_DIR": CACHE / "jupyter" / "data",
    "JUPYTER_RUNTIME_DIR": CACHE / "jupyter" / "runtime",
}
for name, path in CACHE_DIRS.items():
    os.environ.setdefault(name, str(path))
    Path(os.environ[name]).mkdir(parents=True, exist_ok=True)
# Models and data load from installed packages, never from a hub; every Python the
# tests start (nbval's kernels, scripts) refuses connections beyond this machine
# (tests/offline/sitecustomize.py), so a chapter that reached for a network fails.
os.environ.update(
    {
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "HF_HUB_DISABLE_TELEMETRY": "1",
        "HF_HUB_DISABLE_PROGRESS_BARS": "1",
    }
)
OFFLINE_SITE = str(ROOT / "tests" / "offline")
if OFFLINE_SITE not in os.environ.get("PYTHONPATH", "").split(os.pathsep):
    os.environ["PYTHONPATH"] = os.pathsep.join(
        filter(None, [OFFLINE_SITE, os.environ.get("PYTHONPATH")])
    )
# Kernels hash strings the same way on every run, as under `make execute`.
os.environ.setdefault("PYTHONHASHSEED", "0")
# A user's MPLBACKEND (e.g. Agg) would stop ipykernel from choosing the inline
# backend, so figures would vanish from the outputs.
os.environ.pop("MPLBACKEND", None)

# Property tests draw the same examples on every run (CI must not be flaky), keep no
# example database on disk, and never fail on timing. `make fuzz` selects the "fuzz"
# profile (HYPOTHESIS_PROFILE=fuzz): fresh random examples on every run, and
# FUZZ_FACTOR times as many per property as the test's own setting (the profile's
# max_examples, 100, for a test that sets none), applied below.
FUZZ_FACTOR = 20
settings.register_profile("book", derandomize=True, database=None, deadline=None)
settings.register_profile(
    "fuzz", derandomize=False, database=None, deadline=None, max_examples=100, print_blob=True
)
PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "book")
settings.load_profile(PROFILE)


def pytest_collection_modifyitems(items):
    """Under the "fuzz" profile, give each property test FUZZ_FACTOR times its examples."""
    if PROFILE != "fuzz":
        return
    scaled = set()
    for item in items:
        test = getattr(getattr(item, "obj", None), "__func__", getattr(item, "obj", None))
        own = getattr(test, "_hypothesis_internal_use_settings", None)
        if own is None or not getattr(test, "is_hypothesis_test", False) or id(test) in scaled:
            continue
        # Parametrized items share one function: scale it once. Hypothesis's pytest
        # plugin sets this same attribute to adjust a test's settings.
        scaled.add(id(test))
        test._hypothesis_internal_use_settings = settings(
            own, max_examples=own.max_examples * FUZZ_FACTOR
        )
