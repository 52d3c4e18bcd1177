"""Input checks shared by the package's modules, so every error reads the same way."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray


def as_real_array(value: ArrayLike, name: str) -> NDArray[Any]:
    """``np.asarray(value)``, or a ``ValueError`` naming ``name`` if it is not real numbers.

    Examples
    --------
    >>> as_real_array([1, 2], "x").dtype.kind
    'i'
    >>> as_real_array([1j], "x")
    Traceback (most recent call last):
    ...
    ValueError: x is complex; expected real numbers
    """
    try:
        array = np.asarray(value)
    except Exception as error:  # ragged lists and the like
        raise ValueError(f"{name} is not an array of numbers: {error}") from None
    if array.dtype.kind == "c":
        raise ValueError(f"{name} is complex; expected real numbers")
    if array.dtype.kind not in "biuf":
        raise ValueError(f"{name} has dtype {array.dtype}; expected real numbers")
    return array


def nonfinite_error(array: NDArray[Any], name: str) -> ValueError | None:
    """The error for the first NaN or infinite entry of ``array``, or ``None`` if all are finite.

    Examples
    --------
    >>> nonfinite_error(np.array([1.0, np.nan]), "y")
    ValueError('y contains NaN (first at flat index 1); expected finite numbers')
    >>> nonfinite_error(np.array([1.0, 2.0]), "y") is None
    True
    """
    flat = array.reshape(-1)
    bad = ~np.isfinite(flat)
    if not bad.any():
        return None
    index = int(np.flatnonzero(bad)[0])
    kind = "NaN" if np.isnan(flat[index]) else "an infinite value"
    return ValueError(
        f"{name} contains {kind} (first at flat index {index}); expected finite numbers"
    )
