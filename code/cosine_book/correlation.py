r"""Pearson's :math:`r` as a centred cosine, and its split over groups (chapters 4 and 5).

:math:`r(x, y) = \cos(x - \bar x \mathbf 1, y - \bar y \mathbf 1)`; with groups, the
centred vectors split into a within part and a between part (chapter 4's law of total
covariance). Population (``ddof=0``) moments throughout.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import stats

from cosine_book._validation import as_float_scalar, as_int_scalar, as_labels, as_real_array
from cosine_book.portable import standard_normal
from cosine_book.similarity import BlockCosines, block_cosines, cosine

__all__ = [
    "centered_block_cosines",
    "grouped_correlation",
    "pearson",
    "pooled_correlation",
    "sample_with_moments",
    "zero_crossing_gap",
]


def _centred(values: NDArray) -> NDArray[np.float64]:
    """``x - mean(x)`` in float64, the mean corrected once for its own rounding."""
    deviations = values.astype(np.float64) - np.mean(values, dtype=np.float64)
    deviations -= np.mean(deviations)
    return deviations


def _paired(x: ArrayLike, y: ArrayLike) -> tuple[NDArray, NDArray]:
    """Two 1-D real samples of one length >= 2, neither constant."""
    x, y = as_real_array(x, "x", ndim=1), as_real_array(y, "y", ndim=1)
    if x.size != y.size:
        raise ValueError(
            f"x has {x.size} observations but y has {y.size}; expected paired samples "
            "of equal length"
        )
    if x.size < 2:
        raise ValueError(f"a correlation needs at least 2 observations; got {x.size}")
    for values, name in ((x, "x"), (y, "y")):
        if values.min() == values.max():
            raise ValueError(
                f"{name} is constant (every value is {values[0].item()!r}); "
                "its correlation with anything is undefined"
            )
    return x, y


def pearson(x: ArrayLike, y: ArrayLike) -> float:
    r"""Pearson's :math:`r = \cos(x - \bar x \mathbf 1, y - \bar y \mathbf 1)`. Used in chapter 4.

    >>> round(pearson([1, 2, 3, 4], [2, 4, 5, 9]), 4)
    0.9648
    """
    x, y = _paired(x, y)
    return cosine(_centred(x), _centred(y))


@dataclass(frozen=True)
class GroupedCorrelation:
    r"""Every term of chapter 4's decomposition :math:`r = a_W \sum_g w_g r_g + a_B r_B`.

    Per group (sorted ``labels``): ``counts`` :math:`N_g`, ``shares`` :math:`p_g`, means,
    standard deviations and ``within`` :math:`r_g` (``nan`` where a spread is 0). Pooled:
    ``pooled`` :math:`r`, the two covariance parts, ``pooled_within`` :math:`\sum_g w_g r_g`,
    ``between`` :math:`r_B`, the factors :math:`a_W, a_B` and ``between_shares``
    :math:`(\eta_x^2, \eta_y^2) = (B_x / \sigma_x^2, B_y / \sigma_y^2)`.
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
    pooled_within: float
    between: float
    within_factor: float
    between_factor: float
    between_shares: tuple[float, float]

    def parts(self) -> tuple[float, float]:
        r"""The within part :math:`a_W \sum_g w_g r_g` and the between part :math:`a_B r_B`."""
        within = self.within_factor * float(np.nan_to_num(self.pooled_within))
        return within, self.between_factor * float(np.nan_to_num(self.between))

    def within_weights(self) -> NDArray[np.float64]:
        r""":math:`w_g = p_g \sigma_{x,g} \sigma_{y,g} / \sqrt{W_x W_y}`. Used in chapter 4."""
        x_within = np.sum(self.shares * self.x_sds**2)
        y_within = np.sum(self.shares * self.y_sds**2)
        if x_within == 0 or y_within == 0:
            return np.zeros_like(self.shares)  # no within-group spread: no within part
        return self.shares * self.x_sds * self.y_sds / np.sqrt(x_within * y_within)

    def pooled_within_interval(self) -> tuple[float, float]:
        r"""95 % Fisher :math:`z` interval of ``pooled_within``. Used in chapter 5.

        ``pooled_within`` is the partial :math:`r` given the :math:`G - 1` group indicators:
        :math:`\tanh(\operatorname{artanh} r \pm z_{1 - \alpha/2} / \sqrt{N - 3 - (G - 1)})`.
        """
        dof = int(self.counts.sum()) - 3 - (len(self.labels) - 1)
        if dof < 1:
            raise ValueError(f"the interval needs N - G - 2 >= 1; got {dof} (too few observations)")
        half = stats.norm.ppf(0.975) / np.sqrt(dof)
        z = np.arctanh(self.pooled_within)
        return float(np.tanh(z - half)), float(np.tanh(z + half))


def _constant_groups(values: NDArray, index: NDArray[np.intp], n_groups: int) -> NDArray:
    """Whether all of a group's values are equal (on the data, where rounding cannot hide it)."""
    some = np.zeros(n_groups, values.dtype)
    some[index] = values
    return np.bincount(index, values != some[index], n_groups) == 0


def _cosine_or_nan(u: NDArray[np.float64], v: NDArray[np.float64]) -> float:
    return cosine(u, v) if u.any() and v.any() else float("nan")


def grouped_correlation(x: ArrayLike, y: ArrayLike, groups: ArrayLike) -> GroupedCorrelation:
    r"""Split the pooled :math:`r` of grouped data as chapter 4 derives it. Used in chapters 4-5.

    The centred vector :math:`\tilde x = x - \bar x \mathbf 1` is the sum of a within part
    :math:`\tilde x^W_k = x_k - \bar x_{g(k)}` and a between part
    :math:`\tilde x^B_k = \delta_{x,g(k)}`, orthogonal to each other; so are those of
    :math:`\tilde y`. Then :math:`C_{xy} = \langle \tilde x^W, \tilde y^W \rangle / N +
    \langle \tilde x^B, \tilde y^B \rangle / N`, :math:`\sum_g w_g r_g = \cos(\tilde x^W,
    \tilde y^W)` and :math:`r_B = \cos(\tilde x^B, \tilde y^B)`.

    >>> result = grouped_correlation([0, 1, 2, 3, 4, 5], [4, 5, 6, 0, 1, 2], list("aaabbb"))
    >>> result.within, round(result.pooled, 4), round(result.between_covariance, 4)
    (array([1., 1.]), -0.6325, -3.0)
    """
    x, y = _paired(x, y)
    labels, index = as_labels(groups, "groups", x.size)
    counts = np.bincount(index, minlength=len(labels))

    def group_sum(values: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.bincount(index, values, len(labels))

    def split(values: NDArray, tilde: NDArray[np.float64]) -> tuple[NDArray[np.float64], ...]:
        """Within part x_k - mean_g(k) and between part delta_g(k) of the centred vector."""
        between = (group_sum(tilde) / counts)[index]
        constant = _constant_groups(values, index, len(labels))[index]
        return np.where(constant, 0.0, tilde - between), between

    x_tilde, y_tilde = _centred(x), _centred(y)  # x - mean(x) 1, y - mean(y) 1
    (x_w, x_b), (y_w, y_b) = split(x, x_tilde), split(y, y_tilde)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):  # checked below
        sxx, syy, sxy = group_sum(x_w * x_w), group_sum(y_w * y_w), group_sum(x_w * y_w)
        r_g = np.clip(sxy / np.sqrt(sxx * syy), -1.0, 1.0)  # nan where a spread is 0
        # W and B of x and of y (times N): sigma^2 = W + B, and eta^2 = B / sigma^2.
        w_x, w_y, b_x, b_y = (float(np.sum(v * v)) for v in (x_w, y_w, x_b, y_b))
    for name, total in (("x", w_x + b_x), ("y", w_y + b_y)):
        if not 0 < total < np.inf:
            raise ValueError(
                f"the squares of {name}'s deviations leave float64's range; divide {name} "
                "by a constant first (no correlation changes)"
            )
    eta_x, eta_y = b_x / (w_x + b_x), b_y / (w_y + b_y)
    return GroupedCorrelation(
        labels=labels,
        counts=counts.astype(np.int64),
        shares=counts / x.size,
        x_means=group_sum(x.astype(np.float64)) / counts,
        y_means=group_sum(y.astype(np.float64)) / counts,
        x_sds=np.sqrt(sxx / counts),
        y_sds=np.sqrt(syy / counts),
        within=r_g,
        pooled=cosine(x_tilde, y_tilde),
        within_covariance=float(np.sum(x_w * y_w)) / x.size,
        between_covariance=float(np.sum(x_b * y_b)) / x.size,
        pooled_within=_cosine_or_nan(x_w, y_w),
        between=_cosine_or_nan(x_b, y_b),
        within_factor=float(np.sqrt((1 - eta_x) * (1 - eta_y))),
        between_factor=float(np.sqrt(eta_x * eta_y)),
        between_shares=(eta_x, eta_y),
    )


def centered_block_cosines(x: ArrayLike, y: ArrayLike, groups: ArrayLike) -> BlockCosines:
    r"""Blocks :math:`x_g - \bar x \mathbf 1`, :math:`y_g - \bar y \mathbf 1`. Used in chapters 4-5.

    Centred at the POOLED means: their global cosine is ``pearson(x, y)``, their local
    cosines are not the :math:`r_g`.

    >>> blocks = centered_block_cosines([0, 1, 2, 3, 4, 5], [4, 5, 6, 0, 1, 2], [0, 0, 0, 1, 1, 1])
    >>> [round(float(c), 4) for c in blocks.local], round(blocks.global_cosine, 4)
    ([-0.6325, -0.6325], -0.6325)
    """
    x, y = _paired(x, y)
    labels, index = as_labels(groups, "groups", x.size)
    x_tilde, y_tilde = _centred(x), _centred(y)
    names = [str(label) for label in labels]
    x_blocks = {name: x_tilde[index == g] for g, name in enumerate(names)}
    return block_cosines(x_blocks, {name: y_tilde[index == g] for g, name in enumerate(names)})


# --- the pooled r from group summaries ---------------------------------------------


def _per_group(name: str, value: ArrayLike, size: int | None) -> NDArray[np.float64]:
    array = as_real_array(value, name, ndim=1, finite=name != "within").astype(np.float64)
    if size is not None and array.size != size:
        raise ValueError(f"{name} has {array.size} entries; expected {size} (one per group)")
    return array


def _summaries(
    shares: ArrayLike, x_sds: ArrayLike, y_sds: ArrayLike, within: ArrayLike, size: int | None
) -> tuple[NDArray[np.float64], ...]:
    """Shares (scaled to sum to 1), spreads, and r_g with 0 where it is undefined (nan)."""
    p = _per_group("shares", shares, size)
    sx, sy, r = (
        _per_group(n, v, p.size)
        for n, v in (("x_sds", x_sds), ("y_sds", y_sds), ("within", within))
    )
    for name, array in (("shares", p), ("x_sds", sx), ("y_sds", sy)):
        if (array < 0).any():
            raise ValueError(f"{name} must be nonnegative; got {array}")
    if not p.sum() > 0:
        raise ValueError("shares sum to zero; expected at least one nonempty group")
    undefined = np.isnan(r)
    if (undefined & (sx > 0) & (sy > 0)).any():
        raise ValueError("within is nan for a group whose spreads are both nonzero")
    if (np.abs(r[~undefined]) > 1).any():
        raise ValueError(f"within correlations must lie in [-1, 1]; got {r}")
    return p / p.sum(), sx, sy, np.where(undefined, 0.0, r)  # an undefined r_g: covariance 0


def pooled_correlation(
    shares: ArrayLike,
    x_means: ArrayLike,
    y_means: ArrayLike,
    x_sds: ArrayLike,
    y_sds: ArrayLike,
    within: ArrayLike,
) -> float:
    r"""Pooled :math:`r` from each group's share, means, spreads and :math:`r_g`. Chapters 4-5.

    Chapter 4's equation: :math:`r = (\sum_g p_g r_g \sigma_{x,g} \sigma_{y,g} + \sum_g p_g
    \delta_{x,g} \delta_{y,g}) / \sqrt{(W_x + B_x)(W_y + B_y)}`, :math:`\delta_g = \bar x_g -
    \sum_h p_h \bar x_h`. Shares may be counts; ``within`` may be ``nan`` where a spread is 0.

    >>> sd = (2 / 3) ** 0.5
    >>> round(pooled_correlation([3, 3], [1, 4], [5, 1], [sd, sd], [sd, sd], [1, 1]), 4)
    -0.6325
    """
    p, sx, sy, r = _summaries(shares, x_sds, y_sds, within, None)
    mx, my = _per_group("x_means", x_means, p.size), _per_group("y_means", y_means, p.size)
    for means, sds, name in ((mx, sx, "x"), (my, sy, "y")):
        if not sds[p > 0].any() and np.ptp(means[p > 0]) == 0:
            raise ValueError(f"the pooled {name} has zero variance; the correlation is undefined")
    dx, dy = mx - np.sum(p * mx), my - np.sum(p * my)
    covariance = np.sum(p * r * sx * sy) + np.sum(p * dx * dy)
    x_variance = np.sum(p * sx**2) + np.sum(p * dx**2)
    y_variance = np.sum(p * sy**2) + np.sum(p * dy**2)
    return float(np.clip(covariance / np.sqrt(x_variance * y_variance), -1.0, 1.0))


def zero_crossing_gap(
    shares: ArrayLike, x_gap: float, x_sds: ArrayLike, y_sds: ArrayLike, within: ArrayLike
) -> float:
    r"""Two groups: the gap :math:`\Delta_y^*` of the ``y`` means where the pooled :math:`r` is 0.

    Chapter 5's theorem: :math:`\Delta_y^* = -(p_1 C_1 + p_2 C_2) / (p_1 p_2 \Delta_x)` with
    :math:`C_g = r_g \sigma_{x,g} \sigma_{y,g}` and ``x_gap`` :math:`\Delta_x \ne 0`.

    >>> round(zero_crossing_gap([1, 1], 3.0, [1, 1], [1, 1], [0.8, 0.8]), 4)
    -1.0667
    """
    p, sx, sy, r = _summaries(shares, x_sds, y_sds, within, 2)
    if not (p > 0).all():
        raise ValueError(f"shares must be positive; got {p}")
    x_gap = as_float_scalar(x_gap, "x_gap")
    if x_gap == 0:
        raise ValueError("x_gap must be finite and nonzero; with equal x means no y gap moves r")
    return float(-np.sum(p * r * sx * sy) / (p[0] * p[1] * x_gap)) + 0.0  # -0.0 reads 0.0


def sample_with_moments(
    n: int,
    x_mean: float,
    y_mean: float,
    x_sd: float,
    y_sd: float,
    correlation: float,
    seed: int = 0,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``n`` points whose SAMPLE means, spreads (``ddof=0``) and r are the given ones. Chapter 4.

    Gaussian draws, centred and made orthonormal (fixed-order sums, no LAPACK), then mixed.

    >>> x, y = sample_with_moments(50, 1.0, -2.0, 2.0, 0.5, 0.3, seed=1)
    >>> round(float(x.mean()), 6), round(float(y.std()), 6), round(pearson(x, y), 6)
    (1.0, 0.5, 0.3)
    """
    n = as_int_scalar(n, "n", minimum=3)
    x_mean, y_mean = as_float_scalar(x_mean, "x_mean"), as_float_scalar(y_mean, "y_mean")
    x_sd = as_float_scalar(x_sd, "x_sd", nonnegative=True)
    y_sd = as_float_scalar(y_sd, "y_sd", nonnegative=True)
    correlation = as_float_scalar(correlation, "correlation", interval=(-1.0, 1.0))
    seed = as_int_scalar(seed, "seed", minimum=0)
    draws = standard_normal(np.random.default_rng(seed), (n, 2))
    first, second = _centred(draws[:, 0]), _centred(draws[:, 1])
    u = first / np.sqrt(np.sum(first * first))  # Gram-Schmidt: u, v orthonormal
    v = second - np.sum(u * second) * u
    v -= np.sum(u * v) * u  # once more, so that u and v are orthogonal to rounding
    v /= np.sqrt(np.sum(v * v))
    u *= np.sqrt(n)  # unit population variance
    v *= np.sqrt(n)
    z = correlation * u + np.sqrt(max(0.0, 1.0 - correlation * correlation)) * v
    return x_mean + x_sd * u, y_mean + y_sd * z
