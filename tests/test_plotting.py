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


# --- cosine_book.plotting.correlation: centring, seaborn regressions, causal diagram ---

from cosine_book.correlation import pearson  # noqa: E402
from cosine_book.plotting.correlation import centring_figure  # noqa: E402
from cosine_book.plotting.simpson import (  # noqa: E402
    draw_causal_diagram,
    draw_group_regressions,
)
from cosine_book.similarity import cosine  # noqa: E402

BERKELEY_NODES = {"sex": (0.0, 0.0), "department": (1.0, 1.0), "admission": (2.0, 0.0)}
BERKELEY_EDGES = [("sex", "department"), ("department", "admission"), ("sex", "admission")]


def _plane_vectors(fig):
    """The two arrows of the right panel of centring_figure, as 2-D vectors."""
    flat = fig.axes[1]
    return [
        np.asarray(text.xy, dtype=float)
        for text in flat.texts
        if getattr(text, "arrow_patch", None) is not None
    ]


@pytest.mark.parametrize(
    ("x", "y"),
    [
        ([1.0, 4.0, 3.5], [3.0, 1.0, 2.5]),
        ([1e300, 4e300, 3.5e300], [3.0, 1.0, 2.5]),
        ([1e-300, 4e-300, 3.5e-300], [3e-300, 1e-300, 2.5e-300]),
        ([2, 3, 4], [5, 5, 6]),
    ],
)
def test_centring_figure_angle_in_the_plane_is_pearson_r(x, y):
    fig = centring_figure(x, y)
    try:
        assert fig.axes[0].name == "3d"
        u, v = _plane_vectors(fig)
        seen = cosine(u, v)  # scales first: one arrow may be near 1e-300
        assert seen == pytest.approx(pearson(x, y), abs=1e-12)
        assert f"r = cos φ = {round(pearson(x, y), 2) + 0.0:.2f}" in fig.axes[1].get_title()
    finally:
        plt.close(fig)


def test_centring_figure_moves_each_vector_along_the_ones_direction():
    # The dotted segment from x to its centred version is parallel to (1, 1, 1).
    fig = centring_figure([1.0, 4.0, 3.5], [3.0, 1.0, 2.5])
    try:
        dotted = [line for line in fig.axes[0].lines if line.get_linestyle() == ":"]
        assert len(dotted) == 2
        for line in dotted:
            xs, ys, zs = line.get_data_3d()
            step = np.array([xs[1] - xs[0], ys[1] - ys[0], zs[1] - zs[0]])
            assert step == pytest.approx(np.full(3, step[0]), abs=1e-12)
    finally:
        plt.close(fig)


def test_group_regressions_match_least_squares_lines(ax):
    rng = np.random.default_rng(3)
    x = rng.normal(size=30)
    groups = np.repeat(["a", "b", "c"], 10)
    y = 2.0 * x + np.repeat([0.0, -5.0, 3.0], 10) + rng.normal(0.0, 0.1, 30)
    result = draw_group_regressions(ax, x, y, groups)
    lines = ax.lines
    assert len(lines) == 4  # one per group, then the pooled one (dashed)
    assert lines[-1].get_linestyle() == "--"
    for line, member in zip(lines, [groups == g for g in "abc"] + [slice(None)], strict=True):
        xs, ys = line.get_data()
        slope = (ys[-1] - ys[0]) / (xs[-1] - xs[0])
        assert slope == pytest.approx(np.polyfit(x[member], y[member], 1)[0], rel=1e-9)
    texts = [t.get_text() for t in ax.get_legend().get_texts()]
    assert texts[-1] == f"pooled: r = {result.pooled:.2f}"


def test_causal_diagram_draws_one_arrow_per_edge_with_labels(ax):
    labels = {("sex", "admission"): "direct"}
    draw_causal_diagram(ax, BERKELEY_NODES, BERKELEY_EDGES, edge_labels=labels)
    arrows = [t for t in ax.texts if getattr(t, "arrow_patch", None) is not None]
    assert len(arrows) == len(BERKELEY_EDGES)
    assert {(tuple(a.xyann), tuple(a.xy)) for a in arrows} == {
        (BERKELEY_NODES[c], BERKELEY_NODES[e]) for c, e in BERKELEY_EDGES
    }
    assert "direct" in [t.get_text() for t in ax.texts]
    assert not ax.axison


CORRELATION_BAD_INPUTS = [
    (lambda ax: centring_figure([1.0, 2.0], [1.0, 3.0]), "expected exactly 3"),
    (lambda ax: centring_figure([1.0, 2.0, 3.0, 4.0], [1.0, 3.0, 2.0, 0.0]), "exactly 3"),
    (lambda ax: centring_figure([[1.0, 2.0, 3.0]], [1.0, 3.0, 2.0]), "1-D"),
    (lambda ax: centring_figure([1.0, np.nan, 3.0], [1.0, 3.0, 2.0]), "x contains NaN"),
    (lambda ax: centring_figure([1.0, 2.0, 3.0], [1.0, np.inf, 2.0]), "y contains an infinite"),
    (lambda ax: centring_figure([5.0, 5.0, 5.0], [1.0, 3.0, 2.0]), "x is constant"),
    (lambda ax: centring_figure([1j, 2.0, 3.0], [1.0, 3.0, 2.0]), "complex"),
    (lambda ax: centring_figure(["1", "2", "3"], [1.0, 3.0, 2.0]), "strings"),
    (lambda ax: centring_figure([[1.0], [2.0, 3.0]], [1.0, 3.0, 2.0]), "ragged"),
    (
        lambda ax: centring_figure(np.ma.masked_array([1.0, 2.0, 3.0]), [1.0, 3.0, 2.0]),
        "masked",
    ),
    (lambda ax: centring_figure([], [1.0, 3.0, 2.0]), "empty"),
    (lambda ax: draw_group_regressions(ax, [0, 1, 2], [1, 2], ["a"] * 3), "length|shape"),
    (lambda ax: draw_group_regressions(ax, [0, 1, 2, 3], [1, np.nan, 0, 1], [0, 0, 1, 1]), "NaN"),
    (
        lambda ax: draw_group_regressions(
            ax, [0, 1, 2, 3], [1, 2, 0, 1], [0, 0, 1, 1], point_size=0
        ),
        "point_size must be positive",
    ),
    (lambda ax: draw_group_regressions(ax, [0, 1, 2, 3], [1, 2, 0, 1], [0, None, 1, 1]), "missing"),
    (lambda ax: draw_causal_diagram(ax, {}, []), "non-empty mapping"),
    (lambda ax: draw_causal_diagram(ax, [("a", (0, 0))], []), "non-empty mapping"),
    (lambda ax: draw_causal_diagram(ax, {1: (0, 0)}, []), "names must be strings"),
    (lambda ax: draw_causal_diagram(ax, {"a": (0, np.nan)}, []), "NaN"),
    (lambda ax: draw_causal_diagram(ax, {"a": (0, 1, 2)}, []), r"one \(x, y\) pair"),
    (lambda ax: draw_causal_diagram(ax, {"a": ("0", "1")}, []), "strings"),
    (lambda ax: draw_causal_diagram(ax, BERKELEY_NODES, [("sex", "age")]), "unknown node 'age'"),
    (lambda ax: draw_causal_diagram(ax, BERKELEY_NODES, [("sex", "sex")]), "itself"),
    (lambda ax: draw_causal_diagram(ax, BERKELEY_NODES, [("sex",)]), "pair"),
    (
        lambda ax: draw_causal_diagram(
            ax, BERKELEY_NODES, BERKELEY_EDGES, edge_labels={("admission", "sex"): "x"}
        ),
        "not one of the edges",
    ),
]


@pytest.mark.parametrize(("call", "message"), CORRELATION_BAD_INPUTS)
def test_correlation_figures_bad_input_table(ax, call, message):
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


def test_heatmap_annotation_and_boundaries():
    truth = np.kron(np.eye(2), np.ones((2, 2)))
    fig = plot_cosine_heatmaps(
        {"t": truth}, ["t"], [0, 0, 1, 1], [4, 3, 2, 1], boundaries=True, annotate=True
    )
    assert fig.axes[0].texts[0].get_text() == "AUC 1.000, mean 0.333"
    assert len(fig.axes[0].lines) == 2  # one horizontal, one vertical boundary
    plt.close(fig)


SPECTRUM_BAD_INPUTS = [
    (lambda: plot_spectrum({}, 1.0, 1.0), "non-empty dict"),
    (lambda: plot_spectrum({"A": [1.0, -1.0]}, 1.0, 1.0), "negative"),
    (lambda: plot_spectrum({"A": [1.0, np.nan]}, 1.0, 1.0), "NaN"),
    (lambda: plot_spectrum({"A": [1.0]}, 0.0, 1.0), "lam1 must be positive"),
    (lambda: plot_spectrum({"A": [1.0]}, 1.0, 1.0, k=0), "k"),
    (lambda: plot_spectrum({"A": ["1"]}, 1.0, 1.0), "strings"),
    (
        lambda: plot_cosine_heatmaps({"t": np.eye(2)}, ["t"], [0, 0], [1, 2], annotate=True),
        "both same-cluster",
    ),
]


@pytest.mark.parametrize(("call", "message"), SPECTRUM_BAD_INPUTS)
def test_factorization_figures_bad_input_table(call, message):
    with pytest.raises(ValueError, match=message):
        call()
    plt.close("all")
