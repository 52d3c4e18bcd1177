"""The chapter notebooks in JupyterLab (`make lab`), seen in headless Chromium.

A JupyterLab server starts on a free localhost port with a random token, on copies of
the chapter notebooks (so nothing can save into chapters/), with settings that keep it
quiet: no news or update checks, no extension manager, no terminals. It inherits the
Makefile's environment, so its configuration, runtime files and kernels keep to the
git-ignored .cache/. Each chapter is opened in one JupyterLab page; once its markdown
has rendered, no raw MyST (directive fences, roles, options, targets) and no raw TeX
may be visible, every markdown cell must have been rendered by jupyterlab-myst, KaTeX
must report no error, and the console must show no error that matters. A last test
runs chapter 2 and moves a slider: the ipywidgets are live. The server is shut down at
the end (kernels with it).
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from browser_support import (
    ARTIFACTS,
    ROOT,
    PageLog,
    first_matches,
    guarded_context,
    raw_tex,
    screenshot,
    watch,
)

# The chapter notebooks and the landing page, itself a notebook (its one figure is computed).
CHAPTERS = [
    *sorted((ROOT / "chapters").glob("[0-9][0-9]_*.ipynb")),
    ROOT / "chapters" / "intro.ipynb",
]
LIVE_WIDGET_CHAPTER = "02_block_decomposition.ipynb"
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
# The chapter notebooks' MyST, as it would look if JupyterLab showed it raw.
RAW_MYST = [
    (literal, re.compile(re.escape(literal)))
    for literal in (
        "{prf:theorem}",
        "{prf:proof}",
        "{prf:definition}",
        "{prf:ref}",
        "{exercise}",
        "{solution}",
        "{cite:t}",
        "{cite:p}",
        "{eq}",
        "{ref}",
        "{numref}",
        "{doc}",
        "{math}",
        ":label:",
        ":class: dropdown",
        "```{",
        ":::",
    )
] + [
    ("{domain:role}", re.compile(r"\{[a-z][a-z0-9-]*(?::[a-z0-9-]+)+\}")),
    ("(target)=", re.compile(r"\([A-Za-z][\w-]*\)=")),
    ("directive option", re.compile(r"(?m)^\s*:[a-z][a-z-]*:\s")),
]
# Settings of this server only (its own user-settings folder): render every cell (no
# windowing, so the whole notebook is in the page), and ask about no news.
LAB_SETTINGS = {
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {
        "fetchNews": "false",
        "checkForUpdates": False,
    },
}
# jupyterlab-myst's diagnostics about references (each names its target).
REFERENCE_NOTES = [
    re.compile(r"Cross reference target was not found: (\S+)"),
    re.compile(r"Legacy syntax used for link target, please prepend a '#'.*?: \"([^\"]+)\""),
    re.compile(r"Linking \"([^\"]+)\" to an implicit heading reference"),
]
STARTUP_SECONDS = 90
RENDER_SECONDS = 60

RENDER_STATE = """
(id) => {
  const panel = document.getElementById(id);
  if (!panel) return null;
  const cells = [...panel.querySelectorAll(".jp-MarkdownCell")];
  const rendered = cells.filter((cell) => cell.classList.contains("jp-mod-rendered")
    && cell.querySelector(".myst, .jp-RenderedMarkdown"));
  return [cells.length, rendered.length, panel.querySelectorAll(".katex").length,
          panel.textContent.length];
}
"""

# Per markdown cell: who rendered it and the text a reader sees (editor, math and code
# aside; closed dropdowns count, since a click opens them).
MARKDOWN_TEXT = """
(id) => [...document.getElementById(id).querySelectorAll(".jp-MarkdownCell")].map((cell) => {
  const skip = ".jp-Editor, .cm-editor, .jp-InputPrompt, .jp-Toolbar, jp-toolbar, "
    + ".jp-CellHeader, .jp-CellFooter, .katex, pre, code, script, style";
  const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
  const out = [];
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const parent = node.parentElement;
    if (parent && !parent.closest(skip) && node.nodeValue.trim()) out.push(node.nodeValue);
  }
  return {
    myst: !!cell.querySelector(".myst"),
    text: out.join(" "),
    katexErrors: [...cell.querySelectorAll(".katex-error")]
      .map((el) => el.getAttribute("title") || el.textContent),
  };
})
"""

OPEN = """
async (path) => {
  const app = window.jupyterapp;
  const widget = await app.commands.execute("docmanager:open", {path, factory: "Notebook"});
  await widget.context.ready;
  app.shell.activateById(widget.id);
  return widget.id;
}
"""

DIRTY = """
(id) => [...window.jupyterapp.shell.widgets("main")].find((w) => w.id === id).context.model.dirty
"""

CLOSE = """
(id) => {
  const app = window.jupyterapp;
  for (const widget of app.shell.widgets("main")) {
    if (widget.id === id) widget.dispose();
  }
}
"""


def known_targets() -> set[str]:
    """Every MyST label and page name the book defines."""
    pages = sorted((ROOT / "chapters").glob("*.md")) + CHAPTERS
    targets = {path.stem for path in pages}
    sources = [path.read_text() for path in pages if path.suffix == ".md"]
    for path in CHAPTERS:
        cells = json.loads(path.read_text())["cells"]
        sources += ["".join(cell["source"]) for cell in cells if cell["cell_type"] == "markdown"]
        # Figures that MyST-NB names from a code cell's metadata.
        for cell in cells:
            figure = cell.get("metadata", {}).get("mystnb", {}).get("figure", {})
            if "name" in figure:
                targets.add(figure["name"])
    for text in sources:
        targets.update(re.findall(r"(?m)^\s*:label:\s*(\S+)", text))
        targets.update(re.findall(r"(?m)^\(([^)\s]+)\)=\s*$", text))
        targets.update(re.findall(r"\$\$\s*\(([^)\s]+)\)", text))  # $$ ... $$ (label)
    return targets


def reference_note(line: str) -> str | None:
    """The target a jupyterlab-myst reference diagnostic names, if the line is one."""
    for pattern in REFERENCE_NOTES:
        match = pattern.search(line)
        if match:
            return match.group(1)
    return None


def errors_that_matter(errors: list[str], targets: set[str]) -> list[str]:
    """Console errors, less jupyterlab-myst's notes on references the book resolves.

    jupyterlab-myst logs its reference diagnostics as console errors. It renders cell
    by cell before it links the notebook, so a reference to a label in another cell is
    reported missing while it renders; a reference to another chapter or page stays
    unresolved (each notebook stands alone: it shows the label's or page's name, and a
    {doc} link to a page named like a heading of this notebook goes to that heading).
    Those notes are fine when the target exists in the book (Sphinx's nitpicky build
    checks every reference there); any other error, or an unknown target, matters.
    """
    kept = []
    for error in errors:
        lines = [line for line in error.splitlines() if line.strip()]
        named = [reference_note(line) for line in lines]
        if lines and all(named) and set(named) <= targets:
            continue
        kept.append(error)
    return kept


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def api(base: str, token: str, path: str, method: str = "GET") -> int:
    request = urllib.request.Request(
        f"{base}{path}", method=method, headers={"Authorization": f"token {token}"}
    )
    with urllib.request.urlopen(request, timeout=5) as response:
        return response.status


@pytest.fixture(scope="module")
def lab_server(artifacts):
    """A JupyterLab server on copies of the chapters; shut down (kernels too) at the end."""
    env = dict(os.environ)
    env.pop("MPLBACKEND", None)
    for name in ("JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR", "JUPYTER_RUNTIME_DIR", "IPYTHONDIR"):
        where = env.get(name)
        assert where and Path(where).resolve().is_relative_to(ROOT), (
            f"{name}={where!r}: run through make (or pytest from the checkout), which "
            "keeps Jupyter's files in .cache/"
        )
    work = artifacts / "jupyterlab"
    notebooks, settings, workspaces = work / "notebooks", work / "settings", work / "workspaces"
    for folder in (notebooks, settings, workspaces):
        folder.mkdir(parents=True)
    for path in CHAPTERS:
        shutil.copy2(path, notebooks / path.name)
    for name, values in LAB_SETTINGS.items():
        (settings / name).parent.mkdir(parents=True, exist_ok=True)
        (settings / name).write_text(json.dumps(values))
    port, token = free_port(), secrets.token_hex(16)
    command = [
        sys.executable,
        "-m",
        "jupyterlab",
        "--no-browser",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={notebooks}",
        "--ServerApp.allow_root=True",  # CI machines run as root
        "--ServerApp.open_browser=False",
        "--ServerApp.terminals_enabled=False",
        "--LabApp.news_url=None",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        "--LabApp.extension_manager=readonly",
        f"--LabApp.user_settings_dir={settings}",
        f"--LabApp.workspaces_dir={workspaces}",
        "--LabApp.expose_app_in_browser=True",  # window.jupyterapp opens the notebooks
    ]
    log_path = work / "server.log"
    with log_path.open("w") as log_file:
        server = subprocess.Popen(
            command, cwd=work, env=env, stdout=log_file, stderr=subprocess.STDOUT
        )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + STARTUP_SECONDS
        while True:
            if server.poll() is not None:
                pytest.fail(f"JupyterLab exited ({server.returncode}); see {log_path}")
            try:
                if api(base, token, "/api/status") == 200:
                    break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"JupyterLab did not answer in {STARTUP_SECONDS} s; see {log_path}")
            time.sleep(0.5)
        yield base, token, notebooks
    finally:
        if server.poll() is None:
            try:
                api(base, token, "/api/shutdown", method="POST")
                server.wait(timeout=30)
            except (OSError, subprocess.TimeoutExpired):
                server.terminate()
                try:
                    server.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    server.kill()
                    server.wait()


@pytest.fixture(scope="module")
def lab(browser, lab_server):
    """One JupyterLab page, started once; each test opens a notebook in it."""
    base, token, notebooks = lab_server
    log = PageLog()
    context = guarded_context(browser, log)
    page = context.new_page()
    watch(page, log)
    page.goto(f"{base}/lab?reset&token={token}")
    page.wait_for_function(
        "window.jupyterapp && window.jupyterapp.started", timeout=STARTUP_SECONDS * 1000
    )
    page.evaluate("async () => { await window.jupyterapp.restored; }")
    yield page, log, notebooks
    context.close()


def wait_rendered(page, widget_id: str, markdown_cells: int) -> None:
    """Wait until every markdown cell is rendered and the page stops changing."""
    deadline = time.monotonic() + RENDER_SECONDS
    last, stable = None, 0
    while time.monotonic() < deadline:
        state = page.evaluate(RENDER_STATE, widget_id)
        if state and state[0] == markdown_cells and state[1] == markdown_cells:
            stable = stable + 1 if state == last else 0
            if stable >= 2:
                return
        last = state
        page.wait_for_timeout(250)
    pytest.fail(f"the notebook did not finish rendering in {RENDER_SECONDS} s: {last}")


@pytest.mark.parametrize("notebook", [path.name for path in CHAPTERS])
def test_chapter_shows_no_raw_myst_in_jupyterlab(lab, notebook):
    page, log, notebooks = lab
    cells = json.loads((notebooks / notebook).read_text())["cells"]
    markdown_cells = sum(cell["cell_type"] == "markdown" for cell in cells)
    seen = len(log.console_errors), len(log.failed), len(log.outside)
    widget_id = page.evaluate(OPEN, notebook)
    try:
        wait_rendered(page, widget_id, markdown_cells)
        problems = []
        for index, cell in enumerate(page.evaluate(MARKDOWN_TEXT, widget_id)):
            where = f"markdown cell {index + 1}"
            if not cell["myst"]:
                problems.append(f"{where}: not rendered by jupyterlab-myst")
            myst = first_matches(cell["text"], RAW_MYST)
            problems += [f"{where}: raw MyST {hit}" for hit in myst]
            problems += [f"{where}: raw TeX {hit}" for hit in raw_tex(cell["text"])]
            problems += [f"{where}: KaTeX error {error}" for error in cell["katexErrors"]]
        # A notebook that JupyterLab changes on opening would be rewritten by autosave.
        page.wait_for_timeout(500)
        if page.evaluate(DIRTY, widget_id):
            problems.append("opening it marked the notebook as changed (autosave would rewrite it)")
        errors = errors_that_matter(log.console_errors[seen[0] :], known_targets())
        problems += [f"console error: {error}" for error in errors]
        problems += [f"failed request: {failed}" for failed in log.failed[seen[1] :]]
        problems += [f"request leaves the machine: {url}" for url in log.outside[seen[2] :]]
        if problems:
            shot = screenshot(page, f"jupyterlab-{notebook}")
            pytest.fail(f"{notebook} in JupyterLab ({shot}):\n  " + "\n  ".join(problems))
    finally:
        page.evaluate(CLOSE, widget_id)


IMAGES = """
(id) => [...document.getElementById(id).querySelectorAll(".jupyter-widgets img")]
  .map((img) => img.src)
"""


def test_ipywidgets_are_live_in_jupyterlab(lab):
    """Run a chapter up to its first widget, move the first slider: the figure is redrawn."""
    page, log, notebooks = lab
    cells = json.loads((notebooks / LIVE_WIDGET_CHAPTER).read_text())["cells"]
    widget_cell = next(
        index
        for index, cell in enumerate(cells)
        if any(WIDGET_MIME in output.get("data", {}) for output in cell.get("outputs", []))
    )
    seen = len(log.console_errors)
    widget_id = page.evaluate(OPEN, LIVE_WIDGET_CHAPTER)
    try:
        page.evaluate(
            """async ([id, index]) => {
              const app = window.jupyterapp;
              const panel = [...app.shell.widgets("main")].find((w) => w.id === id);
              await panel.sessionContext.ready;
              panel.content.activeCellIndex = index;
              await app.commands.execute("notebook:run-all-above");
              await app.commands.execute("notebook:run-cell");
            }""",
            [widget_id, widget_cell],
        )
        slider = page.locator(f"#{widget_id} .jupyter-widgets .widget-slider").first
        slider.wait_for(timeout=120_000)
        page.wait_for_function(f"({IMAGES})('{widget_id}').length > 0", timeout=120_000)
        widget = page.locator(f"#{widget_id} .widget-vbox").first
        widget.scroll_into_view_if_needed()
        shots = ARTIFACTS / "jupyterlab"
        widget.screenshot(path=str(shots / "live-widget-before.png"))
        before = page.evaluate(IMAGES, widget_id)
        value = slider.locator(".widget-readout").first.inner_text()
        slider.locator(".noUi-handle").first.focus()
        page.keyboard.press("End")  # one move, to the slider's maximum
        page.wait_for_function(
            f"(() => {{ const now = ({IMAGES})('{widget_id}'); return now.length > 0"
            f" && JSON.stringify(now) !== {json.dumps(json.dumps(before))}; }})()",
            timeout=60_000,
        )
        assert slider.locator(".widget-readout").first.inner_text() != value
        # The kernel has redrawn the figure once; let the output settle for the picture.
        settled, last = 0, None
        while settled < 4:
            now = page.evaluate(IMAGES, widget_id)
            settled = settled + 1 if now and now == last else 0
            last = now
            page.wait_for_timeout(250)
        widget.screenshot(path=str(shots / "live-widget-after.png"))
        errors = errors_that_matter(log.console_errors[seen:], known_targets())
        assert not errors, errors
    except Exception:
        screenshot(page, "jupyterlab-live-widget")
        raise
    finally:
        page.evaluate(CLOSE, widget_id)
