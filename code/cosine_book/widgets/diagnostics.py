r"""Chapter 7 widget: strengthen a shared mean direction and watch every cosine rise.

A :class:`~cosine_book.widgets.core.WidgetSpec` with one slider, the strength
:math:`t` of a direction shared by every embedding: row :math:`i` becomes
:math:`(\boldsymbol{e}_i - \bar{\boldsymbol{e}}) + t\,\nu\,\hat{\boldsymbol{m}}`, with
:math:`\nu` the typical norm of the centred rows
(:func:`cosine_book.diagnostics.with_shared_direction`). Its state,
:class:`SharedDirectionFrame`, is :func:`cosine_book.diagnostics.shared_direction_update`
(histograms of the cosines of related and unrelated pairs, raw and centred, the
mean cosine, the top-:math:`k` neighbour agreement) with what a threshold cannot
hide: the threshold-free pair AUC (:func:`cosine_book.embeddings.pair_auc`) and the
share of *related* pairs that pass the threshold beside that of unrelated ones. Its
drawing function is :func:`cosine_book.plotting.diagnostics.shared_direction_figure`.
The HTML version offers :math:`t = 0, 0.25, \dots, 3` (13 frames).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from cosine_book._validation import as_float_scalar
from cosine_book.diagnostics import (
    SWEEP_STRENGTHS,
    SharedDirectionSetup,
    SharedDirectionState,
    centered_cosine_matrix,
    related_pair_cosines,
    shared_direction_update,
    with_shared_direction,
)
from cosine_book.embeddings import pair_auc
from cosine_book.factorization import cosine_matrix
from cosine_book.plotting.diagnostics import shared_direction_figure
from cosine_book.widgets.core import LiveWidget, Slider, WidgetSpec

__all__ = [
    "SharedDirectionFrame",
    "shared_direction_frame",
    "shared_direction_readout",
    "shared_direction_spec",
    "shared_direction_widget",
]


@dataclass(frozen=True)
class SharedDirectionFrame:
    """What the chapter 7 widget shows at one strength (:func:`shared_direction_frame`).

    Attributes
    ----------
    state : SharedDirectionState
        Histograms, mean cosine, false matches and neighbour agreement, raw and
        centred, with their sweep (:func:`cosine_book.diagnostics.shared_direction_update`).
    auc, centred_auc : float
        :func:`cosine_book.embeddings.pair_auc` of the raw and of the centred cosines.
    related_above, centred_related_above : float
        Share of the related pairs whose cosine is at least ``state.threshold``.
    sweep_auc, sweep_related_above : ndarray
        ``auc`` and ``related_above`` at every strength of ``state.sweep_strengths``.
    """

    state: SharedDirectionState
    auc: float
    centred_auc: float
    related_above: float
    centred_related_above: float
    sweep_auc: NDArray[np.float64]
    sweep_related_above: NDArray[np.float64]


def _separation(cosines: NDArray[np.float64], setup: SharedDirectionSetup) -> tuple[float, float]:
    """Pair AUC, and the share of related pairs at or above the threshold."""
    related, _ = related_pair_cosines(cosines, setup.label_index)
    above = float(np.mean(related >= setup.base.threshold))
    return pair_auc(cosines, setup.label_index), above


def _raw_separation(setup: SharedDirectionSetup, strength: float) -> tuple[float, float]:
    return _separation(cosine_matrix(with_shared_direction(setup.embeddings, strength)), setup)


def shared_direction_frame(
    setup: SharedDirectionSetup, strength: float, *, sweep: SharedDirectionFrame | None = None
) -> SharedDirectionFrame:
    r"""The widget's state at strength :math:`t \ge 0`.

    Parameters
    ----------
    setup : SharedDirectionSetup
        From :func:`cosine_book.diagnostics.prepare_shared_direction`.
    strength : float
        Finite and nonnegative.
    sweep : SharedDirectionFrame, optional
        A frame of the same ``setup`` whose sweep and centred values to reuse
        (they do not depend on the strength); computed if omitted.

    Examples
    --------
    >>> from cosine_book.diagnostics import prepare_shared_direction
    >>> labels = np.repeat([0, 1], 10)
    >>> E = np.random.default_rng(0).normal(size=(20, 4)) + 3.0 * labels[:, None]
    >>> setup = prepare_shared_direction(E, labels, k=3)
    >>> frame = shared_direction_frame(setup, 3.0)
    >>> frame.related_above, frame.state.unrelated_above, round(frame.centred_auc, 2)
    (1.0, 1.0, 1.0)
    """
    if not isinstance(setup, SharedDirectionSetup):
        raise ValueError(
            "setup must be a SharedDirectionSetup from prepare_shared_direction; "
            f"got {type(setup).__name__}"
        )
    strength = as_float_scalar(strength, "strength", nonnegative=True)
    if sweep is None:
        centred = _separation(centered_cosine_matrix(setup.embeddings), setup)
        values = np.array([_raw_separation(setup, t) for t in SWEEP_STRENGTHS])
        sweep_auc, sweep_above = values[:, 0], values[:, 1]
    else:
        centred = (sweep.centred_auc, sweep.centred_related_above)
        sweep_auc, sweep_above = sweep.sweep_auc, sweep.sweep_related_above
    if strength in SWEEP_STRENGTHS:
        position = SWEEP_STRENGTHS.index(strength)
        raw = (float(sweep_auc[position]), float(sweep_above[position]))
    else:
        raw = _raw_separation(setup, strength)
    return SharedDirectionFrame(
        state=shared_direction_update(setup, strength),
        auc=raw[0],
        centred_auc=centred[0],
        related_above=raw[1],
        centred_related_above=centred[1],
        sweep_auc=sweep_auc,
        sweep_related_above=sweep_above,
    )


def shared_direction_readout(frame: SharedDirectionFrame) -> str:
    """Three lines under the figure: mean cosine and pair AUC, pass rates, neighbour agreement.

    Examples
    --------
    >>> from cosine_book.diagnostics import prepare_shared_direction
    >>> labels = np.repeat([0, 1], 10)
    >>> E = np.random.default_rng(0).normal(size=(20, 4)) + 3.0 * labels[:, None]
    >>> setup = prepare_shared_direction(E, labels, k=3)
    >>> print(shared_direction_readout(shared_direction_frame(setup, 1.0)))
    t = 1.00: mean cosine 0.387; pair AUC 0.674 raw, 1.000 centred
    share ≥ 0.5, related / unrelated: 64.4% / 49.0% raw, 91.1% / 0.0% centred
    top-3 label agreement 0.750 raw, 1.000 centred
    """
    state = frame.state
    return (
        f"t = {state.strength:.2f}: mean cosine {state.mean_cosine:.3f}; "
        f"pair AUC {frame.auc:.3f} raw, {frame.centred_auc:.3f} centred\n"
        f"share ≥ {state.threshold:g}, related / unrelated: {frame.related_above:.1%} / "
        f"{state.unrelated_above:.1%} raw, {frame.centred_related_above:.1%} / "
        f"{state.centred_unrelated_above:.1%} centred\n"
        f"top-{state.k} label agreement {state.agreement:.3f} raw, "
        f"{state.centred_agreement:.3f} centred"
    )


def shared_direction_spec(
    setup: SharedDirectionSetup, *, strength: float = 0.0, name: str = ""
) -> WidgetSpec:
    """The chapter 7 widget: one slider for the strength of a shared mean direction.

    Parameters
    ----------
    setup : SharedDirectionSetup
        From :func:`cosine_book.diagnostics.prepare_shared_direction`.
    strength : float
        Starting strength, one of :data:`~cosine_book.diagnostics.SWEEP_STRENGTHS`
        (the values the HTML version offers).
    name : str
        Text after "Embeddings" in the title (for example which model made them).

    Returns
    -------
    WidgetSpec

    Examples
    --------
    >>> from cosine_book.diagnostics import prepare_shared_direction
    >>> labels = np.repeat([0, 1], 10)
    >>> E = np.random.default_rng(0).normal(size=(20, 4)) + 3.0 * labels[:, None]
    >>> spec = shared_direction_spec(prepare_shared_direction(E, labels, k=3))
    >>> len(spec.settings()), spec.state(strength=0.5).state.strength
    (13, 0.5)
    """
    strength = as_float_scalar(strength, "strength", nonnegative=True)
    if strength not in SWEEP_STRENGTHS:
        raise ValueError(f"strength must be one of {SWEEP_STRENGTHS}; got {strength}")
    sweep = shared_direction_frame(setup, 0.0)  # the parts every frame shares, once

    def state_function(strength: float) -> SharedDirectionFrame:
        return shared_direction_frame(setup, strength, sweep=sweep)

    title = "Embeddings" + (f" {name}" if name else "") + " plus a shared direction of strength t"
    return WidgetSpec(
        name="shared-direction",
        title=title,
        controls=[
            Slider(
                "strength", "strength t", 0.0, 3.0, 0.05, strength, static_values=SWEEP_STRENGTHS
            )
        ],
        state=state_function,
        draw=shared_direction_figure,
        readout=shared_direction_readout,
    )


def shared_direction_widget(
    setup: SharedDirectionSetup, *, strength: float = 0.0, name: str = ""
) -> LiveWidget:
    """The chapter 7 widget, live in a kernel and kernel-free in the HTML book.

    Parameters are those of :func:`shared_direction_spec`.
    """
    return LiveWidget(shared_direction_spec(setup, strength=strength, name=name))
