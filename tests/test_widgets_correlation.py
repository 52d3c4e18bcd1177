"""Tests for the widgets of chapters 4 and 5 (cosine_book.widgets.correlation), their
computation (two_group_sample, offset_sweep in cosine_book.correlation) and their figures
(cosine_book.plotting.correlation). Each "try this" sentence of the chapters is checked on
every setting the HTML version (and the live one) offers that the sentence covers."""

from __future__ import annotations

import dataclasses
import json
import re
from typing import NamedTuple

import matplotlib.pyplot as plt
import numpy as np
import pytest
import scipy.sparse
from hypothesis import given, settings
from hypothesis import strategies as st

from cosine_book.correlation import grouped_correlation
from cosine_book.group_moments import (
    GroupSpec,
    offset_sweep,
    pooled_correlation,
    two_group_sample,
    zero_crossing_gap,
)
from cosine_book.plotting.correlation import (
    decomposition_figure,
    draw_decomposition,
    draw_grouped_scatter,
)
from cosine_book.plotting.simpson import draw_offset_sweep
from cosine_book.widgets import decomposition_widget, simpson_widget
from cosine_book.widgets.core import LiveWidget, Slider, static_html, typeset_minus
from cosine_book.widgets.correlation import (
    B_OFFSETS,
    DECOMPOSITION,
    SIMPSON,
    decomposition_state,
    simpson_spec,
    simpson_state,
)

SETTINGS = settings(max_examples=40, deadline=None)


def offered(spec, name):
    """(value, state) of the HTML version as control ``name`` moves alone from the defaults."""
    control = next(c for c in spec.controls if c.name == name)
    return [(value, spec.state(**{**spec.defaults(), name: value})) for value in control.values()]


def tiny_figure(_state):
    fig, _ax = plt.subplots(figsize=(1, 1))
    return fig


def frames_of(fragment):
    data = re.search(r'<script type="application/json" class="lgc-frames">(.*?)</script>', fragment)
    return json.loads(data.group(1).replace("<\\/", "</"))


# --- computation: two_group_sample, offset_sweep ---------------------------------


def test_two_group_sample_has_the_requested_moments():
    x, y, groups = two_group_sample(
        GroupSpec(30, 1.0, 2.0, 0.5, 0.6), GroupSpec(50, -1, 0, 2, -0.3)
    )
    result = grouped_correlation(x, y, groups)
    np.testing.assert_allclose(result.counts, [30, 50])
    np.testing.assert_allclose(result.within, [0.6, -0.3], atol=1e-12)
    np.testing.assert_allclose(result.x_means, [1.0, -1.0], atol=1e-12)
    np.testing.assert_allclose(result.y_sds, [0.5, 2.0], atol=1e-12)


@SETTINGS
@given(
    st.integers(3, 60),
    st.integers(3, 60),
    st.lists(st.floats(-5, 5), min_size=4, max_size=4),
    st.lists(st.floats(0.1, 3), min_size=2, max_size=2),
    st.lists(st.floats(-1, 1), min_size=2, max_size=2),
    st.integers(0, 2**32),
)
def test_two_group_sample_moments_are_exact(n_a, n_b, means, spreads, within, seed):
    first = GroupSpec(n_a, means[0], means[1], spreads[0], within[0])
    second = GroupSpec(n_b, means[2], means[3], spreads[1], within[1])
    x, y, groups = two_group_sample(first, second, seed=seed)
    result = grouped_correlation(x, y, groups)
    np.testing.assert_array_equal(result.counts, [n_a, n_b])
    np.testing.assert_allclose(result.x_means, [means[0], means[2]], atol=1e-12)
    np.testing.assert_allclose(result.y_means, [means[1], means[3]], atol=1e-12)
    np.testing.assert_allclose(result.x_sds, spreads, rtol=1e-12)
    np.testing.assert_allclose(result.y_sds, spreads, rtol=1e-12)
    np.testing.assert_allclose(result.within, within, atol=1e-12)
    again = two_group_sample(first, second, seed=seed)
    np.testing.assert_array_equal(again[0], x)  # the same points on every call
    np.testing.assert_array_equal(again[1], y)


def test_offset_sweep_flips_sign_at_the_zero_gap():
    gaps = np.linspace(-8, 8, 161)
    pooled, zero_gap = offset_sweep(gaps, within=(0.8, 0.8), x_gap=3.0)
    assert (pooled[gaps < zero_gap] < 0).all()
    assert (pooled[gaps > zero_gap] > 0).all()
    # Far away the between-group part dominates: r tends to +-(x-gap share of x's spread).
    far, _ = offset_sweep([-1e6, 1e6], within=(0.8, 0.8), x_gap=3.0)
    limit = 0.5 * 3.0 / np.sqrt(1.0 + 0.25 * 9.0)
    np.testing.assert_allclose(far, [-limit, limit], atol=1e-5)


@SETTINGS
@given(
    st.lists(st.floats(-50, 50), min_size=1, max_size=8),
    st.lists(st.floats(0.05, 1), min_size=2, max_size=2),
    st.floats(0.1, 10) | st.floats(-10, -0.1),
    st.lists(st.floats(0.0, 4), min_size=2, max_size=2).filter(any),
    st.lists(st.floats(-1, 1), min_size=2, max_size=2),
)
def test_offset_sweep_is_the_pooled_correlation(gaps, shares, x_gap, spreads, within):
    pooled, zero_gap = offset_sweep(
        gaps, shares=shares, x_gap=x_gap, spreads=spreads, within=within
    )
    within_nan = [r if s > 0 else np.nan for r, s in zip(within, spreads, strict=True)]
    for gap, r in zip(gaps, pooled, strict=True):
        expected = pooled_correlation(
            shares, [0.0, x_gap], [0.0, gap], spreads, spreads, within_nan
        )
        assert r == pytest.approx(expected, abs=1e-12)
    assert zero_gap == zero_crossing_gap(shares, x_gap, spreads, spreads, within_nan)


def test_offset_sweep_exact_on_extreme_magnitudes():
    for scale in (1e-300, 1e300):
        pooled, zero_gap = offset_sweep(
            np.array([-3.0, 0.0, 3.0]) * scale, x_gap=3.0 * scale, spreads=(scale, scale)
        )
        expected = [(0.8 - 2.25) / 3.25, 0.8 / np.sqrt(3.25), (0.8 + 2.25) / 3.25]
        np.testing.assert_allclose(pooled, expected, rtol=1e-12)
        assert zero_gap == pytest.approx(-16 / 15 * scale, rel=1e-12)


class Refused(NamedTuple):
    """The call raises ValueError with this fragment (a literal, not a pattern)."""

    fragment: str


_A = GroupSpec(10, 0.0, 0.0, 1.0, 0.5)


def _pair(**changes):
    return lambda: two_group_sample(dataclasses.replace(_A, **changes), _A)[0].mean()


def _second(**changes):
    return lambda: two_group_sample(_A, dataclasses.replace(_A, **changes))[0].mean()


def _sweep(gaps=(0.0, 1.0), **changes):
    return lambda: offset_sweep(gaps, **changes)[0]


BAD_INPUT = [
    pytest.param(
        lambda: two_group_sample((10, 0, 0, 1, 0.5), _A),
        Refused("first must be a GroupSpec; got tuple"),
        id="two_group_sample-not-spec",
    ),
    pytest.param(_pair(n=2), Refused("first.n must be at least 3"), id="two_group_sample-n"),
    pytest.param(
        _pair(n=10.0), Refused("first.n must be an integer"), id="two_group_sample-n-float"
    ),
    pytest.param(
        _second(spread=-1.0),
        Refused("second.spread must be nonnegative"),
        id="two_group_sample-spread",
    ),
    pytest.param(
        _pair(correlation=1.5),
        Refused("first.correlation must lie in [-1, 1]"),
        id="two_group_sample-correlation",
    ),
    pytest.param(
        _pair(x_mean=np.nan),
        Refused("first.x_mean must be a finite real number"),
        id="two_group_sample-nan",
    ),
    pytest.param(
        _pair(y_mean=np.inf),
        Refused("first.y_mean must be a finite real number"),
        id="two_group_sample-inf",
    ),
    pytest.param(
        _pair(x_mean="1"), Refused("first.x_mean must be a real number"), id="two_group_sample-str"
    ),
    pytest.param(
        _pair(x_mean=1j), Refused("first.x_mean must be a real number"), id="two_group_sample-cplx"
    ),
    pytest.param(
        _second(spread=1e308),
        Refused("second.x_mean and second.spread are too large"),
        id="two_group_sample-overflow",
    ),
    pytest.param(
        lambda: two_group_sample(_A, _A, seed=-1),
        Refused("seed must be at least 0"),
        id="two_group_sample-seed",
    ),
    pytest.param(
        lambda: two_group_sample(GroupSpec(10, 1e300, 0, 1e299, 0.5), _A)[0][:10].mean(),
        1e300,
        id="two_group_sample-1e300",
    ),
    pytest.param(
        _sweep(np.ma.masked_array([0.0, 1.0], mask=[0, 1])),
        Refused("y_gaps is a masked array"),
        id="offset_sweep-masked",
    ),
    pytest.param(
        _sweep(scipy.sparse.csr_array([[0.0, 1.0]])),
        Refused("y_gaps is a sparse csr_array"),
        id="offset_sweep-sparse",
    ),
    pytest.param(_sweep([1j]), Refused("y_gaps is complex"), id="offset_sweep-complex"),
    pytest.param(
        _sweep(["1.0"]), Refused("y_gaps is an array of strings"), id="offset_sweep-strings"
    ),
    pytest.param(
        _sweep([object()]), Refused("y_gaps is an array of Python objects"), id="offset_sweep-obj"
    ),
    pytest.param(
        _sweep([[1.0], [1.0, 2.0]]), Refused("y_gaps is ragged"), id="offset_sweep-ragged"
    ),
    pytest.param(_sweep([]), Refused("y_gaps is empty"), id="offset_sweep-empty"),
    pytest.param(
        _sweep([[0.0, 1.0]]),
        Refused("expected a scalar or a 1-D array"),
        id="offset_sweep-2d",
    ),
    pytest.param(
        _sweep([0.0, np.nan]),
        Refused("y_gaps contains NaN (first at flat index 1)"),
        id="offset_sweep-nan",
    ),
    pytest.param(
        _sweep([np.inf]), Refused("y_gaps contains an infinite value"), id="offset_sweep-inf"
    ),
    pytest.param(
        _sweep(x_gap=0.0), Refused("x_gap must be finite and nonzero"), id="offset_sweep-x_gap"
    ),
    pytest.param(
        _sweep(spreads=(1.0, 1.0, 1.0)),
        Refused("shares, spreads and within must each have exactly 2 entries"),
        id="offset_sweep-three",
    ),
    pytest.param(
        _sweep(spreads=(1.0, -1.0)),
        Refused("spreads must be nonnegative"),
        id="offset_sweep-negative-spread",
    ),
    pytest.param(
        _sweep(shares=(1.0, 0.0)), Refused("shares must be positive"), id="offset_sweep-share"
    ),
    pytest.param(
        _sweep(within=(0.5, 1.5)),
        Refused("within correlations must lie in [-1, 1]"),
        id="offset_sweep-within",
    ),
    pytest.param(
        _sweep(spreads=(0.0, 0.0), within=(np.nan, np.nan)),
        Refused("the pooled y is constant"),
        id="offset_sweep-constant-y",
    ),
    pytest.param(
        _sweep(1.0), np.array([1.55 / np.sqrt(3.25 * 1.25)]), id="offset_sweep-scalar"
    ),  # (0.8 + 0.75) / sqrt(3.25 * 1.25)
    pytest.param(
        _sweep([3e300], x_gap=3e300, spreads=(1e300, 1e300)),
        np.array([12.2 / 13]),
        id="offset_sweep-1e300",
    ),  # (0.8 + 2.25) / 3.25
    pytest.param(
        lambda: draw_offset_sweep(plt.gca(), [0.0, 1.0], [0.5], 0.0, y_gap=0.0, current=0.5),
        Refused("pooled has shape (1,) but gaps has (2,)"),
        id="draw_offset_sweep-shapes",
    ),
    pytest.param(
        lambda: draw_offset_sweep(plt.gca(), [0.0], [0.5], 0.0, y_gap=np.nan, current=0.5),
        Refused("y_gap must be a finite real number"),
        id="draw_offset_sweep-nan",
    ),
    pytest.param(
        lambda: draw_grouped_scatter(
            plt.gca(), [0, 1, 2, 3], [1, 2, 0, 1], [0, 0, 1, 1], jitter=-1
        ),
        Refused("jitter must be nonnegative"),
        id="draw_grouped_scatter-jitter",
    ),
    pytest.param(
        lambda: draw_grouped_scatter(plt.gca(), [0, 1, 2, np.nan], [1, 2, 0, 1], [0, 0, 1, 1]),
        Refused("x contains NaN"),
        id="draw_grouped_scatter-nan",
    ),
]


@pytest.mark.parametrize(("call", "expected"), BAD_INPUT)
def test_bad_input_table(call, expected):
    try:
        if isinstance(expected, Refused):
            with pytest.raises(ValueError, match=re.escape(expected.fragment)):
                call()
        else:
            np.testing.assert_allclose(call(), expected, rtol=1e-12, atol=0)
    finally:
        plt.close("all")


# --- the state functions and specs ----------------------------------------------


def test_decomposition_state_has_the_slider_moments():
    state = decomposition_state(0.3, 0, 1, 1, 0.9, 3, -2, 0.5, 0.9)
    result = state.result
    assert result.counts.tolist() == [36, 84]
    np.testing.assert_allclose(result.x_means, [0.0, 3.0], atol=1e-12)
    np.testing.assert_allclose(result.y_sds, [1.0, 0.5], atol=1e-12)
    np.testing.assert_allclose(result.within, [0.9, 0.9], atol=1e-12)
    assert result.pooled < 0 < result.within.min()
    assert sum(result.parts()) == pytest.approx(result.pooled, abs=1e-12)
    # Extreme shares keep at least 3 points in each group.
    assert decomposition_state(0.01, 0, 0, 1, 0, 1, 1, 1, 0).result.counts.tolist() == [3, 117]


def test_simpson_state_curve_passes_through_the_shown_sample():
    for y_gap in (-3.0, 0.5, 8.0):
        state = simpson_state(y_gap)
        (on_curve,), zero_gap = offset_sweep([y_gap])
        assert state.result.pooled == pytest.approx(on_curve, abs=1e-12)
        assert state.zero_gap == zero_gap
        assert state.gaps[0] == -8.0 and state.gaps[-1] == 8.0


def test_widget_functions_return_live_widgets_and_refuse_bad_arguments():
    assert isinstance(decomposition_widget(), LiveWidget)
    assert isinstance(simpson_widget(), LiveWidget)
    with pytest.raises(ValueError, match="x_gap must be finite and nonzero"):
        simpson_widget(x_gap=0.0)
    with pytest.raises(ValueError, match="first.n must be at least 3"):
        simpson_spec(n_per_group=2)


def test_html_versions_offer_every_combination_within_the_frame_budget():
    # Each frame costs execution time and page weight (budget: 4 MB per page).
    assert len(DECOMPOSITION.settings()) == len(B_OFFSETS) * 2**4 <= 100
    assert len(SIMPSON.settings()) == 17


def test_static_html_frames_are_what_the_state_function_gives():
    # Every frame of the HTML version (drawn small here), keyed by the controls' value
    # indices, carries the readout of the state function for that setting.
    for spec in (DECOMPOSITION, SIMPSON):
        quick = dataclasses.replace(spec, draw=tiny_figure)
        data = frames_of(static_html(quick))
        assert len(data["frames"]) == len(spec.settings())
        for setting in spec.settings():
            key = ",".join(str(c.values().index(setting[c.name])) for c in spec.controls)
            expected = typeset_minus(spec.readout(spec.state(**setting)))
            assert data["frames"][key]["readout"] == expected
    plt.close("all")


def test_real_frames_draw():
    # The real drawing functions, on a few settings (one slider with two values each,
    # menus at their defaults).
    for spec, name, values in (
        (DECOMPOSITION, "spread_a", (0.5, 1.0)),
        (SIMPSON, "y_gap", (-3.0,)),
    ):
        controls = [
            dataclasses.replace(c, static_values=values if c.name == name else (c.default,))
            if isinstance(c, Slider)
            else dataclasses.replace(c, options=(c.default,))
            for c in spec.controls
        ]
        small = dataclasses.replace(spec, controls=controls)
        data = frames_of(static_html(small))
        assert len(data["images"]) == len(values)
        assert all(image.startswith("data:image/png;base64,") for image in data["images"])
    fig = decomposition_figure([0, 1, 2, 3], [1, 2, 0, 1], ["a", "a", "b", "b"])
    assert [t.get_text() for t in fig.axes[1].get_xticklabels()][-1] == "pooled r"
    plt.close("all")


def test_figures_show_zero_as_zero():
    # A between part of -1e-17 (equal means, to rounding) reads 0.00, not -0.00.
    state = DECOMPOSITION.state(**{**DECOMPOSITION.defaults(), "offset": "equal means"})
    fig, ax = plt.subplots()
    draw_decomposition(ax, state.result)
    assert "-0.00" not in [text.get_text() for text in ax.texts]
    assert "-0.000" not in DECOMPOSITION.readout(state)
    plt.close(fig)


def test_simpson_figure_marks_the_current_offset():
    # The widget's own drawing function: simpson_figure on the state's fields.
    state = simpson_state(-3.0)
    fig = SIMPSON.draw(state)
    dot = fig.axes[1].lines[-1]
    assert dot.get_xdata()[0] == -3.0
    assert dot.get_ydata()[0] == pytest.approx(state.result.pooled)
    plt.close(fig)


# --- chapter 4, "Explore: two groups": each "try this" sentence ------------------

PULL_APART = ["equal means", "(+1, −1)", "(+2, −2)", "(+3, −3): start"]
START_R = {"r_a": 0.8, "r_b": 0.5}


def ch4(offset, spread_a=1.0, spread_b=1.0, r_a=0.8, r_b=0.5):
    return DECOMPOSITION.state(
        offset=offset, spread_a=spread_a, spread_b=spread_b, r_a=r_a, r_b=r_b
    ).result


def test_ch4_every_point_of_every_setting_is_drawn():
    # "The points drawn have exactly those sample moments": all of them, inside the
    # scatter's fixed limits.
    from cosine_book.widgets.correlation import _SCATTER_LIMITS

    (x_low, x_high), (y_low, y_high) = _SCATTER_LIMITS
    for setting in DECOMPOSITION.settings():
        state = DECOMPOSITION.state(**setting)
        assert x_low < state.x.min() and state.x.max() < x_high, setting
        assert y_low < state.y.min() and state.y.max() < y_high, setting


def test_ch4_start_is_two_positive_groups_with_a_negative_pooled_r():
    result = DECOMPOSITION.state(**DECOMPOSITION.defaults()).result
    assert (result.within > 0).all() and result.pooled < 0
    np.testing.assert_allclose(result.x_means, [0.0, 3.0], atol=1e-12)
    np.testing.assert_allclose(result.y_means, [1.5, -1.5], atol=1e-12)
    assert result.counts.tolist() == [60, 60]


def test_ch4_equal_means_leave_the_pooled_r_inside_the_range_of_the_group_rs():
    for spread_a in (0.5, 1.0):
        for spread_b in (0.5, 1.0):
            result = ch4("equal means", spread_a, spread_b)
            within_part, between_part = result.parts()
            assert abs(between_part) < 1e-12
            assert result.within.min() <= result.pooled <= result.within.max()
            assert result.within.min() < result.within.max()  # a real range, not a point
            # Both variables of a group share one spread, so the weights add up to one.
            assert result.within_weights().sum() == pytest.approx(1.0, abs=1e-12)


def test_ch4_pulling_apart_along_a_falling_line_drags_the_pooled_r_below_zero():
    for spread_a in (0.5, 1.0):
        for spread_b in (0.5, 1.0):
            results = [ch4(offset, spread_a, spread_b) for offset in PULL_APART]
            for result in results:
                dx, dy = np.diff(result.x_means)[0], np.diff(result.y_means)[0]
                assert dy == pytest.approx(-dx, abs=1e-12)  # a line of slope -1
                np.testing.assert_allclose(result.within, [0.8, 0.5], atol=1e-12)
            between = [result.parts()[1] for result in results]
            pooled = [result.pooled for result in results]
            assert all(a > b for a, b in zip(between, between[1:], strict=False))
            assert all(a > b for a, b in zip(pooled, pooled[1:], strict=False))
            assert pooled[0] > 0 and pooled[-1] < 0


def test_ch4_smaller_spreads_let_the_between_part_win_sooner():
    wide, narrow = ch4("(+1, −1)"), ch4("(+1, −1)", 0.5, 0.5)
    np.testing.assert_allclose(narrow.x_means, wide.x_means, atol=1e-12)
    assert wide.pooled > 0 > narrow.pooled  # same gap: only the narrow groups flip
    assert narrow.between_shares()[0] > wide.between_shares()[0]
    # "With the starting group r's and the spreads the HTML version offers, shrinking
    # either spread lowers the pooled r at every offset on the falling line ... At (+3, +3)
    # ... shrinking either spread raises it: from 0.892 ... to 0.965": checked on every
    # HTML setting with the starting r's.
    spreads = {c.name: c.static_values for c in DECOMPOSITION.controls if c.name.startswith("s")}
    assert spreads == {"spread_a": (0.5, 1.0), "spread_b": (0.5, 1.0)}
    offsets = {s["offset"] for s in DECOMPOSITION.settings()}
    assert offsets == set(PULL_APART) | {"(+3, +3)"}
    for setting in DECOMPOSITION.settings():
        if (setting["r_a"], setting["r_b"]) != (0.8, 0.5) or setting["offset"] == "equal means":
            continue
        for name in ("spread_a", "spread_b"):
            if setting[name] == 0.5:
                continue
            shrunk = DECOMPOSITION.state(**{**setting, name: 0.5}).result.pooled
            pooled = DECOMPOSITION.state(**setting).result.pooled
            assert (shrunk < pooled) == (setting["offset"] != "(+3, +3)"), (setting, name)
    assert round(ch4("(+3, +3)").pooled, 3) == 0.892
    assert round(ch4("(+3, +3)", 0.5, 0.5).pooled, 3) == 0.965
    # At equal means, shrinking B's raises it.
    for spread_a in (0.5, 1.0):
        assert ch4("equal means", spread_a, 0.5).pooled > ch4("equal means", spread_a, 1.0).pooled


def test_ch4_mirror_image_with_r_minus_one_and_rising_means():
    for spread_a in (0.5, 1.0):
        for spread_b in (0.5, 1.0):
            for offset in PULL_APART:
                result = ch4(offset, spread_a, spread_b, -1.0, -1.0)
                assert result.pooled == pytest.approx(-1.0, abs=1e-12)
            rising = ch4("(+3, +3)", spread_a, spread_b, -1.0, -1.0)
            np.testing.assert_allclose(rising.within, [-1.0, -1.0], atol=1e-12)
            assert rising.parts()[1] > 0 and rising.pooled > 0


# --- chapter 5, "Explore: move one group": each "try this" sentence --------------


def test_ch5_starts_in_a_paradoxical_state():
    result = SIMPSON.state(**SIMPSON.defaults()).result
    np.testing.assert_allclose(result.within, [0.8, 0.8], atol=1e-12)
    assert round(result.pooled, 2) == -0.45  # as the text says
    assert SIMPSON.defaults() == {"y_gap": -3.0}  # "three units below A"


def test_ch5_pooled_r_changes_sign_at_the_dashed_line_while_group_slopes_stay():
    states = offered(SIMPSON, "y_gap")
    zero_gap = states[0][1].zero_gap
    assert zero_gap == pytest.approx(-16 / 15, rel=1e-12)
    below = [value for value, _ in states if value < zero_gap]
    above = [value for value, _ in states if value > zero_gap]
    assert below and above  # offered on both sides of the dashed line
    for value, state in states:
        result = state.result
        assert (result.pooled > 0) == (value > zero_gap)
        if value <= zero_gap - 2:
            assert result.pooled < -0.4  # clearly negative below the line
        # Group lines keep their slope r * s_y / s_x = 0.8.
        np.testing.assert_allclose(result.within * result.y_sds / result.x_sds, 0.8, atol=1e-12)
    # Moving B up from the start raises the pooled r, through zero, to clearly positive.
    rising = [state.result.pooled for value, state in states if -8 <= value <= 2]
    assert all(a < b for a, b in zip(rising, rising[1:], strict=False))
    assert rising[-1] > 0.8


def test_ch5_pooled_r_overshoots_then_falls_back_instead_of_reaching_one():
    # "Upwards the pooled r overshoots: it peaks at 0.943 ... then falls back slowly (0.915
    # at +8); downwards it grows in magnitude (-0.70 at -8). Both ends tend to +-0.83"
    states = offered(SIMPSON, "y_gap")
    pooled = {value: state.result.pooled for value, state in states}
    assert max(abs(r) for r in pooled.values()) < 0.95
    top = max(pooled, key=pooled.get)
    assert top == 4.0 and round(pooled[top], 3) == 0.943  # the slider's stop nearest +3.75
    falling = [pooled[v] for v in sorted(pooled) if v >= top]
    assert all(a > b for a, b in zip(falling, falling[1:], strict=False))
    assert round(pooled[8.0], 3) == 0.915 and round(pooled[-8.0], 2) == -0.70
    rising = [pooled[v] for v in sorted(pooled) if v <= top]
    assert all(a < b for a, b in zip(rising, rising[1:], strict=False))
    # The limits, as B moves arbitrarily far: sqrt(p1 p2) dx / sqrt(W + p1 p2 dx^2) < 1.
    far, _ = offset_sweep([-1e9, 1e9])
    np.testing.assert_allclose(far, [-1.5 / np.sqrt(3.25), 1.5 / np.sqrt(3.25)], atol=1e-8)
    assert round(1.5 / np.sqrt(3.25), 2) == 0.83


def test_ch5_non_collapsible_at_offset_zero_and_above_both_from_plus_two():
    # "At offset 0 ... the between covariance is exactly zero, yet the pooled r is about
    # 0.44"; "at every offset above about +1.15 (on the slider, +2 and above) the pooled r
    # lies above both group r's"
    for value, state in offered(SIMPSON, "y_gap"):
        result = state.result
        if value == 0:
            assert result.between_covariance == pytest.approx(0.0, abs=1e-12)
            assert round(result.pooled, 2) == 0.44
        assert (result.pooled > result.within.max()) == (value >= 2)


def test_ch4_shrinking_a_spread_is_not_a_general_rule_on_the_live_sliders():
    # "at (+1, -1) with A's spread at 2, shrinking B's spread from 1 to 0.5 raises it a
    # little"; "At equal means, shrinking B's spread raises the pooled r" (every spread
    # the live slider offers)
    spread = next(c for c in DECOMPOSITION.controls if c.name == "spread_b")
    assert spread.minimum <= 0.5 and spread.maximum >= 2.0
    assert ch4("(+1, −1)", 2.0, 0.5).pooled > ch4("(+1, −1)", 2.0, 1.0).pooled
    values = np.arange(0.1, 3.0 + 1e-9, 0.35)
    for spread_a in values:
        pooled = [ch4("equal means", spread_a, b).pooled for b in values]
        assert all(a > b for a, b in zip(pooled, pooled[1:], strict=False))
