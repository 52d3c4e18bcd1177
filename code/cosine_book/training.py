r"""Chapter 1's experiment: train the transformer, and record how each update aims.

At step :math:`t` the optimizer sees the mini-batch gradient :math:`g_t` and moves the
parameters by :math:`-u_t`, :math:`u_t = \theta_{before} - \theta_{after}` (the learning
rates are part of it). :func:`train` records the block decomposition of
:math:`\cos(u_t, g_t)` over the model's 30 tensors and, now and then, of
:math:`\cos(u_t, G_t)`, :math:`G_t` the gradient of a large fixed batch. With a
threshold, each tensor's update is first replaced by :func:`truncate_tensor`'s.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field

import numpy as np
import torch
from numpy.typing import ArrayLike, NDArray

from cosine_book._validation import as_float_scalar, as_int_scalar, as_real_array
from cosine_book.datasets import load_tiny_shakespeare
from cosine_book.gpt import CONTEXT, GPT, CharCorpus
from cosine_book.similarity import BlockCosines, block_cosines

__all__ = ["load_traces", "shakespeare_corpus", "tensor_kind", "train", "truncate_tensor"]

OPTIMIZERS = ("SGD", "momentum", "AdamW", "Muon")

_EPS = float(np.finfo(np.float64).eps)


def truncate_tensor(update: ArrayLike, gradient: ArrayLike, threshold: float) -> torch.Tensor:
    r"""The nearest tensor to ``update`` whose cosine with ``gradient`` is at least ``threshold``.

    Theorem 1.1's projection of :math:`u` onto the cone
    :math:`\{v : \langle v, g\rangle \ge \tau \lVert v\rVert \lVert g\rVert\}`. With
    :math:`a = \langle u, \hat g\rangle`, :math:`b = \lVert u - a\hat g\rVert` and
    :math:`s = \sqrt{1 - \tau^2}`: :math:`u` itself if :math:`\tau b \le s a` (its
    cosine is at least :math:`\tau`); zero if :math:`\tau a + s b \le 0` (the polar
    cone); else :math:`(\tau a + s b)\,(\tau \hat g + s e)`, the nearest point of the
    cone's edge, :math:`e` the unit vector along :math:`u - a\hat g`. Float64
    arithmetic, returned in ``update``'s dtype; a zero gradient leaves ``update`` as it
    is. Used in chapter 1.

    >>> truncate_tensor(torch.tensor([0.0, 1.0]), torch.tensor([1.0, 0.0]), 0.6)
    tensor([0.4800, 0.6400])
    """
    threshold = as_float_scalar(threshold, "threshold", interval=(0.0, 1.0))
    u = torch.as_tensor(as_real_array(update, "update"))
    g = torch.as_tensor(as_real_array(gradient, "gradient"))
    if u.shape != g.shape:
        raise ValueError(f"update has shape {tuple(u.shape)} but gradient {tuple(g.shape)}")
    return _truncate(u if u.is_floating_point() else u.double(), g, threshold)


def _truncate(update: torch.Tensor, gradient: torch.Tensor, tau: float) -> torch.Tensor:
    u, g = update.double(), gradient.double()
    if not u.any() or not g.any():
        return update.clone()  # the zero update is in the cone; a zero g sets no cone
    # The projection scales with u and ignores g's scale: both are divided by a power of
    # two near their largest entry (exact), so that no square overflows or underflows.
    exponent = torch.frexp(u.abs().max()).exponent
    u = torch.ldexp(u, -exponent)
    g_hat = torch.ldexp(g, -torch.frexp(g.abs().max()).exponent)
    g_hat = g_hat / torch.linalg.vector_norm(g_hat)
    along = float(torch.sum(u * g_hat))
    across_vector = u - along * g_hat
    across = float(torch.linalg.vector_norm(across_vector))
    # Rounding leaves a part across g of order eps ||u|| when u is parallel to g.
    if across <= (math.log2(u.numel()) + 5.0) * _EPS * float(torch.linalg.vector_norm(u)):
        across = 0.0
    sine = math.sqrt(1.0 - tau**2)
    if along >= 0.0 and tau * across <= sine * along:  # cos(u, g) >= tau, well conditioned
        return update.clone()
    reach = tau * along + sine * across
    if reach <= 0.0 or across == 0.0:
        return torch.zeros_like(update)
    edge = tau * g_hat + sine * (across_vector / across)
    return torch.ldexp(reach * edge, exponent).to(update.dtype)


@dataclass
class TrainingRun:
    r"""What :func:`train` records; arrays by step, then by tensor in ``names``'s order.

    ``local`` and ``raw_local`` are the local cosines of the applied update and of the
    optimizer's own (before truncation); ``weights``, ``update_norms``,
    ``gradient_norms``, ``global_cosine`` and ``profile_cosine`` (:math:`\rho`) the rest
    of the decomposition; ``parameter_norms`` each tensor's norm before the step. The
    ``probe_*`` arrays hold :math:`\cos(u_t, G_t)` and its :math:`\rho` at the steps
    ``probe_steps``. A run that diverged stops, with NaN from that step on.
    """

    optimizer: str
    learning_rate: float
    threshold: float | None
    batch_size: int
    seed: int
    names: tuple[str, ...]
    loss: NDArray[np.float64]
    local: NDArray[np.float64]
    raw_local: NDArray[np.float64]
    weights: NDArray[np.float64]
    update_norms: NDArray[np.float64]
    gradient_norms: NDArray[np.float64]
    global_cosine: NDArray[np.float64]
    profile_cosine: NDArray[np.float64]
    parameter_norms: NDArray[np.float64] | None = None
    probe_steps: NDArray[np.int64] = field(default_factory=lambda: np.empty(0, np.int64))
    probe_global: NDArray[np.float64] = field(default_factory=lambda: np.empty(0))
    probe_profile: NDArray[np.float64] = field(default_factory=lambda: np.empty(0))
    final_held_loss: float = math.nan
    diverged: bool = False

    @property
    def steps(self) -> int:
        """Number of recorded steps."""
        return len(self.loss)


_PER_STEP = ("loss", "global_cosine", "profile_cosine")
_PER_TENSOR = ("local", "raw_local", "weights", "update_norms", "gradient_norms")


def load_traces(path) -> dict[tuple[str, float | None], TrainingRun]:
    """The runs stored by ``experiments/optimizer_sweep.py``, by (optimizer, threshold).

    The threshold is ``None`` without truncation; the traces keep the per-step fields
    only. Used in chapter 1.
    """
    runs = {}
    with np.load(path) as stored:
        for label in sorted({name.split("/")[0] for name in stored.files}):
            optimizer, rate, batch_size, seed, threshold = label.split("|")
            tau = None if threshold == "off" else float(threshold)
            runs[optimizer, tau] = TrainingRun(
                optimizer, float(rate), tau, int(batch_size), int(seed),
                names=tuple(str(n) for n in stored[f"{label}/names"]),
                **{k: stored[f"{label}/{k}"].astype(np.float64) for k in _PER_STEP + _PER_TENSOR},
            )  # fmt: skip
    return runs


def tensor_kind(name: str) -> str:
    """The kind of a :class:`~cosine_book.gpt.GPT` parameter tensor, by its name. Used in chapter 1.

    >>> [tensor_kind(n) for n in ("head.bias", "blocks.0.qkv.weight", "token_embedding.weight")]
    ['norms and biases', 'attention', 'embeddings']
    """
    if name.endswith("bias") or "norm" in name:
        return "norms and biases"
    if "embedding" in name:
        return "embeddings"
    if name.startswith("head"):
        return "head"
    return "MLP" if ".mlp_" in name else "attention"


@functools.cache
def shakespeare_corpus() -> CharCorpus:
    """Tiny Shakespeare as character codes, 90 % training text (read once). Used in chapter 1."""
    return CharCorpus(load_tiny_shakespeare())


def _optimizers(name: str, model: GPT, rate: float) -> list[torch.optim.Optimizer]:
    """Chapter 1's optimizers; Muon takes the blocks' matrices, AdamW the other tensors."""
    if name == "SGD":
        return [torch.optim.SGD(model.parameters(), lr=rate)]
    if name == "momentum":
        return [torch.optim.SGD(model.parameters(), lr=rate, momentum=0.9)]
    if name == "AdamW":
        return [torch.optim.AdamW(model.parameters(), lr=rate, betas=(0.9, 0.95), weight_decay=0.0)]
    named = list(model.named_parameters())
    hidden = [p for n, p in named if p.ndim == 2 and n.startswith("blocks.")]
    rest = [p for n, p in named if not (p.ndim == 2 and n.startswith("blocks."))]
    # "match_rms_adamw" scales each matrix's rate to give its update an AdamW update's RMS.
    muon = torch.optim.Muon(hidden, lr=rate, weight_decay=0.0, adjust_lr_fn="match_rms_adamw")
    return [muon, torch.optim.AdamW(rest, lr=rate, betas=(0.9, 0.95), weight_decay=0.0)]


def _gradients(model: GPT, x: torch.Tensor, y: torch.Tensor) -> tuple[float, list[torch.Tensor]]:
    model.zero_grad(set_to_none=True)
    loss = model.loss(x, y)
    loss.backward()
    return float(loss.detach()), [p.grad.detach().clone() for p in model.parameters()]


def train(
    optimizer: str,
    learning_rate: float,
    *,
    steps: int = 200,
    batch_size: int = 32,
    seed: int = 0,
    threshold: float | None = None,
    probe_every: int = 25,
    probe_windows: int = 256,
) -> TrainingRun:
    r"""Train :class:`~cosine_book.gpt.GPT` on Tiny Shakespeare and record every step.

    ``optimizer`` is ``"SGD"``, ``"momentum"`` (heavy ball, 0.9), ``"AdamW"`` (betas
    0.9 and 0.95) or ``"Muon"`` (``torch.optim.Muon`` on the blocks' matrices and AdamW
    at the same rate on the rest), none with weight decay. ``seed`` seeds the initial
    weights and ``seed + 1`` the mini-batches of ``batch_size`` windows; :math:`G_t` is
    the gradient of ``probe_windows`` fixed training windows, taken every
    ``probe_every`` steps, and the held-out loss is measured on as many fixed held-out
    windows. ``threshold`` is :math:`\tau` in [0, 1], or ``None`` for no truncation. The
    run uses one thread (the same sums in the same order on every machine). Used in
    chapter 1.

    >>> run = train("SGD", 0.5, steps=2, batch_size=2, probe_every=2, probe_windows=2)
    >>> run.local.shape, run.probe_steps.tolist()
    ((2, 30), [0])
    >>> bool(np.allclose(run.local, 1.0))  # plain SGD moves along the gradient
    True
    """
    if optimizer not in OPTIMIZERS:
        raise ValueError(f"optimizer must be one of {OPTIMIZERS}; got {optimizer!r}")
    learning_rate = as_float_scalar(learning_rate, "learning_rate", positive=True)
    steps = as_int_scalar(steps, "steps", minimum=1)
    batch_size = as_int_scalar(batch_size, "batch_size", minimum=1)
    seed = as_int_scalar(seed, "seed", minimum=0)
    probe_every = as_int_scalar(probe_every, "probe_every", minimum=1)
    probe_windows = as_int_scalar(probe_windows, "probe_windows", minimum=1)
    if threshold is not None:
        threshold = as_float_scalar(threshold, "threshold", interval=(0.0, 1.0))
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return _train(optimizer, learning_rate, threshold, batch_size, seed, steps,
                      probe_every, probe_windows)  # fmt: skip
    finally:
        torch.set_num_threads(threads)


def _train(
    name: str, rate: float, tau: float | None, batch_size: int, seed: int, steps: int,
    probe_every: int, probe_windows: int,
) -> TrainingRun:  # fmt: skip
    """:func:`train` for checked input."""
    corpus = shakespeare_corpus()
    model = GPT(seed=seed)
    names = tuple(n for n, _ in model.named_parameters())
    parameters = list(model.parameters())
    optimizers = _optimizers(name, model, rate)
    batches = torch.Generator().manual_seed(seed + 1)
    fixed = torch.Generator().manual_seed(2**31 - 1)
    probe = corpus.batch(probe_windows, CONTEXT, fixed)
    held = corpus.batch(probe_windows, CONTEXT, fixed, held=True)
    record = {key: np.full(steps, np.nan) for key in _PER_STEP}
    record |= {k: np.full((steps, len(names)), np.nan) for k in (*_PER_TENSOR, "parameter_norms")}
    probes, diverged = [], False

    def cosines(update: list[torch.Tensor], gradient: list[torch.Tensor]) -> BlockCosines:
        return block_cosines(
            dict(zip(names, update, strict=True)), dict(zip(names, gradient, strict=True))
        )

    for step in range(steps):
        full_gradient = _gradients(model, *probe)[1] if step % probe_every == 0 else None
        loss, gradient = _gradients(model, *corpus.batch(batch_size, CONTEXT, batches))
        before = [p.detach().clone() for p in parameters]
        for optimizer in optimizers:
            optimizer.step()
        with torch.no_grad():
            update = [b - p for b, p in zip(before, parameters, strict=True)]
            if not (math.isfinite(loss) and all(u.isfinite().all() for u in update)):
                diverged = True
                break
            result = cosines(update, gradient)
            record["raw_local"][step] = result.local
            if tau is not None:
                update = [_truncate(u, g, tau) for u, g in zip(update, gradient, strict=True)]
                for p, b, u in zip(parameters, before, update, strict=True):
                    p.copy_(b - u)
                result = cosines(update, gradient)
        record["loss"][step] = loss
        record["parameter_norms"][step] = [float(torch.linalg.vector_norm(b)) for b in before]
        record["local"][step], record["weights"][step] = result.local, result.weights
        record["update_norms"][step] = result.x_norms
        record["gradient_norms"][step] = result.y_norms
        record["global_cosine"][step] = result.global_cosine
        record["profile_cosine"][step] = result.profile_cosine
        if full_gradient is not None:
            against = cosines(update, full_gradient)
            probes.append((step, against.global_cosine, against.profile_cosine))
    with torch.no_grad():
        final_held_loss = math.inf if diverged else float(model.loss(*held))
    probes = np.array(probes, dtype=np.float64).reshape(-1, 3)  # step, global cosine, rho
    return TrainingRun(
        name, rate, tau, batch_size, seed, names, **record, final_held_loss=final_held_loss,
        probe_steps=probes[:, 0].astype(np.int64), probe_global=probes[:, 1],
        probe_profile=probes[:, 2], diverged=diverged,
    )  # fmt: skip
