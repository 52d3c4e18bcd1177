"""The book's figure style, its colours and its minus signs.

Every chapter calls :func:`use_book_style`; its figures are drawn by the topic modules
(``blocks``: chapters 2 and 3, ``correlation``: 4 and 5,
``factorization``: 6, ``diagnostics``: 7, ``training``: 1), which the widgets of
:mod:`cosine_book.widgets` use too, so that a widget and a chapter figure look alike.
"""

from __future__ import annotations

import re

import matplotlib as mpl
from matplotlib.figure import Figure
from matplotlib.text import Text

__all__ = ["use_book_style"]

#: Colour-blind-safe palette (Okabe and Ito), one colour per role in every figure; in
#: this order, the colour cycle of :func:`use_book_style`.
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
    """Set the book's figure style: seaborn's ``whitegrid`` with the book's sizes and colours.

    Used in every chapter. Text is at least 9 pt, SVG output is deterministic (fixed
    hash salt), :data:`PALETTE` is the colour cycle, and in a Jupyter kernel figures are
    retina PNGs (twice the pixels, sharp on high-density screens).

    >>> use_book_style()
    >>> mpl.rcParams["figure.dpi"]
    110.0
    """
    import seaborn as sns
    from IPython import get_ipython

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
    if get_ipython() is not None:
        from matplotlib_inline.backend_inline import set_matplotlib_formats

        set_matplotlib_formats("retina")


# A hyphen before a number (not inside a word such as "top-10"): a minus sign.
_HYPHEN_MINUS = re.compile(r"(?<![\w.])-(?=\.?\d)")


def typeset_minus(text: str) -> str:
    """``text`` with the hyphens that stand for minus signs replaced by "−" (U+2212).

    Matplotlib's tick labels have true minus signs; titles, labels, readouts and control
    values written with ``f"{value:g}"`` get them here. Used by every widget.

    >>> typeset_minus("r = -0.49 in [-1, 1], top-10, B-A")
    'r = −0.49 in [−1, 1], top-10, B-A'
    """
    return _HYPHEN_MINUS.sub("\u2212", text)


def typeset_figure(figure: Figure) -> None:
    """Minus signs (:func:`typeset_minus`) in every text of ``figure`` outside ``$...$``.

    Used by every widget's frames and the figures of chapters 2 and 3.
    """
    for text in figure.findobj(Text):
        parts = text.get_text().split("$")
        if any("-" in part for part in parts[::2]):
            parts[::2] = [typeset_minus(part) for part in parts[::2]]
            text.set_text("$".join(parts))
