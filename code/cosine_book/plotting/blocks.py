r"""Figures of the block decomposition (chapters 2 and 3).

:func:`draw_block_cosines` and :func:`block_cosines_figure` are the drawing
function of the widgets of :mod:`cosine_book.widgets.blocks`. The chapters'
figures: :func:`coordinate_blocks_figure` (chapter 2's counterexample, blocks
of size one), :func:`limit_construction_figure` (local cosines fixed, global
cosine to zero), :func:`draw_norm_profiles` and :func:`draw_wedge` (the norm
profiles as arrows, and the feasible wedge
:math:`\rho\, c_{\min} \le \cos(x, y) \le \rho\, c_{\max}` in the plane of
:math:`\rho` and the global cosine), combined in
:func:`profiles_and_wedge_figure`, and :func:`sampled_intervals_figure`
(random pairs against their intervals).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from numpy.typing import ArrayLike, NDArray

from cosine_book._validation import as_real_array
from cosine_book.plotting import PALETTE, annotate_bounds, plot_intervals
from cosine_book.similarity import BlockCosines, block_cosines, blocks_with, cosine

__all__ = [
    "block_cosines_figure",
    "coordinate_blocks_figure",
    "draw_block_cosines",
    "draw_norm_profiles",
    "draw_wedge",
    "limit_construction_figure",
    "plot_identity_areas",
    "profiles_and_wedge_figure",
    "sampled_intervals_figure",
    "wedge_figure",
]

_SUBSCRIPTS = "₁₂₃₄₅₆₇₈₉"
# Line styles of up to four series told apart by style as well as by colour.
_STYLES = ("-", "--", ":", "-.")
# Tolerance for "the local cosines of a summary lie in [c_min, c_max]" (rounding of
# block_cosines on vectors built with those local cosines is about 1e-16).
_LOCAL_TOLERANCE = 1e-9


def _true_minus(fig: Figure) -> None:
    """Minus signs (U+2212) for the hyphens before numbers in every text outside math.

    Tick labels already get them from Matplotlib (``axes.unicode_minus``); titles,
    labels and legends written with ``f"{value:g}"`` get them here, as the widgets'
    frames do (:func:`cosine_book.widgets.core.typeset_minus`).
    """
    from matplotlib.text import Text

    from cosine_book.widgets.core import typeset_minus

    for text in fig.findobj(Text):
        parts = text.get_text().split("$")
        if any("-" in part for part in parts[::2]):
            parts[::2] = [typeset_minus(part) for part in parts[::2]]
            text.set_text("$".join(parts))


def draw_block_cosines(fig: Figure, summary: BlockCosines, names: Sequence[str] = ()) -> None:
    r"""Draw local cosines, weights and the feasible interval of blocked vectors.

    Left: one group of bars per block (local cosine :math:`c_i`, weight
    :math:`w_i`). Right: the interval
    :math:`[\rho \min_i c_i, \rho \max_i c_i]`, the global cosine inside it,
    and the range of the local cosines for comparison.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        An empty figure; two axes are added to it.
    summary : BlockCosines
        What to draw, from :func:`cosine_book.similarity.block_cosines`.
    names : sequence of str, optional
        Block labels; ``block 1``, ``block 2``, ... by default.

    Examples
    --------
    >>> fig = plt.figure()
    >>> blocks = blocks_with([0.9, 0.2], [1.0, 0.5], [0.5, 1.0])
    >>> draw_block_cosines(fig, block_cosines(*blocks))
    >>> len(fig.axes)
    2
    >>> plt.close(fig)
    """
    n_blocks = summary.local.size
    lower, upper = summary.bounds()
    labels = list(names) or [f"block {i + 1}" for i in range(n_blocks)]
    bars_ax, line_ax = fig.subplots(1, 2, width_ratios=[1.0, 1.4])
    positions = np.arange(n_blocks)
    bars_ax.bar(
        positions - 0.2,
        np.nan_to_num(summary.local),
        0.4,
        color=PALETTE["local"],
        label="local cosine $c_i$",
    )
    bars_ax.bar(
        positions + 0.2, summary.weights, 0.4, color=PALETTE["weight"], label="weight $w_i$"
    )
    bars_ax.axhline(0.0, color=PALETTE["neutral"], lw=0.8)
    bars_ax.set_xticks(positions, labels)
    bars_ax.set_ylim(-1.05, 1.05)
    # Below the axes, so that bars of either sign never hide it.
    bars_ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.1), ncols=2)
    bars_ax.set_title(rf"weights sum to $\rho$ = {summary.profile_cosine:.3f}")

    annotate_bounds(line_ax, lower, upper, summary.global_cosine)
    # End marks keep a zero-width interval (all local cosines equal) visible.
    line_ax.plot([lower, upper], [0.5, 0.5], "|", color=PALETTE["bound"], ms=40, mew=2.5)
    defined = summary.local[~np.isnan(summary.local)]
    line_ax.plot(defined, np.full(defined.size, 0.2), "|", color=PALETTE["local"], ms=18, mew=2)
    line_ax.text(-0.98, 0.05, "ticks: local cosines", fontsize=9, color=PALETTE["local"])
    line_ax.set_title(f"global {summary.global_cosine:.3f} in [{lower:.3f}, {upper:.3f}]")


def block_cosines_figure(summary: BlockCosines, names: Sequence[str] = ()) -> Figure:
    """A new figure drawn by :func:`draw_block_cosines` (the widgets' drawing function).

    Examples
    --------
    >>> summary = block_cosines([[1.0], [2.0]], [[1.0], [-1.0]])
    >>> fig = block_cosines_figure(summary)
    >>> len(fig.axes)
    2
    >>> plt.close(fig)
    """
    # Fixed margins (those the style's constrained layout picks for this figure): the
    # widgets draw it once per frame, and the layout engine would double the cost.
    fig = plt.figure(figsize=(8.0, 3.2), layout="none")
    draw_block_cosines(fig, summary, names)
    fig.subplots_adjust(left=0.066, right=0.977, bottom=0.179, top=0.924, wspace=0.08)
    _true_minus(fig)
    return fig


def _display_scale(*vectors: NDArray[np.float64]) -> tuple[float, str]:
    """A power of ten to divide coordinates by before drawing, and the label suffix.

    Coordinates up to 1e3 in size (and at least 1e-2 for the largest) are drawn as
    they are; others are divided by a power of ten, so that Matplotlib never sees
    numbers near 1e300 or 1e-300.
    """
    largest = max(float(np.max(np.abs(vector))) for vector in vectors)
    exponent = int(np.floor(np.log10(largest)))
    if -2 <= exponent <= 2:
        return 1.0, ""
    # Two steps, so that 10.0**exponent never overflows or underflows on its own.
    half = exponent // 2
    return 10.0**half * 10.0 ** (exponent - half), f" (× 1e{exponent})"


def _as_pair(value: ArrayLike, name: str) -> NDArray[np.float64]:
    """``value`` as a float vector of two entries, not both zero."""
    array = as_real_array(value, name, ndim=1).astype(np.float64)
    if array.shape != (2,):
        raise ValueError(
            f"{name} has {array.size} entries; expected exactly 2 (one per axis of a 2-D picture)"
        )
    if not array.any():
        raise ValueError(f"{name} is the zero vector; expected a nonzero vector")
    return array


def _arrow(ax: Axes, tip: tuple[float, float], colour: str, start=(0.0, 0.0)) -> None:
    """An arrow from ``start`` (the origin by default) to ``tip``."""
    ax.annotate(
        "",
        tip,
        start,
        arrowprops={
            "arrowstyle": "-|>",
            "color": colour,
            "lw": 2.2,
            "shrinkA": 0,
            "shrinkB": 0,
            "mutation_scale": 14,
        },
    )


def _angle_arc(
    ax: Axes,
    first: NDArray[np.float64],
    second: NDArray[np.float64],
    radius: float,
    text: str,
    colour: str = "0.25",
) -> None:
    """An arc of ``radius`` between the directions of two 2-D vectors, labelled ``text``."""
    start = float(np.arctan2(first[1], first[0]))
    end = float(np.arctan2(second[1], second[0]))
    # The shorter way round: the angle between two vectors is at most pi.
    if end - start > np.pi:
        end -= 2.0 * np.pi
    elif start - end > np.pi:
        end += 2.0 * np.pi
    arc = np.linspace(start, end, 40)
    ax.plot(radius * np.cos(arc), radius * np.sin(arc), color=colour, lw=1.3)
    middle = (start + end) / 2.0
    ax.text(
        1.3 * radius * np.cos(middle),
        1.3 * radius * np.sin(middle),
        text,
        ha="center",
        va="center",
        color=colour,
        fontsize=11,
    )


def _entries(vector: NDArray[np.float64]) -> str:
    return ", ".join(f"{value:g}" for value in vector)


def coordinate_blocks_figure(x: ArrayLike, y: ArrayLike) -> Figure:
    r"""Two vectors of :math:`\mathbb{R}^2` cut into blocks of size one (the coordinates).

    Left: ``x`` and ``y`` as arrows in the plane, the angle :math:`\varphi`
    between them and :math:`\cos(x, y) = \cos\varphi`; dotted lines drop each
    tip onto the axes, whose coordinates are the blocks. Right: each block on
    its own number line, :math:`x_i` above :math:`y_i`, with its local cosine
    :math:`c_i`, the sign of :math:`x_i y_i`. For positive entries every local
    cosine is 1, while :math:`\cos(x, y) < 1` unless the vectors are parallel
    (the counterexample of chapter 2). Vectors with entries of size above
    1e3, or all below 1e-2, are drawn divided by a power of ten, stated in the
    axis labels.

    Parameters
    ----------
    x, y : array_like of shape (2,)
        Finite real entries, all four nonzero (a block of size one that is zero
        has no local cosine).

    Returns
    -------
    matplotlib.figure.Figure
        Two axes; their titles give the global and the local cosines.

    Raises
    ------
    ValueError
        If ``x`` or ``y`` does not have exactly two finite real entries, or an
        entry is zero.

    Examples
    --------
    >>> fig = coordinate_blocks_figure([1.0, 1.0], [1.0, 2.0])
    >>> for ax in fig.axes:
    ...     print(ax.get_title())
    whole vectors: cos(x, y) = 0.949
    blocks of size one: c₁ = 1, c₂ = 1
    >>> plt.close(fig)
    """
    x_array, y_array = _as_pair(x, "x"), _as_pair(y, "y")
    for array, name in ((x_array, "x"), (y_array, "y")):
        if not array.all():
            raise ValueError(
                f"{name} has a zero entry; expected nonzero coordinates (a block of "
                f"size one that is zero has no local cosine); got {array}"
            )
    global_cosine = cosine(x_array, y_array)
    local = np.sign(x_array) * np.sign(y_array)
    scale, suffix = _display_scale(x_array, y_array)
    shown = {"x": x_array / scale, "y": y_array / scale}
    given = {"x": x_array, "y": y_array}
    colours = {"x": PALETTE["global"], "y": PALETTE["accent"]}
    fig, (plane, lines) = plt.subplots(1, 2, figsize=(8.0, 3.7), width_ratios=[1.0, 1.15])

    everything = np.concatenate(list(shown.values()))
    reach = float(np.max(np.abs(everything)))
    low = min(0.0, float(np.min(everything))) - 0.15 * reach
    high = max(0.0, float(np.max(everything))) + 0.3 * reach
    for name, vector in shown.items():
        colour = colours[name]
        plane.plot([vector[0], vector[0]], [0.0, vector[1]], ":", color=colour, lw=1.2)
        plane.plot([0.0, vector[0]], [vector[1], vector[1]], ":", color=colour, lw=1.2)
        _arrow(plane, (vector[0], vector[1]), colour)
        plane.annotate(
            f"{name} = ({_entries(given[name])})",
            (vector[0], vector[1]),
            xytext=(5, 2),
            textcoords="offset points",
            color=colour,
            fontsize=10,
        )
    _angle_arc(plane, shown["x"], shown["y"], 0.3 * reach, "φ")
    plane.axhline(0.0, color=PALETTE["neutral"], lw=0.8)
    plane.axvline(0.0, color=PALETTE["neutral"], lw=0.8)
    plane.set_xlim(low, high)
    plane.set_ylim(low, high)
    plane.set_aspect("equal")
    plane.set_xlabel("coordinate 1 (block 1)" + suffix)
    plane.set_ylabel("coordinate 2 (block 2)" + suffix)
    plane.set_title(f"whole vectors: cos(x, y) = {global_cosine:.3f}")

    for block in range(2):
        level = 1.0 - block  # block 1 on top
        lines.axhline(level, color=PALETTE["neutral"], lw=0.8)
        for name, offset in (("x", 0.14), ("y", -0.14)):
            tip = shown[name][block]
            _arrow(lines, (tip, level + offset), colours[name], start=(0.0, level + offset))
            lines.text(
                tip,
                level + offset,
                f" {name}{_SUBSCRIPTS[block]} ",
                color=colours[name],
                va="center",
                ha="left" if tip > 0 else "right",
                fontsize=10,
            )
        lines.text(
            low,
            level + 0.36,
            f" block {block + 1}: c{_SUBSCRIPTS[block]} = {local[block]:g}",
            fontsize=10,
            va="center",
            bbox={"facecolor": "white", "edgecolor": "none", "pad": 1.0},
        )
    lines.axvline(0.0, color=PALETTE["neutral"], lw=0.8)
    lines.set_xlim(low, high)
    lines.set_ylim(-0.45, 1.6)
    lines.set_yticks([])
    lines.spines["left"].set_visible(False)
    lines.grid(False, axis="y")
    lines.set_xlabel("value of the coordinate" + suffix)
    local_text = ", ".join(f"c{_SUBSCRIPTS[i]} = {local[i]:g}" for i in range(2))
    lines.set_title(f"blocks of size one: {local_text}")
    _true_minus(fig)
    return fig


def limit_construction_figure(
    local: ArrayLike = (0.99, 0.9, 0.5), epsilons: ArrayLike | None = None
) -> Figure:
    r"""Chapter 2's limit construction: both local cosines fixed, the global cosine falls to 0.

    For each local cosine :math:`c` in ``local``, two blocks with norms
    :math:`(\varepsilon, 1)` on the x side and :math:`(1, \varepsilon)` on the
    y side and both local cosines :math:`c` (built by
    :func:`~cosine_book.similarity.blocks_with`, measured by
    :func:`~cosine_book.similarity.block_cosines`): a horizontal line at
    :math:`c` (the local cosines), the global cosine
    :math:`2 \varepsilon c / (1 + \varepsilon^2)` against :math:`\varepsilon`
    on a linear axis, and, thin and grey, its tangent :math:`2 \varepsilon c` at
    :math:`\varepsilon = 0`; one line style per :math:`c`, named in the legend.

    Parameters
    ----------
    local : array_like of shape (n_curves,)
        One to four local cosines, each in :math:`[-1, 1]`.
    epsilons : array_like of shape (n_points,), optional
        Values of :math:`\varepsilon`, positive; 101 values from 0.01 to 1 by
        default.

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    ValueError
        If ``local`` has more than four entries or one outside :math:`[-1, 1]`,
        or an :math:`\varepsilon` is not positive and finite.

    Examples
    --------
    >>> fig = limit_construction_figure([0.9], [0.01, 0.1, 1.0])
    >>> local_line, global_line = fig.axes[0].lines[:2]
    >>> [round(float(v), 4) for v in global_line.get_ydata()]
    [0.018, 0.1782, 0.9]
    >>> plt.close(fig)
    """
    cosines = as_real_array(local, "local", ndim=1).astype(np.float64)
    if cosines.size > len(_STYLES):
        raise ValueError(
            f"local has {cosines.size} entries; expected at most {len(_STYLES)} (one line "
            "style each)"
        )
    if (np.abs(cosines) > 1).any():
        raise ValueError(f"local cosines must lie in [-1, 1]; got {cosines}")
    if epsilons is None:
        grid = np.linspace(0.01, 1.0, 100)
    else:
        grid = as_real_array(epsilons, "epsilons", ndim=1).astype(np.float64)
        if not (grid > 0).all():
            raise ValueError(f"epsilons must be positive; got {grid}")
    fig, ax = plt.subplots(figsize=(8.2, 3.6))
    for c, style in zip(cosines, _STYLES, strict=False):
        curve = [
            block_cosines(*blocks_with([c, c], [eps, 1.0], [1.0, eps])).global_cosine
            for eps in grid
        ]
        ax.axhline(c, color=PALETTE["local"], ls=style, lw=1.4)
        ax.plot(grid, curve, style, color=PALETTE["global"], lw=2.2)
        law = np.array([0.0, min(1.0, 0.6 / max(abs(c), 1e-12))])
        ax.plot(law, 2 * law * c, style, color="0.55", lw=0.9)
        ax.plot([], [], style, color="0.2", lw=1.6, label=f"$c = {c:g}$")
    ax.plot([], [], color=PALETTE["local"], lw=1.4, label="local cosines $c_1 = c_2 = c$")
    ax.plot([], [], color=PALETTE["global"], lw=2.2, label="global cosine")
    ax.plot([], [], color="0.55", lw=0.9, label=r"$2 \varepsilon c$ (slope at 0)")
    ax.set_xlim(0.0, 1.0)
    ax.set_xlabel(r"$\varepsilon = \|x_1\| = \|y_2\|$   (and $\|x_2\| = \|y_1\| = 1$)")
    ax.set_ylabel("cosine")
    low = min(0.0, float(cosines.min()))
    ax.set_ylim(low - 0.05, 1.08)
    fig.legend(loc="outside right center", fontsize=8.5)
    _true_minus(fig)
    return fig


def draw_norm_profiles(ax: Axes, x_norms: ArrayLike, y_norms: ArrayLike) -> None:
    r"""Two norm profiles of two blocks as arrows in the positive quadrant.

    The arrows :math:`a = (\|x_1\|, \|x_2\|)` and
    :math:`b = (\|y_1\|, \|y_2\|)` start at the origin; an arc marks the angle
    :math:`\varphi` between them, whose cosine is the profile cosine
    :math:`\rho`. The quarter of the unit circle (dashed) helps to compare
    directions. Profiles with entries above 1e3, or all below 1e-2, are drawn
    divided by a power of ten, stated in the axis labels.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        Axes to draw on (their aspect is set to equal).
    x_norms, y_norms : array_like of shape (2,)
        Nonnegative block norms, neither profile zero.

    Raises
    ------
    ValueError
        If a profile does not have exactly two finite entries, has a negative
        entry or is zero.

    Examples
    --------
    >>> fig, ax = plt.subplots()
    >>> draw_norm_profiles(ax, [0.6, 0.8], [1.0, 0.0])
    >>> ax.get_title()
    'norm profiles: ρ = cos φ = 0.60'
    >>> plt.close(fig)
    """
    a = _as_pair(x_norms, "x_norms")
    b = _as_pair(y_norms, "y_norms")
    for array, name in ((a, "x_norms"), (b, "y_norms")):
        if (array < 0).any():
            raise ValueError(f"{name} must be nonnegative (block norms); got {array}")
    rho = cosine(a, b)
    scale, suffix = _display_scale(a, b)
    shown_a, shown_b = a / scale, b / scale
    reach = max(
        float(np.sqrt(np.sum(shown_a * shown_a))), float(np.sqrt(np.sum(shown_b * shown_b)))
    )
    quarter = np.linspace(0.0, np.pi / 2.0, 50)
    ax.plot(reach * np.cos(quarter), reach * np.sin(quarter), "--", color="0.6", lw=0.9)
    for vector, colour, text in (
        (shown_a, PALETTE["global"], r"$\mathbf{a}$ = norms of x"),
        (shown_b, PALETTE["accent"], r"$\mathbf{b}$ = norms of y"),
    ):
        _arrow(ax, (vector[0], vector[1]), colour)
        ax.annotate(
            text,
            (vector[0], vector[1]),
            xytext=(4, 4),
            textcoords="offset points",
            color=colour,
            fontsize=10,
        )
    _angle_arc(ax, shown_a, shown_b, 0.35 * reach, "φ", colour=PALETTE["weight"])
    ax.set_xlim(0.0, 1.3 * reach)
    ax.set_ylim(0.0, 1.3 * reach)
    ax.set_aspect("equal")
    ax.set_xlabel(r"block 1: $\|x_1\|$, $\|y_1\|$" + suffix)
    ax.set_ylabel(r"block 2: $\|x_2\|$, $\|y_2\|$" + suffix)
    ax.set_title(f"norm profiles: ρ = cos φ = {rho:.2f}")


def _as_local(local: ArrayLike) -> tuple[float, float]:
    """The smallest and largest of local cosines given as an array, checked."""
    cosines = as_real_array(local, "local", ndim=1).astype(np.float64)
    if (np.abs(cosines) > 1).any():
        raise ValueError(f"local cosines must lie in [-1, 1]; got {cosines}")
    return float(cosines.min()), float(cosines.max())


def _points(
    summaries: Sequence[BlockCosines], c_min: float, c_max: float, name: str
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The (rho, global cosine) of each summary, checked to belong to the wedge's local cosines."""
    rhos, globals_ = [], []
    for index, summary in enumerate(summaries):
        if not isinstance(summary, BlockCosines):
            raise ValueError(
                f"{name}[{index}] is a {type(summary).__name__}; expected a BlockCosines "
                "(from cosine_book.similarity.block_cosines)"
            )
        defined = summary.local[~np.isnan(summary.local)]
        if (defined < c_min - _LOCAL_TOLERANCE).any() or (defined > c_max + _LOCAL_TOLERANCE).any():
            raise ValueError(
                f"{name}[{index}] has local cosines {np.round(defined, 4)} outside "
                f"[{c_min:g}, {c_max:g}]; expected pairs whose local cosines lie in the "
                "range the wedge is drawn for"
            )
        rhos.append(summary.profile_cosine)
        globals_.append(summary.global_cosine)
    return np.array(rhos, dtype=np.float64), np.array(globals_, dtype=np.float64)


def draw_wedge(
    ax: Axes,
    local: ArrayLike,
    summaries: Sequence[BlockCosines] = (),
    *,
    highlight: BlockCosines | None = None,
    point_label: str = "blocked pairs",
    highlight_label: str = "highlighted pair",
) -> None:
    r"""The feasible wedge of the global cosine for given local cosines, and pairs inside it.

    In the plane of the profile cosine :math:`\rho` (x-axis, :math:`[0, 1]`)
    and the global cosine (y-axis), the two-sided bounds
    :math:`\rho\, c_{\min} \le \cos(x, y) \le \rho\, c_{\max}` fill a wedge
    with its tip at the origin; its edges are the lines
    :math:`\rho\, c_{\min}` and :math:`\rho\, c_{\max}`. Each summary is drawn
    as a dot at (:math:`\rho`, global cosine); ``highlight``, if given, as a
    larger mark (a diamond) with a vertical bar: its interval.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        Axes to draw on.
    local : array_like of shape (n_blocks,)
        The local cosines, each in :math:`[-1, 1]`; the wedge uses their
        smallest and largest.
    summaries : sequence of BlockCosines, optional
        Pairs to draw, from :func:`cosine_book.similarity.block_cosines`;
        the defined local cosines of each must lie in
        :math:`[c_{\min}, c_{\max}]` (to 1e-9).
    highlight : BlockCosines, optional
        One pair to mark, under the same condition.
    point_label, highlight_label : str
        Legend labels of the dots and of ``highlight``.

    Raises
    ------
    ValueError
        If ``local`` is empty, not finite or outside :math:`[-1, 1]`, or a
        summary is not a ``BlockCosines`` or has local cosines outside
        :math:`[c_{\min}, c_{\max}]`.

    Examples
    --------
    >>> pair = block_cosines(*blocks_with([0.8, -0.2], [1.0, 0.5], [0.5, 1.0]))
    >>> fig, ax = plt.subplots()
    >>> draw_wedge(ax, [0.8, -0.2], [pair])
    >>> [round(float(v), 4) for v in ax.collections[-1].get_offsets()[0]]
    [0.8, 0.24]
    >>> plt.close(fig)
    """
    c_min, c_max = _as_local(local)
    rhos, globals_ = _points(summaries, c_min, c_max, "summaries")
    marked = None if highlight is None else _points([highlight], c_min, c_max, "highlight")
    edge = np.array([0.0, 1.0])
    ax.fill_between(
        edge,
        c_min * edge,
        c_max * edge,
        color=PALETTE["bound"],
        alpha=0.2,
        lw=0,
        label=r"feasible: $\rho\,c_{\min} \leq$ global $\leq \rho\,c_{\max}$",
    )
    ax.plot(edge, c_max * edge, color=PALETTE["bound"], lw=2)
    ax.plot(edge, c_min * edge, color=PALETTE["bound"], lw=2, ls="--")
    ax.text(
        1.03,
        c_max,
        rf"$\rho\,c_{{\max}}$, $c_{{\max}}$ = {c_max:g}",
        va="center",
        fontsize=9,
        color="0.2",
    )
    ax.text(
        1.03,
        c_min,
        rf"$\rho\,c_{{\min}}$, $c_{{\min}}$ = {c_min:g}",
        va="center",
        fontsize=9,
        color="0.2",
    )
    ax.axhline(0.0, color=PALETTE["neutral"], lw=0.8)
    if rhos.size:
        ax.scatter(
            rhos,
            globals_,
            s=9,
            color=PALETTE["global"],
            alpha=0.75,
            lw=0,
            label=point_label,
            zorder=3,
        )
    if marked is not None:
        rho, value = float(marked[0][0]), float(marked[1][0])
        ax.plot(
            [rho, rho],
            [rho * c_min, rho * c_max],
            color=PALETTE["accent"],
            lw=2.5,
            label="interval of the diamond",
            zorder=4,
        )
        ax.plot(
            [rho],
            [value],
            "D",
            color=PALETTE["accent"],
            ms=7,
            markeredgecolor="white",
            zorder=5,
            label=highlight_label,
        )
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
    r"""The two-sided bounds pictured: norm profiles (left), the feasible wedge (right).

    Left, :func:`draw_norm_profiles` for ``example``, a pair of two blocks:
    its norm profiles :math:`a` and :math:`b` as arrows, :math:`\rho` the
    cosine of their angle. Right, :func:`draw_wedge` for the local cosines of
    ``example``: the wedge :math:`\rho\, c_{\min} \le \cos(x, y) \le \rho\,
    c_{\max}`, ``summaries`` (pairs with local cosines in the same range) as
    dots, and ``example`` marked with its interval.

    Parameters
    ----------
    example : BlockCosines
        A pair of exactly two blocks, both defined on both sides.
    summaries : sequence of BlockCosines, optional
        Further pairs, each with local cosines between the smallest and the
        largest of ``example``.

    Returns
    -------
    matplotlib.figure.Figure
        Two axes: profiles, wedge.

    Raises
    ------
    ValueError
        If ``example`` is not a ``BlockCosines`` of two blocks with defined
        local cosines, or a summary does not fit the wedge (see
        :func:`draw_wedge`).

    Examples
    --------
    >>> example = block_cosines(*blocks_with([0.8, 0.3], [0.8, 0.6], [1.0, 0.1]))
    >>> fig = profiles_and_wedge_figure(example)
    >>> fig.axes[0].get_title()
    'norm profiles: ρ = cos φ = 0.86'
    >>> plt.close(fig)
    """
    if not isinstance(example, BlockCosines) or len(example) != 2:
        raise ValueError(
            "example must be a BlockCosines of exactly two blocks (the profiles are "
            f"drawn in the plane); got {example!r}"
        )
    if np.isnan(example.local).any():
        raise ValueError(
            "example has a block that is zero on one side (local cosine undefined); "
            f"expected both local cosines defined; got {example.local}"
        )
    fig, (left, right) = plt.subplots(1, 2, figsize=(8.4, 3.9), width_ratios=[1.0, 1.45])
    draw_norm_profiles(left, example.x_norms, example.y_norms)
    draw_wedge(
        right, example.local, summaries, highlight=example, highlight_label="the pair on the left"
    )
    right.set_title(
        "feasible wedge for local cosines " + ", ".join(f"{c:.2g}" for c in example.local)
    )
    _true_minus(fig)
    return fig


def sampled_intervals_figure(summaries: Sequence[BlockCosines]) -> Figure:
    r"""Blocked pairs side by side, sorted by global cosine, each with its interval.

    One vertical bar per pair, from :math:`\rho \min_i c_i` to
    :math:`\rho \max_i c_i`, and its global cosine as a dot
    (:func:`cosine_book.plotting.plot_intervals`).

    Parameters
    ----------
    summaries : sequence of BlockCosines
        The pairs, from :func:`cosine_book.similarity.block_cosines`; at least one.

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    ValueError
        If ``summaries`` is empty or holds something else than ``BlockCosines``.

    Examples
    --------
    >>> pairs = [block_cosines([[1.0], [2.0]], [[1.0], [-1.0]])]
    >>> fig = sampled_intervals_figure(pairs)
    >>> len(fig.axes[0].collections)
    1
    >>> plt.close(fig)
    """
    if len(summaries) == 0:
        raise ValueError("summaries is empty; expected at least one BlockCosines")
    _, values = _points(summaries, -1.0, 1.0, "summaries")
    bounds = np.array([summary.bounds() for summary in summaries], dtype=np.float64)
    order = np.argsort(values, kind="stable")
    fig, ax = plt.subplots(figsize=(7.0, 3.4))
    plot_intervals(
        ax,
        bounds[order, 0],
        bounds[order, 1],
        values[order],
        interval_label=r"$[\rho \min c_i,\ \rho \max c_i]$",
        value_label="global cosine",
    )
    ax.set_xlabel("random blocked pair (sorted by global cosine)")
    ax.set_ylabel("cosine")
    ax.set_ylim(-1.05, 1.05)
    _true_minus(fig)
    return fig


def wedge_figure(
    local: ArrayLike, summaries: Sequence[BlockCosines], *, point_label: str = "blocked pairs"
) -> Figure:
    r"""A new figure with :func:`draw_wedge`: the feasible wedge and pairs inside it.

    Parameters
    ----------
    local : array_like of shape (n_blocks,)
        The local cosines the wedge is drawn for.
    summaries : sequence of BlockCosines
        Pairs with local cosines in :math:`[c_{\min}, c_{\max}]` of ``local``.
    point_label : str
        Legend label of the pairs' dots.

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    ValueError
        As :func:`draw_wedge`.

    Examples
    --------
    >>> pair = block_cosines(*blocks_with([0.5, 0.5], [1.0, 0.0], [1.0, 1.0]))
    >>> fig = wedge_figure([0.5], [pair])
    >>> fig.axes[0].get_xlabel()
    'profile cosine $\\rho$'
    >>> plt.close(fig)
    """
    fig, ax = plt.subplots(figsize=(7.0, 3.8))
    draw_wedge(ax, local, summaries, point_label=point_label)
    _true_minus(fig)
    return fig


def plot_identity_areas(
    cases: Mapping[str, tuple[ArrayLike, ArrayLike, ArrayLike]],
) -> Figure:
    r"""The block identity as areas: bars of width :math:`w_i` and height :math:`c_i`.

    One panel per case. Block :math:`i` is a bar whose width is its weight
    :math:`w_i = \lVert x_i\rVert \lVert y_i\rVert / (\lVert x\rVert \lVert y\rVert)`
    and whose height is its local cosine :math:`c_i`, so its area is
    :math:`w_i c_i` and the bars' total area is the global cosine
    :math:`\sum_i w_i c_i`. The widths add up to :math:`\rho`, marked on the
    axis; the outlined rectangle of width 1 has the same area as the bars, so
    its height is the global cosine.

    Parameters
    ----------
    cases : mapping from title to (local, x_norms, y_norms)
        Each case's local cosines and the block norms of :math:`x` and
        :math:`y` (1-D arrays of one length; norms positive, cosines in
        :math:`[-1, 1]`).

    Raises
    ------
    ValueError
        If ``cases`` is empty or a case's arrays do not fit (see above).

    Examples
    --------
    >>> fig = plot_identity_areas({"example": ([0.9, 0.8], [1.0, 0.1], [0.1, 1.0])})
    >>> len(fig.axes)
    1
    >>> plt.close(fig)
    """
    if not isinstance(cases, Mapping) or not cases:
        raise ValueError(
            "cases must be a non-empty mapping from title to (local, x_norms, y_norms)"
        )
    fig, axes = plt.subplots(1, len(cases), figsize=(3.4 * len(cases), 3.4), sharey=True)
    axes = np.atleast_1d(axes)
    for ax, (title, (local, x_norms, y_norms)) in zip(axes, cases.items(), strict=True):
        c = as_real_array(local, f"{title}: local", ndim=1).astype(np.float64)
        a = as_real_array(x_norms, f"{title}: x_norms", ndim=1).astype(np.float64)
        b = as_real_array(y_norms, f"{title}: y_norms", ndim=1).astype(np.float64)
        if not (c.shape == a.shape == b.shape):
            raise ValueError(
                f"{title}: local, x_norms and y_norms must have one length; got "
                f"{c.size}, {a.size} and {b.size}"
            )
        if np.any(np.abs(c) > 1.0) or np.any(a <= 0.0) or np.any(b <= 0.0):
            raise ValueError(f"{title}: cosines must lie in [-1, 1] and norms be positive")
        # Fixed-order sums (not BLAS): the same picture on every CPU.
        weights = a * b / (np.sqrt(np.sum(a * a)) * np.sqrt(np.sum(b * b)))
        rho, global_cosine = float(np.sum(weights)), float(np.sum(weights * c))
        lefts = np.concatenate([[0.0], np.cumsum(weights)[:-1]])
        ax.bar(
            lefts,
            c,
            width=weights,
            align="edge",
            color=PALETTE["local"],
            edgecolor="white",
            label=r"block $i$: width $w_i$, height $c_i$",
        )
        ax.add_patch(
            plt.Rectangle(
                (0.0, 0.0),
                1.0,
                global_cosine,
                fill=False,
                edgecolor=PALETTE["global"],
                lw=2.0,
                ls="--",
                label="same area, width 1",
            )
        )
        ax.annotate(
            "",
            xy=(rho, -0.12),
            xytext=(0.0, -0.12),
            arrowprops={"arrowstyle": "<->", "color": PALETTE["weight"], "lw": 1.5},
            annotation_clip=False,
        )
        ax.text(
            max(rho / 2, 0.15),
            -0.2,
            rf"$\rho = {rho:.2f}$",
            color=PALETTE["weight"],
            ha="center",
            va="top",
        )
        ax.axhline(global_cosine, xmin=0.0, xmax=1.0 / 1.05, color=PALETTE["global"], lw=0)
        ax.text(
            1.0,
            global_cosine + 0.02,
            f"global {global_cosine:.2f}",
            color=PALETTE["global"],
            va="bottom",
            ha="right",
            fontsize=9,
        )
        ax.set_xlim(0.0, 1.02)
        ax.set_ylim(-0.35, 1.05)
        ax.set_xticks([0.0, 0.5, 1.0])
        ax.set_title(title)
        ax.set_xlabel("weight (bar width)")
    axes[0].set_ylabel("local cosine (bar height)")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncols=2)
    return fig
