"""The few non-exact steps of the data generators, made the same on every CPU.

What a reader sees must not depend on the machine, so every data set the book draws
is the same bit for bit on every CPU. Most of a generator is safe by itself: integer
draws, ``rng.random``, ``+ - * /`` and ``sqrt`` are exact in IEEE arithmetic. Two
things are not:

- NumPy's ``exp``, ``log``, ``power`` and trigonometric functions run SIMD code
  chosen for the CPU (AVX-512 kernels differ from AVX2 ones in the last bit for a
  few percent of inputs), and the C library picks FMA or non-FMA code (its ``exp``,
  ``log`` and ``pow`` differ for about one input in 1,500, 10,000 and 1,400).
  :func:`power`, :func:`cos`, :func:`sin` and :func:`arccos` compute with mpmath
  instead: integer arithmetic rounded to 53 bits, the same everywhere.
- NumPy's samplers that call the C library (gamma and Dirichlet, log-normal) give
  values whose last bits may differ. :func:`round_to_24_bits` rounds such values
  to 24 significant bits before anything uses them; a last-bit difference moves
  the rounded value only if it lies within that bit of a rounding boundary, about
  one chance in 2**29 per differing value.

Used by :mod:`cosine_book.datasets` and :mod:`cosine_book.similarity` (chapters 3
and 6) and in chapter 7, for random scales.
"""

from __future__ import annotations

import mpmath
import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["arccos", "cos", "power", "round_to_24_bits", "sin"]

_DOUBLE = 53  # bits of a float64 significand


def power(base: ArrayLike, exponent: ArrayLike) -> NDArray[np.float64]:
    """``base ** exponent``, broadcast, rounded to float64 the same way on every CPU.

    Examples
    --------
    >>> power([4.0, 2.0], 0.5).tolist()
    [2.0, 1.4142135623730951]
    >>> power(10.0, [-1.0, 0.5]).tolist()
    [0.1, 3.1622776601683795]
    """
    bases, exponents = np.broadcast_arrays(
        np.asarray(base, dtype=np.float64), np.asarray(exponent, dtype=np.float64)
    )
    with mpmath.workprec(_DOUBLE):
        values = [
            float(mpmath.power(mpmath.mpf(b), mpmath.mpf(e)))
            for b, e in zip(bases.ravel().tolist(), exponents.ravel().tolist(), strict=True)
        ]
    return np.array(values, dtype=np.float64).reshape(bases.shape)


def cos(x: float) -> float:
    """``cos(x)`` the same on every CPU."""
    with mpmath.workprec(_DOUBLE):
        return float(mpmath.cos(mpmath.mpf(float(x))))


def sin(x: float) -> float:
    """``sin(x)`` the same on every CPU."""
    with mpmath.workprec(_DOUBLE):
        return float(mpmath.sin(mpmath.mpf(float(x))))


def arccos(x: float) -> float:
    """``arccos(x)`` for ``-1 <= x <= 1``, the same on every CPU."""
    with mpmath.workprec(_DOUBLE):
        return float(mpmath.acos(mpmath.mpf(float(x))))


def round_to_24_bits(values: ArrayLike) -> NDArray[np.float64]:
    """Each value rounded to 24 significant bits (float32's precision, float64's range).

    ``frexp``, ``ldexp`` and the scaling by ``2**24`` are exact and ``rint`` rounds
    half to even, so the result depends only on the value.

    Examples
    --------
    >>> round_to_24_bits([1 / 3, 0.0, -5e-300]).tolist()
    [0.3333333432674408, 0.0, -5.0000001366687204e-300]
    """
    mantissa, exponent = np.frexp(np.asarray(values, dtype=np.float64))
    return np.ldexp(np.rint(np.ldexp(mantissa, 24)), exponent - 24)
