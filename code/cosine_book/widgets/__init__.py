"""Exploration widgets, one function per widget returning an ``ipywidgets`` object.

Each widget separates a pure *update* function (testable and timeable without a
browser) from the function that wires it to sliders, so a notebook cell is one line.
Chapter groups live in submodules; the public functions are re-exported here.
"""

from cosine_book.widgets.blocks import bounds_widget, two_block_widget
from cosine_book.widgets.correlation import decomposition_widget, simpson_widget
from cosine_book.widgets.factorization import rescaling_widget
from cosine_book.widgets.optim import truncation_explorer

__all__ = [
    "bounds_widget",  # chapter 3
    "decomposition_widget",  # chapter 4
    "rescaling_widget",  # chapter 6
    "simpson_widget",  # chapter 5
    "truncation_explorer",  # chapter 1
    "two_block_widget",  # chapter 2
]
