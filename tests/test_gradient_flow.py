"""Chapter 6's gradient-flow theorem and lemma, and fit_gradient_descent (factorization)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cosine_book.factorization import fit_closed_form, fit_gradient_descent
from cosine_book.similarity import cosine_matrix

SETTINGS = settings(max_examples=60, deadline=None)


def imbalance(A, B):
    return np.linalg.norm(A.T @ A - B.T @ B)


def draw(seed: int, shape: tuple[int, ...], scale: float = 1.0) -> np.ndarray:
    return scale * np.random.default_rng(seed).standard_normal(shape)


@SETTINGS
@given(
    seed=st.integers(0, 2**32 - 1),
    p=st.integers(1, 8),
    q=st.integers(1, 8),
    k=st.integers(1, 5),
    scale=st.floats(0.01, 100.0),
)
def test_the_flow_of_a_product_loss_keeps_a_t_a_minus_b_t_b(seed, p, q, k, scale):
    # Any gradient G = dL/dW at W = A B^T: A' = -G B, B' = -G^T A, and
    # d/dt (A^T A - B^T B) = A'^T A + A^T A' - B'^T B - B^T B' = 0.
    A, B, G = draw(seed, (p, k), scale), draw(seed + 1, (q, k)), draw(seed + 2, (p, q))
    dA, dB = -G @ B, -G.T @ A
    derivative = dA.T @ A + A.T @ dA - dB.T @ B - B.T @ dB
    size = max(1.0, np.abs(dA.T @ A).max(), np.abs(dB.T @ B).max())
    assert np.abs(derivative).max() <= 1e-12 * size


@SETTINGS
@given(
    seed=st.integers(0, 2**32 - 1),
    p=st.integers(1, 8),
    q=st.integers(1, 8),
    k=st.integers(1, 5),
    mu=st.floats(1e-3, 10.0),
)
def test_weight_decay_makes_the_imbalance_decay(seed, p, q, k, mu):
    # Lemma lem-ch6-weight-decay: with a penalty mu (||A||^2 + ||B||^2),
    # d/dt (A^T A - B^T B) = -4 mu (A^T A - B^T B).
    A, B, G = draw(seed, (p, k)), draw(seed + 1, (q, k)), draw(seed + 2, (p, q))
    dA, dB = -(G @ B + 2 * mu * A), -(G.T @ A + 2 * mu * B)
    derivative = dA.T @ A + A.T @ dA - dB.T @ B - B.T @ dB
    expected = -4 * mu * (A.T @ A - B.T @ B)
    size = max(1.0, np.abs(dA.T @ A).max(), np.abs(dB.T @ B).max())
    assert np.abs(derivative - expected).max() <= 1e-12 * size


def test_weight_decay_balances_what_adam_converges_to():
    # Lemma lem-ch6-weight-decay, stationary points: Adam on ||M - A B^T||^2 with an L2
    # penalty on the factors, from a deliberately unbalanced start, ends balanced.
    import torch

    rng = np.random.default_rng(0)
    M = torch.tensor(rng.standard_normal((8, 6)))
    A = torch.tensor(3.0 * rng.standard_normal((8, 3)), requires_grad=True)
    B = torch.tensor(0.1 * rng.standard_normal((6, 3)), requires_grad=True)
    mu = 0.5
    start = imbalance(A.detach().numpy(), B.detach().numpy())
    optimiser = torch.optim.Adam([A, B], lr=1e-2)
    for _ in range(6000):
        optimiser.zero_grad()
        loss = ((M - A @ B.T) ** 2).sum() + mu * ((A**2).sum() + (B**2).sum())
        loss.backward()
        optimiser.step()
    a, b = A.detach().numpy(), B.detach().numpy()
    assert imbalance(a, b) < 1e-3 * start


@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), p=st.integers(2, 8), k=st.integers(1, 4))
def test_balanced_factors_have_item_gram_the_square_root_of_w_t_w(seed, p, k):
    # A^T A = B^T B implies (B B^T)^2 = B A^T A B^T = W^T W, so B B^T = (W^T W)^(1/2).
    k = min(k, p)
    U, _ = np.linalg.qr(draw(seed, (p, k)))
    V, _ = np.linalg.qr(draw(seed + 1, (p, k)))
    R, _ = np.linalg.qr(draw(seed + 2, (k, k)))
    s = np.abs(draw(seed + 3, (k,))) + 0.1
    A, B = U * np.sqrt(s) @ R, V * np.sqrt(s) @ R
    assert imbalance(A, B) < 1e-10 * s.max()
    W = A @ B.T
    values, vectors = np.linalg.eigh(W.T @ W)
    root = (vectors * np.sqrt(np.clip(values, 0, None))) @ vectors.T
    assert np.abs(B @ B.T - root).max() < 1e-6 * s.max()  # sqrt of rounding-level zeros


@pytest.fixture(scope="module")
def blocks():
    # Three groups of users, each consuming mostly its own four items: sigma_3 >> sigma_4.
    rng = np.random.default_rng(0)
    X = (rng.random((300, 12)) < 0.05).astype(float)
    for group in range(3):
        block = X[100 * group : 100 * (group + 1), 4 * group : 4 * (group + 1)]
        block += rng.random(block.shape) < 0.6 + 0.1 * group
    return np.minimum(X, 1.0)


def test_gradient_descent_from_a_small_start_reaches_objective_1_and_the_alpha_0_cosines(blocks):
    A1, B1 = fit_closed_form(blocks, 20.0, 3)
    fits = [fit_gradient_descent(blocks, 20.0, 3, n_steps=3000, seed=s) for s in range(3)]
    for A, B in fits:
        assert np.abs(A @ B.T - A1 @ B1.T).max() < 1e-6
        assert imbalance(A, B) < 1e-2  # discrete steps drift a little
        assert np.abs(cosine_matrix(B) - cosine_matrix(B1)).max() < 1e-2


def test_a_large_start_keeps_its_imbalance_and_the_seeds_disagree(blocks):
    fits = [fit_gradient_descent(blocks, 20.0, 3, init=0.5, step=0.1, seed=s) for s in range(2)]
    assert min(imbalance(A, B) for A, B in fits) > 0.1
    assert np.abs(cosine_matrix(fits[0][1]) - cosine_matrix(fits[1][1])).max() > 0.05


BAD_INPUT = [
    ({"lam": 0.0}, "lam must be positive"),
    ({"k": 0}, "k must be between"),
    ({"init": -1.0}, "init must be positive"),
    ({"n_steps": 0}, "n_steps must be at least 1"),
    ({"optimizer": "lbfgs"}, "optimizer must be 'sgd' or 'adam'"),
    ({"weight_decay": -1.0}, "weight_decay must be nonnegative"),
]


@pytest.mark.parametrize(("kwargs", "match"), BAD_INPUT)
def test_bad_input_table(blocks, kwargs, match):
    arguments = {"lam": 1.0, "k": 2} | kwargs
    with pytest.raises(ValueError, match=match):
        fit_gradient_descent(blocks, arguments.pop("lam"), arguments.pop("k"), **arguments)
