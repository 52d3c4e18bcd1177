"""Tests for cosine_book.plotting: the book's style and its recurring figure types."""

from __future__ import annotations

import matplotlib as mpl
import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.colors import to_rgb

from cosine_book.plotting import PALETTE, typeset_figure, typeset_minus, use_book_style


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


def test_minus_signs_outside_math_only(ax):
    assert typeset_minus("-1, x-2, -.5, 1e-3, top-10") == "\u22121, x-2, \u2212.5, 1e-3, top-10"
    ax.set_title("r = -0.5 and $c = -0.5$ and -1")
    typeset_figure(ax.figure)
    assert ax.get_title() == "r = \u22120.5 and $c = -0.5$ and \u22121"


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
