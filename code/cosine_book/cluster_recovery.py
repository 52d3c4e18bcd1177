"""How well an item-item similarity recovers known clusters (chapters 6 and 7).

Ties are handled by value, never by position, so every score is the same on every
machine: the AUC counts pairs in integers with one correctly rounded division, and the
items tied at the last place of a neighbour list share that place equally.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from cosine_book._validation import as_int_scalar, as_labels, as_real_matrix

__all__ = ["cluster_recovery", "pair_auc"]


@dataclass(frozen=True)
class ClusterRecovery:
    """The :func:`pair_auc` and the top-neighbour share of :func:`cluster_recovery`."""

    auc: float
    neighbour_share: float


def _checked(similarity: ArrayLike, clusters: ArrayLike) -> tuple[NDArray, NDArray[np.intp]]:
    S = as_real_matrix(similarity, "similarity")
    if S.shape[0] != S.shape[1] or S.shape[0] < 2:
        raise ValueError(f"similarity has shape {S.shape}; expected a square (p, p), p >= 2")
    return S, as_labels(clusters, "clusters", S.shape[0])[1]


def _auc(S: NDArray[np.float64], index: NDArray[np.intp], n_bins: int | None = None) -> float:
    rows, cols = np.triu_indices(S.shape[0], k=1)
    scores, same = S[rows, cols], index[rows] == index[cols]
    n_pos = int(np.count_nonzero(same))
    n_neg = scores.size - n_pos
    if n_pos == 0 or n_neg == 0:
        raise ValueError(
            "clusters needs both same-cluster and different-cluster pairs; expected at "
            "least two clusters, one of them with two or more items"
        )
    if n_bins is None:  # Mann-Whitney: for each negative, the positives above it
        positives, negatives = np.sort(scores[same]), np.sort(scores[~same])
        below_or_tied = np.searchsorted(positives, negatives, side="right")
        below = np.searchsorted(positives, negatives, side="left")
        wins = n_pos * n_neg - int(np.sum(below_or_tied, dtype=np.int64))
        ties = int(np.sum(below_or_tied - below, dtype=np.int64))
    else:  # scores in n_bins equal levels; one level counts as a tie
        low, high = float(scores.min()), float(scores.max())
        width = (high - low) / n_bins or 1.0
        levels = np.minimum(((scores - low) / width).astype(np.int64), n_bins - 1)
        pos_counts = np.bincount(levels[same], minlength=n_bins)
        neg_counts = np.bincount(levels, minlength=n_bins) - pos_counts
        wins = int(np.sum(neg_counts * (n_pos - np.cumsum(pos_counts)), dtype=np.int64))
        ties = int(np.sum(neg_counts * pos_counts, dtype=np.int64))
    return (2 * wins + ties) / (2 * n_pos * n_neg)  # Python integers: exact, one rounding


def pair_auc(similarity: ArrayLike, clusters: ArrayLike) -> float:
    """Probability that a same-cluster pair is more similar than a different-cluster pair.

    Over the pairs ``i < j`` (only the upper triangle is read), ties counting one half:
    1 is perfect, 0.5 chance; :func:`sklearn.metrics.roc_auc_score` of the pairs, counted
    exactly. Used in chapters 6 and 7.

    Examples
    --------
    >>> pair_auc([[1.0, 0.9, 0.1], [0.9, 1.0, 0.2], [0.1, 0.2, 1.0]], [0, 0, 1])
    1.0
    """
    return _auc(*_checked(similarity, clusters))


def _neighbour_share(S: NDArray[np.float64], index: NDArray[np.intp], n: int) -> float:
    # Row i: the items above its n-th largest value v take a place each; the t items
    # tied at v share the places left, each taking (places left) / t of one.
    others = S.copy()
    np.fill_diagonal(others, -np.inf)
    kth = np.partition(others, S.shape[0] - n, axis=1)[:, S.shape[0] - n, None]
    same = index[:, None] == index[None, :]
    above, tied = others > kth, others == kth
    n_above, n_tied = np.count_nonzero(above, axis=1), np.count_nonzero(tied, axis=1)
    same_above = np.count_nonzero(above & same, axis=1)
    same_tied = np.count_nonzero(tied & same, axis=1)
    share = same_above / n + ((n - n_above) / n) * (same_tied / n_tied)
    return float(np.mean(share))


def cluster_recovery(
    similarity: ArrayLike,
    clusters: ArrayLike,
    n_neighbours: int = 10,
    *,
    auc_bins: int | None = None,
) -> ClusterRecovery:
    """The :func:`pair_auc` and the mean same-cluster share of each item's top neighbours.

    The items tied at the ``n_neighbours``-th place share the places left; if all
    similarities tie, the share is the base rate. ``auc_bins`` (the chapter 6 widget's
    speed-up) quantises the similarities to that many levels first. Used in chapter 6.

    Examples
    --------
    >>> clusters = [0, 0, 1, 1]
    >>> cluster_recovery(np.kron(np.eye(2), np.ones((2, 2))), clusters, n_neighbours=1)
    ClusterRecovery(auc=1.0, neighbour_share=1.0)
    >>> cluster_recovery(np.ones((4, 4)), clusters, n_neighbours=2).neighbour_share
    0.3333333333333333
    """
    S, index = _checked(similarity, clusters)
    n = as_int_scalar(n_neighbours, "n_neighbours", minimum=1, maximum=S.shape[0] - 1)
    if auc_bins is not None:
        auc_bins = as_int_scalar(auc_bins, "auc_bins", minimum=2)
    return ClusterRecovery(_auc(S, index, auc_bins), _neighbour_share(S, index, n))
