"""Timings for chapter 6: fitting both objectives at the paper's size, and one widget update.

Run with `.venv/bin/python benchmarks/bench_factorization.py` (or `make bench`).
Targets from the issue: both fits <= 5 s; widget update (new cosines + redraw) <= 100 ms median.
"""

from __future__ import annotations

import os
import statistics
import time

import matplotlib
import scipy.linalg

matplotlib.use("Agg")

from cosine_book.factorization import (  # noqa: E402
    _spectrum_from_gram,
    fit_objective1,
    fit_objective2,
    gram,
    gram_spectrum,
    simulate_interactions,
)
from cosine_book.widgets.factorization import (  # noqa: E402
    _RescalingView,
    prepare_rescaling_state,
    rescaling_update,
)


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
    seconds, data = timed(simulate_interactions, repeat=1)
    X = data.X
    print(f"simulate 20,000 x 1,000 (nnz {X.nnz:,}):       {seconds:7.3f} s")
    dense = X.toarray()

    seconds, _ = timed(lambda: gram(X))
    print(f"Gram X^T X, sparse CSR:                      {seconds:7.3f} s")
    seconds, G = timed(lambda: gram(dense))
    print(f"Gram X^T X, dense float64:                   {seconds:7.3f} s")
    for driver in ("numpy", "evd", "evr"):
        seconds, _ = timed(lambda driver=driver: _spectrum_from_gram(G, driver=driver))
        label = "numpy.linalg.eigh" if driver == "numpy" else f"scipy.linalg.eigh({driver})"
        print(f"eigendecomposition, {label:26s}: {seconds:7.3f} s")
    seconds, _ = timed(lambda: scipy.linalg.svd(dense, full_matrices=False), repeat=1)
    print(f"for comparison, dense thin SVD of X:         {seconds:7.3f} s")

    def fit_both():
        spectrum = gram_spectrum(X)
        return fit_objective1(spectrum, 1e4, 50), fit_objective2(spectrum, 100.0, 50)

    seconds, _ = timed(fit_both)
    print(f"fit both objectives from sparse X (target 5 s): {seconds:7.3f} s")
    seconds, _ = timed(lambda: (fit_objective1(X, 1e4, 50), fit_objective2(X, 100.0, 50)))
    print(f"  ... each from scratch (two spectra):       {seconds:7.3f} s")

    state = prepare_rescaling_state(X, data.item_clusters, data.item_popularity, k=50)
    # Three passes over 15 slider positions, after one warm-up update.
    settings = 3 * [
        (lam, alpha) for lam in (1e3, 1e4, 1e5) for alpha in (-1.0, -0.5, 0.0, 0.5, 1.0)
    ]
    rescaling_update(state, 1e4, 0.0)
    compute_times = []
    for lam, alpha in settings:
        start = time.perf_counter()
        rescaling_update(state, lam, alpha)
        compute_times.append(time.perf_counter() - start)
    view = _RescalingView(state, 1e4, 0.0)
    view.redraw(1e4, 0.1)
    redraw_times = []
    for lam, alpha in settings:
        start = time.perf_counter()
        view.redraw(lam, alpha)
        redraw_times.append(time.perf_counter() - start)
    compute_ms = 1e3 * statistics.median(compute_times)
    print(f"widget update, cosines + recovery only:      {compute_ms:7.1f} ms median")
    print(
        f"widget update incl. heatmap redraw (JPEG) (target 100 ms): "
        f"{1e3 * statistics.median(redraw_times):7.1f} ms median, "
        f"{1e3 * max(redraw_times):.1f} ms max"
    )


if __name__ == "__main__":
    main()
