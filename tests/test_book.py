"""Checks on the book as a whole: the table of contents, the stored notebooks, the config.

nbval (run on every chapter by the same pytest command) checks that each notebook's
stored outputs reproduce; these tests check what nbval does not: that every chapter
is listed and executed, and that no stored output is an error or a stray warning.
"""

from __future__ import annotations

import importlib.util
import json
import os
import platform
import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
CHAPTERS = ROOT / "chapters"
NOTEBOOKS = sorted(CHAPTERS.glob("*.ipynb"))
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"

# Run in a notebook kernel: where its caches and per-user configuration live.
CACHE_PROBE = """
import json, os, matplotlib, IPython, jupyter_core.paths
dirs = {
    "matplotlib cache": matplotlib.get_cachedir(),
    "matplotlib config": matplotlib.get_configdir(),
    "IPython dir": IPython.paths.get_ipython_dir(),
    "Jupyter runtime": jupyter_core.paths.jupyter_runtime_dir(),
    "Jupyter config": jupyter_core.paths.jupyter_config_dir(),
    "Jupyter data": jupyter_core.paths.jupyter_data_dir(),
    "XDG cache": os.environ.get("XDG_CACHE_HOME", "unset"),
}
try:
    from numba.core import config
except ImportError:
    pass
else:
    dirs["Numba cache"] = config.CACHE_DIR
print(json.dumps(dirs))
"""


def toc_files() -> list[str]:
    """Every page of _toc.yml in reading order: the root, then each part's entries."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = [toc["root"]]

    def walk(entries: list[dict]) -> None:
        for entry in entries:
            if "file" in entry:
                files.append(entry["file"])
            for key in ("parts", "chapters", "sections"):
                walk(entry.get(key, []))

    walk([{key: toc[key] for key in ("parts", "chapters") if key in toc}])
    return files


def test_chapters_are_numbered_and_the_rest_is_not():
    # Per-chapter numbering (Theorem 3.1, eq. (2.4), Fig. 6.2) comes from numbering the
    # chapters' toctree; the intro must not hold a second toctree ({tableofcontents}),
    # which would number the chapters a second time (11, 12, ...).
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    numbered = [part for part in toc["parts"] if part.get("numbered")]
    assert len(numbered) == 1
    assert all(re.match(r"chapters/\d\d_", entry["file"]) for entry in numbered[0]["chapters"])
    assert "{tableofcontents}" not in (ROOT / "chapters" / "intro.ipynb").read_text()


def load(path: Path) -> dict:
    return json.loads(path.read_text())


WORDS_PER_MINUTE = 200


def reading_minutes(path: Path) -> int:
    """Minutes to read a chapter's prose at WORDS_PER_MINUTE, rounded up to 5.

    A formula counts as one word; code fences' info strings are not words.
    """
    text = "\n".join(
        "".join(cell["source"]) for cell in load(path)["cells"] if cell["cell_type"] == "markdown"
    )
    text = re.sub(r"\$\$.*?\$\$", " formula ", text, flags=re.S)
    text = re.sub(r"\$[^$]+\$", " formula ", text)
    text = re.sub(r"```.*?\n", "", text)
    words = len(re.findall(r"[A-Za-z0-9][\w'’-]*", text))
    return 5 * -(-words // (5 * WORDS_PER_MINUTE))


def test_the_intro_states_each_chapters_reading_time():
    intro = "".join("".join(cell["source"]) for cell in load(CHAPTERS / "intro.ipynb")["cells"])
    stated = dict(re.findall(r"\{doc\}`(\d\d_\w+)` \((\d+) min\)", intro))
    chapters = sorted(CHAPTERS.glob("[0-9][0-9]_*.ipynb"))
    assert sorted(stated) == [path.stem for path in chapters]
    for path in chapters:
        assert int(stated[path.stem]) == reading_minutes(path), path.name


def test_toc_lists_existing_pages_and_every_notebook():
    listed = toc_files()
    for name in listed:
        assert any((ROOT / f"{name}{suffix}").exists() for suffix in (".md", ".ipynb")), name
    for notebook in NOTEBOOKS:
        assert f"chapters/{notebook.stem}" in listed, f"{notebook.name} is not in _toc.yml"


def test_chapter_notebooks_are_in_numbered_order():
    chapters = [name for name in toc_files() if re.match(r"chapters/\d\d_", name)]
    assert chapters == sorted(chapters)
    assert chapters, "no chapter notebooks listed"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: path.name)
def test_notebook_is_executed_and_clean(path):
    notebook = load(path)
    assert notebook["metadata"]["kernelspec"]["name"] == "python3"
    titles = [
        line
        for cell in notebook["cells"]
        if cell["cell_type"] == "markdown"
        for line in "".join(cell["source"]).splitlines()
        if line.startswith("# ")
    ]
    assert len(titles) == 1, f"expected one '# ' title, found {titles}"
    counts = []
    for index, cell in enumerate(notebook["cells"]):
        if cell["cell_type"] != "code" or not "".join(cell["source"]).strip():
            continue
        assert cell.get("execution_count") is not None, f"cell {index} was not executed"
        counts.append(cell["execution_count"])
        for output in cell.get("outputs", []):
            assert output["output_type"] != "error", f"cell {index} stores an error"
            is_stderr = output["output_type"] == "stream" and output["name"] == "stderr"
            assert not is_stderr, f"cell {index} writes to stderr: {output.get('text')}"
        tags = cell.get("metadata", {}).get("tags", [])
        if "nbval-ignore-output" in tags:
            shown = [output.get("data", {}) for output in cell.get("outputs", [])]
            assert any(WIDGET_MIME in data for data in shown), (
                f"cell {index} ignores its output under nbval but shows no widget"
            )
    assert counts == list(range(1, len(counts) + 1)), "cells were not run top to bottom once"


def test_config_builds_offline_and_strict():
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    assert config["execute"]["execute_notebooks"] == "off"
    sphinx = config["sphinx"]["config"]
    assert sphinx["nitpicky"] is True
    # MathJax comes from a pinned local copy, never a CDN; no widget manager is loaded:
    # widgets are shown through their kernel-free HTML version.
    assert not sphinx["mathjax_path"].startswith("http")
    assert sphinx["nb_ipywidgets_js"] == {}
    assert ["html", "text/html", 0] in sphinx["nb_mime_priority_overrides"]
    assert "copyright" in config
    assert config["bibtex_bibfiles"] == ["references.bib"]


def test_every_citation_key_exists():
    bib = (ROOT / "references.bib").read_text()
    keys = set(re.findall(r"@\w+\{([^,]+),", bib))
    sources = [path.read_text() for path in CHAPTERS.glob("*.md")]
    sources += [
        "".join(cell["source"])
        for path in NOTEBOOKS
        for cell in load(path)["cells"]
        if cell["cell_type"] == "markdown"
    ]
    cited = {
        key.strip()
        for text in sources
        for group in re.findall(r"\{cite(?::\w+)?\}`([^`]+)`", text)
        for key in group.split(",")
    }
    assert cited, "the book cites nothing"
    assert cited <= keys, f"unknown citation keys: {sorted(cited - keys)}"


def test_notebook_kernels_keep_their_caches_inside_the_checkout():
    # Start a kernel as nbval does (the parent environment's Python, chapters/ as the
    # working directory) and ask it where matplotlib, Numba, IPython and Jupyter keep
    # caches: a user-level cache written by another environment once changed an output.
    from nbval.kernel import CURRENT_ENV_KERNEL_NAME, start_new_kernel

    manager, client = start_new_kernel(
        startup_timeout=120, kernel_name=CURRENT_ENV_KERNEL_NAME, cwd=str(CHAPTERS)
    )
    printed = []

    def collect(message):
        if message["msg_type"] == "stream":
            printed.append(message["content"]["text"])

    try:
        reply = client.execute_interactive(CACHE_PROBE, timeout=120, output_hook=collect)
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
    assert reply["content"]["status"] == "ok", reply["content"]
    dirs = json.loads("".join(printed))
    assert "Numba cache" in dirs or importlib.util.find_spec("numba") is None
    outside = {
        name: path for name, path in dirs.items() if not Path(path).resolve().is_relative_to(ROOT)
    }
    assert not outside, f"caches outside the checkout: {outside}"


def load_portability():
    spec = importlib.util.spec_from_file_location("portability", ROOT / "tests" / "portability.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_portability_disables_exactly_the_dispatch_targets_this_cpu_has():
    from numpy._core import _multiarray_umath as umath

    portability = load_portability()
    dispatch = list(umath.__cpu_dispatch__)
    features = dict(umath.__cpu_features__)
    named = portability.dispatch_targets_to_disable(dispatch, features)
    # Never a target the CPU lacks (NumPy may refuse it), every one it has, NumPy's order.
    assert named == [target for target in dispatch if features[target]]
    assert all(features[target] for target in named)
    # The logic on made-up CPUs: a baseline-only CPU disables nothing; an AVX-512 one
    # disables every target it has and nothing unknown.
    table = ["X86_V3", "X86_V4", "AVX512_ICL", "AVX512_SPR"]
    assert portability.dispatch_targets_to_disable(table, {"X86_V2": True}) == []
    avx512 = {"X86_V3": True, "X86_V4": True, "AVX512_ICL": True, "AVX512_SPR": False}
    assert portability.dispatch_targets_to_disable(table, avx512) == table[:3]


def test_portability_env_changes_cpu_blas_core_and_numba_target():
    portability = load_portability()
    host = {
        "dispatch": ["X86_V3", "X86_V4", "AVX512_ICL", "AVX512_SPR"],
        "features": {"X86_V3": True, "X86_V4": False, "AVX": True, "SSE42": True},
        "blas_cores": ["Haswell"],
        "numba_cpu": "host",
        "libm": "host bits",
    }
    base = {"NUMBA_CACHE_DIR": str(ROOT / ".cache" / "numba"), "HOME": os.environ["HOME"]}
    env, notes = portability.portability_env(base, host)
    assert env["NPY_DISABLE_CPU_FEATURES"] == "X86_V3"
    assert env["OPENBLAS_CORETYPE"] == "Sandybridge"
    assert env["NUMBA_CPU_NAME"] == "generic"
    assert env["NUMBA_CACHE_DIR"] != base["NUMBA_CACHE_DIR"]
    assert Path(env["NUMBA_CACHE_DIR"]).is_relative_to(ROOT)
    assert len(notes) == 5
    # No FMA in the (made-up) features: the C library's switch is left alone; no
    # PyTorch reported: its switch too.
    assert "GLIBC_TUNABLES" not in env
    assert "ATEN_CPU_CAPABILITY" not in env
    with_torch, _ = portability.portability_env(base, {**host, "torch_cpu": "AVX512"})
    assert with_torch["ATEN_CPU_CAPABILITY"] == "default"
    already, _ = portability.portability_env(base, {**host, "torch_cpu": "DEFAULT"})
    assert "ATEN_CPU_CAPABILITY" not in already
    # A CPU that already runs Sandybridge kernels falls back to Nehalem; no AVX, no
    # Sandybridge; no OpenBLAS, no core.
    assert portability.older_blas_core("SandyBridge", host["features"]) == "Nehalem"
    assert portability.older_blas_core("Nehalem", {"SSE42": True}) is None
    assert portability.older_blas_core("Core2", {"SSE42": True}) == "Nehalem"
    assert portability.older_blas_core(None, host["features"]) is None
    seen = {**host, "features": {"X86_V3": False}, "blas_cores": ["Sandybridge"]}
    assert portability.check_applied(env, {**seen, "numba_cpu": "generic"}, host) == []
    assert portability.check_applied(env, host, host)
    # With FMA on an x86-64 glibc machine, the C library runs its non-FMA code, and
    # the switch counts as applied only if exp, log and pow then give other bits.
    with_fma = {**host, "features": {**host["features"], "FMA3": True}}
    env, notes = portability.portability_env(base, with_fma)
    if platform.machine() in ("x86_64", "AMD64") and platform.libc_ver()[0] == "glibc":
        assert "glibc.cpu.hwcaps=-AVX2,-FMA,-FMA4" in env["GLIBC_TUNABLES"]
        generic = {**seen, "numba_cpu": "generic"}
        assert portability.check_applied(env, generic, with_fma) != []
        assert portability.check_applied(env, {**generic, "libm": "other"}, with_fma) == []


# The text column of a page at a 1280-pixel window is about 690 pixels wide; a wider
# figure is scaled down. The book's text is at least 9 pt (13.75 pixels at 110 dpi),
# so a figure at most 945 pixels wide keeps every label at 10 pixels or more.
MAX_FIGURE_WIDTH = 945


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: path.name)
def test_figures_are_sharp_and_narrow_enough_for_readable_labels(path):
    import base64
    import struct

    for index, cell in enumerate(load(path)["cells"]):
        for output in cell.get("outputs", []):
            if "image/png" not in output.get("data", {}):
                continue
            # A widget's default frame (for the PDF and notebook viewers) is no figure.
            widget = "lgc-widget" in "".join(output["data"].get("text/html", ""))
            png = base64.b64decode(output["data"]["image/png"])
            pixels = struct.unpack(">I", png[16:20])[0]
            shown = output.get("metadata", {}).get("image/png", {}).get("width")
            # Retina: twice as many pixels as the figure is shown wide.
            assert shown is not None and pixels >= 2 * int(shown) - 2, (
                f"cell {index}: a {pixels}-pixel PNG shown {shown} wide is not retina"
            )
            assert int(shown) <= MAX_FIGURE_WIDTH, (
                f"cell {index}: a figure {shown} pixels wide shrinks its labels below 10 px"
            )
            caption = cell.get("metadata", {}).get("mystnb", {}).get("figure", {})
            assert widget or (caption.get("caption") and caption.get("name")), (
                f"cell {index}: every figure is numbered and captioned"
            )


# A code block or a printed output wider than 79 characters scrolls sideways in the
# text column of a page at a 1280-pixel window (tried in Chromium).
MAX_LINE = 79


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: path.name)
def test_code_and_printed_lines_fit_the_page(path):
    for index, cell in enumerate(load(path)["cells"]):
        if cell["cell_type"] != "code":
            continue
        for line in "".join(cell["source"]).splitlines():
            assert len(line) <= MAX_LINE, f"cell {index}: code line of {len(line)}: {line}"
        for output in cell.get("outputs", []):
            if output["output_type"] == "stream":
                text = "".join(output["text"])
            elif "text/html" in output.get("data", {}):
                continue  # a widget or a table laid out by the page
            else:
                text = "".join(output.get("data", {}).get("text/plain", ""))
            for line in text.splitlines():
                assert len(line) <= MAX_LINE, f"cell {index}: printed line of {len(line)}: {line}"


def test_the_intro_figure_caption_states_what_the_figure_computes():
    """The landing page's caption quotes rho and the global cosine of both panels."""
    from cosine_book.similarity import block_cosines, blocks_with

    cells = load(CHAPTERS / "intro.ipynb")["cells"]
    figure = next(cell for cell in cells if cell["cell_type"] == "code")
    source = "".join(figure["source"])
    caption = figure["metadata"]["mystnb"]["figure"]["caption"]
    assert "local = [0.95, 0.90]" in source
    panels = [
        (([1.0, 0.6], [1.0, 0.6]), "$\\rho = 1$", "0.94"),
        (([1.0, 0.1], [0.1, 1.0]), "$\\rho = 0.20$", "0.18"),
    ]
    for (x_norms, y_norms), rho_text, global_text in panels:
        assert f"(local, {x_norms}, {y_norms})" in source
        result = block_cosines(*blocks_with([0.95, 0.90], x_norms, y_norms))
        rho = f"{result.profile_cosine:.2f}".removesuffix(".00")
        assert rho_text == f"$\\rho = {rho}$" and rho_text in caption
        assert f"{result.global_cosine:.2f}" == global_text and global_text in caption
