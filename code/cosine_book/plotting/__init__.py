r"""The book's figure style and recurring figure types, so that chapters look alike.

Every chapter starts with :func:`use_book_style`; figures are then drawn with
plain Matplotlib calls, with the helpers below, or with the figures of one topic:

- :mod:`cosine_book.plotting.blocks`: block cosines, weights and bounds
  (chapters 2 and 3);
- :mod:`cosine_book.plotting.correlation`: centring, groups, pooled correlation,
  Simpson's paradox and Berkeley (chapters 4 and 5);
- :mod:`cosine_book.plotting.diagnostics`: distributions of cosines, neighbour
  lists and the shared direction (chapter 7);
- :mod:`cosine_book.plotting.factorization`: cosine matrices of embeddings
  (chapter 6);
- :mod:`cosine_book.plotting.training`: the transformer's training runs and the
  truncation cone (chapter 1).

The widgets of :mod:`cosine_book.widgets` draw their figures with these
functions, so a widget and a chapter figure look alike.
"""

from __future__ import annotations

import matplotlib as mpl
import numpy as np
from matplotlib.axes import Axes
from numpy.typing import ArrayLike

from cosine_book._validation import as_float_scalar, as_real_array

__all__ = ["PALETTE", "annotate_bounds", "plot_intervals", "use_book_style"]

#: Colour-blind-safe palette (Okabe and Ito), one colour per role in every figure.
#:
#: ``global`` (blue) is the global cosine, ``local`` (orange) the local cosines,
#: ``weight`` (green) the weights and the profile cosine, ``bound`` (purple) the
#: bounds and feasible intervals, ``accent`` (vermillion) highlights and
#: ``neutral`` (grey) reference lines. The values, in this order followed by
#: ``sky`` and ``yellow``, are the colour cycle set by :func:`use_book_style`.
PALETTE: dict[str, str] = {
    "global": "#0072B2",  # blue: the global cosine
    "local": "#E69F00",  # orange: local (per-block) cosines
    "weight": "#009E73",  # green: weights and the profile cosine rho
    "bound": "#CC79A7",  # purple: bounds and feasible intervals
    "accent": "#D55E00",  # vermillion: highlights
    "neutral": "#7F7F7F",  # grey: reference lines
    "sky": "#56B4E9",
    "yellow": "#F0E442",
}


def use_book_style() -> None:
    """Set the book's figure style: seaborn's theme with the book's sizes and colours.

    Seaborn's ``whitegrid`` theme, so that plain Matplotlib figures and seaborn's
    statistical figures look alike, with deterministic output (fixed SVG hash salt),
    readable sizes, light grid, no top or right spines, and :data:`PALETTE` as the
    colour cycle (also seaborn's default palette).

    In a Jupyter kernel it also asks the inline backend for ``retina`` figures:
    PNGs at twice the resolution, shown at the same size, so that they stay sharp
    on high-density screens. Text is at least 9 pt, and the book's figures are at
    most about 8.5 inches wide, so that no label is smaller than 10 pixels when
    a page scales a figure to its text column.

    Examples
    --------
    >>> use_book_style()
    >>> mpl.rcParams["figure.dpi"]
    110.0
    >>> import seaborn as sns
    >>> sns.color_palette().as_hex()[0] == PALETTE["global"].lower()
    True
    """
    import seaborn as sns

    sns.set_theme(
        context="notebook",
        style="whitegrid",
        palette=list(PALETTE.values()),
        rc={
            "figure.figsize": (7.0, 3.6),
            "figure.dpi": 110.0,
            "savefig.dpi": 110.0,
            "figure.constrained_layout.use": True,
            "axes.grid": True,
            "grid.alpha": 0.3,
            "axes.spines.top": False,
            "axes.spines.right": False,
            "axes.titlesize": 11,
            "axes.labelsize": 10,
            "legend.fontsize": 9,
            "legend.frameon": False,
            "xtick.labelsize": 9,
            "ytick.labelsize": 9,
            "svg.hashsalt": "local-global-cosine",
            "axes.prop_cycle": mpl.cycler(color=list(PALETTE.values())),
            "font.size": 10,
            "axes.edgecolor": "0.3",
            "xtick.bottom": True,
            "ytick.left": True,
            "xtick.color": "0.15",
            "ytick.color": "0.15",
        },
    )
    _use_retina_figures()


def _use_retina_figures() -> None:
    """Retina PNGs from the inline backend, when running in a Jupyter kernel."""
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython comes with the book's environment
        return
    if get_ipython() is None:
        return
    from matplotlib_inline.backend_inline import set_matplotlib_formats

    set_matplotlib_formats("retina")


def annotate_bounds(
    ax: Axes, lower: float, upper: float, value: float, *, label: str = "global cosine"
) -> None:
    """Draw a feasible interval ``[lower, upper]`` and a value inside it on a horizontal axis.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        Axes to draw on; its x-axis is set to ``[-1, 1]``.
    lower, upper : float
        Ends of the interval.
    value : float
        The point to mark (for example the actual global cosine).
    label : str
        Legend label of the point.

    Raises
    ------
    ValueError
        If a number is not finite, lies outside ``[-1, 1]``, or ``lower > upper``.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> fig, ax = plt.subplots()
    >>> annotate_bounds(ax, -0.2, 0.5, 0.3)
    >>> tuple(float(limit) for limit in ax.get_xlim())
    (-1.0, 1.0)
    >>> plt.close(fig)
    """
    lower = as_float_scalar(lower, "lower", interval=(-1, 1))
    upper = as_float_scalar(upper, "upper", interval=(-1, 1))
    value = as_float_scalar(value, "value", interval=(-1, 1))
    if lower > upper:
        raise ValueError(f"lower must not exceed upper; got {lower} > {upper}")
    ax.axvspan(lower, upper, color=PALETTE["bound"], alpha=0.25, label="feasible interval")
    ax.axvline(0.0, color=PALETTE["neutral"], lw=0.8)
    ax.plot([value], [0.5], "o", color=PALETTE["global"], ms=9, label=label)
    ax.set_xlim(-1.0, 1.0)
    ax.set_ylim(0.0, 1.0)
    ax.set_yticks([])
    # Below the axes: inside, the legend's dot would read as one more value.
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.1), ncols=2)


def plot_intervals(
    ax: Axes,
    lower: ArrayLike,
    upper: ArrayLike,
    values: ArrayLike,
    *,
    interval_label: str = "bounds",
    value_label: str = "value",
) -> None:
    r"""Draw one vertical interval per case with its value as a dot, cases side by side.

    Useful to show many computed values against their theoretical intervals at
    once (for example sampled global cosines against their bounds
    :math:`[\rho \min_i c_i, \rho \max_i c_i]`).

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        Axes to draw on; cases go along the x-axis in the given order.
    lower, upper : array_like of shape (n_cases,)
        Ends of each interval.
    values : array_like of shape (n_cases,)
        The value of each case.
    interval_label, value_label : str
        Legend labels.

    Raises
    ------
    ValueError
        If the three arrays do not have the same 1-D shape.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> fig, ax = plt.subplots()
    >>> plot_intervals(ax, [-0.5, 0.1], [0.5, 0.3], [0.2, 0.25])
    >>> len(ax.collections)  # the intervals
    1
    >>> len(ax.lines)  # the dots and the zero line
    2
    >>> plt.close(fig)
    """
    low, high, value = (
        as_real_array(a, name, ndim=1).astype(np.float64)
        for a, name in ((lower, "lower"), (upper, "upper"), (values, "values"))
    )
    if not (low.shape == high.shape == value.shape):
        raise ValueError(
            "lower, upper and values must be 1-D arrays of the same length; got shapes "
            f"{low.shape}, {high.shape} and {value.shape}"
        )
    cases = np.arange(low.size)
    ax.vlines(cases, low, high, color=PALETTE["bound"], lw=3, alpha=0.6, label=interval_label)
    ax.plot(cases, value, "o", color=PALETTE["global"], ms=3.5, label=value_label)
    ax.axhline(0.0, color=PALETTE["neutral"], lw=0.8)
    # Outside the axes: the intervals can fill any corner of the plot.
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0))
