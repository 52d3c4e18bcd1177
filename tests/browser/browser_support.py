"""Helpers of the real-browser tests (constants, request guard, page log, pictures)."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import yaml

ROOT = Path(__file__).resolve().parents[2]
HTML = ROOT / "_build" / "html"
# Screenshots of failures, widget before/after pictures and the measured timings.
ARTIFACTS = ROOT / "_build" / "browser"
CHROMIUM = Path(os.environ.get("CHROMIUM", "/usr/bin/chromium"))
# Flags that work on machines with a closed network and no GPU or sandbox.
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-extensions",
    "--mute-audio",
]
VIEWPORT = {"width": 1280, "height": 900}
# A phone: 390 CSS pixels wide at three device pixels per CSS pixel, with a touch screen.
PHONE = {
    "viewport": {"width": 390, "height": 844},
    "device_scale_factor": 3,
    "is_mobile": True,
    "has_touch": True,
}
LOCAL_HOSTS = {"127.0.0.1", "localhost", "[::1]", "::1"}
LOCAL_SCHEMES = {"file", "data", "blob", "about"}


def is_local(url: str) -> bool:
    """Whether a request stays on this machine."""
    parts = urlsplit(url)
    if parts.scheme in LOCAL_SCHEMES:
        return True
    return parts.scheme in {"http", "https", "ws", "wss"} and parts.hostname in LOCAL_HOSTS


def toc_pages() -> list[str]:
    """The HTML pages the table of contents reaches, plus Sphinx's generated pages."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    docs = [toc["root"]]

    def walk(entries):
        for entry in entries or []:
            if "file" in entry:
                docs.append(entry["file"])
            for key in ("parts", "chapters", "sections"):
                walk(entry.get(key))

    walk([{key: toc[key] for key in ("parts", "chapters", "sections") if key in toc}])
    pages = [f"{doc}.html" for doc in docs]
    # Sphinx's own pages: the general index, the proof index, the module index, search.
    pages += ["genindex.html", "prf-prf.html", "py-modindex.html", "search.html"]
    return pages


def chapter_pages() -> list[str]:
    """The numbered chapter pages (those that carry widgets)."""
    return [page for page in toc_pages() if re.match(r"chapters/\d\d_", page)]


def slug(text: str) -> str:
    """A file-name-safe form of a test id."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-")


@dataclass
class PageLog:
    """What one page reported: console errors, failed and outside requests."""

    console_errors: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    outside: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)

    def problems(self) -> list[str]:
        """Every recorded problem, one line each."""
        return (
            [f"console error: {text}" for text in self.console_errors]
            + [f"failed request: {text}" for text in self.failed]
            + [f"request leaves the machine: {url}" for url in self.outside]
        )


def watch(page, log: PageLog) -> None:
    """Record the page's console errors, uncaught exceptions and failed requests."""

    def on_console(message):
        if message.type == "error":
            where = message.location.get("url", "")
            log.console_errors.append(f"{message.text} ({where})")

    def on_response(response):
        if response.status >= 400:
            log.failed.append(f"HTTP {response.status} {response.url}")

    def on_failed(request):
        if is_local(request.url):
            log.failed.append(f"{request.failure} {request.url}")

    page.on("console", on_console)
    page.on("pageerror", lambda error: log.console_errors.append(f"uncaught: {error}"))
    page.on("request", lambda request: log.requests.append(request.url))
    page.on("response", on_response)
    page.on("requestfailed", on_failed)


def guarded_context(browser, log: PageLog, **options):
    """A fresh browser context that aborts and records requests leaving the machine.

    ``options`` go to ``browser.new_context`` (another viewport, a colour scheme, a
    touch screen); the default is a 1280-pixel desktop window.
    """
    context = browser.new_context(**{"viewport": VIEWPORT, "service_workers": "block", **options})

    def guard(route):
        url = route.request.url
        if is_local(url):
            route.continue_()
        else:
            log.outside.append(url)
            route.abort()

    context.route(re.compile(r"^(https?|wss?)://"), guard)
    return context


def screenshot(page, name: str, element=None) -> Path:
    """Save a picture of the page (scrolled to ``element`` if given) in _build/browser."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{slug(name)}.png"
    try:
        if element is not None:
            element.scroll_into_view_if_needed(timeout=2000)
        page.screenshot(path=str(path), timeout=10000)
    except Exception as error:  # a screenshot must never hide the real failure
        path.with_suffix(".txt").write_text(f"screenshot failed: {error}\n")
    return path


# Raw TeX that was not typeset (MathJax in the book, KaTeX in JupyterLab): display
# delimiters, environments, commands, the \( \) \[ \] delimiters Sphinx writes, and
# $...$ that the parser left as text.
RAW_TEX = [
    ("$$", re.compile(r"\$\$")),
    ("\\begin/\\end", re.compile(r"\\(begin|end)\{")),
    ("TeX command", re.compile(r"\\[A-Za-z]{2,}")),
    ("\\( \\) \\[ \\] delimiter", re.compile(r"\\[()\[\]]")),
    ("$...$", re.compile(r"(?<![\w$])\$(?=[^\s$])[^$\n]{1,200}?(?<=\S)\$(?![\w$])")),
]


def first_matches(text: str, patterns) -> list[str]:
    """The first match of each (label, pattern) in ``text``, with some context."""
    found = []
    for label, pattern in patterns:
        for match in pattern.finditer(text):
            start, end = max(match.start() - 40, 0), min(match.end() + 40, len(text))
            found.append(f"{label}: ...{text[start:end]}...")
            break
    return found


def raw_tex(text: str) -> list[str]:
    """The raw-TeX fragments in a page's visible text."""
    return first_matches(text, RAW_TEX)
