"""Figures of pooled versus within-group correlation (chapter 4, and shared with 5).

Axes-level helpers (``draw_*``) draw onto given axes, so chapters can combine
them; :func:`decomposition_figure` is the drawing function of chapter 4's widget
(:mod:`cosine_book.widgets.correlation`). :func:`centring_figure` shows centring
as a projection for three observations. The chapters' static figures are
:func:`shifted_cosine_figure` (a shared mean direction lifts the raw cosine, not
``r``) and :func:`grouped_figure` (grouped scatter and decomposition bars).
Chapter 5's own figures are in :mod:`cosine_book.plotting.simpson`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from mpl_toolkits.mplot3d.art3d import Poly3DCollection
from numpy.typing import ArrayLike, NDArray

from cosine_book._validation import as_float_scalar, as_real_array
from cosine_book.correlation import GroupedCorrelation, grouped_correlation, pearson
from cosine_book.plotting import PALETTE
from cosine_book.similarity import cosine

__all__ = [
    "GROUP_COLOURS",
    "centring_figure",
    "decomposition_figure",
    "draw_decomposition",
    "draw_grouped_scatter",
    "grouped_figure",
    "shifted_cosine_figure",
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

# Size of the widgets' figures (inches); the HTML frames are this at FRAME_DPI, and
# 8.2 inches fit the book's text column at 1280 px unshrunk (9-point text stays 10 px).
_WIDGET_FIGSIZE = (8.2, 3.8)
# Fixed margins of the two widget figures (those the style's constrained layout picks
# for them): the widgets draw a figure per frame, and the layout engine would double
# the cost of each.
_DECOMPOSITION_MARGINS = {
    "left": 0.073,
    "right": 0.995,
    "bottom": 0.146,
    "top": 0.936,
    "wspace": 0.2,
}


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
    legend_below: bool = False,
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
    legend_below : bool
        Put the legend under the axes, off the data (the static figures), instead
        of matplotlib's "best" place inside them (the widgets' fixed layout).

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
    if legend_below:
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncols=2, frameon=False)
    else:
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


_PLANE_BASIS = np.array([[1.0, -1.0, 0.0], [1.0, 1.0, -2.0]]) / np.array(
    [[np.sqrt(2.0)], [np.sqrt(6.0)]]
)


def _plane_coordinates(vector: NDArray[np.float64]) -> tuple[float, float]:
    """Coordinates of a vector of R^3 in :data:`_PLANE_BASIS` (fixed-order sums, no BLAS)."""
    return float(np.sum(vector * _PLANE_BASIS[0])), float(np.sum(vector * _PLANE_BASIS[1]))


def centring_figure(x: ArrayLike, y: ArrayLike) -> Figure:
    r"""Centring as a projection, for three observations: the vectors in :math:`\mathbb{R}^3`.

    Left, in 3-D: the data vectors ``x`` and ``y`` (solid arrows), the line of the
    all-ones vector :math:`\mathbf 1`, the plane orthogonal to it, and the centred
    vectors :math:`x - \bar x \mathbf 1`, :math:`y - \bar y \mathbf 1` (paler
    arrows in the plane). A dotted segment parallel to :math:`\mathbf 1` joins
    each vector to its centred version: centring removes the projection
    :math:`\bar x \mathbf 1` of ``x`` on :math:`\mathbf 1`. Right: that plane
    seen face on (along :math:`\mathbf 1`), where the two centred vectors make
    the angle whose cosine is Pearson's ``r``. Both panels are drawn after
    dividing ``x`` and ``y`` by their largest absolute entry (one common
    positive factor, which changes no angle), so entries near ``1e300`` or
    ``1e-300`` draw as well as any.

    Parameters
    ----------
    x, y : array_like of shape (3,)
        Three paired observations, neither sample constant.

    Returns
    -------
    matplotlib.figure.Figure
        Two axes (3-D, then 2-D); the right one's title gives ``r`` and the
        raw cosine, both rounded to two decimals.

    Raises
    ------
    ValueError
        If ``x`` or ``y`` is not a 1-D array of three finite real numbers, or
        is constant (its centred vector is zero and ``r`` undefined).

    Examples
    --------
    >>> fig = centring_figure([1.0, 4.0, 3.5], [3.0, 1.0, 2.5])
    >>> fig.axes[0].name
    '3d'
    >>> fig.axes[1].get_title()
    'the plane seen along 1: r = cos φ = -0.80 (raw cosine 0.72)'
    >>> plt.close(fig)
    """
    x_array = as_real_array(x, "x", ndim=1)
    y_array = as_real_array(y, "y", ndim=1)
    for array, name in ((x_array, "x"), (y_array, "y")):
        if array.shape != (3,):
            raise ValueError(
                f"{name} has {array.size} entries; expected exactly 3 (one axis per "
                "observation of a 3-D picture)"
            )
    r = pearson(x_array, y_array)  # refuses a constant sample
    raw = cosine(x_array, y_array)
    x_float, y_float = x_array.astype(np.float64), y_array.astype(np.float64)
    scale = max(float(np.max(np.abs(x_float))), float(np.max(np.abs(y_float))))
    x_unit, y_unit = x_float / scale, y_float / scale
    x_centred = x_unit - np.mean(x_unit)
    y_centred = y_unit - np.mean(y_unit)

    u_x, v_x = _plane_coordinates(x_centred)
    u_y, v_y = _plane_coordinates(y_centred)

    fig = plt.figure(figsize=(8.5, 4.0), layout="none")
    ax3d = fig.add_subplot(1, 2, 1, projection="3d")
    flat = fig.add_subplot(1, 2, 2)
    fig.subplots_adjust(left=0.0, right=0.98, bottom=0.04, top=0.9, wspace=0.05)
    colours = {"x": PALETTE["global"], "y": PALETTE["accent"]}
    # The plane orthogonal to 1, as a translucent disc, and the line of 1.
    radius = 1.15 * max(float(np.hypot(u_x, v_x)), float(np.hypot(u_y, v_y)))
    angles = np.linspace(0.0, 2.0 * np.pi, 61)
    circle = np.stack([np.cos(angles), np.sin(angles)], axis=1)
    disc = radius * (circle[:, :1] * _PLANE_BASIS[0] + circle[:, 1:] * _PLANE_BASIS[1])
    ax3d.add_collection3d(
        Poly3DCollection([disc], facecolor=PALETTE["neutral"], alpha=0.18, edgecolor="none")
    )
    top = 1.15 * max(1.0, float(np.max(np.abs(x_unit))), float(np.max(np.abs(y_unit))))
    ends = np.array([-0.5, 1.0]) * top
    ax3d.plot(ends, ends, ends, color=PALETTE["neutral"], lw=1.5)
    ax3d.text(top, top, top, " 1", color="0.3", fontsize=11)
    for name, raw_vector, centred in (("x", x_unit, x_centred), ("y", y_unit, y_centred)):
        colour = colours[name]
        ax3d.quiver(0, 0, 0, *raw_vector, color=colour, lw=2.2, arrow_length_ratio=0.1)
        ax3d.quiver(0, 0, 0, *centred, color=colour, lw=1.8, alpha=0.6, arrow_length_ratio=0.15)
        ax3d.plot(*np.stack([raw_vector, centred]).T, ":", color=colour, lw=1.3)
        ax3d.text(*raw_vector, f" {name}", color=colour, fontsize=11)
        ax3d.plot(*np.full((3, 1), np.mean(raw_vector)), "o", color=colour, ms=4)
    limit = max(top, radius)
    for axis_set in (ax3d.set_xlim, ax3d.set_ylim, ax3d.set_zlim):
        axis_set(-limit, limit)
    ax3d.set_box_aspect((1.0, 1.0, 1.0))
    for axis, label in zip(
        (ax3d.xaxis, ax3d.yaxis, ax3d.zaxis), ("obs. 1", "obs. 2", "obs. 3"), strict=True
    ):
        axis.set_ticklabels([])
        axis.set_pane_color((1.0, 1.0, 1.0, 0.0))
        axis.set_label_text(label, fontsize=9)
        axis.labelpad = -12
    ax3d.view_init(elev=28, azim=-20)
    ax3d.set_title("centring slides x and y along 1 into the plane", fontsize=10)

    flat.add_patch(plt.Circle((0.0, 0.0), radius, color=PALETTE["neutral"], alpha=0.18, lw=0))
    points = {"x": (u_x, v_x), "y": (u_y, v_y)}
    for name, (u, v) in points.items():
        flat.annotate(
            "",
            (u, v),
            (0.0, 0.0),
            arrowprops={"arrowstyle": "-|>", "color": colours[name], "lw": 2, "shrinkA": 0},
        )
        flat.annotate(
            f"${name} - \\bar{{{name}}}\\,\\mathbf{{1}}$",
            (u, v),
            xytext=(6 * np.sign(u), 6 * np.sign(v)),
            textcoords="offset points",
            ha="left" if u >= 0 else "right",
            va="bottom" if v >= 0 else "top",
            color=colours[name],
            fontsize=10,
        )
    start_angle, end_angle = np.arctan2(v_x, u_x), np.arctan2(v_y, u_y)
    if end_angle - start_angle > np.pi:
        end_angle -= 2.0 * np.pi
    elif start_angle - end_angle > np.pi:
        end_angle += 2.0 * np.pi
    arc = np.linspace(start_angle, end_angle, 40)
    flat.plot(0.3 * radius * np.cos(arc), 0.3 * radius * np.sin(arc), color="0.3", lw=1)
    middle = (start_angle + end_angle) / 2.0
    flat.text(
        0.42 * radius * np.cos(middle),
        0.42 * radius * np.sin(middle),
        "φ",
        ha="center",
        va="center",
        fontsize=11,
    )
    flat.plot([0.0], [0.0], "o", color="0.3", ms=4)
    flat.set_xlim(-1.3 * radius, 1.3 * radius)
    flat.set_ylim(-1.3 * radius, 1.3 * radius)
    flat.set_aspect("equal")
    flat.set_axis_off()
    flat.set_title(
        f"the plane seen along 1: r = cos φ = {_two_decimals(r)} (raw cosine {_two_decimals(raw)})",
        fontsize=10,
    )
    return fig


def _curves(curves: Mapping[float, ArrayLike], name: str, size: int) -> dict[float, NDArray[Any]]:
    """``curves`` as {correlation: 1-D float array of ``size`` values}, or a ``ValueError``."""
    if not isinstance(curves, Mapping) or not curves:
        raise ValueError(
            f"{name} must be a non-empty mapping from a correlation to its curve; "
            f"got {type(curves).__name__}"
        )
    checked = {}
    for r, curve in curves.items():
        key = as_float_scalar(r, f"a key of {name}", interval=(-1.0, 1.0))
        values = as_real_array(curve, f"{name}[{key:g}]", ndim=1)
        if values.size != size:
            raise ValueError(
                f"{name}[{key:g}] has {values.size} values but shifts has {size}; expected "
                "one value per shift"
            )
        checked[key] = values.astype(np.float64)
    return checked


def shifted_cosine_figure(
    x: ArrayLike,
    y: ArrayLike,
    shifts: ArrayLike,
    raw: Mapping[float, ArrayLike],
    centred: Mapping[float, ArrayLike],
    *,
    shift: float = 3.0,
) -> Figure:
    """A shifted sample (left) and the raw cosine and ``r`` against the shift (right).

    Chapter 4's picture of the shared mean direction. Left: the points
    ``(x + shift, y + shift)`` of one sample and an arrow from the origin to its mean.
    Right, for each correlation ``r`` in ``raw``: the raw cosine
    ``cos(x + t, y + t)`` (blue) and Pearson's ``r`` (orange) against the shift
    ``t``, one line style per correlation.

    Parameters
    ----------
    x, y : array_like of shape (n,)
        The sample drawn on the left (before the shift).
    shifts : array_like of shape (m,)
        The shifts ``t`` of the right panel.
    raw, centred : mapping of float to array_like of shape (m,)
        For each correlation (at most three; the keys of ``raw`` and ``centred``
        must agree) the raw cosine and ``r`` at each shift.
    shift : float
        The shift of the left panel.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> from cosine_book.correlation import (pearson)
    >>> x, y = np.array([0.0, 1.0, 2.0]), np.array([1.0, 0.0, 2.0])
    >>> shifts = np.linspace(0.0, 4.0, 5)
    >>> raw = {0.5: [cosine(x + t, y + t) for t in shifts]}
    >>> r = {0.5: [pearson(x + t, y + t) for t in shifts]}
    >>> fig = shifted_cosine_figure(x, y, shifts, raw, r, shift=2.0)
    >>> fig.axes[1].get_legend().get_texts()[0].get_text()
    'raw cosine, r = +0.5'
    >>> plt.close(fig)
    """
    x_array = as_real_array(x, "x", ndim=1).astype(np.float64)
    y_array = as_real_array(y, "y", ndim=1).astype(np.float64)
    if x_array.shape != y_array.shape:
        raise ValueError(f"x has shape {x_array.shape} but y has {y_array.shape}; expected equal")
    shift_values = as_real_array(shifts, "shifts", ndim=1).astype(np.float64)
    raw_curves = _curves(raw, "raw", shift_values.size)
    centred_curves = _curves(centred, "centred", shift_values.size)
    if sorted(raw_curves) != sorted(centred_curves):
        raise ValueError(
            f"raw has the correlations {sorted(raw_curves)} but centred has "
            f"{sorted(centred_curves)}; expected the same"
        )
    styles = ("-", "--", ":")
    if len(raw_curves) > len(styles):
        raise ValueError(f"raw has {len(raw_curves)} curves; expected at most {len(styles)}")
    shift = as_float_scalar(shift, "shift")
    fig, (left, right) = plt.subplots(1, 2, figsize=(8.2, 3.6))
    left.scatter(x_array + shift, y_array + shift, s=12, color=PALETTE["local"], alpha=0.8)
    mean = (float(np.mean(x_array)) + shift, float(np.mean(y_array)) + shift)
    left.annotate(
        "",
        xy=mean,
        xytext=(0.0, 0.0),
        arrowprops={"arrowstyle": "-|>", "color": PALETTE["global"], "lw": 2},
    )
    left.plot([0.0], [0.0], "o", color=PALETTE["neutral"])
    points = np.concatenate([x_array, y_array]) + shift
    low, high = min(0.0, float(points.min())) - 0.5, max(0.0, float(points.max())) + 0.5
    left.set_xlim(low, high)
    left.set_ylim(low, high)
    left.set_aspect("equal")
    left.set_xlabel(f"x + {shift:g}")
    left.set_ylabel(f"y + {shift:g}")
    left.set_title(f"one sample, shifted by {shift:g}")
    for style, r in zip(styles, sorted(raw_curves), strict=False):
        right.plot(
            shift_values,
            raw_curves[r],
            style,
            color=PALETTE["global"],
            lw=2,
            label=f"raw cosine, r = {r:+.1f}",
        )
        right.plot(shift_values, centred_curves[r], style, color=PALETTE["local"], lw=2)
    right.plot([], [], color=PALETTE["local"], lw=2, label="r (centred cosine)")
    right.axhline(0.0, color=PALETTE["neutral"], lw=0.8)
    right.set_ylim(-1.05, 1.05)
    right.set_xlabel("shift t added to both samples")
    right.set_ylabel("cos(x + t, y + t), and r")
    right.set_title("the raw cosine climbs; r does not move")
    right.legend(loc="lower right", ncols=2, fontsize=9)
    return fig


def grouped_figure(
    x: ArrayLike,
    y: ArrayLike,
    groups: ArrayLike,
    *,
    result: GroupedCorrelation | None = None,
    xlabel: str = "x",
    ylabel: str = "y",
    title: str = "",
    jitter: float = 0.0,
) -> Figure:
    """Grouped scatter with the fitted lines (left) and the decomposition bars (right).

    The static figure of chapters 4 and 5 (:func:`draw_grouped_scatter` and
    :func:`draw_decomposition` side by side, in the book's layout).

    Parameters
    ----------
    x, y, groups : array_like of shape (n,)
        The data and their group labels.
    result : GroupedCorrelation, optional
        Precomputed :func:`~cosine_book.correlation.grouped_correlation`.
    xlabel, ylabel, title : str
        Axis labels and title of the scatter.
    jitter : float
        Displacement of the plotted points, as in :func:`draw_grouped_scatter`.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> x, y, groups = [0, 1, 2, 3], [1, 2, 0, 1], ["a", "a", "b", "b"]
    >>> fig = grouped_figure(x, y, groups, title="two groups")
    >>> fig.axes[0].get_title(), fig.axes[1].get_title()
    ('two groups', 'pooled r = within part + between part')
    >>> plt.close(fig)
    """
    for text, name in ((xlabel, "xlabel"), (ylabel, "ylabel"), (title, "title")):
        if not isinstance(text, str):
            raise ValueError(f"{name} must be a string; got {type(text).__name__}")
    if result is None:
        result = grouped_correlation(x, y, groups)
    fig, (left, right) = plt.subplots(1, 2, figsize=(8.4, 3.8))
    try:
        draw_grouped_scatter(left, x, y, groups, result=result, jitter=jitter, legend_below=True)
    except ValueError:
        plt.close(fig)
        raise
    left.set_xlabel(xlabel)
    left.set_ylabel(ylabel)
    left.set_title(title)
    draw_decomposition(right, result)
    return fig
