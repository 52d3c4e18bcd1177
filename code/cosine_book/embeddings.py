r"""Chapter 7's models, in PyTorch: digit embeddings, a collapsed model, a query map.

A digit model has a ReLU layer :math:`h = \max(x W_1 + b_1, 0)`, the embedding
:math:`e = h P`, and class logits :math:`e C^\top + b` (dot) or :math:`s \cos(e, c_k)`
(cosine). Training is full-batch Adam in float64 on one thread from
:func:`cosine_book.portable.standard_normal` draws: the same numbers on every CPU.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Literal

import numpy as np
import torch
import torch.nn.functional as F
from numpy.typing import ArrayLike, NDArray

from cosine_book._validation import (
    as_float_scalar,
    as_int_scalar,
    as_labels,
    as_real_array,
    as_real_matrix,
)
from cosine_book.portable import standard_normal

_MATRICES = ("W1", "P", "class_vectors")  # what weight decay acts on
_HIDDEN, _DIM, _RATE = 64, 16, 0.01


def _hidden(p: dict[str, torch.Tensor], x: torch.Tensor) -> torch.Tensor:
    return torch.relu(x @ p["W1"] + p["b1"])


def _logits(p: dict, e: torch.Tensor, objective: str, scale: float) -> torch.Tensor:
    if objective == "dot":
        return e @ p["class_vectors"].T + p["bias"]
    return scale * F.normalize(e, dim=1) @ F.normalize(p["class_vectors"], dim=1).T


@dataclass(frozen=True)
class EmbeddingModel:
    """A trained digit model (chapter 7): weights, the losses of training, test accuracy."""

    objective: str
    W1: NDArray[np.float64]
    b1: NDArray[np.float64]
    P: NDArray[np.float64]
    class_vectors: NDArray[np.float64]
    bias: NDArray[np.float64]
    scale: float
    loss: NDArray[np.float64]
    test_accuracy: float | None

    @property
    def dim(self) -> int:
        """Embedding dimension (columns of ``P``)."""
        return self.P.shape[1]

    def _inputs(self, x: ArrayLike) -> tuple[dict[str, torch.Tensor], torch.Tensor]:
        inputs = as_real_matrix(x, "x")
        if inputs.shape[1] != self.W1.shape[0]:
            raise ValueError(f"x has {inputs.shape[1]} columns; expected {self.W1.shape[0]}")
        weights = ("W1", "b1", "P", "class_vectors", "bias")
        return {n: torch.from_numpy(getattr(self, n)) for n in weights}, torch.from_numpy(inputs)

    def hidden(self, x: ArrayLike) -> NDArray[np.float64]:
        r"""The ReLU layer :math:`\max(x W_1 + b_1, 0)` of the rows of ``x``."""
        p, inputs = self._inputs(x)
        return _hidden(p, inputs).numpy()

    def embed(self, x: ArrayLike) -> NDArray[np.float64]:
        r"""The embeddings :math:`e = h P` of the rows of ``x``."""
        p, inputs = self._inputs(x)
        return (_hidden(p, inputs) @ p["P"]).numpy()

    def logits(self, x: ArrayLike) -> NDArray[np.float64]:
        r"""Class logits: :math:`e C^\top + b` (dot) or :math:`s \cos(e, c_k)` (cosine)."""
        if self.objective == "alignment":
            raise ValueError("the model was trained with objective 'alignment': no classes")
        p, inputs = self._inputs(x)
        return _logits(p, _hidden(p, inputs) @ p["P"], self.objective, self.scale).numpy()

    def rescaled(self, scales: ArrayLike) -> EmbeddingModel:
        r"""The model with :math:`P \to P D` and :math:`C \to C D^{-1}`, :math:`D = \mathrm{diag}(s)`.

        Chapter 6's freedom: the dot logits stay, the cosines between embeddings do not.
        """  # noqa: E501 (the formula)
        s = as_real_array(scales, "scales", ndim=1).astype(np.float64)
        if s.shape != (self.dim,) or not np.all(s > 0):
            raise ValueError(f"scales must be {self.dim} positive numbers (model.dim); got {s}")
        return replace(self, P=self.P * s, class_vectors=self.class_vectors / s)


def _initial(n_inputs: int, classes: int, seed: int) -> dict[str, torch.Tensor]:
    """He-normal ``W1``; ``P`` and class vectors with variance 1/fan-in; zero biases."""
    rng = np.random.default_rng(as_int_scalar(seed, "seed", minimum=0))
    arrays = {
        "W1": math.sqrt(2.0 / n_inputs) * standard_normal(rng, (n_inputs, _HIDDEN)),
        "b1": np.zeros(_HIDDEN),
        "P": standard_normal(rng, (_HIDDEN, _DIM)) / math.sqrt(_HIDDEN),
        "class_vectors": standard_normal(rng, (classes, _DIM)) / math.sqrt(_DIM),
        "bias": np.zeros(classes),
    }
    return {name: torch.from_numpy(value).requires_grad_() for name, value in arrays.items()}


def _fit(params: dict, loss: Callable[[], torch.Tensor], steps: int, decay: float = 0.0):
    """Full-batch Adam on ``loss()`` (AdamW's decay of the matrices if ``decay``); the losses."""
    matrices, rest = ([v for n, v in params.items() if (n in _MATRICES) == m] for m in (1, 0))
    groups = [{"params": matrices, "weight_decay": decay}, {"params": rest, "weight_decay": 0.0}]
    optimizer = (torch.optim.AdamW if decay else torch.optim.Adam)(groups, lr=_RATE)
    history, threads = np.empty(steps), torch.get_num_threads()
    torch.set_num_threads(1)  # one summation order every run
    try:
        for step in range(steps):
            optimizer.zero_grad()
            value = loss()
            history[step] = value.item()
            value.backward()
            optimizer.step()
    finally:
        torch.set_num_threads(threads)
    return history


def _model(objective: str, params: dict, scale: float, history, accuracy) -> EmbeddingModel:
    arrays = {name: value.detach().numpy().copy() for name, value in params.items()}
    return EmbeddingModel(objective, **arrays, scale=scale, loss=history, test_accuracy=accuracy)


def train_embedding_model(
    x_train: ArrayLike,
    y_train: ArrayLike,
    x_test: ArrayLike,
    y_test: ArrayLike,
    *,
    objective: Literal["dot", "cosine"],
    steps: int = 300,
    scale: float = 10.0,
    weight_decay: float = 0.0,
    decoupled: bool = False,
    seed: int = 0,
) -> EmbeddingModel:
    r"""Train a digit model with a dot-product or a cosine head (chapter 7).

    Full-batch Adam (rate 0.01) on the mean cross-entropy plus the L2 penalty
    :math:`\lambda(\lVert W_1\rVert_F^2 + \lVert P\rVert_F^2 + \lVert C\rVert_F^2)`,
    :math:`\lambda` the ``weight_decay``; with ``decoupled=True``, AdamW's decay of the
    three matrices instead. 64 hidden units, 16 dimensions; weights from
    ``default_rng(seed)``; ``test_accuracy`` on ``(x_test, y_test)``.

    >>> x = np.random.default_rng(0).random((60, 8))
    >>> model = train_embedding_model(x, x[:, 0] > 0.5, x, x[:, 0] > 0.5, objective="cosine")
    >>> model.embed(x).shape, bool(model.loss[-1] < model.loss[0]), model.test_accuracy
    ((60, 16), True, 1.0)
    """
    if objective not in ("dot", "cosine"):
        raise ValueError(f"objective must be 'dot' or 'cosine'; got {objective!r}")
    steps = as_int_scalar(steps, "steps", minimum=1)
    scale = as_float_scalar(scale, "scale", positive=True)
    decay = as_float_scalar(weight_decay, "weight_decay", nonnegative=True)
    x, x_held = as_real_matrix(x_train, "x_train"), as_real_matrix(x_test, "x_test")
    if x_held.shape[1] != x.shape[1]:
        raise ValueError(f"x_test has {x_held.shape[1]} columns; expected {x.shape[1]}")
    classes, y = as_labels(y_train, "y_train", len(x))
    known, y_held = as_labels(y_test, "y_test", len(x_held))
    if not set(known) <= set(classes):
        raise ValueError("y_test has labels that y_train does not; expected the same classes")
    params = _initial(x.shape[1], len(classes), seed)
    inputs, targets = torch.from_numpy(x), torch.from_numpy(y)
    weights, penalty = [params[n] for n in _MATRICES], 0.0 if decoupled else decay

    def loss() -> torch.Tensor:
        e = _hidden(params, inputs) @ params["P"]
        value = F.cross_entropy(_logits(params, e, objective, scale), targets)
        return value + penalty * sum((w * w).sum() for w in weights) if penalty else value

    history = _fit(params, loss, steps, decay - penalty)
    model = _model(objective, params, scale, history, None)
    predicted = model.logits(x_held).argmax(axis=1)
    accuracy = float(np.mean(predicted == np.searchsorted(classes, known)[y_held]))
    return replace(model, test_accuracy=accuracy)


def train_alignment_only(x: ArrayLike, *, seed: int = 0) -> EmbeddingModel:
    r"""Train the digit network on positive pairs only: the classic road to collapse.

    Chapter 7. Each of 50 steps draws a noisy copy :math:`x' = x + 0.1\,\varepsilon` of
    every row (:math:`\varepsilon` from ``default_rng(seed + 1)``) and takes an Adam step
    on :math:`1 - \frac1n\sum_i \cos(e_i, e'_i)`: nothing pushes different rows apart.

    >>> model = train_alignment_only(np.random.default_rng(0).random((50, 8)))
    >>> bool(model.loss[-1] < model.loss[0] / 10)
    True
    """
    rows = as_real_matrix(x, "x")
    params = _initial(rows.shape[1], 0, seed)
    clean, noise_rng = torch.from_numpy(rows), np.random.default_rng(seed + 1)

    def loss() -> torch.Tensor:
        noisy = torch.from_numpy(rows + 0.1 * standard_normal(noise_rng, rows.shape))
        e, e_noisy = (_hidden(params, v) @ params["P"] for v in (clean, noisy))
        return 1.0 - F.cosine_similarity(e, e_noisy, dim=1).mean()

    return _model("alignment", params, 10.0, _fit(params, loss, 50), None)


def train_query_projection(
    queries: ArrayLike,
    answers: ArrayLike,
    others: ArrayLike,
    *,
    weight_decay: float = 1e-3,
    steps: int = 50,
) -> NDArray[np.float64]:
    r"""A linear map :math:`W` for queries only, trained so that :math:`qW` finds its answer.

    Chapter 7. Full-batch Adam from :math:`W = I` on the cross-entropy of
    :math:`\cos(q_i W, p)/0.05` over the pool :math:`p` of ``answers`` and ``others``
    (target: :math:`q_i`'s answer) plus :math:`\lambda\lVert W - I\rVert_F^2`. Answers
    are not mapped: the similarity becomes asymmetric.

    >>> rng = np.random.default_rng(0)
    >>> A = rng.normal(size=(6, 4)); Q = A + rng.normal(size=(6, 4)) + 2
    >>> W = train_query_projection(Q, A, -A, steps=100)
    >>> hits = [np.mean((q @ np.vstack([A, -A]).T).argmax(1) == range(6)) for q in (Q, Q @ W)]
    >>> bool(hits[1] > hits[0])
    True
    """
    Q, A = as_real_matrix(queries, "queries"), as_real_matrix(answers, "answers")
    others = as_real_matrix(others, "others")
    if A.shape != Q.shape or others.shape[1] != Q.shape[1]:
        raise ValueError(
            f"queries {Q.shape}, answers {A.shape}, others {others.shape}: expected one answer "
            "per query and one width"
        )
    decay = as_float_scalar(weight_decay, "weight_decay", nonnegative=True)
    steps = as_int_scalar(steps, "steps", minimum=1)
    q, pool = torch.from_numpy(Q), F.normalize(torch.from_numpy(np.vstack([A, others])), dim=1)
    params = {"W": torch.zeros(Q.shape[1], Q.shape[1], dtype=torch.float64, requires_grad=True)}
    targets = torch.arange(len(Q))

    def loss() -> torch.Tensor:
        mapped = F.normalize(q + q @ params["W"], dim=1)
        return F.cross_entropy(mapped @ pool.T / 0.05, targets) + decay * (params["W"] ** 2).sum()

    _fit(params, loss, steps)
    return np.eye(Q.shape[1]) + params["W"].detach().numpy()


def float32_cosines(x: ArrayLike, y: ArrayLike) -> NDArray[np.float32]:
    r"""Row cosines :math:`\langle x, y\rangle / (\lVert x\rVert \lVert y\rVert)` in float32.

    Chapter 7. Each sum is taken left to right (``numpy.cumsum``): the same bits on
    every CPU.

    >>> x = np.float32([[0.1, 0.2, 0.3], [1.0, 2.0, 2.0]])
    >>> float32_cosines(x, x).tolist()  # cos(x, x), one below 1 by rounding
    [0.9999998807907104, 1.0]
    """
    x, y = (np.asarray(as_real_matrix(v, n), dtype=np.float32) for v, n in ((x, "x"), (y, "y")))
    if x.shape != y.shape:
        raise ValueError(f"x has shape {x.shape} but y has shape {y.shape}; expected the same")
    dots, xx, yy = (np.cumsum(a * b, axis=1)[:, -1] for a, b in ((x, y), (x, x), (y, y)))
    return dots / (np.sqrt(xx) * np.sqrt(yy))
