"""Tests for cosine_book.optim: exact gradients, textbook optimizers, truncation, training."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
import scipy.sparse
from bad_inputs import masked, with_entry
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy.optimize import minimize

from cosine_book.datasets import load_digits_split
from cosine_book.optim import (
    SGD,
    Adam,
    Momentum,
    finite_difference_gap,
    init_mlp,
    linf_alignment,
    max_gradient_error,
    mlp_loss_and_grad,
    mlp_predict,
    preconditioned_cosine,
    run_grid,
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
    with pytest.raises(ValueError, match="labels has 3 labels; expected 7"):
        mlp_loss_and_grad(params, inputs, labels[:3])
    with pytest.raises(ValueError, match="NaN"):
        mlp_loss_and_grad(params, np.full_like(inputs, np.nan), labels)
    with pytest.raises(ValueError, match="missing"):
        mlp_predict({"W1": params["W1"]}, inputs)
    with pytest.raises(ValueError, match="n_hidden must be at least 1"):
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
    with pytest.raises(ValueError, match="y_train has 5 labels; expected 1348, one per row"):
        train(SGD(0.1), digits.x_train, digits.y_train[:5], digits.x_test, digits.y_test)


def test_gradient_check_is_small_for_the_exact_gradient_and_large_for_a_wrong_one(monkeypatch):
    from cosine_book import optim

    params, inputs, labels = _small_problem(6)
    assert optim.max_gradient_error(params, inputs, labels, n_entries=40) < 1e-6
    exact = optim._loss_and_grad

    def wrong(params, inputs, labels):
        loss, grads, accuracy = exact(params, inputs, labels)
        return loss, {**grads, "b1": 2 * grads["b1"]}, accuracy

    monkeypatch.setattr(optim, "_loss_and_grad", wrong)
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


def test_truncation_of_a_vector_along_the_gradient_at_threshold_one():
    # Found by Hypothesis: u parallel to g, where rounding puts cos(u, g) just below 1.
    update, gradient = np.array([1.0, 0.0, 0.0, 0.0, 0.0]), np.array([6.0, 0.0, 1.5, 3.0, 3.0])
    result = truncate_to_cosine(update, gradient, 1.0)
    np.testing.assert_allclose(result, 0.8 * gradient / 7.5, atol=1e-15)
    np.testing.assert_allclose(truncate_to_cosine(result, gradient, 1.0), result, atol=1e-15)


# ------------------------------------------------------------------- bad input

_PARAMS, _INPUTS, _LABELS = _small_problem()
_RNG = np.random.default_rng(7)
_X, _Y = _RNG.normal(size=(20, 4)), np.arange(20) % 3
_DATA = SimpleNamespace(x_train=_X, y_train=_Y, x_test=_X, y_test=_Y)


def _params_with(name, value):
    return {**_PARAMS, name: value}


_INPUT_KINDS = [
    ("masked", masked(_INPUTS), "masked array"),
    ("complex", _INPUTS + 1j, "complex"),
    ("sparse", scipy.sparse.csr_array(_INPUTS), "sparse"),
    ("strings", _INPUTS.astype(str), "strings"),
    ("ragged", [[1.0] * 5, [1.0] * 4], "ragged"),
    ("NaN", with_entry(_INPUTS, (1, 2), np.nan), "NaN"),
    ("inf", with_entry(_INPUTS, (0, 0), -np.inf), "infinite"),
    ("empty", np.ones((0, 5)), "empty"),
    ("1-D", np.ones(5), "2-D"),
    ("wrong width", np.ones((7, 3)), "has shape \\(7, 3\\); expected \\(n, 5\\)"),
]

_LABEL_KINDS = [
    ("float", _LABELS.astype(float), "integer class labels"),
    ("bool", _LABELS > 0, "integer class labels"),
    ("NaN", with_entry(_LABELS, 0, np.nan), "NaN"),
    ("complex", _LABELS + 0j, "complex"),
    ("strings", _LABELS.astype(str), "strings"),
    ("2-D", _LABELS[:, None], "1-D"),
    ("out of range", _LABELS + 3, "integers in \\[0, 3\\)"),
    ("negative", _LABELS - 1, "integers in \\[0, 3\\)"),
    ("wrong length", _LABELS[:3], "has 3 labels; expected 7"),
    ("masked", masked(_LABELS), "masked"),
]

BAD_INPUT = [
    *[
        pytest.param(lambda f=f, v=value: f(v), match, id=f"{name}-inputs-{kind}")
        for name, f in [
            ("mlp_predict", lambda v: mlp_predict(_PARAMS, v)),
            ("mlp_loss_and_grad", lambda v: mlp_loss_and_grad(_PARAMS, v, _LABELS)),
            ("max_gradient_error", lambda v: max_gradient_error(_PARAMS, v, _LABELS)),
        ]
        for kind, value, match in _INPUT_KINDS
    ],
    *[
        pytest.param(lambda v=value: mlp_loss_and_grad(_PARAMS, _INPUTS, v), m, id=f"labels-{k}")
        for k, value, m in _LABEL_KINDS
    ],
    pytest.param(lambda: mlp_predict([1, 2], _INPUTS), "params must be a mapping"),
    pytest.param(lambda: mlp_predict({"W1": _PARAMS["W1"]}, _INPUTS), "missing"),
    pytest.param(
        lambda: mlp_predict(_params_with("W1", with_entry(_PARAMS["W1"], (0, 0), np.nan)), _INPUTS),
        "params\\['W1'\\] contains NaN",
    ),
    pytest.param(lambda: mlp_predict(_params_with("b1", _PARAMS["b1"] + 1j), _INPUTS), "complex"),
    pytest.param(lambda: mlp_predict(_params_with("b1", np.ones(3)), _INPUTS), "b1'\\] has shape"),
    pytest.param(lambda: mlp_predict(_params_with("W1", np.ones(5)), _INPUTS), "2-D"),
    # init_mlp, max_gradient_error
    pytest.param(lambda: init_mlp(n_inputs=0), "n_inputs must be at least 1"),
    pytest.param(lambda: init_mlp(n_inputs=2.5), "n_inputs must be an integer"),
    pytest.param(lambda: init_mlp(n_classes=True), "n_classes must be an integer"),
    pytest.param(lambda: init_mlp(n_hidden="3"), "n_hidden must be an integer"),
    pytest.param(lambda: init_mlp(seed=-1), "seed must be at least 0"),
    pytest.param(lambda: init_mlp(seed=1.5), "seed must be an integer"),
    pytest.param(lambda: max_gradient_error(_PARAMS, _INPUTS, _LABELS, n_entries=0), "n_entries"),
    pytest.param(lambda: max_gradient_error(_PARAMS, _INPUTS, _LABELS, n_entries=2.5), "integer"),
    pytest.param(lambda: max_gradient_error(_PARAMS, _INPUTS, _LABELS, step=0.0), "step must be"),
    pytest.param(lambda: max_gradient_error(_PARAMS, _INPUTS, _LABELS, step=np.nan), "finite"),
    # optimizers
    *[
        pytest.param(factory, match, id=f"optimizer-{i}")
        for i, (factory, match) in enumerate(
            [
                (lambda: SGD(0.0), "learning_rate must be positive"),
                (lambda: SGD(-1.0), "learning_rate must be positive"),
                (lambda: SGD(np.nan), "learning_rate must be a finite"),
                (lambda: SGD(np.inf), "learning_rate must be a finite"),
                (lambda: SGD("0.1"), "learning_rate must be a real number"),
                (lambda: SGD(True), "learning_rate must be a real number"),
                (lambda: SGD(0.1j), "learning_rate must be a real number"),
                (lambda: Momentum(0.1, beta=1.0), "beta must lie in \\[0, 1\\)"),
                (lambda: Momentum(0.1, beta=-0.1), "beta must be nonnegative"),
                (lambda: Momentum(0.1, beta=np.nan), "beta must be a finite"),
                (lambda: Adam(0.1, beta1=1.0), "beta1 must lie in"),
                (lambda: Adam(0.1, beta2=-0.5), "beta2 must be nonnegative"),
                (lambda: Adam(0.1, eps=0.0), "eps must be positive"),
                (lambda: Adam(0.1, eps=np.nan), "eps must be a finite"),
            ]
        )
    ],
    # truncate_to_cosine, truncate_update
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
    pytest.param(lambda: truncate_update({"a": [1.0]}, {"b": [1.0]}, 0.5), "same tensor names"),
    pytest.param(lambda: truncate_update([1.0], [1.0], 0.5), "must be mappings"),
    pytest.param(lambda: truncate_update({"a": [1.0]}, {"a": [1.0, 2.0]}, 0.5), "update\\['a'\\]"),
    pytest.param(lambda: truncate_update({"a": [np.nan]}, {"a": [1.0]}, 0.5), "contains NaN"),
    pytest.param(lambda: truncate_update({"a": [1.0]}, {"a": [1.0]}, 2.0), "threshold"),
    # train and run_grid
    pytest.param(lambda: train(object(), _X, _Y, _X, _Y), "optimizer must have"),
    pytest.param(lambda: train(SGD(0.1), _X, _Y, _X, _Y, steps=0), "steps must be at least 1"),
    pytest.param(lambda: train(SGD(0.1), _X, _Y, _X, _Y, steps=2.5), "steps must be an integer"),
    pytest.param(lambda: train(SGD(0.1), _X, _Y, _X, _Y, steps=True), "steps must be an integer"),
    pytest.param(lambda: train(SGD(0.1), _X, _Y, _X, _Y, threshold=1.2), "threshold must lie in"),
    pytest.param(lambda: train(SGD(0.1), _X, _Y, _X, _Y, threshold=np.nan), "threshold"),
    pytest.param(lambda: train(SGD(0.1), _X, _Y, _X, _Y, n_hidden=0), "n_hidden must be at"),
    pytest.param(lambda: train(SGD(0.1), _X, _Y, _X, _Y, batch_size=0), "batch_size must be"),
    pytest.param(lambda: train(SGD(0.1), _X, _Y, _X, _Y, batch_size=21), "between 1 and 20"),
    pytest.param(lambda: train(SGD(0.1), _X, _Y, _X, _Y, batch_size=2.0), "batch_size must be"),
    pytest.param(lambda: train(SGD(0.1), _X, _Y, _X, _Y, seed=-1), "seed must be at least 0"),
    pytest.param(
        lambda: train(SGD(0.1), with_entry(_X, (0, 0), np.nan), _Y, _X, _Y), "x_train cont"
    ),
    pytest.param(lambda: train(SGD(0.1), _X + 1j, _Y, _X, _Y), "x_train is complex"),
    pytest.param(lambda: train(SGD(0.1), masked(_X), _Y, _X, _Y), "x_train is a masked"),
    pytest.param(lambda: train(SGD(0.1), _X[:, 0], _Y, _X, _Y), "x_train has shape"),
    pytest.param(lambda: train(SGD(0.1), _X, _Y * 1.0, _X, _Y), "y_train must be integer"),
    pytest.param(
        lambda: train(SGD(0.1), _X, _Y - 1, _X, _Y), "y_train must be nonnegative integers"
    ),
    pytest.param(
        lambda: train(SGD(0.1), _X, _Y, _X[:, :3], _Y),
        "x_test has shape \\(20, 3\\); expected \\(n, 4\\)",
    ),
    pytest.param(lambda: train(SGD(0.1), _X, _Y, _X, _Y + 1), "y_test must be integers in \\[0, 3"),
    pytest.param(lambda: train(SGD(0.1), _X, _Y, _X, _Y[:4]), "y_test has 4 labels; expected 20"),
    pytest.param(lambda: run_grid(SimpleNamespace(x_train=_X), steps=1), "data has no y_train"),
    pytest.param(lambda: run_grid(_DATA, (), steps=1), "thresholds is empty"),
    pytest.param(lambda: run_grid(_DATA, (1.5,), steps=1), "threshold must lie in"),
    pytest.param(lambda: run_grid(_DATA, optimizers=[SGD()], steps=1), "optimizers must be a map"),
    pytest.param(lambda: run_grid(_DATA, optimizers={"x": 1}, steps=1), "optimizer must have"),
    pytest.param(lambda: run_grid(_DATA, steps=0), "steps must be at least 1"),
    pytest.param(lambda: linf_alignment([0.0, 0.0], [1.0, 2.0]), "must be nonzero"),
    pytest.param(lambda: linf_alignment([1.0, 0.0], [0.0, 0.0]), "must be nonzero"),
    pytest.param(lambda: linf_alignment([1.0, 2.0], [1.0]), "2 entries but gradient has 1"),
    pytest.param(lambda: linf_alignment([1.0, np.nan], [1.0, 2.0]), "update"),
    pytest.param(lambda: linf_alignment({}, {"w": [1.0]}), "empty mapping"),
    pytest.param(lambda: linf_alignment(["a", "b"], [1.0, 2.0]), "update"),
    pytest.param(lambda: preconditioned_cosine([1.0], [1.0], [0.0]), "metric must be positive"),
    pytest.param(lambda: preconditioned_cosine([1.0], [1.0], [-1.0]), "metric must be positive"),
    pytest.param(lambda: preconditioned_cosine([1.0, 2.0], [1.0, 2.0], [1.0]), "2, 2 and 1"),
    pytest.param(lambda: preconditioned_cosine([0.0], [1.0], [1.0]), "zero"),
    pytest.param(lambda: preconditioned_cosine([1.0], [np.inf], [1.0]), "gradient"),
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
    pytest.param(lambda: linf_alignment([1e300, -1e300], [3e300, -1e300]), 1.0, id="linf-1e300"),
    pytest.param(lambda: linf_alignment([1e-300, 0.0], [1e-300, 1e-300]), 0.5, id="linf-1e-300"),
    pytest.param(
        lambda: preconditioned_cosine([1e-300, 1e-300], [1e300, 4e300], [1e-200, 4e-200]),
        1.0,
        id="preconditioned-extremes",
    ),
    pytest.param(lambda: truncate_to_cosine([0.0, 1.0], [1.0, 0.0], 1), [0.0, 0.0], id="int-thr"),
    pytest.param(
        lambda: truncate_to_cosine(np.float32([0.0, 1.0]), [1.0, 0.0], 0.6), [0.48, 0.64], id="f32"
    ),
    pytest.param(
        lambda: mlp_loss_and_grad(_PARAMS, _INPUTS, _LABELS.astype(np.uint8))[0],
        mlp_loss_and_grad(_PARAMS, _INPUTS, _LABELS)[0],
        id="uint8-labels",
    ),
    pytest.param(
        lambda: mlp_predict(_PARAMS, _INPUTS.astype(np.float32)),
        mlp_predict(_PARAMS, _INPUTS.astype(np.float32).astype(float)),
        id="float32-inputs",
    ),
]


@pytest.mark.parametrize(("call", "expected"), GOOD_EDGE_INPUT)
def test_edge_input_table(call, expected):
    np.testing.assert_allclose(call(), expected, rtol=1e-12, atol=0)


def test_accuracy_ties_go_to_the_lowest_class():
    # All-zero parameters: every logit ties, so every prediction is class 0.
    params = {name: np.zeros_like(value) for name, value in _PARAMS.items()}
    _, _, accuracy = mlp_loss_and_grad(params, _INPUTS, _LABELS)
    assert accuracy == np.mean(_LABELS == 0)


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
from cosine_book.optim import truncate_to_cosine, truncate_update
rng = np.random.default_rng(20261122)
results = {}
for size in (2, 7, 64, 1_000, 4_097, 100_003):
    u, g = rng.standard_normal(size), rng.standard_normal(size)
    for threshold in (0.0, 0.5, 0.9, 1.0):
        results[f"{size} {threshold}"] = truncate_to_cosine(u, g, threshold)
        results[f"{size} {threshold} huge"] = truncate_to_cosine(1e300 * u, 1e-300 * g, threshold)
update = {"W": rng.standard_normal((64, 32)), "b": rng.standard_normal(32)}
gradient = {name: rng.standard_normal(value.shape) for name, value in update.items()}
for name, value in truncate_update(update, gradient, 0.8).items():
    results[f"update {name}"] = value
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


def _quadratic(params):
    return float(np.sum(params["w"] ** 2)), {"w": 2 * params["w"]}


def test_finite_difference_gap_sees_a_wrong_gradient():
    params = {"w": np.array([1.0, -2.0, 0.5])}
    assert finite_difference_gap(params, _quadratic) < 1e-8

    def wrong(current):
        loss, grads = _quadratic(current)
        return loss, {"w": grads["w"] + np.array([0.0, 0.4, 0.0])}

    # The gap 0.4, relative to the largest entry of the (wrong) gradient, |-4 + 0.4|.
    assert finite_difference_gap(params, wrong) == pytest.approx(0.4 / 3.6, rel=1e-6)
    np.testing.assert_array_equal(params["w"], [1.0, -2.0, 0.5])  # never modified


@pytest.mark.parametrize(
    ("params", "kwargs", "fragment"),
    [
        ({}, {}, "non-empty mapping"),
        ([1.0], {}, "non-empty mapping"),
        ({"w": [np.nan]}, {}, "NaN"),
        ({"w": [1.0]}, {"n_entries": 0}, "n_entries"),
        ({"w": [1.0]}, {"step": 0.0}, "step must be positive"),
        ({"w": [1.0]}, {"seed": -1}, "seed"),
    ],
)
def test_finite_difference_gap_refuses_bad_input(params, kwargs, fragment):
    with pytest.raises(ValueError, match=fragment):
        finite_difference_gap(params, _quadratic, **kwargs)


# ------------------------------------------------------------- aim in other norms

# Entries 0 or of size 1e-3 to 1e3, so that scaling by 1e-100 to 1e100 stays normal.
_vectors = arrays(
    np.float64,
    st.integers(2, 12),
    elements=st.floats(-1e3, 1e3).map(lambda x: 0.0 if abs(x) < 1e-3 else x),
)


@given(_vectors, st.floats(1e-100, 1e100), st.floats(1e-100, 1e100))
def test_linf_alignment_is_a_scale_free_value_in_the_unit_interval(g, u_scale, g_scale):
    assume(np.any(g))
    u = np.roll(g, 1) + 0.5 * g
    assume(np.any(u))
    value = linf_alignment(u, g)
    assert -1.0 <= value <= 1.0
    assert linf_alignment(u_scale * u, g_scale * g) == pytest.approx(value, rel=1e-12, abs=1e-15)
    expected = np.sum(u * g) / (np.max(np.abs(u)) * np.sum(np.abs(g)))
    assert value == pytest.approx(expected, rel=1e-9, abs=1e-12)


@given(_vectors, st.floats(1e-3, 1e3))
def test_sign_descent_has_linf_alignment_one_and_beats_every_other_step(g, length):
    assume(np.any(g))
    assert linf_alignment(length * np.sign(g), g) == pytest.approx(1.0, rel=1e-15)
    rng = np.random.default_rng(0)
    for _ in range(20):
        other = rng.uniform(-1.0, 1.0, size=g.size)
        assert linf_alignment(other, g) <= 1.0 + 1e-15


@given(_vectors, st.integers(0, 2**32 - 1))
def test_preconditioned_cosine_is_the_cosine_of_the_rescaled_pair(g, seed):
    u = np.roll(g, 1) - 0.3 * g
    assume(np.any(u) and np.any(g))
    metric = np.random.default_rng(seed).uniform(0.1, 10.0, size=u.size)
    value = preconditioned_cosine(u, g, metric)
    assert value == pytest.approx(cosine(u * np.sqrt(metric), g / np.sqrt(metric)), abs=1e-15)
    # The Euclidean cosine for D = I, and 1 for the steepest step D^-1 g.
    assert preconditioned_cosine(u, g, np.ones(u.size)) == pytest.approx(cosine(u, g), abs=1e-15)
    assert preconditioned_cosine(g / metric, g, metric) == pytest.approx(1.0, abs=1e-14)


def test_named_tensors_count_as_one_vector():
    update = {"w": [1.0, -2.0], "b": [0.5]}
    gradient = {"w": [2.0, -1.0], "b": [1.0]}
    flat_u, flat_g = [0.5, 1.0, -2.0], [1.0, 2.0, -1.0]  # sorted names: b, w
    assert linf_alignment(update, gradient) == linf_alignment(flat_u, flat_g)
    metric = {"w": [1.0, 2.0], "b": [3.0]}
    assert preconditioned_cosine(update, gradient, metric) == preconditioned_cosine(
        flat_u, flat_g, [3.0, 1.0, 2.0]
    )


def test_training_records_the_aim_in_the_optimizers_own_norm(digits):
    sgd = _short_run(digits, SGD(0.5), steps=5)
    np.testing.assert_array_equal(sgd.own_cosine, sgd.global_cosine)
    adam = _short_run(digits, Adam(0.01), steps=5)
    # Adam's first update is the sign of the gradient: steepest descent in the max
    # norm, and in its own norm D = |g| + eps (eps moves the tiniest entries).
    assert adam.linf_alignment[0] == pytest.approx(1.0, abs=1e-5)
    assert adam.own_cosine[0] == pytest.approx(1.0, abs=1e-5)
    assert adam.global_cosine[0] < 0.8


def test_chapter1_adam_aims_worst_in_euclidean_terms_yet_lowers_the_loss_most(digits):
    """Chapter 1's claims about why the cosine alone does not rank optimizers."""
    optimizers = {"SGD": SGD(0.5), "Momentum": Momentum(0.1), "Adam": Adam(0.01)}
    runs = {name: _short_run(digits, opt, steps=200) for name, opt in optimizers.items()}
    late = slice(50, None)
    cos = {name: run.global_cosine[late].mean() for name, run in runs.items()}
    loss = {name: run.loss[-1] for name, run in runs.items()}
    assert min(cos, key=cos.get) == "Adam" and min(loss, key=loss.get) == "Adam"
    for name, run in runs.items():
        # The first-order decrease eta |u| |g| cos predicts the loss change: summed
        # over the run it is within 5 % of the actual decrease.
        u_norm = np.sqrt(np.sum(run.update_norms**2, axis=1))
        g_norm = np.sqrt(np.sum(run.gradient_norms**2, axis=1))
        predicted = optimizers[name].learning_rate * u_norm * g_norm * run.global_cosine
        actual = run.loss[:-1] - run.loss[1:]
        assert np.sum(predicted[:-1]) == pytest.approx(np.sum(actual), rel=0.05)
    adam, sgd = runs["Adam"], runs["SGD"]
    # Adam's steps are longer, it starts as sign descent, and in its own norm it
    # aims almost perfectly late in the run.
    step_length = {
        name: optimizers[name].learning_rate * np.sqrt(np.sum(run.update_norms**2, axis=1))
        for name, run in runs.items()
    }
    assert step_length["Adam"][late].mean() > 3 * step_length["SGD"][late].mean()
    assert adam.linf_alignment[:10].min() > 0.75 > sgd.linf_alignment.max()
    assert adam.linf_alignment[late].mean() < sgd.linf_alignment[late].mean()
    assert adam.own_cosine[late].mean() > 0.98
    # "Which cosine to log": giving Adam's step-150 update the gradient's norm profile
    # (same directions, so same local cosines) makes rho 1 and lifts the global cosine.
    step = 150
    energy = adam.gradient_norms[step] ** 2 / np.sum(adam.gradient_norms[step] ** 2)
    assert adam.profile_cosine[step] < 0.9
    assert np.sum(energy * adam.local[step]) > adam.global_cosine[step] + 0.15
