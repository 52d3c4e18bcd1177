"""The widgets of chapters 4 and 5 (cosine_book.widgets.correlation): each "try this"
sentence of the chapters is checked on every setting the HTML version (and the live one)
offers that the sentence covers."""

from __future__ import annotations

import dataclasses
import json
import re

import matplotlib.pyplot as plt
import numpy as np
import pytest

from cosine_book.correlation import pooled_correlation
from cosine_book.plotting.correlation import draw_decomposition
from cosine_book.widgets import decomposition_widget, simpson_widget
from cosine_book.widgets.core import LiveWidget, Slider, static_html, typeset_minus
from cosine_book.widgets.correlation import B_OFFSETS, DECOMPOSITION, SIMPSON


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


# --- the state functions and specs ----------------------------------------------


def test_decomposition_state_has_the_slider_moments():
    state = DECOMPOSITION.state("(+3, −3): start", 1.0, 0.5, 0.8, -1.0)
    result = state.result
    assert result.counts.tolist() == [60, 60]
    np.testing.assert_allclose(result.x_means, [0.0, 3.0], atol=1e-12)
    np.testing.assert_allclose(result.y_means, [1.5, -1.5], atol=1e-12)
    np.testing.assert_allclose(result.y_sds, [1.0, 0.5], atol=1e-12)
    np.testing.assert_allclose(result.within, [0.8, -1.0], atol=1e-12)
    assert sum(result.parts()) == pytest.approx(result.pooled, abs=1e-12)


def test_simpson_state_curve_passes_through_the_shown_sample():
    for y_gap in (-3.0, 0.5, 8.0):
        state = SIMPSON.state(y_gap)
        on_curve = pooled_correlation([1, 1], [0, 3], [0, y_gap], [1, 1], [1, 1], [0.8, 0.8])
        assert state.groups.result.pooled == pytest.approx(on_curve, abs=1e-12)
        assert state.zero_gap == pytest.approx(-16 / 15, rel=1e-12)
        assert len(state.pooled) == 401


def test_widget_functions_return_live_widgets():
    assert isinstance(decomposition_widget(), LiveWidget)
    assert isinstance(simpson_widget(), LiveWidget)


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
    fig = DECOMPOSITION.draw(DECOMPOSITION.state(**DECOMPOSITION.defaults()))
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
    state = SIMPSON.state(-3.0)
    fig = SIMPSON.draw(state)
    dot = fig.axes[1].lines[-1]
    assert dot.get_xdata()[0] == -3.0
    assert dot.get_ydata()[0] == pytest.approx(state.groups.result.pooled)
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
    (x_low, x_high), (y_low, y_high) = (-5.0, 8.0), (-6.0, 9.0)  # the scatter's fixed axes
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
    assert narrow.between_shares[0] > wide.between_shares[0]
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
    result = SIMPSON.state(**SIMPSON.defaults()).groups.result
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
        result = state.groups.result
        assert (result.pooled > 0) == (value > zero_gap)
        if value <= zero_gap - 2:
            assert result.pooled < -0.4  # clearly negative below the line
        # Group lines keep their slope r * s_y / s_x = 0.8.
        np.testing.assert_allclose(result.within * result.y_sds / result.x_sds, 0.8, atol=1e-12)
    # Moving B up from the start raises the pooled r, through zero, to clearly positive.
    rising = [state.groups.result.pooled for value, state in states if -8 <= value <= 2]
    assert all(a < b for a, b in zip(rising, rising[1:], strict=False))
    assert rising[-1] > 0.8


def test_ch5_pooled_r_overshoots_then_falls_back_instead_of_reaching_one():
    # "Upwards the pooled r overshoots: it peaks at 0.943 ... then falls back slowly (0.915
    # at +8); downwards it grows in magnitude (-0.70 at -8)", on the slider's stops (the
    # limits +-0.83 are checked in test_chapter5_claims)
    states = offered(SIMPSON, "y_gap")
    pooled = {value: state.groups.result.pooled for value, state in states}
    assert max(abs(r) for r in pooled.values()) < 0.95
    top = max(pooled, key=pooled.get)
    assert top == 4.0 and round(pooled[top], 3) == 0.943  # the slider's stop nearest +3.75
    falling = [pooled[v] for v in sorted(pooled) if v >= top]
    assert all(a > b for a, b in zip(falling, falling[1:], strict=False))
    assert round(pooled[8.0], 3) == 0.915 and round(pooled[-8.0], 2) == -0.70
    rising = [pooled[v] for v in sorted(pooled) if v <= top]
    assert all(a < b for a, b in zip(rising, rising[1:], strict=False))


def test_ch5_non_collapsible_at_offset_zero_and_above_both_from_plus_two():
    # "At offset 0 ... the between covariance is exactly zero, yet the pooled r is about
    # 0.44"; "at every offset above about +1.15 (on the slider, +2 and above) the pooled r
    # lies above both group r's"
    for value, state in offered(SIMPSON, "y_gap"):
        result = state.groups.result
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
