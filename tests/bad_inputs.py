"""Inputs the modules' bad-input tables share: arrays with one entry changed, masked arrays.

Pytest puts this folder on ``sys.path`` for the test files beside it, so they import it
as ``bad_inputs``.
"""

from __future__ import annotations

import numpy as np


def masked(array):
    """``array`` as a masked array with nothing masked (the package refuses masked input)."""
    return np.ma.masked_array(array, mask=np.zeros(np.shape(array), dtype=bool))


def with_entry(array, index, value):
    """A float copy of ``array`` (complex if ``value`` is) with ``array[index] = value``."""
    changed = np.array(array, dtype=complex if isinstance(value, complex) else float)
    changed[index] = value
    return changed
