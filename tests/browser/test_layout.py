"""The book as a reader sees it: desktop, phone and dark mode, in headless Chromium.

For the intro and every chapter page:

- every image keeps its shape: rendered width/height within 2 % of the image's own, at
  1280 and at 390 CSS pixels;
- every image has alt text that says what it shows (not a file name);
- widget frames are sharp on high-density screens: at least 1.8 image pixels per CSS
  pixel at 1280, and their smallest text (the widget's ``data-smallest-text`` at
  display size, times the frame's shown over display width) at least 10 CSS pixels;
- a page's own bytes (its HTML and the images it shows, not the theme's shared files)
  stay within 4 MB;
- widget controls combine: moving one control never moves another, every combination
  the controls offer has a frame, and the frame shown is the one for all controls;
- no line starts with punctuation that belongs to the formula or link before it, at
  1280 and at 390 CSS pixels, and no page is wider than a phone's screen;
- on a phone no page (chapters, references, API pages) is wider than the screen, and
  an inline formula wider than the column scrolls instead of being cut off;
- on a phone, no displayed formula of the intro or chapter 2 scrolls sideways, and one
  that scrolls elsewhere shows a cue (a shadow on the side with more to see); slider
  handles are at least 24 pixels tall on a touch screen;
- in dark mode the widgets take the theme's dark colours.

Screenshots of every page on desktop, phone and in dark mode go to
``_build/browser/screens/``.
"""

from __future__ import annotations

import json
import re

import pytest
from browser_support import (
    ARTIFACTS,
    HTML,
    PHONE,
    PageLog,
    chapter_pages,
    guarded_context,
    slug,
    toc_pages,
    watch,
)
from test_book_pages import SETTLE

PAGES = ["chapters/intro.html", *chapter_pages()]
PAGE_BUDGET_BYTES = 4 * 1000 * 1000
MIN_TEXT_PX = 10.0
NO_SCROLL_AT_390 = {"chapters/intro.html", "chapters/02_block_decomposition.html"}
SCREENS = ARTIFACTS / "screens"

IMAGES = """
() => [...document.querySelectorAll("article.bd-article img")].map((img) => {
  const box = img.getBoundingClientRect();
  return {
    src: img.currentSrc.startsWith("data:") ? "data:..." : img.currentSrc,
    alt: img.getAttribute("alt") || "",
    frame: img.classList.contains("lgc-frame"),
    display_width: Number(img.getAttribute("width")),
    smallest_text: Number(img.closest(".lgc-widget")?.dataset.smallestText),
    natural: [img.naturalWidth, img.naturalHeight],
    shown: [box.width, box.height],
  };
})
"""

SCROLLING_FORMULAS = """
() => [...document.querySelectorAll('article.bd-article mjx-container[display="true"]')]
  .map((el) => {
    const style = getComputedStyle(el);
    return {
      text: el.textContent.slice(0, 60),
      scrolls: el.scrollWidth > el.clientWidth + 1,
      cue: (style.maskImage || style.webkitMaskImage || "").includes("gradient"),
    };
  })
"""

# Each widget's controls, how many values each offers, and its frame keys.
WIDGET_GRID = """
() => [...document.querySelectorAll("div.lgc-widget")].map((widget) => {
  const data = JSON.parse(widget.querySelector("script.lgc-frames").textContent);
  return {
    name: widget.dataset.widget,
    sizes: [...widget.querySelectorAll(".lgc-control")].map((c) =>
      c.tagName === "SELECT" ? c.options.length : Number(c.max) + 1),
    keys: Object.keys(data.frames),
  };
})
"""

# Set control ``index`` of widget ``w`` to option ``value`` as a reader would.
SET = """
([w, index, value]) => {
  const widget = document.querySelectorAll("div.lgc-widget")[w];
  const control = widget.querySelectorAll(".lgc-control")[index];
  control.value = String(value);
  control.dispatchEvent(new Event("input", {bubbles: true}));
  const data = JSON.parse(widget.querySelector("script.lgc-frames").textContent);
  const values = [...widget.querySelectorAll(".lgc-control")].map((c) => c.value);
  const frame = data.frames[values.join(",")];
  return {
    values,
    shown: widget.dataset.frame,
    right_image: frame !== undefined
      && widget.querySelector("img.lgc-frame").src === data.images[frame.image],
  };
}
"""

WIDGET_COLOURS = """
() => [...document.querySelectorAll("div.lgc-widget")].map((widget) => {
  const style = getComputedStyle(widget);
  return {name: widget.dataset.widget, background: style.backgroundColor, color: style.color,
          theme: document.documentElement.dataset.theme};
})
"""

# Lines that start with punctuation: a no-break span (extensions/html_typesetting.py)
# that broke anyway, or punctuation after an inline element that was left unwrapped
# and went to the next line. Also whether the page is wider than the screen.
PUNCTUATION_BREAKS = r"""
() => {
  const out = [];
  const article = document.querySelector("article.bd-article");
  for (const span of article.querySelectorAll("span.lgc-nobr")) {
    // One rectangle per child or per line: a new line starts left of the last one.
    const rects = [...span.getClientRects()].filter((r) => r.width > 0);
    if (rects.some((r, i) => i > 0 && r.left < rects[i - 1].left - 1)) {
      out.push("broken: " + span.textContent.slice(0, 40));
    }
  }
  const walker = document.createTreeWalker(article, NodeFilter.SHOW_TEXT);
  let node;
  while ((node = walker.nextNode())) {
    const skip = "pre, mjx-container, script, style, .lgc-widget, details:not([open])";
    if (node.parentElement.closest(skip)) continue;
    const previous = node.previousSibling;
    if (!/^[.,;:)\]’”?!]/.test(node.textContent) || !previous
        || previous.nodeType !== 1) continue;
    const range = document.createRange();
    range.setStart(node, 0);
    range.setEnd(node, 1);
    const box = range.getBoundingClientRect();
    const before = [...previous.getClientRects()].pop();
    if (box.width > 0 && before && box.top > before.bottom - 4 && box.left < before.left) {
      out.push("line starts with: " + node.textContent.slice(0, 30));
    }
  }
  if (document.documentElement.scrollWidth > window.innerWidth + 1) {
    out.push(`the page is ${document.documentElement.scrollWidth} px wide`);
  }
  return out;
}
"""

# Inline formulas wider than their box: each must scroll (not be cut off silently).
CLIPPED_INLINE_FORMULAS = """
() => [...document.querySelectorAll("article.bd-article span.math")]
  .filter((el) => el.scrollWidth > el.clientWidth + 1)
  .filter((el) => !["auto", "scroll"].includes(getComputedStyle(el).overflowX))
  .map((el) => el.textContent.slice(0, 50))
"""

SLIDER_HEIGHTS = """
() => [...document.querySelectorAll('div.lgc-widget input[type="range"]')]
  .map((el) => el.getBoundingClientRect().height)
"""


def luminance(css_colour: str) -> float:
    """Relative luminance (0 black .. 1 white) of an ``rgb()``/``rgba()`` colour."""
    r, g, b = (int(v) / 255 for v in re.findall(r"\d+(?:\.\d+)?", css_colour)[:3])
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def open_page(browser, page_name: str, **options):
    log = PageLog()
    context = guarded_context(browser, log, **options)
    tab = context.new_page()
    watch(tab, log)
    tab.goto((HTML / page_name).as_uri(), wait_until="load")
    tab.evaluate(SETTLE)
    return tab, log


def shoot(tab, page_name: str, view: str) -> None:
    SCREENS.mkdir(parents=True, exist_ok=True)
    tab.screenshot(path=str(SCREENS / f"{slug(page_name)}-{view}.png"), full_page=False)


def shape_problems(images: list[dict], width: int) -> list[str]:
    problems = []
    for image in images:
        (nw, nh), (w, h) = image["natural"], image["shown"]
        if not (nw and nh and w and h):
            continue  # not shown (a collapsed dropdown)
        ratio = (w / h) / (nw / nh)
        if abs(ratio - 1) > 0.02:
            problems.append(
                f"at {width} px an image is drawn at {ratio:.0%} of its shape: {image['src']}"
            )
    return problems


@pytest.mark.parametrize("page_name", PAGES)
def test_desktop_figures_alt_text_frames_and_payload(browser, page_name):
    tab, log = open_page(browser, page_name)
    try:
        shoot(tab, page_name, "desktop")
        images = tab.evaluate(IMAGES)
        problems = shape_problems(images, 1280)
        problems += [f"at 1280 px: {line}" for line in tab.evaluate(PUNCTUATION_BREAKS)]
        for image in images:
            alt = image["alt"].strip()
            if len(alt) < 15 or re.search(r"\.(png|jpe?g|svg)\b|_images/", alt):
                problems.append(f"alt text says nothing of the picture: {alt!r} ({image['src']})")
            if image["frame"] and image["shown"][0]:
                density = image["natural"][0] / image["shown"][0]
                if density < 1.8:
                    problems.append(f"a widget frame has {density:.2f} pixels per CSS pixel")
                text = image["smallest_text"] * image["shown"][0] / image["display_width"]
                if not text >= MIN_TEXT_PX:
                    problems.append(f"a widget frame's smallest text is {text:.1f} CSS px")
        # The page's own bytes: its HTML and every image it shows from _images/.
        html_path = HTML / page_name
        total = html_path.stat().st_size
        shown = {image["src"] for image in images if "/_images/" in image["src"]}
        for src in shown:
            total += (HTML / "_images" / src.rsplit("/", 1)[1]).stat().st_size
        if total > PAGE_BUDGET_BYTES:
            problems.append(f"the page's own bytes: {total:,} > {PAGE_BUDGET_BYTES:,}")
        (ARTIFACTS / "payloads").mkdir(parents=True, exist_ok=True)
        (ARTIFACTS / "payloads" / f"{slug(page_name)}.json").write_text(
            json.dumps({"page": page_name, "bytes": total}) + "\n"
        )
        problems += log.problems()
        assert not problems, "\n".join(problems)
    finally:
        tab.context.close()


@pytest.mark.parametrize("page_name", chapter_pages())
def test_widget_controls_combine(browser, page_name):
    tab, log = open_page(browser, page_name)
    try:
        problems = []
        for w, widget in enumerate(tab.evaluate(WIDGET_GRID)):
            sizes = widget["sizes"]
            expected = 1
            for size in sizes:
                expected *= size
            if len(widget["keys"]) != expected:
                problems.append(
                    f"{widget['name']}: {len(widget['keys'])} frames for {expected} combinations"
                )
            # Move every control in turn to its last value, then the first one back to 0:
            # each move keeps the others, and the frame shown is the one for all of them.
            moves = [(i, size - 1) for i, size in enumerate(sizes)] + [(0, 0)]
            wanted = [None] * len(sizes)
            for index, value in moves:
                result = tab.evaluate(SET, [w, index, value])
                wanted[index] = str(value)
                kept = all(
                    v is None or v == got for v, got in zip(wanted, result["values"], strict=True)
                )
                if not kept:
                    problems.append(f"{widget['name']}: moving control {index} reset another")
                if result["shown"] != ",".join(result["values"]) or not result["right_image"]:
                    problems.append(f"{widget['name']}: the frame shown is not {result['values']}")
        problems += log.problems()
        assert not problems, "\n".join(problems)
    finally:
        tab.context.close()


@pytest.mark.parametrize("page_name", PAGES)
def test_phone_shapes_formulas_and_slider_handles(browser, page_name):
    tab, log = open_page(browser, page_name, **PHONE)
    try:
        shoot(tab, page_name, "phone")
        problems = shape_problems(tab.evaluate(IMAGES), 390)
        for formula in tab.evaluate(SCROLLING_FORMULAS):
            if formula["scrolls"] and page_name in NO_SCROLL_AT_390:
                problems.append(f"a displayed formula scrolls at 390 px: {formula['text']}")
            elif formula["scrolls"] and not formula["cue"]:
                problems.append(f"a formula scrolls with no cue: {formula['text']}")
            elif formula["cue"] and not formula["scrolls"]:
                problems.append(f"a formula that fits shows the scroll cue: {formula['text']}")
        for height in tab.evaluate(SLIDER_HEIGHTS):
            if height < 24:
                problems.append(f"a slider is {height:.0f} px tall on a touch screen (< 24)")
        problems += [f"at 390 px: {line}" for line in tab.evaluate(PUNCTUATION_BREAKS)]
        problems += log.problems()
        assert not problems, "\n".join(problems)
    finally:
        tab.context.close()


@pytest.mark.parametrize("page_name", [p for p in toc_pages() if p != "search.html"])
def test_no_page_is_wider_than_a_phone_and_no_formula_is_cut_off(browser, page_name):
    tab, log = open_page(browser, page_name, **PHONE)
    try:
        problems = [f"cut off: {text}" for text in tab.evaluate(CLIPPED_INLINE_FORMULAS)]
        width = tab.evaluate("document.documentElement.scrollWidth")
        if width > 391:
            problems.append(f"the page is {width} px wide at 390 px")
        problems += log.problems()
        assert not problems, "\n".join(problems)
    finally:
        tab.context.close()


@pytest.mark.parametrize("page_name", chapter_pages())
def test_dark_mode_widgets_take_the_theme_colours(browser, page_name):
    tab, log = open_page(browser, page_name, color_scheme="dark")
    try:
        shoot(tab, page_name, "dark")
        problems = []
        for widget in tab.evaluate(WIDGET_COLOURS):
            if widget["theme"] != "dark":
                problems.append(f"the page is not in dark mode ({widget['theme']})")
            background = widget["background"]
            transparent = background in ("transparent", "rgba(0, 0, 0, 0)")
            if not transparent and luminance(background) > 0.3:
                problems.append(f"{widget['name']}: light background {background} in dark mode")
            if luminance(widget["color"]) < 0.6:
                problems.append(f"{widget['name']}: dark text {widget['color']} in dark mode")
        problems += log.problems()
        assert not problems, "\n".join(problems)
    finally:
        tab.context.close()


SIDEBAR_OVERFLOW = """
() => {
  const bar = document.querySelector(".bd-sidebar-primary");
  if (!bar) return ["no sidebar"];
  const right = bar.getBoundingClientRect().right;
  return [...bar.querySelectorAll("a, a *")]
    .filter((el) => el.getBoundingClientRect().right > right + 1
      || el.scrollWidth > el.clientWidth + 1)
    .map((el) => el.textContent.trim());
}
"""


def test_sidebar_entries_stay_inside_the_sidebar(browser):
    tab, log = open_page(browser, "chapters/api.html")
    try:
        assert tab.evaluate(SIDEBAR_OVERFLOW) == [], "sidebar entries run past its edge"
    finally:
        tab.context.close()


def test_search_snippets_show_no_raw_tex(browser, static_server):
    # Snippets are fetched page by page, which a browser allows from a server, not from
    # file:// pages.
    log = PageLog()
    context = guarded_context(browser, log)
    tab = context.new_page()
    watch(tab, log)
    try:
        tab.goto(f"{static_server}/search.html?q=cosine+weights", wait_until="load")
        tab.wait_for_function(
            "document.querySelectorAll('#search-results li p.context').length >= 3",
            timeout=30000,
        )
        snippets = tab.eval_on_selector_all(
            "#search-results li p.context", "els => els.map(el => el.textContent)"
        )
        raw = [text for text in snippets if re.search(r"\\[()\[\]]|\\[A-Za-z]{2,}", text)]
        assert not raw, f"raw TeX in {len(raw)} of {len(snippets)} snippets: {raw[:2]}"
        assert not log.problems(), log.problems()
    finally:
        context.close()
