"""Shared set-up of the real-browser tests: Chromium, the built book, a static server.

These tests open the built HTML book (``_build/html``) and the chapter notebooks in
JupyterLab in headless Chromium (Debian's ``chromium`` package, driven by Playwright
from PyPI; Playwright never downloads a browser here). They run as their own step,
``make browser-test``, after the book build; the main pytest run skips this folder
(``norecursedirs`` in pyproject.toml).

Every browser context records what a page asks for: a request that would leave the
machine (any host but localhost/127.0.0.1, any scheme but file/data/blob) is aborted and
reported, so the tests never wait on the closed network and never reach it.
"""

from __future__ import annotations

import functools
import http.server
import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from browser_support import ARTIFACTS, CHROMIUM, CHROMIUM_ARGS, HTML


@pytest.fixture(scope="session")
def chromium_path() -> Path:
    """Debian's Chromium, which `make browser-test` installs where it is missing."""
    if not os.access(CHROMIUM, os.X_OK):
        pytest.fail(
            f"no Chromium at {CHROMIUM}: install Debian's package "
            "(`sudo apt-get install -y chromium`), or set CHROMIUM=/path/to/chromium; "
            "`make browser-test` does the former where it can",
            pytrace=False,
        )
    return CHROMIUM


@pytest.fixture(scope="session")
def built_book() -> Path:
    """The built HTML book; the tests never build it themselves."""
    if not (HTML / "index.html").exists():
        pytest.fail(f"no built book in {HTML}: run `make book` first", pytrace=False)
    return HTML


@pytest.fixture(scope="session")
def artifacts() -> Path:
    """The ``_build/browser`` folder for screenshots and timings.

    `make browser-test` empties it first; the tests may run in several pytest-xdist
    workers, so none of them removes what another one wrote.
    """
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS


@pytest.fixture(scope="session")
def playwright_instance():
    """Playwright's driver (from the PyPI wheel; no browser of its own is used)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        yield playwright


@pytest.fixture(scope="session")
def browser(playwright_instance, chromium_path):
    """One headless Chromium for the session.

    Playwright starts it with a fresh temporary profile (``--user-data-dir``, which it
    sets itself and removes at the end), and every context is a fresh incognito-like
    session: each page is seen as on a first visit.
    """
    browser = playwright_instance.chromium.launch(
        executable_path=str(chromium_path), headless=True, args=CHROMIUM_ARGS
    )
    try:
        yield browser
    finally:
        browser.close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    """`python -m http.server`'s handler; errors go to ``server.errors``, not stderr."""

    def log_message(self, format, *args):
        pass

    def log_error(self, format, *args):
        self.server.errors.append(format % args)


@pytest.fixture(scope="session")
def static_server(built_book) -> Iterator[str]:
    """A plain static server for the built book on 127.0.0.1 (a free port)."""
    handler = functools.partial(_QuietHandler, directory=str(built_book))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.errors = []
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
    # Requests the browser does not report (e.g. /favicon.ico) still show here.
    assert not server.errors, f"the static server answered with errors: {server.errors}"
