"""Exploration widgets: one function per widget, for JupyterLab and for the HTML book.

Each widget function returns a :class:`~cosine_book.widgets.core.LiveWidget`
built from a :class:`~cosine_book.widgets.core.WidgetSpec`, which holds three
parts:

- the controls (:class:`~cosine_book.widgets.core.Slider`,
  :class:`~cosine_book.widgets.core.Choice`);
- a pure state function from the control values to what the widget shows
  (numbers and arrays, computed by the core modules; testable and timeable
  without a browser);
- a drawing function from that state to a Matplotlib figure (in
  :mod:`cosine_book.plotting`), and an optional one-line readout.

The same widget is live in a Jupyter kernel (the controls recompute through
Python) and kernel-free in the HTML book, where frames computed over a grid of
control settings at execution time are swapped by the controls (see
:mod:`cosine_book.widgets.core`). A notebook cell is one line. Chapter groups
live in submodules, which also expose each widget's spec and state function;
the widget functions are re-exported here.
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
