r"""The exact truncation rule of chapter 1, in NumPy.

:func:`truncate_to_cosine` is the projection of chapter 1's Theorem 1.1 in exact,
scale-safe float64 arithmetic; :func:`cosine_book.training.truncate_tensor` applies
it to PyTorch tensors. (The first edition's NumPy training code is gone: the book
trains with PyTorch.)
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

from cosine_book._validation import as_float_scalar, as_real_array

__all__ = ["truncate_to_cosine"]

Params = dict[str, NDArray[np.float64]]

_EPS = float(np.finfo(np.float64).eps)


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
