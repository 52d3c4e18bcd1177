"""Figures of chapter 7: cosines of pairs, neighbour lists, hubs, rogue dimensions, the widget.

Distributions are drawn with seaborn (``seaborn.histplot``) from the cosines
themselves, or as steps from histogram counts, in the book's theme
(:func:`cosine_book.plotting.use_book_style`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.figure import Figure
from numpy.typing import ArrayLike

from cosine_book._validation import as_int_scalar, as_real_array, as_real_matrix
from cosine_book.plotting import PALETTE

if TYPE_CHECKING:  # the widget module imports this one
    from cosine_book.widgets.diagnostics import SharedDirectionFrame

__all__ = [
    "dimension_contributions_figure",
    "k_occurrence_figure",
    "neighbour_images_figure",
    "pair_cosines_figure",
    "shared_direction_figure",
]

_PAIR_COLOURS = {"same label": PALETTE["global"], "different labels": PALETTE["local"]}


def _density(counts: np.ndarray, width: float) -> np.ndarray:
    """Counts per bin as a density (area 1); zeros if there are no counts."""
    counts = np.asarray(counts, dtype=np.float64)
    total = float(np.sum(counts))
    return counts / (total * width) if total > 0 else np.zeros_like(counts)


def shared_direction_figure(frame: SharedDirectionFrame) -> Figure:
    """The chapter 7 widget's drawing function.

    Left: density of the raw cosines of pairs with the same label and with
    different labels (filled), and of the centred ones (outlines). Right, against
    the strength of the shared direction: the pair AUC, the label agreement of the
    top-``k`` cosine neighbours, the mean cosine, and the shares of related and of
    unrelated pairs whose cosine reaches the widget's threshold; the dots mark the
    current strength.

    Parameters
    ----------
    frame : SharedDirectionFrame
        From :func:`cosine_book.widgets.diagnostics.shared_direction_frame`.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> from cosine_book.widgets.diagnostics import (prepare_shared_direction,
    ...                                              shared_direction_frame)
    >>> labels = np.repeat([0, 1], 10)
    >>> E = np.random.default_rng(0).normal(size=(20, 4)) + 3.0 * labels[:, None]
    >>> setup = prepare_shared_direction(E, labels, k=3)
    >>> fig = shared_direction_figure(shared_direction_frame(setup, 1.0))
    >>> [ax.get_xlabel() for ax in fig.axes]
    ['cosine of a pair', 'strength t of the shared direction']
    >>> plt.close(fig)
    """
    state = frame.state
    # Fixed margins: the widget draws this figure once per frame.
    fig, (left, right) = plt.subplots(1, 2, figsize=(8.2, 3.6), layout="none")
    fig.subplots_adjust(left=0.075, right=0.985, bottom=0.14, top=0.92, wspace=0.22)
    # The state already holds the histograms (counts per bin); drawn as steps they cost
    # a fraction of what seaborn's weighted histograms did in every frame.
    edges = state.bin_edges
    width = float(edges[1] - edges[0])
    raw = {"same label": state.related, "different labels": state.unrelated}
    centred = {"same label": state.centred_related, "different labels": state.centred_unrelated}
    for name, colour in _PAIR_COLOURS.items():
        density = _density(raw[name], width)
        left.stairs(density, edges, fill=True, color=colour, alpha=0.35, lw=0)
        left.stairs(density, edges, color=colour, lw=1.2)
        left.stairs(_density(centred[name], width), edges, color=colour, lw=1.2, ls="--")
    handles = [
        plt.Rectangle((0, 0), 1, 1, color=colour, alpha=0.5) for colour in _PAIR_COLOURS.values()
    ] + [plt.Line2D([], [], color=PALETTE["neutral"], ls="--")]
    left.legend(handles, [*_PAIR_COLOURS, "centred (dashed)"], loc="upper left")
    left.axvline(state.threshold, color=PALETTE["accent"], lw=1.0, ls=":")
    left.set_xlim(-1.0, 1.0)
    # One y-axis for every strength of the sweep (its peak), so that frames compare;
    # a strength off the sweep (the kernel slider) may raise it.
    shown = [_density(h, width) for h in (*raw.values(), *centred.values())]
    left.set_ylim(0.0, 1.05 * max(state.peak_density, *(float(np.max(d)) for d in shown)))
    # Square-root scale: the tall peaks of a strong shared direction and the low,
    # wide histograms without one both stay readable on the one axis.
    left.set_yscale("function", functions=(np.sqrt, np.square))
    left.set_xlabel("cosine of a pair")
    left.set_ylabel("density (square-root scale)")
    left.set_title(
        f"raw cosines at t = {state.strength:.2f}; mean {round(state.mean_cosine, 2) + 0.0:.2f}"
    )
    curves = [
        (frame.sweep_auc, frame.auc, PALETTE["global"], "-", "pair AUC"),
        (state.sweep_agreement, state.agreement, PALETTE["global"], ":",
         f"top-{state.k} label agreement"),
        (state.sweep_mean_cosine, state.mean_cosine, PALETTE["weight"], "-", "mean cosine"),
        (frame.sweep_related_above, frame.related_above, PALETTE["neutral"], "--",
         f"same label, cosine ≥ {state.threshold:g}"),
        (state.sweep_unrelated_above, state.unrelated_above, PALETTE["local"], "--",
         f"different labels, cosine ≥ {state.threshold:g}"),
    ]  # fmt: skip
    for sweep, current, colour, style, label in curves:
        right.plot(state.sweep_strengths, sweep, color=colour, ls=style, label=label)
        right.plot([state.strength], [current], "o", color=PALETTE["accent"], ms=6)
    right.set_ylim(-0.02, 1.02)
    right.set_xlim(state.sweep_strengths[0] - 0.05, state.sweep_strengths[-1] + 0.05)
    right.set_xlabel("strength t of the shared direction")
    right.legend(loc="lower right", bbox_to_anchor=(1.0, 0.04), fontsize=9.5)
    right.set_title("raw cosines against t (dot: the current t)")
    return fig


def k_occurrence_figure(counts: Mapping[str, ArrayLike], *, k: int = 10) -> Figure:
    """Histograms of k-occurrence counts (how often each item is a neighbour), one line each.

    Parameters
    ----------
    counts : mapping from str to array_like of int
        For each representation (legend label), the counts of
        :func:`cosine_book.embeddings.k_occurrence`.
    k : int
        The neighbours per item behind the counts (for the axis label).

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> fig = k_occurrence_figure({"a": [0, 1, 2, 9], "b": [3, 3, 3, 3]}, k=3)
    >>> fig.axes[0].get_yscale()
    'log'
    >>> plt.close(fig)
    """
    if not counts:
        raise ValueError("counts must name at least one representation")
    fig, ax = plt.subplots(figsize=(6.4, 3.2))
    colours = [PALETTE["local"], PALETTE["global"], PALETTE["weight"], PALETTE["neutral"]]
    largest = max(int(np.max(as_real_array(c, "counts", ndim=1))) for c in counts.values())
    edges = np.arange(0, largest + 3) - 0.5
    for (name, values), colour in zip(counts.items(), colours, strict=False):
        ax.stairs(np.histogram(values, edges)[0], edges, color=colour, lw=1.4, label=name)
    ax.set_yscale("log")
    ax.set_xlabel(f"number of other items that have it among their {k} nearest neighbours")
    ax.set_ylabel("items (log scale)")
    ax.legend()
    return fig


def dimension_contributions_figure(contributions: Mapping[str, ArrayLike]) -> Figure:
    """Each dimension's contribution to the mean cosine of pairs, one panel per model.

    Parameters
    ----------
    contributions : mapping from str to array_like
        For each model (panel title), one number per dimension, summing to its
        mean cosine (chapter 7, rogue dimensions).

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> fig = dimension_contributions_figure({"a": [0.1, 0.02, -0.01]})
    >>> fig.axes[0].get_xlabel()
    'dimension'
    >>> plt.close(fig)
    """
    if not contributions:
        raise ValueError("contributions must name at least one model")
    fig, axes = plt.subplots(1, len(contributions), figsize=(4.1 * len(contributions), 3.0),
                             squeeze=False)  # fmt: skip
    for ax, (title, values) in zip(axes[0], contributions.items(), strict=True):
        values = as_real_array(values, f"contributions of {title!r}", ndim=1)
        colours = np.where(values >= 0, PALETTE["global"], PALETTE["local"])
        # No edges: with hundreds of dimensions, edge lines would hide the bars.
        ax.bar(np.arange(values.size), values, width=1.0, color=colours, linewidth=0)
        ax.axhline(0.0, color=PALETTE["neutral"], lw=0.8)
        ax.set_title(f"{title}: mean cosine {float(np.sum(values)):.2f}")
        ax.set_xlabel("dimension")
    axes[0][0].set_ylabel("contribution to the mean cosine")
    return fig


def pair_cosines_figure(
    cosines: Mapping[str, tuple[ArrayLike, ArrayLike]],
    *,
    threshold: float | None = None,
) -> Figure:
    """Distributions of the cosines of related and unrelated pairs, one panel per model.

    Parameters
    ----------
    cosines : mapping from str to (array_like, array_like)
        For each model (panel title): the cosines of related pairs, then of
        unrelated pairs (for example from
        :func:`cosine_book.diagnostics.related_pair_cosines`).
    threshold : float, optional
        A cosine threshold to mark in every panel.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> fig = pair_cosines_figure(
    ...     {"a": (rng.uniform(0.5, 1, 50), rng.uniform(-1, 0.6, 200))}, threshold=0.55
    ... )
    >>> fig.axes[0].get_title()
    'a'
    >>> plt.close(fig)
    """
    if not cosines:
        raise ValueError("cosines must name at least one model")
    fig, axes = plt.subplots(
        1, len(cosines), figsize=(4.1 * len(cosines), 3.4), sharey=False, squeeze=False
    )
    for ax, (title, (related, unrelated)) in zip(axes[0], cosines.items(), strict=True):
        related = as_real_array(related, f"related cosines of {title!r}", ndim=1)
        unrelated = as_real_array(unrelated, f"unrelated cosines of {title!r}", ndim=1)
        frame = pd.DataFrame(
            {
                "cosine": np.concatenate([related, unrelated]),
                "pairs": np.repeat(list(_PAIR_COLOURS), [related.size, unrelated.size]),
            }
        )
        sns.histplot(
            data=frame,
            x="cosine",
            hue="pairs",
            binwidth=0.025,
            binrange=(-1.0, 1.0),
            stat="density",
            common_norm=False,
            element="step",
            alpha=0.35,
            palette=_PAIR_COLOURS,
            ax=ax,
        )
        if threshold is not None:
            ax.axvline(threshold, color=PALETTE["accent"], ls="--", lw=1.2)
        ax.set_xlim(-1.0, 1.0)
        ax.set_title(title)
        ax.set_xlabel("cosine of a pair")
    return fig


def neighbour_images_figure(
    images: ArrayLike,
    query: int,
    neighbours: Mapping[str, Sequence[int]],
    *,
    labels: ArrayLike | None = None,
    shape: tuple[int, int] = (8, 8),
) -> Figure:
    """A query image and its nearest neighbours under several similarities, one row each.

    Parameters
    ----------
    images : array_like of shape (n, h * w)
        The images, one per row.
    query : int
        Row of the query image.
    neighbours : mapping from str to sequence of int
        For each similarity (row label), the rows of the neighbours in rank order.
    labels : array_like of shape (n,), optional
        Shown above each image.
    shape : (int, int)
        Height and width of an image.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> images = np.random.default_rng(0).uniform(size=(6, 64))
    >>> fig = neighbour_images_figure(images, 0, {"a": [1, 2], "b": [3, 4]})
    >>> len(fig.axes)
    6
    >>> plt.close(fig)
    """
    images = as_real_matrix(images, "images")
    query = as_int_scalar(query, "query", minimum=0, maximum=images.shape[0] - 1)
    if not neighbours:
        raise ValueError("neighbours must name at least one similarity")
    width = max(len(rows) for rows in neighbours.values()) + 1
    fig, axes = plt.subplots(
        len(neighbours), width, figsize=(0.75 * width + 1.5, 0.95 * len(neighbours)), squeeze=False
    )
    shown_labels = None if labels is None else np.asarray(labels)
    for row, (name, rows) in zip(axes, neighbours.items(), strict=True):
        for position, ax in enumerate(row):
            ax.set_xticks([])
            ax.set_yticks([])
            ax.grid(False)
            if position > len(rows):
                ax.set_visible(False)
                continue
            index = query if position == 0 else int(rows[position - 1])
            ax.imshow(images[index].reshape(shape), cmap="gray_r", interpolation="nearest")
            for spine in ax.spines.values():
                spine.set_visible(position == 0)
                spine.set_color(PALETTE["accent"])
            if shown_labels is not None:
                ax.set_title(str(shown_labels[index]), fontsize=9)
        row[0].set_ylabel(name, rotation=0, ha="right", va="center", fontsize=9)
    return fig
