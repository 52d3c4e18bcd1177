r"""Chapter 6 widget: rescale the latent dimensions of objective 1 and watch the cosines move.

Sliders for :math:`\log_{10} \lambda` and :math:`\alpha`; the state holds the cosines of
the item embeddings :math:`B_D = V_k \operatorname{diag}(f)^{1/2 - \alpha}` in display
order, their cluster recovery, and the change of the predictions against the starting
:math:`\lambda` at :math:`\alpha = 0`. The HTML version offers four :math:`\lambda` times
five :math:`\alpha` (20 frames).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import scipy.sparse
from matplotlib.figure import Figure
from numpy.typing import ArrayLike, NDArray

from cosine_book._validation import (
    as_float_scalar,
    as_int_scalar,
    as_labels,
    as_real_array,
    as_real_matrix,
)
from cosine_book.cluster_recovery import ClusterRecovery, cluster_recovery
from cosine_book.factorization import gram_spectrum
from cosine_book.similarity import cosine_matrix
from cosine_book.widgets.core import LiveWidget, Slider, WidgetSpec

__all__ = ["rescaling_widget"]

DISPLAY_CELLS = 200  # cells per side of the heatmap: 1,000 items as means of 5 x 5


@dataclass(frozen=True)
class RescalingState:
    """Top ``k`` singular values and vectors, check users' rows; items in display order."""

    singular_values: NDArray[np.float64]
    vectors: NDArray[np.float64]
    check_rows: NDArray[np.float64]
    cluster_index: NDArray[np.intp]


@dataclass(frozen=True)
class RescalingUpdate:
    """What one setting shows: the cosines, their recovery, the change of the predictions."""

    cosines: NDArray[np.float64]
    recovery: ClusterRecovery
    mean_cosine: float
    max_prediction_change: float
    lam: float
    alpha: float
    reference_lam: float


def _state(
    X: Any, item_clusters: ArrayLike, item_popularity: ArrayLike, k: int, spectrum: Any = None
) -> RescalingState:
    """What every setting needs, once: items by cluster, then by decreasing popularity."""
    X = as_real_matrix(X, "X", allow_sparse=True)
    n_users, n_items = X.shape
    k = as_int_scalar(k, "k", minimum=1, maximum=n_items)
    popularity = as_real_array(item_popularity, "item_popularity", ndim=1).astype(np.float64)
    index = as_labels(item_clusters, "item_clusters", n_items)[1]
    if popularity.size != n_items:
        raise ValueError(f"item_popularity has {popularity.size} entries; expected {n_items}")
    spectrum = gram_spectrum(X) if spectrum is None else spectrum
    order = np.lexsort((-popularity, index))
    users = np.sort(np.random.default_rng(0).choice(n_users, min(200, n_users), False))
    check = X[users].toarray() if scipy.sparse.issparse(X) else X[users]
    return RescalingState(
        singular_values=spectrum.singular_values[:k].copy(),
        vectors=np.ascontiguousarray(spectrum.vectors[order, :k]),
        check_rows=np.ascontiguousarray(check[:, order]),
        cluster_index=index[order],
    )


def _update(
    state: RescalingState, lam: float, alpha: float, reference_lam: float
) -> RescalingUpdate:
    r"""Cosines of :math:`B_D` and the predictions of :math:`(A_D, B_D)` against ``reference_lam``.

    :math:`A_D = V_k \operatorname{diag}(f)^{1/2 + \alpha}`, :math:`B_D = V_k
    \operatorname{diag}(f)^{1/2 - \alpha}`, :math:`f_i = \sigma_i^2 / (\sigma_i^2 + \lambda)`;
    the AUC from the cosines quantised to 4,096 levels (within about 1e-4 of exact).
    """
    sigma2 = state.singular_values**2
    shrink = sigma2 / (sigma2 + lam)
    # Powers as 2**(p log2 f); the integer shift, which cancels in A B^T and in cosines,
    # puts the largest column scale of B_D in (1/2, 1].
    a_exponents, b_exponents = (0.5 + alpha) * np.log2(shrink), (0.5 - alpha) * np.log2(shrink)
    shift = math.ceil(float(np.max(b_exponents)))
    A_D = state.vectors * np.exp2(a_exponents + shift)
    B_D = state.vectors * np.exp2(b_exponents - shift)
    cosines = cosine_matrix(B_D)
    n = cosines.shape[0]
    reference = state.vectors * np.sqrt(sigma2 / (sigma2 + reference_lam))
    expected = (state.check_rows @ reference) @ reference.T
    change = np.max(np.abs((state.check_rows @ A_D) @ B_D.T - expected))
    return RescalingUpdate(
        cosines=cosines,
        recovery=cluster_recovery(cosines, state.cluster_index, min(10, n - 1), auc_bins=4096),
        mean_cosine=(float(np.sum(cosines)) - n) / (n * (n - 1)),
        max_prediction_change=float(change) / float(np.max(np.abs(expected))),
        lam=lam,
        alpha=alpha,
        reference_lam=reference_lam,
    )


def _readout(update: RescalingUpdate) -> str:
    """Cluster recovery, then the largest change of the predictions (below 1e-12: rounding)."""
    change = update.max_prediction_change
    shown = "< 1e-12" if change < 1e-12 else f"{change:.1e}"
    return (
        f"AUC {update.recovery.auc:.3f}   top-10 share {update.recovery.neighbour_share:.3f}   "
        f"mean cosine {round(update.mean_cosine, 3) + 0.0:.3f}\n"
        f"max change of the predictions X A Bᵀ vs λ = {update.reference_lam:,.0f}, α = 0: {shown}"
    )


def _downsample(matrix: NDArray[np.float64], cells: int) -> NDArray[np.float64]:
    """Means over at most ``cells`` x ``cells`` tiles of nearly equal size."""
    row_starts, col_starts = ((np.arange(min(cells, n)) * n) // min(cells, n) for n in matrix.shape)
    row_sizes = np.diff(np.append(row_starts, matrix.shape[0]))
    col_sizes = np.diff(np.append(col_starts, matrix.shape[1]))
    sums = np.add.reduceat(np.add.reduceat(matrix, row_starts, axis=0), col_starts, axis=1)
    return sums / np.multiply.outer(row_sizes, col_sizes)


def _figure(update: RescalingUpdate) -> Figure:
    """The cosine heatmap: 200 cells a side at two pixels a cell (80 dpi), 41 colour levels."""
    shown = _downsample(update.cosines, DISPLAY_CELLS)
    side = shown.shape[0] * 2 / 80  # inches
    left, bottom, top, right = 0.1, 0.3, 0.3, 1.0
    width, height = left + side + right, bottom + side + top
    fig = plt.figure(figsize=(width, height), layout="none")
    ax = fig.add_axes((left / width, bottom / height, side / width, side / height))
    image = ax.imshow(
        shown, cmap=plt.get_cmap("RdBu_r", 41), vmin=-1.0, vmax=1.0, interpolation="nearest"
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


def _spec(state: RescalingState, lam: float = 1e4, alpha: float = 0.0) -> WidgetSpec:
    """Sliders for ``log10 lam`` (HTML: 2 to 5) and ``alpha`` (HTML: -1 to 1 by 0.5)."""
    lam = as_float_scalar(lam, "lam", interval=(10.0, 1e6))
    alpha = as_float_scalar(alpha, "alpha", interval=(-1.0, 1.0))
    start = math.log10(lam)

    def state_function(log_lam: float, alpha: float) -> RescalingUpdate:
        # The starting value exactly, whatever the rounding of 10 ** log10(lam).
        return _update(state, lam if log_lam == start else 10.0**log_lam, alpha, lam)

    log_lam = Slider(
        "log_lam",
        "log₁₀ λ",
        1.0,
        6.0,
        0.1,
        start,
        static_values=(2.0, 3.0, 4.0, 5.0),
        readout_format=".1f",
        description="log₁₀ of the regularisation strength λ",
    )
    alphas = (-1.0, -0.5, 0.0, 0.5, 1.0)
    description = "exponent α of the rescaling D = diag(f)^α"
    return WidgetSpec(
        name="rescaling",
        title="Objective 1: item–item cosines as α rescales the latent dimensions",
        controls=[
            log_lam,
            Slider("alpha", "α", -1.0, 1.0, 0.05, alpha, alphas, description=description),
        ],
        state=state_function,
        draw=_figure,
        readout=_readout,
        colours=256,  # the heatmap's 41 colour levels need more than 64 colours a frame
    )


def rescaling_widget(
    X: Any,
    item_clusters: ArrayLike,
    item_popularity: ArrayLike,
    k: int = 50,
    *,
    spectrum: Any = None,
    lam: float = 1e4,
    alpha: float = 0.0,
) -> LiveWidget:
    """The chapter 6 widget on ``X`` (``spectrum``: its :func:`gram_spectrum`, if known).

    Starts at ``lam`` in [10, 1e6] and ``alpha`` in [-1, 1]; every setting's predictions
    are compared with those at ``lam`` and ``alpha = 0``. Used in chapter 6.
    """
    state = _state(X, item_clusters, item_popularity, k, spectrum)
    return LiveWidget(_spec(state, lam, alpha))
