r"""Figures of the block decomposition: the introduction and chapters 2 and 3.

A pair of blocked vectors has local cosines :math:`c_i`, weights
:math:`w_i = \|x_i\| \|y_i\| / (\|x\| \|y\|)` summing to the profile cosine :math:`\rho`,
and the global cosine :math:`\sum_i w_i c_i`, which lies in
:math:`[\rho \min_i c_i, \rho \max_i c_i]`. The figures take those numbers from
:func:`~cosine_book.similarity.block_cosines`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from numpy.typing import ArrayLike, NDArray

from cosine_book._validation import as_real_array
from cosine_book.plotting import PALETTE, typeset_figure
from cosine_book.similarity import BlockCosines, block_cosines, blocks_with, cosine

__all__ = [
    "coordinate_blocks_figure",
    "limit_construction_figure",
    "plot_identity_areas",
    "profiles_and_wedge_figure",
    "sampled_intervals_figure",
    "wedge_figure",
]

_SUBSCRIPTS = "₁₂"
# Line styles of up to four series told apart by style as well as by colour.
_STYLES = ("-", "--", ":", "-.")


def plot_identity_areas(cases: Mapping[str, tuple[ArrayLike, ArrayLike, ArrayLike]]) -> Figure:
    r"""The block identity as areas: block :math:`i` a bar of width :math:`w_i`, height :math:`c_i`.

    Used in the introduction. One panel per case ``title: (local, x_norms, y_norms)``.
    The bars' total area is the global cosine :math:`\sum_i w_i c_i`; their widths add
    up to :math:`\rho`; the outlined rectangle of width 1 has the same area.

    >>> fig = plot_identity_areas({"example": ([0.9, 0.8], [1.0, 0.1], [0.1, 1.0])})
    >>> [round(float(bar.get_width()), 4) for bar in fig.axes[0].patches[:2]]
    [0.099, 0.099]
    >>> plt.close(fig)
    """
    if not isinstance(cases, Mapping) or not cases:
        raise ValueError("cases must be a non-empty mapping: title -> (local, x_norms, y_norms)")
    fig, axes = plt.subplots(1, len(cases), figsize=(3.4 * len(cases), 3.4), sharey=True)
    axes = np.atleast_1d(axes)
    for ax, (title, (local, x_norms, y_norms)) in zip(axes, cases.items(), strict=True):
        c = as_real_array(local, f"{title}: local", ndim=1)
        a = as_real_array(x_norms, f"{title}: x_norms", ndim=1)
        b = as_real_array(y_norms, f"{title}: y_norms", ndim=1)
        if not c.shape == a.shape == b.shape or (abs(c) > 1).any() or (np.minimum(a, b) <= 0).any():
            raise ValueError(
                f"{title}: expected one local cosine in [-1, 1] and two positive norms per "
                f"block; got {c}, {a} and {b}"
            )
        # Fixed-order sums (not BLAS): the same picture on every CPU.
        weights = a * b / (np.sqrt(np.sum(a * a)) * np.sqrt(np.sum(b * b)))
        rho, global_cosine = float(np.sum(weights)), float(np.sum(weights * c))
        lefts = np.concatenate([[0.0], np.cumsum(weights)[:-1]])
        blocks = r"block $i$: width $w_i$, height $c_i$"
        ax.bar(lefts, c, weights, align="edge", color=PALETTE["local"], ec="white", label=blocks)
        outline = {"fill": False, "edgecolor": PALETTE["global"], "lw": 2.0, "ls": "--"}
        same = plt.Rectangle((0.0, 0.0), 1.0, global_cosine, **outline, label="same area, width 1")
        ax.add_patch(same)
        arrow = {"arrowstyle": "<->", "color": PALETTE["weight"], "lw": 1.5}
        ax.annotate("", (rho, -0.12), (0.0, -0.12), arrowprops=arrow, annotation_clip=False)
        text = rf"$\rho = {rho:.2f}$"
        ax.text(max(rho / 2, 0.15), -0.2, text, color=PALETTE["weight"], ha="center", va="top")
        text = f"global {global_cosine:.2f}"
        style = {"color": PALETTE["global"], "va": "bottom", "ha": "right", "fontsize": 9}
        ax.text(1.0, global_cosine + 0.02, text, **style)
        ax.set_xlim(0.0, 1.02)
        ax.set_ylim(-0.35, 1.05)
        ax.set_xticks([0.0, 0.5, 1.0])
        ax.set_title(title)
        ax.set_xlabel("weight (bar width)")
    axes[0].set_ylabel("local cosine (bar height)")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncols=2)
    return fig


def _arrow(ax: Axes, tip: tuple[float, float], colour: str, start=(0.0, 0.0)) -> None:
    style = {"arrowstyle": "-|>", "color": colour, "lw": 2.2, "shrinkA": 0, "shrinkB": 0}
    ax.annotate("", tip, start, arrowprops={**style, "mutation_scale": 14})


def _angle_arc(ax: Axes, first: NDArray, second: NDArray, radius: float, colour: str) -> None:
    """An arc of ``radius`` between the directions of two 2-D vectors, labelled φ."""
    start = float(np.arctan2(first[1], first[0]))
    end = float(np.arctan2(second[1], second[0]))
    # The shorter way round: the angle between two vectors is at most pi.
    if end - start > np.pi:
        end -= 2.0 * np.pi
    elif start - end > np.pi:
        end += 2.0 * np.pi
    arc = np.linspace(start, end, 40)
    ax.plot(radius * np.cos(arc), radius * np.sin(arc), color=colour, lw=1.3)
    middle, at = (start + end) / 2.0, 1.3 * radius
    style = {"ha": "center", "va": "center", "color": colour, "fontsize": 11}
    ax.text(at * np.cos(middle), at * np.sin(middle), "φ", **style)


def coordinate_blocks_figure(x: ArrayLike, y: ArrayLike) -> Figure:
    r"""Two vectors of :math:`\mathbb{R}^2` cut into blocks of size one, the coordinates.

    Used in chapter 2 (its counterexample). Left: ``x`` and ``y`` as arrows, the angle
    :math:`\varphi` between them and :math:`\cos(x, y) = \cos\varphi`. Right: each
    block on its own number line with its local cosine, the sign of :math:`x_i y_i`: 1
    for positive entries, while :math:`\cos(x, y) < 1` unless the vectors are parallel.

    >>> fig = coordinate_blocks_figure([1.0, 1.0], [1.0, 2.0])
    >>> [ax.get_title() for ax in fig.axes]
    ['whole vectors: cos(x, y) = 0.949', 'blocks of size one: c₁ = 1, c₂ = 1']
    >>> plt.close(fig)
    """
    shown = {n: as_real_array(v, n, ndim=1).astype(np.float64) for n, v in (("x", x), ("y", y))}
    if any(vector.shape != (2,) or not vector.all() for vector in shown.values()):
        raise ValueError(
            "x and y must have two nonzero entries each (a block of size one that is zero has "
            f"no local cosine); got {shown['x']} and {shown['y']}"
        )
    local = np.sign(shown["x"]) * np.sign(shown["y"])
    colours = {"x": PALETTE["global"], "y": PALETTE["accent"]}
    fig, (plane, lines) = plt.subplots(1, 2, figsize=(8.0, 3.7), width_ratios=[1.0, 1.15])
    everything = np.concatenate(list(shown.values()))
    reach = float(np.max(np.abs(everything)))
    low = min(0.0, float(np.min(everything))) - 0.15 * reach
    high = max(0.0, float(np.max(everything))) + 0.3 * reach
    for name, (first, second) in shown.items():
        colour = colours[name]
        # Dotted lines drop the tip onto the axes, whose coordinates are the blocks.
        plane.plot([first, first], [0.0, second], ":", color=colour, lw=1.2)
        plane.plot([0.0, first], [second, second], ":", color=colour, lw=1.2)
        _arrow(plane, (first, second), colour)
        text = f"{name} = ({first:g}, {second:g})"
        style = {"textcoords": "offset points", "color": colour, "fontsize": 10}
        plane.annotate(text, (first, second), xytext=(5, 2), **style)
    _angle_arc(plane, shown["x"], shown["y"], 0.3 * reach, "0.25")
    plane.axhline(0.0, color=PALETTE["neutral"], lw=0.8)
    plane.axvline(0.0, color=PALETTE["neutral"], lw=0.8)
    plane.set_xlim(low, high)
    plane.set_ylim(low, high)
    plane.set_aspect("equal")
    plane.set_xlabel("coordinate 1 (block 1)")
    plane.set_ylabel("coordinate 2 (block 2)")
    plane.set_title(f"whole vectors: cos(x, y) = {cosine(shown['x'], shown['y']):.3f}")

    for block in range(2):
        level = 1.0 - block  # block 1 on top
        lines.axhline(level, color=PALETTE["neutral"], lw=0.8)
        for name, offset in (("x", 0.14), ("y", -0.14)):
            tip, colour = shown[name][block], colours[name]
            _arrow(lines, (tip, level + offset), colour, start=(0.0, level + offset))
            side = "left" if tip > 0 else "right"
            text = f" {name}{_SUBSCRIPTS[block]} "
            lines.text(tip, level + offset, text, color=colour, va="center", ha=side, fontsize=10)
        text = f" block {block + 1}: c{_SUBSCRIPTS[block]} = {local[block]:g}"
        box = {"facecolor": "white", "edgecolor": "none", "pad": 1.0}
        lines.text(low, level + 0.36, text, fontsize=10, va="center", bbox=box)
    lines.axvline(0.0, color=PALETTE["neutral"], lw=0.8)
    lines.set_xlim(low, high)
    lines.set_ylim(-0.45, 1.6)
    lines.set_yticks([])
    lines.spines["left"].set_visible(False)
    lines.grid(False, axis="y")
    lines.set_xlabel("value of the coordinate")
    lines.set_title(f"blocks of size one: c₁ = {local[0]:g}, c₂ = {local[1]:g}")
    typeset_figure(fig)
    return fig


def limit_construction_figure(local: ArrayLike = (0.99, 0.9, 0.5)) -> Figure:
    r"""Local cosines fixed at :math:`c`, global :math:`2\varepsilon c/(1 + \varepsilon^2)` to 0.

    Used in chapter 2. For each :math:`c` in ``local`` (at most four), two blocks with
    norms :math:`(\varepsilon, 1)` on the x side and :math:`(1, \varepsilon)` on the y
    side, built by :func:`~cosine_book.similarity.blocks_with` and measured by
    :func:`~cosine_book.similarity.block_cosines`, against :math:`\varepsilon` from 0.01
    to 1, with the tangent :math:`2 \varepsilon c` at 0.

    >>> fig = limit_construction_figure([0.9])
    >>> [round(float(v), 4) for v in fig.axes[0].lines[1].get_ydata()[[0, -1]]]
    [0.018, 0.9]
    >>> plt.close(fig)
    """
    cosines = as_real_array(local, "local", ndim=1).astype(np.float64)
    if cosines.size > len(_STYLES):
        raise ValueError(f"local has {cosines.size} entries; expected at most {len(_STYLES)}")
    grid = np.linspace(0.01, 1.0, 100)
    curves = [
        [block_cosines(*blocks_with([c, c], [eps, 1.0], [1.0, eps])).global_cosine for eps in grid]
        for c in cosines
    ]
    fig, ax = plt.subplots(figsize=(8.2, 3.6))
    for c, curve, style in zip(cosines, curves, _STYLES, strict=False):
        ax.axhline(c, color=PALETTE["local"], ls=style, lw=1.4)
        ax.plot(grid, curve, style, color=PALETTE["global"], lw=2.2)
        tangent = np.array([0.0, min(1.0, 0.6 / max(abs(c), 1e-12))])  # height 1.2 at most
        ax.plot(tangent, 2 * tangent * c, style, color="0.55", lw=0.9)
        ax.plot([], [], style, color="0.2", lw=1.6, label=f"$c = {c:g}$")
    ax.plot([], [], color=PALETTE["local"], lw=1.4, label="local cosines $c_1 = c_2 = c$")
    ax.plot([], [], color=PALETTE["global"], lw=2.2, label="global cosine")
    ax.plot([], [], color="0.55", lw=0.9, label=r"$2 \varepsilon c$ (slope at 0)")
    ax.set_xlim(0.0, 1.0)
    ax.set_xlabel(r"$\varepsilon = \|x_1\| = \|y_2\|$   (and $\|x_2\| = \|y_1\| = 1$)")
    ax.set_ylabel("cosine")
    ax.set_ylim(min(0.0, float(cosines.min())) - 0.05, 1.08)
    fig.legend(loc="outside right center", fontsize=8.5)
    typeset_figure(fig)
    return fig


def _draw_wedge(
    ax: Axes,
    c_min: float,
    c_max: float,
    summaries: Sequence[BlockCosines],
    point_label: str = "blocked pairs",
    highlight: BlockCosines | None = None,
) -> None:
    r"""The wedge :math:`\rho\, c_{\min} \le \cos(x, y) \le \rho\, c_{\max}` and pairs as dots."""
    edge = np.array([0.0, 1.0])
    feasible = r"feasible: $\rho\,c_{\min} \leq$ global $\leq \rho\,c_{\max}$"
    fill = {"color": PALETTE["bound"], "alpha": 0.2, "lw": 0, "label": feasible}
    ax.fill_between(edge, c_min * edge, c_max * edge, **fill)
    ax.plot(edge, c_max * edge, color=PALETTE["bound"], lw=2)
    ax.plot(edge, c_min * edge, color=PALETTE["bound"], lw=2, ls="--")
    for c, end in ((c_max, r"\max"), (c_min, r"\min")):
        text = rf"$\rho\,c_{{{end}}}$, $c_{{{end}}}$ = {c:g}"
        ax.text(1.03, c, text, va="center", fontsize=9, color="0.2")
    ax.axhline(0.0, color=PALETTE["neutral"], lw=0.8)
    if summaries:
        rhos = [s.profile_cosine for s in summaries]
        dots = {"s": 9, "color": PALETTE["global"], "alpha": 0.75, "lw": 0, "zorder": 3}
        ax.scatter(rhos, [s.global_cosine for s in summaries], **dots, label=point_label)
    if highlight is not None:
        rho, accent = highlight.profile_cosine, PALETTE["accent"]
        interval = {"color": accent, "lw": 2.5, "label": "interval of the diamond", "zorder": 4}
        ax.plot([rho, rho], [rho * c_min, rho * c_max], **interval)
        diamond = {"color": accent, "ms": 7, "markeredgecolor": "white", "zorder": 5}
        ax.plot([rho], [highlight.global_cosine], "D", **diamond, label="the pair on the left")
    # A little room right of rho = 1, so that dots there are not cut in half.
    ax.set_xlim(0.0, 1.02)
    span = max(c_max, 0.0) - min(c_min, 0.0)
    ax.set_ylim(min(c_min, 0.0) - 0.08 * span - 0.02, max(c_max, 0.0) + 0.08 * span + 0.02)
    ax.set_xlabel(r"profile cosine $\rho$")
    ax.set_ylabel("global cosine")
    ax.legend(loc="upper left", fontsize=9)


def profiles_and_wedge_figure(
    example: BlockCosines, summaries: Sequence[BlockCosines] = ()
) -> Figure:
    r"""The two-sided bounds pictured: the norm profiles (left), the feasible wedge (right).

    Used in chapter 3. Left: the norm profiles :math:`a` and :math:`b` of ``example``,
    a pair of two blocks, as arrows; :math:`\rho = \cos\varphi`. Right: the wedge for
    the local cosines of ``example``, ``summaries`` (pairs with local cosines in that
    range) as dots, ``example`` as a diamond with its interval.

    >>> example = block_cosines(*blocks_with([0.8, 0.3], [0.8, 0.6], [1.0, 0.1]))
    >>> profiles_and_wedge_figure(example).axes[0].get_title()
    'norm profiles: ρ = cos φ = 0.86'
    >>> plt.close("all")
    """
    if len(example) != 2 or np.isnan(example.local).any():
        raise ValueError(f"example must be a pair of two blocks, both defined; got {example!r}")
    fig, (left, right) = plt.subplots(1, 2, figsize=(8.4, 3.9), width_ratios=[1.0, 1.45])
    a, b = example.x_norms, example.y_norms
    reach = max(float(np.sqrt(np.sum(a * a))), float(np.sqrt(np.sum(b * b))))
    quarter = np.linspace(0.0, np.pi / 2.0, 50)
    left.plot(reach * np.cos(quarter), reach * np.sin(quarter), "--", color="0.6", lw=0.9)
    for vector, colour, text in (
        (a, PALETTE["global"], r"$\mathbf{a}$ = norms of x"),
        (b, PALETTE["accent"], r"$\mathbf{b}$ = norms of y"),
    ):
        _arrow(left, (vector[0], vector[1]), colour)
        style = {"textcoords": "offset points", "color": colour, "fontsize": 10}
        left.annotate(text, (vector[0], vector[1]), xytext=(4, 4), **style)
    _angle_arc(left, a, b, 0.35 * reach, PALETTE["weight"])
    left.set_xlim(0.0, 1.3 * reach)
    left.set_ylim(0.0, 1.3 * reach)
    left.set_aspect("equal")
    left.set_xlabel(r"block 1: $\|x_1\|$, $\|y_1\|$")
    left.set_ylabel(r"block 2: $\|x_2\|$, $\|y_2\|$")
    left.set_title(f"norm profiles: ρ = cos φ = {cosine(a, b):.2f}")
    c_min, c_max = float(example.local.min()), float(example.local.max())
    _draw_wedge(right, c_min, c_max, summaries, highlight=example)
    local = ", ".join(f"{c:.2g}" for c in example.local)
    right.set_title(f"feasible wedge for local cosines {local}")
    typeset_figure(fig)
    return fig


def wedge_figure(
    local: ArrayLike, summaries: Sequence[BlockCosines], *, point_label: str = "blocked pairs"
) -> Figure:
    r"""The feasible wedge of the local cosines ``local`` and ``summaries`` inside it as dots.

    Used in chapter 3.

    >>> pair = block_cosines(*blocks_with([0.5, 0.5], [1.0, 0.0], [1.0, 1.0]))
    >>> rho, global_cosine = wedge_figure([0.5], [pair]).axes[0].collections[-1].get_offsets()[0]
    >>> round(float(rho), 4), round(float(global_cosine), 4)
    (0.7071, 0.3536)
    >>> plt.close("all")
    """
    cosines = as_real_array(local, "local", ndim=1)
    if (abs(cosines) > 1).any():
        raise ValueError(f"local cosines must lie in [-1, 1]; got {cosines}")
    fig, ax = plt.subplots(figsize=(7.0, 3.8))
    _draw_wedge(ax, float(cosines.min()), float(cosines.max()), summaries, point_label)
    typeset_figure(fig)
    return fig


def sampled_intervals_figure(summaries: Sequence[BlockCosines]) -> Figure:
    r"""Blocked pairs by global cosine, each in its interval :math:`[\rho \min c_i, \rho \max c_i]`.

    Used in chapter 3.

    >>> pairs = [block_cosines([[1.0], [2.0]], [[1.0], [-1.0]])]
    >>> sampled_intervals_figure(pairs).axes[0].collections[0].get_segments()[0].round(4)
    array([[ 0.    , -0.9487],
           [ 0.    ,  0.9487]])
    >>> plt.close("all")
    """
    if not summaries:
        raise ValueError("summaries is empty; expected at least one BlockCosines")
    values = np.array([summary.global_cosine for summary in summaries])
    bounds = np.array([summary.bounds() for summary in summaries])
    order = np.argsort(values, kind="stable")
    cases = np.arange(len(summaries))
    fig, ax = plt.subplots(figsize=(7.0, 3.4))
    interval = r"$[\rho \min c_i,\ \rho \max c_i]$"
    ax.vlines(cases, *bounds[order].T, color=PALETTE["bound"], lw=3, alpha=0.6, label=interval)
    ax.plot(cases, values[order], "o", color=PALETTE["global"], ms=3.5, label="global cosine")
    ax.axhline(0.0, color=PALETTE["neutral"], lw=0.8)
    # Outside the axes: the intervals can fill any corner of the plot.
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0))
    ax.set_xlabel("random blocked pair (sorted by global cosine)")
    ax.set_ylabel("cosine")
    ax.set_ylim(-1.05, 1.05)
    typeset_figure(fig)
    return fig


def block_cosines_figure(summary: BlockCosines) -> Figure:
    r"""Local cosines and weights per block (left); the interval and the global cosine (right).

    The drawing function of the widgets of chapters 2 and 3.

    >>> len(block_cosines_figure(block_cosines([[1.0], [2.0]], [[1.0], [-1.0]])).axes)
    2
    >>> plt.close("all")
    """
    lower, upper = summary.bounds()
    positions = np.arange(summary.local.size)
    # Fixed margins (those the style's constrained layout picks): the widgets draw this
    # figure once per frame, and the layout engine would double the cost.
    fig = plt.figure(figsize=(8.0, 3.2), layout="none")
    bars, line = fig.subplots(1, 2, width_ratios=[1.0, 1.4])
    local = np.nan_to_num(summary.local)
    bars.bar(positions - 0.2, local, 0.4, color=PALETTE["local"], label="local cosine $c_i$")
    bars.bar(positions + 0.2, summary.weights, 0.4, color=PALETTE["weight"], label="weight $w_i$")
    bars.axhline(0.0, color=PALETTE["neutral"], lw=0.8)
    bars.set_xticks(positions, [f"block {i + 1}" for i in positions])
    bars.set_ylim(-1.05, 1.05)
    # Legends below the axes, so that nothing drawn hides them.
    bars.legend(loc="upper center", bbox_to_anchor=(0.5, -0.1), ncols=2)
    bars.set_title(rf"weights sum to $\rho$ = {summary.profile_cosine:.3f}")
    line.axvspan(lower, upper, color=PALETTE["bound"], alpha=0.25, label="feasible interval")
    line.axvline(0.0, color=PALETTE["neutral"], lw=0.8)
    value = summary.global_cosine
    line.plot([value], [0.5], "o", color=PALETTE["global"], ms=9, label="global cosine")
    line.set_xlim(-1.0, 1.0)
    line.set_ylim(0.0, 1.0)
    line.set_yticks([])
    line.legend(loc="upper center", bbox_to_anchor=(0.5, -0.1), ncols=2)
    # End marks keep a zero-width interval (all local cosines equal) visible.
    line.plot([lower, upper], [0.5, 0.5], "|", color=PALETTE["bound"], ms=40, mew=2.5)
    defined = summary.local[~np.isnan(summary.local)]
    line.plot(defined, np.full(defined.size, 0.2), "|", color=PALETTE["local"], ms=18, mew=2)
    line.text(-0.98, 0.05, "ticks: local cosines", fontsize=9, color=PALETTE["local"])
    line.set_title(f"global {value:.3f} in [{lower:.3f}, {upper:.3f}]")
    fig.subplots_adjust(left=0.066, right=0.977, bottom=0.179, top=0.924, wspace=0.08)
    typeset_figure(fig)
    return fig
