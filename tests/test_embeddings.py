"""Tests for cosine_book.embeddings: chapter 7's PyTorch models and float32 cosines."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from cosine_book.datasets import load_digits_split
from cosine_book.embeddings import (
    EmbeddingModel,
    float32_cosines,
    train_alignment_only,
    train_embedding_model,
    train_query_projection,
)
from cosine_book.similarity import cosine_matrix

_X = np.random.default_rng(0).random((30, 6))
_Y = np.arange(30) % 3


def _small(objective: str = "dot", steps: int = 5, **kwargs) -> EmbeddingModel:
    return train_embedding_model(_X, _Y, _X, _Y, objective=objective, steps=steps, **kwargs)


def imbalance(model: EmbeddingModel) -> float:
    M, N = model.P.T @ model.P, model.class_vectors.T @ model.class_vectors
    return float(np.linalg.norm(M - N) / np.linalg.norm(N))


@pytest.fixture(scope="module")
def digits():
    data = load_digits_split()
    return data, (data.x_train, data.y_train, data.x_test, data.y_test)


@pytest.fixture(scope="module")
def digit_models(digits):
    return {o: train_embedding_model(*digits[1], objective=o) for o in ("dot", "cosine")}


def test_training_is_deterministic_lowers_the_loss_and_restores_the_threads():
    threads = torch.get_num_threads()
    for objective in ("dot", "cosine"):
        first, second = _small(objective, 30), _small(objective, 30)
        np.testing.assert_array_equal(first.P, second.P)
        np.testing.assert_array_equal(first.loss, second.loss)
        assert first.loss[-1] < first.loss[0]
    assert not np.array_equal(_small(seed=1).P, _small().P)
    assert torch.get_num_threads() == threads


def test_the_layers_follow_their_formulas():
    dot, cos = _small("dot"), _small("cosine")
    hidden = dot.hidden(_X)
    assert np.all(hidden >= 0) and dot.W1.shape == (6, 64) and dot.dim == 16
    np.testing.assert_allclose(dot.embed(_X), hidden @ dot.P, rtol=1e-12)
    logits = dot.embed(_X) @ dot.class_vectors.T + dot.bias
    np.testing.assert_allclose(dot.logits(_X), logits, rtol=1e-12)
    expected = cos.scale * cosine_matrix(cos.embed(_X), cos.class_vectors)
    np.testing.assert_allclose(cos.logits(_X), expected, rtol=1e-10, atol=1e-12)
    dead = replace(cos, b1=np.full(64, -1e3))  # every ReLU off: zero embeddings
    np.testing.assert_array_equal(dead.logits(_X), 0.0)  # their cosine logits are 0


@settings(max_examples=25, deadline=None)
@given(st.lists(st.floats(-6, 6), min_size=16, max_size=16), st.floats(-20, 20))
def test_the_dot_objective_does_not_fix_the_cosines(log2_scales, log2_factor):
    # Theorem: P -> P D, C -> C D^-1 leaves dot logits; a uniform D leaves cosine ones.
    dot, cos = _small("dot"), _small("cosine")
    rescaled = dot.rescaled(np.exp2(log2_scales))
    np.testing.assert_allclose(rescaled.logits(_X), dot.logits(_X), atol=1e-9)
    uniform = cos.rescaled(np.full(16, 2.0**log2_factor))
    np.testing.assert_allclose(uniform.logits(_X), cos.logits(_X), atol=1e-9)


def test_digit_models_and_rescaled_neighbours(digits, digit_models):
    from cosine_book.diagnostics import top_k_overlap

    x = digits[0].x_test
    for objective, model in digit_models.items():
        assert model.test_accuracy > 0.95
        rescaled = model.rescaled(np.geomspace(0.1, 10.0, 16))
        change = np.max(np.abs(rescaled.logits(x) - model.logits(x)))
        assert change < 1e-10 if objective == "dot" else change > 0.1
        neighbours = (cosine_matrix(m.embed(x)) for m in (model, rescaled))
        assert top_k_overlap(*neighbours, 10) < 0.9
    assert cosine_matrix(digit_models["dot"].hidden(x)).min() >= -1e-12  # the positive orthant


def test_an_l2_penalty_balances_the_layers_and_adamw_does_not(digits, digit_models):
    # Theorem: at a stationary point with an L2 penalty, P'P = C'C (here within 0.2 after
    # 300 steps); AdamW's decoupled decay leaves it at least as unbalanced as no decay.
    coupled = train_embedding_model(*digits[1], objective="dot", weight_decay=1e-3)
    adamw = train_embedding_model(*digits[1], objective="dot", weight_decay=1e-2, decoupled=True)
    assert imbalance(coupled) < 0.2 < 1.0 < imbalance(digit_models["dot"]) <= imbalance(adamw)


def test_decoupled_weight_decay_is_not_a_penalty_in_the_loss():
    plain = _small("dot", 40)
    decoupled = _small("dot", 40, weight_decay=0.5, decoupled=True)
    coupled = _small("dot", 40, weight_decay=0.5)
    assert decoupled.loss[0] == plain.loss[0] < coupled.loss[0]
    for name in ("W1", "P", "class_vectors"):
        assert np.linalg.norm(getattr(decoupled, name)) < np.linalg.norm(getattr(plain, name))


def test_alignment_only_training_collapses(digits):
    collapsed = train_alignment_only(digits[0].x_train)
    assert collapsed.test_accuracy is None and collapsed.class_vectors.shape == (0, 16)
    assert np.mean(cosine_matrix(collapsed.embed(digits[0].x_test))) > 0.99
    np.testing.assert_array_equal(collapsed.loss, train_alignment_only(digits[0].x_train).loss)
    with pytest.raises(ValueError, match="no classes"):
        collapsed.logits(digits[0].x_test)


def test_labels_need_not_be_digits():
    model = train_embedding_model(_X, _Y == 1, _X, _Y == 1, objective="cosine", steps=50)
    assert model.class_vectors.shape == (2, 16) and model.test_accuracy > 0.6


PORTABLE = r"""
import json
from cosine_book.datasets import load_digits_split
from cosine_book.embeddings import train_alignment_only, train_embedding_model

d = load_digits_split()
out = {}
for objective in ("dot", "cosine"):
    m = train_embedding_model(
        d.x_train, d.y_train, d.x_test, d.y_test, objective=objective, steps=20
    )
    out[objective] = [*m.loss.tolist(), *m.P.ravel().tolist(), *m.embed(d.x_test[:5]).ravel()]
a = train_alignment_only(d.x_train)
out["alignment"] = [*a.loss.tolist(), *a.embed(d.x_test[:5]).ravel()]
print(json.dumps(out))
"""


def test_training_agrees_on_a_simulated_older_cpu():
    from portability import compare_here_and_there

    here, there, notes = compare_here_and_there(PORTABLE)
    for name in here:
        np.testing.assert_allclose(
            there[name], here[name], rtol=1e-9, atol=1e-12, err_msg=f"{name} ({notes})"
        )


def test_the_query_projection_is_deterministic_and_helps_on_its_training_pairs():
    rng = np.random.default_rng(4)
    A = rng.normal(size=(10, 6))
    Q = A + rng.normal(size=(10, 6)) + 2.0  # queries shifted away from their answers
    others = Q + 0.3 * rng.normal(size=(10, 6))  # the "other questions" look like queries
    W = train_query_projection(Q, A, others, steps=80)
    np.testing.assert_array_equal(W, train_query_projection(Q, A, others, steps=80))

    def first_is_answer(queries):
        return np.mean(cosine_matrix(queries, np.vstack([A, others])).argmax(1) == range(10))

    assert first_is_answer(Q @ W) > first_is_answer(Q)
    stiff = train_query_projection(Q, A, others, weight_decay=1e6, steps=20)
    assert np.max(np.abs(stiff - np.eye(6))) <= 0.01  # Adam's step: at most the rate


def test_float32_cosines_sum_left_to_right():
    x = np.float32([[1.0, 2.0**-24, 2.0**-24]])  # left to right, the small terms vanish
    y = np.float32([[1.0, 1.0, 1.0]])
    expected = np.float32(1.0) / np.sqrt(np.float32(3.0))
    assert float32_cosines(x, y).dtype == np.float32 and float32_cosines(x, y)[0] == expected


BAD_INPUT = [
    (lambda: _small("euclid"), "objective must be 'dot' or 'cosine'"),
    (lambda: _small(steps=0), "steps must be at least 1"),
    (lambda: _small(weight_decay=-1.0), "weight_decay must be nonnegative"),
    (lambda: _small(scale=0.0), "scale must be positive"),
    (lambda: _small(seed=-1), "seed must be at least 0"),
    (lambda: train_embedding_model(_X, _Y, _X[:, :5], _Y, objective="dot"), "x_test has 5"),
    (lambda: train_embedding_model(_X, _Y[:5], _X, _Y, objective="dot"), "y_train has"),
    (lambda: train_embedding_model(_X, _Y, _X, _Y + 3, objective="dot"), "y_test has labels"),
    (lambda: train_embedding_model(_X * np.nan, _Y, _X, _Y, objective="dot"), "x_train contains"),
    (lambda: _small().embed(_X[:, :5]), "x has 5 columns; expected 6"),
    (lambda: _small().rescaled([1.0, 0.0] * 8), "scales must be 16 positive numbers"),
    (lambda: _small().rescaled([1.0, 1.0]), "scales must be 16 positive numbers"),
    (lambda: train_alignment_only(_X[0]), "x has shape"),
    (lambda: train_query_projection(_X[:3], _X[:4], _X[:2]), "one answer per query"),
    (lambda: train_query_projection(_X[:3], _X[:3], _X[:2, :5]), "one width"),
    (lambda: float32_cosines(_X, _X[:, :2]), "x has shape"),
]  # fmt: skip


@pytest.mark.parametrize(("call", "match"), BAD_INPUT)
def test_bad_input_table(call, match):
    with pytest.raises(ValueError, match=match):
        call()
