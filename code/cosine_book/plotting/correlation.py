"""Figures of chapters 4 and 5: centring, grouped data, Simpson's paradox, Berkeley.

The figures take the objects the package made (a ``GroupedCorrelation``, a
``BerkeleyAdmissions`` table) as they are: validation happens where they are made.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from mpl_toolkits.mplot3d.art3d import Poly3DCollection
from numpy.typing import ArrayLike

from cosine_book.correlation import GroupedCorrelation, pearson
from cosine_book.datasets import BerkeleyAdmissions
from cosine_book.plotting import PALETTE
from cosine_book.similarity import cosine

__all__ = [
    "berkeley_figure",
    "centring_figure",
    "draw_causal_diagram",
    "grouped_figure",
    "shifted_cosine_figure",
]

_GROUP_COLOURS = tuple(PALETTE[k] for k in ("local", "weight", "bound", "sky", "accent", "neutral"))
# The widgets' figures: 8.2 inches fit the text column at 1280 px unshrunk, and fixed
# margins (those constrained layout picks) spare the layout engine in every frame.
_WIDGET_FIGSIZE = (8.2, 3.8)
_DECOMPOSITION_MARGINS = {
    "left": 0.073,
    "right": 0.995,
    "bottom": 0.146,
    "top": 0.936,
    "wspace": 0.2,
}
_SIMPSON_MARGINS = {"left": 0.088, "right": 0.996, "bottom": 0.121, "top": 0.989, "wspace": 0.207}


def _colour(g: int) -> str:
    return _GROUP_COLOURS[g % len(_GROUP_COLOURS)]


def _two_decimals(value: float) -> str:
    # Rounded to 6 decimals first, so that an exact tie (0.325 in a widget) does not
    # depend on the last bits; 0.00, never -0.00.
    return f"{round(round(float(value), 6), 2) + 0.0:.2f}"


def _fit_line(ax: Axes, x: np.ndarray, y: np.ndarray, **style: object) -> None:
    """Least-squares line over the x-range of the points."""
    slope = np.sum((x - x.mean()) * (y - y.mean())) / np.sum((x - x.mean()) ** 2)
    xs = np.array([x.min(), x.max()])
    ax.plot(xs, y.mean() + slope * (xs - x.mean()), **style)  # type: ignore[arg-type]


def draw_grouped_scatter(
    ax: Axes,
    x: ArrayLike,
    y: ArrayLike,
    groups: ArrayLike,
    result: GroupedCorrelation,
    *,
    jitter: float = 0.0,
    legend_below: bool = False,
) -> None:
    """Each group's points and fitted line, and the pooled fit dashed; legend with the r's.

    ``jitter``: a fixed (seeded) displacement of the plotted points only, to separate ties.
    """
    x, y, labels = np.asarray(x, np.float64), np.asarray(y, np.float64), np.asarray(groups)
    shake = np.random.default_rng(0).normal(0.0, jitter, size=(2, x.size))
    for g, label in enumerate(result.labels):
        member = labels == label
        ax.scatter(
            x[member] + shake[0, member],
            y[member] + shake[1, member],
            s=14.0,
            color=_colour(g),
            alpha=0.75,
            label=f"{label}: r = {_two_decimals(result.within[g])}",
        )
        _fit_line(ax, x[member], y[member], color=_colour(g), lw=2)
    pooled = f"pooled: r = {_two_decimals(result.pooled)}"
    _fit_line(ax, x, y, color=PALETTE["global"], lw=2, ls="--", label=pooled)
    if legend_below:
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncols=2, frameon=False)
    else:
        legend = ax.legend(loc="best", frameon=True, framealpha=0.85)
        legend.get_frame().set_edgecolor("none")


def draw_decomposition(ax: Axes, result: GroupedCorrelation) -> None:
    """Bars: the group r's, and the pooled r as within part plus between part."""
    within_part, between_part = result.parts()
    names = [f"r in {label}" for label in result.labels]
    names += ["within part", "between part", "pooled r"]
    values = [*np.nan_to_num(result.within).tolist(), within_part, between_part, result.pooled]
    colours = [_colour(g) for g in range(len(result.labels))]
    colours += [PALETTE["sky"], PALETTE["accent"], PALETTE["global"]]
    bars = ax.bar(range(len(values)), values, color=colours)
    for bar, value in zip(bars, values, strict=True):
        label = _two_decimals(value)  # above the bar, below if negative
        ax.annotate(
            label,
            (bar.get_x() + bar.get_width() / 2, value),
            xytext=(0, -11 if label.startswith("-") else 3),
            textcoords="offset points",
            ha="center",
            fontsize=9,
        )
    ax.axhline(0.0, color=PALETTE["neutral"], lw=0.8)
    ax.set_xticks(range(len(values)), names, rotation=20)
    ax.set_ylim(-1.1, 1.1)
    ax.set_title("pooled r = within part + between part")


def grouped_figure(
    x: ArrayLike,
    y: ArrayLike,
    groups: ArrayLike,
    result: GroupedCorrelation,
    *,
    xlabel: str = "x",
    ylabel: str = "y",
    title: str = "",
    jitter: float = 0.0,
) -> Figure:
    """Grouped scatter with fitted lines (left), decomposition bars (right). Chapters 4-5."""
    fig, (left, right) = plt.subplots(1, 2, figsize=(8.4, 3.8))
    draw_grouped_scatter(left, x, y, groups, result, jitter=jitter, legend_below=True)
    left.set_xlabel(xlabel)
    left.set_ylabel(ylabel)
    left.set_title(title)
    draw_decomposition(right, result)
    return fig


def _widget_figure(x, y, groups, result, margins: dict[str, float]) -> tuple[Figure, Axes, Axes]:
    """A widget's figure: the grouped scatter on the left, the right axes empty."""
    fig, (left, right) = plt.subplots(1, 2, figsize=_WIDGET_FIGSIZE, layout="none")
    fig.subplots_adjust(**margins)
    draw_grouped_scatter(left, x, y, groups, result)
    left.set_xlabel("x")
    left.set_ylabel("y")
    return fig, left, right


def decomposition_figure(x, y, groups, result: GroupedCorrelation, limits) -> Figure:
    """Chapter 4's widget: grouped scatter in fixed ``limits`` (left), decomposition bars."""
    fig, left, right = _widget_figure(x, y, groups, result, _DECOMPOSITION_MARGINS)
    left.set_xlim(*limits[0])
    left.set_ylim(*limits[1])
    left.set_aspect("equal", adjustable="box")
    draw_decomposition(right, result)
    return fig


def simpson_figure(x, y, groups, result: GroupedCorrelation, sweep: tuple) -> Figure:
    """Chapter 5's widget: two groups (left); the pooled r against B's offset (right).

    ``sweep``: the offsets, the pooled r at each, the offset where it is 0, B's offset.
    """
    gaps, pooled, zero_gap, y_gap = sweep
    fig, left, ax = _widget_figure(x, y, groups, result, _SIMPSON_MARGINS)
    left.set_ylim(-11.0, 11.0)
    ax.plot(gaps, pooled, color=PALETTE["global"], lw=2, label="pooled r")
    for g, r in enumerate(result.within):
        ax.axhline(r, color=_colour(g), lw=1.5, ls=":" if g else "-", label=f"r in {'AB'[g]}")
    ax.axhline(0.0, color=PALETTE["neutral"], lw=0.8)
    flips = f"sign flips at {zero_gap:.2f}"
    ax.axvline(zero_gap, color=PALETTE["bound"], lw=1, ls="--", label=flips)
    ax.plot([y_gap], [result.pooled], "o", color=PALETTE["accent"], ms=8)
    ax.set_xlabel("vertical offset of group B")
    ax.set_ylabel("correlation")
    ax.set_ylim(-1.05, 1.05)
    ax.legend(loc="lower right")
    return fig


# An orthonormal basis of the plane of R^3 orthogonal to (1, 1, 1), where the centred
# vectors of three observations lie.
_PLANE_BASIS = np.array([[1.0, -1.0, 0.0], [1.0, 1.0, -2.0]]) / np.array(
    [[np.sqrt(2.0)], [np.sqrt(6.0)]]
)


def _plane_coordinates(vector: np.ndarray) -> tuple[float, float]:
    return float(np.sum(vector * _PLANE_BASIS[0])), float(np.sum(vector * _PLANE_BASIS[1]))


def centring_figure(x: ArrayLike, y: ArrayLike) -> Figure:
    r"""Centring as a projection, for three observations. Used in chapter 4.

    Left, in 3-D: ``x``, ``y``, the line of :math:`\mathbf 1`, the plane orthogonal to it
    and the centred vectors in it; right, that plane seen along :math:`\mathbf 1`, where the
    centred vectors make the angle whose cosine is :math:`r` (data divided by their largest
    entry first: no angle changes).
    """
    r = pearson(x, y)  # refuses NaN, a constant sample, ...
    x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
    if x.shape != (3,):
        raise ValueError(f"x has {x.size} entries; expected exactly 3 (one axis per observation)")
    raw = cosine(x, y)
    scale = max(float(np.max(np.abs(x))), float(np.max(np.abs(y))))
    x_unit, y_unit = x / scale, y / scale
    x_centred, y_centred = x_unit - np.mean(x_unit), y_unit - np.mean(y_unit)
    u_x, v_x = _plane_coordinates(x_centred)
    u_y, v_y = _plane_coordinates(y_centred)

    fig = plt.figure(figsize=(8.5, 4.0), layout="none")
    ax3d = fig.add_subplot(1, 2, 1, projection="3d")
    flat = fig.add_subplot(1, 2, 2)
    fig.subplots_adjust(left=0.0, right=0.98, bottom=0.04, top=0.9, wspace=0.05)
    colours = {"x": PALETTE["global"], "y": PALETTE["accent"]}
    # The plane orthogonal to 1 as a translucent disc, and the line of 1.
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
    for k, axis in enumerate((ax3d.xaxis, ax3d.yaxis, ax3d.zaxis)):
        axis.set_ticklabels([])
        axis.set_pane_color((1.0, 1.0, 1.0, 0.0))
        axis.set_label_text(f"obs. {k + 1}", fontsize=9)
        axis.labelpad = -12
    ax3d.view_init(elev=28, azim=-20)
    ax3d.set_title("centring slides x and y along 1 into the plane", fontsize=10)

    flat.add_patch(plt.Circle((0.0, 0.0), radius, color=PALETTE["neutral"], alpha=0.18, lw=0))
    for name, (u, v) in {"x": (u_x, v_x), "y": (u_y, v_y)}.items():
        arrow = {"arrowstyle": "-|>", "color": colours[name], "lw": 2, "shrinkA": 0}
        flat.annotate("", (u, v), (0.0, 0.0), arrowprops=arrow)
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
    start, end = np.arctan2(v_x, u_x), np.arctan2(v_y, u_y)
    if end - start > np.pi:
        end -= 2.0 * np.pi
    elif start - end > np.pi:
        end += 2.0 * np.pi
    arc = np.linspace(start, end, 40)
    flat.plot(0.3 * radius * np.cos(arc), 0.3 * radius * np.sin(arc), color="0.3", lw=1)
    middle = (start + end) / 2.0
    at = (0.42 * radius * np.cos(middle), 0.42 * radius * np.sin(middle))
    flat.text(*at, "φ", ha="center", va="center", fontsize=11)
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


def shifted_cosine_figure(
    x: ArrayLike,
    y: ArrayLike,
    shifts: ArrayLike,
    raw: Mapping[float, ArrayLike],
    centred: Mapping[float, ArrayLike],
    *,
    shift: float = 3.0,
) -> Figure:
    """A sample shifted by ``shift`` (left); raw cosine and r against the shift (right).

    ``raw`` and ``centred`` map each correlation (at most three) to ``cos(x + t, y + t)``
    and to r at each shift ``t``. Used in chapter 4.
    """
    x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
    fig, (left, right) = plt.subplots(1, 2, figsize=(8.2, 3.6))
    left.scatter(x + shift, y + shift, s=12, color=PALETTE["local"], alpha=0.8)
    mean = (float(np.mean(x)) + shift, float(np.mean(y)) + shift)
    arrow = {"arrowstyle": "-|>", "color": PALETTE["global"], "lw": 2}
    left.annotate("", xy=mean, xytext=(0.0, 0.0), arrowprops=arrow)
    left.plot([0.0], [0.0], "o", color=PALETTE["neutral"])
    points = np.concatenate([x, y]) + shift
    low, high = min(0.0, float(points.min())) - 0.5, max(0.0, float(points.max())) + 0.5
    left.set_xlim(low, high)
    left.set_ylim(low, high)
    left.set_aspect("equal")
    left.set_xlabel(f"x + {shift:g}")
    left.set_ylabel(f"y + {shift:g}")
    left.set_title(f"one sample, shifted by {shift:g}")
    for style, r in zip(("-", "--", ":"), sorted(raw), strict=False):
        label = f"raw cosine, r = {r:+.1f}"
        right.plot(shifts, raw[r], style, color=PALETTE["global"], lw=2, label=label)
        right.plot(shifts, centred[r], style, color=PALETTE["local"], lw=2)
    right.plot([], [], color=PALETTE["local"], lw=2, label="r (centred cosine)")
    right.axhline(0.0, color=PALETTE["neutral"], lw=0.8)
    right.set_ylim(-1.05, 1.05)
    right.set_xlabel("shift t added to both samples")
    right.set_ylabel("cos(x + t, y + t), and r")
    right.set_title("the raw cosine climbs; r does not move")
    right.legend(loc="lower right", ncols=2, fontsize=9)
    return fig


def berkeley_figure(table: BerkeleyAdmissions, result: GroupedCorrelation) -> Figure:
    """Berkeley 1973: rates within departments (left), department means (right). Chapter 5.

    ``result`` is ``grouped_correlation(*table.individuals())``: on the right, each
    department's share of women against its admission rate, area ~ applicants.
    """
    fig, (left, right) = plt.subplots(1, 2, figsize=(8.4, 3.8))
    departments = sorted(set(table.department.tolist()))
    rates = table.admitted / table.applicants
    arms = [("male", PALETTE["global"], -0.12, "men"), ("female", PALETTE["accent"], 0.12, "women")]
    for sex, colour, shift, name in arms:
        rows = table.sex == sex
        positions = [departments.index(d) + shift for d in table.department[rows]]
        size = table.applicants[rows] / 3.0
        left.scatter(positions, rates[rows], s=size, color=colour, alpha=0.8, label=name)
    for sex, colour, _, name in arms:
        rows = table.sex == sex
        overall = table.admitted[rows].sum() / table.applicants[rows].sum()
        left.axhline(overall, color=colour, ls="--", lw=1.2, label=f"{name}, all departments")
    left.set_xticks(range(len(departments)), departments)
    left.set_xlabel("department (marker area ~ applicants)")
    left.set_ylabel("admission rate")
    left.set_ylim(0.0, 1.0)
    left.legend(loc="upper right", ncols=2)
    left.set_title("within departments vs overall")
    size = result.counts / 3.0
    grey = [PALETTE["neutral"]] * len(result.labels)
    right.scatter(result.x_means, result.y_means, s=size, color=grey, alpha=0.85)
    for g, label in enumerate(result.labels):
        at = (result.x_means[g], result.y_means[g])
        right.annotate(str(label), at, ha="center", va="center", fontsize=9)
    right.set(xlim=(0.0, 1.0), ylim=(0.0, 1.0), title="between departments: the negative part")
    right.set_xlabel("share of women among the department's applicants")
    right.set_ylabel("admission rate of the department")
    return fig


_EDGE_LABEL = {"xytext": (0, -12), "textcoords": "offset points", "ha": "center", "va": "top"}


def draw_causal_diagram(
    ax: Axes,
    nodes: Mapping[str, tuple[float, float]],
    edges: Sequence[tuple[str, str]],
    *,
    edge_labels: Mapping[tuple[str, str], str] | None = None,
) -> None:
    """A small causal graph: named boxes at ``nodes``, an arrow per edge. Used in chapter 5."""
    for edge in edges:
        unknown = [end for end in edge if end not in nodes]
        if unknown:
            raise ValueError(f"edge {edge!r} names an unknown node {unknown[0]!r}")
    box = {"boxstyle": "round,pad=0.45", "facecolor": "white", "edgecolor": PALETTE["global"]}
    boxes = {
        name: ax.text(
            u, v, name, ha="center", va="center", fontsize=11, bbox=box | {"lw": 1.5}, zorder=3
        )
        for name, (u, v) in nodes.items()
    }
    for cause, effect in edges:
        arrow = {
            "arrowstyle": "-|>,head_length=0.6,head_width=0.3",
            "color": "0.25",
            "lw": 1.6,
            "shrinkA": 2,
            "shrinkB": 5,  # the head stops short of the box, in full view
            "patchA": boxes[cause].get_bbox_patch(),
            "patchB": boxes[effect].get_bbox_patch(),
        }
        ax.annotate("", xy=nodes[effect], xytext=nodes[cause], arrowprops=arrow, zorder=2)
        text = (edge_labels or {}).get((cause, effect))
        if text:
            middle = (np.array(nodes[cause]) + np.array(nodes[effect])) / 2.0
            style = {"fontsize": 9, "color": "0.3", "style": "italic"}
            ax.annotate(text, tuple(middle.tolist()), **_EDGE_LABEL, **style)
    positions = np.array(list(nodes.values()), dtype=np.float64)
    margin = 0.35 * np.maximum(np.ptp(positions, axis=0), 1.0)
    low, high = positions.min(axis=0) - margin, positions.max(axis=0) + margin
    ax.set_xlim(float(low[0]), float(high[0]))
    ax.set_ylim(float(low[1]), float(high[1]))
    ax.set_axis_off()
