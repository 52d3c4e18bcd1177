"""Tests for cosine_book.optim: exact gradients, textbook optimizers, truncation, training."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy.optimize import minimize

from cosine_book.datasets import load_digits_split
from cosine_book.optim import (
    SGD,
    Adam,
    Momentum,
    init_mlp,
    mlp_loss_and_grad,
    mlp_predict,
    train,
    truncate_to_cosine,
    truncate_update,
)
from cosine_book.similarity import block_cosines, cosine

# ------------------------------------------------------------------------- model


def _small_problem(seed: int = 0):
    rng = np.random.default_rng(seed)
    params = init_mlp(n_inputs=5, n_hidden=4, n_classes=3, seed=seed)
    # Nonzero biases so that their gradients are exercised away from the start.
    params["b1"] = rng.normal(size=4)
    params["b2"] = rng.normal(size=3)
    inputs = rng.normal(size=(7, 5))
    labels = rng.integers(0, 3, size=7)
    return params, inputs, labels


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_gradient_matches_central_finite_differences(seed):
    params, inputs, labels = _small_problem(seed)
    _, grads, _ = mlp_loss_and_grad(params, inputs, labels)
    step = 1e-6
    for name, value in params.items():
        numeric = np.zeros_like(value)
        for index in np.ndindex(value.shape):
            plus = {key: array.copy() for key, array in params.items()}
            minus = {key: array.copy() for key, array in params.items()}
            plus[name][index] += step
            minus[name][index] -= step
            numeric[index] = (
                mlp_loss_and_grad(plus, inputs, labels)[0]
                - mlp_loss_and_grad(minus, inputs, labels)[0]
            ) / (2 * step)
        np.testing.assert_allclose(grads[name], numeric, rtol=1e-6, atol=1e-9, err_msg=name)


def test_loss_and_accuracy_match_a_direct_computation():
    params, inputs, labels = _small_problem(3)
    loss, _, accuracy = mlp_loss_and_grad(params, inputs, labels)
    logits = mlp_predict(params, inputs)
    probabilities = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    assert loss == pytest.approx(-np.mean(np.log(probabilities[np.arange(7), labels])))
    assert accuracy == pytest.approx(np.mean(logits.argmax(axis=1) == labels))


def test_loss_is_stable_for_huge_logits():
    params, inputs, labels = _small_problem(4)
    params["W2"] = params["W2"] * 1e4
    loss, grads, _ = mlp_loss_and_grad(params, inputs, labels)
    assert np.isfinite(loss)
    assert all(np.isfinite(value).all() for value in grads.values())


def test_model_rejects_bad_input():
    params, inputs, labels = _small_problem()
    with pytest.raises(ValueError, match="shape"):
        mlp_loss_and_grad(params, inputs[:, :3], labels)
    with pytest.raises(ValueError, match="labels"):
        mlp_loss_and_grad(params, inputs, labels + 3)
    with pytest.raises(ValueError, match="labels must have shape"):
        mlp_loss_and_grad(params, inputs, labels[:3])
    with pytest.raises(ValueError, match="NaN"):
        mlp_loss_and_grad(params, np.full_like(inputs, np.nan), labels)
    with pytest.raises(ValueError, match="missing"):
        mlp_predict({"W1": params["W1"]}, inputs)
    with pytest.raises(ValueError, match="positive integer"):
        init_mlp(n_hidden=0)


# -------------------------------------------------------------------- optimizers

# A tiny quadratic f(theta) = 0.5 theta' A theta - b' theta, split into two tensors.
_A = np.array([[3.0, 0.5, 0.0], [0.5, 1.0, 0.2], [0.0, 0.2, 0.5]])
_B = np.array([1.0, -2.0, 0.5])


def _quadratic_grad(theta):
    return _A @ theta - _B


def _as_blocks(theta):
    return {"w": theta[:2].copy(), "b": theta[2:].copy()}


def _from_blocks(blocks):
    return np.concatenate([blocks["w"], blocks["b"]])


def _run_optimizer(optimizer, theta0, steps):
    theta = theta0.copy()
    state = optimizer.init(_as_blocks(theta))
    path = [theta.copy()]
    for _ in range(steps):
        update, state = optimizer.direction(_as_blocks(_quadratic_grad(theta)), state)
        theta = theta - optimizer.learning_rate * _from_blocks(update)
        path.append(theta.copy())
    return np.array(path)


def test_sgd_is_textbook_gradient_descent():
    theta0 = np.array([1.0, 2.0, -1.0])
    path = _run_optimizer(SGD(learning_rate=0.2), theta0, 10)
    theta = theta0.copy()
    for t in range(10):
        theta = theta - 0.2 * _quadratic_grad(theta)
        np.testing.assert_allclose(path[t + 1], theta, rtol=1e-13)


def test_momentum_is_polyak_heavy_ball():
    # theta_{t+1} = theta_t - eta grad(theta_t) + beta (theta_t - theta_{t-1}), theta_{-1} = theta_0
    eta, beta = 0.1, 0.8
    theta0 = np.array([1.0, 2.0, -1.0])
    path = _run_optimizer(Momentum(learning_rate=eta, beta=beta), theta0, 15)
    previous, theta = theta0.copy(), theta0.copy()
    for t in range(15):
        previous, theta = theta, theta - eta * _quadratic_grad(theta) + beta * (theta - previous)
        np.testing.assert_allclose(path[t + 1], theta, rtol=1e-12, atol=1e-14)


def test_adam_is_algorithm_1_of_kingma_and_ba():
    alpha, beta1, beta2, eps = 0.05, 0.9, 0.999, 1e-8
    theta0 = np.array([1.0, 2.0, -1.0])
    path = _run_optimizer(Adam(alpha, beta1, beta2, eps), theta0, 12)
    # The paper's algorithm, coordinate by coordinate in plain Python floats.
    theta = [float(v) for v in theta0]
    m, v = [0.0] * 3, [0.0] * 3
    for t in range(1, 13):
        g = [float(value) for value in _quadratic_grad(np.array(theta))]
        for i in range(3):
            m[i] = beta1 * m[i] + (1 - beta1) * g[i]
            v[i] = beta2 * v[i] + (1 - beta2) * g[i] ** 2
            m_hat = m[i] / (1 - beta1**t)
            v_hat = v[i] / (1 - beta2**t)
            theta[i] = theta[i] - alpha * m_hat / (v_hat**0.5 + eps)
        np.testing.assert_allclose(path[t], theta, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("optimizer", [SGD(0.1), Momentum(0.1), Adam(0.01)])
def test_optimizers_do_not_mutate_their_inputs(optimizer):
    grads = {"w": np.array([1.0, -2.0]), "b": np.array([0.5])}
    state = optimizer.init(grads)
    state, _ = optimizer.direction(grads, state)[1], None
    snapshot_grads = {key: value.copy() for key, value in grads.items()}
    first, _ = optimizer.direction(grads, state)
    second, _ = optimizer.direction(grads, state)  # same state again: same update
    for key in grads:
        np.testing.assert_array_equal(first[key], second[key])
        np.testing.assert_array_equal(grads[key], snapshot_grads[key])


@pytest.mark.parametrize(
    ("factory", "match"),
    [
        (lambda: SGD(0.0), "learning_rate"),
        (lambda: Momentum(0.1, beta=1.0), "beta"),
        (lambda: Adam(0.1, beta1=-0.1), "beta1"),
        (lambda: Adam(0.1, beta2=1.5), "beta2"),
        (lambda: Adam(0.1, eps=0.0), "eps"),
    ],
)
def test_optimizers_reject_bad_hyperparameters(factory, match):
    with pytest.raises(ValueError, match=match):
        factory()


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
    with pytest.raises(ValueError, match="same tensor names"):
        truncate_update({"a": [1.0]}, {"b": [1.0]}, 0.5)


def test_truncate_update_gives_every_tensor_local_cosine_at_least_threshold():
    rng = np.random.default_rng(5)
    update = {"W": rng.normal(size=(4, 3)), "b": rng.normal(size=3), "c": rng.normal(size=2)}
    gradient = {name: rng.normal(size=value.shape) for name, value in update.items()}
    truncated = truncate_update(update, gradient, 0.7)
    assert list(truncated) == list(update)
    local = block_cosines(truncated, gradient).local
    assert np.all(local[~np.isnan(local)] >= 0.7 - 1e-12)


# ---------------------------------------------------------------------- training


@pytest.fixture(scope="module")
def digits():
    return load_digits_split()


def _short_run(digits, optimizer, **options):
    return train(optimizer, digits.x_train, digits.y_train, digits.x_test, digits.y_test, **options)


def test_runs_are_reproducible_from_the_seed(digits):
    first = _short_run(digits, Adam(0.01), steps=15, threshold=0.8, seed=3)
    second = _short_run(digits, Adam(0.01), steps=15, threshold=0.8, seed=3)
    other = _short_run(digits, Adam(0.01), steps=15, threshold=0.8, seed=4)
    for field in ("loss", "local", "raw_local", "global_cosine", "weights", "update_norms"):
        np.testing.assert_array_equal(getattr(first, field), getattr(second, field))
    assert not np.array_equal(first.loss, other.loss)


def test_minibatch_runs_are_reproducible_and_differ_from_full_batch(digits):
    first = _short_run(digits, Momentum(0.05), steps=10, batch_size=64, seed=1)
    second = _short_run(digits, Momentum(0.05), steps=10, batch_size=64, seed=1)
    full = _short_run(digits, Momentum(0.05), steps=10, seed=1)
    np.testing.assert_array_equal(first.global_cosine, second.global_cosine)
    assert not np.array_equal(first.global_cosine, full.global_cosine)


@pytest.mark.parametrize("optimizer", [SGD(0.5), Momentum(0.1), Adam(0.01)])
def test_training_lowers_the_loss(digits, optimizer):
    run = _short_run(digits, optimizer, steps=40)
    assert run.loss[-1] < 0.8 * run.loss[0]
    assert run.accuracy[-1] > run.accuracy[0]


def test_records_satisfy_the_block_identity_and_the_bounds(digits):
    run = _short_run(digits, Adam(0.01), steps=30, threshold=0.8)
    np.testing.assert_allclose(
        run.global_cosine, np.nansum(run.weights * run.local, axis=1), atol=1e-12
    )
    np.testing.assert_allclose(run.profile_cosine, run.weights.sum(axis=1), atol=1e-12)
    assert np.all(run.local >= 0.8 - 1e-12)
    assert np.all(run.global_cosine >= run.lower_bound - 1e-12)
    assert np.all(run.global_cosine <= run.upper_bound + 1e-12)
    # Truncation acted: at some step a raw local cosine was below the threshold.
    assert np.any(run.raw_local < 0.8)


def test_sgd_update_is_the_gradient(digits):
    run = _short_run(digits, SGD(0.5), steps=5)
    np.testing.assert_allclose(run.local, 1.0, atol=1e-12)
    np.testing.assert_allclose(run.global_cosine, 1.0, atol=1e-12)


def test_without_threshold_applied_equals_raw(digits):
    run = _short_run(digits, Momentum(0.1), steps=10)
    np.testing.assert_array_equal(run.local, run.raw_local)
    assert run.threshold is None


def test_train_rejects_bad_input(digits):
    with pytest.raises(ValueError, match="steps"):
        _short_run(digits, SGD(0.1), steps=0)
    with pytest.raises(ValueError, match="threshold"):
        _short_run(digits, SGD(0.1), steps=2, threshold=1.2)
    with pytest.raises(ValueError, match="batch_size"):
        _short_run(digits, SGD(0.1), steps=2, batch_size=0)
    with pytest.raises(ValueError, match="matching length"):
        train(SGD(0.1), digits.x_train, digits.y_train[:5], digits.x_test, digits.y_test)


def test_gradient_check_is_small_for_the_exact_gradient_and_large_for_a_wrong_one(monkeypatch):
    from cosine_book import optim

    params, inputs, labels = _small_problem(6)
    assert optim.max_gradient_error(params, inputs, labels, n_entries=40) < 1e-6
    exact = optim.mlp_loss_and_grad

    def wrong(params, inputs, labels):
        loss, grads, accuracy = exact(params, inputs, labels)
        return loss, {**grads, "b1": 2 * grads["b1"]}, accuracy

    monkeypatch.setattr(optim, "mlp_loss_and_grad", wrong)
    # All 4 + 3 + 20 + 12 entries: the doubled b1 gradient must show.
    assert optim.max_gradient_error(params, inputs, labels, n_entries=39) > 1e-3
    with pytest.raises(ValueError, match="n_entries"):
        optim.max_gradient_error(params, inputs, labels, n_entries=0)


def test_run_grid_covers_every_optimizer_and_threshold(digits):
    from cosine_book.optim import book_optimizers, run_grid

    runs = run_grid(digits, (None, 0.9), steps=3)
    assert set(runs) == {(name, t) for name in book_optimizers() for t in (None, 0.9)}
    assert all(run.threshold == key[1] and run.optimizer == key[0] for key, run in runs.items())
    # Same seed: every run starts from the same parameters, hence the same first loss.
    assert len({float(run.loss[0]) for run in runs.values()}) == 1
