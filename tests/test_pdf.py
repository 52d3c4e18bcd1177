"""Checks on the PDF edition (`make pdf`): glyphs, references, figures and theorems.

`make test` runs these after `make pdf` (the `pdf-test` target); the main pytest run
leaves this file out (pyproject.toml), since it needs the built PDF, its LaTeX log and
poppler's pdftotext, pdfimages and pdfinfo. The tests never build the PDF themselves.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import unicodedata
from pathlib import Path
from urllib.parse import unquote, urljoin

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
PDF = ROOT / "_build" / "pdf" / "book.pdf"
LATEX_LOG = ROOT / "_build" / "latex" / "book.log"
HTML = ROOT / "_build" / "html"
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
# What the LaTeX builder shows of an output, best first (MyST-NB's order for "latex",
# with nb_mime_priority_overrides in _config.yml): the first three are pictures.
LATEX_PICTURES = ("application/pdf", "image/png", "image/jpeg")
# Cells whose output the book does not show.
HIDDEN_OUTPUT_TAGS = {"remove-output", "remove-cell"}
# Until every widget output carries a picture of its default frame (image/png), a widget
# prints as its text form and the widget test skips. Set to True once they all do: then
# a widget without a picture fails.
WIDGET_PICTURES_REQUIRED = True


def run(*command: str) -> str:
    tool = shutil.which(command[0])
    if tool is None:
        pytest.fail(
            f"{command[0]} is missing: install Debian's poppler-utils (`make pdf-test` does)",
            pytrace=False,
        )
    return subprocess.run([tool, *command[1:]], check=True, capture_output=True, text=True).stdout


@pytest.fixture(scope="module")
def pdf() -> Path:
    if not PDF.exists() or not LATEX_LOG.exists():
        pytest.fail(f"no PDF at {PDF} (or no LaTeX log): run `make pdf` first", pytrace=False)
    return PDF


@pytest.fixture(scope="module")
def pdf_text(pdf) -> str:
    """The PDF's text, ligatures and mathematical letters folded (NFKC), spaces collapsed."""
    text = unicodedata.normalize("NFKC", run("pdftotext", "-enc", "UTF-8", str(pdf), "-"))
    return re.sub(r"\s+", " ", text)


@pytest.fixture(scope="module")
def latex_log(pdf) -> str:
    """The log of XeLaTeX's last run (latexmk reruns until references settle)."""
    return LATEX_LOG.read_text(encoding="utf-8", errors="replace")


def pages_in_reading_order() -> list[tuple[Path, int | None]]:
    """Each page of _toc.yml (notebook or markdown) with its chapter number, if any."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    pages = [(toc["root"], None)]

    def walk(entries: list[dict], number: int | None) -> None:
        for entry in entries:
            pages.append((entry["file"], number))
            walk(entry.get("sections", []), number)

    for part in toc.get("parts", []):
        for index, entry in enumerate(part.get("chapters", []), start=1):
            walk([entry], index if part.get("numbered") else None)
    found = []
    for name, number in pages:
        notebook = ROOT / f"{name}.ipynb"
        found.append((notebook if notebook.exists() else ROOT / f"{name}.md", number))
    return found


def cells(path: Path) -> list[dict]:
    """A notebook's cells; a markdown page as one markdown cell."""
    if path.suffix == ".ipynb":
        return json.loads(path.read_text())["cells"]
    return [{"cell_type": "markdown", "source": [path.read_text()]}]


def test_no_missing_glyphs_or_font_warnings(latex_log):
    missing = sorted(set(re.findall(r"^Missing character: .*$", latex_log, re.M)))
    assert not missing, "characters the fonts lack:\n" + "\n".join(missing)
    fonts = re.findall(
        r"^(?:LaTeX Font Warning|Package fontspec Warning|\*{3} fontspec warning).*$",
        latex_log,
        re.M,
    )
    assert not fonts, "font warnings:\n" + "\n".join(fonts)


def test_every_reference_is_resolved(pdf_text, latex_log):
    # LaTeX prints "??" for a reference or citation it cannot resolve.
    unresolved = [
        pdf_text[max(match.start() - 60, 0) : match.end() + 20]
        for match in re.finditer(r"\?\?", pdf_text)
    ]
    assert not unresolved, "'??' in the PDF:\n" + "\n".join(unresolved)
    warnings = re.findall(
        r"^LaTeX Warning: (?:Hyper r|R)eference .*$|^LaTeX Warning: Citation .*$"
        r"|^LaTeX Warning: There were undefined references\.$",
        latex_log,
        re.M,
    )
    assert not warnings, "unresolved in the LaTeX log:\n" + "\n".join(warnings)


# A markdown image, or a figure or image directive.
MARKDOWN_IMAGE = re.compile(r"!\[[^\]]*\]\(|^[`:]{3,}\{(?:figure|image)\}", re.M)


def expected_pictures() -> tuple[int, list[str]]:
    """How many pictures the notebooks' outputs put in the PDF, and the widgets that have none.

    Every output the LaTeX builder shows as a picture counts (figures, and widgets that
    carry a picture of their default frame), and every image in a markdown cell.
    """
    count, widgets_as_text = 0, []
    for path, _ in pages_in_reading_order():
        for index, cell in enumerate(cells(path)):
            if cell["cell_type"] == "markdown":
                source = "".join(cell["source"])
                count += len(MARKDOWN_IMAGE.findall(source))
                continue
            if HIDDEN_OUTPUT_TAGS & set(cell.get("metadata", {}).get("tags", [])):
                continue
            for output in cell.get("outputs", []):
                data = output.get("data", {})
                if any(mime in data for mime in LATEX_PICTURES):
                    count += 1
                elif WIDGET_MIME in data:
                    widgets_as_text.append(f"{path.name} cell {index}")
    return count, widgets_as_text


def test_every_figure_is_in_the_pdf(pdf):
    expected, _ = expected_pictures()
    rows = run("pdfimages", "-list", str(pdf)).splitlines()[2:]
    # One row per picture drawn; its transparency is a separate "smask" row.
    images = [row.split() for row in rows if row.split()[2] == "image"]
    pages = sorted({int(row[0]) for row in images})
    assert len(images) == expected, (
        f"{len(images)} pictures in the PDF (on pages {pages}), "
        f"{expected} picture outputs and markdown images in the notebooks"
    )


def test_every_widget_prints_as_a_picture():
    _, widgets_as_text = expected_pictures()
    if widgets_as_text and not WIDGET_PICTURES_REQUIRED:
        pytest.skip(
            f"{len(widgets_as_text)} widgets print as text: their outputs carry no image/png"
        )
    assert not widgets_as_text, "widgets with no picture for the PDF: " + ", ".join(widgets_as_text)


PROOF_DIRECTIVE = re.compile(r"^(`{3,}|:{3,})\{prf:(\w+)\}[ \t]*(.*)$", re.M)


def title_pattern(title: str) -> str:
    """A regex for a theorem's title as pdftotext gives it: maths as a short wildcard."""
    parts = re.split(r"\$[^$]+\$", title)
    words = [r"\s*".join(re.escape(word) for word in part.split()) for part in parts]
    pattern = r".{1,40}?".join(words)
    return pattern.replace("'", "['’]").replace(r"\-", "[-‐–]")


def numbered_statements() -> list[tuple[str, str]]:
    """Each titled sphinx-proof statement as (its heading in the book, a regex for it).

    sphinx-proof numbers each kind (theorem, lemma, ...) by chapter: Lemma 3.1 can follow
    Theorem 3.1. Proofs have no title and no number.
    """
    statements = []
    for path, chapter in pages_in_reading_order():
        counters: dict[str, int] = {}
        for cell in cells(path):
            if cell["cell_type"] != "markdown":
                continue
            for _, kind, title in PROOF_DIRECTIVE.findall("".join(cell["source"])):
                if kind == "proof":
                    continue
                counters[kind] = counters.get(kind, 0) + 1
                number = f" {chapter}.{counters[kind]}" if chapter is not None else ""
                heading = f"{kind.title()}{number}"
                pattern = re.escape(heading)
                if title.strip():
                    pattern += r"\s*\(" + title_pattern(title.strip()) + r"\s*\)"
                statements.append((f"{heading} ({title.strip()})", pattern))
    return statements


def test_every_theorem_is_in_the_pdf_with_its_number(pdf_text):
    statements = numbered_statements()
    assert len(statements) >= 10, "the chapters' theorems were not found"
    missing = [heading for heading, pattern in statements if not re.search(pattern, pdf_text)]
    assert not missing, "not in the PDF as numbered in the book:\n" + "\n".join(missing)


def test_bold_vectors_print_bold(pdf):
    # \boldsymbol{x} and the all-ones vector \boldsymbol{1} (chapter 4) as the bold italic
    # x and the bold digit one of the math font, not as a plain x and 1.
    text = run("pdftotext", "-enc", "UTF-8", str(pdf), "-")
    assert "\U0001d499" in text, "no bold italic x in the PDF: bold vectors print plain"
    assert "\U0001d7cf" in text, "no bold digit one in the PDF: the all-ones vector prints as 1"
    assert "\U0001d7ce" in text, "no bold digit zero in the PDF: the zero vector prints as 0"


def test_the_html_pages_link_to_the_pdf(pdf):
    if not (HTML / "index.html").exists():
        pytest.skip("no HTML book: run `make book` (it copies the PDF next to the pages)")
    copy = HTML / "book.pdf"
    assert copy.exists() and copy.read_bytes() == pdf.read_bytes(), (
        "_build/html/book.pdf is not the built PDF: `make pdf` and `make book` copy it there"
    )
    # Every page with the theme's left sidebar (not the redirect index.html).
    pages = [
        page for page in sorted(HTML.rglob("*.html")) if "bd-sidebar-primary" in page.read_text()
    ]
    assert len(pages) > 10, "no pages with a sidebar found"
    for page in pages:
        html = page.read_text(encoding="utf-8")
        links = re.findall(r'<div class="lgc-pdf-link">\s*<a href="([^"]+)"', html)
        assert len(links) == 1, f"{page.relative_to(HTML)}: no link to the PDF in the sidebar"
        target = unquote(urljoin(page.as_uri(), links[0]))
        assert target == copy.as_uri(), f"{page.relative_to(HTML)} links to {links[0]}"


def test_page_count_and_size(pdf, capsys):
    info = run("pdfinfo", str(pdf))
    pages = int(re.search(r"^Pages:\s+(\d+)", info, re.M).group(1))
    chapters = sum(1 for _, number in pages_in_reading_order() if number is not None)
    # Every chapter starts a page and runs several; far more would mean runaway output.
    assert 5 * chapters <= pages <= 600, f"{pages} pages"
    with capsys.disabled():
        print(f"\nPDF edition: {pages} pages, {pdf.stat().st_size / 1e6:.1f} MB ({pdf})")
