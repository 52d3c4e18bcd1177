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
