"""Tests for cosine_book.plotting: the book's style and its recurring figure types."""

from __future__ import annotations

import matplotlib as mpl
import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.colors import to_rgb

from cosine_book.plotting import PALETTE, annotate_bounds, plot_intervals, use_book_style


@pytest.fixture
def ax():
    fig, axes = plt.subplots()
    yield axes
    plt.close(fig)


def test_style_is_deterministic_and_uses_the_palette():
    use_book_style()
    assert mpl.rcParams["svg.hashsalt"] == "local-global-cosine"
    cycle = [to_rgb(c) for c in mpl.rcParams["axes.prop_cycle"].by_key()["color"]]
    assert cycle == [to_rgb(c) for c in PALETTE.values()]


def test_palette_colours_are_distinct():
    rgb = np.array([to_rgb(c) for c in PALETTE.values()])
    distances = np.linalg.norm(rgb[:, None] - rgb[None], axis=-1)
    assert distances[np.triu_indices(len(rgb), 1)].min() > 0.15


def test_plot_intervals_draws_one_interval_per_case(ax):
    plot_intervals(ax, [-0.5, 0.1, 0.0], [0.5, 0.3, 0.2], [0.2, 0.25, 0.1])
    segments = ax.collections[0].get_segments()
    assert len(segments) == 3
    np.testing.assert_array_equal(segments[1], [[1.0, 0.1], [1.0, 0.3]])


def test_annotate_bounds_marks_interval_and_value(ax):
    annotate_bounds(ax, -0.2, 0.5, 0.3)
    assert ax.get_xlim() == (-1.0, 1.0)
    assert ax.lines[-1].get_xdata()[0] == 0.3


BAD_INPUTS = [
    (lambda ax: plot_intervals(ax, [0.0, 1.0], [1.0], [0.5, 0.5]), "same length"),
    (lambda ax: plot_intervals(ax, [[0.0]], [[1.0]], [[0.5]]), "1-D"),
    (lambda ax: plot_intervals(ax, [np.nan], [1.0], [0.5]), "lower contains NaN"),
    (lambda ax: plot_intervals(ax, ["0"], [1.0], [0.5]), "strings"),
    (lambda ax: plot_intervals(ax, [0.0], [1.0j], [0.5]), "complex"),
    (lambda ax: plot_intervals(ax, [], [], []), "empty"),
    (lambda ax: annotate_bounds(ax, 0.5, -0.5, 0.0), "must not exceed"),
    (lambda ax: annotate_bounds(ax, -0.5, 0.5, np.inf), "finite"),
    (lambda ax: annotate_bounds(ax, -2.0, 0.5, 0.0), r"\[-1, 1\]"),
    (lambda ax: annotate_bounds(ax, "-0.5", 0.5, 0.0), "real number"),
]


@pytest.mark.parametrize(("call", "message"), BAD_INPUTS)
def test_bad_input_table(ax, call, message):
    with pytest.raises(ValueError, match=message):
        call(ax)


# --- cosine_book.plotting.factorization: spectrum and annotated heatmaps ---

from cosine_book.plotting.factorization import (  # noqa: E402
    plot_cosine_heatmaps,
    plot_spectrum,
)


def test_plot_spectrum_marks_both_thresholds():
    fig = plot_spectrum({"A": [300.0, 150.0, 50.0]}, lam1=1e4, lam2=100.0, k=2)
    left, right = fig.axes[:2]
    horizontal = [line for line in left.lines if line.get_ydata()[0] == line.get_ydata()[-1]]
    assert [line.get_ydata()[0] for line in horizontal] == [100.0, 100.0]
    kept = right.lines[0].get_ydata()
    np.testing.assert_allclose(kept, [0.9, 150.0**2 / (150.0**2 + 1e4), 0.2])
    plt.close(fig)


def test_heatmaps_are_annotated_and_show_the_cluster_boundaries():
    truth = np.kron(np.eye(2), np.ones((2, 2)))
    fig = plot_cosine_heatmaps({"t": truth}, ["t"], [0, 0, 1, 1], [4, 3, 2, 1])
    assert fig.axes[0].texts[0].get_text() == "AUC 1.000, mean 0.333"
    assert len(fig.axes[0].lines) == 2  # one horizontal, one vertical boundary
    plt.close(fig)


SPECTRUM_BAD_INPUTS = [
    # plotting does not re-validate; the score it writes under a panel does
    (
        lambda: plot_cosine_heatmaps({"t": np.eye(2)}, ["t"], [0, 0], [1, 2]),
        "both same-cluster",
    ),
]


@pytest.mark.parametrize(("call", "message"), SPECTRUM_BAD_INPUTS)
def test_factorization_figures_bad_input_table(call, message):
    with pytest.raises(ValueError, match=message):
        call()
    plt.close("all")
