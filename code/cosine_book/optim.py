r"""A small model, three optimizers and the update/gradient cosines of a training run.

Chapter 1 trains a multilayer perceptron on the handwritten digits and watches,
at every step, the cosine between the optimizer's update and the gradient: per
parameter tensor (*local*) and for the whole model (*global*). This module holds
everything that run needs, in NumPy only:

- the model: :func:`init_mlp`, :func:`mlp_loss_and_grad` (exact backpropagation),
  :func:`mlp_predict`;
- the optimizers :class:`SGD`, :class:`Momentum` (heavy ball) and :class:`Adam`,
  each a pure ``direction(grads, state) -> (update, state)`` map, with the step
  ``theta <- theta - learning_rate * update``;
- the truncation rule :func:`truncate_to_cosine` (the nearest vector whose cosine
  with the gradient is at least ``threshold``) and :func:`truncate_update`, which
  applies it tensor by tensor;
- :func:`train`, which runs the loop and records a :class:`TrainingRun`, and
  :func:`run_grid`, which trains the chapter's optimizers (:func:`book_optimizers`)
  once per truncation threshold;
- :func:`max_gradient_error`, a finite-difference check of the backpropagation.

Parameters, gradients and updates are dictionaries ``name -> array`` in the fixed
order ``W1, b1, W2, b2``, so ``cosine_book.similarity.block_cosines`` reads
them as named blocks.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
from numpy.typing import ArrayLike, NDArray
from threadpoolctl import threadpool_limits

from cosine_book.similarity import block_cosines

__all__ = [
    "SGD",
    "Adam",
    "Momentum",
    "Optimizer",
    "TrainingRun",
    "book_optimizers",
    "init_mlp",
    "max_gradient_error",
    "mlp_loss_and_grad",
    "mlp_predict",
    "run_grid",
    "train",
    "truncate_to_cosine",
    "truncate_update",
]

Params = dict[str, NDArray[np.float64]]


class DigitsLike(Protocol):
    """A train/test split such as ``cosine_book.datasets.DigitsSplit``."""

    x_train: NDArray[np.float64]
    x_test: NDArray[np.float64]
    y_train: NDArray[np.int64]
    y_test: NDArray[np.int64]


#: Names of the model's parameter tensors, in the order every record uses.
PARAMETER_NAMES: tuple[str, ...] = ("W1", "b1", "W2", "b2")


# --------------------------------------------------------------------------- model


def init_mlp(n_inputs: int = 64, n_hidden: int = 32, n_classes: int = 10, seed: int = 0) -> Params:
    """Initial parameters of a one-hidden-layer tanh perceptron.

    Weights are drawn from a normal distribution with variance ``1 / fan_in``
    (so that pre-activations start of order one); biases start at zero.

    Parameters
    ----------
    n_inputs, n_hidden, n_classes : int
        Layer widths, each at least 1.
    seed : int
        Seed of the random draw.

    Returns
    -------
    dict
        ``{"W1": (n_inputs, n_hidden), "b1": (n_hidden,), "W2": (n_hidden,
        n_classes), "b2": (n_classes,)}``, float64.

    Examples
    --------
    >>> params = init_mlp()
    >>> {name: value.shape for name, value in params.items()}
    {'W1': (64, 32), 'b1': (32,), 'W2': (32, 10), 'b2': (10,)}
    """
    for value, name in ((n_inputs, "n_inputs"), (n_hidden, "n_hidden"), (n_classes, "n_classes")):
        if int(value) != value or value < 1:
            raise ValueError(f"{name} must be a positive integer; got {value}")
    rng = np.random.default_rng(seed)
    return {
        "W1": rng.normal(0.0, 1.0 / np.sqrt(n_inputs), size=(n_inputs, n_hidden)),
        "b1": np.zeros(n_hidden),
        "W2": rng.normal(0.0, 1.0 / np.sqrt(n_hidden), size=(n_hidden, n_classes)),
        "b2": np.zeros(n_classes),
    }


def _check_params(params: Mapping[str, NDArray[np.float64]]) -> None:
    missing = [name for name in PARAMETER_NAMES if name not in params]
    if missing:
        raise ValueError(f"params is missing {missing}; expected keys {list(PARAMETER_NAMES)}")


def _check_data(
    params: Mapping[str, NDArray[np.float64]], inputs: NDArray, labels: NDArray | None
) -> tuple[NDArray[np.float64], NDArray[np.int64] | None]:
    _check_params(params)
    x = np.asarray(inputs, dtype=np.float64)
    n_inputs, _ = params["W1"].shape
    n_classes = params["b2"].shape[0]
    if x.ndim != 2 or x.shape[1] != n_inputs:
        raise ValueError(f"inputs must have shape (n, {n_inputs}); got {x.shape}")
    if not np.isfinite(x).all():
        raise ValueError("inputs contain NaN or infinite values; expected finite numbers")
    if labels is None:
        return x, None
    y = np.asarray(labels)
    if y.shape != (x.shape[0],):
        raise ValueError(f"labels must have shape ({x.shape[0]},); got {y.shape}")
    if y.size and (y.min() < 0 or y.max() >= n_classes or not np.all(y == np.round(y))):
        raise ValueError(f"labels must be integers in [0, {n_classes}); got {np.unique(y)}")
    return x, y.astype(np.int64)


def mlp_predict(params: Mapping[str, NDArray[np.float64]], inputs: ArrayLike) -> NDArray:
    """Class scores (logits) of the perceptron, shape ``(n, n_classes)``.

    ``logits = tanh(inputs @ W1 + b1) @ W2 + b2``.

    Examples
    --------
    >>> params = init_mlp(n_inputs=3, n_hidden=2, n_classes=4)
    >>> mlp_predict(params, np.ones((5, 3))).shape
    (5, 4)
    """
    x, _ = _check_data(params, inputs, None)
    hidden = np.tanh(x @ params["W1"] + params["b1"])
    return hidden @ params["W2"] + params["b2"]


def mlp_loss_and_grad(
    params: Mapping[str, NDArray[np.float64]], inputs: ArrayLike, labels: ArrayLike
) -> tuple[float, Params, float]:
    r"""Mean softmax cross-entropy, its exact gradient, and the accuracy.

    The loss is :math:`L = -\frac1n \sum_k \log \mathrm{softmax}(z_k)_{y_k}` with
    logits :math:`z = \tanh(X W_1 + b_1) W_2 + b_2`. The gradient is computed by
    backpropagation, written out by hand:
    :math:`\partial L/\partial z = (\mathrm{softmax}(z) - \mathrm{onehot}(y))/n`,
    then through ``W2``, ``b2``, the tanh (derivative ``1 - h**2``), ``W1``, ``b1``.

    Parameters
    ----------
    params : mapping
        ``W1, b1, W2, b2`` as returned by :func:`init_mlp`.
    inputs : array_like of shape (n, n_inputs)
    labels : array_like of shape (n,)
        Integer class labels in ``[0, n_classes)``.

    Returns
    -------
    loss : float
    grads : dict
        Same keys, shapes and order as ``params``.
    accuracy : float
        Share of rows whose largest logit is the true class.

    Examples
    --------
    >>> params = init_mlp(n_inputs=3, n_hidden=2, n_classes=4, seed=1)
    >>> loss, grads, accuracy = mlp_loss_and_grad(params, np.eye(3), [0, 1, 2])
    >>> round(loss, 4), list(grads)
    (1.5185, ['W1', 'b1', 'W2', 'b2'])
    """
    x, y = _check_data(params, inputs, np.asarray(labels))
    assert y is not None
    if x.shape[0] == 0:
        raise ValueError("inputs has no rows; expected at least one example")
    return _loss_and_grad(params, x, y)


def _loss_and_grad(
    params: Mapping[str, NDArray[np.float64]], x: NDArray[np.float64], y: NDArray[np.int64]
) -> tuple[float, Params, float]:
    """:func:`mlp_loss_and_grad` without input checks, for the training loop."""
    n = x.shape[0]
    hidden = np.tanh(x @ params["W1"] + params["b1"])
    logits = hidden @ params["W2"] + params["b2"]
    # Subtract the row maximum before exponentiating: same softmax, no overflow.
    shifted = logits - logits.max(axis=1, keepdims=True)
    exp_shifted = np.exp(shifted)
    totals = exp_shifted.sum(axis=1, keepdims=True)
    rows = np.arange(n)
    loss = float(np.mean(np.log(totals[:, 0]) - shifted[rows, y]))
    d_logits = exp_shifted / (totals * n)
    d_logits[rows, y] -= 1.0 / n
    d_hidden = (d_logits @ params["W2"].T) * (1.0 - hidden**2)
    grads = {
        "W1": x.T @ d_hidden,
        "b1": d_hidden.sum(axis=0),
        "W2": hidden.T @ d_logits,
        "b2": d_logits.sum(axis=0),
    }
    accuracy = float(np.mean(logits.argmax(axis=1) == y))
    return loss, grads, accuracy


def max_gradient_error(
    params: Mapping[str, NDArray[np.float64]],
    inputs: ArrayLike,
    labels: ArrayLike,
    *,
    n_entries: int = 20,
    step: float = 1e-6,
    seed: int = 0,
) -> float:
    """Largest gap between backpropagation and central finite differences.

    Checks ``n_entries`` parameter entries drawn at random (from ``default_rng(seed)``)
    across all tensors: for each, ``(L(theta + h e) - L(theta - h e)) / (2 h)``
    against the backpropagated partial derivative. The largest absolute gap is
    returned relative to the largest gradient entry of the model, so that tiny
    partial derivatives (where rounding in the loss dominates the difference
    quotient) do not make an exact gradient look wrong.

    Examples
    --------
    >>> params = init_mlp(n_inputs=3, n_hidden=2, n_classes=4, seed=1)
    >>> bool(max_gradient_error(params, np.eye(3), [0, 1, 2]) < 1e-6)
    True
    """
    if int(n_entries) != n_entries or n_entries < 1:
        raise ValueError(f"n_entries must be a positive integer; got {n_entries}")
    if not (np.isfinite(step) and step > 0):
        raise ValueError(f"step must be a positive number; got {step}")
    _, grads, _ = mlp_loss_and_grad(params, inputs, labels)
    names = list(grads)
    sizes = np.array([grads[name].size for name in names])
    rng = np.random.default_rng(seed)
    flat_indices = rng.choice(sizes.sum(), size=min(n_entries, int(sizes.sum())), replace=False)
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    gradient_scale = max(float(np.max(np.abs(value))) for value in grads.values())
    worst = 0.0
    for flat in flat_indices:
        block = int(np.searchsorted(offsets, flat, side="right") - 1)
        name = names[block]
        index = np.unravel_index(int(flat - offsets[block]), grads[name].shape)
        shifted = {key: np.array(value, dtype=np.float64) for key, value in params.items()}
        shifted[name][index] += step
        loss_plus = mlp_loss_and_grad(shifted, inputs, labels)[0]
        shifted[name][index] -= 2 * step
        loss_minus = mlp_loss_and_grad(shifted, inputs, labels)[0]
        numeric = (loss_plus - loss_minus) / (2 * step)
        exact = float(grads[name][index])
        worst = max(worst, abs(numeric - exact))
    return worst / max(gradient_scale, np.finfo(np.float64).tiny)


# ---------------------------------------------------------------------- optimizers


class Optimizer(Protocol):
    """What :func:`train` needs from an optimizer.

    ``init`` builds the state from the parameters; ``direction`` maps a gradient
    and a state to the update ``u`` and the next state, without mutating its
    inputs. The step is ``theta <- theta - learning_rate * u``.
    """

    learning_rate: float
    name: str

    def init(self, params: Mapping[str, NDArray[np.float64]]) -> dict: ...  # noqa: D102

    def direction(  # noqa: D102
        self, grads: Mapping[str, NDArray[np.float64]], state: dict
    ) -> tuple[Params, dict]: ...


def _check_rate(learning_rate: float) -> None:
    if not (np.isfinite(learning_rate) and learning_rate > 0):
        raise ValueError(f"learning_rate must be a positive number; got {learning_rate}")


def _check_unit_interval(value: float, name: str, *, closed_left: bool) -> None:
    inside = (0.0 <= value < 1.0) if closed_left else (0.0 < value < 1.0)
    if not inside:
        interval = "[0, 1)" if closed_left else "(0, 1)"
        raise ValueError(f"{name} must lie in {interval}; got {value}")


@dataclass(frozen=True)
class SGD:
    """Plain gradient descent: the update is the gradient itself.

    Examples
    --------
    >>> optimizer = SGD(learning_rate=0.1)
    >>> update, _ = optimizer.direction({"w": np.array([1.0, -2.0])}, optimizer.init({}))
    >>> update["w"]
    array([ 1., -2.])
    """

    learning_rate: float = 0.5
    name: str = field(default="SGD", init=False)

    def __post_init__(self) -> None:
        _check_rate(self.learning_rate)

    def init(self, params: Mapping[str, NDArray[np.float64]]) -> dict:
        """No state."""
        return {}

    def direction(
        self, grads: Mapping[str, NDArray[np.float64]], state: dict
    ) -> tuple[Params, dict]:
        """Return ``u = g``."""
        return {name: np.array(value, dtype=np.float64) for name, value in grads.items()}, state


@dataclass(frozen=True)
class Momentum:
    r"""Heavy-ball momentum (Polyak, 1964) in its buffer form.

    ``m <- beta * m + g`` and ``u = m``; with ``theta <- theta - lr * u`` this is
    :math:`\theta_{t+1} = \theta_t - \eta g_t + \beta(\theta_t - \theta_{t-1})`.

    Examples
    --------
    >>> optimizer = Momentum(learning_rate=0.1, beta=0.9)
    >>> state = optimizer.init({"w": np.zeros(1)})
    >>> for _ in range(2):
    ...     update, state = optimizer.direction({"w": np.array([1.0])}, state)
    >>> update["w"]
    array([1.9])
    """

    learning_rate: float = 0.1
    beta: float = 0.9
    name: str = field(default="Momentum", init=False)

    def __post_init__(self) -> None:
        _check_rate(self.learning_rate)
        _check_unit_interval(self.beta, "beta", closed_left=True)

    def init(self, params: Mapping[str, NDArray[np.float64]]) -> dict:
        """Zero momentum buffers shaped like the parameters."""
        return {"buffer": {name: np.zeros_like(value) for name, value in params.items()}}

    def direction(
        self, grads: Mapping[str, NDArray[np.float64]], state: dict
    ) -> tuple[Params, dict]:
        """Return the new buffer as the update."""
        buffer = {name: self.beta * state["buffer"][name] + grads[name] for name in grads}
        return {name: value.copy() for name, value in buffer.items()}, {"buffer": buffer}


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
    >>> update, state = optimizer.direction({"w": np.array([0.3, -2.0])}, state)
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
        _check_unit_interval(self.beta1, "beta1", closed_left=True)
        _check_unit_interval(self.beta2, "beta2", closed_left=True)
        if not (np.isfinite(self.eps) and self.eps > 0):
            raise ValueError(f"eps must be a positive number; got {self.eps}")

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


# ---------------------------------------------------------------------- truncation


def truncate_to_cosine(update: ArrayLike, gradient: ArrayLike, threshold: float) -> NDArray:
    r"""The nearest vector to ``update`` whose cosine with ``gradient`` is at least ``threshold``.

    This is the Euclidean projection of ``u`` onto the closed convex cone
    :math:`K = \{v : \langle v, g\rangle \ge \lambda \lVert v\rVert \lVert g\rVert\}`.
    Writing :math:`c = \cos(u, g)` and :math:`s = \sqrt{1-\lambda^2}`:

    - if :math:`c \ge \lambda`, ``u`` is returned unchanged;
    - if :math:`-s < c < \lambda`, the result lies on the cone's boundary ray
      :math:`d = \lambda \hat g + s e` in the plane of ``u`` and ``g`` (``e`` is
      the unit vector along the part of ``u`` orthogonal to ``g``), and equals
      :math:`\langle u, d\rangle d`; its cosine with ``g`` is exactly ``lambda``;
    - if :math:`c \le -s`, ``u`` lies in the polar cone and the nearest point of
      ``K`` is the zero vector: the block does not move this step.

    Parameters
    ----------
    update, gradient : array_like
        Arrays of the same shape (any number of dimensions).
    threshold : float
        ``lambda`` in ``[0, 1]``. (For negative thresholds the set is not convex
        and the nearest point is not unique.)

    Returns
    -------
    ndarray
        Same shape as ``update``, float64.

    Raises
    ------
    ValueError
        If the shapes differ, an input is not finite, ``gradient`` is zero (the
        cosine constraint is then undefined) or ``threshold`` is outside ``[0, 1]``.

    Examples
    --------
    >>> truncate_to_cosine([0.0, 1.0], [1.0, 0.0], 0.6)
    array([0.48, 0.64])
    >>> truncate_to_cosine([2.0, 1.0], [1.0, 0.0], 0.6)  # already inside: unchanged
    array([2., 1.])
    >>> truncate_to_cosine([-1.0, 0.1], [1.0, 0.0], 0.6)  # polar cone: zero
    array([0., 0.])
    """
    u = np.asarray(update, dtype=np.float64)
    g = np.asarray(gradient, dtype=np.float64)
    if u.shape != g.shape:
        raise ValueError(f"update has shape {u.shape} but gradient has {g.shape}; expected equal")
    if not (np.isfinite(u).all() and np.isfinite(g).all()):
        raise ValueError("update and gradient must be finite; found NaN or infinity")
    if not (0.0 <= threshold <= 1.0):
        raise ValueError(f"threshold must lie in [0, 1]; got {threshold}")
    # The projection scales with u and ignores the scale of g: work with both divided
    # by their largest entry, so that no norm underflows or overflows.
    g_scale = float(np.max(np.abs(g), initial=0.0))
    if g_scale == 0.0:
        raise ValueError("gradient is zero; a cosine constraint with it is undefined")
    u_scale = float(np.max(np.abs(u), initial=0.0))
    if u_scale == 0.0:
        return u.copy()  # the zero vector belongs to the cone
    u_scaled = u / u_scale
    g_unit = g / g_scale
    g_unit /= np.linalg.norm(g_unit)
    u_norm = float(np.linalg.norm(u_scaled))
    along = float(np.vdot(u_scaled, g_unit))  # coordinate of u along g
    if along >= threshold * u_norm:
        return u.copy()
    across_vector = u_scaled - along * g_unit  # part of u orthogonal to g
    across = float(np.linalg.norm(across_vector))
    sine = np.sqrt(1.0 - threshold**2)
    # <u, d> for the boundary ray d = threshold * g_unit + sine * e.
    reach = threshold * along + sine * across
    if reach <= 0.0 or across == 0.0:
        return np.zeros_like(u)  # polar cone (includes u pointing straight against g)
    boundary = threshold * g_unit + sine * (across_vector / across)
    return (u_scale * reach) * boundary


def truncate_update(
    update: Mapping[str, ArrayLike], gradient: Mapping[str, ArrayLike], threshold: float
) -> Params:
    """Apply :func:`truncate_to_cosine` to every named tensor of an update.

    The squared distance between two updates is the sum of the tensors' squared
    distances and the constraint is one per tensor, so truncating each tensor
    separately also gives the nearest whole update with every local cosine at
    least ``threshold``.

    Examples
    --------
    >>> update = {"w": [0.0, 1.0], "b": [1.0]}
    >>> gradient = {"w": [1.0, 0.0], "b": [2.0]}
    >>> truncated = truncate_update(update, gradient, 0.6)
    >>> {name: np.round(value, 6).tolist() for name, value in truncated.items()}
    {'w': [0.48, 0.64], 'b': [1.0]}
    """
    if set(update) != set(gradient):
        raise ValueError(
            f"update and gradient must have the same tensor names; got {sorted(update)} "
            f"and {sorted(gradient)}"
        )
    return {name: truncate_to_cosine(update[name], gradient[name], threshold) for name in update}


# ------------------------------------------------------------------------ training


@dataclass(frozen=True)
class TrainingRun:
    """Per-step record of a training run (arrays indexed by step, then tensor).

    Step ``t`` records the parameters ``theta_t`` before the step: the training
    loss and accuracy there, the gradient ``g_t``, and the update ``u_t`` that was
    applied (after truncation if a threshold was set).

    Attributes
    ----------
    optimizer : str
        The optimizer's name.
    threshold : float or None
        Truncation threshold ``lambda``, or ``None`` for the raw optimizer.
    names : tuple of str
        Tensor names, the column order of every per-tensor array.
    loss, accuracy : ndarray of shape (steps,)
        Training-set loss and accuracy at ``theta_t``.
    local : ndarray of shape (steps, n_tensors)
        Local cosines ``cos(u_t[i], g_t[i])`` of the applied update
        (``nan`` where a truncated tensor was set to zero).
    raw_local : ndarray of shape (steps, n_tensors)
        Local cosines of the optimizer's update before truncation.
    global_cosine, profile_cosine : ndarray of shape (steps,)
        ``cos(u_t, g_t)`` over all parameters, and ``rho``.
    update_norms, gradient_norms, weights : ndarray of shape (steps, n_tensors)
        Block norms and the weights ``w_i`` of the block decomposition.
    test_accuracy : float
        Accuracy on the held-out set after the last step.
    """

    optimizer: str
    threshold: float | None
    names: tuple[str, ...]
    loss: NDArray[np.float64]
    accuracy: NDArray[np.float64]
    local: NDArray[np.float64]
    raw_local: NDArray[np.float64]
    global_cosine: NDArray[np.float64]
    profile_cosine: NDArray[np.float64]
    update_norms: NDArray[np.float64]
    gradient_norms: NDArray[np.float64]
    weights: NDArray[np.float64]
    test_accuracy: float

    @property
    def steps(self) -> int:
        """Number of recorded steps."""
        return len(self.loss)

    @property
    def lower_bound(self) -> NDArray[np.float64]:
        """``rho * min_i local_i`` per step, the lower end of the chapter-3 interval."""
        return self.profile_cosine * np.nanmin(self.local, axis=1)

    @property
    def upper_bound(self) -> NDArray[np.float64]:
        """``rho * max_i local_i`` per step, the upper end of the chapter-3 interval."""
        return self.profile_cosine * np.nanmax(self.local, axis=1)


def train(
    optimizer: Optimizer,
    x_train: ArrayLike,
    y_train: ArrayLike,
    x_test: ArrayLike,
    y_test: ArrayLike,
    *,
    steps: int = 200,
    threshold: float | None = None,
    n_hidden: int = 32,
    batch_size: int | None = None,
    seed: int = 0,
) -> TrainingRun:
    """Train the perceptron and record the update/gradient cosines at every step.

    Parameters
    ----------
    optimizer : SGD, Momentum or Adam
        Any object with ``learning_rate``, ``name``, ``init`` and ``direction``.
    x_train, y_train, x_test, y_test : array_like
        Inputs of shape ``(n, n_inputs)`` and integer labels ``0..n_classes-1``
        (``n_classes`` is ``max(y_train) + 1``).
    steps : int
        Number of optimizer steps, at least 1.
    threshold : float or None
        If given, every tensor's update is replaced by the nearest vector whose
        cosine with that tensor's gradient is at least ``threshold``
        (:func:`truncate_update`) before it is applied. The optimizer's own state
        is left as the raw optimizer would have it.
    n_hidden : int
        Width of the hidden layer.
    batch_size : int or None
        ``None`` for full-batch steps (the gradient is the exact gradient of the
        training loss). Otherwise each step uses a mini-batch drawn without
        replacement from ``default_rng(seed + 1)``, and ``g_t`` is the
        mini-batch gradient the optimizer sees.
    seed : int
        Seed of the initial parameters (and of the mini-batches).

    Returns
    -------
    TrainingRun

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> x, y = rng.normal(size=(40, 5)), rng.integers(0, 3, size=40)
    >>> run = train(Adam(0.05), x, y, x, y, steps=20, n_hidden=4)
    >>> run.loss.shape, run.local.shape
    ((20,), (20, 4))
    >>> bool(run.loss[-1] < run.loss[0])
    True
    """
    if int(steps) != steps or steps < 1:
        raise ValueError(f"steps must be a positive integer; got {steps}")
    if threshold is not None and not (0.0 <= threshold <= 1.0):
        raise ValueError(f"threshold must lie in [0, 1] or be None; got {threshold}")
    x = np.asarray(x_train, dtype=np.float64)
    y = np.asarray(y_train)
    if x.ndim != 2 or y.shape != (x.shape[0],):
        raise ValueError(
            f"x_train must be 2-D and y_train 1-D of matching length; got {x.shape} and {y.shape}"
        )
    if batch_size is not None and not (1 <= batch_size <= x.shape[0]):
        raise ValueError(f"batch_size must lie in [1, {x.shape[0]}] or be None; got {batch_size}")
    n_classes = int(np.max(y)) + 1
    params = init_mlp(x.shape[1], n_hidden, n_classes, seed=seed)
    x, labels = _check_data(params, x, y)  # once; the loop then skips the checks
    assert labels is not None
    state = optimizer.init(params)
    batch_rng = np.random.default_rng(seed + 1)
    n_blocks = len(PARAMETER_NAMES)
    record = {
        key: np.full((steps, n_blocks), np.nan)
        for key in ("local", "raw_local", "update_norms", "gradient_norms", "weights")
    }
    loss, accuracy = np.empty(steps), np.empty(steps)
    global_cosine, profile_cosine = np.empty(steps), np.empty(steps)
    # The matrices are small: one BLAS thread is faster here than several threads
    # competing for two cores, and it keeps the sums in the same order every run.
    with threadpool_limits(limits=1, user_api="blas"):
        for step in range(steps):
            loss[step], grads, accuracy[step] = _loss_and_grad(params, x, labels)
            if batch_size is not None:
                rows = batch_rng.choice(x.shape[0], size=batch_size, replace=False)
                _, grads, _ = _loss_and_grad(params, x[rows], labels[rows])
            raw_update, state = optimizer.direction(grads, state)
            if threshold is None:
                update = raw_update
                diagnostics = block_cosines(update, grads)
                record["raw_local"][step] = diagnostics.local
            else:
                record["raw_local"][step] = block_cosines(raw_update, grads).local
                update = truncate_update(raw_update, grads, threshold)
                diagnostics = block_cosines(update, grads)
            record["local"][step] = diagnostics.local
            record["update_norms"][step] = diagnostics.x_norms
            record["gradient_norms"][step] = diagnostics.y_norms
            record["weights"][step] = diagnostics.weights
            global_cosine[step] = diagnostics.global_cosine
            profile_cosine[step] = diagnostics.profile_cosine
            params = {
                name: params[name] - optimizer.learning_rate * update[name]
                for name in PARAMETER_NAMES
            }
    test_logits = mlp_predict(params, np.asarray(x_test, dtype=np.float64))
    test_accuracy = float(np.mean(test_logits.argmax(axis=1) == np.asarray(y_test)))
    return TrainingRun(
        optimizer=optimizer.name,
        threshold=threshold,
        names=PARAMETER_NAMES,
        loss=loss,
        accuracy=accuracy,
        global_cosine=global_cosine,
        profile_cosine=profile_cosine,
        test_accuracy=test_accuracy,
        **record,
    )


def book_optimizers() -> dict[str, Optimizer]:
    """The three optimizers of chapter 1, with the learning rates the chapter uses.

    Examples
    --------
    >>> {name: optimizer.learning_rate for name, optimizer in book_optimizers().items()}
    {'SGD': 0.5, 'Momentum': 0.1, 'Adam': 0.01}
    """
    return {"SGD": SGD(0.5), "Momentum": Momentum(0.1, beta=0.9), "Adam": Adam(0.01)}


def run_grid(
    data: DigitsLike,
    thresholds: Sequence[float | None] = (None,),
    *,
    optimizers: Mapping[str, Optimizer] | None = None,
    steps: int = 200,
    seed: int = 0,
) -> dict[tuple[str, float | None], TrainingRun]:
    """Train once per optimizer and threshold, from the same initial parameters.

    Parameters
    ----------
    data : object with ``x_train, y_train, x_test, y_test``
        For example ``cosine_book.datasets.load_digits_split``.
    thresholds : sequence of float or None
        Truncation thresholds; ``None`` means the raw optimizer.
    optimizers : mapping from name to optimizer, optional
        Defaults to :func:`book_optimizers`.
    steps, seed : int
        Passed to :func:`train`.

    Returns
    -------
    dict
        ``(optimizer name, threshold) -> TrainingRun``.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> rng = np.random.default_rng(0)
    >>> x, y = rng.normal(size=(30, 4)), rng.integers(0, 2, size=30)
    >>> data = SimpleNamespace(x_train=x, y_train=y, x_test=x, y_test=y)
    >>> runs = run_grid(data, (None, 0.9), steps=3)
    >>> sorted(runs, key=str)[:2]
    [('Adam', 0.9), ('Adam', None)]
    """
    chosen = book_optimizers() if optimizers is None else optimizers
    return {
        (name, threshold): train(
            optimizer,
            data.x_train,
            data.y_train,
            data.x_test,
            data.y_test,
            steps=steps,
            threshold=threshold,
            seed=seed,
        )
        for name, optimizer in chosen.items()
        for threshold in thresholds
    }
