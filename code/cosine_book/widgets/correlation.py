"""Widgets for chapters 4 and 5: pooled versus within-group correlation.

Two explorations, each split into pure functions (sample, compute, draw) and a
function that wires them to sliders:

- :func:`decomposition_widget`: two groups with adjustable means, spreads and
  within-group correlations; shows the pooled ``r`` and its split into a
  within-group and a between-group part.
- :func:`simpson_widget`: move one group's vertical offset and watch the pooled
  ``r`` cross zero while the within-group correlations stay fixed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import ipywidgets as widgets
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from numpy.typing import ArrayLike, NDArray

from cosine_book.correlation import (
    GroupedCorrelation,
    grouped_correlation,
    pooled_correlation,
    sample_with_moments,
    zero_crossing_gap,
)
from cosine_book.datasets import BerkeleyAdmissions
from cosine_book.plotting import PALETTE

__all__ = [
    "GroupSpec",
    "GROUP_COLOURS",
    "decomposition_widget",
    "draw_admission_rates",
    "draw_decomposition",
    "draw_group_means",
    "draw_grouped_scatter",
    "draw_offset_sweep",
    "offset_sweep",
    "simpson_widget",
    "two_group_sample",
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


@dataclass(frozen=True)
class GroupSpec:
    """Sample moments of one group: size, means, common spread and correlation."""

    n: int
    x_mean: float
    y_mean: float
    spread: float
    correlation: float


def two_group_sample(
    first: GroupSpec, second: GroupSpec, seed: int = 0
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.str_]]:
    """Points of two groups whose sample moments are exactly the specified ones.

    Parameters
    ----------
    first, second : GroupSpec
        Moments of groups ``"A"`` and ``"B"`` (spread is the standard deviation
        of both ``x`` and ``y`` within the group, ``ddof=0``).
    seed : int
        Seed of the draws (group B uses ``seed + 1``).

    Returns
    -------
    (x, y, groups) : tuple of ndarray of shape (first.n + second.n,)

    Examples
    --------
    >>> x, y, g = two_group_sample(GroupSpec(20, 0, 0, 1, 0.5), GroupSpec(30, 2, -1, 1, 0.5))
    >>> x.shape, sorted(set(g.tolist()))
    ((50,), ['A', 'B'])
    """
    parts = [
        sample_with_moments(
            spec.n, spec.x_mean, spec.y_mean, spec.spread, spec.spread, spec.correlation, seed + k
        )
        for k, spec in enumerate((first, second))
    ]
    groups = np.array(["A"] * first.n + ["B"] * second.n, dtype=np.str_)
    x = np.concatenate([parts[0][0], parts[1][0]])
    y = np.concatenate([parts[0][1], parts[1][1]])
    return x, y, groups


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
    >>> result = draw_grouped_scatter(ax, [0, 1, 2, 3], [1, 2, 0, 1], ["a", "a", "b", "b"])
    >>> round(result.pooled, 3), len(ax.lines)
    (-0.316, 3)
    >>> plt.close(fig)
    """
    x_array, y_array = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    labels_array = np.asarray(groups)
    if result is None:
        result = grouped_correlation(x_array, y_array, labels_array)
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
            label=f"{label}: r = {result.within[g]:.2f}",
        )
        _fit_line(ax, x_array[member], y_array[member], color=colour, lw=2)
    _fit_line(
        ax,
        x_array,
        y_array,
        color=PALETTE["global"],
        lw=2,
        ls="--",
        label=f"pooled: r = {result.pooled:.2f}",
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
    >>> draw_decomposition(ax, grouped_correlation([0, 1, 2, 3], [1, 2, 0, 1], [0, 0, 1, 1]))
    >>> [label.get_text() for label in ax.get_xticklabels()][-3:]
    ['within part', 'between part', 'pooled r']
    >>> plt.close(fig)
    """
    within_part = result.within_factor * np.nan_to_num(result.pooled_within)
    between_part = result.between_factor * np.nan_to_num(result.between)
    names = [f"r in {label}" for label in result.labels]
    names += ["within part", "between part", "pooled r"]
    values = [*np.nan_to_num(result.within).tolist(), within_part, between_part, result.pooled]
    colours = [GROUP_COLOURS[g % len(GROUP_COLOURS)] for g in range(len(result.labels))]
    colours += [PALETTE["sky"], PALETTE["accent"], PALETTE["global"]]
    bars = ax.bar(range(len(values)), values, color=colours)
    for bar, value in zip(bars, values, strict=True):
        ax.annotate(
            f"{value:.2f}",
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
        Observations per unit of marker area.

    Examples
    --------
    >>> fig, ax = plt.subplots()
    >>> draw_group_means(ax, grouped_correlation([0, 1, 2, 3], [1, 2, 0, 1], ["a", "a", "b", "b"]))
    >>> [text.get_text() for text in ax.texts]
    ['a', 'b']
    >>> plt.close(fig)
    """
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
        Applicants per unit of marker area.

    Examples
    --------
    >>> from cosine_book.datasets import load_berkeley_admissions
    >>> fig, ax = plt.subplots()
    >>> draw_admission_rates(ax, load_berkeley_admissions())
    >>> [round(float(line.get_ydata()[0]), 3) for line in ax.lines]
    [0.445, 0.304]
    >>> plt.close(fig)
    """
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


def _decomposition_update(
    share_a: float,
    x_mean_a: float,
    y_mean_a: float,
    spread_a: float,
    r_a: float,
    x_mean_b: float,
    y_mean_b: float,
    spread_b: float,
    r_b: float,
    n_total: int = 120,
) -> tuple[plt.Figure, GroupedCorrelation]:
    n_a = int(np.clip(round(share_a * n_total), 3, n_total - 3))
    x, y, groups = two_group_sample(
        GroupSpec(n_a, x_mean_a, y_mean_a, spread_a, r_a),
        GroupSpec(n_total - n_a, x_mean_b, y_mean_b, spread_b, r_b),
    )
    fig, (left, right) = plt.subplots(1, 2, figsize=(9.0, 3.8))
    result = draw_grouped_scatter(left, x, y, groups)
    left.set_xlabel("x")
    left.set_ylabel("y")
    draw_decomposition(right, result)
    return fig, result


def decomposition_widget() -> widgets.Widget:
    """Two groups with sliders for share, means, spreads and correlations (chapter 4).

    Returns
    -------
    ipywidgets.Widget
        Sliders for each group on the left and right, the figure below.
    """

    def slider(value: float, low: float, high: float, description: str) -> widgets.FloatSlider:
        return widgets.FloatSlider(
            value=value,
            min=low,
            max=high,
            step=0.05,
            description=description,
            continuous_update=False,
        )

    controls = {
        "share_a": slider(0.5, 0.1, 0.9, "share of A"),
        "x_mean_a": slider(0.0, -4.0, 4.0, "A: mean x"),
        "y_mean_a": slider(1.5, -4.0, 4.0, "A: mean y"),
        "spread_a": slider(1.0, 0.1, 3.0, "A: spread"),
        "r_a": slider(0.7, -1.0, 1.0, "A: r"),
        "x_mean_b": slider(3.0, -4.0, 4.0, "B: mean x"),
        "y_mean_b": slider(-1.5, -4.0, 4.0, "B: mean y"),
        "spread_b": slider(1.0, 0.1, 3.0, "B: spread"),
        "r_b": slider(0.7, -1.0, 1.0, "B: r"),
    }
    output = widgets.Output()

    def redraw(_: object = None) -> None:
        with output:
            output.clear_output(wait=True)
            fig, _result = _decomposition_update(**{k: w.value for k, w in controls.items()})
            plt.show()
            plt.close(fig)

    for control in controls.values():
        control.observe(redraw, names="value")
    redraw()
    columns = widgets.HBox(
        [
            widgets.VBox(
                [controls[k] for k in ("share_a", "x_mean_a", "y_mean_a", "spread_a", "r_a")]
            ),
            widgets.VBox([controls[k] for k in ("x_mean_b", "y_mean_b", "spread_b", "r_b")]),
        ]
    )
    return widgets.VBox([columns, output])


def offset_sweep(
    y_gaps: ArrayLike,
    *,
    shares: Sequence[float] = (0.5, 0.5),
    x_gap: float = 3.0,
    spreads: Sequence[float] = (1.0, 1.0),
    within: Sequence[float] = (0.8, 0.8),
) -> tuple[NDArray[np.float64], float]:
    """Pooled ``r`` of two groups as the second group's mean moves vertically.

    Group A sits at ``(0, 0)`` and group B at ``(x_gap, y_gap)``; both keep
    their spreads and within-group correlations.

    Parameters
    ----------
    y_gaps : array_like
        Vertical offsets of group B.
    shares : pair of float
        Group shares.
    x_gap : float
        Horizontal offset of group B, nonzero.
    spreads : pair of float
        Standard deviation of ``x`` and ``y`` within each group.
    within : pair of float
        Within-group correlations.

    Returns
    -------
    (pooled, zero_gap) : tuple
        Pooled ``r`` at every offset, and the offset where it is zero.

    Examples
    --------
    >>> pooled, zero_gap = offset_sweep([-3.0, 0.0, 3.0])
    >>> [round(float(r), 3) for r in pooled], round(zero_gap, 3)
    ([-0.446, 0.444, 0.938], -1.067)
    """
    gaps = np.atleast_1d(np.asarray(y_gaps, dtype=np.float64))
    pooled = np.array(
        [
            pooled_correlation(shares, [0.0, x_gap], [0.0, gap], spreads, spreads, within)
            for gap in gaps
        ]
    )
    return pooled, zero_crossing_gap(shares, x_gap, spreads, spreads, within)


def draw_offset_sweep(
    ax: Axes,
    y_gap: float,
    *,
    gap_range: tuple[float, float] = (-8.0, 8.0),
    **setting: object,
) -> float:
    """Curve of pooled ``r`` against group B's vertical offset, with the current offset marked.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        Axes to draw on.
    y_gap : float
        The current offset (a dot on the curve).
    gap_range : (float, float)
        Range of offsets on the x-axis.
    **setting
        ``shares``, ``x_gap``, ``spreads``, ``within`` as in :func:`offset_sweep`.

    Returns
    -------
    float
        The pooled ``r`` at ``y_gap``.

    Examples
    --------
    >>> fig, ax = plt.subplots()
    >>> round(draw_offset_sweep(ax, -3.0), 3)
    -0.446
    >>> plt.close(fig)
    """
    gaps = np.linspace(*gap_range, 401)
    curve, zero_gap = offset_sweep(gaps, **setting)  # type: ignore[arg-type]
    (current,), _ = offset_sweep([y_gap], **setting)  # type: ignore[arg-type]
    within = setting.get("within", (0.8, 0.8))
    ax.plot(gaps, curve, color=PALETTE["global"], lw=2, label="pooled r")
    for g, r in enumerate(within):  # type: ignore[arg-type]
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
    return float(current)


def simpson_widget(
    *,
    n_per_group: int = 40,
    x_gap: float = 3.0,
    spread: float = 1.0,
    within: float = 0.8,
) -> widgets.Widget:
    """Move group B up or down: the pooled ``r`` flips sign, the group ``r``'s do not (chapter 5).

    Parameters
    ----------
    n_per_group : int
        Points per group.
    x_gap : float
        Horizontal distance between the group means.
    spread : float
        Within-group standard deviation of ``x`` and ``y``.
    within : float
        Within-group correlation of both groups.

    Returns
    -------
    ipywidgets.Widget
    """

    def update(y_gap: float) -> None:
        x, y, groups = two_group_sample(
            GroupSpec(n_per_group, 0.0, 0.0, spread, within),
            GroupSpec(n_per_group, x_gap, y_gap, spread, within),
        )
        fig, (left, right) = plt.subplots(1, 2, figsize=(9.0, 3.8))
        draw_grouped_scatter(left, x, y, groups)
        left.set_xlabel("x")
        left.set_ylabel("y")
        left.set_ylim(-11.0, 11.0)
        draw_offset_sweep(
            right, y_gap, x_gap=x_gap, spreads=(spread, spread), within=(within, within)
        )
        plt.show()
        plt.close(fig)

    return widgets.interactive(
        update,
        y_gap=widgets.FloatSlider(
            value=2.0,
            min=-8.0,
            max=8.0,
            step=0.1,
            description="offset of B",
            continuous_update=False,
        ),
    )
