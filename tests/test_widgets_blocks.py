"""Tests for the widgets of chapters 2 and 3, and chapter 3's bounds at fixed rho.

The widgets show vectors built by blocks_with and measured by block_cosines. Each "try
this" sentence of the chapters is checked on every setting the HTML version offers (and,
where the sentence says "in general", on a grid). Chapter 3's theorems at fixed rho
(attainment, sign-free forms) are checked on the sweep of profiles_with_cosine;
test_bounds_theorems.py checks the others.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cosine_book.similarity import (
    block_cosines,
    blocks_with,
    cosine,
    profiles_with_cosine,
    random_block_pair,
)
from cosine_book.widgets import bounds_widget, two_block_widget
from cosine_book.widgets.core import kernel_widget, typeset_minus

TWO_BLOCKS = two_block_widget().spec
BOUNDS = bounds_widget().spec
PROFILES = BOUNDS.controls[0].options
# The menu's labels say the local cosines: "0.9, 0.5, −0.3".
LOCAL_SETS = {
    label: tuple(float(c.replace("−", "-")) for c in label.split(", "))
    for label in BOUNDS.controls[1].options
}
START = BOUNDS.defaults()["profiles"]

norm = st.floats(0.01, 100.0)
local_cosine = st.floats(-1.0, 1.0)
n_blocks = st.integers(1, 5)


@st.composite
def profiles_and_cosines(draw):
    n = draw(n_blocks)
    x = draw(st.lists(norm, min_size=n, max_size=n))
    y = draw(st.lists(norm, min_size=n, max_size=n))
    c = draw(st.lists(local_cosine, min_size=n, max_size=n))
    return np.array(x), np.array(y), np.array(c)


def measured(x_norms, y_norms, local):
    """Vectors built with these norms and local cosines, measured (what the widgets show)."""
    return block_cosines(*blocks_with(local, x_norms, y_norms))


def every(spec, **fixed):
    """Every setting the HTML version offers with the ``fixed`` controls, and its state."""
    for setting in spec.settings():
        if all(setting[name] == value for name, value in fixed.items()):
            yield setting, spec.state(**setting)


# ----------------------------------------------------------------- the two widgets


def test_html_version_offers_every_combination_within_the_frame_budget():
    # Each frame costs execution time and page weight (budget: 4 MB per page).
    assert len(TWO_BLOCKS.settings()) == 3 * 3 * 3 * 3 <= 90
    assert len(BOUNDS.settings()) == len(PROFILES) * len(LOCAL_SETS) <= 100
    assert BOUNDS.defaults() == {"profiles": PROFILES[0], "local": "0.9, 0.5, −0.3"}


def test_ch2_sliders_offer_evenly_spaced_values():
    for control in TWO_BLOCKS.controls:
        values = np.array(control.values())
        assert values.size >= 3, control.name
        np.testing.assert_allclose(np.diff(values), values[1] - values[0], atol=1e-12)


@pytest.mark.parametrize("spec", [TWO_BLOCKS, BOUNDS], ids=["chapter 2", "chapter 3"])
def test_kernel_version_follows_every_control(spec):
    # Move each control to another value: the readout becomes that of the new setting.
    box = kernel_widget(spec)
    output, values = box.children[-1], spec.defaults()
    for control, widget in zip(spec.controls, box.children[1].children, strict=True):
        before = output.outputs[-1]["text"]
        other = next(v for v in control.values()[::-1] if v != values[control.name])
        widget.value = values[control.name] = other
        expected = typeset_minus(spec.readout(spec.state(**values)))
        assert output.outputs[-1]["text"] == expected + "\n" != before, control.name


# ------------------------------------------------ chapter 2, "Explore: two blocks"


def test_ch2_fixing_two_norms_at_one_loses_nothing():
    # Scaling a whole vector changes no cosine: (x1, x2) = (a, b) gives what (a/b, 1) gives.
    a, b, c, d = 0.3, 1.7, 2.2, 0.9
    scaled = TWO_BLOCKS.state(x1=a / b, y2=d / c, c1=0.4, c2=-0.2)
    free = measured([a, b], [c, d], [0.4, -0.2])
    assert scaled.global_cosine == pytest.approx(free.global_cosine, abs=1e-12)
    np.testing.assert_allclose(scaled.weights, free.weights, atol=1e-12)


def test_ch2_raising_x1_raises_the_global_cosine_while_locals_stay():
    # d/dx1 of the global cosine has the sign of c1 - x1 y2 c2: at y2 = 0.2 and c1 >= 0.5
    # (every offered c1) it climbs for every c2; at larger y2 it can fall.
    c1_values, c2_values = TWO_BLOCKS.controls[2].values(), TWO_BLOCKS.controls[3].values()
    for c1 in c1_values:
        for c2 in c2_values:
            states = sorted(
                (s for _, s in every(TWO_BLOCKS, y2=0.2, c1=c1, c2=c2)),
                key=lambda s: s.x_norms[0],
            )
            assert len(states) == 3
            globals_ = [s.global_cosine for s in states]
            assert all(a < b for a, b in zip(globals_, globals_[1:], strict=False)), (c1, c2)
            for state in states:
                np.testing.assert_allclose(state.local, [c1, c2], atol=1e-12)
    falls = sorted(
        (s.x_norms[0], s.global_cosine) for _, s in every(TWO_BLOCKS, y2=1.0, c1=0.5, c2=0.9)
    )
    assert falls[-1][1] < falls[-2][1]  # past x1 = c1 / (y2 c2) = 0.56 it falls (0.7 to 1.2)


def test_ch2_equal_local_cosines_shrink_the_interval_to_a_point():
    settings_seen = 0
    for _setting, state in every(TWO_BLOCKS, c1=0.9, c2=0.9):
        lower, upper = state.bounds()
        assert upper - lower < 1e-12 and state.global_cosine == pytest.approx(lower, abs=1e-12)
        settings_seen += 1
    assert settings_seen == 3 * 3


def test_ch2_start_is_the_limit_construction_and_the_sign_follows_c1_plus_c2():
    start = TWO_BLOCKS.defaults()
    assert (start["x1"], start["y2"], start["c1"], start["c2"]) == (0.2, 0.2, 0.9, 0.0)
    eps = 0.2
    state = TWO_BLOCKS.state(**start)
    # eq-ch2-limit with c1 != c2.
    assert state.global_cosine == pytest.approx(eps * (0.9 + 0.0) / (1 + eps**2), abs=1e-12)
    np.testing.assert_allclose(state.weights, [0.2 / 1.04] * 2, rtol=1e-12)
    assert round(0.2 / 1.04, 3) == 0.192
    seen = 0
    for setting, s in every(TWO_BLOCKS, x1=start["x1"], y2=start["y2"]):
        c1, c2 = setting["c1"], setting["c2"]
        assert s.global_cosine == pytest.approx(0.2 / 1.04 * (c1 + c2), abs=1e-12)
        # "with c2 = -0.9 it is zero at c1 = 0.9 and negative for smaller c1"
        if c2 == -0.9:
            if c1 == 0.9:
                assert abs(s.global_cosine) < 1e-12
            else:
                assert s.global_cosine < 0
        seen += 1
    assert seen == 9


def test_ch2_sentences_hold_in_general_on_a_grid():
    # "In general the global cosine rises with ||x1|| exactly while c1 > ||x1|| ||y2|| c2";
    # "set c2 equal to c1: the interval shrinks to a point, whatever the norms".
    norms, cosines = np.linspace(0.0, 2.0, 6), np.linspace(-1.0, 1.0, 9)
    h = 1e-6
    for x1 in norms[1:]:
        for y2 in norms:
            for c1 in cosines:
                for c2 in cosines:
                    up = TWO_BLOCKS.state(x1=x1 + h, y2=y2, c1=c1, c2=c2).global_cosine
                    down = TWO_BLOCKS.state(x1=x1 - h, y2=y2, c1=c1, c2=c2).global_cosine
                    slope = c1 - x1 * y2 * c2
                    if abs(slope) > 1e-3:
                        assert (up > down) == (slope > 0), (x1, y2, c1, c2)
                lower, upper = TWO_BLOCKS.state(x1=x1, y2=y2, c1=c1, c2=c1).bounds()
                assert upper - lower < 1e-12


# --------------------------------------- chapter 3, "Explore: move the norm profiles"


def test_ch3_norms_move_the_interval_not_the_ticks():
    # The interval is the ticks' range scaled by rho: it contains zero only when the
    # ticks have both signs, and it moves as the norms change while the ticks stay.
    for label, local in LOCAL_SETS.items():
        intervals = set()
        for _setting, state in every(BOUNDS, local=label):
            defined = state.local[~np.isnan(state.local)]
            assert set(np.round(defined, 12)) <= set(local)
            lower, upper = state.bounds()
            rho = state.profile_cosine
            assert (lower, upper) == pytest.approx((rho * defined.min(), rho * defined.max()))
            assert (lower <= 0 <= upper) == (defined.min() <= 0 <= defined.max())
            intervals.add((round(lower, 9), round(upper, 9)))
        assert len(intervals) == len(PROFILES)


def test_ch3_block_2_empty_drops_its_block():
    for _setting, state in every(BOUNDS, profiles="block 2 empty"):
        assert np.isnan(state.local[1]) and state.weights[1] == 0


def test_ch3_equal_norms_give_rho_one_and_the_full_range_of_the_ticks():
    for label, local in LOCAL_SETS.items():
        state = BOUNDS.state("equal norms", label)
        assert state.profile_cosine == pytest.approx(1.0, abs=1e-12)
        assert state.bounds() == pytest.approx((min(local), max(local)), abs=1e-12)


def test_ch3_lengths_in_different_blocks_collapse_the_interval():
    for label, local in LOCAL_SETS.items():
        lower, upper = BOUNDS.state("x in block 1, y in block 3", label).bounds()
        start_lower, start_upper = BOUNDS.state(START, label).bounds()
        assert abs(lower) < 0.1 and abs(upper) < 0.1
        if min(local) < max(local):
            assert upper - lower < 0.2 * (start_upper - start_lower)


def test_ch3_all_negative_global_stays_above_rho_cmin_but_below_cmax():
    # The corollary: global >= rho * c_min. It does not beat every local cosine
    # (that needs rho * c_min >= c_max): with the starting norms it lies below -0.3.
    state = BOUNDS.state(START, "−0.9, −0.5, −0.3")
    assert state.global_cosine >= state.profile_cosine * state.local.min() - 1e-12
    assert state.global_cosine < state.local.max()


def test_ch3_all_negative_with_starting_norms_has_rho_above_one_third():
    # "The bounds guarantee that it beats them all only when rho c_min >= c_max, here
    # when rho <= 1/3": with the starting norms rho is above 1/3, and the global cosine
    # does not beat -0.3.
    state = BOUNDS.state(START, "−0.9, −0.5, −0.3")
    c_min, c_max = state.local.min(), state.local.max()
    assert (c_min, c_max) == pytest.approx((-0.9, -0.3), abs=1e-12)
    assert state.profile_cosine > 1 / 3
    assert state.profile_cosine * c_min < c_max
    assert state.global_cosine < c_max


def test_ch3_all_negative_lengths_apart_beats_every_local_cosine():
    state = BOUNDS.state("x in block 1, y in block 3", "−0.9, −0.5, −0.3")
    lower, upper = state.bounds()
    assert state.profile_cosine == pytest.approx(0.1, abs=0.005)  # "about 0.1"
    assert state.profile_cosine <= 1 / 3
    assert lower >= state.local.max()  # the whole interval lies above -0.3
    assert state.global_cosine > state.local.max()


# ------------------------------------------ chapter 3's theorems at fixed rho


@settings(max_examples=60, deadline=None)
@given(
    st.floats(0.0, 1.0),
    st.floats(0.0, 1.0),
    st.integers(2, 6),
    st.floats(0.0, 0.1),
)
def test_profiles_have_the_requested_cosine(rho, share, n, epsilon):
    m = n - 2
    if rho * (1 + m * epsilon**2) < m * epsilon**2:
        with pytest.raises(ValueError, match="epsilon"):
            profiles_with_cosine(rho, share, n, epsilon)
        return
    x_norms, y_norms = profiles_with_cosine(rho, share, n, epsilon)
    assert x_norms.shape == y_norms.shape == (n,)
    assert (x_norms >= 0).all() and (y_norms >= 0).all()
    if y_norms.any() and x_norms.any():
        assert cosine(x_norms, y_norms) == pytest.approx(rho, abs=1e-9)


@pytest.mark.parametrize("local", [[0.9, -0.4], [0.2, 0.7], [-0.9, -0.1]])
@pytest.mark.parametrize("rho", [0.05, 0.6, 1.0])
def test_sweep_approaches_both_ends_and_stays_inside(local, rho):
    # Chapter 3, thm-ch3-attainment: for fixed rho and local cosines the sweep fills
    # the open interval, and its ends are approached.
    lower, upper = rho * min(local), rho * max(local)
    values = []
    for share in np.linspace(0.0, 1.0, 401)[1:-1]:
        x_norms, y_norms = profiles_with_cosine(rho, share)
        assert (x_norms > 0).all() and (y_norms > 0).all()
        s = measured(x_norms, y_norms, local)
        assert s.profile_cosine == pytest.approx(rho, abs=1e-9)
        assert lower - 1e-12 <= s.global_cosine <= upper + 1e-12
        values.append(s.global_cosine)
    width = upper - lower
    assert min(values) - lower < 0.01 * width
    assert upper - max(values) < 0.01 * width
    # Strictly inside when the local cosines differ.
    assert lower < min(values) and max(values) < upper


def test_profiles_edge_cases_match_the_docstring():
    # rho = 0: no sweep, the profiles (0, 1) and (1, 0) for every share.
    for share in (0.0, 0.5, 1.0):
        x_norms, y_norms = profiles_with_cosine(0.0, share)
        np.testing.assert_array_equal(x_norms, [0.0, 1.0])
        np.testing.assert_array_equal(y_norms, [1.0, 0.0])
    # Tiny rho and tiny epsilon are kept, not rounded to zero.
    for rho in (1e-17, 1e-200):
        x_norms, y_norms = profiles_with_cosine(rho, 0.5)
        assert (x_norms > 0).all() and (y_norms > 0).all()
        assert cosine(x_norms, y_norms) == pytest.approx(rho, rel=1e-12)
    x_norms, y_norms = profiles_with_cosine(0.5, 0.5, 4, 1e-17)
    np.testing.assert_array_equal(x_norms[2:], [1e-17, 1e-17])
    np.testing.assert_array_equal(y_norms[2:], [1e-17, 1e-17])
    # Ends of the sweep: block 1's weight is exactly rho at share 0 and 0 at share 1.
    for rho in (0.3, 1.0):
        start, end = profiles_with_cosine(rho, 0.0), profiles_with_cosine(rho, 1.0)
        assert start[0][0] * start[1][0] == pytest.approx(rho, rel=1e-15)
        assert start[1][1] == 0.0 and end[0][0] == 0.0


def test_profiles_reject_out_of_range_arguments():
    for args in [(-0.1, 0.5), (1.1, 0.5), (0.5, -0.1), (0.5, 1.1)]:
        with pytest.raises(ValueError, match="must lie in"):
            profiles_with_cosine(*args)
    with pytest.raises(ValueError, match="n_blocks"):
        profiles_with_cosine(0.5, 0.5, n_blocks=1)


def test_random_block_pair_is_reproducible_and_well_formed():
    a = random_block_pair(np.random.default_rng(7), max_blocks=5, min_blocks=2)
    b = random_block_pair(np.random.default_rng(7), max_blocks=5, min_blocks=2)
    assert 2 <= len(a[0]) <= 5
    for (xa, ya), (xb, yb) in zip(zip(*a, strict=True), zip(*b, strict=True), strict=True):
        np.testing.assert_array_equal(xa, xb)
        np.testing.assert_array_equal(ya, yb)
        assert xa.shape == ya.shape
    with pytest.raises(ValueError, match="min_blocks"):
        random_block_pair(np.random.default_rng(0), max_blocks=3, min_blocks=4)
    with pytest.raises(ValueError, match="at least 1"):
        random_block_pair(np.random.default_rng(0), max_size=0)


@settings(max_examples=40, deadline=None)
@given(
    st.floats(-1.0, 1.0),
    st.floats(-1.0, 1.0),
    st.floats(0.05, 1.0),
    st.floats(0.01, 0.99),
)
def test_every_inner_value_is_attained_with_positive_norms(c1, c2, rho, fraction):
    # Chapter 3, thm-ch3-attainment part 2 (two blocks): bisect the sweep for a target.
    if abs(c1 - c2) < 1e-3:
        return
    lower, upper = rho * min(c1, c2), rho * max(c1, c2)
    target = lower + fraction * (upper - lower)

    def global_at(share):
        return measured(*profiles_with_cosine(rho, share), [c1, c2]).global_cosine

    # The weight of block 1 falls monotonically with share, so bisection applies.
    sign = 1.0 if c1 > c2 else -1.0
    low_share, high_share = 0.0, 1.0
    for _ in range(60):
        middle = (low_share + high_share) / 2
        if sign * (global_at(middle) - target) > 0:
            low_share = middle
        else:
            high_share = middle
    share = (low_share + high_share) / 2
    x_norms, y_norms = profiles_with_cosine(rho, share)
    assert (x_norms > 0).all() and (y_norms > 0).all()
    s = measured(x_norms, y_norms, [c1, c2])
    assert s.profile_cosine == pytest.approx(rho, abs=1e-9)
    assert s.global_cosine == pytest.approx(target, abs=1e-9)


@settings(max_examples=60, deadline=None)
@given(profiles_and_cosines())
def test_sign_free_forms_of_the_bounds(data):
    # Chapter 3, thm-ch3-sign-free: max c >= 0 gives global <= max c; min c <= 0 gives
    # global >= min c. With all c < 0 the upper end rho * max c lies above max c.
    x_norms, y_norms, local = data
    s = measured(x_norms, y_norms, local)
    if local.max() >= 0:
        assert s.global_cosine <= local.max() + 1e-12
    if local.min() <= 0:
        assert s.global_cosine >= local.min() - 1e-12
    if local.max() < 0:
        assert s.bounds()[1] >= local.max() - 1e-12


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.floats(-1.0, -0.01), min_size=2, max_size=4),
    st.floats(0.01, 1.0),
    st.floats(0.0, 1.0),
)
def test_beating_every_negative_local_cosine_is_guaranteed_only_when_rho_cmin_ge_cmax(
    local, rho, share
):
    # Sufficient: rho c_min >= c_max puts the whole interval, hence the global cosine,
    # at or above c_max. Otherwise some pair with these local cosines and this rho
    # falls below c_max (the sweep's end near rho c_min, thm-ch3-attainment).
    c_min, c_max = min(local), max(local)
    s = measured(*profiles_with_cosine(rho, share, len(local)), local)
    rho_measured = s.profile_cosine
    if rho_measured * c_min >= c_max + 1e-9:
        assert s.global_cosine >= c_max - 1e-12
    if rho * c_min < c_max - 1e-6:
        # (Then c_min < c_max: with equal negative cosines rho c >= c.) Put the block
        # with c_min first and c_max second; near share 0 the weight sits on block 1.
        order = np.argsort(local, kind="stable")
        arranged = [local[order[0]], local[order[-1]], *np.delete(local, order[[0, -1]])]
        worst = measured(*profiles_with_cosine(rho, 1e-9, len(local)), arranged)
        assert worst.global_cosine < c_max


# Chapter 2, "Explore: two blocks": each "try this" sentence, on every setting the HTML
# version offers.
