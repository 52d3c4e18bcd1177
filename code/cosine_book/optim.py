r"""A small model, three optimizers and the update/gradient cosines of a training run.

Chapter 1 trains a multilayer perceptron on the handwritten digits and watches,
at every step, the cosine between the optimizer's update and the gradient: per
parameter tensor (*local*) and for the whole model (*global*). This module holds
everything that run needs, in NumPy only:

- the model: :func:`init_mlp`, :func:`mlp_loss_and_grad` (exact backpropagation),
  :func:`mlp_predict`;
- the optimizers :class:`SGD`, :class:`Momentum` (heavy ball) and :class:`Adam`,
  each a pure ``direction(grads, state) -> (update, state)`` map, with the step
  :math:`\theta \leftarrow \theta - \eta u` (:math:`\eta` the ``learning_rate``,
  :math:`u` the ``update``);
- the truncation rule :func:`truncate_to_cosine` (the nearest vector whose cosine
  with the gradient is at least ``threshold``) and :func:`truncate_update`, which
  applies it tensor by tensor;
- :func:`train`, which runs the loop and records a :class:`TrainingRun`, and
  :func:`run_grid`, which trains the chapter's optimizers (:func:`book_optimizers`)
  once per truncation threshold;
- :func:`truncation_step_summary`, the numbers of one recorded step
  (:class:`StepSummary`);
- :func:`linf_alignment` and :func:`preconditioned_cosine`, the aim of an
  update measured in the max norm of sign descent and in an optimizer's own
  diagonal norm, next to the Euclidean cosine;
- :func:`max_gradient_error`, a finite-difference check of the backpropagation.

Parameters, gradients and updates are dictionaries ``name -> array`` in the fixed
order ``W1, b1, W2, b2``, so ``cosine_book.similarity.block_cosines`` reads
them as named blocks.

Input checks go through ``cosine_book._validation`` once per public call
(the training loop calls private helpers that trust their input).

Determinism: the package's own vector sums (norms and inner products in
:func:`truncate_to_cosine`, the means and row sums of the loss) are NumPy sums
in a fixed pairwise order, and ties in the accuracy's ``argmax`` go to the
lowest class index. The model itself uses matrix products (BLAS) and
``np.tanh``, whose last bits may differ between CPUs (vector width, FMA); a
training run is bit-for-bit reproducible on one machine, and the chapter prints
its numbers with margins far above that rounding.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
from numpy.typing import ArrayLike, NDArray
from threadpoolctl import threadpool_limits

from cosine_book._validation import (
    as_class_labels,
    as_feature_matrix,
    as_float_scalar,
    as_int_scalar,
    as_real_array,
)
from cosine_book.portable import standard_normal
from cosine_book.similarity import block_cosines, cosine

__all__ = [
    "SGD",
    "Adam",
    "Momentum",
    "Optimizer",
    "StepSummary",
    "TrainingRun",
    "book_optimizers",
    "init_mlp",
    "finite_difference_gap",
    "linf_alignment",
    "preconditioned_cosine",
    "max_gradient_error",
    "mlp_loss_and_grad",
    "mlp_predict",
    "run_grid",
    "train",
    "truncate_to_cosine",
    "truncate_update",
    "truncation_step_summary",
]

Params = dict[str, NDArray[np.float64]]


class DigitsLike(Protocol):
    """A train/test split such as ``cosine_book.datasets.DigitsSplit``."""

    x_train: NDArray[np.float64]
    x_test: NDArray[np.float64]
    y_train: NDArray[np.int64]
    y_test: NDArray[np.int64]


_EPS = float(np.finfo(np.float64).eps)

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
        Seed of the random draw (nonnegative).

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
    return _init_mlp(
        as_int_scalar(n_inputs, "n_inputs", minimum=1),
        as_int_scalar(n_hidden, "n_hidden", minimum=1),
        as_int_scalar(n_classes, "n_classes", minimum=1),
        as_int_scalar(seed, "seed", minimum=0),
    )


def _init_mlp(n_inputs: int, n_hidden: int, n_classes: int, seed: int) -> Params:
    """:func:`init_mlp` for checked input."""
    rng = np.random.default_rng(seed)
    return {
        "W1": (1.0 / np.sqrt(n_inputs)) * standard_normal(rng, (n_inputs, n_hidden)),
        "b1": np.zeros(n_hidden),
        "W2": (1.0 / np.sqrt(n_hidden)) * standard_normal(rng, (n_hidden, n_classes)),
        "b2": np.zeros(n_classes),
    }


def _check_params(params: Mapping[str, ArrayLike]) -> Params:
    """The four parameter tensors as finite float64 arrays of consistent shapes."""
    if not isinstance(params, Mapping):
        raise ValueError(
            f"params must be a mapping from name to array ({', '.join(PARAMETER_NAMES)}); "
            f"got {type(params).__name__}"
        )
    missing = [name for name in PARAMETER_NAMES if name not in params]
    if missing:
        raise ValueError(f"params is missing {missing}; expected keys {list(PARAMETER_NAMES)}")
    ndims = {"W1": 2, "b1": 1, "W2": 2, "b2": 1}
    checked = {
        name: as_real_array(params[name], f"params[{name!r}]", ndim=ndims[name]).astype(
            np.float64, copy=False
        )
        for name in PARAMETER_NAMES
    }
    n_inputs, n_hidden = checked["W1"].shape
    n_classes = checked["b2"].shape[0]
    expected = {"b1": (n_hidden,), "W2": (n_hidden, n_classes)}
    for name, shape in expected.items():
        if checked[name].shape != shape:
            raise ValueError(
                f"params[{name!r}] has shape {checked[name].shape}; expected {shape} to match "
                f"W1 of shape {(n_inputs, n_hidden)} and b2 of shape {(n_classes,)}"
            )
    return checked


def _check_data(
    params: Mapping[str, ArrayLike], inputs: ArrayLike, labels: ArrayLike | None
) -> tuple[Params, NDArray[np.float64], NDArray[np.int64] | None]:
    checked = _check_params(params)
    x = as_feature_matrix(inputs, "inputs", checked["W1"].shape[0])
    if labels is None:
        return checked, x, None
    return checked, x, as_class_labels(labels, "labels", x.shape[0], checked["b2"].shape[0])


def _predict(params: Mapping[str, NDArray[np.float64]], x: NDArray[np.float64]) -> NDArray:
    hidden = np.tanh(x @ params["W1"] + params["b1"])
    return hidden @ params["W2"] + params["b2"]


def mlp_predict(params: Mapping[str, NDArray[np.float64]], inputs: ArrayLike) -> NDArray:
    """Class scores (logits) of the perceptron, shape ``(n, n_classes)``.

    ``logits = tanh(inputs @ W1 + b1) @ W2 + b2``.

    Examples
    --------
    >>> params = init_mlp(n_inputs=3, n_hidden=2, n_classes=4)
    >>> mlp_predict(params, np.ones((5, 3))).shape
    (5, 4)
    """
    checked, x, _ = _check_data(params, inputs, None)
    return _predict(checked, x)


def mlp_loss_and_grad(
    params: Mapping[str, NDArray[np.float64]], inputs: ArrayLike, labels: ArrayLike
) -> tuple[float, Params, float]:
    r"""Mean softmax cross-entropy, its exact gradient, and the accuracy.

    The loss is :math:`L = -\frac1n \sum_k \log \mathrm{softmax}(z_k)_{y_k}` with
    logits :math:`z = \tanh(X W_1 + b_1) W_2 + b_2`. The gradient is computed by
    backpropagation, written out by hand:
    :math:`\partial L/\partial z = (\mathrm{softmax}(z) - \mathrm{onehot}(y))/n`,
    then through ``W2``, ``b2``, the tanh (derivative :math:`1 - \tanh^2`),
    ``W1``, ``b1``.

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
        Share of rows whose largest logit is the true class (a tie for the
        largest logit goes to the lowest class index).

    Examples
    --------
    >>> params = init_mlp(n_inputs=3, n_hidden=2, n_classes=4, seed=1)
    >>> x, labels = np.eye(3), [0, 1, 2]
    >>> loss, grads, accuracy = mlp_loss_and_grad(params, x, labels)
    >>> round(loss, 4), list(grads)
    (1.5185, ['W1', 'b1', 'W2', 'b2'])
    """
    checked, x, y = _check_data(params, inputs, labels)
    assert y is not None
    return _loss_and_grad(checked, x, y)


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
    r"""Largest gap between backpropagation and central finite differences.

    Checks ``n_entries`` parameter entries drawn at random (from
    ``default_rng(seed)``) across all tensors: for each, the difference
    quotient :math:`(L(\theta + h e) - L(\theta - h e)) / (2h)`, with
    :math:`h` the ``step`` and :math:`e` the entry's unit vector, against the
    backpropagated partial derivative. The largest absolute gap is
    returned relative to the largest gradient entry of the model, so that tiny
    partial derivatives (where rounding in the loss dominates the difference
    quotient) do not make an exact gradient look wrong.

    Examples
    --------
    >>> params = init_mlp(n_inputs=3, n_hidden=2, n_classes=4, seed=1)
    >>> bool(max_gradient_error(params, np.eye(3), [0, 1, 2]) < 1e-6)
    True
    """
    n_entries = as_int_scalar(n_entries, "n_entries", minimum=1)
    step = as_float_scalar(step, "step", positive=True)
    seed = as_int_scalar(seed, "seed", minimum=0)
    params, x, y = _check_data(params, inputs, labels)
    assert y is not None

    def loss_and_grad(current: Params) -> tuple[float, Params]:
        loss, grads, _ = _loss_and_grad(current, x, y)
        return loss, grads

    return _finite_difference_gap(params, loss_and_grad, n_entries, step, seed)


def finite_difference_gap(
    params: Mapping[str, ArrayLike],
    loss_and_grad: Callable[[Params], tuple[float, Mapping[str, NDArray[np.float64]]]],
    *,
    n_entries: int = 40,
    step: float = 1e-6,
    seed: int = 0,
) -> float:
    r"""How far a hand-written gradient is from central differences, relative to its scale.

    The check behind :func:`max_gradient_error` and
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


# ---------------------------------------------------------------------- optimizers


class Optimizer(Protocol):
    r"""What :func:`train` needs from an optimizer.

    ``init`` builds the state from the parameters; ``direction`` maps a gradient
    and a state to the update :math:`u` and the next state, without mutating
    its inputs. The step is :math:`\theta \leftarrow \theta - \eta u`, with
    :math:`\eta` the ``learning_rate``. ``direction`` is
    the inner step of the training loop and does not check its input (the
    hyperparameters are checked once, when an optimizer is made).

    An optimizer may also define ``metric(state)``: the positive diagonal
    :math:`D` (a mapping like the parameters) of the norm
    :math:`\lVert u\rVert_D = \lVert D^{1/2} u\rVert` in which it measures the
    length of a step, read from the state returned with the last update
    (:class:`Adam` does). :func:`train` then records the cosine in that norm
    (:func:`preconditioned_cosine`); without it the norm is Euclidean.
    """

    learning_rate: float
    name: str

    def init(self, params: Mapping[str, NDArray[np.float64]]) -> dict: ...  # noqa: D102

    def direction(  # noqa: D102
        self, grads: Mapping[str, NDArray[np.float64]], state: dict
    ) -> tuple[Params, dict]: ...


def _check_rate(learning_rate: float) -> None:
    as_float_scalar(learning_rate, "learning_rate", positive=True)


def _check_unit_interval(value: float, name: str) -> None:
    """``value`` in ``[0, 1)``."""
    if not as_float_scalar(value, name, nonnegative=True) < 1.0:
        raise ValueError(f"{name} must lie in [0, 1); got {value!r}")


@dataclass(frozen=True)
class SGD:
    """Plain gradient descent: the update is the gradient itself.

    Examples
    --------
    >>> optimizer = SGD(learning_rate=0.1)
    >>> grads = {"w": np.array([1.0, -2.0])}
    >>> update, _ = optimizer.direction(grads, optimizer.init({}))
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
        """Return :math:`u = g`, the gradient itself."""
        return {name: np.array(value, dtype=np.float64) for name, value in grads.items()}, state


@dataclass(frozen=True)
class Momentum:
    r"""Heavy-ball momentum (Polyak, 1964) in its buffer form.

    :math:`m \leftarrow \beta m + g` and :math:`u = m`; with the step
    :math:`\theta \leftarrow \theta - \eta u` (:math:`\eta` the
    ``learning_rate``, :math:`\beta` the ``beta``) this is
    :math:`\theta_{t+1} = \theta_t - \eta g_t + \beta(\theta_t - \theta_{t-1})`.

    Examples
    --------
    >>> optimizer = Momentum(learning_rate=0.1, beta=0.9)
    >>> state = optimizer.init({"w": np.zeros(1)})
    >>> grads = {"w": np.array([1.0])}
    >>> for _ in range(2):
    ...     update, state = optimizer.direction(grads, state)
    >>> update["w"]
    array([1.9])
    """

    learning_rate: float = 0.1
    beta: float = 0.9
    name: str = field(default="Momentum", init=False)

    def __post_init__(self) -> None:
        _check_rate(self.learning_rate)
        _check_unit_interval(self.beta, "beta")

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

    def metric(self, state: dict) -> Params:
        r"""The diagonal :math:`D = \sqrt{\hat v} + \epsilon` that the last update divided by.

        Adam's update :math:`u = D^{-1} \hat m` is the steepest-descent step for
        the momentum :math:`\hat m` in the norm :math:`\lVert D^{1/2} u\rVert`
        (see :func:`preconditioned_cosine`).

        Examples
        --------
        >>> optimizer = Adam(learning_rate=0.01)
        >>> state = optimizer.init({"w": np.zeros(2)})
        >>> _, state = optimizer.direction({"w": np.array([0.3, -2.0])}, state)
        >>> np.round(optimizer.metric(state)["w"], 6)  # |g| on the first step
        array([0.3, 2. ])
        """
        correction2 = 1 - self.beta2 ** state["step"]
        return {name: np.sqrt(v / correction2) + self.eps for name, v in state["v"].items()}


# ---------------------------------------------------------------------- truncation


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
    >>> {k: np.round(v, 6).tolist() for k, v in truncated.items()}
    {'w': [0.48, 0.64], 'b': [1.0]}
    """
    if not isinstance(update, Mapping) or not isinstance(gradient, Mapping):
        raise ValueError(
            "update and gradient must be mappings from tensor name to array; got "
            f"{type(update).__name__} and {type(gradient).__name__}"
        )
    if set(update) != set(gradient):
        raise ValueError(
            f"update and gradient must have the same tensor names; got {sorted(update)} "
            f"and {sorted(gradient)}"
        )
    threshold = _check_threshold(threshold)
    checked_update, checked_gradient = {}, {}
    for name in update:
        u = as_real_array(update[name], f"update[{name!r}]").astype(np.float64, copy=False)
        g = as_real_array(gradient[name], f"gradient[{name!r}]").astype(np.float64, copy=False)
        if u.shape != g.shape:
            raise ValueError(
                f"update[{name!r}] has shape {u.shape} but gradient[{name!r}] has {g.shape}; "
                "expected equal"
            )
        checked_update[name], checked_gradient[name] = u, g
    return _truncate_all(checked_update, checked_gradient, threshold)


def _truncate_all(
    update: Mapping[str, NDArray[np.float64]],
    gradient: Mapping[str, NDArray[np.float64]],
    threshold: float,
) -> Params:
    return {name: _truncate(update[name], gradient[name], threshold) for name in update}


def linf_alignment(
    update: ArrayLike | Mapping[str, ArrayLike], gradient: ArrayLike | Mapping[str, ArrayLike]
) -> float:
    r"""How well an update is aimed when step length is measured in the max norm.

    The first-order loss change of the step :math:`\theta - \eta u` is
    :math:`-\eta \langle u, g\rangle`. Among steps of max-norm length
    :math:`\lVert u\rVert_\infty \le 1` the largest decrease is
    :math:`\lVert g\rVert_1`, reached by sign descent :math:`u = \operatorname{sign}(g)`
    (the steepest descent direction of the max norm, whose dual is the
    :math:`\ell_1` norm). The alignment

    .. math::

        \frac{\langle u, g\rangle}{\lVert u\rVert_\infty \lVert g\rVert_1} \in [-1, 1]

    is the share of that best decrease that ``update`` achieves per unit of its
    max-norm length: the max-norm counterpart of :math:`\cos(u, g)`, which is
    the same share for the Euclidean norm. It is 1 exactly when :math:`u` is
    :math:`\lVert u\rVert_\infty \operatorname{sign}(g_j)` on every entry with
    :math:`g_j \neq 0`.

    Parameters
    ----------
    update, gradient : array_like, or mapping from tensor name to array_like
        The update :math:`u` and the gradient :math:`g`, as arrays of the same
        shape or as mappings with the same names and shapes (a whole model's
        parameters: the max and the sum then run over all of them).

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If shapes or names differ, an entry is not finite, or the update or the
        gradient is zero (the alignment is then undefined).

    Examples
    --------
    >>> g = [3.0, -1.0, 0.5]
    >>> linf_alignment([1.0, -1.0, 1.0], g)  # sign descent
    1.0
    >>> round(linf_alignment(g, g), 4)  # the gradient itself
    0.7593
    >>> linf_alignment({"w": [1.0, -1.0], "b": [1.0]}, {"w": [3.0, -1.0], "b": [0.5]})
    1.0
    """
    u = _flattened(update, "update")
    g = _flattened(gradient, "gradient")
    if u.shape != g.shape:
        raise ValueError(f"update has {u.size} entries but gradient has {g.size}; expected equal")
    if not np.any(u) or not np.any(g):
        raise ValueError(
            "update and gradient must be nonzero; the alignment of a zero vector is undefined"
        )
    return _linf_alignment(u, g)


def _flattened(value: ArrayLike | Mapping[str, ArrayLike], what: str) -> NDArray[np.float64]:
    """One flat float64 array from an array or from a mapping of named tensors."""
    if isinstance(value, Mapping):
        if not value:
            raise ValueError(f"{what} is an empty mapping; expected at least one tensor")
        parts = [
            as_real_array(value[name], f"{what}[{name!r}]").astype(np.float64).ravel()
            for name in sorted(value)
        ]
        return np.concatenate(parts)
    return as_real_array(value, what).astype(np.float64).ravel()


def _linf_alignment(u: NDArray[np.float64], g: NDArray[np.float64]) -> float:
    """:func:`linf_alignment` for nonzero flat float64 arrays."""
    # The ratio ignores the scales of u and g: divide each by a power of two near
    # its largest entry (exact), so that no product or sum overflows or underflows.
    u_scaled, _ = _unit_scaled(u)
    g_scaled, _ = _unit_scaled(g)
    along = float(np.sum(u_scaled * g_scaled))
    value = along / (float(np.max(np.abs(u_scaled))) * float(np.sum(np.abs(g_scaled))))
    return min(1.0, max(-1.0, value))


def preconditioned_cosine(
    update: ArrayLike | Mapping[str, ArrayLike],
    gradient: ArrayLike | Mapping[str, ArrayLike],
    metric: ArrayLike | Mapping[str, ArrayLike],
) -> float:
    r"""The cosine of an update and a gradient in the norm :math:`\lVert D^{1/2} u\rVert`.

    With a positive diagonal :math:`D` (``metric``), step length is measured as
    :math:`\lVert u\rVert_D = \lVert D^{1/2} u\rVert` and gradients in its dual
    norm :math:`\lVert g\rVert_{D^{-1}} = \lVert D^{-1/2} g\rVert`. The first-order
    loss change :math:`-\eta\langle u, g\rangle` then factors as
    :math:`-\eta\lVert u\rVert_D \lVert g\rVert_{D^{-1}} \cos_D(u, g)` with

    .. math::

        \cos_D(u, g) = \frac{\langle u, g\rangle}{\lVert D^{1/2} u\rVert\,
        \lVert D^{-1/2} g\rVert} = \cos(D^{1/2} u, D^{-1/2} g) \in [-1, 1],

    which is 1 exactly for the steepest-descent direction of that norm,
    :math:`u \propto D^{-1} g`. With :math:`D = I` it is the Euclidean cosine.
    For Adam, :math:`D = \sqrt{\hat v} + \epsilon` (:meth:`Adam.metric`).

    Parameters
    ----------
    update, gradient, metric : array_like, or mapping from tensor name to array_like
        Arrays of one shape, or mappings with the same names and shapes; every
        entry of ``metric`` must be positive.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If shapes or names differ, an entry is not finite, an entry of
        ``metric`` is not positive, or a scaled vector is zero.

    Examples
    --------
    >>> g, D = [1.0, 4.0], [1.0, 4.0]
    >>> preconditioned_cosine([1.0, 1.0], g, D)  # u = D^-1 g
    1.0
    >>> round(preconditioned_cosine(g, g, D), 4)  # the gradient itself
    0.943
    >>> preconditioned_cosine(g, g, [1.0, 1.0])  # the Euclidean cosine
    1.0
    """
    u = _flattened(update, "update")
    g = _flattened(gradient, "gradient")
    d = _flattened(metric, "metric")
    if not (u.shape == g.shape == d.shape):
        raise ValueError(
            f"update, gradient and metric have {u.size}, {g.size} and {d.size} entries; "
            "expected equal"
        )
    if not np.all(d > 0.0):
        raise ValueError("every entry of metric must be positive (a norm's diagonal)")
    return _preconditioned_cosine(u, g, d)


def _preconditioned_cosine(
    u: NDArray[np.float64], g: NDArray[np.float64], d: NDArray[np.float64]
) -> float:
    # The cosine ignores positive scalings of u, of g and of d: divide each by a
    # power of two near its largest entry (exact) so that no product underflows.
    root = np.sqrt(_unit_scaled(d)[0])
    return cosine(_unit_scaled(u)[0] * root, _unit_scaled(g)[0] / root)


# ------------------------------------------------------------------------ training


@dataclass(frozen=True)
class TrainingRun:
    r"""Per-step record of a training run (arrays indexed by step, then tensor).

    Step :math:`t` records the parameters :math:`\theta_t` before the step: the
    training loss and accuracy there, the gradient :math:`g_t`, and the update
    :math:`u_t` that was applied (after truncation if a threshold was set).
    Tensor :math:`i` of them is :math:`g_{t,i}` and :math:`u_{t,i}`.

    Attributes
    ----------
    optimizer : str
        The optimizer's name.
    threshold : float or None
        Truncation threshold :math:`\tau`, or ``None`` for the raw optimizer.
    names : tuple of str
        Tensor names, the column order of every per-tensor array.
    loss, accuracy : ndarray of shape (steps,)
        Training-set loss and accuracy at :math:`\theta_t`.
    local : ndarray of shape (steps, n_tensors)
        Local cosines :math:`c_{t,i} = \cos(u_{t,i}, g_{t,i})` of the applied
        update (``nan`` where a truncated tensor was set to zero).
    raw_local : ndarray of shape (steps, n_tensors)
        Local cosines of the optimizer's update before truncation.
    global_cosine, profile_cosine : ndarray of shape (steps,)
        :math:`\cos(u_t, g_t)` over all parameters, and :math:`\rho`, the
        cosine between the two vectors of tensor norms.
    linf_alignment : ndarray of shape (steps,)
        :func:`linf_alignment` of the applied update with the gradient, over
        all parameters (``nan`` where the update is zero).
    own_cosine : ndarray of shape (steps,)
        :func:`preconditioned_cosine` of the applied update with the gradient in
        the optimizer's own norm (its ``metric``; the global cosine for an
        optimizer without one; ``nan`` where the update is zero).
    update_norms, gradient_norms, weights : ndarray of shape (steps, n_tensors)
        Block norms and the weights :math:`w_i` of the block decomposition.
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
    linf_alignment: NDArray[np.float64]
    own_cosine: NDArray[np.float64]
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
        r"""Lower end :math:`\rho \min_i c_{t,i}` of the chapter-3 interval, per step."""
        return self.profile_cosine * np.nanmin(self.local, axis=1)

    @property
    def upper_bound(self) -> NDArray[np.float64]:
        r"""Upper end :math:`\rho \max_i c_{t,i}` of the chapter-3 interval, per step."""
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
        Finite inputs of shape ``(n, n_inputs)`` and integer labels
        ``0..n_classes-1`` (``n_classes`` is ``max(y_train) + 1``; the test labels
        must lie in that range too).
    steps : int
        Number of optimizer steps, at least 1.
    threshold : float or None
        If given, every tensor's update is replaced by the nearest vector whose
        cosine with that tensor's gradient is at least ``threshold``
        (:func:`truncate_update`) before it is applied. The optimizer's own state
        is left as the raw optimizer would have it.
    n_hidden : int
        Width of the hidden layer, at least 1.
    batch_size : int or None
        ``None`` for full-batch steps (the gradient is the exact gradient of the
        training loss). Otherwise each step uses a mini-batch drawn without
        replacement from ``default_rng(seed + 1)``, and :math:`g_t` is the
        mini-batch gradient the optimizer sees.
    seed : int
        Seed of the initial parameters (and of the mini-batches); nonnegative.

    Returns
    -------
    TrainingRun

    Raises
    ------
    ValueError
        For an object that is not an optimizer, non-integer or out-of-range
        ``steps``, ``n_hidden``, ``batch_size`` or ``seed``, a threshold outside
        :math:`[0, 1]`, and data that is not finite and real, of mismatched shapes, or
        with labels that are not integers in range.

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
    _check_optimizer(optimizer)
    steps = as_int_scalar(steps, "steps", minimum=1)
    threshold = None if threshold is None else _check_threshold(threshold)
    n_hidden = as_int_scalar(n_hidden, "n_hidden", minimum=1)
    seed = as_int_scalar(seed, "seed", minimum=0)
    data = _check_split(x_train, y_train, x_test, y_test)
    if batch_size is not None:
        batch_size = as_int_scalar(batch_size, "batch_size", minimum=1, maximum=len(data[1]))
    return _train(optimizer, *data, steps, threshold, n_hidden, batch_size, seed)


def _check_optimizer(optimizer: Optimizer) -> None:
    if not all(callable(getattr(optimizer, name, None)) for name in ("init", "direction")):
        raise ValueError(
            "optimizer must have init and direction methods (e.g. SGD, Momentum or Adam); "
            f"got {type(optimizer).__name__}"
        )
    as_float_scalar(
        getattr(optimizer, "learning_rate", None), "optimizer.learning_rate", positive=True
    )


def _check_split(
    x_train: ArrayLike, y_train: ArrayLike, x_test: ArrayLike, y_test: ArrayLike
) -> tuple[NDArray[np.float64], NDArray[np.int64], NDArray[np.float64], NDArray[np.int64]]:
    """Training and test data; the classes are ``0 .. max(y_train)``."""
    x = as_real_array(x_train, "x_train", ndim=2).astype(np.float64, copy=False)
    y = as_class_labels(y_train, "y_train", x.shape[0])
    n_classes = int(np.max(y)) + 1
    x_held = as_feature_matrix(x_test, "x_test", x.shape[1])
    y_held = as_class_labels(y_test, "y_test", x_held.shape[0], n_classes)
    return x, y, x_held, y_held


def _train(
    optimizer: Optimizer,
    x: NDArray[np.float64],
    labels: NDArray[np.int64],
    x_test: NDArray[np.float64],
    y_test: NDArray[np.int64],
    steps: int,
    threshold: float | None,
    n_hidden: int,
    batch_size: int | None,
    seed: int,
) -> TrainingRun:
    """:func:`train` for checked input."""
    n_classes = int(np.max(labels)) + 1
    params = _init_mlp(x.shape[1], n_hidden, n_classes, seed)
    state = optimizer.init(params)
    batch_rng = np.random.default_rng(seed + 1)
    n_blocks = len(PARAMETER_NAMES)
    record = {
        key: np.full((steps, n_blocks), np.nan)
        for key in ("local", "raw_local", "update_norms", "gradient_norms", "weights")
    }
    loss, accuracy = np.empty(steps), np.empty(steps)
    global_cosine, profile_cosine = np.empty(steps), np.empty(steps)
    alignment, own_cosine = np.full(steps, np.nan), np.full(steps, np.nan)
    metric = getattr(optimizer, "metric", None)
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
                update = _truncate_all(raw_update, grads, threshold)
                diagnostics = block_cosines(update, grads)
            record["local"][step] = diagnostics.local
            record["update_norms"][step] = diagnostics.x_norms
            record["gradient_norms"][step] = diagnostics.y_norms
            record["weights"][step] = diagnostics.weights
            global_cosine[step] = diagnostics.global_cosine
            profile_cosine[step] = diagnostics.profile_cosine
            flat_update = np.concatenate([update[name].ravel() for name in PARAMETER_NAMES])
            if np.any(flat_update):
                flat_gradient = np.concatenate([grads[name].ravel() for name in PARAMETER_NAMES])
                alignment[step] = _linf_alignment(flat_update, flat_gradient)
                if metric is None:
                    own_cosine[step] = diagnostics.global_cosine
                else:
                    diagonal = metric(state)
                    flat_metric = np.concatenate(
                        [diagonal[name].ravel() for name in PARAMETER_NAMES]
                    )
                    own_cosine[step] = _preconditioned_cosine(
                        flat_update, flat_gradient, flat_metric
                    )
            params = {
                name: params[name] - optimizer.learning_rate * update[name]
                for name in PARAMETER_NAMES
            }
    test_logits = _predict(params, x_test)
    # argmax: a tie for the largest logit goes to the lowest class index.
    test_accuracy = float(np.mean(test_logits.argmax(axis=1) == y_test))
    return TrainingRun(
        optimizer=optimizer.name,
        threshold=threshold,
        names=PARAMETER_NAMES,
        loss=loss,
        accuracy=accuracy,
        global_cosine=global_cosine,
        profile_cosine=profile_cosine,
        linf_alignment=alignment,
        own_cosine=own_cosine,
        test_accuracy=test_accuracy,
        **record,
    )


def book_optimizers() -> dict[str, Optimizer]:
    """The three optimizers of chapter 1, with the learning rates the chapter uses.

    Examples
    --------
    >>> optimizers = book_optimizers()
    >>> {name: opt.learning_rate for name, opt in optimizers.items()}
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
    if not isinstance(chosen, Mapping):
        raise ValueError(
            f"optimizers must be a mapping from name to optimizer; got {type(chosen).__name__}"
        )
    for optimizer in chosen.values():
        _check_optimizer(optimizer)
    checked_thresholds = [None if t is None else _check_threshold(t) for t in thresholds]
    if not checked_thresholds:
        raise ValueError(
            "thresholds is empty; expected at least one threshold (None: no truncation)"
        )
    steps = as_int_scalar(steps, "steps", minimum=1)
    seed = as_int_scalar(seed, "seed", minimum=0)
    missing = [
        name for name in ("x_train", "y_train", "x_test", "y_test") if not hasattr(data, name)
    ]
    if missing:
        raise ValueError(
            f"data has no {', '.join(missing)}; expected x_train, y_train, x_test and y_test "
            "(e.g. cosine_book.datasets.load_digits_split())"
        )
    split = _check_split(data.x_train, data.y_train, data.x_test, data.y_test)
    return {
        (name, threshold): _train(optimizer, *split, steps, threshold, 32, None, seed)
        for name, optimizer in chosen.items()
        for threshold in checked_thresholds
    }


# ------------------------------------------------------------------- one recorded step


@dataclass(frozen=True)
class StepSummary:
    r"""The local cosines, the global cosine and its bounds at one step of a run.

    Attributes
    ----------
    optimizer : str
        The run's optimizer.
    threshold : float or None
        The run's truncation threshold :math:`\tau` (``None``: no truncation).
    step : int
        The step index.
    names : tuple of str
        Tensor names.
    local, raw_local, weights : ndarray of shape (n_tensors,)
        Local cosines :math:`c_i = \cos(u_i, g_i)` of the applied update
        :math:`u`, those of the optimizer's update before truncation, and the
        weights :math:`w_i` of the block identity.
    global_cosine, profile_cosine : float
        :math:`\cos(u, g)` and :math:`\rho`.
    lower_bound, upper_bound : float
        :math:`\rho \min_i c_i` and :math:`\rho \max_i c_i`.
    """

    optimizer: str
    threshold: float | None
    step: int
    names: tuple[str, ...]
    local: NDArray[np.float64]
    raw_local: NDArray[np.float64]
    weights: NDArray[np.float64]
    global_cosine: float
    profile_cosine: float
    lower_bound: float
    upper_bound: float


def truncation_step_summary(run: TrainingRun, step: int) -> StepSummary:
    """Collect the local cosines, the global cosine and its bounds at one step.

    Parameters
    ----------
    run : TrainingRun
        A run from :func:`train` or :func:`run_grid`.
    step : int
        Step index in ``[0, run.steps)``.

    Returns
    -------
    StepSummary
        Copies of the run's numbers at ``step``: changing them leaves the run alone.

    Raises
    ------
    ValueError
        If ``run`` is not a :class:`TrainingRun` or ``step`` is not an integer in range.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> x, y = rng.normal(size=(30, 4)), rng.integers(0, 2, size=30)
    >>> run = train(
    ...     Adam(0.05), x, y, x, y, steps=5, threshold=0.9, n_hidden=3
    ... )
    >>> summary = truncation_step_summary(run, 4)
    >>> low, high = summary.lower_bound, summary.upper_bound
    >>> bool(low <= summary.global_cosine <= high)
    True
    >>> bool(np.all(summary.local >= 0.9 - 1e-12))
    True
    """
    if not isinstance(run, TrainingRun):
        raise ValueError(
            f"run must be a TrainingRun (from train or run_grid); got {type(run).__name__}"
        )
    step = as_int_scalar(step, "step", minimum=0, maximum=run.steps - 1)
    return StepSummary(
        optimizer=run.optimizer,
        threshold=run.threshold,
        step=step,
        names=run.names,
        local=run.local[step].copy(),
        raw_local=run.raw_local[step].copy(),
        weights=run.weights[step].copy(),
        global_cosine=float(run.global_cosine[step]),
        profile_cosine=float(run.profile_cosine[step]),
        lower_bound=float(run.lower_bound[step]),
        upper_bound=float(run.upper_bound[step]),
    )
