r"""Linear matrix factorisation (chapter 6): closed forms, iterative fits, item cosines.

The model of Steck, Ekanadham and Kallus (2024) approximates a user-item matrix :math:`X`
by :math:`XAB^\top`, with :math:`A, B` of shape (items, :math:`k`); item embeddings are the
rows of :math:`B`. Objective 1 penalises :math:`\lambda \|AB^\top\|_F^2`, objective 2
:math:`\lambda (\|XA\|_F^2 + \|B\|_F^2)`. Both have closed forms in the singular values
and right singular vectors of :math:`X`, from the eigendecomposition of :math:`X^\top X`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse
from numpy.typing import ArrayLike, NDArray

from cosine_book._validation import as_float_scalar, as_int_scalar, as_labels, as_real_matrix
from cosine_book.portable import standard_normal
from cosine_book.similarity import cosine_matrix

__all__ = [
    "closed_form_check",
    "fit_alternating",
    "fit_closed_form",
    "fit_gradient_descent",
    "gram_spectrum",
    "item_similarity_suite",
    "prediction_item_cosines",
]

Factors = tuple[NDArray[np.float64], NDArray[np.float64]]


@dataclass(frozen=True)
class Spectrum:
    """Singular values of ``X`` (descending) and its right singular vectors (columns)."""

    singular_values: NDArray[np.float64]
    vectors: NDArray[np.float64]


def _gram(X: Any) -> NDArray[np.float64]:
    with np.errstate(over="ignore", invalid="ignore"):
        G = X.T @ X
    G = G.toarray() if scipy.sparse.issparse(G) else G
    if not np.isfinite(G).all():
        raise ValueError("X^T X overflows float64; divide X by a constant (and lam accordingly)")
    return G


def _spectrum(G: NDArray[np.float64]) -> Spectrum:
    eigenvalues, vectors = np.linalg.eigh(G)
    order = np.argsort(eigenvalues, kind="stable")[::-1]
    eigenvalues, vectors = eigenvalues[order], vectors[:, order]
    # Each vector's largest-magnitude entry positive (argmax takes the first of ties).
    signs = np.sign(vectors[np.argmax(np.abs(vectors), axis=0), np.arange(vectors.shape[1])])
    signs[signs == 0] = 1.0
    sigma = np.sqrt(np.clip(eigenvalues, 0.0, None))  # rounding may dip below 0
    return Spectrum(sigma, np.ascontiguousarray(vectors * signs))


def _standardized_spectrum(X: Any, G: NDArray[np.float64]) -> Spectrum:
    # Z^T Z of the standardised columns Z from G and the column sums s:
    # C = G - s s^T / n, (Z^T Z)_ij = n C_ij / sqrt(C_ii C_jj), constant columns 0.
    n_rows = X.shape[0]
    sums = np.asarray(X.sum(axis=0)).reshape(-1)
    centred = G - np.multiply.outer(sums, sums / n_rows)
    variances = np.diagonal(centred)
    scale = np.zeros_like(variances)
    scale[variances > 0] = 1.0 / np.sqrt(variances[variances > 0])
    G_Z = n_rows * centred * np.multiply.outer(scale, scale)
    np.copyto(G_Z, G_Z.T, where=np.tri(G_Z.shape[0], k=-1, dtype=bool))  # exact symmetry
    if np.trace(G_Z) == 0.0:
        raise ValueError("every column of X is constant; expected some varying columns")
    Z = _spectrum(G_Z)  # Z rescaled to the Frobenius norm of X: sigma times this ratio
    return Spectrum(Z.singular_values * math.sqrt(np.trace(G) / np.trace(G_Z)), Z.vectors)


def gram_spectrum(X: Any, *, standardize: bool = False) -> Spectrum:
    r"""Singular values and right singular vectors of ``X`` from :math:`X^\top X`.

    With ``standardize``, those of :math:`X` with every column centred and scaled to unit
    variance, rescaled to the Frobenius norm of :math:`X` (chapter 6's remedy 3).
    Used in chapter 6.

    Examples
    --------
    >>> gram_spectrum([[3.0, 0.0], [0.0, 2.0], [0.0, 0.0]]).singular_values.tolist()
    [3.0, 2.0]
    """
    X = as_real_matrix(X, "X", allow_sparse=True)
    G = _gram(X)
    return _standardized_spectrum(X, G) if standardize else _spectrum(G)


def _closed_form(spectrum: Spectrum, lam: float, k: int, objective: int) -> Factors:
    sigma, V = spectrum.singular_values[:k], spectrum.vectors[:, :k]
    if objective == 1:
        A = V * np.sqrt(sigma**2 / (sigma**2 + lam))  # f_i = sigma_i^2 / (sigma_i^2 + lam)
        return A, A.copy()
    kept = np.sqrt(np.clip(sigma - lam, 0.0, None))
    return V * np.divide(kept, sigma, out=np.zeros_like(kept), where=sigma > 0), V * kept


def fit_closed_form(X: Any, lam: float, k: int | None = None, objective: int = 1) -> Factors:
    r"""The closed-form minimiser ``(A, B)`` of objective 1 or 2. Used in chapter 6.

    .. math::

        \text{1: } \|X - XAB^\top\|_F^2 + \lambda \|AB^\top\|_F^2, \quad
        A = B = V_k \operatorname{diag}\bigl(\sigma_i^2 / (\sigma_i^2 + \lambda)\bigr)^{1/2};

        \text{2: } \|X - XAB^\top\|_F^2 + \lambda (\|XA\|_F^2 + \|B\|_F^2), \quad
        A = V_k \operatorname{diag}\bigl(\sqrt{(\sigma_i - \lambda)_+} / \sigma_i\bigr),\;
        B = V_k \operatorname{diag}\bigl(\sqrt{(\sigma_i - \lambda)_+}\bigr).

    ``X`` may be its :func:`gram_spectrum`; ``k`` defaults to the number of items.

    Examples
    --------
    >>> A, B = fit_closed_form(np.diag([5.0, 2.0, 1.0]), lam=1.5, k=3, objective=2)
    >>> (B**2).sum(axis=0).round(4).tolist()  # (sigma - lam)_+: soft-thresholded
    [3.5, 0.5, 0.0]
    """
    lam = as_float_scalar(lam, "lam", positive=True)
    objective = as_int_scalar(objective, "objective", minimum=1, maximum=2)
    spectrum = X if isinstance(X, Spectrum) else gram_spectrum(X)
    n_items = spectrum.singular_values.size
    k = n_items if k is None else as_int_scalar(k, "k", minimum=1, maximum=n_items)
    return _closed_form(spectrum, lam, k, objective)


def _loss(X: Any, A: Any, B: Any, lam: float, objective: int) -> float:
    XA = np.asarray(X @ A)
    fit = np.sum(((X.toarray() if scipy.sparse.issparse(X) else X) - XA @ B.T) ** 2)
    penalty = np.sum((A @ B.T) ** 2) if objective == 1 else np.sum(XA**2) + np.sum(B**2)
    return float(fit + lam * penalty)


def _alternating(G: Any, lam: float, k: int, objective: int, n_iter: int, seed: int) -> Factors:
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


def _checked(X: Any, lam: Any, k: Any, objective: Any) -> tuple[Any, float, int, int]:
    X = as_real_matrix(X, "X", allow_sparse=True)
    lam = as_float_scalar(lam, "lam", positive=True)
    k = as_int_scalar(k, "k", minimum=1, maximum=X.shape[1])
    return X, lam, k, as_int_scalar(objective, "objective", minimum=1, maximum=2)


def fit_alternating(
    X: Any, lam: float, k: int, objective: int = 1, *, n_iter: int = 500, seed: int = 0
) -> Factors:
    """Either objective by alternating exact least squares from a random start.

    Each sweep solves for ``A`` with ``B`` fixed, then for ``B``. Used in chapter 6.

    Examples
    --------
    >>> X = np.random.default_rng(0).random((30, 5))
    >>> A, B = fit_alternating(X, lam=0.5, k=2, n_iter=300)
    >>> A1, B1 = fit_closed_form(X, lam=0.5, k=2)
    >>> bool(np.allclose(A @ B.T, A1 @ B1.T, atol=1e-8))
    True
    """
    X, lam, k, objective = _checked(X, lam, k, objective)
    n_iter = as_int_scalar(n_iter, "n_iter", minimum=1)
    return _alternating(_gram(X), lam, k, objective, n_iter, as_int_scalar(seed, "seed", minimum=0))


@dataclass(frozen=True)
class ClosedFormCheck:
    """Largest gradient entry and smallest loss rise (over ``||X||_F^2``), gap to iterating."""

    gradient: float
    loss_rise: float
    iterative_gap: float


def closed_form_check(X: Any, lam: float, k: int, objective: int = 1) -> ClosedFormCheck:
    r"""Check a closed form: zero gradient, no better perturbation, the same as iterating.

    The gradient of objective 1 is :math:`(\nabla_W B, \nabla_W^\top A)`, :math:`\nabla_W =
    2(GW - G + \lambda W)`, :math:`G = X^\top X`, :math:`W = AB^\top`; then 30 perturbations
    each of size 1e-4, 1e-2 and 1, and 300 sweeps of :func:`fit_alternating`. Used in
    chapter 6.

    Examples
    --------
    >>> X = np.random.default_rng(0).random((30, 5))
    >>> check = closed_form_check(X, lam=0.5, k=2, objective=2)
    >>> bool(check.gradient < 1e-12 and check.loss_rise > 0 and check.iterative_gap < 1e-8)
    True
    """
    X, lam, k, objective = _checked(X, lam, k, objective)
    G = _gram(X)
    scale = float(np.trace(G))  # ||X||_F^2
    if scale == 0.0:
        raise ValueError("X is all zeros; expected some nonzero entries (the check divides by it)")
    A, B = _closed_form(_spectrum(G), lam, k, objective)
    best = _loss(X, A, B, lam, objective)
    rng = np.random.default_rng(0)
    rises = []
    for size in np.repeat([1e-4, 1e-2, 1.0], 30):
        noise_A, noise_B = (size * standard_normal(rng, M.shape) for M in (A, B))
        rises.append(_loss(X, A + noise_A, B + noise_B, lam, objective) - best)
    W = A @ B.T
    if objective == 1:
        grad_W = 2.0 * (G @ W - G + lam * W)
        gradients = (grad_W @ B, grad_W.T @ A)
    else:
        gradients = (2.0 * ((G @ W - G) @ B + lam * G @ A), 2.0 * ((W.T @ G - G) @ A + lam * B))
    A_iter, B_iter = _alternating(G, lam, k, objective, 300, 1)
    return ClosedFormCheck(
        gradient=max(float(np.abs(g).max()) for g in gradients) / scale,
        loss_rise=min(rises) / scale,
        iterative_gap=float(np.abs(A_iter @ B_iter.T - W).max()),
    )


def fit_gradient_descent(
    X: Any,
    lam: float,
    k: int,
    *,
    init: float = 1e-3,
    step: float = 0.2,
    n_steps: int = 5_000,
    seed: int = 0,
    optimizer: str = "sgd",
    weight_decay: float = 0.0,
) -> Factors:
    r"""Objective 1 by full-batch gradient descent in PyTorch from a small start.

    Minimises :math:`(\operatorname{tr} G - 2 \operatorname{tr}(GW) + \operatorname{tr}(W^\top
    (G + \lambda I) W)) / \operatorname{tr} G`, :math:`W = AB^\top`, :math:`G = X^\top X`, from
    entries :math:`\mathcal N(0, \text{init}^2)`: SGD without momentum at learning rate
    ``step`` :math:`\operatorname{tr} G / (\sigma_1^2 + \lambda)`, or Adam at ``step``;
    ``weight_decay`` as torch's. Float64 on one thread (the same sums on every machine).
    Used in chapter 6.

    Examples
    --------
    >>> X = np.kron(np.eye(2), np.ones((5, 3)))
    >>> A, B = fit_gradient_descent(X, 1.0, 2, n_steps=2000)
    >>> bool(np.linalg.norm(A.T @ A - B.T @ B) < 1e-4), (np.round(A @ B.T, 2)[0] + 0.0).tolist()
    (True, [0.31, 0.31, 0.31, 0.0, 0.0, 0.0])
    """
    import torch

    X, lam, k, _ = _checked(X, lam, k, 1)
    init = as_float_scalar(init, "init", positive=True)
    step = as_float_scalar(step, "step", positive=True)
    n_steps = as_int_scalar(n_steps, "n_steps", minimum=1)
    generator = torch.Generator().manual_seed(as_int_scalar(seed, "seed", minimum=0))
    if optimizer not in ("sgd", "adam"):
        raise ValueError(f"optimizer must be 'sgd' or 'adam'; got {optimizer!r}")
    weight_decay = as_float_scalar(weight_decay, "weight_decay", nonnegative=True)
    G = _gram(X)
    scale = float(np.trace(G))
    if scale == 0.0:
        raise ValueError("X is all zeros; gradient descent needs some nonzero entries")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        Gt = torch.tensor(G, dtype=torch.float64)
        M = Gt + lam * torch.eye(G.shape[0], dtype=torch.float64)
        shape = (G.shape[0], k)
        A = (init * torch.randn(shape, generator=generator, dtype=torch.float64)).requires_grad_()
        B = (init * torch.randn(shape, generator=generator, dtype=torch.float64)).requires_grad_()
        if optimizer == "adam":
            solver = torch.optim.Adam([A, B], lr=step, weight_decay=weight_decay)
        else:
            lr = step * scale / (float(np.linalg.eigvalsh(G)[-1]) + lam)
            solver = torch.optim.SGD([A, B], lr=lr, weight_decay=weight_decay)
        for _ in range(n_steps):
            solver.zero_grad()
            W = A @ B.T
            loss = (-2.0 * torch.trace(Gt @ W) + torch.sum(W * (M @ W))) / scale
            loss.backward()
            solver.step()
        return A.detach().numpy().copy(), B.detach().numpy().copy()
    finally:
        torch.set_num_threads(threads)


def _gram_cosines(G: NDArray[np.float64], what: str) -> NDArray[np.float64]:
    """Cosines ``G_ij / sqrt(G_ii G_jj)`` of the vectors with Gram matrix ``G``."""
    zero = np.flatnonzero(np.diagonal(G) <= 0)
    if zero.size:
        raise ValueError(f"{zero.size} item(s) have all-zero {what} (first: item {zero[0]})")
    scale = np.sqrt(np.diagonal(G))
    S = G / np.multiply.outer(scale, scale)
    np.copyto(S, S.T, where=np.tri(S.shape[0], k=-1, dtype=bool))  # exact symmetry
    np.fill_diagonal(S, 1.0)
    return np.clip(S, -1.0, 1.0, out=S)


def _prediction_cosines(A: Any, B: Any, G: NDArray[np.float64]) -> NDArray[np.float64]:
    W = A @ B.T
    return _gram_cosines(W.T @ G @ W, "predictions")


def prediction_item_cosines(X: Any, A: ArrayLike, B: ArrayLike) -> NDArray[np.float64]:
    r"""Cosines between the columns of the predictions :math:`XAB^\top` (remedy 2).

    From :math:`W^\top (X^\top X) W`, :math:`W = AB^\top`: the same under every rescaling.
    Used in chapter 6.

    Examples
    --------
    >>> X = np.array([[1.0, 1.0, 0.0], [0.0, 1.0, 1.0], [1.0, 0.0, 1.0]])
    >>> prediction_item_cosines(X, *fit_closed_form(X, lam=0.1)).round(3)[0].tolist()
    [1.0, 0.546, 0.546]
    """
    X = as_real_matrix(X, "X", allow_sparse=True)
    A, B = as_real_matrix(A, "A"), as_real_matrix(B, "B")
    if A.shape != B.shape or A.shape[0] != X.shape[1]:
        raise ValueError(
            f"A and B have shapes {A.shape} and {B.shape}; expected one row per item "
            f"({X.shape[1]}) and the same k"
        )
    return _prediction_cosines(A, B, _gram(X))


#: The four equally optimal rescalings of objective 1 that chapter 6 compares.
RESCALINGS = (
    "obj. 1, α = +1/2 (B = V_k)",
    "obj. 1, α = 0 (A = B)",
    "obj. 1, α = −1/2 (A = V_k)",
    "obj. 1, D stretches one dimension",
)


def item_similarity_suite(
    X: Any, item_clusters: ArrayLike, *, lam1: float = 1e4, lam2: float = 100.0, k: int = 50
) -> dict[str, NDArray[np.float64]]:
    r"""Every item-item similarity that chapter 6 compares, for one data set.

    Objective 1 (``lam1``) under :math:`D = \operatorname{diag}(f)^\alpha`, :math:`\alpha =
    1/2, 0, -1/2`, and a :math:`D` stretching the last column of :math:`B` 100-fold
    (``RESCALINGS``); objective 2 (``lam2``); the remedies: columns of :math:`XAB^\top`,
    and fits to standardised :math:`X`. Used in chapter 6.

    Examples
    --------
    >>> from cosine_book.simulation import make_clustered_interactions
    >>> data = make_clustered_interactions(n_users=300, n_items=40, n_clusters=2, min_items=4)
    >>> suite = item_similarity_suite(data.X, data.item_clusters, lam1=10.0, lam2=3.0, k=5)
    >>> len(suite), suite["ground truth"].shape
    (11, (40, 40))
    """
    X = as_real_matrix(X, "X", allow_sparse=True)
    index = as_labels(item_clusters, "item_clusters", X.shape[1])[1]
    lam1 = as_float_scalar(lam1, "lam1", positive=True)
    lam2 = as_float_scalar(lam2, "lam2", positive=True)
    k = as_int_scalar(k, "k", minimum=1, maximum=X.shape[1])
    G = _gram(X)
    spectrum, Z = _spectrum(G), _standardized_spectrum(X, G)
    A1, B1 = _closed_form(spectrum, lam1, k, 1)
    A2, B2 = _closed_form(spectrum, lam2, k, 2)
    sigma = spectrum.singular_values[:k]
    f = sigma**2 / (sigma**2 + lam1)
    if np.any(f == 0):
        raise ValueError(f"objective 1 shrinks dimension {np.argmin(f)} to 0; lower k or lam1")
    scales = (f**0.5, np.ones(k), f**-0.5, np.r_[np.ones(k - 1), 0.01])  # the d of D
    return {
        "ground truth": (index[:, None] == index[None, :]).astype(np.float64),
        "raw data (columns of X)": _gram_cosines(G, "columns"),
        **{label: cosine_matrix(B1 / d) for label, d in zip(RESCALINGS, scales, strict=True)},
        "obj. 2": cosine_matrix(B2),
        "remedy: columns of X A Bᵀ, obj. 1": _prediction_cosines(A1, B1, G),
        "remedy: columns of X A Bᵀ, obj. 2": _prediction_cosines(A2, B2, G),
        "remedy: standardised X, obj. 1 (α = 0)": cosine_matrix(_closed_form(Z, lam1, k, 1)[1]),
        "remedy: standardised X, obj. 2": cosine_matrix(_closed_form(Z, lam2, k, 2)[1]),
    }
