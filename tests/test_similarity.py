"""Tests for cosine_book.similarity: the claims of chapters 2 and 3 as properties."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from cosine_book import similarity
from cosine_book.similarity import BlockCosines, block_cosines, blocks_with, cosine, cosine_bounds

PROPERTY_SETTINGS = settings(max_examples=150, deadline=None)

finite = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, allow_infinity=False)


@st.composite
def blocked_pairs(draw, min_blocks=1, max_blocks=6, max_size=5):
    """Two lists of paired blocks with random sizes, neither whole vector zero."""
    n_blocks = draw(st.integers(min_blocks, max_blocks))
    sizes = draw(st.lists(st.integers(1, max_size), min_size=n_blocks, max_size=n_blocks))
    x_blocks = [draw(hnp.arrays(np.float64, size, elements=finite)) for size in sizes]
    y_blocks = [draw(hnp.arrays(np.float64, size, elements=finite)) for size in sizes]
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
    rng = np.random.default_rng(1)
    x_norms, y_norms = rng.random(5), rng.random(5)
    local = np.full(5, -0.3)
    lower, upper = cosine_bounds(local, x_norms, y_norms)
    rho = naive_cosine(x_norms, y_norms)
    assert lower == pytest.approx(-0.3 * rho) and upper == pytest.approx(-0.3 * rho)


def test_mapping_blocks_and_names():
    update = {"W1": np.ones((3, 2)), "b1": np.array([1.0, -1.0])}
    gradient = {"b1": np.array([2.0, -2.0]), "W1": -np.ones((3, 2))}
    result = block_cosines(update, gradient)
    assert isinstance(result, BlockCosines)
    assert result.names == ("W1", "b1")
    np.testing.assert_allclose(result.local, [-1.0, 1.0])
    assert len(result) == 2


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


def lane_order_sums(x, y, block_size=8192):
    """Reference in plain Python of the documented order.

    Blocks of 8192 entries; in a block, entry i goes to lane i % 4 and lanes add in
    index order; block lane sums are added to running lanes with Neumaier's
    compensation; finally each lane is sum + compensation and the lanes are added
    as (l0 + l1) + (l2 + l3).
    """
    x, y = [float(v) for v in x], [float(v) for v in y]
    sums = [[0.0] * 4 for _ in range(3)]
    compensations = [[0.0] * 4 for _ in range(3)]
    for start in range(0, len(x), block_size):
        block = [[0.0] * 4 for _ in range(3)]
        for i in range(start, min(start + block_size, len(x))):
            lane = (i - start) % 4
            block[0][lane] += x[i] * x[i]
            block[1][lane] += y[i] * y[i]
            block[2][lane] += x[i] * y[i]
        for row in range(3):
            for lane in range(4):
                total, value = sums[row][lane], block[row][lane]
                new = total + value
                if abs(total) >= abs(value):
                    compensations[row][lane] += (total - new) + value
                else:
                    compensations[row][lane] += (value - new) + total
                sums[row][lane] = new
    lanes = [
        [s + c for s, c in zip(sums[row], compensations[row], strict=True)] for row in range(3)
    ]
    return tuple((lane[0] + lane[1]) + (lane[2] + lane[3]) for lane in lanes)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16, np.int32])
@pytest.mark.parametrize("size", [1, 3, 4, 7, 1000, 70_001])
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
