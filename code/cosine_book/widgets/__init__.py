"""The book's widgets, one function per chapter; each returns a :class:`~.core.LiveWidget`.

A widget's spec (controls, a pure state function, a drawing function) lives in the
topic's submodule; :mod:`cosine_book.widgets.core` shows it live in a Jupyter kernel and
kernel-free in the HTML book. A notebook cell is one line.
"""

from cosine_book.widgets.blocks import bounds_widget, two_block_widget
from cosine_book.widgets.correlation import decomposition_widget, simpson_widget
from cosine_book.widgets.diagnostics import shared_direction_widget
from cosine_book.widgets.factorization import rescaling_widget
from cosine_book.widgets.training import training_explorer

__all__ = [
    "bounds_widget",  # chapter 3
    "decomposition_widget",  # chapter 4
    "rescaling_widget",  # chapter 6
    "shared_direction_widget",  # chapter 7
    "simpson_widget",  # chapter 5
    "training_explorer",  # chapter 1
    "two_block_widget",  # chapter 2
]
