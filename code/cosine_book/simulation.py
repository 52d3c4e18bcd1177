r"""The simulated user-item interactions of chapter 6 (Section 4 of Steck et al., 2024).

Everything is drawn from one ``seed``, the same bit for bit on every CPU: powers are
computed by :func:`cosine_book.portable.power`, and Dirichlet and log-normal draws
(whose last bits NumPy leaves to the CPU's ``exp`` and ``log``) are rounded to 24 bits.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import scipy.sparse
from numpy.typing import NDArray

from cosine_book._validation import as_float_scalar, as_int_scalar
from cosine_book.portable import power, round_to_24_bits, uniform

__all__ = ["make_clustered_interactions"]

EXPONENT_RANGE = (0.25, 1.5)  # the paper's Uniform(0.25, 1.5) for each cluster's beta_c
PREFERENCE_CONCENTRATION = 0.5  # Dirichlet parameter of each user's cluster preferences
USER_EXPONENT = 0.5  # power-law exponent of the users' activity


@dataclass(frozen=True)
class Interactions:
    r"""The 0/1 matrix ``X`` (CSR, users x items) and the quantities that generated it.

    ``item_clusters`` (labels ``0 .. n_clusters - 1``), ``item_popularity`` :math:`p_i`
    (summing to 1 per cluster), ``cluster_probabilities`` :math:`p_c`, the clusters'
    power-law exponents :math:`\beta_c`, ``user_preferences`` :math:`p_{uc}`, and the
    number of items :math:`k_u` of each user.
    """

    X: scipy.sparse.csr_array
    item_clusters: NDArray[np.int64]
    item_popularity: NDArray[np.float64]
    cluster_probabilities: NDArray[np.float64]
    cluster_exponents: NDArray[np.float64]
    user_preferences: NDArray[np.float64]
    items_per_user: NDArray[np.int64]


def _power_law(rng: np.random.Generator, size: int, exponent: float, form: str) -> NDArray:
    """``size`` power-law values, the smallest about 1: ranks or i.i.d. Pareto draws."""
    if form == "rank":  # the value at a random rank q of n is (n / q)^exponent
        return power(size / (rng.permutation(size) + 1), exponent)
    return power(1.0 - rng.random(size), -exponent)  # u^-exponent, u ~ U(0, 1]


def _dirichlet(rng: np.random.Generator, concentration: NDArray, size: int | None = None):
    draws = round_to_24_bits(rng.dirichlet(concentration, size=size))
    return draws / draws.sum(axis=-1, keepdims=True)


def _draw_items(rng, preferences, item_clusters, popularity, items_per_user):
    """Each user's ``k_u`` items without replacement, with probabilities ``p_ui``.

    Gumbel top-k: the ``k_u`` largest of ``log p_ui`` plus Gumbel noise are such a draw.
    """
    n_users, n_items = preferences.shape[0], item_clusters.size
    log_popularity = np.log(np.maximum(popularity, np.finfo(float).tiny))
    rows, cols = [], []
    for start in range(0, n_users, 2_000):  # bounds the dense (users x items) keys
        stop = min(start + 2_000, n_users)
        block = np.maximum(preferences[start:stop], np.finfo(float).tiny)
        keys = np.log(block[:, item_clusters]) + log_popularity
        keys += rng.gumbel(size=keys.shape)
        counts = items_per_user[start:stop]
        thresholds = -np.sort(-keys, axis=1)[np.arange(stop - start), counts - 1]
        chosen_rows, chosen_cols = np.nonzero(keys >= thresholds[:, None])
        rows.append(chosen_rows + start)
        cols.append(chosen_cols)
    rows, cols = np.concatenate(rows), np.concatenate(cols)
    return scipy.sparse.csr_array((np.ones(rows.size), (rows, cols)), shape=(n_users, n_items))


def make_clustered_interactions(
    n_users: int = 20_000,
    n_items: int = 1_000,
    n_clusters: int = 5,
    *,
    seed: int = 0,
    cluster_concentration: float | None = 3.0,
    preference: Literal["dirichlet", "lognormal"] = "dirichlet",
    power_law: Literal["rank", "sample"] = "rank",
    min_items: int = 20,
) -> Interactions:
    r"""Simulate the clustered user-item data of Section 4 of Steck et al. (2024).

    The defaults are the paper's size and chapter 6's setting A. Used in chapter 6.

    1. Cluster probabilities :math:`p_c` ~ Dirichlet(``cluster_concentration``), or
       equal if ``None``; each item joins cluster :math:`c` with probability :math:`p_c`.
    2. Each cluster draws :math:`\beta_c` ~ Uniform(0.25, 1.5); item popularity
       :math:`p_i` is a power law of exponent :math:`\beta_c` within its cluster.
    3. User preferences :math:`p_{uc}` ~ Dirichlet(0.5), or i.i.d. log-normal(0, 1).
    4. :math:`p_{ui} = p_{u,c(i)}\, p_i / \sum_j p_{u,c(j)}\, p_j`.
    5. Items per user :math:`k_u = \min(p, \lfloor m v_u \rfloor)`, :math:`p` =
       ``n_items``, :math:`m` = ``min_items``, :math:`v_u` a power law of exponent 1/2;
       the items are drawn without replacement.

    A power law of exponent :math:`\beta` is, with ``power_law="rank"``, the value
    :math:`(n / q)^\beta` at a random rank :math:`q` of :math:`n`; with ``"sample"``,
    i.i.d. Pareto values :math:`u^{-\beta}`, :math:`u \sim U(0, 1]`.

    Examples
    --------
    >>> data = make_clustered_interactions(n_users=200, n_items=50, n_clusters=3, min_items=5)
    >>> data.X.shape, np.bincount(data.item_clusters).tolist()
    ((200, 50), [14, 24, 12])
    """
    n_users = as_int_scalar(n_users, "n_users", minimum=1)
    n_items = as_int_scalar(n_items, "n_items", minimum=1)
    n_clusters = as_int_scalar(n_clusters, "n_clusters", minimum=1, maximum=n_items)
    rng = np.random.default_rng(as_int_scalar(seed, "seed", minimum=0))
    if preference not in ("dirichlet", "lognormal"):
        raise ValueError(f"preference must be 'dirichlet' or 'lognormal'; got {preference!r}")
    if power_law not in ("rank", "sample"):
        raise ValueError(f"power_law must be 'rank' or 'sample'; got {power_law!r}")
    min_items = as_int_scalar(min_items, "min_items", minimum=1, maximum=n_items)

    if cluster_concentration is None:
        cluster_probabilities = np.full(n_clusters, 1.0 / n_clusters)
    else:
        alpha = as_float_scalar(cluster_concentration, "cluster_concentration", positive=True)
        cluster_probabilities = _dirichlet(rng, np.full(n_clusters, alpha))
    item_clusters = rng.choice(n_clusters, size=n_items, p=cluster_probabilities)
    cluster_exponents = uniform(rng, *EXPONENT_RANGE, size=n_clusters)
    item_popularity = np.zeros(n_items)
    for c, exponent in enumerate(cluster_exponents):
        members = np.flatnonzero(item_clusters == c)
        if members.size:
            values = _power_law(rng, members.size, exponent, power_law)
            item_popularity[members] = values / values.sum()
    if preference == "dirichlet":
        concentration = np.full(n_clusters, PREFERENCE_CONCENTRATION)
        user_preferences = _dirichlet(rng, concentration, size=n_users)
    else:
        user_preferences = round_to_24_bits(rng.lognormal(0.0, 1.0, size=(n_users, n_clusters)))
    activity = _power_law(rng, n_users, USER_EXPONENT, power_law)
    items_per_user = np.minimum(n_items, np.floor(min_items * activity)).astype(np.int64)
    X = _draw_items(rng, user_preferences, item_clusters, item_popularity, items_per_user)
    return Interactions(
        X,
        item_clusters,
        item_popularity,
        cluster_probabilities,
        cluster_exponents,
        user_preferences,
        items_per_user,
    )
