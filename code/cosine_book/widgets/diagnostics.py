r"""Chapter 7 widget: strengthen a shared mean direction and watch every cosine rise.

A :class:`~cosine_book.widgets.core.WidgetSpec` with one slider, the strength
:math:`t` of a direction shared by every embedding: row :math:`i` becomes
:math:`(\boldsymbol{e}_i - \bar{\boldsymbol{e}}) + t\,\nu\,\hat{\boldsymbol{m}}`, with
:math:`\nu` the typical norm of the centred rows
(:func:`cosine_book.diagnostics.with_shared_direction`). Its state function is
:func:`cosine_book.diagnostics.shared_direction_update` on a
:class:`~cosine_book.diagnostics.SharedDirectionSetup` (the cosines of related and
unrelated pairs, the false matches of a fixed threshold and the top-:math:`k`
neighbour agreement, raw and centred); its drawing function is
:func:`cosine_book.plotting.diagnostics.shared_direction_figure`. The HTML version
offers :math:`t = 0, 0.25, \dots, 3` (13 frames).
"""

from __future__ import annotations

from cosine_book._validation import as_float_scalar
from cosine_book.diagnostics import (
    SWEEP_STRENGTHS,
    SharedDirectionSetup,
    SharedDirectionState,
    shared_direction_update,
)
from cosine_book.plotting.diagnostics import shared_direction_figure
from cosine_book.widgets.core import LiveWidget, Slider, WidgetSpec

__all__ = ["shared_direction_readout", "shared_direction_spec", "shared_direction_widget"]


def shared_direction_readout(state: SharedDirectionState) -> str:
    """Two lines under the figure: mean cosine and false matches, then neighbour agreement.

    Examples
    --------
    >>> import numpy as np
    >>> from cosine_book.diagnostics import prepare_shared_direction
    >>> labels = np.repeat([0, 1], 10)
    >>> E = np.random.default_rng(0).normal(size=(20, 4)) + 3.0 * labels[:, None]
    >>> setup = prepare_shared_direction(E, labels, k=3)
    >>> print(shared_direction_readout(shared_direction_update(setup, 1.0)))
    t = 1.00: mean cosine 0.387; unrelated pairs ≥ 0.5: 49.0% raw, 0.0% centred
    top-3 label agreement 0.750 raw, 1.000 centred
    """
    return (
        f"t = {state.strength:.2f}: mean cosine {state.mean_cosine:.3f}; "
        f"unrelated pairs ≥ {state.threshold:g}: {state.unrelated_above:.1%} raw, "
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
        Starting strength, one of
        :data:`~cosine_book.diagnostics.SWEEP_STRENGTHS` (the values the HTML
        version offers).
    name : str
        Text after "Embeddings" in the title (for example which model made them).

    Returns
    -------
    WidgetSpec

    Examples
    --------
    >>> import numpy as np
    >>> from cosine_book.diagnostics import prepare_shared_direction
    >>> labels = np.repeat([0, 1], 10)
    >>> E = np.random.default_rng(0).normal(size=(20, 4)) + 3.0 * labels[:, None]
    >>> spec = shared_direction_spec(prepare_shared_direction(E, labels, k=3))
    >>> len(spec.settings()), spec.state(strength=0.5).strength
    (13, 0.5)
    """
    if not isinstance(setup, SharedDirectionSetup):
        raise ValueError(
            "setup must be a SharedDirectionSetup from prepare_shared_direction; "
            f"got {type(setup).__name__}"
        )
    strength = as_float_scalar(strength, "strength", nonnegative=True)
    if strength not in SWEEP_STRENGTHS:
        raise ValueError(f"strength must be one of {SWEEP_STRENGTHS}; got {strength}")

    def state_function(strength: float) -> SharedDirectionState:
        return shared_direction_update(setup, strength)

    title = "Embeddings" + (f" {name}" if name else "") + " plus a shared direction of strength t"
    return WidgetSpec(
        name="shared-direction",
        title=title,
        controls=[
            Slider(
                "strength",
                "strength t",
                0.0,
                3.0,
                0.05,
                strength,
                static_values=SWEEP_STRENGTHS,
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
