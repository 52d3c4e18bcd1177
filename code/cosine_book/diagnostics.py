r"""Checks to run before trusting a cosine similarity.

A cosine says how well two vectors point the same way; it does not say whether
the comparison made sense. This module gathers the checks of chapter 7 (the
field guide), each a small function on your own arrays:

- :func:`diagnose_pair`: is this cosine of 1 a finding, or the same array (a
  view, a copy, a rescaled copy) compared with itself? Its tolerances follow the
  inputs' precision (float16, bfloat16, float32, float64), and ``axis=-1``
  diagnoses every row pair of two batches.
- :func:`embedding_report`: does a matrix of embeddings look healthy (a shared
  mean direction, collapse onto few directions, duplicates, norms that vary a
  lot)? Its :meth:`EmbeddingReport.summary` says what looks wrong in words.
- :func:`centered_cosine_matrix`: cosines after subtracting the mean row, the
  usual fix for a dominant shared direction; :func:`with_shared_direction`
  makes such a direction weaker or stronger, to watch what it does.
- :func:`top_k_neighbours`, :func:`top_k_overlap` and :func:`neighbour_agreement`:
  what a similarity matrix is used for in practice (nearest neighbours), whether
  two similarity matrices agree on it, and whether neighbours share a label;
  :func:`related_pair_cosines` splits the similarities of pairs by whether the
  two items share a label.

.. rubric:: Ties and determinism

Neighbours are ranked by similarity, highest first; equal similarities are
ranked by the lower index first (the order of a stable sort of :math:`-S`).
The result depends only on the values of :math:`S`, not on the sorting
algorithm or the CPU. Sums are NumPy sums in a fixed order; cosines come from
:func:`cosine_book.similarity.cosine` (pairs) and
:func:`cosine_book.factorization.cosine_matrix` (matrices, a BLAS product), and
the spectrum from LAPACK's SVD, whose last bits may differ between CPUs.

.. rubric:: Any scale

Matrices are divided by a power of two near their largest entry (exact) before
sums of squares are formed, so entries near ``1e300`` or ``1e-300`` give the
same numbers as entries near 1.
"""

from __future__ import annotations

import math
import numbers
import sys
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any, overload

import numpy as np
from numpy.typing import ArrayLike, NDArray

from cosine_book._validation import (
    as_float_scalar,
    as_int_scalar,
    as_labels,
    as_real_array,
    as_real_matrix,
)
from cosine_book.factorization import cosine_matrix
from cosine_book.similarity import cosine

__all__ = [
    "COSINE_BIN_EDGES",
    "SWEEP_STRENGTHS",
    "EmbeddingReport",
    "PairDiagnosis",
    "RowDiagnoses",
    "SharedDirectionSetup",
    "SharedDirectionState",
    "prepare_shared_direction",
    "shared_direction_update",
    "centered_cosine_matrix",
    "diagnose_pair",
    "embedding_report",
    "false_match_share",
    "neighbour_agreement",
    "related_pair_cosines",
    "top_k_neighbours",
    "top_k_overlap",
    "with_shared_direction",
]

_EPS = float(np.finfo(np.float64).eps)
_FLOAT_MAX = float(np.finfo(np.float64).max)
# Two directions whose cosine is at least this are "nearly parallel" (a near-duplicate).
_NEAR_ONE = 1 - 1e-9
# Thresholds of EmbeddingReport.summary.
_MEAN_DIRECTION_LIMIT = 0.5
_LOW_RANK_SHARE = 0.1
_RICH_RESIDUAL_SHARE = 0.5
_NEGLIGIBLE_RESIDUAL = 1e-4
_NORM_SPREAD_LIMIT = 0.5
# np.shares_memory gives up (and the bounds-only check answers) after this much work.
_SHARES_MEMORY_WORK = 1 << 20
# Rows of a similarity matrix handled at once (bounds the extra memory to a few
# times _CHUNK * n entries).
_CHUNK = 512


# ---------------------------------------------------------------------------
# Pairs of arrays
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class _Precision:
    """A floating-point format: unit roundoff, smallest normal and smallest subnormal number."""

    name: str
    unit: float
    tiny: float
    least: float


_FLOAT64 = _Precision("float64", 2.0**-53, 2.0**-1022, 2.0**-1074)
_PRECISIONS = {
    "float16": _Precision("float16", 2.0**-11, 2.0**-14, 2.0**-24),
    "bfloat16": _Precision("bfloat16", 2.0**-8, 2.0**-126, 2.0**-133),
    "float32": _Precision("float32", 2.0**-24, 2.0**-126, 2.0**-149),
    "float64": _FLOAT64,
}
# The multiple test allows two roundings in the working precision, plus a margin
# for its own float64 arithmetic (ratios, products): see _allowance.
_ROUNDINGS = 2
_MARGIN = 4 * 2.0**-53
# Exponents below this count as "smaller than any float64" in the scaled comparison.
_FLOOR = -1100
# The verdicts of diagnose_pair, in the order RowDiagnoses counts them.
_KINDS = (
    "same object",
    "shared memory",
    "equal",
    "positive multiple",
    "negative multiple",
    "nearly parallel",
    "nearly opposite",
    "orthogonal",
    "different",
)


@dataclass(frozen=True)
class PairDiagnosis:
    r"""What a cosine between two vectors does and does not tell (from :func:`diagnose_pair`).

    Attributes
    ----------
    cosine : float
        :func:`cosine_book.similarity.cosine` of the two vectors (accumulated in
        float64, whatever their dtype).
    same_object : bool
        ``a is b``.
    shares_memory : bool
        Whether the two arrays share memory (:func:`numpy.shares_memory`), for
        example ``a`` and its view ``a[:]``.
    identical : bool
        Same shape and all entries equal (a copy).
    positive_multiple : float or None
        The factor :math:`\kappa > 0` with :math:`b = \kappa a` up to rounding (see
        :func:`diagnose_pair`), ``1.0`` for equal arrays; ``None`` if ``b`` is
        not a positive multiple of ``a`` or the factor lies outside the range
        of normal float64 numbers (the verdict then says so).
    verdict : str
        One line of plain English: what the comparison amounts to.
    kind : str
        The verdict in a word or two, one of ``"same object"``, ``"shared memory"``,
        ``"equal"``, ``"positive multiple"``, ``"negative multiple"``, ``"nearly
        parallel"``, ``"nearly opposite"``, ``"orthogonal"``, ``"different"``
        (overlapping views with different entries get the kind of their cosine).
    factor : float or None
        The factor :math:`\kappa` of a positive or negative multiple (``1.0`` for
        equal arrays), rounded to the shortest decimal the rounding allows;
        ``None`` otherwise.
    precision : str
        The floating-point format whose rounding the tolerances allow: that of the
        narrower input (``"float16"``, ``"bfloat16"``, ``"float32"`` or
        ``"float64"``; integers and booleans count as float64).

    Examples
    --------
    >>> result = diagnose_pair([1.0, 2.0], [2.0, 4.0])
    >>> result.identical, result.positive_multiple, result.kind
    (False, 2.0, 'positive multiple')
    """

    cosine: float
    same_object: bool
    shares_memory: bool
    identical: bool
    positive_multiple: float | None
    verdict: str
    kind: str
    factor: float | None
    precision: str


@dataclass(frozen=True)
class RowDiagnoses:
    """:class:`PairDiagnosis` of each row pair of two batches (``diagnose_pair(A, B, axis=-1)``).

    Index it like a tuple (``rows[3]`` is the :class:`PairDiagnosis` of row 3);
    ``print`` shows how many row pairs got each verdict.

    Attributes
    ----------
    pairs : tuple of PairDiagnosis
        One per row.
    precision : str
        The format whose rounding the tolerances allow (as in :class:`PairDiagnosis`).

    Examples
    --------
    >>> rows = diagnose_pair([[1.0, 2.0], [1.0, 0.0]], [[3.0, 6.0], [1.0, 1.0]], axis=-1)
    >>> len(rows), rows.kinds, rows.counts
    (2, ('positive multiple', 'different'), {'positive multiple': 1, 'different': 1})
    """

    pairs: tuple[PairDiagnosis, ...]
    precision: str

    def __len__(self) -> int:
        return len(self.pairs)

    def __getitem__(self, index: int) -> PairDiagnosis:
        return self.pairs[index]

    def __iter__(self) -> Iterator[PairDiagnosis]:
        return iter(self.pairs)

    @property
    def cosines(self) -> NDArray[np.float64]:
        """The cosine of each row pair, shape ``(n,)``."""
        return np.array([pair.cosine for pair in self.pairs])

    @property
    def kinds(self) -> tuple[str, ...]:
        """The :attr:`PairDiagnosis.kind` of each row pair."""
        return tuple(pair.kind for pair in self.pairs)

    @property
    def counts(self) -> dict[str, int]:
        """How many row pairs got each kind of verdict (kinds that occur, in a fixed order)."""
        kinds = self.kinds
        return {kind: kinds.count(kind) for kind in _KINDS if kind in kinds}

    def summary(self) -> str:
        """One line: the number of row pairs, the precision, and the count of each verdict."""
        counts = ", ".join(f"{count} {kind}" for kind, count in self.counts.items())
        return f"{len(self)} row pairs ({self.precision}): {counts}"

    def __str__(self) -> str:
        return self.summary()


@dataclass(frozen=True)
class _Input:
    """A checked argument: its values, the memory they live in, and their format."""

    values: NDArray[Any]  # a real NumPy dtype (bfloat16 tensors as float32, exactly)
    memory: NDArray[Any]  # what np.shares_memory looks at
    dtype: str  # the caller's dtype, e.g. "bfloat16" or "int64"
    precision: _Precision


def _precision_of(dtype: np.dtype[Any]) -> _Precision:
    """float16/32/64 as they are; integers, booleans and wider floats at float64."""
    return _PRECISIONS.get(dtype.name, _FLOAT64) if dtype.kind == "f" else _FLOAT64


def _torch_input(value: Any, name: str) -> _Input | None:
    """A CPU PyTorch tensor (any real dtype, bfloat16 too) as an :class:`_Input`, else None."""
    torch = sys.modules.get("torch")  # a tensor exists only once torch is imported
    if torch is None or not isinstance(value, torch.Tensor):
        return None
    tensor = value.detach()
    if tensor.device.type != "cpu":
        raise ValueError(
            f"{name} is a torch tensor on {tensor.device}; move it to the CPU first ({name}.cpu())"
        )
    if tensor.is_complex():
        raise ValueError(f"{name} is complex; expected real numbers")
    bfloat16 = tensor.dtype == torch.bfloat16
    try:
        tensor = tensor.resolve_conj().resolve_neg()
        memory = (tensor.view(torch.int16) if bfloat16 else tensor).numpy()
    except (RuntimeError, TypeError) as error:
        raise ValueError(
            f"{name} is a torch tensor NumPy cannot read ({error}); expected a dense CPU "
            f"tensor of real numbers (convert with {name}.float())"
        ) from None
    dtype = str(tensor.dtype).removeprefix("torch.")
    if bfloat16:  # a bfloat16 is the upper half of a float32: widen the bits, exactly
        widened = (memory.astype(np.uint16).astype(np.uint32) << 16).view(np.float32)
        return _Input(as_real_array(widened, name), memory, dtype, _PRECISIONS["bfloat16"])
    array = as_real_array(memory, name)
    return _Input(array, array, dtype, _precision_of(array.dtype))


def _read(value: Any, name: str) -> _Input:
    """``value`` checked as an array of finite real numbers (NumPy, array-like or tensor)."""
    tensor = _torch_input(value, name)
    if tensor is not None:
        return tensor
    array = as_real_array(value, name)
    return _Input(array, array, array.dtype.name, _precision_of(array.dtype))


def _check_axis(axis: Any) -> None:
    if axis is None or (isinstance(axis, numbers.Integral) and not isinstance(axis, bool)):
        if axis in (None, -1, 1):
            return
    raise ValueError(
        "axis must be None (two vectors) or -1 (the row pairs of two (n, d) batches, as "
        f"dim=-1 in torch.nn.functional.cosine_similarity); got {axis!r}"
    )


def _shape_error(value: _Input, name: str, axis: int | None) -> ValueError | None:
    """The error for an argument of the wrong number of dimensions, or None."""
    shape = value.values.shape
    if axis is None and len(shape) == 1:
        return None
    if axis is not None and len(shape) == 2:
        return None
    if axis is None and not shape:
        return ValueError(f"{name} is a single number (shape ()); expected a 1-D vector")
    if axis is None:
        return ValueError(
            f"{name} has shape {shape}; diagnose_pair compares two 1-D vectors: pass "
            "axis=-1 to diagnose each pair of rows of two (n, d) batches (as "
            "torch.nn.functional.cosine_similarity(a, b, dim=-1)), or flatten both "
            f"({name}.ravel()) to compare the whole arrays"
        )
    hint = {0: "", 1: ": drop axis to diagnose one pair of vectors"}.get(
        len(shape), f": reshape it first ({name}.reshape(-1, {shape[-1]}))"
    )
    return ValueError(
        f"{name} has shape {shape}; axis={axis} diagnoses the row pairs of 2-D batches of "
        f"shape (n, d){hint}"
    )


def _check_pair(a: _Input, b: _Input, axis: int | None) -> None:
    for value, name in ((a, "a"), (b, "b")):
        error = _shape_error(value, name, axis)
        if error is not None:
            raise error
    a_shape, b_shape = a.values.shape, b.values.shape
    if axis is None and a_shape != b_shape:
        raise ValueError(
            f"a has {a_shape[0]} entries (shape {a_shape}) but b has {b_shape[0]} (shape "
            f"{b_shape}); expected vectors of the same length"
        )
    if a_shape != b_shape:
        raise ValueError(
            f"a has shape {a_shape} but b has shape {b_shape}; axis={axis} compares row i "
            "of a with row i of b, so expected the same shape"
        )
    for value, name in ((a, "a"), (b, "b")):
        zero = np.flatnonzero(~value.values.reshape(-1, a_shape[-1]).any(axis=1))
        if zero.size and axis is None:
            raise ValueError(f"{name} is the zero vector; its cosine with anything is undefined")
        if zero.size:
            raise ValueError(
                f"row {zero[0]} of {name} is the zero vector ({zero.size} zero row(s) in "
                "all); its cosine with anything is undefined"
            )


@dataclass(frozen=True)
class _Work:
    """The working precision of a pair: the narrower input's, and how to name it."""

    precision: _Precision
    words: str  # "float32 rounding", or "float16 rounding, the precision of b"


def _work(a: _Input, b: _Input) -> _Work:
    narrower = max(a.precision, b.precision, key=lambda p: p.unit)
    if a.precision.unit == b.precision.unit:
        return _Work(narrower, f"{narrower.name} rounding")
    side = "a" if narrower is a.precision else "b"
    return _Work(narrower, f"{narrower.name} rounding, the precision of {side}")


def _allowance(pa: _Precision, pb: _Precision) -> float:
    """θ: the relative error allowed per entry, two roundings of the narrower format."""
    return _ROUNDINGS * max(pa.unit, pb.unit) + _MARGIN


@dataclass(frozen=True)
class _Factor:
    """A factor κ = scaled * 2**shift (|scaled| in [0.5, 2)) and its feasible range."""

    scaled: float
    shift: int
    low: float  # every |κ| in [low, high] * 2**shift fits the entries checked
    high: float
    exact: bool  # every ratio b_i / a_i was the same number: report it as it is


def _peak_exponent(values: NDArray[np.float64]) -> int:
    """The ``e`` with ``2**(e-1) <= max|values| < 2**e`` (``values`` not all zero)."""
    return int(np.frexp(np.max(np.abs(values)))[1])


def _ratios(a: NDArray[np.float64], b: NDArray[np.float64]) -> tuple[NDArray[Any], NDArray[Any]]:
    """``b / a`` (entries nonzero) as mantissa in [0.5, 1) and exponent, without overflow."""
    a_mantissa, a_exponent = np.frexp(a)
    b_mantissa, b_exponent = np.frexp(b)
    mantissa, exponent = np.frexp(b_mantissa / a_mantissa)
    return mantissa, exponent.astype(np.int64) + b_exponent - a_exponent


def _candidate(
    a: NDArray[np.float64], b: NDArray[np.float64], pa: _Precision, pb: _Precision
) -> _Factor | None:
    r"""The κ range that fits every entry where both are normal numbers, or None if empty.

    Entry i allows :math:`|\kappa|` in :math:`[|r_i| (1-θ), |r_i| / (1-θ)]`,
    :math:`r_i = b_i / a_i`; the ranges meet if all ratios have one sign and
    :math:`\max |r_i| (1-θ) \le \min |r_i| / (1-θ)`. Without such an entry
    (subnormal input), the ratio at the largest :math:`|a_i|` of the entries
    nonzero in both is the candidate.
    """
    theta = _allowance(pa, pb)
    use = (np.abs(a) >= pa.tiny) & (np.abs(b) >= pb.tiny)
    if not use.any():
        both = (a != 0) & (b != 0)
        if not both.any():
            return None
        use = np.zeros_like(both)
        use[np.argmax(np.where(both, np.abs(a), 0.0))] = True
        theta = 0.0
    mantissa, exponent = _ratios(a[use], b[use])
    if not (np.all(mantissa > 0) or np.all(mantissa < 0)):
        return None
    shift = int(np.min(exponent))
    if np.max(exponent) - shift > 1:
        return None
    rho = np.abs(np.ldexp(mantissa, exponent - shift))
    low, high = float(np.max(rho)) * (1 - theta), float(np.min(rho)) / (1 - theta)
    if low > high:
        return None
    exact = bool(np.min(rho) == np.max(rho))
    scaled = float(rho[0]) if exact else (low + high) / 2
    return _Factor(math.copysign(scaled, mantissa[0]), shift, low, high, exact)


def _fits(
    a: NDArray[np.float64], b: NDArray[np.float64], factor: _Factor, pa: _Precision, pb: _Precision
) -> bool:
    r"""Whether every entry has :math:`|b_i - κ a_i| \le θ \max(|b_i|, |κ a_i|) + s_i`.

    :math:`s_i = \max(λ_b, |κ| λ_a)`, :math:`λ` the smallest subnormal number of
    each format, allows for underflow. Each entry is compared in units of the
    larger of :math:`|b_i|` and :math:`|κ a_i|` (exact scaling), so κ and the
    entries may lie anywhere in the float64 range, or beyond for κ.
    """
    a_mantissa, a_exponent = np.frexp(a)
    b_mantissa, b_exponent = np.frexp(b)
    x_exponent = np.where(a != 0, a_exponent.astype(np.int64) + factor.shift, _FLOOR)
    y_exponent = np.where(b != 0, b_exponent.astype(np.int64), _FLOOR)
    top = np.maximum(np.maximum(x_exponent, y_exponent), _FLOOR)
    with np.errstate(over="ignore", under="ignore"):
        x = factor.scaled * np.ldexp(a_mantissa, x_exponent - top)
        y = np.ldexp(b_mantissa, y_exponent - top)
        slack = np.maximum(
            np.ldexp(pb.least, -top), abs(factor.scaled) * np.ldexp(pa.least, factor.shift - top)
        )
    theta = _allowance(pa, pb) + _MARGIN
    return bool(np.all(np.abs(y - x) <= theta * np.maximum(np.abs(x), np.abs(y)) + slack))


def _multiple_of(
    a: NDArray[np.float64], b: NDArray[np.float64], pa: _Precision, pb: _Precision
) -> _Factor | None:
    """The factor κ with ``b = κ a`` up to two roundings of the narrower format, or None."""
    factor = _candidate(a, b, pa, pb)
    if factor is None or not _fits(a, b, factor, pa, pb):
        return None
    return factor


def _as_factor(scaled: float, shift: int) -> float | None:
    """``scaled * 2**shift`` as a float, or None outside the normal float64 range."""
    try:
        factor = math.ldexp(scaled, shift)
    except OverflowError:
        return None
    if not sys.float_info.min <= abs(factor) < math.inf:
        return None
    return factor


def _stored(value: float, unit: float) -> float:
    """``value`` (normal, positive) rounded to the format with unit roundoff ``unit``."""
    bits = round(-math.log2(unit))
    mantissa, exponent = math.frexp(value)
    return math.ldexp(round(mantissa * 2.0**bits) / 2.0**bits, exponent)


def _rounded_factor(factor: _Factor, unit: float) -> float | None:
    """κ as the shortest decimal that rounding allows; None outside the normal float64 range.

    An exact ratio (equal arrays, a power of two, a scalar stored in the format)
    gives the shortest decimal the format stores as that ratio: 0.3 for a
    float16 ``0.3`` (stored as 0.30004883). Otherwise, the shortest decimal in
    the feasible range within ``2 unit`` of its middle: 0.3 for a float32
    ``0.3 * a``, not 0.30000001192092896.
    """
    middle = _as_factor(factor.scaled, factor.shift)
    if middle is None:
        return None
    size = abs(middle)
    if factor.exact:
        low = high = size
        unit = unit if _stored(size, unit) == size else _FLOAT64.unit
    else:
        with np.errstate(over="ignore", under="ignore"):
            low = max(float(np.ldexp(factor.low, factor.shift)), size * (1 - 2 * unit))
            high = min(float(np.ldexp(factor.high, factor.shift)), size * (1 + 2 * unit))
    for digits in range(1, 18):
        candidate = float(f"{size:.{digits}g}")
        if low <= candidate <= high or (factor.exact and _stored(candidate, unit) == size):
            return math.copysign(candidate, middle)
    return middle


def _format_factor(factor: _Factor, value: float | None) -> str:
    if value is not None:
        return f"κ = {value:.6g}"
    log10 = math.log10(abs(factor.scaled)) + factor.shift * math.log10(2.0)
    sign = "-" if factor.scaled < 0 else ""
    return f"κ = {sign}1e{round(log10)} roughly, outside the float64 range"


def _short(value: float) -> str:
    """``value`` with the fewest significant digits (at least 2) that do not round to 0 or +-1."""
    if value in (0.0, 1.0, -1.0):
        return f"{value:g}"
    for digits in range(2, 18):
        text = f"{value:.{digits}g}"
        if float(text) not in (0.0, 1.0, -1.0):
            return text
    return repr(value)


def _deviation(a: NDArray[np.float64], b: NDArray[np.float64]) -> tuple[float, float]:
    """Least-squares κ (in units of 2**shift) and ``max_i |b_i - κ a_i| / max(|b_i|, |κ a_i|)``.

    Both vectors are divided by a power of two near their largest entry first
    (exact), so any scale works; returns ``(κ, deviation)`` with κ as a float
    when it is one (else ``nan``).
    """
    a_exponent, b_exponent = _peak_exponent(a), _peak_exponent(b)
    a_scaled, b_scaled = np.ldexp(a, -a_exponent), np.ldexp(b, -b_exponent)
    kappa = float(a_scaled @ b_scaled / (a_scaled @ a_scaled))
    fitted = kappa * a_scaled
    size = np.maximum(np.abs(fitted), np.abs(b_scaled))
    used = size > 0
    deviation = float(np.max(np.abs(b_scaled - fitted)[used] / size[used]))
    return _as_factor(kappa, b_exponent - a_exponent) or math.nan, deviation


def _near_verdict(value: float, work: _Work, a: NDArray[Any], b: NDArray[Any]) -> str:
    """Nearly parallel (or opposite) but not a multiple: say how far, and whether it prints as 1."""
    one, gap = ("1", 1 - value) if value > 0 else ("-1", 1 + value)
    if gap == 0:
        cosine_words = f"cosine {one} to double precision"
    else:
        cosine_words = f"cosine {one} {'-' if value > 0 else '+'} {gap:.2g}"
        if gap <= work.precision.unit / 2:
            cosine_words += f", which rounds to {one} in {work.precision.name}"
    kappa, deviation = _deviation(a.astype(np.float64), b.astype(np.float64))
    what = "nearly parallel" if value > 0 else "nearly opposite"
    allowed = _allowance(work.precision, work.precision)
    return (
        f"{what} but not a multiple ({cosine_words}): b is κ a with relative errors up "
        f"to {deviation:.2g} (least-squares κ = {kappa:.6g}), more than {work.words} "
        f"allows ({allowed:.2g})"
    )


def _generic(value: float, work: _Work, a: NDArray[Any], b: NDArray[Any]) -> tuple[str, str]:
    """Kind and verdict of a pair that is not a multiple: its cosine in words."""
    if abs(value) >= min(_NEAR_ONE, 1 - work.precision.unit):
        kind = "nearly parallel" if value > 0 else "nearly opposite"
        return kind, _near_verdict(value, work, a, b)
    if value == 0.0:
        return "orthogonal", "orthogonal directions, cosine 0"
    return "different", f"different directions, cosine {_short(value)}"


def _shares_memory(a: NDArray[Any], b: NDArray[Any]) -> bool:
    try:
        return bool(np.shares_memory(a, b, max_work=_SHARES_MEMORY_WORK))
    except np.exceptions.TooHardError:  # pragma: no cover (exotic strides)
        return bool(np.may_share_memory(a, b))


def _multiple_verdict(factor: _Factor, value: float | None, work: _Work) -> tuple[str, str]:
    """Kind and verdict of ``b = κ a``; the rounding is named unless it is float64's."""
    positive = factor.scaled > 0
    sign = "positive" if positive else "negative"
    direction = (
        "the same direction, so cosine 1" if positive else "opposite directions, so cosine -1"
    )
    text = _format_factor(factor, value)
    if work.precision.unit == _FLOAT64.unit:
        return f"{sign} multiple", f"a {sign} multiple (factor {text}): {direction}"
    return (
        f"{sign} multiple",
        f"a {sign} multiple up to {work.words} (factor {text}): {direction} up to rounding",
    )


def _diagnose(a: _Input, b: _Input, same_object: bool) -> PairDiagnosis:
    """:class:`PairDiagnosis` of two checked 1-D vectors of the same length."""
    work = _work(a, b)
    a64 = a.values.astype(np.float64, copy=False)
    b64 = b.values.astype(np.float64, copy=False)
    value = cosine(a64, b64)
    shares = same_object or _shares_memory(a.memory, b.memory)
    identical = bool(np.array_equal(a.values, b.values))
    factor = None if identical else _multiple_of(a64, b64, a.precision, b.precision)
    number = 1.0 if identical else None
    if factor is not None:
        number = _rounded_factor(factor, work.precision.unit)
    if same_object:
        kind = "same object"
        verdict = "the same array compared with itself: cosine 1 by construction, not a finding"
    elif shares and identical:
        kind = "shared memory"
        verdict = "two views of the same memory (the same entries): cosine 1 by construction"
    elif shares:
        kind, verdict = _generic(value, work, a64, b64)
        verdict = "two views of the same memory (overlapping, with different entries): " + verdict
    elif identical:
        kind, verdict = "equal", "two equal arrays (copies): cosine 1 by construction"
    elif factor is not None:
        kind, verdict = _multiple_verdict(factor, number, work)
    else:
        kind, verdict = _generic(value, work, a64, b64)
    return PairDiagnosis(
        cosine=value,
        same_object=same_object,
        shares_memory=shares,
        identical=identical,
        positive_multiple=number if number is not None and number > 0 else None,
        verdict=verdict,
        kind=kind,
        factor=number,
        precision=work.precision.name,
    )


def _row(value: _Input, index: int) -> _Input:
    return replace(value, values=value.values[index], memory=value.memory[index])


@overload
def diagnose_pair(a: ArrayLike, b: ArrayLike, *, axis: None = None) -> PairDiagnosis: ...
@overload
def diagnose_pair(a: ArrayLike, b: ArrayLike, *, axis: int) -> RowDiagnoses: ...
def diagnose_pair(
    a: ArrayLike, b: ArrayLike, *, axis: int | None = None
) -> PairDiagnosis | RowDiagnoses:
    r"""Explain a cosine between two vectors: a real comparison, or the same data twice.

    Used in chapter 7 (the field guide). A cosine of 1 is often a bug, not a
    finding: the same tensor compared with itself, a view of it, a copy, or a
    rescaled copy. The checks run in this order, and the first that holds
    gives the verdict:

    1. ``a is b``: "the same array compared with itself";
    2. the arrays share memory (a view such as ``a[:]``; for a PyTorch CPU
       tensor or another object with ``__array__``, the memory it exposes):
       "two views of the same memory";
    3. equal entries: "two equal arrays (copies)";
    4. :math:`b = \kappa a` up to rounding with :math:`\kappa > 0`: "a positive
       multiple (factor κ = ...)"; with :math:`\kappa < 0`: "a negative multiple";
    5. otherwise a sentence with the cosine ("different directions, cosine
       0.42"), or "nearly parallel but not a multiple" (or "nearly opposite")
       when :math:`1 - |\cos| \le \max(10^{-9}, u)`; that verdict says how far
       ``b`` is from a multiple, and whether the cosine would round to 1 in the
       inputs' precision (a logged float32 cosine of 1 is not proof of a multiple).

    **Multiples, at any precision.** Rounding makes :math:`b = \mathrm{fl}(\kappa a)`
    differ from :math:`\kappa a` entry by entry, by at most :math:`u |\kappa a_i|`,
    where :math:`u` is the unit roundoff of the format: :math:`2^{-11}` for
    float16, :math:`2^{-8}` for bfloat16, :math:`2^{-24}` for float32,
    :math:`2^{-53}` for float64 (integers and booleans count as float64). The
    tolerance follows the *narrower* of the two inputs' formats, and ``b`` counts
    as :math:`\kappa a` when one :math:`\kappa` fits every entry,

    .. math::

        |b_i - \kappa a_i| \le \theta \max(|b_i|, |\kappa a_i|) + s,
        \qquad \theta = 2u + 2^{-51},

    two roundings (a product and a cast, say) and a margin for this check's own
    float64 arithmetic; :math:`s = \max(\lambda_b, |\kappa| \lambda_a)`, with
    :math:`\lambda` the smallest subnormal number of each format, allows for
    underflow. Where :math:`a_i` and :math:`b_i` are normal numbers this says
    that the ratios :math:`b_i / a_i` agree to a factor :math:`(1 - \theta)^{-2}`,
    which is decided exactly. So a float32 ``0.3 * a`` or ``a / 3`` is a multiple,
    while ``a + 1e-4 * noise`` is not, nor is a multiple with one entry moved by
    8 units in the last place (20 in float64) when another entry is a normal
    number in both. The tolerance follows the dtypes, not the history: a float32
    product cast to float64 is judged at float64 precision. The factor is
    reported as the shortest decimal the rounding allows (0.3, not
    0.30000001192092896); a power-of-two factor exactly.

    Parameters
    ----------
    a, b : array_like or torch.Tensor
        Real vectors of the same length (1-D: lists, NumPy arrays, anything with
        ``__array__``, or CPU PyTorch tensors of any real dtype, bfloat16
        included); with ``axis=-1``, two batches of shape ``(n, d)``. Mixed
        dtypes are fine: the tolerances follow the narrower one.
    axis : {None, -1}, optional
        ``-1`` (or ``1``) diagnoses row ``i`` of ``a`` against row ``i`` of ``b``
        for every ``i``, as ``torch.nn.functional.cosine_similarity(a, b,
        dim=-1)`` compares them. If ``a is b``, every row pair is "the same array
        compared with itself".

    Returns
    -------
    PairDiagnosis
        Without ``axis``.
    RowDiagnoses
        With ``axis=-1``: one :class:`PairDiagnosis` per row pair, and counts.

    Raises
    ------
    ValueError
        If an input is not 1-D (2-D without ``axis=-1``: the message says how to
        ask for row pairs or flatten) or, with ``axis=-1``, not 2-D; if the shapes
        differ, a vector (row) is zero (its cosine is undefined), a tensor is not
        on the CPU, or an input is not an array of finite real numbers (NaN,
        infinity, complex, strings, masked, sparse, ragged, empty).

    Examples
    --------
    >>> a = np.array([1.0, 2.0, 2.0])
    >>> diagnose_pair(a, a).verdict
    'the same array compared with itself: cosine 1 by construction, not a finding'
    >>> diagnose_pair(a, a[:]).verdict
    'two views of the same memory (the same entries): cosine 1 by construction'
    >>> diagnose_pair(a, a.copy()).verdict
    'two equal arrays (copies): cosine 1 by construction'
    >>> result = diagnose_pair(a, 4.0 * a)
    >>> result.positive_multiple, result.verdict
    (4.0, 'a positive multiple (factor κ = 4): the same direction, so cosine 1')
    >>> diagnose_pair(a, -0.5 * a).verdict
    'a negative multiple (factor κ = -0.5): opposite directions, so cosine -1'
    >>> diagnose_pair([1, 0], [1, 1]).verdict
    'different directions, cosine 0.71'

    In float32 (PyTorch's default), ``0.3 * x`` is a multiple up to float32
    rounding; a near-duplicate whose cosine rounds to 1 in float32 is not:

    >>> x = np.array([0.1, -0.7, 2.3, 1.9], dtype=np.float32)
    >>> result = diagnose_pair(x, 0.3 * x)
    >>> result.positive_multiple, result.precision
    (0.3, 'float32')
    >>> print(result.verdict)  # doctest: +NORMALIZE_WHITESPACE
    a positive multiple up to float32 rounding (factor κ = 0.3): the same direction,
    so cosine 1 up to rounding
    >>> y = x + np.array([0.0, 0.0, 0.0, 1e-4], dtype=np.float32)
    >>> print(diagnose_pair(x, y).verdict)  # doctest: +NORMALIZE_WHITESPACE
    nearly parallel but not a multiple (cosine 1 - 3.3e-10, which rounds to 1 in
    float32): b is κ a with relative errors up to 3.2e-05 (least-squares κ = 1.00002),
    more than float32 rounding allows (1.2e-07)

    Row pairs of two batches, as ``dim=-1``:

    >>> A = np.array([[1.0, 2.0], [3.0, 4.0], [1.0, 0.0]])
    >>> B = np.array([[2.0, 4.0], [-3.0, -4.0], [0.0, 1.0]])
    >>> rows = diagnose_pair(A, B, axis=-1)
    >>> print(rows)
    3 row pairs (float64): 1 positive multiple, 1 negative multiple, 1 orthogonal
    >>> rows[1].verdict
    'a negative multiple (factor κ = -1): opposite directions, so cosine -1'
    """
    _check_axis(axis)
    a_input = _read(a, "a")
    b_input = a_input if b is a else _read(b, "b")
    _check_pair(a_input, b_input, axis)
    if axis is None:
        return _diagnose(a_input, b_input, a is b)
    pairs = tuple(
        _diagnose(_row(a_input, i), _row(b_input, i), a is b)
        for i in range(a_input.values.shape[0])
    )
    return RowDiagnoses(pairs, _work(a_input, b_input).precision.name)


# ---------------------------------------------------------------------------
# Matrices of embeddings
# ---------------------------------------------------------------------------


def _as_embeddings(E: ArrayLike, name: str = "E") -> NDArray[np.float64]:
    """A checked (n, d) float64 matrix with n >= 2."""
    matrix = as_real_matrix(E, name)
    if matrix.shape[0] < 2:
        raise ValueError(
            f"{name} has shape {matrix.shape}; expected at least 2 rows (embeddings to compare)"
        )
    return matrix


def _check_no_zero_rows(peaks: NDArray[np.float64], name: str) -> None:
    zero = np.flatnonzero(peaks == 0)
    if zero.size:
        raise ValueError(
            f"{name} has {zero.size} zero row(s) (first: row {zero[0]}); the cosine of a "
            "zero vector is undefined: drop or fix those rows"
        )


@dataclass(frozen=True)
class EmbeddingReport:
    r"""Health check of a matrix of embeddings (from :func:`embedding_report`).

    Attributes
    ----------
    n_rows : int
        Number of embeddings :math:`n` (rows).
    dim : int
        Their dimension :math:`d` (columns).
    mean_cosine : float
        Mean cosine over the pairs :math:`i \ne j`.
    mean_direction_share : float
        :math:`\|\bar e\|^2 / \overline{\|e_i\|^2}`, in :math:`[0, 1]`: the
        share of the rows' mean square norm that lies in their mean row
        :math:`\bar e`. Near 1, every row is mostly the same shared vector.
    top_component_share : float
        :math:`\sigma_1^2 / \sum_i \sigma_i^2` for the singular values of the
        uncentred matrix: the share of the total sum of squares along its top
        right singular vector.
    effective_rank : float
        The entropy effective rank (Roy and Vetterli, 2007),
        :math:`\exp(-\sum_i p_i \log p_i)` with
        :math:`p_i = \sigma_i / \sum_j \sigma_j`; between 1 (one direction) and
        :math:`\min(n, d)` (all singular values equal).
    norm_spread : float
        Coefficient of variation of the row norms: their (population) standard
        deviation over their mean.
    near_duplicate_pairs : int
        Number of pairs :math:`i < j` with cosine at least :math:`1 - 10^{-9}`.
    centred_effective_rank : float
        The effective rank of the centred rows :math:`e_i - \bar e`: how many
        directions the embeddings use apart from their shared mean, at most
        :math:`\min(n - 1, d)`; 0 if the rows are equal up to rounding.

    Examples
    --------
    >>> report = embedding_report(np.eye(3))
    >>> report.n_rows, report.dim, report.mean_cosine, report.near_duplicate_pairs
    (3, 3, 0.0, 0)
    """

    n_rows: int
    dim: int
    mean_cosine: float
    mean_direction_share: float
    top_component_share: float
    effective_rank: float
    norm_spread: float
    near_duplicate_pairs: int
    centred_effective_rank: float

    def _few_directions(self) -> bool:
        return self.effective_rank < _LOW_RANK_SHARE * min(self.n_rows, self.dim)

    def _centred_limit(self) -> int:
        return min(self.n_rows - 1, self.dim)

    def _collapse_line(self) -> str | None:
        """The summary line for a collapsed set, or None: few directions, and little else."""
        residual = 1.0 - self.mean_direction_share
        few_left = self.centred_effective_rank < _RICH_RESIDUAL_SHARE * self._centred_limit()
        if not self._few_directions() or not (few_left or residual < _NEGLIGIBLE_RESIDUAL):
            return None
        left = (
            f"they differ from their mean row by a negligible share ({residual:.2g}) of their "
            "square norm"
            if residual < _NEGLIGIBLE_RESIDUAL
            else "so does what is left after removing their mean (centred effective rank "
            f"{self.centred_effective_rank:.3g} of at most {self._centred_limit()})"
        )
        return (
            f"- collapse: the embeddings use few directions (effective rank "
            f"{self.effective_rank:.3g} of at most {min(self.n_rows, self.dim)}), and {left}: "
            "the model has collapsed; retrain it or check its loss (centring does not repair "
            "collapse, it magnifies what is left)"
        )

    def summary(self) -> str:
        r"""A few lines in plain words: the numbers, then what looks wrong.

        A line is added for each check that triggers:

        - collapse: ``effective_rank < 0.1 * min(n_rows, dim)`` (the embeddings
          use few directions; :math:`n` rows span at most :math:`n`, hence the
          minimum), and what is left after removing the mean row also uses few
          (``centred_effective_rank < 0.5 * min(n_rows - 1, dim)``) or is
          negligible (``1 - mean_direction_share < 1e-4``). The advice is to
          retrain or check the loss, *not* to centre: centring a collapsed set
          magnifies what is left of it (chapter 7);
        - ``mean_direction_share > 0.5`` without collapse: a shared mean direction
          dominates; centre the embeddings (:func:`centered_cosine_matrix`) before
          comparing;
        - few directions without collapse: a shared direction hides a residual
          that uses many directions, which centring brings out;
        - ``near_duplicate_pairs > 0``: duplicates, or embeddings collapsed onto
          the same direction;
        - ``norm_spread > 0.5``: norms vary a lot, so the dot product and the
          cosine will rank neighbours differently.

        If none triggers, the last line is "nothing looks wrong".

        Returns
        -------
        str

        Examples
        --------
        >>> E = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
        >>> print(embedding_report(E).summary())
        3 embeddings of dimension 3: mean cosine 0, effective rank 3
        nothing looks wrong
        >>> print(embedding_report(E + 10.0).summary())
        3 embeddings of dimension 3: mean cosine 0.997, effective rank 1.3
        - a shared mean direction dominates (mean direction share 0.998): centre the
          embeddings (centered_cosine_matrix) before comparing
        """
        lines = [
            f"{self.n_rows} embeddings of dimension {self.dim}: mean cosine "
            f"{_short(self.mean_cosine)}, effective rank {self.effective_rank:.2g}"
        ]
        collapse = self._collapse_line()
        if collapse is not None:
            lines.append(collapse)
        elif self.mean_direction_share > _MEAN_DIRECTION_LIMIT:
            lines.append(
                "- a shared mean direction dominates (mean direction share "
                f"{_short(self.mean_direction_share)}): centre the embeddings "
                "(centered_cosine_matrix) before comparing"
            )
        if self.near_duplicate_pairs > 0:
            lines.append(
                f"- {self.near_duplicate_pairs} pair(s) of rows are near-duplicates (cosine >= "
                "1 - 1e-9): duplicated items, or embeddings collapsed onto one direction"
            )
        if collapse is None and self._few_directions():
            lines.append(
                f"- the embeddings use few directions (effective rank {self.effective_rank:.3g} "
                f"of at most {min(self.n_rows, self.dim)}), mostly one shared direction; what "
                "is left after removing the mean uses many (centred effective rank "
                f"{self.centred_effective_rank:.3g} of at most {self._centred_limit()}), so "
                "centring brings it out"
            )
        if self.norm_spread > _NORM_SPREAD_LIMIT:
            lines.append(
                f"- norms vary a lot (coefficient of variation {self.norm_spread:.2g}): dot "
                "product and cosine will rank differently"
            )
        if len(lines) == 1:
            lines.append("nothing looks wrong")
        # At most 79 characters a line, so that the summary reads in a narrow output.
        return "\n".join(
            textwrap.fill(line, width=79, subsequent_indent="  " if line[0] == "-" else "")
            for line in lines
        )


def _pair_cosine_sums(E: NDArray[np.float64]) -> tuple[float, int]:
    """Sum of the cosines over the pairs i < j, and the number at least ``_NEAR_ONE``.

    Rows are taken ``_CHUNK`` at a time against the rows after them, so the
    extra memory is ``_CHUNK * n`` entries; the additions run in a fixed order.
    """
    n = E.shape[0]
    total = 0.0
    near = 0
    for start in range(0, n - 1, _CHUNK):
        stop = min(start + _CHUNK, n - 1)
        # Row r is item start + r, column c is item start + 1 + c: the pairs i < j are c >= r.
        block = cosine_matrix(E[start:stop], E[start + 1 :])
        values = block[np.triu(np.ones(block.shape, dtype=bool))]
        total += float(np.sum(values))
        near += int(np.count_nonzero(values >= _NEAR_ONE))
    return total, near


def _centred_effective_rank(E: NDArray[np.float64]) -> float:
    """Effective rank of the centred rows; singular values at rounding level count as 0."""
    centring = _centre(E)
    singular = np.linalg.svd(centring.centred, compute_uv=False)
    singular = singular[singular > centring.limit * math.sqrt(E.size)]
    if singular.size == 0:
        return 0.0
    p = singular / np.sum(singular)
    return float(np.exp(-np.sum(p * np.log(p))))


def embedding_report(E: ArrayLike) -> EmbeddingReport:
    r"""Summary statistics that show whether cosines between embeddings can be trusted.

    Computes the fields of :class:`EmbeddingReport` for the rows
    :math:`e_1, \dots, e_n` of ``E``. The matrix is divided by a power of two
    near its largest entry first (exact), and each row norm is computed from
    the row divided by a power of two near its own largest entry, so rows near
    ``1e300`` or ``1e-300`` give the same report as rows near 1. With
    :math:`\sigma_i` the singular values of the uncentred matrix,

    .. math::

        \text{top component share} = \frac{\sigma_1^2}{\sum_i \sigma_i^2},
        \qquad
        \text{effective rank} = \exp\Bigl(-\sum_i p_i \log p_i\Bigr),
        \quad p_i = \frac{\sigma_i}{\sum_j \sigma_j}

    (Roy and Vetterli, 2007; terms with :math:`p_i = 0` count as 0). The centred
    effective rank is the same formula for the rows minus their mean row
    (singular values at the level of rounding count as 0); with the effective
    rank it tells a collapsed set (few directions, before and after removing the
    mean) from a shared offset over a rich residual.
    :meth:`EmbeddingReport.summary` turns the numbers into words.

    Parameters
    ----------
    E : array_like of shape (n, d)
        Finite real numbers, ``n >= 2``, no zero row.

    Returns
    -------
    EmbeddingReport

    Raises
    ------
    ValueError
        If ``E`` has fewer than 2 rows or a zero row (its cosine is undefined),
        or is not a 2-D array of finite real numbers.

    Examples
    --------
    >>> report = embedding_report([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]])
    >>> round(report.mean_cosine, 4), round(report.effective_rank, 4)
    (0.4714, 1.9236)
    >>> round(report.norm_spread, 4), report.near_duplicate_pairs
    (0.2788, 0)
    """
    E = _as_embeddings(E)
    n, d = E.shape
    peaks = np.max(np.abs(E), axis=1)
    _check_no_zero_rows(peaks, "E")
    exponents = np.frexp(peaks)[1]
    top = int(np.max(exponents))
    # Row norms in units of 2**top, each from its own exactly rescaled row.
    own = np.ldexp(E, -exponents[:, None])
    norms = np.ldexp(np.sqrt(np.sum(own * own, axis=1)), exponents - top)
    scaled = np.ldexp(E, -top)  # every entry in (-1, 1)
    mean_row = np.mean(scaled, axis=0)
    mean_square_norm = float(np.mean(norms * norms))
    share = min(1.0, float(np.sum(mean_row * mean_row)) / mean_square_norm)
    singular = np.linalg.svd(scaled, compute_uv=False)
    squares = singular * singular
    top_share = min(1.0, float(squares[0] / np.sum(squares)))
    p = singular[singular > 0] / np.sum(singular)
    effective_rank = float(np.exp(-np.sum(p * np.log(p))))
    spread = float(np.std(norms) / np.mean(norms))
    total, near = _pair_cosine_sums(E)
    return EmbeddingReport(
        centred_effective_rank=_centred_effective_rank(E),
        n_rows=n,
        dim=d,
        mean_cosine=2.0 * total / (n * (n - 1)),
        mean_direction_share=share,
        top_component_share=top_share,
        effective_rank=effective_rank,
        norm_spread=spread,
        near_duplicate_pairs=near,
    )


@dataclass(frozen=True)
class _Centring:
    """Rows split into mean and centred parts, in units of ``2**exponent`` (exact scaling)."""

    centred: NDArray[np.float64]  # (n, d): e_i - mean, scaled
    mean: NDArray[np.float64]  # (d,): the mean row, scaled
    exponent: int  # E = 2**exponent * (centred + mean), up to rounding
    peaks: NDArray[np.float64]  # (n,): max |entry| of each centred row
    limit: float  # a scaled vector whose entries are all within this is zero up to rounding


def _centre(E: NDArray[np.float64]) -> _Centring:
    """Subtract the mean row at a safe scale, with a second pass for its rounding error.

    ``E`` is divided by a power of two near its largest entry (exact). The mean
    of the centred rows (their rounding error) is subtracted again and added to
    the mean, so both parts are accurate to about one rounding of the largest
    entry. The rounding rule: a centred row, or the mean row, whose entries are
    all within ``n * eps * max|E|`` of zero is zero up to rounding.
    """
    n = E.shape[0]
    largest = float(np.max(np.abs(E)))
    exponent = int(np.frexp(largest)[1]) if largest > 0 else 0
    scaled = np.ldexp(E, -exponent)
    mean = np.mean(scaled, axis=0)
    centred = scaled - mean
    residual = np.mean(centred, axis=0)  # second pass: the rounding error of the mean
    centred -= residual
    return _Centring(
        centred=centred,
        mean=mean + residual,
        exponent=exponent,
        peaks=np.max(np.abs(centred), axis=1),
        limit=n * _EPS * float(np.max(np.abs(scaled))),
    )


def _unit(vector: NDArray[np.float64]) -> NDArray[np.float64]:
    """``vector / ||vector||`` (nonzero), computed from the vector rescaled to its peak."""
    scaled = np.ldexp(vector, -_peak_exponent(vector))
    return scaled / np.sqrt(np.sum(scaled * scaled))


def centered_cosine_matrix(E: ArrayLike) -> NDArray[np.float64]:
    r"""Cosines between the rows of ``E`` after subtracting the mean row.

    With :math:`\bar e = \frac1n \sum_i e_i`, entry :math:`(i, j)` is
    :math:`\cos(e_i - \bar e, e_j - \bar e)`: centring across rows removes a
    direction that all embeddings share (chapter 4 centres each vector across
    its own coordinates instead, which gives the Pearson correlation; that is
    not this). The matrix is divided by a power of two near its largest entry
    (exact) before the mean is taken, and the mean is refined by a second pass
    (the mean of the residuals is subtracted too), so its error is about one
    rounding of the largest entry. A centred row within
    :math:`n \varepsilon \max |E|` of zero (:math:`\varepsilon = 2^{-52}`) is a
    row equal to the mean up to rounding: its direction is undefined, and an
    error is raised. Cosines of centred rows of norm :math:`r` are accurate to
    about :math:`\varepsilon \max |E| / r`.

    Parameters
    ----------
    E : array_like of shape (n, d)
        Finite real numbers, ``n >= 2``.

    Returns
    -------
    ndarray of shape (n, n)
        Symmetric bit for bit, unit diagonal, entries in ``[-1, 1]``
        (:func:`cosine_book.factorization.cosine_matrix` of the centred rows).

    Raises
    ------
    ValueError
        If a row equals the mean row (its centred direction is undefined), ``E``
        has fewer than 2 rows, or is not a 2-D array of finite real numbers.

    Examples
    --------
    Three rows with uncentred cosines near 1, around their mean ``[11, 11]``:

    >>> E = [[11.0, 10.0], [10.0, 11.0], [12.0, 12.0]]
    >>> cosine_matrix(E).round(3).tolist()
    [[1.0, 0.995, 0.999], [0.995, 1.0, 0.999], [0.999, 0.999, 1.0]]
    >>> centered_cosine_matrix(E).round(4).tolist()
    [[1.0, 0.0, -0.7071], [0.0, 1.0, -0.7071], [-0.7071, -0.7071, 1.0]]
    >>> centered_cosine_matrix([[1.0, 2.0], [2.0, 1.0], [1.5, 1.5]])
    Traceback (most recent call last):
    ...
    ValueError: row 2 of E equals the mean row (up to rounding), so its centred ...
    """
    centring = _centre(_as_embeddings(E))
    flat = np.flatnonzero(centring.peaks <= centring.limit)
    if flat.size:
        others = "" if flat.size == 1 else f" ({flat.size} rows in all)"
        raise ValueError(
            f"row {flat[0]} of E equals the mean row (up to rounding), so its centred "
            f"direction is undefined{others}; drop it, or compare uncentred rows "
            "(cosine_matrix)"
        )
    return cosine_matrix(centring.centred)


def with_shared_direction(E: ArrayLike, strength: float) -> NDArray[np.float64]:
    r"""The rows of ``E`` with their shared mean direction set to a chosen strength.

    With the mean row :math:`\bar e = \frac1n \sum_i e_i`, its direction
    :math:`\hat m = \bar e / \|\bar e\|` and the root-mean-square norm of the
    centred rows

    .. math::

        \nu = \Bigl(\frac1n \sum_{i=1}^n \|e_i - \bar e\|^2\Bigr)^{1/2},

    row :math:`i` of the result is

    .. math::

        (e_i - \bar e) + t \, \nu \, \hat m, \qquad t = \text{strength} \ge 0.

    The centred rows are kept and every row gets the same vector
    :math:`t \nu \hat m` along the embeddings' own mean direction, measured in
    units of their typical spread: at :math:`t = 0` the rows are centred, and
    as :math:`t` grows the shared part dominates and all cosines approach 1,
    while :func:`centered_cosine_matrix` of the result does not change. The
    mean row of the result is :math:`t \nu \hat m`; at
    :math:`t = \|\bar e\| / \nu` the result is ``E`` itself (up to rounding).

    The centring is that of :func:`centered_cosine_matrix`: ``E`` is divided by
    a power of two near its largest entry (exact), so entries near ``1e300``
    or ``1e-300`` work, and the mean gets a second pass for its rounding error.
    Rounding rule: the mean row is zero when all its entries are within
    :math:`n \varepsilon \max |E|` of zero (:math:`\varepsilon = 2^{-52}`), and
    likewise a centred row; :math:`\nu = 0` means every centred row is zero.

    Parameters
    ----------
    E : array_like of shape (n, d)
        Finite real numbers, ``n >= 2``.
    strength : float
        The strength :math:`t \ge 0` (finite) of the shared direction, in units
        of :math:`\nu`.

    Returns
    -------
    ndarray of shape (n, d)

    Raises
    ------
    ValueError
        If ``strength`` is negative or not a finite real number; the mean row
        of ``E`` is zero up to rounding (there is no mean direction); every row
        equals the mean row up to rounding (:math:`\nu = 0`, no spread to measure
        the strength in); the result would overflow float64; or ``E`` has fewer
        than 2 rows or is not a 2-D array of finite real numbers.

    Examples
    --------
    Rows around their mean ``[11, 11]``, with centred rows ``[0, -1]``,
    ``[-1, 0]``, ``[1, 1]`` (so :math:`\nu^2 = 4/3`):

    >>> E = np.array([[11.0, 10.0], [10.0, 11.0], [12.0, 12.0]])
    >>> with_shared_direction(E, 0.0).round(12).tolist()
    [[0.0, -1.0], [-1.0, 0.0], [1.0, 1.0]]
    >>> with_shared_direction(E, 3.0).round(4).tolist()
    [[2.4495, 1.4495], [1.4495, 2.4495], [3.4495, 3.4495]]
    >>> bool(np.allclose(centered_cosine_matrix(with_shared_direction(E, 3.0)),
    ...                  centered_cosine_matrix(E)))
    True
    >>> t = np.sqrt(np.sum(E.mean(axis=0) ** 2)) / np.sqrt(4 / 3)
    >>> bool(np.allclose(with_shared_direction(E, t), E))
    True
    >>> with_shared_direction([[1.0, 2.0], [-1.0, -2.0]], 1.0)
    Traceback (most recent call last):
    ...
    ValueError: the mean row of E is zero (up to rounding), so there is no mean direction ...
    """
    matrix = _as_embeddings(E)
    t = as_float_scalar(strength, "strength", nonnegative=True)
    centring = _centre(matrix)
    if float(np.max(np.abs(centring.mean))) <= centring.limit:
        raise ValueError(
            "the mean row of E is zero (up to rounding), so there is no mean direction to "
            "strengthen; expected embeddings whose mean row is not zero"
        )
    if float(np.max(centring.peaks)) <= centring.limit:
        raise ValueError(
            "every row of E equals the mean row (up to rounding), so the centred rows have "
            "no spread (ν = 0) to measure the strength in; expected rows that differ"
        )
    centred = centring.centred
    spread_exponent = _peak_exponent(centred)
    unit_centred = np.ldexp(centred, -spread_exponent)
    spread = math.ldexp(
        math.sqrt(float(np.mean(np.sum(unit_centred * unit_centred, axis=1)))), spread_exponent
    )
    shared = t * spread  # in units of 2**exponent (spread <= 2 sqrt(d): entries in (-2, 2))
    if shared > _FLOAT_MAX:
        raise _overflow_error(t)
    with np.errstate(over="ignore"):
        result = centred + shared * _unit(centring.mean)
    # The largest entry of the result, in float64 or beyond (math.ldexp raises then).
    peak = float(np.max(np.abs(result)))
    try:
        fits = math.ldexp(peak, centring.exponent) <= _FLOAT_MAX
    except OverflowError:
        fits = False
    if not fits:
        raise _overflow_error(t)
    return np.ldexp(result, centring.exponent)


def _overflow_error(t: float) -> ValueError:
    return ValueError(
        f"strength {t!r} is too large: the rows would overflow float64; expected a smaller strength"
    )


# ---------------------------------------------------------------------------
# Neighbours in a similarity matrix
# ---------------------------------------------------------------------------


def _as_similarity(S: ArrayLike, name: str) -> NDArray[np.float64]:
    """A checked square float64 matrix with at least 2 rows."""
    matrix = as_real_matrix(S, name)
    if matrix.shape[0] != matrix.shape[1]:
        raise ValueError(
            f"{name} has shape {matrix.shape}; expected a square (n, n) similarity matrix"
        )
    if matrix.shape[0] < 2:
        raise ValueError(
            f"{name} has shape {matrix.shape}; expected at least 2 items (an item is never "
            "its own neighbour)"
        )
    return matrix


def _check_k(k: Any, n: int) -> int:
    return as_int_scalar(k, "k", minimum=1, maximum=n - 1)


def _neighbours(S: NDArray[np.float64], k: int) -> NDArray[np.intp]:
    """Top-k columns of each row, self excluded: by value descending, then lower index first.

    Equal to ``np.argsort(-S, axis=1, kind="stable")[:, :k]`` with the diagonal
    left out, without sorting whole rows: the k-th largest value ``v`` of each
    row (a value, the same whatever the partition algorithm) splits the row into
    the entries above ``v`` (all taken) and those equal to ``v`` (the first
    ones by index fill the remaining places); the k chosen are then sorted by
    value with a stable sort, which keeps their index order on ties.
    """
    n = S.shape[0]
    result = np.empty((n, k), dtype=np.intp)
    for start in range(0, n, _CHUNK):
        stop = min(start + _CHUNK, n)
        rows = np.arange(stop - start)
        work = S[start:stop].copy()
        work[rows, rows + start] = -np.inf  # self: below every finite value
        kth = np.partition(work, n - k, axis=1)[:, n - k : n - k + 1]
        above = work > kth
        tied = work == kth
        places = k - np.count_nonzero(above, axis=1)
        chosen = above | (tied & (np.cumsum(tied, axis=1) <= places[:, None]))
        columns = np.nonzero(chosen)[1].reshape(stop - start, k)  # ascending index
        values = np.take_along_axis(work, columns, axis=1)
        order = np.argsort(-values, axis=1, kind="stable")
        result[start:stop] = np.take_along_axis(columns, order, axis=1)
    return result


def top_k_neighbours(S: ArrayLike, k: int) -> NDArray[np.intp]:
    r"""The ``k`` nearest neighbours of every item under a similarity matrix, in rank order.

    Row :math:`i` lists the items :math:`j \ne i` with the largest
    :math:`S_{ij}`, most similar first. Ties are broken by the lower index
    first: the order of a stable sort of :math:`-S_{i\cdot}`
    (``np.argsort(-S[i], kind="stable")``), with the item itself left out. The
    result depends only on the values of :math:`S` (``-0.0`` and ``0.0`` are
    equal), so it is the same on every machine. The diagonal is ignored, and
    :math:`S` need not be symmetric.

    Parameters
    ----------
    S : array_like of shape (n, n)
        Similarities, finite real numbers, ``n >= 2``.
    k : int
        Number of neighbours, ``1 <= k <= n - 1``.

    Returns
    -------
    ndarray of shape (n, k)
        Item indices.

    Raises
    ------
    ValueError
        If ``S`` is not a square matrix of finite real numbers with at least 2
        rows, or ``k`` is not an integer in ``[1, n - 1]``.

    Examples
    --------
    >>> S = [[1.0, 0.5, 0.9, 0.5], [0.5, 1.0, 0.2, 0.7], [0.9, 0.2, 1.0, 0.1],
    ...      [0.5, 0.7, 0.1, 1.0]]
    >>> top_k_neighbours(S, 2).tolist()
    [[2, 1], [3, 0], [0, 1], [1, 0]]
    """
    matrix = _as_similarity(S, "S")
    return _neighbours(matrix, _check_k(k, matrix.shape[0]))


def top_k_overlap(S1: ArrayLike, S2: ArrayLike, k: int) -> float:
    r"""How much two similarity matrices agree on each item's ``k`` nearest neighbours.

    With :math:`N_1(i)` and :math:`N_2(i)` the top-``k`` neighbours of item
    :math:`i` under ``S1`` and ``S2`` (:func:`top_k_neighbours`: self excluded,
    ties to the lower index),

    .. math::

        \text{overlap} = \frac1n \sum_{i=1}^n \frac{|N_1(i) \cap N_2(i)|}{k}
        \in [0, 1],

    symmetric in ``S1`` and ``S2``, and 1 when they rank the neighbours alike.
    The sum is of integers, divided once: the result is exact to one rounding.

    Parameters
    ----------
    S1, S2 : array_like of shape (n, n)
        Similarities over the same ``n`` items, finite real numbers, ``n >= 2``.
    k : int
        Number of neighbours, ``1 <= k <= n - 1``.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If the shapes differ, a matrix is not square or has fewer than 2 rows,
        an entry is not a finite real number, or ``k`` is not an integer in
        ``[1, n - 1]``.

    Examples
    --------
    >>> S1 = [[1.0, 0.9, 0.1], [0.9, 1.0, 0.3], [0.1, 0.3, 1.0]]
    >>> S2 = [[1.0, 0.2, 0.8], [0.2, 1.0, 0.9], [0.8, 0.9, 1.0]]
    >>> top_k_overlap(S1, S2, 1)
    0.3333333333333333
    >>> top_k_overlap(S1, S1, 2)
    1.0
    """
    first = _as_similarity(S1, "S1")
    second = _as_similarity(S2, "S2")
    if first.shape != second.shape:
        raise ValueError(
            f"S1 has shape {first.shape} but S2 has shape {second.shape}; expected "
            "similarities over the same items (equal shapes)"
        )
    n = first.shape[0]
    k = _check_k(k, n)
    both = np.sort(np.concatenate([_neighbours(first, k), _neighbours(second, k)], axis=1))
    shared = int(np.count_nonzero(both[:, 1:] == both[:, :-1]))  # each list has no repeats
    return shared / (n * k)


def neighbour_agreement(S: ArrayLike, labels: ArrayLike, k: int) -> float:
    r"""Share of each item's ``k`` nearest neighbours that carry its label, averaged.

    The book's measure of neighbour quality (chapter 7): with :math:`N(i)` the
    top-``k`` neighbours of item :math:`i` (:func:`top_k_neighbours`: self
    excluded, ties to the lower index) and :math:`y_i` its label,

    .. math::

        \text{agreement} = \frac1n \sum_{i=1}^n
        \frac{|\{j \in N(i) : y_j = y_i\}|}{k} \in [0, 1].

    Ties at the ``k``-th place go to the lower index, so every item has exactly
    ``k`` neighbours; :func:`cosine_book.cluster_recovery.cluster_recovery` shares
    tied places equally instead, and the two can differ when similarities tie.

    Parameters
    ----------
    S : array_like of shape (n, n)
        Similarities, finite real numbers, ``n >= 2``.
    labels : array_like of shape (n,)
        One label per item (integers, strings, ...; all of one kind).
    k : int
        Number of neighbours, ``1 <= k <= n - 1``.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If ``S`` is not a square matrix of finite real numbers with at least 2
        rows, ``labels`` does not give one valid label per item, or ``k`` is not
        an integer in ``[1, n - 1]``.

    Examples
    --------
    >>> S = [[1.0, 0.9, 0.1, 0.2], [0.9, 1.0, 0.3, 0.1], [0.1, 0.3, 1.0, 0.8],
    ...      [0.2, 0.1, 0.8, 1.0]]
    >>> neighbour_agreement(S, ["cat", "cat", "dog", "dog"], 1)
    1.0
    >>> neighbour_agreement(S, ["cat", "cat", "dog", "dog"], 2)
    0.5
    """
    matrix = _as_similarity(S, "S")
    n = matrix.shape[0]
    index = as_labels(labels, "labels", n)[1]
    k = _check_k(k, n)
    neighbours = _neighbours(matrix, k)
    same = int(np.count_nonzero(index[neighbours] == index[:, None]))
    return same / (n * k)


def related_pair_cosines(
    S: ArrayLike, labels: ArrayLike
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    r"""The similarities of pairs with the same label, and of pairs with different labels.

    For the pairs :math:`i < j` of items (the upper triangle of ``S``, without
    the diagonal), returns :math:`S_{ij}` for the pairs with
    :math:`y_i = y_j` and :math:`S_{ij}` for the pairs with
    :math:`y_i \ne y_j`, each in the row-major order of :math:`(i, j)` (that
    of ``np.triu_indices(n, 1)``: by :math:`i`, then by :math:`j`). The lower
    triangle and the diagonal are not read, so ``S`` need not be symmetric.
    Histograms of the two arrays show whether a similarity separates related
    items from unrelated ones.

    Parameters
    ----------
    S : array_like of shape (n, n)
        Similarities, finite real numbers, ``n >= 2``.
    labels : array_like of shape (n,)
        One label per item (integers, strings, ...; all of one kind).

    Returns
    -------
    related : ndarray of shape (m,)
        :math:`S_{ij}` for the :math:`m = \sum_g \binom{n_g}{2}` pairs
        :math:`i < j` with equal labels (:math:`n_g` items carry label
        :math:`g`).
    unrelated : ndarray of shape (n (n - 1) / 2 - m,)
        :math:`S_{ij}` for the pairs :math:`i < j` with different labels.

    Raises
    ------
    ValueError
        If ``S`` is not a square matrix of finite real numbers with at least 2
        rows, or ``labels`` does not give one valid label per item.

    Examples
    --------
    >>> S = [[1.0, 0.9, 0.1, 0.2], [0.9, 1.0, 0.3, 0.1], [0.1, 0.3, 1.0, 0.8],
    ...      [0.2, 0.1, 0.8, 1.0]]
    >>> related, unrelated = related_pair_cosines(S, ["cat", "cat", "dog", "dog"])
    >>> related.tolist(), unrelated.tolist()
    ([0.9, 0.8], [0.1, 0.2, 0.3, 0.1])
    """
    matrix = _as_similarity(S, "S")
    n = matrix.shape[0]
    index = as_labels(labels, "labels", n)[1]
    rows, columns = np.triu_indices(n, 1)
    values = matrix[rows, columns]
    same = index[rows] == index[columns]
    return values[same], values[~same]


def false_match_share(S: ArrayLike, labels: ArrayLike, threshold: float = 0.5) -> float:
    """Share of the unrelated pairs (different labels) whose similarity reaches ``threshold``.

    The false matches of a rule "similar if the cosine is at least ``threshold``",
    over the pairs ``i < j`` of :func:`related_pair_cosines`; 0 if no pair is
    unrelated.

    Parameters
    ----------
    S : array_like of shape (n, n)
        Similarities, finite real numbers, ``n >= 2``.
    labels : array_like of shape (n,)
        What makes two items related.
    threshold : float
        The threshold, a finite real number.

    Returns
    -------
    float

    Examples
    --------
    >>> S = [[1.0, 0.9, 0.6], [0.9, 1.0, 0.2], [0.6, 0.2, 1.0]]
    >>> false_match_share(S, ["a", "a", "b"], 0.5)
    0.5
    """
    threshold = as_float_scalar(threshold, "threshold")
    return _share_at_least(related_pair_cosines(S, labels)[1], threshold)


def _share_at_least(values: NDArray[np.float64], threshold: float) -> float:
    """Share of ``values`` at least ``threshold`` (0 for no values)."""
    return float(np.mean(values >= threshold)) if values.size else 0.0


# ---------------------------------------------------------------------------
# A shared direction of growing strength (the chapter 7 widget's computation)
# ---------------------------------------------------------------------------

#: Strengths of the sweep in :class:`SharedDirectionSetup`: 0 to 3 in steps of 1/4.
SWEEP_STRENGTHS: tuple[float, ...] = tuple(i / 4 for i in range(13))
#: Bin edges of the cosine histograms, 80 bins of width 1/40 on [-1, 1].
COSINE_BIN_EDGES: NDArray[np.float64] = np.linspace(-1.0, 1.0, 81)


@dataclass(frozen=True)
class SharedDirectionState:
    """Cosines and neighbour quality of embeddings with a shared direction of one strength.

    From :func:`shared_direction_update`; chapter 7's widget draws it.

    Attributes
    ----------
    strength : float
        The strength :math:`t` of the shared direction
        (:func:`with_shared_direction`).
    k : int
        Neighbours per item in the agreement measure.
    threshold : float
        The cosine threshold of ``unrelated_above``.
    bin_edges : ndarray of shape (81,)
        Edges of the cosine histograms (:data:`COSINE_BIN_EDGES`).
    related, unrelated : ndarray of shape (80,)
        Histogram counts of the raw cosines of pairs with equal and with
        different labels.
    centred_related, centred_unrelated : ndarray of shape (80,)
        The same after centring (they do not depend on the strength).
    mean_cosine : float
        Mean raw cosine over all pairs of distinct rows.
    unrelated_above, centred_unrelated_above : float
        Share of the unrelated pairs whose cosine is at least ``threshold``, raw
        and centred (the false matches of that threshold).
    agreement, centred_agreement : float
        :func:`neighbour_agreement` of the top-``k`` cosine neighbours, raw and
        centred.
    sweep_strengths, sweep_agreement, sweep_mean_cosine, sweep_unrelated_above : ndarray
        Raw agreement, mean cosine and false matches at every strength of the
        sweep.
    peak_density : float
        The largest density of any histogram of the sweep or of the centred
        cosines (count over total count times bin width); the widget keeps its
        y-axis fixed at it, so that frames compare.
    """

    strength: float
    k: int
    threshold: float
    bin_edges: NDArray[np.float64]
    related: NDArray[np.int64]
    unrelated: NDArray[np.int64]
    centred_related: NDArray[np.int64]
    centred_unrelated: NDArray[np.int64]
    mean_cosine: float
    unrelated_above: float
    centred_unrelated_above: float
    agreement: float
    centred_agreement: float
    sweep_strengths: NDArray[np.float64]
    sweep_agreement: NDArray[np.float64]
    sweep_mean_cosine: NDArray[np.float64]
    sweep_unrelated_above: NDArray[np.float64]
    peak_density: float


def _peak_density(histograms: list[NDArray[np.int64]]) -> float:
    """The largest count over total count times bin width among ``histograms``."""
    width = float(COSINE_BIN_EDGES[1] - COSINE_BIN_EDGES[0])
    return max(float(np.max(h)) / (float(np.sum(h)) * width) for h in histograms if np.sum(h))


@dataclass(frozen=True)
class SharedDirectionSetup:
    """What :func:`shared_direction_update` needs, from :func:`prepare_shared_direction`.

    The checked embeddings and the parts of every :class:`SharedDirectionState`
    that do not depend on the strength.

    Attributes
    ----------
    embeddings : ndarray of shape (n, d)
        The checked embeddings.
    label_index : ndarray of shape (n,)
        Each row's label, as an index into the distinct labels.
    base : SharedDirectionState
        The state at strength 0 (the centred embeddings), with the sweep.
    """

    embeddings: NDArray[np.float64]
    label_index: NDArray[np.intp]
    base: SharedDirectionState


def _pair_summary(
    similarities: NDArray[np.float64], index: NDArray[np.intp], threshold: float
) -> dict[str, Any]:
    """Histograms of related and unrelated pair cosines, and the false-match share."""
    related, unrelated = related_pair_cosines(similarities, index)
    return {
        "related": np.histogram(related, COSINE_BIN_EDGES)[0].astype(np.int64),
        "unrelated": np.histogram(unrelated, COSINE_BIN_EDGES)[0].astype(np.int64),
        "unrelated_above": _share_at_least(unrelated, threshold),
    }


def _raw_summary(
    embeddings: NDArray[np.float64],
    index: NDArray[np.intp],
    strength: float,
    k: int,
    threshold: float,
) -> dict[str, Any]:
    """Every field of the state that depends on the strength."""
    similarities = cosine_matrix(with_shared_direction(embeddings, strength))
    n = similarities.shape[0]
    return {
        **_pair_summary(similarities, index, threshold),
        "strength": strength,
        "mean_cosine": float(np.mean(similarities[np.triu_indices(n, k=1)])),
        "agreement": neighbour_agreement(similarities, index, k),
    }


def prepare_shared_direction(
    embeddings: ArrayLike, labels: ArrayLike, k: int = 10, *, threshold: float = 0.5
) -> SharedDirectionSetup:
    r"""Everything about a shared direction of growing strength that is computed once.

    The centred cosines (their histograms, false matches and neighbour
    agreement) and the sweep over :data:`SWEEP_STRENGTHS`; then
    :func:`shared_direction_update` gives the state at any strength.

    Parameters
    ----------
    embeddings : array_like of shape (n, d)
        Finite real embeddings with a nonzero mean row, ``n > k``.
    labels : array_like of shape (n,)
        What makes two rows related (for example the digit they show).
    k : int
        Neighbours per item in the agreement measure, ``1 <= k <= n - 1``.
    threshold : float
        The cosine threshold whose false matches are counted, in ``[-1, 1]``.

    Returns
    -------
    SharedDirectionSetup

    Examples
    --------
    >>> labels = np.repeat([0, 1], 10)
    >>> E = np.random.default_rng(0).normal(size=(20, 4)) + 3.0 * labels[:, None]
    >>> setup = prepare_shared_direction(E, labels, k=3)
    >>> setup.base.strength, setup.base.sweep_strengths.size
    (0.0, 13)
    """
    matrix = as_real_matrix(embeddings, "embeddings")
    index = as_labels(labels, "labels", matrix.shape[0])[1]
    k = as_int_scalar(k, "k", minimum=1, maximum=matrix.shape[0] - 1)
    threshold = as_float_scalar(threshold, "threshold", interval=(-1.0, 1.0))
    centred = centered_cosine_matrix(matrix)
    centred_pairs = _pair_summary(centred, index, threshold)
    sweep = [_raw_summary(matrix, index, value, k, threshold) for value in SWEEP_STRENGTHS]
    base = SharedDirectionState(
        **sweep[0],
        k=k,
        threshold=threshold,
        bin_edges=COSINE_BIN_EDGES.copy(),
        centred_related=centred_pairs["related"],
        centred_unrelated=centred_pairs["unrelated"],
        centred_unrelated_above=centred_pairs["unrelated_above"],
        centred_agreement=neighbour_agreement(centred, index, k),
        sweep_strengths=np.array(SWEEP_STRENGTHS),
        sweep_agreement=np.array([row["agreement"] for row in sweep]),
        sweep_mean_cosine=np.array([row["mean_cosine"] for row in sweep]),
        sweep_unrelated_above=np.array([row["unrelated_above"] for row in sweep]),
        peak_density=_peak_density(
            [row[kind] for row in [*sweep, centred_pairs] for kind in ("related", "unrelated")]
        ),
    )
    return SharedDirectionSetup(embeddings=matrix, label_index=index, base=base)


def shared_direction_update(setup: SharedDirectionSetup, strength: float) -> SharedDirectionState:
    r"""The state of the embeddings with a shared direction of strength :math:`t \ge 0`.

    Row :math:`i` becomes :math:`(\boldsymbol{e}_i - \bar{\boldsymbol{e}}) +
    t\,s\,\hat{\boldsymbol{m}}` (:func:`with_shared_direction`).

    Parameters
    ----------
    setup : SharedDirectionSetup
        From :func:`prepare_shared_direction`.
    strength : float
        Finite and nonnegative.

    Returns
    -------
    SharedDirectionState

    Examples
    --------
    >>> labels = np.repeat([0, 1], 10)
    >>> E = np.random.default_rng(0).normal(size=(20, 4)) + 3.0 * labels[:, None]
    >>> setup = prepare_shared_direction(E, labels, k=3)
    >>> weak, strong = (shared_direction_update(setup, t) for t in (0.0, 3.0))
    >>> bool(strong.mean_cosine > weak.mean_cosine)
    True
    >>> weak.centred_agreement == strong.centred_agreement
    True
    """
    if not isinstance(setup, SharedDirectionSetup):
        raise ValueError(
            "setup must be a SharedDirectionSetup from prepare_shared_direction; "
            f"got {type(setup).__name__}"
        )
    strength = as_float_scalar(strength, "strength", nonnegative=True)
    base = setup.base
    changed = _raw_summary(setup.embeddings, setup.label_index, strength, base.k, base.threshold)
    return replace(base, **changed)
