"""Tests for cosine_book.plotting.blocks: the figures of chapters 2 and 3."""

from __future__ import annotations

import re

import matplotlib.pyplot as plt
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cosine_book.plotting import PALETTE
from cosine_book.plotting.blocks import (
    coordinate_blocks_figure,
    draw_norm_profiles,
    draw_wedge,
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


@pytest.fixture
def ax():
    fig, axes = plt.subplots()
    yield axes
    plt.close(fig)


def pair(local, x_norms, y_norms):
    return block_cosines(*blocks_with(local, x_norms, y_norms))


def test_counterexample_figure_shows_local_ones_and_global_below_one():
    # Chapter 2, fig-ch2-coordinates: x = (1, 1), y = (1, 2).
    fig = coordinate_blocks_figure([1.0, 1.0], [1.0, 2.0])
    plane, lines = fig.axes
    assert plane.get_title() == f"whole vectors: cos(x, y) = {3 / np.sqrt(10):.3f}"
    assert lines.get_title() == "blocks of size one: c₁ = 1, c₂ = 1"
    # The arrows end at the vectors' tips, drawn as they are (no scaling).
    tips = sorted(tuple(a.xy) for a in plane.texts if a.get_text() == "")
    assert tips == [(1.0, 1.0), (1.0, 2.0)]
    assert plane.get_xlabel() == "coordinate 1 (block 1)"
    plt.close(fig)


def test_counterexample_figure_signs_and_huge_entries():
    # Local cosine of a block of size one is the sign of x_i y_i; entries near 1e300
    # are drawn divided by a power of ten (no overflow, which -W error would catch).
    fig = coordinate_blocks_figure([1e300, -2e300], [-1e300, 2e299])
    plane, lines = fig.axes
    assert lines.get_title() == "blocks of size one: c₁ = \u22121, c₂ = \u22121"
    assert plane.get_xlabel().endswith("(× 1e300)")
    tips = [a.xy for a in plane.texts if a.get_text() == ""]
    assert all(np.isfinite(tip).all() and np.abs(tip).max() <= 2.0 + 1e-12 for tip in tips)
    plt.close(fig)


def test_limit_figure_curves_follow_the_formula():
    # Chapter 2, eq-ch2-limit: global = 2 eps c / (1 + eps^2), locals fixed at c.
    eps = np.linspace(0.01, 1.0, 7)
    fig = limit_construction_figure([0.99, 0.5], eps)
    ax = fig.axes[0]
    horizontal = [
        line for line in ax.lines if len(line.get_xdata()) == 2 and line.get_xdata()[1] == 1
    ]
    horizontal = [line for line in horizontal if line.get_ydata()[0] == line.get_ydata()[1]]
    curves = [line for line in ax.lines if len(line.get_xdata()) == eps.size]
    assert [line.get_ydata()[0] for line in horizontal] == [0.99, 0.5]
    for c, curve in zip([0.99, 0.5], curves, strict=True):
        np.testing.assert_allclose(curve.get_ydata(), 2 * eps * c / (1 + eps**2), rtol=1e-12)
    # The small-eps law 2 eps c is drawn (tangents through the origin with slope 2c), the
    # axis is linear so that the law shows, and the legend names each line style's c.
    tangents = [line for line in ax.lines if line.get_color() == "0.55" and len(line.get_xdata())]
    for c, tangent in zip([0.99, 0.5], tangents, strict=True):
        xs, ys = np.asarray(tangent.get_xdata()), np.asarray(tangent.get_ydata())
        assert xs[0] == ys[0] == 0 and ys[1] == pytest.approx(2 * c * xs[1])
    assert ax.get_xscale() == "linear"
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert labels[:2] == ["$c = 0.99$", "$c = 0.5$"]
    plt.close(fig)


def test_norm_profiles_title_gives_rho_and_small_norms_are_scaled(ax):
    draw_norm_profiles(ax, [3e-300, 4e-300], [5e-300, 0.0])
    assert ax.get_title() == "norm profiles: ρ = cos φ = 0.60"
    assert ax.get_xlabel().endswith("(× 1e-300)")
    tips = [a.xy for a in ax.texts if a.get_text() == ""]
    np.testing.assert_allclose(sorted(map(tuple, tips)), [(3.0, 4.0), (5.0, 0.0)])


def test_wedge_points_are_the_pairs_rho_and_global(ax):
    local = [0.8, -0.3]
    pairs = [pair(local, *profiles_with_cosine(rho, 0.4)) for rho in (0.2, 0.5, 0.9)]
    draw_wedge(ax, local, pairs, highlight=pairs[1])
    offsets = ax.collections[-1].get_offsets()
    np.testing.assert_allclose(
        offsets, [(p.profile_cosine, p.global_cosine) for p in pairs], atol=1e-15
    )
    # Edges: the lines rho * c_max and rho * c_min from the origin to rho = 1.
    edges = [line for line in ax.lines if line.get_color() == PALETTE["bound"]]
    assert [list(line.get_ydata()) for line in edges] == [[0.0, 0.8], [0.0, -0.3]]
    # The highlighted pair's interval at its rho.
    segment = next(line for line in ax.lines if line.get_label() == "highlighted pair")
    assert segment.get_ydata()[0] == pytest.approx(pairs[1].global_cosine)
    interval = next(line for line in ax.lines if line.get_label() == "interval of the diamond")
    np.testing.assert_allclose(interval.get_ydata(), [0.5 * -0.3, 0.5 * 0.8], atol=1e-12)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.floats(-1.0, 1.0), min_size=2, max_size=5),
    st.floats(0.0, 1.0),
    st.floats(0.0, 1.0),
)
def test_every_pair_with_these_local_cosines_lies_in_the_wedge(local, rho, share):
    # Chapter 3, fig-ch3-wedge: (rho, global) lies between rho c_min and rho c_max.
    n = len(local)
    x_norms, y_norms = profiles_with_cosine(rho, share, n, 0.0 if n == 2 else 0.01 * rho)
    s = pair(local, x_norms, y_norms)
    rho_measured = s.profile_cosine
    assert rho_measured * min(local) - 1e-12 <= s.global_cosine
    assert s.global_cosine <= rho_measured * max(local) + 1e-12
    fig, axes = plt.subplots()
    draw_wedge(axes, local, [s])  # accepted: its local cosines fit the wedge
    plt.close(fig)


def test_sweeps_reach_both_edges_of_the_wedge():
    # Chapter 3, fig-ch3-attainment: at fixed rho the sweep runs from edge to edge.
    local = [0.9, -0.4, 0.3, 0.5]
    shares = (1 - np.cos(np.linspace(0.0, np.pi, 41)[1:-1])) / 2
    for rho in (0.2, 0.6, 1.0):
        values = [pair(local, *profiles_with_cosine(rho, t, 4, 0.05)).global_cosine for t in shares]
        width = rho * 1.3
        assert rho * 0.9 - max(values) < 0.03 * width
        assert min(values) - rho * -0.4 < 0.03 * width


def test_profiles_and_wedge_figure_has_both_panels():
    local = [0.8, -0.3]
    example = pair(local, *profiles_with_cosine(0.6, 0.3))
    cloud = [pair(local, *profiles_with_cosine(r, 0.5)) for r in (0.1, 0.9)]
    fig = profiles_and_wedge_figure(example, cloud)
    left, right = fig.axes
    assert left.get_title() == "norm profiles: ρ = cos φ = 0.60"
    assert right.get_title() == "feasible wedge for local cosines 0.8, \u22120.3"
    assert "the pair on the left" in [t.get_text() for t in right.get_legend().get_texts()]
    plt.close(fig)


def test_static_figures_write_true_minus_signs_outside_math():
    # Chapters 2 and 3 print "−0.3" as the widgets do, not "-0.3"; math text is left alone.
    from matplotlib.text import Text

    local = [0.8, -0.3]
    example = pair(local, *profiles_with_cosine(0.6, 0.3))
    figures = [
        profiles_and_wedge_figure(example, [example]),
        wedge_figure(local, [example]),
        sampled_intervals_figure([example]),
        limit_construction_figure(local=(0.99, -0.5)),
        coordinate_blocks_figure([1.0, -1.0], [1.0, 2.0]),
    ]
    for fig in figures:
        for text in fig.findobj(Text):
            outside_math = text.get_text().split("$")[::2]
            assert not any(re.search(r"(?<![\w.])-(?=\.?\d)", part) for part in outside_math), (
                text.get_text()
            )
        plt.close(fig)
    texts = [t.get_text() for t in figures[1].findobj(Text)]
    assert any("\u22120.3" in t for t in texts)


def test_sampled_intervals_are_sorted_by_global_cosine():
    rng = np.random.default_rng(3)
    samples = [block_cosines(*random_block_pair(rng, min_blocks=2)) for _ in range(20)]
    fig = sampled_intervals_figure(samples)
    ax = fig.axes[0]
    values = ax.lines[0].get_ydata()
    assert list(values) == sorted(s.global_cosine for s in samples)
    for (_, low), (_, high) in ax.collections[0].get_segments():
        assert low <= high
    plt.close(fig)


def test_wedge_figure_is_one_axes():
    s = pair([0.5, 0.2], [1.0, 1.0], [1.0, 0.5])
    fig = wedge_figure([0.5, 0.2], [s], point_label="one pair")
    assert len(fig.axes) == 1
    assert "one pair" in [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    plt.close(fig)


_PAIR = block_cosines(*blocks_with([0.5, 0.2], [1.0, 1.0], [1.0, 0.5]))
_THREE = block_cosines(*blocks_with([0.5, 0.2, 0.1], [1.0, 1.0, 1.0], [1.0, 0.5, 1.0]))
_HALF_EMPTY = block_cosines(*blocks_with([0.5, 0.2], [1.0, 0.0], [1.0, 0.5]))


def _on_axes(draw):
    def call():
        fig, axes = plt.subplots()
        try:
            draw(axes)
        finally:
            plt.close(fig)

    return call


BAD_INPUTS = [
    # (call, input kind, expected message fragment)
    (lambda: coordinate_blocks_figure([1.0, 1.0, 1.0], [1.0, 2.0, 3.0]), "three entries", "2"),
    (lambda: coordinate_blocks_figure([1.0, 0.0], [1.0, 2.0]), "zero entry", "zero entry"),
    (lambda: coordinate_blocks_figure([0.0, 0.0], [1.0, 2.0]), "zero vector", "zero vector"),
    (lambda: coordinate_blocks_figure([1.0, np.nan], [1.0, 2.0]), "NaN", "NaN"),
    (lambda: coordinate_blocks_figure([1.0, np.inf], [1.0, 2.0]), "infinity", "inf"),
    (lambda: coordinate_blocks_figure([1.0, 1j], [1.0, 2.0]), "complex", "complex"),
    (lambda: coordinate_blocks_figure(["1", "1"], [1.0, 2.0]), "strings", "strings"),
    (lambda: coordinate_blocks_figure([[1.0], [1.0, 2.0]], [1.0, 2.0]), "ragged", "ragged"),
    (
        lambda: coordinate_blocks_figure(np.ma.array([1.0, 1.0], mask=[0, 1]), [1.0, 2.0]),
        "masked",
        "masked",
    ),
    (lambda: limit_construction_figure([0.1, 0.2, 0.3, 0.4, 0.5]), "five curves", "at most 4"),
    (lambda: limit_construction_figure([1.5]), "cosine > 1", r"\[-1, 1\]"),
    (lambda: limit_construction_figure([0.5], [0.0, 0.1]), "epsilon 0", "positive"),
    (lambda: limit_construction_figure([0.5], []), "no epsilon", "empty"),
    (
        _on_axes(lambda a: draw_norm_profiles(a, [1.0, -1.0], [1.0, 1.0])),
        "negative norm",
        "nonnegative",
    ),
    (
        _on_axes(lambda a: draw_norm_profiles(a, [1.0, 1.0, 1.0], [1.0, 1.0, 1.0])),
        "three blocks",
        "exactly 2",
    ),
    (_on_axes(lambda a: draw_norm_profiles(a, [0.0, 0.0], [1.0, 1.0])), "zero", "zero vector"),
    (_on_axes(lambda a: draw_wedge(a, [0.5, 1.2])), "cosine > 1", r"\[-1, 1\]"),
    (_on_axes(lambda a: draw_wedge(a, [])), "no cosines", "empty"),
    (_on_axes(lambda a: draw_wedge(a, [0.5, 0.3], [_PAIR])), "pair outside", "outside"),
    (_on_axes(lambda a: draw_wedge(a, [0.5, 0.2], [(0.5, 0.3)])), "not a pair", "BlockCosines"),
    (
        _on_axes(lambda a: draw_wedge(a, [0.5, 0.3], highlight=_PAIR)),
        "highlight outside",
        "highlight",
    ),
    (lambda: profiles_and_wedge_figure(_THREE), "three blocks", "exactly two"),
    (lambda: profiles_and_wedge_figure(_HALF_EMPTY), "undefined cosine", "undefined"),
    (lambda: sampled_intervals_figure([]), "no pairs", "empty"),
    (lambda: sampled_intervals_figure([1.0]), "not a pair", "BlockCosines"),
    (lambda: wedge_figure([0.9, 0.8], [_PAIR]), "pair outside", "outside"),
]


@pytest.mark.parametrize(
    ("call", "kind", "message"), BAD_INPUTS, ids=[row[1] for row in BAD_INPUTS]
)
def test_bad_input_raises_a_clear_error(call, kind, message):
    with pytest.raises(ValueError, match=message):
        call()
    plt.close("all")


def test_valid_edge_cases_are_accepted():
    # A zero block on one side drops out of the wedge check (its cosine is undefined).
    fig = wedge_figure([0.5], [_HALF_EMPTY])
    plt.close(fig)
    # One local cosine only: the wedge is a line.
    fig = limit_construction_figure([-1.0])
    plt.close(fig)


# ------------------------------------------------------------- the identity as areas


def test_identity_areas_add_up_to_the_global_cosine_and_widths_to_rho():
    local, x_norms, y_norms = [0.95, 0.9, -0.2], [1.0, 0.1, 0.5], [0.1, 1.0, 0.4]
    fig = plot_identity_areas({"case": (local, x_norms, y_norms)})
    bars = fig.axes[0].patches[: len(local)]
    widths = np.array([bar.get_width() for bar in bars])
    heights = np.array([bar.get_height() for bar in bars])
    x_blocks = [[norm] for norm in x_norms]
    # Blocks of size one with the given norms and signs give the same terms.
    y_blocks = [[c / abs(c) * norm] for c, norm in zip(local, y_norms, strict=True)]
    reference = block_cosines(x_blocks, y_blocks)
    np.testing.assert_allclose(widths, reference.weights, rtol=1e-12)
    np.testing.assert_allclose(heights, local)
    assert float(np.sum(widths)) == pytest.approx(reference.profile_cosine, rel=1e-12)
    outline = fig.axes[0].patches[len(local)]
    assert outline.get_width() == 1.0
    assert outline.get_height() == pytest.approx(float(np.sum(widths * heights)), rel=1e-12)
    plt.close(fig)


@pytest.mark.parametrize(
    ("cases", "fragment"),
    [
        ({}, "non-empty mapping"),
        ([([1.0], [1.0], [1.0])], "non-empty mapping"),
        ({"a": ([0.5, 0.5], [1.0], [1.0, 1.0])}, "one length"),
        ({"a": ([1.5], [1.0], [1.0])}, r"\[-1, 1\]"),
        ({"a": ([0.5], [0.0], [1.0])}, "positive"),
        ({"a": ([np.nan], [1.0], [1.0])}, "NaN"),
    ],
)
def test_identity_areas_refuse_bad_input(cases, fragment):
    with pytest.raises(ValueError, match=fragment):
        plot_identity_areas(cases)
