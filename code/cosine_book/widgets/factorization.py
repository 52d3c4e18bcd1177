r"""Chapter 6 widget: rescale the latent dimensions of objective 1 and watch the cosines move.

Sliders for :math:`\log_{10} \lambda` and :math:`\alpha`; the state holds the cosines of
the item embeddings :math:`B_D = V_k \operatorname{diag}(f)^{1/2 - \alpha}` in display
order, their cluster recovery, and the change of the predictions against the starting
:math:`\lambda` at :math:`\alpha = 0`. The HTML version offers 4 x 5 settings.
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


def _update(
    vectors: NDArray,
    sigma: NDArray,
    check: NDArray,
    index: NDArray,
    lam: float,
    alpha: float,
    reference_lam: float,
) -> RescalingUpdate:
    """A_D = V_k diag(f)^(1/2 + alpha), B_D = V_k diag(f)^(1/2 - alpha), on the rows ``check``."""
    shrink = sigma**2 / (sigma**2 + lam)
    # Powers as 2**(p log2 f); the integer shift, which cancels in A B^T and in cosines,
    # puts the largest column scale of B_D in (1/2, 1].
    a_exponents, b_exponents = (0.5 + alpha) * np.log2(shrink), (0.5 - alpha) * np.log2(shrink)
    shift = math.ceil(float(np.max(b_exponents)))
    A_D = vectors * np.exp2(a_exponents + shift)
    B_D = vectors * np.exp2(b_exponents - shift)
    cosines = cosine_matrix(B_D)
    n = cosines.shape[0]
    reference = vectors * np.sqrt(sigma**2 / (sigma**2 + reference_lam))
    expected = (check @ reference) @ reference.T
    change = np.max(np.abs((check @ A_D) @ B_D.T - expected))
    return RescalingUpdate(
        cosines=cosines,
        # AUC from 4,096 levels of the cosines: within about 1e-4 of exact, and faster
        recovery=cluster_recovery(cosines, index, min(10, n - 1), auc_bins=4096),
        mean_cosine=(float(np.sum(cosines)) - n) / (n * (n - 1)),
        max_prediction_change=float(change) / float(np.max(np.abs(expected))),
        lam=lam,
        alpha=alpha,
        reference_lam=reference_lam,
    )


def _readout(update: RescalingUpdate) -> str:
    change = update.max_prediction_change
    shown = "< 1e-12" if change < 1e-12 else f"{change:.1e}"  # rounding level: no digits
    return (
        f"AUC {update.recovery.auc:.3f}   top-10 share {update.recovery.neighbour_share:.3f}   "
        f"mean cosine {round(update.mean_cosine, 3) + 0.0:.3f}\n"
        f"max change of the predictions X A Bᵀ vs λ = {update.reference_lam:,.0f}, α = 0: {shown}"
    )


def _figure(update: RescalingUpdate) -> Figure:
    """Means over tiles, at most 200 a side, at two pixels a tile (80 dpi); 41 colour levels."""
    S = update.cosines
    starts = [(np.arange(min(200, n)) * n) // min(200, n) for n in S.shape]
    sizes = [np.diff(np.append(s, n)) for s, n in zip(starts, S.shape, strict=True)]
    sums = np.add.reduceat(np.add.reduceat(S, starts[0], axis=0), starts[1], axis=1)
    shown = sums / np.multiply.outer(*sizes)
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


def rescaling_widget(
    X: Any,
    item_clusters: ArrayLike,
    item_popularity: ArrayLike,
    k: int = 50,
    *,
    spectrum: Any = None,
) -> LiveWidget:
    """The chapter 6 widget on ``X`` (``spectrum``: its ``gram_spectrum``, if known).

    Starts at lambda = 10,000 and alpha = 0, against which every setting's predictions are
    compared on 200 random users. Items are shown by cluster, then by decreasing
    popularity. Used in chapter 6.
    """
    X = as_real_matrix(X, "X", allow_sparse=True)
    n_users, n_items = X.shape
    k = as_int_scalar(k, "k", minimum=1, maximum=n_items)
    index = as_labels(item_clusters, "item_clusters", n_items)[1]
    popularity = as_real_array(item_popularity, "item_popularity", ndim=1).astype(np.float64)
    if popularity.size != n_items:
        raise ValueError(f"item_popularity has {popularity.size} entries; expected {n_items}")
    spectrum = gram_spectrum(X) if spectrum is None else spectrum
    if spectrum.singular_values[k - 1] <= 1e-7 * spectrum.singular_values[0]:
        raise ValueError(f"X has rank below k = {k} (sigma_k is at rounding level); lower k")
    order = np.lexsort((-popularity, index))
    users = np.sort(np.random.default_rng(0).choice(n_users, min(200, n_users), False))
    check = X[users].toarray() if scipy.sparse.issparse(X) else X[users]
    state = (
        np.ascontiguousarray(spectrum.vectors[order, :k]),
        spectrum.singular_values[:k],
        np.ascontiguousarray(check[:, order]),
        index[order],
    )

    def state_function(log_lam: float, alpha: float) -> RescalingUpdate:
        return _update(*state, 10.0**log_lam, alpha, 1e4)

    description = "log₁₀ of the regularisation strength λ"
    log_lam = Slider(
        "log_lam", "log₁₀ λ", 1.0, 6.0, 0.1, 4.0, (2.0, 3.0, 4.0, 5.0), ".1f", description
    )
    description = "exponent α of the rescaling D = diag(f)^α"
    alphas = Slider(
        "alpha", "α", -1.0, 1.0, 0.05, 0.0, (-1.0, -0.5, 0.0, 0.5, 1.0), description=description
    )
    spec = WidgetSpec(
        name="rescaling",
        title="Objective 1: item–item cosines as α rescales the latent dimensions",
        controls=[log_lam, alphas],
        state=state_function,
        draw=_figure,
        readout=_readout,
        colours=256,  # the heatmap's 41 colour levels need more than 64 colours a frame
    )
    return LiveWidget(spec)
