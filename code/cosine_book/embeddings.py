r"""Embedding models trained in PyTorch, and measurements on real embeddings (chapter 7).

Digit models: a ReLU layer :math:`h`, embedding :math:`e = hP`, dot or cosine logits
against class vectors (:func:`train_embedding_model`) or alignment only
(:func:`train_alignment_only`, which collapses), in float64 on one thread from
:func:`cosine_book.portable.standard_normal` draws. Pretrained embeddings (GloVe,
MiniLM): :func:`all_but_the_top`, :func:`k_occurrence` (hubness), two hand-written
question sets (:data:`QA_SET`, :data:`QA_SET_2`, read by :func:`load_qa_set`; their
embeddings :func:`qa_embeddings`), :func:`pool_cosines`, :func:`answer_retrieval`,
:func:`train_query_projection`; float32 cosines summed left to right,
:func:`float32_cosines`. The threshold-free pair AUC is
:func:`cosine_book.cluster_recovery.pair_auc`.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from importlib.resources import files
from typing import Any, Literal

import numpy as np
import torch
import torch.nn.functional as F
from numpy.typing import ArrayLike, NDArray

from cosine_book._validation import (
    as_class_labels,
    as_feature_matrix,
    as_float_scalar,
    as_int_scalar,
    as_real_array,
    as_real_matrix,
)
from cosine_book.portable import standard_normal

__all__ = [
    "OBJECTIVES",
    "QA_SET",
    "QA_SET_2",
    "EmbeddingModel",
    "all_but_the_top",
    "answer_retrieval",
    "class_logits",
    "embed",
    "float32_cosines",
    "hidden_features",
    "k_occurrence",
    "load_qa_set",
    "pool_cosines",
    "qa_embeddings",
    "rescale_embedding",
    "train_alignment_only",
    "train_embedding_model",
    "train_query_projection",
]

#: Training objectives with class vectors (``"alignment"`` models have none).
OBJECTIVES: tuple[str, ...] = ("dot", "cosine")


def load_qa_set(number: int) -> tuple[tuple[str, str, str, str], ...]:
    """Question set ``number`` (1 or 2) from the package file ``data/qa_sets.csv``.

    Forty rows ``(question, answer, another question on the topic, the question rewritten
    as a statement of what it asks)``. Used in chapter 7 (:data:`QA_SET`, :data:`QA_SET_2`).

    Examples
    --------
    >>> load_qa_set(1)[8][:2]
    ('What is the capital of Australia?', 'Canberra, a planned city chosen as a compromise between Sydney and Melbourne.')
    """  # noqa: E501 (a doctest output)
    number = as_int_scalar(number, "number", minimum=1, maximum=2)
    text = files("cosine_book").joinpath("data", "qa_sets.csv").read_text(encoding="utf-8")
    rows = list(csv.reader(io.StringIO(text)))[1:]
    return tuple((q, a, o, r) for n, q, a, o, r in rows if int(n) == number)


#: Forty rows ``(question, answer, another question on the topic, the question rewritten
#: as a statement of what it asks)``, written for the book (:func:`load_qa_set`).
QA_SET = load_qa_set(1)

#: Forty more rows in the same form, written independently by a referee of chapter 7 as a
#: second hand-written set, to see whether what :data:`QA_SET` shows is a property of it.
QA_SET_2 = load_qa_set(2)

_QA_COLUMNS = ("questions", "answers", "others")


def qa_embeddings(number: int, model: Any = None) -> dict[str, NDArray[np.float64]]:
    """MiniLM embeddings (unit rows, float64) of question set ``number``'s first three columns.

    Keys ``"questions"``, ``"answers"``, ``"others"``; ``model`` a loaded sentence model
    (default :func:`cosine_book.datasets.load_sentence_model`). Used in chapter 7, its
    sweeps and tests.
    """
    if model is None:
        from cosine_book.datasets import load_sentence_model

        model = load_sentence_model()
    columns = zip(*load_qa_set(number), strict=True)
    return {
        name: model.encode(list(texts), normalize_embeddings=True).astype(np.float64)
        for name, texts in zip(_QA_COLUMNS, columns, strict=False)
    }


def pool_cosines(queries: ArrayLike, answers: ArrayLike, others: ArrayLike):
    """Cosines of each query with the pool: the ``answers``, then the ``others``.

    Row ``i``, column ``j``: the cosine of query ``i`` with pool item ``j`` (an answer for
    ``j < len(answers)``). Used in chapter 7 and its sweeps (:func:`answer_retrieval`).

    Examples
    --------
    >>> pool_cosines([[2.0, 0.0]], [[1.0, 1.0]], [[0.0, 3.0], [5.0, 0.0]]).round(4).tolist()
    [[0.7071, 0.0, 1.0]]
    """
    Q, A = _unit(queries, "queries"), _unit(answers, "answers")
    others = _unit(others, "others")
    if A.shape[1] != Q.shape[1] or others.shape[1] != Q.shape[1]:
        raise ValueError(f"expected one width; got {Q.shape}, {A.shape}, {others.shape}")
    return Q @ np.vstack([A, others]).T


def float32_cosines(x: ArrayLike, y: ArrayLike) -> NDArray[np.float32]:
    r"""Row cosines :math:`\langle x, y\rangle / (\sqrt{\langle x, x\rangle}\sqrt{\langle y, y\rangle})` in float32.

    Each sum taken left to right (``numpy.cumsum``), so the same bits on every CPU. Used in
    chapter 7 (the cosine of a vector with itself), its sweeps and tests.

    Examples
    --------
    >>> x = np.float32([[0.1, 0.2, 0.3], [1.0, 2.0, 2.0]])
    >>> float32_cosines(x, x).tolist()  # cos(x, x), one below 1 by rounding
    [0.9999998807907104, 1.0]
    """  # noqa: E501 (the formula)
    x, y = (np.asarray(as_real_matrix(v, n), dtype=np.float32) for v, n in ((x, "x"), (y, "y")))
    if x.shape != y.shape:
        raise ValueError(f"x has shape {x.shape} but y has shape {y.shape}; expected the same")
    dots, xx, yy = (np.cumsum(a * b, axis=1)[:, -1] for a, b in ((x, y), (x, x), (y, y)))
    return dots / (np.sqrt(xx) * np.sqrt(yy))


@dataclass(frozen=True)
class EmbeddingModel:
    r"""A trained network: ReLU hidden layer, linear embedding, class vectors.

    Logits :math:`\langle e, c_k\rangle + b_k` (``"dot"``) or :math:`s\cos(e, c_k)`
    (``"cosine"``; a zero vector has cosine 0), :math:`c_k` the rows of ``class_vectors``;
    ``"alignment"`` models have no classes. ``loss``: the training loss before each step.
    """

    objective: str
    W1: NDArray[np.float64]
    b1: NDArray[np.float64]
    P: NDArray[np.float64]
    class_vectors: NDArray[np.float64]
    bias: NDArray[np.float64]
    scale: float
    weight_decay: float
    loss: NDArray[np.float64]
    test_accuracy: float | None

    def __post_init__(self) -> None:
        for name in ("W1", "b1", "P", "class_vectors", "bias", "loss"):
            ndim = 2 if name in _MATRICES else 1
            value = as_real_array(getattr(self, name), name, ndim=ndim, nonempty=False)
            object.__setattr__(self, name, value.astype(np.float64))
        h, d, k = self.W1.shape[1], self.P.shape[1], self.class_vectors.shape[0]
        for name, shape in {"b1": (h,), "P": (h, d), "class_vectors": (k, d), "bias": (k,)}.items():
            if getattr(self, name).shape != shape:
                raise ValueError(f"{name} has shape {getattr(self, name).shape}; expected {shape}")

    @property
    def dim(self) -> int:
        """Embedding dimension (columns of ``P``)."""
        return int(self.P.shape[1])

    @property
    def n_classes(self) -> int:
        """Number of classes (0 for ``"alignment"``)."""
        return int(self.class_vectors.shape[0])


Params = dict[str, torch.Tensor]
_WEIGHTS = ("W1", "b1", "P", "class_vectors", "bias")
_MATRICES = ("W1", "P", "class_vectors")


@contextmanager
def _one_thread() -> Iterator[None]:
    """PyTorch on one thread: the same summation order every run, no contention."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def _embeddings(params: Params, x: torch.Tensor) -> torch.Tensor:
    return torch.relu(x @ params["W1"] + params["b1"]) @ params["P"]


def _logits(params: Params, x: torch.Tensor, objective: str, scale: float) -> torch.Tensor:
    e = _embeddings(params, x)
    if objective == "dot":
        return e @ params["class_vectors"].T + params["bias"]
    return scale * F.normalize(e, dim=1) @ F.normalize(params["class_vectors"], dim=1).T


def _fit(
    params: Params, loss: Callable[[], torch.Tensor], steps: int, rate: float, decay: float = 0.0
) -> NDArray[np.float64]:
    """Full-batch Adam on ``loss()`` (AdamW's decay of the matrices if ``decay``); the losses."""
    for value in params.values():
        value.requires_grad_(True)
    matrices, rest = ([v for n, v in params.items() if (n in _MATRICES) == m] for m in (1, 0))
    groups = [{"params": matrices, "weight_decay": decay}, {"params": rest, "weight_decay": 0.0}]
    optimizer = torch.optim.AdamW(groups, lr=rate) if decay else torch.optim.Adam(groups, lr=rate)
    history = np.empty(steps)
    with _one_thread():
        for step in range(steps):
            optimizer.zero_grad()
            value = loss()
            history[step] = value.item()
            if not math.isfinite(history[step]):
                raise ValueError(f"training overflowed at step {step}: rescale the inputs")
            value.backward()
            optimizer.step()
    return history


def _sizes(**sizes: int) -> list[int]:
    return [as_int_scalar(value, name, minimum=1) for name, value in sizes.items()]


def _initial(n_inputs: int, hidden: int, dim: int, classes: int, seed: int) -> Params:
    """He-normal ``W1``; ``P`` and class vectors with variance 1/fan-in; zero biases."""
    rng = np.random.default_rng(as_int_scalar(seed, "seed", minimum=0))
    arrays = {
        "W1": math.sqrt(2.0 / n_inputs) * standard_normal(rng, (n_inputs, hidden)),
        "b1": np.zeros(hidden),
        "P": standard_normal(rng, (hidden, dim)) / math.sqrt(hidden),
        "class_vectors": standard_normal(rng, (classes, dim)) / math.sqrt(dim),
        "bias": np.zeros(classes),
    }
    return {name: torch.from_numpy(value) for name, value in arrays.items()}


def _model(objective: str, params: Params, scale: float, decay: float, loss, accuracy):
    arrays = {name: value.detach().numpy().copy() for name, value in params.items()}
    return EmbeddingModel(
        objective, **arrays, scale=scale, weight_decay=decay, loss=loss, test_accuracy=accuracy
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
    weight_decay: float = 0.0,
    decoupled: bool = False,
    seed: int = 0,
) -> EmbeddingModel:
    r"""Train an embedding network with a dot-product or a cosine classification head.

    Full-batch Adam on the mean cross-entropy of :func:`class_logits` plus the L2
    penalty :math:`\lambda(\lVert W_1\rVert_F^2 + \lVert P\rVert_F^2 + \lVert
    C\rVert_F^2)`, :math:`\lambda` the ``weight_decay``; with ``decoupled=True``,
    AdamW's decoupled decay of the three matrices instead (no penalty in the loss).
    Initial weights from ``default_rng(seed)`` (``W1`` He-normal, ``P`` and the class
    vectors with variance 1/fan-in, zero biases); classes ``0 .. max(y_train)``;
    ``test_accuracy`` on ``(x_test, y_test)``.

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
    if objective not in OBJECTIVES:
        raise ValueError(f"objective must be 'dot' or 'cosine'; got {objective!r}")
    dim, n_hidden, steps = _sizes(dim=dim, n_hidden=n_hidden, steps=steps)
    rate = as_float_scalar(learning_rate, "learning_rate", positive=True)
    scale = as_float_scalar(scale, "scale", positive=True)
    decay = as_float_scalar(weight_decay, "weight_decay", nonnegative=True)
    x = torch.from_numpy(as_real_matrix(x_train, "x_train"))
    y = as_class_labels(y_train, "y_train", x.shape[0], max_classes=1 << 16)
    x_held = torch.from_numpy(as_feature_matrix(x_test, "x_test", x.shape[1]))
    y_held = as_class_labels(y_test, "y_test", x_held.shape[0], int(y.max()) + 1)
    params = _initial(x.shape[1], n_hidden, dim, int(y.max()) + 1, seed)
    targets, weights = torch.from_numpy(y), [params[n] for n in _MATRICES]
    penalty = 0.0 if decoupled else decay

    def loss() -> torch.Tensor:
        value = F.cross_entropy(_logits(params, x, objective, scale), targets)
        return value + penalty * sum((w * w).sum() for w in weights) if penalty else value

    history = _fit(params, loss, steps, rate, decay - penalty)
    with torch.no_grad():
        predicted = _logits(params, x_held, objective, scale).numpy().argmax(axis=1)
    return _model(objective, params, scale, decay, history, float(np.mean(predicted == y_held)))


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

    Each step draws a noisy copy :math:`x' = x + \sigma\varepsilon` of every row
    (:math:`\sigma` the ``noise``, :math:`\varepsilon` from ``default_rng(seed + 1)``)
    and takes an Adam step on :math:`1 - \frac1n\sum_i \cos(e_i, e'_i)`: nothing pushes
    different rows apart, so every row can go the same way.

    Examples
    --------
    >>> x = np.random.default_rng(0).random((50, 8))
    >>> model = train_alignment_only(x, dim=4, n_hidden=8, steps=100)
    >>> bool(model.loss[-1] < model.loss[0] / 10)
    True
    """
    dim, n_hidden, steps = _sizes(dim=dim, n_hidden=n_hidden, steps=steps)
    noise = as_float_scalar(noise, "noise", nonnegative=True)
    rate = as_float_scalar(learning_rate, "learning_rate", positive=True)
    rows = as_real_matrix(x, "x")
    params = _initial(rows.shape[1], n_hidden, dim, 0, seed)
    clean, noise_rng = torch.from_numpy(rows), np.random.default_rng(seed + 1)

    def loss() -> torch.Tensor:
        noisy = torch.from_numpy(rows + noise * standard_normal(noise_rng, rows.shape))
        pairs = F.cosine_similarity(_embeddings(params, clean), _embeddings(params, noisy), dim=1)
        return 1.0 - pairs.mean()

    return _model("alignment", params, 10.0, 0.0, _fit(params, loss, steps, rate), None)


def _forward(model: EmbeddingModel, x: ArrayLike, what: str) -> NDArray[np.float64]:
    if not isinstance(model, EmbeddingModel):
        raise ValueError(f"model must be an EmbeddingModel; got {type(model).__name__}")
    if what == "logits" and model.objective == "alignment":
        raise ValueError("model was trained with objective 'alignment' and has no classes")
    inputs = torch.from_numpy(as_feature_matrix(x, "x", model.W1.shape[0]))
    params = {name: torch.from_numpy(getattr(model, name)) for name in _WEIGHTS}
    with torch.no_grad():
        if what == "hidden features":
            out = torch.relu(inputs @ params["W1"] + params["b1"])
        elif what == "embeddings":
            out = _embeddings(params, inputs)
        else:
            out = _logits(params, inputs, model.objective, model.scale)
    if not torch.isfinite(out).all():
        raise ValueError(f"the {what} overflow; expected inputs on the scale of the training data")
    return out.numpy()


def hidden_features(model: EmbeddingModel, x: ArrayLike) -> NDArray[np.float64]:
    r"""The ReLU hidden layer :math:`\max(x W_1 + b_1, 0)`, nonnegative (example: :func:`embed`)."""
    return _forward(model, x, "hidden features")


def embed(model: EmbeddingModel, x: ArrayLike) -> NDArray[np.float64]:
    r"""The embeddings :math:`e = h P` of the rows of ``x``.

    Examples
    --------
    >>> model = EmbeddingModel("dot", [[1.0, -1.0]], [0.0, 0.5], [[1.0], [2.0]],
    ...                        [[1.0]], [0.0], 10.0, 0.0, [0.0], None)
    >>> hidden_features(model, [[2.0], [-1.0]]).tolist(), embed(model, [[2.0], [-1.0]]).tolist()
    ([[2.0, 0.0], [0.0, 1.5]], [[2.0], [3.0]])
    """
    return _forward(model, x, "embeddings")


def class_logits(model: EmbeddingModel, x: ArrayLike) -> NDArray[np.float64]:
    r"""Class logits: :math:`e C^\top + b` (dot) or :math:`s\cos(e, c_k)` (cosine).

    Examples
    --------
    >>> model = EmbeddingModel("cosine", [[1.0, 0.0]], [0.0, 0.0], [[1.0, 0.0], [0.0, 1.0]],
    ...                        [[1.0, 0.0], [1.0, 1.0]], [0.0, 0.0], 10.0, 0.0, [0.0], None)
    >>> class_logits(model, [[3.0], [0.0]]).round(4).tolist()
    [[10.0, 7.0711], [0.0, 0.0]]
    """
    return _forward(model, x, "logits")


def rescale_embedding(model: EmbeddingModel, scales: ArrayLike) -> EmbeddingModel:
    r"""The model with :math:`P \to P\,\mathrm{diag}(s)` and :math:`C \to C\,\mathrm{diag}(1/s)`.

    Chapter 6's freedom: dot logits stay, cosines between embeddings do not.

    Examples
    --------
    >>> model = EmbeddingModel("dot", [[1.0, 0.0]], [0.0, 0.0], [[1.0, 2.0], [0.0, 1.0]],
    ...                        [[1.0, 1.0]], [0.0], 10.0, 0.0, [0.0], None)
    >>> rescaled = rescale_embedding(model, [4.0, 0.5])
    >>> rescaled.P.tolist(), rescaled.class_vectors.tolist()
    ([[4.0, 1.0], [0.0, 0.5]], [[0.25, 2.0]])
    >>> class_logits(model, [[1.0]]).tolist(), class_logits(rescaled, [[1.0]]).tolist()
    ([[3.0]], [[3.0]])
    """
    if not isinstance(model, EmbeddingModel):
        raise ValueError(f"model must be an EmbeddingModel; got {type(model).__name__}")
    s = as_real_array(scales, "scales", ndim=1).astype(np.float64)
    if s.shape != (model.dim,) or not np.all(s > 0):
        raise ValueError(f"scales must be {model.dim} positive numbers (model.dim); got {s}")
    return replace(model, P=model.P * s, class_vectors=model.class_vectors / s)


def _unit(E: ArrayLike, name: str = "E") -> NDArray[np.float64]:
    rows = as_real_matrix(E, name)
    norms = np.sqrt(np.sum(rows * rows, axis=1))
    if not np.all(norms > 0):
        raise ValueError(f"{name} has a zero row ({int(np.argmin(norms))}), which has no cosine")
    return rows / norms[:, None]


def all_but_the_top(E: ArrayLike, n_components: int, *, fit: ArrayLike | None = None):
    r"""Subtract the mean row and remove the top principal directions (Mu and Viswanath, 2018).

    :math:`e \to (e - \bar e) - \sum_{j \le D} \langle e - \bar e, v_j\rangle v_j`, the
    mean and the top :math:`D` (``n_components``) right singular vectors :math:`v_j`
    from the centred rows of ``fit`` (default ``E``); ``D = 0`` only centres.

    Examples
    --------
    >>> E = np.array([[2.0, 0.0, 1.0], [-2.0, 0.0, 1.0], [0.0, 1.0, 1.0], [0.0, -1.0, 1.0]])
    >>> all_but_the_top(E, 0)[:, 2].tolist(), (all_but_the_top(E, 1) + 0.0).tolist()
    ([0.0, 0.0, 0.0, 0.0], [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, -1.0, 0.0]])
    """
    rows = as_real_matrix(E, "E")
    reference = rows if fit is None else as_feature_matrix(fit, "fit", rows.shape[1])
    limit = min(reference.shape) - 1
    n_components = as_int_scalar(n_components, "n_components", minimum=0, maximum=limit)
    mean = reference.mean(axis=0)
    top = np.linalg.svd(reference - mean, full_matrices=False)[2][:n_components]
    return (rows - mean) - ((rows - mean) @ top.T) @ top


def k_occurrence(E: ArrayLike, k: int = 10, *, chunk: int = 1000) -> NDArray[np.int64]:
    r"""How often each row is among the other rows' ``k`` nearest neighbours by cosine.

    The counts :math:`N_k` average :math:`k`; hubs (rows in very many lists) and rows
    in none skew their distribution to the right (hubness, Radovanović et al., 2010;
    :func:`scipy.stats.skew`). ``chunk`` rows at a time; among equal cosines the choice
    is ``numpy.argpartition``'s.

    Examples
    --------
    >>> k_occurrence([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [0.6, 0.4]], 1).tolist()
    [1, 2, 0, 1]
    """
    unit = _unit(E)
    n = unit.shape[0]
    k = as_int_scalar(k, "k", minimum=1, maximum=n - 1)
    chunk = as_int_scalar(chunk, "chunk", minimum=1)
    counts = np.zeros(n, dtype=np.int64)
    for start in range(0, n, chunk):
        S = unit[start : start + chunk] @ unit.T
        S[np.arange(S.shape[0]), np.arange(start, start + S.shape[0])] = -np.inf  # not itself
        counts += np.bincount(np.argpartition(-S, k - 1, axis=1)[:, :k].ravel(), minlength=n)
    return counts


def answer_retrieval(queries: ArrayLike, answers: ArrayLike, others: ArrayLike) -> dict:
    """Retrieve by cosine from the pool of all ``answers`` and ``others`` (other questions).

    Row ``i`` of ``queries`` is answered by row ``i`` of ``answers``. Returns the share
    of queries whose answer comes first ("recall@1"), the mean of 1 / its rank ("MRR";
    ties in its favour) and the share whose first hit is in ``others`` ("question first").

    Examples
    --------
    >>> answer_retrieval([[1.0, 0.1], [0.0, 1.0]], [[1.0, 0.0], [0.3, 1.0]],
    ...                  [[1.0, 0.2], [-1.0, 0.0]])
    {'recall@1': 0.5, 'MRR': 0.75, 'question first': 0.5}
    """
    S = pool_cosines(queries, answers, others)
    n = np.shape(answers)[0]
    if S.shape[0] != n:
        raise ValueError(f"expected one answer per query; got {S.shape[0]} queries, {n} answers")
    ranks = 1 + np.sum(S > np.diag(S)[:, None], axis=1)
    first = float(np.mean(np.argmax(S, axis=1) >= n))
    recall, mrr = float(np.mean(ranks == 1)), float(np.mean(1 / ranks))
    return {"recall@1": recall, "MRR": mrr, "question first": first}


def train_query_projection(
    queries: ArrayLike,
    answers: ArrayLike,
    others: ArrayLike,
    *,
    weight_decay: float = 1e-3,
    steps: int = 50,
    learning_rate: float = 0.01,
    temperature: float = 0.05,
) -> NDArray[np.float64]:
    r"""A linear map :math:`W` for queries only, trained so that :math:`qW` finds its answer.

    Full-batch Adam from :math:`W = I` on the cross-entropy of :math:`\cos(q_i W, p)/\tau`
    over the pool :math:`p` of ``answers`` and ``others`` (target: :math:`q_i`'s answer)
    plus :math:`\lambda\lVert W - I\rVert_F^2`. Answers are not mapped: the similarity
    becomes asymmetric.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> A = rng.normal(size=(6, 4)); Q = A + rng.normal(size=(6, 4)) + 2
    >>> W = train_query_projection(Q, A, -A, steps=100)
    >>> answer_retrieval(Q @ W, A, -A)["MRR"] > answer_retrieval(Q, A, -A)["MRR"]
    True
    """
    Q = as_real_matrix(queries, "queries")
    A = as_feature_matrix(answers, "answers", Q.shape[1])
    pool = np.vstack([A, as_feature_matrix(others, "others", Q.shape[1])])
    if A.shape[0] != Q.shape[0]:
        raise ValueError(f"answers has {A.shape[0]} rows; expected one per query ({Q.shape[0]})")
    decay = as_float_scalar(weight_decay, "weight_decay", nonnegative=True)
    (steps,) = _sizes(steps=steps)
    rate = as_float_scalar(learning_rate, "learning_rate", positive=True)
    tau = as_float_scalar(temperature, "temperature", positive=True)
    q, pool_t = torch.from_numpy(Q), F.normalize(torch.from_numpy(pool), dim=1)
    params = {"W": torch.zeros(Q.shape[1], Q.shape[1], dtype=torch.float64)}
    targets = torch.arange(len(Q))

    def loss() -> torch.Tensor:
        mapped = F.normalize(q + q @ params["W"], dim=1)
        return F.cross_entropy(mapped @ pool_t.T / tau, targets) + decay * (params["W"] ** 2).sum()

    _fit(params, loss, steps, rate)
    return np.eye(Q.shape[1]) + params["W"].detach().numpy()
