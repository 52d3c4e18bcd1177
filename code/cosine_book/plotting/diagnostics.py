"""Figures of chapter 7: cosines of pairs, neighbour lists, hubs, rogue dimensions, the widget."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.figure import Figure
from numpy.typing import ArrayLike

from cosine_book.plotting import PALETTE

_PAIR_COLOURS = {"same label": PALETTE["global"], "different labels": PALETTE["local"]}


def _density(counts: np.ndarray, width: float) -> np.ndarray:
    """Counts per bin as a density (area 1); zeros if there are no counts."""
    total = float(np.sum(counts))
    return counts / (total * width) if total > 0 else np.zeros(len(counts))


def shared_direction_figure(state: Any) -> Figure:
    """The chapter 7 widget's figure, from a state of :mod:`cosine_book.widgets.diagnostics`.

    Left: the densities of the raw cosines of pairs with the same label and with
    different labels (filled), and of the centred ones (dashed). Right, against the
    strength t: pair AUC, top-k label agreement, mean cosine and the shares of related
    and unrelated pairs at or above the threshold; dots at the current t.
    """
    raw, centred, sweep = state.raw, state.centred, state.sweep
    # Fixed margins: the widget draws this figure once per frame.
    fig, (left, right) = plt.subplots(1, 2, figsize=(8.2, 3.6), layout="none")
    fig.subplots_adjust(left=0.075, right=0.985, bottom=0.14, top=0.92, wspace=0.22)
    edges = state.bin_edges
    width = float(edges[1] - edges[0])
    for colour, kind in zip(_PAIR_COLOURS.values(), ("related", "unrelated"), strict=True):
        density = _density(raw[kind], width)
        left.stairs(density, edges, fill=True, color=colour, alpha=0.35, lw=0)
        left.stairs(density, edges, color=colour, lw=1.2)
        left.stairs(_density(centred[kind], width), edges, color=colour, lw=1.2, ls="--")
    handles = [
        plt.Rectangle((0, 0), 1, 1, color=colour, alpha=0.5) for colour in _PAIR_COLOURS.values()
    ] + [plt.Line2D([], [], color=PALETTE["neutral"], ls="--")]
    left.legend(handles, [*_PAIR_COLOURS, "centred (dashed)"], loc="upper left")
    left.axvline(state.threshold, color=PALETTE["accent"], lw=1.0, ls=":")
    left.set_xlim(-1.0, 1.0)
    # One y-axis for every strength of the sweep (its peak); the kernel slider may raise it.
    shown = [_density(s[kind], width) for s in (raw, centred) for kind in ("related", "unrelated")]
    left.set_ylim(0.0, 1.05 * max(state.peak_density, *(float(np.max(d)) for d in shown)))
    # Square-root scale: tall peaks and low, wide histograms stay readable on one axis.
    left.set_yscale("function", functions=(np.sqrt, np.square))
    left.set_xlabel("cosine of a pair")
    left.set_ylabel("density (square-root scale)")
    mean = round(raw["mean_cosine"], 2) + 0.0
    left.set_title(f"raw cosines at t = {state.strength:.2f}; mean {mean:.2f}")
    curves = [
        ("auc", PALETTE["global"], "-", "pair AUC"),
        ("agreement", PALETTE["global"], ":", f"top-{state.k} label agreement"),
        ("mean_cosine", PALETTE["weight"], "-", "mean cosine"),
        ("related_above", PALETTE["neutral"], "--", f"same label, cosine ≥ {state.threshold:g}"),
        ("unrelated_above", PALETTE["local"], "--",
         f"different labels, cosine ≥ {state.threshold:g}"),
    ]  # fmt: skip
    for key, colour, style, label in curves:
        right.plot(sweep["strength"], sweep[key], color=colour, ls=style, label=label)
        right.plot([state.strength], [raw[key]], "o", color=PALETTE["accent"], ms=6)
    right.set_ylim(-0.02, 1.02)
    right.set_xlim(sweep["strength"][0] - 0.05, sweep["strength"][-1] + 0.05)
    right.set_xlabel("strength t of the shared direction")
    right.legend(loc="lower right", bbox_to_anchor=(1.0, 0.04), fontsize=9.5)
    right.set_title("raw cosines against t (dot: the current t)")
    return fig


def k_occurrence_figure(counts: Mapping[str, ArrayLike], *, k: int = 10) -> Figure:
    """Histograms of k-occurrence counts, one line per representation (chapter 7).

    ``counts`` maps a legend label to :func:`cosine_book.diagnostics.k_occurrence`'s counts.

    >>> fig = k_occurrence_figure({"a": [0, 1, 2, 9], "b": [3, 3, 3, 3]}, k=3)
    >>> fig.axes[0].get_yscale()
    'log'
    """
    fig, ax = plt.subplots(figsize=(6.4, 3.2))
    colours = [PALETTE["local"], PALETTE["global"], PALETTE["weight"], PALETTE["neutral"]]
    edges = np.arange(0, max(int(np.max(c)) for c in counts.values()) + 3) - 0.5
    for (name, values), colour in zip(counts.items(), colours, strict=False):
        ax.stairs(np.histogram(values, edges)[0], edges, color=colour, lw=1.4, label=name)
    ax.set_yscale("log")
    ax.set_xlabel(f"number of other items that have it among their {k} nearest neighbours")
    ax.set_ylabel("items (log scale)")
    ax.legend()
    return fig


def dimension_contributions_figure(contributions: Mapping[str, ArrayLike]) -> Figure:
    """Each dimension's part of the mean cosine of pairs, one panel per model (chapter 7).

    >>> fig = dimension_contributions_figure({"a": [0.1, 0.02, -0.01]})
    >>> fig.axes[0].get_title()
    'a: mean cosine 0.11'
    """
    fig, axes = plt.subplots(1, len(contributions), figsize=(4.1 * len(contributions), 3.0),
                             squeeze=False)  # fmt: skip
    for ax, (title, values) in zip(axes[0], contributions.items(), strict=True):
        values = np.asarray(values)
        colours = np.where(values >= 0, PALETTE["global"], PALETTE["local"])
        # No edges: with hundreds of dimensions, edge lines would hide the bars.
        ax.bar(np.arange(values.size), values, width=1.0, color=colours, linewidth=0)
        ax.axhline(0.0, color=PALETTE["neutral"], lw=0.8)
        ax.set_title(f"{title}: mean cosine {float(np.sum(values)):.2f}")
        ax.set_xlabel("dimension")
    axes[0][0].set_ylabel("contribution to the mean cosine")
    return fig


def pair_cosines_figure(
    cosines: Mapping[str, tuple[ArrayLike, ArrayLike]], *, threshold: float | None = None
) -> Figure:
    """Densities of the cosines of related and unrelated pairs, a panel per model (chapter 7).

    ``cosines`` maps a title to the related and the unrelated pairs' cosines (as
    :func:`cosine_book.diagnostics.related_pair_cosines` gives them).

    >>> fig = pair_cosines_figure({"a": ([0.9, 0.8], [0.1, 0.5, 0.3])}, threshold=0.55)
    >>> fig.axes[0].get_title()
    'a'
    """
    fig, axes = plt.subplots(1, len(cosines), figsize=(4.1 * len(cosines), 3.4), squeeze=False)
    for ax, (title, (related, unrelated)) in zip(axes[0], cosines.items(), strict=True):
        frame = pd.DataFrame(
            {
                "cosine": np.concatenate([related, unrelated]),
                "pairs": np.repeat(list(_PAIR_COLOURS), [len(related), len(unrelated)]),
            }
        )
        sns.histplot(
            data=frame, x="cosine", hue="pairs", binwidth=0.025, binrange=(-1.0, 1.0),
            stat="density", common_norm=False, element="step", alpha=0.35,
            palette=_PAIR_COLOURS, ax=ax,
        )  # fmt: skip
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
) -> Figure:
    """An 8x8 query image and its nearest neighbours, a row per similarity (chapter 7).

    ``neighbours`` maps a row label to the rows of ``images`` in rank order; ``labels``
    are shown above the images.

    >>> images = np.random.default_rng(0).uniform(size=(6, 64))
    >>> len(neighbour_images_figure(images, 0, {"a": [1, 2], "b": [3, 4]}).axes)
    6
    """
    width = max(len(rows) for rows in neighbours.values()) + 1
    fig, axes = plt.subplots(
        len(neighbours), width, figsize=(0.75 * width + 1.5, 0.95 * len(neighbours)), squeeze=False
    )
    for row, (name, rows) in zip(axes, neighbours.items(), strict=True):
        for position, ax in enumerate(row):
            ax.set_xticks([])
            ax.set_yticks([])
            ax.grid(False)
            if position > len(rows):
                ax.set_visible(False)
                continue
            index = query if position == 0 else int(rows[position - 1])
            ax.imshow(np.reshape(images[index], (8, 8)), cmap="gray_r", interpolation="nearest")
            for spine in ax.spines.values():
                spine.set_visible(position == 0)
                spine.set_color(PALETTE["accent"])
            if labels is not None:
                ax.set_title(str(labels[index]), fontsize=9)
        row[0].set_ylabel(name, rotation=0, ha="right", va="center", fontsize=9)
    return fig
