r"""Train chapter 1's transformer and record, per step and per tensor, how the update aims.

At step :math:`t` the optimizer sees the mini-batch gradient :math:`g_t` and moves
the parameters by :math:`-u_t` (so :math:`u_t` points downhill when it agrees with
:math:`g_t`; learning rates, per-group rates and AdamW's weight decay are all part
of it). :func:`train` records the block decomposition of :math:`\cos(u_t, g_t)`
over the model's parameter tensors (local cosines, weights, :math:`\rho`, global
cosine) and, every ``probe_every`` steps, the same against :math:`G_t`, the
gradient of a fixed large batch of training windows (an estimate of the full
gradient that the step did not see).

With a threshold :math:`\tau`, every tensor's update whose local cosine is below
:math:`\tau` is replaced by its projection onto the cone of Theorem 1.1
(:func:`truncate_tensor`) before it is applied; the optimizer's own state stays
what the raw optimizer made it. Chapter 1 uses this module; its sweeps are in
``experiments/``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from numpy.typing import NDArray

from cosine_book._validation import as_float_scalar, as_int_scalar
from cosine_book.datasets import load_tiny_shakespeare
from cosine_book.gpt import GPT, CharCorpus, GPTConfig
from cosine_book.optim import truncate_to_cosine
from cosine_book.similarity import block_cosines

__all__ = [
    "OPTIMIZERS",
    "TrainingRun",
    "load_traces",
    "make_optimizer",
    "tensor_kind",
    "train",
    "truncate_tensor",
]

#: The optimizers of chapter 1, by name.
OPTIMIZERS = ("SGD", "momentum", "AdamW", "Muon")


class _Pair(torch.optim.Optimizer):
    """Muon on the hidden matrices and AdamW on the rest, stepped as one optimizer."""

    def __init__(self, muon: torch.optim.Optimizer, adamw: torch.optim.Optimizer) -> None:
        self.parts = (muon, adamw)
        self.param_groups = [group for part in self.parts for group in part.param_groups]
        self.state = {}  # each part keeps its own
        self.defaults = {}

    def step(self, closure=None):  # noqa: D102 (as torch.optim.Optimizer.step)
        for part in self.parts:
            part.step()

    def zero_grad(self, set_to_none: bool = True) -> None:  # noqa: D102
        for part in self.parts:
            part.zero_grad(set_to_none)


def _is_hidden_matrix(name: str, parameter: torch.Tensor) -> bool:
    """Muon's parameters: the blocks' 2-D weights (not embeddings, head, norms, biases)."""
    return parameter.ndim == 2 and name.startswith("blocks.")


def make_optimizer(
    name: str, model: torch.nn.Module, learning_rate: float, weight_decay: float = 0.0
) -> torch.optim.Optimizer:
    r"""One of :data:`OPTIMIZERS` for ``model``'s parameters.

    - ``"SGD"``: :math:`u = \eta g`;
    - ``"momentum"``: SGD with heavy-ball momentum 0.9;
    - ``"AdamW"``: betas (0.9, 0.95), decoupled weight decay ``weight_decay``;
    - ``"Muon"``: ``torch.optim.Muon`` (momentum 0.95, Nesterov, 5 Newton-Schulz
      steps, ``adjust_lr_fn="match_rms_adamw"``, which scales each matrix's rate
      to give its update the RMS of an AdamW update) on the blocks' 2-D weights,
      and AdamW at the same rate on the embeddings, the head, the norms and the
      biases: two parameter groups whose effective rates differ, which moves
      :math:`\rho`.

    Examples
    --------
    >>> model = GPT(GPTConfig(width=16, heads=2, blocks=1))
    >>> [len(group["params"]) for group in make_optimizer("Muon", model, 0.01).param_groups]
    [4, 14]
    """
    learning_rate = as_float_scalar(learning_rate, "learning_rate", positive=True)
    weight_decay = as_float_scalar(weight_decay, "weight_decay", nonnegative=True)
    parameters = list(model.parameters())
    if name == "SGD":
        return torch.optim.SGD(parameters, lr=learning_rate, weight_decay=weight_decay)
    if name == "momentum":
        return torch.optim.SGD(
            parameters, lr=learning_rate, momentum=0.9, weight_decay=weight_decay
        )
    if name == "AdamW":
        return torch.optim.AdamW(
            parameters, lr=learning_rate, betas=(0.9, 0.95), weight_decay=weight_decay
        )
    if name == "Muon":
        named = list(model.named_parameters())
        hidden = [p for n, p in named if _is_hidden_matrix(n, p)]
        rest = [p for n, p in named if not _is_hidden_matrix(n, p)]
        muon = torch.optim.Muon(
            hidden, lr=learning_rate, weight_decay=weight_decay, adjust_lr_fn="match_rms_adamw"
        )
        adamw = torch.optim.AdamW(
            rest, lr=learning_rate, betas=(0.9, 0.95), weight_decay=weight_decay
        )
        return _Pair(muon, adamw)
    raise ValueError(f"optimizer must be one of {OPTIMIZERS}; got {name!r}")


def truncate_tensor(update: torch.Tensor, gradient: torch.Tensor, threshold: float) -> torch.Tensor:
    r"""The nearest tensor to ``update`` whose cosine with ``gradient`` is at least ``threshold``.

    The projection of Theorem 1.1 onto the cone
    :math:`\{v : \langle v, g\rangle \ge \tau \lVert v\rVert \lVert g\rVert\}`:
    ``update`` itself if its cosine with ``gradient`` is at least :math:`\tau`, zero in
    the polar cone, and otherwise the point on the cone's edge in the plane of the
    two, whose cosine is :math:`\tau`. Computed in float64 by
    :func:`cosine_book.optim.truncate_to_cosine` and returned in ``update``'s dtype.
    A zero gradient leaves the update unchanged (there is no constraint).

    Examples
    --------
    >>> truncate_tensor(torch.tensor([0.0, 1.0]), torch.tensor([1.0, 0.0]), 0.6)
    tensor([0.4800, 0.6400])
    """
    g = gradient.detach().double().cpu().numpy()
    if not np.any(g):
        return update.clone()
    u = update.detach().double().cpu().numpy()
    projected = truncate_to_cosine(u, g, threshold)
    return torch.from_numpy(projected).to(dtype=update.dtype, device=update.device)


@dataclass
class TrainingRun:
    r"""Per-step record of :func:`train` (arrays indexed by step, then tensor).

    Attributes
    ----------
    optimizer, learning_rate, threshold, batch_size, seed :
        The settings of the run (``threshold`` is ``None`` without truncation).
    names : tuple of str
        Parameter tensor names, the column order of every per-tensor array.
    loss : ndarray of shape (steps,)
        Mini-batch loss before each step (nats per character).
    local, raw_local : ndarray of shape (steps, n_tensors)
        Local cosines :math:`\cos(u_{t,i}, g_{t,i})` of the applied update and of the
        optimizer's update before truncation.
    weights, update_norms, gradient_norms : ndarray of shape (steps, n_tensors)
        The block decomposition's weights and block norms.
    parameter_norms : ndarray of shape (steps, n_tensors)
        Each tensor's norm before the step (the profile LAMB's trust ratio uses).
    global_cosine, profile_cosine : ndarray of shape (steps,)
        :math:`\cos(u_t, g_t)` and :math:`\rho_t`.
    probe_steps : ndarray of shape (n_probes,)
        Steps at which the update was also compared with :math:`G_t`.
    probe_local : ndarray of shape (n_probes, n_tensors)
    probe_global, probe_profile, probe_loss, held_loss : ndarray of shape (n_probes,)
        Local, global cosine and :math:`\rho` against :math:`G_t`; the loss on the
        probe batch (training text) and on a fixed held-out batch, before the step.
    final_held_loss : float
        Held-out loss after the last step (``inf`` if the run diverged).
    diverged : bool
        Whether the loss or the update stopped being finite; the run stops there and
        the arrays hold ``nan`` from that step on.
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
    parameter_norms: NDArray[np.float64]
    global_cosine: NDArray[np.float64]
    profile_cosine: NDArray[np.float64]
    probe_steps: NDArray[np.int64]
    probe_local: NDArray[np.float64]
    probe_global: NDArray[np.float64]
    probe_profile: NDArray[np.float64]
    probe_loss: NDArray[np.float64]
    held_loss: NDArray[np.float64]
    final_held_loss: float
    diverged: bool = False

    @property
    def steps(self) -> int:
        """Number of recorded steps."""
        return len(self.loss)

    @property
    def lower_bound(self) -> NDArray[np.float64]:
        r"""The lower end :math:`\rho_t \min_i c_{t,i}` of chapter 3's interval, per step."""
        return self.profile_cosine * np.nanmin(self.local, axis=1)


def tensor_kind(name: str) -> str:
    """The kind of a :class:`~cosine_book.gpt.GPT` parameter tensor, by its name.

    >>> [tensor_kind(n) for n in ("head.bias", "blocks.0.qkv.weight", "position_embedding.weight")]
    ['norms and biases', 'attention', 'embeddings']
    """
    if name.endswith("bias") or "norm" in name:
        return "norms and biases"
    if "embedding" in name:
        return "embeddings"
    if name.startswith("head"):
        return "head"
    return "MLP" if ".mlp_" in name else "attention"


def load_traces(path) -> dict[tuple[str, float | None], TrainingRun]:
    """The per-step records stored by ``experiments/optimizer_sweep.py``, by run.

    Returns ``(optimizer, threshold) -> TrainingRun`` (threshold ``None`` without
    truncation); the probe fields are empty (the traces keep the per-step fields).
    """
    runs = {}
    with np.load(path) as stored:
        labels = sorted({name.split("/")[0] for name in stored.files})
        for label in labels:
            optimizer, rate, batch_size, seed, threshold = label.split("|")
            field = {key: stored[f"{label}/{key}"] for key in (
                "loss", "local", "raw_local", "weights", "global_cosine", "profile_cosine",
                "update_norms", "gradient_norms")}  # fmt: skip
            field = {key: value.astype(np.float64) for key, value in field.items()}
            field["parameter_norms"] = np.full_like(field["local"], np.nan)
            tau = None if threshold == "off" else float(threshold)
            empty = np.empty(0)
            runs[optimizer, tau] = TrainingRun(
                optimizer=optimizer,
                learning_rate=float(rate),
                threshold=tau,
                batch_size=int(batch_size),
                seed=int(seed),
                names=tuple(str(n) for n in stored[f"{label}/names"]),
                probe_steps=np.empty(0, dtype=np.int64),
                probe_local=np.empty((0, len(stored[f"{label}/names"]))),
                probe_global=empty,
                probe_profile=empty,
                probe_loss=empty,
                held_loss=empty,
                final_held_loss=np.nan,
                **field,
            )
    return runs


_CORPUS: dict[str, CharCorpus] = {}


def shakespeare_corpus() -> CharCorpus:
    """Tiny Shakespeare as a :class:`~cosine_book.gpt.CharCorpus` (read once, then cached)."""
    if "tiny" not in _CORPUS:
        _CORPUS["tiny"] = CharCorpus(load_tiny_shakespeare())
    return _CORPUS["tiny"]


def _gradients(model: GPT, x: torch.Tensor, y: torch.Tensor) -> tuple[float, list[torch.Tensor]]:
    model.zero_grad(set_to_none=True)
    loss = model.loss(x, y)
    loss.backward()
    return float(loss.detach()), [p.grad.detach().clone() for p in model.parameters()]


def train(
    optimizer: str = "AdamW",
    learning_rate: float = 3e-3,
    *,
    steps: int = 200,
    batch_size: int = 32,
    seed: int = 0,
    threshold: float | None = None,
    weight_decay: float = 0.0,
    probe_every: int = 25,
    probe_windows: int = 256,
    config: GPTConfig | None = None,
) -> TrainingRun:
    r"""Train a :class:`~cosine_book.gpt.GPT` on Tiny Shakespeare and record every step.

    Parameters
    ----------
    optimizer : str
        One of :data:`OPTIMIZERS` (:func:`make_optimizer`).
    learning_rate, weight_decay : float
        Positive rate; nonnegative decoupled weight decay.
    steps, batch_size : int
        Optimizer steps; windows of ``config.context`` characters per mini-batch.
    seed : int
        Seed of the initial weights (``seed``) and of the mini-batches
        (``seed + 1``); the probe and held-out batches are the same in every run.
    threshold : float or None
        Truncation threshold :math:`\tau` in ``[0, 1]``, or ``None``.
    probe_every, probe_windows : int
        Compare the update with the gradient :math:`G_t` of ``probe_windows``
        fixed training windows every ``probe_every`` steps (and at step 0).
    config : GPTConfig, optional
        The model (default: chapter 1's).

    Returns
    -------
    TrainingRun

    Examples
    --------
    >>> run = train("SGD", 0.5, steps=3, batch_size=2, probe_every=2, probe_windows=2,
    ...             config=GPTConfig(width=16, heads=2, blocks=1, context=8))
    >>> run.local.shape, run.probe_steps.tolist()
    ((3, 18), [0, 2])
    >>> bool(np.allclose(run.local, 1.0))  # plain SGD moves along the gradient
    True
    """
    if optimizer not in OPTIMIZERS:
        raise ValueError(f"optimizer must be one of {OPTIMIZERS}; got {optimizer!r}")
    steps = as_int_scalar(steps, "steps", minimum=1)
    batch_size = as_int_scalar(batch_size, "batch_size", minimum=1)
    seed = as_int_scalar(seed, "seed", minimum=0)
    probe_every = as_int_scalar(probe_every, "probe_every", minimum=1)
    probe_windows = as_int_scalar(probe_windows, "probe_windows", minimum=1)
    if threshold is not None:
        threshold = as_float_scalar(threshold, "threshold", interval=(0.0, 1.0))
    config = config or GPTConfig()
    corpus = shakespeare_corpus()
    threads = torch.get_num_threads()
    # One thread: the sums come out in the same order whatever the machine's cores.
    torch.set_num_threads(1)
    try:
        return _train(
            corpus, config, optimizer, learning_rate, weight_decay, steps, batch_size, seed,
            threshold, probe_every, probe_windows,
        )  # fmt: skip
    finally:
        torch.set_num_threads(threads)


def _train(
    corpus: CharCorpus,
    config: GPTConfig,
    optimizer_name: str,
    learning_rate: float,
    weight_decay: float,
    steps: int,
    batch_size: int,
    seed: int,
    threshold: float | None,
    probe_every: int,
    probe_windows: int,
) -> TrainingRun:
    """:func:`train` for checked input."""
    model = GPT(config, seed=seed)
    names = tuple(name for name, _ in model.named_parameters())
    parameters = list(model.parameters())
    optimizer = make_optimizer(optimizer_name, model, learning_rate, weight_decay)
    batches = torch.Generator().manual_seed(seed + 1)
    fixed = torch.Generator().manual_seed(2**31 - 1)
    probe = corpus.batch(probe_windows, config.context, fixed)
    held = corpus.batch(probe_windows, config.context, fixed, held=True)
    n = len(names)
    record = {
        key: np.full((steps, n), np.nan)
        for key in (
            "local",
            "raw_local",
            "weights",
            "update_norms",
            "gradient_norms",
            "parameter_norms",
        )
    }
    loss = np.full(steps, np.nan)
    global_cosine, profile_cosine = np.full(steps, np.nan), np.full(steps, np.nan)
    diverged = False
    probes: dict[str, list] = {k: [] for k in ("steps", "local", "global", "profile", "loss")}
    held_loss = []
    for step in range(steps):
        full_gradient = None
        if step % probe_every == 0:
            probe_loss, full_gradient = _gradients(model, *probe)
            with torch.no_grad():
                held_loss.append(float(model.loss(*held)))
        loss[step], gradient = _gradients(model, *corpus.batch(batch_size, config.context, batches))
        before = [p.detach().clone() for p in parameters]
        record["parameter_norms"][step] = [float(torch.linalg.vector_norm(b)) for b in before]
        optimizer.step()
        with torch.no_grad():
            update = [b - p for b, p in zip(before, parameters, strict=True)]
            if not (np.isfinite(loss[step]) and all(torch.isfinite(u).all() for u in update)):
                diverged = True
                loss[step] = np.nan
                break
            if threshold is not None:
                record["raw_local"][step] = block_cosines(update, gradient).local
                update = [
                    truncate_tensor(u, g, threshold) for u, g in zip(update, gradient, strict=True)
                ]
                for p, b, u in zip(parameters, before, update, strict=True):
                    p.copy_(b - u)
        result = block_cosines(
            dict(zip(names, update, strict=True)), dict(zip(names, gradient, strict=True))
        )
        if threshold is None:
            record["raw_local"][step] = result.local
        record["local"][step] = result.local
        record["weights"][step] = result.weights
        record["update_norms"][step] = result.x_norms
        record["gradient_norms"][step] = result.y_norms
        global_cosine[step], profile_cosine[step] = result.global_cosine, result.profile_cosine
        if full_gradient is not None:
            against = block_cosines(
                dict(zip(names, update, strict=True)), dict(zip(names, full_gradient, strict=True))
            )
            probes["steps"].append(step)
            probes["local"].append(against.local)
            probes["global"].append(against.global_cosine)
            probes["profile"].append(against.profile_cosine)
            probes["loss"].append(probe_loss)
    with torch.no_grad():
        final_held_loss = np.inf if diverged else float(model.loss(*held))
    return TrainingRun(
        optimizer=optimizer_name,
        learning_rate=learning_rate,
        threshold=threshold,
        batch_size=batch_size,
        seed=seed,
        names=names,
        loss=loss,
        global_cosine=global_cosine,
        profile_cosine=profile_cosine,
        probe_steps=np.array(probes["steps"], dtype=np.int64),
        probe_local=np.array(probes["local"]).reshape(-1, n),
        probe_global=np.array(probes["global"]),
        probe_profile=np.array(probes["profile"]),
        probe_loss=np.array(probes["loss"]),
        held_loss=np.array(held_loss),
        final_held_loss=final_held_loss,
        diverged=diverged,
        **record,
    )
