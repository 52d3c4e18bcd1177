r"""Checks to run before trusting a cosine similarity.

A cosine says how well two vectors point the same way; it does not say whether
the comparison made sense. This module gathers the checks of chapter 7 (the
field guide), each a small function on your own arrays:

- :func:`diagnose_pair`: is this cosine of 1 a finding, or the same array (a
  view, a copy, a rescaled copy) compared with itself?
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
import sys
import textwrap
from dataclasses import dataclass, replace
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
from cosine_book.factorization import cosine_matrix
from cosine_book.similarity import cosine

__all__ = [
    "COSINE_BIN_EDGES",
    "SWEEP_STRENGTHS",
    "EmbeddingReport",
    "PairDiagnosis",
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
# b counts as k * a when max|b - k a| <= _MULTIPLE_TOL * eps * max|b|.
_MULTIPLE_TOL = 8
# Two directions whose cosine is at least this are "nearly parallel" (a near-duplicate).
_NEAR_ONE = 1 - 1e-9
# Thresholds of EmbeddingReport.summary.
_MEAN_DIRECTION_LIMIT = 0.5
_LOW_RANK_SHARE = 0.1
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
class PairDiagnosis:
    r"""What a cosine between two arrays does and does not tell (from :func:`diagnose_pair`).

    Attributes
    ----------
    cosine : float
        :func:`cosine_book.similarity.cosine` of the flattened arrays.
    same_object : bool
        ``a is b``.
    shares_memory : bool
        Whether the two arrays share memory (:func:`numpy.shares_memory`), for
        example ``a`` and its view ``a[:]`` or ``a.reshape(...)``.
    identical : bool
        Same shape and all entries equal (a copy).
    positive_multiple : float or None
        The factor :math:`\kappa > 0` with :math:`b = \kappa a` up to rounding (see
        :func:`diagnose_pair`), ``1.0`` for equal arrays; ``None`` if ``b`` is
        not a positive multiple of ``a`` or the factor lies outside the range
        of normal float64 numbers (the verdict then says so).
    verdict : str
        One line of plain English: what the comparison amounts to.

    Examples
    --------
    >>> result = diagnose_pair([1.0, 2.0], [2.0, 4.0])
    >>> result.identical, result.positive_multiple
    (False, 2.0)
    """

    cosine: float
    same_object: bool
    shares_memory: bool
    identical: bool
    positive_multiple: float | None
    verdict: str


def _peak_exponent(values: NDArray[np.float64]) -> int:
    """The ``e`` with ``2**(e-1) <= max|values| < 2**e`` (``values`` not all zero)."""
    return int(np.frexp(np.max(np.abs(values)))[1])


def _multiple_of(a: NDArray[np.float64], b: NDArray[np.float64]) -> tuple[float, int] | None:
    """``(t_scaled, shift)`` with ``b = t_scaled * 2**shift * a`` up to rounding, or None.

    Both vectors (flat, float64, nonzero) are divided by a power of two near
    their largest entry (exact). The factor is read off at the first largest
    entry of ``a``; the multiple is accepted when every entry agrees to
    ``_MULTIPLE_TOL`` eps of the largest entry of ``b``.
    """
    exponent_a, exponent_b = _peak_exponent(a), _peak_exponent(b)
    a_scaled = np.ldexp(a, -exponent_a)
    b_scaled = np.ldexp(b, -exponent_b)
    pivot = int(np.argmax(np.abs(a_scaled)))  # the first largest entry
    factor = float(b_scaled[pivot] / a_scaled[pivot])
    if factor == 0:
        return None
    residual = float(np.max(np.abs(b_scaled - factor * a_scaled)))
    if residual > _MULTIPLE_TOL * _EPS * float(np.max(np.abs(b_scaled))):
        return None
    return factor, exponent_b - exponent_a


def _as_factor(scaled: float, shift: int) -> float | None:
    """``scaled * 2**shift`` as a float, or None outside the normal float64 range."""
    try:
        factor = math.ldexp(scaled, shift)
    except OverflowError:
        return None
    if not sys.float_info.min <= abs(factor) < math.inf:
        return None
    return factor


def _format_factor(scaled: float, shift: int) -> str:
    factor = _as_factor(scaled, shift)
    if factor is not None:
        return f"κ = {factor:.6g}"
    log10 = math.log10(abs(scaled)) + shift * math.log10(2.0)
    sign = "-" if scaled < 0 else ""
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


def _generic_verdict(value: float) -> str:
    if value >= _NEAR_ONE:
        gap = "cosine 1 to double precision" if value == 1.0 else f"cosine 1 - {1 - value:.2g}"
        return f"nearly parallel but not a multiple ({gap})"
    if value <= -_NEAR_ONE:
        gap = "cosine -1 to double precision" if value == -1.0 else f"cosine -1 + {1 + value:.2g}"
        return f"nearly opposite but not a multiple ({gap})"
    if value == 0.0:
        return "orthogonal directions, cosine 0"
    return f"different directions, cosine {_short(value)}"


def _shares_memory(a: NDArray[Any], b: NDArray[Any]) -> bool:
    try:
        return bool(np.shares_memory(a, b, max_work=_SHARES_MEMORY_WORK))
    except np.exceptions.TooHardError:  # pragma: no cover (exotic strides)
        return bool(np.may_share_memory(a, b))


def diagnose_pair(a: ArrayLike, b: ArrayLike) -> PairDiagnosis:
    r"""Explain a cosine between two arrays: a real comparison, or the same data twice.

    A cosine of 1 is often a bug, not a finding: the same tensor compared with
    itself, a view of it, a copy, or a rescaled copy. The checks run in this
    order, and the first that holds gives the verdict:

    1. ``a is b``: "the same array compared with itself";
    2. the arrays share memory (a view such as ``a[:]`` or ``a.reshape(...)``;
       for objects with ``__array__``, such as a PyTorch CPU tensor, the array
       it exposes, without a copy): "two views of the same memory";
    3. same shape and equal entries: "two equal arrays (copies)";
    4. :math:`b = \kappa a` with :math:`\kappa > 0`: "a positive multiple (factor κ = ...)";
    5. :math:`b = \kappa a` with :math:`\kappa < 0`: "a negative multiple (factor κ = ...)";
    6. otherwise a sentence with the cosine ("different directions, cosine
       0.42"), or "nearly parallel but not a multiple" (or "nearly opposite")
       when :math:`|\cos| \ge 1 - 10^{-9}`.

    The arrays are compared flattened. The multiple test divides both arrays
    by a power of two near their largest entry (exact, so any scale works),
    reads the factor at the first largest entry of :math:`a`,
    :math:`\kappa = b_p / a_p`, and accepts it when

    .. math::

        \max_i |b_i - \kappa a_i| \le 8 \, \varepsilon \max_i |b_i|,
        \qquad \varepsilon = 2^{-52},

    which allows the few roundings of forming :math:`\kappa a` in floating point. The
    factor of equal arrays, or of a power-of-two multiple, is exact.

    Parameters
    ----------
    a, b : array_like
        Real arrays with the same number of entries (lists, NumPy arrays of any
        shape, or anything with ``__array__``).

    Returns
    -------
    PairDiagnosis

    Raises
    ------
    ValueError
        If the numbers of entries differ, an array is the zero vector (its
        cosine is undefined), or an input is not an array of finite real
        numbers (NaN, infinity, complex, strings, masked, sparse, ragged, empty).

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
    """
    a_array = as_real_array(a, "a")
    b_array = a_array if b is a else as_real_array(b, "b")
    if a_array.size != b_array.size:
        raise ValueError(
            f"a has {a_array.size} entries (shape {a_array.shape}) but b has {b_array.size} "
            f"(shape {b_array.shape}); expected the same number of entries (the arrays are "
            "compared flattened)"
        )
    for array, name in ((a_array, "a"), (b_array, "b")):
        if not array.any():
            raise ValueError(f"{name} is the zero vector; its cosine with anything is undefined")
    a_flat = a_array.reshape(-1)
    b_flat = b_array.reshape(-1)
    value = cosine(a_flat, b_flat)
    same_object = a is b
    shares = same_object or _shares_memory(a_array, b_array)
    identical = a_array.shape == b_array.shape and bool(np.array_equal(a_array, b_array))
    multiple = _multiple_of(
        a_flat.astype(np.float64, copy=False), b_flat.astype(np.float64, copy=False)
    )
    factor = None if multiple is None else _as_factor(*multiple)
    positive = factor if factor is not None and factor > 0 else None
    if identical:
        positive = 1.0
    if same_object:
        verdict = "the same array compared with itself: cosine 1 by construction, not a finding"
    elif shares:
        if bool(np.array_equal(a_flat, b_flat)):
            verdict = "two views of the same memory (the same entries): cosine 1 by construction"
        else:
            verdict = (
                "two views of the same memory (overlapping, with different entries): "
                + _generic_verdict(value)
            )
    elif identical:
        verdict = "two equal arrays (copies): cosine 1 by construction"
    elif multiple is not None and multiple[0] > 0:
        verdict = (
            f"a positive multiple (factor {_format_factor(*multiple)}): "
            "the same direction, so cosine 1"
        )
    elif multiple is not None:
        verdict = (
            f"a negative multiple (factor {_format_factor(*multiple)}): "
            "opposite directions, so cosine -1"
        )
    else:
        verdict = _generic_verdict(value)
    return PairDiagnosis(
        cosine=value,
        same_object=same_object,
        shares_memory=shares,
        identical=identical,
        positive_multiple=positive,
        verdict=verdict,
    )


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

    def summary(self) -> str:
        r"""A few lines in plain words: the numbers, then what looks wrong.

        A line is added for each check that triggers:

        - ``mean_direction_share > 0.5``: a shared mean direction dominates;
          centre the embeddings (:func:`centered_cosine_matrix`) before comparing;
        - ``near_duplicate_pairs > 0``: duplicates, or embeddings collapsed onto
          the same direction;
        - ``effective_rank < 0.1 * min(n_rows, dim)``: the embeddings use few
          directions (collapse?); :math:`n` rows span at most :math:`n`
          directions, hence the minimum;
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
        if self.mean_direction_share > _MEAN_DIRECTION_LIMIT:
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
        if self.effective_rank < _LOW_RANK_SHARE * min(self.n_rows, self.dim):
            lines.append(
                f"- the embeddings use few directions (collapse?): effective rank "
                f"{self.effective_rank:.3g} of at most {min(self.n_rows, self.dim)}"
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

    (Roy and Vetterli, 2007; terms with :math:`p_i = 0` count as 0).
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
