"""The few non-exact steps of the data generators, made the same on every CPU.

What a reader sees must not depend on the machine, so every data set the book draws
is the same bit for bit on every CPU. Most of a generator is safe by itself: integer
draws, ``rng.random``, ``+ - * /`` and ``sqrt`` are exact in IEEE arithmetic. Two
things are not:

- NumPy's ``exp``, ``log``, ``power`` and trigonometric functions run SIMD code
  chosen for the CPU (AVX-512 kernels differ from AVX2 ones in the last bit for a
  few percent of inputs), and the C library picks FMA or non-FMA code (its ``exp``,
  ``log`` and ``pow`` differ for about one input in 1,500, 10,000 and 1,400).
  :func:`power`, :func:`cos`, :func:`sin`, :func:`arccos` and :func:`arcsin` compute with mpmath
  instead: integer arithmetic rounded to 53 bits, the same everywhere.
- NumPy's samplers that call the C library (Dirichlet through its gamma draws,
  log-normal through ``exp``, the normal's tail through ``log1p``) give values whose
  last bits may differ. :func:`round_to_24_bits` rounds such values to 24
  significant bits before anything uses them (:func:`standard_normal` does it for
  the tail); a last-bit difference moves the rounded value only if it lies within
  that bit of a rounding boundary, about one chance in 2**29 per differing value.
- NumPy's macOS arm64 build computes ``rng.uniform`` with a fused multiply-add;
  :func:`uniform` rounds twice everywhere.

Used by the package's generators (chapters 1, 3, 4, 6 and 7) and in the chapters'
own cells that draw random data (chapters 2, 3, 4 and 7).
"""

from __future__ import annotations

from typing import Any

import mpmath
import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = [
    "arccos",
    "arcsin",
    "cos",
    "power",
    "round_to_24_bits",
    "sin",
    "standard_normal",
    "uniform",
]

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


def _elementwise(function: Any, x: ArrayLike) -> Any:
    """``function`` of each entry at 53 bits; a float for a scalar, else an array."""
    values = np.asarray(x, dtype=np.float64)
    with mpmath.workprec(_DOUBLE):
        out = [float(function(mpmath.mpf(v))) for v in values.ravel().tolist()]
    if values.ndim == 0:
        return out[0]
    return np.array(out, dtype=np.float64).reshape(values.shape)


def cos(x: ArrayLike) -> Any:
    """``cos(x)`` the same on every CPU (a float for a scalar, else an array)."""
    return _elementwise(mpmath.cos, x)


def sin(x: ArrayLike) -> Any:
    """``sin(x)`` the same on every CPU (a float for a scalar, else an array)."""
    return _elementwise(mpmath.sin, x)


def arcsin(x: ArrayLike) -> Any:
    """``arcsin(x)`` for ``-1 <= x <= 1``, the same on every CPU."""
    return _elementwise(mpmath.asin, x)


def arccos(x: ArrayLike) -> Any:
    """``arccos(x)`` for ``-1 <= x <= 1``, the same on every CPU."""
    return _elementwise(mpmath.acos, x)


def uniform(
    rng: np.random.Generator, low: float, high: float, size: Any = None
) -> NDArray[np.float64] | float:
    """Uniform draws on ``[low, high)`` as ``low + (high - low) * rng.random(size)``.

    The same draws as ``rng.uniform(low, high, size)`` on x86-64, but two separate
    roundings everywhere: NumPy's macOS arm64 build computes ``rng.uniform`` with one
    fused multiply-add, whose last bit differs for a third of the draws on [-3, 3].

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> float(uniform(rng, -3.0, 3.0)) == float(np.random.default_rng(0).uniform(-3.0, 3.0))
    True
    """
    return low + (high - low) * rng.random(size)


#: Where NumPy's normal sampler (a ziggurat) switches to its tail: beyond it each draw
#: is computed with the C library's ``log1p``, inside it with exact operations.
_NORMAL_TAIL = 3.6541528853610088


def standard_normal(rng: np.random.Generator, size: Any = None) -> NDArray[np.float64]:
    """``rng.standard_normal(size)``, with the draws of the tail rounded to 24 bits.

    NumPy computes a draw beyond ``|x| = 3.654`` (one in about 3,800) through the C
    library's ``log1p``, whose last bit differs between C libraries and between
    glibc's FMA and plain code; every other draw is exact. The tail draws are rounded
    so that a last-bit difference changes nothing (see :func:`round_to_24_bits`).

    Examples
    --------
    >>> x = standard_normal(np.random.default_rng(4), 100_000)
    >>> y = np.random.default_rng(4).standard_normal(100_000)
    >>> bool((x == y)[np.abs(y) < 3.6].all()), int((x != y).sum()) > 0
    (True, True)
    """
    draws = np.asarray(rng.standard_normal(size), dtype=np.float64)
    tail = np.abs(draws) > _NORMAL_TAIL
    draws[tail] = round_to_24_bits(draws[tail])
    return draws


def round_to_24_bits(values: ArrayLike) -> NDArray[np.float64]:
    """Each value rounded to 24 significant bits (float32's precision, float64's range).

    ``frexp``, ``ldexp`` and the scaling by ``2**24`` are exact and ``rint`` rounds
    half to even, so the result depends only on the value. Subnormal values (below
    ``2**-1022``) keep the bits they have, and values within ``2**-25`` (relative) of
    the largest float64 round up to infinity; the generators draw neither.

    Examples
    --------
    >>> round_to_24_bits([1 / 3, 0.0, -5e-300]).tolist()
    [0.3333333432674408, 0.0, -5.0000001366687204e-300]
    """
    mantissa, exponent = np.frexp(np.asarray(values, dtype=np.float64))
    return np.ldexp(np.rint(np.ldexp(mantissa, 24)), exponent - 24)
