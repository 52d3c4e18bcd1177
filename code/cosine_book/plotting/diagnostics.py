"""Figures of chapter 7: distributions of cosines, neighbour lists, the shared direction.

Distributions are drawn with seaborn (``seaborn.histplot``) from histogram
counts or from the cosines themselves, in the book's theme
(:func:`cosine_book.plotting.use_book_style`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.figure import Figure
from numpy.typing import ArrayLike

from cosine_book._validation import as_int_scalar, as_real_array, as_real_matrix
from cosine_book.diagnostics import SharedDirectionState
from cosine_book.plotting import PALETTE

__all__ = ["neighbour_images_figure", "pair_cosines_figure", "shared_direction_figure"]

_PAIR_COLOURS = {"same label": PALETTE["global"], "different labels": PALETTE["local"]}


def _density(counts: np.ndarray, width: float) -> np.ndarray:
    """Counts per bin as a density (area 1); zeros if there are no counts."""
    counts = np.asarray(counts, dtype=np.float64)
    total = float(np.sum(counts))
    return counts / (total * width) if total > 0 else np.zeros_like(counts)


def shared_direction_figure(state: SharedDirectionState) -> Figure:
    """The chapter 7 widget's drawing function.

    Left: density of the raw cosines of pairs with the same label and with
    different labels (filled), and of the centred ones (outlines). Right, against
    the strength of the shared direction: the label agreement of the top-``k``
    cosine neighbours, the mean cosine and the share of unrelated pairs whose
    cosine reaches the widget's threshold (dashed: that share after centring);
    the dots mark the current strength.

    Parameters
    ----------
    state : SharedDirectionState
        From :func:`cosine_book.diagnostics.shared_direction_update`.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> from cosine_book.diagnostics import prepare_shared_direction, shared_direction_update
    >>> labels = np.repeat([0, 1], 10)
    >>> E = np.random.default_rng(0).normal(size=(20, 4)) + 3.0 * labels[:, None]
    >>> setup = prepare_shared_direction(E, labels, k=3)
    >>> fig = shared_direction_figure(shared_direction_update(setup, 1.0))
    >>> [ax.get_xlabel() for ax in fig.axes]
    ['cosine of a pair', 'strength t of the shared direction']
    >>> plt.close(fig)
    """
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

    right.plot(
        state.sweep_strengths,
        state.sweep_agreement,
        color=PALETTE["global"],
        label=f"top-{state.k} label agreement",
    )
    right.plot(
        state.sweep_strengths,
        state.sweep_mean_cosine,
        color=PALETTE["weight"],
        label="mean cosine",
    )
    right.plot(
        state.sweep_strengths,
        state.sweep_unrelated_above,
        color=PALETTE["local"],
        label=f"unrelated pairs with cosine ≥ {state.threshold:g}",
    )
    right.axhline(
        state.centred_unrelated_above,
        color=PALETTE["local"],
        ls="--",
        label="… after centring",
    )
    for value in (state.agreement, state.mean_cosine, state.unrelated_above):
        right.plot([state.strength], [value], "o", color=PALETTE["accent"], ms=7)
    right.set_ylim(-0.02, 1.02)
    right.set_xlim(state.sweep_strengths[0] - 0.05, state.sweep_strengths[-1] + 0.05)
    right.set_xlabel("strength t of the shared direction")
    right.legend(loc="lower right", bbox_to_anchor=(1.0, 0.08))
    right.set_title("raw cosines against t (dot: the current t)")
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
