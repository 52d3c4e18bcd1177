r"""Linear matrix factorisation: closed forms, rescaling freedom, cosine matrices.

The model of Steck, Ekanadham and Kallus (2024) approximates a user-item
matrix ``X`` (``n`` users by ``p`` items) by ``X A B^T`` with ``A, B`` of shape
``(p, k)``. Item embeddings are the rows of ``B``, user embeddings the rows of
``X A``. Two training objectives have closed-form minimisers built from the
right singular vectors ``V`` and singular values ``sigma`` of ``X``:

.. math::

    \text{(1)}\quad \lVert X - XAB^\top\rVert_F^2 + \lambda\lVert AB^\top\rVert_F^2,
    \qquad \hat A = \hat B = V_k\,\mathrm{diag}\big(1/(1+\lambda/\sigma_i^2)\big)^{1/2},

    \text{(2)}\quad \lVert X - XAB^\top\rVert_F^2
    + \lambda\big(\lVert XA\rVert_F^2 + \lVert B\rVert_F^2\big),
    \qquad \hat A = V_k\,\mathrm{diag}\big(\sqrt{(\sigma_i-\lambda)_+}/\sigma_i\big),\;
    \hat B = V_k\,\mathrm{diag}\big(\sqrt{(\sigma_i-\lambda)_+}\big).

Objective (1) only pins down the product ``A B^T``: every ``(A D, B D^{-1})``
with ``D`` diagonal and invertible is optimal too (:func:`rescale`), and the
cosine similarities of the embeddings (:func:`cosine_matrix`) change with ``D``.

How the spectrum is computed
----------------------------
``V`` and ``sigma`` come from the eigendecomposition of the ``p x p`` Gram
matrix ``X^T X`` (:func:`gram_spectrum`, with :func:`numpy.linalg.eigh`), never
from a thin SVD of the tall ``X``: for 20,000 users and 1,000 items that is
about ten times faster (``benchmarks/bench_factorization.py`` times both, and
SciPy's ``eigh`` drivers). Tiny
negative eigenvalues from rounding are clipped to zero, eigenpairs are sorted
by descending singular value, and each eigenvector's sign is fixed so that its
largest-magnitude entry is positive; outputs are thus deterministic.
"""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral
from typing import Any, Literal

import numpy as np
import scipy.linalg
import scipy.sparse
from numpy.typing import ArrayLike, NDArray

__all__ = [
    "ClosedFormCheck",
    "ClusterRecovery",
    "Interactions",
    "Spectrum",
    "closed_form_check",
    "cluster_order",
    "cluster_recovery",
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
    "rescale",
    "same_cluster_matrix",
    "simulate_interactions",
    "standardize_columns",
]

Matrix = NDArray[Any] | scipy.sparse.sparray | scipy.sparse.spmatrix


# ---------------------------------------------------------------------------
# Input checks
# ---------------------------------------------------------------------------


def _check_matrix(X: Any, what: str = "X") -> Any:
    """Return ``X`` as a 2-d float array or a float CSR matrix, after checking it."""
    if scipy.sparse.issparse(X):
        if X.ndim != 2:
            raise ValueError(f"{what} has {X.ndim} dimensions; expected a 2-d matrix")
        X = scipy.sparse.csr_array(X, dtype=np.float64)
        data = X.data
    else:
        try:
            X = np.asarray(X, dtype=np.float64)
        except (TypeError, ValueError) as error:
            raise ValueError(f"{what} is not an array of real numbers: {error}") from None
        if X.ndim != 2:
            raise ValueError(f"{what} has shape {X.shape}; expected a 2-d (users x items) matrix")
        data = X
    if X.shape[0] == 0 or X.shape[1] == 0:
        raise ValueError(f"{what} has shape {X.shape}; expected at least one row and column")
    if not np.all(np.isfinite(data)):
        raise ValueError(f"{what} contains NaN or infinite entries; expected finite numbers")
    return X


def _check_lam(lam: float) -> float:
    lam = float(lam)
    if not np.isfinite(lam) or lam <= 0:
        raise ValueError(f"lam must be a positive finite number; got {lam}")
    return lam


def _check_k(k: Any, n_items: int) -> int:
    if isinstance(k, bool) or not isinstance(k, Integral):
        raise ValueError(f"k must be an integer between 1 and {n_items}; got {k!r}")
    if not 1 <= int(k) <= n_items:
        raise ValueError(f"k must be between 1 and the number of items {n_items}; got {k}")
    return int(k)


def _check_factors(A: ArrayLike, B: ArrayLike, n_items: int | None = None) -> tuple:
    A = np.asarray(A, dtype=np.float64)
    B = np.asarray(B, dtype=np.float64)
    if A.ndim != 2 or B.ndim != 2 or A.shape != B.shape:
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


# ---------------------------------------------------------------------------
# Spectrum of X from its Gram matrix
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Spectrum:
    """Singular values and right singular vectors of a matrix ``X``.

    Attributes
    ----------
    singular_values : ndarray of shape (p,)
        ``sigma_1 >= sigma_2 >= ... >= 0``.
    vectors : ndarray of shape (p, p)
        Right singular vectors as columns, each with its largest-magnitude entry
        positive.
    """

    singular_values: NDArray[np.float64]
    vectors: NDArray[np.float64]


def gram(X: Matrix) -> NDArray[np.float64]:
    """Return the item Gram matrix ``X^T X`` as a dense float64 array.

    Parameters
    ----------
    X : array_like or scipy.sparse matrix of shape (n_users, n_items)

    Returns
    -------
    ndarray of shape (n_items, n_items)

    Examples
    --------
    >>> gram([[1, 0], [1, 1]])
    array([[2., 1.],
           [1., 1.]])
    """
    X = _check_matrix(X)
    if scipy.sparse.issparse(X):
        return np.asarray((X.T @ X).toarray(), dtype=np.float64)
    # X.T @ X on the same buffer lets NumPy call the symmetric BLAS kernel.
    return X.T @ X


def _spectrum_from_gram(G: NDArray[np.float64], driver: str = "numpy") -> Spectrum:
    if driver == "numpy":
        eigenvalues, vectors = np.linalg.eigh(G)
    else:
        eigenvalues, vectors = scipy.linalg.eigh(G, driver=driver, check_finite=False)
    order = np.argsort(eigenvalues, kind="stable")[::-1]
    eigenvalues, vectors = eigenvalues[order], vectors[:, order]
    # Rounding can leave eigenvalues of a PSD matrix slightly negative.
    singular_values = np.sqrt(np.clip(eigenvalues, 0.0, None))
    # Fix the sign of each eigenvector: largest-magnitude entry positive.
    pivots = np.argmax(np.abs(vectors), axis=0)
    signs = np.sign(vectors[pivots, np.arange(vectors.shape[1])])
    signs[signs == 0] = 1.0
    return Spectrum(singular_values, np.ascontiguousarray(vectors * signs))


def gram_spectrum(X: Matrix) -> Spectrum:
    """Singular values and right singular vectors of ``X`` from the Gram matrix ``X^T X``.

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
    """
    return _spectrum_from_gram(gram(X))


def _spectrum_of(X: Matrix | Spectrum) -> Spectrum:
    return X if isinstance(X, Spectrum) else gram_spectrum(X)


def dropout_shrinkage(singular_values: ArrayLike, lam: float) -> NDArray[np.float64]:
    """Shrinkage factors ``1 / (1 + lam / sigma_i^2)`` of objective 1 (0 where ``sigma_i = 0``).

    Parameters
    ----------
    singular_values : array_like of shape (k,)
    lam : float
        Regularisation strength, positive.

    Returns
    -------
    ndarray of shape (k,)

    Examples
    --------
    >>> dropout_shrinkage([10.0, 1.0, 0.0], lam=1.0).round(4).tolist()
    [0.9901, 0.5, 0.0]
    """
    lam = _check_lam(lam)
    squares = np.asarray(singular_values, dtype=np.float64) ** 2
    return squares / (squares + lam)


# ---------------------------------------------------------------------------
# Closed forms
# ---------------------------------------------------------------------------


def fit_objective1(
    X: Matrix | Spectrum, lam: float, k: int | None = None
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    r"""Minimise ``||X - X A B^T||_F^2 + lam ||A B^T||_F^2`` over ``A, B`` of rank ``k``.

    Returns the symmetric solution ``A = B = V_k diag(1/(1 + lam/sigma_i^2))^{1/2}``.
    Every ``rescale(A, B, d)`` with nonzero ``d`` is optimal too.

    Parameters
    ----------
    X : array_like, scipy.sparse matrix or Spectrum
        The ``(n_users, n_items)`` data, or its precomputed :class:`Spectrum`.
    lam : float
        Regularisation strength, positive.
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
    >>> gradient_A, gradient_B = objective1_gradient(X, A, B, lam=0.5)
    >>> bool(np.abs(gradient_A).max() < 1e-12 and np.abs(gradient_B).max() < 1e-12)
    True
    """
    lam = _check_lam(lam)
    spectrum = _spectrum_of(X)
    n_items = spectrum.vectors.shape[0]
    k = n_items if k is None else _check_k(k, n_items)
    shrink = dropout_shrinkage(spectrum.singular_values[:k], lam)
    A = spectrum.vectors[:, :k] * np.sqrt(shrink)
    return A, A.copy()


def fit_objective2(
    X: Matrix | Spectrum, lam: float, k: int
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    r"""Minimise ``||X - X A B^T||_F^2 + lam (||X A||_F^2 + ||B||_F^2)`` over ``A, B``.

    The solution is ``A = V_k diag(sqrt((sigma_i - lam)_+) / sigma_i)``,
    ``B = V_k diag(sqrt((sigma_i - lam)_+))``: the predictions ``X A B^T`` are
    the singular values of ``X`` soft-thresholded by ``lam``. It is unique up to a
    rotation of the embedding space (when the top ``k + 1`` singular values are
    distinct), so cosine similarities are unique.

    Parameters
    ----------
    X : array_like, scipy.sparse matrix or Spectrum
        The ``(n_users, n_items)`` data, or its precomputed :class:`Spectrum`.
    lam : float
        Regularisation strength, positive. Compare with ``sigma_i``, not ``sigma_i^2``.
    k : int
        Embedding dimension, ``1 <= k <= n_items``.

    Returns
    -------
    A, B : ndarray of shape (n_items, k)
        Columns with ``sigma_i <= lam`` are zero.

    Examples
    --------
    >>> X = np.diag([5.0, 2.0, 1.0])
    >>> A, B = fit_objective2(X, lam=1.5, k=3)
    >>> np.diag(X @ A @ B.T).round(4).tolist()  # (sigma - lam)_+
    [3.5, 0.5, 0.0]
    """
    lam = _check_lam(lam)
    spectrum = _spectrum_of(X)
    n_items = spectrum.vectors.shape[0]
    k = _check_k(k, n_items)
    sigma = spectrum.singular_values[:k]
    kept = np.sqrt(np.clip(sigma - lam, 0.0, None))
    scale_a = np.divide(kept, sigma, out=np.zeros_like(kept), where=sigma > 0)
    V = spectrum.vectors[:, :k]
    return V * scale_a, V * kept


def rescale(
    A: ArrayLike, B: ArrayLike, d: ArrayLike
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Rescale the latent dimensions: return ``(A diag(d), B diag(1/d))``.

    The product ``A B^T``, hence every prediction ``X A B^T``, is unchanged.

    Parameters
    ----------
    A, B : array_like of shape (n_items, k)
    d : array_like of shape (k,)
        Diagonal of ``D``; finite and nonzero.

    Returns
    -------
    A_D, B_D : ndarray of shape (n_items, k)

    Examples
    --------
    >>> A = np.array([[1.0, 2.0], [3.0, 4.0]])
    >>> A_D, B_D = rescale(A, A, [2.0, 0.5])
    >>> A_D.tolist(), B_D.tolist()
    ([[2.0, 1.0], [6.0, 2.0]], [[0.5, 4.0], [1.5, 8.0]])
    >>> bool(np.allclose(A_D @ B_D.T, A @ A.T))
    True
    """
    A, B = _check_factors(A, B)
    d = np.asarray(d, dtype=np.float64)
    if d.shape != (A.shape[1],):
        raise ValueError(
            f"d has shape {d.shape}; expected one scale per latent dimension, shape ({A.shape[1]},)"
        )
    if not np.all(np.isfinite(d)) or np.any(d == 0):
        raise ValueError("d must be finite and nonzero (D must be invertible)")
    return A * d, B / d


# ---------------------------------------------------------------------------
# Losses and gradients (for checking the closed forms)
# ---------------------------------------------------------------------------


def _residual_parts(X: Matrix, A: NDArray[Any], B: NDArray[Any]) -> tuple:
    X = _check_matrix(X)
    A, B = _check_factors(A, B, X.shape[1])
    XA = np.asarray(X @ A)
    residual = (X - XA @ B.T) if not scipy.sparse.issparse(X) else X.toarray() - XA @ B.T
    return X, A, B, XA, residual


def objective1_loss(X: Matrix, A: ArrayLike, B: ArrayLike, lam: float) -> float:
    """Value of ``||X - X A B^T||_F^2 + lam ||A B^T||_F^2``.

    Examples
    --------
    >>> X = np.eye(2)
    >>> round(objective1_loss(X, 0.5 * np.eye(2), np.eye(2), lam=1.0), 4)
    1.0
    """
    lam = _check_lam(lam)
    X, A, B, _, residual = _residual_parts(X, A, B)
    return float(np.sum(residual**2) + lam * np.sum((A @ B.T) ** 2))


def objective2_loss(X: Matrix, A: ArrayLike, B: ArrayLike, lam: float) -> float:
    """Value of ``||X - X A B^T||_F^2 + lam (||X A||_F^2 + ||B||_F^2)``.

    Examples
    --------
    >>> X = np.eye(2)
    >>> round(objective2_loss(X, 0.5 * np.eye(2), np.eye(2), lam=1.0), 4)
    3.0
    """
    lam = _check_lam(lam)
    X, A, B, XA, residual = _residual_parts(X, A, B)
    return float(np.sum(residual**2) + lam * (np.sum(XA**2) + np.sum(B**2)))


def objective1_gradient(
    X: Matrix, A: ArrayLike, B: ArrayLike, lam: float
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Gradient ``(dL/dA, dL/dB)`` of objective 1.

    With ``G = X^T X`` and ``W = A B^T``, ``dL/dW = 2 (G W - G + lam W)``.

    Examples
    --------
    >>> X = np.eye(2)
    >>> A, B = fit_objective1(X, lam=1.0)
    >>> [float(np.abs(g).max().round(8)) for g in objective1_gradient(X, A, B, lam=1.0)]
    [0.0, 0.0]
    """
    lam = _check_lam(lam)
    X = _check_matrix(X)
    A, B = _check_factors(A, B, X.shape[1])
    G = gram(X)
    W = A @ B.T
    grad_W = 2.0 * (G @ W - G + lam * W)
    return grad_W @ B, grad_W.T @ A


def objective2_gradient(
    X: Matrix, A: ArrayLike, B: ArrayLike, lam: float
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Gradient ``(dL/dA, dL/dB)`` of objective 2.

    Examples
    --------
    >>> X = np.diag([3.0, 2.0])
    >>> A, B = fit_objective2(X, lam=1.0, k=2)
    >>> [float(np.abs(g).max().round(8)) for g in objective2_gradient(X, A, B, lam=1.0)]
    [0.0, 0.0]
    """
    lam = _check_lam(lam)
    X = _check_matrix(X)
    A, B = _check_factors(A, B, X.shape[1])
    G = gram(X)
    W = A @ B.T
    grad_A = 2.0 * ((G @ W - G) @ B + lam * G @ A)
    grad_B = 2.0 * ((W.T @ G - G) @ A + lam * B)
    return grad_A, grad_B


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
        Number of alternating sweeps.
    seed : int
        Seed of the random start.

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
    lam = _check_lam(lam)
    X = _check_matrix(X)
    n_items = X.shape[1]
    k = _check_k(k, n_items)
    if objective not in (1, 2):
        raise ValueError(f"objective must be 1 or 2; got {objective!r}")
    G = gram(X)
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((n_items, k)) / np.sqrt(n_items)
    B = rng.standard_normal((n_items, k)) / np.sqrt(n_items)
    eye_k = np.eye(k)
    G_reg = G + lam * np.eye(n_items)
    for _ in range(n_iter):
        if objective == 1:
            # dL/dA = 0  <=>  (G + lam I) A (B^T B) = G B
            A = np.linalg.solve(G_reg, G @ B) @ np.linalg.pinv(B.T @ B)
            # dL/dB = 0  <=>  B (A^T (G + lam I) A) = G A
            B = G @ A @ np.linalg.pinv(A.T @ G_reg @ A)
        else:
            # dL/dA = 0  <=>  G (A (B^T B + lam I) - B) = 0
            A = B @ np.linalg.inv(B.T @ B + lam * eye_k)
            # dL/dB = 0  <=>  B (A^T G A + lam I) = G A
            B = G @ A @ np.linalg.inv(A.T @ G @ A + lam * eye_k)
    return A, B


@dataclass(frozen=True)
class ClosedFormCheck:
    """Evidence that a closed form minimises its objective (see :func:`closed_form_check`).

    Attributes
    ----------
    gradient : float
        Largest absolute gradient entry at the closed form, divided by ``||X||_F^2``.
    loss_rise : float
        Smallest loss increase over the random perturbations, divided by ``||X||_F^2``
        (positive if no perturbation lowered the loss).
    iterative_gap : float
        ``max |A B^T - A_iter B_iter^T|`` against :func:`fit_alternating` from a random start.
    """

    gradient: float
    loss_rise: float
    iterative_gap: float


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

    Parameters
    ----------
    X : array_like or scipy.sparse matrix of shape (n_users, n_items)
    lam : float
    k : int
    objective : {1, 2}
    n_perturbations : int
        Random Gaussian perturbations of ``(A, B)`` per size.
    sizes : tuple of float
        Standard deviations of the perturbations.
    n_iter : int
        Sweeps of :func:`fit_alternating`.
    seed : int

    Returns
    -------
    ClosedFormCheck

    Examples
    --------
    >>> X = np.random.default_rng(0).random((30, 5))
    >>> check = closed_form_check(X, lam=0.5, k=2, objective=2, n_perturbations=5)
    >>> bool(check.gradient < 1e-12 and check.loss_rise > 0 and check.iterative_gap < 1e-8)
    True
    """
    if objective not in (1, 2):
        raise ValueError(f"objective must be 1 or 2; got {objective!r}")
    X = _check_matrix(X)
    fit, loss, gradient = (
        (fit_objective1, objective1_loss, objective1_gradient)
        if objective == 1
        else (fit_objective2, objective2_loss, objective2_gradient)
    )
    A, B = fit(X, lam, k)
    scale = float(X.multiply(X).sum()) if scipy.sparse.issparse(X) else float(np.sum(X**2))
    best = loss(X, A, B, lam)
    rng = np.random.default_rng(seed)
    rises = [
        loss(
            X, A + size * rng.standard_normal(A.shape), B + size * rng.standard_normal(B.shape), lam
        )
        - best
        for size in sizes
        for _ in range(n_perturbations)
    ]
    A_iter, B_iter = fit_alternating(X, lam, k, objective, n_iter=n_iter, seed=seed + 1)
    return ClosedFormCheck(
        gradient=max(float(np.abs(g).max()) for g in gradient(X, A, B, lam)) / scale,
        loss_rise=min(rises) / scale,
        iterative_gap=float(np.abs(A_iter @ B_iter.T - A @ B.T).max()),
    )


# ---------------------------------------------------------------------------
# Cosine matrices
# ---------------------------------------------------------------------------


def _unit_rows(E: Any, what: str) -> NDArray[np.float64]:
    E = np.asarray(E, dtype=np.float64)
    if E.ndim != 2:
        raise ValueError(f"{what} has shape {E.shape}; expected a 2-d array (one row per object)")
    if not np.all(np.isfinite(E)):
        raise ValueError(f"{what} contains NaN or infinite entries; expected finite numbers")
    norms = np.linalg.norm(E, axis=1)
    zero = np.flatnonzero(norms == 0)
    if zero.size:
        raise ValueError(
            f"{what} has {zero.size} zero row(s) (first: row {zero[0]}); "
            "the cosine of a zero vector is undefined"
        )
    return E / norms[:, None]


def cosine_matrix(E: ArrayLike, F: ArrayLike | None = None) -> NDArray[np.float64]:
    """Cosine similarities between the rows of ``E`` (and those of ``F`` if given).

    ``Omega_E E F^T Omega_F`` where ``Omega`` rescales each row to unit length.

    Parameters
    ----------
    E : array_like of shape (m, k)
    F : array_like of shape (m2, k), optional
        Defaults to ``E`` (a symmetric matrix with unit diagonal).

    Returns
    -------
    ndarray of shape (m, m2)

    Raises
    ------
    ValueError
        If a row is zero (its cosine is undefined) or the widths differ.

    Examples
    --------
    >>> cosine_matrix([[1.0, 0.0], [1.0, 1.0]]).round(4).tolist()
    [[1.0, 0.7071], [0.7071, 1.0]]
    """
    unit_e = _unit_rows(E, "E")
    if F is None:
        cos = unit_e @ unit_e.T
        np.fill_diagonal(cos, 1.0)
        return np.clip(cos, -1.0, 1.0, out=cos)
    unit_f = _unit_rows(F, "F")
    if unit_f.shape[1] != unit_e.shape[1]:
        raise ValueError(
            f"E has rows of length {unit_e.shape[1]} and F of length {unit_f.shape[1]}; "
            "expected equal lengths"
        )
    return np.clip(unit_e @ unit_f.T, -1.0, 1.0)


def prediction_item_cosines(
    X: Matrix, A: ArrayLike, B: ArrayLike, *, gram_matrix: ArrayLike | None = None
) -> NDArray[np.float64]:
    """Item-item cosines of the columns of the predictions ``X A B^T`` (the original space).

    Computed from ``W^T (X^T X) W`` with ``W = A B^T``, so the ``n_users x n_items``
    prediction matrix is never formed. Invariant to any rescaling of ``(A, B)``.

    Parameters
    ----------
    X : array_like or scipy.sparse matrix of shape (n_users, n_items)
    A, B : array_like of shape (n_items, k)
    gram_matrix : array_like of shape (n_items, n_items), optional
        Precomputed ``X^T X``.

    Returns
    -------
    ndarray of shape (n_items, n_items)

    Examples
    --------
    >>> X = np.array([[1.0, 1.0, 0.0], [0.0, 1.0, 1.0], [1.0, 0.0, 1.0]])
    >>> A, B = fit_objective1(X, lam=0.1)
    >>> prediction_item_cosines(X, A, B).round(3)[0].tolist()
    [1.0, 0.546, 0.546]
    """
    G = gram(X) if gram_matrix is None else np.asarray(gram_matrix, dtype=np.float64)
    A, B = _check_factors(A, B, G.shape[0])
    W = A @ B.T
    return _gram_cosines(W.T @ G @ W, "predictions")


def standardize_columns(X: Matrix) -> NDArray[np.float64]:
    """Centre each column of ``X`` and scale it to unit variance (popularity de-biasing).

    Constant columns are only centred (left at zero).

    Examples
    --------
    >>> standardize_columns([[1.0, 0.0], [0.0, 0.0], [1.0, 3.0]]).round(3).tolist()
    [[0.707, -0.707], [-1.414, -0.707], [0.707, 1.414]]
    """
    X = _check_matrix(X)
    dense = X.toarray() if scipy.sparse.issparse(X) else X.copy()
    dense -= dense.mean(axis=0)
    std = dense.std(axis=0)
    dense /= np.where(std > 0, std, 1.0)
    return dense


# ---------------------------------------------------------------------------
# Cluster recovery
# ---------------------------------------------------------------------------


def _check_clusters(clusters: ArrayLike, n_items: int) -> NDArray[np.int64]:
    clusters = np.asarray(clusters)
    if clusters.shape != (n_items,):
        raise ValueError(
            f"clusters has shape {clusters.shape}; expected one label per item, ({n_items},)"
        )
    return clusters


def same_cluster_matrix(clusters: ArrayLike) -> NDArray[np.float64]:
    """Ground-truth similarity: 1 where two items share a cluster, else 0.

    Examples
    --------
    >>> same_cluster_matrix([0, 1, 0]).tolist()
    [[1.0, 0.0, 1.0], [0.0, 1.0, 0.0], [1.0, 0.0, 1.0]]
    """
    clusters = np.asarray(clusters)
    if clusters.ndim != 1:
        raise ValueError(f"clusters has shape {clusters.shape}; expected a 1-d array of labels")
    return (clusters[:, None] == clusters[None, :]).astype(np.float64)


def cluster_order(clusters: ArrayLike, popularity: ArrayLike) -> NDArray[np.int64]:
    """Permutation sorting items by cluster, then by descending popularity.

    Examples
    --------
    >>> cluster_order([1, 0, 1, 0], [0.1, 0.2, 0.9, 0.5]).tolist()
    [3, 1, 2, 0]
    """
    clusters = np.asarray(clusters)
    popularity = np.asarray(popularity, dtype=np.float64)
    if clusters.ndim != 1 or popularity.shape != clusters.shape:
        raise ValueError(
            f"clusters has shape {clusters.shape} and popularity {popularity.shape}; "
            "expected two 1-d arrays of the same length"
        )
    return np.lexsort((-popularity, clusters))


@dataclass(frozen=True)
class ClusterRecovery:
    """How well an item-item similarity recovers known clusters.

    Attributes
    ----------
    auc : float
        Probability that a random same-cluster pair scores higher than a random
        different-cluster pair (ties count one half).
    neighbour_share : float
        Average share of each item's ``n_neighbours`` most similar other items
        that lie in its own cluster.
    """

    auc: float
    neighbour_share: float


def _pair_auc(
    scores: NDArray[np.float64], same: NDArray[np.bool_], n_bins: int | None = None
) -> float:
    n_pos = int(np.count_nonzero(same))
    n_neg = scores.size - n_pos
    if n_pos == 0 or n_neg == 0:
        raise ValueError("need both same-cluster and different-cluster pairs to compute an AUC")
    if n_bins is None:
        # Mann-Whitney U: for each negative pair count the positives scoring above
        # it (ties count one half), by binary search in the sorted positive scores.
        positives = np.sort(scores[same])
        negatives = np.sort(scores[~same])  # sorted queries make the search faster
        below_or_tied = np.searchsorted(positives, negatives, side="right")
        below = np.searchsorted(positives, negatives, side="left")
        wins = n_pos * n_neg - below_or_tied.sum(dtype=np.float64)
        ties = (below_or_tied - below).sum(dtype=np.float64)
    else:
        # Scores quantised to n_bins levels on [min, max]; pairs in one bin count as ties.
        low, high = float(scores.min()), float(scores.max())
        width = (high - low) / n_bins or 1.0
        levels = np.minimum(((scores - low) / width).astype(np.int64), n_bins - 1)
        pos_counts = np.bincount(levels[same], minlength=n_bins).astype(np.float64)
        neg_counts = np.bincount(levels, minlength=n_bins).astype(np.float64) - pos_counts
        pos_above = n_pos - np.cumsum(pos_counts)  # positives in higher bins
        wins = float(neg_counts @ pos_above)
        ties = float(neg_counts @ pos_counts)
    return float((wins + 0.5 * ties) / (n_pos * n_neg))


def _top_neighbour_share(
    S: NDArray[np.float64], clusters: NDArray[Any], n_neighbours: int
) -> float:
    # Exclude each item from its own neighbour list.
    masked = S.copy()
    np.fill_diagonal(masked, -np.inf)
    neighbours = np.argpartition(-masked, n_neighbours - 1, axis=1)[:, :n_neighbours]
    return float(np.mean(clusters[neighbours] == clusters[:, None]))


def cluster_recovery(
    similarity: ArrayLike,
    clusters: ArrayLike,
    n_neighbours: int = 10,
    *,
    auc_bins: int | None = None,
) -> ClusterRecovery:
    """Score an item-item similarity matrix against known item clusters.

    Parameters
    ----------
    similarity : array_like of shape (p, p)
        Symmetric similarities (cosines, or the 0/1 ground truth).
    clusters : array_like of shape (p,)
        Cluster label of each item.
    n_neighbours : int
        Neighbourhood size for the top-neighbour share (ties are broken arbitrarily but
        deterministically).
    auc_bins : int, optional
        If given, the AUC is computed from the similarities quantised to this many
        levels (faster; pairs within one level count as ties). Default: exact.

    Returns
    -------
    ClusterRecovery

    Examples
    --------
    >>> clusters = np.array([0, 0, 1, 1])
    >>> result = cluster_recovery(same_cluster_matrix(clusters), clusters, n_neighbours=1)
    >>> round(result.auc, 4), round(result.neighbour_share, 4)
    (1.0, 1.0)
    >>> round(cluster_recovery(np.eye(4), clusters, n_neighbours=1).auc, 4)
    0.5
    """
    S = np.asarray(similarity, dtype=np.float64)
    if S.ndim != 2 or S.shape[0] != S.shape[1] or S.shape[0] < 2:
        raise ValueError(f"similarity has shape {S.shape}; expected a square (p, p) matrix, p >= 2")
    n_items = S.shape[0]
    clusters = _check_clusters(clusters, n_items)
    if not np.all(np.isfinite(S)):
        raise ValueError("similarity contains NaN or infinite entries")
    n_neighbours = _check_k(n_neighbours, n_items - 1)
    if auc_bins is not None and (isinstance(auc_bins, bool) or int(auc_bins) < 2):
        raise ValueError(f"auc_bins must be an integer >= 2 or None; got {auc_bins!r}")
    upper_rows, upper_cols = np.triu_indices(n_items, k=1)
    same = clusters[upper_rows] == clusters[upper_cols]
    auc = _pair_auc(S[upper_rows, upper_cols], same, auc_bins)
    return ClusterRecovery(auc=auc, neighbour_share=_top_neighbour_share(S, clusters, n_neighbours))


def _gram_cosines(G: NDArray[np.float64], what: str) -> NDArray[np.float64]:
    scale = np.sqrt(np.diag(G))
    zero = np.flatnonzero(scale == 0)
    if zero.size:
        raise ValueError(
            f"{zero.size} item(s) have all-zero {what} (first: item {zero[0]}); "
            "their cosine is undefined"
        )
    cos = G / scale[:, None] / scale[None, :]
    np.fill_diagonal(cos, 1.0)
    return np.clip(cos, -1.0, 1.0, out=cos)


def item_similarity_suite(
    X: Matrix,
    item_clusters: ArrayLike,
    *,
    lam1: float = 1e4,
    lam2: float = 100.0,
    k: int = 50,
) -> dict[str, NDArray[np.float64]]:
    """Every item-item similarity compared in chapter 6, for one data set.

    Objective 1 is shown under ``D = diag(f)^alpha`` (``f_i = 1/(1 + lam1/sigma_i^2)``)
    for ``alpha = 1/2, 0, -1/2``, and under a ``D`` that stretches only the last
    latent dimension of ``B`` a hundredfold. The remedies take cosines of the
    columns of the predictions ``X A B^T``, or fit on ``X`` with standardised
    columns rescaled to the same Frobenius norm as ``X`` (so ``lam`` keeps its scale).

    Parameters
    ----------
    X : array_like or scipy.sparse matrix of shape (n_users, n_items)
    item_clusters : array_like of shape (n_items,)
    lam1, lam2 : float
        Regularisation of objectives 1 and 2.
    k : int
        Embedding dimension.

    Returns
    -------
    dict of str to ndarray of shape (n_items, n_items)

    Examples
    --------
    >>> data = simulate_interactions(n_users=300, n_items=40, n_clusters=2, min_items=4)
    >>> suite = item_similarity_suite(data.X, data.item_clusters, lam1=10.0, lam2=3.0, k=5)
    >>> len(suite), suite["ground truth"].shape
    (11, (40, 40))
    """
    X = _check_matrix(X)
    clusters = _check_clusters(item_clusters, X.shape[1])
    G = gram(X)
    spectrum = _spectrum_from_gram(G)
    A1, B1 = fit_objective1(spectrum, lam1, k)
    A2, B2 = fit_objective2(spectrum, lam2, k)
    shrink = dropout_shrinkage(spectrum.singular_values[:k], lam1)
    stretch = np.ones(k)
    stretch[-1] = 0.01  # B D^{-1}: the last column of B grows 100-fold
    standardized = standardize_columns(X)
    standardized *= np.sqrt(np.trace(G)) / np.linalg.norm(standardized)
    standardized_spectrum = gram_spectrum(standardized)
    del standardized
    return {
        "ground truth": same_cluster_matrix(clusters),
        "raw data (columns of X)": _gram_cosines(G, "columns"),
        "obj. 1, α = +1/2 (B = V_k)": cosine_matrix(rescale(A1, B1, shrink**0.5)[1]),
        "obj. 1, α = 0 (A = B)": cosine_matrix(B1),
        "obj. 1, α = −1/2 (A = V_k)": cosine_matrix(rescale(A1, B1, shrink**-0.5)[1]),
        "obj. 1, D stretches one dimension": cosine_matrix(rescale(A1, B1, stretch)[1]),
        "obj. 2": cosine_matrix(B2),
        "remedy: columns of X A Bᵀ, obj. 1": prediction_item_cosines(X, A1, B1, gram_matrix=G),
        "remedy: columns of X A Bᵀ, obj. 2": prediction_item_cosines(X, A2, B2, gram_matrix=G),
        "remedy: standardised X, obj. 1 (α = 0)": cosine_matrix(
            fit_objective1(standardized_spectrum, lam1, k)[1]
        ),
        "remedy: standardised X, obj. 2": cosine_matrix(
            fit_objective2(standardized_spectrum, lam2, k)[1]
        ),
    }


# ---------------------------------------------------------------------------
# The simulated data of Section 4
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Interactions:
    """Simulated user-item data with planted item clusters.

    Attributes
    ----------
    X : scipy.sparse.csr_array of shape (n_users, n_items)
        0/1 interactions.
    item_clusters : ndarray of shape (n_items,)
        Cluster label ``0 .. n_clusters - 1`` of each item.
    item_popularity : ndarray of shape (n_items,)
        Baseline popularity ``p_i`` (sums to 1 within each cluster).
    cluster_probabilities : ndarray of shape (n_clusters,)
        Probability of an item falling in each cluster.
    cluster_exponents : ndarray of shape (n_clusters,)
        Power-law exponent ``beta_c`` of each cluster's popularity.
    user_preferences : ndarray of shape (n_users, n_clusters)
        ``p_uc``.
    items_per_user : ndarray of shape (n_users,)
        ``k_u``.
    """

    X: scipy.sparse.csr_array
    item_clusters: NDArray[np.int64]
    item_popularity: NDArray[np.float64]
    cluster_probabilities: NDArray[np.float64]
    cluster_exponents: NDArray[np.float64]
    user_preferences: NDArray[np.float64]
    items_per_user: NDArray[np.int64]


def _power_law_values(
    rng: np.random.Generator, size: int, exponent: float, form: str
) -> NDArray[np.float64]:
    """Power-law values ``v`` with ``v ~ r^(-exponent)`` (smallest value 1)."""
    if form == "rank":
        # Zipf over a random ranking: the r-th value is (size / r)^exponent.
        ranks = rng.permutation(size) + 1
        return (size / ranks) ** exponent
    # "sample": i.i.d. Pareto draws with the same tail, u^(-exponent), u ~ U(0, 1].
    return (1.0 - rng.random(size)) ** (-exponent)


def simulate_interactions(
    n_users: int = 20_000,
    n_items: int = 1_000,
    n_clusters: int = 5,
    *,
    seed: int = 0,
    cluster_concentration: float | None = 3.0,
    preference: Literal["dirichlet", "lognormal"] = "dirichlet",
    preference_concentration: float = 0.5,
    power_law: Literal["rank", "sample"] = "rank",
    exponent_range: tuple[float, float] = (0.25, 1.5),
    user_exponent: float = 0.5,
    min_items: int = 20,
) -> Interactions:
    r"""Simulate the clustered user-item data of Section 4 of Steck et al. (2024).

    1. Cluster probabilities ``p_c ~ Dirichlet(cluster_concentration)`` (equal
       probabilities if ``None``); each item joins cluster ``c`` with probability ``p_c``.
    2. Each cluster draws ``beta_c ~ Uniform(exponent_range)``; item popularity
       ``p_i`` follows a power law with exponent ``beta_c`` within its cluster.
    3. User preferences ``p_uc``: ``Dirichlet(preference_concentration)`` per user,
       or i.i.d. log-normal(0, 1).
    4. ``p_ui = p_{u,c(i)} p_i / sum_j p_{u,c(j)} p_j``.
    5. Items per user ``k_u = min(n_items, floor(min_items * v_u))`` with ``v_u`` a
       power law of exponent ``user_exponent``; the ``k_u`` items are drawn without
       replacement with probabilities ``p_ui`` (Gumbel top-k, exact).

    A "power law with exponent beta" is, with ``power_law="rank"``, the value
    ``(m / r)^beta`` of the item (user) of random rank ``r`` among ``m``; with
    ``power_law="sample"``, i.i.d. Pareto values ``u^{-beta}``, ``u ~ U(0, 1]``.

    Parameters
    ----------
    n_users, n_items, n_clusters : int
    seed : int
        Seed of every random draw.
    cluster_concentration : float or None
    preference : {"dirichlet", "lognormal"}
    preference_concentration : float
    power_law : {"rank", "sample"}
    exponent_range : (float, float)
    user_exponent : float
    min_items : int

    Returns
    -------
    Interactions

    Examples
    --------
    >>> data = simulate_interactions(n_users=200, n_items=50, n_clusters=3, min_items=5)
    >>> data.X.shape, int(data.X.max()), np.bincount(data.item_clusters).tolist()
    ((200, 50), 1, [14, 24, 12])
    >>> bool((np.asarray(data.X.sum(axis=1)) == data.items_per_user).all())
    True
    """
    for name, value in (("n_users", n_users), ("n_items", n_items), ("n_clusters", n_clusters)):
        if isinstance(value, bool) or not isinstance(value, Integral) or value < 1:
            raise ValueError(f"{name} must be a positive integer; got {value!r}")
    if n_clusters > n_items:
        raise ValueError(f"n_clusters={n_clusters} exceeds n_items={n_items}")
    if not 1 <= min_items <= n_items:
        raise ValueError(f"min_items must be between 1 and n_items={n_items}; got {min_items}")
    if preference not in ("dirichlet", "lognormal"):
        raise ValueError(f"preference must be 'dirichlet' or 'lognormal'; got {preference!r}")
    if power_law not in ("rank", "sample"):
        raise ValueError(f"power_law must be 'rank' or 'sample'; got {power_law!r}")
    low, high = exponent_range
    if not 0 <= low <= high:
        raise ValueError(f"exponent_range must satisfy 0 <= low <= high; got {exponent_range}")
    rng = np.random.default_rng(seed)

    if cluster_concentration is None:
        cluster_probabilities = np.full(n_clusters, 1.0 / n_clusters)
    else:
        cluster_probabilities = rng.dirichlet(np.full(n_clusters, float(cluster_concentration)))
    item_clusters = rng.choice(n_clusters, size=n_items, p=cluster_probabilities)
    cluster_exponents = rng.uniform(low, high, size=n_clusters)
    item_popularity = np.zeros(n_items)
    for c in range(n_clusters):
        members = np.flatnonzero(item_clusters == c)
        if members.size:
            values = _power_law_values(rng, members.size, cluster_exponents[c], power_law)
            item_popularity[members] = values / values.sum()

    if preference == "dirichlet":
        alpha = np.full(n_clusters, float(preference_concentration))
        user_preferences = rng.dirichlet(alpha, size=n_users)
    else:
        user_preferences = rng.lognormal(0.0, 1.0, size=(n_users, n_clusters))

    activity = _power_law_values(rng, n_users, user_exponent, power_law)
    items_per_user = np.minimum(n_items, np.floor(min_items * activity)).astype(np.int64)

    # Gumbel top-k: the k largest of log p_ui + Gumbel noise are a draw of k items
    # without replacement with probabilities p_ui (successive sampling).
    log_popularity = np.log(np.maximum(item_popularity, np.finfo(float).tiny))
    rows, cols = [], []
    chunk = 2_000
    for start in range(0, n_users, chunk):
        stop = min(start + chunk, n_users)
        preferences = np.maximum(user_preferences[start:stop], np.finfo(float).tiny)
        keys = np.log(preferences[:, item_clusters]) + log_popularity
        keys += rng.gumbel(size=keys.shape)
        counts = items_per_user[start:stop]
        sorted_keys = -np.sort(-keys, axis=1)
        thresholds = sorted_keys[np.arange(stop - start), counts - 1]
        chosen_rows, chosen_cols = np.nonzero(keys >= thresholds[:, None])
        rows.append(chosen_rows + start)
        cols.append(chosen_cols)
    rows_all = np.concatenate(rows)
    cols_all = np.concatenate(cols)
    X = scipy.sparse.csr_array(
        (np.ones(rows_all.size), (rows_all, cols_all)), shape=(n_users, n_items)
    )
    return Interactions(
        X=X,
        item_clusters=item_clusters,
        item_popularity=item_popularity,
        cluster_probabilities=cluster_probabilities,
        cluster_exponents=cluster_exponents,
        user_preferences=user_preferences,
        items_per_user=items_per_user,
    )
