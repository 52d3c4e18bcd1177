"""Figures of chapter 5 (Simpson's paradox).

:func:`draw_group_regressions` draws grouped regression lines with seaborn,
:func:`berkeley_figure` the admission rates within and between departments
(:func:`draw_admission_rates`, :func:`draw_group_means`),
:func:`draw_causal_diagram` a small causal graph, and :func:`simpson_figure`
(with :func:`draw_offset_sweep`) is the drawing function of chapter 5's widget
(:mod:`cosine_book.widgets.correlation`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from numpy.typing import ArrayLike

from cosine_book._validation import as_float_scalar, as_real_array
from cosine_book.correlation import GroupedCorrelation, grouped_correlation
from cosine_book.datasets import BerkeleyAdmissions
from cosine_book.plotting import PALETTE
from cosine_book.plotting.correlation import (
    _WIDGET_FIGSIZE,
    GROUP_COLOURS,
    _two_decimals,
    draw_grouped_scatter,
)

__all__ = [
    "berkeley_figure",
    "draw_admission_rates",
    "draw_causal_diagram",
    "draw_group_means",
    "draw_group_regressions",
    "draw_offset_sweep",
    "simpson_figure",
]

_SIMPSON_MARGINS = {"left": 0.088, "right": 0.996, "bottom": 0.121, "top": 0.989, "wspace": 0.207}


def draw_group_means(
    ax: Axes, result: GroupedCorrelation, *, bubble_scale: float = 3.0, colour: str | None = None
) -> None:
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
    colour : str, optional
        One colour for every bubble (when the groups' colours would mean
        something else in the figure); by default each group's colour.

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
    colours = [colour or GROUP_COLOURS[g % len(GROUP_COLOURS)] for g in range(len(result.labels))]
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
        :func:`~cosine_book.group_moments.offset_sweep`.
    zero_gap : float
        The offset where the pooled ``r`` is zero (a dashed vertical line).
    y_gap, current : float
        The current offset and its pooled ``r`` (a dot).
    within : pair of float
        The within-group correlations (horizontal lines).

    Examples
    --------
    >>> from cosine_book.group_moments import (offset_sweep)
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
        The sweep, as returned by :func:`~cosine_book.group_moments.offset_sweep`.
    y_gap : float
        The current offset of group B.
    y_limits : (float, float)
        Fixed y-limits of the scatter, so that frames compare.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> from cosine_book.group_moments import (GroupSpec, offset_sweep)
    >>> from cosine_book.group_moments import (two_group_sample)
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


# An orthonormal basis of the plane of R^3 orthogonal to (1, 1, 1), where centred
# vectors of three observations lie.


def draw_group_regressions(
    ax: Axes,
    x: ArrayLike,
    y: ArrayLike,
    groups: ArrayLike,
    *,
    result: GroupedCorrelation | None = None,
    point_size: float = 14.0,
) -> GroupedCorrelation:
    """Seaborn regression plots by group, and the pooled fit dashed: the classic Simpson picture.

    One ``seaborn.regplot`` per group (its points and least-squares line,
    no confidence band), and one for all the data (line only, dashed), with
    the same colours and legend as :func:`~cosine_book.plotting.correlation.draw_grouped_scatter`.

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
        Marker area, positive.

    Returns
    -------
    GroupedCorrelation
        The numbers shown.

    Examples
    --------
    >>> fig, ax = plt.subplots()
    >>> x, y, groups = [0, 1, 2, 3], [1, 2, 0, 1], ["a", "a", "b", "b"]
    >>> result = draw_group_regressions(ax, x, y, groups)
    >>> [text.get_text() for text in ax.get_legend().get_texts()]
    ['a: r = 1.00', 'b: r = 1.00', 'pooled: r = -0.32']
    >>> plt.close(fig)
    """
    import seaborn as sns

    if result is None:
        result = grouped_correlation(x, y, groups)  # validates x, y and groups
    point_size = as_float_scalar(point_size, "point_size", positive=True)
    x_array = as_real_array(x, "x", ndim=1).astype(np.float64)
    y_array = as_real_array(y, "y", ndim=1).astype(np.float64)
    labels_array = np.asarray(groups)
    for g, label in enumerate(result.labels):
        member = labels_array == label
        sns.regplot(
            x=x_array[member],
            y=y_array[member],
            ax=ax,
            ci=None,
            color=GROUP_COLOURS[g % len(GROUP_COLOURS)],
            label=f"{label}: r = {_two_decimals(result.within[g])}",
            scatter_kws={"s": point_size, "alpha": 0.75},
            line_kws={"lw": 2},
        )
    sns.regplot(
        x=x_array,
        y=y_array,
        ax=ax,
        ci=None,
        scatter=False,
        color=PALETTE["global"],
        label=f"pooled: r = {_two_decimals(result.pooled)}",
        line_kws={"lw": 2, "ls": "--"},
    )
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), frameon=False)
    return result


def draw_causal_diagram(
    ax: Axes,
    nodes: Mapping[str, tuple[float, float]],
    edges: Sequence[tuple[str, str]],
    *,
    edge_labels: Mapping[tuple[str, str], str] | None = None,
) -> None:
    """A small causal graph: named boxes at given positions, one arrow per edge.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        Axes to draw on; its frame, grid and ticks are switched off.
    nodes : mapping of str to (float, float)
        Each variable's name and the centre of its box, in data coordinates.
    edges : sequence of (str, str)
        Arrows from cause to effect, between names of ``nodes``.
    edge_labels : mapping of (str, str) to str, optional
        Text written beside some of the edges.

    Raises
    ------
    ValueError
        If ``nodes`` is empty, not a mapping of names to pairs of finite real
        numbers, or an edge (or a labelled edge) names an unknown node, joins a
        node to itself, or is not one of ``edges``.

    Examples
    --------
    >>> fig, ax = plt.subplots()
    >>> nodes = {"sex": (0, 0), "department": (1, 1), "admission": (2, 0)}
    >>> edges = [("sex", "department"), ("department", "admission"),
    ...          ("sex", "admission")]
    >>> draw_causal_diagram(ax, nodes, edges)
    >>> sorted(text.get_text() for text in ax.texts if text.get_text())
    ['admission', 'department', 'sex']
    >>> plt.close(fig)
    """
    if not isinstance(nodes, Mapping) or not nodes:
        raise ValueError(
            f"nodes must be a non-empty mapping of names to (x, y) positions; got {nodes!r}"
        )
    names = list(nodes)
    for name in names:
        if not isinstance(name, str):
            raise ValueError(f"node names must be strings; got {name!r}")
    positions = as_real_array([nodes[name] for name in names], "nodes (positions)", ndim=2)
    if positions.shape[1] != 2:
        raise ValueError(
            f"nodes (positions) has shape {positions.shape}; expected one (x, y) pair per node"
        )
    where = dict(zip(names, positions.astype(np.float64).tolist(), strict=True))
    edge_list = [tuple(edge) for edge in edges]
    for edge in edge_list:
        if len(edge) != 2:
            raise ValueError(f"edge {edge!r} must be a pair (cause, effect)")
        for end in edge:
            if end not in where:
                raise ValueError(
                    f"edge {edge!r} names an unknown node {end!r}; expected one of {names}"
                )
        if edge[0] == edge[1]:
            raise ValueError(f"edge {edge!r} joins a node to itself; expected two nodes")
    labels = dict(edge_labels or {})
    for edge in labels:
        if tuple(edge) not in edge_list:
            raise ValueError(f"edge_labels names {edge!r}, which is not one of the edges")

    boxes = {}
    for name, (u, v) in where.items():
        boxes[name] = ax.text(
            u,
            v,
            name,
            ha="center",
            va="center",
            fontsize=11,
            bbox={
                "boxstyle": "round,pad=0.45",
                "facecolor": "white",
                "edgecolor": PALETTE["global"],
                "lw": 1.5,
            },
            zorder=3,
        )
    for cause, effect in edge_list:
        ax.annotate(
            "",
            xy=where[effect],
            xytext=where[cause],
            arrowprops={
                "arrowstyle": "-|>,head_length=0.6,head_width=0.3",
                "color": "0.25",
                "lw": 1.6,
                "shrinkA": 2,
                "shrinkB": 5,  # the head stops short of the box, in full view
                "patchA": boxes[cause].get_bbox_patch(),
                "patchB": boxes[effect].get_bbox_patch(),
            },
            zorder=2,
        )
        text = labels.get((cause, effect))
        if text:
            middle = (np.array(where[cause]) + np.array(where[effect])) / 2.0
            ax.annotate(
                text,
                tuple(middle.tolist()),
                xytext=(0, -12),
                textcoords="offset points",
                ha="center",
                va="top",
                fontsize=9,
                color="0.3",
                style="italic",
            )
    spread = np.ptp(positions.astype(np.float64), axis=0)
    margin = 0.35 * np.maximum(spread, 1.0)
    low = positions.min(axis=0) - margin
    high = positions.max(axis=0) + margin
    ax.set_xlim(float(low[0]), float(high[0]))
    ax.set_ylim(float(low[1]), float(high[1]))
    ax.set_axis_off()


def berkeley_figure(table: BerkeleyAdmissions, result: GroupedCorrelation) -> Figure:
    """Berkeley 1973: rates within departments (left) and the department means (right).

    Left, :func:`draw_admission_rates`; right, :func:`draw_group_means` of the
    decomposition of the correlation of "woman" and "admitted" with the departments
    as groups: each department's share of women among its applicants against its
    admission rate.

    Parameters
    ----------
    table : BerkeleyAdmissions
        From :func:`~cosine_book.datasets.load_berkeley_admissions`.
    result : GroupedCorrelation
        :func:`~cosine_book.correlation.grouped_correlation` of
        ``table.individuals()``.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> from cosine_book.datasets import load_berkeley_admissions
    >>> table = load_berkeley_admissions()
    >>> fig = berkeley_figure(table, grouped_correlation(*table.individuals()))
    >>> [text.get_text() for text in fig.axes[1].texts]
    ['A', 'B', 'C', 'D', 'E', 'F']
    >>> plt.close(fig)
    """
    if not isinstance(table, BerkeleyAdmissions):
        raise ValueError(
            "table must be a BerkeleyAdmissions from load_berkeley_admissions; "
            f"got {type(table).__name__}"
        )
    if not isinstance(result, GroupedCorrelation):
        raise ValueError(
            "result must be a GroupedCorrelation from grouped_correlation; "
            f"got {type(result).__name__}"
        )
    fig, (left, right) = plt.subplots(1, 2, figsize=(8.4, 3.8))
    draw_admission_rates(left, table)
    left.set_title("within departments vs overall")
    draw_group_means(right, result, colour=PALETTE["neutral"])
    right.set(xlim=(0.0, 1.0), ylim=(0.0, 1.0), title="between departments: the negative part")
    right.set_xlabel("share of women among the department's applicants")
    right.set_ylabel("admission rate of the department")
    return fig
