r"""Chapter 7 widget: strengthen a shared mean direction and watch every cosine rise.

A :class:`~cosine_book.widgets.core.WidgetSpec` with one slider, the strength
:math:`t` of a direction shared by every embedding: row :math:`i` becomes
:math:`(\boldsymbol{e}_i - \bar{\boldsymbol{e}}) + t\,\nu\,\hat{\boldsymbol{m}}`, with
:math:`\nu` the typical norm of the centred rows (:func:`with_shared_direction`). Its
state, :class:`SharedDirectionFrame`, is :func:`shared_direction_update` (histograms of the
cosines of related and unrelated pairs, raw and centred, the mean cosine, the top-:math:`k`
neighbour agreement) with what a threshold cannot hide: the threshold-free pair AUC
(:func:`cosine_book.cluster_recovery.pair_auc`) and the share of *related* pairs that pass the
threshold beside that of unrelated ones. Its drawing function is
:func:`cosine_book.plotting.diagnostics.shared_direction_figure`. The HTML version offers
:math:`t = 0, 0.25, \dots, 3` (13 frames). Chapter 7 imports
:func:`prepare_shared_direction` from here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from cosine_book._validation import as_float_scalar, as_int_scalar, as_labels, as_real_matrix
from cosine_book.cluster_recovery import pair_auc
from cosine_book.diagnostics import (  # the centring of centered_cosine_matrix
    _as_embeddings,
    _centre,
    centered_cosine_matrix,
    neighbour_agreement,
    related_pair_cosines,
)
from cosine_book.plotting.diagnostics import shared_direction_figure
from cosine_book.similarity import cosine_matrix
from cosine_book.widgets.core import LiveWidget, Slider, WidgetSpec

__all__ = [
    "COSINE_BIN_EDGES",
    "SWEEP_STRENGTHS",
    "SharedDirectionFrame",
    "SharedDirectionSetup",
    "SharedDirectionState",
    "prepare_shared_direction",
    "shared_direction_frame",
    "shared_direction_readout",
    "shared_direction_spec",
    "shared_direction_update",
    "shared_direction_widget",
    "with_shared_direction",
]

#: Strengths of the sweep and of the HTML version, 0 to 3 in steps of 1/4.
SWEEP_STRENGTHS: tuple[float, ...] = tuple(i / 4 for i in range(13))
#: Bin edges of the cosine histograms, 80 bins of width 1/40 on [-1, 1].
COSINE_BIN_EDGES: NDArray[np.float64] = np.linspace(-1.0, 1.0, 81)
_FLOAT_MAX = float(np.finfo(np.float64).max)


def with_shared_direction(E: ArrayLike, strength: float) -> NDArray[np.float64]:
    r"""The rows of ``E`` with their shared mean direction set to a strength :math:`t \ge 0`.

    With the mean row :math:`\bar e`, :math:`\hat m = \bar e / \|\bar e\|` and
    :math:`\nu^2 = \frac1n \sum_i \|e_i - \bar e\|^2`, row :math:`i` becomes
    :math:`(e_i - \bar e) + t \nu \hat m`: centred at :math:`t = 0`, ``E`` itself at
    :math:`t = \|\bar e\| / \nu`, all cosines near 1 for large :math:`t`; centred cosines
    (:func:`~cosine_book.diagnostics.centered_cosine_matrix`) do not change.

    Examples
    --------
    >>> with_shared_direction([[11.0, 10.0], [10.0, 11.0], [12.0, 12.0]], 3.0).round(4).tolist()
    [[2.4495, 1.4495], [1.4495, 2.4495], [3.4495, 3.4495]]
    """
    t = as_float_scalar(strength, "strength", nonnegative=True)
    centred, mean, exponent, limit = _centre(_as_embeddings(E))  # in units of 2**exponent
    if float(np.max(np.abs(mean))) <= limit:
        raise ValueError(
            "the mean row of E is zero (up to rounding), so there is no mean direction to "
            "strengthen; expected embeddings whose mean row is not zero"
        )
    if float(np.max(np.abs(centred))) <= limit:
        raise ValueError(
            "every row of E equals the mean row (up to rounding), so the centred rows have "
            "no spread (ν = 0) to measure the strength in; expected rows that differ"
        )
    # ν and the unit mean direction, each from its vector scaled to its peak (exactly).
    spread_exponent = int(np.frexp(np.max(np.abs(centred)))[1])
    unit_centred = np.ldexp(centred, -spread_exponent)
    spread = math.ldexp(
        math.sqrt(float(np.mean(np.sum(unit_centred * unit_centred, axis=1)))), spread_exponent
    )
    shared = t * spread  # spread <= 2 sqrt(d): entries in (-2, 2) before t
    overflow = ValueError(
        f"strength {t!r} is too large: the rows would overflow float64; expected a smaller strength"
    )
    if shared > _FLOAT_MAX:
        raise overflow
    direction = np.ldexp(mean, -int(np.frexp(np.max(np.abs(mean)))[1]))
    with np.errstate(over="ignore"):
        result = centred + shared * (direction / np.sqrt(np.sum(direction * direction)))
    try:  # the largest entry, in float64 or beyond (math.ldexp raises then)
        fits = math.ldexp(float(np.max(np.abs(result))), exponent) <= _FLOAT_MAX
    except OverflowError:
        fits = False
    if not fits:
        raise overflow
    return np.ldexp(result, exponent)


@dataclass(frozen=True)
class SharedDirectionState:
    """Cosines and neighbour quality of embeddings with a shared direction of one strength.

    From :func:`shared_direction_update`: histogram counts (on :data:`COSINE_BIN_EDGES`) of
    the cosines of related and unrelated pairs, raw and centred; the mean raw cosine; the
    share of unrelated pairs at or above ``threshold``; the top-``k`` agreement; the same
    at every strength of the sweep; and the largest density of any histogram of the sweep
    (the widget's fixed y-axis).
    """

    strength: float
    k: int
    threshold: float
    bin_edges: NDArray[np.float64]
    related: NDArray[np.int64]
    unrelated: NDArray[np.int64]
    centred_related: NDArray[np.int64]
    centred_unrelated: NDArray[np.int64]
    mean_cosine: float
    unrelated_above: float
    centred_unrelated_above: float
    agreement: float
    centred_agreement: float
    sweep_strengths: NDArray[np.float64]
    sweep_agreement: NDArray[np.float64]
    sweep_mean_cosine: NDArray[np.float64]
    sweep_unrelated_above: NDArray[np.float64]
    peak_density: float


@dataclass(frozen=True)
class SharedDirectionSetup:
    """The checked embeddings, each row's label index, and the state at strength 0."""

    embeddings: NDArray[np.float64]
    label_index: NDArray[np.intp]
    base: SharedDirectionState


def _pair_summary(similarities: Any, index: Any, threshold: float) -> dict[str, Any]:
    """Histograms of related and unrelated pair cosines, and the false-match share."""
    related, unrelated = related_pair_cosines(similarities, index)
    return {
        "related": np.histogram(related, COSINE_BIN_EDGES)[0].astype(np.int64),
        "unrelated": np.histogram(unrelated, COSINE_BIN_EDGES)[0].astype(np.int64),
        "unrelated_above": float(np.mean(unrelated >= threshold)) if unrelated.size else 0.0,
    }


def _raw_summary(embeddings: Any, index: Any, strength: float, k: int, threshold: float) -> dict:
    """Every field of the state that depends on the strength."""
    similarities = cosine_matrix(with_shared_direction(embeddings, strength))
    n = similarities.shape[0]
    return {
        **_pair_summary(similarities, index, threshold),
        "strength": strength,
        "mean_cosine": float(np.mean(similarities[np.triu_indices(n, k=1)])),
        "agreement": neighbour_agreement(similarities, index, k),
    }


def prepare_shared_direction(
    embeddings: ArrayLike, labels: ArrayLike, k: int = 10, *, threshold: float = 0.5
) -> SharedDirectionSetup:
    """Everything about a shared direction of growing strength that is computed once.

    Chapter 7: the centred cosines and the sweep over :data:`SWEEP_STRENGTHS`;
    :func:`shared_direction_update` then gives the state at any strength. ``labels`` say
    which rows are related; ``k`` neighbours per item; false matches at ``threshold``.

    Examples
    --------
    >>> labels = np.repeat([0, 1], 10)
    >>> E = np.random.default_rng(0).normal(size=(20, 4)) + 3.0 * labels[:, None]
    >>> prepare_shared_direction(E, labels, k=3).base.sweep_strengths.size
    13
    """
    matrix = as_real_matrix(embeddings, "embeddings")
    index = as_labels(labels, "labels", matrix.shape[0])[1]
    k = as_int_scalar(k, "k", minimum=1, maximum=matrix.shape[0] - 1)
    threshold = as_float_scalar(threshold, "threshold", interval=(-1.0, 1.0))
    centred = centered_cosine_matrix(matrix)
    centred_pairs = _pair_summary(centred, index, threshold)
    sweep = [_raw_summary(matrix, index, value, k, threshold) for value in SWEEP_STRENGTHS]
    width = float(COSINE_BIN_EDGES[1] - COSINE_BIN_EDGES[0])
    histograms = [row[kind] for row in [*sweep, centred_pairs] for kind in ("related", "unrelated")]
    base = SharedDirectionState(
        **sweep[0],
        k=k,
        threshold=threshold,
        bin_edges=COSINE_BIN_EDGES.copy(),
        centred_related=centred_pairs["related"],
        centred_unrelated=centred_pairs["unrelated"],
        centred_unrelated_above=centred_pairs["unrelated_above"],
        centred_agreement=neighbour_agreement(centred, index, k),
        sweep_strengths=np.array(SWEEP_STRENGTHS),
        sweep_agreement=np.array([row["agreement"] for row in sweep]),
        sweep_mean_cosine=np.array([row["mean_cosine"] for row in sweep]),
        sweep_unrelated_above=np.array([row["unrelated_above"] for row in sweep]),
        peak_density=max(  # count over total count times bin width
            float(np.max(h)) / (float(np.sum(h)) * width) for h in histograms if np.sum(h)
        ),
    )
    return SharedDirectionSetup(embeddings=matrix, label_index=index, base=base)


def _check_setup(setup: Any) -> None:
    if not isinstance(setup, SharedDirectionSetup):
        raise ValueError(
            "setup must be a SharedDirectionSetup from prepare_shared_direction; "
            f"got {type(setup).__name__}"
        )


def shared_direction_update(setup: SharedDirectionSetup, strength: float) -> SharedDirectionState:
    r"""The state of the embeddings with a shared direction of strength :math:`t \ge 0`.

    Examples
    --------
    >>> labels = np.repeat([0, 1], 10)
    >>> E = np.random.default_rng(0).normal(size=(20, 4)) + 3.0 * labels[:, None]
    >>> setup = prepare_shared_direction(E, labels, k=3)
    >>> weak, strong = (shared_direction_update(setup, t) for t in (0.0, 3.0))
    >>> bool(strong.mean_cosine > weak.mean_cosine)
    True
    """
    _check_setup(setup)
    strength = as_float_scalar(strength, "strength", nonnegative=True)
    base = setup.base
    changed = _raw_summary(setup.embeddings, setup.label_index, strength, base.k, base.threshold)
    return replace(base, **changed)


@dataclass(frozen=True)
class SharedDirectionFrame:
    """What the chapter 7 widget shows at one strength (:func:`shared_direction_frame`).

    Attributes
    ----------
    state : SharedDirectionState
        Histograms, mean cosine, false matches and neighbour agreement, raw and
        centred, with their sweep (:func:`shared_direction_update`).
    auc, centred_auc : float
        :func:`cosine_book.cluster_recovery.pair_auc` of the raw and of the centred cosines.
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
        From :func:`prepare_shared_direction`.
    strength : float
        Finite and nonnegative.
    sweep : SharedDirectionFrame, optional
        A frame of the same ``setup`` whose sweep and centred values to reuse
        (they do not depend on the strength); computed if omitted.

    Examples
    --------
    >>> labels = np.repeat([0, 1], 10)
    >>> E = np.random.default_rng(0).normal(size=(20, 4)) + 3.0 * labels[:, None]
    >>> setup = prepare_shared_direction(E, labels, k=3)
    >>> frame = shared_direction_frame(setup, 3.0)
    >>> frame.related_above, frame.state.unrelated_above, round(frame.centred_auc, 2)
    (1.0, 1.0, 1.0)
    """
    _check_setup(setup)
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
        From :func:`prepare_shared_direction`.
    strength : float
        Starting strength, one of :data:`SWEEP_STRENGTHS`
        (the values the HTML version offers).
    name : str
        Text after "Embeddings" in the title (for example which model made them).

    Returns
    -------
    WidgetSpec

    Examples
    --------
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
