"""Re-run the notebooks and doctests as on another x86-64 machine; ``make test`` runs this.

A stored output that reproduces on this machine may still differ on a reader's: NumPy
picks SIMD kernels for the CPU at run time, OpenBLAS picks its kernels for the CPU, and
Numba compiles for the host. This script re-runs nbval on ``chapters/`` and the package
doctests with all three moved to an older CPU, and so requires the same outputs there:

- ``NPY_DISABLE_CPU_FEATURES``: NumPy's dispatch targets above its baseline that this
  CPU has (read at run time; targets the CPU lacks are never named, they are unused);
- ``OPENBLAS_CORETYPE``: an older OpenBLAS core that this CPU can run (Sandybridge, or
  Nehalem when Sandybridge is already in use or the CPU lacks AVX);
- ``NUMBA_CPU_NAME=generic``, with its own ``NUMBA_CACHE_DIR`` so that generic and
  host code never share a cache;
- ``GLIBC_TUNABLES=glibc.cpu.hwcaps=-AVX2,-FMA,-FMA4`` on x86-64 Linux with glibc, when
  the CPU has FMA: the C library's ``exp``, ``log``, ``pow``, ... then run their
  non-FMA code, as on a CPU without FMA (their last bits differ for about one
  input in 1,500 to 10,000). NumPy's samplers (gamma, Dirichlet, Gumbel, normal tails) call
  these functions.
- ``ATEN_CPU_CAPABILITY=default``: PyTorch's CPU kernels without vector instructions
  (chapter 1 trains a transformer; its sums and ``exp``, ``tanh``, ``gelu`` then round
  differently from the AVX2 and AVX-512 kernels a reader's CPU picks).

It prints what it changed and checks, in a child process, that each change took
effect. Usage: ``python tests/portability.py [PYTEST ARGS]``; arguments replace the
default ``chapters code/cosine_book``.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_PYTEST_ARGS = ("chapters", "code/cosine_book")
# Older OpenBLAS cores in order of preference, each with the NumPy CPU feature it needs.
BLAS_CORES = (("Sandybridge", "AVX"), ("Nehalem", "SSE42"))
# glibc's CPU features whose libm variants (exp, log, pow, sin, ...) are switched off.
GLIBC_HWCAPS_OFF = "-AVX2,-FMA,-FMA4"

# Run in a child process under a given environment: what NumPy, OpenBLAS and Numba see.
PROBE = """
import json
import numpy._core._multiarray_umath as umath
import threadpoolctl
report = {
    "dispatch": list(umath.__cpu_dispatch__),
    "features": {name: bool(on) for name, on in umath.__cpu_features__.items()},
    "blas_cores": [
        info.get("architecture")
        for info in threadpoolctl.threadpool_info()
        if info.get("internal_api") == "openblas"
    ],
}
import math
import hashlib
# The C library's exp, log and pow on fixed inputs: FMA and non-FMA code differ here.
values = [v / 65536 for v in range(1, 65536)]
libm = [math.exp(-20 * v) for v in values] + [math.log(v) for v in values]
libm += [math.pow(7 * v + 0.1, 0.37 + v) for v in values]
report["libm"] = hashlib.sha256(repr(libm).encode()).hexdigest()
try:
    from numba.core import config
except ImportError:
    report["numba_cpu"] = None
else:
    report["numba_cpu"] = config.CPU_NAME or "host"
try:
    import torch
except ImportError:
    report["torch_cpu"] = None
else:
    report["torch_cpu"] = torch.backends.cpu.get_cpu_capability()
print(json.dumps(report))
"""


def dispatch_targets_to_disable(dispatch: Sequence[str], features: Mapping[str, bool]) -> list[str]:
    """NumPy's dispatch targets (above its baseline) that this CPU has, in NumPy's order.

    Parameters
    ----------
    dispatch : sequence of str
        ``numpy._core._multiarray_umath.__cpu_dispatch__``.
    features : mapping of str to bool
        ``numpy._core._multiarray_umath.__cpu_features__``.

    Returns
    -------
    list of str
        The targets to name in ``NPY_DISABLE_CPU_FEATURES``; never one the CPU lacks.

    Examples
    --------
    >>> dispatch = ["X86_V3", "X86_V4", "AVX512_ICL", "AVX512_SPR"]
    >>> dispatch_targets_to_disable(dispatch, {"X86_V3": True, "X86_V4": False})
    ['X86_V3']
    """
    return [target for target in dispatch if features.get(target, False)]


def older_blas_core(current: str | None, features: Mapping[str, bool]) -> str | None:
    """An older OpenBLAS core that this CPU can run and that is not the one in use.

    Parameters
    ----------
    current : str or None
        The core OpenBLAS uses now (``threadpoolctl``'s ``architecture``); None when
        NumPy's BLAS is not OpenBLAS.
    features : mapping of str to bool
        NumPy's CPU features.

    Returns
    -------
    str or None
        The value for ``OPENBLAS_CORETYPE``, or None if there is none to switch to.

    Examples
    --------
    >>> older_blas_core("Haswell", {"AVX": True, "SSE42": True})
    'Sandybridge'
    >>> older_blas_core("Sandybridge", {"AVX": True, "SSE42": True})
    'Nehalem'
    >>> older_blas_core(None, {"AVX": True}) is None
    True
    """
    if current is None:
        return None
    for core, needs in BLAS_CORES:
        if features.get(needs, False) and core.lower() != current.lower():
            return core
    return None


def probe(env: Mapping[str, str]) -> dict:
    """What NumPy, OpenBLAS and Numba see in a fresh interpreter under ``env``."""
    result = subprocess.run(
        [sys.executable, "-c", PROBE], env=dict(env), capture_output=True, text=True, check=True
    )
    return json.loads(result.stdout)


def portability_env(base: Mapping[str, str], host: Mapping) -> tuple[dict[str, str], list[str]]:
    """The environment of the portability run, and a line per change made.

    Parameters
    ----------
    base : mapping of str to str
        The environment to start from.
    host : mapping
        :func:`probe` under ``base``.

    Returns
    -------
    env : dict of str to str
        ``base`` with the variables set.
    notes : list of str
        What was set and why, for the log.
    """
    env = dict(base)
    notes = []
    disable = dispatch_targets_to_disable(host["dispatch"], host["features"])
    absent = [target for target in host["dispatch"] if target not in disable]
    already = base.get("NPY_DISABLE_CPU_FEATURES", "").replace(",", " ").split()
    env["NPY_DISABLE_CPU_FEATURES"] = " ".join(dict.fromkeys(already + disable))
    notes.append(
        f"NPY_DISABLE_CPU_FEATURES={env['NPY_DISABLE_CPU_FEATURES']!r}"
        f" (NumPy dispatch targets this CPU has: {' '.join(disable) or 'none'};"
        f" lacks, so left alone: {' '.join(absent) or 'none'})"
    )
    is_x86 = platform.machine().lower() in {"x86_64", "amd64"}
    current = host["blas_cores"][0] if host["blas_cores"] else None
    core = older_blas_core(current, host["features"]) if is_x86 else None
    if core is None:
        notes.append(f"OPENBLAS_CORETYPE not set (OpenBLAS core in use: {current})")
    else:
        env["OPENBLAS_CORETYPE"] = core
        notes.append(f"OPENBLAS_CORETYPE={core} (OpenBLAS core in use: {current})")
    if is_x86 and platform.libc_ver()[0] == "glibc" and host["features"].get("FMA3", False):
        tunable = "glibc.cpu.hwcaps=" + GLIBC_HWCAPS_OFF
        env["GLIBC_TUNABLES"] = ":".join(filter(None, [base.get("GLIBC_TUNABLES"), tunable]))
        notes.append(f"GLIBC_TUNABLES={env['GLIBC_TUNABLES']} (libm without FMA code)")
    else:
        notes.append("GLIBC_TUNABLES not set (not x86-64 glibc, or no FMA to switch off)")
    if host.get("torch_cpu") not in (None, "DEFAULT"):
        env["ATEN_CPU_CAPABILITY"] = "default"
        notes.append(f"ATEN_CPU_CAPABILITY=default (PyTorch kernels in use: {host['torch_cpu']})")
    else:
        notes.append(f"ATEN_CPU_CAPABILITY not set (PyTorch kernels: {host.get('torch_cpu')})")
    env["NUMBA_CPU_NAME"] = "generic"
    cache = Path(base.get("NUMBA_CACHE_DIR", ROOT / ".cache" / "numba"))
    env["NUMBA_CACHE_DIR"] = str(cache.with_name(cache.name + "-generic"))
    notes.append(f"NUMBA_CPU_NAME=generic, NUMBA_CACHE_DIR={env['NUMBA_CACHE_DIR']}")
    return env, notes


def check_applied(env: Mapping[str, str], seen: Mapping, host: Mapping) -> list[str]:
    """Problems, if any: a requested change that :func:`probe` under ``env`` does not see.

    ``host`` is :func:`probe` without the changes: the C library's switch is seen in
    its results, which must differ from the host's.
    """
    problems = []
    if GLIBC_HWCAPS_OFF in env.get("GLIBC_TUNABLES", "") and seen["libm"] == host["libm"]:
        problems.append("the C library's exp, log and pow give the host's bits")
    requested = env["NPY_DISABLE_CPU_FEATURES"].split()
    still_on = [target for target in requested if seen["features"].get(target, False)]
    if still_on:
        problems.append(f"NumPy still uses {still_on}")
    core = env.get("OPENBLAS_CORETYPE")
    if core is not None and [c.lower() for c in seen["blas_cores"]] != [core.lower()]:
        problems.append(f"OpenBLAS reports cores {seen['blas_cores']}, not {core}")
    if env.get("ATEN_CPU_CAPABILITY") == "default" and seen.get("torch_cpu") != "DEFAULT":
        problems.append(f"PyTorch runs its {seen.get('torch_cpu')} kernels, not the default ones")
    if seen["numba_cpu"] not in (None, "generic"):
        problems.append(f"Numba compiles for {seen['numba_cpu']}, not generic")
    return problems


def compare_here_and_there(code: str) -> tuple[dict, dict, list[str]]:
    """Run ``code`` (which prints JSON) here and on the simulated older CPU.

    Returns
    -------
    here, there : dict
        What ``code`` printed in each environment.
    notes : list of str
        What the simulated environment changed (for failure messages).
    """
    host = probe(os.environ)
    env, notes = portability_env(os.environ, host)
    problems = check_applied(env, probe(env), host)
    if problems:
        raise RuntimeError("the simulated machine was not set up: " + "; ".join(problems))

    def run(environment: Mapping[str, str]) -> dict:
        done = subprocess.run(
            [sys.executable, "-c", code],
            env=dict(environment),
            capture_output=True,
            text=True,
            cwd=ROOT,
        )
        if done.returncode != 0:
            raise RuntimeError(done.stderr)
        return json.loads(done.stdout)

    return run(os.environ), run(env), notes


def main(argv: Sequence[str]) -> int:
    """Compute the environment, check it takes effect, run pytest under it."""
    host = probe(os.environ)
    env, notes = portability_env(os.environ, host)
    for note in notes:
        print(f"   {note}", flush=True)
    problems = check_applied(env, probe(env), host)
    if problems:
        print("portability: the simulated machine was not set up:", "; ".join(problems))
        return 1
    command = [sys.executable, "-m", "pytest", *(argv or DEFAULT_PYTEST_ARGS)]
    return subprocess.run(command, env=env, cwd=ROOT).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
