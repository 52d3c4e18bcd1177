"""cosine_book.recommenders: MovieLens as implicit feedback, held-out splits, rankings."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse

from cosine_book.datasets import load_movielens
from cosine_book.factorization import fit_closed_form, gram_spectrum
from cosine_book.recommenders import evaluate_rankings, holdout_split, implicit_feedback
from cosine_book.similarity import unit_rows


def random_interactions(seed: int, n: int = 80, p: int = 30, density: float = 0.3):
    rng = np.random.default_rng(seed)
    X = (rng.random((n, p)) < density).astype(float)
    X[:, 0] = 1.0  # no empty column
    return scipy.sparse.csr_array(X)


@pytest.fixture(scope="module")
def movielens():
    return implicit_feedback(load_movielens(), threshold=4.0, min_positives=20)


def test_implicit_feedback_on_movielens(movielens):
    ratings = load_movielens()
    assert movielens.X.shape == (671, 656) and movielens.X.nnz == 30_924
    assert set(np.unique(movielens.X.data)) == {1.0}
    assert np.asarray(movielens.X.sum(axis=0)).min() >= 20
    for title in ("Toy Story", "Pulp Fiction", "Godfather, The"):
        assert title in movielens.titles
    every = implicit_feedback(ratings, threshold=0.0, min_positives=1).X
    assert every.nnz == len(ratings.ratings)  # one rating per (user, movie)


@pytest.mark.parametrize("seed", range(4))
def test_holdout_split_partitions_each_user(seed):
    X = random_interactions(seed)
    train, test = holdout_split(X, share=0.25, min_items=4, seed=seed)
    assert train.multiply(test).nnz == 0
    np.testing.assert_array_equal((train + test).toarray(), X.toarray() != 0)
    counts = np.diff(X.indptr)
    expected = np.where(counts >= 4, np.clip(np.floor(0.25 * counts + 0.5), 1, counts - 1), 0)
    np.testing.assert_array_equal(np.diff(test.indptr), expected)
    assert (holdout_split(X, share=0.25, min_items=4, seed=seed)[1] != test).nnz == 0
    assert (holdout_split(X, share=0.25, min_items=4, seed=seed + 10)[1] != test).nnz > 0


def naive_metrics(train, test, scores, n=10):
    """Recall and nDCG by a full stable sort (ties to the lower index)."""
    seen, wanted = train.toarray() != 0, test.toarray() != 0
    recall, ndcg = [], []
    for u in np.flatnonzero(wanted.any(axis=1)):
        ranked = [i for i in np.argsort(-scores[u], kind="stable") if not seen[u, i]][:n]
        hits = wanted[u, ranked]
        discount = 1 / np.log2(np.arange(2, n + 2))
        recall.append(hits.sum() / min(n, wanted[u].sum()))
        ndcg.append((hits * discount).sum() / discount[: min(n, wanted[u].sum())].sum())
    return np.array(recall), np.array(ndcg)


@pytest.mark.parametrize("seed", range(3))
def test_evaluate_rankings_matches_a_full_sort(seed):
    train, test = holdout_split(random_interactions(seed), share=0.3, min_items=3, seed=seed)
    rng = np.random.default_rng(seed)
    P, Q = rng.normal(size=(30, 4)), rng.normal(size=(30, 4))
    popularity = np.round(rng.random(30), 1)  # ties on purpose
    result = evaluate_rankings(train, test, {"f": (P, Q), "pop": popularity})
    for m, scores in enumerate([train.toarray() @ P @ Q.T, np.tile(popularity, (80, 1))]):
        recall, ndcg = naive_metrics(train, test, scores)
        np.testing.assert_allclose(result.recall[m], recall)
        np.testing.assert_allclose(result.ndcg[m], ndcg)
    assert result.table().shape == (2, 3)
    # Masking held-out items leaves out the users with none left, and counts only the rest.
    mask = np.arange(30) < 15
    masked = evaluate_rankings(train, test.multiply(mask), {"f": (P, Q)})
    recall, _ = naive_metrics(train, test.multiply(mask).tocsr(), train.toarray() @ P @ Q.T)
    np.testing.assert_allclose(masked.recall[0], recall)


@pytest.mark.parametrize("seed", range(3))
def test_case_1_full_rank_alpha_half_cosine_ranks_like_the_dot_product(seed):
    # Theorem thm-ch6-rescaling, case 1: at k = p, D = diag(f)^(1/2) gives B D^-1 = V with
    # unit rows, so the user-item cosine keeps the dot product's order in every row.
    X = random_interactions(seed, n=120, p=25, density=0.3)
    train, test = holdout_split(X, share=0.2, min_items=3, seed=seed)
    spectrum = gram_spectrum(train)
    assert spectrum.singular_values[-1] > 0
    A, B = fit_closed_form(spectrum, 3.0)
    d = np.sqrt(spectrum.singular_values**2 / (spectrum.singular_values**2 + 3.0))
    cosine = (A * d, unit_rows(B / d))
    result = evaluate_rankings(train, test, {"dot": (A, B), "cos": cosine})
    np.testing.assert_array_equal(result.recall[0], result.recall[1])


def test_row_norms_of_v_k_track_popularity_below_full_rank(movielens):
    # Chapter 6: the cosine divides by the rank-k leverage scores, which rise with
    # popularity; at k = p every row of V has norm 1.
    from scipy.stats import spearmanr

    train, _ = holdout_split(movielens.X, seed=0)
    spectrum = gram_spectrum(train)
    counts = np.asarray(train.sum(axis=0)).ravel()
    assert spearmanr(np.linalg.norm(spectrum.vectors[:, :50], axis=1), counts).statistic > 0.9
    np.testing.assert_allclose(np.linalg.norm(spectrum.vectors, axis=1), 1.0)


_TRAIN, _TEST = holdout_split(random_interactions(0), seed=0)

BAD_INPUT = [
    pytest.param(lambda: implicit_feedback(load_movielens(), min_positives=10**6), "lower"),
    pytest.param(lambda: implicit_feedback(load_movielens(), threshold="4"), "threshold"),
    pytest.param(lambda: holdout_split(_TRAIN, share=1.5), "share must lie in"),
    pytest.param(lambda: holdout_split(_TRAIN, min_items=1), "min_items must be at least 2"),
    pytest.param(lambda: holdout_split(np.ones(5)), "2-D"),
    pytest.param(lambda: evaluate_rankings(_TRAIN, _TEST[:10], {"p": np.ones(30)}), "shape"),
    pytest.param(lambda: evaluate_rankings(_TRAIN, 0 * _TEST, {"p": np.ones(30)}), "held-out"),
    pytest.param(
        lambda: evaluate_rankings(_TRAIN[:, :10], _TEST[:, :10], {"p": np.ones(10)}), "unseen"
    ),
    pytest.param(lambda: evaluate_rankings(_TRAIN, _TEST * np.nan, {"p": np.ones(30)}), "NaN"),
]


@pytest.mark.parametrize(("call", "match"), BAD_INPUT)
def test_bad_input_table(call, match):
    with pytest.raises(ValueError, match=match):
        call()
