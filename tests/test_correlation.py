"""Tests for cosine_book.correlation: Pearson as a centred cosine and its group decomposition."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from cosine_book.correlation import (
    centered_block_cosines,
    cosine_from_moments,
    grouped_correlation,
    pearson,
    pooled_correlation,
    sample_with_moments,
    zero_crossing_gap,
)
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
        ([1, 2, 3, 4], [1, 3, 2, 4], [0, 0, 0, 1], "fewer than 2"),
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


# --- widgets (pure parts, no browser) ----------------------------------------


def test_two_group_sample_has_the_requested_moments():
    from cosine_book.widgets.correlation import GroupSpec, two_group_sample

    x, y, groups = two_group_sample(
        GroupSpec(30, 1.0, 2.0, 0.5, 0.6), GroupSpec(50, -1, 0, 2, -0.3)
    )
    result = grouped_correlation(x, y, groups)
    np.testing.assert_allclose(result.counts, [30, 50])
    np.testing.assert_allclose(result.within, [0.6, -0.3], atol=1e-12)
    np.testing.assert_allclose(result.x_means, [1.0, -1.0], atol=1e-12)
    np.testing.assert_allclose(result.y_sds, [0.5, 2.0], atol=1e-12)


def test_offset_sweep_flips_sign_at_the_zero_gap():
    from cosine_book.widgets.correlation import offset_sweep

    gaps = np.linspace(-8, 8, 161)
    pooled, zero_gap = offset_sweep(gaps, within=(0.8, 0.8), x_gap=3.0)
    assert (pooled[gaps < zero_gap] < 0).all()
    assert (pooled[gaps > zero_gap] > 0).all()
    # Far away the between-group part dominates: r tends to +-(x-gap share of x's spread).
    far, _ = offset_sweep([-1e6, 1e6], within=(0.8, 0.8), x_gap=3.0)
    limit = 0.5 * 3.0 / np.sqrt(1.0 + 0.25 * 9.0)
    np.testing.assert_allclose(far, [-limit, limit], atol=1e-5)


def test_widget_updates_draw_without_error():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from cosine_book.widgets.correlation import (
        _decomposition_update,
        decomposition_widget,
        simpson_widget,
    )

    fig, result = _decomposition_update(0.3, 0, 1, 1, 0.9, 3, -2, 0.5, 0.9)
    assert result.counts.tolist() == [36, 84]
    assert result.pooled < 0 < result.within.min()
    plt.close(fig)
    assert decomposition_widget() is not None
    assert simpson_widget() is not None
    plt.close("all")
