"""The simulated user-item interactions of chapter 6 (Section 4 of Steck et al., 2024).

:func:`make_clustered_interactions` simulates the clustered user-item data of
Section 4 of Steck, Ekanadham and Kallus (2024), in the manner of
``sklearn.datasets.make_*``. It draws everything from one ``seed`` (the book's
name for scikit-learn's ``random_state``) and returns the data with the hidden
quantities that made them, as an :class:`Interactions`. The real ratings of the
same chapter are loaded by :func:`cosine_book.datasets.load_movielens`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import scipy.sparse
from numpy.typing import NDArray

from cosine_book._validation import as_float_scalar, as_int_scalar, as_real_array
from cosine_book.portable import power, round_to_24_bits, uniform

__all__ = ["Interactions", "make_clustered_interactions"]


@dataclass(frozen=True)
class Interactions:
    r"""Simulated user-item data with planted item clusters.

    Attributes
    ----------
    X : scipy.sparse.csr_array of shape (n_users, n_items)
        0/1 interactions.
    item_clusters : ndarray of shape (n_items,)
        Cluster label ``0 .. n_clusters - 1`` of each item.
    item_popularity : ndarray of shape (n_items,)
        Baseline popularity :math:`p_i` (sums to 1 within each cluster).
    cluster_probabilities : ndarray of shape (n_clusters,)
        Probability of an item falling in each cluster.
    cluster_exponents : ndarray of shape (n_clusters,)
        Power-law exponent :math:`\beta_c` of each cluster's popularity.
    user_preferences : ndarray of shape (n_users, n_clusters)
        Preferences :math:`p_{uc}` of the users for the clusters.
    items_per_user : ndarray of shape (n_users,)
        Number of items :math:`k_u` of each user.
    """

    X: scipy.sparse.csr_array
    item_clusters: NDArray[np.int64]
    item_popularity: NDArray[np.float64]
    cluster_probabilities: NDArray[np.float64]
    cluster_exponents: NDArray[np.float64]
    user_preferences: NDArray[np.float64]
    items_per_user: NDArray[np.int64]


def _power_law_values(
    rng: np.random.Generator, size: int, exponent: float, form: str
) -> NDArray[np.float64]:
    """``size`` power-law values of the given exponent, the smallest of them about 1."""
    if form == "rank":
        # Zipf over a random ranking: the value at rank q is (size / q)^exponent.
        ranks = rng.permutation(size) + 1
        return power(size / ranks, exponent)
    # "sample": i.i.d. Pareto draws with the same tail, u^(-exponent), u ~ U(0, 1].
    return power(1.0 - rng.random(size), -exponent)


def _dirichlet(rng: np.random.Generator, concentration: NDArray[np.float64], size=None):
    """Dirichlet draws rounded to 24 bits and renormalised: the same on every CPU.

    NumPy's gamma sampler calls the C library's ``exp`` and ``log``, whose last bits
    depend on the CPU; the rounding removes them (see :mod:`cosine_book.portable`).
    """
    draws = round_to_24_bits(rng.dirichlet(concentration, size=size))
    return draws / draws.sum(axis=-1, keepdims=True)


def _item_popularity(
    rng: np.random.Generator,
    item_clusters: NDArray[np.int64],
    cluster_exponents: NDArray[np.float64],
    form: str,
) -> NDArray[np.float64]:
    """Power-law popularity within each cluster, normalised to sum to 1 per cluster."""
    item_popularity = np.zeros(item_clusters.size)
    for c, exponent in enumerate(cluster_exponents):
        members = np.flatnonzero(item_clusters == c)
        if members.size:
            values = _power_law_values(rng, members.size, exponent, form)
            if not np.isfinite(values.sum()):
                raise ValueError(
                    f"exponent_range allows exponents up to {exponent:.4g}, whose power-law "
                    "values overflow float64; expected smaller exponents"
                )
            item_popularity[members] = values / values.sum()
    return item_popularity


def _draw_items(
    rng: np.random.Generator,
    user_preferences: NDArray[np.float64],
    item_clusters: NDArray[np.int64],
    item_popularity: NDArray[np.float64],
    items_per_user: NDArray[np.int64],
) -> scipy.sparse.csr_array:
    """For each user, ``items_per_user`` items without replacement, as 0/1 CSR rows.

    Gumbel top-k: the k largest of ``log p_ui`` plus Gumbel noise are a draw of
    k items without replacement with probabilities ``p_ui`` (successive
    sampling), exactly.
    """
    n_users, n_items = user_preferences.shape[0], item_clusters.size
    log_popularity = np.log(np.maximum(item_popularity, np.finfo(float).tiny))
    rows, cols = [], []
    chunk = 2_000
    for start in range(0, n_users, chunk):
        stop = min(start + chunk, n_users)
        preferences = np.maximum(user_preferences[start:stop], np.finfo(float).tiny)
        keys = np.log(preferences[:, item_clusters]) + log_popularity
        keys += rng.gumbel(size=keys.shape)
        counts = items_per_user[start:stop]
        sorted_keys = -np.sort(-keys, axis=1)
        thresholds = sorted_keys[np.arange(stop - start), counts - 1]
        chosen_rows, chosen_cols = np.nonzero(keys >= thresholds[:, None])
        rows.append(chosen_rows + start)
        cols.append(chosen_cols)
    rows_all = np.concatenate(rows)
    cols_all = np.concatenate(cols)
    return scipy.sparse.csr_array(
        (np.ones(rows_all.size), (rows_all, cols_all)), shape=(n_users, n_items)
    )


def make_clustered_interactions(
    n_users: int = 20_000,
    n_items: int = 1_000,
    n_clusters: int = 5,
    *,
    seed: int = 0,
    cluster_concentration: float | None = 3.0,
    preference: Literal["dirichlet", "lognormal"] = "dirichlet",
    preference_concentration: float = 0.5,
    power_law: Literal["rank", "sample"] = "rank",
    exponent_range: tuple[float, float] = (0.25, 1.5),
    user_exponent: float = 0.5,
    min_items: int = 20,
    max_items: int | None = None,
) -> Interactions:
    r"""Generate the clustered user-item data of Section 4 of Steck et al. (2024).

    The defaults are the paper's size (20,000 users, 1,000 items, 5 clusters)
    and chapter 6's setting A.

    1. Cluster probabilities :math:`p_c` from a symmetric Dirichlet
       distribution with parameter ``cluster_concentration`` (equal
       probabilities if ``None``); each item joins cluster :math:`c` with
       probability :math:`p_c`.
    2. Each cluster draws an exponent :math:`\beta_c` uniformly from
       ``exponent_range``; item popularity :math:`p_i` follows a power law with
       exponent :math:`\beta_c` within its cluster.
    3. User preferences :math:`p_{uc}`: a symmetric Dirichlet draw with
       parameter ``preference_concentration`` per user, or i.i.d. log-normal
       values with parameters 0 and 1.
    4. :math:`p_{ui} = p_{u,c(i)}\, p_i / \sum_j p_{u,c(j)}\, p_j`.
    5. Items per user :math:`k_u = \min(c, \lfloor m v_u \rfloor)`, with the cap
       :math:`c` = ``max_items`` (default :math:`p` = ``n_items``),
       :math:`m` = ``min_items`` and :math:`v_u` a power law of exponent
       ``user_exponent``; the :math:`k_u` items are drawn without replacement
       with probabilities :math:`p_{ui}` (Gumbel top-k, exact).

    A power law with exponent :math:`\beta` is, with ``power_law="rank"``, the
    value :math:`(n / q)^\beta` of the item (user) at a random rank :math:`q`
    among :math:`n`; with ``power_law="sample"``, i.i.d. Pareto values
    :math:`u^{-\beta}`, :math:`u \sim U(0, 1]`.

    Parameters
    ----------
    n_users, n_items, n_clusters : int
        Positive, with ``n_clusters <= n_items``.
    seed : int
        Seed of every random draw (nonnegative): the same seed gives the same
        data, bit for bit, on every CPU. Powers are computed with mpmath, and
        Dirichlet and log-normal draws are rounded to 24 significant bits,
        since NumPy computes both with functions whose last bits depend on the
        CPU. The Gumbel keys that pick the items are such values too, but they
        only decide which items a user gets: a pick changes only if two keys at
        the cut lie within a few units in the last place of each other.
    cluster_concentration : float or None
        Positive.
    preference : {"dirichlet", "lognormal"}
    preference_concentration : float
        Positive.
    power_law : {"rank", "sample"}
    exponent_range : (float, float)
        ``0 <= low <= high``.
    user_exponent : float
        Nonnegative.
    min_items : int
        ``1 <= min_items <= n_items``.
    max_items : int or None
        The cap on :math:`k_u`, ``min_items <= max_items <= n_items``; ``None`` caps at
        ``n_items`` (chapter 6's settings).

    Returns
    -------
    Interactions
        The 0/1 matrix ``X`` (sparse) and the quantities that generated it.

    Examples
    --------
    >>> data = make_clustered_interactions(
    ...     n_users=200, n_items=50, n_clusters=3, min_items=5
    ... )
    >>> data.X.shape, int(data.X.max())
    ((200, 50), 1)
    >>> np.bincount(data.item_clusters).tolist()
    [14, 24, 12]
    >>> per_user = np.asarray(data.X.sum(axis=1))
    >>> bool((per_user == data.items_per_user).all())
    True
    """
    n_users = as_int_scalar(n_users, "n_users", minimum=1)
    n_items = as_int_scalar(n_items, "n_items", minimum=1)
    n_clusters = as_int_scalar(n_clusters, "n_clusters", minimum=1)
    if n_clusters > n_items:
        raise ValueError(
            f"n_clusters={n_clusters} exceeds n_items={n_items}; expected at most one "
            "cluster per item"
        )
    seed = as_int_scalar(seed, "seed", minimum=0)
    if cluster_concentration is not None:
        cluster_concentration = as_float_scalar(
            cluster_concentration, "cluster_concentration", positive=True
        )
    if not isinstance(preference, str) or preference not in ("dirichlet", "lognormal"):
        raise ValueError(f"preference must be 'dirichlet' or 'lognormal'; got {preference!r}")
    preference_concentration = as_float_scalar(
        preference_concentration, "preference_concentration", positive=True
    )
    if not isinstance(power_law, str) or power_law not in ("rank", "sample"):
        raise ValueError(f"power_law must be 'rank' or 'sample'; got {power_law!r}")
    bounds = as_real_array(exponent_range, "exponent_range", ndim=1)
    if bounds.shape != (2,) or not 0 <= bounds[0] <= bounds[1]:
        raise ValueError(
            f"exponent_range must be two numbers with 0 <= low <= high; got {exponent_range!r}"
        )
    user_exponent = as_float_scalar(user_exponent, "user_exponent", nonnegative=True)
    min_items = as_int_scalar(min_items, "min_items", minimum=1, maximum=n_items)
    cap = (
        n_items
        if max_items is None
        else as_int_scalar(max_items, "max_items", minimum=min_items, maximum=n_items)
    )
    rng = np.random.default_rng(seed)

    if cluster_concentration is None:
        cluster_probabilities = np.full(n_clusters, 1.0 / n_clusters)
    else:
        cluster_probabilities = _dirichlet(rng, np.full(n_clusters, float(cluster_concentration)))
    item_clusters = rng.choice(n_clusters, size=n_items, p=cluster_probabilities)
    cluster_exponents = uniform(rng, float(bounds[0]), float(bounds[1]), size=n_clusters)
    item_popularity = _item_popularity(rng, item_clusters, cluster_exponents, power_law)
    if preference == "dirichlet":
        concentration = np.full(n_clusters, float(preference_concentration))
        user_preferences = _dirichlet(rng, concentration, size=n_users)
    else:
        user_preferences = round_to_24_bits(rng.lognormal(0.0, 1.0, size=(n_users, n_clusters)))
    activity = _power_law_values(rng, n_users, user_exponent, power_law)
    items_per_user = np.minimum(cap, np.floor(min_items * activity)).astype(np.int64)
    return Interactions(
        X=_draw_items(rng, user_preferences, item_clusters, item_popularity, items_per_user),
        item_clusters=item_clusters,
        item_popularity=item_popularity,
        cluster_probabilities=cluster_probabilities,
        cluster_exponents=cluster_exponents,
        user_preferences=user_preferences,
        items_per_user=items_per_user,
    )
