"""Figures of chapter 6: item-item cosine heatmaps of matrix-factorisation embeddings.

:func:`plot_cosine_heatmaps` draws the grid of the paper's Figure 1;
:func:`rescaling_figure` draws one heatmap of a
:class:`~cosine_book.factorization.RescalingUpdate` (the chapter's widget), averaged
down to display resolution by :func:`downsample` so that its image stays small.
"""

from __future__ import annotations

import itertools
import math

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.colors import Colormap
from matplotlib.figure import Figure
from numpy.typing import ArrayLike, NDArray

from cosine_book._validation import (
    as_float_scalar,
    as_int_scalar,
    as_labels,
    as_real_array,
    as_real_matrix,
)
from cosine_book.cluster_recovery import cluster_order, pair_auc
from cosine_book.factorization import RescalingUpdate, dropout_shrinkage

__all__ = ["downsample", "plot_cosine_heatmaps", "plot_spectrum", "rescaling_figure"]

#: Cells per side of the widget's heatmap (1,000 items: means over 5 x 5 tiles).
DISPLAY_CELLS = 200
#: Most cells per side of each panel of the chapter's heatmap figures (every 4th of
#: 1,000 items).
STATIC_CELLS = 250
# Screen pixels per heatmap cell at the frames' 80 dpi: 400 pixels for 200 cells.
_PIXELS_PER_CELL = 2
_FRAME_DPI = 80
# Colour levels of the widget's heatmap: steps of 0.05 in cosine. Few distinct
# colours keep the PNG frames of the HTML version small (about 2.5 times smaller
# than a continuous scale) at no visible cost.
_LEVELS = 41


def _heatmap_colormap(levels: int | None = None) -> Colormap:
    return plt.get_cmap("RdBu_r", levels)


def _segments(n: int, cells: int) -> NDArray[np.intp]:
    """Start of each of ``cells`` nearly equal consecutive segments of ``range(n)``."""
    return (np.arange(cells) * n) // cells


def _downsample(matrix: NDArray[np.float64], cells: int) -> NDArray[np.float64]:
    rows, cols = matrix.shape
    row_cells, col_cells = min(cells, rows), min(cells, cols)
    row_starts, col_starts = _segments(rows, row_cells), _segments(cols, col_cells)
    row_sizes = np.diff(np.append(row_starts, rows))
    col_sizes = np.diff(np.append(col_starts, cols))
    # A tile's sum is at most (entries per tile) x (largest |entry|): divide by a
    # power of two first (exact) if that could overflow, and multiply the means back.
    peak = float(np.max(np.abs(matrix)))
    tile = int(row_sizes.max()) * int(col_sizes.max())
    shift = max(0, math.frexp(peak)[1] + tile.bit_length() - 1023)
    scaled = np.ldexp(matrix, -shift) if shift else matrix
    sums = np.add.reduceat(np.add.reduceat(scaled, row_starts, axis=0), col_starts, axis=1)
    means = sums / np.multiply.outer(row_sizes, col_sizes)
    return np.ldexp(means, shift) if shift else means


def downsample(matrix: ArrayLike, cells: int = DISPLAY_CELLS) -> NDArray[np.float64]:
    """Average a matrix over tiles so that it has at most ``cells`` rows and columns.

    Rows (and columns) are split into ``min(cells, n)`` consecutive groups of
    nearly equal size (sizes differ by at most one; every row counts), and each
    entry of the result is the mean over one tile. A heatmap with one cell per
    screen pixel or two shows the same picture as the full matrix at a fraction
    of the image size.

    Parameters
    ----------
    matrix : array_like of shape (n_rows, n_cols)
        Finite real numbers.
    cells : int
        At least 1.

    Returns
    -------
    ndarray of shape (min(cells, n_rows), min(cells, n_cols))

    Examples
    --------
    >>> downsample(np.arange(16.0).reshape(4, 4), cells=2).tolist()
    [[2.5, 4.5], [10.5, 12.5]]

    Rows in groups of 3 and 2, columns in groups of 2 and 1:

    >>> downsample(np.ones((5, 3)), cells=2).shape
    (2, 2)

    Any scale works:

    >>> downsample(np.full((4, 4), 1.5e308), cells=1).tolist()
    [[1.5e+308]]
    """
    matrix = as_real_matrix(matrix, "matrix")
    cells = as_int_scalar(cells, "cells", minimum=1)
    return _downsample(matrix, cells)


def rescaling_figure(update: RescalingUpdate) -> Figure:
    """The heatmap of one rescaling of objective 1 (the chapter 6 widget's drawing function).

    Item-item cosines in display order (clusters as blocks along the diagonal,
    the most popular items of each cluster at the top left of its block), averaged
    by :func:`downsample` to 200 cells per side and drawn at two pixels per cell
    (at 80 dpi) on a colour scale of 41 levels from -1 to 1.

    Parameters
    ----------
    update : RescalingUpdate
        From :func:`cosine_book.factorization.rescaling_update`.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> from cosine_book.factorization import (
    ...     prepare_rescaling_state,
    ...     rescaling_update,
    ... )
    >>> X = np.random.default_rng(0).integers(0, 2, size=(40, 12))
    >>> state = prepare_rescaling_state(
    ...     X, np.arange(12) % 3, np.ones(12), k=4, n_check_users=5
    ... )
    >>> fig = rescaling_figure(rescaling_update(state, 5.0, 0.25))
    >>> fig.axes[0].get_title()
    'objective 1, λ = 5, α = +0.25'
    >>> plt.close(fig)
    """
    if not isinstance(update, RescalingUpdate):
        raise ValueError(
            f"update must be a RescalingUpdate from rescaling_update; got {type(update).__name__}"
        )
    shown = _downsample(update.cosines, DISPLAY_CELLS)
    side = shown.shape[0] * _PIXELS_PER_CELL / _FRAME_DPI  # inches
    left, bottom, top, right = 0.1, 0.3, 0.3, 1.0
    width, height = left + side + right, bottom + side + top
    fig = plt.figure(figsize=(width, height), layout="none")
    ax = fig.add_axes((left / width, bottom / height, side / width, side / height))
    image = ax.imshow(
        shown, cmap=_heatmap_colormap(_LEVELS), vmin=-1.0, vmax=1.0, interpolation="nearest"
    )
    ax.set_xticks([])
    ax.set_yticks([])
    ax.grid(False)
    ax.set_xlabel("items by cluster, most popular first", fontsize=9)
    ax.set_title(f"objective 1, λ = {update.lam:,.0f}, α = {update.alpha:+.2f}", fontsize=10)
    colorbar_ax = fig.add_axes(
        ((left + side + 0.12) / width, bottom / height, 0.13 / width, side / height)
    )
    fig.colorbar(image, cax=colorbar_ax, label="item–item cosine", ticks=[-1, -0.5, 0, 0.5, 1])
    return fig


def plot_cosine_heatmaps(
    similarities: dict[str, ArrayLike],
    keys: list[str],
    clusters: ArrayLike,
    popularity: ArrayLike,
    titles: list[str] | None = None,
    n_cols: int = 3,
    *,
    boundaries: bool = False,
    annotate: bool = False,
) -> Figure:
    """Item-item cosine heatmaps in a grid, items sorted by cluster then popularity.

    The layout of the paper's Figure 1: one panel per similarity, a shared
    red-blue colour scale on ``[-1, 1]`` and one colour bar.

    Parameters
    ----------
    similarities : dict from str to array_like of shape (n_items, n_items)
        For example the result of :func:`cosine_book.factorization.item_similarity_suite`.
    keys : list of str
        Which similarities to show, in reading order.
    clusters, popularity : array_like of shape (n_items,)
        Item clusters and popularity, for the display order.
    titles : list of str, optional
        Panel titles; default ``keys``.
    n_cols : int
        Panels per row, at least 1.
    boundaries : bool
        Draw thin lines between the clusters (the blocks of the display order).
    annotate : bool
        Write under each panel its exact AUC against the clusters and its mean
        over the pairs of distinct items (see
        :func:`cosine_book.cluster_recovery.pair_auc`; ties count one half).
        Needs at least two clusters and one with two items.

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    ValueError
        If a key is missing, a similarity is not a finite real ``(n_items, n_items)``
        matrix, ``titles`` has the wrong length or ``n_cols < 1``.

    Examples
    --------
    >>> truth = np.kron(np.eye(2), np.ones((2, 2)))
    >>> clusters, popularity = [0, 0, 1, 1], [4, 3, 2, 1]
    >>> fig = plot_cosine_heatmaps(
    ...     {"truth": truth}, ["truth"], clusters, popularity
    ... )
    >>> [ax.get_title() for ax in fig.axes[:1]]
    ['truth']
    >>> plt.close(fig)

    With cluster boundaries and each panel's AUC and mean similarity:

    >>> fig = plot_cosine_heatmaps(
    ...     {"truth": truth},
    ...     ["truth"],
    ...     clusters,
    ...     popularity,
    ...     boundaries=True,
    ...     annotate=True,
    ... )
    >>> fig.axes[0].texts[0].get_text()
    'AUC 1.000, mean 0.333'
    >>> plt.close(fig)
    """
    missing = [key for key in keys if key not in similarities]
    if missing:
        raise ValueError(f"no similarity named {missing}; available: {sorted(similarities)}")
    titles = list(keys) if titles is None else list(titles)
    if len(titles) != len(keys):
        raise ValueError(f"got {len(titles)} titles for {len(keys)} panels; expected one each")
    n_cols = as_int_scalar(n_cols, "n_cols", minimum=1)
    order = cluster_order(clusters, popularity)
    shown = {}
    for key in keys:
        matrix = as_real_matrix(similarities[key], f"similarities[{key!r}]")
        if matrix.shape != (order.size, order.size):
            raise ValueError(
                f"similarities[{key!r}] has shape {matrix.shape}; expected "
                f"({order.size}, {order.size}), one row and column per item"
            )
        shown[key] = matrix[np.ix_(order, order)]
    sorted_labels = as_labels(clusters, "clusters", order.size)[1][order]
    notes = {}
    if annotate:
        n_items = order.size
        for key in keys:
            matrix = shown[key]
            auc = pair_auc(matrix, sorted_labels)
            # Mean over the pairs of distinct items (fixed-order sums).
            mean = (float(np.sum(matrix)) - float(np.sum(np.diagonal(matrix)))) / (
                n_items * (n_items - 1)
            )
            notes[key] = f"AUC {auc:.3f}, mean {mean + 0.0:.3f}"
    # Block edges in display order: where the cluster label changes.
    edges = np.flatnonzero(sorted_labels[1:] != sorted_labels[:-1]) + 0.5
    n_rows = -(-len(keys) // n_cols)
    fig, axes = plt.subplots(n_rows, n_cols, figsize=(7.4, 2.45 * n_rows + 0.1), squeeze=False)
    for ax in axes.flat:
        ax.set_axis_off()
    image = None
    n_items = order.size
    for ax, key, title in zip(axes.flat, keys, titles, strict=False):
        # Every step-th item in display order, drawn in item coordinates (a panel is
        # about 500 pixels wide: finer cells would not show, and would make the page
        # heavier), in colour steps of 0.05. Each cell is one real pair: means over
        # tiles would turn noise of both signs into a false zero.
        step = -(-n_items // STATIC_CELLS)
        image = ax.imshow(
            shown[key][::step, ::step],
            cmap=_heatmap_colormap(_LEVELS),
            vmin=-1,
            vmax=1,
            interpolation="nearest",
            extent=(-0.5, n_items - 0.5, n_items - 0.5, -0.5),
        )
        ax.set_title(title.replace("obj. 1, ", "obj. 1: ").replace("V_k", "$V_k$"), fontsize=9)
        if boundaries:
            for edge in edges:
                ax.axhline(edge, color="0.15", lw=0.5)
                ax.axvline(edge, color="0.15", lw=0.5)
        if key in notes:
            ax.text(
                0.5, -0.03, notes[key], transform=ax.transAxes, ha="center", va="top", fontsize=9
            )
    if image is not None:
        fig.colorbar(image, ax=axes, shrink=0.7, label="item–item cosine")
    return fig


def plot_spectrum(
    singular_values: dict[str, ArrayLike],
    lam1: float,
    lam2: float,
    k: int | None = None,
) -> Figure:
    r"""Singular values of the data with the thresholds of objectives 1 and 2.

    Left, :math:`\sigma_i` against :math:`i` (log scale) for each data set, a
    horizontal line at :math:`\sigma = \sqrt{\lambda_1}`, where objective 1's
    shrinkage :math:`f_i = \sigma_i^2 / (\sigma_i^2 + \lambda_1)` is one half,
    and one at :math:`\sigma = \lambda_2`, below which objective 2 drops a
    dimension. Right, how much of each :math:`\sigma_i` the predictions keep:
    :math:`f_i` for objective 1 (solid) and :math:`(1 - \lambda_2 / \sigma_i)_+`
    for objective 2 (dashed). A dotted vertical line marks ``k``.

    Parameters
    ----------
    singular_values : dict from str to array_like of shape (m,)
        Nonnegative finite singular values, one array per data set (its name
        is the legend entry).
    lam1, lam2 : float
        Regularisation of objectives 1 and 2, positive.
    k : int, optional
        Embedding dimension to mark, at least 1.

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    ValueError
        If ``singular_values`` is empty or not a dict, an entry is not a
        nonnegative finite 1-D array, or ``lam1``, ``lam2`` or ``k`` is invalid.

    Examples
    --------
    >>> fig = plot_spectrum({"A": [300.0, 120.0, 40.0]}, lam1=1e4, lam2=100.0, k=2)
    >>> [ax.get_ylabel() for ax in fig.axes]
    ['singular value $\\sigma_i$', 'share of $\\sigma_i$ kept']
    >>> plt.close(fig)
    """
    if not isinstance(singular_values, dict) or not singular_values:
        raise ValueError(
            "singular_values must be a non-empty dict from a name to an array of "
            f"singular values; got {singular_values!r}"
        )
    lam1 = as_float_scalar(lam1, "lam1", positive=True)
    lam2 = as_float_scalar(lam2, "lam2", positive=True)
    if k is not None:
        k = as_int_scalar(k, "k", minimum=1)
    curves = {}
    for name, values in singular_values.items():
        sigma = as_real_array(values, f"singular_values[{name!r}]", ndim=1).astype(np.float64)
        if np.any(sigma < 0):
            raise ValueError(f"singular_values[{name!r}] has a negative entry; expected sigma >= 0")
        curves[name] = sigma
    fig, (left, right) = plt.subplots(1, 2, figsize=(7.4, 2.9), layout="constrained")
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for (name, sigma), colour in zip(curves.items(), itertools.cycle(colours)):
        index = np.arange(1, sigma.size + 1)
        shown = sigma > 0
        left.plot(index[shown], sigma[shown], ".", ms=3, color=colour, label=f"setting {name}")
        right.plot(index, dropout_shrinkage(sigma, lam1), color=colour, lw=1.2)
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
    left.set_yscale("log")
    left.set_xlabel("index i")
    left.set_ylabel(r"singular value $\sigma_i$")
    left.set_title("spectrum of X", fontsize=10)
    left.legend(fontsize=9, loc="upper right", bbox_to_anchor=(1.0, 0.9))
    right.plot([], [], color=grey, label=r"obj. 1: $f_i$")
    right.plot([], [], "--", color=grey, label=r"obj. 2: $(1 - \lambda_2/\sigma_i)_+$")
    right.set_ylim(-0.03, 1.03)
    right.set_xlabel("index i")
    right.set_ylabel(r"share of $\sigma_i$ kept")
    right.set_title("what the predictions keep", fontsize=10)
    right.legend(fontsize=9, loc="upper right")
    if k is not None:
        for ax in (left, right):
            ax.axvline(k, color=grey, lw=0.8, ls=":")
    return fig
