r"""Linear matrix factorisation: closed forms, rescaling freedom, cosine matrices.

The model of Steck, Ekanadham and Kallus (2024) approximates a user-item
matrix :math:`X` (:math:`n` users by :math:`p` items) by :math:`XAB^\top` with
:math:`A, B` of shape ``(p, k)``. Item embeddings are the rows of :math:`B`,
user embeddings the rows of :math:`XA`. Two training objectives have
closed-form minimisers built from the right singular vectors :math:`V` and
singular values :math:`\sigma` of :math:`X`:

.. math::

    & \text{(1)}\quad \min_{A, B}\; \|X - XAB^\top\|_F^2 + \lambda \|AB^\top\|_F^2,

    & \qquad \hat A = \hat B = V_k \, \mathrm{diag}\bigl(1 / (1 + \lambda / \sigma_i^2)\bigr)^{1/2};

    & \text{(2)}\quad \min_{A, B}\; \|X - XAB^\top\|_F^2
    + \lambda \bigl(\|XA\|_F^2 + \|B\|_F^2\bigr),

    & \qquad \hat A = V_k \, \mathrm{diag}\bigl(\sqrt{(\sigma_i - \lambda)_+} / \sigma_i\bigr),
    \quad \hat B = V_k \, \mathrm{diag}\bigl(\sqrt{(\sigma_i - \lambda)_+}\bigr).

Objective (1) only pins down the product :math:`AB^\top`: every
:math:`(AD, BD^{-1})` with :math:`D` diagonal and invertible is optimal too
(:func:`rescale`), and the cosine similarities of the embeddings
(:func:`cosine_matrix`) change with :math:`D`. :func:`rescaling_update`
computes them, with their cluster recovery and the (unchanged) predictions,
for :math:`D = \mathrm{diag}(f)^\alpha`: the state of chapter 6's widget.

.. rubric:: How the spectrum is computed

:math:`V` and :math:`\sigma` come from the eigendecomposition of the
:math:`p \times p` Gram matrix :math:`X^\top X` (:func:`gram_spectrum`, with
:func:`numpy.linalg.eigh`), never from a thin SVD of the tall :math:`X`: for
20,000 users and 1,000 items that is about ten times faster
(``benchmarks/bench_factorization.py`` times both, and SciPy's ``eigh``
drivers). Tiny negative eigenvalues from rounding are clipped to zero,
eigenpairs are sorted by descending singular value, and each eigenvector's
sign is fixed so that its largest-magnitude entry is positive; outputs are
thus deterministic.

.. rubric:: Any scale of X

When the largest entry of :math:`X` lies outside ``[2**-100, 2**100]`` (about
``[8e-31, 1.3e30]``), :math:`X^\top X` is formed from :math:`X` divided by a
power of four, which is exact, and the singular values are multiplied back;
the closed forms, cosines and the alternating solver work in those units too.
So entries near ``1e200`` or ``1e-170`` give the right answer instead of an
overflow or a silent zero, and inside the range nothing is rescaled (results
are unchanged bit for bit). Cosine matrices divide each row by a power of two
near its largest entry before normalising it.

.. rubric:: Determinism

Vector sums are NumPy sums in a fixed (pairwise) order, ties are broken in a
documented way (the scores of :mod:`cosine_book.cluster_recovery`), and only matrix products and the
eigendecomposition use BLAS/LAPACK, whose last bits may differ between CPUs.

.. rubric:: Where the rest lives

How well a similarity recovers known clusters (the AUC and top-neighbour share
reported here) is :mod:`cosine_book.cluster_recovery`, which knows nothing of
factorisation; the simulated data of the paper's Section 4 come from
:func:`cosine_book.simulation.make_clustered_interactions`. This module keeps the
model and what its rescaling freedom does: the closed forms and the spectrum
they need, the losses and the iterative check, the rescaling itself, cosine
matrices, and the experiments of chapter 6 that compare equally optimal
rescalings (:func:`item_similarity_suite`, :func:`rescaling_spread`, and
:func:`rescaling_update`, the state of the chapter's widget). Retrieval against
held-out interactions, and MovieLens, are in ``cosine_book.recommenders``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import scipy.sparse
from numpy.typing import ArrayLike, NDArray

from cosine_book._validation import (
    as_float_scalar,
    as_int_scalar,
    as_labels,
    as_real_array,
    as_real_matrix,
)
from cosine_book.cluster_recovery import (
    ClusterRecovery,
    _as_clusters,
    _pair_auc_of_scores,
    _same_cluster,
    _top_neighbour_share,
)
from cosine_book.portable import standard_normal

__all__ = [
    "ClosedFormCheck",
    "RescalingSpread",
    "RescalingState",
    "RescalingUpdate",
    "Spectrum",
    "closed_form_check",
    "cosine_matrix",
    "dropout_shrinkage",
    "fit_alternating",
    "fit_objective1",
    "fit_objective2",
    "gram",
    "gram_spectrum",
    "item_similarity_suite",
    "objective1_gradient",
    "objective1_loss",
    "objective2_gradient",
    "objective2_loss",
    "prediction_item_cosines",
    "prepare_rescaling_state",
    "rescale",
    "rescaling_spread",
    "rescaling_update",
    "standardize_columns",
    "standardized_gram",
]

Matrix = NDArray[Any] | scipy.sparse.sparray | scipy.sparse.spmatrix

# Entries of X up to 2**100 in magnitude (and down to 2**-100) keep X^T X, losses
# and squared singular values far from overflow and underflow; outside, X is
# divided by a power of four first.
_SAFE_EXPONENT = 100
# The smallest positive float whose reciprocal is finite (about 5.6e-309).
_SMALLEST_INVERTIBLE = float(np.nextafter(1.0 / np.finfo(np.float64).max, 1.0))


# ---------------------------------------------------------------------------
# Input checks: all through cosine_book._validation
# ---------------------------------------------------------------------------


def _check_matrix(X: Any, what: str = "X") -> NDArray[np.float64] | scipy.sparse.csr_array:
    """``X`` as a finite 2-D float64 array or canonical float64 CSR array (sparse allowed)."""
    matrix = as_real_matrix(X, what, allow_sparse=True)
    if scipy.sparse.issparse(matrix) and not matrix.has_canonical_format:
        matrix = matrix.copy()  # never reorder the caller's arrays
        matrix.sum_duplicates()
    return matrix


def _check_lam(lam: Any, name: str = "lam") -> float:
    """A positive finite regularisation strength."""
    return as_float_scalar(lam, name, positive=True)


def _check_k(k: Any, n_items: int, name: str = "k") -> int:
    """An integer embedding dimension in ``[1, n_items]``."""
    return as_int_scalar(k, name, minimum=1, maximum=n_items)


def _check_objective(objective: Any) -> int:
    objective = as_int_scalar(objective, "objective")
    if objective not in (1, 2):
        raise ValueError(f"objective must be 1 or 2; got {objective}")
    return objective


def _check_seed(seed: Any) -> int:
    return as_int_scalar(seed, "seed", minimum=0)


def _check_factors(
    A: Any, B: Any, n_items: int | None = None
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    A = as_real_matrix(A, "A")
    B = as_real_matrix(B, "B")
    if A.shape != B.shape:
        raise ValueError(
            f"A has shape {A.shape} and B has shape {B.shape}; "
            "expected two matrices of the same shape (n_items, k)"
        )
    if n_items is not None and A.shape[0] != n_items:
        raise ValueError(
            f"A and B have {A.shape[0]} rows but X has {n_items} columns (items); "
            "expected one row per item"
        )
    return A, B


def _as_spectrum(X: Any) -> Spectrum:
    """A :class:`Spectrum` as given (after checking it), or the spectrum of a checked ``X``."""
    if not isinstance(X, Spectrum):
        return _spectrum(_check_matrix(X))
    singular_values = as_real_array(X.singular_values, "spectrum.singular_values", ndim=1).astype(
        np.float64, copy=False
    )
    vectors = as_real_matrix(X.vectors, "spectrum.vectors")
    if vectors.shape[1] != singular_values.size or singular_values.size > vectors.shape[0]:
        raise ValueError(
            f"spectrum has {singular_values.size} singular values and vectors of shape "
            f"{vectors.shape}; expected vectors of shape (n_items, {singular_values.size})"
        )
    if np.any(singular_values < 0):
        raise ValueError("spectrum.singular_values has negative entries; expected sigma >= 0")
    return Spectrum(singular_values, vectors)


# ---------------------------------------------------------------------------
# Scaling by powers of two (exact)
# ---------------------------------------------------------------------------


def _max_abs(X: NDArray[np.float64] | scipy.sparse.csr_array) -> float:
    """Largest absolute entry (0 for an all-zero matrix), without an ``abs`` copy."""
    data = X.data if scipy.sparse.issparse(X) else X
    if data.size == 0:
        return 0.0
    return float(max(np.max(data), -np.min(data)))


def _scale_exponent(max_abs: float) -> int:
    """Even ``e`` such that ``max_abs / 2**e`` is of order one; 0 inside the safe range."""
    if max_abs == 0.0 or 2.0**-_SAFE_EXPONENT <= max_abs <= 2.0**_SAFE_EXPONENT:
        return 0
    return 2 * (math.frexp(max_abs)[1] // 2)


def _scaled(X: Any, exponent: int) -> Any:
    """``X / 2**exponent``, exactly (a new array unless ``exponent == 0``)."""
    if exponent == 0:
        return X
    if scipy.sparse.issparse(X):
        scaled = X.copy()
        scaled.data = np.ldexp(scaled.data, -exponent)
        return scaled
    return np.ldexp(X, -exponent)


def _ldexp_scalar(value: float, exponent: int) -> float:
    """``value * 2**exponent``, saturating to 0 or inf instead of raising."""
    with np.errstate(over="ignore", under="ignore"):
        return float(np.ldexp(value, exponent))


# ---------------------------------------------------------------------------
# Spectrum of X from its Gram matrix
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Spectrum:
    r"""Singular values and right singular vectors of a matrix :math:`X`.

    Attributes
    ----------
    singular_values : ndarray of shape (p,)
        :math:`\sigma_1 \ge \sigma_2 \ge \dots \ge 0`.
    vectors : ndarray of shape (p, p)
        Right singular vectors as columns, each with its largest-magnitude entry
        positive.
    """

    singular_values: NDArray[np.float64]
    vectors: NDArray[np.float64]


def _gram(X: NDArray[np.float64] | scipy.sparse.csr_array) -> NDArray[np.float64]:
    """``X^T X`` of a checked matrix, as it is (no scaling)."""
    if scipy.sparse.issparse(X):
        return np.asarray((X.T @ X).toarray(), dtype=np.float64)
    # X.T @ X on the same buffer lets NumPy call the symmetric BLAS kernel.
    return X.T @ X


def _scaled_gram(
    X: NDArray[np.float64] | scipy.sparse.csr_array,
) -> tuple[NDArray[np.float64], int]:
    """``(X^T X / 4**e, e)`` with ``e`` from :func:`_scale_exponent` (0 in the safe range)."""
    exponent = _scale_exponent(_max_abs(X))
    return _gram(_scaled(X, exponent)), exponent


def _gram_in_units(X: NDArray[np.float64] | scipy.sparse.csr_array) -> NDArray[np.float64]:
    """``X^T X`` in the units of ``X``, or a clear error if it is not representable."""
    G, exponent = _scaled_gram(X)
    if exponent == 0:
        return G
    largest = float(np.max(np.diagonal(G)))  # a Gram matrix peaks on its diagonal
    if not math.isfinite(_ldexp_scalar(largest, 2 * exponent)):
        raise ValueError(
            f"X^T X overflows float64: X has entries up to {_max_abs(X):.3g}, so X^T X "
            f"has entries near {largest:.3g} * 2**{2 * exponent}; divide X by a constant "
            "(gram_spectrum, the fit functions and the cosines handle any scale)"
        )
    with np.errstate(under="ignore"):
        return np.ldexp(G, 2 * exponent)


def gram(X: Matrix) -> NDArray[np.float64]:
    r"""Return the item Gram matrix :math:`X^\top X` as a dense float64 array.

    Parameters
    ----------
    X : array_like or scipy.sparse matrix of shape (n_users, n_items)
        Finite real numbers.

    Returns
    -------
    ndarray of shape (n_items, n_items)

    Raises
    ------
    ValueError
        For input that is not a finite real matrix (see
        ``cosine_book._validation.as_real_matrix``), and when :math:`X^\top X`
        overflows float64 (entries of ``X`` beyond about ``1e154``). Tiny entries
        are fine: :math:`X^\top X` is formed in scaled units and products below the
        float64 range round to zero.

    Examples
    --------
    >>> gram([[1, 0], [1, 1]])
    array([[2., 1.],
           [1., 1.]])
    """
    return _gram_in_units(_check_matrix(X))


def _spectrum_from_gram(G: NDArray[np.float64]) -> Spectrum:
    """Descending, sign-fixed spectrum of a Gram matrix (see the module notes)."""
    eigenvalues, vectors = np.linalg.eigh(G)
    # Descending; equal eigenvalues keep LAPACK's order reversed (a stable sort).
    order = np.argsort(eigenvalues, kind="stable")[::-1]
    eigenvalues, vectors = eigenvalues[order], vectors[:, order]
    # Rounding can leave eigenvalues of a PSD matrix slightly negative.
    singular_values = np.sqrt(np.clip(eigenvalues, 0.0, None))
    # Fix the sign of each eigenvector: largest-magnitude entry positive (the
    # first such entry if several tie, as argmax returns the lowest index).
    pivots = np.argmax(np.abs(vectors), axis=0)
    signs = np.sign(vectors[pivots, np.arange(vectors.shape[1])])
    signs[signs == 0] = 1.0
    return Spectrum(singular_values, np.ascontiguousarray(vectors * signs))


def _spectrum_from_scaled_gram(G: NDArray[np.float64], exponent: int) -> Spectrum:
    """Spectrum of ``X`` from ``X^T X / 4**exponent`` (singular values scaled back)."""
    spectrum = _spectrum_from_gram(G)
    if exponent == 0:
        return spectrum
    with np.errstate(over="ignore", under="ignore"):
        singular_values = np.ldexp(spectrum.singular_values, exponent)
    if not math.isfinite(float(singular_values[0])):  # descending: the first is the largest
        raise ValueError(
            "the largest singular value of X exceeds the float64 range (about 1.8e308); "
            "divide X by a constant (and lam accordingly)"
        )
    return Spectrum(singular_values, spectrum.vectors)


def _spectrum(X: NDArray[np.float64] | scipy.sparse.csr_array) -> Spectrum:
    return _spectrum_from_scaled_gram(*_scaled_gram(X))


def gram_spectrum(X: Matrix) -> Spectrum:
    r"""Singular values and right singular vectors of ``X`` from its Gram matrix :math:`X^\top X`.

    Works at any scale of ``X`` (see the module notes): entries near ``1e200``
    or ``1e-170`` give the singular values in the units of ``X``.

    Parameters
    ----------
    X : array_like or scipy.sparse matrix of shape (n_users, n_items)

    Returns
    -------
    Spectrum
        Descending singular values and sign-fixed right singular vectors.

    Examples
    --------
    >>> spectrum = gram_spectrum([[3.0, 0.0], [0.0, 2.0], [0.0, 0.0]])
    >>> spectrum.singular_values.round(4).tolist()
    [3.0, 2.0]
    >>> spectrum.vectors.round(4).tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    >>> gram_spectrum([[3e200, 0.0], [0.0, 2e200]]).singular_values.tolist()
    [3e+200, 2e+200]
    """
    return _spectrum(_check_matrix(X))


def _shrinkage(singular_values: NDArray[np.float64], lam: float) -> NDArray[np.float64]:
    """``sigma^2 / (sigma^2 + lam)`` (0 where ``sigma = 0``), at any scale of ``sigma``."""
    exponent = _scale_exponent(float(np.max(singular_values, initial=0.0)))
    if exponent:
        # The same ratio in units where the largest sigma is of order one; lam may
        # round to 0 (it is negligible) or inf (it dominates): both give the limit.
        singular_values = np.ldexp(singular_values, -exponent)
        lam = _ldexp_scalar(lam, -2 * exponent)
    squares = singular_values**2
    with np.errstate(invalid="ignore"):
        return np.divide(squares, squares + lam, out=np.zeros_like(squares), where=squares > 0)


def dropout_shrinkage(singular_values: ArrayLike, lam: float) -> NDArray[np.float64]:
    r"""Shrinkage factors :math:`f_i = 1 / (1 + \lambda / \sigma_i^2)` of objective 1.

    Here :math:`\lambda` is ``lam``, and :math:`f_i = 0` where :math:`\sigma_i = 0`.

    Parameters
    ----------
    singular_values : array_like of shape (k,)
        Nonnegative, finite; any scale (``1e200`` works).
    lam : float
        Regularisation strength, positive.

    Returns
    -------
    ndarray of shape (k,)

    Examples
    --------
    >>> dropout_shrinkage([10.0, 1.0, 0.0], lam=1.0).round(4).tolist()
    [0.9901, 0.5, 0.0]

    Any scale works (here :math:`\sigma_1^2 = 10^{400}`):

    >>> dropout_shrinkage([1e200, 0.0], lam=1e300).tolist()
    [1.0, 0.0]
    """
    lam = _check_lam(lam)
    sigma = as_real_array(singular_values, "singular_values", ndim=1).astype(np.float64, copy=False)
    if np.any(sigma < 0):
        raise ValueError(
            f"singular_values has a negative entry (first at index "
            f"{int(np.argmax(sigma < 0))}); expected sigma >= 0"
        )
    return _shrinkage(sigma, lam)


# ---------------------------------------------------------------------------
# Closed forms
# ---------------------------------------------------------------------------


def _objective1(
    spectrum: Spectrum, lam: float, k: int
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    shrink = _shrinkage(spectrum.singular_values[:k], lam)
    A = spectrum.vectors[:, :k] * np.sqrt(shrink)
    return A, A.copy()


def _objective2(
    spectrum: Spectrum, lam: float, k: int
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    # No squares: sigma - lam, its root and the ratio stay in range at any scale.
    sigma = spectrum.singular_values[:k]
    kept = np.sqrt(np.clip(sigma - lam, 0.0, None))
    scale_a = np.divide(kept, sigma, out=np.zeros_like(kept), where=sigma > 0)
    V = spectrum.vectors[:, :k]
    return V * scale_a, V * kept


def fit_objective1(
    X: Matrix | Spectrum, lam: float, k: int | None = None
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    r"""Fit objective 1 in closed form: the symmetric minimiser with ``k`` columns.

    Objective 1, with :math:`\lambda` = ``lam``, is

    .. math::

        \min_{A, B}\; \|X - XAB^\top\|_F^2 + \lambda \|AB^\top\|_F^2.

    Returns the symmetric solution
    :math:`A = B = V_k \, \mathrm{diag}\bigl(1 / (1 + \lambda / \sigma_i^2)\bigr)^{1/2}`.
    Every ``rescale(A, B, d)`` with nonzero ``d`` is optimal too.

    Parameters
    ----------
    X : array_like, scipy.sparse matrix or Spectrum
        The ``(n_users, n_items)`` data (finite, real, any scale), or its
        precomputed :class:`Spectrum`.
    lam : float
        Regularisation strength, positive (in the units of :math:`\sigma_i^2`).
    k : int, optional
        Embedding dimension, ``1 <= k <= n_items``; default ``n_items`` (full rank).

    Returns
    -------
    A, B : ndarray of shape (n_items, k)

    Examples
    --------
    >>> X = np.array([[1.0, 1.0, 0.0], [0.0, 1.0, 1.0], [1.0, 0.0, 0.0]])
    >>> A, B = fit_objective1(X, lam=0.5, k=2)
    >>> A.shape, bool(np.allclose(A, B))
    ((3, 2), True)
    >>> gradients = objective1_gradient(X, A, B, lam=0.5)
    >>> bool(max(np.abs(g).max() for g in gradients) < 1e-12)
    True

    ``X`` and ``lam`` in other units give the same factors:

    >>> A_big, _ = fit_objective1(1e100 * X, lam=0.5e200, k=2)
    >>> bool(np.allclose(A_big, A, atol=1e-15))
    True
    """
    lam = _check_lam(lam)
    spectrum = _as_spectrum(X)
    n_values = spectrum.singular_values.size
    k = n_values if k is None else _check_k(k, n_values)
    return _objective1(spectrum, lam, k)


def fit_objective2(
    X: Matrix | Spectrum, lam: float, k: int
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    r"""Fit objective 2 in closed form (unique up to a rotation of the embeddings).

    Objective 2, with :math:`\lambda` = ``lam``, is

    .. math::

        \min_{A, B}\; \|X - XAB^\top\|_F^2
        + \lambda \bigl(\|XA\|_F^2 + \|B\|_F^2\bigr).

    The solution is

    .. math::

        A = V_k \, \mathrm{diag}\bigl(\sqrt{(\sigma_i - \lambda)_+} / \sigma_i\bigr),
        \quad B = V_k \, \mathrm{diag}\bigl(\sqrt{(\sigma_i - \lambda)_+}\bigr):

    the predictions :math:`XAB^\top` are :math:`X` with its singular values
    soft-thresholded by :math:`\lambda`. It is unique up to a rotation of the
    embedding space (when the top :math:`k + 1` singular values are distinct),
    so cosine similarities are unique.

    Parameters
    ----------
    X : array_like, scipy.sparse matrix or Spectrum
        The ``(n_users, n_items)`` data (finite, real, any scale), or its
        precomputed :class:`Spectrum`.
    lam : float
        Regularisation strength, positive. Compare with :math:`\sigma_i`, not
        :math:`\sigma_i^2`.
    k : int
        Embedding dimension, ``1 <= k <= n_items``.

    Returns
    -------
    A, B : ndarray of shape (n_items, k)
        Columns with :math:`\sigma_i \le \lambda` are zero.

    Examples
    --------
    >>> X = np.diag([5.0, 2.0, 1.0])
    >>> A, B = fit_objective2(X, lam=1.5, k=3)
    >>> np.diag(X @ A @ B.T).round(4).tolist()  # (sigma_i - lam)_+
    [3.5, 0.5, 0.0]
    """
    lam = _check_lam(lam)
    spectrum = _as_spectrum(X)
    k = _check_k(k, spectrum.singular_values.size)
    return _objective2(spectrum, lam, k)


def _rescale(
    A: NDArray[np.float64], B: NDArray[np.float64], d: NDArray[np.float64]
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    with np.errstate(over="ignore", under="ignore"):
        A_D, B_D = A * d, B / d
    for name, result in (("A diag(d)", A_D), ("B diag(1/d)", B_D)):
        if not math.isfinite(_max_abs(result)):
            raise ValueError(
                f"{name} overflows float64 (A has entries up to {_max_abs(A):.3g}, "
                f"B up to {_max_abs(B):.3g}, |d| from {float(np.min(np.abs(d))):.3g} to "
                f"{float(np.max(np.abs(d))):.3g}); expected scales that keep both finite"
            )
    return A_D, B_D


def rescale(
    A: ArrayLike, B: ArrayLike, d: ArrayLike
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    r"""Rescale the latent dimensions: return :math:`(AD, BD^{-1})`, :math:`D = \mathrm{diag}(d)`.

    The product :math:`AB^\top`, hence every prediction :math:`XAB^\top`, is
    unchanged.

    Parameters
    ----------
    A, B : array_like of shape (n_items, k)
        Finite real matrices of the same shape.
    d : array_like of shape (k,)
        Diagonal of :math:`D`: finite, nonzero, and with a finite reciprocal
        (:math:`|d_i| \ge 5.6 \cdot 10^{-309}`).

    Returns
    -------
    A_D, B_D : ndarray of shape (n_items, k)

    Raises
    ------
    ValueError
        For non-finite, complex, masked, sparse or mismatched factors, a ``d`` of
        the wrong shape, a zero or too small ``d_i``, or a result that overflows.

    Examples
    --------
    >>> A = np.array([[1.0, 2.0], [3.0, 4.0]])
    >>> A_D, B_D = rescale(A, A, [2.0, 0.5])
    >>> A_D.tolist(), B_D.tolist()
    ([[2.0, 1.0], [6.0, 2.0]], [[0.5, 4.0], [1.5, 8.0]])
    >>> bool(np.allclose(A_D @ B_D.T, A @ A.T))
    True
    >>> rescale(A, A, [1.0, 1e-310])
    Traceback (most recent call last):
    ...
    ValueError: d[1] = 1e-310 has no finite reciprocal; ...
    """
    A, B = _check_factors(A, B)
    d = as_real_array(d, "d", ndim=1).astype(np.float64, copy=False)
    if d.shape != (A.shape[1],):
        raise ValueError(
            f"d has shape {d.shape}; expected one scale per latent dimension, shape ({A.shape[1]},)"
        )
    small = np.abs(d) < _SMALLEST_INVERTIBLE
    if small.any():
        index = int(np.argmax(small))
        if d[index] == 0:
            raise ValueError(
                f"d has a zero at index {index}; expected nonzero scales (D must be invertible)"
            )
        raise ValueError(
            f"d[{index}] = {d[index]:.3g} has no finite reciprocal; expected |d_i| >= "
            f"{_SMALLEST_INVERTIBLE:.3g} (D must be invertible in float64)"
        )
    return _rescale(A, B, d)


# ---------------------------------------------------------------------------
# Losses and gradients (for checking the closed forms)
# ---------------------------------------------------------------------------


def _overflow_error(what: str, X: Any, A: NDArray[Any], B: NDArray[Any]) -> ValueError:
    return ValueError(
        f"{what} overflows float64 (X has entries up to {_max_abs(X):.3g}, A up to "
        f"{_max_abs(A):.3g}, B up to {_max_abs(B):.3g}); divide X by a constant "
        "(and lam accordingly) to evaluate it"
    )


def _residual_parts(
    X: NDArray[np.float64] | scipy.sparse.csr_array,
    A: NDArray[np.float64],
    B: NDArray[np.float64],
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    XA = np.asarray(X @ A)
    dense = X.toarray() if scipy.sparse.issparse(X) else X
    return XA, dense - XA @ B.T


def _loss(
    X: NDArray[np.float64] | scipy.sparse.csr_array,
    A: NDArray[np.float64],
    B: NDArray[np.float64],
    lam: float,
    objective: int,
) -> float:
    """Either loss, for checked input; a clear error if it overflows."""
    with np.errstate(over="ignore", invalid="ignore"):
        XA, residual = _residual_parts(X, A, B)
        if objective == 1:
            value = float(np.sum(residual**2) + lam * np.sum((A @ B.T) ** 2))
        else:
            value = float(np.sum(residual**2) + lam * (np.sum(XA**2) + np.sum(B**2)))
    if not math.isfinite(value):
        raise _overflow_error(f"the objective {objective} loss", X, A, B)
    return value


def _gradient(
    G: NDArray[np.float64],
    A: NDArray[np.float64],
    B: NDArray[np.float64],
    lam: float,
    objective: int,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Either gradient from the Gram matrix ``G = X^T X``, for checked input."""
    W = A @ B.T
    if objective == 1:
        grad_W = 2.0 * (G @ W - G + lam * W)
        return grad_W @ B, grad_W.T @ A
    grad_A = 2.0 * ((G @ W - G) @ B + lam * G @ A)
    grad_B = 2.0 * ((W.T @ G - G) @ A + lam * B)
    return grad_A, grad_B


def _checked_loss(X: Any, A: Any, B: Any, lam: Any, objective: int) -> float:
    lam = _check_lam(lam)
    X = _check_matrix(X)
    A, B = _check_factors(A, B, X.shape[1])
    return _loss(X, A, B, lam, objective)


def _checked_gradient(
    X: Any, A: Any, B: Any, lam: Any, objective: int
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    lam = _check_lam(lam)
    X = _check_matrix(X)
    A, B = _check_factors(A, B, X.shape[1])
    G = _gram_in_units(X)
    with np.errstate(over="ignore", invalid="ignore"):
        gradients = _gradient(G, A, B, lam, objective)
    if not all(math.isfinite(_max_abs(g)) for g in gradients):
        raise _overflow_error(f"the objective {objective} gradient", X, A, B)
    return gradients


def objective1_loss(X: Matrix, A: ArrayLike, B: ArrayLike, lam: float) -> float:
    r"""Value of :math:`\|X - XAB^\top\|_F^2 + \lambda \|AB^\top\|_F^2` (:math:`\lambda` = ``lam``).

    Raises ``ValueError`` for bad input and when the value overflows float64.

    Examples
    --------
    >>> X = np.eye(2)
    >>> round(objective1_loss(X, 0.5 * np.eye(2), np.eye(2), lam=1.0), 4)
    1.0
    """
    return _checked_loss(X, A, B, lam, 1)


def objective2_loss(X: Matrix, A: ArrayLike, B: ArrayLike, lam: float) -> float:
    r"""Value of :math:`\|X - XAB^\top\|_F^2 + \lambda (\|XA\|_F^2 + \|B\|_F^2)`.

    Here :math:`\lambda` is ``lam``.

    Raises ``ValueError`` for bad input and when the value overflows float64.

    Examples
    --------
    >>> X = np.eye(2)
    >>> round(objective2_loss(X, 0.5 * np.eye(2), np.eye(2), lam=1.0), 4)
    3.0
    """
    return _checked_loss(X, A, B, lam, 2)


def objective1_gradient(
    X: Matrix, A: ArrayLike, B: ArrayLike, lam: float
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    r"""Gradient :math:`(\partial L / \partial A, \partial L / \partial B)` of objective 1.

    With :math:`G = X^\top X` and :math:`W = AB^\top`,

    .. math::

        \frac{\partial L}{\partial W} = 2 (GW - G + \lambda W), \quad
        \frac{\partial L}{\partial A} = \frac{\partial L}{\partial W} B, \quad
        \frac{\partial L}{\partial B} = \Bigl(\frac{\partial L}{\partial W}\Bigr)^{\!\top} A.

    Examples
    --------
    >>> X = np.eye(2)
    >>> A, B = fit_objective1(X, lam=1.0)
    >>> gradients = objective1_gradient(X, A, B, lam=1.0)
    >>> [float(np.abs(g).max().round(8)) for g in gradients]
    [0.0, 0.0]
    """
    return _checked_gradient(X, A, B, lam, 1)


def objective2_gradient(
    X: Matrix, A: ArrayLike, B: ArrayLike, lam: float
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    r"""Gradient :math:`(\partial L / \partial A, \partial L / \partial B)` of objective 2.

    Examples
    --------
    >>> X = np.diag([3.0, 2.0])
    >>> A, B = fit_objective2(X, lam=1.0, k=2)
    >>> gradients = objective2_gradient(X, A, B, lam=1.0)
    >>> [float(np.abs(g).max().round(8)) for g in gradients]
    [0.0, 0.0]
    """
    return _checked_gradient(X, A, B, lam, 2)


def _lam_in_units(lam: float, exponent: int, objective: int, X: Any) -> float:
    """``lam`` in the units of ``X / 2**exponent`` (objective 1: over ``4**exponent``)."""
    if exponent == 0:
        return lam
    scaled = _ldexp_scalar(lam, -2 * exponent if objective == 1 else -exponent)
    if scaled == 0.0 or not math.isfinite(scaled):
        unit = "sigma^2" if objective == 1 else "sigma"
        raise ValueError(
            f"lam = {lam:.3g} is out of proportion to X (entries up to {_max_abs(X):.3g}): "
            f"it rounds to {scaled:g} relative to X's scale; expected lam on the scale of "
            f"{unit} (objective {objective})"
        )
    return scaled


def _alternating(
    X: NDArray[np.float64] | scipy.sparse.csr_array,
    lam: float,
    k: int,
    objective: int,
    n_iter: int,
    seed: int,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    # Work with X / 2**e (e = 0 inside the safe range, so usually X itself).
    G, exponent = _scaled_gram(X)
    lam = _lam_in_units(lam, exponent, objective, X)
    n_items = G.shape[0]
    rng = np.random.default_rng(seed)
    A = standard_normal(rng, (n_items, k)) / np.sqrt(n_items)
    B = standard_normal(rng, (n_items, k)) / np.sqrt(n_items)
    eye_k = np.eye(k)
    # (G + lam I)^-1 G, once: the A-step of objective 1 multiplies by it.
    ridge = np.linalg.solve(G + lam * np.eye(n_items), G) if objective == 1 else G
    for _ in range(n_iter):
        if objective == 1:
            # dL/dA = 0  <=>  (G + lam I) A (B^T B) = G B
            A = ridge @ B @ np.linalg.pinv(B.T @ B)
            # dL/dB = 0  <=>  B (A^T (G + lam I) A) = G A
            GA = G @ A
            B = GA @ np.linalg.pinv(A.T @ GA + lam * (A.T @ A))
        else:
            # dL/dA = 0  <=>  G (A (B^T B + lam I) - B) = 0
            A = B @ np.linalg.inv(B.T @ B + lam * eye_k)
            # dL/dB = 0  <=>  B (A^T G A + lam I) = G A
            B = G @ A @ np.linalg.inv(A.T @ G @ A + lam * eye_k)
    if exponent and objective == 2:
        # Objective 2 on X / s gives A sqrt(s) and B / sqrt(s) (s = 2**e, e even).
        A, B = np.ldexp(A, -exponent // 2), np.ldexp(B, exponent // 2)
    return A, B


def fit_alternating(
    X: Matrix,
    lam: float,
    k: int,
    objective: Literal[1, 2] = 1,
    *,
    n_iter: int = 500,
    seed: int = 0,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Fit either objective by alternating exact least squares from a random start.

    An iterative check on the closed forms: each step minimises the loss over
    ``A`` with ``B`` fixed, then over ``B`` with ``A`` fixed, so the loss never
    increases.

    Parameters
    ----------
    X : array_like or scipy.sparse matrix of shape (n_users, n_items)
    lam : float
        Regularisation strength, positive.
    k : int
        Embedding dimension.
    objective : {1, 2}
    n_iter : int
        Number of alternating sweeps, at least 1.
    seed : int
        Seed of the random start (nonnegative).

    Returns
    -------
    A, B : ndarray of shape (n_items, k)

    Examples
    --------
    >>> X = np.random.default_rng(0).random((30, 5))
    >>> A, B = fit_alternating(X, lam=0.5, k=2, n_iter=300)
    >>> A1, B1 = fit_objective1(X, lam=0.5, k=2)
    >>> bool(np.allclose(A @ B.T, A1 @ B1.T, atol=1e-8))
    True
    """
    objective = _check_objective(objective)
    lam = _check_lam(lam)
    X = _check_matrix(X)
    k = _check_k(k, X.shape[1])
    n_iter = as_int_scalar(n_iter, "n_iter", minimum=1)
    seed = _check_seed(seed)
    return _alternating(X, lam, k, objective, n_iter, seed)


@dataclass(frozen=True)
class ClosedFormCheck:
    r"""Evidence that a closed form minimises its objective (see :func:`closed_form_check`).

    Attributes
    ----------
    gradient : float
        Largest absolute gradient entry at the closed form, divided by
        :math:`\|X\|_F^2`.
    loss_rise : float
        Smallest loss increase over the random perturbations, divided by
        :math:`\|X\|_F^2` (positive if no perturbation lowered the loss).
    iterative_gap : float
        :math:`\max |AB^\top - A_\mathrm{iter} B_\mathrm{iter}^\top|`, with
        :math:`(A_\mathrm{iter}, B_\mathrm{iter})` from :func:`fit_alternating`
        (a random start).
    """

    gradient: float
    loss_rise: float
    iterative_gap: float


def _fit_closed_form(
    X: NDArray[np.float64] | scipy.sparse.csr_array, lam: float, k: int, objective: int
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The closed form of either objective, for checked input."""
    spectrum = _spectrum(X)
    return _objective1(spectrum, lam, k) if objective == 1 else _objective2(spectrum, lam, k)


def closed_form_check(
    X: Matrix,
    lam: float,
    k: int,
    objective: Literal[1, 2] = 1,
    *,
    n_perturbations: int = 30,
    sizes: tuple[float, ...] = (1e-4, 1e-2, 1.0),
    n_iter: int = 300,
    seed: int = 0,
) -> ClosedFormCheck:
    """Check a closed form three ways: zero gradient, no better perturbation, same as iterating.

    If the largest entry of ``X`` lies outside ``[2**-100, 2**100]``, the check
    runs on ``X`` divided by a power of four and ``lam`` in the same units (the
    same problem; the reported ratios are then those of the rescaled problem).

    Parameters
    ----------
    X : array_like or scipy.sparse matrix of shape (n_users, n_items)
        Not all zero.
    lam : float
    k : int
    objective : {1, 2}
    n_perturbations : int
        Random Gaussian perturbations of ``(A, B)`` per size, at least 1.
    sizes : tuple of float
        Standard deviations of the perturbations, positive.
    n_iter : int
        Sweeps of :func:`fit_alternating`.
    seed : int

    Returns
    -------
    ClosedFormCheck

    Examples
    --------
    >>> X = np.random.default_rng(0).random((30, 5))
    >>> check = closed_form_check(
    ...     X, lam=0.5, k=2, objective=2, n_perturbations=5
    ... )
    >>> bool(check.gradient < 1e-12 and check.loss_rise > 0)
    True
    >>> bool(check.iterative_gap < 1e-8)
    True
    """
    objective = _check_objective(objective)
    lam = _check_lam(lam)
    X = _check_matrix(X)
    k = _check_k(k, X.shape[1])
    n_perturbations = as_int_scalar(n_perturbations, "n_perturbations", minimum=1)
    sizes_array = as_real_array(sizes, "sizes", ndim=1).astype(np.float64, copy=False)
    if np.any(sizes_array <= 0):
        raise ValueError(f"sizes must be positive; got {sizes_array.tolist()}")
    n_iter = as_int_scalar(n_iter, "n_iter", minimum=1)
    seed = _check_seed(seed)
    exponent = _scale_exponent(_max_abs(X))
    lam = _lam_in_units(lam, exponent, objective, X)
    X = _scaled(X, exponent)
    data = X.data if scipy.sparse.issparse(X) else X
    scale = float(np.sum(data * data))
    if scale == 0.0:
        raise ValueError("X is all zeros; expected some nonzero entries (the check divides by it)")
    A, B = _fit_closed_form(X, lam, k, objective)
    best = _loss(X, A, B, lam, objective)
    rng = np.random.default_rng(seed)
    rises = [
        _loss(
            X,
            A + size * standard_normal(rng, A.shape),
            B + size * standard_normal(rng, B.shape),
            lam,
            objective,
        )
        - best
        for size in sizes_array
        for _ in range(n_perturbations)
    ]
    A_iter, B_iter = _alternating(X, lam, k, objective, n_iter, seed + 1)
    gradients = _gradient(_gram(X), A, B, lam, objective)
    return ClosedFormCheck(
        gradient=max(float(np.abs(g).max()) for g in gradients) / scale,
        loss_rise=min(rises) / scale,
        iterative_gap=float(np.abs(A_iter @ B_iter.T - A @ B.T).max()),
    )


# ---------------------------------------------------------------------------
# Cosine matrices
# ---------------------------------------------------------------------------


def _unit_rows(E: NDArray[np.float64], what: str) -> NDArray[np.float64]:
    """Rows of a checked matrix divided by their Euclidean norms, at any scale."""
    peak = np.max(np.abs(E), axis=1)
    zero = np.flatnonzero(peak == 0)
    if zero.size:
        raise ValueError(
            f"{what} has {zero.size} zero row(s) (first: row {zero[0]}); "
            "the cosine of a zero vector is undefined"
        )
    # Divide each row by a power of two near its largest entry (exact), so that
    # its sum of squares lies in [0.25, k] instead of overflowing or underflowing.
    scaled = np.ldexp(E, -np.frexp(peak)[1][:, None])
    norms = np.sqrt(np.sum(scaled * scaled, axis=1))  # pairwise sums, fixed order
    return scaled / norms[:, None]


def _mirror_upper(S: NDArray[np.float64]) -> NDArray[np.float64]:
    """Copy the upper triangle of a square matrix onto the lower one (exact symmetry)."""
    np.copyto(S, S.T, where=np.tri(S.shape[0], k=-1, dtype=bool))
    return S


def _self_cosines(unit: NDArray[np.float64]) -> NDArray[np.float64]:
    """Cosine matrix of unit rows: symmetric bit for bit, unit diagonal, entries in [-1, 1]."""
    S = _mirror_upper(unit @ unit.T)
    np.fill_diagonal(S, 1.0)
    return np.clip(S, -1.0, 1.0, out=S)


def cosine_matrix(E: ArrayLike, F: ArrayLike | None = None) -> NDArray[np.float64]:
    r"""Cosine similarities between the rows of ``E`` (and those of ``F`` if given).

    The matrix :math:`\Omega_E E F^\top \Omega_F`, where the diagonal matrices
    :math:`\Omega_E` and :math:`\Omega_F` scale each row of :math:`E` and
    :math:`F` to unit length.
    Each row is first divided by a power of two near its largest entry, so rows
    near ``1e200`` or ``1e-170`` (or subnormal) give the same cosines as rows
    near 1. Without ``F`` the result is symmetric bit for bit with diagonal
    exactly 1; every entry lies in ``[-1, 1]``.

    Parameters
    ----------
    E : array_like of shape (m, k)
        Finite real numbers (dense; complex, masked and sparse input is refused).
    F : array_like of shape (m2, k), optional
        Defaults to ``E`` (a symmetric matrix with unit diagonal).

    Returns
    -------
    ndarray of shape (m, m2)

    Raises
    ------
    ValueError
        If a row is zero (its cosine is undefined), the widths differ, or the
        input is not a finite real matrix.

    Examples
    --------
    >>> cosine_matrix([[1.0, 0.0], [1.0, 1.0]]).round(4).tolist()
    [[1.0, 0.7071], [0.7071, 1.0]]
    >>> cosine_matrix([[1e200, 0.0], [1e-170, 1e-170]]).round(4).tolist()
    [[1.0, 0.7071], [0.7071, 1.0]]
    """
    E = as_real_matrix(E, "E")
    if F is None:
        return _self_cosines(_unit_rows(E, "E"))
    F = as_real_matrix(F, "F")
    if F.shape[1] != E.shape[1]:
        raise ValueError(
            f"E has rows of length {E.shape[1]} and F of length {F.shape[1]}; "
            "expected equal lengths"
        )
    return np.clip(_unit_rows(E, "E") @ _unit_rows(F, "F").T, -1.0, 1.0)


def _gram_cosines(G: NDArray[np.float64], what: str) -> NDArray[np.float64]:
    """Cosines ``G_ij / sqrt(G_ii G_jj)`` from a Gram matrix; exactly symmetric, unit diagonal."""
    diagonal = np.diagonal(G)
    zero = np.flatnonzero(diagonal <= 0)
    if zero.size:
        raise ValueError(
            f"{zero.size} item(s) have all-zero {what} (first: item {zero[0]}); "
            "their cosine is undefined"
        )
    scale = np.sqrt(diagonal)
    cos = _mirror_upper(G / np.multiply.outer(scale, scale))
    np.fill_diagonal(cos, 1.0)
    return np.clip(cos, -1.0, 1.0, out=cos)


def _column_peaks(X: NDArray[np.float64] | scipy.sparse.csr_array) -> NDArray[np.float64]:
    """Largest absolute entry of each column, without an ``abs`` copy of ``X``."""
    if scipy.sparse.issparse(X):
        high = X.max(axis=0).toarray().reshape(-1)
        low = X.min(axis=0).toarray().reshape(-1)
    else:
        high, low = X.max(axis=0), X.min(axis=0)
    return np.maximum(high, -low)


def _column_cosines(
    X: NDArray[np.float64] | scipy.sparse.csr_array, G: NDArray[np.float64]
) -> NDArray[np.float64]:
    """Cosines between the columns of ``X``, given ``G``, a multiple of ``X^T X``.

    If the columns' magnitudes are so unequal that some column's squares would
    vanish next to the largest, the Gram matrix is recomputed from the columns
    divided by powers of two (which leaves their cosines unchanged).
    """
    peaks = _column_peaks(X)
    nonzero = peaks[peaks > 0]
    if nonzero.size and nonzero.min() < 2.0**-_SAFE_EXPONENT * nonzero.max():
        exponents = np.frexp(peaks)[1]
        if scipy.sparse.issparse(X):
            X = X.copy()
            X.data = np.ldexp(X.data, -exponents[X.indices])
        else:
            X = np.ldexp(X, -exponents[None, :])
        G = _gram(X)
    return _gram_cosines(G, "columns")


def _prediction_cosines(
    A: NDArray[np.float64], B: NDArray[np.float64], G: NDArray[np.float64]
) -> NDArray[np.float64]:
    # Powers of two keep every product in range and leave the cosines unchanged:
    # A and B as wholes, each column of W = A B^T, and G as a whole.
    A = _scaled(A, _scale_exponent(_max_abs(A)))
    B = _scaled(B, _scale_exponent(_max_abs(B)))
    W = A @ B.T
    W = np.ldexp(W, -np.frexp(_column_peaks(W))[1][None, :])
    G = _scaled(G, _scale_exponent(_max_abs(G)))
    return _gram_cosines(W.T @ G @ W, "predictions")


def prediction_item_cosines(
    X: Matrix, A: ArrayLike, B: ArrayLike, *, gram_matrix: ArrayLike | None = None
) -> NDArray[np.float64]:
    r"""Item-item cosines of the columns of the predictions :math:`XAB^\top` (the original space).

    Computed from :math:`W^\top (X^\top X) W` with :math:`W = AB^\top`, so the
    ``(n_users, n_items)`` prediction matrix is never formed. Invariant to any
    rescaling of :math:`(A, B)`.

    Parameters
    ----------
    X : array_like or scipy.sparse matrix of shape (n_users, n_items)
    A, B : array_like of shape (n_items, k)
    gram_matrix : array_like of shape (n_items, n_items), optional
        Precomputed :math:`X^\top X` (or any positive multiple of it).

    Returns
    -------
    ndarray of shape (n_items, n_items)
        Symmetric bit for bit, unit diagonal.

    Examples
    --------
    >>> X = np.array([[1.0, 1.0, 0.0], [0.0, 1.0, 1.0], [1.0, 0.0, 1.0]])
    >>> A, B = fit_objective1(X, lam=0.1)
    >>> prediction_item_cosines(X, A, B).round(3)[0].tolist()
    [1.0, 0.546, 0.546]
    """
    X = _check_matrix(X)
    n_items = X.shape[1]
    A, B = _check_factors(A, B, n_items)
    if gram_matrix is None:
        G, _ = _scaled_gram(X)
    else:
        G = as_real_matrix(gram_matrix, "gram_matrix")
        if G.shape != (n_items, n_items):
            raise ValueError(
                f"gram_matrix has shape {G.shape}; expected X^T X, shape ({n_items}, {n_items})"
            )
    return _prediction_cosines(A, B, G)


def _standardize(X: NDArray[np.float64] | scipy.sparse.csr_array) -> NDArray[np.float64]:
    exponent = _scale_exponent(_max_abs(X))
    dense = X.toarray() if scipy.sparse.issparse(X) else X.copy()
    if exponent:
        np.ldexp(dense, -exponent, out=dense)  # the result is scale-free anyway
    constant = dense.max(axis=0) == dense.min(axis=0)
    dense -= dense.mean(axis=0)
    dense[:, constant] = 0.0  # exactly, whatever the rounding of their mean
    std = dense.std(axis=0)
    dense /= np.where(std > 0, std, 1.0)
    return dense


def _standardized_gram(
    X: NDArray[np.float64] | scipy.sparse.csr_array, G: NDArray[np.float64]
) -> NDArray[np.float64]:
    """``Z^T Z`` of the standardised columns ``Z`` of ``X``, from ``G = X^T X`` (no dense ``Z``).

    With column sums ``s`` and ``n`` rows, the centred Gram matrix is
    ``C = G - s s^T / n`` and ``Z^T Z = n C_ij / sqrt(C_ii C_jj)``; constant
    columns give zero rows and columns, as in :func:`standardize_columns`.
    """
    n_rows = X.shape[0]
    sums = np.asarray(X.sum(axis=0)).reshape(-1)
    if scipy.sparse.issparse(X):
        high = X.max(axis=0).toarray().reshape(-1)
        low = X.min(axis=0).toarray().reshape(-1)
    else:
        high, low = X.max(axis=0), X.min(axis=0)
    centred = G - np.multiply.outer(sums, sums / n_rows)
    varying = (high > low) & (np.diagonal(centred) > 0)
    scale = np.where(varying, 1.0 / np.sqrt(np.where(varying, np.diagonal(centred), 1.0)), 0.0)
    return _mirror_upper(n_rows * centred * np.multiply.outer(scale, scale))


def standardized_gram(X: Matrix) -> NDArray[np.float64]:
    r"""Gram matrix :math:`Z^\top Z` of the standardised columns of ``X`` (no dense ``Z``).

    :math:`Z` is :func:`standardize_columns` of ``X``, rescaled to the Frobenius
    norm of ``X`` (so that a regularisation strength keeps its meaning); the
    dense :math:`Z` is never formed. Its eigenvalues are the squared singular
    values that :func:`item_similarity_suite` fits on.

    Examples
    --------
    >>> X = [[1.0, 0.0], [0.0, 0.0], [1.0, 3.0]]
    >>> Z = standardize_columns(X)
    >>> Z *= np.linalg.norm(X) / np.linalg.norm(Z)
    >>> bool(np.allclose(standardized_gram(X), Z.T @ Z))
    True
    """
    X = _check_matrix(X)
    G, exponent = _scaled_gram(X)
    G_Z = _standardized_gram(_scaled(X, exponent), G)
    trace_Z = float(np.sum(np.diagonal(G_Z)))
    if trace_Z == 0.0:
        raise ValueError("every column of X is constant; expected some varying columns")
    with np.errstate(over="ignore", under="ignore"):
        return np.ldexp(G_Z * (float(np.sum(np.diagonal(G))) / trace_Z), 2 * exponent)


def standardize_columns(X: Matrix) -> NDArray[np.float64]:
    """Centre each column of ``X`` and scale it to unit variance (popularity de-biasing).

    Constant columns are set to exactly zero. Any scale of ``X`` works (the
    result does not depend on it).

    Examples
    --------
    >>> X = [[1.0, 0.0], [0.0, 0.0], [1.0, 3.0]]
    >>> standardize_columns(X).round(3).tolist()
    [[0.707, -0.707], [-1.414, -0.707], [0.707, 1.414]]
    >>> constant_first = [[0.1, 1.0], [0.1, 2.0], [0.1, 3.0]]
    >>> standardize_columns(constant_first)[:, 0].tolist()
    [0.0, 0.0, 0.0]
    """
    return _standardize(_check_matrix(X))


# ---------------------------------------------------------------------------
# Every item-item similarity of chapter 6
# ---------------------------------------------------------------------------


def item_similarity_suite(
    X: Matrix,
    item_clusters: ArrayLike,
    *,
    lam1: float = 1e4,
    lam2: float = 100.0,
    k: int = 50,
) -> dict[str, NDArray[np.float64]]:
    r"""Every item-item similarity compared in chapter 6, for one data set.

    Objective 1 is shown under :math:`D = \mathrm{diag}(f)^\alpha`, with
    :math:`f_i = 1 / (1 + \lambda_1 / \sigma_i^2)` (:math:`\lambda_1` = ``lam1``),
    for :math:`\alpha = 1/2, 0, -1/2`, and under a :math:`D` that stretches only
    the last latent dimension of :math:`B` a hundredfold. The remedies take
    cosines of the columns of the predictions :math:`XAB^\top`, or fit on
    :math:`X` with standardised columns rescaled to the same Frobenius norm as
    :math:`X` (so ``lam1`` and ``lam2`` keep their scale).

    Parameters
    ----------
    X : array_like or scipy.sparse matrix of shape (n_users, n_items)
        Finite real numbers, any scale.
    item_clusters : array_like of shape (n_items,)
    lam1, lam2 : float
        Regularisation of objectives 1 and 2, positive.
    k : int
        Embedding dimension, ``1 <= k <= n_items``.

    Returns
    -------
    dict of str to ndarray of shape (n_items, n_items)

    Raises
    ------
    ValueError
        For bad input, and if objective 1 shrinks one of the top ``k`` latent
        dimensions to zero (``X`` has rank below ``k``, or ``lam1`` dwarfs
        :math:`\sigma_k^2`): :math:`D = \mathrm{diag}(f)^{-1/2}` is then undefined.

    Examples
    --------
    >>> from cosine_book.simulation import make_clustered_interactions
    >>> data = make_clustered_interactions(
    ...     n_users=300, n_items=40, n_clusters=2, min_items=4
    ... )
    >>> suite = item_similarity_suite(
    ...     data.X, data.item_clusters, lam1=10.0, lam2=3.0, k=5
    ... )
    >>> len(suite), suite["ground truth"].shape
    (11, (40, 40))
    """
    X = _check_matrix(X)
    n_items = X.shape[1]
    clusters = _as_clusters(item_clusters, n_items)
    lam1 = _check_lam(lam1, "lam1")
    lam2 = _check_lam(lam2, "lam2")
    k = _check_k(k, n_items)
    # G = X^T X / 4**exponent (exponent = 0 unless X is huge or tiny): the cosines
    # do not depend on the scale, and the spectrum is scaled back.
    G, exponent = _scaled_gram(X)
    spectrum = _spectrum_from_scaled_gram(G, exponent)
    A1, B1 = _objective1(spectrum, lam1, k)
    A2, B2 = _objective2(spectrum, lam2, k)
    shrink = _shrinkage(spectrum.singular_values[:k], lam1)
    if np.any(shrink == 0):
        first = int(np.argmax(shrink == 0))
        raise ValueError(
            f"objective 1 shrinks latent dimension {first} to zero (sigma = "
            f"{spectrum.singular_values[first]:.3g}, lam1 = {lam1:.3g}), so D = diag(f)^(-1/2) "
            "is undefined; expected k at most the rank of X (lower k or lam1)"
        )
    stretch = np.ones(k)
    stretch[-1] = 0.01  # B D^{-1}: the last column of B grows 100-fold
    # Standardised columns, rescaled to the Frobenius norm of X: the spectrum of
    # Z from Z^T Z, its singular values times ||X||_F / ||Z||_F.
    G_Z = _standardized_gram(_scaled(X, exponent), G)
    trace_Z = float(np.sum(np.diagonal(G_Z)))
    if trace_Z == 0.0:
        raise ValueError("every column of X is constant; expected some varying columns")
    spectrum_Z = _spectrum_from_gram(G_Z)
    ratio = math.sqrt(float(np.sum(np.diagonal(G))) / trace_Z)
    standardized_spectrum = Spectrum(
        np.ldexp(spectrum_Z.singular_values * ratio, exponent), spectrum_Z.vectors
    )

    def cosines(E: NDArray[np.float64], what: str) -> NDArray[np.float64]:
        return _self_cosines(_unit_rows(E, what))

    return {
        "ground truth": _same_cluster(clusters),
        "raw data (columns of X)": _column_cosines(_scaled(X, exponent), G),
        "obj. 1, α = +1/2 (B = V_k)": cosines(_rescale(A1, B1, shrink**0.5)[1], "B_D"),
        "obj. 1, α = 0 (A = B)": cosines(B1, "B of objective 1"),
        "obj. 1, α = −1/2 (A = V_k)": cosines(_rescale(A1, B1, shrink**-0.5)[1], "B_D"),
        "obj. 1, D stretches one dimension": cosines(_rescale(A1, B1, stretch)[1], "B_D"),
        "obj. 2": cosines(B2, "B of objective 2"),
        "remedy: columns of X A Bᵀ, obj. 1": _prediction_cosines(A1, B1, G),
        "remedy: columns of X A Bᵀ, obj. 2": _prediction_cosines(A2, B2, G),
        "remedy: standardised X, obj. 1 (α = 0)": cosines(
            _objective1(standardized_spectrum, lam1, k)[1], "B of objective 1 (standardised X)"
        ),
        "remedy: standardised X, obj. 2": cosines(
            _objective2(standardized_spectrum, lam2, k)[1], "B of objective 2 (standardised X)"
        ),
    }


# ---------------------------------------------------------------------------
# The rescaling dial of chapter 6: D = diag(f)^alpha
# ---------------------------------------------------------------------------

# The AUC of rescaling_update uses cosines quantised to this many levels: exact to
# about 1e-4, and several times faster than the exact count.
_RESCALING_AUC_BINS = 4096
# Neighbourhood size of the top-neighbour share reported by rescaling_update.
_RESCALING_NEIGHBOURS = 10


@dataclass(frozen=True)
class RescalingState:
    """What every :func:`rescaling_update` needs, computed once by :func:`prepare_rescaling_state`.

    Items are in display order: by cluster, then by decreasing popularity.

    Attributes
    ----------
    singular_values : ndarray of shape (k,)
        Top ``k`` singular values of ``X``.
    vectors : ndarray of shape (n_items, k)
        Top ``k`` right singular vectors, rows in display order.
    clusters : ndarray of shape (n_items,)
        Cluster labels (as given) in display order.
    check_rows : ndarray of shape (n_check_users, n_items)
        Dense rows of ``X`` (columns in display order) on which predictions are compared.
    cluster_index : ndarray of shape (n_items,)
        Each item's index into the sorted distinct labels, in display order.
    pairs : ndarray of shape (n_pairs,)
        Flat indices of the ``n_pairs = n_items * (n_items - 1) // 2`` pairs
        :math:`i < j` in an ``(n_items, n_items)`` matrix.
    same_pairs : ndarray of shape (n_pairs,)
        Whether the items of each pair share a cluster.
    """

    singular_values: NDArray[np.float64]
    vectors: NDArray[np.float64]
    clusters: NDArray[Any]
    check_rows: NDArray[np.float64]
    cluster_index: NDArray[np.intp]
    pairs: NDArray[np.intp]
    same_pairs: NDArray[np.bool_]


@dataclass(frozen=True)
class RescalingUpdate:
    r"""Item-item cosines of objective 1 under one rescaling, and what they imply.

    Attributes
    ----------
    cosines : ndarray of shape (n_items, n_items)
        Item-item cosines of the rows of :math:`B_D`, items in display order.
    recovery : cosine_book.cluster_recovery.ClusterRecovery
        AUC and top-10 neighbour share of ``cosines`` against the clusters (the AUC
        from cosines quantised to 4,096 levels, exact to about 1e-4).
    mean_cosine : float
        Mean off-diagonal item-item cosine.
    max_prediction_change : float
        :math:`\max |XA_DB_D^\top - XA_0B_0^\top|` over the check users,
        relative to the largest entry of :math:`XA_0B_0^\top`, where
        :math:`(A_0, B_0)` is the symmetric minimiser at ``reference_lam``
        (:math:`\alpha = 0`).
    lam : float
        Regularisation of this setting.
    alpha : float
        Power of the rescaling of this setting.
    reference_lam : float
        Regularisation of the reference predictions.
    """

    cosines: NDArray[np.float64]
    recovery: ClusterRecovery
    mean_cosine: float
    max_prediction_change: float
    lam: float
    alpha: float
    reference_lam: float


def prepare_rescaling_state(
    X: Matrix,
    item_clusters: ArrayLike,
    item_popularity: ArrayLike,
    k: int = 50,
    *,
    spectrum: Spectrum | None = None,
    n_check_users: int = 200,
    seed: int = 0,
) -> RescalingState:
    """Precompute the spectrum, display order and check users for :func:`rescaling_update`.

    Parameters
    ----------
    X : array_like or scipy.sparse matrix of shape (n_users, n_items)
    item_clusters : array_like of shape (n_items,)
        Cluster labels; at least one pair of items must share a cluster and one not.
    item_popularity : array_like of shape (n_items,)
        Popularity, for the display order (by cluster, then decreasing popularity).
    k : int
        Embedding dimension, ``1 <= k <= n_items``.
    spectrum : Spectrum, optional
        Precomputed :func:`gram_spectrum` of ``X`` (saves its computation).
    n_check_users : int
        Number of users (drawn at random with ``seed``, at most ``n_users``) whose
        predictions are compared.
    seed : int
        Nonnegative.

    Returns
    -------
    RescalingState

    Examples
    --------
    >>> X = np.random.default_rng(0).integers(0, 2, size=(40, 12))
    >>> state = prepare_rescaling_state(
    ...     X, np.arange(12) % 3, np.ones(12), k=4, n_check_users=5
    ... )
    >>> state.vectors.shape, state.check_rows.shape
    ((12, 4), (5, 12))

    With equal popularity, items keep their original order within a cluster:

    >>> state.clusters.tolist()
    [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2]
    """
    X = _check_matrix(X)
    n_users, n_items = X.shape
    k = _check_k(k, n_items)
    n_check_users = as_int_scalar(n_check_users, "n_check_users", minimum=1)
    seed = _check_seed(seed)
    popularity = as_real_array(item_popularity, "item_popularity", ndim=1).astype(
        np.float64, copy=False
    )
    if popularity.size != n_items:
        raise ValueError(
            f"item_popularity has {popularity.size} entries but X has {n_items} columns; "
            "expected one per item"
        )
    index = as_labels(item_clusters, "item_clusters", n_items)[1]
    if spectrum is None:
        spectrum = _spectrum(X)
    else:
        spectrum = _as_spectrum(spectrum)
        if spectrum.vectors.shape[0] != n_items:
            raise ValueError(
                f"spectrum is for {spectrum.vectors.shape[0]} items but X has {n_items} "
                "columns; expected the spectrum of X"
            )
        if spectrum.singular_values.size < k:
            raise ValueError(
                f"spectrum has {spectrum.singular_values.size} singular values; expected at "
                f"least k = {k}"
            )
    order = np.lexsort((-popularity, index))
    cluster_index = index[order]
    rows, cols = np.triu_indices(n_items, k=1)
    same_pairs = cluster_index[rows] == cluster_index[cols]
    if same_pairs.all() or not same_pairs.any():
        raise ValueError(
            "item_clusters must put some pair of items in one cluster and some pair in "
            "different clusters; the cluster recovery (AUC) is undefined otherwise"
        )
    rng = np.random.default_rng(seed)
    users = np.sort(rng.choice(n_users, size=min(n_check_users, n_users), replace=False))
    check = X[users]
    check = check.toarray() if scipy.sparse.issparse(check) else np.asarray(check)
    return RescalingState(
        singular_values=spectrum.singular_values[:k].copy(),
        vectors=np.ascontiguousarray(spectrum.vectors[order, :k]),
        clusters=np.asarray(item_clusters)[order],
        check_rows=np.ascontiguousarray(check[:, order]),
        cluster_index=cluster_index,
        pairs=rows * n_items + cols,
        same_pairs=same_pairs,
    )


def _rescaled_factors(
    vectors: NDArray[np.float64], shrink: NDArray[np.float64], alpha: float
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``(V diag(f)^(1/2 + alpha) 2^s, V diag(f)^(1/2 - alpha) 2^-s)`` for an integer ``s``.

    The powers are taken as ``2**(p log2 f)``, and ``s`` makes the largest column
    scale of the second factor lie in ``(1/2, 1]``: a power of two that cancels in
    the product ``A B^T`` and in cosines, and keeps both factors in range for any
    ``alpha`` whose product is representable.
    """
    log_shrink = np.log2(shrink)
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        a_exponents = (0.5 + alpha) * log_shrink
        b_exponents = (0.5 - alpha) * log_shrink
        finite = bool(np.all(np.isfinite(a_exponents)) and np.all(np.isfinite(b_exponents)))
        if finite:
            shift = math.ceil(float(np.max(b_exponents)))
            a_scales = np.exp2(a_exponents + shift)
            b_scales = np.exp2(b_exponents - shift)
            finite = bool(np.all(np.isfinite(a_scales)))
    if not finite:
        raise ValueError(
            f"alpha = {alpha!r} stretches the shrinkage factors (from {float(shrink.min()):.3g} "
            f"to {float(shrink.max()):.3g}) beyond the float64 range; choose a smaller |alpha|"
        )
    return vectors * a_scales, vectors * b_scales


def rescaling_update(
    state: RescalingState, lam: float, alpha: float, *, reference_lam: float | None = None
) -> RescalingUpdate:
    r"""Item-item cosines of objective 1 and their cluster recovery under a rescaling.

    With :math:`f_i = 1 / (1 + \lambda / \sigma_i^2)` (:math:`\lambda` = ``lam``),
    the minimiser :math:`A = B = V_k \, \mathrm{diag}(f)^{1/2}` rescaled by
    :math:`D = \mathrm{diag}(f)^\alpha` (:math:`\alpha` = ``alpha``) is

    .. math::

        A_D = V_k \, \mathrm{diag}(f)^{1/2 + \alpha}, \quad
        B_D = V_k \, \mathrm{diag}(f)^{1/2 - \alpha}:

    the same predictions :math:`XA_DB_D^\top` for every :math:`\alpha`, and
    item-item cosines (of the rows of :math:`B_D`) that depend on it.
    :math:`\alpha = 1/2` gives :math:`B_D = V_k`, :math:`\alpha = -1/2` gives
    :math:`A_D = V_k`.

    Parameters
    ----------
    state : RescalingState
        From :func:`prepare_rescaling_state`.
    lam : float
        Regularisation of objective 1, positive.
    alpha : float
        Power of the rescaling.
    reference_lam : float, optional
        The predictions are compared with those of the symmetric minimiser at this
        regularisation; default ``lam`` (so the change is at rounding level).

    Returns
    -------
    RescalingUpdate

    Raises
    ------
    ValueError
        If an argument is not a finite number (``lam``, ``reference_lam``
        positive), a top ``k`` singular value is zero, or ``|alpha|`` is so large
        that the rescaled factors leave the float64 range.

    Examples
    --------
    >>> X = np.random.default_rng(0).integers(0, 2, size=(40, 12))
    >>> state = prepare_rescaling_state(
    ...     X, np.arange(12) % 3, np.ones(12), k=4, n_check_users=5
    ... )
    >>> update = rescaling_update(state, lam=5.0, alpha=0.5)
    >>> bool(update.max_prediction_change < 1e-12)
    True
    >>> other = rescaling_update(state, 50.0, 0.5, reference_lam=5.0)
    >>> bool(other.max_prediction_change > 0.1)
    True
    """
    if not isinstance(state, RescalingState):
        raise ValueError(
            "state must be a RescalingState from prepare_rescaling_state; "
            f"got {type(state).__name__}"
        )
    lam = _check_lam(lam)
    alpha = as_float_scalar(alpha, "alpha")
    reference_lam = lam if reference_lam is None else _check_lam(reference_lam, "reference_lam")
    shrink = _shrinkage(state.singular_values, lam)
    if np.any(shrink == 0):
        raise ValueError(
            f"{int(np.count_nonzero(shrink == 0))} of the top k singular values are zero "
            "(or negligible next to lam); lower k"
        )
    A_D, B_D = _rescaled_factors(state.vectors, shrink, alpha)
    cosines = _self_cosines(_unit_rows(B_D, "B_D"))
    n_items = cosines.shape[0]
    recovery = ClusterRecovery(
        auc=_pair_auc_of_scores(
            cosines.ravel()[state.pairs], state.same_pairs, _RESCALING_AUC_BINS
        ),
        neighbour_share=_top_neighbour_share(
            cosines, state.cluster_index, min(_RESCALING_NEIGHBOURS, n_items - 1)
        ),
    )
    mean_cosine = (float(np.sum(cosines)) - n_items) / (n_items * (n_items - 1))
    reference_factor = state.vectors * np.sqrt(_shrinkage(state.singular_values, reference_lam))
    reference = (state.check_rows @ reference_factor) @ reference_factor.T
    predictions = (state.check_rows @ A_D) @ B_D.T
    scale = max(float(np.max(np.abs(reference))), np.finfo(float).tiny)
    change = float(np.max(np.abs(predictions - reference))) / scale
    return RescalingUpdate(
        cosines=cosines,
        recovery=recovery,
        mean_cosine=mean_cosine,
        max_prediction_change=change,
        lam=lam,
        alpha=alpha,
        reference_lam=reference_lam,
    )


# ---------------------------------------------------------------------------
# How far the equally optimal D of objective 1 move cluster recovery
# ---------------------------------------------------------------------------

# The rescalings compared by rescaling_spread, in this order (the labels of
# item_similarity_suite).
_SPREAD_LABELS = (
    "obj. 1, α = +1/2 (B = V_k)",
    "obj. 1, α = 0 (A = B)",
    "obj. 1, α = −1/2 (A = V_k)",
    "obj. 1, D stretches one dimension",
)


def _objective1_with_shrinkage(
    X: NDArray[np.float64] | scipy.sparse.csr_array, lam: float, k: int, what: str
) -> tuple[Spectrum, NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Objective 1's factors and shrinkage, refusing a dimension shrunk to zero.

    The rescalings D = diag(f)^(+-1/2) of the experiments divide by the shrinkage f,
    so every one of the ``k`` kept dimensions must survive ``lam``.
    """
    spectrum = _spectrum_from_scaled_gram(*_scaled_gram(X))
    A1, B1 = _objective1(spectrum, lam, k)
    shrink = _shrinkage(spectrum.singular_values[:k], lam)
    if np.any(shrink == 0):
        first = int(np.argmax(shrink == 0))
        raise ValueError(
            f"objective 1 shrinks latent dimension {first} of {what} to zero (sigma = "
            f"{spectrum.singular_values[first]:.3g}, lam = {lam:.3g}), so D = diag(f)^(-1/2) "
            f"is undefined; expected k at most the rank of {what} (lower k or lam)"
        )
    return spectrum, A1, B1, shrink


@dataclass(frozen=True)
class RescalingSpread:
    r"""Cluster recovery of objective 1's item cosines under equally optimal :math:`D`.

    Entry ``m`` of each array belongs to the rescaling ``labels[m]``; all of
    them make exactly the same predictions.

    Attributes
    ----------
    labels : tuple of str
        The rescalings: :math:`D = \mathrm{diag}(f)^\alpha` for
        :math:`\alpha = +1/2, 0, -1/2`, and a :math:`D` that stretches only the
        last latent dimension of :math:`B` a hundredfold (the labels of
        :func:`item_similarity_suite`).
    auc : ndarray of shape (4,)
        Exact AUC of the item-item cosines against the clusters
        (:func:`cosine_book.cluster_recovery.pair_auc`).
    neighbour_share : ndarray of shape (4,)
        Share of each item's ``n_neighbours`` most similar items in its own cluster.
    mean_cosine : ndarray of shape (4,)
        Mean cosine over the pairs of distinct items.
    """

    labels: tuple[str, ...]
    auc: NDArray[np.float64]
    neighbour_share: NDArray[np.float64]
    mean_cosine: NDArray[np.float64]


def rescaling_spread(
    X: Matrix,
    item_clusters: ArrayLike,
    *,
    lam: float = 1e4,
    k: int = 50,
    n_neighbours: int = 10,
) -> RescalingSpread:
    r"""Score objective 1's item-item cosines under four equally optimal rescalings.

    Fits objective 1 (the symmetric minimiser
    :math:`\hat A = \hat B = V_k \mathrm{diag}(f)^{1/2}`,
    :math:`f_i = 1 / (1 + \lambda / \sigma_i^2)`), rescales it by
    :math:`D = \mathrm{diag}(f)^{\alpha}` for :math:`\alpha = +1/2, 0, -1/2`
    and by a :math:`D` that stretches only the last latent dimension of
    :math:`B` a hundredfold, and scores the cosines of the rows of
    :math:`\hat B D^{-1}` against the item clusters. These are the objective 1
    rows of :func:`item_similarity_suite`, without the other similarities; use
    it to see how much the choice of :math:`D` moves the scores, e.g. over
    many simulated data sets.

    Parameters
    ----------
    X : array_like or scipy.sparse matrix of shape (n_users, n_items)
        Finite real numbers, any scale.
    item_clusters : array_like of shape (n_items,)
        Cluster label of each item; at least two clusters, and one with two items.
    lam : float
        Regularisation of objective 1, positive.
    k : int
        Embedding dimension, ``1 <= k <= n_items``.
    n_neighbours : int
        Neighbourhood size of the neighbour share, ``1 <= n_neighbours < n_items``.

    Returns
    -------
    RescalingSpread

    Raises
    ------
    ValueError
        For bad input, and if objective 1 shrinks one of the top ``k`` latent
        dimensions to zero (``X`` has rank below ``k``, or ``lam`` dwarfs
        :math:`\sigma_k^2`): :math:`D = \mathrm{diag}(f)^{-1/2}` is then undefined.

    Examples
    --------
    >>> from cosine_book.simulation import make_clustered_interactions
    >>> data = make_clustered_interactions(
    ...     n_users=300, n_items=40, n_clusters=2, min_items=4
    ... )
    >>> spread = rescaling_spread(
    ...     data.X, data.item_clusters, lam=10.0, k=5, n_neighbours=3
    ... )
    >>> spread.labels[1]
    'obj. 1, α = 0 (A = B)'
    >>> spread.auc.round(2).tolist()
    [0.85, 0.86, 0.87, 0.75]
    >>> spread.mean_cosine.round(2).tolist()  # same predictions, other levels
    [0.38, 0.4, 0.41, 0.03]
    """
    X = _check_matrix(X)
    n_items = X.shape[1]
    clusters = _as_clusters(item_clusters, n_items)
    lam = _check_lam(lam)
    k = _check_k(k, n_items)
    if n_items < 2:
        raise ValueError(f"X has {n_items} item; expected at least 2 items to compare")
    n_neighbours = as_int_scalar(n_neighbours, "n_neighbours", minimum=1, maximum=n_items - 1)
    upper_rows, upper_cols = np.triu_indices(n_items, k=1)
    same = clusters[upper_rows] == clusters[upper_cols]
    if same.all() or not same.any():
        raise ValueError(
            "item_clusters needs both same-cluster and different-cluster pairs to compute "
            "an AUC; expected at least two clusters, one of them with two or more items"
        )
    _, A1, B1, shrink = _objective1_with_shrinkage(X, lam, k, "X")
    stretch = np.ones(k)
    stretch[-1] = 0.01  # B D^{-1}: the last column of B grows 100-fold
    auc, share, level = [], [], []
    for d in (shrink**0.5, np.ones(k), shrink**-0.5, stretch):
        S = _self_cosines(_unit_rows(_rescale(A1, B1, d)[1], "B_D"))
        auc.append(_pair_auc_of_scores(S[upper_rows, upper_cols], same))
        share.append(_top_neighbour_share(S, clusters, n_neighbours))
        level.append((float(np.sum(S)) - n_items) / (n_items * (n_items - 1)))
    return RescalingSpread(
        labels=_SPREAD_LABELS,
        auc=np.array(auc),
        neighbour_share=np.array(share),
        mean_cosine=np.array(level),
    )
