"""Tests for the static figures of chapters 4 and 5 in cosine_book.plotting.correlation:
shifted_cosine_figure, grouped_figure and berkeley_figure (what they draw, and a
bad-input table)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pytest

from cosine_book.correlation import grouped_correlation, pearson
from cosine_book.datasets import load_berkeley_admissions, load_iris_sepals
from cosine_book.group_moments import sample_with_moments
from cosine_book.plotting import PALETTE
from cosine_book.plotting.correlation import grouped_figure, shifted_cosine_figure
from cosine_book.plotting.simpson import berkeley_figure
from cosine_book.similarity import cosine

SHIFTS = np.linspace(0.0, 6.0, 7)


def _curves(correlations=(-0.5, 0.0, 0.5)):
    raw, centred = {}, {}
    for r in correlations:
        x, y = sample_with_moments(20, 0.0, 0.0, 1.0, 1.0, r, seed=1)
        raw[r] = [cosine(x + t, y + t) for t in SHIFTS]
        centred[r] = [pearson(x + t, y + t) for t in SHIFTS]
    return raw, centred


@pytest.fixture
def closing():
    yield
    plt.close("all")


def test_shifted_cosine_figure_draws_every_curve(closing):
    x, y = sample_with_moments(20, 0.0, 0.0, 1.0, 1.0, 0.0, seed=1)
    raw, centred = _curves()
    fig = shifted_cosine_figure(x, y, SHIFTS, raw, centred, shift=3.0)
    left, right = fig.axes
    # The scatter holds the shifted sample, the arrow ends at its mean.
    np.testing.assert_allclose(left.collections[0].get_offsets(), np.c_[x + 3.0, y + 3.0])
    (arrow,) = left.texts
    assert arrow.xy == pytest.approx((np.mean(x) + 3.0, np.mean(y) + 3.0))
    # Two lines per correlation (raw in blue, r in orange), in the order of r.
    drawn = [line for line in right.lines if len(line.get_xdata()) == SHIFTS.size]
    assert len(drawn) == 6
    for position, r in enumerate(sorted(raw)):
        raw_line, r_line = drawn[2 * position], drawn[2 * position + 1]
        np.testing.assert_array_equal(raw_line.get_ydata(), raw[r])
        np.testing.assert_array_equal(r_line.get_ydata(), centred[r])
        assert raw_line.get_color() == PALETTE["global"]
        assert r_line.get_color() == PALETTE["local"]
    texts = [text.get_text() for text in right.get_legend().get_texts()]
    assert texts == [
        "raw cosine, r = -0.5",
        "raw cosine, r = +0.0",
        "raw cosine, r = +0.5",
        "r (centred cosine)",
    ]
    assert right.get_legend().get_texts()[0].get_fontsize() >= 9


def test_grouped_figure_shows_the_decomposition(closing):
    iris = load_iris_sepals()
    result = grouped_correlation(iris.length, iris.width, iris.species)
    fig = grouped_figure(
        iris.length, iris.width, iris.species, result=result, xlabel="length", title="iris"
    )
    left, right = fig.axes
    assert (left.get_xlabel(), left.get_ylabel(), left.get_title()) == ("length", "y", "iris")
    labels = [text.get_text() for text in left.get_legend().get_texts()]
    assert labels[-1] == f"pooled: r = {result.pooled:.2f}"
    heights = [bar.get_height() for bar in right.patches]
    assert heights[-1] == pytest.approx(result.pooled)
    assert heights[-3] + heights[-2] == pytest.approx(result.pooled)
    # Without a precomputed result the same numbers.
    again = grouped_figure(iris.length, iris.width, iris.species)
    assert [bar.get_height() for bar in again.axes[1].patches] == heights


def test_berkeley_figure_shows_rates_and_department_means(closing):
    table = load_berkeley_admissions()
    result = grouped_correlation(*table.individuals())
    fig = berkeley_figure(table, result)
    left, right = fig.axes
    overall = [round(float(line.get_ydata()[0]), 3) for line in left.lines]
    assert overall == [0.445, 0.304]
    means = np.c_[result.x_means, result.y_means]
    np.testing.assert_allclose(right.collections[0].get_offsets(), means)
    assert right.get_xlim() == (0.0, 1.0)


# ---------------------------------------------------------------------------
# Bad input: (call, expected error-message fragment)
# ---------------------------------------------------------------------------

_X, _Y = np.array([0.0, 1.0, 2.0]), np.array([1.0, 0.0, 2.0])
_RAW, _CENTRED = {0.5: [0.1, 0.2]}, {0.5: [0.5, 0.5]}
_SHIFTS = [0.0, 1.0]


def _shifted(**overrides):
    arguments = {"x": _X, "y": _Y, "shifts": _SHIFTS, "raw": _RAW, "centred": _CENTRED}
    arguments.update(overrides)
    return lambda: shifted_cosine_figure(**arguments)


_TABLE = load_berkeley_admissions()
_RESULT = grouped_correlation(*_TABLE.individuals())

BAD_INPUT = [
    ("shifted: x with NaN", _shifted(x=[0.0, np.nan, 1.0]), "x contains NaN"),
    ("shifted: y of another length", _shifted(y=[1.0, 2.0]), r"x has shape \(3,\) but y has"),
    ("shifted: x complex", _shifted(x=_X + 1j), "x is complex"),
    ("shifted: shifts 2-D", _shifted(shifts=[[0.0, 1.0]]), "shifts has shape"),
    ("shifts with inf", _shifted(shifts=[0.0, np.inf]), "shifts contains an infinite"),
    ("raw not a mapping", _shifted(raw=[[0.1, 0.2]]), "raw must be a non-empty mapping"),
    ("raw empty", _shifted(raw={}), "raw must be a non-empty mapping"),
    ("raw key outside [-1, 1]", _shifted(raw={2.0: [0.1, 0.2]}), "a key of raw"),
    ("raw curve too short", _shifted(raw={0.5: [0.1]}), r"raw\[0.5\] has 1 values but shifts"),
    ("raw curve with NaN", _shifted(raw={0.5: [0.1, np.nan]}), r"raw\[0.5\] contains NaN"),
    ("keys disagree", _shifted(centred={0.0: [0.5, 0.5]}), "raw has the correlations"),
    (
        "four curves",
        _shifted(
            raw={r: [0.0, 0.0] for r in (0.1, 0.2, 0.3, 0.4)},
            centred={r: [0.0, 0.0] for r in (0.1, 0.2, 0.3, 0.4)},
        ),
        "raw has 4 curves; expected at most 3",
    ),
    ("shift NaN", _shifted(shift=np.nan), "shift"),
    (
        "grouped: groups too short",
        lambda: grouped_figure([0, 1, 2, 3], [1, 2, 0, 1], ["a", "b"]),
        "groups",
    ),
    (
        "grouped: title not a string",
        lambda: grouped_figure([0, 1, 2, 3], [1, 2, 0, 1], [0, 0, 1, 1], title=3),
        "title must be a string",
    ),
    (
        "grouped: negative jitter",
        lambda: grouped_figure([0, 1, 2, 3], [1, 2, 0, 1], [0, 0, 1, 1], jitter=-1.0),
        "jitter",
    ),
    ("berkeley: not a table", lambda: berkeley_figure({}, _RESULT), "table must be a Berkeley"),
    ("berkeley: not a result", lambda: berkeley_figure(_TABLE, None), "result must be a Grouped"),
]


@pytest.mark.parametrize(("case", "call", "match"), BAD_INPUT, ids=[row[0] for row in BAD_INPUT])
def test_bad_input_table(closing, case, call, match):
    with pytest.raises(ValueError, match=match):
        call()
