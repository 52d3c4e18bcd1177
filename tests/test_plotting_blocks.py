"""Tests for cosine_book.plotting.blocks: the figures of the introduction, chapters 2 and 3."""

from __future__ import annotations

import re

import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.text import Text

from cosine_book.plotting import PALETTE
from cosine_book.plotting.blocks import (
    block_cosines_figure,
    coordinate_blocks_figure,
    limit_construction_figure,
    plot_identity_areas,
    profiles_and_wedge_figure,
    sampled_intervals_figure,
    wedge_figure,
)
from cosine_book.similarity import (
    block_cosines,
    blocks_with,
    profiles_with_cosine,
    random_block_pair,
)


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def pair(local, x_norms, y_norms):
    return block_cosines(*blocks_with(local, x_norms, y_norms))


def arrow_tips(ax):
    return sorted(tuple(map(float, a.xy)) for a in ax.texts if a.get_text() == "")


def test_identity_areas_add_up_to_the_global_cosine_and_widths_to_rho():
    # Introduction: bar widths are the weights, heights the local cosines.
    local, x_norms, y_norms = [0.95, 0.9, -0.2], [1.0, 0.1, 0.5], [0.1, 1.0, 0.4]
    fig = plot_identity_areas({"case": (local, x_norms, y_norms)})
    bars = fig.axes[0].patches[: len(local)]
    widths = np.array([bar.get_width() for bar in bars])
    heights = np.array([bar.get_height() for bar in bars])
    reference = pair(local, x_norms, y_norms)
    np.testing.assert_allclose(widths, reference.weights, rtol=1e-12)
    np.testing.assert_allclose(heights, local)
    assert float(np.sum(widths)) == pytest.approx(reference.profile_cosine, rel=1e-12)
    outline = fig.axes[0].patches[len(local)]
    assert outline.get_width() == 1.0
    assert outline.get_height() == pytest.approx(reference.global_cosine, rel=1e-12)


def test_counterexample_figure_shows_local_ones_and_global_below_one():
    # Chapter 2, fig-ch2-coordinates: x = (1, 1), y = (1, 2).
    fig = coordinate_blocks_figure([1.0, 1.0], [1.0, 2.0])
    plane, lines = fig.axes
    assert plane.get_title() == f"whole vectors: cos(x, y) = {3 / np.sqrt(10):.3f}"
    assert lines.get_title() == "blocks of size one: c₁ = 1, c₂ = 1"
    assert arrow_tips(plane) == [(1.0, 1.0), (1.0, 2.0)]
    # Each block on its own number line: x_i above y_i, from 0 to the entry.
    expected = [(1.0, 0.14), (1.0, 0.86), (1.0, 1.14), (2.0, -0.14)]
    np.testing.assert_allclose(arrow_tips(lines), expected, atol=1e-15)


def test_limit_figure_curves_follow_the_formula():
    # Chapter 2, eq-ch2-limit: global = 2 eps c / (1 + eps^2), local cosines fixed at c,
    # with the tangent 2 eps c at 0 and one line style per c, named in the legend.
    fig = limit_construction_figure([0.99, -0.5])
    ax = fig.axes[0]
    for index, c in enumerate([0.99, -0.5]):
        local, curve, tangent = ax.lines[4 * index : 4 * index + 3]
        assert list(local.get_ydata()) == [c, c]
        eps = curve.get_xdata()
        assert eps[0] == 0.01 and eps[-1] == 1.0 and eps.size == 100
        np.testing.assert_allclose(curve.get_ydata(), 2 * eps * c / (1 + eps**2), rtol=1e-12)
        xs, ys = tangent.get_data()
        assert xs[0] == ys[0] == 0 and ys[1] == pytest.approx(2 * c * xs[1])
    assert ax.get_xscale() == "linear"
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert labels[:2] == ["$c = 0.99$", "$c = -0.5$"]


def test_profiles_and_wedge_show_rho_the_wedge_and_the_pairs():
    # Chapter 3, fig-ch3-wedge: each pair is a dot at (rho, global) between the edges
    # rho c_min and rho c_max; the example is a diamond with its interval.
    local = [0.8, -0.3]
    example = pair(local, *profiles_with_cosine(0.6, 0.3))
    pairs = [pair(local, *profiles_with_cosine(rho, 0.4)) for rho in (0.2, 0.5, 0.9)]
    fig = profiles_and_wedge_figure(example, pairs)
    left, right = fig.axes
    assert left.get_title() == "norm profiles: ρ = cos φ = 0.60"
    profiles = sorted([tuple(example.x_norms), tuple(example.y_norms)])
    np.testing.assert_allclose(arrow_tips(left), profiles, atol=1e-15)
    assert right.get_title() == "feasible wedge for local cosines 0.8, −0.3"
    offsets = right.collections[-1].get_offsets()
    expected = [(p.profile_cosine, p.global_cosine) for p in pairs]
    np.testing.assert_allclose(offsets, expected, atol=1e-15)
    edges = [line for line in right.lines if line.get_color() == PALETTE["bound"]]
    edge_ends = [list(line.get_ydata()) for line in edges]
    np.testing.assert_allclose(edge_ends, [[0.0, 0.8], [0.0, -0.3]], atol=1e-12)
    lines = {line.get_label(): line for line in right.lines}
    interval = lines["interval of the diamond"].get_ydata()
    np.testing.assert_allclose(interval, [0.6 * -0.3, 0.6 * 0.8], atol=1e-12)
    diamond = lines["the pair on the left"].get_ydata()
    assert diamond[0] == pytest.approx(example.global_cosine)
    fig = wedge_figure(local, pairs, point_label="three pairs")
    legend = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert len(fig.axes) == 1 and "three pairs" in legend


def test_sampled_intervals_are_sorted_by_global_cosine():
    rng = np.random.default_rng(3)
    samples = [block_cosines(*random_block_pair(rng, min_blocks=2)) for _ in range(20)]
    ax = sampled_intervals_figure(samples).axes[0]
    assert list(ax.lines[0].get_ydata()) == sorted(s.global_cosine for s in samples)
    for (_, low), (_, high) in ax.collections[0].get_segments():
        assert low <= high


def test_block_cosines_figure_shows_the_terms_and_the_interval():
    # The widgets' drawing function: bars c_i and w_i, the interval with the global cosine.
    s = pair([0.9, -0.4, 0.3], [1.0, 0.5, 0.2], [0.3, 1.0, 0.7])
    bars, line = block_cosines_figure(s).axes
    heights = [bar.get_height() for bar in bars.patches]
    np.testing.assert_allclose(heights, [*s.local, *s.weights])
    lower, upper = s.bounds()
    title = f"global {s.global_cosine:.3f} in [{lower:.3f}, {upper:.3f}]"
    assert line.get_title() == title.replace("-", "−")
    dot = next(mark for mark in line.lines if mark.get_label() == "global cosine")
    assert dot.get_xdata()[0] == s.global_cosine


def test_static_figures_write_true_minus_signs_outside_math():
    # Chapters 2 and 3 print "−0.3" as the widgets do, not "-0.3"; math text is left alone.
    local = [0.8, -0.3]
    example = pair(local, *profiles_with_cosine(0.6, 0.3))
    figures = [
        profiles_and_wedge_figure(example, [example]),
        wedge_figure(local, [example]),
        sampled_intervals_figure([example]),
        limit_construction_figure(local=(0.99, -0.5)),
        coordinate_blocks_figure([1.0, -1.0], [-1.0, 2.0]),
    ]
    for fig in figures:
        for text in fig.findobj(Text):
            outside_math = text.get_text().split("$")[::2]
            assert not any(re.search(r"(?<![\w.])-(?=\.?\d)", part) for part in outside_math)
    assert figures[-1].axes[1].get_title() == "blocks of size one: c₁ = −1, c₂ = −1"


_THREE = pair([0.5, 0.2, 0.1], [1.0, 1.0, 1.0], [1.0, 0.5, 1.0])
_HALF_EMPTY = pair([0.5, 0.2], [1.0, 0.0], [1.0, 0.5])

BAD_INPUTS = [
    (lambda: coordinate_blocks_figure([1.0, 1.0, 1.0], [1.0, 2.0, 3.0]), "two nonzero"),
    (lambda: coordinate_blocks_figure([1.0, 0.0], [1.0, 2.0]), "two nonzero"),
    (lambda: coordinate_blocks_figure([1.0, np.nan], [1.0, 2.0]), "NaN"),
    (lambda: coordinate_blocks_figure([1.0, np.inf], [1.0, 2.0]), "inf"),
    (lambda: coordinate_blocks_figure([1.0, 1j], [1.0, 2.0]), "complex"),
    (lambda: coordinate_blocks_figure(["1", "1"], [1.0, 2.0]), "strings"),
    (lambda: coordinate_blocks_figure([[1.0], [1.0, 2.0]], [1.0, 2.0]), "ragged"),
    (lambda: coordinate_blocks_figure(np.ma.array([1.0, 1.0], mask=[0, 1]), [1, 2]), "masked"),
    (lambda: limit_construction_figure([0.1, 0.2, 0.3, 0.4, 0.5]), "at most 4"),
    (lambda: limit_construction_figure([1.5]), r"\[-1, 1\]"),
    (lambda: limit_construction_figure([]), "empty"),
    (lambda: profiles_and_wedge_figure(_THREE), "two blocks"),
    (lambda: profiles_and_wedge_figure(_HALF_EMPTY), "both defined"),
    (lambda: sampled_intervals_figure([]), "empty"),
    (lambda: wedge_figure([0.5, 1.2], []), r"\[-1, 1\]"),
    (lambda: wedge_figure([], []), "empty"),
    (lambda: plot_identity_areas({}), "non-empty mapping"),
    (lambda: plot_identity_areas([([1.0], [1.0], [1.0])]), "non-empty mapping"),
    (lambda: plot_identity_areas({"a": ([0.5, 0.5], [1.0], [1.0, 1.0])}), "a: expected"),
    (lambda: plot_identity_areas({"a": ([1.5], [1.0], [1.0])}), r"\[-1, 1\]"),
    (lambda: plot_identity_areas({"a": ([0.5], [0.0], [1.0])}), "positive"),
    (lambda: plot_identity_areas({"a": ([np.nan], [1.0], [1.0])}), "a: local contains NaN"),
]


@pytest.mark.parametrize(("call", "message"), BAD_INPUTS)
def test_bad_input_raises_a_clear_error(call, message):
    with pytest.raises(ValueError, match=message):
        call()
