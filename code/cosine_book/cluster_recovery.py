r"""How well an item-item similarity recovers known clusters.

Chapter 6 scores every similarity matrix (the cosines of an embedding, the
0/1 ground truth, or any other) against the item clusters planted in the
data, with two numbers:

- :func:`pair_auc`: the probability that a random same-cluster pair of items
  is more similar than a random different-cluster pair (ties count one half;
  1 is perfect, 0.5 is chance);
- the top-neighbour share of :func:`cluster_recovery`: the average share of
  each item's ``n_neighbours`` most similar other items that lie in its own
  cluster.

:func:`same_cluster_matrix` is the ground truth itself, and
:func:`cluster_order` the display order of the chapter's heatmaps (by
cluster, then by decreasing popularity).

Nothing here knows about matrix factorisation: the functions take any
symmetric similarity matrix. :mod:`cosine_book.factorization` calls the
private forms ``_pair_auc_of_scores`` and ``_top_neighbour_share`` on inputs it
has already checked (the package's rule: validate once, at the public entry).

.. rubric:: Determinism

Ties are handled by value, never by position, so every score is the same on
every machine: the AUC counts in exact integer arithmetic with one correctly
rounded division at the end, and the neighbour share splits the places at a tie
equally among the tied items (never by the order a sort or partition happens to
leave them in).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from cosine_book._validation import as_int_scalar, as_labels, as_real_array, as_real_matrix

__all__ = [
    "ClusterRecovery",
    "cluster_order",
    "cluster_recovery",
    "pair_auc",
    "same_cluster_matrix",
]


@dataclass(frozen=True)
class ClusterRecovery:
    """How well an item-item similarity recovers known clusters.

    Attributes
    ----------
    auc : float
        Probability that a random same-cluster pair scores higher than a random
        different-cluster pair (ties count one half): :func:`pair_auc`.
    neighbour_share : float
        Average share of each item's ``n_neighbours`` most similar other items
        that lie in its own cluster (ties at the last place share it; see
        :func:`cluster_recovery`).
    """

    auc: float
    neighbour_share: float


# ---------------------------------------------------------------------------
# Input checks (through cosine_book._validation)
# ---------------------------------------------------------------------------


def _as_clusters(clusters: Any, n_items: int | None = None) -> NDArray[np.intp]:
    """Each item's index into the sorted distinct cluster labels."""
    if n_items is None:
        if isinstance(clusters, np.ndarray) and clusters.ndim != 1:
            raise ValueError(f"clusters has shape {clusters.shape}; expected a 1-D array of labels")
        try:
            n_items = len(clusters)
        except TypeError:
            raise ValueError(
                f"clusters must be a 1-D sequence of labels; got {clusters!r}"
            ) from None
        if n_items == 0:
            raise ValueError("clusters is empty; expected one label per item")
    return as_labels(clusters, "clusters", n_items)[1]


def _check_similarity(similarity: Any) -> NDArray[np.float64]:
    S = as_real_matrix(similarity, "similarity")
    if S.shape[0] != S.shape[1] or S.shape[0] < 2:
        raise ValueError(
            f"similarity has shape {S.shape}; expected a square (p, p) matrix with p >= 2"
        )
    return S


def _upper_pairs(
    S: NDArray[np.float64], index: NDArray[np.intp]
) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
    """Scores of the pairs ``i < j`` and whether each pair shares a cluster."""
    rows, cols = np.triu_indices(S.shape[0], k=1)
    return S[rows, cols], index[rows] == index[cols]


# ---------------------------------------------------------------------------
# The two scores
# ---------------------------------------------------------------------------


def _pair_auc_of_scores(
    scores: NDArray[np.float64], same: NDArray[np.bool_], n_bins: int | None = None
) -> float:
    """Mann-Whitney AUC with ties counted one half, in exact integer arithmetic."""
    n_pos = int(np.count_nonzero(same))
    n_neg = scores.size - n_pos
    if n_pos == 0 or n_neg == 0:
        raise ValueError(
            "clusters needs both same-cluster and different-cluster pairs to compute an "
            "AUC; expected at least two clusters, one of them with two or more items"
        )
    if n_bins is None:
        # Mann-Whitney U: for each negative pair count the positives scoring above
        # it (ties count one half), by binary search in the sorted positive scores.
        # Sorting values (not indices) makes the counts independent of tie order.
        positives = np.sort(scores[same])
        negatives = np.sort(scores[~same])  # sorted queries make the search faster
        below_or_tied = np.searchsorted(positives, negatives, side="right")
        below = np.searchsorted(positives, negatives, side="left")
        wins = n_pos * n_neg - int(np.sum(below_or_tied, dtype=np.int64))
        ties = int(np.sum(below_or_tied - below, dtype=np.int64))
    else:
        # Scores quantised to n_bins levels on [min, max]; pairs in one bin count as ties.
        low, high = float(scores.min()), float(scores.max())
        width = (high - low) / n_bins or 1.0
        levels = np.minimum(((scores - low) / width).astype(np.int64), n_bins - 1)
        pos_counts = np.bincount(levels[same], minlength=n_bins)
        neg_counts = np.bincount(levels, minlength=n_bins) - pos_counts
        pos_above = n_pos - np.cumsum(pos_counts)  # positives in higher bins
        wins = int(np.sum(neg_counts * pos_above, dtype=np.int64))
        ties = int(np.sum(neg_counts * pos_counts, dtype=np.int64))
    # Python integers: exact, and one correctly rounded division.
    return (2 * wins + ties) / (2 * n_pos * n_neg)


def pair_auc(similarity: ArrayLike, clusters: ArrayLike, *, n_bins: int | None = None) -> float:
    r"""AUC of an item-item similarity at telling same-cluster pairs from the others.

    Over the pairs of distinct items :math:`i < j`, the probability that a
    random same-cluster pair is more similar than a random different-cluster
    pair, a tie counting one half (the Mann-Whitney statistic divided by the
    number of (same, different) combinations). 1 is perfect, 0.5 is chance.

    It is the value :func:`sklearn.metrics.roc_auc_score` gives for the
    upper-triangle similarities scored against the same-cluster indicator,
    which it reproduces to the last bit or within one unit in the last place
    (measured on the chapter's 1,000 items: 499,500 pairs). It is computed here
    because it is exact and portable: a count in integer arithmetic by binary
    search in the sorted scores, with one correctly rounded division, where
    scikit-learn sums trapezoids in floating point; and because it is faster:
    4.7 to 5.4 times at that size, input checks included, in one run of
    ``benchmarks/bench_factorization.py`` (which prints the ratio).

    Parameters
    ----------
    similarity : array_like of shape (p, p)
        Symmetric similarities, finite and real (only the pairs ``i < j`` are read).
    clusters : array_like of shape (p,)
        Cluster label of each item (labels of one kind: numbers or strings); at
        least two clusters, one with two or more items.
    n_bins : int, optional
        If given (at least 2), the similarities are first quantised to this many
        equal levels between their minimum and maximum, and pairs within one
        level count as ties: faster, and within about ``1 / n_bins`` of the exact
        value. Default: exact.

    Returns
    -------
    float

    Examples
    --------
    >>> pair_auc([[1.0, 0.9, 0.1], [0.9, 1.0, 0.2], [0.1, 0.2, 1.0]], [0, 0, 1])
    1.0
    >>> pair_auc(np.ones((4, 4)), ["a", "a", "b", "b"])  # all tied: chance
    0.5
    """
    S = _check_similarity(similarity)
    index = _as_clusters(clusters, S.shape[0])
    if n_bins is not None:
        n_bins = as_int_scalar(n_bins, "n_bins", minimum=2)
    return _pair_auc_of_scores(*_upper_pairs(S, index), n_bins)


def _top_neighbour_share(
    S: NDArray[np.float64], clusters: NDArray[Any], n_neighbours: int
) -> float:
    """Mean share of same-cluster items among each row's top ``n_neighbours``, ties shared.

    For row ``i`` let ``v`` be the ``n_neighbours``-th largest similarity to the
    other items. Items above ``v`` take one place each; the ``t`` items tied at
    ``v`` share the remaining places equally (each counts ``remaining / t``).
    Only values are compared, so the result does not depend on how a sort or
    partition orders equal values (which differs between CPUs).
    """
    n_items = S.shape[0]
    labels = np.asarray(clusters)
    others = S.copy()
    np.fill_diagonal(others, -np.inf)  # never above or tied: v is finite
    kth = np.partition(others, n_items - n_neighbours, axis=1)[:, n_items - n_neighbours]
    same = labels[:, None] == labels[None, :]
    above = others > kth[:, None]
    tied = others == kth[:, None]
    n_above = np.count_nonzero(above, axis=1)
    n_tied = np.count_nonzero(tied, axis=1)
    same_above = np.count_nonzero(above & same, axis=1)
    same_tied = np.count_nonzero(tied & same, axis=1)
    share = same_above / n_neighbours + ((n_neighbours - n_above) / n_neighbours) * (
        same_tied / n_tied
    )
    return float(np.mean(share))


def cluster_recovery(
    similarity: ArrayLike,
    clusters: ArrayLike,
    n_neighbours: int = 10,
    *,
    auc_bins: int | None = None,
) -> ClusterRecovery:
    """Score an item-item similarity matrix against known item clusters.

    Ties are handled by value, never by position, so the scores are the same on
    every machine: in the AUC (:func:`pair_auc`) a tied same-cluster /
    different-cluster pair counts one half; in the top-neighbour share, the
    items tied at the ``n_neighbours``-th place share the places left after the
    items strictly above it (each gets ``remaining / number tied`` of a place).
    If all similarities are equal, the share is the base rate: the mean, over
    items, of the share of other items in the item's cluster.

    Parameters
    ----------
    similarity : array_like of shape (p, p)
        Symmetric similarities (cosines, or the 0/1 ground truth); finite, real.
    clusters : array_like of shape (p,)
        Cluster label of each item (labels of one kind: numbers or strings).
    n_neighbours : int
        Neighbourhood size for the top-neighbour share, ``1 <= n_neighbours < p``.
    auc_bins : int, optional
        If given (at least 2), the AUC is computed from the similarities quantised
        to this many levels (the ``n_bins`` of :func:`pair_auc`). Default: exact.

    Returns
    -------
    ClusterRecovery

    Examples
    --------
    >>> clusters = np.array([0, 0, 1, 1])
    >>> truth = same_cluster_matrix(clusters)
    >>> result = cluster_recovery(truth, clusters, n_neighbours=1)
    >>> round(result.auc, 4), round(result.neighbour_share, 4)
    (1.0, 1.0)
    >>> round(cluster_recovery(np.eye(4), clusters, n_neighbours=1).auc, 4)
    0.5

    If all similarities tie, the share is the base rate:

    >>> ties = cluster_recovery(np.ones((4, 4)), clusters, n_neighbours=2)
    >>> ties.neighbour_share
    0.3333333333333333
    """
    S = _check_similarity(similarity)
    n_items = S.shape[0]
    index = _as_clusters(clusters, n_items)
    n_neighbours = as_int_scalar(n_neighbours, "n_neighbours", minimum=1, maximum=n_items - 1)
    if auc_bins is not None:
        auc_bins = as_int_scalar(auc_bins, "auc_bins", minimum=2)
    auc = _pair_auc_of_scores(*_upper_pairs(S, index), auc_bins)
    return ClusterRecovery(auc=auc, neighbour_share=_top_neighbour_share(S, index, n_neighbours))


# ---------------------------------------------------------------------------
# Ground truth and display order
# ---------------------------------------------------------------------------


def _same_cluster(index: NDArray[np.intp]) -> NDArray[np.float64]:
    return (index[:, None] == index[None, :]).astype(np.float64)


def same_cluster_matrix(clusters: ArrayLike) -> NDArray[np.float64]:
    """Ground-truth similarity: 1 where two items share a cluster, else 0.

    Examples
    --------
    >>> same_cluster_matrix([0, 1, 0]).tolist()
    [[1.0, 0.0, 1.0], [0.0, 1.0, 0.0], [1.0, 0.0, 1.0]]
    """
    return _same_cluster(_as_clusters(clusters))


def cluster_order(clusters: ArrayLike, popularity: ArrayLike) -> NDArray[np.int64]:
    """Permutation sorting items by cluster, then by descending popularity.

    Items of one cluster with equal popularity keep their original order (the
    sort is stable: the lowest index comes first).

    Examples
    --------
    >>> cluster_order([1, 0, 1, 0], [0.1, 0.2, 0.9, 0.5]).tolist()
    [3, 1, 2, 0]
    """
    popularity = as_real_array(popularity, "popularity", ndim=1).astype(np.float64, copy=False)
    index = _as_clusters(clusters, popularity.size)
    return np.lexsort((-popularity, index))
