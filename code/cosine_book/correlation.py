r"""Pearson correlation as a centred cosine, and its split into groups.

Pearson's correlation of two samples is the cosine of the mean-centred vectors,

.. math::

    r(x, y) = \cos(x - \bar x \mathbf 1,\; y - \bar y \mathbf 1),

so everything the book proves about cosines of blocked vectors applies to data
split into groups, with one twist: the centring uses the *pooled* means. Each
group's centred block ``x_g - \bar x`` is its own within-group deviation plus
the constant offset ``\bar x_g - \bar x``, and that offset brings in a
between-group term (the law of total covariance):

.. math::

    \operatorname{cov}(x, y)
    = \underbrace{\sum_g p_g\, r_g\, s_{x,g}\, s_{y,g}}_{\text{within}}
    + \underbrace{\sum_g p_g (\bar x_g - \bar x)(\bar y_g - \bar y)}_{\text{between}},

with group shares ``p_g = n_g / n`` and population (``ddof=0``) standard
deviations. :func:`grouped_correlation` computes every term from raw data,
:func:`pooled_correlation` the pooled ``r`` from group summaries alone, and
:func:`sample_with_moments` draws points whose sample moments are exactly the
ones asked for (so a figure shows precisely the numbers of the formula).
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from cosine_book._validation import as_real_array, nonfinite_error
from cosine_book.similarity import BlockCosines, block_cosines, cosine

__all__ = [
    "GroupedCorrelation",
    "centered_block_cosines",
    "cosine_from_moments",
    "grouped_correlation",
    "pearson",
    "pooled_correlation",
    "sample_with_moments",
    "zero_crossing_gap",
]


def _as_sample(value: ArrayLike, name: str) -> NDArray[np.float64]:
    """A 1-D float64 sample with clear errors for the usual mistakes."""
    array = as_real_array(value, name)
    if array.ndim != 1:
        raise ValueError(f"{name} must be 1-D (one value per observation); got shape {array.shape}")
    array = array.astype(np.float64)
    error = nonfinite_error(array, name)
    if error is not None:
        raise error
    return array


def _check_pair(x: ArrayLike, y: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    x_array, y_array = _as_sample(x, "x"), _as_sample(y, "y")
    if x_array.size != y_array.size:
        raise ValueError(
            f"x has {x_array.size} observations but y has {y_array.size}; "
            "expected paired samples of equal length"
        )
    if x_array.size < 2:
        raise ValueError(f"a correlation needs at least 2 observations; got {x_array.size}")
    return x_array, y_array


def _centred(values: NDArray[np.float64]) -> NDArray[np.float64]:
    """Deviations from the mean, scaled by the largest entry so no sum overflows."""
    # Correlation ignores positive scaling, so dividing by max|x| first keeps
    # entries near 1e300 (or 1e-300) exact; the second pass removes the
    # rounding left in the first mean.
    scaled = values / np.max(np.abs(values))
    deviations = scaled - scaled.mean()
    return deviations - deviations.mean()


def _is_constant(values: NDArray[np.float64]) -> bool:
    return bool(np.all(values == values[0]))


def pearson(x: ArrayLike, y: ArrayLike) -> float:
    """Pearson's correlation coefficient, computed as the cosine of centred data.

    ``r = cos(x - mean(x), y - mean(y))``, using
    :func:`cosine_book.similarity.cosine`, so it equals
    ``numpy.corrcoef(x, y)[0, 1]`` and ``scipy.stats.pearsonr(x, y)`` to
    rounding, and stays exact for entries as large as ``1e300``.

    Parameters
    ----------
    x, y : array_like of shape (n,)
        Paired real samples, ``n >= 2``.

    Returns
    -------
    float
        The correlation, in ``[-1, 1]``.

    Raises
    ------
    ValueError
        If the lengths differ, fewer than two observations are given, an input
        is not 1-D, contains NaN or infinity, or is constant (a constant sample
        has no direction after centring, so its correlation is undefined).

    Examples
    --------
    >>> round(pearson([1, 2, 3, 4], [2, 4, 5, 9]), 4)
    0.9648
    >>> pearson([1e300, 2e300, 3e300], [3.0, 2.0, 1.0])
    -1.0
    >>> pearson([5, 5, 5], [1, 2, 3])
    Traceback (most recent call last):
    ...
    ValueError: x is constant (every value is 5.0); its correlation with anything is undefined
    """
    x_array, y_array = _check_pair(x, y)
    for values, name in ((x_array, "x"), (y_array, "y")):
        if _is_constant(values):
            raise ValueError(
                f"{name} is constant (every value is {values[0]}); "
                "its correlation with anything is undefined"
            )
    return cosine(_centred(x_array), _centred(y_array))


def cosine_from_moments(
    x_mean: float, y_mean: float, x_sd: float, y_sd: float, correlation: float
) -> float:
    r"""Raw (uncentred) cosine of two samples from their means, spreads and correlation.

    Splitting each vector into its mean part and its centred part, which are
    orthogonal, gives

    .. math::

        \cos(x, y) = \frac{\bar x \bar y + r\, s_x s_y}
        {\sqrt{(\bar x^2 + s_x^2)(\bar y^2 + s_y^2)}},

    with population (``ddof=0``) standard deviations. Large means relative to
    the spreads push the cosine towards ``sign(xbar * ybar)`` whatever ``r`` is.

    Parameters
    ----------
    x_mean, y_mean : float
        Sample means.
    x_sd, y_sd : float
        Sample standard deviations (``ddof=0``), nonnegative.
    correlation : float
        Pearson's ``r`` in ``[-1, 1]`` (ignored where a spread is zero).

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If a spread is negative, ``correlation`` lies outside ``[-1, 1]``, or a
        vector would be zero (mean and spread both zero).

    Examples
    --------
    Uncorrelated data with means three spreads away from zero:

    >>> round(cosine_from_moments(3.0, 3.0, 1.0, 1.0, 0.0), 4)
    0.9
    """
    if x_sd < 0 or y_sd < 0:
        raise ValueError(f"x_sd and y_sd must be nonnegative; got {x_sd} and {y_sd}")
    if not -1.0 <= correlation <= 1.0:
        raise ValueError(f"correlation must lie in [-1, 1]; got {correlation}")
    x_square, y_square = x_mean**2 + x_sd**2, y_mean**2 + y_sd**2
    if x_square == 0 or y_square == 0:
        raise ValueError("a vector with zero mean and zero spread is zero; its cosine is undefined")
    value = (x_mean * y_mean + correlation * x_sd * y_sd) / np.sqrt(x_square * y_square)
    return float(np.clip(value, -1.0, 1.0))


@dataclass(frozen=True)
class GroupedCorrelation:
    """Within-group, between-group and pooled correlation of grouped data.

    All moments are population moments (divide by ``n_g``, ``ddof=0``); the
    correlations do not depend on that choice. Everything is computed in units
    of the largest entry of ``x`` and of ``y``, so correlations, factors and
    weights stay exact for entries near ``1e300`` or ``1e-300``; only a moment
    reported in data units that lies beyond the float range shows as ``inf``
    (or ``0``).

    Attributes
    ----------
    labels : tuple
        The group labels, in sorted order.
    counts : ndarray of shape (n_groups,)
        Observations per group, ``n_g``.
    shares : ndarray of shape (n_groups,)
        ``p_g = n_g / n``.
    x_means, y_means : ndarray of shape (n_groups,)
        Group means.
    x_sds, y_sds : ndarray of shape (n_groups,)
        Group standard deviations (``ddof=0``).
    within : ndarray of shape (n_groups,)
        Within-group correlations ``r_g``; ``nan`` for a group in which ``x`` or
        ``y`` is constant (its covariance is zero, so the decomposition still holds).
    pooled : float
        Pearson's ``r`` of all the data together.
    within_covariance, between_covariance, total_covariance : float
        ``sum p_g cov_g``, ``sum p_g (xbar_g - xbar)(ybar_g - ybar)`` and the
        pooled covariance; the first two add up to the third.
    pooled_within : float
        Correlation of the within-group deviations ``x - xbar_g`` and
        ``y - ybar_g`` of all groups together (``nan`` if either is all zero).
    between : float
        Correlation of the group means weighted by the shares, that is of the
        vectors ``xbar_g - xbar`` repeated ``n_g`` times (``nan`` if the group
        means of ``x`` or of ``y`` are all equal).
    within_factor, between_factor : float
        ``a_W = sqrt((1 - eta_x^2)(1 - eta_y^2))`` and ``a_B = eta_x eta_y``,
        where ``eta^2`` is the between-group share of a variance; then
        ``pooled = a_W * pooled_within + a_B * between`` (a term whose factor
        is zero is dropped), and ``a_W + a_B <= 1``.
    """

    labels: tuple[Hashable, ...]
    counts: NDArray[np.int64]
    shares: NDArray[np.float64]
    x_means: NDArray[np.float64]
    y_means: NDArray[np.float64]
    x_sds: NDArray[np.float64]
    y_sds: NDArray[np.float64]
    within: NDArray[np.float64]
    pooled: float
    within_covariance: float
    between_covariance: float
    total_covariance: float
    pooled_within: float
    between: float
    within_factor: float
    between_factor: float

    def between_shares(self) -> tuple[float, float]:
        """Between-group shares of the pooled variances of ``x`` and ``y`` (``eta^2``).

        ``B_x / (W_x + B_x)`` with ``W_x = sum p_g s_xg^2`` and
        ``B_x = sum p_g (xbar_g - xbar)^2``; the same for ``y``. Then
        ``within_factor = sqrt((1 - eta_x^2)(1 - eta_y^2))`` and
        ``between_factor = sqrt(eta_x^2 eta_y^2)``.
        """
        return (
            _between_share(self.shares, self.x_means - self.shares @ self.x_means, self.x_sds),
            _between_share(self.shares, self.y_means - self.shares @ self.y_means, self.y_sds),
        )

    def within_weights(self) -> NDArray[np.float64]:
        """Weights ``w_g`` with ``pooled_within = sum w_g r_g`` (the block-cosine weights).

        ``w_g = p_g s_xg s_yg / sqrt(sum p_h s_xh^2 * sum p_h s_yh^2)``; they sum to
        the cosine between the profiles ``sqrt(p_g) s_xg`` and ``sqrt(p_g) s_yg``.
        """
        if not (self.x_sds.any() and self.y_sds.any()):
            return np.zeros_like(self.shares)  # no within-group spread: no within part
        # Relative spreads: the weights do not depend on units, and squares cannot overflow.
        x_sds = self.x_sds / np.max(self.x_sds)
        y_sds = self.y_sds / np.max(self.y_sds)
        x_within = self.shares @ x_sds**2
        y_within = self.shares @ y_sds**2
        return self.shares * x_sds * y_sds / np.sqrt(x_within * y_within)


def _group_index(groups: ArrayLike, n: int) -> tuple[tuple[Hashable, ...], NDArray[np.intp]]:
    labels_array = np.asarray(groups)
    if labels_array.ndim != 1:
        raise ValueError(
            f"groups must be 1-D (one label per observation); got shape {labels_array.shape}"
        )
    if labels_array.size != n:
        raise ValueError(
            f"groups has {labels_array.size} labels but x and y have {n} observations; "
            "expected one label per observation"
        )
    if labels_array.dtype.kind == "f" and np.isnan(labels_array).any():
        raise ValueError("groups contains NaN; expected a label for every observation")
    labels, index = np.unique(labels_array, return_inverse=True)
    return tuple(label.item() if hasattr(label, "item") else label for label in labels), index


def _cos_or_nan(u: NDArray[np.float64], v: NDArray[np.float64]) -> float:
    if not u.any() or not v.any():
        return float("nan")
    return cosine(u, v)


def grouped_correlation(x: ArrayLike, y: ArrayLike, groups: ArrayLike) -> GroupedCorrelation:
    r"""Within-group correlations, the pooled correlation, and the covariance decomposition.

    Splits the pooled covariance into a within-group and a between-group part
    (the law of total covariance) and the pooled correlation accordingly:

    ``pooled = a_W * sum_g w_g r_g + a_B * between``,

    with the block-cosine weights ``w_g`` of :meth:`GroupedCorrelation.within_weights`.

    Parameters
    ----------
    x, y : array_like of shape (n,)
        Paired real samples.
    groups : array_like of shape (n,)
        A group label for every observation (numbers or strings).

    Returns
    -------
    GroupedCorrelation

    Raises
    ------
    ValueError
        If lengths differ, an input contains NaN or infinity, ``x`` or ``y`` is
        constant over all the data, or a group has fewer than two observations.

    Examples
    --------
    Two groups on parallel lines of slope +1, the second shifted down (the
    picture behind Simpson's paradox):

    >>> x = [0, 1, 2, 3, 4, 5]
    >>> y = [4, 5, 6, 0, 1, 2]
    >>> result = grouped_correlation(x, y, ["a", "a", "a", "b", "b", "b"])
    >>> result.within
    array([1., 1.])
    >>> round(result.pooled, 4)
    -0.6325
    >>> round(result.within_covariance, 4), round(result.between_covariance, 4)
    (0.6667, -3.0)
    """
    x_array, y_array = _check_pair(x, y)
    labels, index = _group_index(groups, x_array.size)
    counts = np.bincount(index, minlength=len(labels)).astype(np.int64)
    if (counts < 2).any():
        small = [labels[g] for g in np.flatnonzero(counts < 2)]
        raise ValueError(
            f"groups {small} have fewer than 2 observations; a within-group "
            "correlation needs at least 2 per group"
        )
    pooled = pearson(x_array, y_array)
    shares = counts / counts.sum()
    # Work in units of the largest entry, so that no square overflows or underflows;
    # correlations and variance shares do not depend on the units.
    x_scale, y_scale = float(np.max(np.abs(x_array))), float(np.max(np.abs(y_array)))
    x_unit, y_unit = x_array / x_scale, y_array / y_scale
    x_means = np.bincount(index, weights=x_unit) / counts
    y_means = np.bincount(index, weights=y_unit) / counts
    # Within-group deviations, re-centred once more to remove rounding of the means.
    x_dev = x_unit - x_means[index]
    y_dev = y_unit - y_means[index]
    x_dev -= (np.bincount(index, weights=x_dev) / counts)[index]
    y_dev -= (np.bincount(index, weights=y_dev) / counts)[index]
    for g in range(len(labels)):
        member = index == g
        # A constant group has no spread: exact zeros keep rounding noise out of r_g.
        if _is_constant(x_array[member]):
            x_dev[member] = 0.0
        if _is_constant(y_array[member]):
            y_dev[member] = 0.0
    x_sds = np.sqrt(np.bincount(index, weights=x_dev**2) / counts)
    y_sds = np.sqrt(np.bincount(index, weights=y_dev**2) / counts)
    within = np.full(len(labels), np.nan)
    for g in range(len(labels)):
        member = index == g
        if x_dev[member].any() and y_dev[member].any():
            within[g] = cosine(x_dev[member], y_dev[member])
    x_gap, y_gap = x_means - shares @ x_means, y_means - shares @ y_means
    x_between_share = _between_share(shares, x_gap, x_sds)
    y_between_share = _between_share(shares, y_gap, y_sds)
    within_cov = float(shares @ (np.bincount(index, weights=x_dev * y_dev) / counts))
    between_cov = float(shares @ (x_gap * y_gap))
    total_cov = float(np.mean((x_unit - shares @ x_means) * (y_unit - shares @ y_means)))
    with np.errstate(over="ignore", under="ignore"):  # back to data units; may be inf or 0
        return GroupedCorrelation(
            labels=labels,
            counts=counts,
            shares=shares,
            x_means=x_means * x_scale,
            y_means=y_means * y_scale,
            x_sds=x_sds * x_scale,
            y_sds=y_sds * y_scale,
            within=within,
            pooled=pooled,
            within_covariance=within_cov * x_scale * y_scale,
            between_covariance=between_cov * x_scale * y_scale,
            total_covariance=total_cov * x_scale * y_scale,
            pooled_within=_cos_or_nan(x_dev, y_dev),
            between=_cos_or_nan(np.sqrt(shares) * x_gap, np.sqrt(shares) * y_gap),
            within_factor=float(np.sqrt((1 - x_between_share) * (1 - y_between_share))),
            between_factor=float(np.sqrt(x_between_share * y_between_share)),
        )


def _between_share(
    shares: NDArray[np.float64], gaps: NDArray[np.float64], sds: NDArray[np.float64]
) -> float:
    """eta^2: the between-group share of a pooled variance."""
    scale = max(float(np.max(np.abs(gaps))), float(np.max(sds)))  # > 0 for non-constant data
    between = float(shares @ (gaps / scale) ** 2)
    return between / (between + float(shares @ (sds / scale) ** 2))


def _summary(value: ArrayLike, name: str, size: int | None) -> NDArray[np.float64]:
    array = np.asarray(value, dtype=np.float64)
    if array.ndim != 1 or array.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D array; got shape {array.shape}")
    if size is not None and array.size != size:
        raise ValueError(f"{name} has {array.size} entries; expected {size} (one per group)")
    return array


def pooled_correlation(
    shares: ArrayLike,
    x_means: ArrayLike,
    y_means: ArrayLike,
    x_sds: ArrayLike,
    y_sds: ArrayLike,
    within: ArrayLike,
) -> float:
    r"""Pooled Pearson ``r`` from each group's share, means, spreads and correlation.

    .. math::

        r = \frac{\sum_g p_g r_g s_{x,g} s_{y,g} + \sum_g p_g d_{x,g} d_{y,g}}
        {\sqrt{\left(\sum_g p_g s_{x,g}^2 + \sum_g p_g d_{x,g}^2\right)
        \left(\sum_g p_g s_{y,g}^2 + \sum_g p_g d_{y,g}^2\right)}},

    with ``d_{x,g} = xbar_g - sum_h p_h xbar_h`` (and the same for ``y``) and
    population standard deviations ``s``.

    Parameters
    ----------
    shares : array_like of shape (n_groups,)
        Nonnegative group sizes or shares ``p_g`` (normalised to sum to 1).
    x_means, y_means : array_like of shape (n_groups,)
        Group means.
    x_sds, y_sds : array_like of shape (n_groups,)
        Nonnegative group standard deviations (``ddof=0``).
    within : array_like of shape (n_groups,)
        Within-group correlations in ``[-1, 1]``; ``nan`` is allowed only where
        ``x_sds`` or ``y_sds`` is zero.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If the arrays differ in length, a share or spread is negative or not
        finite, a correlation lies outside ``[-1, 1]``, or the pooled ``x`` or
        ``y`` has zero variance.

    Examples
    --------
    The same two groups as in :func:`grouped_correlation`:

    >>> sd = (2 / 3) ** 0.5
    >>> round(pooled_correlation([3, 3], [1, 4], [5, 1], [sd, sd], [sd, sd], [1, 1]), 4)
    -0.6325
    """
    p = _summary(shares, "shares", None)
    arrays = [
        _summary(value, name, p.size)
        for value, name in (
            (x_means, "x_means"),
            (y_means, "y_means"),
            (x_sds, "x_sds"),
            (y_sds, "y_sds"),
            (within, "within"),
        )
    ]
    mx, my, sx, sy, r = arrays
    for array, name in ((p, "shares"), (sx, "x_sds"), (sy, "y_sds")):
        if not np.isfinite(array).all() or (array < 0).any():
            raise ValueError(f"{name} must be finite and nonnegative; got {array}")
    if not (np.isfinite(mx).all() and np.isfinite(my).all()):
        raise ValueError("x_means and y_means must be finite")
    if p.sum() <= 0:
        raise ValueError("shares sum to zero; expected at least one nonempty group")
    p = p / p.sum()
    undefined = np.isnan(r)
    if (undefined & (sx * sy > 0)).any():
        raise ValueError("within is nan for a group whose spreads are both nonzero")
    if ((r[~undefined] < -1) | (r[~undefined] > 1)).any():
        raise ValueError(f"within correlations must lie in [-1, 1]; got {r}")
    dx, dy = mx - np.dot(p, mx), my - np.dot(p, my)
    covariance = np.sum(np.where(undefined, 0.0, p * r * sx * sy)) + np.dot(p, dx * dy)
    x_var = np.dot(p, sx**2) + np.dot(p, dx**2)
    y_var = np.dot(p, sy**2) + np.dot(p, dy**2)
    if x_var <= 0 or y_var <= 0:
        raise ValueError("the pooled x or y has zero variance; the correlation is undefined")
    return float(np.clip(covariance / np.sqrt(x_var * y_var), -1.0, 1.0))


def zero_crossing_gap(
    shares: ArrayLike, x_gap: float, x_sds: ArrayLike, y_sds: ArrayLike, within: ArrayLike
) -> float:
    """For two groups: the gap in ``y`` means at which the pooled correlation is zero.

    With shares ``p_1, p_2``, gap ``x_gap = xbar_2 - xbar_1`` and
    ``y_gap = ybar_2 - ybar_1``, the between-group covariance is
    ``p_1 p_2 x_gap y_gap``, so the pooled covariance vanishes at

    ``y_gap* = -(p_1 r_1 s_x1 s_y1 + p_2 r_2 s_x2 s_y2) / (p_1 p_2 x_gap)``.

    The pooled ``r`` has the sign of the within-group covariance on one side
    of ``y_gap*`` and the opposite sign on the other.

    Parameters
    ----------
    shares : array_like of shape (2,)
        Positive group sizes or shares (normalised to sum to 1).
    x_gap : float
        ``xbar_2 - xbar_1``, nonzero.
    x_sds, y_sds : array_like of shape (2,)
        Group standard deviations (``ddof=0``).
    within : array_like of shape (2,)
        Within-group correlations.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If an array does not have two entries, a share is not positive, or
        ``x_gap`` is zero (then the group means cannot move the sign).

    Examples
    --------
    >>> sd = (2 / 3) ** 0.5
    >>> round(zero_crossing_gap([1, 1], 3.0, [sd, sd], [sd, sd], [1, 1]), 4)
    -0.8889
    """
    p = np.asarray(shares, dtype=np.float64)
    sx, sy, r = (np.asarray(v, dtype=np.float64) for v in (x_sds, y_sds, within))
    if not all(a.shape == (2,) for a in (p, sx, sy, r)):
        raise ValueError("shares, x_sds, y_sds and within must each have exactly 2 entries")
    if not np.isfinite(p).all() or (p <= 0).any():
        raise ValueError(f"shares must be positive; got {p}")
    if x_gap == 0 or not np.isfinite(x_gap):
        raise ValueError("x_gap must be finite and nonzero; with equal x means no y gap moves r")
    p = p / p.sum()
    within_cov = float(np.sum(p * r * sx * sy))
    return float(-within_cov / (p[0] * p[1] * x_gap))


def centered_block_cosines(x: ArrayLike, y: ArrayLike, groups: ArrayLike) -> BlockCosines:
    """Block decomposition of Pearson's ``r``, blocks = groups, centred at the POOLED means.

    ``r = cos(x - xbar, y - ybar)`` and those centred vectors split into one
    block per group, so the block identity of chapter 2 gives
    ``r = sum_g w_g cos(x_g - xbar, y_g - ybar)``. The local cosines here are
    not the within-group correlations: each block is centred at the pooled
    mean, not at its own.

    Parameters
    ----------
    x, y : array_like of shape (n,)
        Paired real samples, not constant.
    groups : array_like of shape (n,)
        A group label per observation.

    Returns
    -------
    BlockCosines
        With ``names`` the group labels (as strings) and ``global_cosine``
        equal to ``pearson(x, y)``.

    Examples
    --------
    >>> blocks = centered_block_cosines([0, 1, 2, 3, 4, 5], [4, 5, 6, 0, 1, 2], [0, 0, 0, 1, 1, 1])
    >>> [round(float(c), 4) for c in blocks.local], round(blocks.global_cosine, 4)
    ([-0.6325, -0.6325], -0.6325)
    """
    x_array, y_array = _check_pair(x, y)
    labels, index = _group_index(groups, x_array.size)
    for values, name in ((x_array, "x"), (y_array, "y")):
        if _is_constant(values):
            raise ValueError(f"{name} is constant; its correlation with anything is undefined")
    x_centred, y_centred = _centred(x_array), _centred(y_array)
    return block_cosines(
        {str(label): x_centred[index == g] for g, label in enumerate(labels)},
        {str(label): y_centred[index == g] for g, label in enumerate(labels)},
    )


def sample_with_moments(
    n: int,
    x_mean: float,
    y_mean: float,
    x_sd: float,
    y_sd: float,
    correlation: float,
    seed: int = 0,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Draw ``n`` points whose SAMPLE means, spreads and correlation are exactly the given ones.

    Gaussian draws are centred and orthonormalised, then mixed, so the sample
    moments (``ddof=0``) equal the parameters to rounding. A figure drawn
    from them shows exactly the numbers the formulas use.

    Parameters
    ----------
    n : int
        Number of points, at least 3.
    x_mean, y_mean : float
        Sample means.
    x_sd, y_sd : float
        Sample standard deviations (``ddof=0``), nonnegative.
    correlation : float
        Sample correlation in ``[-1, 1]``.
    seed : int
        Seed for ``numpy.random.default_rng``.

    Returns
    -------
    (x, y) : tuple of ndarray of shape (n,)

    Examples
    --------
    >>> x, y = sample_with_moments(50, 1.0, -2.0, 2.0, 0.5, 0.3, seed=1)
    >>> round(float(x.mean()), 6), round(float(y.std()), 6), round(pearson(x, y), 6)
    (1.0, 0.5, 0.3)
    """
    if int(n) != n or n < 3:
        raise ValueError(f"n must be an integer >= 3; got {n}")
    if x_sd < 0 or y_sd < 0:
        raise ValueError(f"x_sd and y_sd must be nonnegative; got {x_sd} and {y_sd}")
    if not -1.0 <= correlation <= 1.0:
        raise ValueError(f"correlation must lie in [-1, 1]; got {correlation}")
    draws: NDArray[Any] = np.random.default_rng(seed).standard_normal((int(n), 2))
    draws -= draws.mean(axis=0)
    # Orthonormal, centred columns scaled to unit population variance.
    q, r_factor = np.linalg.qr(draws)
    q *= np.sqrt(n) * np.sign(np.diag(r_factor))
    u, v = q[:, 0], q[:, 1]
    z = correlation * u + np.sqrt(max(0.0, 1.0 - correlation**2)) * v
    return x_mean + x_sd * u, y_mean + y_sd * z
