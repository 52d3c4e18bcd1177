r"""Checks to run before trusting a cosine similarity (chapter 7, the field guide).

:func:`diagnose_pair` tells a finding from the same data twice (a view, a copy, a rescaled
copy); :func:`embedding_report` measures a shared direction, duplicates and uneven norms;
the rest centre embeddings, post-process them and compare them by their neighbours.
"""

from __future__ import annotations

import math
import numbers
import sys
import textwrap
from collections import namedtuple
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from cosine_book._validation import (
    as_float_scalar,
    as_int_scalar,
    as_labels,
    as_real_array,
    as_real_matrix,
)
from cosine_book.similarity import cosine, cosine_matrix, unit_rows

__all__ = [  # the result classes are reached through these
    "all_but_the_top",
    "centered_cosine_matrix",
    "diagnose_pair",
    "embedding_report",
    "k_occurrence",
    "neighbour_agreement",
    "related_pair_cosines",
    "top_k_neighbours",
    "top_k_overlap",
    "with_shared_direction",
]

_NEAR_ONE = 1 - 1e-9  # a cosine at least this is a near-duplicate
_MARGIN = 4 * 2.0**-53  # for the check's own float64 arithmetic
_KINDS = tuple(
    "same object, shared memory, equal, positive multiple, negative multiple, "
    "nearly parallel, nearly opposite, orthogonal, different, zero vector, non-finite".split(", ")
)
# A floating-point format: unit roundoff, smallest normal and smallest subnormal number.
_Precision = namedtuple("_Precision", "name unit tiny least")
_PRECISIONS = {
    p.name: p
    for p in (
        _Precision("float16", 2.0**-11, 2.0**-14, 2.0**-24),
        _Precision("bfloat16", 2.0**-8, 2.0**-126, 2.0**-133),
        _Precision("float32", 2.0**-24, 2.0**-126, 2.0**-149),
        _Precision("float64", 2.0**-53, 2.0**-1022, 2.0**-1074),
    )
}
# An argument's values (bfloat16 as float32), its memory (for np.shares_memory), its format.
_Input = namedtuple("_Input", "values memory precision")


@dataclass(frozen=True)
class PairDiagnosis:
    """What a cosine tells (chapter 7's :func:`diagnose_pair`); ``factor``: κ if ``b = κ a``."""

    cosine: float
    kind: str
    verdict: str
    factor: float | None
    precision: str


@dataclass(frozen=True)
class RowDiagnoses:
    """A :class:`PairDiagnosis` per row pair (chapter 7); printed, the count of each kind."""

    pairs: tuple[PairDiagnosis, ...]
    precision: str

    def __str__(self) -> str:
        kinds = [pair.kind for pair in self.pairs]
        counts = ", ".join(f"{kinds.count(kind)} {kind}" for kind in _KINDS if kind in kinds)
        return f"{len(self.pairs)} row pairs ({self.precision}): {counts}"


def _read(value: Any, name: str, finite: bool) -> _Input:
    """An array of real numbers: NumPy, array-like or a CPU tensor (bfloat16 too)."""
    torch = sys.modules.get("torch")  # a tensor exists only once torch is imported
    if torch is None or not isinstance(value, torch.Tensor):
        array = as_real_array(value, name, finite=finite)  # integers, booleans: float64
        return _Input(array, array, _PRECISIONS.get(array.dtype.name, _PRECISIONS["float64"]))
    tensor = value.detach()  # the same memory, without autograd
    if tensor.device.type != "cpu":
        raise ValueError(
            f"{name} is a torch tensor on {tensor.device}; move it to the CPU first ({name}.cpu())"
        )
    bfloat16 = tensor.dtype == torch.bfloat16
    try:  # NumPy has no bfloat16: its bits as int16 (memory), its values as float32 (exact)
        tensor = tensor.resolve_conj().resolve_neg()
        memory = (tensor.view(torch.int16) if bfloat16 else tensor).numpy()
        array = as_real_array(tensor.float().numpy() if bfloat16 else memory, name, finite=finite)
    except (RuntimeError, TypeError) as error:
        raise ValueError(
            f"{name} is a torch tensor NumPy cannot read ({error}); expected a dense CPU "
            f"tensor of real numbers (convert with {name}.float())"
        ) from None
    dtype = "bfloat16" if bfloat16 else array.dtype.name
    return _Input(array, memory, _PRECISIONS.get(dtype, _PRECISIONS["float64"]))


def _check_pair(a: _Input, b: _Input, axis: int | None) -> None:
    for value, name in ((a, "a"), (b, "b")):
        shape = value.values.shape
        if axis is None and not shape:
            raise ValueError(f"{name} is a single number (shape ()); expected a 1-D vector")
        if axis is None and len(shape) != 1:
            raise ValueError(
                f"{name} has shape {shape}; diagnose_pair compares two 1-D vectors: pass "
                "axis=-1 to diagnose each pair of rows of two (n, d) batches (as "
                "torch.nn.functional.cosine_similarity(a, b, dim=-1)), or flatten both "
                f"({name}.ravel()) to compare the whole arrays"
            )
        if axis is not None and len(shape) != 2:
            raise ValueError(
                f"{name} has shape {shape}; axis={axis} diagnoses the row pairs of 2-D batches "
                f"of shape (n, d): drop axis for one pair, or reshape it first "
                f"({name}.reshape(-1, {shape[-1] if shape else 1}))"
            )
        if axis is None and shape == b.values.shape and not value.values.any():  # rows: below
            raise ValueError(f"{name} is the zero vector; its cosine with anything is undefined")
    if a.values.shape != b.values.shape:
        raise ValueError(
            f"a has shape {a.values.shape} but b has shape {b.values.shape}; expected the same "
            "shape (of two vectors, or of two batches whose row i of a is compared with row i of b)"
        )


def _allowance(pa: _Precision, pb: _Precision, roundings: int) -> float:
    """θ: one rounding of each input in its own format, the rest in the narrower one."""
    return pa.unit + pb.unit + (roundings - 2) * max(pa.unit, pb.unit) + _MARGIN


def _multiple(a, b, pa: _Precision, pb: _Precision, roundings: int) -> tuple | None:
    """``(κ, subnormal)`` if ``b = κ a`` up to rounding, else None."""
    # Each entry normal in both allows |κ| in [|r_i| (1 - θ), |r_i| / (1 - θ)], r_i = b_i / a_i;
    # the ranges must meet, one sign (else: r_i at the largest |a_i|, exactly). All must fit.
    theta = allowed = _allowance(pa, pb, roundings)
    use = (np.abs(a) >= pa.tiny) & (np.abs(b) >= pb.tiny)
    subnormal = not use.any()
    if subnormal:
        both = (a != 0) & (b != 0)
        if not both.any():
            return None
        use = np.arange(a.size) == np.argmax(np.where(both, np.abs(a), 0.0))
        theta = 0.0
    with np.errstate(over="ignore", under="ignore"):
        ratios = b[use] / a[use]
    size = np.abs(ratios)
    if not np.all((size >= sys.float_info.min) & (size < math.inf)):
        raise ValueError("b / a is beyond the float64 range; rescale a or b to a similar size")
    low, high = float(np.max(size)) * (1 - theta), float(np.min(size)) / (1 - theta)
    if not (np.all(ratios > 0) or np.all(ratios < 0)) or low > high:
        return None
    exact = np.min(size) == np.max(size)  # then κ is that ratio, else the middle of the range
    kappa = math.copysign(float(size[0]) if exact else (low + high) / 2, ratios[0])
    # Every entry: |b_i - κ a_i| <= (θ + 2^-51) max(|b_i|, |κ a_i|) + max(λ_b, |κ| λ_a) r/2,
    # λ the smallest subnormal of each format: half a step per rounding (at least one).
    with np.errstate(under="ignore"):
        x = kappa * a
    bound = (allowed + _MARGIN) * np.maximum(np.abs(x), np.abs(b))
    slack = max(pb.least, abs(kappa) * pa.least) * max(1.0, roundings / 2)
    return (kappa, subnormal) if np.all(np.abs(b - x) <= bound + slack) else None


def _short(value: float) -> str:
    """``value`` with the fewest digits (at least 2) that do not round to 0 or +-1."""
    if value in (0.0, 1.0, -1.0):
        return f"{value:g}"
    for digits in range(2, 18):
        if float(text := f"{value:.{digits}g}") not in (0.0, 1.0, -1.0):
            return text
    return repr(value)


def _generic(value, precision: _Precision, words: str, a, b, norms, theta) -> tuple[str, str]:
    """Kind and verdict of a pair that is not a multiple: its cosine in words."""
    if value == 0.0:
        return "orthogonal", "orthogonal directions, cosine 0"
    if abs(value) < min(_NEAR_ONE, 1 - precision.unit):
        return "different", f"different directions, cosine {_short(value)}"
    # Nearly parallel (or opposite): how far from a multiple, and whether it prints as 1.
    kind = "nearly parallel" if value > 0 else "nearly opposite"
    one, gap = ("1", 1 - value) if value > 0 else ("-1", 1 + value)
    cosine_words = f"cosine {one} to double precision"
    if gap != 0:
        cosine_words = f"cosine {one} {'-' if value > 0 else '+'} {gap:.2g}"
        if gap <= precision.unit / 2:
            cosine_words += f", which rounds to {one} in {precision.name}"
    # The least-squares κ = <a, b> / |a|^2; the largest relative deviation where both are normal.
    kappa = value * norms[1] / norms[0]
    size = np.maximum(np.abs(fitted := kappa * a), np.abs(b))
    keep = (np.abs(a) >= precision.tiny) & (np.abs(b) >= precision.tiny)
    keep = keep if keep.any() else size > 0
    deviation = float(np.max(np.abs(b - fitted)[keep] / size[keep]))
    head = f"{kind} but not a multiple ({cosine_words}): "
    fit = f"with relative errors up to {deviation:.2g} ({deviation / precision.unit:.3g} "
    fit += f"{precision.name} unit roundoffs; least-squares κ = {kappa:.6g})"
    if deviation <= theta:  # the normal entries fit: a subnormal one is off
        tail = f"one below {precision.tiny:.2g} is off by over half a subnormal step a rounding"
        return kind, f"{head}its entries normal in {precision.name} fit κ a {fit}, but {tail}"
    return kind, f"{head}b is κ a {fit}, more than {words} allows ({theta:.2g})"


def _diagnose(a: _Input, b: _Input, same_object: bool, roundings: int) -> PairDiagnosis:
    precision = max(a.precision, b.precision, key=lambda p: p.unit)  # the narrower
    theta = _allowance(a.precision, b.precision, roundings)
    words = f"{precision.name} rounding" if roundings == 2 else f"{roundings} roundings"
    if a.precision.unit != b.precision.unit:
        words += f", the precision of {'a' if precision is a.precision else 'b'}"
    finite = [bool(np.isfinite(x.values).all()) for x in (a, b)]  # rows only, like zero rows
    if not all(finite):
        which = "a" if finite[1] else "b" if finite[0] else "a and b"
        verdict = f"non-finite entries ({which}, NaN or infinity), cosine undefined (torch: NaN)"
        return PairDiagnosis(math.nan, "non-finite", verdict, None, precision.name)
    if not (a.values.any() and b.values.any()):  # rows only: PyTorch's cosine is 0 here
        which = "a" if b.values.any() else "b" if a.values.any() else "a and b"
        verdict = f"zero vector ({which}), cosine undefined (torch reports 0)"
        return PairDiagnosis(math.nan, "zero vector", verdict, None, precision.name)
    a64, b64 = (x.values.astype(np.float64, copy=False) for x in (a, b))
    value, norms = cosine(a64, b64), [math.hypot(*v) for v in (a64, b64)]
    shares = same_object or bool(np.shares_memory(a.memory, b.memory))  # exactly
    identical = bool(np.array_equal(a64, b64))
    found = None if identical else _multiple(a64, b64, a.precision, b.precision, roundings)
    factor = found[0] if found else 1.0 if identical else None
    if same_object:
        kind, verdict = "same object", "the same array compared with itself: cosine 1 by "
        verdict += "construction, not a finding"
    elif shares and identical:
        kind, verdict = "shared memory", "two views of the same memory (the same entries): "
        verdict += "cosine 1 by construction"
    elif shares:
        kind, verdict = _generic(value, precision, words, a64, b64, norms, theta)
        verdict = "two views of the same memory (overlapping, with different entries): " + verdict
    elif identical:
        kind, verdict = "equal", "two equal arrays (copies): cosine 1 by construction"
    elif found:
        sign, negative = ("negative", True) if factor < 0 else ("positive", False)
        rounding = f" up to {words}" if precision.name != "float64" else ""
        direction = ("the same direction, so cosine 1", "opposite directions, so cosine -1")
        kind, verdict = f"{sign} multiple", f"a {sign} multiple{rounding} (factor κ = {factor:.6g})"
        verdict += f": {direction[negative]}{' up to rounding' if rounding else ''}"
        if found[1]:  # no entry normal in both: only the spacing of subnormals is tested
            verdict = f"a {sign} multiple (κ about {factor:.6g}) only to within a subnormal step: "
            verdict += f"no entry is normal (at least {precision.tiny:.2g} in {precision.name}) "
            verdict += "in both a and b, too few bits to tell a multiple from a near-duplicate"
    else:
        kind, verdict = _generic(value, precision, words, a64, b64, norms, theta)
    if min(norms) < 1e-8 and value != 0:  # torch divides by max(norm, eps), eps = 1e-8
        clamped = value * math.prod(min(n / 1e-8, 1.0) for n in norms)
        verdict += f"; a norm is below torch's eps (1e-8): F.cosine_similarity gives {clamped:.2g}"
    return PairDiagnosis(value, kind, verdict, factor, precision.name)


def diagnose_pair(
    a: ArrayLike, b: ArrayLike, *, axis: int | None = None, roundings: int = 2
) -> PairDiagnosis | RowDiagnoses:
    r"""Explain a cosine between two vectors: a real comparison, or the same data twice.

    Chapter 7. The first that holds: ``a is b``; shared memory; equal entries;
    :math:`b = \kappa a` up to rounding; else the cosine in words. With :math:`u_a, u_b`
    the unit roundoffs of the inputs' formats (float16, bfloat16, float32, float64),
    :math:`r` the ``roundings`` and :math:`s` the smallest subnormal, a multiple fits
    :math:`|b_i - \kappa a_i| \le \theta \max(|b_i|, |\kappa a_i|) + s \max(1, r/2)` in every entry,
    :math:`\theta = u_a + u_b + (r - 2)\max(u_a, u_b) + 2^{-51}`: one rounding of each input
    in its format, and :math:`r - 2` more in the narrower. ``axis=-1`` diagnoses each row
    pair of two ``(n, d)`` batches (as ``dim=-1``), and reports a zero or non-finite row
    (PyTorch gives 0 and NaN) where two vectors raise a ValueError.

    >>> a = np.array([1.0, 2.0, 2.0])
    >>> diagnose_pair(a, -0.5 * a).verdict
    'a negative multiple (factor κ = -0.5): opposite directions, so cosine -1'
    """
    if axis is not None and (
        not isinstance(axis, numbers.Integral) or isinstance(axis, bool) or axis not in (-1, 1)
    ):
        raise ValueError(
            "axis must be None (two vectors) or -1 (the row pairs of two (n, d) batches, as "
            f"dim=-1 in torch.nn.functional.cosine_similarity); got {axis!r}"
        )
    roundings = as_int_scalar(roundings, "roundings", minimum=2)
    a_input = _read(a, "a", finite=axis is None)  # rows: a non-finite row is reported
    b_input = a_input if b is a else _read(b, "b", finite=axis is None)
    _check_pair(a_input, b_input, axis)
    if axis is None:
        return _diagnose(a_input, b_input, a is b, roundings)
    rows = zip(*(zip(x.values, x.memory, strict=True) for x in (a_input, b_input)), strict=True)
    pairs = tuple(
        _diagnose(a_input._replace(values=va, memory=ma),
                  b_input._replace(values=vb, memory=mb), a is b, roundings)
        for (va, ma), (vb, mb) in rows
    )  # fmt: skip
    precision = max(a_input.precision, b_input.precision, key=lambda p: p.unit)
    return RowDiagnoses(pairs, precision.name)


def _embeddings(E: ArrayLike, name: str = "E") -> NDArray[np.float64]:
    if (matrix := as_real_matrix(E, name)).shape[0] < 2:
        raise ValueError(f"{name} has shape {matrix.shape}; expected at least 2 rows to compare")
    return matrix


def _centred(E: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64], float]:
    """``E`` minus its mean row, that row, and the rounding level of the subtraction."""
    mean = E.mean(axis=0)
    return E - mean, mean, E.shape[0] * 2.0**-52 * float(np.max(np.abs(E)))


def _effective_rank(singular: NDArray[np.float64]) -> float:
    p = singular[singular > 0] / np.sum(singular)
    return float(np.exp(-np.sum(p * np.log(p)))) if p.size else 0.0


_NO_WARNING = (
    "no warning sign among these checks; they cannot see a rogue coordinate with zero "
    "mean or rescaled coordinates: compare neighbour_agreement on known related pairs "
    "on cosine_matrix and on centered_cosine_matrix"
)


@dataclass(frozen=True)
class EmbeddingReport:
    """Health check of embeddings (chapter 7's :func:`embedding_report`); ``summary()``."""

    n_rows: int
    dim: int
    mean_cosine: float
    mean_direction_share: float
    effective_rank: float
    norm_spread: float
    near_duplicate_pairs: int
    centred_effective_rank: float

    def summary(self) -> str:
        """The numbers, then a line per finding (chapter 7); no remedy it cannot justify."""
        rank, centred_rank = self.effective_rank, self.centred_effective_rank
        most, centred_most = min(self.n_rows, self.dim), min(self.n_rows - 1, self.dim)
        lines = [
            f"{self.n_rows} embeddings of dimension {self.dim}: mean cosine "
            f"{_short(self.mean_cosine)}, effective rank {rank:.2g}"
        ]
        if rank < 0.1 * most or self.mean_direction_share > 0.5:
            lines.append(
                f"- a shared direction: the mean row carries {_short(self.mean_direction_share)}"
                f" of the square norm ({1.0 - self.mean_direction_share:.2g} is left); effective "
                f"rank {rank:.3g} of at most {most}, centred {centred_rank:.3g} of at most "
                f"{centred_most}. These numbers cannot tell a shared offset (centring removes "
                "it) from collapse (centring does not repair it): compare a threshold-free "
                "measure on known related pairs (pair_auc, neighbour_agreement) on "
                "cosine_matrix and on centered_cosine_matrix"
            )
        if self.near_duplicate_pairs > 0:
            lines.append(
                f"- {self.near_duplicate_pairs} pair(s) of rows are near-duplicates (cosine >= "
                "1 - 1e-9): duplicated items, or embeddings collapsed onto one direction"
            )
        if self.norm_spread > 0.5:
            lines.append(
                f"- norms vary a lot (coefficient of variation {self.norm_spread:.2g}): dot "
                "product and cosine will rank differently"
            )
        # Not "nothing is wrong": these numbers miss a rogue coordinate with zero mean
        # and rescaled coordinates, which change neighbours but not the mean cosine.
        lines += [_NO_WARNING] if len(lines) == 1 else []
        return "\n".join(  # at most 79 characters a line, for a narrow output
            textwrap.fill(line, width=79, subsequent_indent="  " if line[0] == "-" else "")
            for line in lines
        )


def embedding_report(E: ArrayLike) -> EmbeddingReport:
    r"""Summary statistics that show whether cosines between embeddings can be trusted.

    Chapter 7. With :math:`\sigma_i` the singular values of the rows (of the centred rows,
    above rounding level, for the centred rank), the effective rank (Roy and Vetterli,
    2007) is :math:`\exp(-\sum_i p_i \log p_i)`, :math:`p_i = \sigma_i / \sum_j \sigma_j`;
    the mean direction's share of the square norm is :math:`\|\bar e\|^2 /
    \overline{\|e_i\|^2}`.

    >>> print(embedding_report([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]]).summary())
    3 embeddings of dimension 2: mean cosine 0.47, effective rank 1.9
    - a shared direction: the mean row carries 0.62 of the square norm (0.38 is
      left); effective rank 1.92 of at most 2, centred 1.62 of at most 2. These
      numbers cannot tell a shared offset (centring removes it) from collapse
      (centring does not repair it): compare a threshold-free measure on known
      related pairs (pair_auc, neighbour_agreement) on cosine_matrix and on
      centered_cosine_matrix
    """
    E = _embeddings(E)
    n, d = E.shape
    cosines = cosine_matrix(E)[np.triu_indices(n, 1)]  # refuses zero rows
    square_norms = np.sum(E * E, axis=1)
    norms = np.sqrt(square_norms)
    centred, mean, limit = _centred(E)
    centred_singular = np.linalg.svd(centred, compute_uv=False)
    return EmbeddingReport(
        n_rows=n,
        dim=d,
        mean_cosine=float(np.mean(cosines)),
        mean_direction_share=min(1.0, float(mean @ mean / np.mean(square_norms))),
        effective_rank=_effective_rank(np.linalg.svd(E, compute_uv=False)),
        norm_spread=float(np.std(norms) / np.mean(norms)),
        near_duplicate_pairs=int(np.count_nonzero(cosines >= _NEAR_ONE)),
        centred_effective_rank=_effective_rank(
            centred_singular[centred_singular > limit * math.sqrt(E.size)]
        ),
    )


def centered_cosine_matrix(E: ArrayLike) -> NDArray[np.float64]:
    r"""Cosines between the rows of ``E`` minus their mean row (chapter 7).

    :math:`\cos(e_i - \bar e, e_j - \bar e)` removes a direction all rows share (not
    chapter 4's centring of each vector). A row equal to the mean up to rounding (within
    :math:`n \varepsilon \max |E|`) has no direction and is refused.

    >>> centered_cosine_matrix([[11.0, 10.0], [10.0, 11.0], [12.0, 12.0]]).round(4).tolist()
    [[1.0, 0.0, -0.7071], [0.0, 1.0, -0.7071], [-0.7071, -0.7071, 1.0]]
    """
    centred, _, limit = _centred(_embeddings(E))
    flat = np.flatnonzero(np.max(np.abs(centred), axis=1) <= limit)
    if flat.size:
        raise ValueError(
            f"row {flat[0]} of E equals the mean row (up to rounding), so its centred "
            f"direction is undefined{'' if flat.size == 1 else f' ({flat.size} rows in all)'}; "
            "drop it, or compare uncentred rows (cosine_matrix)"
        )
    return cosine_matrix(centred)


def with_shared_direction(E: ArrayLike, strength: float) -> NDArray[np.float64]:
    r"""The rows of ``E`` with their shared mean direction set to a strength :math:`t \ge 0`.

    Chapter 7: with the mean row :math:`\bar e`, :math:`\hat m = \bar e / \|\bar e\|` and
    :math:`\nu^2 = \frac1n \sum_i \|e_i - \bar e\|^2`, row :math:`i` becomes
    :math:`(e_i - \bar e) + t \nu \hat m`: centred at :math:`t = 0`, ``E`` itself at
    :math:`t = \|\bar e\| / \nu`; centred cosines do not change.

    >>> with_shared_direction([[11.0, 10.0], [10.0, 11.0], [12.0, 12.0]], 3.0).round(4).tolist()
    [[2.4495, 1.4495], [1.4495, 2.4495], [3.4495, 3.4495]]
    """
    t = as_float_scalar(strength, "strength", nonnegative=True)
    centred, mean, limit = _centred(_embeddings(E))
    if float(np.max(np.abs(mean))) <= limit:
        raise ValueError(
            "the mean row of E is zero (up to rounding), so there is no mean direction to "
            "strengthen; expected embeddings whose mean row is not zero"
        )
    if float(np.max(np.abs(centred))) <= limit:
        raise ValueError(
            "every row of E equals the mean row (up to rounding), so the centred rows have "
            "no spread (ν = 0) to measure the strength in; expected rows that differ"
        )
    spread = math.sqrt(float(np.mean(np.sum(centred * centred, axis=1))))
    return centred + t * spread * (mean / np.sqrt(np.sum(mean * mean)))


def all_but_the_top(E: ArrayLike, n_components: int, *, fit: ArrayLike | None = None):
    r"""Subtract the mean row and remove the top principal directions (Mu and Viswanath, 2018).

    Chapter 7: :math:`e \to (e - \bar e) - \sum_{j \le D} \langle e - \bar e, v_j\rangle v_j`,
    the mean and the top :math:`D` (``n_components``) right singular vectors :math:`v_j`
    of the centred rows of ``fit`` (default ``E``); ``D = 0`` only centres.

    >>> E = np.array([[2.0, 0.0, 1.0], [-2.0, 0.0, 1.0], [0.0, 1.0, 1.0], [0.0, -1.0, 1.0]])
    >>> (all_but_the_top(E, 1) + 0.0).tolist()
    [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, -1.0, 0.0]]
    """
    rows = as_real_matrix(E, "E")
    reference = rows if fit is None else as_real_matrix(fit, "fit")
    if reference.shape[1] != rows.shape[1]:
        raise ValueError(f"fit has {reference.shape[1]} columns; expected {rows.shape[1]}, as E")
    limit = min(reference.shape) - 1
    n_components = as_int_scalar(n_components, "n_components", minimum=0, maximum=limit)
    centred, mean, _ = _centred(reference)
    top = np.linalg.svd(centred, full_matrices=False)[2][:n_components]
    return (rows - mean) - ((rows - mean) @ top.T) @ top


def k_occurrence(E: ArrayLike, k: int = 10) -> NDArray[np.int64]:
    r"""How often each row is among the other rows' ``k`` nearest neighbours by cosine.

    Chapter 7. The counts :math:`N_k` average :math:`k`; hubs and rows in no list skew
    them to the right (hubness, Radovanović et al., 2010). Among equal cosines the choice
    is ``numpy.argpartition``'s.

    >>> k_occurrence([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [0.6, 0.4]], 1).tolist()
    [1, 2, 0, 1]
    """
    unit = unit_rows(as_real_matrix(E, "E"))
    n = unit.shape[0]
    k = as_int_scalar(k, "k", minimum=1, maximum=n - 1)
    counts = np.zeros(n, dtype=np.int64)
    for start in range(0, n, 1000):  # 1000 rows at a time: memory 1000 n
        S = unit[start : start + 1000] @ unit.T
        np.fill_diagonal(S[:, start:], -np.inf)  # not itself
        counts += np.bincount(np.argpartition(-S, k - 1, axis=1)[:, :k].ravel(), minlength=n)
    return counts


def _as_similarity(S: ArrayLike, name: str) -> NDArray[np.float64]:
    if (matrix := as_real_matrix(S, name)).shape[0] != matrix.shape[1]:
        raise ValueError(f"{name} has shape {matrix.shape}; expected a square (n, n) matrix")
    if matrix.shape[0] < 2:
        raise ValueError(f"{name} has shape {matrix.shape}; expected at least 2 items")
    return matrix


def _neighbours(S: NDArray[np.float64], k: Any) -> NDArray[np.intp]:
    """The ``k`` columns of each row first in a stable sort of ``-S``, the diagonal left out."""
    n = S.shape[0]
    k = as_int_scalar(k, "k", minimum=1, maximum=n - 1)
    chunks = []
    for start in range(0, n, 512):  # 512 rows at a time: memory a few 512 n
        work = -S[start : start + 512]
        np.fill_diagonal(work[:, start:], np.inf)  # itself: last
        chunks.append(np.argsort(work, axis=1, kind="stable")[:, :k])
    return np.concatenate(chunks)


def top_k_neighbours(S: ArrayLike, k: int) -> NDArray[np.intp]:
    """The ``k`` nearest neighbours of every item, most similar first (chapter 7).

    Row ``i`` lists the items ``j != i`` with the largest ``S[i, j]``, ties to the lower
    index; the diagonal is ignored and ``S`` need not be symmetric.

    >>> top_k_neighbours([[1.0, 0.5, 0.9], [0.5, 1.0, 0.2], [0.9, 0.2, 1.0]], 1).tolist()
    [[2], [0], [0]]
    """
    return _neighbours(_as_similarity(S, "S"), k)


def top_k_overlap(S1: ArrayLike, S2: ArrayLike, k: int) -> float:
    r"""How far two similarity matrices agree on each item's ``k`` nearest neighbours.

    Chapters 6 and 7: :math:`\frac1n \sum_i |N_1(i) \cap N_2(i)| / k`, with :math:`N(i)`
    the neighbours of :func:`top_k_neighbours`; 1 when they rank the neighbours alike.

    >>> S1 = [[1.0, 0.9, 0.1], [0.9, 1.0, 0.3], [0.1, 0.3, 1.0]]
    >>> top_k_overlap(S1, [[1.0, 0.2, 0.8], [0.2, 1.0, 0.9], [0.8, 0.9, 1.0]], 1)
    0.3333333333333333
    """
    first, second = _as_similarity(S1, "S1"), _as_similarity(S2, "S2")
    if first.shape != second.shape:
        raise ValueError(
            f"S1 has shape {first.shape} but S2 has shape {second.shape}; expected "
            "similarities over the same items (equal shapes)"
        )
    neighbours = _neighbours(first, k)
    both = np.sort(np.concatenate([neighbours, _neighbours(second, k)], axis=1))
    return int(np.count_nonzero(both[:, 1:] == both[:, :-1])) / neighbours.size  # no repeats


def neighbour_agreement(S: ArrayLike, labels: ArrayLike, k: int) -> float:
    r"""Share of each item's ``k`` nearest neighbours that carry its label, averaged (chapter 7).

    :math:`\frac1n \sum_i |\{j \in N(i) : y_j = y_i\}| / k`, with :math:`N(i)` the
    neighbours of :func:`top_k_neighbours` (ties to the lower index).

    >>> neighbour_agreement([[1, 0.9, 0.1], [0.9, 1, 0.3], [0.1, 0.3, 1]], ["a", "a", "b"], 1)
    0.6666666666666666
    """
    matrix = _as_similarity(S, "S")
    index = as_labels(labels, "labels", matrix.shape[0])[1]
    neighbours = _neighbours(matrix, k)
    return int(np.count_nonzero(index[neighbours] == index[:, None])) / neighbours.size


def related_pair_cosines(S: ArrayLike, labels: ArrayLike) -> tuple[NDArray, NDArray]:
    """The similarities of the pairs ``i < j`` with the same label, and with different labels.

    Chapter 7. Each in the order of ``np.triu_indices(n, 1)``; only the upper triangle
    is read.

    >>> S = [[1.0, 0.9, 0.1], [0.9, 1.0, 0.3], [0.1, 0.3, 1.0]]
    >>> [values.tolist() for values in related_pair_cosines(S, ["a", "a", "b"])]
    [[0.9], [0.1, 0.3]]
    """
    matrix = _as_similarity(S, "S")
    index = as_labels(labels, "labels", matrix.shape[0])[1]
    rows, columns = np.triu_indices(matrix.shape[0], 1)
    values, same = matrix[rows, columns], index[rows] == index[columns]
    return values[same], values[~same]
