"""Every widget of the book: kernel update time, HTML frames, payload, browser response.

For each chapter's widget, built as the chapter builds it:

- kernel update: what one move of a control costs in a kernel (state function,
  drawing function, one PNG at the figure's resolution), median and max over every
  setting the HTML version offers (target: median at most 100 ms), and the same as a
  ratio to a baseline measured in the same run: a bare two-panel Matplotlib figure of
  the same size rendered the same way, the floor of any redraw on this machine;
- HTML version: frame count and payload (the kernel-free fragment, budget 5 MB per page);
- browser response: time from moving a control to the new frame, as measured by the
  browser test (``make browser-test`` writes ``_build/browser/widget_timings.json``;
  target 50 ms); shown when that file exists.

Chapter 1's widget shows stored transformer runs, ``experiments/traces.npz`` (written
by ``experiments/optimizer_sweep.py``); without that file its case is skipped, with a
note.
"""

from __future__ import annotations

import json
import statistics
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

from cosine_book.datasets import load_digits_split  # noqa: E402
from cosine_book.embeddings import train_embedding_model  # noqa: E402
from cosine_book.gpt import GPT  # noqa: E402
from cosine_book.plotting import use_book_style  # noqa: E402
from cosine_book.simulation import make_clustered_interactions  # noqa: E402
from cosine_book.training import load_traces  # noqa: E402
from cosine_book.widgets import bounds_widget, two_block_widget  # noqa: E402
from cosine_book.widgets.core import _figure_png, static_html  # noqa: E402
from cosine_book.widgets.correlation import DECOMPOSITION, SIMPSON  # noqa: E402
from cosine_book.widgets.diagnostics import shared_direction_widget  # noqa: E402
from cosine_book.widgets.factorization import rescaling_widget  # noqa: E402
from cosine_book.widgets.training import training_explorer  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
TIMINGS = ROOT / "_build" / "browser" / "widget_timings.json"
TRACES = ROOT / "experiments" / "traces.npz"


def chapter1_spec():
    """Chapter 1's widget over the stored runs, or ``None`` (with a note) without them."""
    if not TRACES.exists():
        where = TRACES.relative_to(ROOT)
        print(f"(chapter 1 skipped: no {where}; experiments/optimizer_sweep.py writes it)")
        return None
    runs = load_traces(TRACES)
    sizes = {name: p.numel() for name, p in GPT().named_parameters()}
    return training_explorer(runs, sizes, initial=("AdamW", 0.8), step=150).spec


def chapter_specs():
    """The seven widgets' specs, with the data their chapters give them (chapter 1's if stored)."""
    digits = load_digits_split()
    model = train_embedding_model(
        digits.x_train, digits.y_train, digits.x_test, digits.y_test, objective="dot"
    )
    data = make_clustered_interactions(seed=0)
    specs = {
        "chapter 1, training": chapter1_spec(),
        "chapter 2, two blocks": two_block_widget().spec,
        "chapter 3, three blocks": bounds_widget().spec,
        "chapter 4, two groups": DECOMPOSITION,
        "chapter 5, Simpson": SIMPSON,
        "chapter 6, rescaling": rescaling_widget(
            data.X, data.item_clusters, data.item_popularity
        ).spec,
        "chapter 7, shared dir.": shared_direction_widget(
            model.hidden(digits.x_test), digits.y_test, name="of the hidden layer"
        ).spec,
    }
    return {label: spec for label, spec in specs.items() if spec is not None}


def kernel_update_ms(spec) -> tuple[list[float], list[float]]:
    """Per setting: the widget's update and, right after it, the baseline's (ms)."""
    import matplotlib.pyplot as plt

    times, baseline = [], []
    for setting in spec.settings():
        start = time.perf_counter()
        _, figure, _ = spec.evaluate(**setting)
        _figure_png(figure, dpi=figure.dpi, fast=True)
        times.append((time.perf_counter() - start) * 1e3)
        size = figure.get_size_inches()
        start = time.perf_counter()
        bare, axes = plt.subplots(1, 2, figsize=size, layout="none")
        axes[0].plot([0.0, 1.0])
        axes[1].plot([1.0, 0.0])
        _figure_png(bare, dpi=bare.dpi, fast=True)
        baseline.append((time.perf_counter() - start) * 1e3)
    return times, baseline


def browser_ms() -> dict[str, list[float]]:
    if not TIMINGS.exists():
        return {}
    found: dict[str, list[float]] = {}
    for row in json.loads(TIMINGS.read_text()):
        if "widget" in row:
            found.setdefault(row["widget"], []).append(row["ms"])
    return found


def main() -> None:
    use_book_style()
    browser = browser_ms()
    print(
        f"{'widget':<26}{'kernel median':>14}{'max':>9}{'/ bare':>8}"
        f"{'frames':>8}{'payload':>11}{'browser':>10}"
    )
    for label, spec in chapter_specs().items():
        times, baseline = kernel_update_ms(spec)
        ratio = statistics.median(times) / statistics.median(baseline)
        payload = len(static_html(spec).encode())
        in_browser = browser.get(spec.name)
        shown = f"{max(in_browser):.1f} ms" if in_browser else "n/a"
        print(
            f"{label:<26}{statistics.median(times):>11.1f} ms{max(times):>6.0f} ms"
            f"{ratio:>7.2f}x{len(spec.settings()):>8}{payload / 1e6:>8.2f} MB{shown:>10}"
        )
    print("targets: kernel median <= 100 ms; payload <= 5 MB per page; browser (max) <= 50 ms")
    print("'/ bare': kernel median over that of a bare two-panel figure of the same size")
    if not browser:
        print("(browser times: run `make browser-test` first)")


if __name__ == "__main__":
    main()
