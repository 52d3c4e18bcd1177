"""Tests for cosine_book.similarity: the claims of chapters 2 and 3 as properties."""

from __future__ import annotations

import math

import array_api_strict as xp
import numpy as np
import pytest
import scipy.sparse
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from cosine_book import similarity
from cosine_book.similarity import (
    BlockCosines,
    block_cosines,
    block_cosines_from_sums,
    blocks_with,
    cosine,
    cosine_bounds,
)

PROPERTY_SETTINGS = settings(max_examples=150, deadline=None)

finite = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, allow_infinity=False)


@st.composite
def blocked_pairs(draw, min_blocks=1, max_blocks=6, max_size=5, elements=finite):
    """Two lists of paired blocks with random sizes, neither whole vector zero."""
    n_blocks = draw(st.integers(min_blocks, max_blocks))
    sizes = draw(st.lists(st.integers(1, max_size), min_size=n_blocks, max_size=n_blocks))
    x_blocks = [draw(hnp.arrays(np.float64, size, elements=elements)) for size in sizes]
    y_blocks = [draw(hnp.arrays(np.float64, size, elements=elements)) for size in sizes]
    x, y = np.concatenate(x_blocks), np.concatenate(y_blocks)
    assume(np.linalg.norm(x) > 1e-3 and np.linalg.norm(y) > 1e-3)
    return x_blocks, y_blocks


def naive_cosine(x, y):
    x, y = np.ravel(x).astype(np.float64), np.ravel(y).astype(np.float64)
    return float(np.dot(x, y) / (np.linalg.norm(x) * np.linalg.norm(y)))


# ---------------------------------------------------------------- cosine itself


def test_cosine_known_values():
    assert cosine([1, 0], [0, 1]) == 0.0
    assert cosine([1, 2, 3], [2, 4, 6]) == pytest.approx(1.0, abs=1e-15)
    assert cosine([1, 2, 3], [-1, -2, -3]) == pytest.approx(-1.0, abs=1e-15)
    assert cosine([1, 1], [1, 2]) == pytest.approx(3 / math.sqrt(10), rel=1e-15)
    assert cosine(np.eye(3), 2 * np.eye(3)) == pytest.approx(1.0)


def test_cosine_is_clipped_to_unit_interval():
    x = np.full(1000, 0.1)
    assert -1.0 <= cosine(x, x) <= 1.0
    assert -1.0 <= cosine(x, -x) <= 1.0


@pytest.mark.parametrize("scale", [1e300, 1e-300, 1e-310, 1e150, 1e-150, 4e307])
def test_cosine_exact_at_extreme_magnitudes(scale):
    x = np.array([3.0, 4.0, 0.0, 1.0])
    y = np.array([4.0, 3.0, 2.0, -1.0])
    expected = naive_cosine(x, y)
    # Only positive powers of two rescale exactly; otherwise compare to rounding.
    got = cosine(x * scale, y * scale)
    assert math.isfinite(got)
    assert got == pytest.approx(expected, rel=1e-9 if scale < 1e-307 else 1e-14)


def test_cosine_mixed_extreme_magnitudes():
    # A 1e300 entry dominates; the 1e-300 entries must not turn into NaN or inf.
    x = np.array([1e300, 1e-300])
    y = np.array([1e300, 1e-300])
    assert cosine(x, y) == pytest.approx(1.0)
    assert cosine([1e300, 0.0], [0.0, 1e-300]) == 0.0


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.int8, np.int64])
def test_cosine_dtypes_accumulate_in_float64(dtype):
    rng = np.random.default_rng(0)
    x = rng.integers(-50, 50, size=500).astype(dtype)
    y = rng.integers(-50, 50, size=500).astype(dtype)
    expected = naive_cosine(x.astype(np.float64), y.astype(np.float64))
    assert cosine(x, y) == pytest.approx(expected, rel=1e-13)


def test_float64_beside_integers_keeps_extreme_range():
    assert cosine(np.array([3e300, 4e300]), np.array([4, 3])) == pytest.approx(0.96)
    assert cosine(np.array([1, 2], dtype=np.int8), np.array([2e-300, 4e-300])) == pytest.approx(1.0)


def test_float32_large_values_do_not_overflow():
    x = np.full(10_000, 3e38, dtype=np.float32)
    y = np.full(10_000, 1e38, dtype=np.float32)
    assert cosine(x, y) == pytest.approx(1.0)


def test_float16_long_vector_is_accurate():
    # Accumulating 100,000 float16 squares in float16 would overflow at 65504.
    x = np.ones(100_000, dtype=np.float16)
    y = np.concatenate([np.ones(50_000), -np.ones(50_000)]).astype(np.float16)
    assert cosine(x, y) == 0.0


@st.composite
def vector_pairs(draw, max_size=20):
    size = draw(st.integers(1, max_size))
    x = draw(hnp.arrays(np.float64, size, elements=finite))
    y = draw(hnp.arrays(np.float64, size, elements=finite))
    return x, y


@given(vector_pairs())
@PROPERTY_SETTINGS
def test_cosine_matches_naive_and_is_scale_invariant(pair):
    x, y = pair
    assume(np.linalg.norm(x) > 1e-3 and np.linalg.norm(y) > 1e-3)
    expected = naive_cosine(x, y)
    assert cosine(x, y) == pytest.approx(expected, abs=1e-12)
    # Positive scaling by powers of two is exact in floating point.
    assert cosine(x * 2.0**900, y * 2.0**-900) == pytest.approx(expected, abs=1e-12)


# Bad inputs of every public function: each kind of input with the answer it gets.
MASKED = np.ma.masked_array([1.0, 2.0, 3.0], mask=[False, True, False])
OTHER = xp.Device("device1")  # array_api_strict simulates several devices
SPARSE = scipy.sparse.csr_array([[1.0, 0.0, 2.0]])
BAD_INPUTS = [
    # (call, expected error message fragment)
    (lambda: cosine([1, 2], [1, 2, 3]), "shape"),
    (lambda: cosine([[1, 2]], [1, 2]), "shape"),
    (lambda: cosine([0, 0], [1, 2]), "x is the zero vector"),
    (lambda: cosine([1, 2], [0.0, 0.0]), "y is the zero vector"),
    (lambda: cosine([1, np.nan], [1, 2]), "x contains NaN"),
    (lambda: cosine([1, 2], [np.inf, 2]), "y contains an infinite"),
    (lambda: cosine([], []), "empty"),
    (lambda: cosine([1j, 2], [1, 2]), "complex"),
    (lambda: cosine(["1.0", "2.0"], [1, 2]), "strings"),
    (lambda: cosine(np.array([1, 2], dtype=object), [1, 2]), "objects"),
    (lambda: cosine([[1, 2], [3]], [[1, 2], [3]]), "ragged"),
    (lambda: cosine(MASKED, [1.0, 2.0, 3.0]), "masked array"),
    (lambda: cosine(SPARSE, SPARSE), "sparse"),
    (lambda: cosine("ab", "cd"), "is a string"),
    (lambda: cosine(np.array(["2020-01-01"], dtype="datetime64[D]"), [1]), "dates"),
    (lambda: block_cosines(np.array([1.0, 2.0]), np.array([1.0, 3.0])), "single array"),
    (lambda: block_cosines(np.eye(2), np.eye(2)), "list\\(matrix\\)"),
    (lambda: block_cosines([1.0, 2.0], [1.0, 3.0]), "single number"),
    (lambda: block_cosines([MASKED], [[1.0, 2.0, 3.0]]), "block '0' of x is a masked array"),
    (lambda: block_cosines([SPARSE], [SPARSE]), "sparse"),
    (lambda: block_cosines([[1j]], [[1.0]]), "complex"),
    (lambda: block_cosines([["1"]], [[1.0]]), "strings"),
    (lambda: cosine_bounds(["0.5"], [1.0], [1.0]), "local is an array of strings"),
    (lambda: cosine_bounds(np.array([0.5], dtype=object), [1.0], [1.0]), "objects"),
    (lambda: cosine_bounds([0.5j], [1.0], [1.0]), "complex"),
    (lambda: cosine_bounds([[0.5]], [[1.0]], [[1.0]]), "1-D"),
    (lambda: cosine_bounds([0.5], [np.inf], [1.0]), "x_norms contains an infinite"),
    (lambda: cosine_bounds([-np.inf], [1.0], [1.0]), r"\[-1, 1\]"),
    (lambda: cosine_bounds(MASKED, [1.0] * 3, [1.0] * 3), "masked"),
    (lambda: blocks_with(["0.5"], [1.0], [1.0]), "strings"),
    (lambda: blocks_with([0.5], [1.0j], [1.0]), "complex"),
    (lambda: blocks_with([np.nan], [1.0], [1.0]), "local contains NaN"),
    (lambda: blocks_with([], [], []), "empty"),
    # block_cosines_from_sums: three sums per block
    (lambda: block_cosines_from_sums([1.0, 2.0], [1.0], [1.0, 1.0]), "same length"),
    (lambda: block_cosines_from_sums([], [], []), "dots is empty"),
    (lambda: block_cosines_from_sums([[1.0]], [[1.0]], [[1.0]]), "dots has shape .* 1-D"),
    (lambda: block_cosines_from_sums(1.0, 1.0, 1.0), "1-D"),
    (lambda: block_cosines_from_sums([0.0], [-1.0], [1.0]), "x_sq must be nonnegative"),
    (lambda: block_cosines_from_sums([0.0, 0.0], [1.0, 1.0], [1.0, -0.5]), "y_sq .* index 1"),
    (lambda: block_cosines_from_sums([np.nan], [1.0], [1.0]), "dots contains NaN"),
    (lambda: block_cosines_from_sums([0.0], [np.inf], [1.0]), "x_sq contains an infinite"),
    (lambda: block_cosines_from_sums([1.0], [1.0], [np.nan]), "y_sq contains NaN"),
    (lambda: block_cosines_from_sums([1j], [1.0], [1.0]), "dots is complex"),
    (lambda: block_cosines_from_sums(["1"], [1.0], [1.0]), "strings"),
    (lambda: block_cosines_from_sums(MASKED, MASKED, MASKED), "masked"),
    (lambda: block_cosines_from_sums([3.0], [1.0], [4.0]), "block '0' are inconsistent"),
    (lambda: block_cosines_from_sums([-2.0 * (1 + 2e-5)], [1.0], [4.0]), "inconsistent"),
    (lambda: block_cosines_from_sums([1e-300], [0.0], [1.0]), "inconsistent"),
    (lambda: block_cosines_from_sums([1e300], [1e-300], [1e-300]), "inconsistent"),
    (lambda: block_cosines_from_sums([0.0, 0.0], [0.0, 0.0], [1.0, 1.0]), "x is the zero"),
    (lambda: block_cosines_from_sums([0.0], [1.0], [0.0]), "y is the zero vector"),
    (lambda: block_cosines_from_sums([1.0], [1.0], [1.0], names=["a", "b"]), "2 entries"),
    (lambda: block_cosines_from_sums([1.0] * 2, [1.0] * 2, [1.0] * 2, names="ab"), "string"),
    (lambda: block_cosines_from_sums([1.0] * 2, [1.0] * 2, [1.0] * 2, names=[1, "1"]), "'1'"),
    (lambda: block_cosines_from_sums([1.0], [1.0], [1.0], names=3), "names is of type int"),
    # block_cosines on arrays of another Array API library
    (lambda: block_cosines([xp.asarray([1.0])], [[1.0]]), "same array library"),
    (lambda: block_cosines([[1.0]], [xp.asarray([1.0])]), "list but .* an array_api_strict"),
    (lambda: block_cosines([np.ones(1)], [xp.asarray([1.0])]), "a numpy array but"),
    (lambda: block_cosines([xp.asarray([1.0])], [xp.asarray([1.0], device=OTHER)]), "device"),
    (lambda: block_cosines([xp.asarray([1.0, np.nan])], [xp.ones(2)]), "'0' of x contains NaN"),
    (lambda: block_cosines([xp.ones(2)], [xp.asarray([1.0, -np.inf])]), "y contains an inf"),
    (lambda: block_cosines([xp.ones(2)], [xp.ones(3)]), "shape"),
    (lambda: block_cosines([xp.ones(0)], [xp.ones(0)]), "empty"),
    (lambda: block_cosines([xp.asarray(1.0)], [xp.asarray(1.0)]), "single number"),
    (lambda: block_cosines([xp.asarray([1j])], [xp.asarray([1j])]), "complex"),
    (lambda: block_cosines([xp.zeros(2)], [xp.ones(2)]), "x is the zero vector"),
    (lambda: block_cosines(xp.ones(2), xp.ones(2)), "single array"),
]


@pytest.mark.parametrize(("call", "message"), BAD_INPUTS)
def test_bad_input_table(call, message):
    with pytest.raises(ValueError, match=message):
        call()


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        # Inputs that look odd but have a right answer.
        (lambda: cosine([True, False], [True, True]), 1 / math.sqrt(2)),
        (lambda: cosine(np.array([2**62, 2**62], dtype=np.int64), [1, 1]), 1.0),
        (lambda: cosine(np.array([1, 2], dtype=np.uint8), [2, 4]), 1.0),
        (lambda: cosine(np.float16([1, 0]), np.float16([1, 1])), 1 / math.sqrt(2)),
        (lambda: cosine([1e-320, 0.0], [1e-320, 1e-320]), 1 / math.sqrt(2)),
        (lambda: cosine([1.7e308, 1.7e308], [1.7e308, -1.7e308]), 0.0),
        (lambda: block_cosines([[1.0], [0.0]], [[2.0], [5.0]]).global_cosine, 2 / math.sqrt(29)),
        (lambda: cosine_bounds([1.0], [2.0], [3.0]), (1.0, 1.0)),
        # Sums within rounding of Cauchy-Schwarz: clipped, not refused.
        (lambda: block_cosines_from_sums([2.0 * (1 + 5e-6)], [1.0], [4.0]).local[0], 1.0),
        (lambda: block_cosines_from_sums([-2.0 * (1 + 5e-6)], [1.0], [4.0]).global_cosine, -1.0),
        (lambda: block_cosines_from_sums([3, 0], [1, 0], [9, 4]).global_cosine, 3 / math.sqrt(13)),
        (lambda: block_cosines_from_sums([1.0, 0.0], [1.0, 0.0], [1.0, 4.0]).weights[1], 0.0),
        (lambda: block_cosines_from_sums([0.0], [5e-324], [1.7e308]).local[0], 0.0),
        (lambda: block_cosines([xp.asarray([True, False])], [xp.ones(2)]).local[0], 2**-0.5),
        (lambda: block_cosines([xp.asarray([2**62, 2**62])], [xp.ones(2)]).local[0], 1.0),
    ],
)
def test_odd_but_valid_inputs(call, expected):
    assert call() == pytest.approx(expected, rel=1e-15, abs=1e-300)


def test_nan_in_float32_and_wide_paths_named():
    with pytest.raises(ValueError, match="NaN"):
        cosine(np.array([1, np.nan], dtype=np.float32), np.array([1, 2], dtype=np.float32))
    with pytest.raises(ValueError, match="y contains an infinite"):
        cosine([1e300, 1.0], [1.0, np.inf])


# ---------------------------------------------------------------- block_cosines


def test_counterexample_every_local_cosine_is_one():
    result = block_cosines([[1.0], [1.0]], [[1.0], [2.0]])
    np.testing.assert_array_equal(result.local, [1.0, 1.0])
    assert result.global_cosine == pytest.approx(3 / math.sqrt(10), rel=1e-15)
    assert result.global_cosine < 1.0
    assert result.profile_cosine == pytest.approx(result.global_cosine, rel=1e-15)


@given(blocked_pairs())
@PROPERTY_SETTINGS
def test_identity_global_is_weighted_sum_of_locals(pair):
    x_blocks, y_blocks = pair
    result = block_cosines(x_blocks, y_blocks)
    x, y = np.concatenate(x_blocks), np.concatenate(y_blocks)
    assert result.global_cosine == pytest.approx(naive_cosine(x, y), abs=1e-12)
    defined = ~np.isnan(result.local)
    weighted_sum = float(np.sum(result.weights[defined] * result.local[defined]))
    assert result.global_cosine == pytest.approx(weighted_sum, abs=1e-12)
    # Weights are nonnegative and sum to the profile cosine rho in [0, 1].
    assert (result.weights >= 0).all()
    assert result.profile_cosine == pytest.approx(float(result.weights.sum()), abs=1e-12)
    norms_cos = naive_cosine(result.x_norms, result.y_norms)
    assert result.profile_cosine == pytest.approx(norms_cos, abs=1e-12)
    assert 0.0 <= result.profile_cosine <= 1.0
    # Zero blocks have undefined local cosine and zero weight.
    assert (result.weights[~defined] == 0).all()


@given(blocked_pairs())
@PROPERTY_SETTINGS
def test_two_sided_bound_holds_for_any_signs(pair):
    result = block_cosines(*pair)
    lower, upper = cosine_bounds(result.local, result.x_norms, result.y_norms)
    assert lower - 1e-12 <= result.global_cosine <= upper + 1e-12
    assert (lower, upper) == result.bounds()


@given(blocked_pairs())
@PROPERTY_SETTINGS
def test_upper_bound_by_max_local_when_locals_nonnegative(pair):
    x_blocks, y_blocks = pair
    # Flip y blocks so that every defined local cosine is nonnegative.
    first = block_cosines(x_blocks, y_blocks)
    flipped = [
        -y if (not np.isnan(c) and c < 0) else y for y, c in zip(y_blocks, first.local, strict=True)
    ]
    result = block_cosines(x_blocks, flipped)
    defined = result.local[~np.isnan(result.local)]
    assume(defined.size > 0)
    assert (defined >= -1e-15).all()
    assert result.global_cosine <= defined.max() + 1e-12


def test_upper_bound_by_max_local_fails_for_negative_locals():
    epsilon = 1e-3
    result = block_cosines([[1.0], [epsilon]], [[-epsilon], [-1.0]])
    np.testing.assert_array_equal(result.local, [-1.0, -1.0])
    assert result.global_cosine == pytest.approx(-2 * epsilon / (1 + epsilon**2))
    assert result.global_cosine > result.local.max()


def test_lower_bound_rho_lambda_tends_to_zero():
    # Local cosines fixed at 0.9 in both blocks; norms ||x_1||, ||y_2|| -> 0.
    angle = math.acos(0.9)
    unit = np.array([1.0, 0.0])
    turned = np.array([math.cos(angle), math.sin(angle)])
    previous = 1.0
    for epsilon in [1e-1, 1e-2, 1e-4, 1e-8]:
        result = block_cosines([epsilon * unit, unit], [turned, epsilon * turned])
        np.testing.assert_allclose(result.local, [0.9, 0.9], atol=1e-15)
        lower, _ = result.bounds()
        assert result.global_cosine >= lower - 1e-15
        assert result.global_cosine < previous
        previous = result.global_cosine
    assert previous < 1e-7


@given(
    st.lists(st.floats(-1, 1), min_size=2, max_size=6),
    st.floats(0.0, 1.0),
)
@PROPERTY_SETTINGS
def test_bounds_are_approached_as_weight_concentrates(local_values, rho):
    """For fixed local cosines and fixed rho, both ends of the interval are attainable limits."""
    local = np.array(local_values)
    n = local.size
    for target in (int(np.argmin(local)), int(np.argmax(local))):
        # x is concentrated on `target`; y puts rho there and the rest on another
        # block, so the weights approach rho * e_target as epsilon -> 0.
        epsilon = 1e-9
        other_b = (target + 1) % n
        x_norms = np.full(n, epsilon)
        y_norms = np.full(n, epsilon)
        x_norms[target], y_norms[target] = 1.0, rho
        y_norms[other_b] = math.sqrt(max(1.0 - rho**2, 0.0))
        lower, upper = cosine_bounds(local, x_norms, y_norms)
        global_cosine = block_cosines(*blocks_with(local, x_norms, y_norms)).global_cosine
        extreme = lower if target == int(np.argmin(local)) else upper
        assert global_cosine == pytest.approx(extreme, abs=1e-6)
        assert lower - 1e-12 <= global_cosine <= upper + 1e-12


def test_bounds_attained_exactly_when_locals_equal():
    # Vectors with equal local cosines sit on both ends of the interval; change one
    # local cosine and the global cosine leaves the ends.
    rng = np.random.default_rng(1)
    x_norms, y_norms = rng.random(5), rng.random(5)
    rho = naive_cosine(x_norms, y_norms)
    local = np.full(5, -0.3)
    s = block_cosines(*blocks_with(local, x_norms, y_norms))
    lower, upper = cosine_bounds(s.local, s.x_norms, s.y_norms)
    assert lower == pytest.approx(-0.3 * rho) and upper == pytest.approx(-0.3 * rho)
    assert s.global_cosine == pytest.approx(-0.3 * rho, abs=1e-12)
    local[2] = 0.4
    s = block_cosines(*blocks_with(local, x_norms, y_norms))
    lower, upper = s.bounds()
    assert lower == pytest.approx(-0.3 * rho) and upper == pytest.approx(0.4 * rho)
    assert lower + 1e-3 < s.global_cosine < upper - 1e-3


def test_mapping_blocks_and_names():
    update = {"W1": np.ones((3, 2)), "b1": np.array([1.0, -1.0])}
    gradient = {"b1": np.array([2.0, -2.0]), "W1": -np.ones((3, 2))}
    result = block_cosines(update, gradient)
    assert isinstance(result, BlockCosines)
    assert result.names == ("W1", "b1")
    np.testing.assert_allclose(result.local, [-1.0, 1.0])
    assert len(result) == 2


def test_subnormal_products_lose_accuracy_as_the_docstring_says():
    # The docstrings promise correctness to rounding unless products underflow: here
    # 2.565e-124 * 2.70e-189 is subnormal, and the relative error (against exact
    # rational arithmetic) is far above rounding, though the sign survives here.
    from fractions import Fraction

    import mpmath

    x, y = [0.0, 8.79e-6, 2.565e-124], [-4.14e-60, 0.0, 2.70e-189]
    assert 2.565e-124 * 2.70e-189 < 2.3e-308  # subnormal
    dot = sum(Fraction(a) * Fraction(b) for a, b in zip(x, y, strict=True))
    xx = sum(Fraction(a) ** 2 for a in x)
    yy = sum(Fraction(b) ** 2 for b in y)
    with mpmath.workprec(200):
        exact = mpmath.mpf(dot.numerator) / dot.denominator
        exact /= mpmath.sqrt(
            mpmath.mpf(xx.numerator * yy.numerator) / (xx.denominator * yy.denominator)
        )
        error = float(abs(mpmath.mpf(cosine(x, y)) / exact - 1))
    assert cosine(x, y) > 0
    assert 1e-14 < error < 1e-9
    assert "underflow" in (cosine.__doc__ or "") and "underflow" in (similarity.__doc__ or "")


def test_tiny_blocks_whose_product_of_sums_underflows():
    # Found by Hypothesis: 5e-199 * 1e-163 underflows to 0 although each sum is normal.
    result = block_cosines([[7.17e-100], [0.0], [1.0]], [[3.21e-82], [0.0], [1.0]])
    np.testing.assert_array_equal(result.local[[0, 2]], [1.0, 1.0])
    assert result.global_cosine == pytest.approx(1.0)


def test_zero_block_beside_subnormal_block():
    # A zero block must not break the relative scaling of a subnormal block.
    result = block_cosines([[0.0, 0.0], [2.2e-313, 0.0]], [[0.0, 0.0], [1.0, 1.0]])
    assert np.isnan(result.local[0]) and result.weights[0] == 0.0
    assert result.global_cosine == pytest.approx(math.sqrt(0.5), rel=1e-6)


def test_zero_block_reports_nan_with_zero_weight():
    result = block_cosines([[0.0, 0.0], [1.0, 2.0]], [[1.0, 1.0], [2.0, 4.0]])
    assert np.isnan(result.local[0])
    assert result.weights[0] == 0.0
    assert result.global_cosine == pytest.approx(naive_cosine([0, 0, 1, 2], [1, 1, 2, 4]))
    lower, upper = result.bounds()
    assert lower - 1e-15 <= result.global_cosine <= upper + 1e-15


def test_extreme_block_magnitudes_keep_identity():
    x_blocks = [np.array([1e300, 2e300]), np.array([1e-300, 3e-300]), np.array([5.0, 1.0])]
    y_blocks = [np.array([2e300, 1e300]), np.array([-3e-300, 1e-300]), np.array([1.0, 5.0])]
    result = block_cosines(x_blocks, y_blocks)
    np.testing.assert_allclose(result.local, [0.8, 0.0, 10 / 26], atol=1e-15)
    assert result.global_cosine == pytest.approx(0.8, abs=1e-12)
    assert np.isfinite(result.x_norms).all()
    assert result.weights[1] == pytest.approx(0.0, abs=1e-300)


def test_norm_beyond_float_range_keeps_cosine_exact():
    big = np.full(4, 1.5e308)
    result = block_cosines([big, np.ones(4)], [big, np.ones(4)])
    assert np.isinf(result.x_norms[0])
    assert result.global_cosine == pytest.approx(1.0)
    np.testing.assert_allclose(result.weights, [1.0, 0.0], atol=1e-12)


def test_float32_blocks_larger_than_one_chunk():
    rng = np.random.default_rng(3)
    x_blocks = [rng.standard_normal(100_003).astype(np.float32) for _ in range(3)]
    y_blocks = [x + rng.standard_normal(x.size).astype(np.float32) for x in x_blocks]
    result = block_cosines(x_blocks, y_blocks)
    x = np.concatenate(x_blocks).astype(np.float64)
    y = np.concatenate(y_blocks).astype(np.float64)
    assert result.global_cosine == pytest.approx(naive_cosine(x, y), abs=1e-13)


@pytest.mark.parametrize(
    ("x_blocks", "y_blocks", "message"),
    [
        ([[1.0], [2.0]], [[1.0]], "2 blocks but y has 1"),
        ({"a": [1.0]}, {"b": [1.0]}, "same block names"),
        ({"a": [1.0]}, [[1.0]], "both be mappings"),
        ([[1.0, 2.0]], [[1.0, 2.0, 3.0]], "shape"),
        ([[1.0, 2.0]], [[[1.0, 2.0]]], "shape"),
        ([], [], "no blocks"),
        ([[]], [[]], "empty"),
        ([[1.0, np.nan]], [[1.0, 2.0]], "NaN"),
        ([[1.0, 2.0]], [[np.inf, 2.0]], "infinite"),
        ([[0.0], [0.0]], [[1.0], [2.0]], "x is the zero vector"),
        ([[1.0], [1.0]], [[0.0], [0.0]], "y is the zero vector"),
        ([[1.0, 2.0], [1.0]], [[1.0, 2.0], [1.0, 2.0]], "block '1'"),
        ("ab", "cd", "is a string"),
    ],
)
def test_block_cosines_bad_input(x_blocks, y_blocks, message):
    with pytest.raises(ValueError, match=message):
        block_cosines(x_blocks, y_blocks)


# ---------------------------------------------------------------- sums from elsewhere

# Entries whose squares np.sum keeps exactly enough: 0 or 1e-6 <= |v| <= 1e6.
summable = st.one_of(
    st.just(0.0),
    st.floats(1e-6, 1e6),
    st.floats(-1e6, -1e-6),
)


def sums_of(x_blocks, y_blocks, cuts=None):
    """Per-block <x_i, y_i>, ||x_i||^2 and ||y_i||^2 with np.sum, shard by shard and added."""
    dots, x_sq, y_sq = [], [], []
    for i, (x, y) in enumerate(zip(x_blocks, y_blocks, strict=True)):
        edges = [0, *(cuts[i] if cuts else []), x.size]
        shards = [(x[a:b], y[a:b]) for a, b in zip(edges[:-1], edges[1:], strict=True)]
        dots.append(sum(float(np.sum(a * b)) for a, b in shards))
        x_sq.append(sum(float(np.sum(a * a)) for a, _ in shards))
        y_sq.append(sum(float(np.sum(b * b)) for _, b in shards))
    return dots, x_sq, y_sq


def assert_same_result(got, expected, rel=1e-12):
    """Two BlockCosines equal to rounding: cosines and weights absolutely, norms relatively."""
    assert got.names == expected.names
    np.testing.assert_array_equal(np.isnan(got.local), np.isnan(expected.local))
    np.testing.assert_allclose(got.local, expected.local, rtol=rel, atol=rel)
    np.testing.assert_allclose(got.x_norms, expected.x_norms, rtol=rel, atol=0)
    np.testing.assert_allclose(got.y_norms, expected.y_norms, rtol=rel, atol=0)
    np.testing.assert_allclose(got.weights, expected.weights, rtol=rel, atol=rel)
    assert got.profile_cosine == pytest.approx(expected.profile_cosine, rel=rel, abs=rel)
    assert got.global_cosine == pytest.approx(expected.global_cosine, rel=rel, abs=rel)


@given(blocked_pairs(elements=summable), st.data())
@PROPERTY_SETTINGS
def test_from_sums_agrees_with_block_cosines_also_sharded(pair, data):
    x_blocks, y_blocks = pair
    expected = block_cosines(x_blocks, y_blocks)
    assert_same_result(block_cosines_from_sums(*sums_of(x_blocks, y_blocks)), expected)
    # Each block cut into shards at random places (as across devices), the sums added.
    cuts = [
        sorted(data.draw(st.lists(st.integers(0, x.size), max_size=3), label=f"cuts {i}"))
        for i, x in enumerate(x_blocks)
    ]
    sharded = block_cosines_from_sums(*sums_of(x_blocks, y_blocks, cuts))
    assert_same_result(sharded, expected)


@given(blocked_pairs(elements=summable), st.integers(-450, 450), st.integers(-450, 450))
@PROPERTY_SETTINGS
def test_from_sums_exact_under_power_of_two_scaling(pair, power_x, power_y):
    # Scaling x by 2**p multiplies x_sq by 4**p and the dots by 2**p: exact, so the
    # cosines and weights must not move by a single bit.
    dots, x_sq, y_sq = (np.array(v) for v in sums_of(*pair))
    powers = (power_x + power_y, 2 * power_x, 2 * power_y)
    with np.errstate(over="ignore", under="ignore"):
        scaled = [np.ldexp(a, p) for a, p in zip((dots, x_sq, y_sq), powers, strict=True)]
        exact = all(
            np.isfinite(a).all() and (np.ldexp(a, -p) == b).all()
            for a, b, p in zip(scaled, (dots, x_sq, y_sq), powers, strict=True)
        )
    assume(exact)  # no bits lost to underflow
    expected = block_cosines_from_sums(dots, x_sq, y_sq)
    got = block_cosines_from_sums(*scaled)
    np.testing.assert_array_equal(got.local, expected.local)
    np.testing.assert_array_equal(got.weights, expected.weights)
    assert got.global_cosine == expected.global_cosine
    assert got.profile_cosine == expected.profile_cosine


@pytest.mark.parametrize(
    ("x_scale", "y_scale"),
    [
        (1e150, 1e150),  # sums near 1e300: their products overflow
        (1e-150, 1e-150),  # sums near 1e-300: their products underflow
        (1e150, 1e-150),
        (1e153, 1.0),  # x_sq near the largest float
        (2.0**-537, 1.0),  # x_sq subnormal
        (2.0**-537, 1e153),
    ],
)
def test_from_sums_at_the_ends_of_the_float_range(x_scale, y_scale):
    x_blocks = [np.array([3.0, 4.0]), np.array([1.0, 0.0]), np.array([2.0, 2.0])]
    y_blocks = [np.array([4.0, 3.0]), np.array([0.0, 1.0]), np.array([-1.0, 3.0])]
    expected = block_cosines(x_blocks, y_blocks)
    dots, x_sq, y_sq = (np.array(v) for v in sums_of(x_blocks, y_blocks))
    got = block_cosines_from_sums(
        dots * x_scale * y_scale, x_sq * x_scale * x_scale, y_sq * y_scale * y_scale
    )
    np.testing.assert_allclose(got.local, expected.local, rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(got.weights, expected.weights, rtol=1e-14, atol=1e-15)
    assert got.global_cosine == pytest.approx(expected.global_cosine, rel=1e-14)
    assert got.profile_cosine == pytest.approx(expected.profile_cosine, rel=1e-14)
    np.testing.assert_allclose(got.x_norms, expected.x_norms * x_scale, rtol=1e-14)
    np.testing.assert_allclose(got.y_norms, expected.y_norms * y_scale, rtol=1e-14)


def test_from_sums_extremes_of_single_sums():
    # The largest float and the smallest subnormal as sums: exact cosines, no NaN.
    big, tiny = np.finfo(np.float64).max, 5e-324
    result = block_cosines_from_sums([big, tiny], [big, tiny], [big, tiny])
    np.testing.assert_array_equal(result.local, [1.0, 1.0])
    assert result.global_cosine == 1.0
    assert result.x_norms[0] == pytest.approx(math.sqrt(big), rel=1e-15)
    assert result.x_norms[1] == pytest.approx(math.sqrt(tiny), rel=1e-15)
    # Global sums beyond the largest float still give the global cosine.
    result = block_cosines_from_sums([big, -big], [big, big], [big, big])
    np.testing.assert_array_equal(result.local, [1.0, -1.0])
    assert result.global_cosine == 0.0
    assert result.profile_cosine == pytest.approx(1.0, rel=1e-15)


@given(st.floats(min_value=0, exclude_min=True, allow_infinity=False, allow_subnormal=True))
@PROPERTY_SETTINGS
def test_from_sums_equal_sums_give_exactly_one(total):
    assert block_cosines_from_sums([total], [total], [total]).local[0] == 1.0
    assert block_cosines_from_sums([-total], [total], [total]).local[0] == -1.0


def test_from_sums_zero_blocks_follow_block_cosines():
    x_blocks = [np.zeros(2), np.array([1.0, 2.0]), np.array([3.0, 0.0])]
    y_blocks = [np.array([1.0, 1.0]), np.array([2.0, 4.0]), np.zeros(2)]
    expected = block_cosines(x_blocks, y_blocks)
    got = block_cosines_from_sums(*sums_of(x_blocks, y_blocks))
    assert_same_result(got, expected, rel=1e-15)
    assert np.isnan(got.local[[0, 2]]).all() and (got.weights[[0, 2]] == 0).all()


def test_from_sums_names_and_input_kinds():
    names = {"W1": 0, "b1": 1}.keys()  # any iterable of names, as from a state dict
    result = block_cosines_from_sums(
        np.array([2, 1], dtype=np.int64), np.float32([1, 1]), (4.0, 1.0), names=names
    )
    assert result.names == ("W1", "b1")
    np.testing.assert_array_equal(result.local, [1.0, 1.0])
    assert result.bounds() == pytest.approx((result.global_cosine, result.global_cosine))


def test_cauchy_schwarz_tolerance_is_the_documented_one():
    assert similarity._SUMS_RTOL == 1e-5
    inside = block_cosines_from_sums([2.0 * (1 + 0.99e-5)], [1.0], [4.0])
    assert inside.local[0] == 1.0 and inside.global_cosine == 1.0
    with pytest.raises(ValueError, match=r"1\.00001.* times"):
        block_cosines_from_sums([2.0 * (1 + 1.01e-5)], [1.0], [4.0])


def to_strict(blocks, dtype=None, device=None):
    return [xp.asarray(block, dtype=dtype, device=device) for block in blocks]


@given(blocked_pairs())
@PROPERTY_SETTINGS
def test_array_api_blocks_agree_with_numpy(pair):
    x_blocks, y_blocks = pair
    expected = block_cosines(x_blocks, y_blocks)
    got = block_cosines(to_strict(x_blocks), to_strict(y_blocks))
    assert_same_result(got, expected)
    # Named blocks, and blocks of several dimensions, as for a model's tensors.
    named = {f"layer{i}": xp.reshape(b, (1, -1)) for i, b in enumerate(to_strict(x_blocks))}
    named_y = {f"layer{i}": xp.reshape(b, (1, -1)) for i, b in enumerate(to_strict(y_blocks))}
    result = block_cosines(named, named_y)
    assert result.names == tuple(named)
    assert result.global_cosine == pytest.approx(expected.global_cosine, rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("scale", [1e300, 1e-300, 1e-310, 1.5e308, 2.0**-1000])
def test_array_api_blocks_at_extreme_magnitudes(scale):
    rng = np.random.default_rng(7)
    x_blocks = [rng.standard_normal(5), rng.standard_normal(3)]
    y_blocks = [x + rng.standard_normal(x.size) for x in x_blocks]
    expected = block_cosines(x_blocks, y_blocks)
    big = [b * (scale / 4) for b in x_blocks], [b * (scale / 4) for b in y_blocks]
    got = block_cosines(to_strict(big[0]), to_strict(big[1]))
    # 1e-310 is subnormal: its entries keep fewer digits.
    rel = 1e-9 if scale < 1e-307 else 1e-14
    np.testing.assert_allclose(got.local, expected.local, rtol=rel, atol=rel)
    assert got.global_cosine == pytest.approx(expected.global_cosine, rel=rel)
    assert got.profile_cosine == pytest.approx(expected.profile_cosine, rel=rel)
    # The same blocks through the NumPy path: the two paths agree.
    assert_same_result(got, block_cosines(*big), rel=1e-14)


def test_array_api_mixed_magnitudes_in_one_block():
    x_blocks = [np.array([1e300, 2e300]), np.array([1e-300, 3e-300]), np.array([5.0, 1.0])]
    y_blocks = [np.array([2e300, 1e300]), np.array([-3e-300, 1e-300]), np.array([1.0, 5.0])]
    expected = block_cosines(x_blocks, y_blocks)
    assert_same_result(block_cosines(to_strict(x_blocks), to_strict(y_blocks)), expected, 1e-15)
    assert block_cosines([xp.asarray([1e300, 1e-300])], [xp.asarray([1e300, 1e-300])]).local[
        0
    ] == pytest.approx(1.0, rel=1e-15)


@pytest.mark.parametrize("dtype", ["float32", "int16", "int64", "uint8", "bool"])
def test_array_api_narrow_dtypes_accumulate_in_float64(dtype):
    rng = np.random.default_rng(11)
    x = rng.integers(0 if dtype in ("uint8", "bool") else -50, 50, size=300)
    y = rng.integers(0 if dtype in ("uint8", "bool") else -50, 50, size=300)
    x, y = x.astype(dtype), y.astype(dtype)
    expected = block_cosines([x[:100], x[100:]], [y[:100], y[100:]])
    got = block_cosines(to_strict([x[:100], x[100:]]), to_strict([y[:100], y[100:]]))
    assert_same_result(got, expected, rel=1e-14)


def test_array_api_float32_extremes_do_not_overflow():
    x = np.full(10_000, 3e38, dtype=np.float32)
    y = np.full(10_000, 1e38, dtype=np.float32)
    assert block_cosines(to_strict([x]), to_strict([y])).local[0] == pytest.approx(1.0)


@pytest.mark.parametrize("scale", [1.0, 1e30, 1e-30, 3e38])
def test_array_api_device_without_float64_works_in_float32(scale):
    # array_api_strict's "no_float64" device stands for a GPU without float64 (Apple MPS).
    device = xp.Device("no_float64")
    rng = np.random.default_rng(5)
    x_blocks = [
        rng.standard_normal(50).astype(np.float32),
        rng.standard_normal(7).astype(np.float32),
    ]
    y_blocks = [(x + rng.standard_normal(x.size)).astype(np.float32) for x in x_blocks]
    expected = block_cosines(x_blocks, y_blocks)
    scaled = [[b * np.float32(scale / 4) for b in blocks] for blocks in (x_blocks, y_blocks)]
    got = block_cosines(*(to_strict(blocks, device=device) for blocks in scaled))
    np.testing.assert_allclose(got.local, expected.local, rtol=1e-5, atol=1e-6)
    assert got.global_cosine == pytest.approx(expected.global_cosine, rel=1e-5)


def test_array_api_blocks_read_in_slices(monkeypatch):
    # Long blocks are summed slice by slice on the device: same result for any slice size.
    rng = np.random.default_rng(2)
    x_blocks = [rng.standard_normal(37) * 1e200, rng.standard_normal(8)]
    y_blocks = [rng.standard_normal(37) * 1e200, rng.standard_normal(8)]
    whole = block_cosines(to_strict(x_blocks), to_strict(y_blocks))
    monkeypatch.setattr(similarity, "_XP_CHUNK", 5)
    sliced = block_cosines(to_strict(x_blocks), to_strict(y_blocks))
    assert_same_result(sliced, whole, rel=1e-14)
    assert_same_result(sliced, block_cosines(x_blocks, y_blocks), rel=1e-14)


def test_array_api_three_numbers_per_block_reach_the_host(monkeypatch):
    # In the common case (sums in the safe range), exactly three scalars per block
    # are converted to Python floats: nothing else crosses to the host.
    calls = []
    array_type = type(xp.asarray(1.0))
    original = array_type.__float__

    def counting(self):
        calls.append(self.shape)
        return original(self)

    monkeypatch.setattr(array_type, "__float__", counting)
    block_cosines(to_strict([np.ones(1000), np.ones(10)]), to_strict([np.ones(1000), -np.ones(10)]))
    assert calls == [()] * 6


def test_array_api_exact_values_kept():
    x = xp.asarray([0.1] * 1000)
    assert block_cosines([x], [x]).local[0] == 1.0
    assert block_cosines([x, x], [x, -x]).global_cosine == 0.0


def test_numpy_pairs_beside_other_library_pairs():
    # Each pair is summed in its own library; mixing happens only between pairs.
    result = block_cosines([np.ones(2), xp.ones(2)], [np.ones(2), -xp.ones(2)])
    np.testing.assert_array_equal(result.local, [1.0, -1.0])


# ---------------------------------------------------------------- cosine_bounds


@pytest.mark.parametrize(
    ("local", "x_norms", "y_norms", "message"),
    [
        ([0.5], [1.0, 1.0], [1.0, 1.0], "same length"),
        ([], [], [], "empty"),
        ([0.5, 0.5], [1.0, -1.0], [1.0, 1.0], "nonnegative"),
        ([0.5, 0.5], [1.0, np.nan], [1.0, 1.0], "finite"),
        ([0.5, 1.5], [1.0, 1.0], [1.0, 1.0], r"\[-1, 1\]"),
        ([0.5, np.nan], [1.0, 1.0], [1.0, 1.0], "nan on a block"),
        ([0.5, 0.5], [0.0, 0.0], [1.0, 1.0], "all zeros"),
    ],
)
def test_cosine_bounds_bad_input(local, x_norms, y_norms, message):
    with pytest.raises(ValueError, match=message):
        cosine_bounds(local, x_norms, y_norms)


def test_cosine_bounds_disjoint_profiles_pin_global_to_zero():
    # Blocks where only one side is nonzero have weight 0: rho = 0 and the interval is {0}.
    assert cosine_bounds([np.nan, np.nan], [1.0, 0.0], [0.0, 1.0]) == (0.0, 0.0)


norms = st.one_of(
    st.just(0.0), st.floats(1e-100, 10.0)
)  # no subnormals: blocks_with scales by them


@given(st.lists(st.tuples(st.floats(-1, 1), norms, norms), min_size=1, max_size=6))
@PROPERTY_SETTINGS
def test_blocks_with_realises_norms_and_cosines(rows):
    local, x_norms, y_norms = (np.array(column) for column in zip(*rows, strict=True))
    assume(x_norms.any() and y_norms.any())
    result = block_cosines(*blocks_with(local, x_norms, y_norms))
    np.testing.assert_allclose(result.x_norms, x_norms, rtol=1e-14)
    np.testing.assert_allclose(result.y_norms, y_norms, rtol=1e-14)
    both = (x_norms > 0) & (y_norms > 0)
    np.testing.assert_allclose(result.local[both], local[both], atol=1e-12)
    assert np.isnan(result.local[~both]).all()


def test_blocks_with_bad_input():
    with pytest.raises(ValueError, match="same length"):
        blocks_with([0.5], [1.0, 2.0], [1.0, 2.0])
    with pytest.raises(ValueError, match=r"\[-1, 1\]"):
        blocks_with([1.5], [1.0], [1.0])
    with pytest.raises(ValueError, match="nonnegative"):
        blocks_with([0.5], [-1.0], [1.0])


# ---------------------------------------------------------------- exactness users rely on

any_magnitude = st.floats(
    min_value=-1e300, max_value=1e300, allow_nan=False, allow_infinity=False, allow_subnormal=True
)


@st.composite
def nonzero_vectors(draw, max_size=12):
    x = draw(hnp.arrays(np.float64, draw(st.integers(1, max_size)), elements=any_magnitude))
    assume(x.any())
    return x


@given(nonzero_vectors(), st.integers(-60, 60))
@PROPERTY_SETTINGS
def test_exact_values_for_self_multiples_and_opposites(x, power):
    # Debugging code compares cos == 1.0 (chapter 7): these must be exact, not 0.9999999999999998.
    assert cosine(x, x) == 1.0
    assert cosine(x, -x) == -1.0
    with np.errstate(over="ignore", under="ignore"):
        scaled = x * 2.0**power
        exact = np.isfinite(scaled).all() and (scaled / 2.0**power == x).all()
    if exact:  # a positive multiple that is exactly representable
        assert cosine(x, scaled) == 1.0
    assert block_cosines([x, x], [x, x]).global_cosine == 1.0


def test_exact_values_known_failures_of_the_naive_formula():
    assert cosine([1.0, 1.0], [1.0, 1.0]) == 1.0  # 0.9999999999999998 with sqrt(a)*sqrt(b)
    assert cosine([0.1] * 1000, [0.1] * 1000) == 1.0
    assert cosine([3.0, 1e-300], [6.0, 2e-300]) == 1.0


@given(nonzero_vectors(), nonzero_vectors())
@PROPERTY_SETTINGS
def test_symmetric_bit_for_bit_and_bounded(x, y):
    size = min(x.size, y.size)
    x, y = x[:size], y[:size]
    assume(x.any() and y.any())
    forward, backward = cosine(x, y), cosine(y, x)
    assert forward == backward  # bit for bit, not approximately
    assert -1.0 <= forward <= 1.0
    result = block_cosines(
        [x[:1], x[1:] if size > 1 else x[:1]], [y[:1], y[1:] if size > 1 else y[:1]]
    )
    assert -1.0 <= result.global_cosine <= 1.0
    assert (np.nan_to_num(np.abs(result.local)) <= 1.0).all()


# ---------------------------------------------------------------- fixed summation order


def neumaier(totals, compensations, lane, value):
    total = totals[lane]
    new = total + value
    if abs(total) >= abs(value):
        compensations[lane] += (total - new) + value
    else:
        compensations[lane] += (value - new) + total
    totals[lane] = new


def lane_order_sums(x, y, block_size=8192, lanes=32):
    """Reference in plain Python of the documented order.

    Entry i goes to lane i % 32 and lanes add in index order; after every 8192
    entries and after the last full group of 32, lane sums are added to running
    totals with Neumaier's compensation and restart at zero; the last n % 32 entries
    are added to the totals of lanes 0, 1, ... the same way; finally all totals and
    compensations are added exactly (math.fsum).
    """
    x, y = [float(v) for v in x], [float(v) for v in y]
    n = len(x)
    full = n - n % lanes
    totals = [[0.0] * lanes for _ in range(3)]
    compensations = [[0.0] * lanes for _ in range(3)]
    block = [[0.0] * lanes for _ in range(3)]
    for i in range(full):
        lane = i % lanes
        block[0][lane] += x[i] * x[i]
        block[1][lane] += y[i] * y[i]
        block[2][lane] += x[i] * y[i]
        if (i + 1) % block_size == 0 or i + 1 == full:
            for row in range(3):
                for lane in range(lanes):
                    neumaier(totals[row], compensations[row], lane, block[row][lane])
                    block[row][lane] = 0.0
    for i in range(full, n):
        for row, value in enumerate((x[i] * x[i], y[i] * y[i], x[i] * y[i])):
            neumaier(totals[row], compensations[row], i - full, value)
    return tuple(math.fsum(totals[row] + compensations[row]) for row in range(3))


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16, np.int32])
@pytest.mark.parametrize("size", [1, 3, 4, 7, 31, 33, 1000, 70_001])
def test_sums_follow_the_documented_order_bit_for_bit(dtype, size):
    # The order is fixed by the code, not by the CPU: the compiled kernel must agree
    # with a plain-Python evaluation of the same order to the last bit, for every
    # dtype path (direct, and cast in chunks).
    rng = np.random.default_rng(size)
    x = (rng.standard_normal(size) * 100).astype(dtype)
    y = (rng.standard_normal(size) * 100).astype(dtype)
    if size > 5000:
        x, y = x[:5003], y[:5003]  # the Python reference is slow; chunk edges still covered
        x = np.concatenate([x] * 14)[:size]
        y = np.concatenate([y] * 14)[:size]
    assert similarity._raw_sums(x, y) == lane_order_sums(x, y)


def test_chunked_and_direct_paths_agree_bit_for_bit():
    rng = np.random.default_rng(3)
    ints = rng.integers(-1000, 1000, size=100_003)
    floats = ints.astype(np.float64)
    assert similarity._raw_sums(ints, ints[::-1]) == similarity._raw_sums(floats, floats[::-1])


finite_floats = st.floats(allow_nan=False, allow_infinity=False, width=64)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.one_of(
            finite_floats,
            st.sampled_from([1e308, -1e308, 1e-308, 5e-324, 1.0, -1.0, 2.0**53, 1e16]),
        ),
        min_size=1,
        max_size=64,
    )
)
def test_compiled_exact_sum_is_math_fsum(values):
    # The compiled sum replaces math.fsum for batches of blocks: the same bits,
    # half-way cases of the final rounding included; an overflow gives a value
    # that is not finite (math.fsum raises).
    array = np.array(values, dtype=np.float64)
    try:
        expected = math.fsum(values)
    except OverflowError:
        assert not math.isfinite(similarity._exact_sum(array))
        return
    assert similarity._exact_sum(array) == expected  # (the sign of a zero aside)


@pytest.mark.parametrize(
    "values",
    [
        [1.0, 1e100, 1.0, -1e100],
        [1e16, 1.0, 1e-16],  # a half-way case settled by the partial below
        [2.0**53, 1.0, -(2.0**-52)],
        [0.1] * 10,
        [-0.0, -0.0],
        [math.nan, 1.0],
        [math.inf, -math.inf],
    ],
)
def test_compiled_exact_sum_examples(values):
    array = np.array(values)
    if not all(map(math.isfinite, values)):
        assert math.isnan(similarity._exact_sum(array))
        return
    assert similarity._exact_sum(array) == math.fsum(values)
