"""Figures of the training runs of chapter 1: local and global update/gradient cosines.

The runs come from :func:`cosine_book.optim.train` or :func:`cosine_book.optim.run_grid`;
the numbers of one step from :func:`cosine_book.optim.truncation_step_summary`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure
from numpy.typing import ArrayLike

from cosine_book._validation import as_float_scalar, as_real_array
from cosine_book.optim import TrainingRun, truncate_to_cosine, truncation_step_summary
from cosine_book.plotting import PALETTE

__all__ = [
    "OPTIMIZER_STYLES",
    "TENSOR_STYLES",
    "draw_truncation_step",
    "plot_aim_over_training",
    "plot_cone_projection",
    "plot_cosines_over_training",
    "plot_truncation_run",
    "plot_weights_and_profiles",
]

#: One colour and line style per parameter tensor (weights solid, biases dashed).
TENSOR_STYLES: dict[str, dict[str, str]] = {
    "W1": {"color": PALETTE["local"], "linestyle": "-"},
    "b1": {"color": PALETTE["sky"], "linestyle": "--"},
    "W2": {"color": PALETTE["bound"], "linestyle": "-"},
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
        fig = plt.figure(figsize=(8.2, 4.0), layout="none")
    fig.clear()
    left, right = fig.subplots(1, 2, gridspec_kw={"width_ratios": [1.0, 1.4]})
    if fig.get_layout_engine() is None:
        fig.subplots_adjust(left=0.082, right=0.985, top=0.93, bottom=0.27, wspace=0.2)
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
        left.annotate(f"w={weight:.2f}", (position, 0.02), ha="center", fontsize=9, rotation=90)
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
        left.axhline(summary.threshold, color="black", lw=1, ls=":", label="threshold τ")
    left.set_xticks([*positions, global_position], [*summary.names, "global"])
    left.set_ylim(min(0.0, float(np.nanmin(summary.raw_local)) - 0.05), 1.05)
    left.set_ylabel("cosine with the gradient")
    left.set_title(f"step {summary.step}: ρ = {summary.profile_cosine:.3f}")
    left.legend(loc="upper center", bbox_to_anchor=(0.5, -0.1), ncols=2, fontsize=9)

    steps = np.arange(run.steps)
    right.plot(steps, run.global_cosine, color=PALETTE["global"], label="global cosine")
    right.plot(steps, run.lower_bound, color=PALETTE["bound"], lw=1, label="ρ × smallest local")
    right.plot(
        steps, np.nanmin(run.local, axis=1), color=PALETTE["local"], lw=1, label="smallest local"
    )
    if summary.threshold is not None:
        right.axhline(summary.threshold, color="black", lw=1, ls=":", label="τ")
    right.axvline(summary.step, color=PALETTE["neutral"], lw=1)
    right.set_xlabel("training step")
    low = min(float(np.nanmin(run.lower_bound)), float(np.min(run.global_cosine)))
    right.set_ylim(max(-1.0, min(0.0, low) if low < 0.4 else 0.4) - 0.02, 1.02)
    label = "off" if run.threshold is None else f"τ = {run.threshold:g}"
    right.set_title(f"{run.optimizer}, truncation {label}")
    right.legend(loc="upper center", bbox_to_anchor=(0.5, -0.14), ncols=2, fontsize=9)
    return fig


def plot_cosines_over_training(runs: Mapping[str, TrainingRun]) -> Figure:
    """One panel per run: each tensor's local cosine and the global cosine over the steps.

    Drawn with seaborn's ``lineplot`` from a long table (one row per run, step
    and series); tensors keep their :data:`TENSOR_STYLES`.

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
    import pandas as pd
    import seaborn as sns

    fig, axes = plt.subplots(1, len(runs), figsize=(2.8 * len(runs), 3.4), sharey=True)
    axes = np.atleast_1d(axes)
    for ax, (title, run) in zip(axes, runs.items(), strict=True):
        steps = np.arange(run.steps)
        long = pd.concat(
            [
                pd.DataFrame({"step": steps, "cosine": run.local[:, i], "series": f"local {name}"})
                for i, name in enumerate(run.names)
            ]
            + [pd.DataFrame({"step": steps, "cosine": run.global_cosine, "series": "global"})],
            ignore_index=True,
        )
        order = [f"local {name}" for name in run.names] + ["global"]
        palette = {f"local {n}": TENSOR_STYLES[n]["color"] for n in run.names}
        palette["global"] = PALETTE["global"]
        dashes = {f"local {n}": _DASHES[TENSOR_STYLES[n]["linestyle"]] for n in run.names}
        dashes["global"] = ""
        widths = {f"local {n}": 1.1 for n in run.names} | {"global": 2.4}
        sns.lineplot(
            long,
            x="step",
            y="cosine",
            hue="series",
            hue_order=order,
            palette=palette,
            style="series",
            style_order=order,
            dashes=dashes,
            size="series",
            size_order=order,
            sizes=widths,
            estimator=None,
            ax=ax,
        )
        ax.get_legend().remove()
        ax.set_title(title)
        ax.set_xlabel("training step")
    axes[0].set_ylabel("cos(update, gradient)")
    axes[0].set_ylim(-0.25, 1.05)
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncols=len(labels))
    return fig


#: seaborn dash patterns for the Matplotlib line styles of :data:`TENSOR_STYLES`.
_DASHES = {"-": "", "--": (4, 2)}

#: One colour and line style per optimizer of chapter 1.
OPTIMIZER_STYLES: dict[str, dict[str, str]] = {
    "SGD": {"color": PALETTE["global"], "linestyle": "-"},
    "Momentum": {"color": PALETTE["weight"], "linestyle": "--"},
    "Adam": {"color": PALETTE["accent"], "linestyle": "-"},
}


def plot_aim_over_training(
    runs: Mapping[str, TrainingRun], learning_rates: Mapping[str, float]
) -> Figure:
    r"""Why the cosine alone does not rank optimizers: loss, step length and three aims.

    Four panels over the steps, one line per run: the training loss, the step
    length :math:`\eta\lVert u\rVert`, the Euclidean cosine
    :math:`\cos(u, g)` (with each run's cosine in its own norm,
    :attr:`~cosine_book.optim.TrainingRun.own_cosine`, dotted where it differs),
    and the max-norm alignment
    :attr:`~cosine_book.optim.TrainingRun.linf_alignment` of sign descent.

    Parameters
    ----------
    runs : mapping from name to TrainingRun
        The runs, for example the untruncated runs of :func:`cosine_book.optim.run_grid`.
    learning_rates : mapping from name to float
        Each run's learning rate :math:`\eta` (the step is :math:`\theta - \eta u`).

    Raises
    ------
    ValueError
        If ``learning_rates`` lacks a run's name or has a non-positive rate.

    Examples
    --------
    >>> from cosine_book.optim import Adam, SGD, train
    >>> rng = np.random.default_rng(0)
    >>> x, y = rng.normal(size=(20, 3)), rng.integers(0, 2, size=20)
    >>> runs = {"SGD": train(SGD(0.1), x, y, x, y, steps=4),
    ...         "Adam": train(Adam(0.01), x, y, x, y, steps=4)}
    >>> fig = plot_aim_over_training(runs, {"SGD": 0.1, "Adam": 0.01})
    >>> len(fig.axes)
    4
    >>> plt.close(fig)
    """
    missing = [name for name in runs if name not in learning_rates]
    if missing:
        raise ValueError(f"learning_rates has no rate for {missing}; expected one per run")
    rates = {
        name: as_float_scalar(learning_rates[name], f"learning_rates[{name!r}]", positive=True)
        for name in runs
    }
    fig, axes = plt.subplots(2, 2, figsize=(8.4, 5.6), sharex=True)
    (loss_ax, length_ax), (cos_ax, linf_ax) = axes
    for name, run in runs.items():
        style = OPTIMIZER_STYLES.get(name, {"color": PALETTE["neutral"], "linestyle": "-"})
        steps = np.arange(run.steps)
        norms = run.update_norms
        # Fixed-order sums (not BLAS): the same lines on every CPU.
        step_length = rates[name] * np.sqrt(np.sum(norms * norms, axis=1))
        loss_ax.plot(steps, run.loss, lw=1.8, label=name, **style)
        length_ax.plot(steps, step_length, lw=1.8, label=name, **style)
        cos_ax.plot(steps, run.global_cosine, lw=1.8, label=name, **style)
        if not np.allclose(run.own_cosine, run.global_cosine, equal_nan=True):
            cos_ax.plot(
                steps,
                run.own_cosine,
                color=style["color"],
                lw=1.4,
                ls=":",
                label=f"{name}, own norm",
            )
        linf_ax.plot(steps, run.linf_alignment, lw=1.8, label=name, **style)
    loss_ax.set_yscale("log")
    loss_ax.set_ylabel("training loss")
    length_ax.set_yscale("log")
    length_ax.set_ylabel(r"step length $\eta\,\Vert u\Vert$")
    cos_ax.set_ylabel(r"$\cos(u, g)$, Euclidean")
    cos_ax.set_ylim(0.0, 1.05)
    linf_ax.set_ylabel("max-norm alignment")
    linf_ax.set_ylim(0.0, 1.05)
    for ax in axes[1]:
        ax.set_xlabel("training step")
    loss_ax.legend(loc="upper right")
    cos_ax.legend(loc="lower left", fontsize=9)
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
    fig, (left, right) = plt.subplots(1, 2, figsize=(8.4, 3.5), width_ratios=[1.5, 1.0])
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
    left.legend(loc="lower left", ncols=3, fontsize=9)
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

    Over the steps: the smallest local cosine, the threshold :math:`\tau`,
    the global cosine, :math:`\rho` and the lower bound :math:`\rho \tau`
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
    ax.axhline(threshold, color="black", lw=1, ls=":", label=rf"$\tau = {threshold:g}$")
    ax.plot(steps, run.global_cosine, color=PALETTE["global"], lw=2.2, label="global")
    ax.plot(
        steps,
        run.profile_cosine * threshold,
        color=PALETTE["bound"],
        lw=1.5,
        ls="--",
        label=r"bound $\rho\tau$",
    )
    ax.fill_between(steps, run.global_cosine, threshold, color=PALETTE["global"], alpha=0.12, lw=0)
    low = float(min(np.min(run.profile_cosine * threshold), np.min(run.global_cosine)))
    ax.set_ylim(max(-1.0, low - 0.05), 1.02)
    ax.set_xlabel("training step")
    ax.set_ylabel("cosine")
    ax.set_title(f"{run.optimizer} with every local cosine truncated at τ = {threshold:g}")
    fig.legend(loc="outside right center")
    return fig
