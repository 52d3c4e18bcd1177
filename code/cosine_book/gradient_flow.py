r"""Objective 1 by plain gradient descent from a small start: the balancedness it keeps.

For any loss :math:`L(AB^\top)` of the product alone, gradient flow
:math:`\dot A = -\nabla L\, B`, :math:`\dot B = -\nabla L^\top A` conserves
:math:`A^\top A - B^\top B` (chapter 6 proves it). From a start near zero that
difference stays near zero, and balanced factors of a product :math:`W` have
:math:`BB^\top = (W^\top W)^{1/2}`: the item cosines are then fixed by the product, unlike
those of alternating least squares, which depend on its random start.

:func:`fit_gradient_descent` trains objective 1 with :class:`torch.optim.SGD` (no
momentum, float64, one thread) from :math:`\mathcal N(0, \text{init}^2)` factors, on the
Gram matrix :math:`G = X^\top X` (the loss is
:math:`\operatorname{tr} G - 2 \operatorname{tr}(GW) + \operatorname{tr}(W^\top (G + \lambda I) W)`,
divided by :math:`\operatorname{tr} G`). :func:`imbalance` measures
:math:`\lVert A^\top A - B^\top B \rVert_F`.

Used in chapter 6.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from cosine_book._validation import as_float_scalar, as_int_scalar, as_real_matrix
from cosine_book.factorization import gram

__all__ = ["fit_gradient_descent", "imbalance"]


def imbalance(A: ArrayLike, B: ArrayLike) -> float:
    r""":math:`\lVert A^\top A - B^\top B \rVert_F`, conserved by gradient flow on a loss of AB'.

    Used in chapter 6.

    Examples
    --------
    >>> imbalance([[1.0, 0.0], [0.0, 2.0]], [[2.0, 0.0], [0.0, 1.0]])
    4.242640687119285
    """
    A, B = as_real_matrix(A, "A"), as_real_matrix(B, "B")
    if A.shape[1] != B.shape[1]:
        raise ValueError(
            f"A and B need the same number of columns; got {A.shape[1]} and {B.shape[1]}"
        )
    return float(np.linalg.norm(A.T @ A - B.T @ B))


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
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    r"""Objective 1 by gradient descent (SGD, full batch, no momentum) from a small start.

    The learning rate is ``step`` times :math:`\operatorname{tr} G / (\sigma_1^2 + \lambda)`,
    so that the loss, divided by :math:`\operatorname{tr} G`, has curvature of order one.
    With ``optimizer="adam"``, :class:`torch.optim.Adam` runs instead with learning rate
    ``step``. ``weight_decay`` :math:`w` adds :math:`w` times each parameter to its
    gradient (torch's ``weight_decay``), i.e. the penalty
    :math:`\tfrac{w}{2}(\lVert A \rVert_F^2 + \lVert B \rVert_F^2)` on the scaled loss.
    The entries of both factors start as normal draws of standard deviation ``init``
    from a seeded :class:`torch.Generator`. Used in chapter 6.

    Examples
    --------
    >>> X = np.kron(np.eye(2), np.ones((5, 3)))
    >>> A, B = fit_gradient_descent(X, 1.0, 2, n_steps=2000)
    >>> bool(imbalance(A, B) < 1e-4), (np.round(A @ B.T, 2)[0] + 0.0).tolist()
    (True, [0.31, 0.31, 0.31, 0.0, 0.0, 0.0])
    """
    import torch

    G = gram(X)
    p = G.shape[0]
    lam = as_float_scalar(lam, "lam", positive=True)
    k = as_int_scalar(k, "k", minimum=1, maximum=p)
    init = as_float_scalar(init, "init", positive=True)
    step = as_float_scalar(step, "step", positive=True)
    n_steps = as_int_scalar(n_steps, "n_steps", minimum=1)
    if optimizer not in ("sgd", "adam"):
        raise ValueError(f"optimizer must be 'sgd' or 'adam'; got {optimizer!r}")
    weight_decay = float(weight_decay)
    if not np.isfinite(weight_decay) or weight_decay < 0:
        raise ValueError(f"weight_decay must be finite and >= 0; got {weight_decay}")
    generator = torch.Generator().manual_seed(as_int_scalar(seed, "seed", minimum=0))
    scale = float(np.trace(G))
    if scale <= 0:
        raise ValueError("X has no nonzero entry; gradient descent needs data")
    top = float(np.linalg.eigvalsh(G)[-1])
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # sums in the same order on every machine
    try:
        Gt = torch.tensor(G, dtype=torch.float64)
        M = Gt + lam * torch.eye(p, dtype=torch.float64)
        A, B = (
            (init * torch.randn(p, k, generator=generator, dtype=torch.float64)).requires_grad_()
            for _ in range(2)
        )
        if optimizer == "adam":
            solver = torch.optim.Adam([A, B], lr=step, weight_decay=weight_decay)
        else:
            lr = step * scale / (top + lam)
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
