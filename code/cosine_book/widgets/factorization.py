r"""Chapter 6 widget: rescale the latent dimensions of objective 1 and watch the cosines move.

A :class:`~cosine_book.widgets.core.WidgetSpec` with two sliders,
:math:`\log_{10} \lambda` and :math:`\alpha`; its state function is
:func:`cosine_book.factorization.rescaling_update` on a
:class:`~cosine_book.factorization.RescalingState` (item embeddings
:math:`B_D = V_k \, \mathrm{diag}(f)^{1/2 - \alpha}`, with predictions compared
against those of the widget's starting :math:`\lambda` at :math:`\alpha = 0`),
and its drawing function is
:func:`cosine_book.plotting.factorization.rescaling_figure`. The HTML version
offers every combination of four values of :math:`\lambda` and five of
:math:`\alpha` (20 frames).
"""

from __future__ import annotations

import math

from cosine_book._validation import as_float_scalar
from cosine_book.factorization import RescalingState, RescalingUpdate, rescaling_update
from cosine_book.plotting.factorization import rescaling_figure
from cosine_book.widgets.core import LiveWidget, Slider, WidgetSpec

__all__ = ["rescaling_readout", "rescaling_spec", "rescaling_widget"]

# Values the HTML version offers (with the starting values): lam = 100 ... 100,000 and
# alpha from -1 to 1 in steps of 1/2 (exact binary fractions; each frame costs about
# 0.3 s of the chapter's execution).
_LOG_LAMS = (2.0, 3.0, 4.0, 5.0)
_ALPHAS = tuple(i / 2 for i in range(-2, 3))
# Relative changes of the predictions below this are shown as rounding level.
_ROUNDING_LEVEL = 1e-12


def _show_change(change: float) -> str:
    return f"< {_ROUNDING_LEVEL:.0e}" if change < _ROUNDING_LEVEL else f"{change:.1e}"


def rescaling_readout(update: RescalingUpdate) -> str:
    """The two lines under the heatmap: cluster recovery, then the change of the predictions.

    A relative change below ``1e-12`` reads ``< 1e-12`` (rounding level; its digits
    would differ between machines).

    Examples
    --------
    >>> import numpy as np
    >>> from cosine_book.factorization import (
    ...     prepare_rescaling_state,
    ...     rescaling_update,
    ... )
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
        From :func:`cosine_book.factorization.prepare_rescaling_state`.
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
    >>> import numpy as np
    >>> from cosine_book.factorization import prepare_rescaling_state
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
    if not isinstance(state, RescalingState):
        raise ValueError(
            "state must be a RescalingState from prepare_rescaling_state; "
            f"got {type(state).__name__}"
        )
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
