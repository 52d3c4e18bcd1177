"""Tests for cosine_book.optim: :func:`truncate_to_cosine`, the exact projection of
chapter 1's Theorem 1.1 (applied to PyTorch tensors by
``cosine_book.training.truncate_tensor``, tested in ``test_training.py``).
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse
from bad_inputs import masked
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy.optimize import minimize

from cosine_book.optim import truncate_to_cosine
from cosine_book.similarity import cosine

# -------------------------------------------------------------------- truncation

_finite = st.floats(-10, 10, allow_nan=False, allow_infinity=False)


@st.composite
def _truncation_cases(draw):
    size = draw(st.integers(1, 6))
    update = draw(arrays(np.float64, size, elements=_finite))
    gradient = draw(arrays(np.float64, size, elements=_finite))
    assume(np.linalg.norm(gradient) > 1e-3)
    threshold = draw(st.floats(0.0, 1.0))
    return update, gradient, threshold


def _cone_gap(vector, gradient, threshold):
    """How far cos(vector, gradient) is above the threshold (0 for the zero vector)."""
    if not np.any(vector):
        return 0.0
    return cosine(vector, gradient) - threshold


@settings(max_examples=300, deadline=None)
@given(_truncation_cases())
def test_truncation_lands_in_the_cone(case):
    update, gradient, threshold = case
    result = truncate_to_cosine(update, gradient, threshold)
    assert result.shape == update.shape
    assert _cone_gap(result, gradient, threshold) >= -1e-9


@settings(max_examples=300, deadline=None)
@given(_truncation_cases())
def test_truncation_satisfies_the_projection_optimality_conditions(case):
    # Moreau: p is the projection of u onto the closed convex cone K iff p in K,
    # <u - p, p> = 0 and u - p lies in the polar cone of K, which for this circular
    # cone means cos(p - u, g) >= sqrt(1 - lambda^2) (or u == p).
    update, gradient, threshold = case
    result = truncate_to_cosine(update, gradient, threshold)
    residual = update - result
    scale = max(1.0, float(np.linalg.norm(update)) ** 2)
    assert abs(float(residual @ result)) <= 1e-9 * scale
    if np.linalg.norm(residual) > 1e-9 * np.sqrt(scale):
        assert cosine(-residual, gradient) >= np.sqrt(1 - threshold**2) - 1e-7


@settings(max_examples=150, deadline=None)
@given(_truncation_cases(), st.integers(0, 2**32 - 1))
def test_truncation_is_nearer_than_any_sampled_vector_of_the_cone(case, seed):
    update, gradient, threshold = case
    result = truncate_to_cosine(update, gradient, threshold)
    best = float(np.linalg.norm(update - result))
    rng = np.random.default_rng(seed)
    g_unit = gradient / np.linalg.norm(gradient)
    # Random directions d in the cone; the nearest point of the ray {t d, t >= 0} to u
    # is max(<u, d>, 0) d, so the squared distance to the ray is ||u||^2 - max(<u,d>,0)^2.
    noise = rng.normal(size=(400, update.size))
    noise -= np.outer(noise @ g_unit, g_unit)
    norms = np.linalg.norm(noise, axis=1, keepdims=True)
    across = np.divide(noise, norms, out=np.zeros_like(noise), where=norms > 0)
    cos_angle = rng.uniform(threshold, 1.0, size=(400, 1))
    directions = cos_angle * g_unit + np.sqrt(1 - cos_angle**2) * across
    reach = np.maximum(directions @ update, 0.0)
    distances = np.sqrt(np.maximum(update @ update - reach**2, 0.0))
    assert best <= distances.min() + 1e-9 * max(1.0, float(np.linalg.norm(update)))


@pytest.mark.parametrize("seed", range(6))
def test_truncation_agrees_with_a_numerical_optimizer(seed):
    rng = np.random.default_rng(seed)
    update, gradient = rng.normal(size=4), rng.normal(size=4)
    threshold = 0.9  # high enough that most draws need truncating
    result = truncate_to_cosine(update, gradient, threshold)
    g_norm = np.linalg.norm(gradient)
    solution = minimize(
        lambda v: np.sum((v - update) ** 2),
        x0=gradient,  # a feasible start inside the cone
        jac=lambda v: 2 * (v - update),
        constraints=[
            {"type": "ineq", "fun": lambda v: v @ gradient - threshold * g_norm * np.linalg.norm(v)}
        ],
        method="SLSQP",
        options={"ftol": 1e-14, "maxiter": 500},
    )
    assert np.sum((result - update) ** 2) <= solution.fun + 1e-8
    np.testing.assert_allclose(result, solution.x, atol=1e-4)


def test_truncation_cases_by_hand():
    gradient = np.array([1.0, 0.0])
    # Inside the cone: unchanged (and a copy).
    inside = np.array([2.0, 1.0])
    result = truncate_to_cosine(inside, gradient, 0.6)
    np.testing.assert_array_equal(result, inside)
    assert result is not inside
    # Between: the boundary ray at cos = 0.6, sin = 0.8, scaled by <u, d>.
    np.testing.assert_allclose(truncate_to_cosine([0.0, 1.0], gradient, 0.6), [0.48, 0.64])
    np.testing.assert_allclose(truncate_to_cosine([0.0, -1.0], gradient, 0.6), [0.48, -0.64])
    # Polar cone: cos(u, g) <= -sqrt(1 - 0.36) = -0.8 gives zero; just above it does not.
    np.testing.assert_array_equal(truncate_to_cosine([-0.8, 0.6], gradient, 0.6), [0.0, 0.0])
    assert np.any(truncate_to_cosine([-0.79, 0.61], gradient, 0.6))
    np.testing.assert_array_equal(truncate_to_cosine([-3.0, 0.0], gradient, 0.0), [0.0, 0.0])
    # Threshold 0 removes only the part against the gradient; threshold 1 keeps the part along it.
    np.testing.assert_allclose(truncate_to_cosine([-1.0, 2.0], gradient, 0.0), [0.0, 2.0])
    np.testing.assert_allclose(truncate_to_cosine([3.0, 2.0], gradient, 1.0), [3.0, 0.0])
    # The zero update is in the cone.
    np.testing.assert_array_equal(truncate_to_cosine([0.0, 0.0], gradient, 0.5), [0.0, 0.0])
    # Shapes are kept.
    matrix = truncate_to_cosine(np.eye(2), np.ones((2, 2)), 0.99)
    assert matrix.shape == (2, 2)


@settings(max_examples=100, deadline=None)
@given(_truncation_cases(), st.floats(0.1, 10.0), st.floats(0.1, 10.0))
def test_truncation_commutes_with_positive_scaling(case, update_scale, gradient_scale):
    update, gradient, threshold = case
    result = truncate_to_cosine(update, gradient, threshold)
    scaled = truncate_to_cosine(update_scale * update, gradient_scale * gradient, threshold)
    np.testing.assert_allclose(scaled, update_scale * result, atol=1e-9 * (1 + update_scale * 10))
    # Projecting twice changes nothing.
    np.testing.assert_allclose(truncate_to_cosine(result, gradient, threshold), result, atol=1e-9)


def test_truncation_rejects_bad_input():
    with pytest.raises(ValueError, match="gradient is zero"):
        truncate_to_cosine([1.0, 2.0], [0.0, 0.0], 0.5)
    with pytest.raises(ValueError, match="threshold"):
        truncate_to_cosine([1.0, 2.0], [1.0, 0.0], 1.5)
    with pytest.raises(ValueError, match="threshold"):
        truncate_to_cosine([1.0, 2.0], [1.0, 0.0], -0.1)
    with pytest.raises(ValueError, match="shape"):
        truncate_to_cosine([1.0, 2.0], [1.0, 0.0, 0.0], 0.5)
    with pytest.raises(ValueError, match="finite"):
        truncate_to_cosine([np.nan, 2.0], [1.0, 0.0], 0.5)


def test_truncation_of_a_vector_along_the_gradient_at_threshold_one():
    # Found by Hypothesis: u parallel to g, where rounding puts cos(u, g) just below 1.
    update, gradient = np.array([1.0, 0.0, 0.0, 0.0, 0.0]), np.array([6.0, 0.0, 1.5, 3.0, 3.0])
    result = truncate_to_cosine(update, gradient, 1.0)
    np.testing.assert_allclose(result, 0.8 * gradient / 7.5, atol=1e-15)
    np.testing.assert_allclose(truncate_to_cosine(result, gradient, 1.0), result, atol=1e-15)


# ------------------------------------------------------------------- bad input

BAD_INPUT = [
    # truncate_to_cosine
    *[
        pytest.param(lambda v=value: truncate_to_cosine(v, [1.0, 0.0], 0.5), m, id=f"update-{k}")
        for k, value, m in [
            ("NaN", [np.nan, 2.0], "update contains NaN"),
            ("inf", [np.inf, 2.0], "update contains an infinite"),
            ("complex", [1j, 2.0], "update is complex"),
            ("masked", masked(np.array([1.0, 2.0])), "update is a masked array"),
            ("sparse", scipy.sparse.csr_array([[1.0, 2.0]]), "update is a sparse"),
            ("string", "12", "update is a string"),
            ("strings", ["1", "2"], "update is an array of strings"),
            ("ragged", [[1.0], [2.0, 3.0]], "update is ragged"),
            ("empty", [], "update is empty"),
            ("shape", [1.0, 2.0, 3.0], "update has shape \\(3,\\) but gradient"),
        ]
    ],
    pytest.param(lambda: truncate_to_cosine([1.0, 2.0], [0.0, 0.0], 0.5), "gradient is zero"),
    pytest.param(lambda: truncate_to_cosine([1.0, 2.0], [1j, 0.0], 0.5), "gradient is complex"),
    pytest.param(lambda: truncate_to_cosine([1.0, 2.0], [np.nan, 0], 0.5), "gradient contains"),
    *[
        pytest.param(lambda t=t: truncate_to_cosine([1.0, 2.0], [1.0, 0.0], t), m, id=f"thr-{t!r}")
        for t, m in [
            (-0.1, "threshold must lie in \\[0, 1\\]"),
            (1.5, "threshold must lie in \\[0, 1\\]"),
            (np.nan, "threshold must be a finite"),
            ("0.5", "threshold must be a real number"),
            (True, "threshold must be a real number"),
            (0.5j, "threshold must be a real number"),
            (None, "threshold must be a real number"),
        ]
    ],
]


@pytest.mark.parametrize(("call", "match"), BAD_INPUT)
def test_bad_input_table(call, match):
    with pytest.raises(ValueError, match=match):
        call()


GOOD_EDGE_INPUT = [
    # (call, expected): inputs at the edges that must give the right answer
    pytest.param(
        lambda: truncate_to_cosine([0.0, 1e300], [1e300, 0.0], 0.6),
        [0.48e300, 0.64e300],
        id="1e300",
    ),
    pytest.param(
        lambda: truncate_to_cosine([0.0, 1e-300], [1e-300, 0.0], 0.6),
        [0.48e-300, 0.64e-300],
        id="1e-300",
    ),
    pytest.param(
        lambda: truncate_to_cosine([0.0, 3e-310], [1e300, 0.0], 0.6) / 1e-310,
        [1.44, 1.92],
        id="subnormal-update",
    ),
    pytest.param(lambda: truncate_to_cosine([0, 1], [1, 0], 0.6), [0.48, 0.64], id="int-lists"),
    pytest.param(lambda: truncate_to_cosine([0.0, 1.0], [1.0, 0.0], 1), [0.0, 0.0], id="int-thr"),
    pytest.param(
        lambda: truncate_to_cosine(np.float32([0.0, 1.0]), [1.0, 0.0], 0.6), [0.48, 0.64], id="f32"
    ),
]


@pytest.mark.parametrize(("call", "expected"), GOOD_EDGE_INPUT)
def test_edge_input_table(call, expected):
    np.testing.assert_allclose(call(), expected, rtol=1e-12, atol=0)


@pytest.mark.parametrize("threshold", [0.0, 0.5, 0.9999999999999999, 1.0])
def test_truncation_of_parallel_and_antiparallel_vectors(threshold):
    # Rounding leaves a part across g of order 1e-16: it must not decide the result.
    u = np.array([8.5, 8.49881153, -3.25])
    np.testing.assert_array_equal(truncate_to_cosine(u, u, threshold), u)
    np.testing.assert_array_equal(truncate_to_cosine(3 * u, u, threshold), 3 * u)
    np.testing.assert_array_equal(truncate_to_cosine(u, -u, threshold), 0.0)
    np.testing.assert_array_equal(truncate_to_cosine([1.0, 1.0], [-1.0, -1.0], threshold), 0.0)


_PORTABLE = r"""
import json
import numpy as np
from cosine_book.optim import truncate_to_cosine
rng = np.random.default_rng(20261122)
results = {}
for size in (2, 7, 64, 1_000, 4_097, 100_003):
    u, g = rng.standard_normal(size), rng.standard_normal(size)
    for threshold in (0.0, 0.5, 0.9, 1.0):
        results[f"{size} {threshold}"] = truncate_to_cosine(u, g, threshold)
        results[f"{size} {threshold} huge"] = truncate_to_cosine(1e300 * u, 1e-300 * g, threshold)
update = {"W": rng.standard_normal((64, 32)), "b": rng.standard_normal(32)}
gradient = {name: rng.standard_normal(value.shape) for name, value in update.items()}
for name, value in update.items():
    results[f"update {name}"] = truncate_to_cosine(value, gradient[name], 0.8)
print(json.dumps({key: np.ravel(a).tolist() for key, a in results.items()}))
"""


def test_truncation_agrees_on_a_simulated_older_cpu():
    # Dot products may be summed in another order on another CPU: the last bits may
    # move, relative to the largest entry of each result.
    from portability import compare_here_and_there

    here, there, notes = compare_here_and_there(_PORTABLE)
    for name in here:
        scale = max(np.max(np.abs(here[name])), np.finfo(float).tiny)
        np.testing.assert_allclose(
            there[name], here[name], rtol=0, atol=1e-12 * scale, err_msg=f"{name} ({notes})"
        )
