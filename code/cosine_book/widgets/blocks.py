"""Widgets and constructions for the block decomposition (chapters 2 and 3).

The widgets build blocked vectors with prescribed local cosines and block norms
(:func:`cosine_book.similarity.blocks_with`) and measure them with
:func:`cosine_book.similarity.block_cosines`; the figure is drawn by
:func:`draw_block_cosines`. The widget functions only wire these to sliders, so
everything a widget shows can be tested without a browser.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from matplotlib.figure import Figure
from numpy.typing import NDArray

from cosine_book._validation import as_float_scalar, as_int_scalar
from cosine_book.plotting import PALETTE, annotate_bounds
from cosine_book.similarity import BlockCosines, block_cosines, blocks_with

__all__ = [
    "bounds_widget",
    "draw_block_cosines",
    "profiles_with_cosine",
    "random_block_pair",
    "two_block_widget",
]


def profiles_with_cosine(
    rho: float, share: float, n_blocks: int = 2, eta: float = 0.0
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Norm profiles with cosine exactly ``rho`` that move the weight from block 1 to block 2.

    Blocks 1 and 2 get ``(cos alpha, sin alpha)`` on the x side and
    ``(cos beta, sin beta)`` on the y side, with ``alpha - beta = delta`` and
    ``beta = share * (pi/2 - delta)``; any further blocks get the norm ``eta``
    on both sides. ``delta`` is chosen so that the profile cosine is exactly
    ``rho``: ``cos(delta) = rho * (1 + m eta**2) - m eta**2`` with
    ``m = n_blocks - 2``. As ``share`` goes from 0 to 1 the weight of block 1
    falls from its largest to its smallest value (``rho`` to 0 when
    ``eta = 0``), so the global cosine sweeps the interval of chapter 3.
    For ``0 < share < 1`` and ``eta > 0`` every norm is positive.

    Parameters
    ----------
    rho : float
        Target profile cosine in ``[0, 1]``.
    share : float
        Position of the sweep in ``[0, 1]``.
    n_blocks : int
        Number of blocks, at least 2.
    eta : float
        Norm of the blocks after the first two (on both sides), nonnegative and
        small enough that ``rho * (1 + m eta**2) >= m eta**2``.

    Returns
    -------
    (x_norms, y_norms) : tuple of ndarray of shape (n_blocks,)

    Raises
    ------
    ValueError
        If ``rho`` or ``share`` lies outside ``[0, 1]``, ``n_blocks < 2``, or
        ``eta`` is negative or too large for ``rho``.

    Examples
    --------
    >>> x_norms, y_norms = profiles_with_cosine(0.8, 0.5)
    >>> round(float(x_norms @ y_norms), 6), (x_norms * y_norms).round(4)
    (0.8, array([0.4, 0.4]))
    >>> x_norms, y_norms = profiles_with_cosine(0.6, 0.3, n_blocks=4, eta=0.05)
    >>> cos_profiles = x_norms @ y_norms / (np.linalg.norm(x_norms) * np.linalg.norm(y_norms))
    >>> round(float(cos_profiles), 12)
    0.6
    """
    # rho lies in [0, 1]: norm profiles are nonnegative.
    rho = as_float_scalar(rho, "rho", interval=(0, 1))
    share = as_float_scalar(share, "share", interval=(0, 1))
    n_blocks = as_int_scalar(n_blocks, "n_blocks", minimum=2)
    eta = as_float_scalar(eta, "eta", nonnegative=True)
    extra = (n_blocks - 2) * eta**2
    cos_delta = rho * (1.0 + extra) - extra
    if cos_delta < 0:
        raise ValueError(
            f"eta must be small enough for rho={rho}; got {eta} "
            f"(need rho * (1 + m eta**2) >= m eta**2 with m = {n_blocks - 2})"
        )
    delta = float(np.arccos(min(cos_delta, 1.0)))
    beta = share * (np.pi / 2 - delta)
    alpha = beta + delta
    x_norms = np.full(n_blocks, eta)
    y_norms = np.full(n_blocks, eta)
    x_norms[:2] = np.cos(alpha), np.sin(alpha)
    y_norms[:2] = np.cos(beta), np.sin(beta)
    # cos(pi/2) is 6e-17 in floating point: make the end points exact zeros.
    x_norms[np.abs(x_norms) < 1e-15] = 0.0
    y_norms[np.abs(y_norms) < 1e-15] = 0.0
    return x_norms, y_norms


def random_block_pair(
    rng: np.random.Generator, max_blocks: int = 6, max_size: int = 8, min_blocks: int = 1
) -> tuple[list[NDArray[np.float64]], list[NDArray[np.float64]]]:
    """A random pair of blocked vectors with very uneven block scales.

    The number of blocks, each block's size, its scale on each side (log-uniform
    over six decades) and how strongly ``y_i`` follows ``x_i`` (or its negative)
    are all drawn from ``rng``, so that samples cover the whole range of local
    cosines and of norm profiles.

    Parameters
    ----------
    rng : numpy.random.Generator
        Source of randomness (seed it for reproducible samples).
    max_blocks, max_size : int
        Largest number of blocks and largest block size, each at least 1.
    min_blocks : int
        Smallest number of blocks, between 1 and ``max_blocks``.

    Returns
    -------
    (x_blocks, y_blocks) : tuple of two lists of ndarray

    Raises
    ------
    ValueError
        If ``max_blocks`` or ``max_size`` is smaller than 1, or ``min_blocks``
        is not between 1 and ``max_blocks``.

    Examples
    --------
    >>> xs, ys = random_block_pair(np.random.default_rng(0))
    >>> len(xs) == len(ys), [x.shape == y.shape for x, y in zip(xs, ys)][0]
    (True, True)
    """
    max_blocks = as_int_scalar(max_blocks, "max_blocks", minimum=1)
    max_size = as_int_scalar(max_size, "max_size", minimum=1)
    min_blocks = as_int_scalar(min_blocks, "min_blocks", minimum=1, maximum=max_blocks)
    n_blocks = int(rng.integers(min_blocks, max_blocks + 1))
    x_blocks, y_blocks = [], []
    for _ in range(n_blocks):
        size = int(rng.integers(1, max_size + 1))
        x = rng.standard_normal(size)
        # y_i = a * x_i + noise: a in [-3, 3] sets the sign and strength of agreement.
        y = rng.uniform(-3.0, 3.0) * x + rng.standard_normal(size)
        x_blocks.append(x * 10.0 ** rng.uniform(-3.0, 3.0))
        y_blocks.append(y * 10.0 ** rng.uniform(-3.0, 3.0))
    return x_blocks, y_blocks


def draw_block_cosines(fig: Figure, summary: BlockCosines, names: Sequence[str] = ()) -> None:
    """Draw local cosines, weights and the feasible interval of blocked vectors.

    Left: one group of bars per block (local cosine, weight). Right: the
    interval ``[rho * min c_i, rho * max c_i]``, the global cosine inside it,
    and the range of the local cosines for comparison.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        An empty figure; two axes are added to it.
    summary : BlockCosines
        What to draw, from :func:`cosine_book.similarity.block_cosines`.
    names : sequence of str, optional
        Block labels; ``block 1``, ``block 2``, ... by default.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> fig = plt.figure()
    >>> blocks = blocks_with([0.9, 0.2], [1.0, 0.5], [0.5, 1.0])
    >>> draw_block_cosines(fig, block_cosines(*blocks))
    >>> len(fig.axes)
    2
    >>> plt.close(fig)
    """
    n_blocks = summary.local.size
    lower, upper = summary.bounds()
    labels = list(names) or [f"block {i + 1}" for i in range(n_blocks)]
    bars_ax, line_ax = fig.subplots(1, 2, width_ratios=[1.0, 1.4])
    positions = np.arange(n_blocks)
    bars_ax.bar(
        positions - 0.2,
        np.nan_to_num(summary.local),
        0.4,
        color=PALETTE["local"],
        label="local cosine $c_i$",
    )
    bars_ax.bar(
        positions + 0.2, summary.weights, 0.4, color=PALETTE["weight"], label="weight $w_i$"
    )
    bars_ax.axhline(0.0, color=PALETTE["neutral"], lw=0.8)
    bars_ax.set_xticks(positions, labels)
    bars_ax.set_ylim(-1.05, 1.05)
    # Below the axes, so that bars of either sign never hide it.
    bars_ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.1), ncols=2)
    bars_ax.set_title(rf"weights sum to $\rho$ = {summary.profile_cosine:.3f}")

    annotate_bounds(line_ax, lower, upper, summary.global_cosine)
    # End marks keep a zero-width interval (all local cosines equal) visible.
    line_ax.plot([lower, upper], [0.5, 0.5], "|", color=PALETTE["bound"], ms=40, mew=2.5)
    defined = summary.local[~np.isnan(summary.local)]
    line_ax.plot(defined, np.full(defined.size, 0.2), "|", color=PALETTE["local"], ms=18, mew=2)
    line_ax.text(-0.98, 0.05, "ticks: local cosines", fontsize=8, color=PALETTE["local"])
    line_ax.set_title(f"global {summary.global_cosine:.3f} in [{lower:.3f}, {upper:.3f}]")


def _summary_widget(slider_specs: dict[str, tuple[float, float, float]], to_arrays, caption: str):
    """Sliders from ``slider_specs`` (name -> (min, max, initial)), redrawing on change."""
    import ipywidgets as widgets
    import matplotlib.pyplot as plt

    sliders = {
        name: widgets.FloatSlider(
            value=value,
            min=low,
            max=high,
            step=0.01,
            description=name,
            continuous_update=False,
            readout_format=".2f",
            style={"description_width": "36px"},
            layout=widgets.Layout(width="215px"),
        )
        for name, (low, high, value) in slider_specs.items()
    }
    output = widgets.Output()

    def redraw(_change: object = None) -> None:
        values = {name: slider.value for name, slider in sliders.items()}
        with output:
            output.clear_output(wait=True)
            try:
                summary = block_cosines(*blocks_with(*to_arrays(values)))
            except ValueError as error:
                print(f"Not a valid setting: {error}")
                return
            fig = plt.figure(figsize=(8.0, 3.2))
            draw_block_cosines(fig, summary)
            plt.show()

    for slider in sliders.values():
        slider.observe(redraw, names="value")
    redraw()
    controls = widgets.GridBox(
        list(sliders.values()),
        layout=widgets.Layout(grid_template_columns="repeat(3, 220px)"),
    )
    return widgets.VBox([widgets.HTML(caption), controls, output])


def two_block_widget():
    """Sliders for two blocks' norms and local cosines, showing the global cosine.

    Returns
    -------
    ipywidgets.VBox
        Six sliders (``||x1||``, ``||x2||``, ``||y1||``, ``||y2||``, ``c1``,
        ``c2``) above a live figure drawn by :func:`draw_block_cosines`.
    """
    specs = {
        "‖x₁‖": (0.0, 2.0, 0.2),
        "‖y₁‖": (0.0, 2.0, 1.0),
        "c₁": (-1.0, 1.0, 0.9),
        "‖x₂‖": (0.0, 2.0, 1.0),
        "‖y₂‖": (0.0, 2.0, 0.2),
        "c₂": (-1.0, 1.0, 0.7),
    }

    def to_arrays(v: dict[str, float]) -> tuple[list[float], list[float], list[float]]:
        # (local cosines, x norms, y norms), the order of blocks_with.
        return [v["c₁"], v["c₂"]], [v["‖x₁‖"], v["‖x₂‖"]], [v["‖y₁‖"], v["‖y₂‖"]]

    return _summary_widget(specs, to_arrays, "<b>Two blocks:</b> norms and local cosines")


def bounds_widget(local: Sequence[float] = (0.9, 0.5, -0.3)):
    """Sliders for three blocks' norm profiles and local cosines, showing the interval.

    Parameters
    ----------
    local : sequence of three floats
        Initial local cosines.

    Returns
    -------
    ipywidgets.VBox
        Nine sliders (``||x_i||``, ``||y_i||``, ``c_i`` for three blocks) above a
        live figure of the feasible interval and the global cosine.
    """
    if len(local) != 3:
        raise ValueError(f"bounds_widget shows three blocks; got {len(local)} local cosines")
    subscripts = "₁₂₃"
    x_start, y_start = (1.0, 0.6, 0.3), (0.3, 0.8, 1.0)
    specs: dict[str, tuple[float, float, float]] = {}
    for i, s in enumerate(subscripts):
        specs[f"‖x{s}‖"] = (0.0, 2.0, x_start[i])
        specs[f"‖y{s}‖"] = (0.0, 2.0, y_start[i])
        specs[f"c{s}"] = (-1.0, 1.0, float(local[i]))

    def to_arrays(v: dict[str, float]) -> tuple[list[float], list[float], list[float]]:
        return (
            [v[f"c{s}"] for s in subscripts],
            [v[f"‖x{s}‖"] for s in subscripts],
            [v[f"‖y{s}‖"] for s in subscripts],
        )

    return _summary_widget(specs, to_arrays, "<b>Three blocks:</b> one row of sliders per block")
