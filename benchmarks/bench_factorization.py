"""Timings for chapter 6: the closed forms at the paper's size, the pair AUC, the widget.

Run with `.venv/bin/python benchmarks/bench_factorization.py` (or `make bench`).
Targets: both closed-form fits at 20,000 x 1,000 at least 15 times faster than a dense
thin SVD of X (they need only the eigendecomposition of the 1,000 x 1,000 Gram matrix);
widget kernel update (state + figure) <= 100 ms median; the widget's HTML version within
5 MB of payload per page. Also `pair_auc` against `sklearn.metrics.roc_auc_score` on the
chapter's 499,500 item pairs.
"""

from __future__ import annotations

import os
import re
import statistics
import time

import matplotlib
import numpy as np
import scipy.linalg
from sklearn.metrics import roc_auc_score

matplotlib.use("Agg")

from cosine_book.cluster_recovery import pair_auc  # noqa: E402
from cosine_book.factorization import (  # noqa: E402
    fit_closed_form,
    gram_spectrum,
    item_similarity_suite,
)
from cosine_book.plotting import use_book_style  # noqa: E402
from cosine_book.simulation import make_clustered_interactions  # noqa: E402
from cosine_book.widgets.core import _figure_png, static_html  # noqa: E402
from cosine_book.widgets.factorization import rescaling_widget  # noqa: E402

# The frame data of a widget's HTML version (cosine_book.widgets.core.static_html).
_FRAME_DATA = r'<script type="application/json" class="lgc-frames">(.*?)</script>'


def timed(function, repeat: int = 3) -> tuple[float, object]:
    """Median wall-clock seconds of `repeat` calls, and the last result."""
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = function()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def main() -> None:
    print(f"cores available: {os.cpu_count()}")
    seconds, data = timed(make_clustered_interactions, repeat=1)
    X = data.X
    print(f"simulate 20,000 x 1,000 (nnz {X.nnz:,}):          {seconds:7.3f} s")

    def fit_both():
        spectrum = gram_spectrum(X)
        return fit_closed_form(spectrum, 1e4, 50), fit_closed_form(spectrum, 100.0, 50, 2)

    fit_seconds, _ = timed(fit_both)
    print(f"closed forms of both objectives from sparse X: {fit_seconds:7.3f} s")
    dense = X.toarray()
    svd_seconds, _ = timed(lambda: scipy.linalg.svd(dense, full_matrices=False), repeat=1)
    print(f"dense thin SVD of X, for comparison:          {svd_seconds:7.3f} s")
    print(f"closed forms / SVD: {svd_seconds / fit_seconds:.0f}x faster (target 15x)")

    auc_timings(data)
    widget_timings(data)


def auc_timings(data) -> None:
    """pair_auc against scikit-learn's roc_auc_score on the pairs of distinct items."""
    suite = item_similarity_suite(data.X, data.item_clusters)
    clusters = data.item_clusters
    rows, cols = np.triu_indices(clusters.size, k=1)
    same = clusters[rows] == clusters[cols]
    ratios, largest_gap = [], 0.0
    for key, S in suite.items():
        if key == "ground truth":
            continue
        ours_seconds, ours = timed(lambda S=S: pair_auc(S, clusters))
        theirs_seconds, theirs = timed(lambda S=S: roc_auc_score(same, S[rows, cols]))
        ratios.append(theirs_seconds / ours_seconds)
        largest_gap = max(largest_gap, abs(ours - theirs) / np.spacing(theirs))
    print(
        f"pair AUC over {rows.size:,} pairs, {len(ratios)} similarities: pair_auc is "
        f"{min(ratios):.1f}x to {max(ratios):.1f}x faster than roc_auc_score "
        f"(incl. its input checks), values equal within {largest_gap:.0f} ulp"
    )


def widget_timings(data) -> None:
    """The chapter 6 widget: a kernel update per setting, and its HTML version."""
    use_book_style()  # as in the chapter: the inline backend renders at 110 dpi
    spec = rescaling_widget(data.X, data.item_clusters, data.item_popularity).spec
    settings = spec.settings()
    spec.evaluate(**spec.defaults())  # warm-up
    compute_times, update_times = [], []
    for setting in settings:
        start = time.perf_counter()
        spec.state(**setting)
        compute_times.append(time.perf_counter() - start)
        # What a slider move costs in a kernel: state, figure, and the one PNG that
        # the kernel widget (cosine_book.widgets.core.kernel_widget) puts in its
        # output area, drawn once at the figure's resolution (and closed).
        start = time.perf_counter()
        _, figure, _ = spec.evaluate(**setting)
        _figure_png(figure, dpi=figure.dpi, fast=True)
        update_times.append(time.perf_counter() - start)
    print(
        f"widget state (cosines, recovery, predictions):  "
        f"{1e3 * statistics.median(compute_times):7.1f} ms median, "
        f"{1e3 * max(compute_times):.1f} ms max"
    )
    print(
        f"widget kernel update incl. figure (target 100 ms): "
        f"{1e3 * statistics.median(update_times):7.1f} ms median, "
        f"{1e3 * max(update_times):.1f} ms max"
    )
    start = time.perf_counter()
    fragment = static_html(spec)
    seconds = time.perf_counter() - start
    payload = len(re.search(_FRAME_DATA, fragment).group(1).encode())
    print(
        f"widget HTML version: {len(settings)} frames, payload {payload:,} bytes "
        f"(budget 5,000,000 per page), rendered in {seconds:.1f} s"
    )


if __name__ == "__main__":
    main()
