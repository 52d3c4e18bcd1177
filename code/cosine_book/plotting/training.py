"""Figures of chapter 1's transformer runs: every tensor's local cosine, and the whole.

The runs are :class:`cosine_book.training.TrainingRun` records (from
:func:`cosine_book.training.train`, or read back from the sweep's traces with
:func:`cosine_book.training.load_traces`).
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure
from numpy.typing import ArrayLike

from cosine_book._validation import as_float_scalar, as_real_array
from cosine_book.optim import truncate_to_cosine
from cosine_book.plotting import PALETTE
from cosine_book.training import TrainingRun, tensor_kind

__all__ = ["KIND_STYLES", "draw_training_step", "plot_cone_projection", "plot_runs_over_training"]

#: Colour and marker of each kind of parameter tensor (:func:`cosine_book.training.tensor_kind`).
KIND_STYLES: dict[str, dict[str, str]] = {
    "embeddings": {"color": PALETTE["global"], "marker": "s"},
    "attention": {"color": PALETTE["local"], "marker": "o"},
    "MLP": {"color": PALETTE["weight"], "marker": "D"},
    "head": {"color": PALETTE["accent"], "marker": "^"},
    "norms and biases": {"color": PALETTE["neutral"], "marker": "v"},
}


def draw_training_step(run: TrainingRun, step: int, sizes: dict[str, int]) -> Figure:
    r"""One step of a run: local cosine of every tensor against its size; cosines over time.

    Left, each tensor's local cosine :math:`c_i` (filled; hollow grey: before
    truncation) against its number of entries, the marker's area proportional to
    its weight :math:`w_i`; the global cosine, its lower bound
    :math:`\rho \min_i c_i` and the threshold as lines. Right, the global cosine,
    :math:`\rho` and the bound over the run, the step marked.

    Parameters
    ----------
    run : TrainingRun
    step : int
        A step of the run.
    sizes : dict
        Entries of each tensor, by name (:func:`cosine_book.gpt.parameter_table`).

    Returns
    -------
    Figure
    """
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
        left.scatter(
            entries[chosen], local[chosen], s=area[chosen], alpha=0.8,
            edgecolors="white", lw=0.5, **style,
        )  # fmt: skip
        left.scatter([], [], s=30, label=kind, **style)  # a legend entry of fixed size
    bound = run.profile_cosine[step] * np.nanmin(local)
    left.axhline(run.global_cosine[step], color=PALETTE["global"], lw=2)
    left.axhline(bound, color=PALETTE["bound"], lw=2, ls="--")
    if run.threshold is not None:
        left.axhline(run.threshold, color="black", lw=1, ls=":")
    left.set_xscale("log")
    left.set_xlim(0.6 * float(entries.min()), 1.8 * float(entries.max()))
    low = min(-0.1, float(np.nanmin(np.concatenate([local, raw]))) - 0.05)
    left.set_ylim(low, 1.05)
    left.set_xlabel("entries in the tensor")
    left.set_ylabel("local cosine with the gradient")
    left.set_title(
        f"step {step}: global {run.global_cosine[step]:.2f}, ρ = {run.profile_cosine[step]:.2f}"
    )
    left.legend(
        loc="upper center", bbox_to_anchor=(0.5, -0.2), ncols=3, fontsize=9,
        handletextpad=0.2, columnspacing=0.8,
    )  # fmt: skip

    steps = np.arange(run.steps)
    smallest = np.nanmin(run.local, axis=1)
    right.plot(steps, run.global_cosine, color=PALETTE["global"], lw=1.2, label="global cosine")
    right.plot(steps, run.profile_cosine, color=PALETTE["weight"], lw=1.0, label="ρ")
    right.plot(
        steps, run.profile_cosine * smallest, color=PALETTE["bound"], lw=1.0, ls="--",
        label="ρ × smallest local",
    )  # fmt: skip
    if run.threshold is not None:
        right.axhline(run.threshold, color="black", lw=1, ls=":", label="τ")
    right.axvline(step, color=PALETTE["neutral"], lw=1)
    right.set_ylim(min(-0.1, float(np.nanmin(run.profile_cosine * smallest)) - 0.05), 1.05)
    right.set_xlabel("training step")
    label = "no truncation" if run.threshold is None else f"truncation at τ = {run.threshold:g}"
    right.set_title(f"{run.optimizer}, {label}")
    right.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncols=2, fontsize=9)
    return fig


def plot_runs_over_training(runs: dict[str, TrainingRun], window: int = 10) -> Figure:
    r"""Global cosine and :math:`\rho` of several runs over training (moving averages).

    One panel per run; ``window``-step moving averages, since single mini-batch
    steps are noisy.
    """
    fig, axes = plt.subplots(1, len(runs), figsize=(2.05 * len(runs), 3.2), sharey=True)
    kernel = np.ones(window) / window
    for ax, (name, run) in zip(np.atleast_1d(axes), runs.items(), strict=True):
        steps = np.arange(window - 1, run.steps)
        for values, colour, label in (
            (run.global_cosine, PALETTE["global"], "global cosine"),
            (run.profile_cosine, PALETTE["weight"], "ρ"),
            (np.nanmin(run.local, axis=1), PALETTE["local"], "smallest local"),
        ):
            ax.plot(steps, np.convolve(values, kernel, mode="valid"), color=colour, label=label)
        ax.set_title(name)
        ax.set_xlabel("step")
        ax.set_ylim(-0.3, 1.05)
    np.atleast_1d(axes)[0].set_ylabel("cosine (10-step average)")
    np.atleast_1d(axes)[0].legend(loc="lower left", fontsize=9)
    return fig


def plot_cone_projection(
    gradient: ArrayLike = (1.0, 0.0),
    threshold: float = 0.6,
    updates: Sequence[ArrayLike] = ((2.0, 1.0), (0.0, 1.0), (-0.9, 0.2)),
) -> Figure:
    r"""The cone :math:`\cos(v, g) \ge \tau` in the plane, and the point of it nearest to an update.

    Shades the cone around the gradient (half-angle :math:`\arccos\tau`) and
    its polar cone, and draws each update :math:`u`, its projection
    :math:`P_\tau(u)` (:func:`cosine_book.optim.truncate_to_cosine`) and the
    segment between them, which meets the cone's edge at a right angle.

    Parameters
    ----------
    gradient : array_like of shape (2,)
        The gradient :math:`g` (nonzero).
    threshold : float
        :math:`\tau` in :math:`[0, 1)`.
    updates : sequence of array_like of shape (2,)
        The updates to project.

    Raises
    ------
    ValueError
        If a vector is not a finite nonzero 2-vector or ``threshold`` is outside
        :math:`[0, 1)`.

    Examples
    --------
    >>> fig = plot_cone_projection()
    >>> len(fig.axes)
    1
    >>> plt.close(fig)
    """
    g = as_real_array(gradient, "gradient", ndim=1).astype(np.float64)
    if g.shape != (2,) or not np.any(g):
        raise ValueError(f"gradient must be a nonzero vector of 2 entries; got {g.tolist()}")
    tau = as_float_scalar(threshold, "threshold", interval=(0.0, 1.0))
    if tau == 1.0:
        raise ValueError("threshold must be below 1, where the cone is a single ray")
    vectors = [as_real_array(u, "update", ndim=1).astype(np.float64) for u in updates]
    if any(u.shape != (2,) for u in vectors):
        raise ValueError("every update must be a vector of 2 entries")
    direction = float(np.arctan2(g[1], g[0]))
    half = float(np.arccos(tau))
    reach = 1.15 * max([2.0, *[float(np.sqrt(np.sum(u * u))) for u in vectors]])
    fig, ax = plt.subplots(figsize=(5.2, 4.2))
    for start, stop, colour, alpha, label in (
        (
            direction - half,
            direction + half,
            PALETTE["weight"],
            0.22,
            rf"cone $\cos(v, g) \geq {tau:g}$",
        ),
        (
            direction + half + np.pi / 2,
            direction - half - np.pi / 2 + 2 * np.pi,
            PALETTE["neutral"],
            0.15,
            r"polar cone (projects to $0$)",
        ),
    ):
        angles = np.linspace(start, stop, 60)
        ax.fill(
            np.r_[0.0, reach * np.cos(angles)],
            np.r_[0.0, reach * np.sin(angles)],
            color=colour,
            alpha=alpha,
            lw=0,
            label=label,
        )
    unit_g = g / np.sqrt(np.sum(g * g))
    ax.annotate(
        "", xy=unit_g, xytext=(0, 0), arrowprops={"arrowstyle": "-|>", "color": "black", "lw": 2}
    )
    ax.text(*(1.08 * unit_g), r"$g$", fontsize=12, ha="left", va="bottom")
    for index, u in enumerate(vectors, start=1):
        p = truncate_to_cosine(u, g, tau)
        ax.annotate(
            "",
            xy=u,
            xytext=(0, 0),
            arrowprops={"arrowstyle": "-|>", "color": PALETTE["global"], "lw": 1.6},
        )
        ax.text(
            u[0], u[1] + 0.08, rf"$u_{index}$", color=PALETTE["global"], fontsize=11, ha="center"
        )
        ax.plot([u[0], p[0]], [u[1], p[1]], color=PALETTE["neutral"], lw=1, ls="--")
        ax.plot(*p, "o", color=PALETTE["accent"], ms=6, label="projection" if index == 1 else None)
        if np.any(p != u):
            ax.text(
                p[0] + 0.06, p[1] - 0.16, rf"$P(u_{index})$", color=PALETTE["accent"], fontsize=10
            )
    ax.set_xlim(-reach / 1.15, reach / 1.15)
    ax.set_ylim(-0.6 * reach / 1.15, reach / 1.15)
    ax.set_aspect("equal")
    ax.axhline(0, color=PALETTE["neutral"], lw=0.6)
    ax.axvline(0, color=PALETTE["neutral"], lw=0.6)
    ax.set_title(rf"Truncation at $\tau = {tau:g}$: the nearest vector of the cone")
    ax.legend(loc="lower left", fontsize=9)
    return fig
