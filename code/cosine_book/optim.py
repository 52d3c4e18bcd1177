r"""Adam, a finite-difference gradient check and the exact truncation rule, in NumPy.

What remains here of the first edition's NumPy training code, for the two users
that still need it: chapter 7's small embedding model (:mod:`cosine_book.embeddings`
trains it with :class:`Adam` and checks its hand-written gradients with
:func:`finite_difference_gap`), and :func:`truncate_to_cosine`, the projection of
chapter 1's Theorem 1.1 in exact, scale-safe float64 arithmetic, which
:func:`cosine_book.training.truncate_tensor` applies to PyTorch tensors.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike, NDArray
from threadpoolctl import threadpool_limits

from cosine_book._validation import as_float_scalar, as_int_scalar, as_real_array

__all__ = ["Adam", "finite_difference_gap", "truncate_to_cosine"]

Params = dict[str, NDArray[np.float64]]

_EPS = float(np.finfo(np.float64).eps)


def _check_rate(learning_rate: float) -> None:
    as_float_scalar(learning_rate, "learning_rate", positive=True)


def _check_unit_interval(value: float, name: str) -> None:
    """``value`` in ``[0, 1)``."""
    if not as_float_scalar(value, name, nonnegative=True) < 1.0:
        raise ValueError(f"{name} must lie in [0, 1); got {value!r}")


@dataclass(frozen=True)
class Adam:
    r"""Adam (Kingma and Ba, 2015) with bias correction.

    With :math:`m \leftarrow \beta_1 m + (1-\beta_1) g`,
    :math:`v \leftarrow \beta_2 v + (1-\beta_2) g^2` and step count :math:`t`,
    the update is :math:`u = \hat m / (\sqrt{\hat v} + \epsilon)` where
    :math:`\hat m = m / (1-\beta_1^t)` and :math:`\hat v = v / (1-\beta_2^t)`.

    Examples
    --------
    The first update is the sign of the gradient (up to ``eps``):

    >>> optimizer = Adam(learning_rate=0.01)
    >>> state = optimizer.init({"w": np.zeros(2)})
    >>> grads = {"w": np.array([0.3, -2.0])}
    >>> update, state = optimizer.direction(grads, state)
    >>> np.round(update["w"], 6)
    array([ 1., -1.])
    """

    learning_rate: float = 0.01
    beta1: float = 0.9
    beta2: float = 0.999
    eps: float = 1e-8
    name: str = field(default="Adam", init=False)

    def __post_init__(self) -> None:
        _check_rate(self.learning_rate)
        _check_unit_interval(self.beta1, "beta1")
        _check_unit_interval(self.beta2, "beta2")
        as_float_scalar(self.eps, "eps", positive=True)

    def init(self, params: Mapping[str, NDArray[np.float64]]) -> dict:
        """Zero first and second moments, step count 0."""
        zeros = {name: np.zeros_like(value) for name, value in params.items()}
        return {"step": 0, "m": zeros, "v": {name: z.copy() for name, z in zeros.items()}}

    def direction(
        self, grads: Mapping[str, NDArray[np.float64]], state: dict
    ) -> tuple[Params, dict]:
        """Return the bias-corrected Adam update."""
        step = state["step"] + 1
        m = {name: self.beta1 * state["m"][name] + (1 - self.beta1) * grads[name] for name in grads}
        v = {
            name: self.beta2 * state["v"][name] + (1 - self.beta2) * grads[name] ** 2
            for name in grads
        }
        correction1 = 1 - self.beta1**step
        correction2 = 1 - self.beta2**step
        update = {
            name: (m[name] / correction1) / (np.sqrt(v[name] / correction2) + self.eps)
            for name in grads
        }
        return update, {"step": step, "m": m, "v": v}


def finite_difference_gap(
    params: Mapping[str, ArrayLike],
    loss_and_grad: Callable[[Params], tuple[float, Mapping[str, NDArray[np.float64]]]],
    *,
    n_entries: int = 40,
    step: float = 1e-6,
    seed: int = 0,
) -> float:
    r"""How far a hand-written gradient is from central differences, relative to its scale.

    The check behind
    :func:`cosine_book.embeddings.embedding_gradient_error`, for any model: for
    ``n_entries`` parameter entries drawn without replacement (seeded), the
    central difference :math:`(L(\theta + h e) - L(\theta - h e)) / 2h` against
    the gradient's entry; the largest absolute gap over the largest gradient
    entry. Runs with one BLAS thread (many small products).

    Parameters
    ----------
    params : mapping from str to array_like
        The parameters (float64 arrays; copied, never modified).
    loss_and_grad : callable
        ``loss_and_grad(params) -> (loss, gradients)``, the gradients a mapping
        with the keys and shapes of ``params``.
    n_entries : int
        Entries to check (at least 1; all of them if there are fewer).
    step : float
        The difference step :math:`h`, positive.
    seed : int
        Seed of the entries' draw, nonnegative.

    Returns
    -------
    float

    Examples
    --------
    >>> def quadratic(p):
    ...     return float(np.sum(p["w"] ** 2)), {"w": 2 * p["w"]}
    >>> bool(finite_difference_gap({"w": np.array([1.0, -2.0])}, quadratic) < 1e-8)
    True
    """
    n_entries = as_int_scalar(n_entries, "n_entries", minimum=1)
    step = as_float_scalar(step, "step", positive=True)
    seed = as_int_scalar(seed, "seed", minimum=0)
    if not isinstance(params, Mapping) or not params:
        raise ValueError("params must be a non-empty mapping from names to arrays")
    checked = {
        name: as_real_array(value, f"params[{name!r}]").astype(np.float64)
        for name, value in params.items()
    }
    return _finite_difference_gap(checked, loss_and_grad, n_entries, step, seed)


def _finite_difference_gap(
    params: Params,
    loss_and_grad: Callable[[Params], tuple[float, Mapping[str, NDArray[np.float64]]]],
    n_entries: int,
    step: float,
    seed: int,
) -> float:
    # Many small matrix products: one BLAS thread is much faster than several.
    with threadpool_limits(limits=1, user_api="blas"):
        _, grads = loss_and_grad(params)
        names = list(grads)
        sizes = np.array([grads[name].size for name in names])
        rng = np.random.default_rng(seed)
        total = int(sizes.sum())
        chosen = rng.choice(total, size=min(n_entries, total), replace=False)
        offsets = np.concatenate([[0], np.cumsum(sizes)])
        gradient_scale = max(float(np.max(np.abs(value))) for value in grads.values())
        worst = 0.0
        for flat in chosen:
            block = int(np.searchsorted(offsets, flat, side="right") - 1)
            name = names[block]
            index = np.unravel_index(int(flat - offsets[block]), grads[name].shape)
            shifted = {key: value.copy() for key, value in params.items()}
            shifted[name][index] += step
            loss_plus = loss_and_grad(shifted)[0]
            shifted[name][index] -= 2 * step
            loss_minus = loss_and_grad(shifted)[0]
            numeric = (loss_plus - loss_minus) / (2 * step)
            worst = max(worst, abs(numeric - float(grads[name][index])))
    return worst / max(gradient_scale, np.finfo(np.float64).tiny)


def truncate_to_cosine(update: ArrayLike, gradient: ArrayLike, threshold: float) -> NDArray:
    r"""The nearest vector to ``update`` whose cosine with ``gradient`` is at least ``threshold``.

    This is the Euclidean projection of :math:`u` (``update``) onto the closed
    convex cone
    :math:`K = \{v : \langle v, g\rangle \ge \tau \lVert v\rVert \lVert g\rVert\}`.
    with :math:`g` the ``gradient`` and :math:`\tau` the ``threshold``.
    Writing :math:`c = \cos(u, g)` and :math:`s = \sqrt{1-\tau^2}`:

    - if :math:`c \ge \tau`, :math:`u` is returned unchanged;
    - if :math:`-s < c < \tau`, the result lies on the cone's boundary ray
      :math:`d = \tau \hat g + s e` in the plane of :math:`u` and :math:`g`
      (:math:`e` is the unit vector along the part of :math:`u` orthogonal to
      :math:`g`), and equals :math:`\langle u, d\rangle d`; its cosine with
      :math:`g` is exactly :math:`\tau`;
    - if :math:`c \le -s`, :math:`u` lies in the polar cone and the nearest
      point of :math:`K` is the zero vector: the block does not move this step.

    Parameters
    ----------
    update, gradient : array_like
        Arrays of the same shape (any number of dimensions).
    threshold : float
        :math:`\tau` in :math:`[0, 1]`. (For negative thresholds the set is
        not convex and the nearest point is not unique.)

    Returns
    -------
    ndarray
        Same shape as ``update``, float64.

    Raises
    ------
    ValueError
        If the shapes differ, an input is not a finite real array (NaN, infinity,
        complex, masked, sparse, strings, ragged or empty), ``gradient`` is zero
        (the cosine constraint is then undefined) or ``threshold`` is outside
        :math:`[0, 1]`.

    Examples
    --------
    >>> truncate_to_cosine([0.0, 1.0], [1.0, 0.0], 0.6)
    array([0.48, 0.64])

    An update already inside the cone is returned unchanged, and one in the
    polar cone becomes zero:

    >>> truncate_to_cosine([2.0, 1.0], [1.0, 0.0], 0.6)
    array([2., 1.])
    >>> truncate_to_cosine([-1.0, 0.1], [1.0, 0.0], 0.6)
    array([0., 0.])
    """
    u = as_real_array(update, "update").astype(np.float64, copy=False)
    g = as_real_array(gradient, "gradient").astype(np.float64, copy=False)
    if u.shape != g.shape:
        raise ValueError(f"update has shape {u.shape} but gradient has {g.shape}; expected equal")
    return _truncate(u, g, _check_threshold(threshold))


def _check_threshold(threshold: float) -> float:
    return as_float_scalar(threshold, "threshold", interval=(0.0, 1.0))


def _unit_scaled(vector: NDArray[np.float64]) -> tuple[NDArray[np.float64], int]:
    """``vector / 2**e`` with its largest entry in ``[0.5, 1)`` (exact), and ``e``."""
    exponent = int(np.frexp(np.max(np.abs(vector)))[1])
    return np.ldexp(vector, -exponent), exponent


def _norm(vector: NDArray[np.float64]) -> float:
    """Euclidean norm as a pairwise NumPy sum (the same on every CPU, unlike BLAS)."""
    return float(np.sqrt(np.sum(vector * vector)))


def _truncate(u: NDArray[np.float64], g: NDArray[np.float64], threshold: float) -> NDArray:
    """:func:`truncate_to_cosine` for checked input."""
    # The projection scales with u and ignores the scale of g: work with both divided
    # by a power of two near their largest entry (exact), so that no norm underflows
    # or overflows.
    if not np.any(g):
        raise ValueError("gradient is zero; a cosine constraint with it is undefined")
    if not np.any(u):
        return u.copy()  # the zero vector belongs to the cone
    u_scaled, u_exponent = _unit_scaled(u)
    g_unit, _ = _unit_scaled(g)
    g_unit /= _norm(g_unit)
    along = float(np.sum(u_scaled * g_unit))  # coordinate of u along g
    across_vector = u_scaled - along * g_unit  # part of u orthogonal to g
    across = _norm(across_vector)
    # Rounding leaves a part across g of order eps * ||u|| even when u is parallel
    # to g; its direction is noise, so below that level u counts as parallel.
    if across <= (math.log2(u.size) + 5.0) * _EPS * _norm(u_scaled):
        across = 0.0
    sine = math.sqrt(1.0 - threshold**2)
    # cos(u, g) >= threshold, tested as across * threshold <= along * sine: well
    # conditioned even for a threshold near 1, where along ~ threshold * ||u||.
    if along >= 0.0 and threshold * across <= sine * along:
        return u.copy()
    # <u, d> for the boundary ray d = threshold * g_unit + sine * e.
    reach = threshold * along + sine * across
    if reach <= 0.0 or across == 0.0:
        return np.zeros_like(u)  # polar cone (includes u pointing straight against g)
    boundary = threshold * g_unit + sine * (across_vector / across)
    return np.ldexp(reach * boundary, u_exponent)
