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
    "popularity_strata",
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
    r"""Paired differences ``first - second`` over the splits, with three tests.

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
    corrected_pvalue : float
        Two-sided p-value of the corrected resampled :math:`t`-test of Nadeau and
        Bengio (2003) for re-holdouts whose training sets overlap:
        :math:`t = \bar d / \sqrt{(1/n + n_\text{test}/n_\text{train})\, s^2}`
        on :math:`n - 1` degrees of freedom (scipy's :math:`t` distribution).
    """

    differences: NDArray[np.float64]
    mean: float
    sd: float
    wins: int
    t_pvalue: float
    wilcoxon_pvalue: float
    corrected_pvalue: float


def paired_comparison(
    first: Sequence[float], second: Sequence[float], *, test_to_train: float = 0.25
) -> PairedComparison:
    r"""Compare two rankings' scores on the same splits (paired). Used in chapter 6.

    ``test_to_train`` is :math:`n_\text{test}/n_\text{train}` of each split (0.25 for
    chapter 6's 20 % hold-outs), used by the corrected resampled :math:`t`-test.

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
    if not np.isfinite(test_to_train) or test_to_train < 0:
        raise ValueError(f"test_to_train must be a finite share >= 0; got {test_to_train}")
    differences = first - second
    t_test = scipy.stats.ttest_rel(first, second)
    signed = scipy.stats.wilcoxon(first, second, method="exact")
    n, mean, sd = differences.size, differences.mean(), differences.std(ddof=1)
    scale = np.sqrt((1.0 / n + test_to_train) * sd**2)
    corrected = 2.0 * scipy.stats.t.sf(abs(mean) / scale, n - 1) if scale > 0 else 0.0
    return PairedComparison(
        differences,
        float(mean),
        float(sd),
        int(np.sum(differences > 0)),
        float(t_test.pvalue),
        float(signed.pvalue),
        float(corrected),
    )


def popularity_strata(
    train: Any,
    test: Any,
    scorers: dict[str, Any],
    *,
    tail_share: float = 2 / 3,
    n_recommended: int = 10,
) -> Any:
    """Recall@n on held-out items of the less popular films and of the rest.

    The ``tail_share`` of items with the fewest training positives (ties by index)
    form the tail. Each stratum is scored like
    :func:`~cosine_book.recommenders.evaluate_rankings` with only that stratum's
    held-out items counted (users with none in it are left out). Returns a pandas
    DataFrame (rows: rankings; columns ``tail``, ``head``) whose
    ``attrs["tail positives"]`` is the tail's share of the held-out positives.
    Used in chapter 6.
    """
    import pandas as pd
    import scipy.sparse

    if not 0 < tail_share < 1:
        raise ValueError(f"tail_share must be between 0 and 1; got {tail_share}")
    train, test = scipy.sparse.csr_array(train), scipy.sparse.csr_array(test)
    counts = np.asarray(train.sum(axis=0)).ravel()
    tail = np.zeros(counts.size, dtype=bool)
    tail[np.argsort(counts, kind="stable")[: round(tail_share * counts.size)]] = True
    columns = {}
    for name, mask in (("tail", tail), ("head", ~tail)):
        part = scipy.sparse.csr_array(test.multiply(mask[None, :].astype(np.float64)))
        part.eliminate_zeros()
        scores = evaluate_rankings(train, part, scorers, n_recommended=n_recommended)
        columns[name] = scores.recall.mean(axis=1)
    table = pd.DataFrame(columns, index=list(scorers))
    share = test.multiply(tail[None, :].astype(np.float64)).sum() / test.sum()
    table.attrs["tail positives"] = float(share)
    return table
