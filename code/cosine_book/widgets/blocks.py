"""The widgets of chapters 2 and 3: block norms and local cosines in, the interval out.

Their state function builds vectors with the chosen numbers
(:func:`~cosine_book.similarity.blocks_with`) and measures them
(:func:`~cosine_book.similarity.block_cosines`); the drawing function is
``cosine_book.plotting.blocks.block_cosines_figure``.
"""

from __future__ import annotations

from collections.abc import Sequence

from cosine_book.plotting.blocks import block_cosines_figure
from cosine_book.similarity import BlockCosines, block_cosines, blocks_with
from cosine_book.widgets.core import Choice, LiveWidget, Slider, WidgetSpec

__all__ = ["bounds_widget", "two_block_widget"]


def _readout(state: BlockCosines) -> str:
    lower, upper = state.bounds()
    return (
        f"global cosine {state.global_cosine:.3f}   ρ {state.profile_cosine:.3f}   "
        f"interval [{lower:.3f}, {upper:.3f}]"
    )


def _norm(side: str, block: int, default: float, values: Sequence[float]) -> Slider:
    name, s = f"{side}{block}", "₁₂"[block - 1]
    description = f"norm of block {block} of {side}, ‖{side}{s}‖"
    return Slider(name, f"‖{side}{s}‖", 0.0, 2.0, 0.01, default, values, description=description)


def _cosine(block: int, default: float, values: Sequence[float]) -> Slider:
    s = "₁₂"[block - 1]
    description = f"local cosine of block {block}, c{s}"
    return Slider(f"c{block}", f"c{s}", -1.0, 1.0, 0.01, default, values, description=description)


def _two_blocks(x1: float, y2: float, c1: float, c2: float) -> BlockCosines:
    # Scaling a whole vector changes no cosine: ‖x₂‖ = ‖y₁‖ = 1 loses nothing.
    return block_cosines(*blocks_with([c1, c2], [x1, 1.0], [1.0, y2]))


def two_block_widget() -> LiveWidget:
    """Two blocks' norms and local cosines, starting from the limit construction at ε = 0.2.

    Used in chapter 2. Each slider offers three evenly spaced values; the HTML version
    shows every combination (81 frames).

    >>> round(two_block_widget().spec.state(x1=1.0, y2=2.0, c1=1.0, c2=1.0).global_cosine, 4)
    0.9487
    """
    return LiveWidget(
        WidgetSpec(
            name="two-blocks",
            title="Two blocks: norms and local cosines (‖x₂‖ = ‖y₁‖ = 1)",
            controls=[
                _norm("x", 1, 0.2, (0.2, 0.7, 1.2)),
                _norm("y", 2, 0.2, (0.2, 0.6, 1.0)),
                _cosine(1, 0.9, (0.5, 0.7, 0.9)),
                _cosine(2, 0.0, (-0.9, 0.0, 0.9)),
            ],
            state=_two_blocks,
            draw=block_cosines_figure,
            readout=_readout,
            columns=2,
        )
    )


# Chapter 3's menus: norm profiles (x's block norms, y's block norms) and local cosines.
_NORM_PROFILES = {
    "x (1, 0.6, 0.3), y (0.3, 0.8, 1)": ((1.0, 0.6, 0.3), (0.3, 0.8, 1.0)),
    "equal norms": ((1.0, 1.0, 1.0), (1.0, 1.0, 1.0)),
    "block 2 empty": ((1.0, 0.0, 0.3), (0.3, 0.0, 1.0)),
    "x in block 1, y in block 3": ((2.0, 0.1, 0.1), (0.1, 0.1, 2.0)),
}
_LOCAL_COSINES = {
    "0.9, 0.5, −0.3": (0.9, 0.5, -0.3),
    "−0.9, −0.5, −0.3": (-0.9, -0.5, -0.3),
    "0.5, 0.5, 0.5": (0.5, 0.5, 0.5),
}


_PROFILES_TEXT = "block norms of x and of y (the norm profiles)"
_LOCAL_TEXT = "local cosines of blocks 1, 2 and 3"


def _three_blocks(profiles: str, local: str) -> BlockCosines:
    return block_cosines(*blocks_with(_LOCAL_COSINES[local], *_NORM_PROFILES[profiles]))


def bounds_widget() -> LiveWidget:
    """Three blocks: a menu of norm profiles and one of local cosines; every combination.

    Used in chapter 3.

    >>> summary = bounds_widget().spec.state("equal norms", "0.9, 0.5, −0.3")
    >>> [round(bound, 6) for bound in summary.bounds()]
    [-0.3, 0.9]
    """
    profiles, local = tuple(_NORM_PROFILES), tuple(_LOCAL_COSINES)
    return LiveWidget(
        WidgetSpec(
            name="three-blocks",
            title="Three blocks: norm profiles and local cosines",
            controls=[
                Choice("profiles", "norms", profiles, profiles[0], description=_PROFILES_TEXT),
                Choice("local", "c₁, c₂, c₃", local, local[0], description=_LOCAL_TEXT),
            ],
            state=_three_blocks,
            draw=block_cosines_figure,
            readout=_readout,
            columns=1,
        )
    )
