"""Chapter 1 widget: local and global update/gradient cosines of precomputed training runs.

A :class:`~cosine_book.widgets.core.WidgetSpec` over the runs of
:func:`cosine_book.optim.run_grid`: an optimizer menu, a threshold menu and a step
slider; the state function :func:`truncation_state` only looks numbers up
(:func:`cosine_book.optim.truncation_step_summary`), and the drawing function is
:func:`cosine_book.plotting.optim.draw_truncation_step`.

The HTML version offers every 10th step (and the last) and moves one control at
a time from the initial run and step; two presets, ``Adam, τ = 0.9, step 150``
and ``momentum, τ off, step 10``, set the settings the chapter's text refers to.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from matplotlib.figure import Figure

from cosine_book._validation import as_float_scalar, as_int_scalar
from cosine_book.optim import StepSummary, TrainingRun, truncation_step_summary
from cosine_book.plotting.optim import draw_truncation_step
from cosine_book.widgets.core import Choice, LiveWidget, Slider, WidgetSpec

__all__ = [
    "CHAPTER_PRESETS",
    "OFF",
    "TruncationView",
    "truncation_explorer",
    "truncation_spec",
    "truncation_state",
]

#: The string ``"off"``, the threshold control's value for no truncation (the run's
#: threshold ``None``). A menu cannot show ``None`` as a selected value, so the control
#: uses this label.
OFF = "off"

#: Presets of chapter 1's text, label -> control values (the others stay at their defaults).
CHAPTER_PRESETS: dict[str, dict[str, Any]] = {
    "Adam, τ = 0.9, step 150": {"optimizer": "Adam", "threshold": 0.9, "step": 150},
    "momentum, τ off, step 10": {"optimizer": "Momentum", "threshold": OFF, "step": 10},
}

RunKey = tuple[str, "float | None"]


@dataclass(frozen=True)
class TruncationView:
    """What the widget shows: one step of one run.

    Attributes
    ----------
    run : TrainingRun
        The whole run (drawn over time on the right).
    summary : StepSummary
        Its numbers at the chosen step (drawn on the left, and in the readout).
    """

    run: TrainingRun
    summary: StepSummary


def _threshold_key(threshold: Any) -> float | None:
    """The runs' key for a threshold control value: ``"off"`` and ``None`` give ``None``."""
    if threshold is None or (isinstance(threshold, str) and threshold == OFF):
        return None
    return as_float_scalar(threshold, "threshold", interval=(0.0, 1.0))


def truncation_state(
    runs: Mapping[RunKey, TrainingRun], optimizer: str, threshold: Any, step: Any
) -> TruncationView:
    """The widget's state: the run of ``(optimizer, threshold)`` and its numbers at ``step``.

    Parameters
    ----------
    runs : mapping
        ``(optimizer name, threshold) -> TrainingRun``, as from
        :func:`cosine_book.optim.run_grid`.
    optimizer : str
        An optimizer name of the runs.
    threshold : float, None or "off"
        A threshold of the runs; ``None`` or ``"off"`` for the run without truncation.
    step : int
        Step index; a float with an integer value (a slider's value) is accepted.

    Returns
    -------
    TruncationView

    Raises
    ------
    ValueError
        If ``runs`` is not a mapping, ``optimizer`` is not a string, ``threshold``
        is not ``"off"``, ``None`` or a number in ``[0, 1]``, the runs have no run
        for ``(optimizer, threshold)``, or ``step`` is not an integer in
        ``[0, run.steps)``.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> import numpy as np
    >>> from cosine_book.optim import Adam, run_grid
    >>> rng = np.random.default_rng(0)
    >>> x, y = rng.normal(size=(30, 4)), rng.integers(0, 2, size=30)
    >>> data = SimpleNamespace(x_train=x, y_train=y, x_test=x, y_test=y)
    >>> optimizers = {"Adam": Adam(0.05)}
    >>> runs = run_grid(data, (None, 0.9), optimizers=optimizers, steps=5)
    >>> view = truncation_state(runs, "Adam", 0.9, 4.0)
    >>> view.summary.step, view.summary.threshold
    (4, 0.9)
    >>> # Every kept local cosine is 0.9, so the bound holds with equality, up to rounding.
    >>> s = view.summary
    >>> bool(abs(s.global_cosine - s.lower_bound) <= 1e-12), s.local.round(6).tolist()
    (True, [0.9, 0.9, 0.9, nan])
    """
    if not isinstance(runs, Mapping):
        raise ValueError(
            "runs must be a mapping (optimizer name, threshold) -> TrainingRun, as from "
            f"cosine_book.optim.run_grid; got {type(runs).__name__}"
        )
    if not isinstance(optimizer, str):
        raise ValueError(f"optimizer must be an optimizer's name (str); got {optimizer!r}")
    key = (optimizer, _threshold_key(threshold))
    if key not in runs:
        raise ValueError(
            f"runs has no run for optimizer {optimizer!r} with threshold {threshold!r}; "
            f"expected one of {sorted(runs, key=str)}"
        )
    if isinstance(step, float) and step.is_integer():
        step = int(step)
    run = runs[key]
    return TruncationView(run=run, summary=truncation_step_summary(run, step))


def _readout(view: TruncationView) -> str:
    """One line: the global cosine, its lower bound, rho and the local cosines."""
    s = view.summary
    local = "  ".join(
        f"{name} {'frozen' if math.isnan(c) else format(c, '.3f')}"
        for name, c in zip(s.names, s.local, strict=True)
    )
    return (
        f"global cosine {s.global_cosine:.3f}   bound ρ·min cᵢ {s.lower_bound:.3f}   "
        f"ρ {s.profile_cosine:.3f}   local: {local}"
    )


def _draw(view: TruncationView) -> Figure:
    return draw_truncation_step(view.run, view.summary.step)


def _threshold_label(threshold: float | None) -> str:
    return OFF if threshold is None else f"{threshold:g}"


def _static_steps(n_steps: int, initial: int, every: int, extra: Sequence[int] = ()) -> list[int]:
    """Every ``every``-th step from 0, the last step, the initial one and ``extra``."""
    return sorted({*range(0, n_steps, every), n_steps - 1, initial, *extra} & set(range(n_steps)))


def truncation_spec(
    runs: Mapping[RunKey, TrainingRun],
    *,
    initial: RunKey | None = None,
    step: int | None = None,
    every: int = 100,
    presets: Mapping[str, Mapping[str, Any]] | None = None,
) -> WidgetSpec:
    """The chapter 1 widget's spec: optimizer and threshold menus and a step slider.

    Parameters
    ----------
    runs : mapping
        ``(optimizer name, threshold) -> TrainingRun``, as from
        :func:`cosine_book.optim.run_grid`. Every optimizer must have a run for
        every threshold.
    initial : (optimizer name, threshold), optional
        The run shown first (default: the last optimizer with the largest threshold).
    step : int, optional
        Initial step (default: the middle of the run).
    every : int
        The HTML version offers every ``every``-th step from 0, the last step,
        ``step`` and the presets' steps; the kernel slider offers every step.
    presets : mapping, optional
        Named settings (label -> {"optimizer", "threshold", "step"}); the threshold
        ``"off"`` selects the run without truncation. By default the chapter's
        :data:`CHAPTER_PRESETS` that the runs and the offered steps cover.

    Returns
    -------
    WidgetSpec
        The HTML version offers every combination of optimizer, threshold and step.

    Raises
    ------
    ValueError
        For empty or incomplete runs, an ``initial`` run or ``step`` the runs do not
        have, ``every`` below 1, and presets naming a run or step not on offer.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> import numpy as np
    >>> from cosine_book.optim import Adam, run_grid
    >>> rng = np.random.default_rng(0)
    >>> x, y = rng.normal(size=(30, 4)), rng.integers(0, 2, size=30)
    >>> data = SimpleNamespace(x_train=x, y_train=y, x_test=x, y_test=y)
    >>> optimizers = {"Adam": Adam(0.05)}
    >>> runs = run_grid(data, (None, 0.9), optimizers=optimizers, steps=25)
    >>> presets = {"no truncation": {"threshold": "off"}}
    >>> spec = truncation_spec(runs, step=12, every=10, presets=presets)
    >>> spec.controls[2].values()
    (0.0, 10.0, 12.0, 20.0, 24.0)
    >>> len(spec.settings())  # 1 optimizer x 2 thresholds x 5 steps
    10
    """
    if not isinstance(runs, Mapping) or not runs:
        raise ValueError("runs is empty; expected runs from cosine_book.optim.run_grid")
    names = list(dict.fromkeys(name for name, _ in runs))
    thresholds = list(dict.fromkeys(threshold for _, threshold in runs))
    missing = [(n, t) for n in names for t in thresholds if (n, t) not in runs]
    if missing:
        raise ValueError(f"runs must cover every optimizer and threshold; missing {missing}")
    n_steps = min(run.steps for run in runs.values())
    ordered = sorted(thresholds, key=lambda t: -1.0 if t is None else t)
    first_name, first_threshold = (names[-1], ordered[-1]) if initial is None else initial
    if (first_name, first_threshold) not in runs:
        raise ValueError(f"initial must be one of the runs' keys; got {initial}")
    first_step = n_steps // 2 if step is None else as_int_scalar(step, "step", minimum=0)
    if first_step >= n_steps:
        raise ValueError(f"step must be below the runs' {n_steps} steps; got {first_step}")
    every = as_int_scalar(every, "every", minimum=1)
    chosen = CHAPTER_PRESETS if presets is None else presets
    preset_steps = [int(p["step"]) for p in chosen.values() if "step" in p]
    steps = _static_steps(n_steps, first_step, every, preset_steps)
    controls = [
        Choice("optimizer", "optimizer", tuple(names), first_name),
        Choice(
            "threshold",
            "τ",
            tuple(_threshold_label(t) if t is None else t for t in ordered),
            _threshold_label(first_threshold) if first_threshold is None else first_threshold,
            option_labels=tuple(_threshold_label(t) for t in ordered),
            description="truncation threshold τ of the local cosines",
        ),
        Slider(
            "step",
            "step",
            0.0,
            float(n_steps - 1),
            1.0,
            float(first_step),
            static_values=steps,
            readout_format=".0f",
            description="training step",
        ),
    ]
    if presets is None:
        presets = {
            label: preset
            for label, preset in CHAPTER_PRESETS.items()
            if preset["optimizer"] in names
            and _threshold_key(preset["threshold"]) in thresholds
            and preset.get("step", first_step) in steps
        }
    for label, preset in presets.items():
        optimizer = preset.get("optimizer", first_name)
        threshold = _threshold_key(preset.get("threshold", first_threshold))
        if (optimizer, threshold) not in runs:
            raise ValueError(
                f"preset {label!r} names a run the runs do not have: ({optimizer!r}, {threshold})"
            )
    return WidgetSpec(
        name="truncation",
        title="One training step: local cosines, global cosine and its lower bound",
        controls=controls,
        state=functools.partial(truncation_state, runs),
        draw=_draw,
        readout=_readout,
        presets=presets,
    )


def truncation_explorer(
    runs: Mapping[RunKey, TrainingRun],
    *,
    initial: RunKey | None = None,
    step: int | None = None,
) -> LiveWidget:
    """The chapter 1 widget: live in a kernel, kernel-free in the HTML book.

    Parameters are those of :func:`truncation_spec` (with its default presets).

    Returns
    -------
    LiveWidget
    """
    return LiveWidget(truncation_spec(runs, initial=initial, step=step))
