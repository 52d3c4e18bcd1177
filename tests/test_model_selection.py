"""cosine_book.model_selection: lambda chosen inside the training split; paired tests."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats

from cosine_book.model_selection import choose_lambda, paired_comparison
from cosine_book.recommenders import cosine_factors


def interactions(seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    X = (rng.random((120, 20)) < 0.15).astype(float)
    X[:60, :10] = np.maximum(X[:60, :10], rng.random((60, 10)) < 0.5)
    return X


RANKINGS = {
    "dot": lambda A, B, f: (A, B),
    "cosine": lambda A, B, f: cosine_factors(A, B, f**0.5),
}


def test_choice_is_the_best_validation_lambda_per_ranking():
    choice = choose_lambda(interactions(), RANKINGS, [1.0, 10.0, 100.0], 4)
    assert choice.recall.shape == (3, 2)
    for m, label in enumerate(choice.labels):
        assert choice.best[label] == choice.grid[np.argmax(choice.recall[:, m])]


def test_choice_ignores_what_lies_outside_the_training_data():
    # The choice sees only its argument: the same training data, the same choice.
    X = interactions()
    first = choose_lambda(X, RANKINGS, [1.0, 10.0], 4, seed=3)
    second = choose_lambda(X.copy(), RANKINGS, [1.0, 10.0], 4, seed=3)
    assert first.best == second.best
    assert np.array_equal(first.recall, second.recall)


@pytest.mark.parametrize(
    ("grid", "rankings", "match"),
    [([], RANKINGS, "grid"), ([0.0], RANKINGS, "grid"), ([1.0], {}, "rankings")],
)
def test_bad_input(grid, rankings, match):
    with pytest.raises(ValueError, match=match):
        choose_lambda(interactions(), rankings, grid, 2)


def test_paired_comparison_is_scipy_s():
    first, second = [0.30, 0.28, 0.31, 0.29, 0.30], [0.22, 0.25, 0.21, 0.24, 0.20]
    result = paired_comparison(first, second)
    assert result.wins == 5
    assert result.t_pvalue == pytest.approx(scipy.stats.ttest_rel(first, second).pvalue)
    assert result.wilcoxon_pvalue == pytest.approx(0.0625)
    assert result.sd == pytest.approx(np.std(np.subtract(first, second), ddof=1))


def test_paired_comparison_needs_equal_lengths():
    with pytest.raises(ValueError, match="same length"):
        paired_comparison([1.0, 2.0], [1.0])


def test_corrected_t_test_is_nadeau_and_bengio_s():
    # t = mean / sqrt((1/n + n_test/n_train) s^2) on n - 1 degrees of freedom.
    first, second = [0.30, 0.28, 0.31, 0.29, 0.30], [0.22, 0.25, 0.21, 0.24, 0.20]
    d = np.subtract(first, second)
    t = d.mean() / np.sqrt((1 / 5 + 0.25) * d.var(ddof=1))
    result = paired_comparison(first, second, test_to_train=0.25)
    assert result.corrected_pvalue == pytest.approx(2 * scipy.stats.t.sf(t, 4))
    # With no overlap correction it is the paired t-test.
    plain = paired_comparison(first, second, test_to_train=0.0)
    assert plain.corrected_pvalue == pytest.approx(result.t_pvalue)
    assert result.corrected_pvalue > result.t_pvalue
    with pytest.raises(ValueError, match="test_to_train"):
        paired_comparison(first, second, test_to_train=-1.0)


def test_popularity_strata_split_the_held_out_items():
    import scipy.sparse

    from cosine_book.model_selection import popularity_strata

    train = scipy.sparse.csr_array(np.array([[1, 1, 0, 0, 0, 0]] * 3 + [[1, 0, 0, 0, 0, 0]] * 3))
    test = scipy.sparse.csr_array(np.array([[0, 0, 1, 0, 0, 1]] * 6, dtype=float))
    # Counts 6, 3, 0, 0, 0, 0: the tail is items 2-4 (ties by index), so held-out item 2
    # is in the tail and item 5 in the head; a top-1 list of item 5 hits only the head.
    scorers = {"item 5 first": [0, 0, 0, 0, 0, 1.0]}
    table = popularity_strata(train, test, scorers, tail_share=0.5, n_recommended=1)
    assert table.attrs["tail positives"] == pytest.approx(0.5)
    assert table.loc["item 5 first"].tolist() == [0.0, 1.0]
    with pytest.raises(ValueError, match="tail_share"):
        popularity_strata(train, test, {"x": [1.0] * 6}, tail_share=1.5)
