"""Chapter 6 widget: rescale the latent dimensions of objective 1 and watch the cosines move.

The embedding family is ``B_D = B_hat D^{-1}`` with ``B_hat = V_k diag(f)^{1/2}``,
``f_i = 1 / (1 + lam / sigma_i^2)`` and ``D = diag(f)^alpha``: so ``B_D = V_k
diag(f)^{1/2 - alpha}``. The predictions ``X A_D B_D^T`` do not depend on ``alpha``;
the item-item cosines do.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from numpy.typing import ArrayLike, NDArray

from cosine_book._validation import as_float_scalar, as_int_scalar, as_real_matrix
from cosine_book.factorization import (
    ClusterRecovery,
    Spectrum,
    cluster_order,
    cluster_recovery,
    cosine_matrix,
    dropout_shrinkage,
    gram_spectrum,
)

# The widget's AUC uses quantised cosines: exact to about 1e-4, several times faster.
_AUC_BINS = 4096
# The heatmap shows 2 x 2 block means: one screen pixel per shown cell.
_DISPLAY_BLOCK = 2

__all__ = [
    "RescalingState",
    "RescalingUpdate",
    "plot_cosine_heatmaps",
    "prepare_rescaling_state",
    "rescaling_update",
    "rescaling_widget",
]


@dataclass(frozen=True)
class RescalingState:
    """Everything a widget update needs, computed once.

    Attributes
    ----------
    singular_values : ndarray of shape (k,)
        Top ``k`` singular values of ``X``.
    vectors : ndarray of shape (n_items, k)
        Top ``k`` right singular vectors, rows in display order (cluster, then popularity).
    clusters : ndarray of shape (n_items,)
        Cluster labels in display order.
    check_rows : ndarray of shape (n_check_users, n_items)
        Dense rows of ``X`` (columns in display order) on which predictions are compared.
    """

    singular_values: NDArray[np.float64]
    vectors: NDArray[np.float64]
    clusters: NDArray[Any]
    check_rows: NDArray[np.float64]


@dataclass(frozen=True)
class RescalingUpdate:
    """Result of one widget update.

    Attributes
    ----------
    cosines : ndarray of shape (n_items, n_items)
        Item-item cosines of ``B_D``, items in display order.
    recovery : ClusterRecovery
        AUC and top-10 neighbour share of ``cosines`` against the clusters (the AUC
        from cosines quantised to 4,096 levels, which keeps an update fast).
    mean_cosine : float
        Mean off-diagonal item-item cosine.
    max_prediction_change : float
        ``max |X A_D B_D^T - X A_0 B_0^T|`` over the check users, relative to the
        largest prediction at ``alpha = 0``.
    """

    cosines: NDArray[np.float64]
    recovery: ClusterRecovery
    mean_cosine: float
    max_prediction_change: float


def prepare_rescaling_state(
    X: Any,
    item_clusters: Any,
    item_popularity: Any,
    k: int = 50,
    *,
    spectrum: Spectrum | None = None,
    n_check_users: int = 200,
    seed: int = 0,
) -> RescalingState:
    """Precompute the spectrum and display order for :func:`rescaling_update`.

    Parameters
    ----------
    X : array_like or scipy.sparse matrix of shape (n_users, n_items)
    item_clusters, item_popularity : array_like of shape (n_items,)
    k : int
        Embedding dimension.
    spectrum : Spectrum, optional
        Precomputed :func:`~cosine_book.factorization.gram_spectrum` of ``X``.
    n_check_users : int
        Number of users (drawn at random with ``seed``) whose predictions are compared.
    seed : int

    Returns
    -------
    RescalingState

    Examples
    --------
    >>> X = np.random.default_rng(0).integers(0, 2, size=(40, 12))
    >>> state = prepare_rescaling_state(X, np.arange(12) % 3, np.ones(12), k=4, n_check_users=5)
    >>> state.vectors.shape, state.check_rows.shape
    ((12, 4), (5, 12))
    """
    X = as_real_matrix(X, "X", allow_sparse=True)
    n_users, n_items = X.shape
    k = as_int_scalar(k, "k", minimum=1, maximum=n_items)
    n_check_users = as_int_scalar(n_check_users, "n_check_users", minimum=1)
    spectrum = gram_spectrum(X) if spectrum is None else spectrum
    if spectrum.vectors.shape[0] != n_items:
        raise ValueError(
            f"spectrum is for {spectrum.vectors.shape[0]} items but X has {n_items} columns"
        )
    order = cluster_order(item_clusters, item_popularity)
    if order.size != n_items:
        raise ValueError(f"expected {n_items} cluster labels, got {order.size}")
    rng = np.random.default_rng(seed)
    users = np.sort(rng.choice(n_users, size=min(n_check_users, n_users), replace=False))
    rows = X[users]
    rows = rows.toarray() if hasattr(rows, "toarray") else np.asarray(rows)
    clusters = np.asarray(item_clusters)[order]
    return RescalingState(
        singular_values=spectrum.singular_values[:k].copy(),
        vectors=np.ascontiguousarray(spectrum.vectors[order, :k]),
        clusters=clusters,
        check_rows=np.ascontiguousarray(rows[:, order]),
    )


def rescaling_update(state: RescalingState, lam: float, alpha: float) -> RescalingUpdate:
    """Item-item cosines and their cluster recovery for ``D = diag(f)^alpha``.

    Parameters
    ----------
    state : RescalingState
    lam : float
        Regularisation of objective 1, positive.
    alpha : float
        Power of the rescaling; ``alpha = 1/2`` gives ``B_D = V_k``, ``alpha = -1/2``
        gives ``A_D = V_k``.

    Returns
    -------
    RescalingUpdate

    Examples
    --------
    >>> X = np.random.default_rng(0).integers(0, 2, size=(40, 12))
    >>> state = prepare_rescaling_state(X, np.arange(12) % 3, np.ones(12), k=4, n_check_users=5)
    >>> update = rescaling_update(state, lam=5.0, alpha=0.5)
    >>> bool(update.max_prediction_change < 1e-12)
    True
    """
    lam = as_float_scalar(lam, "lam", positive=True)
    alpha = as_float_scalar(alpha, "alpha")
    shrink = dropout_shrinkage(state.singular_values, lam)
    if np.any(shrink == 0):
        raise ValueError("some of the top k singular values are zero; lower k")
    V = state.vectors
    # A_D = V diag(f)^(1/2 + alpha), B_D = V diag(f)^(1/2 - alpha).
    B_D = V * shrink ** (0.5 - alpha)
    A_D = V * shrink ** (0.5 + alpha)
    cosines = cosine_matrix(B_D)
    recovery = cluster_recovery(cosines, state.clusters, 10, auc_bins=_AUC_BINS)
    n_items = cosines.shape[0]
    mean_cosine = (cosines.sum() - n_items) / (n_items * (n_items - 1))
    reference_factor = V * np.sqrt(shrink)  # alpha = 0: A_0 = B_0
    reference = (state.check_rows @ reference_factor) @ reference_factor.T
    predictions = (state.check_rows @ A_D) @ B_D.T
    scale = max(float(np.abs(reference).max()), np.finfo(float).tiny)
    change = float(np.abs(predictions - reference).max()) / scale
    return RescalingUpdate(cosines, recovery, float(mean_cosine), change)


def _block_mean(matrix: NDArray[np.float64], block: int) -> NDArray[np.float64]:
    """Average over ``block x block`` tiles (trailing rows/columns that do not fill a tile drop)."""
    rows, cols = (matrix.shape[0] // block) * block, (matrix.shape[1] // block) * block
    tiles = matrix[:rows, :cols].reshape(rows // block, block, cols // block, block)
    return tiles.mean(axis=(1, 3))


class _RescalingView:
    """The heatmap and text panel of the widget, updated in place.

    The static parts (axes, colour bar, labels) are drawn once; an update sets the
    image data, redraws only the image over the saved background and re-encodes the
    canvas as JPEG.
    """

    def __init__(self, state: RescalingState, lam: float, alpha: float, dpi: float = 100.0):
        import ipywidgets

        self.state = state
        update = rescaling_update(state, lam, alpha)
        shown = _block_mean(update.cosines, _DISPLAY_BLOCK)
        side = shown.shape[0] / dpi  # inches, so that one shown cell is one pixel
        self.figure = Figure(figsize=(side + 1.3, side + 0.45), dpi=dpi, layout="none")
        FigureCanvasAgg(self.figure)
        width, height = self.figure.get_size_inches()
        ax = self.figure.add_axes((0.15 / width, 0.35 / height, side / width, side / height))
        self.image = ax.imshow(
            shown, cmap="RdBu_r", vmin=-1.0, vmax=1.0, interpolation="nearest", animated=True
        )
        ax.set_xticks([])
        ax.set_yticks([])
        ax.grid(False)
        ax.set_xlabel("items, sorted by cluster then popularity", fontsize=9)
        colorbar_ax = self.figure.add_axes(
            ((side + 0.3) / width, 0.35 / height, 0.15 / width, side / height)
        )
        self.figure.colorbar(self.image, cax=colorbar_ax, label="item-item cosine")
        self.figure.canvas.draw()
        self.background = self.figure.canvas.copy_from_bbox(ax.bbox)
        self.axes = ax
        self.picture = ipywidgets.Image(format="jpeg")
        self.panel = ipywidgets.HTML()
        self.show(update, lam, alpha)

    def show(self, update: RescalingUpdate, lam: float, alpha: float) -> None:
        from PIL import Image  # a dependency of Matplotlib

        canvas = self.figure.canvas
        self.image.set_data(_block_mean(update.cosines, _DISPLAY_BLOCK))
        canvas.restore_region(self.background)
        self.axes.draw_artist(self.image)
        buffer = io.BytesIO()
        # JPEG encodes about ten times faster than PNG and is a sixth of the size.
        Image.fromarray(np.asarray(canvas.buffer_rgba())[..., :3]).save(
            buffer, format="jpeg", quality=92
        )
        self.picture.value = buffer.getvalue()
        self.panel.value = (
            f"<b>objective 1, λ = {lam:,.0f}, D = diag(1/(1+λ/σ²))<sup>{alpha:+.2f}</sup></b>"
            '<table style="margin-left: 0">'
            f"<tr><td>AUC, same vs different cluster</td><td>{update.recovery.auc:.3f}</td></tr>"
            "<tr><td>top-10 neighbours in same cluster</td>"
            f"<td>{update.recovery.neighbour_share:.3f}</td></tr>"
            f"<tr><td>mean item-item cosine</td><td>{update.mean_cosine:.3f}</td></tr>"
            "<tr><td><b>max change of predictions X A B<sup>T</sup> vs α = 0</b></td>"
            f"<td><b>{update.max_prediction_change:.1e}</b></td></tr>"
            "</table>"
        )

    def redraw(self, lam: float, alpha: float) -> RescalingUpdate:
        update = rescaling_update(self.state, lam, alpha)
        self.show(update, lam, alpha)
        return update


def rescaling_widget(state: RescalingState, lam: float = 1e4, alpha: float = 0.0) -> Any:
    """Sliders for ``lam`` (log scale) and ``alpha`` in ``[-1, 1]`` over the cosine heatmap.

    Parameters
    ----------
    state : RescalingState
        From :func:`prepare_rescaling_state`.
    lam : float
        Initial regularisation.
    alpha : float
        Initial rescaling power.

    Returns
    -------
    ipywidgets.VBox

    Examples
    --------
    >>> X = np.random.default_rng(0).integers(0, 2, size=(40, 12))
    >>> state = prepare_rescaling_state(X, np.arange(12) % 3, np.ones(12), k=4, n_check_users=5)
    >>> type(rescaling_widget(state, lam=5.0)).__name__
    'VBox'
    """
    import ipywidgets

    view = _RescalingView(state, lam, alpha)
    lam_slider = ipywidgets.FloatLogSlider(
        value=lam, base=10, min=1, max=6, step=0.1, description="λ", continuous_update=False
    )
    alpha_slider = ipywidgets.FloatSlider(
        value=alpha, min=-1.0, max=1.0, step=0.05, description="α", continuous_update=False
    )

    def on_change(_: Any) -> None:
        view.redraw(lam_slider.value, alpha_slider.value)

    lam_slider.observe(on_change, names="value")
    alpha_slider.observe(on_change, names="value")
    return ipywidgets.VBox([ipywidgets.HBox([lam_slider, alpha_slider]), view.panel, view.picture])


def plot_cosine_heatmaps(
    similarities: dict[str, NDArray[np.float64]],
    keys: list[str],
    clusters: ArrayLike,
    popularity: ArrayLike,
    titles: list[str] | None = None,
    n_cols: int = 3,
) -> Figure:
    """Item-item cosine heatmaps in a grid, items sorted by cluster then popularity.

    The layout of the paper's Figure 1: one panel per similarity, a shared
    red-blue colour scale on ``[-1, 1]`` and one colour bar.

    Parameters
    ----------
    similarities : dict from str to ndarray of shape (n_items, n_items)
        For example the result of :func:`cosine_book.factorization.item_similarity_suite`.
    keys : list of str
        Which similarities to show, in reading order.
    clusters, popularity : array_like of shape (n_items,)
        Item clusters and popularity, for the display order.
    titles : list of str, optional
        Panel titles; default ``keys``.
    n_cols : int
        Panels per row.

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    ValueError
        If a key is missing, ``titles`` has the wrong length or ``n_cols < 1``.

    Examples
    --------
    >>> truth = np.kron(np.eye(2), np.ones((2, 2)))
    >>> fig = plot_cosine_heatmaps({"truth": truth}, ["truth"], [0, 0, 1, 1], [4, 3, 2, 1])
    >>> [ax.get_title() for ax in fig.axes[:1]]
    ['truth']
    >>> plt.close(fig)
    """
    missing = [key for key in keys if key not in similarities]
    if missing:
        raise ValueError(f"no similarity named {missing}; available: {sorted(similarities)}")
    titles = list(keys) if titles is None else list(titles)
    if len(titles) != len(keys):
        raise ValueError(f"got {len(titles)} titles for {len(keys)} panels; expected one each")
    if n_cols < 1:
        raise ValueError(f"n_cols must be at least 1; got {n_cols}")
    order = cluster_order(clusters, popularity)
    n_rows = -(-len(keys) // n_cols)
    fig, axes = plt.subplots(n_rows, n_cols, figsize=(7.4, 2.45 * n_rows + 0.1), squeeze=False)
    for ax in axes.flat:
        ax.set_axis_off()
    for ax, key, title in zip(axes.flat, keys, titles, strict=False):
        shown = similarities[key][np.ix_(order, order)]
        image = ax.imshow(shown, cmap="RdBu_r", vmin=-1, vmax=1, interpolation="antialiased")
        ax.set_title(title.replace("obj. 1, ", "obj. 1: ").replace("V_k", "$V_k$"), fontsize=9)
    fig.colorbar(image, ax=axes, shrink=0.7, label="item–item cosine")
    return fig
