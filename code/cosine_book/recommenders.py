r"""Recommending held-out items (chapter 6): implicit feedback, splits, ranking metrics.

A ranking is given by a pair of factors ``(P, Q)``, user :math:`u` scoring the items by
:math:`(\boldsymbol{x}_u P) Q^\top`, or by one score per item shared by all users. Top-``n``
lists break ties by value, then by the lowest item index, never by the order a sort
leaves equal values in.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse
from numpy.typing import NDArray

from cosine_book._validation import as_float_scalar, as_int_scalar, as_real_matrix

__all__ = ["evaluate_rankings", "holdout_split", "implicit_feedback"]

N_RECOMMENDED = 10
_CHUNK = 2048  # users scored at a time: bounds the dense (users x items) blocks


@dataclass(frozen=True)
class ImplicitFeedback:
    """A 0/1 user-by-movie matrix ``X`` and the title of each column."""

    X: scipy.sparse.csr_array
    titles: tuple[str, ...]


def implicit_feedback(
    ratings: Any, *, threshold: float = 4.0, min_positives: int = 20
) -> ImplicitFeedback:
    """Positives ``rating >= threshold``, for movies with at least ``min_positives`` of them.

    ``ratings`` is a :func:`~cosine_book.datasets.load_movielens` (``users``, ``movies``,
    ``ratings``, ``titles``); every user keeps a row. Used in chapter 6.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> toy = SimpleNamespace(users=np.array([0, 0, 1, 1, 2]),
    ...     movies=np.array([0, 1, 0, 2, 0]), ratings=np.array([5, 4, 4.5, 2, 1.0]),
    ...     titles=("A", "B", "C"))
    >>> data = implicit_feedback(toy, min_positives=2)
    >>> data.titles, data.X.toarray().ravel().tolist()
    (('A',), [1.0, 1.0, 0.0])
    """
    threshold = as_float_scalar(threshold, "threshold")
    min_positives = as_int_scalar(min_positives, "min_positives", minimum=1)
    users, movies = np.asarray(ratings.users), np.asarray(ratings.movies)
    liked = np.asarray(ratings.ratings) >= threshold
    kept = np.flatnonzero(
        np.bincount(movies[liked], minlength=len(ratings.titles)) >= min_positives
    )
    if kept.size == 0:
        raise ValueError(
            f"no movie has min_positives = {min_positives} ratings >= {threshold}; "
            "lower min_positives or threshold"
        )
    column = np.full(len(ratings.titles), -1)
    column[kept] = np.arange(kept.size)
    chosen = liked & (column[movies] >= 0)
    X = scipy.sparse.csr_array(
        (np.ones(int(chosen.sum())), (users[chosen], column[movies[chosen]])),
        shape=(int(users.max()) + 1, kept.size),
    )
    return ImplicitFeedback(X, tuple(str(ratings.titles[j]) for j in kept))


def holdout_split(
    X: Any, *, share: float = 0.2, min_items: int = 5, seed: int = 0
) -> tuple[scipy.sparse.csr_array, scipy.sparse.csr_array]:
    """Hold out ``round(share * n_u)`` of each user's items (users with ``n_u >= min_items``).

    The first items of one ``Generator.permutation`` per user (in user order, from
    ``default_rng(seed)``), at least one held out and one kept. Returns 0/1 ``train``
    and ``test`` that add up to ``X != 0``. Used in chapter 6.

    Examples
    --------
    >>> X = np.ones((2, 10))
    >>> X[1, 5:] = 0
    >>> train, test = holdout_split(X, share=0.2, min_items=6)
    >>> test.sum(axis=1).tolist(), bool(((train + test).toarray() == (X != 0)).all())
    ([2.0, 0.0], True)
    """
    X = scipy.sparse.csr_array(as_real_matrix(X, "X", allow_sparse=True))
    X.eliminate_zeros()
    share = as_float_scalar(share, "share", interval=(0.0, 1.0))
    min_items = as_int_scalar(min_items, "min_items", minimum=2)
    rng = np.random.default_rng(as_int_scalar(seed, "seed", minimum=0))
    held = np.zeros(X.nnz, dtype=bool)
    for u, count in enumerate(np.diff(X.indptr)):
        if count >= min_items:
            n_held = min(max(int(np.floor(share * count + 0.5)), 1), count - 1)
            held[X.indptr[u] + rng.permutation(count)[:n_held]] = True
    rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))

    def part(mask: NDArray[np.bool_]) -> scipy.sparse.csr_array:
        ones = np.ones(int(mask.sum()))
        return scipy.sparse.csr_array((ones, (rows[mask], X.indices[mask])), shape=X.shape)

    return part(~held), part(held)


@dataclass(frozen=True)
class RankingScores:
    """Recall@10, nDCG@10 and mean popularity of the list: one row per ranking in ``labels``.

    One column per evaluated user (``users``: those with a held-out item).
    """

    labels: tuple[str, ...]
    recall: NDArray[np.float64]
    ndcg: NDArray[np.float64]
    popularity: NDArray[np.float64]
    users: NDArray[np.intp]

    def table(self) -> Any:
        """Means over the users, one row per ranking (a pandas DataFrame)."""
        import pandas as pd

        columns = {"recall@n": self.recall, "nDCG@n": self.ndcg, "popularity": self.popularity}
        return pd.DataFrame(
            {name: v.mean(axis=1) for name, v in columns.items()}, index=list(self.labels)
        )


def _ranked_top(scores: NDArray[np.float64], n: int) -> NDArray[np.intp]:
    """Each row's ``n`` best columns, best first; ties by value, then the lowest index."""
    kth = np.partition(scores, scores.shape[1] - n, axis=1)[:, scores.shape[1] - n, None]
    above, tied = scores > kth, (scores == kth) & np.isfinite(scores)
    places = n - np.count_nonzero(above, axis=1)
    top = above | (tied & (np.cumsum(tied, axis=1) <= places[:, None]))
    cols = np.nonzero(top)[1].reshape(scores.shape[0], n)  # ascending within a row
    order = np.argsort(-np.take_along_axis(scores, cols, axis=1), axis=1, kind="stable")
    return np.take_along_axis(cols, order, axis=1)


def evaluate_rankings(train: Any, test: Any, scorers: dict[str, Any]) -> RankingScores:
    r"""Recommend each user's 10 best unseen items; recall@10 and nDCG@10 against ``test``.

    ``scorers`` maps a label to factors ``(P, Q)`` or to one score per item. Items in a
    user's row of ``train`` are never recommended; users with no held-out item in
    ``test`` are left out. Used in chapter 6.

    Examples
    --------
    >>> train = scipy.sparse.csr_array(np.eye(2, 12))
    >>> test = scipy.sparse.csr_array(([1.0, 1.0], ([0, 1], [2, 11])), shape=(2, 12))
    >>> evaluate_rankings(train, test, {"by index": np.arange(12.0, 0.0, -1.0)}).recall
    array([[1., 0.]])
    """
    train = scipy.sparse.csr_array(as_real_matrix(train, "train", allow_sparse=True))
    test = scipy.sparse.csr_array(as_real_matrix(test, "test", allow_sparse=True) != 0)
    if train.shape != test.shape:
        raise ValueError(f"train has shape {train.shape}, test {test.shape}; expected one shape")
    n, n_items = N_RECOMMENDED, train.shape[1]
    users = np.flatnonzero(np.diff(test.indptr) > 0)
    if users.size == 0 or np.any(n_items - np.diff(train.indptr)[users] < n):
        raise ValueError(f"expected held-out items and at least {n} unseen items for every user")
    popularity = np.asarray(train.sum(axis=0)).ravel() / train.shape[0]
    discounts = 1.0 / np.log2(np.arange(2, n + 2))
    recall, ndcg, level = (np.zeros((len(scorers), users.size)) for _ in range(3))
    for start in range(0, users.size, _CHUNK):
        block = users[start : start + _CHUNK]
        columns = slice(start, start + block.size)
        rows = train[block]
        seen, wanted = rows.toarray() != 0, test[block].toarray() != 0
        n_wanted = np.minimum(wanted.sum(axis=1), n)
        for m, scorer in enumerate(scorers.values()):
            if isinstance(scorer, tuple):
                P, Q = (np.asarray(f, dtype=np.float64) for f in scorer)
                scores = np.asarray(rows @ P) @ Q.T
            else:
                scores = np.broadcast_to(np.asarray(scorer, dtype=np.float64), seen.shape)
            top = _ranked_top(np.where(seen, -np.inf, scores), n)
            hits = np.take_along_axis(wanted, top, axis=1)
            recall[m, columns] = hits.sum(axis=1) / n_wanted
            ndcg[m, columns] = (hits * discounts).sum(axis=1) / np.cumsum(discounts)[n_wanted - 1]
            level[m, columns] = popularity[top].mean(axis=1)
    return RankingScores(tuple(scorers), recall, ndcg, level, users)
