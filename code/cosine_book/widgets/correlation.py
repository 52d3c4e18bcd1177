"""Widgets of chapters 4 and 5: two groups with given sample moments, and their pooled r.

Chapter 4's (``DECOMPOSITION``) places group B relative to group A and shows the
decomposition of the pooled r; chapter 5's (``SIMPSON``) moves B up and down, and
the pooled r changes sign while the group r's do not.
"""

from __future__ import annotations

from functools import cache
from typing import NamedTuple

import numpy as np
from matplotlib.figure import Figure

from cosine_book.correlation import (
    GroupedCorrelation,
    grouped_correlation,
    pooled_correlation,
    sample_with_moments,
    zero_crossing_gap,
)
from cosine_book.plotting.correlation import decomposition_figure, simpson_figure
from cosine_book.widgets.core import Choice, LiveWidget, Slider, WidgetSpec

__all__ = ["decomposition_widget", "simpson_widget"]


class _Groups(NamedTuple):
    """Two groups' points, labels ``"A"``/``"B"``, and their decomposition."""

    x: np.ndarray
    y: np.ndarray
    groups: np.ndarray
    result: GroupedCorrelation


def _two_groups(n_a: int, a: tuple[float, ...], n_b: int, b: tuple[float, ...]) -> _Groups:
    """``n`` points per group with exactly the sample moments (x mean, y mean, spread, r)."""
    (x_a, y_a), (x_b, y_b) = (
        sample_with_moments(n, x_mean, y_mean, spread, spread, r, seed=seed)
        for seed, (n, (x_mean, y_mean, spread, r)) in enumerate(((n_a, a), (n_b, b)))
    )
    x, y = np.concatenate([x_a, x_b]), np.concatenate([y_a, y_b])
    groups = np.array(["A"] * n_a + ["B"] * n_b, dtype=np.str_)
    return _Groups(x, y, groups, grouped_correlation(x, y, groups))


def _signed(value: float, digits: int) -> str:
    """``value`` with a sign; one that rounds to zero reads +0."""
    return f"{round(value, digits) + 0.0:+.{digits}f}"


# --- chapter 4: B placed relative to A at (0, 1.5), along a falling or a rising line ---

B_OFFSETS = {
    "equal means": (0.0, 0.0),
    "(+1, −1)": (1.0, -1.0),
    "(+2, −2)": (2.0, -2.0),
    "(+3, −3): start": (3.0, -3.0),
    "(+3, +3)": (3.0, 3.0),
}
# Fixed axes, so that moving a group moves its points across the frame.
_SCATTER_LIMITS = ((-5.0, 8.0), (-6.0, 9.0))


def _decomposition_state(
    offset: str, spread_a: float, spread_b: float, r_a: float, r_b: float
) -> _Groups:
    dx, dy = B_OFFSETS[offset]
    return _two_groups(60, (0.0, 1.5, spread_a, r_a), 60, (dx, 1.5 + dy, spread_b, r_b))


def _decomposition_readout(state: _Groups) -> str:
    result = state.result
    within, between = result.parts()
    return (
        f"pooled r {_signed(result.pooled, 3)} = within part {_signed(within, 3)} + "
        f"between part {_signed(between, 3)}   (r in A {_signed(result.within[0], 2)}, "
        f"r in B {_signed(result.within[1], 2)})"
    )


def _spread(group: str) -> Slider:
    description = f"standard deviation of x and of y within group {group}"
    name, label = f"spread_{group.lower()}", f"{group}: spread"
    return Slider(name, label, 0.1, 3.0, 0.05, 1.0, (0.5, 1.0), description=description)


def _within(group: str, default: float) -> Slider:
    description = f"correlation within group {group}"
    name, label = f"r_{group.lower()}", f"{group}: r"
    return Slider(name, label, -1.0, 1.0, 0.05, default, (-1.0, default), description=description)


#: Chapter 4's widget: 60 points per group; every combination of B's offset, the two
#: spreads and the two group r's in the HTML book (80 settings).
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
    state=_decomposition_state,
    draw=lambda s: decomposition_figure(s.x, s.y, s.groups, s.result, _SCATTER_LIMITS),
    readout=_decomposition_readout,
    columns=2,
)


def decomposition_widget() -> LiveWidget:
    """Two groups: the pooled r as within part plus between part. Used in chapter 4."""
    return LiveWidget(DECOMPOSITION)


# --- chapter 5: A at (0, 0), B at (3, y_gap); both r = 0.8, spread 1 ----------------

_GAPS = np.linspace(-8.0, 8.0, 401)  # B's offsets on the curve of the right panel


@cache
def _sweep() -> tuple[np.ndarray, float]:
    """The pooled r at each of _GAPS, and the offset where it is 0 (the same in every frame)."""
    shares, spreads, within = [1, 1], [1, 1], [0.8, 0.8]
    pooled = [pooled_correlation(shares, [0, 3], [0, g], spreads, spreads, within) for g in _GAPS]
    return np.array(pooled), zero_crossing_gap(shares, 3.0, spreads, spreads, within)


class _SimpsonState(NamedTuple):
    groups: _Groups
    y_gap: float
    pooled: np.ndarray
    zero_gap: float


def _simpson_state(y_gap: float) -> _SimpsonState:
    groups = _two_groups(40, (0.0, 0.0, 1.0, 0.8), 40, (3.0, y_gap, 1.0, 0.8))
    return _SimpsonState(groups, float(y_gap), *_sweep())


def _simpson_readout(state: _SimpsonState) -> str:
    result = state.groups.result
    return (
        f"offset of B {_signed(state.y_gap, 1)}: pooled r {_signed(result.pooled, 3)}   "
        f"(r in A {_signed(result.within[0], 2)}, r in B {_signed(result.within[1], 2)}; "
        f"the pooled r is zero at the offset {_signed(state.zero_gap, 2)})"
    )


def _draw_simpson(state: _SimpsonState) -> Figure:
    x, y, groups, result = state.groups
    return simpson_figure(x, y, groups, result, (_GAPS, state.pooled, state.zero_gap, state.y_gap))


_WHOLE = tuple(np.arange(-8.0, 9.0).tolist())  # the offsets of the HTML book

#: Chapter 5's widget: B starts three units below A, a paradoxical state.
SIMPSON = WidgetSpec(
    name="simpson",
    title="Move group B: the pooled r changes sign, the group r's do not",
    controls=[Slider("y_gap", "offset of B", -8.0, 8.0, 0.1, -3.0, _WHOLE, readout_format=".1f")],
    state=_simpson_state,
    draw=_draw_simpson,
    readout=_simpson_readout,
)


def simpson_widget() -> LiveWidget:
    """Move group B: the pooled r flips sign, the group r's do not. Used in chapter 5."""
    return LiveWidget(SIMPSON)
