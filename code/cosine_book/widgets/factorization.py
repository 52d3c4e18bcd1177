r"""Chapter 6 widget: rescale the latent dimensions of objective 1 and watch the cosines move.

A :class:`~cosine_book.widgets.core.WidgetSpec` with two sliders,
:math:`\log_{10} \lambda` and :math:`\alpha`. Its state, :func:`rescaling_update` on
the :class:`RescalingState` of :func:`prepare_rescaling_state`, holds the cosines of the
item embeddings :math:`B_D = V_k \, \mathrm{diag}(f)^{1/2 - \alpha}` and the change of
the predictions against the starting :math:`\lambda` at :math:`\alpha = 0`; it is drawn
by :func:`cosine_book.plotting.factorization.rescaling_figure`. The HTML version offers
four values of :math:`\lambda` times five of :math:`\alpha` (20 frames). Chapter 6
imports the state functions from :mod:`cosine_book.factorization`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse
from numpy.typing import ArrayLike, NDArray

from cosine_book._validation import (
    as_float_array,
    as_float_scalar,
    as_int_scalar,
    as_labels,
    as_real_matrix,
)
from cosine_book.cluster_recovery import cluster_recovery
from cosine_book.factorization import (
    Matrix,
    RescalingUpdate,
    Spectrum,
    cosine_matrix,
    dropout_shrinkage,
    gram_spectrum,
)
from cosine_book.plotting.factorization import rescaling_figure
from cosine_book.widgets.core import LiveWidget, Slider, WidgetSpec

__all__ = [
    "RescalingState",
    "prepare_rescaling_state",
    "rescaling_readout",
    "rescaling_spec",
    "rescaling_update",
    "rescaling_widget",
]

# Values the HTML version offers (with the starting values): lam = 100 ... 100,000 and
# alpha from -1 to 1 in steps of 1/2 (exact binary fractions; each frame costs about
# 0.3 s of the chapter's execution).
_LOG_LAMS = (2.0, 3.0, 4.0, 5.0)
_ALPHAS = tuple(i / 2 for i in range(-2, 3))
# Relative changes of the predictions below this are shown as rounding level.
_ROUNDING_LEVEL = 1e-12


@dataclass(frozen=True)
class RescalingState:
    """Top ``k`` singular values and vectors, clusters and check users' rows of ``X``.

    Items in display order (by cluster, then by decreasing popularity), from
    :func:`prepare_rescaling_state`; ``cluster_index`` maps each to its sorted label.
    """

    singular_values: NDArray[np.float64]
    vectors: NDArray[np.float64]
    clusters: NDArray[Any]
    check_rows: NDArray[np.float64]
    cluster_index: NDArray[np.intp]


def prepare_rescaling_state(
    X: Matrix,
    item_clusters: ArrayLike,
    item_popularity: ArrayLike,
    k: int = 50,
    *,
    spectrum: Spectrum | None = None,
    n_check_users: int = 200,
    seed: int = 0,
) -> RescalingState:
    """What :func:`rescaling_update` needs, computed once (chapter 6).

    ``spectrum`` (:func:`~cosine_book.factorization.gram_spectrum` of ``X``) saves its
    computation; the ``n_check_users`` users whose predictions are compared are drawn
    with ``seed``.

    Examples
    --------
    >>> X = np.random.default_rng(0).integers(0, 2, size=(40, 12))
    >>> state = prepare_rescaling_state(X, np.arange(12) % 3, np.ones(12), k=4, n_check_users=5)
    >>> state.vectors.shape, state.check_rows.shape, state.clusters[:5].tolist()
    ((12, 4), (5, 12), [0, 0, 0, 0, 1])
    """
    X = as_real_matrix(X, "X", allow_sparse=True)
    n_users, n_items = X.shape
    k = as_int_scalar(k, "k", minimum=1, maximum=n_items)
    n_check_users = as_int_scalar(n_check_users, "n_check_users", minimum=1)
    seed = as_int_scalar(seed, "seed", minimum=0)
    popularity = as_float_array(item_popularity, "item_popularity", ndim=1)
    if popularity.size != n_items:
        raise ValueError(f"item_popularity has {popularity.size} entries; expected {n_items}")
    index = as_labels(item_clusters, "item_clusters", n_items)[1]
    counts = np.bincount(index)
    if counts.size < 2 or counts.max() < 2:
        raise ValueError(
            "item_clusters must put some pair of items in one cluster and some pair in "
            "different clusters; the cluster recovery (AUC) is undefined otherwise"
        )
    spectrum = gram_spectrum(X) if spectrum is None else spectrum
    if spectrum.vectors.shape[0] != n_items or spectrum.singular_values.size < k:
        raise ValueError(
            f"spectrum has {spectrum.singular_values.size} singular values for "
            f"{spectrum.vectors.shape[0]} items; expected the spectrum of X ({n_items} "
            f"items), with at least k = {k}"
        )
    order = np.lexsort((-popularity, index))
    users = np.random.default_rng(seed).choice(n_users, min(n_check_users, n_users), False)
    check = X[np.sort(users)]
    check = check.toarray() if scipy.sparse.issparse(check) else check
    return RescalingState(
        singular_values=spectrum.singular_values[:k].copy(),
        vectors=np.ascontiguousarray(spectrum.vectors[order, :k]),
        clusters=np.asarray(item_clusters)[order],
        check_rows=np.ascontiguousarray(check[:, order]),
        cluster_index=index[order],
    )


def _rescaled_factors(vectors: Any, shrink: Any, alpha: float) -> tuple[Any, Any]:
    """``V f^(1/2 + alpha) 2^s`` and ``V f^(1/2 - alpha) 2^-s``, powers as ``2**(p log2 f)``.

    The integer ``s`` cancels in ``A B^T`` and in cosines; it puts the largest column
    scale of the second factor in ``(1/2, 1]``, so both stay in range for large ``alpha``.
    """
    log_shrink = np.log2(shrink)
    with np.errstate(over="ignore", invalid="ignore"):
        a_exponents, b_exponents = (0.5 + alpha) * log_shrink, (0.5 - alpha) * log_shrink
        shift = math.ceil(float(np.max(b_exponents))) if np.isfinite(b_exponents).all() else 0
        a_scales, b_scales = np.exp2(a_exponents + shift), np.exp2(b_exponents - shift)
    if not (np.isfinite(a_scales).all() and np.isfinite(b_scales).all()):
        raise ValueError(f"alpha = {alpha!r} is beyond the float64 range; choose a smaller |alpha|")
    return vectors * a_scales, vectors * b_scales


def rescaling_update(
    state: RescalingState, lam: float, alpha: float, *, reference_lam: float | None = None
) -> RescalingUpdate:
    r"""Objective 1's item cosines and their cluster recovery under a rescaling (chapter 6).

    With :math:`f_i = \sigma_i^2 / (\sigma_i^2 + \lambda)` and
    :math:`D = \mathrm{diag}(f)^\alpha`: :math:`A_D = V_k \mathrm{diag}(f)^{1/2 + \alpha}`,
    :math:`B_D = V_k \mathrm{diag}(f)^{1/2 - \alpha}`, the same predictions for every
    :math:`\alpha`; these are compared with those at ``reference_lam`` (default ``lam``).
    The AUC is that of the cosines quantised to 4,096 levels (exact to about 1e-4).

    Examples
    --------
    >>> X = np.random.default_rng(0).integers(0, 2, size=(40, 12))
    >>> state = prepare_rescaling_state(X, np.arange(12) % 3, np.ones(12), k=4, n_check_users=5)
    >>> bool(rescaling_update(state, lam=5.0, alpha=0.5).max_prediction_change < 1e-12)
    True
    """
    _check_state(state)
    lam = as_float_scalar(lam, "lam", positive=True)
    alpha = as_float_scalar(alpha, "alpha")
    if reference_lam is None:
        reference_lam = lam
    reference_lam = as_float_scalar(reference_lam, "reference_lam", positive=True)
    shrink = dropout_shrinkage(state.singular_values, lam)
    if np.any(shrink == 0):
        zero = int(np.count_nonzero(shrink == 0))
        raise ValueError(f"{zero} of the top k singular values are zero (next to lam); lower k")
    A_D, B_D = _rescaled_factors(state.vectors, shrink, alpha)
    cosines = cosine_matrix(B_D)
    n_items = cosines.shape[0]
    reference = state.vectors * np.sqrt(dropout_shrinkage(state.singular_values, reference_lam))
    expected = (state.check_rows @ reference) @ reference.T
    change = float(np.max(np.abs((state.check_rows @ A_D) @ B_D.T - expected)))
    return RescalingUpdate(
        cosines=cosines,
        recovery=cluster_recovery(
            cosines, state.cluster_index, n_neighbours=min(10, n_items - 1), auc_bins=4096
        ),
        mean_cosine=(float(np.sum(cosines)) - n_items) / (n_items * (n_items - 1)),
        max_prediction_change=change / max(float(np.max(np.abs(expected))), np.finfo(float).tiny),
        lam=lam,
        alpha=alpha,
        reference_lam=reference_lam,
    )


def _check_state(state: Any) -> None:
    if not isinstance(state, RescalingState):
        raise ValueError(
            "state must be a RescalingState from prepare_rescaling_state; "
            f"got {type(state).__name__}"
        )


def _show_change(change: float) -> str:
    return f"< {_ROUNDING_LEVEL:.0e}" if change < _ROUNDING_LEVEL else f"{change:.1e}"


def rescaling_readout(update: RescalingUpdate) -> str:
    """The two lines under the heatmap: cluster recovery, then the change of the predictions.

    A relative change below ``1e-12`` reads ``< 1e-12`` (rounding level; its digits
    would differ between machines).

    Examples
    --------
    >>> X = np.random.default_rng(0).integers(0, 2, size=(40, 12))
    >>> state = prepare_rescaling_state(
    ...     X, np.arange(12) % 3, np.ones(12), k=4, n_check_users=5
    ... )
    >>> update = rescaling_update(state, 5.0, 0.5)
    >>> print(rescaling_readout(update))
    AUC 0.491   top-10 share 0.267   mean cosine 0.197
    max change of the predictions X A Bᵀ vs λ = 5, α = 0: < 1e-12
    """
    return (
        f"AUC {update.recovery.auc:.3f}   top-10 share {update.recovery.neighbour_share:.3f}   "
        f"mean cosine {round(update.mean_cosine, 3) + 0.0:.3f}\n"
        f"max change of the predictions X A Bᵀ vs λ = {update.reference_lam:,.0f}, α = 0: "
        f"{_show_change(update.max_prediction_change)}"
    )


def rescaling_spec(state: RescalingState, lam: float = 1e4, alpha: float = 0.0) -> WidgetSpec:
    """The chapter 6 widget: sliders for ``log10 lam`` and ``alpha`` over the cosine heatmap.

    Parameters
    ----------
    state : RescalingState
        From :func:`prepare_rescaling_state`.
    lam : float
        Starting regularisation, in ``[10, 1e6]``; the predictions of every
        setting are compared with those at ``lam`` and ``alpha = 0``.
    alpha : float
        Starting power of the rescaling, in ``[-1, 1]``.

    Returns
    -------
    WidgetSpec
        In ``grid`` mode: the HTML version offers ``lam`` in ``100, 1,000, 10,000,
        100,000`` (and the starting value) and ``alpha`` from -1 to 1 in steps of 0.5.

    Examples
    --------
    >>> X = np.random.default_rng(0).integers(0, 2, size=(40, 12))
    >>> state = prepare_rescaling_state(
    ...     X, np.arange(12) % 3, np.ones(12), k=4, n_check_users=5
    ... )
    >>> spec = rescaling_spec(state, lam=5.0)
    Traceback (most recent call last):
    ...
    ValueError: lam must lie in [10, 1e+06]; got 5.0
    >>> spec = rescaling_spec(state, lam=100.0)
    >>> len(spec.settings()), spec.state(log_lam=3.0, alpha=0.5).lam
    (20, 1000.0)
    """
    _check_state(state)
    lam = as_float_scalar(lam, "lam", interval=(10.0, 1e6))
    alpha = as_float_scalar(alpha, "alpha", interval=(-1.0, 1.0))
    start = math.log10(lam)

    def state_function(log_lam: float, alpha: float) -> RescalingUpdate:
        # The starting value exactly, whatever the rounding of 10 ** log10(lam).
        value = lam if log_lam == start else 10.0**log_lam
        return rescaling_update(state, value, alpha, reference_lam=lam)

    return WidgetSpec(
        name="rescaling",
        title="Objective 1: item–item cosines as α rescales the latent dimensions",
        controls=[
            Slider(
                "log_lam",
                "log₁₀ λ",
                1.0,
                6.0,
                0.1,
                start,
                static_values=_LOG_LAMS,
                readout_format=".1f",
                description="log₁₀ of the regularisation strength λ",
            ),
            Slider(
                "alpha",
                "α",
                -1.0,
                1.0,
                0.05,
                alpha,
                static_values=_ALPHAS,
                description="exponent α of the rescaling D = diag(f)^α",
            ),
        ],
        state=state_function,
        draw=rescaling_figure,
        readout=rescaling_readout,
        # The heatmap's 41 colour steps need more than 64 colours in each frame.
        colours=256,
    )


def rescaling_widget(state: RescalingState, lam: float = 1e4, alpha: float = 0.0) -> LiveWidget:
    """The chapter 6 widget: live in a kernel, kernel-free in the HTML book.

    See :func:`rescaling_spec` for the parameters.
    """
    return LiveWidget(rescaling_spec(state, lam, alpha))
