"""Widgets of chapters 4 and 5: pooled versus within-group correlation.

Each widget is a :class:`~cosine_book.widgets.core.WidgetSpec`: controls, a pure
state function and a drawing function.

- :data:`DECOMPOSITION` (chapter 4): two groups with adjustable share, means,
  spreads and within-group correlations. The state
  (:func:`decomposition_state`) draws points with exactly those sample moments
  (:func:`cosine_book.group_moments.two_group_sample`) and splits their pooled
  ``r`` (:func:`cosine_book.correlation.grouped_correlation`); the figure is
  :func:`cosine_book.plotting.correlation.decomposition_figure`. The HTML
  version offers every combination of B's offset from A, the spreads and the
  group ``r``'s.
- :func:`simpson_spec` (chapter 5): move group B up or down
  (:func:`simpson_state`, :func:`cosine_book.group_moments.offset_sweep`); the
  pooled ``r`` changes sign while the group ``r``'s do not. The figure is
  :func:`cosine_book.plotting.simpson.simpson_figure`.
"""

from __future__ import annotations

from functools import partial
from typing import NamedTuple

import numpy as np
from matplotlib.figure import Figure
from numpy.typing import NDArray

from cosine_book.correlation import GroupedCorrelation, grouped_correlation
from cosine_book.group_moments import GroupSpec, offset_sweep, two_group_sample
from cosine_book.plotting.correlation import decomposition_figure
from cosine_book.plotting.simpson import simpson_figure
from cosine_book.widgets.core import Choice, LiveWidget, Slider, WidgetSpec

__all__ = [
    "B_OFFSETS",
    "DECOMPOSITION",
    "SIMPSON",
    "DecompositionState",
    "SimpsonState",
    "decomposition_spec_state",
    "decomposition_state",
    "decomposition_widget",
    "simpson_spec",
    "simpson_state",
    "simpson_widget",
]

# --- chapter 4: two groups ------------------------------------------------------


class DecompositionState(NamedTuple):
    """What the chapter 4 widget shows: the two groups' points and their decomposition."""

    x: NDArray[np.float64]
    y: NDArray[np.float64]
    groups: NDArray[np.str_]
    result: GroupedCorrelation


def decomposition_state(
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
) -> DecompositionState:
    """Two groups with exactly these moments, and the decomposition of their pooled ``r``.

    Group A holds ``round(share_a * n_total)`` of the ``n_total`` points (at
    least 3, and at least 3 are left for B).

    Examples
    --------
    >>> state = decomposition_state(0.5, 0, 1.5, 1, 0.8, 3, -1.5, 1, 0.5)
    >>> round(state.result.pooled, 3), state.result.counts.tolist()
    (-0.492, [60, 60])
    """
    n_a = int(np.clip(round(share_a * n_total), 3, n_total - 3))
    x, y, groups = two_group_sample(
        GroupSpec(n_a, x_mean_a, y_mean_a, spread_a, r_a),
        GroupSpec(n_total - n_a, x_mean_b, y_mean_b, spread_b, r_b),
    )
    return DecompositionState(x, y, groups, grouped_correlation(x, y, groups))


def _signed(value: float, digits: int) -> str:
    """``value`` with a sign and ``digits`` decimals; a value that rounds to zero reads +0."""
    return f"{round(value, digits) + 0.0:+.{digits}f}"


def _decomposition_readout(state: DecompositionState) -> str:
    result = state.result
    within, between = result.parts()
    return (
        f"pooled r {_signed(result.pooled, 3)} = within part {_signed(within, 3)} + "
        f"between part {_signed(between, 3)}   (r in A {_signed(result.within[0], 2)}, "
        f"r in B {_signed(result.within[1], 2)})"
    )


# Fixed axes, so that moving a group moves its points across the frame.
_SCATTER_LIMITS = ((-5.0, 8.0), (-6.0, 9.0))


def _draw_decomposition(state: DecompositionState) -> Figure:
    return decomposition_figure(
        state.x, state.y, state.groups, state.result, limits=_SCATTER_LIMITS
    )


#: Where group B sits relative to group A, which is at (0, 1.5), along a line of slope
#: -1 from equal means to the start, or up a line of slope +1.
B_OFFSETS = {
    "equal means": (0.0, 0.0),
    "(+1, −1)": (1.0, -1.0),
    "(+2, −2)": (2.0, -2.0),
    "(+3, −3): start": (3.0, -3.0),
    "(+3, +3)": (3.0, 3.0),
}
_A_MEAN = (0.0, 1.5)


def decomposition_spec_state(
    offset: str, spread_a: float, spread_b: float, r_a: float, r_b: float
) -> DecompositionState:
    """Chapter 4's widget: equal groups, A at (0, 1.5), B at the named offset from A."""
    dx, dy = B_OFFSETS[offset]
    x_a, y_a = _A_MEAN
    return decomposition_state(0.5, x_a, y_a, spread_a, r_a, x_a + dx, y_a + dy, spread_b, r_b)


def _spread(group: str) -> Slider:
    return Slider(
        f"spread_{group.lower()}",
        f"{group}: spread",
        0.1,
        3.0,
        0.05,
        1.0,
        static_values=(0.5, 1.0),
        description=f"standard deviation of x and of y within group {group}",
    )


def _within(group: str, default: float) -> Slider:
    return Slider(
        f"r_{group.lower()}",
        f"{group}: r",
        -1.0,
        1.0,
        0.05,
        default,
        static_values=(-1.0, default),
        description=f"correlation within group {group}",
    )


#: Chapter 4's widget, two groups of 60 points with A at (0, 1.5) and B three units
#: right and three down to start with, and every combination of B's offset, the two
#: spreads and the two group r's (80 settings).
DECOMPOSITION = WidgetSpec(
    name="two-groups",
    title="Two groups: pooled r = within part + between part",
    controls=[
        Choice(
            "offset",
            "B − A",
            tuple(B_OFFSETS),
            "(+3, −3): start",
            description="offset of group B's means from group A's",
        ),
        _spread("A"),
        _spread("B"),
        _within("A", 0.8),
        _within("B", 0.5),
    ],
    state=decomposition_spec_state,
    draw=_draw_decomposition,
    readout=_decomposition_readout,
    columns=2,
)


def decomposition_widget() -> LiveWidget:
    """The chapter 4 widget: live in a kernel, kernel-free in the HTML book."""
    return LiveWidget(DECOMPOSITION)


# --- chapter 5: move one group ---------------------------------------------------


class SimpsonState(NamedTuple):
    """What the chapter 5 widget shows: the two groups, and the pooled ``r`` for every offset."""

    x: NDArray[np.float64]
    y: NDArray[np.float64]
    groups: NDArray[np.str_]
    result: GroupedCorrelation
    y_gap: float
    gaps: NDArray[np.float64]
    pooled: NDArray[np.float64]
    zero_gap: float


#: Offsets of group B on the curve of the chapter 5 widget (and its slider's range).
_GAP_RANGE = (-8.0, 8.0)


def simpson_state(
    y_gap: float,
    *,
    n_per_group: int = 40,
    x_gap: float = 3.0,
    spread: float = 1.0,
    within: float = 0.8,
) -> SimpsonState:
    """Group A at ``(0, 0)``, group B at ``(x_gap, y_gap)``, and the pooled ``r`` for every offset.

    Both groups have ``n_per_group`` points, spread ``spread`` in ``x`` and
    ``y`` and within-group correlation ``within``.

    Examples
    --------
    >>> state = simpson_state(-3.0)
    >>> round(state.result.pooled, 3), round(state.zero_gap, 3)
    (-0.446, -1.067)
    """
    x, y, groups = two_group_sample(
        GroupSpec(n_per_group, 0.0, 0.0, spread, within),
        GroupSpec(n_per_group, x_gap, y_gap, spread, within),
    )
    gaps = np.linspace(*_GAP_RANGE, 401)
    pooled, zero_gap = offset_sweep(
        gaps, x_gap=x_gap, spreads=(spread, spread), within=(within, within)
    )
    result = grouped_correlation(x, y, groups)
    return SimpsonState(x, y, groups, result, float(y_gap), gaps, pooled, zero_gap)


def _simpson_readout(state: SimpsonState) -> str:
    result = state.result
    return (
        f"offset of B {_signed(state.y_gap, 1)}: pooled r {_signed(result.pooled, 3)}   "
        f"(r in A {_signed(result.within[0], 2)}, r in B {_signed(result.within[1], 2)}; "
        f"the pooled r is zero at the offset {_signed(state.zero_gap, 2)})"
    )


def _draw_simpson(state: SimpsonState) -> Figure:
    return simpson_figure(
        state.x,
        state.y,
        state.groups,
        state.result,
        gaps=state.gaps,
        pooled=state.pooled,
        zero_gap=state.zero_gap,
        y_gap=state.y_gap,
    )


def simpson_spec(
    *,
    n_per_group: int = 40,
    x_gap: float = 3.0,
    spread: float = 1.0,
    within: float = 0.8,
) -> WidgetSpec:
    """Chapter 5: one slider, the vertical offset of group B (arguments as :func:`simpson_state`).

    It starts three units below A, in a paradoxical state: both groups have
    ``r = within``, the pooled ``r`` has the opposite sign (for the defaults).
    The HTML version offers every whole offset from -8 to 8.

    Raises
    ------
    ValueError
        If the arguments are refused by :func:`simpson_state` (checked once, here).
    """
    state = partial(
        simpson_state, n_per_group=n_per_group, x_gap=x_gap, spread=spread, within=within
    )
    state(y_gap=-3.0)  # refuse bad arguments now, not in every frame
    return WidgetSpec(
        name="simpson",
        title="Move group B: the pooled r changes sign, the group r's do not",
        controls=[
            Slider(
                "y_gap",
                "offset of B",
                *_GAP_RANGE,
                0.1,
                -3.0,
                static_values=tuple(np.arange(-8.0, 9.0).tolist()),
                readout_format=".1f",
            )
        ],
        state=state,
        draw=_draw_simpson,
        readout=_simpson_readout,
    )


#: Chapter 5's widget at its defaults.
SIMPSON = simpson_spec()


def simpson_widget(
    *,
    n_per_group: int = 40,
    x_gap: float = 3.0,
    spread: float = 1.0,
    within: float = 0.8,
) -> LiveWidget:
    """Move group B up or down: the pooled ``r`` flips sign, the group ``r``'s do not (chapter 5).

    Parameters
    ----------
    n_per_group : int
        Points per group, at least 3.
    x_gap : float
        Horizontal distance between the group means, nonzero.
    spread : float
        Within-group standard deviation of ``x`` and ``y``.
    within : float
        Within-group correlation of both groups.

    Returns
    -------
    LiveWidget
    """
    return LiveWidget(
        simpson_spec(n_per_group=n_per_group, x_gap=x_gap, spread=spread, within=within)
    )
