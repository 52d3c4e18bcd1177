"""Figures of the block decomposition (chapters 2 and 3)."""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure

from cosine_book.plotting import PALETTE, annotate_bounds
from cosine_book.similarity import BlockCosines

__all__ = ["block_cosines_figure", "draw_block_cosines"]


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
    >>> from cosine_book.similarity import block_cosines, blocks_with
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
    line_ax.text(-0.98, 0.05, "ticks: local cosines", fontsize=8, color=PALETTE["local"])
    line_ax.set_title(f"global {summary.global_cosine:.3f} in [{lower:.3f}, {upper:.3f}]")


def block_cosines_figure(summary: BlockCosines, names: Sequence[str] = ()) -> Figure:
    """A new figure drawn by :func:`draw_block_cosines` (the widgets' drawing function).

    Examples
    --------
    >>> from cosine_book.similarity import block_cosines
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
    return fig
