"""cosine_book.correlation: the theorems of chapters 4 and 5 as property tests, bad input."""

from __future__ import annotations

import re
from typing import NamedTuple

import numpy as np
import pandas as pd
import pytest
import scipy.sparse
import statsmodels.formula.api as smf
from bad_inputs import masked
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from cosine_book.correlation import (
    centered_block_cosines,
    grouped_correlation,
    pearson,
    pooled_correlation,
    sample_with_moments,
    zero_crossing_gap,
)
from cosine_book.similarity import cosine

SETTINGS = settings(max_examples=60, deadline=None)


def grouped_data(seed: int, n_groups: int):
    """Random grouped data: group offsets, spreads and slopes all differ."""
    rng = np.random.default_rng(seed)
    x_parts, y_parts, labels = [], [], []
    for g, size in enumerate(rng.integers(3, 12, size=n_groups)):
        x = rng.normal(rng.normal(0, 3), rng.uniform(0.2, 2), size)
        y = rng.normal(0, 1) * x + rng.normal(rng.normal(0, 3), rng.uniform(0.2, 2), size)
        x_parts.append(x)
        y_parts.append(y)
        labels += [g] * size
    return np.concatenate(x_parts), np.concatenate(y_parts), np.array(labels)


# --- chapter 4: Pearson's r is a centred cosine --------------------------------------


@SETTINGS
@given(seed=st.integers(0, 10_000), n=st.integers(3, 40), scale=st.sampled_from([1.0, 1e300]))
def test_pearson_is_the_cosine_of_the_centred_vectors(seed, n, scale):
    # thm-ch4-centred-cosine; 1e300 as in chapter 4's first cell
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    y = rng.normal(size=n) + rng.normal() * x
    r = pearson(scale * x, y)
    assert r == pytest.approx(cosine(x - x.mean(), y - y.mean()), abs=1e-12)
    assert r == pytest.approx(stats.pearsonr(x, y).statistic, abs=1e-12)
    assert pearson(x, x) == 1.0 and pearson(x, -2 * x) == -1.0


@SETTINGS
@given(
    seed=st.integers(0, 10_000),
    shifts=st.tuples(st.floats(-1e6, 1e6), st.floats(-1e6, 1e6)),
    scales=st.tuples(st.floats(1e-3, 1e3), st.floats(1e-3, 1e3)),
)
def test_pearson_ignores_shifts_and_positive_scales(seed, shifts, scales):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=20)
    y = rng.normal(size=20) + x
    moved = pearson(scales[0] * x + shifts[0], scales[1] * y + shifts[1])
    assert moved == pytest.approx(pearson(x, y), abs=1e-6)


@SETTINGS
@given(seed=st.integers(0, 10_000), shift=st.floats(-20, 20), n=st.integers(3, 30))
def test_raw_cosine_from_means_spreads_and_r(seed, shift, n):
    # prop-ch4-raw-cosine
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n) + shift
    y = rng.normal(size=n) - 0.5 * x + rng.normal()
    mx, my, sx, sy, r = x.mean(), y.mean(), x.std(), y.std(), pearson(x, y)
    formula = (mx * my + r * sx * sy) / np.sqrt((mx**2 + sx**2) * (my**2 + sy**2))
    assert formula == pytest.approx(cosine(x, y), abs=1e-9)


# --- chapter 4: the decomposition of the pooled r --------------------------------------


@SETTINGS
@given(seed=st.integers(0, 10_000), n_groups=st.integers(1, 5))
def test_decomposition_of_the_pooled_correlation(seed, n_groups):
    # thm-ch4-pooled-decomposition (i)-(iii) and cor-ch4-range
    x, y, groups = grouped_data(seed, n_groups)
    result = grouped_correlation(x, y, groups)
    total = np.cov(x, y, ddof=0)[0, 1]
    assert result.within_covariance + result.between_covariance == pytest.approx(total, abs=1e-9)
    assert result.pooled == pytest.approx(np.corrcoef(x, y)[0, 1], abs=1e-12)
    own_x, own_y = np.zeros_like(x), np.zeros_like(y)
    for g, label in enumerate(result.labels):
        member = groups == label
        own_x[member], own_y[member] = x[member].mean(), y[member].mean()
        r_g = np.corrcoef(x[member], y[member])[0, 1]
        assert result.within[g] == pytest.approx(r_g, abs=1e-12)
        assert result.x_sds[g] == pytest.approx(x[member].std(), abs=1e-12)
        assert result.y_means[g] == pytest.approx(y[member].mean(), abs=1e-12)
        assert result.shares[g] == pytest.approx(member.mean())
    summaries = (result.x_means, result.y_means, result.x_sds, result.y_sds, result.within)
    assert pooled_correlation(result.counts, *summaries) == pytest.approx(result.pooled, abs=1e-10)
    weights = result.within_weights()
    assert np.sum(weights * result.within) == pytest.approx(result.pooled_within, abs=1e-10)
    partial = np.corrcoef(x - own_x, y - own_y)[0, 1]
    assert result.pooled_within == pytest.approx(partial, abs=1e-10)
    assert sum(result.parts()) == pytest.approx(result.pooled, abs=1e-10)
    a_w, a_b = result.within_factor, result.between_factor
    assert a_w + a_b <= 1 + 1e-12 and np.sum(weights) <= 1 + 1e-12
    eta_x, eta_y = result.between_shares
    assert eta_x == pytest.approx(np.var(own_x) / np.var(x), abs=1e-10)
    assert a_b == pytest.approx(np.sqrt(eta_x * eta_y), abs=1e-12)
    rho = np.sum(weights)
    low, high = a_w * rho * result.within.min() - a_b, a_w * rho * result.within.max() + a_b
    assert low - 1e-12 <= result.pooled <= high + 1e-12


@SETTINGS
@given(seed=st.integers(0, 10_000), n_groups=st.integers(1, 5))
def test_blocks_centred_at_the_pooled_mean(seed, n_groups):
    # eq-ch4-pooled-centred-block: the local cosines, and their sum is the pooled r
    x, y, groups = grouped_data(seed, n_groups)
    result = grouped_correlation(x, y, groups)
    blocks = centered_block_cosines(x, y, groups)
    assert blocks.global_cosine == pytest.approx(result.pooled, abs=1e-12)
    assert np.sum(blocks.weights * blocks.local) == pytest.approx(result.pooled, abs=1e-12)
    dx, dy = result.x_means - x.mean(), result.y_means - y.mean()
    sx, sy, r = result.x_sds, result.y_sds, result.within
    formula = (dx * dy + r * sx * sy) / np.sqrt((dx**2 + sx**2) * (dy**2 + sy**2))
    np.testing.assert_allclose(blocks.local, formula, atol=1e-10)


def test_groups_without_spread_enter_only_the_between_part():
    # def-ch4-groups: r_g is undefined where a spread is 0; a single observation is such a group
    x = [0.7, 0.7, 0.7, 1.0, 2.0, 4.0, 5.0]
    y = [1.0, 5.0, 2.0, 2.0, 1.0, 3.0, 0.0]
    result = grouped_correlation(x, y, [0, 0, 0, 1, 1, 1, 2])
    assert np.isnan(result.within[[0, 2]]).all() and result.x_sds[0] == result.x_sds[2] == 0.0
    assert result.within_weights().tolist()[0::2] == [0.0, 0.0]
    assert result.pooled == pytest.approx(stats.pearsonr(x, y).statistic, abs=1e-12)
    weighted = np.nansum(result.within_weights() * result.within)
    assert result.pooled_within == pytest.approx(weighted, abs=1e-12)
    assert sum(result.parts()) == pytest.approx(result.pooled, abs=1e-12)
    summaries = (result.x_means, result.y_means, result.x_sds, result.y_sds, result.within)
    assert pooled_correlation(result.counts, *summaries) == pytest.approx(result.pooled)
    flat = grouped_correlation([0, 0, 1, 1, 3, 3], [1, 2, 2, 4, 3, 5], [0, 0, 1, 1, 2, 2])
    assert flat.within_factor == pytest.approx(0.0) and flat.within_weights().sum() == 0.0
    assert flat.between_factor * flat.between == pytest.approx(flat.pooled)


@SETTINGS
@given(seed=st.integers(0, 10_000), n_groups=st.integers(1, 4))
def test_pooled_within_interval_is_fisher_z_of_the_partial_r(seed, n_groups):
    # chapter 5's interval: pooled_within is the partial r given the group indicators
    x, y, groups = grouped_data(seed, n_groups)
    result = grouped_correlation(x, y, groups)
    if x.size - n_groups - 2 < 1:
        with pytest.raises(ValueError, match="the interval needs N - G - 2 >= 1"):
            result.pooled_within_interval()
        return
    frame = pd.DataFrame({"x": x, "y": y, "g": groups})
    fit = smf.ols("y ~ x + C(g)", frame).fit()
    t = fit.tvalues["x"]
    assert result.pooled_within == pytest.approx(t / np.sqrt(t * t + fit.df_resid), abs=1e-9)
    low, high = result.pooled_within_interval()
    z, half = np.arctanh(result.pooled_within), np.arctanh(high) - np.arctanh(result.pooled_within)
    assert half == pytest.approx(stats.norm.ppf(0.975) / np.sqrt(fit.df_resid - 1))
    assert low == pytest.approx(np.tanh(z - half))
    if n_groups == 1:  # then it is scipy's interval of the plain r
        expected = stats.pearsonr(x, y).confidence_interval()
        np.testing.assert_allclose([low, high], [expected.low, expected.high], atol=1e-12)


# --- chapter 5: when the sign flips ---------------------------------------------------


@SETTINGS
@given(
    share=st.floats(0.05, 0.95),
    x_gap=st.floats(0.2, 5.0),
    sds=st.lists(st.floats(0.2, 3.0), min_size=4, max_size=4),
    within=st.lists(st.floats(0.05, 1.0), min_size=2, max_size=2),
    step=st.floats(0.01, 2.0),
)
def test_zero_crossing_gap_separates_the_signs(share, x_gap, sds, within, step):
    # thm-ch5-sign-flip
    shares, x_sds, y_sds = [share, 1 - share], sds[:2], sds[2:]
    gap = zero_crossing_gap(shares, x_gap, x_sds, y_sds, within)
    assert gap < 0  # positive within-group correlations need the groups to step down

    def pooled(y_gap):
        return pooled_correlation(shares, [0.0, x_gap], [0.0, y_gap], x_sds, y_sds, within)

    assert pooled(gap) == pytest.approx(0.0, abs=1e-12)
    assert pooled(gap + step) > 0 > pooled(gap - step)


@SETTINGS
@given(
    n=st.integers(3, 60),
    means=st.tuples(st.floats(-10, 10), st.floats(-10, 10)),
    sds=st.tuples(st.floats(0.1, 5), st.floats(0.1, 5)),
    correlation=st.floats(-1, 1),
    seed=st.integers(0, 1000),
)
def test_sample_with_moments_is_exact(n, means, sds, correlation, seed):
    x, y = sample_with_moments(n, means[0], means[1], sds[0], sds[1], correlation, seed)
    np.testing.assert_allclose([x.mean(), y.mean()], means, atol=1e-9)
    np.testing.assert_allclose([x.std(), y.std()], sds, rtol=1e-9)
    assert pearson(x, y) == pytest.approx(correlation, abs=1e-9)
    again = sample_with_moments(n, means[0], means[1], sds[0], sds[1], correlation, seed)
    assert (again[0] == x).all() and (again[1] == y).all()


# --- bad input ------------------------------------------------------------------------


class Refused(NamedTuple):
    """The call raises ValueError with this fragment (a literal, not a pattern)."""

    fragment: str


_X = [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
_Y = [4.0, 5.0, 6.0, 0.0, 1.0, 2.0]
_G = ["a", "a", "a", "b", "b", "b"]
_PAIRS = {
    "pearson": pearson,
    "grouped_correlation": lambda x, y: grouped_correlation(x, y, _G),
    "centered_block_cosines": lambda x, y: centered_block_cosines(x, y, _G),
}
_SUMMARY = {
    "shares": [1.0, 1.0],
    "x_means": [0.0, 1.0],
    "y_means": [0.0, 1.0],
    "x_sds": [1.0, 1.0],
    "y_sds": [1.0, 1.0],
    "within": [0.5, 0.5],
}
_GAP = {"shares": [1, 1], "x_gap": 3.0, "x_sds": [1, 1], "y_sds": [1, 1], "within": [0.8, 0.8]}
_SAMPLE = {"n": 10, "x_mean": 0.0, "y_mean": 0.0, "x_sd": 1.0, "y_sd": 1.0, "correlation": 0.5}


def _pooled(**changes):
    return lambda: pooled_correlation(**(_SUMMARY | changes))


def _gap(**changes):
    return lambda: zero_crossing_gap(**(_GAP | changes))


def _sample(**changes):
    return lambda: sample_with_moments(**(_SAMPLE | changes))[0].mean()


_SAMPLES = [
    ("masked", masked(_X), "is a masked array"),
    ("sparse", scipy.sparse.csr_array([_X]), "is a sparse csr_array"),
    ("complex", np.array(_X) + 1j, "is complex"),
    ("strings", [str(v) for v in _X], "is an array of strings"),
    ("NaN", [0.0, 1.0, np.nan, 3.0, 4.0, 5.0], "contains NaN (first at flat index 2)"),
    ("inf", [0.0, 1.0, 2.0, -np.inf, 4.0, 5.0], "contains an infinite value"),
    ("2-D", [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]], "has shape (2, 3); expected a 1-D array"),
    ("ragged", [[0, 1], [2]], "is ragged"),
    ("empty", [], "is empty"),
    ("constant", [2.0] * 6, "is constant (every value is 2.0)"),
]
_LABELS = [
    ("None label", ["a", None, "a", "b", "b", "b"], "missing label (None at index 1)"),
    ("NaN label", [0.0, 0.0, 0.0, np.nan, 1.0, 1.0], "missing label (NaN at index 3)"),
    ("mixed kinds", [1, 1, 1, "1", "1", "1"], "mixes labels of different kinds (int and str)"),
    ("wrong length", ["a", "a", "b", "b"], "groups has 4 labels but there are 6 observations"),
    ("masked", masked([0, 0, 0, 1, 1, 1]), "groups is a masked array"),
]

BAD_INPUT = [
    *[
        pytest.param(
            (lambda f=f, v=v: f(v, _Y)) if side == "x" else (lambda f=f, v=v: f(_X, v)),
            Refused(f"{side} {fragment}"),
            id=f"{name}-{side} {kind}",
        )
        for name, f in _PAIRS.items()
        for side in ("x", "y")
        for kind, v, fragment in _SAMPLES
    ],
    *[
        pytest.param(lambda f=f, g=g: f(_X, _Y, g), Refused(fragment), id=f"{f.__name__}-{kind}")
        for f in (grouped_correlation, centered_block_cosines)
        for kind, g, fragment in _LABELS
    ],
    pytest.param(lambda: pearson(_X, _Y[:5]), Refused("x has 6 observations but y has 5")),
    pytest.param(lambda: pearson([1.0], [2.0]), Refused("at least 2 observations; got 1")),
    pytest.param(lambda: pearson(1e-300 * np.array(_X), _Y), pearson(_X, _Y), id="1e-300"),
    pytest.param(lambda: pearson(1e12 + np.array(_X), _Y), pearson(_X, _Y), id="offset 1e12"),
    pytest.param(lambda: pearson([True, False, True], [1, 0, 1]), 1.0, id="booleans"),
    *[
        pytest.param(
            lambda s=scale: grouped_correlation(s * np.array(_X), _Y, _G),
            Refused("the squares of x's deviations leave float64's range; divide x"),
            id=f"grouped_correlation-x times {scale:g}",
        )
        for scale in (1e300, 1e-300)
    ],
    *[
        pytest.param(_pooled(**{name: value}), Refused(fragment), id=f"pooled-{name} {kind}")
        for name in ("shares", "x_means", "x_sds", "within")
        for kind, value, fragment in [
            ("masked", masked([1.0, 1.0]), f"{name} is a masked array"),
            ("complex", [1.0 + 1j, 1.0], f"{name} is complex"),
            ("strings", ["1", "1"], f"{name} is an array of strings"),
            ("2-D", [[0.5, 0.5]], f"{name} has shape (1, 2); expected a 1-D array"),
        ]
    ],
    pytest.param(_pooled(x_means=[0.0]), Refused("x_means has 1 entries; expected 2")),
    pytest.param(_pooled(x_means=[np.nan, 0.0]), Refused("x_means contains NaN")),
    pytest.param(_pooled(shares=[-1.0, 2.0]), Refused("shares must be nonnegative")),
    pytest.param(_pooled(shares=[0.0, 0.0]), Refused("shares sum to zero")),
    pytest.param(_pooled(y_sds=[-1.0, 1.0]), Refused("y_sds must be nonnegative")),
    pytest.param(_pooled(within=[1.5, 0.0]), Refused("within correlations must lie in [-1, 1]")),
    pytest.param(_pooled(within=[np.inf, 0.0]), Refused("within correlations must lie in")),
    pytest.param(_pooled(within=[np.nan, 0.0]), Refused("within is nan for a group whose")),
    pytest.param(
        _pooled(x_sds=[0.0, 0.0], x_means=[1.0, 1.0]), Refused("the pooled x has zero variance")
    ),
    pytest.param(
        _pooled(x_sds=[0.0, 1.0], within=[np.nan, 0.5]),
        pooled_correlation([1, 1], [0, 1], [0, 1], [0, 1], [1, 1], [0, 0.5]),
        id="pooled-nan r where a spread is 0",
    ),
    pytest.param(_pooled(x_means=[1e12, 1e12 + 1]), _pooled()(), id="pooled-offset 1e12"),
    pytest.param(_gap(x_gap=0.0), Refused("x_gap must be finite and nonzero")),
    pytest.param(_gap(x_gap=np.nan), Refused("x_gap must be a finite real number")),
    pytest.param(_gap(x_gap=[3.0]), Refused("x_gap must be a real number")),
    pytest.param(_gap(shares=[1, 1, 1]), Refused("shares has 3 entries; expected 2")),
    pytest.param(_gap(shares=[0, 1]), Refused("shares must be positive")),
    pytest.param(_gap(x_sds=[-1, 1]), Refused("x_sds must be nonnegative")),
    pytest.param(_gap(within=[2.0, 0.5]), Refused("within correlations must lie in [-1, 1]")),
    pytest.param(_gap(y_sds=masked([1, 1])), Refused("y_sds is a masked array")),
    pytest.param(_gap(x_sds=[0, 0], within=[np.nan, np.nan]), 0.0, id="gap-no within spread"),
    pytest.param(_sample(n=2), Refused("n must be at least 3; got 2")),
    pytest.param(_sample(n=10.0), Refused("n must be an integer; got 10.0")),
    pytest.param(_sample(seed=-1), Refused("seed must be at least 0")),
    pytest.param(_sample(x_sd=-1.0), Refused("x_sd must be nonnegative")),
    pytest.param(_sample(correlation=-1.5), Refused("correlation must lie in [-1, 1]")),
    pytest.param(_sample(y_mean=np.inf), Refused("y_mean must be a finite real number")),
]


@pytest.mark.parametrize(("call", "expected"), BAD_INPUT)
def test_bad_input_table(call, expected):
    if isinstance(expected, Refused):
        with pytest.raises(ValueError, match=re.escape(expected.fragment)):
            call()
    else:
        np.testing.assert_allclose(call(), expected, rtol=1e-12, atol=0)
