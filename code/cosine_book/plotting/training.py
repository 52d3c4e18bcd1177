"""Chapter 1's figures: the runs' cosines over training, and the truncation cone."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import torch
from matplotlib.figure import Figure

from cosine_book._validation import as_float_scalar
from cosine_book.plotting import PALETTE
from cosine_book.training import TrainingRun, truncate_tensor

__all__ = ["plot_cone_projection", "plot_runs_over_training"]


def plot_runs_over_training(runs: dict[str, TrainingRun]) -> Figure:
    r"""Global cosine, :math:`\rho` and the smallest local cosine of each run, over training.

    One panel per run, 10-step moving averages (single mini-batch steps are noisy).
    Used in chapter 1.
    """
    window = 10
    fig, axes = plt.subplots(1, len(runs), figsize=(2.05 * len(runs), 3.2), sharey=True)
    axes = np.atleast_1d(axes)
    for ax, (name, run) in zip(axes, runs.items(), strict=True):
        steps = np.arange(window - 1, run.steps)
        for values, colour, label in (
            (run.global_cosine, PALETTE["global"], "global cosine"),
            (run.profile_cosine, PALETTE["weight"], "ρ"),
            (np.nanmin(run.local, axis=1), PALETTE["local"], "smallest local"),
        ):
            average = np.convolve(values, np.ones(window) / window, mode="valid")
            ax.plot(steps, average, color=colour, label=label)
        ax.set_title(name)
        ax.set_xlabel("step")
        ax.set_ylim(-0.3, 1.05)
    axes[0].set_ylabel("cosine (10-step average)")
    axes[0].legend(loc="lower left", fontsize=9)
    return fig


def plot_cone_projection(threshold: float = 0.6) -> Figure:
    r"""The cone :math:`\cos(v, g) \ge \tau` in the plane, and three updates projected onto it.

    Shades the cone around :math:`g = (1, 0)` (half-angle :math:`\arccos\tau`) and its
    polar cone, and draws each update :math:`u`, its projection :math:`P(u)`
    (:func:`cosine_book.training.truncate_tensor`) and the segment between them, which
    meets the cone's edge at a right angle. Used in chapter 1.

    >>> plt.close(plot_cone_projection(0.6))
    """
    tau = as_float_scalar(threshold, "threshold", interval=(0.0, 1.0))
    g = np.array([1.0, 0.0])
    updates = [np.array(u) for u in ((2.0, 1.0), (0.0, 1.0), (-0.9, 0.2))]
    half = float(np.arccos(tau))
    reach = 1.15 * max([2.0, *[float(np.sqrt(np.sum(u * u))) for u in updates]])
    fig, ax = plt.subplots(figsize=(5.2, 4.2))
    for start, stop, colour, alpha, label in (
        (-half, half, PALETTE["weight"], 0.22, rf"cone $\cos(v, g) \geq {tau:g}$"),
        (half + np.pi / 2, -half - np.pi / 2 + 2 * np.pi, PALETTE["neutral"], 0.15,
         r"polar cone (projects to $0$)"),
    ):  # fmt: skip
        angles = np.linspace(start, stop, 60)
        ax.fill(
            np.r_[0.0, reach * np.cos(angles)], np.r_[0.0, reach * np.sin(angles)],
            color=colour, alpha=alpha, lw=0, label=label,
        )  # fmt: skip
    arrow = {"arrowstyle": "-|>", "color": "black", "lw": 2}
    ax.annotate("", xy=g, xytext=(0, 0), arrowprops=arrow)
    ax.text(*(1.08 * g), r"$g$", fontsize=12, ha="left", va="bottom")
    for index, u in enumerate(updates, start=1):
        p = truncate_tensor(torch.from_numpy(u), torch.from_numpy(g), tau).numpy()
        arrow = {"arrowstyle": "-|>", "color": PALETTE["global"], "lw": 1.6}
        ax.annotate("", xy=u, xytext=(0, 0), arrowprops=arrow)
        ax.text(u[0], u[1] + 0.08, rf"$u_{index}$", color=PALETTE["global"], fontsize=11,
                ha="center")  # fmt: skip
        ax.plot([u[0], p[0]], [u[1], p[1]], color=PALETTE["neutral"], lw=1, ls="--")
        ax.plot(*p, "o", color=PALETTE["accent"], ms=6, label="projection" if index == 1 else None)
        if np.any(p != u):
            ax.text(p[0] + 0.06, p[1] - 0.16, rf"$P(u_{index})$", color=PALETTE["accent"],
                    fontsize=10)  # fmt: skip
    ax.set_xlim(-reach / 1.15, reach / 1.15)
    ax.set_ylim(-0.6 * reach / 1.15, reach / 1.15)
    ax.set_aspect("equal")
    ax.axhline(0, color=PALETTE["neutral"], lw=0.6)
    ax.axvline(0, color=PALETTE["neutral"], lw=0.6)
    ax.set_title(rf"Truncation at $\tau = {tau:g}$: the nearest vector of the cone")
    ax.legend(loc="lower left", fontsize=9)
    return fig
