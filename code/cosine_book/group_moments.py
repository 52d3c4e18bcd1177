r"""Correlation from group moments: pooled ``r`` from summaries, two groups, exact samples.

- :func:`pooled_correlation`: the pooled ``r`` of chapter 4's equation (eq-ch4-pooled-r) from each
  group's share, means, spreads and correlation (chapters 4 and 5).
- :func:`zero_crossing_gap`: the gap between two group means at which the pooled
  ``r`` changes sign (chapter 5's theorem on the sign flip).
- :func:`sample_with_moments`, :func:`two_group_sample`: points whose sample
  moments are exactly the ones asked for, so a figure shows the numbers of the
  formula (chapter 4 and both widgets).
- :func:`offset_sweep`: the pooled ``r`` as one group moves (chapter 5's widget).

Population (``ddof=0``) moments throughout, as in :mod:`cosine_book.correlation`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from cosine_book._validation import (
    as_float_scalar,
    as_int_scalar,
    as_real_array,
    nonfinite_error,
)
from cosine_book.correlation import _centred_summaries, _exponent
from cosine_book.portable import standard_normal

__all__ = [
    "GroupSpec",
    "offset_sweep",
    "pooled_correlation",
    "sample_with_moments",
    "two_group_sample",
    "zero_crossing_gap",
]


def _summary(value: ArrayLike, name: str, size: int | None, *, finite: bool = True) -> NDArray[Any]:
    """One per-group summary array: 1-D, real, non-empty, of the given length."""
    array = as_real_array(value, name, ndim=1, finite=finite)
    if size is not None and array.size != size:
        raise ValueError(f"{name} has {array.size} entries; expected {size} (one per group)")
    return array


def _nonnegative(array: NDArray[Any], name: str) -> None:
    if (array < 0).any():
        raise ValueError(f"{name} must be nonnegative; got {array}")


def _correlations(
    array: NDArray[Any], name: str, x_sds: NDArray[Any], y_sds: NDArray[Any]
) -> NDArray[np.bool_]:
    """Check correlations in [-1, 1], NaN only where a spread is zero; return where NaN."""
    undefined = np.isnan(array)
    error = nonfinite_error(np.where(undefined, 0.0, array), name)
    if error is not None:
        raise error
    if (undefined & (x_sds > 0) & (y_sds > 0)).any():
        raise ValueError(f"{name} is nan for a group whose spreads are both nonzero")
    defined = array[~undefined]
    if ((defined < -1) | (defined > 1)).any():
        raise ValueError(f"{name} correlations must lie in [-1, 1]; got {array}")
    return undefined


def pooled_correlation(
    shares: ArrayLike,
    x_means: ArrayLike,
    y_means: ArrayLike,
    x_sds: ArrayLike,
    y_sds: ArrayLike,
    within: ArrayLike,
) -> float:
    r"""Pooled Pearson :math:`r` from each group's share, means, spreads and correlation.

    .. math::

        r = \frac{\sum_g p_g r_g s_{x,g} s_{y,g} + \sum_g p_g d_{x,g} d_{y,g}}
        {\sqrt{\left(\sum_g p_g s_{x,g}^2 + \sum_g p_g d_{x,g}^2\right)
        \left(\sum_g p_g s_{y,g}^2 + \sum_g p_g d_{y,g}^2\right)}},

    with :math:`d_{x,g} = \bar x_g - \sum_h p_h \bar x_h` (and the same for
    :math:`y`) and population standard deviations :math:`s_{x,g}` and
    :math:`s_{y,g}`. The means are centred exactly (a
    large common offset costs no digits) and each side is scaled by a power of
    two, so summaries near ``1e300`` or ``1e-300`` give the same :math:`r`.

    Parameters
    ----------
    shares : array_like of shape (n_groups,)
        Nonnegative group sizes or shares :math:`p_g` (normalised to sum to 1).
    x_means, y_means : array_like of shape (n_groups,)
        Group means.
    x_sds, y_sds : array_like of shape (n_groups,)
        Nonnegative group standard deviations (``ddof=0``).
    within : array_like of shape (n_groups,)
        Within-group correlations :math:`r_g` in :math:`[-1, 1]`; ``nan`` is
        allowed only where ``x_sds`` or ``y_sds`` is zero.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If an input is not a 1-D array of real numbers, the arrays differ in
        length, a share or spread is negative or not finite, a correlation lies
        outside :math:`[-1, 1]`, or the pooled ``x`` or ``y`` has zero variance.

    Examples
    --------
    The same two groups as in :func:`~cosine_book.correlation.grouped_correlation`:

    >>> sd = (2 / 3) ** 0.5
    >>> r = pooled_correlation(
    ...     shares=[3, 3], x_means=[1, 4], y_means=[5, 1],
    ...     x_sds=[sd, sd], y_sds=[sd, sd], within=[1, 1],
    ... )
    >>> round(r, 4)
    -0.6325
    """
    p = _summary(shares, "shares", None)
    mx = _summary(x_means, "x_means", p.size)
    my = _summary(y_means, "y_means", p.size)
    sx = _summary(x_sds, "x_sds", p.size)
    sy = _summary(y_sds, "y_sds", p.size)
    r = _summary(within, "within", p.size, finite=False).astype(np.float64)
    for array, name in ((p, "shares"), (sx, "x_sds"), (sy, "y_sds")):
        _nonnegative(array, name)
    undefined = _correlations(r, "within", sx, sy)
    if not p.any():
        raise ValueError("shares sum to zero; expected at least one nonempty group")
    active = p > 0
    for means, sds, name in ((mx, sx, "x"), (my, sy, "y")):
        if not sds[active].any() and (means[active] == means[active][0]).all():
            raise ValueError(f"the pooled {name} has zero variance; the correlation is undefined")
    return _pooled_core(_normalised(p), mx, my, sx, sy, r, undefined)


def _normalised(shares: NDArray[Any]) -> NDArray[np.float64]:
    """Nonnegative shares, not all zero, scaled to sum to 1 (no overflow in the sum)."""
    p = shares / np.max(shares)
    return p / np.sum(p)


def _pooled_core(
    p: NDArray[np.float64],
    mx: NDArray[Any],
    my: NDArray[Any],
    sx: NDArray[Any],
    sy: NDArray[Any],
    r: NDArray[np.float64],
    undefined: NDArray[np.bool_],
) -> float:
    """The pooled r of validated summaries with shares summing to 1 and nonzero variances."""
    dx, sx = _centred_summaries(p, mx, sx)
    dy, sy = _centred_summaries(p, my, sy)
    covariance = np.sum(np.where(undefined, 0.0, p * r * sx * sy)) + np.sum(p * dx * dy)
    x_var = np.sum(p * sx**2) + np.sum(p * dx**2)
    y_var = np.sum(p * sy**2) + np.sum(p * dy**2)
    return float(np.clip(covariance / (np.sqrt(x_var) * np.sqrt(y_var)), -1.0, 1.0))


def zero_crossing_gap(
    shares: ArrayLike, x_gap: float, x_sds: ArrayLike, y_sds: ArrayLike, within: ArrayLike
) -> float:
    r"""For two groups: the gap in ``y`` means at which the pooled correlation is zero.

    With shares :math:`p_1, p_2` and gaps :math:`\Delta_x = \bar x_2 - \bar x_1`
    (``x_gap``) and :math:`\Delta_y = \bar y_2 - \bar y_1` between the group
    means, the between-group covariance is :math:`p_1 p_2 \Delta_x \Delta_y`,
    so the pooled covariance vanishes at

    .. math::

        \Delta_y^* = -\frac{p_1 r_1 s_{x,1} s_{y,1} + p_2 r_2 s_{x,2} s_{y,2}}
        {p_1 p_2 \Delta_x}.

    The pooled :math:`r` has the sign of the within-group covariance on one
    side of :math:`\Delta_y^*` and the opposite sign on the other.

    Parameters
    ----------
    shares : array_like of shape (2,)
        Positive group sizes or shares (normalised to sum to 1).
    x_gap : float
        :math:`\Delta_x = \bar x_2 - \bar x_1`, nonzero.
    x_sds, y_sds : array_like of shape (2,)
        Nonnegative group standard deviations (``ddof=0``).
    within : array_like of shape (2,)
        Within-group correlations :math:`r_g` in :math:`[-1, 1]`; ``nan`` is
        allowed only where ``x_sds`` or ``y_sds`` is zero.

    Returns
    -------
    float
        :math:`\Delta_y^*`.

    Raises
    ------
    ValueError
        If an array does not have two real entries, a share is not positive, a
        spread is negative, a correlation lies outside :math:`[-1, 1]`, ``x_gap``
        is zero or not finite (with equal ``x`` means no gap moves the sign),
        or the gap lies beyond the float range.

    Examples
    --------
    >>> sd = (2 / 3) ** 0.5
    >>> round(zero_crossing_gap([1, 1], 3.0, [sd, sd], [sd, sd], [1, 1]), 4)
    -0.8889
    """
    p, sx, sy, r, undefined = _two_groups(shares, x_sds, y_sds, within)
    return _zero_gap_core(p, _x_gap(x_gap), sx, sy, r, undefined)


def _two_groups(
    shares: ArrayLike,
    x_sds: ArrayLike,
    y_sds: ArrayLike,
    within: ArrayLike,
    sd_names: tuple[str, str] = ("x_sds", "y_sds"),
) -> tuple[NDArray[np.float64], ...]:
    """Validated summaries of two groups: shares (summing to 1), spreads, r's, where r is nan.

    ``sd_names`` are the arguments' names for the spreads (one name if both are
    the same argument).
    """
    named = {"shares": shares, sd_names[0]: x_sds, sd_names[1]: y_sds, "within": within}
    arrays = {
        name: _summary(value, name, None, finite=name != "within") for name, value in named.items()
    }
    if not all(array.shape == (2,) for array in arrays.values()):
        names = list(arrays)
        listed = ", ".join(names[:-1]) + " and " + names[-1]
        shapes = ", ".join(f"{name} {array.shape}" for name, array in arrays.items())
        raise ValueError(f"{listed} must each have exactly 2 entries; got {shapes}")
    p, r = arrays["shares"].astype(np.float64), arrays["within"].astype(np.float64)
    sx, sy = (arrays[name].astype(np.float64) for name in sd_names)
    if not (p > 0).all():
        raise ValueError(f"shares must be positive; got {p}")
    for array, name in zip((sx, sy), sd_names, strict=True):
        _nonnegative(array, name)
    undefined = _correlations(r, "within", sx, sy)
    return _normalised(p), sx, sy, r, undefined


def _x_gap(x_gap: float) -> float:
    """A validated horizontal gap between two groups' means: finite and nonzero."""
    x_gap = as_float_scalar(x_gap, "x_gap")
    if x_gap == 0:
        raise ValueError("x_gap must be finite and nonzero; with equal x means no y gap moves r")
    return x_gap


def _zero_gap_core(
    p: NDArray[np.float64],
    x_gap: float,
    sx: NDArray[np.float64],
    sy: NDArray[np.float64],
    r: NDArray[np.float64],
    undefined: NDArray[np.bool_],
) -> float:
    """The zero-crossing gap of validated two-group summaries (shares summing to 1)."""
    # Spreads in units of the largest (powers of two), put back at the end.
    x_top, y_top = float(np.max(sx)), float(np.max(sy))
    x_shift, y_shift = _exponent(x_top), _exponent(y_top)
    terms = np.where(undefined, 0.0, p * r * np.ldexp(sx, -x_shift) * np.ldexp(sy, -y_shift))
    within_cov = float(np.sum(terms))
    gap_shift = _exponent(x_gap)
    try:
        value = math.ldexp(
            -within_cov / (p[0] * p[1] * math.ldexp(x_gap, -gap_shift)),
            x_shift + y_shift - gap_shift,
        )
    except OverflowError:
        raise ValueError(
            "the zero-crossing gap lies beyond the float range (spreads too large for this x_gap)"
        ) from None
    return value + 0.0  # -0.0 (no within-group covariance) reads as 0.0


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
        Sample correlation in :math:`[-1, 1]`.
    seed : int
        Seed for ``numpy.random.default_rng``, nonnegative.

    Returns
    -------
    (x, y) : tuple of ndarray of shape (n,)

    Raises
    ------
    ValueError
        If ``n`` or ``seed`` is not an integer in range, a moment is not a
        finite real number, a spread is negative, ``correlation`` lies outside
        :math:`[-1, 1]`, or the points would lie beyond the float range.

    Examples
    --------
    >>> from cosine_book.correlation import pearson
    >>> x, y = sample_with_moments(50, 1.0, -2.0, 2.0, 0.5, 0.3, seed=1)
    >>> round(float(x.mean()), 6), round(float(y.std()), 6)
    (1.0, 0.5)
    >>> round(pearson(x, y), 6)
    0.3
    """
    n, x_mean, y_mean, x_sd, y_sd, correlation = _moments(
        n, x_mean, y_mean, x_sd, y_sd, correlation, ("n", "x_mean", "y_mean", "x_sd", "y_sd")
    )
    seed = as_int_scalar(seed, "seed", minimum=0)
    return _sample_core(n, x_mean, y_mean, x_sd, y_sd, correlation, seed)


def _moments(
    n: int,
    x_mean: float,
    y_mean: float,
    x_sd: float,
    y_sd: float,
    correlation: float,
    names: tuple[str, str, str, str, str],
    correlation_name: str = "correlation",
) -> tuple[int, float, float, float, float, float]:
    """Validated moments of one sample; ``names`` are those of n, the means and the spreads."""
    n_name, x_mean_name, y_mean_name, x_sd_name, y_sd_name = names
    n = as_int_scalar(n, n_name, minimum=3)
    x_mean = as_float_scalar(x_mean, x_mean_name)
    y_mean = as_float_scalar(y_mean, y_mean_name)
    x_sd = as_float_scalar(x_sd, x_sd_name, nonnegative=True)
    y_sd = as_float_scalar(y_sd, y_sd_name, nonnegative=True)
    correlation = as_float_scalar(correlation, correlation_name, interval=(-1.0, 1.0))
    # Every standardised coordinate has |u| <= sqrt(n), so this bounds every point.
    for mean, sd, mean_name, sd_name in (
        (x_mean, x_sd, x_mean_name, x_sd_name),
        (y_mean, y_sd, y_mean_name, y_sd_name),
    ):
        if not math.isfinite(abs(mean) + sd * math.sqrt(n)):
            raise ValueError(
                f"{mean_name} and {sd_name} are too large: points up to |{mean_name}| + "
                f"{sd_name} * sqrt(n) would exceed the largest float"
            )
    return n, x_mean, y_mean, x_sd, y_sd, correlation


def _sample_core(
    n: int, x_mean: float, y_mean: float, x_sd: float, y_sd: float, correlation: float, seed: int
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """:func:`sample_with_moments` of validated arguments."""
    draws: NDArray[Any] = standard_normal(np.random.default_rng(seed), (n, 2))
    first, second = draws[:, 0].copy(), draws[:, 1].copy()
    for column in (first, second):
        column -= np.mean(column)
        column -= np.mean(column)  # the rounding of the first mean
    # Gram-Schmidt with fixed-order sums (no LAPACK: the same bits on every machine):
    # u and v are centred and orthogonal, with sum of squares n (unit population variance).
    u = first / np.sqrt(np.sum(first * first))
    v = second - np.sum(u * second) * u
    v -= np.sum(u * v) * u  # once more, so that u and v are orthogonal to rounding
    v /= np.sqrt(np.sum(v * v))
    u *= np.sqrt(n)
    v *= np.sqrt(n)
    z = correlation * u + np.sqrt(max(0.0, 1.0 - correlation * correlation)) * v
    return x_mean + x_sd * u, y_mean + y_sd * z


# --- two groups with given moments (the widgets of chapters 4 and 5) ------------


@dataclass(frozen=True)
class GroupSpec:
    """Sample moments of one group: size, means, common spread and correlation.

    A plain record; :func:`two_group_sample` validates it.

    Attributes
    ----------
    n : int
        Number of points, at least 3.
    x_mean, y_mean : float
        Sample means.
    spread : float
        Sample standard deviation (``ddof=0``) of both ``x`` and ``y``, nonnegative.
    correlation : float
        Sample correlation in :math:`[-1, 1]`.
    """

    n: int
    x_mean: float
    y_mean: float
    spread: float
    correlation: float


def two_group_sample(
    first: GroupSpec, second: GroupSpec, seed: int = 0
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.str_]]:
    """Points of two groups whose sample moments are exactly the specified ones.

    Each group is drawn by :func:`sample_with_moments`, so its sample means,
    spreads and correlation are the requested ones to rounding, and
    :func:`~cosine_book.correlation.grouped_correlation` of the result shows
    exactly the numbers of the decomposition.

    Parameters
    ----------
    first, second : GroupSpec
        Moments of groups ``"A"`` and ``"B"`` (spread is the standard deviation
        of both ``x`` and ``y`` within the group, ``ddof=0``).
    seed : int
        Seed of the draws, nonnegative (group B uses ``seed + 1``).

    Returns
    -------
    (x, y, groups) : tuple of ndarray of shape (first.n + second.n,)
        Group A's points first; ``groups`` holds ``"A"`` or ``"B"``.

    Raises
    ------
    ValueError
        If ``first`` or ``second`` is not a :class:`GroupSpec`, or one of its
        fields is refused as by :func:`sample_with_moments` (the message names
        the field, e.g. ``second.spread``), or ``seed`` is not a nonnegative
        integer.

    Examples
    --------
    >>> first = GroupSpec(20, 0, 0, 1, 0.5)
    >>> second = GroupSpec(30, 2, -1, 1, 0.5)
    >>> x, y, g = two_group_sample(first, second)
    >>> x.shape, sorted(set(g.tolist()))
    ((50,), ['A', 'B'])
    >>> from cosine_book.correlation import grouped_correlation
    >>> result = grouped_correlation(x, y, g)
    >>> [round(float(r), 6) for r in result.within]
    [0.5, 0.5]
    >>> round(float(result.x_means[1]), 6)
    2.0
    """
    checked = []
    for spec, name in ((first, "first"), (second, "second")):
        if not isinstance(spec, GroupSpec):
            raise ValueError(f"{name} must be a GroupSpec; got {type(spec).__name__}")
        fields = ("n", "x_mean", "y_mean", "spread", "spread")
        checked.append(
            _moments(
                spec.n,
                spec.x_mean,
                spec.y_mean,
                spec.spread,
                spec.spread,
                spec.correlation,
                tuple(f"{name}.{field}" for field in fields),  # type: ignore[arg-type]
                f"{name}.correlation",
            )
        )
    seed = as_int_scalar(seed, "seed", minimum=0)
    (x_a, y_a), (x_b, y_b) = (_sample_core(*moments, seed + k) for k, moments in enumerate(checked))
    groups = np.array(["A"] * x_a.size + ["B"] * x_b.size, dtype=np.str_)
    return np.concatenate([x_a, x_b]), np.concatenate([y_a, y_b]), groups


def offset_sweep(
    y_gaps: ArrayLike,
    *,
    shares: ArrayLike = (0.5, 0.5),
    x_gap: float = 3.0,
    spreads: ArrayLike = (1.0, 1.0),
    within: ArrayLike = (0.8, 0.8),
) -> tuple[NDArray[np.float64], float]:
    r"""Pooled :math:`r` of two groups as the second group's mean moves vertically.

    Group A sits at ``(0, 0)`` and group B at ``(x_gap, y_gap)``; both keep
    their spreads and within-group correlations, so by
    :func:`pooled_correlation`

    .. math::

        r(\Delta_y) = \frac{p_1 c_1 + p_2 c_2 + p_1 p_2 \Delta_x \Delta_y}
        {\sqrt{(W + p_1 p_2 \Delta_x^2)(W + p_1 p_2 \Delta_y^2)}},

    with :math:`\Delta_x` the ``x_gap``, :math:`\Delta_y` the ``y_gap``,
    :math:`c_g = r_g s_g^2` and :math:`W = p_1 s_1^2 + p_2 s_2^2`. It is zero
    at :func:`zero_crossing_gap` and tends to

    .. math::

        \pm \frac{\sqrt{p_1 p_2}\, |\Delta_x|}{\sqrt{W + p_1 p_2 \Delta_x^2}},

    not to :math:`\pm 1`, as B moves far up or down: the within-group spread
    of ``x`` stays in its variance.

    Parameters
    ----------
    y_gaps : array_like of shape (m,) or scalar
        Vertical offsets of group B.
    shares : array_like of shape (2,)
        Positive group sizes or shares (normalised to sum to 1).
    x_gap : float
        Horizontal offset of group B, nonzero.
    spreads : array_like of shape (2,)
        Standard deviation of ``x`` and ``y`` within each group, nonnegative.
    within : array_like of shape (2,)
        Within-group correlations :math:`r_g` in :math:`[-1, 1]` (``nan`` only
        where the spread is zero).

    Returns
    -------
    (pooled, zero_gap) : tuple of ndarray of shape (m,) and float
        Pooled :math:`r` at every offset, and the offset where it is zero.

    Raises
    ------
    ValueError
        If ``y_gaps`` is not a scalar or 1-D array of finite real numbers, the
        summaries are refused as by :func:`zero_crossing_gap`, or both spreads
        are zero and an offset is zero (then ``y`` is constant).

    Examples
    --------
    >>> pooled, zero_gap = offset_sweep([-3.0, 0.0, 3.0])
    >>> [round(float(r), 3) for r in pooled], round(zero_gap, 3)
    ([-0.446, 0.444, 0.938], -1.067)
    """
    gaps = as_real_array(y_gaps, "y_gaps")
    if gaps.ndim > 1:
        raise ValueError(f"y_gaps has shape {gaps.shape}; expected a scalar or a 1-D array")
    gaps = np.atleast_1d(gaps).astype(np.float64)
    p, sx, sy, r, undefined = _two_groups(shares, spreads, spreads, within, ("spreads", "spreads"))
    x_gap = _x_gap(x_gap)
    if not sy.any() and not gaps.all():
        raise ValueError(
            "both spreads are zero and an offset in y_gaps is zero: the pooled y is constant "
            "there, so the correlation is undefined"
        )
    return _sweep_core(p, x_gap, sx, sy, r, undefined, gaps), _zero_gap_core(
        p, x_gap, sx, sy, r, undefined
    )


def _sweep_core(
    p: NDArray[np.float64],
    x_gap: float,
    sx: NDArray[np.float64],
    sy: NDArray[np.float64],
    r: NDArray[np.float64],
    undefined: NDArray[np.bool_],
    gaps: NDArray[np.float64],
) -> NDArray[np.float64]:
    """The pooled r of two validated groups for every vertical gap, elementwise.

    The ``x`` side is scaled by one power of two, the ``y`` side of each gap by its
    own (so that the largest of ``|gap|`` and the spreads lies in ``[0.5, 1)``):
    no square overflows or loses the leading term, for gaps near ``1e300`` too.
    """
    x_shift = _exponent(max(abs(x_gap), float(np.max(sx))))
    x_gap, sx = math.ldexp(x_gap, -x_shift), np.ldexp(sx, -x_shift)
    y_shift = np.frexp(np.maximum(np.abs(gaps), np.max(sy)))[1]
    gaps = np.ldexp(gaps, -y_shift)
    sy_0, sy_1 = np.ldexp(sy[0], -y_shift), np.ldexp(sy[1], -y_shift)
    c_0, c_1 = (0.0 if undefined[g] else p[g] * r[g] * sx[g] for g in (0, 1))
    both = p[0] * p[1]
    covariance = (c_0 * sy_0 + c_1 * sy_1) + both * x_gap * gaps
    x_var = (p[0] * sx[0] ** 2 + p[1] * sx[1] ** 2) + both * x_gap**2
    y_var = (p[0] * sy_0**2 + p[1] * sy_1**2) + both * gaps**2
    return np.clip(covariance / (math.sqrt(x_var) * np.sqrt(y_var)), -1.0, 1.0)
