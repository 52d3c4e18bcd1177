"""Exploration widgets, one function per widget returning an ``ipywidgets`` object.

Each widget separates a pure *update* function (testable and timeable without a
browser) from the function that wires it to sliders, so a notebook cell is one line.
Chapter groups live in submodules; the public functions are re-exported here.
"""

from cosine_book.widgets.blocks import bounds_widget, two_block_widget  # noqa: F401  (chapters 2-3)
from cosine_book.widgets.correlation import decomposition_widget, simpson_widget  # noqa: F401
from cosine_book.widgets.optim import truncation_explorer  # noqa: F401  (chapter 1)
from cosine_book.widgets.factorization import rescaling_widget  # noqa: F401  (chapter 6)
