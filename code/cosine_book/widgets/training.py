r"""Chapter 1's widget: one step of a stored transformer run, every tensor's local cosine.

The controls pick an optimizer, a threshold and a step; the state is the ``(run,
step)`` pair; the figure shows that step's local cosines against the tensors' sizes,
and the run's global cosine and :math:`\rho` over training.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure

from cosine_book.plotting import PALETTE
from cosine_book.training import TrainingRun, tensor_kind
from cosine_book.widgets.core import Choice, LiveWidget, Slider, WidgetSpec

__all__ = ["training_explorer"]

OFF = "off"  # the threshold menu's value for the runs without truncation
STATIC_STEPS = (0, 20, 100, 199)  # the steps of the kernel-free (HTML) version
KIND_STYLES = {
    "embeddings": {"color": PALETTE["global"], "marker": "s"},
    "attention": {"color": PALETTE["local"], "marker": "o"},
    "MLP": {"color": PALETTE["weight"], "marker": "D"},
    "head": {"color": PALETTE["accent"], "marker": "^"},
    "norms and biases": {"color": PALETTE["neutral"], "marker": "v"},
}

Runs = Mapping[tuple[str, "float | None"], TrainingRun]


def _state(runs: Runs, optimizer: str, threshold: str, step: float) -> tuple[TrainingRun, int]:
    return runs[optimizer, None if threshold == OFF else float(threshold)], int(step)


def _readout(state: tuple[TrainingRun, int]) -> str:
    run, step = state
    local = run.local[step]
    frozen = int(np.isnan(local).sum())
    return (
        f"global cosine {run.global_cosine[step]:.3f}   ρ {run.profile_cosine[step]:.3f}   "
        f"ρ × smallest local {run.profile_cosine[step] * np.nanmin(local):.3f}\n"
        f"local cosines from {np.nanmin(local):.3f} to {np.nanmax(local):.3f}"
        + (f"   ({frozen} tensors frozen)" if frozen else "")
    )


def _draw(state: tuple[TrainingRun, int], sizes: Mapping[str, int]) -> Figure:
    """Left, each tensor's local cosine against its size; right, the run over training.

    A marker's area is the tensor's weight (hollow grey: before truncation); the lines
    are the global cosine, its lower bound ρ min c_i and τ.
    """
    run, step = state
    fig, (left, right) = plt.subplots(
        1, 2, figsize=(8.2, 3.9), width_ratios=[1.15, 1.0], layout="none"
    )
    fig.subplots_adjust(left=0.09, right=0.985, top=0.9, bottom=0.3, wspace=0.24)
    entries = np.array([sizes[name] for name in run.names], dtype=float)
    local, raw, weights = run.local[step], run.raw_local[step], run.weights[step]
    kinds = [tensor_kind(name) for name in run.names]
    if run.threshold is not None:
        left.scatter(entries, raw, s=22, facecolors="none", edgecolors="0.6", lw=0.8)
    area = 12 + 260 * np.nan_to_num(weights) / max(float(np.nanmax(weights)), 1e-12)
    for kind, style in KIND_STYLES.items():
        chosen = np.array([k == kind for k in kinds])
        left.scatter(entries[chosen], local[chosen], s=area[chosen], alpha=0.8,
                     edgecolors="white", lw=0.5, **style)  # fmt: skip
        left.scatter([], [], s=30, label=kind, **style)  # a legend entry of fixed size
    left.axhline(run.global_cosine[step], color=PALETTE["global"], lw=2)
    left.axhline(run.profile_cosine[step] * np.nanmin(local), color=PALETTE["bound"], lw=2,
                 ls="--")  # fmt: skip
    if run.threshold is not None:
        left.axhline(run.threshold, color="black", lw=1, ls=":")
    left.set_xscale("log")
    left.set_xlim(0.6 * float(entries.min()), 1.8 * float(entries.max()))
    left.set_ylim(min(-0.1, float(np.nanmin(np.concatenate([local, raw]))) - 0.05), 1.05)
    left.set_xlabel("entries in the tensor")
    left.set_ylabel("local cosine with the gradient")
    left.set_title(
        f"step {step}: global {run.global_cosine[step]:.2f}, ρ = {run.profile_cosine[step]:.2f}"
    )
    left.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncols=3, fontsize=9,
                handletextpad=0.2, columnspacing=0.8)  # fmt: skip

    steps = np.arange(run.steps)
    bound = run.profile_cosine * np.nanmin(run.local, axis=1)
    right.plot(steps, run.global_cosine, color=PALETTE["global"], lw=1.2, label="global cosine")
    right.plot(steps, run.profile_cosine, color=PALETTE["weight"], lw=1.0, label="ρ")
    right.plot(steps, bound, color=PALETTE["bound"], lw=1.0, ls="--", label="ρ × smallest local")
    if run.threshold is not None:
        right.axhline(run.threshold, color="black", lw=1, ls=":", label="τ")
    right.axvline(step, color=PALETTE["neutral"], lw=1)
    right.set_ylim(min(-0.1, float(np.nanmin(bound)) - 0.05), 1.05)
    right.set_xlabel("training step")
    label = "no truncation" if run.threshold is None else f"truncation at τ = {run.threshold:g}"
    right.set_title(f"{run.optimizer}, {label}")
    right.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncols=2, fontsize=9)
    return fig


def training_explorer(
    runs: Runs, sizes: Mapping[str, int], *, initial: tuple = ("AdamW", None), step: int = 150
) -> LiveWidget:
    """Chapter 1's widget over stored runs: optimizer and threshold menus, a step slider.

    ``runs`` maps ``(optimizer, threshold)`` to a run (``load_traces`` of
    :mod:`cosine_book.training`), covering every optimizer at every threshold (``None``: no
    truncation); ``sizes`` maps each tensor's name to its number of entries;
    ``initial`` and ``step`` are shown first. Used in chapter 1.
    """
    optimizers = tuple(dict.fromkeys(name for name, _ in runs))
    thresholds = sorted({t for _, t in runs}, key=lambda t: -1.0 if t is None else t)
    missing = [(n, t) for n in optimizers for t in thresholds if (n, t) not in runs]
    if missing:
        raise ValueError(f"runs must cover every optimizer and threshold; missing {missing}")
    last = min(run.steps for run in runs.values()) - 1
    labels = tuple(OFF if t is None else f"{t:g}" for t in thresholds)
    controls = [
        Choice("optimizer", "optimizer", optimizers, initial[0]),
        Choice("threshold", "τ", labels, OFF if initial[1] is None else f"{initial[1]:g}",
               description="truncation threshold τ of every tensor's local cosine"),
        Slider("step", "step", 0.0, float(last), 1.0, float(step),
               static_values=sorted({*STATIC_STEPS, step}), readout_format=".0f",
               description="training step"),
    ]  # fmt: skip
    spec = WidgetSpec(
        name="training",
        title="One step of a transformer run: every tensor's local cosine and the global one",
        controls=controls,
        state=functools.partial(_state, runs),
        draw=functools.partial(_draw, sizes=dict(sizes)),
        readout=_readout,
    )
    return LiveWidget(spec)
