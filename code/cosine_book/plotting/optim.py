"""Figures of the training runs of chapter 1: local and global update/gradient cosines.

The runs come from :func:`cosine_book.optim.train` or :func:`cosine_book.optim.run_grid`;
the numbers of one step from :func:`cosine_book.optim.truncation_step_summary`.
"""

from __future__ import annotations

from collections.abc import Mapping

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure

from cosine_book.optim import TrainingRun, truncation_step_summary
from cosine_book.plotting import PALETTE

__all__ = [
    "TENSOR_STYLES",
    "draw_truncation_step",
    "plot_cosines_over_training",
    "plot_truncation_run",
    "plot_weights_and_profiles",
]

#: One colour and line style per parameter tensor (weights solid, biases dashed).
TENSOR_STYLES: dict[str, dict[str, str]] = {
    "W1": {"color": PALETTE["local"], "linestyle": "-"},
    "b1": {"color": PALETTE["sky"], "linestyle": "--"},
    "W2": {"color": PALETTE["accent"], "linestyle": "-"},
    "b2": {"color": PALETTE["neutral"], "linestyle": "--"},
}


def draw_truncation_step(run: TrainingRun, step: int, fig: Figure | None = None) -> Figure:
    """Draw one step: local cosines against the global one (left), the run over time (right).

    Parameters
    ----------
    run : TrainingRun
    step : int
        Step index in ``[0, run.steps)``.
    fig : matplotlib Figure, optional
        Figure to draw into (cleared first); a new one by default.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> from cosine_book.optim import SGD, train
    >>> rng = np.random.default_rng(0)
    >>> x, y = rng.normal(size=(20, 3)), rng.integers(0, 2, size=20)
    >>> run = train(SGD(0.1), x, y, x, y, steps=4, n_hidden=2)
    >>> fig = draw_truncation_step(run, 2)
    >>> len(fig.axes)
    2
    >>> plt.close(fig)
    """
    summary = truncation_step_summary(run, step)
    if fig is None:
        # Fixed margins instead of the style's constrained layout: the widget draws
        # this figure once per frame, and the layout engine would double the cost.
        fig = plt.figure(figsize=(9.0, 4.0), layout="none")
    fig.clear()
    left, right = fig.subplots(1, 2, gridspec_kw={"width_ratios": [1.0, 1.4]})
    if fig.get_layout_engine() is None:
        fig.subplots_adjust(left=0.075, right=0.985, top=0.93, bottom=0.27, wspace=0.2)
    positions = np.arange(len(summary.names))
    left.bar(
        positions,
        summary.raw_local,
        width=0.7,
        fill=False,
        edgecolor=PALETTE["neutral"],
        linestyle="--",
        label="before truncation",
    )
    left.bar(positions, summary.local, width=0.5, color=PALETTE["local"], label="local (applied)")
    for position, weight in zip(positions, summary.weights, strict=True):
        left.annotate(f"w={weight:.2f}", (position, 0.02), ha="center", fontsize=8, rotation=90)
    global_position = len(positions) + 0.5
    left.bar(global_position, summary.global_cosine, width=0.7, color=PALETTE["global"])
    left.plot(
        [global_position - 0.45, global_position + 0.45],
        [summary.lower_bound] * 2,
        color=PALETTE["bound"],
        lw=3,
        label="bound ρ × smallest local",
    )
    if summary.threshold is not None:
        left.axhline(summary.threshold, color="black", lw=1, ls=":", label="threshold λ")
    left.set_xticks([*positions, global_position], [*summary.names, "global"])
    left.set_ylim(min(0.0, float(np.nanmin(summary.raw_local)) - 0.05), 1.05)
    left.set_ylabel("cosine with the gradient")
    left.set_title(f"step {summary.step}: ρ = {summary.profile_cosine:.3f}")
    left.legend(loc="upper center", bbox_to_anchor=(0.5, -0.1), ncols=2, fontsize=8)

    steps = np.arange(run.steps)
    right.plot(steps, run.global_cosine, color=PALETTE["global"], label="global cosine")
    right.plot(steps, run.lower_bound, color=PALETTE["bound"], lw=1, label="ρ × smallest local")
    right.plot(
        steps, np.nanmin(run.local, axis=1), color=PALETTE["local"], lw=1, label="smallest local"
    )
    if summary.threshold is not None:
        right.axhline(summary.threshold, color="black", lw=1, ls=":", label="λ")
    right.axvline(summary.step, color=PALETTE["neutral"], lw=1)
    right.set_xlabel("training step")
    low = min(float(np.nanmin(run.lower_bound)), float(np.min(run.global_cosine)))
    right.set_ylim(max(-1.0, min(0.0, low) if low < 0.4 else 0.4) - 0.02, 1.02)
    label = "off" if run.threshold is None else f"λ = {run.threshold:g}"
    right.set_title(f"{run.optimizer}, truncation {label}")
    right.legend(loc="upper center", bbox_to_anchor=(0.5, -0.14), ncols=2, fontsize=8)
    return fig


def plot_cosines_over_training(runs: Mapping[str, TrainingRun]) -> Figure:
    """One panel per run: each tensor's local cosine and the global cosine over the steps.

    Examples
    --------
    >>> from cosine_book.optim import SGD, train
    >>> rng = np.random.default_rng(0)
    >>> x, y = rng.normal(size=(20, 3)), rng.integers(0, 2, size=20)
    >>> runs = {"SGD": train(SGD(0.1), x, y, x, y, steps=4)}
    >>> fig = plot_cosines_over_training(runs)
    >>> len(fig.axes)
    1
    >>> plt.close(fig)
    """
    fig, axes = plt.subplots(1, len(runs), figsize=(3.2 * len(runs), 3.4), sharey=True)
    axes = np.atleast_1d(axes)
    for ax, (title, run) in zip(axes, runs.items(), strict=True):
        for column, name in enumerate(run.names):
            ax.plot(run.local[:, column], lw=1.1, label=f"local {name}", **TENSOR_STYLES[name])
        ax.plot(run.global_cosine, color=PALETTE["global"], lw=2.4, label="global")
        ax.set_title(title)
        ax.set_xlabel("training step")
    axes[0].set_ylabel("cos(update, gradient)")
    axes[0].set_ylim(-0.25, 1.05)
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncols=len(labels))
    return fig


def plot_weights_and_profiles(run: TrainingRun, step: int) -> Figure:
    r"""Weights of the block identity over a run, and the two norm profiles at one step.

    Left: the weights :math:`w_i` stacked over the steps, their sum
    :math:`\rho`, and the global cosine. Right: the two norm profiles (each
    divided by its length) at ``step``.

    Examples
    --------
    >>> from cosine_book.optim import Adam, train
    >>> rng = np.random.default_rng(0)
    >>> x, y = rng.normal(size=(20, 3)), rng.integers(0, 2, size=20)
    >>> run = train(Adam(0.1), x, y, x, y, steps=4)
    >>> fig = plot_weights_and_profiles(run, 2)
    >>> len(fig.axes)
    2
    >>> plt.close(fig)
    """
    summary = truncation_step_summary(run, step)
    fig, (left, right) = plt.subplots(1, 2, figsize=(9.6, 3.5), width_ratios=[1.5, 1.0])
    steps = np.arange(run.steps)
    left.stackplot(
        steps,
        run.weights.T,
        labels=[f"$w$ of {name}" for name in run.names],
        colors=[TENSOR_STYLES[name]["color"] for name in run.names],
        alpha=0.8,
    )
    left.plot(steps, run.profile_cosine, color="black", lw=1.2, label=r"$\rho$ (sum of the $w_i$)")
    left.plot(steps, run.global_cosine, color=PALETTE["global"], lw=2.2, label="global cosine")
    left.axvline(summary.step, color=PALETTE["neutral"], lw=1, ls=":")
    left.set_ylim(0.0, 1.05)
    left.set_xlabel("training step")
    left.set_title(f"{run.optimizer}: weights of the block identity")
    left.legend(loc="lower left", ncols=3, fontsize=8)
    positions = np.arange(len(run.names))
    update_norms = run.update_norms[summary.step]
    gradient_norms = run.gradient_norms[summary.step]
    # Fixed-order sums (not BLAS): the same bars on every CPU.
    update_profile = update_norms / np.sqrt(np.sum(update_norms * update_norms))
    gradient_profile = gradient_norms / np.sqrt(np.sum(gradient_norms * gradient_norms))
    right.bar(positions - 0.2, update_profile, 0.4, color=PALETTE["global"], label="update")
    right.bar(positions + 0.2, gradient_profile, 0.4, color=PALETTE["weight"], label="gradient")
    right.set_xticks(positions, run.names)
    right.set_ylabel("block norm / total norm")
    right.set_title(f"norm profiles at step {summary.step}: ρ = {summary.profile_cosine:.2f}")
    right.legend()
    return fig


def plot_truncation_run(run: TrainingRun) -> Figure:
    r"""A truncated run: smallest local cosine, global cosine, :math:`\rho` and its bound.

    Over the steps: the smallest local cosine, the threshold :math:`\lambda`,
    the global cosine, :math:`\rho` and the lower bound :math:`\rho \lambda`
    of the global cosine.

    Raises
    ------
    ValueError
        If ``run`` is not a :class:`~cosine_book.optim.TrainingRun` trained with a threshold.

    Examples
    --------
    >>> from cosine_book.optim import Adam, train
    >>> rng = np.random.default_rng(0)
    >>> x, y = rng.normal(size=(20, 3)), rng.integers(0, 2, size=20)
    >>> run = train(Adam(0.1), x, y, x, y, steps=4, threshold=0.9)
    >>> fig = plot_truncation_run(run)
    >>> len(fig.axes)
    1
    >>> plt.close(fig)
    """
    if not isinstance(run, TrainingRun):
        raise ValueError(
            f"run must be a TrainingRun (from train or run_grid); got {type(run).__name__}"
        )
    if run.threshold is None:
        raise ValueError("run has no truncation threshold; train it with threshold=...")
    threshold = run.threshold
    steps = np.arange(run.steps)
    fig, ax = plt.subplots(figsize=(7.5, 3.6))
    ax.plot(steps, run.profile_cosine, color=PALETTE["weight"], lw=1.2, label=r"$\rho$")
    ax.plot(
        steps, np.nanmin(run.local, axis=1), color=PALETTE["local"], lw=2.5, label="smallest local"
    )
    ax.axhline(threshold, color="black", lw=1, ls=":", label=rf"$\lambda = {threshold:g}$")
    ax.plot(steps, run.global_cosine, color=PALETTE["global"], lw=2.2, label="global")
    ax.plot(
        steps,
        run.profile_cosine * threshold,
        color=PALETTE["bound"],
        lw=1.5,
        ls="--",
        label=r"bound $\rho\lambda$",
    )
    ax.fill_between(steps, run.global_cosine, threshold, color=PALETTE["global"], alpha=0.12, lw=0)
    low = float(min(np.min(run.profile_cosine * threshold), np.min(run.global_cosine)))
    ax.set_ylim(max(-1.0, low - 0.05), 1.02)
    ax.set_xlabel("training step")
    ax.set_ylabel("cosine")
    ax.set_title(f"{run.optimizer} with every local cosine truncated at λ = {threshold:g}")
    fig.legend(loc="outside right center")
    return fig
