"""Figures of chapter 6: the spectrum of X and item-item cosine heatmaps (the paper's Figure 1)."""

from __future__ import annotations

import itertools
import math

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure
from numpy.typing import ArrayLike

from cosine_book.cluster_recovery import pair_auc

__all__ = ["plot_cosine_heatmaps", "plot_spectrum"]

STATIC_CELLS = 250  # most cells per side of a panel: every 4th of 1,000 items


def plot_cosine_heatmaps(
    similarities: dict[str, ArrayLike],
    keys: list[str],
    clusters: ArrayLike,
    popularity: ArrayLike,
    titles: list[str] | None = None,
) -> Figure:
    """Item-item cosine heatmaps, three per row, items by cluster then by popularity.

    One panel per key of ``similarities`` in ``keys`` (titled ``titles``), a shared
    red-blue scale on [-1, 1] in steps of 0.05, lines between the clusters. Each panel
    draws every ``p // 250``-th item in display order (each cell one real pair) and is
    scored under it on all items: :func:`~cosine_book.cluster_recovery.pair_auc` and the
    mean over the pairs of distinct items. Used in chapter 6.

    Examples
    --------
    >>> truth = np.kron(np.eye(2), np.ones((2, 2)))
    >>> fig = plot_cosine_heatmaps({"t": truth}, ["t"], [0, 0, 1, 1], [4, 3, 2, 1])
    >>> fig.axes[0].texts[0].get_text()
    'AUC 1.000, mean 0.333'
    >>> plt.close(fig)
    """
    clusters = np.asarray(clusters)
    order = np.lexsort((-np.asarray(popularity, dtype=np.float64), clusters))
    n_items, labels = order.size, clusters[order]
    edges = np.flatnonzero(labels[1:] != labels[:-1]) + 0.5  # where the cluster changes
    titles = list(keys) if titles is None else titles
    n_rows = -(-len(keys) // 3)
    fig, axes = plt.subplots(n_rows, 3, figsize=(7.4, 2.45 * n_rows + 0.1), squeeze=False)
    for ax in axes.flat:
        ax.set_axis_off()
    step = -(-n_items // STATIC_CELLS)
    image = None
    for ax, key, title in zip(axes.flat, keys, titles, strict=False):
        shown = np.asarray(similarities[key], dtype=np.float64)[np.ix_(order, order)]
        image = ax.imshow(
            shown[::step, ::step],
            cmap=plt.get_cmap("RdBu_r", 41),
            vmin=-1,
            vmax=1,
            interpolation="nearest",
            extent=(-0.5, n_items - 0.5, n_items - 0.5, -0.5),
        )
        ax.set_title(title.replace("obj. 1, ", "obj. 1: ").replace("V_k", "$V_k$"), fontsize=9)
        for edge in edges:
            ax.axhline(edge, color="0.15", lw=0.5)
            ax.axvline(edge, color="0.15", lw=0.5)
        mean = (float(np.sum(shown)) - float(np.sum(np.diagonal(shown)))) / (
            n_items * (n_items - 1)
        )
        note = f"AUC {pair_auc(shown, labels):.3f}, mean {mean + 0.0:.3f}"
        ax.text(0.5, -0.03, note, transform=ax.transAxes, ha="center", va="top", fontsize=9)
    if image is not None:
        fig.colorbar(image, ax=axes, shrink=0.7, label="item–item cosine")
    return fig


def plot_spectrum(
    singular_values: dict[str, ArrayLike], lam1: float, lam2: float, k: int
) -> Figure:
    r"""Singular values of each data set with the thresholds of objectives 1 and 2.

    Left, :math:`\sigma_i` (log scale) with lines at :math:`\sqrt{\lambda_1}`, where
    :math:`f_i = \sigma_i^2 / (\sigma_i^2 + \lambda_1) = 1/2`, and at :math:`\lambda_2`,
    below which objective 2 drops a dimension; right, what the predictions keep:
    :math:`f_i` (solid) and :math:`(1 - \lambda_2 / \sigma_i)_+` (dashed); a dotted line
    at ``k``. Used in chapter 6.

    Examples
    --------
    >>> fig = plot_spectrum({"A": [300.0, 120.0, 40.0]}, lam1=1e4, lam2=100.0, k=2)
    >>> [ax.get_ylabel() for ax in fig.axes]
    ['singular value $\\sigma_i$', 'share of $\\sigma_i$ kept']
    >>> plt.close(fig)
    """
    fig, (left, right) = plt.subplots(1, 2, figsize=(7.4, 2.9), layout="constrained")
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for (name, values), colour in zip(singular_values.items(), itertools.cycle(colours)):
        sigma = np.asarray(values, dtype=np.float64)
        index = np.arange(1, sigma.size + 1)
        shown = sigma > 0
        left.plot(index[shown], sigma[shown], ".", ms=3, color=colour, label=f"setting {name}")
        right.plot(index, sigma**2 / (sigma**2 + lam1), color=colour, lw=1.2)
        kept = np.divide(
            np.clip(sigma - lam2, 0.0, None), sigma, out=np.zeros_like(sigma), where=sigma > 0
        )
        right.plot(index, kept, "--", color=colour, lw=1.2)
    grey = "0.35"
    left.axhline(math.sqrt(lam1), color=grey, lw=0.9)
    left.axhline(lam2, color=grey, lw=0.9, ls="--")
    if math.isclose(math.sqrt(lam1), lam2):
        marks = [(lam2, f"√λ₁ = λ₂ = {lam2:g}")]
    else:
        marks = [(math.sqrt(lam1), f"√λ₁ = {math.sqrt(lam1):g}"), (lam2, f"λ₂ = {lam2:g}")]
    for value, label in marks:
        left.annotate(
            label,
            (1.0, value),
            xycoords=("axes fraction", "data"),
            xytext=(-4, 3),
            textcoords="offset points",
            ha="right",
            va="bottom",
            fontsize=9,
        )
    left.set(yscale="log", xlabel="index i", ylabel=r"singular value $\sigma_i$")
    left.set_title("spectrum of X", fontsize=10)
    left.legend(fontsize=9, loc="upper right", bbox_to_anchor=(1.0, 0.9))
    right.plot([], [], color=grey, label=r"obj. 1: $f_i$")
    right.plot([], [], "--", color=grey, label=r"obj. 2: $(1 - \lambda_2/\sigma_i)_+$")
    right.set(ylim=(-0.03, 1.03), xlabel="index i", ylabel=r"share of $\sigma_i$ kept")
    right.set_title("what the predictions keep", fontsize=10)
    right.legend(fontsize=9, loc="upper right")
    for ax in (left, right):
        ax.axvline(k, color=grey, lw=0.8, ls=":")
    return fig
