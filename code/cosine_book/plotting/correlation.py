"""Figures of pooled versus within-group correlation (chapters 4 and 5).

Axes-level helpers (``draw_*``) draw onto given axes, so chapters can combine
them; :func:`decomposition_figure` and :func:`simpson_figure` are the drawing
functions of the two widgets of :mod:`cosine_book.widgets.correlation`.
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from numpy.typing import ArrayLike, NDArray

from cosine_book._validation import as_float_scalar, as_real_array
from cosine_book.correlation import GroupedCorrelation, grouped_correlation
from cosine_book.datasets import BerkeleyAdmissions
from cosine_book.plotting import PALETTE

__all__ = [
    "GROUP_COLOURS",
    "decomposition_figure",
    "draw_admission_rates",
    "draw_decomposition",
    "draw_group_means",
    "draw_grouped_scatter",
    "draw_offset_sweep",
    "simpson_figure",
]

#: Colours of the groups in the chapters' scatter plots (the pooled fit is ``PALETTE["global"]``).
GROUP_COLOURS: tuple[str, ...] = (
    PALETTE["local"],
    PALETTE["weight"],
    PALETTE["bound"],
    PALETTE["sky"],
    PALETTE["accent"],
    PALETTE["neutral"],
)

# Size of the widgets' figures (inches); the HTML frames are this at FRAME_DPI.
_WIDGET_FIGSIZE = (9.0, 3.8)
# Fixed margins of the two widget figures (those the style's constrained layout picks
# for them): the widgets draw a figure per frame, and the layout engine would double
# the cost of each.
_DECOMPOSITION_MARGINS = {
    "left": 0.066,
    "right": 0.995,
    "bottom": 0.146,
    "top": 0.936,
    "wspace": 0.2,
}
_SIMPSON_MARGINS = {"left": 0.08, "right": 0.996, "bottom": 0.121, "top": 0.989, "wspace": 0.207}


def _two_decimals(value: float) -> str:
    """A number as shown in the figures; one that rounds to zero reads 0.00, not -0.00."""
    return f"{round(float(value), 2) + 0.0:.2f}"


def _fit_line(ax: Axes, x: NDArray[np.float64], y: NDArray[np.float64], **style: object) -> None:
    """Least-squares line over the x-range of the points."""
    slope = np.sum((x - x.mean()) * (y - y.mean())) / np.sum((x - x.mean()) ** 2)
    xs = np.array([x.min(), x.max()])
    ax.plot(xs, y.mean() + slope * (xs - x.mean()), **style)  # type: ignore[arg-type]


def draw_grouped_scatter(
    ax: Axes,
    x: ArrayLike,
    y: ArrayLike,
    groups: ArrayLike,
    *,
    result: GroupedCorrelation | None = None,
    point_size: float = 14.0,
    jitter: float = 0.0,
) -> GroupedCorrelation:
    """Scatter grouped data with each group's fitted line and the pooled fitted line.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        Axes to draw on.
    x, y : array_like of shape (n,)
        The data.
    groups : array_like of shape (n,)
        Group labels; the legend shows each group's ``r``.
    result : GroupedCorrelation, optional
        Precomputed :func:`~cosine_book.correlation.grouped_correlation`.
    point_size : float
        Marker area.
    jitter : float
        Standard deviation of a fixed (seeded) displacement added to the
        plotted points only, to separate tied values; fits use the data.

    Returns
    -------
    GroupedCorrelation
        The numbers shown.

    Examples
    --------
    >>> fig, ax = plt.subplots()
    >>> x, y, groups = [0, 1, 2, 3], [1, 2, 0, 1], ["a", "a", "b", "b"]
    >>> result = draw_grouped_scatter(ax, x, y, groups)
    >>> round(result.pooled, 3), len(ax.lines)
    (-0.316, 3)
    >>> plt.close(fig)
    """
    if result is None:
        result = grouped_correlation(x, y, groups)  # validates x, y and groups
    x_array = as_real_array(x, "x", ndim=1).astype(np.float64)
    y_array = as_real_array(y, "y", ndim=1).astype(np.float64)
    labels_array = np.asarray(groups)
    jitter = as_float_scalar(jitter, "jitter", nonnegative=True)
    shake = np.random.default_rng(0).normal(0.0, jitter, size=(2, x_array.size))
    for g, label in enumerate(result.labels):
        member = labels_array == label
        colour = GROUP_COLOURS[g % len(GROUP_COLOURS)]
        ax.scatter(
            x_array[member] + shake[0, member],
            y_array[member] + shake[1, member],
            s=point_size,
            color=colour,
            alpha=0.75,
            label=f"{label}: r = {_two_decimals(result.within[g])}",
        )
        _fit_line(ax, x_array[member], y_array[member], color=colour, lw=2)
    _fit_line(
        ax,
        x_array,
        y_array,
        color=PALETTE["global"],
        lw=2,
        ls="--",
        label=f"pooled: r = {_two_decimals(result.pooled)}",
    )
    legend = ax.legend(loc="best", frameon=True, framealpha=0.85)
    legend.get_frame().set_edgecolor("none")
    return result


def draw_decomposition(ax: Axes, result: GroupedCorrelation) -> None:
    """Bars: the pooled ``r`` as within part plus between part, next to the group ``r``'s.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        Axes to draw on (y-range ``[-1, 1]``).
    result : GroupedCorrelation
        The decomposition to show.

    Examples
    --------
    >>> fig, ax = plt.subplots()
    >>> x, y = [0, 1, 2, 3], [1, 2, 0, 1]
    >>> draw_decomposition(ax, grouped_correlation(x, y, [0, 0, 1, 1]))
    >>> [label.get_text() for label in ax.get_xticklabels()][-3:]
    ['within part', 'between part', 'pooled r']
    >>> plt.close(fig)
    """
    within_part, between_part = result.parts()
    names = [f"r in {label}" for label in result.labels]
    names += ["within part", "between part", "pooled r"]
    values = [*np.nan_to_num(result.within).tolist(), within_part, between_part, result.pooled]
    colours = [GROUP_COLOURS[g % len(GROUP_COLOURS)] for g in range(len(result.labels))]
    colours += [PALETTE["sky"], PALETTE["accent"], PALETTE["global"]]
    bars = ax.bar(range(len(values)), values, color=colours)
    for bar, value in zip(bars, values, strict=True):
        ax.annotate(
            _two_decimals(value),
            (bar.get_x() + bar.get_width() / 2, value),
            xytext=(0, 3 if value >= 0 else -11),
            textcoords="offset points",
            ha="center",
            fontsize=9,
        )
    ax.axhline(0.0, color=PALETTE["neutral"], lw=0.8)
    ax.set_xticks(range(len(values)), names, rotation=20)
    ax.set_ylim(-1.1, 1.1)
    ax.set_title("pooled r = within part + between part")


def draw_group_means(ax: Axes, result: GroupedCorrelation, *, bubble_scale: float = 3.0) -> None:
    """Bubbles at the group means, area proportional to group size, labelled by group.

    The between-group part of the pooled correlation is the (share-weighted)
    correlation of these points.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        Axes to draw on.
    result : GroupedCorrelation
        Supplies the group means, counts and labels.
    bubble_scale : float
        Observations per unit of marker area, positive.

    Examples
    --------
    >>> fig, ax = plt.subplots()
    >>> x, y, groups = [0, 1, 2, 3], [1, 2, 0, 1], ["a", "a", "b", "b"]
    >>> draw_group_means(ax, grouped_correlation(x, y, groups))
    >>> [text.get_text() for text in ax.texts]
    ['a', 'b']
    >>> plt.close(fig)
    """
    bubble_scale = as_float_scalar(bubble_scale, "bubble_scale", positive=True)
    colours = [GROUP_COLOURS[g % len(GROUP_COLOURS)] for g in range(len(result.labels))]
    ax.scatter(
        result.x_means, result.y_means, s=result.counts / bubble_scale, color=colours, alpha=0.85
    )
    for g, label in enumerate(result.labels):
        ax.annotate(
            str(label), (result.x_means[g], result.y_means[g]), ha="center", va="center", fontsize=9
        )


def draw_admission_rates(ax: Axes, table: BerkeleyAdmissions, *, bubble_scale: float = 3.0) -> None:
    """Admission rates of men and women per department, with the overall rates as dashed lines.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        Axes to draw on.
    table : BerkeleyAdmissions
        Counts by department and sex.
    bubble_scale : float
        Applicants per unit of marker area, positive.

    Examples
    --------
    >>> from cosine_book.datasets import load_berkeley_admissions
    >>> fig, ax = plt.subplots()
    >>> draw_admission_rates(ax, load_berkeley_admissions())
    >>> [round(float(line.get_ydata()[0]), 3) for line in ax.lines]
    [0.445, 0.304]
    >>> plt.close(fig)
    """
    bubble_scale = as_float_scalar(bubble_scale, "bubble_scale", positive=True)
    departments = sorted(set(table.department.tolist()))
    rates = table.admitted / table.applicants
    for sex, colour, shift, name in [
        ("male", PALETTE["global"], -0.12, "men"),
        ("female", PALETTE["accent"], 0.12, "women"),
    ]:
        rows = table.sex == sex
        positions = [departments.index(d) + shift for d in table.department[rows]]
        ax.scatter(
            positions,
            rates[rows],
            s=table.applicants[rows] / bubble_scale,
            color=colour,
            alpha=0.8,
            label=name,
        )
    for sex, colour, name in [
        ("male", PALETTE["global"], "men"),
        ("female", PALETTE["accent"], "women"),
    ]:
        rows = table.sex == sex
        overall = table.admitted[rows].sum() / table.applicants[rows].sum()
        ax.axhline(overall, color=colour, ls="--", lw=1.2, label=f"{name}, all departments")
    ax.set_xticks(range(len(departments)), departments)
    ax.set_xlabel("department (marker area ~ applicants)")
    ax.set_ylabel("admission rate")
    ax.set_ylim(0.0, 1.0)
    ax.legend(loc="upper right", ncols=2)


def draw_offset_sweep(
    ax: Axes,
    gaps: ArrayLike,
    pooled: ArrayLike,
    zero_gap: float,
    *,
    y_gap: float,
    current: float,
    within: Sequence[float] = (0.8, 0.8),
) -> None:
    """Curve of pooled ``r`` against group B's vertical offset, with the current offset marked.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        Axes to draw on.
    gaps, pooled : array_like of shape (m,)
        Offsets and the pooled ``r`` at each, from
        :func:`~cosine_book.correlation.offset_sweep`.
    zero_gap : float
        The offset where the pooled ``r`` is zero (a dashed vertical line).
    y_gap, current : float
        The current offset and its pooled ``r`` (a dot).
    within : pair of float
        The within-group correlations (horizontal lines).

    Examples
    --------
    >>> from cosine_book.correlation import offset_sweep
    >>> gaps = np.linspace(-8.0, 8.0, 9)
    >>> pooled, zero_gap = offset_sweep(gaps)
    >>> fig, ax = plt.subplots()
    >>> draw_offset_sweep(
    ...     ax, gaps, pooled, zero_gap, y_gap=-3.0, current=-0.446
    ... )
    >>> ax.get_legend().get_texts()[-1].get_text()
    'sign flips at -1.07'
    >>> plt.close(fig)
    """
    gaps_array = as_real_array(gaps, "gaps", ndim=1)
    curve = as_real_array(pooled, "pooled", ndim=1)
    if curve.shape != gaps_array.shape:
        raise ValueError(
            f"pooled has shape {curve.shape} but gaps has {gaps_array.shape}; expected one "
            "pooled r per offset"
        )
    zero_gap = as_float_scalar(zero_gap, "zero_gap")
    y_gap = as_float_scalar(y_gap, "y_gap")
    current = as_float_scalar(current, "current", interval=(-1.0, 1.0))
    ax.plot(gaps_array, curve, color=PALETTE["global"], lw=2, label="pooled r")
    for g, r in enumerate(as_real_array(within, "within", ndim=1)):
        ax.axhline(r, color=GROUP_COLOURS[g], lw=1.5, ls=":" if g else "-", label=f"r in {'AB'[g]}")
    ax.axhline(0.0, color=PALETTE["neutral"], lw=0.8)
    ax.axvline(
        zero_gap, color=PALETTE["bound"], lw=1, ls="--", label=f"sign flips at {zero_gap:.2f}"
    )
    ax.plot([y_gap], [current], "o", color=PALETTE["accent"], ms=8)
    ax.set_xlabel("vertical offset of group B")
    ax.set_ylabel("correlation")
    ax.set_ylim(-1.05, 1.05)
    ax.legend(loc="lower right")


def decomposition_figure(
    x: ArrayLike,
    y: ArrayLike,
    groups: ArrayLike,
    result: GroupedCorrelation | None = None,
    *,
    limits: tuple[tuple[float, float], tuple[float, float]] | None = None,
) -> Figure:
    """Grouped scatter (left) and the bars of the decomposition (right): chapter 4's widget.

    Parameters
    ----------
    x, y, groups : array_like of shape (n,)
        The data and their group labels.
    result : GroupedCorrelation, optional
        Precomputed :func:`~cosine_book.correlation.grouped_correlation`.
    limits : ((float, float), (float, float)), optional
        Fixed x- and y-limits of the scatter (so that frames compare), equal
        aspect; by default Matplotlib's.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> x, y, groups = [0, 1, 2, 3], [1, 2, 0, 1], ["a", "a", "b", "b"]
    >>> fig = decomposition_figure(x, y, groups)
    >>> len(fig.axes)
    2
    >>> plt.close(fig)
    """
    fig, (left, right) = plt.subplots(1, 2, figsize=_WIDGET_FIGSIZE, layout="none")
    fig.subplots_adjust(**_DECOMPOSITION_MARGINS)
    draw_grouped_scatter(left, x, y, groups, result=result)
    left.set_xlabel("x")
    left.set_ylabel("y")
    if limits is not None:
        left.set_xlim(*limits[0])
        left.set_ylim(*limits[1])
        left.set_aspect("equal", adjustable="box")
    draw_decomposition(right, result if result is not None else grouped_correlation(x, y, groups))
    return fig


def simpson_figure(
    x: ArrayLike,
    y: ArrayLike,
    groups: ArrayLike,
    result: GroupedCorrelation,
    *,
    gaps: ArrayLike,
    pooled: ArrayLike,
    zero_gap: float,
    y_gap: float,
    y_limits: tuple[float, float] = (-11.0, 11.0),
) -> Figure:
    """Two groups (left) and the pooled ``r`` against B's offset (right): chapter 5's widget.

    Parameters
    ----------
    x, y, groups : array_like of shape (n,)
        The data and their group labels (``"A"``, ``"B"``).
    result : GroupedCorrelation
        Their :func:`~cosine_book.correlation.grouped_correlation`.
    gaps, pooled, zero_gap
        The sweep, as returned by :func:`~cosine_book.correlation.offset_sweep`.
    y_gap : float
        The current offset of group B.
    y_limits : (float, float)
        Fixed y-limits of the scatter, so that frames compare.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> from cosine_book.correlation import GroupSpec, offset_sweep
    >>> from cosine_book.correlation import two_group_sample
    >>> first = GroupSpec(40, 0, 0, 1, 0.8)
    >>> second = GroupSpec(40, 3, -3, 1, 0.8)
    >>> x, y, g = two_group_sample(first, second)
    >>> gaps = np.linspace(-8.0, 8.0, 9)
    >>> pooled, zero_gap = offset_sweep(gaps)
    >>> fig = simpson_figure(
    ...     x, y, g, grouped_correlation(x, y, g), gaps=gaps, pooled=pooled,
    ...     zero_gap=zero_gap, y_gap=-3.0)
    >>> len(fig.axes)
    2
    >>> plt.close(fig)
    """
    fig, (left, right) = plt.subplots(1, 2, figsize=_WIDGET_FIGSIZE, layout="none")
    fig.subplots_adjust(**_SIMPSON_MARGINS)
    draw_grouped_scatter(left, x, y, groups, result=result)
    left.set_xlabel("x")
    left.set_ylabel("y")
    left.set_ylim(*y_limits)
    draw_offset_sweep(
        right,
        gaps,
        pooled,
        zero_gap,
        y_gap=y_gap,
        current=result.pooled,
        within=tuple(float(r) for r in result.within),
    )
    return fig
