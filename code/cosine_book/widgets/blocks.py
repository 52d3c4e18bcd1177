"""Widgets of the block decomposition (chapters 2 and 3).

Each widget is a :class:`~cosine_book.widgets.core.WidgetSpec`: sliders for block
norms and local cosines, a state function that builds vectors with those numbers
(:func:`cosine_book.similarity.blocks_with`) and measures them
(:func:`cosine_book.similarity.block_cosines`), and the drawing function
:func:`cosine_book.plotting.blocks.block_cosines_figure`.
"""

from __future__ import annotations

from collections.abc import Sequence

from cosine_book.plotting.blocks import block_cosines_figure
from cosine_book.similarity import BlockCosines, block_cosines, blocks_with
from cosine_book.widgets.core import Choice, LiveWidget, Slider, WidgetSpec

__all__ = [
    "BOUNDS",
    "LOCAL_COSINE_SETS",
    "NORM_PROFILES",
    "TWO_BLOCKS",
    "blocks_state",
    "bounds_state",
    "bounds_spec",
    "bounds_widget",
    "two_block_widget",
]

_SUBSCRIPTS = "₁₂₃"


def blocks_state(**values: float) -> BlockCosines:
    """The measured blocks for slider values ``x1, y1, c1, x2, y2, c2, ...``.

    ``xi`` and ``yi`` are the norms of block ``i`` of x and y, ``ci`` its local
    cosine; the blocks are built by :func:`~cosine_book.similarity.blocks_with`.
    A norm not given is 1.

    Examples
    --------
    >>> state = blocks_state(x1=1.0, y1=1.0, c1=1.0, x2=1.0, y2=2.0, c2=1.0)
    >>> round(state.global_cosine, 4)
    0.9487
    >>> round(blocks_state(x1=0.2, y2=0.2, c1=0.9, c2=0.0).global_cosine, 4)
    0.1731
    """
    n_blocks = max(int(name[1:]) for name in values)
    local = [values[f"c{i}"] for i in range(1, n_blocks + 1)]
    x_norms = [values.get(f"x{i}", 1.0) for i in range(1, n_blocks + 1)]
    y_norms = [values.get(f"y{i}", 1.0) for i in range(1, n_blocks + 1)]
    return block_cosines(*blocks_with(local, x_norms, y_norms))


def _readout(state: BlockCosines) -> str:
    lower, upper = state.bounds()
    return (
        f"global cosine {state.global_cosine:.3f}   ρ {state.profile_cosine:.3f}   "
        f"interval [{lower:.3f}, {upper:.3f}]"
    )


def _norm(side: str, block: int, default: float, values: Sequence[float]) -> Slider:
    s = _SUBSCRIPTS[block - 1]
    return Slider(
        f"{side}{block}",
        f"‖{side}{s}‖",
        0.0,
        2.0,
        0.01,
        default,
        static_values=values,
        description=f"norm of block {block} of {side}, ‖{side}{s}‖",
    )


def _cosine(block: int, default: float, values: Sequence[float]) -> Slider:
    s = _SUBSCRIPTS[block - 1]
    return Slider(
        f"c{block}",
        f"c{s}",
        -1.0,
        1.0,
        0.01,
        default,
        static_values=values,
        description=f"local cosine of block {block}, c{s}",
    )


#: Chapter 2, two blocks, starting from the limit construction with eps = 0.2. Scaling
#: a whole vector changes no cosine, so ‖x₂‖ = ‖y₁‖ = 1 loses nothing while x₂ and y₁ are
#: nonzero (the widget never sets them to zero); each slider
#: offers evenly spaced values (steps 0.5, 0.4, 0.2 and 0.9), and every combination
#: of them is shown (3 · 3 · 3 · 3 = 81 settings, within the time budget).
TWO_BLOCKS = WidgetSpec(
    name="two-blocks",
    title="Two blocks: norms and local cosines (‖x₂‖ = ‖y₁‖ = 1)",
    controls=[
        _norm("x", 1, 0.2, (0.2, 0.7, 1.2)),
        _norm("y", 2, 0.2, (0.2, 0.6, 1.0)),
        _cosine(1, 0.9, (0.5, 0.7, 0.9)),
        _cosine(2, 0.0, (-0.9, 0.0, 0.9)),
    ],
    state=blocks_state,
    draw=block_cosines_figure,
    readout=_readout,
    columns=2,
)

#: Chapter 3's local cosines (the starting ones, all negative, and all equal).
LOCAL_COSINE_SETS = {
    "0.9, 0.5, −0.3": (0.9, 0.5, -0.3),
    "−0.9, −0.5, −0.3": (-0.9, -0.5, -0.3),
    "0.5, 0.5, 0.5": (0.5, 0.5, 0.5),
}
#: Chapter 3's norm profiles (x's block norms; y's block norms).
NORM_PROFILES = {
    "x (1, 0.6, 0.3), y (0.3, 0.8, 1)": ((1.0, 0.6, 0.3), (0.3, 0.8, 1.0)),
    "equal norms": ((1.0, 1.0, 1.0), (1.0, 1.0, 1.0)),
    "block 2 empty": ((1.0, 0.0, 0.3), (0.3, 0.0, 1.0)),
    "x in block 1, y in block 3": ((2.0, 0.1, 0.1), (0.1, 0.1, 2.0)),
}


def bounds_state(profiles: str, local: str) -> BlockCosines:
    """Chapter 3's widget: three blocks with a named pair of norm profiles and local cosines.

    Examples
    --------
    >>> state = bounds_state("equal norms", "0.9, 0.5, −0.3")
    >>> round(state.profile_cosine, 6), [round(b, 6) for b in state.bounds()]
    (1.0, [-0.3, 0.9])
    """
    (x1, x2, x3), (y1, y2, y3) = NORM_PROFILES[profiles]
    c1, c2, c3 = LOCAL_COSINE_SETS[local]
    return blocks_state(x1=x1, y1=y1, c1=c1, x2=x2, y2=y2, c2=c2, x3=x3, y3=y3, c3=c3)


def bounds_spec() -> WidgetSpec:
    """Chapter 3: three blocks' norm profiles and local cosines, and the interval.

    Two menus, every combination offered (12 settings): the norm profiles of x and
    y, and the three local cosines.
    """
    return WidgetSpec(
        name="three-blocks",
        title="Three blocks: norm profiles and local cosines",
        controls=[
            Choice(
                "profiles",
                "norms",
                tuple(NORM_PROFILES),
                next(iter(NORM_PROFILES)),
                description="block norms of x and of y (the norm profiles)",
            ),
            Choice(
                "local",
                "c₁, c₂, c₃",
                tuple(LOCAL_COSINE_SETS),
                next(iter(LOCAL_COSINE_SETS)),
                description="local cosines of blocks 1, 2 and 3",
            ),
        ],
        state=bounds_state,
        draw=block_cosines_figure,
        readout=_readout,
        columns=1,
    )


#: Chapter 3's widget.
BOUNDS = bounds_spec()


def two_block_widget() -> LiveWidget:
    """The chapter 2 widget: live in a kernel, kernel-free in the HTML book."""
    return LiveWidget(TWO_BLOCKS)


def bounds_widget() -> LiveWidget:
    """The chapter 3 widget: live in a kernel, kernel-free in the HTML book."""
    return LiveWidget(bounds_spec())
