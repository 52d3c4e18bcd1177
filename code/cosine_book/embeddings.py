r"""Small embedding models trained on the digits, to see when cosine misleads.

Chapter 7 (a practitioner's field guide to cosine similarity) needs real
embeddings from real models. This module trains them, in NumPy only, on the
handwritten digits (:func:`cosine_book.datasets.load_digits_split`):

- the model: a ReLU hidden layer :math:`h = \max(x W_1 + b_1, 0)` and a linear
  embedding :math:`e = h P` (:class:`EmbeddingModel`, :func:`hidden_features`,
  :func:`embed`);
- two classification objectives on the embedding, with one *class vector*
  :math:`c_k` per class (:func:`class_logits`, :func:`model_loss`):

  - ``"dot"``: logits :math:`z_k = \langle e, c_k\rangle + b_k`;
  - ``"cosine"``: logits :math:`z_k = s \cos(e, c_k)` with a fixed scale
    :math:`s` (the ``scale``);

  each trained by :func:`train_embedding_model` with softmax cross-entropy,
  full-batch Adam (:class:`cosine_book.optim.Adam`) and hand-written
  backpropagation, checked by finite differences in
  :func:`embedding_gradient_error`;
- the rescaling freedom of chapter 6 (:func:`rescale_embedding`):
  :math:`P \to P\,\mathrm{diag}(s)` with :math:`C \to C\,\mathrm{diag}(1/s)`
  leaves every dot logit unchanged but moves the embedding cosines;
- a collapse demonstration (:func:`train_alignment_only`): the same network
  trained only to pull an image and a noisy copy of it together, with no
  negatives and no classes, ends with every embedding pointing the same way;
- :func:`norm_confidence`: the embedding norm as a confidence score.

The measurements on the embeddings themselves (mean cosine, neighbours, their
labels) live in :mod:`cosine_book.diagnostics`: for example
``embedding_report(embed(model, x)).mean_cosine`` and
``neighbour_agreement(cosine_matrix(embed(model, x)), y, k)`` (by dot product:
``neighbour_agreement(E @ E.T, y, k)``), with
:func:`cosine_book.factorization.cosine_matrix`.

Input checks go through ``cosine_book._validation`` once per public call (the
training loop calls private helpers that trust their input).

Determinism: initial weights come from ``numpy.random.default_rng(seed)`` and the
noise of :func:`train_alignment_only` from ``default_rng(seed + 1)``; row norms,
means and the loss are NumPy sums in a fixed pairwise order; ReLU, ``exp`` and
``sqrt`` give the same bits on every CPU; ties in the accuracy's ranking go to the
lowest index. The layers use matrix products (BLAS), whose
last bits may differ between CPUs (vector width, FMA): a training run is
bit-for-bit reproducible on one machine, and on a simulated older CPU it agreed to
about 1e-13 (relative) after 300 steps of the classifiers and 1e-10 after 300
steps of :func:`train_alignment_only` (``tests/test_embeddings.py`` requires nine
significant digits on a short run), far beyond the digits the chapter prints.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray
from threadpoolctl import threadpool_limits

from cosine_book._validation import (
    as_class_labels,
    as_feature_matrix,
    as_float_scalar,
    as_int_scalar,
    as_real_array,
    nonfinite_error,
)
from cosine_book.optim import Adam, finite_difference_gap
from cosine_book.portable import standard_normal

__all__ = [
    "OBJECTIVES",
    "EmbeddingModel",
    "class_logits",
    "embed",
    "embedding_gradient_error",
    "hidden_features",
    "model_loss",
    "norm_confidence",
    "rescale_embedding",
    "train_alignment_only",
    "train_embedding_model",
]

Params = dict[str, NDArray[np.float64]]
LossAndGrad = Callable[[Params], tuple[float, Params]]

#: Training objectives with class vectors (``"alignment"`` models have none).
OBJECTIVES: tuple[str, ...] = ("dot", "cosine")
_ALL_OBJECTIVES = (*OBJECTIVES, "alignment")
# Most classes a model may have (one class vector each).
_MAX_CLASSES = 1 << 16


# --------------------------------------------------------------------------- model


@dataclass(frozen=True)
class EmbeddingModel:
    r"""A trained embedding model: ReLU hidden layer, linear embedding, class vectors.

    The hidden features are :math:`h = \max(x W_1 + b_1, 0)` (nonnegative), the
    embedding is :math:`e = h P`, and the class logits are

    - ``objective="dot"``: :math:`z_k = \langle e, c_k \rangle + b_k`, with
      :math:`c_k` the rows of ``class_vectors`` and :math:`b_k` of ``bias``;
    - ``objective="cosine"``: :math:`z_k = s \cos(e, c_k)` with :math:`s` the
      ``scale`` (``bias`` is zero and unused). The cosines lie in
      :math:`[-1, 1]`, so the logits lie in :math:`[-s, s]`: :math:`s` must be
      large enough for a confident softmax (with :math:`s = 10` and ten classes
      spread evenly, the true class can get probability :math:`1 - 10^{-4}`) and
      small enough that the loss does not ask for ever-closer directions; 10 is
      a common choice for normalised-softmax heads. A zero embedding or class
      vector has no direction: its cosines are taken to be 0;
    - ``objective="alignment"`` (:func:`train_alignment_only`): no classes;
      ``class_vectors`` has shape ``(0, dim)`` and ``bias`` shape ``(0,)``.

    The fields are checked when a model is made (finite real arrays of matching
    shapes); arrays are stored as float64.

    Attributes
    ----------
    objective : str
        ``"dot"``, ``"cosine"`` or ``"alignment"``.
    W1 : ndarray of shape (n_inputs, n_hidden)
    b1 : ndarray of shape (n_hidden,)
    P : ndarray of shape (n_hidden, dim)
        The linear embedding layer.
    class_vectors : ndarray of shape (n_classes, dim)
    bias : ndarray of shape (n_classes,)
        Used by the dot objective only (zeros otherwise).
    scale : float
        The cosine objective's logit scale :math:`s` (positive; stored but unused
        by the other objectives).
    loss : ndarray of shape (steps,)
        Training loss before each step (cross-entropy; for ``"alignment"``, one
        minus the mean cosine between an image's embedding and its noisy copy's).
    test_accuracy : float or None
        Accuracy on the held-out set after training (``None`` for
        ``"alignment"``, which has no classes).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> model = EmbeddingModel(
    ...     "dot", rng.normal(size=(3, 4)), np.zeros(4), rng.normal(size=(4, 2)),
    ...     rng.normal(size=(5, 2)), np.zeros(5), 10.0, np.array([1.0]), 0.5,
    ... )
    >>> model.dim, model.n_classes
    (2, 5)
    >>> EmbeddingModel("dot", np.eye(3), np.zeros(2), np.eye(3), np.eye(3), np.zeros(3),
    ...                10.0, np.array([1.0]), 0.5)
    Traceback (most recent call last):
    ...
    ValueError: b1 has shape (2,); expected (3,) to match W1 of shape (3, 3)
    """

    objective: str
    W1: NDArray[np.float64]
    b1: NDArray[np.float64]
    P: NDArray[np.float64]
    class_vectors: NDArray[np.float64]
    bias: NDArray[np.float64]
    scale: float
    loss: NDArray[np.float64]
    test_accuracy: float | None

    def __post_init__(self) -> None:
        _check_objective(self.objective, _ALL_OBJECTIVES)
        arrays = {
            "W1": (self.W1, 2, False),
            "b1": (self.b1, 1, False),
            "P": (self.P, 2, False),
            "class_vectors": (self.class_vectors, 2, True),
            "bias": (self.bias, 1, True),
            "loss": (self.loss, 1, False),
        }
        for name, (value, ndim, may_be_empty) in arrays.items():
            array = as_real_array(value, name, ndim=ndim, nonempty=not may_be_empty)
            object.__setattr__(self, name, array.astype(np.float64, copy=True))
        n_hidden = self.W1.shape[1]
        expected = {
            "b1": ((n_hidden,), f"W1 of shape {self.W1.shape}"),
            "P": ((n_hidden, self.P.shape[1]), f"W1 of shape {self.W1.shape}"),
            "class_vectors": (
                (self.class_vectors.shape[0], self.P.shape[1]),
                f"P of shape {self.P.shape}",
            ),
            "bias": ((self.class_vectors.shape[0],), "one entry per class vector"),
        }
        for name, (shape, reason) in expected.items():
            if getattr(self, name).shape != shape:
                raise ValueError(
                    f"{name} has shape {getattr(self, name).shape}; expected {shape} "
                    f"to match {reason}"
                )
        has_classes = self.class_vectors.shape[0] > 0
        if has_classes == (self.objective == "alignment"):
            raise ValueError(
                f"objective {self.objective!r} with {self.class_vectors.shape[0]} class "
                "vectors; expected at least one class vector for 'dot' and 'cosine' and "
                "none for 'alignment'"
            )
        object.__setattr__(self, "scale", as_float_scalar(self.scale, "scale", positive=True))
        if self.test_accuracy is not None:
            accuracy = as_float_scalar(self.test_accuracy, "test_accuracy", interval=(0, 1))
            object.__setattr__(self, "test_accuracy", accuracy)

    @property
    def dim(self) -> int:
        """Embedding dimension (columns of ``P``)."""
        return int(self.P.shape[1])

    @property
    def n_classes(self) -> int:
        """Number of classes (rows of ``class_vectors``; 0 for ``"alignment"``)."""
        return int(self.class_vectors.shape[0])

    @property
    def steps(self) -> int:
        """Number of training steps recorded in ``loss``."""
        return int(self.loss.shape[0])


def _check_objective(objective: Any, allowed: tuple[str, ...]) -> str:
    if not isinstance(objective, str) or objective not in allowed:
        raise ValueError(
            f"objective must be one of {', '.join(map(repr, allowed))}; got {objective!r}"
        )
    return objective


def _check_model(model: Any, *, needs_classes: bool = False) -> EmbeddingModel:
    if not isinstance(model, EmbeddingModel):
        raise ValueError(
            "model must be an EmbeddingModel (from train_embedding_model or "
            f"train_alignment_only); got {type(model).__name__}"
        )
    if needs_classes and model.objective not in OBJECTIVES:
        raise ValueError(
            f"model was trained with objective {model.objective!r} and has no classes; "
            f"expected a model trained with objective {' or '.join(map(repr, OBJECTIVES))}"
        )
    return model


def _require_finite(array: NDArray[np.float64], what: str) -> NDArray[np.float64]:
    """``array`` if finite, else a ValueError saying the model overflowed."""
    error = nonfinite_error(array, what)
    if error is not None:
        raise ValueError(
            f"{error}: the model overflows on this input; expected inputs on the scale "
            "of the training data"
        ) from None
    return array


def _forward(
    model: EmbeddingModel, x: NDArray[np.float64]
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Hidden features and embeddings of checked input, refusing an overflow."""
    params = _params(model)
    with np.errstate(over="ignore", invalid="ignore"):  # reported below instead
        hidden = _require_finite(_hidden(params, x), "the hidden features")
        embeddings = _require_finite(hidden @ params["P"], "the embeddings")
    return hidden, embeddings


def _checked_logits(
    model: EmbeddingModel, x: NDArray[np.float64]
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Logits and embeddings of checked input, refusing an overflow."""
    hidden, embeddings = _forward(model, x)
    with np.errstate(over="ignore", invalid="ignore"):
        logits, _ = _logits(_params(model), hidden, model.objective, model.scale)
    return _require_finite(logits, "the logits"), embeddings


def _params(model: EmbeddingModel) -> Params:
    params = {"W1": model.W1, "b1": model.b1, "P": model.P}
    if model.objective in OBJECTIVES:
        params["class_vectors"] = model.class_vectors
    if model.objective == "dot":
        params["bias"] = model.bias
    return params


def _hidden(params: Params, x: NDArray[np.float64]) -> NDArray[np.float64]:
    return np.maximum(x @ params["W1"] + params["b1"], 0.0)


def _unit_rows(
    E: NDArray[np.float64],
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Rows of ``E`` divided by their norms, and the norms, at any scale.

    Each row is first divided by a power of two near its largest entry (exact),
    so that its sum of squares neither overflows nor underflows. A zero row has
    norm 0 and unit row 0 (no direction).
    """
    peak = np.max(np.abs(E), axis=1)
    exponent = np.frexp(peak)[1]
    scaled = np.ldexp(E, -exponent[:, None])
    scaled_norms = np.sqrt(np.sum(scaled * scaled, axis=1))  # pairwise sums, fixed order
    safe = np.where(scaled_norms > 0, scaled_norms, 1.0)
    return scaled / safe[:, None], np.ldexp(scaled_norms, exponent)


def _logits(
    params: Params, hidden: NDArray[np.float64], objective: str, scale: float
) -> tuple[NDArray[np.float64], dict[str, NDArray[np.float64]]]:
    """Logits from the hidden features, and what backpropagation needs."""
    E = hidden @ params["P"]
    C = params["class_vectors"]
    if objective == "dot":
        return E @ C.T + params["bias"], {"E": E}
    unit_e, norm_e = _unit_rows(E)
    unit_c, norm_c = _unit_rows(C)
    cosines = unit_e @ unit_c.T
    return scale * cosines, {
        "E": E,
        "unit_e": unit_e,
        "norm_e": norm_e,
        "unit_c": unit_c,
        "norm_c": norm_c,
    }


def _log_softmax_parts(
    logits: NDArray[np.float64],
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Shifted logits, their exponentials and the row totals (no overflow)."""
    shifted = logits - logits.max(axis=1, keepdims=True)
    exp_shifted = np.exp(shifted)
    return shifted, exp_shifted, exp_shifted.sum(axis=1, keepdims=True)


def _cross_entropy(logits: NDArray[np.float64], y: NDArray[np.int64]) -> float:
    shifted, _, totals = _log_softmax_parts(logits)
    return float(np.mean(np.log(totals[:, 0]) - shifted[np.arange(len(y)), y]))


def _backward_unit(
    grad_unit: NDArray[np.float64], unit: NDArray[np.float64], norms: NDArray[np.float64]
) -> NDArray[np.float64]:
    r"""Gradient with respect to :math:`v` from that with respect to :math:`v/\|v\|`.

    :math:`(g - \langle g, u\rangle u) / \|v\|`, zero for a zero row.
    """
    along = np.sum(grad_unit * unit, axis=1, keepdims=True)
    safe = np.where(norms > 0, norms, 1.0)[:, None]
    return np.where(norms[:, None] > 0, (grad_unit - along * unit) / safe, 0.0)


def _backward_layers(
    params: Params,
    x: NDArray[np.float64],
    hidden: NDArray[np.float64],
    grad_E: NDArray[np.float64],
) -> Params:
    """Gradients of ``W1, b1, P`` from the gradient with respect to the embeddings."""
    grad_hidden = (grad_E @ params["P"].T) * (hidden > 0)
    return {
        "W1": x.T @ grad_hidden,
        "b1": grad_hidden.sum(axis=0),
        "P": hidden.T @ grad_E,
    }


def _loss_and_grad(
    params: Params,
    x: NDArray[np.float64],
    y: NDArray[np.int64],
    objective: str,
    scale: float,
) -> tuple[float, Params]:
    r"""Mean cross-entropy and its exact gradient (hand-written backpropagation).

    With :math:`G = \partial L/\partial z = (\mathrm{softmax}(z) - \mathrm{onehot}(y))/n`:
    for ``"dot"``, :math:`\partial L/\partial E = G C`, :math:`\partial L/\partial C
    = G^\top E` and :math:`\partial L/\partial b = \sum_i G_i`; for ``"cosine"``
    the same through the unit rows :math:`\hat E, \hat C` with the factor
    :math:`s`, then through the normalisations (:func:`_backward_unit`). Then
    :math:`P`, the ReLU (derivative 1 where :math:`h > 0`), :math:`W_1`, :math:`b_1`.
    """
    n = x.shape[0]
    hidden = _hidden(params, x)
    logits, cache = _logits(params, hidden, objective, scale)
    shifted, exp_shifted, totals = _log_softmax_parts(logits)
    rows = np.arange(n)
    loss = float(np.mean(np.log(totals[:, 0]) - shifted[rows, y]))
    grad_logits = exp_shifted / (totals * n)
    grad_logits[rows, y] -= 1.0 / n
    if objective == "dot":
        grad_E = grad_logits @ params["class_vectors"]
        head = {
            "class_vectors": grad_logits.T @ cache["E"],
            "bias": grad_logits.sum(axis=0),
        }
    else:
        grad_cos = scale * grad_logits
        grad_E = _backward_unit(grad_cos @ cache["unit_c"], cache["unit_e"], cache["norm_e"])
        grad_C = _backward_unit(grad_cos.T @ cache["unit_e"], cache["unit_c"], cache["norm_c"])
        head = {"class_vectors": grad_C}
    return loss, {**_backward_layers(params, x, hidden, grad_E), **head}


def _accuracy(logits: NDArray[np.float64], y: NDArray[np.int64]) -> float:
    # argmax: a tie for the largest logit goes to the lowest class index.
    return float(np.mean(logits.argmax(axis=1) == y))


def hidden_features(model: EmbeddingModel, x: ArrayLike) -> NDArray[np.float64]:
    r"""The ReLU hidden layer :math:`h = \max(x W_1 + b_1, 0)`, shape ``(n, n_hidden)``.

    Every entry is nonnegative, so every cosine between two rows is too: all
    hidden features share the positive orthant (chapter 7's anisotropy).

    Raises
    ------
    ValueError
        If ``model`` is not an :class:`EmbeddingModel`, ``x`` is not a finite
        real matrix with ``model.W1.shape[0]`` columns, or the layer overflows.

    Examples
    --------
    >>> model = EmbeddingModel("dot", [[1.0, -1.0]], [0.0, 0.5], [[1.0], [1.0]],
    ...                        [[1.0]], [0.0], 10.0, [0.0], None)
    >>> hidden_features(model, [[2.0], [-1.0]]).tolist()
    [[2.0, 0.0], [0.0, 1.5]]
    """
    model = _check_model(model)
    return _forward(model, as_feature_matrix(x, "x", model.W1.shape[0]))[0]


def embed(model: EmbeddingModel, x: ArrayLike) -> NDArray[np.float64]:
    r"""The embeddings :math:`e = h P` of the rows of ``x``, shape ``(n, dim)``.

    Raises
    ------
    ValueError
        As :func:`hidden_features`.

    Examples
    --------
    >>> model = EmbeddingModel("dot", [[1.0, -1.0]], [0.0, 0.5], [[1.0], [2.0]],
    ...                        [[1.0]], [0.0], 10.0, [0.0], None)
    >>> embed(model, [[2.0], [-1.0]]).tolist()
    [[2.0], [3.0]]
    """
    model = _check_model(model)
    return _forward(model, as_feature_matrix(x, "x", model.W1.shape[0]))[1]


def class_logits(model: EmbeddingModel, x: ArrayLike) -> NDArray[np.float64]:
    r"""Class logits of the rows of ``x``, shape ``(n, n_classes)``.

    ``"dot"``: :math:`e C^\top + b`; ``"cosine"``: :math:`s \cos(e, c_k)`, each row
    normalised after division by a power of two near its largest entry (so
    embeddings near ``1e300`` or ``1e-300`` give the same cosines); a zero
    embedding has logits 0 (no direction, so no preference).

    Raises
    ------
    ValueError
        As :func:`hidden_features`, and for a model without classes
        (``"alignment"``).

    Examples
    --------
    >>> model = EmbeddingModel("cosine", [[1.0, 0.0]], [0.0, 0.0], [[1.0, 0.0], [0.0, 1.0]],
    ...                        [[1.0, 0.0], [1.0, 1.0]], [0.0, 0.0], 10.0, [0.0], None)
    >>> class_logits(model, [[3.0], [1e-300]]).round(4).tolist()
    [[10.0, 7.0711], [10.0, 7.0711]]
    """
    model = _check_model(model, needs_classes=True)
    return _checked_logits(model, as_feature_matrix(x, "x", model.W1.shape[0]))[0]


def model_loss(model: EmbeddingModel, x: ArrayLike, y: ArrayLike) -> float:
    """Mean softmax cross-entropy of the model on ``(x, y)`` (softmax computed stably).

    Parameters
    ----------
    model : EmbeddingModel
        A model with classes (``"dot"`` or ``"cosine"``).
    x : array_like of shape (n, n_inputs)
    y : array_like of shape (n,)
        Integer labels in ``[0, model.n_classes)``.

    Returns
    -------
    float

    Examples
    --------
    >>> model = EmbeddingModel("dot", [[1.0, 0.0]], [0.0, 0.0], [[1.0], [0.0]],
    ...                        [[1.0], [-1.0]], [0.0, 0.0], 10.0, [0.0], None)
    >>> round(model_loss(model, [[0.0], [1000.0]], [1, 0]), 6)  # log 2 and 0
    0.346574
    """
    model = _check_model(model, needs_classes=True)
    x = as_feature_matrix(x, "x", model.W1.shape[0])
    y_checked = as_class_labels(y, "y", x.shape[0], model.n_classes)
    return _cross_entropy(_checked_logits(model, x)[0], y_checked)


# ------------------------------------------------------------------------ training


def _init_params(
    n_inputs: int, n_hidden: int, dim: int, n_classes: int, objective: str, seed: int
) -> Params:
    """Initial weights: He-normal ``W1``, other weights with variance ``1 / fan_in``.

    ``W1`` has variance ``2 / n_inputs`` (for ReLU); ``P`` and the class vectors
    are normal with variance ``1 / fan_in``; biases start at zero.
    """
    rng = np.random.default_rng(seed)
    params = {
        "W1": math.sqrt(2.0 / n_inputs) * standard_normal(rng, (n_inputs, n_hidden)),
        "b1": np.zeros(n_hidden),
        "P": (1.0 / math.sqrt(n_hidden)) * standard_normal(rng, (n_hidden, dim)),
    }
    if objective in OBJECTIVES:
        params["class_vectors"] = (1.0 / math.sqrt(dim)) * standard_normal(rng, (n_classes, dim))
    if objective == "dot":
        params["bias"] = np.zeros(n_classes)
    return params


def _adam_steps(
    params: Params,
    loss_and_grad: Callable[[Params, int], tuple[float, Params]],
    steps: int,
    learning_rate: float,
) -> tuple[Params, NDArray[np.float64]]:
    """Full-batch Adam; the final parameters and the loss before each step.

    ``loss_and_grad(params, step)`` returns the loss and the gradient at step ``step``.
    """
    optimizer = Adam(learning_rate=learning_rate)
    state = optimizer.init(params)
    history = np.empty(steps)
    # The matrices are small: one BLAS thread is faster here than several threads
    # competing for two cores, and it keeps the sums in the same order every run.
    # An overflow (inputs far from the scale of a unit-variance initialisation) stops
    # training with a clear error instead of a silent NaN.
    with threadpool_limits(limits=1, user_api="blas"), np.errstate(over="raise", invalid="raise"):
        try:
            for step in range(steps):
                history[step], grads = loss_and_grad(params, step)
                update, state = optimizer.direction(grads, state)
                params = {name: params[name] - learning_rate * update[name] for name in params}
        except FloatingPointError as error:
            raise ValueError(
                f"training overflowed at step {step} ({error}); expected inputs of moderate "
                "size (e.g. pixels in [0, 1]): rescale the inputs first"
            ) from None
    return params, history


def _model_from(
    params: Params,
    objective: str,
    scale: float,
    history: NDArray[np.float64],
    test_accuracy: float | None,
) -> EmbeddingModel:
    dim = params["P"].shape[1]
    classes = params.get("class_vectors", np.zeros((0, dim)))
    return EmbeddingModel(
        objective=objective,
        W1=params["W1"],
        b1=params["b1"],
        P=params["P"],
        class_vectors=classes,
        bias=params.get("bias", np.zeros(classes.shape[0])),
        scale=scale,
        loss=_require_finite(history, "the training loss"),
        test_accuracy=test_accuracy,
    )


def train_embedding_model(
    x_train: ArrayLike,
    y_train: ArrayLike,
    x_test: ArrayLike,
    y_test: ArrayLike,
    *,
    objective: Literal["dot", "cosine"],
    dim: int = 16,
    n_hidden: int = 64,
    steps: int = 300,
    learning_rate: float = 0.01,
    scale: float = 10.0,
    seed: int = 0,
) -> EmbeddingModel:
    """Train an embedding model with a dot-product or a cosine classification head.

    Full-batch Adam (:class:`cosine_book.optim.Adam`) on the mean softmax
    cross-entropy of :func:`class_logits`, with gradients by hand-written
    backpropagation (checked by :func:`embedding_gradient_error`). The initial
    weights are drawn from ``numpy.random.default_rng(seed)``: ``W1`` He-normal
    (variance ``2 / n_inputs``), ``P`` and the class vectors normal with variance
    ``1 / fan_in``, biases zero. The same seed gives the same bits on one machine.

    Parameters
    ----------
    x_train, x_test : array_like of shape (n, n_inputs)
        Finite real inputs, e.g. the digits of
        :func:`cosine_book.datasets.load_digits_split`.
    y_train, y_test : array_like of shape (n,)
        Nonnegative integer labels; the classes are ``0 .. max(y_train)``, and the
        test labels must lie among them (e.g. the digits, or their parity ``y % 2``).
    objective : {"dot", "cosine"}
        The classification head (see :class:`EmbeddingModel`).
    dim, n_hidden, steps : int
        Embedding dimension, hidden width and number of Adam steps, each at least 1.
    learning_rate : float
        Adam's step size, positive.
    scale : float
        The cosine head's logit scale :math:`s` (positive; stored, unused by "dot").
    seed : int
        Seed of the initial weights, nonnegative.

    Returns
    -------
    EmbeddingModel
        With ``loss`` the training loss before each step and ``test_accuracy`` on
        ``(x_test, y_test)``.

    Raises
    ------
    ValueError
        For an unknown objective, non-integer or nonpositive ``dim``, ``n_hidden``
        or ``steps``, a nonpositive ``learning_rate`` or ``scale``, a negative
        seed, inputs that are not finite real matrices of matching widths, and
        labels that are not integers, one per row, in range.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> x, y = rng.random((60, 8)), rng.integers(0, 3, size=60)
    >>> model = train_embedding_model(x, y, x, y, objective="cosine", dim=4,
    ...                               n_hidden=8, steps=30)
    >>> model.loss.shape, model.P.shape, model.class_vectors.shape
    ((30,), (8, 4), (3, 4))
    >>> bool(model.loss[-1] < model.loss[0])
    True
    """
    objective = _check_objective(objective, OBJECTIVES)
    dim = as_int_scalar(dim, "dim", minimum=1)
    n_hidden = as_int_scalar(n_hidden, "n_hidden", minimum=1)
    steps = as_int_scalar(steps, "steps", minimum=1)
    learning_rate = as_float_scalar(learning_rate, "learning_rate", positive=True)
    scale = as_float_scalar(scale, "scale", positive=True)
    seed = as_int_scalar(seed, "seed", minimum=0)
    x = as_real_array(x_train, "x_train", ndim=2).astype(np.float64, copy=False)
    y = as_class_labels(y_train, "y_train", x.shape[0], max_classes=_MAX_CLASSES)
    n_classes = int(np.max(y)) + 1
    x_held = as_feature_matrix(x_test, "x_test", x.shape[1])
    y_held = as_class_labels(y_test, "y_test", x_held.shape[0], n_classes)
    return _train(x, y, x_held, y_held, objective, dim, n_hidden, steps, learning_rate, scale, seed)


def _train(
    x: NDArray[np.float64],
    y: NDArray[np.int64],
    x_test: NDArray[np.float64],
    y_test: NDArray[np.int64],
    objective: str,
    dim: int,
    n_hidden: int,
    steps: int,
    learning_rate: float,
    scale: float,
    seed: int,
) -> EmbeddingModel:
    """:func:`train_embedding_model` for checked input."""
    n_classes = int(np.max(y)) + 1
    params = _init_params(x.shape[1], n_hidden, dim, n_classes, objective, seed)
    params, history = _adam_steps(
        params,
        lambda current, _: _loss_and_grad(current, x, y, objective, scale),
        steps,
        learning_rate,
    )
    with threadpool_limits(limits=1, user_api="blas"):
        test_logits = _logits(params, _hidden(params, x_test), objective, scale)[0]
    test_logits = _require_finite(test_logits, "the test logits")
    return _model_from(params, objective, scale, history, _accuracy(test_logits, y_test))


def _alignment_loss_and_grad(
    params: Params, x: NDArray[np.float64], x_noisy: NDArray[np.float64]
) -> tuple[float, Params]:
    r"""One minus the mean cosine of the embeddings of ``x`` and ``x_noisy``, and its gradient.

    Both branches go through the same weights (no stop-gradient).

    With :math:`c_i = \langle \hat e_i, \hat e'_i\rangle`,
    :math:`\partial L/\partial e_i = -(\hat e'_i - c_i \hat e_i) / (n \|e_i\|)` and
    symmetrically for :math:`e'_i`.
    """
    n = x.shape[0]
    hidden, hidden_noisy = _hidden(params, x), _hidden(params, x_noisy)
    E, E_noisy = hidden @ params["P"], hidden_noisy @ params["P"]
    unit, norms = _unit_rows(E)
    unit_noisy, norms_noisy = _unit_rows(E_noisy)
    loss = 1.0 - float(np.mean(np.sum(unit * unit_noisy, axis=1)))
    grad_E = _backward_unit(-unit_noisy / n, unit, norms)
    grad_E_noisy = _backward_unit(-unit / n, unit_noisy, norms_noisy)
    clean = _backward_layers(params, x, hidden, grad_E)
    noisy = _backward_layers(params, x_noisy, hidden_noisy, grad_E_noisy)
    return loss, {name: clean[name] + noisy[name] for name in clean}


def train_alignment_only(
    x: ArrayLike,
    *,
    dim: int = 16,
    n_hidden: int = 64,
    steps: int = 50,
    noise: float = 0.1,
    learning_rate: float = 0.01,
    seed: int = 0,
) -> EmbeddingModel:
    r"""Train the network with positive pairs only: the classic road to collapse.

    Each step draws a noisy copy :math:`x' = x + \sigma\,\varepsilon` of every
    image (:math:`\sigma` the ``noise``, :math:`\varepsilon` standard normal, from
    ``default_rng(seed + 1)``) and takes a full-batch Adam step on
    :math:`L = 1 - \frac1n \sum_i \cos(e_i, e'_i)`, both embeddings through the
    same weights. Nothing pushes different images apart (no negatives, no
    classes), and the cheapest way to make every pair agree is to make every
    embedding agree: the embeddings *collapse* onto one direction, so that the
    cosine between any two images, of any digits, approaches 1
    (``cosine_book.diagnostics.embedding_report(E).mean_cosine``). The network is initialised as in
    :func:`train_embedding_model` with the same ``seed``.

    Parameters
    ----------
    x : array_like of shape (n, n_inputs)
        Finite real training inputs.
    dim, n_hidden, steps : int
        Embedding dimension, hidden width and number of Adam steps, each at least 1.
    noise : float
        Standard deviation :math:`\sigma` of the noise, nonnegative.
    learning_rate : float
        Adam's step size, positive.
    seed : int
        Seed of the initial weights (the noise uses ``seed + 1``), nonnegative.

    Returns
    -------
    EmbeddingModel
        With ``objective="alignment"``, no class vectors, ``test_accuracy`` None and
        ``loss`` the value of :math:`L` before each step.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> x = rng.random((50, 8))
    >>> before = train_alignment_only(x, dim=4, n_hidden=8, steps=1)
    >>> after = train_alignment_only(x, dim=4, n_hidden=8, steps=100)
    >>> after.objective, after.n_classes
    ('alignment', 0)
    >>> from cosine_book.diagnostics import embedding_report
    >>> def mean_cosine(model):
    ...     return embedding_report(embed(model, x)).mean_cosine
    >>> bool(mean_cosine(after) > mean_cosine(before))
    True
    """
    dim = as_int_scalar(dim, "dim", minimum=1)
    n_hidden = as_int_scalar(n_hidden, "n_hidden", minimum=1)
    steps = as_int_scalar(steps, "steps", minimum=1)
    noise = as_float_scalar(noise, "noise", nonnegative=True)
    learning_rate = as_float_scalar(learning_rate, "learning_rate", positive=True)
    seed = as_int_scalar(seed, "seed", minimum=0)
    x_checked = as_real_array(x, "x", ndim=2).astype(np.float64, copy=False)
    return _train_alignment(x_checked, dim, n_hidden, steps, noise, learning_rate, seed)


def _train_alignment(
    x: NDArray[np.float64],
    dim: int,
    n_hidden: int,
    steps: int,
    noise: float,
    learning_rate: float,
    seed: int,
) -> EmbeddingModel:
    """:func:`train_alignment_only` for checked input."""
    params = _init_params(x.shape[1], n_hidden, dim, 0, "alignment", seed)
    noise_rng = np.random.default_rng(seed + 1)

    def loss_and_grad(current: Params, _: int) -> tuple[float, Params]:
        x_noisy = x + noise * standard_normal(noise_rng, x.shape)
        return _alignment_loss_and_grad(current, x, x_noisy)

    params, history = _adam_steps(params, loss_and_grad, steps, learning_rate)
    return _model_from(params, "alignment", 10.0, history, None)


def embedding_gradient_error(
    model: EmbeddingModel,
    x: ArrayLike,
    y: ArrayLike,
    *,
    n_entries: int = 20,
    step: float = 1e-6,
    seed: int = 0,
) -> float:
    r"""Largest gap between backpropagation and central finite differences.

    :func:`cosine_book.optim.finite_difference_gap` on the cross-entropy of an
    embedding model: ``n_entries`` parameter entries drawn from
    ``default_rng(seed)`` across ``W1, b1, P, class_vectors`` (and ``bias`` for
    "dot"); for each, :math:`(L(\theta + h e) - L(\theta - h e)) / (2h)` with
    :math:`h` the ``step``, against the backpropagated partial derivative. The
    largest absolute gap is returned relative to the largest gradient entry.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> x, y = rng.random((20, 5)), rng.integers(0, 3, size=20)
    >>> model = train_embedding_model(x, y, x, y, objective="cosine", dim=3,
    ...                               n_hidden=6, steps=5)
    >>> bool(embedding_gradient_error(model, x, y) < 1e-6)
    True
    """
    model = _check_model(model, needs_classes=True)
    x_checked = as_feature_matrix(x, "x", model.W1.shape[0])
    y_checked = as_class_labels(y, "y", x_checked.shape[0], model.n_classes)
    n_entries = as_int_scalar(n_entries, "n_entries", minimum=1)
    step = as_float_scalar(step, "step", positive=True)
    seed = as_int_scalar(seed, "seed", minimum=0)
    params = _params(model)

    def loss_and_grad(current: Params) -> tuple[float, Params]:
        return _loss_and_grad(current, x_checked, y_checked, model.objective, model.scale)

    return finite_difference_gap(params, loss_and_grad, n_entries=n_entries, step=step, seed=seed)


# ----------------------------------------------------------------------- rescaling


def rescale_embedding(model: EmbeddingModel, scales: ArrayLike) -> EmbeddingModel:
    r"""The model with :math:`P \to P\,\mathrm{diag}(s)` and :math:`C \to C\,\mathrm{diag}(1/s)`.

    Chapter 6's rescaling freedom, in a trained network: each embedding
    coordinate :math:`j` is multiplied by :math:`s_j` and each class vector's
    coordinate divided by it, so :math:`\langle e\,\mathrm{diag}(s),
    c_k\,\mathrm{diag}(1/s)\rangle = \langle e, c_k\rangle`. For the ``"dot"``
    objective every logit, and so the loss and every prediction, is unchanged
    (up to rounding), while the cosines between embeddings, and so the cosine
    neighbours, change. For ``"cosine"`` the logits :math:`s\cos(e, c_k)` change:
    that objective has no such freedom. Everything else (``loss`` history,
    ``test_accuracy``) is copied unchanged.

    Parameters
    ----------
    model : EmbeddingModel
    scales : array_like of shape (dim,)
        Positive finite factors :math:`s_j`.

    Returns
    -------
    EmbeddingModel

    Raises
    ------
    ValueError
        If ``scales`` is not a finite real vector of length ``model.dim`` with
        positive entries, or the rescaled weights overflow.

    Examples
    --------
    >>> model = EmbeddingModel("dot", [[1.0, 0.0]], [0.0, 0.0], [[1.0, 2.0], [0.0, 1.0]],
    ...                        [[1.0, 1.0]], [0.0], 10.0, [0.0], None)
    >>> rescaled = rescale_embedding(model, [4.0, 0.5])
    >>> rescaled.P.tolist(), rescaled.class_vectors.tolist()
    ([[4.0, 1.0], [0.0, 0.5]], [[0.25, 2.0]])
    >>> class_logits(model, [[1.0]]).tolist(), class_logits(rescaled, [[1.0]]).tolist()
    ([[3.0]], [[3.0]])
    """
    model = _check_model(model)
    s = as_real_array(scales, "scales", ndim=1).astype(np.float64, copy=False)
    if s.shape != (model.dim,):
        raise ValueError(f"scales has {s.shape[0]} entries; expected {model.dim} (model.dim)")
    if not np.all(s > 0):
        index = int(np.argmin(s > 0))
        raise ValueError(
            f"scales must be positive; got {float(s[index])!r} at index {index} "
            "(a zero or negative factor is not an invertible rescaling)"
        )
    with np.errstate(over="ignore"):
        P, C = model.P * s, model.class_vectors / s
    for array, what in ((P, "P"), (C, "class_vectors")):
        if nonfinite_error(array, what) is not None:
            raise ValueError(
                f"the rescaled {what} overflows (scales from {float(s.min())!r} to "
                f"{float(s.max())!r}); expected factors that keep the weights finite"
            )
    return EmbeddingModel(
        objective=model.objective,
        W1=model.W1,
        b1=model.b1,
        P=P,
        class_vectors=C,
        bias=model.bias,
        scale=model.scale,
        loss=model.loss,
        test_accuracy=model.test_accuracy,
    )


# -------------------------------------------------------------------- measurements


def norm_confidence(model: EmbeddingModel, x: ArrayLike) -> float:
    r"""Spearman correlation between embedding norms and the top softmax probability.

    For the ``"dot"`` objective the logits :math:`\langle e, c_k\rangle + b_k` grow
    with :math:`\|e\|`, so a long embedding is a confident one: the norm carries
    the model's confidence, which a cosine between embeddings throws away. For
    ``"cosine"`` the logits ignore the norm. Computed with
    :func:`scipy.stats.spearmanr` (ties get their average rank).

    Parameters
    ----------
    model : EmbeddingModel
        A model with classes.
    x : array_like of shape (n, n_inputs)
        At least two rows.

    Returns
    -------
    float
        In :math:`[-1, 1]`.

    Raises
    ------
    ValueError
        As :func:`class_logits`, for fewer than two rows, and when the norms or
        the probabilities are all equal (the correlation is then undefined).

    Examples
    --------
    >>> model = EmbeddingModel("dot", [[1.0, 0.0]], [0.0, 0.0], [[1.0], [0.0]],
    ...                        [[1.0], [-1.0]], [0.0, 0.0], 10.0, [0.0], None)
    >>> norm_confidence(model, [[1.0], [2.0], [3.0]])
    1.0
    """
    from scipy.stats import spearmanr

    model = _check_model(model, needs_classes=True)
    x_checked = as_feature_matrix(x, "x", model.W1.shape[0])
    if x_checked.shape[0] < 2:
        raise ValueError(f"x has {x_checked.shape[0]} row; expected at least two")
    logits, embeddings = _checked_logits(model, x_checked)
    _, exp_shifted, totals = _log_softmax_parts(logits)
    top = np.max(exp_shifted, axis=1) / totals[:, 0]
    norms = _unit_rows(embeddings)[1]
    for values, what in ((norms, "embedding norms"), (top, "top probabilities")):
        if np.all(values == values[0]):
            raise ValueError(
                f"all {what} are equal ({float(values[0])!r}); their rank correlation is undefined"
            )
    return float(spearmanr(norms, top).statistic)
