"""cosine_book.recommenders: MovieLens as implicit feedback, splits, rankings, training."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse

from cosine_book.datasets import load_movielens
from cosine_book.factorization import (
    cosine_matrix,
    dropout_shrinkage,
    fit_objective1,
    gram_spectrum,
    objective1_loss,
    rescale,
)
from cosine_book.recommenders import (
    cosine_factors,
    evaluate_rankings,
    holdout_split,
    implicit_feedback,
    nearest_items,
    reweight_columns,
    train_embeddings,
)


def random_interactions(seed: int, n: int = 60, p: int = 15, density: float = 0.3):
    rng = np.random.default_rng(seed)
    X = (rng.random((n, p)) < density).astype(float)
    X[:, 0] = 1.0  # no empty column
    return scipy.sparse.csr_array(X)


@pytest.fixture(scope="module")
def movielens():
    return implicit_feedback(load_movielens(), threshold=4.0, min_positives=20)


def test_implicit_feedback_on_movielens(movielens):
    ratings = load_movielens()
    assert int(np.sum(ratings.ratings >= 4)) == 51_568
    assert movielens.X.shape == (671, 656) and movielens.X.nnz == 30_924
    assert set(np.unique(movielens.X.data)) == {1.0}
    counts = np.asarray(movielens.X.sum(axis=0)).ravel()
    assert counts.min() >= 20
    for title in ("Toy Story", "Pulp Fiction", "Godfather, The"):
        assert title in movielens.titles
    every = implicit_feedback(ratings, threshold=0.0, min_positives=1).X
    assert every.nnz == len(ratings.ratings)  # one rating per (user, movie)
    with pytest.raises(ValueError, match="min_positives"):
        implicit_feedback(ratings, min_positives=10**6)


@pytest.mark.parametrize("seed", range(4))
def test_holdout_split_partitions_each_user(seed):
    X = random_interactions(seed)
    train, test = holdout_split(X, share=0.25, min_items=4, seed=seed)
    assert (train.multiply(test)).nnz == 0
    np.testing.assert_array_equal((train + test).toarray(), X.toarray() != 0)
    counts = np.diff(X.indptr)
    held = np.diff(test.indptr)
    expected = np.where(counts >= 4, np.clip(np.floor(0.25 * counts + 0.5), 1, counts - 1), 0)
    np.testing.assert_array_equal(held, expected)
    again = holdout_split(X, share=0.25, min_items=4, seed=seed)[1]
    assert (again != test).nnz == 0
    other = holdout_split(X, share=0.25, min_items=4, seed=seed + 10)[1]
    assert (other != test).nnz > 0


def naive_metrics(train, test, scores, n):
    """Recall and nDCG by a full stable sort (ties to the lower index)."""
    seen, wanted = train.toarray() != 0, test.toarray() != 0
    users = np.flatnonzero(wanted.any(axis=1))
    recall, ndcg = [], []
    for u in users:
        ranked = [i for i in np.argsort(-scores[u], kind="stable") if not seen[u, i]][:n]
        hits = wanted[u, ranked]
        discount = 1 / np.log2(np.arange(2, n + 2))
        recall.append(hits.sum() / min(n, wanted[u].sum()))
        ndcg.append((hits * discount).sum() / discount[: min(n, wanted[u].sum())].sum())
    return np.array(recall), np.array(ndcg)


@pytest.mark.parametrize("seed", range(3))
def test_evaluate_rankings_matches_a_full_sort(seed):
    X = random_interactions(seed, n=80, p=20)
    train, test = holdout_split(X, share=0.3, min_items=3, seed=seed)
    rng = np.random.default_rng(seed)
    P, Q = rng.normal(size=(20, 4)), rng.normal(size=(20, 4))
    popularity = np.round(rng.random(20), 1)  # ties on purpose
    result = evaluate_rankings(train, test, {"f": (P, Q), "pop": popularity}, n_recommended=5)
    for m, scores in enumerate([train.toarray() @ P @ Q.T, np.tile(popularity, (80, 1))]):
        recall, ndcg = naive_metrics(train, test, scores, 5)
        np.testing.assert_allclose(result.recall[m], recall)
        np.testing.assert_allclose(result.ndcg[m], ndcg)
    assert result.table().shape == (2, 3)


@pytest.mark.parametrize("seed", range(3))
def test_full_rank_alpha_half_cosine_ranks_like_the_dot_product(seed):
    # Case 1 of the chapter's theorem: at k = p, D = diag(f)^(1/2) gives B D^-1 = V,
    # whose rows have unit norm, so the user-item cosine keeps the dot product's order.
    X = random_interactions(seed, n=80, p=12, density=0.4)
    train, test = holdout_split(X, share=0.2, min_items=3, seed=seed)
    spectrum = gram_spectrum(train)
    assert spectrum.singular_values[-1] > 0
    A, B = fit_objective1(spectrum, 3.0)
    f = dropout_shrinkage(spectrum.singular_values, 3.0)
    scorers = {"dot": (A, B), "cos": cosine_factors(A, B, f**0.5)}
    result = evaluate_rankings(train, test, scorers, n_recommended=3)
    np.testing.assert_array_equal(result.recall[0], result.recall[1])
    dot = train.toarray() @ A @ B.T
    cos = train.toarray() @ scorers["cos"][0] @ scorers["cos"][1].T
    np.testing.assert_array_equal(np.argsort(-dot, axis=1), np.argsort(-cos, axis=1))


def test_row_norms_of_v_k_track_popularity_below_full_rank(movielens):
    from scipy.stats import spearmanr

    train, _ = holdout_split(movielens.X, seed=0)
    spectrum = gram_spectrum(train)
    counts = np.asarray(train.sum(axis=0)).ravel()
    norms = np.linalg.norm(spectrum.vectors[:, :50], axis=1)
    assert spearmanr(norms, counts).statistic > 0.9
    np.testing.assert_allclose(np.linalg.norm(spectrum.vectors, axis=1), 1.0)


def test_cosine_factors_give_the_cosine_ranking():
    rng = np.random.default_rng(0)
    A, B, d = rng.normal(size=(6, 3)), rng.normal(size=(6, 3)), [1.0, 2.0, 0.5]
    x = rng.random((4, 6))
    P, Q = cosine_factors(A, B, d)
    A_D, B_D = rescale(A, B, d)
    np.testing.assert_array_equal(
        np.argsort(-(x @ P @ Q.T), axis=1), np.argsort(-cosine_matrix(x @ A_D, B_D), axis=1)
    )


def test_nearest_items_and_errors():
    S = np.array([[1.0, 0.5, 0.5, 0.9], [0.5, 1, 0, 0], [0.5, 0, 1, 0], [0.9, 0, 0, 1]])
    assert nearest_items(S, 0, n=3).tolist() == [3, 1, 2]  # tie: lower index first
    with pytest.raises(ValueError, match="item"):
        nearest_items(S, 4)


def test_reweight_columns_scales_by_count_and_keeps_the_norm():
    X = random_interactions(1)
    weighted = reweight_columns(X, 0.5)
    counts = np.asarray(X.sum(axis=0)).ravel()
    norms = np.linalg.norm(weighted.toarray(), axis=0)
    np.testing.assert_allclose(norms / norms[0], 1.0)  # beta = 1/2: equal column norms
    np.testing.assert_allclose(np.linalg.norm(weighted.toarray()), np.linalg.norm(X.toarray()))
    ratio = np.linalg.norm(reweight_columns(X, 0.0).toarray(), axis=0) ** 2
    np.testing.assert_allclose(ratio, counts)
    with pytest.raises(ValueError, match="beta"):
        reweight_columns(X, -1.0)


def test_objective1_loss_and_predictions_do_not_see_d(movielens):
    X = movielens.X
    A, B = fit_objective1(X, 300.0, 20)
    f = dropout_shrinkage(gram_spectrum(X).singular_values[:20], 300.0)
    base = objective1_loss(X, A, B, 300.0)
    for alpha in (0.5, -0.5):
        assert objective1_loss(X, *rescale(A, B, f**alpha), 300.0) == pytest.approx(base, rel=1e-12)


def test_train_embeddings_is_deterministic_and_checks_input():
    X = np.kron(np.eye(3), np.ones((6, 4)))
    first = train_embeddings(X, 3, n_steps=30, seed=1)
    second = train_embeddings(X, 3, n_steps=30, seed=1)
    np.testing.assert_array_equal(first[1], second[1])
    dot = train_embeddings(X, 3, score="dot", n_steps=30, seed=1, learning_rate=0.02)
    assert np.isfinite(dot[2]) and dot[0].shape == (12, 3)
    # The cosine-trained model groups the planted blocks.
    S = cosine_matrix(train_embeddings(X, 3, n_steps=200, seed=0)[1])
    assert S[0, 1] > S[0, 4] + 0.3 and S[0, 1] > 0.8
    with pytest.raises(ValueError, match="score"):
        train_embeddings(X, 3, score="angle")
    with pytest.raises(ValueError, match="k"):
        train_embeddings(X, 0)


def test_evaluate_rankings_bad_input():
    X = random_interactions(0)
    train, test = holdout_split(X, seed=0)
    with pytest.raises(ValueError, match="shape"):
        evaluate_rankings(train, test[:10], {"pop": np.ones(15)})
    with pytest.raises(ValueError, match="n_recommended"):
        evaluate_rankings(train, test, {"pop": np.ones(15)}, n_recommended=15)


def test_inverse_propensity_weights_change_the_dot_model_and_are_checked():
    # propensity_power = 0 is the unweighted model; > 0 reweights the positives.
    X = random_interactions(1)
    plain = train_embeddings(X, 3, score="dot", n_steps=20, seed=0)
    zero = train_embeddings(X, 3, score="dot", n_steps=20, seed=0, propensity_power=0.0)
    weighted = train_embeddings(X, 3, score="dot", n_steps=20, seed=0, propensity_power=0.5)
    np.testing.assert_array_equal(plain[1], zero[1])
    assert not np.allclose(plain[1], weighted[1])
    with pytest.raises(ValueError, match="propensity_power"):
        train_embeddings(X, 3, score="dot", propensity_power=-1.0)
