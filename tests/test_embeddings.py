"""Tests for cosine_book.embeddings: the PyTorch digit models and the measurements on
real embeddings (pair AUC, all-but-the-top, k-occurrence, answer retrieval, the learned
query map, the question set)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import mannwhitneyu

from cosine_book.cluster_recovery import pair_auc
from cosine_book.datasets import load_digits_split
from cosine_book.diagnostics import neighbour_agreement, related_pair_cosines, top_k_overlap
from cosine_book.embeddings import (
    QA_SET,
    QA_SET_2,
    EmbeddingModel,
    all_but_the_top,
    answer_retrieval,
    class_logits,
    embed,
    float32_cosines,
    hidden_features,
    k_occurrence,
    load_qa_set,
    pool_cosines,
    qa_embeddings,
    rescale_embedding,
    train_alignment_only,
    train_embedding_model,
    train_query_projection,
)
from cosine_book.factorization import cosine_matrix

_RNG = np.random.default_rng(0)
_X = _RNG.random((30, 6))
_Y = np.arange(30) % 3


def _small(objective: str = "dot", steps: int = 5, **kwargs) -> EmbeddingModel:
    return train_embedding_model(
        _X, _Y, _X, _Y, objective=objective, dim=3, n_hidden=5, steps=steps, **kwargs
    )


@pytest.fixture(scope="module")
def digits():
    return load_digits_split()


@pytest.fixture(scope="module")
def digit_models(digits):
    split = (digits.x_train, digits.y_train, digits.x_test, digits.y_test)
    return {o: train_embedding_model(*split, objective=o) for o in ("dot", "cosine")}


# ---------------------------------------------------------------- the digit models


def test_training_is_deterministic_and_lowers_the_loss():
    for objective in ("dot", "cosine"):
        first, second = _small(objective, 30), _small(objective, 30)
        np.testing.assert_array_equal(first.P, second.P)
        np.testing.assert_array_equal(first.loss, second.loss)
        assert first.loss[-1] < first.loss[0]
    other_seed = train_embedding_model(_X, _Y, _X, _Y, objective="dot", dim=3, n_hidden=5,
                                       steps=5, seed=1)  # fmt: skip
    assert not np.array_equal(other_seed.P, _small("dot").P)


def test_training_restores_the_thread_count():
    import torch

    before = torch.get_num_threads()
    _small()
    assert torch.get_num_threads() == before


def test_shapes_and_fields():
    model = _small("dot", weight_decay=0.1)
    assert (model.dim, model.n_classes, model.weight_decay) == (3, 3, 0.1)
    assert model.W1.shape == (6, 5) and model.bias.shape == (3,)
    assert model.loss.shape == (5,) and 0.0 <= model.test_accuracy <= 1.0
    assert class_logits(model, _X).shape == (30, 3)


def test_hidden_features_are_nonnegative_and_embeddings_linear_in_them():
    model = _small("cosine")
    hidden = hidden_features(model, _X)
    assert np.all(hidden >= 0)
    np.testing.assert_allclose(embed(model, _X), hidden @ model.P, rtol=1e-12)


def test_logits_follow_their_formulas():
    dot, cos = _small("dot"), _small("cosine")
    E = embed(dot, _X)
    np.testing.assert_allclose(
        class_logits(dot, _X), E @ dot.class_vectors.T + dot.bias, rtol=1e-12
    )
    alive = np.any(embed(cos, _X) != 0, axis=1)  # a ReLU may leave a zero embedding
    np.testing.assert_allclose(
        class_logits(cos, _X[alive]),
        cos.scale * cosine_matrix(embed(cos, _X[alive]), cos.class_vectors),
        rtol=1e-10,
        atol=1e-12,
    )
    np.testing.assert_array_equal(class_logits(cos, _X[~alive]), 0.0)


def test_digit_models_reach_a_good_test_accuracy(digit_models):
    for model in digit_models.values():
        assert model.test_accuracy > 0.95


def test_relu_hidden_features_are_anisotropic(digits, digit_models):
    hidden = hidden_features(digit_models["dot"], digits.x_test)
    assert cosine_matrix(hidden).min() >= -1e-12  # the positive orthant


def test_rescaling_leaves_dot_logits_and_changes_cosine_ones(digits, digit_models):
    scales = np.geomspace(0.1, 10.0, 16)
    for objective, model in digit_models.items():
        rescaled = rescale_embedding(model, scales)
        before, after = class_logits(model, digits.x_test), class_logits(rescaled, digits.x_test)
        if objective == "dot":
            np.testing.assert_allclose(after, before, rtol=1e-10, atol=1e-10)
        else:
            assert np.max(np.abs(after - before)) > 0.1
        neighbours = (cosine_matrix(embed(m, digits.x_test)) for m in (model, rescaled))
        assert top_k_overlap(*neighbours, 10) < 0.9


@settings(max_examples=25, deadline=None)
@given(st.lists(st.floats(-6, 6), min_size=3, max_size=3))
def test_dot_logits_are_invariant_under_any_rescaling(log2_scales):
    model = _small("dot")
    rescaled = rescale_embedding(model, np.exp2(log2_scales))
    np.testing.assert_allclose(class_logits(rescaled, _X), class_logits(model, _X), atol=1e-9)


@settings(max_examples=25, deadline=None)
@given(st.floats(-20, 20))
def test_a_uniform_rescaling_leaves_cosine_logits_unchanged(log2_factor):
    model = _small("cosine")
    rescaled = rescale_embedding(model, np.full(3, 2.0**log2_factor))
    np.testing.assert_allclose(class_logits(rescaled, _X), class_logits(model, _X), atol=1e-9)


def test_weight_decay_balances_the_two_layers(digits, digit_models):
    # Chapter 7's theorem: at a stationary point with weight decay, P'P = C'C.
    split = (digits.x_train, digits.y_train, digits.x_test, digits.y_test)
    decayed = train_embedding_model(*split, objective="dot", weight_decay=1e-3)

    def imbalance(model):
        M, N = model.P.T @ model.P, model.class_vectors.T @ model.class_vectors
        return np.linalg.norm(M - N) / np.linalg.norm(N)

    assert imbalance(decayed) < 0.15 < 1.0 < imbalance(digit_models["dot"])
    assert decayed.loss[-1] < decayed.loss[0]


def test_alignment_only_training_collapses(digits):
    collapsed = train_alignment_only(digits.x_train, seed=0)
    assert collapsed.n_classes == 0 and collapsed.test_accuracy is None
    S = cosine_matrix(embed(collapsed, digits.x_test))
    assert np.mean(S) > 0.99
    with pytest.raises(ValueError, match="no classes"):
        class_logits(collapsed, digits.x_test)


def test_alignment_training_is_deterministic():
    first, second = (train_alignment_only(_X, dim=3, n_hidden=5, steps=10) for _ in range(2))
    np.testing.assert_array_equal(first.loss, second.loss)


def test_labels_need_not_be_digits_and_parity_trains(digits):
    parity = train_embedding_model(
        digits.x_train, digits.y_train % 2, digits.x_test, digits.y_test % 2,
        objective="cosine", steps=100,
    )  # fmt: skip
    assert parity.n_classes == 2 and parity.test_accuracy > 0.9


def test_zero_embedding_has_zero_cosine_logits():
    model = EmbeddingModel(
        "cosine", [[1.0, 1.0]], [0.0, 0.0], [[1.0, 0.0], [0.0, 1.0]],
        [[1.0, 0.0], [0.0, 1.0]], [0.0, 0.0], 10.0, 0.0, [0.0], None,
    )  # fmt: skip
    np.testing.assert_array_equal(class_logits(model, [[-2.0]]), [[0.0, 0.0]])


@pytest.mark.parametrize("function", [hidden_features, embed, class_logits])
def test_overflowing_model_is_refused(function):
    model = _small()
    big = EmbeddingModel(
        "dot", np.abs(model.W1) * 1e10, model.b1, model.P, model.class_vectors, model.bias,
        10.0, 0.0, model.loss, None,
    )  # fmt: skip
    with pytest.raises(ValueError, match="overflow"):
        function(big, np.full((2, 6), 1e300))


def test_training_on_overflowing_inputs_is_refused():
    with pytest.raises(ValueError, match="training overflowed at step 0"):
        train_embedding_model(_X * 1e308, _Y, _X, _Y, objective="dot", steps=2)


PORTABLE = r"""
import json
from cosine_book.cluster_recovery import pair_auc
from cosine_book.datasets import load_digits_split
from cosine_book.embeddings import embed, train_alignment_only, train_embedding_model

d = load_digits_split()
out = {}
for objective in ("dot", "cosine"):
    m = train_embedding_model(
        d.x_train, d.y_train, d.x_test, d.y_test, objective=objective, steps=20
    )
    out[objective] = [*m.loss.tolist(), *m.P.ravel().tolist(), *embed(m, d.x_test[:5]).ravel()]
a = train_alignment_only(d.x_train, steps=20)
out["alignment"] = [*a.loss.tolist(), *embed(a, d.x_test[:5]).ravel()]
print(json.dumps(out))
"""


def test_training_agrees_on_a_simulated_older_cpu():
    from portability import compare_here_and_there

    here, there, notes = compare_here_and_there(PORTABLE)
    for name in here:
        np.testing.assert_allclose(
            there[name], here[name], rtol=1e-9, atol=1e-12, err_msg=f"{name} ({notes})"
        )


BAD_INPUT = [
    (lambda: _small("euclid"), "objective must be 'dot' or 'cosine'"),
    (lambda: _small(steps=0), "steps must be at least 1"),
    (lambda: _small(weight_decay=-1.0), "weight_decay"),
    (lambda: _small(learning_rate=0.0), "learning_rate"),
    (lambda: _small(seed=-1), "seed"),
    (lambda: train_embedding_model(_X, _Y, _X[:, :5], _Y, objective="dot"), "x_test"),
    (lambda: train_embedding_model(_X, _Y[:5], _X, _Y, objective="dot"), "y_train"),
    (lambda: train_embedding_model(_X, _Y, _X, _Y + 3, objective="dot"), "y_test"),
    (lambda: train_alignment_only(_X, noise=-1.0), "noise"),
    (lambda: embed(_small(), _X[:, :5]), "x has shape"),
    (lambda: embed("model", _X), "model must be an EmbeddingModel"),
    (lambda: rescale_embedding(_small(), [1.0, 0.0, 1.0]), "positive"),
    (lambda: rescale_embedding(_small(), [1.0, 1.0]), "3 positive numbers"),
    (lambda: EmbeddingModel("dot", np.eye(2), np.zeros(3), np.ones((2, 1)), np.ones((3, 1)),
                            np.zeros(3), 10.0, 0.0, np.ones(1), None), "b1 has shape"),
    (lambda: all_but_the_top(_X, 6), "n_components must be between 0 and 5"),
    (lambda: all_but_the_top(_X, 1, fit=_X[:, :5]), "fit has shape"),
    (lambda: k_occurrence(_X, 30), "k must be between 1 and 29"),
    (lambda: k_occurrence(np.zeros((3, 2)), 1), "zero row"),
    (lambda: answer_retrieval(_X[:3], _X[:4], _X[:2]), "one answer per query"),
    (lambda: train_query_projection(_X[:3], _X[:4], _X[:2]), "answers has 4 rows"),
    (lambda: train_query_projection(_X[:3], _X[:3], _X[:2], temperature=0.0), "temperature"),
]  # fmt: skip


@pytest.mark.parametrize(("call", "match"), BAD_INPUT)
def test_bad_input_table(call, match):
    with pytest.raises(ValueError, match=match):
        call()


# ---------------------------------------------------------- real-embedding measures


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 10_000))
def test_pair_auc_is_the_mann_whitney_statistic(seed):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 3, 12)
    if len(set(labels.tolist())) < 2:
        labels[0] = (labels[1] + 1) % 3
    S = rng.normal(size=(12, 12)).round(1)  # ties too
    related, unrelated = related_pair_cosines(S, labels)
    expected = mannwhitneyu(related, unrelated).statistic / (related.size * unrelated.size)
    assert pair_auc(S, labels) == pytest.approx(expected)
    assert pair_auc(np.exp(S), labels) == pytest.approx(expected)  # rank-based


def test_all_but_the_top_centres_and_removes_the_directions():
    rng = np.random.default_rng(1)
    E = rng.normal(size=(200, 6)) @ rng.normal(size=(6, 6)) + 5.0
    for D in (0, 1, 3):
        out = all_but_the_top(E, D)
        np.testing.assert_allclose(out.mean(axis=0), 0.0, atol=1e-10)
        top = np.linalg.svd(E - E.mean(axis=0), full_matrices=False)[2][:D]
        np.testing.assert_allclose(out @ top.T, 0.0, atol=1e-9)
        assert np.linalg.matrix_rank(out) == 6 - D
    # Fitted on a reference set: its mean and directions, applied to other rows.
    reference = E[:100]
    out = all_but_the_top(E[100:], 1, fit=reference)
    top = np.linalg.svd(reference - reference.mean(axis=0))[2][:1]
    np.testing.assert_allclose(out @ top.T, 0.0, atol=1e-9)


def test_k_occurrence_matches_a_direct_count():
    rng = np.random.default_rng(2)
    E = rng.normal(size=(57, 5))
    S = cosine_matrix(E)
    np.fill_diagonal(S, -np.inf)
    for k in (1, 4, 10):
        neighbours = np.argsort(-S, axis=1)[:, :k]
        expected = np.bincount(neighbours.ravel(), minlength=57)
        for chunk in (7, 1000):
            counts = k_occurrence(E, k, chunk=chunk)
            np.testing.assert_array_equal(counts, expected)
            assert counts.sum() == 57 * k


def test_answer_retrieval_matches_a_direct_ranking():
    rng = np.random.default_rng(3)
    Q, A, others = (rng.normal(size=(8, 4)) for _ in range(3))
    result = answer_retrieval(Q, A, others)
    S = cosine_matrix(Q, np.vstack([A, others]))
    ranks = [1 + int(np.sum(S[i] > S[i, i])) for i in range(8)]
    assert result["recall@1"] == np.mean(np.array(ranks) == 1)
    assert result["MRR"] == pytest.approx(np.mean(1 / np.array(ranks)))
    assert result["question first"] == np.mean(np.argmax(S, axis=1) >= 8)
    # Only directions count: rescaled rows give the same result.
    assert answer_retrieval(3 * Q, A, 0.5 * others) == result


def test_the_query_projection_is_deterministic_and_helps_on_its_training_pairs():
    rng = np.random.default_rng(4)
    A = rng.normal(size=(10, 6))
    Q = A + rng.normal(size=(10, 6)) + 2.0  # queries shifted away from their answers
    others = Q + 0.3 * rng.normal(size=(10, 6))  # the "other questions" look like queries
    W = train_query_projection(Q, A, others, steps=80)
    np.testing.assert_array_equal(W, train_query_projection(Q, A, others, steps=80))
    assert W.shape == (6, 6)
    before, after = answer_retrieval(Q, A, others), answer_retrieval(Q @ W, A, others)
    assert after["MRR"] > before["MRR"] and after["question first"] < before["question first"]
    # A huge penalty keeps W within one step of the identity.
    W_stiff = train_query_projection(Q, A, others, weight_decay=1e6, steps=20)
    assert np.max(np.abs(W_stiff - np.eye(6))) <= 0.01  # Adam's step: at most the rate


@pytest.mark.parametrize("rows", [QA_SET, QA_SET_2], ids=["QA_SET", "QA_SET_2"])
def test_the_question_sets(rows):
    assert len(rows) == 40 and all(len(row) == 4 for row in rows)
    for question, answer, other, rewrite in rows:
        for text in (question, answer, other, rewrite):
            assert text == text.strip() and "  " not in text and "|" not in text
        assert question.endswith("?") and other.endswith("?")
        assert answer.endswith(".") and rewrite.endswith(".")
    assert len({row[0] for row in rows}) == 40 and len({row[2] for row in rows}) == 40


def test_the_question_sets_come_from_the_package_file():
    assert load_qa_set(1) == QA_SET and load_qa_set(2) == QA_SET_2
    with pytest.raises(ValueError, match="number must be between 1 and 2"):
        load_qa_set(3)


def test_qa_embeddings_are_the_sentence_models_unit_rows():
    from cosine_book.datasets import load_sentence_model

    model = load_sentence_model()
    embedded = qa_embeddings(2, model)
    assert list(embedded) == ["questions", "answers", "others"]
    for column, (name, rows) in enumerate(embedded.items()):
        assert rows.shape == (40, 384) and rows.dtype == np.float64, name
        np.testing.assert_allclose(np.linalg.norm(rows, axis=1), 1.0, atol=1e-6)
        texts = [row[column] for row in QA_SET_2[:3]]
        again = model.encode(texts, normalize_embeddings=True).astype(np.float64)
        np.testing.assert_allclose(rows[:3], again, atol=1e-6)


def test_pool_cosines_and_answer_retrieval_agree():
    rng = np.random.default_rng(4)
    Q, A, O = rng.normal(size=(5, 3)), rng.normal(size=(5, 3)), rng.normal(size=(2, 3))  # noqa: E741
    S = pool_cosines(Q, A, O)
    np.testing.assert_allclose(S, cosine_matrix(Q, np.vstack([A, O])), atol=1e-12)
    first = np.argmax(S, axis=1)
    assert answer_retrieval(Q, A, O)["question first"] == np.mean(first >= 5)
    with pytest.raises(ValueError, match="one width"):
        pool_cosines(Q, A[:, :2], O)


def test_float32_cosines_sum_left_to_right():
    x = np.float32([[1.0, 2.0**-24, 2.0**-24]])  # left to right, the small terms vanish
    y = np.float32([[1.0, 1.0, 1.0]])
    xy = np.float32(1.0) + np.float32(2.0**-24) + np.float32(2.0**-24)
    expected = xy / (np.sqrt(np.float32(1.0)) * np.sqrt(np.float32(3.0)))
    assert float32_cosines(x, y).dtype == np.float32
    assert float32_cosines(x, y)[0] == expected
    with pytest.raises(ValueError, match="x has shape"):
        float32_cosines(x, y[:, :2])


def test_the_two_question_sets_share_no_question():
    assert not {row[0] for row in QA_SET} & {row[0] for row in QA_SET_2}


def test_decoupled_weight_decay_is_not_a_penalty_in_the_loss():
    # AdamW's decay shrinks the three matrices outside the loss: the loss history starts
    # where the undecayed one does, the L2 penalty's starts higher, and the weights end
    # smaller than without decay.
    plain = _small("dot", 40)
    decoupled = _small("dot", 40, weight_decay=0.5, decoupled=True)
    coupled = _small("dot", 40, weight_decay=0.5)
    assert decoupled.loss[0] == plain.loss[0] < coupled.loss[0]
    assert decoupled.weight_decay == 0.5
    for name in ("W1", "P", "class_vectors"):
        assert np.linalg.norm(getattr(decoupled, name)) < np.linalg.norm(getattr(plain, name))


def test_adamw_leaves_the_layers_unbalanced(digits):
    # Chapter 7: the balance theorem is about an L2 penalty in the loss; under AdamW's
    # decoupled decay the imbalance stays at least as large as without any decay.
    split = (digits.x_train, digits.y_train, digits.x_test, digits.y_test)

    def imbalance(model):
        M, N = model.P.T @ model.P, model.class_vectors.T @ model.class_vectors
        return np.linalg.norm(M - N) / np.linalg.norm(N)

    plain = train_embedding_model(*split, objective="dot", steps=300)
    adamw = train_embedding_model(*split, objective="dot", steps=300, weight_decay=1e-2,
                                  decoupled=True)  # fmt: skip
    coupled = train_embedding_model(*split, objective="dot", steps=300, weight_decay=1e-3)
    assert imbalance(coupled) < 0.2 < 1.0 < imbalance(plain) <= imbalance(adamw)


def test_neighbour_measures_on_the_digit_models(digits, digit_models):
    # The cosine model's cosine neighbours are better than the dot model's.
    dot, cos = (cosine_matrix(embed(digit_models[o], digits.x_test)) for o in ("dot", "cosine"))
    assert neighbour_agreement(cos, digits.y_test, 10) > neighbour_agreement(dot, digits.y_test, 10)
