"""Tests for cosine_book.gpt and cosine_book.training: chapter 1's model, runs and truncation."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from bad_inputs import masked
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy.optimize import minimize

from cosine_book.gpt import GPT
from cosine_book.similarity import cosine
from cosine_book.training import OPTIMIZERS, _optimizers, shakespeare_corpus, train, truncate_tensor


def test_chapter_model_has_thirty_tensors_over_three_orders_of_magnitude():
    sizes = [p.numel() for p in GPT().parameters()]
    assert len(sizes) == 30 and max(sizes) / min(sizes) >= 1000


def test_model_is_causal_and_starts_near_the_uniform_loss():
    model = GPT(seed=3)
    x, y = shakespeare_corpus().batch(8, 64, torch.Generator().manual_seed(0))
    with torch.no_grad():
        assert abs(float(model.loss(x, y)) - math.log(65)) < 0.1
        changed = x.clone()
        changed[:, 40:] = (changed[:, 40:] + 1) % 65
        np.testing.assert_array_equal(model(x)[:, :40].numpy(), model(changed)[:, :40].numpy())
        assert not torch.equal(model(x)[:, 40:], model(changed)[:, 40:])


def test_corpus_batches_are_shifted_windows_from_the_right_part():
    corpus = shakespeare_corpus()
    x, y = corpus.batch(5, 6, torch.Generator().manual_seed(1))
    assert x.shape == y.shape == (5, 6)
    assert torch.equal(x[:, 1:], y[:, :-1])
    train_text = corpus.train.unfold(0, 7, 1)  # every window of 7 training characters
    for row_x, row_y in zip(x, y, strict=True):
        assert (train_text == torch.cat([row_x, row_y[-1:]])).all(dim=1).any()
    assert torch.equal(corpus.batch(5, 6, torch.Generator().manual_seed(1))[0], x)
    held_x, _ = corpus.batch(3, 6, torch.Generator().manual_seed(1), held=True)
    held_text = corpus.held.unfold(0, 6, 1)
    assert all((held_text == row).all(dim=1).any() for row in held_x)


def test_muon_takes_the_blocks_matrices_and_adamw_the_rest():
    model = GPT()
    muon, adamw = _optimizers("Muon", model, 0.01)
    hidden = {id(p) for group in muon.param_groups for p in group["params"]}
    for name, parameter in model.named_parameters():
        expected = parameter.ndim == 2 and name.startswith("blocks.")
        assert (id(parameter) in hidden) == expected, name
    assert len(hidden) == 8 and isinstance(adamw, torch.optim.AdamW)


def test_sgd_updates_point_along_the_batch_gradient():
    run = train("SGD", 0.3, steps=4, batch_size=4, probe_every=2, probe_windows=8)
    np.testing.assert_allclose(run.local, 1.0, atol=1e-5)
    np.testing.assert_allclose(run.profile_cosine, 1.0, atol=1e-5)
    assert run.probe_steps.tolist() == [0, 2] and run.probe_global.shape == (2,)


@pytest.mark.parametrize("optimizer", OPTIMIZERS)
def test_every_record_obeys_the_block_identity_and_bounds(optimizer):
    run = train(optimizer, 0.01, steps=4, batch_size=4, probe_every=3, probe_windows=8,
                threshold=0.6)  # fmt: skip
    local = np.nan_to_num(run.local)
    np.testing.assert_allclose(np.sum(run.weights * local, axis=1), run.global_cosine, atol=1e-9)
    assert (run.local[~np.isnan(run.local)] >= 0.6 - 1e-6).all()
    assert (run.global_cosine >= run.profile_cosine * np.nanmin(run.local, axis=1) - 1e-9).all()
    assert np.isfinite(run.final_held_loss) and run.probe_steps.tolist() == [0, 3]


def test_the_same_seed_gives_the_same_run():
    first = train("AdamW", 0.01, steps=3, batch_size=4, probe_windows=8)
    second = train("AdamW", 0.01, steps=3, batch_size=4, probe_windows=8)
    np.testing.assert_array_equal(first.loss, second.loss)
    np.testing.assert_array_equal(first.local, second.local)
    other = train("AdamW", 0.01, steps=3, batch_size=4, probe_windows=8, seed=1)
    assert not np.array_equal(first.loss, other.loss)


def test_a_diverged_run_stops_with_nan():
    run = train("SGD", 1e30, steps=3, batch_size=2, probe_windows=2)
    assert run.diverged and run.final_held_loss == math.inf and np.isnan(run.loss[-1])


# ---------------------------------------------------------------- truncation (Theorem 1.1)

_finite = st.floats(-10, 10, allow_nan=False, allow_infinity=False)


@st.composite
def _cases(draw):
    size = draw(st.integers(1, 6))
    update = draw(arrays(np.float64, size, elements=_finite))
    gradient = draw(arrays(np.float64, size, elements=_finite))
    return update, gradient, draw(st.floats(0.0, 1.0))


def _truncate(update, gradient, threshold):
    as_tensor = lambda values: torch.tensor(values, dtype=torch.float64)  # noqa: E731
    return truncate_tensor(as_tensor(update), as_tensor(gradient), threshold).numpy()


@settings(max_examples=300, deadline=None)
@given(_cases())
def test_truncation_meets_the_projection_conditions(case):
    # Moreau: p is the projection of u onto the closed convex cone K iff p in K,
    # <u - p, p> = 0 and u - p is in K's polar cone: cos(p - u, g) >= sqrt(1 - tau^2).
    update, gradient, threshold = case
    assume(np.linalg.norm(gradient) > 1e-3)
    result = _truncate(update, gradient, threshold)
    scale = max(1.0, float(np.linalg.norm(update)))
    if np.any(result):
        assert cosine(result, gradient) >= threshold - 1e-9
    residual = update - result
    assert abs(residual @ result) <= 1e-9 * scale**2
    if np.linalg.norm(residual) > 1e-9 * scale:
        assert cosine(-residual, gradient) >= np.sqrt(1 - threshold**2) - 1e-7


@settings(max_examples=100, deadline=None)
@given(_cases(), st.floats(0.1, 10.0), st.floats(0.1, 10.0))
def test_truncation_scales_with_the_update_and_is_idempotent(case, update_scale, gradient_scale):
    update, gradient, threshold = case
    assume(np.linalg.norm(gradient) > 1e-3)
    result = _truncate(update, gradient, threshold)
    scaled = _truncate(update_scale * update, gradient_scale * gradient, threshold)
    np.testing.assert_allclose(scaled, update_scale * result, atol=1e-9 * (1 + update_scale * 10))
    np.testing.assert_allclose(_truncate(result, gradient, threshold), result, atol=1e-9)


@pytest.mark.parametrize("seed", range(6))
def test_truncation_agrees_with_a_numerical_optimizer(seed):
    rng = np.random.default_rng(seed)
    update, gradient = rng.normal(size=4), rng.normal(size=4)
    threshold = 0.9  # high enough that most draws need truncating
    result = _truncate(update, gradient, threshold)
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


@pytest.mark.parametrize(
    ("update", "threshold", "expected"),
    [
        ([2.0, 1.0], 0.6, [2.0, 1.0]),  # inside the cone: kept
        ([0.0, 1.0], 0.6, [0.48, 0.64]),  # onto the edge, cos 0.6 and sin 0.8
        ([0.0, -1.0], 0.6, [0.48, -0.64]),
        ([-0.8, 0.6], 0.6, [0.0, 0.0]),  # cos(u, g) = -0.8 = -sin: the polar cone
        ([-3.0, 0.0], 0.0, [0.0, 0.0]),
        ([-1.0, 2.0], 0.0, [0.0, 2.0]),  # tau = 0 drops only the part against g
        ([3.0, 2.0], 1.0, [3.0, 0.0]),  # tau = 1 keeps only the part along g
        ([0.0, 0.0], 0.5, [0.0, 0.0]),
        ([0.0, 1e300], 0.6, [0.48e300, 0.64e300]),  # no overflow
    ],
)
def test_truncation_by_hand(update, threshold, expected):
    np.testing.assert_allclose(_truncate(update, [1.0, 0.0], threshold), expected, rtol=1e-12)


def test_truncation_keeps_dtype_and_shape_and_a_zero_gradient_keeps_the_update():
    result = truncate_tensor(torch.eye(2), torch.ones(2, 2), 0.99)
    assert result.shape == (2, 2) and result.dtype == torch.float32
    assert torch.equal(truncate_tensor(torch.ones(3), torch.zeros(3), 0.5), torch.ones(3))
    assert np.any(_truncate([-0.79, 0.61], [1.0, 0.0], 0.6))  # just outside the polar cone


@pytest.mark.parametrize("threshold", [0.0, 0.5, 0.9999999999999999, 1.0])
def test_truncation_of_parallel_and_antiparallel_vectors(threshold):
    # Rounding leaves a part across g of order 1e-16: it must not decide the result.
    u = np.array([8.5, 8.49881153, -3.25])
    np.testing.assert_array_equal(_truncate(u, u, threshold), u)
    np.testing.assert_array_equal(_truncate(3 * u, u, threshold), 3 * u)
    np.testing.assert_array_equal(_truncate(u, -u, threshold), 0.0)
    parallel = _truncate([1.0, 0.0, 0.0, 0.0, 0.0], [6.0, 0.0, 1.5, 3.0, 3.0], 1.0)
    np.testing.assert_allclose(
        parallel, 0.8 * np.array([6.0, 0.0, 1.5, 3.0, 3.0]) / 7.5, atol=1e-15
    )


# ---------------------------------------------------------------- bad input

TINY = {"steps": 1, "batch_size": 1, "probe_windows": 1}
BAD_INPUT = [
    (lambda: train("Lion", 0.1, **TINY), "optimizer must be one of"),
    (lambda: train("SGD", -0.1, **TINY), "learning_rate"),
    (lambda: train("SGD", 0.1, threshold=1.5, **TINY), "threshold must lie in"),
    (lambda: train("SGD", 0.1, steps=0), "steps"),
    (lambda: train("SGD", 0.1, batch_size=1.5), "batch_size"),
    (lambda: GPT(seed=-1), "seed"),
    *[
        (lambda v=value: truncate_tensor(v, [1.0, 0.0], 0.5), match)
        for value, match in [
            ([np.nan, 2.0], "update contains NaN"),
            ([np.inf, 2.0], "update contains an infinite"),
            ([1j, 2.0], "update is complex"),
            (masked(np.array([1.0, 2.0])), "update is a masked array"),
            ([[1.0], [2.0, 3.0]], "update is ragged"),
            ([], "update is empty"),
            ([1.0, 2.0, 3.0], r"update has shape \(3,\) but gradient \(2,\)"),
        ]
    ],
    (lambda: truncate_tensor([1.0, 2.0], [np.nan, 0.0], 0.5), "gradient contains NaN"),
    *[
        (lambda t=t: truncate_tensor([1.0, 2.0], [1.0, 0.0], t), match)
        for t, match in [
            (-0.1, r"threshold must lie in \[0, 1\]"),
            (np.nan, "threshold must be a finite"),
            ("0.5", "threshold must be a real number"),
        ]
    ],
]


@pytest.mark.parametrize(("call", "match"), BAD_INPUT)
def test_bad_input_names_the_argument(call, match):
    with pytest.raises(ValueError, match=match):
        call()
