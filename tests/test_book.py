"""Checks on the book as a whole: the table of contents, the stored notebooks, the config.

nbval (run on every chapter by the same pytest command) checks that each notebook's
stored outputs reproduce; these tests check what nbval does not: that every chapter
is listed and executed, and that no stored output is an error or a stray warning.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
CHAPTERS = ROOT / "chapters"
NOTEBOOKS = sorted(CHAPTERS.glob("*.ipynb"))
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


def toc_files() -> list[str]:
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = [toc["root"]]
    files += [entry["file"] for entry in toc.get("chapters", [])]
    return files


def load(path: Path) -> dict:
    return json.loads(path.read_text())


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
    # MathJax and the widget manager come from pinned local copies, never a CDN.
    assert not sphinx["mathjax_path"].startswith("http")
    assert all(not key.startswith("http") for key in sphinx["nb_ipywidgets_js"])
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
