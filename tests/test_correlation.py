"""Tests for cosine_book.correlation: Pearson as a centred cosine and its group decomposition."""

import dataclasses
import re
import tracemalloc
from typing import NamedTuple

import numpy as np
import pytest
import scipy.sparse
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from cosine_book.correlation import (
    centered_block_cosines,
    cosine_from_moments,
    grouped_correlation,
    pearson,
)
from cosine_book.group_moments import pooled_correlation, sample_with_moments, zero_crossing_gap
from cosine_book.similarity import cosine

SETTINGS = settings(max_examples=60, deadline=None)


def _grouped_data(seed: int, n_groups: int, sizes_max: int = 12):
    """Random grouped data: group offsets, spreads and slopes all differ."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(2, sizes_max, size=n_groups)
    x_parts, y_parts, labels = [], [], []
    for g, size in enumerate(sizes):
        x = rng.normal(rng.normal(0, 3), rng.uniform(0.2, 2), size)
        y = rng.normal(0, 1) * x + rng.normal(rng.normal(0, 3), rng.uniform(0.2, 2), size)
        x_parts.append(x)
        y_parts.append(y)
        labels += [g] * size
    return np.concatenate(x_parts), np.concatenate(y_parts), np.array(labels)


# --- pearson ---------------------------------------------------------------


@SETTINGS
@given(seed=st.integers(0, 10_000), n=st.integers(3, 40))
def test_pearson_matches_numpy_and_scipy(seed, n):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    y = rng.normal(size=n) + rng.normal() * x
    r = pearson(x, y)
    assert r == pytest.approx(np.corrcoef(x, y)[0, 1], abs=1e-12)
    assert r == pytest.approx(stats.pearsonr(x, y).statistic, abs=1e-12)


@SETTINGS
@given(
    seed=st.integers(0, 10_000),
    shift_x=st.floats(-1e6, 1e6),
    shift_y=st.floats(-1e6, 1e6),
    scale_x=st.floats(1e-3, 1e3),
    scale_y=st.floats(1e-3, 1e3),
)
def test_pearson_invariant_to_shift_and_positive_scale(seed, shift_x, shift_y, scale_x, scale_y):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=20)
    y = rng.normal(size=20) + x
    moved = pearson(scale_x * x + shift_x, scale_y * y + shift_y)
    assert moved == pytest.approx(pearson(x, y), abs=1e-6)
    assert pearson(-x, y) == pytest.approx(-pearson(x, y), abs=1e-12)


def test_pearson_is_cosine_of_centred_vectors():
    x = np.array([1.0, 4.0, 2.0, 8.0])
    y = np.array([3.0, 1.0, 5.0, 2.0])
    assert pearson(x, y) == pytest.approx(cosine(x - x.mean(), y - y.mean()), abs=1e-15)


@SETTINGS
@given(seed=st.integers(0, 10_000), shift=st.floats(-20, 20), n=st.integers(3, 30))
def test_cosine_from_moments_matches_raw_cosine(seed, shift, n):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n) + shift
    y = rng.normal(size=n) - 0.5 * x + rng.normal()
    from_moments = cosine_from_moments(x.mean(), y.mean(), x.std(), y.std(), pearson(x, y))
    assert from_moments == pytest.approx(cosine(x, y), abs=1e-9)


def test_cosine_from_moments_errors():
    with pytest.raises(ValueError, match="nonnegative"):
        cosine_from_moments(1, 1, -1, 1, 0)
    with pytest.raises(ValueError, match="correlation"):
        cosine_from_moments(1, 1, 1, 1, 2)
    with pytest.raises(ValueError, match="zero"):
        cosine_from_moments(0, 1, 0, 1, 0)


def test_raw_cosine_but_not_pearson_moves_with_a_shift():
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=50), rng.normal(size=50)  # independent
    assert cosine(x + 10, y + 10) > 0.99
    assert pearson(x + 10, y + 10) == pytest.approx(pearson(x, y), abs=1e-12)


def test_pearson_exact_on_extreme_magnitudes():
    x = np.array([1.0, 2.0, 4.0, 3.0])
    y = np.array([2.0, 1.0, 5.0, 3.0])
    expected = np.corrcoef(x, y)[0, 1]
    assert pearson(x * 1e300, y) == pytest.approx(expected, abs=1e-14)
    assert pearson(x * 1e-300, y * 1e-300) == pytest.approx(expected, abs=1e-14)


@pytest.mark.parametrize(
    ("x", "y", "message"),
    [
        ([1, 2, 3], [1, 2], "equal length"),
        ([1.0], [2.0], "at least 2"),
        ([1, np.nan, 3], [1, 2, 3], "NaN"),
        ([1, 2, 3], [1, np.inf, 3], "infinite"),
        ([2, 2, 2], [1, 2, 3], "x is constant"),
        ([1, 2, 3], [0.1, 0.1, 0.1], "y is constant"),
        ([[1, 2], [3, 4]], [[1, 2], [3, 4]], "1-D"),
        (["a", "b"], [1, 2], "real numbers"),
    ],
)
def test_pearson_errors(x, y, message):
    with pytest.raises(ValueError, match=message):
        pearson(x, y)


# --- grouped decomposition -------------------------------------------------


@SETTINGS
@given(seed=st.integers(0, 10_000), n_groups=st.integers(1, 5))
def test_law_of_total_covariance(seed, n_groups):
    x, y, groups = _grouped_data(seed, n_groups)
    result = grouped_correlation(x, y, groups)
    assert result.within_covariance + result.between_covariance == pytest.approx(
        np.cov(x, y, ddof=0)[0, 1], abs=1e-9
    )
    assert result.total_covariance == pytest.approx(np.cov(x, y, ddof=0)[0, 1], abs=1e-9)
    assert result.pooled == pytest.approx(np.corrcoef(x, y)[0, 1], abs=1e-12)


@SETTINGS
@given(seed=st.integers(0, 10_000), n_groups=st.integers(1, 5))
def test_within_correlations_and_moments_match_numpy(seed, n_groups):
    x, y, groups = _grouped_data(seed, n_groups)
    result = grouped_correlation(x, y, groups)
    for g, label in enumerate(result.labels):
        member = groups == label
        assert result.within[g] == pytest.approx(np.corrcoef(x[member], y[member])[0, 1], abs=1e-12)
        assert result.x_sds[g] == pytest.approx(x[member].std(), abs=1e-12)
        assert result.y_means[g] == pytest.approx(y[member].mean(), abs=1e-12)
        assert result.shares[g] == pytest.approx(member.mean())


@SETTINGS
@given(seed=st.integers(0, 10_000), n_groups=st.integers(1, 5))
def test_pooled_r_from_group_summaries_is_exact(seed, n_groups):
    x, y, groups = _grouped_data(seed, n_groups)
    result = grouped_correlation(x, y, groups)
    from_summaries = pooled_correlation(
        result.counts, result.x_means, result.y_means, result.x_sds, result.y_sds, result.within
    )
    assert from_summaries == pytest.approx(result.pooled, abs=1e-10)


@SETTINGS
@given(seed=st.integers(0, 10_000), n_groups=st.integers(2, 5))
def test_within_plus_between_decomposition_of_r(seed, n_groups):
    x, y, groups = _grouped_data(seed, n_groups)
    result = grouped_correlation(x, y, groups)
    weights = result.within_weights()
    # The within part is a block-cosine identity: r_W = sum w_g r_g, sum w_g = rho <= 1.
    assert np.sum(weights * result.within) == pytest.approx(result.pooled_within, abs=1e-10)
    assert np.sum(weights) <= 1 + 1e-12
    # Hence the range of the pooled r given the within-group r's (chapter 4's corollary).
    rho_w = np.sum(weights)
    a_w, a_b = result.within_factor, result.between_factor
    assert a_w * rho_w * result.within.min() - a_b - 1e-12 <= result.pooled
    assert result.pooled <= a_w * rho_w * result.within.max() + a_b + 1e-12
    rebuilt = result.within_factor * result.pooled_within + result.between_factor * result.between
    assert rebuilt == pytest.approx(result.pooled, abs=1e-10)
    assert result.within_factor + result.between_factor <= 1 + 1e-12
    eta_x, eta_y = result.between_shares()
    group_means_x = np.array([x[groups == g].mean() for g in result.labels])[
        np.searchsorted(result.labels, groups)
    ]
    assert eta_x == pytest.approx(np.var(group_means_x) / np.var(x), abs=1e-10)
    assert result.within_factor == pytest.approx(np.sqrt((1 - eta_x) * (1 - eta_y)), abs=1e-12)
    assert result.between_factor == pytest.approx(np.sqrt(eta_x * eta_y), abs=1e-12)


@SETTINGS
@given(seed=st.integers(0, 10_000), n_groups=st.integers(1, 5))
def test_centered_blocks_use_the_pooled_mean(seed, n_groups):
    x, y, groups = _grouped_data(seed, n_groups)
    blocks = centered_block_cosines(x, y, groups)
    assert blocks.global_cosine == pytest.approx(pearson(x, y), abs=1e-12)
    assert np.nansum(blocks.weights * blocks.local) == pytest.approx(pearson(x, y), abs=1e-12)
    for g, label in enumerate(np.unique(groups)):
        member = groups == label
        expected = cosine(x[member] - x.mean(), y[member] - y.mean())
        assert blocks.local[g] == pytest.approx(expected, abs=1e-10)


def test_simpson_picture_perfect_lines_pooled_negative():
    x = np.array([0, 1, 2, 3, 4, 5.0])
    y = np.array([4, 5, 6, 0, 1, 2.0])
    result = grouped_correlation(x, y, np.array([0, 0, 0, 1, 1, 1]))
    np.testing.assert_allclose(result.within, [1.0, 1.0])
    assert result.pooled < 0
    assert result.pooled_within == pytest.approx(1.0)
    assert result.between == pytest.approx(-1.0)


def test_constant_group_has_nan_within_but_decomposition_holds():
    x = np.array([1.0, 1.0, 1.0, 2.0, 3.0, 4.0])
    y = np.array([0.0, 1.0, 2.0, 2.0, 1.0, 3.0])
    result = grouped_correlation(x, y, np.array([0, 0, 0, 1, 1, 1]))
    assert np.isnan(result.within[0])
    assert not np.isnan(result.within[1])
    assert result.within_covariance + result.between_covariance == pytest.approx(
        np.cov(x, y, ddof=0)[0, 1]
    )
    assert pooled_correlation(
        result.counts, result.x_means, result.y_means, result.x_sds, result.y_sds, result.within
    ) == pytest.approx(result.pooled)


def test_groups_constant_in_x_have_no_within_part():
    x = np.array([0.0, 0.0, 1.0, 1.0, 3.0, 3.0])
    y = np.array([1.0, 2.0, 2.0, 4.0, 3.0, 5.0])
    result = grouped_correlation(x, y, np.array([0, 0, 1, 1, 2, 2]))
    assert np.isnan(result.within).all()
    np.testing.assert_array_equal(result.within_weights(), 0.0)
    assert result.within_factor == pytest.approx(0.0)
    assert result.between_factor * result.between == pytest.approx(result.pooled)


@pytest.mark.parametrize(("x_scale", "y_scale"), [(1e300, 1.0), (1e-300, 1e-300), (1e200, 1e200)])
def test_grouped_correlation_exact_on_extreme_magnitudes(x_scale, y_scale):
    x, y, groups = _grouped_data(3, 3)
    reference = grouped_correlation(x, y, groups)
    scaled = grouped_correlation(x * x_scale, y * y_scale, groups)
    np.testing.assert_allclose(scaled.within, reference.within, atol=1e-12)
    assert scaled.pooled == pytest.approx(reference.pooled, abs=1e-12)
    assert scaled.within_factor == pytest.approx(reference.within_factor, abs=1e-12)
    assert scaled.between_factor == pytest.approx(reference.between_factor, abs=1e-12)
    np.testing.assert_allclose(scaled.between_shares(), reference.between_shares(), atol=1e-12)
    np.testing.assert_allclose(scaled.x_sds / x_scale, reference.x_sds, rtol=1e-12)
    np.testing.assert_allclose(scaled.within_weights(), reference.within_weights(), atol=1e-12)


@pytest.mark.parametrize("value", [0.1, 0.7, 1e-300, 3e300, 123.456])
def test_constant_group_is_exactly_constant(value):
    x = np.array([value] * 7 + [1.0, 2.0, 4.0])
    y = np.array([1.0, 5.0, 2.0, 8.0, 3.0, 9.0, 4.0, 2.0, 1.0, 3.0])
    result = grouped_correlation(x, y, np.array([0] * 7 + [1] * 3))
    assert np.isnan(result.within[0])
    assert result.x_sds[0] == 0.0


@pytest.mark.parametrize(
    ("x", "y", "groups", "message"),
    [
        ([1, 2, 3, 4], [1, 3, 2, 4], [0, 0, 1], "one label per observation"),
        ([1, 2, 3, 4], [1, 3, np.nan, 4], [0, 0, 1, 1], "NaN"),
        ([1, 1, 1, 1], [1, 3, 2, 4], [0, 0, 1, 1], "constant"),
        ([1, 2, 3, 4], [1, 3, 2], [0, 0, 1, 1], "equal length"),
        ([1, 2, 3, 4], [1, 3, 2, 4], [0.0, 0.0, np.nan, np.nan], "NaN"),
    ],
)
def test_grouped_errors(x, y, groups, message):
    with pytest.raises(ValueError, match=message):
        grouped_correlation(x, y, groups)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"within": [1.5, 0.0]}, r"\[-1, 1\]"),
        ({"x_sds": [-1.0, 1.0]}, "nonnegative"),
        ({"within": [np.nan, 0.0]}, "nan"),
        ({"x_sds": [0.0, 0.0], "x_means": [1.0, 1.0]}, "zero variance"),
        ({"y_means": [1.0]}, "one per group"),
    ],
)
def test_pooled_correlation_errors(kwargs, message):
    arguments = {
        "shares": [1.0, 1.0],
        "x_means": [0.0, 1.0],
        "y_means": [0.0, 1.0],
        "x_sds": [1.0, 1.0],
        "y_sds": [1.0, 1.0],
        "within": [0.5, 0.5],
    } | kwargs
    with pytest.raises(ValueError, match=message):
        pooled_correlation(**arguments)


# --- two groups: the sign flip ----------------------------------------------


@SETTINGS
@given(
    share=st.floats(0.05, 0.95),
    x_gap=st.floats(0.2, 5.0),
    sds=st.lists(st.floats(0.2, 3.0), min_size=4, max_size=4),
    within=st.lists(st.floats(0.05, 1.0), min_size=2, max_size=2),
    step=st.floats(0.01, 2.0),
)
def test_zero_crossing_gap_separates_the_signs(share, x_gap, sds, within, step):
    shares = [share, 1 - share]
    x_sds, y_sds = sds[:2], sds[2:]
    gap = zero_crossing_gap(shares, x_gap, x_sds, y_sds, within)
    assert gap < 0  # positive within-group correlations need the groups to step down

    def pooled(y_gap):
        return pooled_correlation(shares, [0.0, x_gap], [0.0, y_gap], x_sds, y_sds, within)

    assert pooled(gap) == pytest.approx(0.0, abs=1e-12)
    assert pooled(gap + step) > 0
    assert pooled(gap - step) < 0


def test_zero_crossing_gap_errors():
    with pytest.raises(ValueError, match="nonzero"):
        zero_crossing_gap([1, 1], 0.0, [1, 1], [1, 1], [0.5, 0.5])
    with pytest.raises(ValueError, match="exactly 2"):
        zero_crossing_gap([1, 1, 1], 1.0, [1, 1], [1, 1], [0.5, 0.5])
    with pytest.raises(ValueError, match="positive"):
        zero_crossing_gap([0, 1], 1.0, [1, 1], [1, 1], [0.5, 0.5])


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
    assert x.mean() == pytest.approx(means[0], abs=1e-9)
    assert y.mean() == pytest.approx(means[1], abs=1e-9)
    assert x.std() == pytest.approx(sds[0], rel=1e-9)
    assert y.std() == pytest.approx(sds[1], rel=1e-9)
    assert pearson(x, y) == pytest.approx(correlation, abs=1e-9)


def test_sample_with_moments_errors():
    with pytest.raises(ValueError, match="n must be"):
        sample_with_moments(2, 0, 0, 1, 1, 0.5)
    with pytest.raises(ValueError, match="correlation"):
        sample_with_moments(10, 0, 0, 1, 1, 1.5)
    with pytest.raises(ValueError, match="nonnegative"):
        sample_with_moments(10, 0, 0, -1, 1, 0.5)


# --- exact centring: offsets, big integers, two points, exact values ---------


def _dyadic_sample(seed: int, n: int = 200):
    """Small data that stays exact under a large offset: multiples of 2**-10 below 2**10."""
    rng = np.random.default_rng(seed)
    small = rng.integers(-(2**20), 2**20, n) / 1024.0
    y = 0.4 * small + rng.normal(size=n)
    return small, y


@pytest.mark.parametrize("offset", [1e9, -1e9, 1e12, -1e12, 2.0**40])
def test_pearson_loses_no_digits_to_a_common_offset(offset):
    small, y = _dyadic_sample(1)
    x = offset + small
    np.testing.assert_array_equal(x - offset, small)  # the data themselves are exact
    expected = np.corrcoef(small, y)[0, 1]
    assert pearson(x, y) == pytest.approx(expected, rel=1e-12)
    assert pearson(y, x) == pytest.approx(expected, rel=1e-12)
    assert pearson(x, offset + 2 * small) == 1.0  # an exact multiple after centring


@pytest.mark.parametrize("offset", [1e9, 1e12])
def test_grouped_correlation_loses_no_digits_to_a_common_offset(offset):
    small, y = _dyadic_sample(2, 240)
    groups = np.repeat([0, 1, 2, 3], 60)
    small = small + np.repeat([0.0, 3.0, -2.0, 5.0], 60)  # groups apart in x
    reference = grouped_correlation(small, y, groups)
    shifted = grouped_correlation(offset + small, y, groups)
    assert shifted.pooled == pytest.approx(reference.pooled, rel=1e-12)
    np.testing.assert_allclose(shifted.within, reference.within, rtol=1e-12)
    assert shifted.pooled_within == pytest.approx(reference.pooled_within, rel=1e-12)
    assert shifted.between == pytest.approx(reference.between, rel=1e-12)
    assert shifted.within_factor == pytest.approx(reference.within_factor, rel=1e-12)
    assert shifted.between_factor == pytest.approx(reference.between_factor, rel=1e-12)
    np.testing.assert_allclose(shifted.between_shares(), reference.between_shares(), rtol=1e-12)
    np.testing.assert_allclose(shifted.x_sds, reference.x_sds, rtol=1e-12)
    np.testing.assert_allclose(shifted.within_weights(), reference.within_weights(), rtol=1e-12)
    assert shifted.within_covariance == pytest.approx(reference.within_covariance, rel=1e-12)
    assert shifted.between_covariance == pytest.approx(reference.between_covariance, rel=1e-12)
    assert shifted.total_covariance == pytest.approx(reference.total_covariance, rel=1e-12)
    # Means are reported in data units: exact to the spacing of floats near the offset.
    np.testing.assert_allclose(
        shifted.x_means - offset, reference.x_means, atol=4 * offset * 2**-52
    )
    blocks = centered_block_cosines(offset + small, y, groups)
    assert blocks.global_cosine == pytest.approx(reference.pooled, rel=1e-12)


def test_pearson_of_integers_beyond_2_to_the_53():
    assert pearson([2**60, 2**60 + 1, 2**60 + 2], [1, 2, 3]) == 1.0
    assert pearson([2**60, 2**60 + 1, 2**60 + 2], [3, 2, 1]) == -1.0
    assert pearson(np.array([2**63 - 1, 2**63 - 2, 2**63 - 4]), [1, 2, 4]) == -1.0
    rng = np.random.default_rng(3)
    small = rng.integers(-1000, 1000, 50)
    y = small + rng.normal(0, 300, 50)
    expected = np.corrcoef(small, y)[0, 1]
    for offset in (2**53 + 1, 2**62, -(2**62)):
        assert pearson(offset + small, y) == pytest.approx(expected, rel=1e-13)
    unsigned = np.uint64(2**64 - 2000) + small.astype(np.uint64) + np.uint64(1000)
    assert pearson(unsigned, y) == pytest.approx(expected, rel=1e-13)
    # The full int64 range at once: differences up to 2**64 - 1, computed exactly.
    extremes = np.array([-(2**63), 0, 2**63 - 1])
    assert pearson(extremes, [1.0, 2.0, 3.0]) == pytest.approx(1.0, abs=1e-15)


def test_grouped_correlation_of_integers_beyond_2_to_the_53():
    x = np.array([0, 1, 2, 10, 12, 11]) + 2**60
    y = np.array([1.0, 2.0, 4.0, 0.0, 2.0, 1.0])
    result = grouped_correlation(x, y, [0, 0, 0, 1, 1, 1])
    reference = grouped_correlation(x - 2**60, y, [0, 0, 0, 1, 1, 1])
    np.testing.assert_allclose(result.within, reference.within, rtol=1e-14)
    assert result.pooled == pytest.approx(reference.pooled, rel=1e-14)
    np.testing.assert_allclose(result.x_sds, reference.x_sds, rtol=1e-14)


@SETTINGS
@given(
    points=st.lists(
        st.floats(allow_nan=False, allow_infinity=False, width=64), min_size=4, max_size=4
    )
)
def test_pearson_of_two_points_is_exactly_plus_or_minus_one(points):
    x0, x1, y0, y1 = points
    if x0 == x1 or y0 == y1:
        with pytest.raises(ValueError, match="constant"):
            pearson([x0, x1], [y0, y1])
        return
    expected = 1.0 if (x1 > x0) == (y1 > y0) else -1.0
    assert pearson([x0, x1], [y0, y1]) == expected


def test_groups_of_two_have_within_correlation_exactly_plus_or_minus_one():
    x = [0.1, 0.7, 3.3, 2.9, 1e-3, 5.0]
    y = [1.0, 1.3, 0.2, 0.9, 2.0, 2.0 + 1e-9]
    result = grouped_correlation(x, y, [0, 0, 1, 1, 2, 2])
    np.testing.assert_array_equal(result.within, [1.0, -1.0, 1.0])


@SETTINGS
@given(seed=st.integers(0, 10_000), n=st.integers(3, 40), scale=st.sampled_from([1.0, 1e-300]))
def test_pearson_exact_identities(seed, n, scale):
    # cos(u, u) == 1 exactly needs cosine to be exact (cosine_book.similarity).
    rng = np.random.default_rng(seed)
    x = scale * rng.normal(size=n)
    y = scale * rng.normal(size=n)
    assert pearson(x, x) == 1.0
    assert pearson(x, 2 * x) == 1.0
    assert pearson(x, -x) == -1.0
    assert pearson(x, y) == pearson(y, x)
    assert -1.0 <= pearson(x, y) <= 1.0


@SETTINGS
@given(seed=st.integers(0, 10_000), n=st.integers(3, 40))
def test_pearson_same_bits_for_float32_and_its_float64_copy(seed, n):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n).astype(np.float32)
    y = rng.normal(size=n).astype(np.float32)
    assert pearson(x, y) == pearson(x.astype(np.float64), y.astype(np.float64))
    assert pearson(x, y) == pytest.approx(np.corrcoef(x, y)[0, 1], abs=1e-12)


@SETTINGS
@given(
    seed=st.integers(0, 10_000),
    offset=st.integers(-(2**62), 2**62),
    n=st.integers(3, 30),
)
def test_pearson_of_shifted_integers_matches_the_unshifted(seed, offset, n):
    rng = np.random.default_rng(seed)
    small = rng.integers(-(2**20), 2**20, n)
    y = rng.normal(size=n)
    if np.all(small == small[0]):
        return
    shifted = np.int64(offset) + small  # exact in int64
    assert pearson(shifted, y) == pytest.approx(pearson(small, y), abs=1e-13)


def test_between_shares_from_public_fields_match_the_stored_ones():
    x, y, groups = _grouped_data(7, 3)
    result = grouped_correlation(x, y, groups)
    rebuilt = dataclasses.replace(result, _between_shares=None)
    np.testing.assert_allclose(rebuilt.between_shares(), result.between_shares(), rtol=1e-12)


def test_summary_functions_exact_under_offsets_and_extreme_magnitudes():
    sd = (2 / 3) ** 0.5
    base = pooled_correlation([3, 3], [1, 4], [5, 1], [sd, sd], [sd, sd], [1, 1])
    for offset in (1e9, 1e12):
        shifted = pooled_correlation(
            [3, 3], [offset + 1, offset + 4], [5, 1], [sd, sd], [sd, sd], [1, 1]
        )
        assert shifted == pytest.approx(base, rel=1e-12)
    for scale in (2.0**1000, 2.0**-1000):
        huge = pooled_correlation(
            [3, 3], [scale, 4 * scale], [5, 1], [sd * scale] * 2, [sd, sd], [1, 1]
        )
        assert huge == pytest.approx(base, rel=1e-14)
        assert cosine_from_moments(3 * scale, 3.0, scale, 1.0, 0.2) == cosine_from_moments(
            3.0, 3.0, 1.0, 1.0, 0.2
        )
    gap = zero_crossing_gap([1, 1], 3.0, [sd, sd], [sd, sd], [1, 1])
    assert zero_crossing_gap([1, 1], 3e100, [sd * 1e100] * 2, [sd, sd], [1, 1]) == pytest.approx(
        gap
    )
    assert zero_crossing_gap(
        [1, 1], 3.0, [sd * 1e150] * 2, [sd * 1e150] * 2, [1, 1]
    ) == pytest.approx(gap * 1e300)


def test_sample_with_moments_is_the_same_on_every_call():
    first = sample_with_moments(30, 1.0, 2.0, 0.5, 3.0, -0.4, seed=3)
    second = sample_with_moments(30, 1.0, 2.0, 0.5, 3.0, -0.4, seed=3)
    np.testing.assert_array_equal(first[0], second[0])
    np.testing.assert_array_equal(first[1], second[1])


# --- labels ------------------------------------------------------------------


def test_labels_of_different_types_are_kept_apart_or_refused():
    x, y = [0, 1, 2, 3, 4, 5], [4, 5, 6, 0, 1, 2]
    as_strings = grouped_correlation(x, y, ["1", "1", "1", "2", "2", "2"])
    as_numbers = grouped_correlation(x, y, np.array([1, 1, 1, 2, 2, 2]))
    assert as_strings.labels == ("1", "2") and as_numbers.labels == (1, 2)
    np.testing.assert_array_equal(as_strings.within, as_numbers.within)
    with pytest.raises(ValueError, match=r"mixes labels of different kinds \(int and str\)"):
        grouped_correlation(x, y, [1, 1, 1, "1", "1", "1"])


@pytest.mark.parametrize(
    "groups",
    [
        np.array([5, 5, 9, 9, 5, 9]),
        np.array([5, 5, 9, 9, 5, 9], dtype=np.uint8),
        np.array([-(2**62), -(2**62), 2**62, 2**62, -(2**62), 2**62]),  # range too wide: sorted
        [5, 5, 9, 9, 5, 9],
        np.array([True, True, False, False, True, False]),
    ],
)
def test_integer_label_arrays_give_the_same_result_as_lists(groups):
    x, y = [0.0, 1.0, 2.0, 3.0, 4.0, 6.0], [1.0, 0.0, 2.0, 5.0, 3.0, 4.0]
    result = grouped_correlation(x, y, groups)
    reference = grouped_correlation(x, y, np.asarray(groups).tolist())
    assert result.labels == reference.labels
    np.testing.assert_array_equal(result.counts, reference.counts)
    np.testing.assert_array_equal(result.within, reference.within)


# --- memory ------------------------------------------------------------------


def _traced_peak(call):
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        call()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_extra_memory_is_about_one_float64_copy_of_the_inputs():
    # tracemalloc sees NumPy's allocations (pearson; grouped_correlation keeps a few
    # float64 vectors, as its formula reads).
    n = 1_000_000
    rng = np.random.default_rng(0)
    x = rng.normal(size=n).astype(np.float32)
    y = (x + rng.normal(size=n)).astype(np.float32)
    groups = rng.integers(0, 10, n)
    pearson(x[:100], y[:100])  # first calls may compile or import
    grouped_correlation(x[:1000], y[:1000], groups[:1000])
    copy_of_x_and_y = 8 * 2 * n  # float64
    assert _traced_peak(lambda: pearson(x, y)) <= 1.2 * copy_of_x_and_y


# --- bad-input table ---------------------------------------------------------


class Refused(NamedTuple):
    """The call raises ValueError with this fragment (a literal, not a pattern)."""

    fragment: str


_X = [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
_Y = [4.0, 5.0, 6.0, 0.0, 1.0, 2.0]
_G = ["a", "a", "a", "b", "b", "b"]
_PAIRS = {
    "pearson": lambda x, y: pearson(x, y),
    "grouped_correlation": lambda x, y: grouped_correlation(x, y, _G),
    "centered_block_cosines": lambda x, y: centered_block_cosines(x, y, _G),
}
_LABELLED = {
    "grouped_correlation": lambda g: grouped_correlation(_X, _Y, g).within,
    "centered_block_cosines": lambda g: centered_block_cosines(_X, _Y, g).global_cosine,
}
_SMALL, _SMALL_Y = _dyadic_sample(4, 6)
_SUMMARY = {
    "shares": [1.0, 1.0],
    "x_means": [0.0, 1.0],
    "y_means": [0.0, 1.0],
    "x_sds": [1.0, 1.0],
    "y_sds": [1.0, 1.0],
    "within": [0.5, 0.5],
}
_GAP = {"shares": [1, 1], "x_gap": 3.0, "x_sds": [1, 1], "y_sds": [1, 1], "within": [0.8, 0.8]}
_MOMENTS = {"x_mean": 3.0, "y_mean": 3.0, "x_sd": 1.0, "y_sd": 1.0, "correlation": 0.0}
_SAMPLE = {"n": 10, "x_mean": 0.0, "y_mean": 0.0, "x_sd": 1.0, "y_sd": 1.0, "correlation": 0.5}


def _pooled(**changes):
    return lambda: pooled_correlation(**(_SUMMARY | changes))


def _gap(**changes):
    return lambda: zero_crossing_gap(**(_GAP | changes))


def _moments(**changes):
    return lambda: cosine_from_moments(**(_MOMENTS | changes))


def _sample(**changes):
    return lambda: sample_with_moments(**(_SAMPLE | changes))[0].mean()


def _array_kinds(name):
    """(kind, bad value of the argument ``name``, expected) shared by every sample argument."""
    return [
        (
            "masked",
            np.ma.masked_array(_X, mask=[0, 1, 0, 0, 0, 0]),
            Refused(f"{name} is a masked array"),
        ),
        ("sparse", scipy.sparse.csr_array([_X]), Refused(f"{name} is a sparse csr_array")),
        ("complex", np.array(_X) + 1j, Refused(f"{name} is complex")),
        ("strings", ["0", "1", "2", "3", "4", "5"], Refused(f"{name} is an array of strings")),
        ("a string", "012345", Refused(f"{name} is a string")),
        ("objects", np.array([0, 1, None, 3, 4, 5], dtype=object), Refused("of Python objects")),
        ("dates", np.arange(6).astype("datetime64[D]"), Refused(f"{name} is an array of dates")),
        ("ragged", [[0, 1], [2]], Refused(f"{name} is ragged")),
        (
            "NaN",
            [0.0, 1.0, np.nan, 3.0, 4.0, 5.0],
            Refused(f"{name} contains NaN (first at flat index 2)"),
        ),
        ("inf", [0.0, 1.0, 2.0, -np.inf, 4.0, 5.0], Refused(f"{name} contains an infinite value")),
        ("empty", [], Refused(f"{name} is empty")),
        (
            "2-D",
            [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]],
            Refused(f"{name} has shape (2, 3); expected a 1-D array"),
        ),
        ("scalar", 3.0, Refused(f"{name} has shape (); expected a 1-D array")),
        ("constant", [2.0] * 6, Refused(f"{name} is constant (every value is 2.0)")),
    ]


BAD_INPUT = [
    # ---- x and y of pearson, grouped_correlation, centered_block_cosines
    *[
        pytest.param(
            (lambda f=function, v=value: f(v, _Y))
            if side == "x"
            else (lambda f=function, v=value: f(_X, v)),
            expected,
            id=f"{fname}-{side} {kind}",
        )
        for fname, function in _PAIRS.items()
        for side in ("x", "y")
        for kind, value, expected in _array_kinds(side)
    ],
    pytest.param(
        lambda: pearson(_X, _Y[:5]),
        Refused("x has 6 observations but y has 5"),
        id="pearson-length mismatch",
    ),
    pytest.param(
        lambda: pearson([1.0], [2.0]),
        Refused("at least 2 observations; got 1"),
        id="pearson-one point",
    ),
    pytest.param(
        lambda: grouped_correlation(_X, _Y[:5], _G),
        Refused("x has 6 observations but y has 5"),
        id="grouped-length mismatch",
    ),
    # ---- right answers at the edges
    pytest.param(
        lambda: pearson([2**60, 2**60 + 1, 2**60 + 2], [1, 2, 3]),
        1.0,
        id="pearson-int64 beyond 2**53",
    ),
    pytest.param(
        lambda: pearson(
            np.array([2**64 - 1, 2**64 - 3, 2**64 - 2], dtype=np.uint64), [3.0, 1.0, 2.0]
        ),
        1.0,
        id="pearson-uint64 near 2**64",
    ),
    pytest.param(
        lambda: pearson(1e12 + _SMALL, _SMALL_Y),
        np.corrcoef(_SMALL, _SMALL_Y)[0, 1],
        id="pearson-offset 1e12",
    ),
    pytest.param(lambda: pearson(1e300 * np.array(_X), _Y), pearson(_X, _Y), id="pearson-1e300"),
    pytest.param(lambda: pearson(1e-300 * np.array(_X), _Y), pearson(_X, _Y), id="pearson-1e-300"),
    pytest.param(lambda: pearson([0.0, 1e-320], [3.0, -1e300]), -1.0, id="pearson-two points"),
    pytest.param(
        lambda: pearson([True, False, True, True], [1, 0, 1, 1]), 1.0, id="pearson-booleans"
    ),
    pytest.param(
        lambda: pearson(np.float16([1, 2, 4]), np.int8([1, 2, 3])),
        pearson([1, 2, 4], [1, 2, 3]),
        id="pearson-float16/int8",
    ),
    pytest.param(
        lambda: grouped_correlation(np.arange(6) + 2**60, _Y, _G).within,
        [1.0, 1.0],
        id="grouped-int64 beyond 2**53",
    ),
    pytest.param(
        lambda: grouped_correlation(1e12 + np.array(_X), _Y, _G).pooled,
        grouped_correlation(_X, _Y, _G).pooled,
        id="grouped-offset 1e12",
    ),
    pytest.param(
        lambda: (
            grouped_correlation([0.0, 1.0, 5.0, 4.0], [1.0, 3.0, 2.0, 0.0], [0, 0, 1, 1]).within
        ),
        [1.0, 1.0],
        id="grouped-two-member groups",
    ),
    # ---- group labels
    *[
        pytest.param(lambda f=function, g=groups: f(g), expected, id=f"{fname}-groups {kind}")
        for fname, function in _LABELLED.items()
        for kind, groups, expected in [
            (
                "None label",
                ["a", None, "a", "b", "b", "b"],
                Refused("groups has a missing label (None at index 1)"),
            ),
            (
                "NaN label",
                [0.0, 0.0, 0.0, np.nan, 1.0, 1.0],
                Refused("groups has a missing label (NaN at index 3)"),
            ),
            (
                "mixed 1 and '1'",
                [1, 1, 1, "1", "1", "1"],
                Refused("mixes labels of different kinds (int and str)"),
            ),
            ("mixed bool and int", [True, True, True, 1, 1, 1], Refused("(bool and int)")),
            (
                "wrong length",
                ["a", "a", "b", "b"],
                Refused("groups has 4 labels but there are 6 observations"),
            ),
            (
                "2-D array",
                np.array([[0, 0, 0], [1, 1, 1]]),
                Refused("groups has shape (2, 3) but there are 6"),
            ),
            ("nested list", [[0], [0], [0], [1], [1], [1]], Refused("groups must be 1-D")),
            ("masked", np.ma.masked_array([0, 0, 0, 1, 1, 1]), Refused("groups is a masked array")),
            ("sparse", scipy.sparse.csr_array([[0, 0, 0, 1, 1, 1]]), Refused("groups is a sparse")),
            ("a string", "aaabbb", Refused("groups is a string")),
        ]
    ],
    pytest.param(
        lambda: grouped_correlation(_X, _Y, [0, 0, 0, 1, 1, 2]).within_weights()[2],
        0.0,
        id="grouped_correlation-single-member group has weight 0",
    ),
    pytest.param(
        lambda: centered_block_cosines(_X, _Y, [0, 0, 0, 1, 1, 2]).local[2],
        cosine([5.0 - 2.5], [2.0 - 3.0]),
        id="centered_block_cosines-single-member group",
    ),
    pytest.param(
        lambda: grouped_correlation(_X, _Y, ["1", "1", "1", "2", "2", "2"]).labels,
        ("1", "2"),
        id="grouped_correlation-numeric strings stay strings",
    ),
    # ---- pooled_correlation
    *[
        pytest.param(_pooled(**{name: value}), expected, id=f"pooled_correlation-{name} {kind}")
        for name in ("shares", "x_means", "x_sds", "within")
        for kind, value, expected in [
            ("masked", np.ma.masked_array([1.0, 1.0]), Refused(f"{name} is a masked array")),
            ("complex", [1.0 + 1j, 1.0], Refused(f"{name} is complex")),
            ("strings", ["1", "1"], Refused(f"{name} is an array of strings")),
            ("ragged", [[1.0], [1.0, 2.0]], Refused(f"{name} is ragged")),
            ("inf", [np.inf, 1.0], Refused(f"{name} contains an infinite value")),
            ("2-D", [[0.5, 0.5]], Refused(f"{name} has shape (1, 2); expected a 1-D array")),
            ("empty", [], Refused(f"{name} is empty")),
        ]
    ],
    pytest.param(
        _pooled(x_means=[0.0]),
        Refused("x_means has 1 entries; expected 2 (one per group)"),
        id="pooled-length",
    ),
    pytest.param(
        _pooled(x_means=[np.nan, 0.0]), Refused("x_means contains NaN"), id="pooled-NaN mean"
    ),
    pytest.param(
        _pooled(shares=[-1.0, 2.0]),
        Refused("shares must be nonnegative"),
        id="pooled-negative share",
    ),
    pytest.param(
        _pooled(shares=[0.0, 0.0]), Refused("shares sum to zero"), id="pooled-zero shares"
    ),
    pytest.param(
        _pooled(y_sds=[-1.0, 1.0]), Refused("y_sds must be nonnegative"), id="pooled-negative sd"
    ),
    pytest.param(
        _pooled(within=[1.5, 0.0]),
        Refused("within correlations must lie in [-1, 1]"),
        id="pooled-r > 1",
    ),
    pytest.param(
        _pooled(within=[np.nan, 0.0]),
        Refused("within is nan for a group whose spreads"),
        id="pooled-nan r",
    ),
    pytest.param(
        _pooled(x_sds=[0.0, 0.0], x_means=[1.0, 1.0]),
        Refused("the pooled x has zero variance"),
        id="pooled-constant x",
    ),
    pytest.param(
        _pooled(x_sds=[0.0, 1.0], within=[np.nan, 0.5]),
        pooled_correlation([1, 1], [0, 1], [0, 1], [0, 1], [1, 1], [0, 0.5]),
        id="pooled-nan r where sd is 0",
    ),
    pytest.param(_pooled(shares=[1e308, 1e308]), _pooled()(), id="pooled-huge shares"),
    pytest.param(_pooled(x_means=[1e12, 1e12 + 1]), _pooled()(), id="pooled-offset 1e12"),
    pytest.param(
        _pooled(x_means=[-1.5e308, 1.5e308], x_sds=[1.5e308, 1.5e308]),
        _pooled(x_means=[0.0, 2.0])(),
        id="pooled-means near the float max",
    ),
    # ---- zero_crossing_gap
    pytest.param(
        _gap(x_gap=0.0),
        Refused("x_gap must be finite and nonzero"),
        id="zero_crossing_gap-zero gap",
    ),
    pytest.param(
        _gap(x_gap=np.nan),
        Refused("x_gap must be a finite real number"),
        id="zero_crossing_gap-NaN gap",
    ),
    pytest.param(
        _gap(x_gap="3"), Refused("x_gap must be a real number"), id="zero_crossing_gap-string gap"
    ),
    pytest.param(
        _gap(x_gap=[3.0]), Refused("x_gap must be a real number"), id="zero_crossing_gap-array gap"
    ),
    pytest.param(
        _gap(shares=[1, 1, 1]),
        Refused("must each have exactly 2 entries"),
        id="zero_crossing_gap-3 shares",
    ),
    pytest.param(
        _gap(shares=[0, 1]), Refused("shares must be positive"), id="zero_crossing_gap-zero share"
    ),
    pytest.param(
        _gap(x_sds=[-1, 1]),
        Refused("x_sds must be nonnegative"),
        id="zero_crossing_gap-negative sd",
    ),
    pytest.param(
        _gap(within=[2.0, 0.5]),
        Refused("within correlations must lie in [-1, 1]"),
        id="zero_crossing_gap-r > 1",
    ),
    pytest.param(
        _gap(within=[np.inf, 0.5]),
        Refused("within contains an infinite value"),
        id="zero_crossing_gap-inf r",
    ),
    pytest.param(
        _gap(y_sds=np.ma.masked_array([1, 1])),
        Refused("y_sds is a masked array"),
        id="zero_crossing_gap-masked",
    ),
    pytest.param(
        _gap(within=[0.5 + 0j, 0.5]), Refused("within is complex"), id="zero_crossing_gap-complex"
    ),
    pytest.param(
        _gap(shares=["1", "1"]),
        Refused("shares is an array of strings"),
        id="zero_crossing_gap-strings",
    ),
    pytest.param(
        _gap(x_gap=1e-300, x_sds=[1e200, 1e200], y_sds=[1e200, 1e200]),
        Refused("beyond the float range"),
        id="zero_crossing_gap-overflow",
    ),
    pytest.param(
        _gap(x_sds=[0, 0], within=[np.nan, np.nan]), 0.0, id="zero_crossing_gap-no within spread"
    ),
    # ---- cosine_from_moments
    pytest.param(
        _moments(x_mean=np.nan),
        Refused("x_mean must be a finite real number"),
        id="cosine_from_moments-NaN",
    ),
    pytest.param(
        _moments(y_sd=np.inf),
        Refused("y_sd must be a finite real number"),
        id="cosine_from_moments-inf",
    ),
    pytest.param(
        _moments(x_mean="3"),
        Refused("x_mean must be a real number"),
        id="cosine_from_moments-string",
    ),
    pytest.param(
        _moments(x_mean=[3.0]),
        Refused("x_mean must be a real number"),
        id="cosine_from_moments-array",
    ),
    pytest.param(
        _moments(x_mean=1j),
        Refused("x_mean must be a real number"),
        id="cosine_from_moments-complex",
    ),
    pytest.param(
        _moments(x_sd=-1.0),
        Refused("x_sd must be nonnegative"),
        id="cosine_from_moments-negative sd",
    ),
    pytest.param(
        _moments(correlation=1.5),
        Refused("correlation must lie in [-1, 1]"),
        id="cosine_from_moments-r > 1",
    ),
    pytest.param(
        _moments(x_mean=0.0, x_sd=0.0),
        Refused("zero mean and zero spread"),
        id="cosine_from_moments-zero",
    ),
    pytest.param(
        _moments(x_mean=3e300, x_sd=1e300, y_mean=3e-300, y_sd=1e-300),
        0.9,
        id="cosine_from_moments-1e300",
    ),
    # ---- sample_with_moments
    pytest.param(
        _sample(n=2), Refused("n must be at least 3; got 2"), id="sample_with_moments-n=2"
    ),
    pytest.param(
        _sample(n=10.0), Refused("n must be an integer; got 10.0"), id="sample_with_moments-float n"
    ),
    pytest.param(_sample(n=True), Refused("n must be an integer"), id="sample_with_moments-bool n"),
    pytest.param(
        _sample(seed=-1), Refused("seed must be at least 0"), id="sample_with_moments-negative seed"
    ),
    pytest.param(
        _sample(x_sd=-1.0),
        Refused("x_sd must be nonnegative"),
        id="sample_with_moments-negative sd",
    ),
    pytest.param(
        _sample(correlation=-1.5),
        Refused("correlation must lie in [-1, 1]"),
        id="sample_with_moments-r < -1",
    ),
    pytest.param(
        _sample(y_mean=np.inf),
        Refused("y_mean must be a finite real number"),
        id="sample_with_moments-inf",
    ),
    pytest.param(
        _sample(x_sd=1e308),
        Refused("x_mean and x_sd are too large"),
        id="sample_with_moments-overflow",
    ),
    pytest.param(_sample(x_mean=1e300, x_sd=1e299), 1e300, id="sample_with_moments-1e300"),
]


@pytest.mark.parametrize(("call", "expected"), BAD_INPUT)
def test_bad_input_table(call, expected):
    if isinstance(expected, Refused):
        with pytest.raises(ValueError, match=re.escape(expected.fragment)):
            call()
    else:
        result = call()
        if isinstance(expected, tuple):
            assert result == expected
        else:
            np.testing.assert_allclose(result, expected, rtol=1e-12, atol=0)


def test_a_one_point_group_enters_only_the_between_part():
    # Chapter 4's definition admits groups with sigma = 0; a group of one point is one.
    x, y, groups = [0, 1, 2, 5], [0, 1, 3, 0], ["a", "a", "a", "b"]
    result = grouped_correlation(x, y, groups)
    assert np.isnan(result.within[1]) and result.x_sds[1] == result.y_sds[1] == 0.0
    assert result.within_weights().tolist() == [1.0, 0.0]
    assert result.pooled == pytest.approx(stats.pearsonr(x, y).statistic, abs=1e-12)
    assert result.pooled_within == pytest.approx(result.within[0], abs=1e-12)
    assert sum(result.parts()) == pytest.approx(result.pooled, abs=1e-12)
    assert result.within_covariance + result.between_covariance == pytest.approx(
        result.total_covariance, abs=1e-12
    )
