r"""Choosing :math:`\lambda` without the test data, and comparing rankings across splits.

Chapter 6 compares the dot product of objective 1 with the cosine of its embeddings
on MovieLens. A fair comparison gives every ranking its own best :math:`\lambda`, and
chooses it without looking at the held-out items it is then scored on:
:func:`choose_lambda` splits the *training* data once more (a validation split),
fits objective 1 on the rest for every :math:`\lambda` of a grid and keeps, per
ranking, the :math:`\lambda` with the highest validation recall@10.
:func:`paired_comparison` summarises the paired differences of two rankings over
the test splits with :func:`scipy.stats.ttest_rel` and :func:`scipy.stats.wilcoxon`.

Used in chapter 6.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.stats
from numpy.typing import ArrayLike, NDArray

from cosine_book._validation import as_float_array, as_int_scalar
from cosine_book.factorization import dropout_shrinkage, fit_objective1, gram_spectrum
from cosine_book.recommenders import cosine_factors, evaluate_rankings, holdout_split

__all__ = [
    "LambdaChoice",
    "PairedComparison",
    "choose_lambda",
    "closed_form_rankings",
    "paired_comparison",
]

# A ranking is built from the fitted factors and the shrinkage f_i of objective 1.
RankingBuilder = Callable[[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]], Any]


def closed_form_rankings() -> dict[str, RankingBuilder]:
    r"""The dot product and the cosines under Figure 1's three :math:`D = \mathrm{diag}(f)^\alpha`.

    Each maps ``(A, B, f)`` to a scorer of
    :func:`~cosine_book.recommenders.evaluate_rankings`. Used in chapter 6.

    Examples
    --------
    >>> list(closed_form_rankings())
    ['dot product', 'cosine, α = +1/2', 'cosine, α = 0', 'cosine, α = −1/2']
    """
    return {
        "dot product": lambda A, B, f: (A, B),
        "cosine, α = +1/2": lambda A, B, f: cosine_factors(A, B, f**0.5),
        "cosine, α = 0": lambda A, B, f: cosine_factors(A, B),
        "cosine, α = −1/2": lambda A, B, f: cosine_factors(A, B, f**-0.5),
    }


@dataclass(frozen=True)
class LambdaChoice:
    r"""Validation recall@10 per :math:`\lambda` (rows) and ranking (columns), and the best.

    Attributes
    ----------
    grid : ndarray of shape (n_lambdas,)
    labels : tuple of str
    recall : ndarray of shape (n_lambdas, n_rankings)
        Mean validation recall@10 over the validation users.
    best : dict
        Label -> the :math:`\lambda` of the grid with the highest validation recall
        (the smallest such :math:`\lambda` on a tie).
    """

    grid: NDArray[np.float64]
    labels: tuple[str, ...]
    recall: NDArray[np.float64]
    best: dict[str, float]


def choose_lambda(
    train: Any,
    rankings: dict[str, RankingBuilder],
    grid: ArrayLike,
    k: int,
    *,
    share: float = 0.2,
    min_items: int = 5,
    seed: int = 100,
) -> LambdaChoice:
    r"""Choose objective 1's :math:`\lambda` per ranking inside ``train`` (never the test).

    ``train`` is split again by :func:`~cosine_book.recommenders.holdout_split`
    (``share``, ``min_items``, ``seed``); objective 1 is fitted on the rest at rank ``k``
    for every :math:`\lambda` of ``grid``, and each ranking, built by
    ``rankings[label](A, B, f)`` from the factors and the shrinkage
    :math:`f_i = \sigma_i^2/(\sigma_i^2 + \lambda)`, is scored by its recall@10 on the
    validation items. Used in chapter 6.

    Examples
    --------
    >>> X = np.kron(np.eye(2), np.ones((20, 12)))
    >>> choice = choose_lambda(X, {"dot": lambda A, B, f: (A, B)}, [1.0, 10.0], 2)
    >>> choice.recall.shape, choice.best["dot"] in (1.0, 10.0)
    ((2, 1), True)
    """
    grid = as_float_array(grid, "grid", ndim=1)
    if grid.size == 0 or np.any(grid <= 0):
        raise ValueError(
            "grid must hold at least one positive lambda; got none or a nonpositive one"
        )
    if not rankings:
        raise ValueError("rankings must map at least one label to a builder (A, B, f) -> scorer")
    fit, validation = holdout_split(train, share=share, min_items=min_items, seed=seed)
    spectrum = gram_spectrum(fit)
    k = as_int_scalar(k, "k", minimum=1, maximum=fit.shape[1])
    recall = np.zeros((grid.size, len(rankings)))
    for row, lam in enumerate(grid):
        A, B = fit_objective1(spectrum, float(lam), k)
        f = dropout_shrinkage(spectrum.singular_values[:k], float(lam))
        scorers = {label: build(A, B, f) for label, build in rankings.items()}
        recall[row] = evaluate_rankings(fit, validation, scorers).recall.mean(axis=1)
    best = {label: float(grid[np.argmax(recall[:, m])]) for m, label in enumerate(rankings)}
    return LambdaChoice(grid, tuple(rankings), recall, best)


@dataclass(frozen=True)
class PairedComparison:
    """Paired differences ``first - second`` over the splits, with two tests.

    Attributes
    ----------
    differences : ndarray of shape (n_splits,)
    mean, sd : float
        Mean and standard deviation (``ddof=1``) of the differences.
    wins : int
        Splits on which ``first`` is higher.
    t_pvalue, wilcoxon_pvalue : float
        Two-sided p-values of :func:`scipy.stats.ttest_rel` and of the exact
        :func:`scipy.stats.wilcoxon` signed-rank test (with 5 splits the smallest
        possible Wilcoxon p-value is 2/32 = 0.0625).
    """

    differences: NDArray[np.float64]
    mean: float
    sd: float
    wins: int
    t_pvalue: float
    wilcoxon_pvalue: float


def paired_comparison(first: Sequence[float], second: Sequence[float]) -> PairedComparison:
    """Compare two rankings' scores on the same splits (paired). Used in chapter 6.

    Examples
    --------
    >>> result = paired_comparison([0.5, 0.75, 0.5, 0.5], [0.25, 0.5, 0.5, 0.25])
    >>> result.wins, result.mean, round(result.wilcoxon_pvalue, 2)
    (3, 0.1875, 0.25)
    """
    first = as_float_array(first, "first", ndim=1)
    second = as_float_array(second, "second", ndim=1)
    if first.shape != second.shape or first.size < 2:
        raise ValueError(
            f"first and second must have the same length >= 2; got {first.size} and {second.size}"
        )
    differences = first - second
    t_test = scipy.stats.ttest_rel(first, second)
    signed = scipy.stats.wilcoxon(first, second, method="exact")
    return PairedComparison(
        differences,
        float(differences.mean()),
        float(differences.std(ddof=1)),
        int(np.sum(differences > 0)),
        float(t_test.pvalue),
        float(signed.pvalue),
    )
