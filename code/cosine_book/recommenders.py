r"""Recommenders on real and simulated interactions: data, held-out splits, retrieval.

Chapter 6 asks which similarity finds what users actually like. This module
turns MovieLens ratings into a 0/1 implicit-feedback matrix
(:func:`implicit_feedback`), holds out a share of every user's positives
(:func:`holdout_split`), and scores rankings of the unseen items against them
(:func:`evaluate_rankings`: recall@n and nDCG@n per user, so that the spread
over users can be bootstrapped). A ranking is given as a pair of factors
``(P, Q)`` (user ``u`` scores the items by ``(x_u P) Q^T``), so the dot product
of a factorisation and its cosine under any rescaling :math:`D`
(:func:`cosine_factors`) are compared on equal terms. Two models trained with
PyTorch stand for the remedies of the paper's Section 3 that are not closed
forms (:func:`train_embeddings`): the cosine as the score itself, and negative
sampling in proportion to popularity to the power 3/4.

.. rubric:: Determinism

The split draws one :meth:`numpy.random.Generator.permutation` per user, and
a top-``n`` list breaks ties by value and then by the lowest item index, never
by the order a sort leaves equal values in. Training runs in float64 on one
thread from a seeded :class:`torch.Generator`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import scipy.sparse
from numpy.typing import ArrayLike, NDArray

from cosine_book._validation import as_float_scalar, as_int_scalar, as_real_matrix
from cosine_book.factorization import _check_matrix
from cosine_book.similarity import unit_rows

__all__ = [
    "ImplicitFeedback",
    "RankingScores",
    "cosine_factors",
    "evaluate_rankings",
    "holdout_split",
    "implicit_feedback",
    "nearest_items",
    "reweight_columns",
    "train_embeddings",
]

Scorer = tuple[ArrayLike, ArrayLike] | ArrayLike
# Users scored at a time: bounds the dense (users x items) score blocks.
_CHUNK = 2048


@dataclass(frozen=True)
class ImplicitFeedback:
    """A 0/1 user-by-movie matrix: ``X[u, j] = 1`` if user ``u`` rated movie ``titles[j]`` highly.

    Attributes
    ----------
    X : scipy.sparse.csr_array of shape (n_users, n_movies)
    titles : tuple of str
        Title of each column.
    movies : ndarray of shape (n_movies,)
        Each column's index into the ratings' movies.
    """

    X: scipy.sparse.csr_array
    titles: tuple[str, ...]
    movies: NDArray[np.int64]


def implicit_feedback(
    ratings: Any, *, threshold: float = 4.0, min_positives: int = 20
) -> ImplicitFeedback:
    """Positives ``rating >= threshold``, for movies with at least ``min_positives`` of them.

    Every user of ``ratings`` keeps a row (possibly empty).

    Parameters
    ----------
    ratings : cosine_book.datasets.MovieRatings
        Or anything with ``users``, ``movies``, ``ratings`` and ``titles``.
    threshold : float
        Smallest rating counted as a positive (``0`` keeps every rating).
    min_positives : int
        Movies with fewer positives are dropped; at least 1.

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
    counts = np.bincount(movies[liked], minlength=len(ratings.titles))
    kept = np.flatnonzero(counts >= min_positives)
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
    titles = tuple(str(ratings.titles[j]) for j in kept)
    return ImplicitFeedback(X=X, titles=titles, movies=kept.astype(np.int64))


def holdout_split(
    X: Any, *, share: float = 0.2, min_items: int = 5, seed: int = 0
) -> tuple[scipy.sparse.csr_array, scipy.sparse.csr_array]:
    """Hold out ``round(share * n_u)`` of each user's items (users with ``n_u >= min_items``).

    The held-out items of user ``u`` are the first ones of a
    ``Generator.permutation`` of the user's items (one permutation per user, in
    user order, from ``numpy.random.default_rng(seed)``); at least one is held
    out and one kept. Users with fewer items keep them all in training.

    Returns
    -------
    train, test : scipy.sparse.csr_array
        0/1 matrices of the shape of ``X`` that add up to ``X != 0``.

    Examples
    --------
    >>> X = np.ones((2, 10))
    >>> X[1, 5:] = 0
    >>> train, test = holdout_split(X, share=0.2, min_items=6)
    >>> test.sum(axis=1).tolist(), bool(((train + test).toarray() == (X != 0)).all())
    ([2.0, 0.0], True)
    """
    X = scipy.sparse.csr_array(_check_matrix(X))
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


def cosine_factors(
    A: ArrayLike, B: ArrayLike, d: ArrayLike | None = None
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    r"""Factors whose scores rank each user's items by the cosine of the embeddings.

    The cosine between the user embedding :math:`\boldsymbol{x}_u A D` and item
    :math:`i`'s embedding (row :math:`i` of :math:`B D^{-1}`) ranks a user's
    items as :math:`\boldsymbol{x}_u A D \cdot \boldsymbol{b}_i / \lVert \boldsymbol{b}_i \rVert`
    does (the user's norm is one positive number per row): so the factors are
    :math:`A D` and the rows of :math:`B D^{-1}` scaled to unit length.
    ``d`` defaults to ones (:math:`D = I`).

    Examples
    --------
    >>> P, Q = cosine_factors(np.eye(2), [[3.0, 0.0], [1.0, 1.0]], [1.0, 2.0])
    >>> P.tolist(), Q.round(3).tolist()
    ([[1.0, 0.0], [0.0, 2.0]], [[1.0, 0.0], [0.894, 0.447]])
    """
    A, B = as_real_matrix(A, "A"), as_real_matrix(B, "B")
    d = np.ones(A.shape[1]) if d is None else np.asarray(d, dtype=np.float64)
    return A * d, unit_rows(B / d, "B D^-1")


@dataclass(frozen=True)
class RankingScores:
    """Per ranking and evaluated user: recall@n, nDCG@n and the popularity of the list.

    Row ``m`` of each array belongs to ``labels[m]``; column ``j`` to user
    ``users[j]`` (the users with at least one held-out item).

    Attributes
    ----------
    labels : tuple of str
    recall : ndarray of shape (n_rankings, n_evaluated)
        Held-out items among the top ``n``, divided by ``min(n, held out)``.
    ndcg : ndarray of shape (n_rankings, n_evaluated)
        Discounted gain ``sum 1 / log2(rank + 1)`` over the hits, divided by its
        largest possible value.
    popularity : ndarray of shape (n_rankings, n_evaluated)
        Mean share of users who have each recommended item in training.
    users : ndarray of shape (n_evaluated,)
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


def _top_n_mask(scores: NDArray[np.float64], n: int) -> NDArray[np.bool_]:
    """Each row's ``n`` largest finite scores; ties at the last place go to the lowest index.

    Only values are compared, so the choice does not depend on how a partition
    orders equal values. Rows with fewer than ``n`` finite scores get them all.
    """
    kth = np.partition(scores, scores.shape[1] - n, axis=1)[:, scores.shape[1] - n]
    above = scores > kth[:, None]
    tied = (scores == kth[:, None]) & np.isfinite(scores)
    places = n - np.count_nonzero(above, axis=1)
    return above | (tied & (np.cumsum(tied, axis=1) <= places[:, None]))


def _ranked_top(scores: NDArray[np.float64], n: int) -> NDArray[np.intp]:
    """Each row's ``n`` best columns, best first; ties by value, then the lowest index."""
    rows = scores.shape[0]
    cols = np.nonzero(_top_n_mask(scores, n))[1].reshape(rows, n)  # ascending within a row
    order = np.argsort(-np.take_along_axis(scores, cols, axis=1), axis=1, kind="stable")
    return np.take_along_axis(cols, order, axis=1)


def evaluate_rankings(
    train: Any, test: Any, scorers: dict[str, Scorer], *, n_recommended: int = 10
) -> RankingScores:
    r"""Recommend each user's ``n_recommended`` best unseen items; score against ``test``.

    ``scorers`` maps a label to a pair ``(P, Q)`` of ``(n_items, k)`` factors,
    user :math:`u` scoring item :math:`i` by :math:`(\boldsymbol{x}_u P)\cdot\boldsymbol{q}_i`
    with :math:`\boldsymbol{x}_u` the user's row of ``train``, or to one score
    per item shared by all users (e.g. the popularity). Items in a user's
    training row are never recommended; ties go to the lower item index.

    Examples
    --------
    >>> train = scipy.sparse.csr_array([[1.0, 0, 0, 0], [0, 1.0, 0, 0]])
    >>> test = scipy.sparse.csr_array([[0, 0, 1.0, 0], [0, 0, 0, 1.0]])
    >>> result = evaluate_rankings(train, test, {"by index": [4.0, 3, 2, 1]},
    ...                            n_recommended=2)
    >>> result.recall.tolist(), result.ndcg.round(3).tolist()
    ([[1.0, 0.0]], [[0.631, 0.0]])
    """
    train = scipy.sparse.csr_array(_check_matrix(train, "train"))
    test = scipy.sparse.csr_array(_check_matrix(test, "test"))
    if train.shape != test.shape:
        raise ValueError(
            f"train has shape {train.shape} and test {test.shape}; expected equal shapes"
        )
    n_items = train.shape[1]
    n = as_int_scalar(n_recommended, "n_recommended", minimum=1, maximum=n_items - 1)
    users = np.flatnonzero(np.diff(test.indptr) > 0)
    seen_counts = np.diff(train.indptr)[users]
    if users.size == 0 or np.any(n_items - seen_counts < n):
        raise ValueError(
            f"expected held-out items and at least n_recommended = {n} unseen items for "
            "every evaluated user (lower n_recommended)"
        )
    popularity = np.asarray(train.sum(axis=0)).ravel() / train.shape[0]
    discounts = 1.0 / np.log2(np.arange(2, n + 2))
    shape = (len(scorers), users.size)
    recall, ndcg, level = np.zeros(shape), np.zeros(shape), np.zeros(shape)
    for start in range(0, users.size, _CHUNK):
        block = users[start : start + _CHUNK]
        columns = slice(start, start + block.size)
        rows = train[block]
        seen = rows.toarray() != 0
        wanted = test[block].toarray() != 0
        n_wanted = np.minimum(wanted.sum(axis=1), n)
        ideal = np.cumsum(discounts)[n_wanted - 1]
        for m, scorer in enumerate(scorers.values()):
            if isinstance(scorer, tuple):
                P, Q = (np.asarray(f, dtype=np.float64) for f in scorer)
                scores = np.asarray(rows @ P) @ Q.T
            else:
                scores = np.broadcast_to(np.asarray(scorer, dtype=np.float64), seen.shape)
            top = _ranked_top(np.where(seen, -np.inf, scores), n)
            hits = np.take_along_axis(wanted, top, axis=1)
            recall[m, columns] = hits.sum(axis=1) / n_wanted
            ndcg[m, columns] = (hits * discounts).sum(axis=1) / ideal
            level[m, columns] = popularity[top].mean(axis=1)
    return RankingScores(tuple(scorers), recall, ndcg, level, users)


def nearest_items(similarity: ArrayLike, item: int, n: int = 5) -> NDArray[np.intp]:
    """The ``n`` items most similar to ``item`` (itself excluded), ties to the lower index.

    Examples
    --------
    >>> S = [[1.0, 0.2, 0.9, 0.2], [0.2, 1, 0, 0], [0.9, 0, 1, 0], [0.2, 0, 0, 1]]
    >>> nearest_items(S, 0, n=2).tolist()
    [2, 1]
    """
    S = as_real_matrix(similarity, "similarity")
    item = as_int_scalar(item, "item", minimum=0, maximum=S.shape[0] - 1)
    n = as_int_scalar(n, "n", minimum=1, maximum=S.shape[1] - 1)
    row = S[item].astype(np.float64)
    row[item] = -np.inf
    return _ranked_top(row[None, :], n)[0]


def reweight_columns(X: Any, beta: float) -> scipy.sparse.csr_array:
    r"""Scale column :math:`i` of ``X`` by :math:`c_i^{-\beta}` (:math:`c_i` its nonzero count).

    The popularity reweighting of the paper's Section 3, before learning:
    :math:`\beta = 1/2` gives a 0/1 matrix unit-norm columns. The result is then
    scaled to the Frobenius norm of ``X``, so that a regularisation strength
    keeps its meaning. Empty columns stay zero.

    Examples
    --------
    >>> X = scipy.sparse.csr_array([[1.0, 1.0], [1.0, 0.0], [1.0, 0.0], [1.0, 0.0]])
    >>> reweight_columns(X, 0.5).toarray().round(3)[0].tolist()
    [0.791, 1.581]
    """
    X = scipy.sparse.csr_array(_check_matrix(X))
    beta = as_float_scalar(beta, "beta", nonnegative=True)
    counts = np.diff(X.tocsc().indptr).astype(np.float64)
    weights = np.where(counts > 0, np.maximum(counts, 1.0) ** -beta, 0.0)
    weighted = X @ scipy.sparse.diags_array(weights)
    return scipy.sparse.csr_array(
        weighted * (np.sqrt(np.sum(X.data**2)) / np.sqrt(np.sum(weighted.data**2)))
    )


def _training_loss(
    torch: Any,
    X: Any,
    A: Any,
    B: Any,
    score: str,
    negatives: Any,
    n_negatives: float,
    temperature: float,
    weights: Any = None,
) -> Any:
    """Softmax cross-entropy over all items (cosine score) or negative sampling (dot).

    ``weights`` (one per item, or None) multiply the positive terms: inverse propensities.
    """
    user = X @ A
    if score == "cosine":
        unit = torch.nn.functional.normalize
        logits = unit(user, dim=1) @ unit(B, dim=1).T / temperature
        return -(X * torch.log_softmax(logits, dim=1)).sum() / X.sum()
    logits = user @ B.T
    observed = X if weights is None else X * weights
    positive = -(observed * torch.nn.functional.logsigmoid(logits)).sum()
    sampled = torch.gather(logits, 1, negatives)  # negatives per user, share of n_negatives
    weight = n_negatives * X.sum(dim=1, keepdim=True) / negatives.shape[1]
    negative = -(weight * torch.nn.functional.logsigmoid(-sampled)).sum()
    return (positive + negative) / X.sum()


def train_embeddings(
    X: Any,
    k: int,
    *,
    score: Literal["cosine", "dot"] = "cosine",
    temperature: float = 0.1,
    n_negatives: float = 5.0,
    negative_power: float = 0.75,
    propensity_power: float = 0.0,
    n_steps: int = 300,
    learning_rate: float = 0.05,
    seed: int = 0,
) -> tuple[NDArray[np.float64], NDArray[np.float64], float]:
    r"""Train ``X ≈ score(XA, B)`` with Adam in PyTorch (float64, one thread): ``(A, B, loss)``.

    - ``score="cosine"``: the model's score is
      :math:`\cos(\boldsymbol{x}_u A, \boldsymbol{b}_i) / \tau` (:math:`\tau` =
      ``temperature``), trained with the softmax cross-entropy over all items of
      each user's positives (the cosine *is* the score: remedy 1).
    - ``score="dot"``: the score is :math:`\boldsymbol{x}_u A \cdot \boldsymbol{b}_i`,
      trained with the logistic loss of word2vec: each positive against
      ``n_negatives`` negatives (in expectation) drawn in proportion to
      :math:`c_i^{\,\text{negative\_power}}` (remedy 4; 0 draws them uniformly).
      With ``propensity_power`` :math:`\gamma > 0` the positive terms are weighted by
      inverse propensities :math:`w_i \propto c_i^{-\gamma}` (propensity of observing
      item :math:`i` taken as :math:`c_i^{\gamma}`), scaled so that the weighted
      positives sum to the number of positives (inverse propensity scoring).

    Full batch; the initial entries are normal with standard deviation 0.1.

    Examples
    --------
    >>> X = np.kron(np.eye(2), np.ones((5, 3)))
    >>> A, B, loss = train_embeddings(X, 2, n_steps=50, seed=0)
    >>> A.shape, bool(np.isfinite(loss))
    ((6, 2), True)
    """
    import torch

    X = _check_matrix(X)
    dense = X.toarray() if scipy.sparse.issparse(X) else X
    k = as_int_scalar(k, "k", minimum=1, maximum=dense.shape[1])
    if score not in ("cosine", "dot"):
        raise ValueError(f"score must be 'cosine' or 'dot'; got {score!r}")
    temperature = as_float_scalar(temperature, "temperature", positive=True)
    n_negatives = as_float_scalar(n_negatives, "n_negatives", positive=True)
    negative_power = as_float_scalar(negative_power, "negative_power", nonnegative=True)
    propensity_power = as_float_scalar(propensity_power, "propensity_power", nonnegative=True)
    n_steps = as_int_scalar(n_steps, "n_steps", minimum=1)
    learning_rate = as_float_scalar(learning_rate, "learning_rate", positive=True)
    generator = torch.Generator().manual_seed(as_int_scalar(seed, "seed", minimum=0))
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # sums in the same order on every machine
    try:
        Xt = torch.tensor(dense, dtype=torch.float64)
        n_users, n_items = Xt.shape
        A, B = (
            (
                0.1 * torch.randn(n_items, k, generator=generator, dtype=torch.float64)
            ).requires_grad_()
            for _ in range(2)
        )
        counts = Xt.sum(dim=0)
        draw = counts**negative_power
        weights = None
        if propensity_power > 0:
            inverse = torch.where(counts > 0, counts.clamp(min=1.0) ** -propensity_power, 0.0)
            weights = inverse * Xt.sum() / (Xt @ inverse).sum()
        optimizer = torch.optim.Adam([A, B], lr=learning_rate)
        for _ in range(n_steps):
            negatives = None
            if score == "dot":
                negatives = torch.multinomial(
                    draw.expand(n_users, -1), 50, replacement=True, generator=generator
                )
            optimizer.zero_grad()
            loss = _training_loss(
                torch, Xt, A, B, score, negatives, n_negatives, temperature, weights
            )
            loss.backward()
            optimizer.step()
        return A.detach().numpy().copy(), B.detach().numpy().copy(), float(loss.detach())
    finally:
        torch.set_num_threads(threads)
