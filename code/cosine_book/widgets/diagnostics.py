r"""Chapter 7 widget: strengthen a shared mean direction and watch every cosine rise.

One slider, the strength :math:`t` of the direction all rows share
(:func:`cosine_book.diagnostics.with_shared_direction`). A state holds, for the raw cosines
at :math:`t` and for the centred ones (the same at every :math:`t`), the histograms of the
cosines of related and unrelated pairs, what a threshold passes of each, and what it cannot
hide: the pair AUC and the top-:math:`k` label agreement; and the raw numbers at every
strength of the HTML version, :math:`t = 0, 0.25, \dots, 3`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

from cosine_book._validation import as_labels, as_real_matrix
from cosine_book.cluster_recovery import pair_auc
from cosine_book.diagnostics import (
    centered_cosine_matrix,
    neighbour_agreement,
    related_pair_cosines,
    with_shared_direction,
)
from cosine_book.plotting.diagnostics import shared_direction_figure
from cosine_book.similarity import cosine_matrix
from cosine_book.widgets.core import LiveWidget, Slider, WidgetSpec

__all__ = ["shared_direction_widget"]  # SharedDirectionState: what it shows

_STRENGTHS = tuple(i / 4 for i in range(13))  # the HTML version's frames
_BIN_EDGES = np.linspace(-1.0, 1.0, 81)  # 80 bins of width 1/40
_K, _THRESHOLD = 10, 0.5


@dataclass(frozen=True)
class SharedDirectionState:
    """What chapter 7's widget shows at strength ``t``: the raw and the centred cosines.

    ``raw`` and ``centred`` hold the histogram counts ``related`` and ``unrelated`` (on
    ``bin_edges``), ``related_above`` and ``unrelated_above`` (shares at or above
    ``threshold``), ``mean_cosine``, ``agreement`` (top-``k``) and ``auc``; ``sweep`` the
    raw ones at every ``sweep["strength"]``; ``peak_density`` fixes the y-axis.
    """

    strength: float
    raw: dict[str, Any]
    centred: dict[str, Any]
    sweep: dict[str, NDArray[np.float64]]
    peak_density: float
    k: ClassVar[int] = _K
    threshold: ClassVar[float] = _THRESHOLD
    bin_edges: ClassVar[NDArray[np.float64]] = _BIN_EDGES


def _summary(S: NDArray[np.float64], labels: NDArray[np.intp]) -> dict[str, Any]:
    related, unrelated = related_pair_cosines(S, labels)
    return {
        "related": np.histogram(related, _BIN_EDGES)[0],
        "unrelated": np.histogram(unrelated, _BIN_EDGES)[0],
        "related_above": float(np.mean(related >= _THRESHOLD)),
        "unrelated_above": float(np.mean(unrelated >= _THRESHOLD)),
        "mean_cosine": float(np.mean(S[np.triu_indices(S.shape[0], k=1)])),
        "agreement": neighbour_agreement(S, labels, _K),
        "auc": pair_auc(S, labels),
    }


def _readout(state: SharedDirectionState) -> str:
    raw, centred = state.raw, state.centred
    return (
        f"t = {state.strength:.2f}: mean cosine {raw['mean_cosine']:.3f}; "
        f"pair AUC {raw['auc']:.3f} raw, {centred['auc']:.3f} centred\n"
        f"share ≥ {state.threshold:g}, related / unrelated: {raw['related_above']:.1%} / "
        f"{raw['unrelated_above']:.1%} raw, {centred['related_above']:.1%} / "
        f"{centred['unrelated_above']:.1%} centred\n"
        f"top-{state.k} label agreement {raw['agreement']:.3f} raw, "
        f"{centred['agreement']:.3f} centred"
    )


def shared_direction_widget(
    embeddings: ArrayLike, labels: ArrayLike, *, name: str = ""
) -> LiveWidget:
    """The chapter 7 widget: embeddings, which rows are related, the title's ``name``.

    Live in a kernel and kernel-free in the HTML book; its ``spec`` gives the states.

    >>> labels = np.repeat([0, 1], 12)
    >>> E = np.random.default_rng(0).normal(size=(24, 4)) + 3.0 * labels[:, None]
    >>> spec = shared_direction_widget(E, labels).spec
    >>> print(spec.readout(spec.state(strength=1.0)))
    t = 1.00: mean cosine 0.387; pair AUC 0.703 raw, 1.000 centred
    share ≥ 0.5, related / unrelated: 68.9% / 52.1% raw, 90.2% / 0.0% centred
    top-10 label agreement 0.721 raw, 1.000 centred
    """
    E = as_real_matrix(embeddings, "embeddings")
    index = as_labels(labels, "labels", E.shape[0])[1]
    sweep = {t: _summary(cosine_matrix(with_shared_direction(E, t)), index) for t in _STRENGTHS}
    centred = _summary(centered_cosine_matrix(E), index)
    numbers = ("mean_cosine", "agreement", "auc", "related_above", "unrelated_above")
    curves = {key: np.array([row[key] for row in sweep.values()]) for key in numbers}
    curves["strength"] = np.array(_STRENGTHS)
    width = float(_BIN_EDGES[1] - _BIN_EDGES[0])
    kinds = ("related", "unrelated")
    histograms = [row[kind] for row in [*sweep.values(), centred] for kind in kinds]
    peak = max(float(np.max(h)) / (float(np.sum(h)) * width) for h in histograms if np.sum(h))

    def state(strength: float) -> SharedDirectionState:
        raw = sweep.get(strength) or _summary(
            cosine_matrix(with_shared_direction(E, strength)), index
        )
        return SharedDirectionState(strength, raw, centred, curves, peak)

    title = "Embeddings" + (f" {name}" if name else "") + " plus a shared direction of strength t"
    slider = Slider("strength", "strength t", 0.0, 3.0, 0.05, 0.0, static_values=_STRENGTHS)
    spec = WidgetSpec(
        name="shared-direction",
        title=title,
        controls=[slider],
        state=state,
        draw=shared_direction_figure,
        readout=_readout,
    )
    return LiveWidget(spec)
