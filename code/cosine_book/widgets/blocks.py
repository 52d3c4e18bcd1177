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
from cosine_book.widgets.core import LiveWidget, Slider, WidgetSpec

__all__ = [
    "BOUNDS",
    "TWO_BLOCKS",
    "blocks_state",
    "bounds_spec",
    "bounds_widget",
    "two_block_widget",
]

# Values the HTML version offers: every default, the ends, and a few in between.
_NORMS = (0.0, 0.1, 0.3, 0.6, 1.0, 2.0)
_COSINES = (-1.0, -0.9, -0.5, -0.3, 0.0, 0.5, 0.7, 1.0)
_SUBSCRIPTS = "₁₂₃"


def blocks_state(**values: float) -> BlockCosines:
    """The measured blocks for slider values ``x1, y1, c1, x2, y2, c2, ...``.

    ``xi`` and ``yi`` are the norms of block ``i`` of x and y, ``ci`` its local
    cosine; the blocks are built by :func:`~cosine_book.similarity.blocks_with`.

    Examples
    --------
    >>> state = blocks_state(x1=1.0, y1=1.0, c1=1.0, x2=1.0, y2=2.0, c2=1.0)
    >>> round(state.global_cosine, 4)
    0.9487
    """
    n_blocks = len(values) // 3
    local = [values[f"c{i}"] for i in range(1, n_blocks + 1)]
    x_norms = [values[f"x{i}"] for i in range(1, n_blocks + 1)]
    y_norms = [values[f"y{i}"] for i in range(1, n_blocks + 1)]
    return block_cosines(*blocks_with(local, x_norms, y_norms))


def _readout(state: BlockCosines) -> str:
    lower, upper = state.bounds()
    return (
        f"global cosine {state.global_cosine:.3f}   rho {state.profile_cosine:.3f}   "
        f"interval [{lower:.3f}, {upper:.3f}]"
    )


def _sliders(x_norms: Sequence[float], y_norms: Sequence[float], local: Sequence[float]):
    sliders = []
    for i, (x, y, c) in enumerate(zip(x_norms, y_norms, local, strict=True)):
        s = _SUBSCRIPTS[i]
        sliders += [
            Slider(f"x{i + 1}", f"‖x{s}‖", 0.0, 2.0, 0.01, x, static_values=_NORMS),
            Slider(f"y{i + 1}", f"‖y{s}‖", 0.0, 2.0, 0.01, y, static_values=_NORMS),
            Slider(f"c{i + 1}", f"c{s}", -1.0, 1.0, 0.01, c, static_values=_COSINES),
        ]
    return sliders


# Most of x's length in block 1, most of y's in block 3: rho near 0.
_APART = {"x1": 2.0, "x2": 0.1, "x3": 0.1, "y1": 0.1, "y2": 0.1, "y3": 2.0}

#: Chapter 2, two blocks, starting from the limit construction with eps = 0.2.
TWO_BLOCKS = WidgetSpec(
    name="two-blocks",
    title="Two blocks: norms and local cosines",
    controls=_sliders((0.2, 1.0), (1.0, 0.2), (0.9, 0.7)),
    state=blocks_state,
    draw=block_cosines_figure,
    readout=_readout,
)


def bounds_spec(local: Sequence[float] = (0.9, 0.5, -0.3)) -> WidgetSpec:
    r"""Chapter 3: three blocks' norm profiles and local cosines, and the interval.

    Presets the chapter refers to: ``equal norms`` (:math:`\rho = 1`),
    ``x in block 1, y in block 3`` (:math:`\rho` near 0), ``all negative``
    (local cosines -0.9, -0.5, -0.3) and ``all negative, lengths apart``
    (both: :math:`\rho\, c_{\min} \ge c_{\max}`, so the global cosine lies
    above every local cosine).
    """
    if len(local) != 3:
        raise ValueError(f"the bounds widget shows three blocks; got {len(local)} local cosines")
    return WidgetSpec(
        name="three-blocks",
        title="Three blocks: one row of sliders per block",
        controls=_sliders((1.0, 0.6, 0.3), (0.3, 0.8, 1.0), tuple(float(c) for c in local)),
        state=blocks_state,
        draw=block_cosines_figure,
        readout=_readout,
        presets={
            "equal norms": {f"{side}{i}": 1.0 for side in "xy" for i in (1, 2, 3)},
            "x in block 1, y in block 3": dict(_APART),
            "all negative": {"c1": -0.9, "c2": -0.5, "c3": -0.3},
            # Both at once: rho * c_min >= c_max, so the global cosine beats them all.
            "all negative, lengths apart": {
                "c1": -0.9,
                "c2": -0.5,
                "c3": -0.3,
                **_APART,
            },
        },
    )


#: Chapter 3's widget at its defaults.
BOUNDS = bounds_spec()


def two_block_widget() -> LiveWidget:
    """The chapter 2 widget: live in a kernel, kernel-free in the HTML book."""
    return LiveWidget(TWO_BLOCKS)


def bounds_widget(local: Sequence[float] = (0.9, 0.5, -0.3)) -> LiveWidget:
    """The chapter 3 widget, starting from local cosines ``local``."""
    return LiveWidget(bounds_spec(local))
