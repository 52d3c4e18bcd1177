r"""Linear matrix factorisation (chapter 6): closed forms, rescaling freedom, cosines.

The model of Steck, Ekanadham and Kallus (2024) approximates a user-item matrix :math:`X`
by :math:`XAB^\top`, :math:`A, B` of shape (items, :math:`k`); item embeddings are the rows
of :math:`B`. Both objectives have closed forms in the singular values and right singular
vectors of :math:`X`, from the eigendecomposition of :math:`X^\top X` (:func:`gram_spectrum`).
Objective 1 only fixes :math:`AB^\top`: every :math:`(AD, BD^{-1})` is optimal too
(:func:`rescale`), but the cosines of the embeddings move with :math:`D`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse
from numpy.typing import ArrayLike, NDArray

from cosine_book._validation import (
    as_float_array,
    as_float_scalar,
    as_int_scalar,
    as_labels,
    as_real_matrix,
)
from cosine_book.cluster_recovery import ClusterRecovery, cluster_recovery
from cosine_book.portable import standard_normal
from cosine_book.similarity import cosine_matrix

__all__ = [
    "ClosedFormCheck",
    "RescalingSpread",
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
    "objective1_loss",
    "objective2_loss",
    "prediction_item_cosines",
    "rescale",
    "rescaling_spread",
    "standardized_gram",
]

Matrix = NDArray[Any] | scipy.sparse.sparray | scipy.sparse.spmatrix
Factors = tuple[NDArray[np.float64], NDArray[np.float64]]
_SPREAD_LABELS = (
    "obj. 1, α = +1/2 (B = V_k)",
    "obj. 1, α = 0 (A = B)",
    "obj. 1, α = −1/2 (A = V_k)",
    "obj. 1, D stretches one dimension",
)


def _check_matrix(X: Any, what: str = "X") -> Any:
    """``X`` as a finite float64 array or canonical CSR array (recommenders uses it too)."""
    matrix = as_real_matrix(X, what, allow_sparse=True)
    if scipy.sparse.issparse(matrix) and not matrix.has_canonical_format:
        matrix = matrix.copy()  # never reorder the caller's arrays
        matrix.sum_duplicates()
    return matrix


def _check_factors(A: Any, B: Any, n_items: int | None = None) -> Factors:
    A, B = as_real_matrix(A, "A"), as_real_matrix(B, "B")
    if A.shape != B.shape:
        raise ValueError(f"A has shape {A.shape}, B {B.shape}; expected the same shape")
    if n_items is not None and A.shape[0] != n_items:
        raise ValueError(f"A and B have {A.shape[0]} rows; expected one per item ({n_items})")
    return A, B


@dataclass(frozen=True)
class Spectrum:
    r"""Singular values :math:`\sigma_1 \ge \dots \ge 0` and right singular vectors (columns)."""

    singular_values: NDArray[np.float64]
    vectors: NDArray[np.float64]


def _gram(X: Any) -> NDArray[np.float64]:
    with np.errstate(over="ignore", invalid="ignore"):  # X.T @ X: the symmetric BLAS kernel
        G = np.asarray((X.T @ X).toarray()) if scipy.sparse.issparse(X) else X.T @ X
    if not np.isfinite(G).all():
        raise ValueError("X^T X overflows float64; divide X by a constant (and lam accordingly)")
    return G


def _spectrum(G: NDArray[np.float64]) -> Spectrum:
    eigenvalues, vectors = np.linalg.eigh(G)
    order = np.argsort(eigenvalues, kind="stable")[::-1]  # ties: LAPACK's order reversed
    eigenvalues, vectors = eigenvalues[order], vectors[:, order]
    # Each vector's largest-magnitude entry positive (argmax takes the first of ties).
    signs = np.sign(vectors[np.argmax(np.abs(vectors), axis=0), np.arange(vectors.shape[1])])
    signs[signs == 0] = 1.0
    sigma = np.sqrt(np.clip(eigenvalues, 0.0, None))  # rounding may dip below 0
    return Spectrum(sigma, np.ascontiguousarray(vectors * signs))


def gram(X: Matrix) -> NDArray[np.float64]:
    r"""The item Gram matrix :math:`X^\top X`, dense, of a dense or sparse ``X`` (benchmarks).

    Examples
    --------
    >>> gram([[1, 0], [1, 1]]).tolist()
    [[2.0, 1.0], [1.0, 1.0]]
    """
    return _gram(_check_matrix(X))


def gram_spectrum(X: Matrix) -> Spectrum:
    r"""Singular values and right singular vectors of ``X`` from :math:`X^\top X` (chapter 6).

    Examples
    --------
    >>> gram_spectrum([[3.0, 0.0], [0.0, 2.0], [0.0, 0.0]]).singular_values.tolist()
    [3.0, 2.0]
    """
    return _spectrum(_gram(_check_matrix(X)))


def _shrinkage(sigma: NDArray[np.float64], lam: float) -> NDArray[np.float64]:
    squares = sigma**2
    return np.divide(squares, squares + lam, out=np.zeros_like(squares), where=squares > 0)


def dropout_shrinkage(singular_values: ArrayLike, lam: float) -> NDArray[np.float64]:
    r"""Shrinkage :math:`f_i = \sigma_i^2 / (\sigma_i^2 + \lambda)` of objective 1 (chapter 6).

    Examples
    --------
    >>> dropout_shrinkage([10.0, 1.0, 0.0], lam=1.0).round(4).tolist()
    [0.9901, 0.5, 0.0]
    """
    lam = as_float_scalar(lam, "lam", positive=True)
    sigma = as_float_array(singular_values, "singular_values", ndim=1)
    if np.any(sigma < 0):
        raise ValueError(f"singular_values has a negative entry ({sigma.min()}); expected >= 0")
    return _shrinkage(sigma, lam)


def _objective1(spectrum: Spectrum, lam: float, k: int) -> Factors:
    A = spectrum.vectors[:, :k] * np.sqrt(_shrinkage(spectrum.singular_values[:k], lam))
    return A, A.copy()


def _objective2(spectrum: Spectrum, lam: float, k: int) -> Factors:
    sigma, V = spectrum.singular_values[:k], spectrum.vectors[:, :k]
    kept = np.sqrt(np.clip(sigma - lam, 0.0, None))
    return V * np.divide(kept, sigma, out=np.zeros_like(kept), where=sigma > 0), V * kept


def fit_objective1(X: Matrix | Spectrum, lam: float, k: int | None = None) -> Factors:
    r"""The symmetric closed-form minimiser of objective 1 (chapter 6).

    .. math::

        \min_{A, B}\; \|X - XAB^\top\|_F^2 + \lambda \|AB^\top\|_F^2, \qquad
        A = B = V_k \, \mathrm{diag}\bigl(\sigma_i^2 / (\sigma_i^2 + \lambda)\bigr)^{1/2}.

    ``X`` may be its :class:`Spectrum`; ``k`` defaults to ``n_items``.

    Examples
    --------
    >>> A, B = fit_objective1([[1.0, 1.0, 0.0], [0.0, 1.0, 1.0]], lam=0.5, k=2)
    >>> A.shape, bool(np.array_equal(A, B))
    ((3, 2), True)
    """
    lam = as_float_scalar(lam, "lam", positive=True)
    spectrum = X if isinstance(X, Spectrum) else gram_spectrum(X)
    n_values = spectrum.singular_values.size
    k = n_values if k is None else as_int_scalar(k, "k", minimum=1, maximum=n_values)
    return _objective1(spectrum, lam, k)


def fit_objective2(X: Matrix | Spectrum, lam: float, k: int) -> Factors:
    r"""A closed-form minimiser of objective 2 (chapter 6), unique up to a rotation.

    .. math::

        \min_{A, B}\; \|X - XAB^\top\|_F^2 + \lambda \bigl(\|XA\|_F^2 + \|B\|_F^2\bigr),
        \quad A = V_k \mathrm{diag}\Bigl(\frac{\sqrt{(\sigma_i - \lambda)_+}}{\sigma_i}\Bigr),
        \quad B = V_k \mathrm{diag}\bigl(\sqrt{(\sigma_i - \lambda)_+}\bigr).

    Examples
    --------
    >>> A, B = fit_objective2(np.diag([5.0, 2.0, 1.0]), lam=1.5, k=3)
    >>> (B**2).sum(axis=0).round(4).tolist()  # (sigma - lam)_+: soft-thresholded
    [3.5, 0.5, 0.0]
    """
    lam = as_float_scalar(lam, "lam", positive=True)
    spectrum = X if isinstance(X, Spectrum) else gram_spectrum(X)
    k = as_int_scalar(k, "k", minimum=1, maximum=spectrum.singular_values.size)
    return _objective2(spectrum, lam, k)


def _rescale(A: NDArray[np.float64], B: NDArray[np.float64], d: NDArray[np.float64]) -> Factors:
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        A_D, B_D = A * d, B / d
    for name, M in (("A diag(d)", A_D), ("B diag(1/d)", B_D)):
        if not np.isfinite(M).all():  # also for d_i = 0: D must be invertible
            raise ValueError(f"{name} overflows float64; expected nonzero d that keep it finite")
    return A_D, B_D


def rescale(A: ArrayLike, B: ArrayLike, d: ArrayLike) -> Factors:
    r"""Rescale the latent dimensions: :math:`(AD, BD^{-1})`, :math:`D = \mathrm{diag}(d)`.

    Chapter 6: :math:`AB^\top`, hence every prediction, is unchanged.

    Examples
    --------
    >>> A_D, B_D = rescale([[1.0, 2.0], [3.0, 4.0]], [[1.0, 2.0], [3.0, 4.0]], [2.0, 0.5])
    >>> A_D.tolist(), B_D.tolist()
    ([[2.0, 1.0], [6.0, 2.0]], [[0.5, 4.0], [1.5, 8.0]])
    """
    A, B = _check_factors(A, B)
    d = as_float_array(d, "d", ndim=1)
    if d.shape != (A.shape[1],):
        raise ValueError(f"d has shape {d.shape}; expected one scale per latent dimension")
    return _rescale(A, B, d)


def _loss(X: Any, A: Any, B: Any, lam: float, objective: int) -> float:
    with np.errstate(over="ignore", invalid="ignore"):
        XA = np.asarray(X @ A)
        fit = np.sum(((X.toarray() if scipy.sparse.issparse(X) else X) - XA @ B.T) ** 2)
        penalty = np.sum((A @ B.T) ** 2) if objective == 1 else np.sum(XA**2) + np.sum(B**2)
        value = float(fit + lam * penalty)
    if not math.isfinite(value):
        raise ValueError(f"objective {objective} loss overflows float64; divide X by a constant")
    return value


def _checked_loss(X: Any, A: Any, B: Any, lam: Any, objective: int) -> float:
    lam = as_float_scalar(lam, "lam", positive=True)
    X = _check_matrix(X)
    return _loss(X, *_check_factors(A, B, X.shape[1]), lam, objective)


def objective1_loss(X: Matrix, A: ArrayLike, B: ArrayLike, lam: float) -> float:
    r"""Objective 1 (chapter 6): :math:`\|X - XAB^\top\|_F^2 + \lambda \|AB^\top\|_F^2`.

    Examples
    --------
    >>> objective1_loss(np.eye(2), 0.5 * np.eye(2), np.eye(2), lam=1.0)
    1.0
    """
    return _checked_loss(X, A, B, lam, 1)


def objective2_loss(X: Matrix, A: ArrayLike, B: ArrayLike, lam: float) -> float:
    r"""Objective 2 (chapter 6): :math:`\|X - XAB^\top\|_F^2 + \lambda(\|XA\|_F^2 + \|B\|_F^2)`.

    Examples
    --------
    >>> objective2_loss(np.eye(2), 0.5 * np.eye(2), np.eye(2), lam=1.0)
    3.0
    """
    return _checked_loss(X, A, B, lam, 2)


def _alternating(X: Any, lam: float, k: int, objective: int, n_iter: int, seed: int) -> Factors:
    G = _gram(X)
    n_items = G.shape[0]
    rng = np.random.default_rng(seed)
    A = standard_normal(rng, (n_items, k)) / np.sqrt(n_items)
    B = standard_normal(rng, (n_items, k)) / np.sqrt(n_items)
    # (G + lam I)^-1 G, once: the A-step of objective 1 multiplies by it.
    ridge = np.linalg.solve(G + lam * np.eye(n_items), G) if objective == 1 else G
    for _ in range(n_iter):  # each step solves dL/dA = 0, then dL/dB = 0
        if objective == 1:
            A = ridge @ B @ np.linalg.pinv(B.T @ B)  # (G + lam I) A (B^T B) = G B
            GA = G @ A
            B = GA @ np.linalg.pinv(A.T @ GA + lam * (A.T @ A))  # B A^T (G + lam I) A = G A
        else:
            A = B @ np.linalg.inv(B.T @ B + lam * np.eye(k))  # G (A (B^T B + lam I) - B) = 0
            B = G @ A @ np.linalg.inv(A.T @ G @ A + lam * np.eye(k))  # B (A^T G A + lam I) = G A
    return A, B


def _check_fit(X: Any, lam: Any, k: Any, objective: Any, n_iter: Any, seed: Any) -> tuple:
    objective = as_int_scalar(objective, "objective", minimum=1, maximum=2)
    lam = as_float_scalar(lam, "lam", positive=True)
    X = _check_matrix(X)
    k = as_int_scalar(k, "k", minimum=1, maximum=X.shape[1])
    n_iter = as_int_scalar(n_iter, "n_iter", minimum=1)
    return X, lam, k, objective, n_iter, as_int_scalar(seed, "seed", minimum=0)


def fit_alternating(
    X: Matrix, lam: float, k: int, objective: int = 1, *, n_iter: int = 500, seed: int = 0
) -> Factors:
    """Fit either objective by alternating exact least squares from a random start (chapter 6).

    Examples
    --------
    >>> X = np.random.default_rng(0).random((30, 5))
    >>> A, B = fit_alternating(X, lam=0.5, k=2, n_iter=300)
    >>> A1, B1 = fit_objective1(X, lam=0.5, k=2)
    >>> bool(np.allclose(A @ B.T, A1 @ B1.T, atol=1e-8))
    True
    """
    return _alternating(*_check_fit(X, lam, k, objective, n_iter, seed))


@dataclass(frozen=True)
class ClosedFormCheck:
    """Largest gradient entry and smallest loss rise (over ``||X||_F^2``), gap to iterating."""

    gradient: float
    loss_rise: float
    iterative_gap: float


def closed_form_check(
    X: Matrix, lam: float, k: int, objective: int = 1, *, n_perturbations: int = 30, seed: int = 0
) -> ClosedFormCheck:
    r"""Check a closed form: zero gradient, no better perturbation, same as iterating (chapter 6).

    The gradient of objective 1 is :math:`(\nabla_W B, \nabla_W^\top A)`, :math:`\nabla_W =
    2(GW - G + \lambda W)`, :math:`G = X^\top X`, :math:`W = AB^\top`; then ``n_perturbations``
    draws of size 1e-4, 1e-2, 1, and 300 sweeps of :func:`fit_alternating`.

    Examples
    --------
    >>> X = np.random.default_rng(0).random((30, 5))
    >>> check = closed_form_check(X, lam=0.5, k=2, objective=2, n_perturbations=5)
    >>> bool(check.gradient < 1e-12 and check.loss_rise > 0 and check.iterative_gap < 1e-8)
    True
    """
    X, lam, k, objective, n_iter, seed = _check_fit(X, lam, k, objective, 300, seed)
    n_perturbations = as_int_scalar(n_perturbations, "n_perturbations", minimum=1)
    data = X.data if scipy.sparse.issparse(X) else X
    scale = float(np.sum(data * data))
    if scale == 0.0:
        raise ValueError("X is all zeros; expected some nonzero entries (the check divides by it)")
    A, B = (_objective1 if objective == 1 else _objective2)(_spectrum(_gram(X)), lam, k)
    best = _loss(X, A, B, lam, objective)
    rng = np.random.default_rng(seed)
    rises = []
    for size in np.repeat([1e-4, 1e-2, 1.0], n_perturbations):
        noise_A, noise_B = (size * standard_normal(rng, M.shape) for M in (A, B))
        rises.append(_loss(X, A + noise_A, B + noise_B, lam, objective) - best)
    G, W = _gram(X), A @ B.T
    if objective == 1:
        grad_W = 2.0 * (G @ W - G + lam * W)
        gradients = (grad_W @ B, grad_W.T @ A)
    else:
        gradients = (2.0 * ((G @ W - G) @ B + lam * G @ A), 2.0 * ((W.T @ G - G) @ A + lam * B))
    A_iter, B_iter = _alternating(X, lam, k, objective, n_iter, seed + 1)
    return ClosedFormCheck(
        gradient=max(float(np.abs(g).max()) for g in gradients) / scale,
        loss_rise=min(rises) / scale,
        iterative_gap=float(np.abs(A_iter @ B_iter.T - W).max()),
    )


def _symmetric(S: NDArray[np.float64]) -> NDArray[np.float64]:
    """The upper triangle mirrored (exact symmetry), unit diagonal, clipped to [-1, 1]."""
    np.copyto(S, S.T, where=np.tri(S.shape[0], k=-1, dtype=bool))
    np.fill_diagonal(S, 1.0)
    return np.clip(S, -1.0, 1.0, out=S)


def _gram_cosines(G: NDArray[np.float64], what: str) -> NDArray[np.float64]:
    """Cosines ``G_ij / sqrt(G_ii G_jj)`` of the vectors whose Gram matrix is ``G``."""
    zero = np.flatnonzero(np.diagonal(G) <= 0)
    if zero.size:
        raise ValueError(f"{zero.size} item(s) have all-zero {what} (first: item {zero[0]})")
    scale = np.sqrt(np.diagonal(G))
    return _symmetric(G / np.multiply.outer(scale, scale))


def _prediction_cosines(A: Any, B: Any, G: NDArray[np.float64]) -> NDArray[np.float64]:
    W = A @ B.T
    return _gram_cosines(W.T @ G @ W, "predictions")


def prediction_item_cosines(X: Matrix, A: ArrayLike, B: ArrayLike) -> NDArray[np.float64]:
    r"""Cosines between the columns of the predictions :math:`XAB^\top` (chapter 6's remedy).

    From :math:`W^\top (X^\top X) W`, :math:`W = AB^\top`: the same for every rescaling.

    Examples
    --------
    >>> X = np.array([[1.0, 1.0, 0.0], [0.0, 1.0, 1.0], [1.0, 0.0, 1.0]])
    >>> prediction_item_cosines(X, *fit_objective1(X, lam=0.1)).round(3)[0].tolist()
    [1.0, 0.546, 0.546]
    """
    X = _check_matrix(X)
    A, B = _check_factors(A, B, X.shape[1])
    return _prediction_cosines(A, B, _gram(X))


def _standardized_gram(X: Any, G: NDArray[np.float64]) -> tuple[NDArray[np.float64], float]:
    # Z^T Z of the standardised columns of X, from G = X^T X: with the column sums s,
    # C = G - s s^T / n and Z^T Z = n C_ij / sqrt(C_ii C_jj). Also tr G / tr Z^T Z.
    n_rows = X.shape[0]
    sums = np.asarray(X.sum(axis=0)).reshape(-1)
    high, low = X.max(axis=0), X.min(axis=0)
    if scipy.sparse.issparse(X):
        high, low = high.toarray().reshape(-1), low.toarray().reshape(-1)
    centred = G - np.multiply.outer(sums, sums / n_rows)
    varying = (high > low) & (np.diagonal(centred) > 0)
    scale = np.where(varying, 1.0 / np.sqrt(np.where(varying, np.diagonal(centred), 1.0)), 0.0)
    G_Z = n_rows * centred * np.multiply.outer(scale, scale)
    np.copyto(G_Z, G_Z.T, where=np.tri(G_Z.shape[0], k=-1, dtype=bool))
    trace_Z = float(np.sum(np.diagonal(G_Z)))
    if trace_Z == 0.0:
        raise ValueError("every column of X is constant; expected some varying columns")
    return G_Z, float(np.sum(np.diagonal(G))) / trace_Z


def standardized_gram(X: Matrix) -> NDArray[np.float64]:
    r"""Gram matrix :math:`Z^\top Z` of the standardised columns of ``X`` (chapter 6's remedy).

    Columns centred and scaled to unit variance (constant ones to zero), :math:`Z`
    rescaled to the Frobenius norm of ``X``; the dense :math:`Z` is never formed.

    Examples
    --------
    >>> X = np.array([[1.0, 0.0], [0.0, 0.0], [1.0, 3.0]])
    >>> Z = (X - X.mean(axis=0)) / X.std(axis=0) * np.sqrt(11 / 6)  # ||X|| / ||Z||
    >>> bool(np.allclose(standardized_gram(X), Z.T @ Z))
    True
    """
    X = _check_matrix(X)
    G_Z, ratio = _standardized_gram(X, _gram(X))
    return G_Z * ratio


def _objective1_rescalings(spectrum: Spectrum, lam: float, k: int, name: str) -> tuple:
    """Objective 1's factors and the ``d`` of ``_SPREAD_LABELS``, which divide by ``f``."""
    A, B = _objective1(spectrum, lam, k)
    f = _shrinkage(spectrum.singular_values[:k], lam)
    if np.any(f == 0):
        first = int(np.argmax(f == 0))
        raise ValueError(f"objective 1 shrinks dimension {first} to 0 (f = 0); lower k or {name}")
    stretch = np.r_[np.ones(k - 1), 0.01]  # B D^-1: the last column of B grows 100-fold
    return A, B, (f**0.5, np.ones(k), f**-0.5, stretch)


def item_similarity_suite(
    X: Matrix, item_clusters: ArrayLike, *, lam1: float = 1e4, lam2: float = 100.0, k: int = 50
) -> dict[str, NDArray[np.float64]]:
    r"""Every item-item similarity that chapter 6 compares, for one data set.

    Objective 1 (``lam1``) under :math:`D = \mathrm{diag}(f)^\alpha`, :math:`\alpha = 1/2,
    0, -1/2`, and a :math:`D` stretching one column of :math:`B`; objective 2 (``lam2``);
    the remedies: columns of :math:`XAB^\top`, or fits on :func:`standardized_gram`.

    Examples
    --------
    >>> from cosine_book.simulation import make_clustered_interactions
    >>> data = make_clustered_interactions(n_users=300, n_items=40, n_clusters=2, min_items=4)
    >>> suite = item_similarity_suite(data.X, data.item_clusters, lam1=10.0, lam2=3.0, k=5)
    >>> len(suite), suite["ground truth"].shape
    (11, (40, 40))
    """
    X = _check_matrix(X)
    index = as_labels(item_clusters, "item_clusters", X.shape[1])[1]
    lam1 = as_float_scalar(lam1, "lam1", positive=True)
    lam2 = as_float_scalar(lam2, "lam2", positive=True)
    k = as_int_scalar(k, "k", minimum=1, maximum=X.shape[1])
    G = _gram(X)
    spectrum = _spectrum(G)
    A1, B1, rescalings = _objective1_rescalings(spectrum, lam1, k, "lam1")
    A2, B2 = _objective2(spectrum, lam2, k)
    G_Z, ratio = _standardized_gram(X, G)
    Z = _spectrum(G_Z)  # of Z rescaled to the norm of X: singular values times sqrt(ratio)
    Z = Spectrum(Z.singular_values * math.sqrt(ratio), Z.vectors)
    rescaled = zip(_SPREAD_LABELS, rescalings, strict=True)
    return {
        "ground truth": (index[:, None] == index[None, :]).astype(np.float64),
        "raw data (columns of X)": _gram_cosines(G, "columns"),
        **{label: cosine_matrix(_rescale(A1, B1, d)[1]) for label, d in rescaled},
        "obj. 2": cosine_matrix(B2),
        "remedy: columns of X A Bᵀ, obj. 1": _prediction_cosines(A1, B1, G),
        "remedy: columns of X A Bᵀ, obj. 2": _prediction_cosines(A2, B2, G),
        "remedy: standardised X, obj. 1 (α = 0)": cosine_matrix(_objective1(Z, lam1, k)[1]),
        "remedy: standardised X, obj. 2": cosine_matrix(_objective2(Z, lam2, k)[1]),
    }


@dataclass(frozen=True)
class RescalingSpread:
    """AUC, top-neighbour share and mean cosine under each rescaling in ``labels``."""

    labels: tuple[str, ...]
    auc: NDArray[np.float64]
    neighbour_share: NDArray[np.float64]
    mean_cosine: NDArray[np.float64]


def rescaling_spread(
    X: Matrix, item_clusters: ArrayLike, *, lam: float = 1e4, k: int = 50, n_neighbours: int = 10
) -> RescalingSpread:
    """Score objective 1's item cosines under four equally optimal rescalings (chapter 6).

    The objective 1 rows of :func:`item_similarity_suite`, scored by
    :func:`cosine_book.cluster_recovery.cluster_recovery`, and their mean cosine.

    Examples
    --------
    >>> from cosine_book.simulation import make_clustered_interactions
    >>> data = make_clustered_interactions(n_users=300, n_items=40, n_clusters=2, min_items=4)
    >>> spread = rescaling_spread(data.X, data.item_clusters, lam=10.0, k=5, n_neighbours=3)
    >>> spread.auc.round(2).tolist(), spread.mean_cosine.round(2).tolist()
    ([0.85, 0.86, 0.87, 0.75], [0.38, 0.4, 0.41, 0.03])
    """
    X = _check_matrix(X)
    n_items = X.shape[1]
    index = as_labels(item_clusters, "item_clusters", n_items)[1]
    lam = as_float_scalar(lam, "lam", positive=True)
    k = as_int_scalar(k, "k", minimum=1, maximum=n_items)
    counts = np.bincount(index)
    if counts.size < 2 or counts.max() < 2:
        raise ValueError("item_clusters needs both same-cluster and different-cluster pairs")
    n_neighbours = as_int_scalar(n_neighbours, "n_neighbours", minimum=1, maximum=n_items - 1)
    A1, B1, rescalings = _objective1_rescalings(_spectrum(_gram(X)), lam, k, "lam")
    scores = []
    for d in rescalings:
        S = cosine_matrix(_rescale(A1, B1, d)[1])
        recovery = cluster_recovery(S, index, n_neighbours=n_neighbours)
        level = (float(np.sum(S)) - n_items) / (n_items * (n_items - 1))
        scores.append((recovery.auc, recovery.neighbour_share, level))
    auc, share, level = (np.array(column) for column in zip(*scores, strict=True))
    return RescalingSpread(_SPREAD_LABELS, auc, share, level)


@dataclass(frozen=True)
class RescalingUpdate:
    """Cosines and their recovery under one rescaling, from the widget's ``rescaling_update``."""

    cosines: NDArray[np.float64]
    recovery: ClusterRecovery
    mean_cosine: float
    max_prediction_change: float
    lam: float
    alpha: float
    reference_lam: float


def __getattr__(name: str) -> Any:
    # Chapter 6 imports its widget's state functions from here; they live with the widget.
    if name in ("RescalingState", "prepare_rescaling_state", "rescaling_update"):
        from cosine_book.widgets import factorization as widget

        return getattr(widget, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
