r"""Pearson correlation as a centred cosine, and its split into groups (chapters 4 and 5).

:math:`r(x, y) = \cos(x - \bar x \mathbf 1, y - \bar y \mathbf 1)`, so the block
identity applies to grouped data, with the blocks centred at the *pooled* means.
:func:`grouped_correlation` computes every term of the law of total covariance,

.. math::

    \operatorname{cov}(x, y)
    = \sum_g p_g\, r_g\, s_{x,g}\, s_{y,g} + \sum_g p_g (\bar x_g - \bar x)(\bar y_g - \bar y),

from raw data (population, ``ddof=0``, moments), :func:`centered_block_cosines`
the blocks centred at the pooled mean. Group summaries, the two-group sign flip
and exact samples are in :mod:`cosine_book.group_moments`.

Data are centred exactly before anything else (a large common offset, integers
beyond ``2**53`` and entries near ``1e300`` or ``1e-300`` lose no digits: see
:func:`pearson`), and sums run in a fixed order (NumPy's pairwise sums and
``np.bincount``), never through BLAS, so results are the same on every machine.
"""

from __future__ import annotations

import math
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from cosine_book._validation import (
    as_float_scalar,
    as_labels,
    as_real_array,
)
from cosine_book.similarity import BlockCosines, block_cosines, cosine

__all__ = [
    "GroupedCorrelation",
    "centered_block_cosines",
    "cosine_from_moments",
    "grouped_correlation",
    "pearson",
]

# Data whose largest magnitude lies outside 2**-500 .. 2**500 is scaled by a power
# of two first (exact), so that no sum overflows and no deviation becomes subnormal.
_SAFE_EXPONENT = 500


# --- validated inputs --------------------------------------------------------


def _paired_samples(x: ArrayLike, y: ArrayLike) -> tuple[NDArray[Any], NDArray[Any]]:
    """Two 1-D real samples of equal length >= 2 (dtypes kept, so integers stay exact)."""
    x_array = as_real_array(x, "x", ndim=1)
    y_array = as_real_array(y, "y", ndim=1)
    if x_array.size != y_array.size:
        raise ValueError(
            f"x has {x_array.size} observations but y has {y_array.size}; "
            "expected paired samples of equal length"
        )
    if x_array.size < 2:
        raise ValueError(f"a correlation needs at least 2 observations; got {x_array.size}")
    return x_array, y_array


def _grouped_samples(
    x: ArrayLike, y: ArrayLike, groups: ArrayLike
) -> tuple[NDArray[Any], NDArray[Any], tuple[Hashable, ...], NDArray[np.intp], NDArray[np.intp]]:
    """Paired samples, the group labels, each observation's group index and the counts."""
    x_array, y_array = _paired_samples(x, y)
    labels, index = as_labels(groups, "groups", x_array.size)
    counts = np.bincount(index, minlength=len(labels))
    return x_array, y_array, labels, index, counts


# --- exact centring ------------------------------------------------------------


class _Centred(NamedTuple):
    """Exactly centred data: ``data = reference + (mean + values * 2**shift) * 2**exponent``."""

    values: NDArray[np.float64]  # the deviations from the mean
    exponent: int  # a power of two that keeps sums of the data finite (usually 0)
    shift: int  # a further power of two applied to the deviations only
    mean: float  # the mean of the base, that is less the reference, in units of 2**exponent
    reference: int | None  # an integer subtracted first (integers beyond 2**53)

    @property
    def unit(self) -> int:
        """Deviations are in units of ``2**unit`` of the data."""
        return self.exponent + self.shift

    def in_data_units(self, base_values: NDArray[np.float64]) -> NDArray[np.float64]:
        """Values given in the units of ``base`` (e.g. group means) in data units."""
        with np.errstate(over="ignore"):  # inf where beyond the float range
            return (self.reference or 0) + np.ldexp(base_values, self.exponent)


def _to_base(
    data: NDArray[Any], reference: int | None, exponent: int, out: NDArray[np.float64]
) -> None:
    """``out = (data - reference) * 2**-exponent`` in float64; every step but the cast is exact."""
    if reference is not None:
        # Not every integer beyond 2**53 is a float: subtract the minimum first, in
        # 64-bit unsigned arithmetic, which wraps exactly as 0 <= v - min < 2**64.
        unsigned = data.view(data.dtype.str.replace("i", "u"))
        base = np.uint64(reference % 2**64)
        np.subtract(unsigned, base, out=out, dtype=np.uint64, casting="unsafe")
    elif exponent:
        np.ldexp(data, -exponent, out=out, casting="same_kind")  # a power of two: exact
    else:
        out[...] = data  # booleans, integers up to 2**53 and floats: exact


def _centre(values: NDArray[Any], name: str) -> _Centred:
    """Centre a validated 1-D sample exactly; refuse a constant one.

    The extra memory is the returned float64 vector: every step writes into it.
    """
    low, high = values.min(), values.max()
    if low == high:
        raise ValueError(
            f"{name} is constant (every value is {low.item()!r}); "
            "its correlation with anything is undefined"
        )
    reference, exponent = None, 0
    kind = values.dtype.kind
    if kind in "iu" and max(-int(low), int(high)) > 2**53:
        reference = int(low)
    elif kind == "f":
        # Entries beyond 2**500 (near 1e300) or below 2**-500: scaled by a power of two.
        top_exponent = int(np.frexp(max(-low, high))[1])
        if abs(top_exponent) > _SAFE_EXPONENT:
            exponent = top_exponent
    centred = np.empty(values.shape, dtype=np.float64)
    _to_base(values, reference, exponent, centred)
    first = np.mean(centred)
    centred -= first  # exact for entries within a factor 2 of the mean (Sterbenz)
    correction = np.mean(centred)  # the rounding of the first mean
    centred -= correction
    return _Centred(centred, exponent, 0, float(first + correction), reference)


def _unit_scaled(centred: _Centred) -> _Centred:
    """The same deviations times a power of two, so that the largest lies in [0.5, 1)."""
    values = centred.values
    shift = int(np.frexp(max(float(values.max()), -float(values.min())))[1])
    np.ldexp(values, -shift, out=values)
    return centred._replace(shift=centred.shift + shift)


def _pearson_core(
    x: NDArray[Any], y: NDArray[Any], x_centred: NDArray[np.float64], y_centred: NDArray[np.float64]
) -> float:
    """Pearson's r of validated, non-constant samples from their centred vectors."""
    if x.size == 2:
        # Two distinct points always lie on a line: r is exactly +1 or -1.
        return 1.0 if (x[1] > x[0]) == (y[1] > y[0]) else -1.0
    return cosine(x_centred, y_centred)


def pearson(x: ArrayLike, y: ArrayLike) -> float:
    r"""Pearson's correlation coefficient, computed as the cosine of centred data.

    :math:`r = \cos(x - \bar x, y - \bar y)` (:func:`cosine_book.similarity.cosine`),
    equal to ``scipy.stats.pearsonr`` to rounding. Exact centring: a common
    offset (``1e12 + x``), integers beyond ``2**53`` and entries near ``1e300``
    or ``1e-300`` lose no digits. Two points give exactly ``+1`` or ``-1``.

    Raises ``ValueError`` if the lengths differ, fewer than two observations are
    given, an input is not a 1-D array of finite real numbers, or is constant.

    Examples
    --------
    >>> round(pearson([1, 2, 3, 4], [2, 4, 5, 9]), 4)
    0.9648
    >>> pearson([1e300, 2e300, 3e300], [3.0, 2.0, 1.0])
    -1.0
    >>> pearson([5, 5, 5], [1, 2, 3])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: x is constant (every value is 5); its correlation ...
    """
    x_array, y_array = _paired_samples(x, y)
    # Unit-scaled (exactly, by powers of two), so that cosine never needs a scaled copy.
    x_centred = _unit_scaled(_centre(x_array, "x"))
    y_centred = _unit_scaled(_centre(y_array, "y"))
    return _pearson_core(x_array, y_array, x_centred.values, y_centred.values)


def _exponent(value: float) -> int:
    """``e`` with ``value = f * 2**e``, ``0.5 <= |f| < 1`` (0 for 0)."""
    return math.frexp(value)[1]


def cosine_from_moments(
    x_mean: float, y_mean: float, x_sd: float, y_sd: float, correlation: float
) -> float:
    r"""Raw (uncentred) cosine of two samples from their means, spreads and correlation.

    The mean part and the centred part of each vector are orthogonal, so

    .. math::

        \cos(x, y) = \frac{\bar x \bar y + r\, s_x s_y}
        {\sqrt{(\bar x^2 + s_x^2)(\bar y^2 + s_y^2)}},

    with population (``ddof=0``) standard deviations: large means push the
    cosine towards :math:`\operatorname{sign}(\bar x \bar y)` whatever :math:`r` is.

    Raises ``ValueError`` if an argument is not a finite real number, a spread
    is negative, ``correlation`` is outside :math:`[-1, 1]`, or a mean and its
    spread are both 0. Uncorrelated data with means three spreads from zero:

    >>> round(cosine_from_moments(3.0, 3.0, 1.0, 1.0, 0.0), 4)
    0.9
    """
    x_mean = as_float_scalar(x_mean, "x_mean")
    y_mean = as_float_scalar(y_mean, "y_mean")
    x_sd = as_float_scalar(x_sd, "x_sd", nonnegative=True)
    y_sd = as_float_scalar(y_sd, "y_sd", nonnegative=True)
    correlation = as_float_scalar(correlation, "correlation", interval=(-1.0, 1.0))
    x_top, y_top = max(abs(x_mean), x_sd), max(abs(y_mean), y_sd)
    if x_top == 0 or y_top == 0:
        raise ValueError("a vector with zero mean and zero spread is zero; its cosine is undefined")
    # cos is unchanged when one side's mean and spread are scaled together.
    x_shift, y_shift = _exponent(x_top), _exponent(y_top)
    x_mean, x_sd = math.ldexp(x_mean, -x_shift), math.ldexp(x_sd, -x_shift)
    y_mean, y_sd = math.ldexp(y_mean, -y_shift), math.ldexp(y_sd, -y_shift)
    numerator = x_mean * y_mean + correlation * x_sd * y_sd
    value = numerator / math.sqrt((x_mean**2 + x_sd**2) * (y_mean**2 + y_sd**2))
    return min(1.0, max(-1.0, value))


# --- grouped data --------------------------------------------------------------


@dataclass(frozen=True)
class GroupedCorrelation:
    r"""Within-group, between-group and pooled correlation of grouped data.

    Population moments (``ddof=0``); the correlations do not depend on that choice.

    Attributes
    ----------
    labels : tuple
        The group labels, in sorted order.
    counts : ndarray of shape (n_groups,)
        Observations per group, :math:`n_g`.
    shares : ndarray of shape (n_groups,)
        :math:`p_g = n_g / n`.
    x_means, y_means : ndarray of shape (n_groups,)
        Group means.
    x_sds, y_sds : ndarray of shape (n_groups,)
        Group standard deviations (``ddof=0``).
    within : ndarray of shape (n_groups,)
        Within-group correlations :math:`r_g`; ``nan`` for a group in which
        ``x`` or ``y`` is constant (its covariance is zero).
    pooled : float
        Pearson's :math:`r` of all the data together.
    within_covariance, between_covariance, total_covariance : float
        The two parts of the law of total covariance and their sum.
    pooled_within : float
        The pooled-within (partial) correlation :math:`\sum_g w_g r_g`: the
        correlation of the deviations :math:`x - \bar x_g`, :math:`y - \bar y_g`.
    between : float
        The ecological correlation :math:`r_B` of the group means, weighted by
        the shares (``nan`` if the means of ``x`` or of ``y`` are all equal).
    within_factor, between_factor : float
        :math:`a_W = \sqrt{(1 - \eta_x^2)(1 - \eta_y^2)}` and
        :math:`a_B = \eta_x \eta_y`, where :math:`\eta^2` is the between-group
        share of a variance (:meth:`between_shares`). Then ``pooled`` is
        :math:`a_W` times ``pooled_within`` plus :math:`a_B` times ``between``
        (a term whose factor is zero is dropped), and :math:`a_W + a_B \le 1`.
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
    # eta^2 of x and y from the exactly centred data (the means above are rounded).
    _between_shares: tuple[float, float] | None = field(default=None, repr=False, compare=False)

    def between_shares(self) -> tuple[float, float]:
        r"""Between-group shares of the variances of ``x`` and ``y``, :math:`\eta^2`.

        .. math::

            \eta_x^2 = \frac{B_x}{W_x + B_x}, \quad
            W_x = \sum_g p_g s_{x,g}^2, \quad
            B_x = \sum_g p_g (\bar x_g - \bar x)^2,

        the within and between parts of the pooled variance of ``x`` (the same for ``y``).
        """
        if self._between_shares is not None:
            return self._between_shares
        x_gaps, x_sds = _centred_summaries(self.shares, self.x_means, self.x_sds)
        y_gaps, y_sds = _centred_summaries(self.shares, self.y_means, self.y_sds)
        return (
            _between_share(self.shares, x_gaps, x_sds),
            _between_share(self.shares, y_gaps, y_sds),
        )

    def parts(self) -> tuple[float, float]:
        """The within part and the between part of the pooled correlation.

        :math:`a_W` times ``pooled_within`` and :math:`a_B` times ``between``;
        they add up to ``pooled`` (a ``nan`` correlation has factor 0 and counts as 0).

        Examples
        --------
        >>> x, y = [0, 1, 2, 3, 4, 5], [4, 5, 6, 0, 1, 2]
        >>> result = grouped_correlation(x, y, [0, 0, 0, 1, 1, 1])
        >>> within, between = result.parts()
        >>> round(within, 4), round(between, 4), round(result.pooled, 4)
        (0.1807, -0.8132, -0.6325)
        """
        within = self.within_factor * float(np.nan_to_num(self.pooled_within))
        between = self.between_factor * float(np.nan_to_num(self.between))
        return within, between

    def within_weights(self) -> NDArray[np.float64]:
        r"""The block-cosine weights :math:`w_g` of the within-group correlations.

        ``pooled_within`` is :math:`\sum_g w_g r_g`, with

        .. math::

            w_g = \frac{p_g s_{x,g} s_{y,g}}
            {\sqrt{\sum_h p_h s_{x,h}^2 \sum_h p_h s_{y,h}^2}};

        they sum to the cosine between the profiles
        :math:`\sqrt{p_g}\, s_{x,g}` and :math:`\sqrt{p_g}\, s_{y,g}`.
        """
        if not (self.x_sds.any() and self.y_sds.any()):
            return np.zeros_like(self.shares)  # no within-group spread: no within part
        # Relative spreads: the weights do not depend on units, and squares cannot overflow.
        x_sds = self.x_sds / np.max(self.x_sds)
        y_sds = self.y_sds / np.max(self.y_sds)
        x_within = np.sum(self.shares * x_sds**2)
        y_within = np.sum(self.shares * y_sds**2)
        return self.shares * x_sds * y_sds / np.sqrt(x_within * y_within)


def _constant_groups(
    values: NDArray[Any], index: NDArray[np.intp], n_groups: int
) -> tuple[NDArray[np.bool_], NDArray[np.float64]]:
    """Which groups are constant (exactly, on the raw data), and each group's smallest value."""
    work = values.view(np.uint8) if values.dtype.kind == "b" else values
    low = np.full(n_groups, work.max())
    high = np.full(n_groups, work.min())
    np.minimum.at(low, index, work)
    np.maximum.at(high, index, work)
    with np.errstate(over="ignore"):  # a long double beyond float64 reads as inf
        return low == high, low.astype(np.float64)


def _weighted_deviations(
    weights: NDArray[np.float64], values: NDArray[np.float64]
) -> NDArray[np.float64]:
    """``values - sum(weights * values)`` (weights summing to 1), the mean corrected once."""
    deviations = values - np.sum(weights * values)
    return deviations - np.sum(weights * deviations)


def _centred_summaries(
    shares: NDArray[np.float64], means: NDArray[Any], sds: NDArray[Any]
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Group means centred at their weighted mean, and the spreads, times one power of two.

    ``shares`` sum to 1. The largest of the returned values lies in ``[0.5, 1)``
    (all are zero if the means are equal and the spreads zero), so no square or
    product of them overflows or underflows to nothing.
    """
    means = np.asarray(means, dtype=np.float64)
    sds = np.asarray(sds, dtype=np.float64)
    top = max(float(np.max(np.abs(means))), float(np.max(sds)))
    if top > 2.0**1000:  # deviations of means of both signs could overflow
        means, sds = np.ldexp(means, -64), np.ldexp(sds, -64)
    gaps = _weighted_deviations(shares, means)
    top = max(float(np.max(np.abs(gaps))), float(np.max(sds)))
    if top == 0:
        return gaps, sds
    shift = _exponent(top)
    return np.ldexp(gaps, -shift), np.ldexp(sds, -shift)


def _between_share(
    shares: NDArray[np.float64], gaps: NDArray[np.float64], sds: NDArray[np.float64]
) -> float:
    """eta^2: the between-group share of a pooled variance."""
    scale = max(float(np.max(np.abs(gaps))), float(np.max(sds)))  # > 0 for non-constant data
    between = float(np.sum(shares * (gaps / scale) ** 2))
    return between / (between + float(np.sum(shares * (sds / scale) ** 2)))


def _cos_or_nan(u: NDArray[np.float64], v: NDArray[np.float64]) -> float:
    if not u.any() or not v.any():
        return float("nan")
    return cosine(u, v)


def grouped_correlation(x: ArrayLike, y: ArrayLike, groups: ArrayLike) -> GroupedCorrelation:
    r"""Within-group correlations, the pooled correlation, and the covariance decomposition.

    Splits the pooled covariance into a within-group and a between-group part
    (the law of total covariance) and the pooled correlation :math:`r`
    accordingly:

    .. math::

        r = a_W \sum_g w_g r_g + a_B r_B,

    (Robinson's decomposition; the terms are the attributes of
    :class:`GroupedCorrelation`). The data are centred exactly (as in
    :func:`pearson`); then each per-group sum (means, :math:`N_g \sigma^2`,
    :math:`N_g r_g \sigma \sigma`) is one ``np.bincount``.

    ``groups`` holds a label per observation: numbers, booleans or strings, all
    of one kind. Raises ``ValueError`` if lengths differ, an input is not an
    array of finite real numbers, a label is missing or labels mix kinds, ``x``
    or ``y`` is constant. A group of one observation is accepted, like any group
    in which ``x`` or ``y`` is constant: its spreads are 0, its ``r_g`` is
    ``nan``, and its within term and weight are 0 (it enters only the between part).

    Examples
    --------
    Two groups on parallel lines of slope +1, the second shifted down:

    >>> x = [0, 1, 2, 3, 4, 5]
    >>> y = [4, 5, 6, 0, 1, 2]
    >>> result = grouped_correlation(x, y, ["a", "a", "a", "b", "b", "b"])
    >>> result.within
    array([1., 1.])
    >>> round(result.pooled, 4)
    -0.6325
    >>> round(result.within_covariance, 4)
    0.6667
    >>> round(result.between_covariance, 4)
    -3.0
    """
    x_array, y_array, labels, index, counts = _grouped_samples(x, y, groups)
    x_pooled = _unit_scaled(_centre(x_array, "x"))
    y_pooled = _unit_scaled(_centre(y_array, "y"))
    return _grouped_core(x_array, y_array, x_pooled, y_pooled, labels, index, counts)


def _grouped_core(
    x: NDArray[Any],
    y: NDArray[Any],
    x_pooled: _Centred,
    y_pooled: _Centred,
    labels: tuple[Hashable, ...],
    index: NDArray[np.intp],
    counts: NDArray[np.intp],
) -> GroupedCorrelation:
    """Every term of the decomposition, as the chapter derives it, with per-group sums.

    ``x_pooled`` and ``y_pooled`` hold the deviations from the pooled means (exactly
    centred, largest in [0.5, 1)). Every per-group sum is one ``np.bincount``.
    """
    n_groups, size = len(labels), x.size
    xc, yc = x_pooled.values, y_pooled.values
    shares = counts / size

    def group_mean(values: NDArray[np.float64]) -> NDArray[np.float64]:
        mean = np.bincount(index, values, n_groups) / counts
        return mean + np.bincount(index, values - mean[index], n_groups) / counts  # corrected once

    x_gap, y_gap = group_mean(xc), group_mean(yc)  # delta_g = mean_g - pooled mean
    x_constant, x_low = _constant_groups(x, index, n_groups)
    y_constant, y_low = _constant_groups(y, index, n_groups)
    x_dev = np.where(x_constant[index], 0.0, xc - x_gap[index])  # within-group deviations
    y_dev = np.where(y_constant[index], 0.0, yc - y_gap[index])
    sxx = np.bincount(index, x_dev * x_dev, n_groups)  # N_g sigma_x,g^2
    syy = np.bincount(index, y_dev * y_dev, n_groups)
    sxy = np.bincount(index, x_dev * y_dev, n_groups)  # N_g r_g sigma_x,g sigma_y,g
    within = np.full(n_groups, np.nan)
    defined = (sxx > 0) & (syy > 0)
    ratio = sxy[defined] / (np.sqrt(sxx[defined]) * np.sqrt(syy[defined]))
    within[defined] = np.clip(ratio, -1.0, 1.0)
    pair = defined & (counts == 2)
    within[pair] = np.sign(sxy[pair])  # two points always lie on a line
    xx, yy, xy = float(np.sum(sxx)), float(np.sum(syy)), float(np.sum(sxy))
    pooled_within = min(1.0, max(-1.0, xy / math.sqrt(xx * yy))) if xx and yy else float("nan")
    x_gap = _weighted_deviations(shares, x_gap)
    y_gap = _weighted_deviations(shares, y_gap)
    x_spread, y_spread = np.sqrt(sxx / counts), np.sqrt(syy / counts)
    x_between_share = _between_share(shares, x_gap, x_spread)  # eta_x^2 = B_x / sigma_x^2
    y_between_share = _between_share(shares, y_gap, y_spread)
    units = x_pooled.unit + y_pooled.unit
    with np.errstate(over="ignore", under="ignore"):  # back to data units; may be inf or 0
        x_mean = x_pooled.mean + np.ldexp(x_gap, x_pooled.shift)
        y_mean = y_pooled.mean + np.ldexp(y_gap, y_pooled.shift)
        return GroupedCorrelation(
            labels=labels,
            counts=counts.astype(np.int64),
            shares=shares,
            x_means=np.where(x_constant, x_low, x_pooled.in_data_units(x_mean)),
            y_means=np.where(y_constant, y_low, y_pooled.in_data_units(y_mean)),
            x_sds=np.ldexp(x_spread, x_pooled.unit),
            y_sds=np.ldexp(y_spread, y_pooled.unit),
            within=within,
            pooled=_pearson_core(x, y, xc, yc),
            within_covariance=float(np.ldexp(xy / size, units)),
            between_covariance=float(np.ldexp(np.sum(shares * x_gap * y_gap), units)),
            total_covariance=float(np.ldexp(float(np.sum(xc * yc)) / size, units)),
            pooled_within=pooled_within,
            between=_cos_or_nan(np.sqrt(shares) * x_gap, np.sqrt(shares) * y_gap),
            within_factor=float(np.sqrt((1 - x_between_share) * (1 - y_between_share))),
            between_factor=float(np.sqrt(x_between_share * y_between_share)),
            _between_shares=(x_between_share, y_between_share),
        )


def centered_block_cosines(x: ArrayLike, y: ArrayLike, groups: ArrayLike) -> BlockCosines:
    r"""Block decomposition of Pearson's :math:`r`, blocks = groups, centred at the POOLED means.

    :math:`r = \cos(x - \bar x, y - \bar y)` and those centred vectors split
    into one block per group, so the block identity of chapter 2 gives

    .. math::

        r = \sum_g w_g \cos(x_g - \bar x, y_g - \bar y).

    The local cosines are not the :math:`r_g`: each block is centred at the
    pooled mean, not at its own.

    Returns a :class:`~cosine_book.similarity.BlockCosines` named by the group
    labels (as strings), whose ``global_cosine`` is ``pearson(x, y)``. Raises
    ``ValueError`` as :func:`grouped_correlation` (a group may have one member).

    Examples
    --------
    >>> x, y = [0, 1, 2, 3, 4, 5], [4, 5, 6, 0, 1, 2]
    >>> blocks = centered_block_cosines(x, y, [0, 0, 0, 1, 1, 1])
    >>> [round(float(c), 4) for c in blocks.local]
    [-0.6325, -0.6325]
    >>> round(blocks.global_cosine, 4)
    -0.6325
    """
    x_array, y_array, labels, index, counts = _grouped_samples(x, y, groups)
    x_centred = _unit_scaled(_centre(x_array, "x")).values
    y_centred = _unit_scaled(_centre(y_array, "y")).values
    # One stable sort puts every group's members together, in their original order.
    order = np.argsort(index, kind="stable")
    ends = np.cumsum(counts)[:-1]
    x_blocks = np.split(x_centred[order], ends)
    y_blocks = np.split(y_centred[order], ends)
    names = [str(label) for label in labels]
    x_named = dict(zip(names, x_blocks, strict=True))
    return block_cosines(x_named, dict(zip(names, y_blocks, strict=True)))
