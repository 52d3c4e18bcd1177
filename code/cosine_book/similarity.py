r"""Cosine similarity of whole vectors and of their blocks.

The book's central identity: cut two vectors :math:`x` and :math:`y` into
blocks :math:`x = (x_1, \dots, x_n)` and :math:`y = (y_1, \dots, y_n)`. Then

.. math::

    \cos(x, y) = \sum_i w_i \cos(x_i, y_i),
    \qquad
    w_i = \frac{\|x_i\| \, \|y_i\|}{\|x\| \, \|y\|},
    \qquad
    \sum_i w_i = \rho,

where :math:`\rho` is the cosine between the two vectors of block norms (the
*norm profiles*). :func:`block_cosines` computes every term of this identity
and :func:`cosine_bounds` the sharp interval
:math:`[\rho \min_i c_i, \; \rho \max_i c_i]`, with :math:`c_i = \cos(x_i, y_i)`
the local cosines.

.. rubric:: Models too large to copy: three numbers per block

Every term of the identity is a function of three sums per block,
:math:`\langle x_i, y_i \rangle`, :math:`\|x_i\|^2` and :math:`\|y_i\|^2`.
:func:`block_cosines_from_sums` takes those sums, however they were computed (on a
GPU, per shard and then added across devices), and returns the same
:class:`BlockCosines` as :func:`block_cosines`. :func:`block_cosines` itself also
accepts the arrays of any library that follows the Python Array API standard
(PyTorch, JAX, CuPy, ... through ``array-api-compat``): it forms the three sums in
that library, on the arrays' device, and only those numbers reach the host. NumPy
input takes the compiled path described next, and so do contiguous PyTorch tensors
in CPU memory, read in place (no copy) through a NumPy view; all routes end in the
same code that turns sums into a :class:`BlockCosines`. Sums of shards on several
processes: :func:`cosine_book.distributed.sharded_block_cosines`.

.. rubric:: Numerical accuracy and reproducibility

All sums are accumulated in float64, whatever the input dtype (float16,
float32, float64, integers, booleans), by one compiled pass (Numba) that reads
each block once and forms all three sums of a block pair. The order of every
addition is fixed by the code: entry ``i`` goes to accumulator ``i % 32``, each
accumulator's sum of 8192 entries is added to a running total with compensation,
and the totals are added exactly (``math.fsum``, or a compiled copy of it), with no
fast-math reassociation and no fused multiply-add (the tests check the kernel
against a plain-Python evaluation of that order). Contiguous float32 and float64
blocks, NumPy arrays or CPU tensors, are summed in one compiled call per thread,
and a batch of more than four million entries is shared between the CPUs by whole
blocks, so the bits never depend on the number of threads. Numba stays because it
is the simplest fast way to a float64 sum of float32 input: 200 blocks of 50
million entries take about 1.2 times one ``np.dot`` pass per block
(``benchmarks/bench_similarity.py``, two CPUs), where NumPy's ``einsum`` or ``vecdot`` with
``dtype=float64`` take about 10 times. For float64 blocks whose sums of squares
would leave the safe range (entries near ``1e300`` or ``1e-300``), the block is
first divided by a power of two near its largest entry, which is exact; each norm
is carried as ``scale * sqrt(sum of squares)`` so that cosines and weights stay
correct to rounding even when a norm itself is not representable. Rescaling does
not help when products of entries underflow to subnormal numbers (a block mixing
entries near ``1e-60`` with entries near ``1e-189``, say): such products lose
relative accuracy, and a cosine resting on them can be far off, even in sign.

Exact values that debugging code relies on: ``cosine(x, x) == 1.0``,
``cosine(x, -x) == -1.0``, ``cosine(x, 2 * x) == 1.0`` (any power-of-two multiple),
``cosine(x, y) == cosine(y, x)`` bit for bit, and ``-1 <= cosine(x, y) <= 1``.
"""

from __future__ import annotations

import functools
import math
import os
import sys
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numba
import numpy as np
from array_api_compat import array_namespace, is_array_api_obj, is_numpy_array
from array_api_compat import device as array_device
from numpy.typing import ArrayLike, NDArray

from cosine_book import portable
from cosine_book._validation import (
    as_float_scalar,
    as_int_scalar,
    as_real_array,
    as_real_matrix,
    nonfinite_error,
)

__all__ = [
    "BlockCosines",
    "block_cosines",
    "block_cosines_from_sums",
    "blocks_with",
    "cosine",
    "cosine_bounds",
    "cosine_matrix",
    "edge_search",
    "local_cosine_range",
    "profiles_with_cosine",
    "random_block_pair",
    "unit_rows",
]

# A float64 block whose sum of squares lies outside [_TINY, _HUGE] may have lost
# digits to underflow or be near overflow, and so may the product of two such sums:
# such blocks are rescaled by a power of two first (exact).
_TINY = 1e-150
_HUGE = 1e150
# Number of independent accumulators of the compiled kernel. Fixing it fixes the
# order of every addition, so results do not depend on the CPU's vector width. The
# lanes live in memory, and each pass over them waits for the previous one's
# stores: 32 lanes (four AVX-512 registers), each given two entries per pass, cut
# such waits per entry fourfold against 16 lanes and one entry; the pass then runs
# near memory speed (benchmarks/bench_similarity.py, benchmarks/bench_torch.py).
_LANES = 32
# The kernel sums blocks of this many entries in its lanes, then adds the block
# sums with compensation: the rounding error grows with _BLOCK, not with the size.
_BLOCK = 8192
# Other dtypes are cast to float64 in chunks of this many entries (a multiple of
# _BLOCK, so that chunking does not change the order of the additions), which keeps
# the extra memory a fixed few hundred kilobytes whatever the block size.
_CHUNK = 1 << 15
# Many CPU tensors are summed in one compiled call per thread; a batch of at least
# this many entries is split between threads (each pair is still summed whole by
# one thread, so the split never changes a bit of the result).
_THREADED_ENTRIES = 1 << 22
# Sums given by the caller may violate Cauchy-Schwarz by rounding: a block's
# |<x_i, y_i>| may exceed ||x_i|| ||y_i|| by this relative amount (room for sums
# accumulated in float32: about 100 float32 roundings), and its cosine is then
# clipped to [-1, 1]. Beyond it the sums cannot come from one pair of vectors.
_SUMS_RTOL = 1e-5
# Arrays of other libraries are summed in slices of this many entries, each cast
# to the working dtype (float64 where the device has it): the extra memory on the
# device is a few such slices (32 MiB each in float64), whatever the block size.
_XP_CHUNK = 1 << 22


@dataclass(frozen=True)
class _BlockSums:
    """Sums of one block pair, as ``scale_x * scale_y * xy`` etc. (scales are powers of two)."""

    scale_x: float
    scale_y: float
    xx: float  # sum of (x / scale_x)**2
    yy: float  # sum of (y / scale_y)**2
    xy: float  # sum of (x / scale_x) * (y / scale_y)


@dataclass(frozen=True)
class BlockCosines:
    r"""Every term of the block decomposition of a cosine similarity.

    Attributes
    ----------
    names : tuple of str
        Block names: the mapping keys, or ``"0"``, ``"1"``, ... for sequences.
    local : ndarray of shape (n_blocks,)
        Local cosines :math:`c_i = \cos(x_i, y_i)`. ``nan`` where :math:`x_i` or
        :math:`y_i` is zero (the cosine is undefined there); such a block has
        weight 0.
    x_norms, y_norms : ndarray of shape (n_blocks,)
        Euclidean norms :math:`\|x_i\|` and :math:`\|y_i\|` of the blocks. A
        norm larger than the largest float shows as ``inf``; the cosines and
        weights stay correct to rounding regardless (unless products of entries
        underflow to subnormal numbers, see the module notes).
    weights : ndarray of shape (n_blocks,)
        :math:`w_i = \|x_i\| \, \|y_i\| / (\|x\| \, \|y\|)`, nonnegative.
    profile_cosine : float
        :math:`\rho`, the cosine between ``x_norms`` and ``y_norms``; equals
        ``weights.sum()``.
    global_cosine : float
        :math:`\cos(x, y)` of the concatenated vectors, computed block by block.
        Equals ``sum(weights * local)`` over the blocks with defined local cosine.
    """

    names: tuple[str, ...]
    local: NDArray[np.float64]
    x_norms: NDArray[np.float64]
    y_norms: NDArray[np.float64]
    weights: NDArray[np.float64]
    profile_cosine: float
    global_cosine: float

    def __len__(self) -> int:
        return len(self.names)

    def bounds(self) -> tuple[float, float]:
        r"""The interval :func:`cosine_bounds` gives for these blocks.

        Returns
        -------
        (lower, upper) : tuple of float
            :math:`\rho \min_i c_i` and :math:`\rho \max_i c_i` over the blocks
            with a defined local cosine.

        Examples
        --------
        >>> result = block_cosines([[1.0, 0.0], [2.0]], [[1.0, 1.0], [1.0]])
        >>> result.local.round(4), round(result.global_cosine, 4)
        (array([0.7071, 1.    ]), 0.7746)
        >>> [round(bound, 4) for bound in result.bounds()]
        [0.6233, 0.8815]
        """
        return _bounds(self.local, self.x_norms, self.y_norms)


def _as_block(value: ArrayLike, what: str) -> NDArray[Any]:
    """One block as a flat array of real numbers (finiteness is checked lazily, by its sums)."""
    array = as_real_array(value, what, finite=False)
    if array.ndim == 0:
        raise ValueError(_single_number_message(what))
    return array.reshape(-1)


def _single_number_message(what: str) -> str:
    return (
        f"{what} is a single number; expected an array. To compare two whole "
        "vectors use cosine(x, y); to compare blocks, pass a list of arrays"
    )


def _nonfinite_error(x: NDArray[Any], y: NDArray[Any], what: str) -> ValueError | None:
    for vector, side in ((x, "x"), (y, "y")):
        error = nonfinite_error(vector, f"{what} of {side}")
        if error is not None:
            return error
    return None


@numba.njit(cache=True, nogil=True)
def _accumulate(
    x: NDArray[Any], y: NDArray[Any], acc: NDArray[np.float64]
) -> None:  # pragma: no cover (compiled)
    """Add the sums of x*x, y*y and x*y of one stretch to ``acc``, in a fixed order.

    Entry ``i`` goes to lane ``i % 32``, and each lane adds in index order. After
    every ``_BLOCK`` entries, and after the last full group of 32, each lane's sum is
    added to its running total ``acc[0]`` (shape 3 x 32) with Neumaier's
    compensation, kept in ``acc[1]``, and the lane restarts at zero; the last
    ``n % 32`` entries are added to the totals of lanes 0, 1, ... the same way. So
    the rounding error grows with the block length, not with the length of the
    vector. The order of every operation is fixed by this code: no fast-math flags,
    so the compiler may put lanes in vector registers but may not reorder an
    addition or fuse a multiply into an add. Everything is accumulated in float64.
    A stretch must start at a multiple of ``_BLOCK``.
    """
    n = x.size
    full = n - n % _LANES
    paired = full - full % (2 * _LANES)
    # Local accumulators: the compiler sees that they alias nothing, and vectorises.
    totals = acc[0].copy()
    compensations = acc[1].copy()
    xx = np.zeros(_LANES)
    yy = np.zeros(_LANES)
    xy = np.zeros(_LANES)
    # Two rows of 32 entries per pass: each lane still adds in index order (Python
    # adds left to right), but reads and writes its sum once per two entries.
    for i in range(0, paired, 2 * _LANES):
        for j in range(_LANES):
            a0, a1 = np.float64(x[i + j]), np.float64(x[i + _LANES + j])
            b0, b1 = np.float64(y[i + j]), np.float64(y[i + _LANES + j])
            xx[j] = xx[j] + a0 * a0 + a1 * a1
            yy[j] = yy[j] + b0 * b0 + b1 * b1
            xy[j] = xy[j] + a0 * b0 + a1 * b1
        if (i + 2 * _LANES) % _BLOCK == 0 or i + 2 * _LANES == full:
            _add_lanes(totals, compensations, xx, yy, xy)
    if paired < full:  # one row of 32 left
        for j in range(_LANES):
            a, b = np.float64(x[paired + j]), np.float64(y[paired + j])
            xx[j] += a * a
            yy[j] += b * b
            xy[j] += a * b
        _add_lanes(totals, compensations, xx, yy, xy)
    for i in range(full, n):
        a = np.float64(x[i])
        b = np.float64(y[i])
        _neumaier(totals, compensations, 0, i - full, a * a)
        _neumaier(totals, compensations, 1, i - full, b * b)
        _neumaier(totals, compensations, 2, i - full, a * b)
    acc[0] = totals
    acc[1] = compensations


@numba.njit(cache=True, nogil=True)
def _add_lanes(
    totals: NDArray[np.float64],
    compensations: NDArray[np.float64],
    xx: NDArray[np.float64],
    yy: NDArray[np.float64],
    xy: NDArray[np.float64],
) -> None:  # pragma: no cover (compiled)
    """Add each lane's sum to its running total (Neumaier), and restart the lane at zero."""
    for row in range(3):
        lanes = xx if row == 0 else (yy if row == 1 else xy)
        for lane in range(_LANES):
            _neumaier(totals, compensations, row, lane, lanes[lane])
            lanes[lane] = 0.0


@numba.njit(cache=True, nogil=True)
def _neumaier(
    totals: NDArray[np.float64],
    compensations: NDArray[np.float64],
    row: int,
    lane: int,
    value: float,
) -> None:  # pragma: no cover (compiled)
    """``totals[row, lane] += value``; the low-order bits lost go to ``compensations``."""
    total = totals[row, lane]
    new = total + value
    if abs(total) >= abs(value):
        compensations[row, lane] += (total - new) + value
    else:
        compensations[row, lane] += (value - new) + total
    totals[row, lane] = new


def _lane_total(sums: NDArray[np.float64], compensations: NDArray[np.float64]) -> float:
    """The lanes' totals and compensations added exactly, then rounded once (``math.fsum``)."""
    return float(_exact_sum(np.concatenate((sums, compensations))))


@numba.njit(cache=True, nogil=True)
def _exact_sum(values: NDArray[np.float64]) -> float:  # pragma: no cover (compiled)
    """``math.fsum(values)`` bit for bit, compiled: the exact sum rounded once.

    CPython's algorithm (Shewchuk's partials, then the half-way correction of the
    final rounding), so that a batch of blocks needs no call back to Python. With a
    NaN or an infinity among the values, or if the exact sum overflows, the plain
    sum in index order is returned, and an infinity if the partials overflow: the
    caller sees a result that is not finite.
    """
    plain = 0.0
    for value in values:
        plain += value
    if not np.isfinite(plain):
        return plain
    partials = np.empty(values.size + 1)
    count = 0
    for value in values:
        x = value
        kept = 0
        for j in range(count):
            y = partials[j]
            if abs(x) < abs(y):
                x, y = y, x
            high = x + y
            low = y - (high - x)
            if low != 0.0:
                partials[kept] = low
                kept += 1
            x = high
        count = kept
        if x != 0.0:
            if not np.isfinite(x):
                return x  # an intermediate overflow (math.fsum raises): not finite
            partials[count] = x
            count += 1
    high = 0.0
    low = 0.0
    if count > 0:
        count -= 1
        high = partials[count]
        while count > 0:
            x = high
            count -= 1
            y = partials[count]
            high = x + y
            low = y - (high - x)
            if low != 0.0:
                break
        # Round half-way cases as the exact sum (the partials below) says.
        if count > 0 and (
            (low < 0.0 and partials[count - 1] < 0.0) or (low > 0.0 and partials[count - 1] > 0.0)
        ):
            y = low * 2.0
            x = high + y
            if y == x - high:
                high = x
    return high


@numba.njit(cache=True, nogil=True)
def _lane_totals(acc: NDArray[np.float64]) -> NDArray[np.float64]:  # pragma: no cover
    """``_lane_total`` of each row of each block: shape (n, 2, 3, lanes) to (n, 3)."""
    totals = np.empty((acc.shape[0], 3))
    for k in range(acc.shape[0]):
        for row in range(3):
            totals[k, row] = _exact_sum(np.concatenate((acc[k, 0, row], acc[k, 1, row])))
    return totals


# Dtypes the compiled kernel reads directly; others are cast chunk by chunk.
_DIRECT = (np.dtype(np.float32), np.dtype(np.float64))


def _raw_sums(x: NDArray[Any], y: NDArray[Any]) -> tuple[float, float, float]:
    """Sums of x*x, y*y and x*y in float64, in a fixed order (see ``_accumulate``)."""
    acc = np.zeros((2, 3, _LANES))  # lane sums and their compensations
    # With NUMBA_DISABLE_JIT the kernel runs as Python on NumPy scalars, which warn
    # on overflow; overflow is detected from the sums and handled by the caller.
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        if x.dtype in _DIRECT and y.dtype in _DIRECT:
            _accumulate(x, y, acc)
        else:
            # float16, integers, booleans: cast chunk by chunk into one small buffer.
            buffer = np.empty((2, min(_CHUNK, x.size)), dtype=np.float64)
            for start in range(0, x.size, _CHUNK):
                stop = min(start + _CHUNK, x.size)
                rows = buffer[:, : stop - start]
                rows[0] = x[start:stop]
                rows[1] = y[start:stop]
                _accumulate(rows[0], rows[1], acc)
        return tuple(_lane_total(acc[0, row], acc[1, row]) for row in range(3))


def _power_of_two_scale(vector: NDArray[np.float64]) -> float:
    """The power of two ``2**e`` with ``2**e <= max|vector| < 2**(e+1)`` (1.0 for zero)."""
    return _power_of_two_below(float(np.max(np.abs(vector))))


def _power_of_two_below(largest: float) -> float:
    """The power of two ``2**e`` with ``2**e <= largest < 2**(e+1)`` (1.0 for zero)."""
    if largest == 0:
        return 1.0
    _, exponent = math.frexp(largest)  # largest = m * 2**exponent, 0.5 <= m < 1
    return math.ldexp(1.0, exponent - 1)


def _safe(sum_of_squares: float, vector: NDArray[Any]) -> bool:
    """Whether a float64 sum of squares kept full precision without rescaling."""
    if sum_of_squares == 0:
        return not vector.any()  # a true zero, not squares that all underflowed
    return _TINY < sum_of_squares < _HUGE


def _block_sums(x: NDArray[Any], y: NDArray[Any], what: str) -> _BlockSums:
    """Scaled sums of squares and products of one block pair, exact in float64."""
    xx, yy, xy = _raw_sums(x, y)
    if not (math.isfinite(xx) and math.isfinite(yy)):
        # NaN or infinity in the input shows up in the sums: name it. Otherwise the
        # squares of finite float64 entries overflowed, and rescaling fixes that.
        error = _nonfinite_error(x, y, what)
        if error is not None:
            raise error
    wide = any(a.dtype.kind == "f" and a.dtype.itemsize >= 8 for a in (x, y))
    if not wide or (_safe(xx, x) and _safe(yy, y)):
        # float16/float32/integers: squares and their sums cannot leave [1e-90, 1e86].
        return _BlockSums(1.0, 1.0, xx, yy, xy)
    # Rare path: divide by a power of two near the largest entry (exact), so that
    # every sum is of order 1..size.
    x64 = x.astype(np.float64, copy=False)
    y64 = y.astype(np.float64, copy=False)
    scale_x, scale_y = _power_of_two_scale(x64), _power_of_two_scale(y64)
    xx, yy, xy = _raw_sums(x64 / scale_x, y64 / scale_y)
    return _BlockSums(scale_x, scale_y, xx, yy, xy)


def _cosine_of_sums(xy: float, xx: float, yy: float) -> float:
    """``xy / sqrt(xx * yy)`` clipped to [-1, 1]; both sums in [1e-300, 1e300] / size.

    One square root of the product (not a product of two roots) makes
    ``cos(x, x) == 1`` and ``cos(x, 2 x) == 1`` exact: ``sqrt(fl(s * s)) == s``.
    """
    return min(1.0, max(-1.0, xy / math.sqrt(xx * yy)))


# ---------------------------------------------------------------- sums from elsewhere


def _split_square(total: float) -> tuple[int, float]:
    """``total`` as ``4**half * rest`` with ``rest`` in [1, 4): ``(half, rest)``.

    Exact (powers of two only), also for subnormal and near-overflow totals; a
    zero total gives ``(0, 0.0)``.
    """
    if total == 0:
        return 0, 0.0
    _, exponent = math.frexp(total)  # total = m * 2**exponent, 0.5 <= m < 1
    half = (exponent - 1) // 2
    return half, math.ldexp(total, -2 * half)


def _sums_of_totals(dot: float, x_sq: float, y_sq: float) -> _BlockSums:
    """One block's given sums in the scaled form of :class:`_BlockSums` (exact)."""
    half_x, xx = _split_square(x_sq)
    half_y, yy = _split_square(y_sq)
    try:
        xy = math.ldexp(dot, -half_x - half_y)  # dot / (scale_x * scale_y)
    except OverflowError:  # far beyond Cauchy-Schwarz: refused by the caller
        xy = math.copysign(math.inf, dot)
    return _BlockSums(math.ldexp(1.0, half_x), math.ldexp(1.0, half_y), xx, yy, xy)


def _check_cauchy_schwarz(sums: _BlockSums, what: str) -> _BlockSums:
    """``sums`` if ``|<x_i, y_i>| <= ||x_i|| ||y_i|| (1 + _SUMS_RTOL)``, else a ValueError."""
    bound = math.sqrt(sums.xx) * math.sqrt(sums.yy)  # scaled sums: no overflow
    if abs(sums.xy) <= bound * (1.0 + _SUMS_RTOL):
        return sums
    ratio = abs(sums.xy) / bound if bound > 0 else math.inf
    raise ValueError(
        f"the sums of {what} are inconsistent: |<x_i, y_i>| is {ratio:.6g} times "
        f"||x_i|| ||y_i||, but Cauchy-Schwarz allows at most 1 (1 + {_SUMS_RTOL:g} for "
        "rounding). Expected the three sums of one pair of blocks, each added over "
        "the same shards (a sum of squares accumulated in low precision can also "
        "underflow to 0: accumulate in float64)"
    )


def _block_names(names: Any, n_blocks: int) -> tuple[str, ...]:
    """Block names as strings, one per block and all different (``"0"``, ``"1"``, ... for None)."""
    if names is None:
        return tuple(str(i) for i in range(n_blocks))
    if isinstance(names, (str, bytes)):
        raise ValueError(f"names is a string ({names!r}); expected a sequence of block names")
    try:
        listed = tuple(str(name) for name in names)
    except TypeError:
        raise ValueError(
            f"names is of type {type(names).__name__}; expected a sequence of block names"
        ) from None
    if len(listed) != n_blocks:
        raise ValueError(
            f"names has {len(listed)} entries but there are {n_blocks} blocks; "
            "expected one name per block"
        )
    seen: set[str] = set()
    for name in listed:
        if name in seen:
            raise ValueError(f"names must be different; {name!r} appears more than once")
        seen.add(name)
    return listed


# ---------------------------------------------------------------- other array libraries


def _is_foreign_array(value: Any) -> bool:
    """Whether ``value`` is an array of an Array API library other than NumPy."""
    return is_array_api_obj(value) and not is_numpy_array(value)


def _describe(value: Any) -> str:
    """``value``'s kind for messages: ``"a torch array"``, ``"a list"``."""
    if is_array_api_obj(value):
        kind = f"{type(value).__module__.split('.')[0]} array"
    else:
        kind = type(value).__name__
    return f"{'an' if kind[0] in 'aeiou' else 'a'} {kind}"


def _pair_namespace(x: Any, y: Any, what: str) -> Any:
    """The Array API namespace of a block pair, or None for NumPy input (arrays, lists, ...)."""
    x_foreign, y_foreign = _is_foreign_array(x), _is_foreign_array(y)
    if not (x_foreign or y_foreign):
        return None
    namespace = None
    if x_foreign and y_foreign:
        try:
            namespace = array_namespace(x, y)
        except TypeError:
            pass
    if namespace is None:
        raise ValueError(
            f"{what} of x is {_describe(x)} but {what} of y is {_describe(y)}; expected "
            "both blocks of a pair from the same array library (convert one of them)"
        )
    x_device, y_device = array_device(x), array_device(y)
    if x_device != y_device:
        raise ValueError(
            f"{what} of x is on device {x_device} but {what} of y on {y_device}; "
            "expected both blocks of a pair on the same device"
        )
    return namespace


def _check_foreign_block(xp: Any, value: Any, name: str) -> None:
    """The checks of ``as_real_array`` for an array of another library (finiteness comes later)."""
    if xp.isdtype(value.dtype, "complex floating"):
        raise ValueError(f"{name} is complex; expected real numbers")
    if not xp.isdtype(value.dtype, ("bool", "integral", "real floating")):
        raise ValueError(f"{name} is an array of dtype {value.dtype}; expected real numbers")
    if value.ndim == 0:
        raise ValueError(_single_number_message(name))
    if math.prod(value.shape) == 0:
        raise ValueError(
            f"{name} is empty (shape {tuple(value.shape)}); expected at least one entry"
        )


def _foreign_nonfinite_error(xp: Any, flat: Any, name: str) -> ValueError | None:
    """As ``nonfinite_error``, for a flat array of another library."""
    if not xp.isdtype(flat.dtype, "real floating"):
        return None
    bad = ~xp.isfinite(flat)
    if not bool(xp.any(bad)):
        return None
    index = int(xp.argmax(xp.astype(bad, xp.int8)))  # the first nonfinite entry
    kind = "NaN" if bool(xp.isnan(flat[index])) else "an infinite value"
    return ValueError(
        f"{name} contains {kind} (first at flat index {index}); expected finite numbers"
    )


def _working_dtype(xp: Any, device: Any) -> Any:
    """float64 where the library supports it on ``device``, else float32."""
    try:
        floats = xp.__array_namespace_info__().dtypes(device=device, kind="real floating")
    except (AttributeError, TypeError):  # a library older than the 2023.12 standard
        return getattr(xp, "float64", xp.float32)
    return floats.get("float64", floats.get("float32"))


def _squares_fit(xp: Any, dtype: Any, work: Any) -> bool:
    """Whether sums of squares of entries of ``dtype`` need no rescaling.

    True when, formed in ``work``, squares of up to ``2**40`` entries can neither
    overflow nor lose digits to underflow, and the product of two such sums is a
    normal float64 (the host forms it): float32, float16, bfloat16, integers and
    booleans summed in float64, as on the NumPy path.
    """
    if xp.isdtype(dtype, "bool"):
        return True
    if xp.isdtype(dtype, "integral"):
        info = xp.iinfo(dtype)
        top, bottom = math.log2(max(int(info.max), -int(info.min))), 0.0
    else:
        info = xp.finfo(dtype)
        top = math.log2(float(info.max))
        bottom = math.log2(float(info.smallest_normal) * float(info.eps))  # least subnormal
    room = xp.finfo(work)
    return (
        2 * top + 40 < math.log2(float(room.max))
        and 2 * bottom >= math.log2(float(room.smallest_normal))
        and 4 * top + 80 < 1023
        and 4 * bottom >= -1022
    )


def _safe_range(xp: Any, work: Any) -> tuple[float, float]:
    """Sums of squares in this open interval kept full precision (float64: ``_TINY``, ``_HUGE``)."""
    room = xp.finfo(work)
    low = float(room.smallest_normal) * 2.0**40 / float(room.eps)
    return max(_TINY, low), min(_HUGE, float(room.max) / 2.0**40)


def _foreign_raw_sums(
    xp: Any, x: Any, y: Any, work: Any, scale_x: float, scale_y: float
) -> tuple[float, float, float]:
    """Sums of (x/scale_x)**2, (y/scale_y)**2 and their products, in ``xp`` and ``work``.

    Flat ``x`` and ``y`` are read in slices of ``_XP_CHUNK`` entries; the sums stay
    on the device until the end, when three numbers move to the host.
    """
    total = None
    size = x.shape[0]
    # Libraries built on NumPy (array_api_strict, Dask) warn on overflow; overflow
    # is detected from the sums and handled by the caller, as on the NumPy path.
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        for start in range(0, size, _XP_CHUNK):
            stop = min(start + _XP_CHUNK, size)  # the standard leaves longer slices undefined
            a = xp.astype(x[start:stop], work, copy=False)
            b = xp.astype(y[start:stop], work, copy=False)
            if scale_x != 1.0:
                a = a / scale_x  # a power of two: exact
            if scale_y != 1.0:
                b = b / scale_y
            part = xp.stack([xp.sum(a * a), xp.sum(b * b), xp.sum(a * b)])
            total = part if total is None else total + part
    return float(total[0]), float(total[1]), float(total[2])


def _cpu_tensor_view(value: Any) -> NDArray[Any] | None:
    """A flat NumPy view (no copy) of a contiguous CPU PyTorch tensor of a real dtype, or None.

    Only plain tensors and parameters qualify: subclasses such as DTensor keep their
    own semantics, on the Array API path; so do bfloat16 (NumPy has no such dtype),
    strided views and tensors on other devices.
    """
    torch = sys.modules.get("torch")  # a torch tensor exists only once torch is imported
    if torch is None:
        return None
    tensor_types, viewable = _torch_kinds(torch)
    if type(value) not in tensor_types or value.dtype not in viewable:
        return None
    if not value.is_cpu or not value.is_contiguous():
        return None
    try:
        return (value.detach() if value.requires_grad else value).numpy().reshape(-1)
    except (RuntimeError, TypeError):  # e.g. a tensor with a pending negation bit
        return None


@functools.cache
def _torch_kinds(torch: Any) -> tuple[tuple[type, ...], frozenset[Any]]:
    """Plain PyTorch tensor types, and the dtypes NumPy reads without a copy (not bfloat16)."""
    dtypes = ["float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool"]
    return (torch.Tensor, torch.nn.Parameter), frozenset(getattr(torch, d) for d in dtypes)


def _cpu_tensor_pair(x: Any, y: Any, what: str) -> tuple[NDArray[Any], NDArray[Any]] | None:
    """Flat NumPy views of a pair of CPU PyTorch tensors (checked as blocks), or None."""
    x_view = _cpu_tensor_view(x)
    y_view = None if x_view is None else _cpu_tensor_view(y)
    if y_view is None:
        return None
    for tensor, view, side in ((x, x_view, "x"), (y, y_view, "y")):
        if tensor.ndim == 0:
            raise ValueError(_single_number_message(f"{what} of {side}"))
        if view.size == 0:
            raise ValueError(
                f"{what} of {side} is empty (shape {tuple(tensor.shape)}); expected at "
                "least one entry"
            )
    if tuple(x.shape) != tuple(y.shape):
        raise ValueError(
            f"{what} has shape {tuple(x.shape)} in x but {tuple(y.shape)} in y; "
            "expected paired blocks of the same shape"
        )
    return x_view, y_view


def _cpu_tensor_sums(x: NDArray[Any], y: NDArray[Any], what: str) -> _BlockSums:
    """``_block_sums`` of one pair of views of CPU tensors: the same bits.

    float32 and float64 pairs go straight to the kernel; only a pair whose sums are
    not finite or (float64) outside the safe range, or of another dtype, takes
    ``_block_sums`` itself.
    """
    if x.dtype in _DIRECT and y.dtype in _DIRECT:
        acc = np.zeros((2, 3, _LANES))
        with np.errstate(over="ignore", under="ignore", invalid="ignore"):
            _accumulate(x, y, acc)
        totals = (_lane_total(acc[0, row], acc[1, row]) for row in range(3))
        sums = _checked_sums((x, y), *totals)
        if sums is not None:
            return sums
    return _block_sums(x, y, what)  # the NumPy path's handling of the rare cases


def _sum_run(
    views: list[tuple[NDArray[Any], NDArray[Any]]], acc: NDArray[np.float64], start: int, stop: int
) -> None:
    """``_accumulate`` of the view pairs ``start <= k < stop`` into ``acc[k]``.

    One compiled call per pair: a call costs about a microsecond, and the kernel
    releases the GIL while it sums, so two threads sum their runs side by side.
    """
    for k in range(start, stop):
        x, y = views[k]
        _accumulate(x, y, acc[k])


@functools.cache
def _worker_pool() -> ThreadPoolExecutor | None:
    """Threads besides the caller's for large batches; None on a single CPU."""
    available = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1
    workers = min(available, 4) - 1
    return ThreadPoolExecutor(workers, "cosine_book") if workers > 0 else None


def _split_points(sizes: list[int], parts: int) -> list[int]:
    """Cut points that give ``parts`` consecutive runs of blocks of about equal entries."""
    running = np.cumsum(sizes)
    targets = running[-1] * np.arange(1, parts) / parts
    cuts = np.searchsorted(running, targets, side="left") + 1
    return [0, *np.minimum(cuts, len(sizes)).tolist(), len(sizes)]


def _batch_sums(
    views: list[tuple[NDArray[Any], NDArray[Any]]],
) -> NDArray[np.float64]:
    """The sums of x*x, y*y and x*y of many same-dtype view pairs, shape (n, 3).

    On two or more CPUs a large batch is split into runs of whole blocks summed in
    parallel (the kernel releases the GIL). Each block is summed by the same code in
    the same order either way: the bits do not change.
    """
    acc = np.zeros((len(views), 2, 3, _LANES))
    sizes = [x.size for x, _ in views]
    pool = _worker_pool()
    parts = 1 if pool is None else min(pool._max_workers + 1, len(views))
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        if parts == 1 or sum(sizes) < _THREADED_ENTRIES:
            _sum_run(views, acc, 0, len(views))
        else:
            cuts = _split_points(sizes, parts)
            futures = [
                pool.submit(_sum_run, views, acc, cuts[i], cuts[i + 1]) for i in range(1, parts)
            ]
            _sum_run(views, acc, cuts[0], cuts[1])
            for future in futures:
                future.result()
    return _lane_totals(acc)


def _contiguous_sums_many(
    views: list[tuple[NDArray[Any], NDArray[Any]]], whats: list[str]
) -> list[_BlockSums]:
    """``_cpu_tensor_sums`` of many view pairs: float32 and float64 pairs in batches."""
    sums: list[_BlockSums | None] = [None] * len(views)
    batches: dict[tuple[Any, Any], list[int]] = {}
    for index, (x, y) in enumerate(views):
        if x.dtype in _DIRECT and x.dtype == y.dtype:
            batches.setdefault((x.dtype, y.dtype), []).append(index)
    for indices in batches.values():
        totals = _batch_sums([views[i] for i in indices]).tolist()
        for index, (xx, yy, xy) in zip(indices, totals, strict=True):
            sums[index] = _checked_sums(views[index], xx, yy, xy)
    return [
        value if value is not None else _cpu_tensor_sums(*views[i], whats[i])
        for i, value in enumerate(sums)
    ]


def _checked_sums(
    view: tuple[NDArray[Any], NDArray[Any]], xx: float, yy: float, xy: float
) -> _BlockSums | None:
    """A view pair's block sums, or None when the pair needs ``_block_sums``."""
    x, y = view
    if not (math.isfinite(xx) and math.isfinite(yy)):
        return None
    narrow = x.dtype.itemsize == 4 and y.dtype.itemsize == 4
    if narrow or (_safe(xx, x) and _safe(yy, y)):
        return _BlockSums(1.0, 1.0, xx, yy, xy)
    return None


def _foreign_block_sums(xp: Any, x: Any, y: Any, what: str) -> _BlockSums:
    """``_block_sums`` for a block pair of another Array API library, computed in it."""
    _check_foreign_block(xp, x, f"{what} of x")
    _check_foreign_block(xp, y, f"{what} of y")
    if tuple(x.shape) != tuple(y.shape):
        raise ValueError(
            f"{what} has shape {tuple(x.shape)} in x but {tuple(y.shape)} in y; "
            "expected paired blocks of the same shape"
        )
    work = _working_dtype(xp, array_device(x))
    x_flat, y_flat = xp.reshape(x, (-1,)), xp.reshape(y, (-1,))
    xx, yy, xy = _foreign_raw_sums(xp, x_flat, y_flat, work, 1.0, 1.0)
    if not (math.isfinite(xx) and math.isfinite(yy)):
        for flat, side in ((x_flat, "x"), (y_flat, "y")):
            error = _foreign_nonfinite_error(xp, flat, f"{what} of {side}")
            if error is not None:
                raise error
    if _squares_fit(xp, x.dtype, work) and _squares_fit(xp, y.dtype, work):
        return _check_cauchy_schwarz(_BlockSums(1.0, 1.0, xx, yy, xy), what)
    low, high = _safe_range(xp, work)

    def safe(total: float, flat: Any) -> bool:
        if total == 0:
            return not bool(xp.any(flat != 0))  # a true zero, not underflowed squares
        return low < total < high

    if safe(xx, x_flat) and safe(yy, y_flat):
        return _check_cauchy_schwarz(_BlockSums(1.0, 1.0, xx, yy, xy), what)
    # Rare path, as for NumPy: divide by a power of two near the largest entry.
    scale_x, scale_y = (
        _power_of_two_below(max(float(xp.max(flat)), -float(xp.min(flat))))
        for flat in (x_flat, y_flat)
    )
    xx, yy, xy = _foreign_raw_sums(xp, x_flat, y_flat, work, scale_x, scale_y)
    return _check_cauchy_schwarz(_BlockSums(scale_x, scale_y, xx, yy, xy), what)


def _pair_blocks(
    x_blocks: Sequence[ArrayLike] | Mapping[Any, ArrayLike],
    y_blocks: Sequence[ArrayLike] | Mapping[Any, ArrayLike],
) -> tuple[tuple[str, ...], list[tuple[ArrayLike, ArrayLike]]]:
    """Match the blocks of x and y by name (mappings) or position (sequences)."""
    x_is_map = isinstance(x_blocks, Mapping)
    y_is_map = isinstance(y_blocks, Mapping)
    if x_is_map != y_is_map:
        raise ValueError(
            "x_blocks and y_blocks must both be mappings (name -> array) or both be "
            f"sequences of arrays; got {type(x_blocks).__name__} and "
            f"{type(y_blocks).__name__}"
        )
    if x_is_map:
        x_keys, y_keys = list(x_blocks), list(y_blocks)
        if set(x_keys) != set(y_keys):
            only_x = sorted(map(str, set(x_keys) - set(y_keys)))
            only_y = sorted(map(str, set(y_keys) - set(x_keys)))
            raise ValueError(
                "x_blocks and y_blocks must have the same block names; "
                f"only in x: {only_x}, only in y: {only_y}"
            )
        pairs = [(x_blocks[key], y_blocks[key]) for key in x_keys]  # type: ignore[index]
        names = tuple(str(key) for key in x_keys)
    else:
        for blocks, side in ((x_blocks, "x_blocks"), (y_blocks, "y_blocks")):
            if isinstance(blocks, (str, bytes)):
                raise ValueError(f"{side} is a string; expected a sequence of arrays")
            if hasattr(blocks, "__array__") or hasattr(blocks, "__array_namespace__"):
                # Iterating an array would make every entry (or row) a block silently.
                raise ValueError(
                    f"{side} is a single array of shape {np.shape(blocks)}; expected a "
                    "sequence of blocks (a list of arrays) or a mapping name -> array. "
                    "For the cosine of two whole vectors use cosine(x, y); to use the "
                    "rows of a matrix as blocks pass list(matrix)"
                )
        x_list, y_list = list(x_blocks), list(y_blocks)
        if len(x_list) != len(y_list):
            raise ValueError(
                f"x has {len(x_list)} blocks but y has {len(y_list)}; "
                "expected the same number of blocks"
            )
        pairs = list(zip(x_list, y_list, strict=True))
        names = tuple(str(i) for i in range(len(pairs)))
    if not pairs:
        raise ValueError("no blocks given; expected at least one block")
    return names, pairs


def _combine(names: tuple[str, ...], sums: list[_BlockSums]) -> BlockCosines:
    """Every term of the identity from the scaled sums of each block.

    The one road from sums to a :class:`BlockCosines`: NumPy blocks, blocks of
    other array libraries and sums given by the caller all end here.
    """
    xx = np.array([s.xx for s in sums])
    yy = np.array([s.yy for s in sums])
    xy = np.array([s.xy for s in sums])
    if not xx.any():
        raise ValueError("x is the zero vector; its cosine with anything is undefined")
    if not yy.any():
        raise ValueError("y is the zero vector; its cosine with anything is undefined")
    # Zero blocks carry no scale (their placeholder scale must not enter the ratios).
    scale_x = np.where(xx > 0, [s.scale_x for s in sums], 0.0)
    scale_y = np.where(yy > 0, [s.scale_y for s in sums], 0.0)
    # Every block relative to the largest scale: powers of two, so exact; the
    # whole-vector sums are then of order 1..size and cannot overflow.
    with np.errstate(under="ignore"):
        rel_x = scale_x / scale_x.max()
        rel_y = scale_y / scale_y.max()
        total_xx = math.fsum(rel_x * rel_x * xx)  # ||x||^2 / top_x^2, correctly rounded
        total_yy = math.fsum(rel_y * rel_y * yy)
        total_xy = math.fsum(rel_x * rel_y * xy)
    defined = (xx > 0) & (yy > 0)
    local = np.full(len(sums), np.nan)
    for i in np.flatnonzero(defined):
        local[i] = _cosine_of_sums(xy[i], xx[i], yy[i])
    # sqrt of each sum separately: a block may be tiny next to the whole.
    x_shares = rel_x * np.sqrt(xx) / math.sqrt(total_xx)  # ||x_i|| / ||x||
    y_shares = rel_y * np.sqrt(yy) / math.sqrt(total_yy)
    weights = x_shares * y_shares
    with np.errstate(over="ignore"):
        x_norms = scale_x * np.sqrt(xx)
        y_norms = scale_y * np.sqrt(yy)
    return BlockCosines(
        names=names,
        local=local,
        x_norms=x_norms,
        y_norms=y_norms,
        weights=weights,
        profile_cosine=min(math.fsum(weights), 1.0),
        global_cosine=_cosine_of_sums(total_xy, total_xx, total_yy),
    )


def block_cosines(
    x_blocks: Sequence[ArrayLike] | Mapping[Any, ArrayLike],
    y_blocks: Sequence[ArrayLike] | Mapping[Any, ArrayLike],
) -> BlockCosines:
    r"""Local cosines, block norms, weights and the global cosine of blocked vectors.

    Parameters
    ----------
    x_blocks, y_blocks : sequence of array_like, or mapping from name to array_like
        The blocks of ``x`` and of ``y``. Sequences are paired by position;
        mappings (for example a model's named parameters and their gradients)
        are paired by key and must have the same keys. Paired blocks must have
        the same shape; blocks of different pairs may differ in shape and size.
        A block is anything NumPy reads as an array, or an array of a library
        that follows the Array API standard (PyTorch, JAX, CuPy, ...); both
        blocks of a pair must come from the same library and device.

    Returns
    -------
    BlockCosines
        ``local``, ``x_norms``, ``y_norms``, ``weights``, ``profile_cosine``
        (:math:`\rho`) and ``global_cosine``, with
        ``global_cosine == sum(weights * local)`` to rounding.

    Raises
    ------
    ValueError
        If the two sides have different numbers of blocks or different names,
        if paired blocks differ in shape, come from different array libraries
        or sit on different devices, if a block is empty, complex or contains
        NaN or infinity, or if the whole of ``x`` or ``y`` is zero.

    See Also
    --------
    block_cosines_from_sums : The same result from three sums per block.

    Notes
    -----
    A block that is zero in ``x`` or in ``y`` has no defined local cosine: it is
    reported as ``nan`` with weight 0, and the global cosine stays defined as
    long as neither whole vector is zero. The vectors are never concatenated:
    each block is read once (narrow dtypes in fixed-size float64 chunks).

    Blocks of another array library (found with ``array-api-compat``) are not
    copied to NumPy. The sums :math:`\langle x_i, y_i \rangle`,
    :math:`\|x_i\|^2` and :math:`\|y_i\|^2` are formed in that library on the
    blocks' device, in float64 where the device supports it (float32 otherwise),
    in slices of a few million entries; a float64 block whose sums would leave
    the safe range is first divided by a power of two, as on the NumPy path.
    Three numbers per block then move to the host (a few more for a block that
    needs rescaling) and go through the same code as
    :func:`block_cosines_from_sums`. The bit-for-bit reproducibility of the
    NumPy path is not promised there: the library chooses its summation order.
    Contiguous PyTorch tensors in CPU memory (plain tensors and parameters of
    dtype float16, float32, float64, integers or bool) are the exception: the
    compiled kernel reads them in place through a NumPy view, so they give the
    NumPy path's sums bit for bit, at about 1.3 to 1.7 times the time of one
    ``torch.dot`` pass per tensor (``benchmarks/bench_torch.py``, two CPUs;
    forming float64 sums with PyTorch operations takes a cast copy of every slice
    and is tens of times slower on a CPU). bfloat16, strided views, other devices and tensor
    subclasses such as DTensor take the Array API route (for DTensors, see
    :func:`cosine_book.distributed.sharded_block_cosines`).
    A PyTorch user passes the tensors themselves, for example::

        with torch.no_grad():
            result = block_cosines(
                {name: update[name] for name, _ in model.named_parameters()},
                {name: p.grad for name, p in model.named_parameters()},
            )

    Examples
    --------
    The counterexample of chapter 2: every local cosine is 1, the global one is not.

    >>> result = block_cosines([[1.0], [1.0]], [[1.0], [2.0]])
    >>> result.local
    array([1., 1.])
    >>> round(result.global_cosine, 6), round(float(result.weights.sum()), 6)
    (0.948683, 0.948683)

    Named blocks, as for a model's parameters and gradients:

    >>> update = {"w": [[1.0, 0.0], [0.0, 1.0]], "b": [3.0, 4.0]}
    >>> gradient = {"w": [[1.0, 0.0], [0.0, 1.0]], "b": [-3.0, -4.0]}
    >>> result = block_cosines(update, gradient)
    >>> result.names, result.local
    (('w', 'b'), array([ 1., -1.]))
    >>> round(result.global_cosine, 6)
    -0.851852

    Arrays of another Array API library give the same result, here with
    ``array_api_strict`` (the standard's reference implementation):

    >>> import array_api_strict as xp
    >>> result = block_cosines([xp.asarray([1.0]), xp.asarray([1.0])],
    ...                        [xp.asarray([1.0]), xp.asarray([2.0])])
    >>> round(result.global_cosine, 6)
    0.948683
    """
    names, pairs = _pair_blocks(x_blocks, y_blocks)
    sums: list[_BlockSums | None] = []
    contiguous_pairs, contiguous_whats, contiguous_slots = [], [], []
    for name, (x_value, y_value) in zip(names, pairs, strict=True):
        what = f"block {name!r}"
        views = _cpu_tensor_pair(x_value, y_value, what)
        if views is not None:  # CPU PyTorch tensors: the compiled kernel reads them in place
            contiguous_pairs.append(views)
            contiguous_whats.append(what)
            contiguous_slots.append(len(sums))
            sums.append(None)  # filled below, all such tensors in one batch
            continue
        xp = _pair_namespace(x_value, y_value, what)
        if xp is not None:  # PyTorch, JAX, CuPy, ...: the sums are formed there
            sums.append(_foreign_block_sums(xp, x_value, y_value, what))
            continue
        x_array = _as_block(x_value, f"{what} of x")
        y_array = _as_block(y_value, f"{what} of y")
        x_shape, y_shape = np.shape(x_value), np.shape(y_value)
        if x_shape != y_shape:
            raise ValueError(
                f"{what} has shape {x_shape} in x but {y_shape} in y; "
                "expected paired blocks of the same shape"
            )
        if x_array.flags.c_contiguous and y_array.flags.c_contiguous:
            contiguous_pairs.append((x_array, y_array))  # batched with the tensors
            contiguous_whats.append(what)
            contiguous_slots.append(len(sums))
            sums.append(None)
            continue
        sums.append(_block_sums(x_array, y_array, what))
    if contiguous_pairs:
        contiguous_sums = _contiguous_sums_many(contiguous_pairs, contiguous_whats)
        for slot, value in zip(contiguous_slots, contiguous_sums, strict=True):
            sums[slot] = value
    return _combine(names, sums)  # type: ignore[arg-type]


def block_cosines_from_sums(
    dots: ArrayLike,
    x_sq: ArrayLike,
    y_sq: ArrayLike,
    names: Iterable[Any] | None = None,
) -> BlockCosines:
    r"""Every term of the block decomposition from three sums per block.

    For each block, :math:`\langle x_i, y_i \rangle`, :math:`\|x_i\|^2` and
    :math:`\|y_i\|^2` determine the local cosine, both block norms, the weight,
    and (over all blocks) :math:`\rho` and the global cosine. So the sums can be
    computed wherever the blocks live (on a GPU, shard by shard), added across
    devices, and only these numbers handed to this function: three per block,
    whatever the size of the model.

    Parameters
    ----------
    dots : array_like of shape (n_blocks,)
        Inner products :math:`\langle x_i, y_i \rangle`.
    x_sq, y_sq : array_like of shape (n_blocks,)
        Squared norms :math:`\|x_i\|^2` and :math:`\|y_i\|^2`, nonnegative.
    names : sequence, optional
        One name per block (converted with ``str``, all different), for example
        the keys of a model's state dict; default ``"0"``, ``"1"``, ...

    Returns
    -------
    BlockCosines
        The same fields, and the same conventions, as :func:`block_cosines`
        on the blocks the sums come from: a block with ``x_sq`` or ``y_sq``
        zero has local cosine ``nan`` and weight 0.

    Raises
    ------
    ValueError
        If the three arrays are not 1-D of the same nonzero length, are not
        real numbers or not finite, if a squared norm is negative, if a block's
        sums violate the Cauchy-Schwarz inequality beyond rounding (see Notes),
        if all of ``x_sq`` or all of ``y_sq`` is zero, or if ``names`` is not
        one distinct name per block.

    See Also
    --------
    block_cosines : The same result from the blocks themselves.

    Notes
    -----
    Sums from any source are rounded, so a block's
    :math:`|\langle x_i, y_i \rangle|` may slightly exceed
    :math:`\|x_i\| \, \|y_i\|`. Up to a factor :math:`1 + 10^{-5}` (room for
    sums accumulated in float32) the local cosine is clipped to :math:`[-1, 1]`;
    beyond it the sums cannot come from one pair of vectors (for example one of
    them was not added over all shards) and are refused. In particular a block
    with a zero squared norm must have a zero inner product.

    The sums may be as large as the largest float or as small as the smallest
    subnormal one: each is split exactly into a power of two and a number in
    :math:`[1, 4)` before any product is formed, so nothing overflows or
    underflows, and equal sums give a local cosine of exactly 1.

    With PyTorch, for a model whose parameters and gradients are sharded across
    devices (FSDP, tensor parallelism), each rank forms the sums of its shards
    in float64 (so that squares of float32 or bfloat16 entries neither overflow
    nor underflow), one all-reduce adds them, and three numbers per tensor
    reach the host (a tensor replicated on every rank must be counted on one
    rank only)::

        names, rows = [], []
        for name, param in model.named_parameters():
            u, g = update[name].double(), param.grad.double()  # this rank's shard
            rows.append(torch.stack([(u * g).sum(), (u * u).sum(), (g * g).sum()]))
            names.append(name)
        sums = torch.stack(rows)           # shape (n_tensors, 3), on the device
        torch.distributed.all_reduce(sums) # add the shards' sums across ranks
        dots, u_sq, g_sq = sums.cpu().numpy().T
        result = block_cosines_from_sums(dots, u_sq, g_sq, names=names)

    Examples
    --------
    The counterexample of chapter 2, :math:`x = (1, 1)` and :math:`y = (1, 2)`
    cut into two blocks of one entry, from its sums:

    >>> result = block_cosines_from_sums([1.0, 2.0], [1.0, 1.0], [1.0, 4.0])
    >>> result.local, round(result.global_cosine, 6)
    (array([1., 1.]), 0.948683)

    Sums of shards add up: a block cut in two shards gives the same result.

    >>> x, y = np.array([3.0, 1.0, 2.0]), np.array([1.0, 1.0, -1.0])
    >>> shards = [(x[:2], y[:2]), (x[2:], y[2:])]
    >>> dot = sum(np.sum(a * b) for a, b in shards)
    >>> x_sq = sum(np.sum(a * a) for a, _ in shards)
    >>> y_sq = sum(np.sum(b * b) for _, b in shards)
    >>> from_sums = block_cosines_from_sums([dot], [x_sq], [y_sq], names=["w"])
    >>> from_sums.names, bool(np.isclose(from_sums.local[0], cosine(x, y)))
    (('w',), True)

    Sums near the ends of the float range, and a block that is zero in ``y``:

    >>> result = block_cosines_from_sums([5e299, 0.0], [1e300, 1e-300], [1e300, 0.0])
    >>> result.local, result.weights
    (array([0.5, nan]), array([1., 0.]))
    >>> block_cosines_from_sums([2.0], [1.0], [1.0])
    Traceback (most recent call last):
    ...
    ValueError: the sums of block '0' are inconsistent: |<x_i, y_i>| is 2 times ...
    """
    dot_array = as_real_array(dots, "dots", ndim=1).astype(np.float64)
    x_array = as_real_array(x_sq, "x_sq", ndim=1).astype(np.float64)
    y_array = as_real_array(y_sq, "y_sq", ndim=1).astype(np.float64)
    if not (dot_array.size == x_array.size == y_array.size):
        raise ValueError(
            "dots, x_sq and y_sq must have the same length (one entry per block); got "
            f"{dot_array.size}, {x_array.size} and {y_array.size}"
        )
    for array, name in ((x_array, "x_sq"), (y_array, "y_sq")):
        if (array < 0).any():
            index = int(np.argmax(array < 0))
            raise ValueError(
                f"{name} must be nonnegative (squared norms); got {float(array[index])} "
                f"at index {index}"
            )
    block_names = _block_names(names, dot_array.size)
    sums = [
        _check_cauchy_schwarz(_sums_of_totals(dot, xx, yy), f"block {name!r}")
        for name, dot, xx, yy in zip(
            block_names, dot_array.tolist(), x_array.tolist(), y_array.tolist(), strict=True
        )
    ]
    return _combine(block_names, sums)


def cosine(x: ArrayLike, y: ArrayLike) -> float:
    r"""Cosine similarity of two arrays of the same shape, flattened.

    :math:`\cos(x, y) = \langle x, y \rangle / (\|x\| \, \|y\|)`, accumulated
    in float64 with exactly rounded sums. Entries from about ``1e-300`` to ``1e300``
    are rescaled safely and the result is correct to rounding, unless products of
    entries underflow to subnormal numbers (below about ``2e-308``): those lose
    relative accuracy, and a cosine built only from them can be far off, even in
    sign.

    Parameters
    ----------
    x, y : array_like
        Real arrays of the same shape (any number of dimensions).

    Returns
    -------
    float
        The cosine, in :math:`[-1, 1]`.

    Raises
    ------
    ValueError
        If the shapes differ, an input is empty, complex or not finite, or
        either vector is zero (its direction, and so the cosine, is undefined).

    Examples
    --------
    >>> cosine([1, 1], [1, 2])  # doctest: +ELLIPSIS
    0.9486832980505...
    >>> cosine([3e300, 4e300], [4e300, 3e300])
    0.96
    >>> cosine([1e-300, 0.0], [0.0, 2e-300])
    0.0
    """
    x_array = as_real_array(x, "x", finite=False)
    y_array = as_real_array(y, "y", finite=False)
    if x_array.shape != y_array.shape:
        raise ValueError(
            f"x has shape {x_array.shape} but y has shape {y_array.shape}; expected equal shapes"
        )
    sums = _block_sums(x_array.reshape(-1), y_array.reshape(-1), "input")
    if sums.xx == 0:
        raise ValueError("x is the zero vector; its cosine with anything is undefined")
    if sums.yy == 0:
        raise ValueError("y is the zero vector; its cosine with anything is undefined")
    return _cosine_of_sums(sums.xy, sums.xx, sums.yy)


def unit_rows(E: NDArray[np.float64], what: str = "E") -> NDArray[np.float64]:
    """Rows over their norms, each first divided by a power of two near its peak (exact).

    Chapters 6 and 7: the one unit-rows rule; a zero row is refused.
    """
    peak = np.max(np.abs(E), axis=1)
    zero = np.flatnonzero(peak == 0)
    if zero.size:
        raise ValueError(
            f"{what} has {zero.size} zero row(s) (first: row {zero[0]}); their cosine is undefined"
        )
    scaled = np.ldexp(E, -np.frexp(peak)[1][:, None])
    return scaled / np.sqrt(np.sum(scaled * scaled, axis=1))[:, None]


def _symmetric(S: NDArray[np.float64]) -> NDArray[np.float64]:
    """The upper triangle mirrored (exact symmetry), unit diagonal, clipped to [-1, 1]."""
    np.copyto(S, S.T, where=np.tri(S.shape[0], k=-1, dtype=bool))
    np.fill_diagonal(S, 1.0)
    return np.clip(S, -1.0, 1.0, out=S)


def cosine_matrix(E: ArrayLike, F: ArrayLike | None = None) -> NDArray[np.float64]:
    r"""Cosines between the rows of ``E`` and of ``F``: :math:`\Omega_E E F^\top \Omega_F`.

    Chapters 6 and 7; :math:`\Omega` scales each row to unit length. Without ``F``
    (``F = E``), symmetric bit for bit with unit diagonal. Zero rows are refused.

    Examples
    --------
    >>> cosine_matrix([[1.0, 0.0], [1.0, 1.0]]).round(4).tolist()
    [[1.0, 0.7071], [0.7071, 1.0]]
    """
    E = as_real_matrix(E, "E")
    if F is None:
        unit = unit_rows(E, "E")
        return _symmetric(unit @ unit.T)
    F = as_real_matrix(F, "F")
    if F.shape[1] != E.shape[1]:
        raise ValueError(
            f"E has rows of length {E.shape[1]}, F {F.shape[1]}; expected equal lengths"
        )
    return np.clip(unit_rows(E, "E") @ unit_rows(F, "F").T, -1.0, 1.0)


def cosine_bounds(local: ArrayLike, x_norms: ArrayLike, y_norms: ArrayLike) -> tuple[float, float]:
    r"""Sharp bounds on the global cosine from the local cosines and the profile cosine.

    With :math:`\rho` the cosine between ``x_norms`` and ``y_norms`` and
    :math:`c_i` the local cosines,

    .. math::

        \rho \min_i c_i \le \cos(x, y) \le \rho \max_i c_i

    for blocks of any signs (the minimum and maximum run over the blocks that
    are nonzero on both sides). The interval is the exact range of the global
    cosine over all ways of distributing the block norms that keep the same
    :math:`\rho` (chapter 3): each end is approached as the weight concentrates on
    the block with the smallest or largest local cosine, and reached exactly
    when all local cosines of nonzero blocks are equal.

    Parameters
    ----------
    local : array_like of shape (n_blocks,)
        Local cosines :math:`c_i`, each in :math:`[-1, 1]`. ``nan`` marks a
        block that is zero in ``x`` or ``y``; such a block must have a zero
        norm on one side.
    x_norms, y_norms : array_like of shape (n_blocks,)
        Nonnegative block norms.

    Returns
    -------
    (lower, upper) : tuple of float
        :math:`\rho \min_i c_i` and :math:`\rho \max_i c_i`; ``(0.0, 0.0)``
        if no block is nonzero on both sides.

    Raises
    ------
    ValueError
        If the lengths differ, an array is empty, a norm is negative or not
        finite, a local cosine lies outside :math:`[-1, 1]`, a ``nan`` local cosine
        sits on a block with both norms nonzero, or a norm profile is all zeros.

    Examples
    --------
    >>> cosine_bounds([0.9, 0.95], [1.0, 0.0001], [0.0001, 1.0])  # doctest: +ELLIPSIS
    (0.00017999..., 0.00018999...)
    >>> cosine_bounds([-0.5, -0.5], [1.0, 0.1], [0.1, 1.0])  # doctest: +ELLIPSIS
    (-0.0990099..., -0.0990099...)
    """
    local_array = as_real_array(local, "local", ndim=1, finite=False).astype(np.float64)
    x_array = as_real_array(x_norms, "x_norms", ndim=1).astype(np.float64)
    y_array = as_real_array(y_norms, "y_norms", ndim=1).astype(np.float64)
    if not (local_array.size == x_array.size == y_array.size):
        raise ValueError(
            f"local, x_norms and y_norms must have the same length; got "
            f"{local_array.size}, {x_array.size} and {y_array.size}"
        )
    for array, name in ((x_array, "x_norms"), (y_array, "y_norms")):
        if (array < 0).any():
            raise ValueError(f"{name} must be nonnegative; got {array}")
        if not array.any():
            raise ValueError(f"{name} is all zeros; the cosine is undefined")
    if np.isinf(local_array).any():
        raise ValueError(f"local cosines must lie in [-1, 1]; got {local_array}")
    return _bounds(local_array, x_array, y_array)


def _bounds(
    local: NDArray[np.float64], x_norms: NDArray[np.float64], y_norms: NDArray[np.float64]
) -> tuple[float, float]:
    """``cosine_bounds`` on arrays already checked (float64, 1-D, same length)."""
    weighted = (x_norms > 0) & (y_norms > 0)
    if np.isnan(local[weighted]).any():
        raise ValueError("a local cosine is nan on a block whose norms are both nonzero")
    defined = local[~np.isnan(local)]
    if ((defined < -1) | (defined > 1)).any():
        raise ValueError(f"local cosines must lie in [-1, 1]; got {local}")
    if not weighted.any():
        return 0.0, 0.0
    # rho via the scale-safe cosine of the two norm profiles.
    sums = _block_sums(x_norms, y_norms, "norms")
    rho = _cosine_of_sums(sums.xy, sums.xx, sums.yy)
    return rho * float(local[weighted].min()), rho * float(local[weighted].max())


def blocks_with(
    local: ArrayLike, x_norms: ArrayLike, y_norms: ArrayLike
) -> tuple[list[NDArray[np.float64]], list[NDArray[np.float64]]]:
    r"""Build blocked vectors with prescribed local cosines and block norms.

    Block :math:`i` is two-dimensional,

    .. math::

        x_i = \|x_i\| \, (1, 0), \qquad
        y_i = \|y_i\| \, \bigl(c_i, \sqrt{1 - c_i^2}\bigr),

    so :math:`\cos(x_i, y_i) = c_i`. Any combination of local cosines and norms
    is realised this way, which is what makes the bounds of chapter 3 sharp.

    Parameters
    ----------
    local : array_like of shape (n_blocks,)
        Local cosines :math:`c_i`, each in :math:`[-1, 1]`.
    x_norms, y_norms : array_like of shape (n_blocks,)
        Nonnegative block norms :math:`\|x_i\|` and :math:`\|y_i\|`.

    Returns
    -------
    x_blocks, y_blocks : list of ndarray of shape (2,)

    Raises
    ------
    ValueError
        If the lengths differ, a cosine lies outside :math:`[-1, 1]`, or a norm
        is negative or not finite.

    Examples
    --------
    >>> xs, ys = blocks_with([0.9, 0.9], [1.0, 0.01], [0.01, 1.0])
    >>> result = block_cosines(xs, ys)
    >>> result.local.round(12).tolist(), round(result.global_cosine, 4)
    ([0.9, 0.9], 0.018)
    """
    local_array = as_real_array(local, "local", ndim=1).astype(np.float64)
    x_array = as_real_array(x_norms, "x_norms", ndim=1).astype(np.float64)
    y_array = as_real_array(y_norms, "y_norms", ndim=1).astype(np.float64)
    if not (local_array.size == x_array.size == y_array.size):
        raise ValueError(
            "local, x_norms and y_norms must have the same length; got "
            f"{local_array.size}, {x_array.size} and {y_array.size}"
        )
    if (np.abs(local_array) > 1).any():
        raise ValueError(f"local cosines must lie in [-1, 1]; got {local_array}")
    for array, name in ((x_array, "x_norms"), (y_array, "y_norms")):
        if (array < 0).any():
            raise ValueError(f"{name} must be nonnegative; got {array}")
    sines = np.sqrt(np.clip(1.0 - local_array**2, 0.0, 1.0))
    x_blocks = [np.array([norm, 0.0]) for norm in x_array]
    y_blocks = [
        norm * np.array([c, s]) for norm, c, s in zip(y_array, local_array, sines, strict=True)
    ]
    return x_blocks, y_blocks


def profiles_with_cosine(
    rho: float, share: float, n_blocks: int = 2, epsilon: float = 0.0
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    r"""Norm profiles with cosine exactly ``rho`` that move the weight from block 1 to block 2.

    Blocks 1 and 2 get the norms :math:`(\cos(\psi + \varphi), \sin(\psi + \varphi))`
    on the x side and :math:`(\cos\psi, \sin\psi)` on the y side (the proof of
    chapter 3's sharpness theorem); any further blocks get the norm
    :math:`\varepsilon` (``epsilon``) on both sides. With :math:`\sigma` = ``share``
    and :math:`m` = ``n_blocks - 2``,

    .. math::

        \cos\varphi = \rho \, (1 + m\varepsilon^2) - m\varepsilon^2, \qquad
        \psi = \sigma \, (\pi/2 - \varphi),

    which makes the profile cosine exactly :math:`\rho`. The code computes
    :math:`\pi/2 - \varphi` as :math:`\arcsin(\cos\varphi)` and
    :math:`\cos(\psi + \varphi)` as :math:`\sin((1 - \sigma)(\pi/2 - \varphi))`, so a
    tiny :math:`\rho` keeps its precision and no entry is rounded to zero. As
    ``share`` goes from 0 to 1 the weight of block 1 falls from its largest to its
    smallest value (:math:`\rho` to 0 when :math:`\varepsilon = 0`),
    so the global cosine sweeps the interval of chapter 3. For :math:`\rho > 0`,
    :math:`0 < \sigma < 1` and :math:`\varepsilon > 0` every norm is positive. At
    :math:`\rho = 0` (possible with two blocks, or with :math:`\varepsilon = 0`) there
    is no sweep: every
    ``share`` gives the profiles :math:`(0, 1)` and :math:`(1, 0)`. Used in
    chapter 3.

    Parameters
    ----------
    rho : float
        Target profile cosine :math:`\rho`, in :math:`[0, 1]`.
    share : float
        Position :math:`\sigma` of the sweep, in :math:`[0, 1]`.
    n_blocks : int
        Number of blocks, at least 2.
    epsilon : float
        Norm :math:`\varepsilon` of the blocks after the first two (on both sides),
        nonnegative and small enough that
        :math:`\rho \, (1 + m\varepsilon^2) \ge m\varepsilon^2`.

    Returns
    -------
    (x_norms, y_norms) : tuple of ndarray of shape (n_blocks,)

    Raises
    ------
    ValueError
        If ``rho`` or ``share`` lies outside ``[0, 1]``, ``n_blocks < 2``, or
        ``epsilon`` is negative or too large for ``rho``.

    Examples
    --------
    >>> x_norms, y_norms = profiles_with_cosine(0.8, 0.5)
    >>> round(float(x_norms @ y_norms), 6), (x_norms * y_norms).round(4)
    (0.8, array([0.4, 0.4]))
    >>> xn, yn = profiles_with_cosine(0.6, 0.3, n_blocks=4, epsilon=0.1)
    >>> round(cosine(xn, yn), 12)
    0.6
    """
    # rho lies in [0, 1]: norm profiles are nonnegative.
    rho = as_float_scalar(rho, "rho", interval=(0, 1))
    share = as_float_scalar(share, "share", interval=(0, 1))
    n_blocks = as_int_scalar(n_blocks, "n_blocks", minimum=2)
    epsilon = as_float_scalar(epsilon, "epsilon", nonnegative=True)
    extra = (n_blocks - 2) * (epsilon * epsilon)
    sin_theta = rho * (1.0 + extra) - extra
    if sin_theta < 0:
        raise ValueError(
            f"epsilon must be small enough for rho={rho}; got {epsilon} "
            f"(need rho * (1 + m epsilon**2) >= m epsilon**2 with m = {n_blocks - 2})"
        )
    # The trigonometry runs in mpmath: the same bits on every CPU (cosine_book.portable).
    # theta = pi/2 - phi, beta = psi and gamma = pi/2 - (psi + phi) of the docstring.
    theta = portable.arcsin(min(sin_theta, 1.0))
    beta = share * theta
    gamma = (1.0 - share) * theta
    x_norms = np.full(n_blocks, epsilon)
    y_norms = np.full(n_blocks, epsilon)
    x_norms[:2] = portable.sin(gamma), portable.cos(gamma)
    y_norms[:2] = portable.cos(beta), portable.sin(beta)
    return x_norms, y_norms


def random_block_pair(
    rng: np.random.Generator, max_blocks: int = 6, max_size: int = 8, min_blocks: int = 1
) -> tuple[list[NDArray[np.float64]], list[NDArray[np.float64]]]:
    r"""A random pair of blocked vectors with very uneven block scales.

    The number of blocks, each block's size, its scale on each side (log-uniform
    over six decades) and how strongly :math:`y_i` follows :math:`x_i` (or its
    negative) are all drawn from ``rng``, so that samples cover the whole range
    of local cosines and of norm profiles.

    Parameters
    ----------
    rng : numpy.random.Generator
        Source of randomness (seed it for reproducible samples).
    max_blocks, max_size : int
        Largest number of blocks and largest block size, each at least 1.
    min_blocks : int
        Smallest number of blocks, between 1 and ``max_blocks``.

    Returns
    -------
    (x_blocks, y_blocks) : tuple of two lists of ndarray

    Raises
    ------
    ValueError
        If ``max_blocks`` or ``max_size`` is smaller than 1, or ``min_blocks``
        is not between 1 and ``max_blocks``.

    Examples
    --------
    >>> xs, ys = random_block_pair(np.random.default_rng(0))
    >>> len(xs) == len(ys), [x.shape == y.shape for x, y in zip(xs, ys)][0]
    (True, True)
    """
    max_blocks = as_int_scalar(max_blocks, "max_blocks", minimum=1)
    max_size = as_int_scalar(max_size, "max_size", minimum=1)
    min_blocks = as_int_scalar(min_blocks, "min_blocks", minimum=1, maximum=max_blocks)
    n_blocks = int(rng.integers(min_blocks, max_blocks + 1))
    x_blocks, y_blocks = [], []
    for _ in range(n_blocks):
        size = int(rng.integers(1, max_size + 1))
        x = portable.standard_normal(rng, size)
        # y_i = a * x_i + noise: a in [-3, 3] sets the sign and strength of agreement.
        y = portable.uniform(rng, -3.0, 3.0) * x + portable.standard_normal(rng, size)
        # Scales 10**u, u in [-3, 3], in mpmath: the same bits on every CPU.
        x_blocks.append(x * portable.power(10.0, portable.uniform(rng, -3.0, 3.0)))
        y_blocks.append(y * portable.power(10.0, portable.uniform(rng, -3.0, 3.0)))
    return x_blocks, y_blocks


def local_cosine_range(local: ArrayLike) -> tuple[float, float]:
    r"""Sharp range of the global cosine from the local cosines alone.

    .. math::

        \min(c_{\min}, 0) \le \cos(x, y) \le \max(c_{\max}, 0),

    the interval :math:`[\rho\, c_{\min}, \rho\, c_{\max}]` of
    :func:`cosine_bounds` over all :math:`\rho \in [0, 1]` (chapter 3). ``nan``
    entries (blocks zero on one side) are skipped but still count as blocks:
    a zero block can carry length on one side and so lower :math:`\rho`. The
    range needs at least two blocks; with one block the global cosine is its
    local cosine. Used in chapter 3.

    Parameters
    ----------
    local : array_like of shape (n_blocks,)
        Local cosines, each in :math:`[-1, 1]` or ``nan``; ``n_blocks >= 2``.

    Returns
    -------
    (lower, upper) : tuple of float

    Raises
    ------
    ValueError
        If ``local`` has fewer than two entries, has no finite entry, or an entry
        outside :math:`[-1, 1]`.

    Examples
    --------
    >>> local_cosine_range([0.9, 0.7])
    (0.0, 0.9)
    >>> local_cosine_range([0.8, -0.3, float("nan")])
    (-0.3, 0.8)
    """
    array = as_real_array(local, "local", ndim=1, finite=False).astype(np.float64)
    if array.size < 2:
        raise ValueError(
            f"local has {array.size} entries; the range needs at least two blocks "
            "(with one block the global cosine is its local cosine)"
        )
    defined = array[~np.isnan(array)]
    if defined.size == 0:
        raise ValueError("local has no defined local cosine; pass at least one number")
    if (np.abs(defined) > 1).any():
        raise ValueError(f"local cosines must lie in [-1, 1]; got {array}")
    return min(float(defined.min()), 0.0), max(float(defined.max()), 0.0)


def _edge_excess(params: NDArray[np.float64], n_blocks: int, side: int) -> float:
    """(cos - rho c_max) / rho (side 1) or (rho c_min - cos) / rho (side -1) of a flat pair."""
    half = params.size // 2
    xs = np.split(params[:half], n_blocks)
    ys = np.split(params[half:], n_blocks)
    dots = [
        math.fsum(float(a) * float(b) for a, b in zip(x, y, strict=True))
        for x, y in zip(xs, ys, strict=True)
    ]
    xx = [math.fsum(float(a) * float(a) for a in x) for x in xs]
    yy = [math.fsum(float(b) * float(b) for b in y) for y in ys]
    norms = [math.sqrt(a * b) for a, b in zip(xx, yy, strict=True)]
    whole = math.sqrt(math.fsum(xx) * math.fsum(yy))
    if min(norms) == 0.0 or whole == 0.0:
        return -2.0  # a zero block: outside the searched set, scored as far from the edge
    local = [d / n for d, n in zip(dots, norms, strict=True)]
    rho = math.fsum(norms) / whole
    global_cosine = math.fsum(dots) / whole
    if side > 0:
        return (global_cosine - rho * max(local)) / rho
    return (rho * min(local) - global_cosine) / rho


def edge_search(
    rng: np.random.Generator, n_searches: int = 10, n_blocks: int = 3, size: int = 2
) -> NDArray[np.float64]:
    r"""Adversarial search for pairs outside :math:`[\rho\, c_{\min}, \rho\, c_{\max}]`.

    Each search starts from a random pair (``n_blocks`` blocks of ``size``
    entries) and lets Nelder-Mead move every entry of both vectors to maximise
    the distance beyond an edge in units of :math:`\rho`,
    :math:`(\cos - \rho\, c_{\max})/\rho` for the upper edge and
    :math:`(\rho\, c_{\min} - \cos)/\rho` for the lower one, computed from the
    vectors alone (exactly rounded sums, the same bits on every CPU). The bound
    of chapter 3 says that no result is positive. Used in chapter 3.

    Parameters
    ----------
    rng : numpy.random.Generator
        Source of the starting pairs.
    n_searches : int
        Searches per edge, at least 1.
    n_blocks, size : int
        Number of blocks (at least 2) and entries per block (at least 1).

    Returns
    -------
    ndarray of shape (2, n_searches)
        The best excess each search found, upper edge (row 0) and lower edge (row 1).

    Raises
    ------
    ValueError
        If an argument is below its minimum.

    Examples
    --------
    >>> best = edge_search(np.random.default_rng(0), n_searches=2)
    >>> bool((best <= 1e-12).all()), bool((best > -0.1).all())
    (True, True)
    """
    from scipy.optimize import minimize

    n_searches = as_int_scalar(n_searches, "n_searches", minimum=1)
    n_blocks = as_int_scalar(n_blocks, "n_blocks", minimum=2)
    size = as_int_scalar(size, "size", minimum=1)
    best = np.empty((2, n_searches))
    for row, side in enumerate((1, -1)):
        for k in range(n_searches):
            start = portable.standard_normal(rng, 2 * n_blocks * size)
            found = minimize(
                lambda p, s=side: -_edge_excess(p, n_blocks, s),
                start,
                method="Nelder-Mead",
                options={"maxiter": 4000, "maxfev": 4000, "xatol": 1e-12, "fatol": 1e-15},
            )
            best[row, k] = -found.fun
    return best
