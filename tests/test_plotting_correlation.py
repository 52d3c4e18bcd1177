"""cosine_book.plotting.correlation: what the figures of chapters 4 and 5 draw, bad input."""

from __future__ import annotations

import dataclasses

import matplotlib.pyplot as plt
import numpy as np
import pytest

from cosine_book.correlation import grouped_correlation, pearson, sample_with_moments
from cosine_book.datasets import load_berkeley_admissions, load_iris_sepals
from cosine_book.plotting import PALETTE
from cosine_book.plotting.correlation import (
    berkeley_figure,
    centring_figure,
    draw_causal_diagram,
    draw_decomposition,
    grouped_figure,
    shifted_cosine_figure,
)
from cosine_book.similarity import cosine

SHIFTS = np.linspace(0.0, 6.0, 7)
NODES = {"sex": (0.0, 0.0), "department": (1.0, 1.0), "admission": (2.0, 0.0)}
EDGES = [("sex", "department"), ("department", "admission"), ("sex", "admission")]


@pytest.fixture(autouse=True)
def closing():
    yield
    plt.close("all")


def test_shifted_cosine_figure_draws_every_curve():
    x, y = sample_with_moments(20, 0.0, 0.0, 1.0, 1.0, 0.0, seed=1)
    raw, centred = {}, {}
    for r in (-0.5, 0.0, 0.5):
        xr, yr = sample_with_moments(20, 0.0, 0.0, 1.0, 1.0, r, seed=1)
        raw[r] = [cosine(xr + t, yr + t) for t in SHIFTS]
        centred[r] = [pearson(xr + t, yr + t) for t in SHIFTS]
    left, right = shifted_cosine_figure(x, y, SHIFTS, raw, centred, shift=3.0).axes
    np.testing.assert_allclose(left.collections[0].get_offsets(), np.c_[x + 3.0, y + 3.0])
    assert left.texts[0].xy == pytest.approx((np.mean(x) + 3.0, np.mean(y) + 3.0))
    drawn = [line for line in right.lines if len(line.get_xdata()) == SHIFTS.size]
    for position, r in enumerate(sorted(raw)):  # raw in blue, r in orange, in the order of r
        raw_line, r_line = drawn[2 * position], drawn[2 * position + 1]
        np.testing.assert_array_equal(raw_line.get_ydata(), raw[r])
        np.testing.assert_array_equal(r_line.get_ydata(), centred[r])
        assert (raw_line.get_color(), r_line.get_color()) == (PALETTE["global"], PALETTE["local"])
    texts = [text.get_text() for text in right.get_legend().get_texts()]
    assert texts == [*(f"raw cosine, r = {r:+.1f}" for r in sorted(raw)), "r (centred cosine)"]


def test_grouped_figure_shows_the_decomposition():
    iris = load_iris_sepals()
    result = grouped_correlation(iris.length, iris.width, iris.species)
    fig = grouped_figure(iris.length, iris.width, iris.species, result, title="iris")
    left, right = fig.axes
    labels = [text.get_text() for text in left.get_legend().get_texts()]
    assert labels[-1] == f"pooled: r = {result.pooled:.2f}" and left.get_title() == "iris"
    assert len(left.lines) == len(result.labels) + 1  # a fitted line per group, and pooled
    heights = [bar.get_height() for bar in right.patches]
    assert heights[-1] == pytest.approx(result.pooled)
    assert heights[-3] + heights[-2] == pytest.approx(result.pooled)


def test_bar_labels_of_exact_ties_do_not_depend_on_the_last_bits():
    # A within part of 0.325 (a tie the chapter 4 widget meets) reads 0.33 from either side;
    # a between part of +-1e-34 (equal means) reads 0.00 above the axis.
    result = grouped_correlation([0.0, 1.0, 2.0, 3.0], [1.0, 2.0, 0.0, 1.0], [0, 0, 1, 1])
    for noise in (-2e-17, 2e-17, -1e-34, 1e-34):
        tie = dataclasses.replace(result, within_factor=1.0, pooled_within=0.325 + noise)
        zero = dataclasses.replace(tie, between=noise)
        fig, ax = plt.subplots()
        draw_decomposition(ax, zero)
        within, between = ax.texts[len(result.labels) : len(result.labels) + 2]
        assert (within.get_text(), between.get_text(), between.xyann[1]) == ("0.33", "0.00", 3)


def test_berkeley_figure_shows_rates_and_department_means():
    table = load_berkeley_admissions()
    result = grouped_correlation(*table.individuals())
    left, right = berkeley_figure(table, result).axes
    assert [round(float(line.get_ydata()[0]), 3) for line in left.lines] == [0.445, 0.304]
    means = np.c_[result.x_means, result.y_means]
    np.testing.assert_allclose(right.collections[0].get_offsets(), means)
    assert [text.get_text() for text in right.texts] == list("ABCDEF")


@pytest.mark.parametrize(
    ("x", "y"),
    [
        ([1.0, 4.0, 3.5], [3.0, 1.0, 2.5]),
        ([1e300, 4e300, 3.5e300], [3.0, 1.0, 2.5]),
        ([2, 3, 4], [5, 5, 6]),
    ],
)
def test_centring_figure_angle_in_the_plane_is_pearson_r(x, y):
    fig = centring_figure(x, y)
    assert fig.axes[0].name == "3d"
    arrows = [t.xy for t in fig.axes[1].texts if getattr(t, "arrow_patch", None) is not None]
    assert cosine(*np.array(arrows)) == pytest.approx(pearson(x, y), abs=1e-12)
    assert f"r = cos φ = {round(pearson(x, y), 2) + 0.0:.2f}" in fig.axes[1].get_title()
    # The dotted segment from each vector to its centred version is parallel to (1, 1, 1).
    for line in [line for line in fig.axes[0].lines if line.get_linestyle() == ":"]:
        step = np.diff(np.array(line.get_data_3d()), axis=1).ravel()
        assert step == pytest.approx(np.full(3, step[0]), abs=1e-12)


def test_causal_diagram_draws_one_arrow_per_edge_with_labels():
    fig, ax = plt.subplots()
    draw_causal_diagram(ax, NODES, EDGES, edge_labels={("sex", "admission"): "direct"})
    arrows = [t for t in ax.texts if getattr(t, "arrow_patch", None) is not None]
    assert {(tuple(a.xyann), tuple(a.xy)) for a in arrows} == {
        (NODES[c], NODES[e]) for c, e in EDGES
    }
    assert "direct" in [t.get_text() for t in ax.texts] and not ax.axison


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: centring_figure([1.0, 2.0, 3.0, 4.0], [1.0, 3.0, 2.0, 0.0]), "exactly 3"),
        (lambda: centring_figure([1.0, np.nan, 3.0], [1.0, 3.0, 2.0]), "x contains NaN"),
        (lambda: centring_figure([5.0, 5.0, 5.0], [1.0, 3.0, 2.0]), "x is constant"),
        (lambda: centring_figure([1.0, 2.0, 3.0], [1.0, 3.0]), "x has 3 observations but y"),
        (
            lambda: draw_causal_diagram(plt.gca(), NODES, [("sex", "age")]),
            "unknown node 'age'",
        ),
    ],
)
def test_bad_input_table(call, match):
    with pytest.raises(ValueError, match=match):
        call()
