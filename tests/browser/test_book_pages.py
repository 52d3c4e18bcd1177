"""Every page of the built book in headless Chromium, from file:// and from a static server.

For each page the table of contents reaches (and Sphinx's index and search pages):
no console error or uncaught exception, no failed request, no request that leaves the
machine, no raw TeX in the text a reader sees (code blocks aside), and every piece of
math rendered by MathJax. Then the kernel-free widgets on the chapter pages: every
control moved to both ends changes a frame within 50 ms, and a page's widget payload
stays within 5 MB.

The widget contract (the chapters' HTML widget outputs follow it)::

    <div class="lgc-widget" data-widget="NAME">
      <input type="range" class="lgc-control" ...> or <select class="lgc-control">...
      <img class="lgc-frame" src="data:..."> (one or more)
      <script type="application/json" class="lgc-frames">...</script> (optional)
    </div>

Failures leave screenshots in ``_build/browser/``; the widget tests also save a picture
of each widget before and after its controls move (``_build/browser/widgets/``) and the
measured response times (``_build/browser/widget_timings.json``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest
from browser_support import (
    ARTIFACTS,
    PageLog,
    chapter_pages,
    guarded_context,
    raw_tex,
    screenshot,
    slug,
    toc_pages,
    watch,
)

MODES = ["file", "http"]
# While a chapter page has no kernel-free widget yet, its widget tests skip (they do
# not pass). Set to True once every chapter carries its HTML widgets: then a chapter
# page without one fails.
WIDGETS_REQUIRED = True
RESPONSE_BUDGET_MS = 50.0
PAYLOAD_BUDGET_BYTES = 5 * 1000 * 1000

# Wait until the page has settled: MathJax has typeset, and no new resource has loaded
# for 200 ms (Playwright's "networkidle" waits 500 ms on every page: too slow here).
SETTLE = """
async () => {
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
    await MathJax.startup.promise;
  }
  const count = () => performance.getEntriesByType("resource").length;
  for (let last = -1, quiet = 0; quiet < 4; ) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    const now = count();
    quiet = now === last ? quiet + 1 : 0;
    last = now;
  }
}
"""

# The text a reader sees, outside code, scripts and typeset math; collapsed dropdowns
# count too, since a click shows them.
VISIBLE_TEXT = """
() => {
  const root = document.querySelector("article.bd-article") || document.querySelector("main")
    || document.body;
  const skip = "pre, code, kbd, samp, script, style, textarea, noscript, mjx-container, "
    + ".highlight, .cell_input, .lgc-frames, .headerlink";
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  const out = [];
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const parent = node.parentElement;
    if (parent && !parent.closest(skip) && node.nodeValue.trim()) out.push(node.nodeValue);
  }
  return out.join(" ");
}
"""

# What sticks out of the text column sideways: a code or output block or a displayed
# formula that scrolls, an inline formula, image or table wider than the article.
OVERFLOW = """
() => {
  const article = document.querySelector("article.bd-article");
  if (!article) return [];
  const right = article.getBoundingClientRect().right;
  const found = [];
  for (const el of article.querySelectorAll("pre")) {
    if (el.scrollWidth > el.clientWidth + 1) {
      found.push("a code or output block scrolls sideways: " + el.textContent.slice(0, 60));
    }
  }
  for (const el of article.querySelectorAll('mjx-container[display="true"]')) {
    if (el.scrollWidth > el.clientWidth + 1) {
      found.push("a displayed formula scrolls sideways: " + el.textContent.slice(0, 60));
    }
  }
  const wide = 'mjx-container:not([display="true"]), img, table';
  for (const el of article.querySelectorAll(wide)) {
    if (el.closest(".lgc-widget")) continue;
    const box = el.getBoundingClientRect();
    if (box.width > 0 && box.right > right + 1) {
      found.push(el.tagName.toLowerCase() + " sticks out by " + Math.round(box.right - right)
                 + " px: " + (el.textContent || el.getAttribute("src") || "").slice(0, 60));
    }
  }
  return found;
}
"""

MATH_STATE = """
() => {
  const math = [...document.querySelectorAll(".math")];
  return {
    math: math.length,
    typeset: document.querySelectorAll("mjx-container").length,
    untypeset: math.filter((el) => !el.querySelector("mjx-container"))
      .slice(0, 5).map((el) => el.textContent.trim().slice(0, 80)),
    errors: [...document.querySelectorAll("mjx-merror, [data-mjx-error]")]
      .slice(0, 5).map((el) => el.getAttribute("data-mjx-error") || el.textContent),
  };
}
"""

WIDGETS = """
() => [...document.querySelectorAll("div.lgc-widget")].map((widget, index) => ({
  index,
  name: widget.dataset.widget || `widget-${index}`,
  controls: [...widget.querySelectorAll(".lgc-control")].map((control, c) => ({
    index: c,
    tag: control.tagName.toLowerCase(),
    type: control.type || "",
    name: control.name || control.id || control.getAttribute("aria-label") || `control-${c}`,
  })),
  frames: widget.querySelectorAll("img.lgc-frame").length,
}))
"""

# Move one control to one end and time the first frame change, in the page.
MOVE = """
async ([widgetIndex, controlIndex, end]) => {
  const widget = document.querySelectorAll("div.lgc-widget")[widgetIndex];
  const control = widget.querySelectorAll(".lgc-control")[controlIndex];
  const frames = [...widget.querySelectorAll("img.lgc-frame")];
  let target;
  if (control.tagName === "SELECT") {
    const options = [...control.options];
    target = (end === "min" ? options[0] : options[options.length - 1]).value;
  } else {
    target = end === "min" ? control.min : control.max;
  }
  const before = frames.map((frame) => frame.src);
  const from = control.value;
  if (String(from) === String(target)) return {moved: false, from, target};
  const changed = () => frames.some((frame, i) => frame.src !== before[i]);
  const start = performance.now();
  control.value = target;
  control.dispatchEvent(new Event("input", {bubbles: true}));
  let elapsed = performance.now() - start;
  while (!changed() && elapsed <= 250) {
    await new Promise((resolve) => setTimeout(resolve, 0));
    elapsed = performance.now() - start;
  }
  return {moved: true, from, target, value: control.value, changed: changed(), ms: elapsed};
}
"""

PAYLOAD = """
() => {
  let total = 0;
  const inJson = new Set();
  const encoder = new TextEncoder();
  for (const script of document.querySelectorAll("div.lgc-widget script.lgc-frames")) {
    total += encoder.encode(script.textContent).length;
    for (const match of script.textContent.matchAll(/data:[^"\\s]+/g)) inJson.add(match[0]);
  }
  for (const el of document.querySelectorAll("div.lgc-widget *")) {
    for (const attr of el.attributes) {
      if (attr.value.startsWith("data:") && !inJson.has(attr.value)) {
        total += attr.value.length;
      }
    }
  }
  return total;
}
"""


PAGE_CASES = [(mode, page) for mode in MODES for page in toc_pages()]
WIDGET_CASES = [(mode, page) for mode in MODES for page in chapter_pages()]


@dataclass
class Loaded:
    """A page opened in its own fresh browser context, with what it reported."""

    page: object
    log: PageLog
    settled: bool = False


class PageCache:
    """Open each (mode, page) once: the widget checks reuse the chapter pages.

    Pages load one at a time: loading several side by side was slower on two cores.
    """

    def __init__(self, browser, static_server, built_book):
        self.browser = browser
        self.static_server = static_server
        self.built_book = built_book
        self.open: dict[tuple[str, str], Loaded] = {}

    def url(self, mode: str, page: str) -> str:
        if mode == "file":
            return (self.built_book / page).as_uri()
        return f"{self.static_server}/{page}"

    def start(self, key: tuple[str, str]) -> Loaded:
        if key not in self.open:
            log = PageLog()
            tab = guarded_context(self.browser, log).new_page()
            watch(tab, log)
            tab.goto(self.url(*key), wait_until="commit")
            self.open[key] = Loaded(tab, log)
        return self.open[key]

    def get(self, mode: str, page: str) -> Loaded:
        key = (mode, page)
        loaded = self.start(key)
        if not loaded.settled:
            loaded.page.wait_for_load_state("load")
            loaded.page.evaluate(SETTLE)
            loaded.settled = True
        return loaded

    def release(self, mode: str, page: str) -> None:
        loaded = self.open.pop((mode, page), None)
        if loaded is not None:
            loaded.page.context.close()

    def close(self) -> None:
        for key in list(self.open):
            self.release(*key)


@pytest.fixture(scope="module")
def pages(browser, static_server, built_book, artifacts):
    cache = PageCache(browser, static_server, built_book)
    yield cache
    cache.close()


@pytest.fixture(scope="module")
def timings(artifacts):
    """Widget payloads and response times measured in the page, written out at the end."""
    records: list[dict] = []
    yield records
    (artifacts / "widget_timings.json").write_text(json.dumps(records, indent=1) + "\n")


@pytest.mark.parametrize(("mode", "page_name"), PAGE_CASES, ids=[f"{m}-{p}" for m, p in PAGE_CASES])
def test_page_is_clean_offline_and_renders_math(pages, mode, page_name):
    if not (pages.built_book / page_name).exists():
        pytest.fail(f"{page_name} was not built", pytrace=False)
    loaded = pages.get(mode, page_name)
    tab, log = loaded.page, loaded.log
    problems = log.problems()
    # Without an icon link, a browser asks the server for /favicon.ico (a 404 there).
    if not tab.evaluate("!!document.querySelector('link[rel~=\"icon\"]')"):
        problems.append("no <link rel=icon>: browsers would request a missing /favicon.ico")
    problems += raw_tex(tab.evaluate(VISIBLE_TEXT))
    math = tab.evaluate(MATH_STATE)
    if math["math"] and not math["typeset"]:
        problems.append(f"{math['math']} math elements but no MathJax output")
    problems += [f"math left untypeset: {text}" for text in math["untypeset"]]
    problems += [f"MathJax error: {text}" for text in math["errors"]]
    # The chapters and the landing page: nothing sticks out of the text column. (The API
    # pages show docstrings written to the package's 100 columns, and Sphinx's index
    # tables are its own.)
    if page_name in chapter_pages() or page_name == "chapters/intro.html":
        problems += tab.evaluate(OVERFLOW)
    shot = screenshot(tab, f"{mode}-{page_name}") if problems else None
    if page_name not in chapter_pages():
        pages.release(mode, page_name)  # chapter pages stay open for the widget test
    if problems:
        pytest.fail(
            f"{pages.url(mode, page_name)} ({shot}):\n  " + "\n  ".join(problems), pytrace=False
        )


def widgets_or_skip(tab, page_name: str) -> list[dict]:
    widgets = tab.evaluate(WIDGETS)
    if widgets:
        return widgets
    message = f"{page_name} has no kernel-free widget (div.lgc-widget) yet"
    if WIDGETS_REQUIRED:
        pytest.fail(message, pytrace=False)
    pytest.skip(message)


@pytest.mark.parametrize(
    ("mode", "page_name"), WIDGET_CASES, ids=[f"{m}-{p}" for m, p in WIDGET_CASES]
)
def test_widget_controls_change_frames_quickly(pages, timings, mode, page_name):
    loaded = pages.get(mode, page_name)
    tab, log = loaded.page, loaded.log
    already = len(log.problems())  # reported by the page test
    try:
        widgets = widgets_or_skip(tab, page_name)
        payload = tab.evaluate(PAYLOAD)
        timings.append({"mode": mode, "page": page_name, "payload_bytes": payload})
        problems = []
        if payload > PAYLOAD_BUDGET_BYTES:
            problems.append(f"widget payload {payload} bytes > {PAYLOAD_BUDGET_BYTES}")
        shots = ARTIFACTS / "widgets"
        shots.mkdir(parents=True, exist_ok=True)
        for widget in widgets:
            element = tab.locator("div.lgc-widget").nth(widget["index"])
            label = f"{page_name}#{widget['name']}"
            if not widget["controls"]:
                problems.append(f"{label}: no .lgc-control")
            if not widget["frames"]:
                problems.append(f"{label}: no img.lgc-frame")
            element.scroll_into_view_if_needed()
            stem = slug(f"{mode}-{page_name}-{widget['name']}")
            element.screenshot(path=str(shots / f"{stem}-before.png"))
            for control in widget["controls"]:
                for end in ("min", "max"):
                    result = tab.evaluate(MOVE, [widget["index"], control["index"], end])
                    if not result["moved"]:
                        continue  # already at that end (the default)
                    timings.append(
                        {
                            "mode": mode,
                            "page": page_name,
                            "widget": widget["name"],
                            "control": control["name"],
                            "end": end,
                            "ms": round(result["ms"], 2),
                            "changed": result["changed"],
                        }
                    )
                    where = f"{label} {control['name']} -> {end} ({result['target']})"
                    if not result["changed"]:
                        problems.append(f"{where}: no img.lgc-frame changed")
                    elif result["ms"] > RESPONSE_BUDGET_MS:
                        problems.append(f"{where}: {result['ms']:.1f} ms > {RESPONSE_BUDGET_MS}")
            element.screenshot(path=str(shots / f"{stem}-after.png"))
        problems += log.problems()[already:]  # anything the moves logged
        if problems:
            shot = screenshot(tab, f"{mode}-{page_name}-widgets")
            pytest.fail(f"{page_name} ({shot}):\n  " + "\n  ".join(problems), pytrace=False)
    finally:
        pages.release(mode, page_name)
