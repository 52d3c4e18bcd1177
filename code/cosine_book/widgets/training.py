"""Chapter 1 widget: one step of a transformer run, every tensor's local cosine and the whole.

A :class:`~cosine_book.widgets.core.WidgetSpec` over stored runs
(:func:`cosine_book.training.load_traces`): an optimizer menu, a threshold menu
and a step slider. The state is a ``(run, step)`` pair looked up from the runs;
the drawing is :func:`cosine_book.plotting.training.draw_training_step`.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from typing import Any

from cosine_book._validation import as_int_scalar
from cosine_book.plotting.training import draw_training_step
from cosine_book.training import TrainingRun
from cosine_book.widgets.core import Choice, LiveWidget, Slider, WidgetSpec

__all__ = ["OFF", "training_explorer", "training_spec"]

#: The threshold menu's value for the runs without truncation (threshold ``None``).
OFF = "off"

RunKey = tuple[str, "float | None"]


def _state(
    runs: Mapping[RunKey, TrainingRun], optimizer: str, threshold: Any, step: float
) -> tuple[TrainingRun, int]:
    key = (optimizer, None if threshold == OFF else float(threshold))
    if key not in runs:
        raise ValueError(f"runs has no run {key}; expected one of {sorted(runs, key=str)}")
    if isinstance(step, float) and step.is_integer():
        step = int(step)  # the slider's values are floats
    step = as_int_scalar(step, "step", minimum=0, maximum=runs[key].steps - 1)
    return runs[key], step


def _readout(state: tuple[TrainingRun, int]) -> str:
    """The global cosine, ρ, the bound ρ × smallest local, and the local cosines' range."""
    run, step = state
    local = run.local[step]
    frozen = int(sum(math.isnan(c) for c in local))
    return (
        f"global cosine {run.global_cosine[step]:.3f}   ρ {run.profile_cosine[step]:.3f}   "
        f"ρ × smallest local {run.lower_bound[step]:.3f}\n"
        f"local cosines from {min(c for c in local if not math.isnan(c)):.3f} "
        f"to {max(c for c in local if not math.isnan(c)):.3f}"
        + (f"   ({frozen} tensors frozen)" if frozen else "")
    )


def training_spec(
    runs: Mapping[RunKey, TrainingRun],
    sizes: Mapping[str, int],
    *,
    steps: Sequence[int] = (0, 20, 100, 199),
    initial: RunKey = ("AdamW", None),
    step: int = 150,
) -> WidgetSpec:
    """The chapter 1 widget's spec: optimizer and threshold menus and a step slider.

    Parameters
    ----------
    runs : mapping
        ``(optimizer, threshold) -> TrainingRun`` covering every optimizer at every
        threshold (``None`` for no truncation).
    sizes : mapping
        Entries of each tensor, by name (:func:`cosine_book.gpt.parameter_table`).
    steps : sequence of int
        The steps the HTML version offers (the kernel slider offers every step).
    initial, step :
        The run and the step shown first.

    Returns
    -------
    WidgetSpec
    """
    names = list(dict.fromkeys(name for name, _ in runs))
    thresholds = sorted({t for _, t in runs}, key=lambda t: -1.0 if t is None else t)
    missing = [(n, t) for n in names for t in thresholds if (n, t) not in runs]
    if missing:
        raise ValueError(f"runs must cover every optimizer and threshold; missing {missing}")
    n_steps = min(run.steps for run in runs.values())
    offered = sorted({*steps, step})
    if offered[-1] >= n_steps or offered[0] < 0:
        raise ValueError(f"steps must lie in [0, {n_steps - 1}]; got {offered}")
    labels = tuple(OFF if t is None else f"{t:g}" for t in thresholds)
    controls = [
        Choice("optimizer", "optimizer", tuple(names), initial[0]),
        Choice(
            "threshold",
            "τ",
            labels,
            OFF if initial[1] is None else f"{initial[1]:g}",
            description="truncation threshold τ of every tensor's local cosine",
        ),
        Slider(
            "step",
            "step",
            0.0,
            float(n_steps - 1),
            1.0,
            float(step),
            static_values=offered,
            readout_format=".0f",
            description="training step",
        ),  # fmt: skip
    ]
    return WidgetSpec(
        name="training",
        title="One step of a transformer run: every tensor's local cosine and the global one",
        controls=controls,
        state=functools.partial(_state, runs),
        draw=lambda state: draw_training_step(*state, dict(sizes)),
        readout=_readout,
    )


def training_explorer(
    runs: Mapping[RunKey, TrainingRun], sizes: Mapping[str, int], **options: Any
) -> LiveWidget:
    """The chapter 1 widget, live in a kernel and kernel-free in the HTML book.

    Parameters are those of :func:`training_spec`.
    """
    return LiveWidget(training_spec(runs, sizes, **options))
