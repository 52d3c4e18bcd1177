r"""Chapter 1's block cosines when a model's tensors are sharded across processes.

Under FSDP2 or tensor parallelism no process holds a whole parameter or gradient, yet
the block decomposition needs only three sums per tensor, each a sum over the parts
:math:`x_i^{(r)}` that the ranks :math:`r` hold:

.. math::

    \langle x_i, y_i \rangle = \sum_r \langle x_i^{(r)}, y_i^{(r)} \rangle, \qquad
    \|x_i\|^2 = \sum_r \|x_i^{(r)}\|^2, \qquad
    \|y_i\|^2 = \sum_r \|y_i^{(r)}\|^2.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import torch
import torch.distributed as dist
from torch.distributed.tensor import DTensor

from cosine_book.similarity import BlockCosines, block_cosines_from_sums

__all__ = ["sharded_block_cosines"]

_CHUNK = 1 << 22  # entries cast to float64 at a time: at most 64 MiB for x and y together


def sharded_block_cosines(
    x_by_name: Mapping[str, torch.Tensor], y_by_name: Mapping[str, torch.Tensor], group: Any = None
) -> BlockCosines:
    r"""Local and global cosines of two sharded models, the same on every rank.

    Each rank forms, in float64, the three sums of the module's formula over the entries
    it holds; one all-reduce adds them, and
    :func:`~cosine_book.similarity.block_cosines_from_sums` turns the totals into what
    :func:`~cosine_book.similarity.block_cosines` gives for the whole tensors (to
    rounding: the additions come in another order). Used in chapter 1.

    Parameters
    ----------
    x_by_name, y_by_name : mapping from str to torch.Tensor
        The two models tensor by tensor (the update and the gradient). A tensor is whole
        on every rank (a plain tensor, or a ``Replicate()`` DTensor) or a DTensor sharded
        by FSDP2 or tensor parallelism, on a mesh of one or more dimensions. Every rank
        passes every name, in the same order, an empty shard as it is; paired tensors
        have the same shape and placements and a floating dtype.
    group : torch.distributed.ProcessGroup, optional
        The ranks that hold the model (default: all). Without torch.distributed, the
        call is a world of one process.

    Raises
    ------
    ValueError
        On every rank together (the ranks exchange their findings before any raises,
        so none waits in a collective): for inputs that are not mappings of tensors, or
        whose names differ between x and y or between ranks (or come in another order);
        for paired tensors of different shapes or placements; for empty, meta,
        non-floating or ``Partial`` tensors, a mesh that is not the group's ranks, NaN
        or infinity, or an x or y that is zero.

    Notes
    -----
    *Cost.* An all-gather of the names (and any problem), and one all-reduce of an
    ``(n_tensors, 3)`` float64 tensor. Nothing is gathered: each shard is read where it
    lives, cast to float64 in slices of ``2**22`` entries (at most 64 MiB more; a
    non-contiguous shard is copied once). Products of float32 or bfloat16 entries are
    exact in float64.

    *Replicas count once:* a plain tensor on rank 0 of ``group`` only (it is assumed
    equal on every rank, not compared), a DTensor on the ranks whose coordinate is 0 on
    every mesh dimension where it is ``Replicate()``.

    *The update* :math:`u = \theta_{before} - \theta_{after}` around
    ``optimizer.step()`` includes every parameter group's learning rate and AdamW's
    weight decay :math:`\eta\lambda\theta` (which ``exp_avg / sqrt(exp_avg_sq)`` leaves
    out); it costs one copy of this rank's shards.

    *Under pipeline parallelism* the stages hold different tensors, which this function
    refuses: reduce each stage's sums within the stage, gather the stages' sums, and
    call ``block_cosines_from_sums`` (chapter 1 says how).

    Examples
    --------
    >>> update = {"w": torch.eye(2), "b": torch.tensor([3.0, 4.0])}
    >>> gradient = {"w": torch.eye(2), "b": torch.tensor([-3.0, -4.0])}
    >>> result = sharded_block_cosines(update, gradient)  # one process
    >>> result.names, result.local, round(result.global_cosine, 6)
    (('w', 'b'), array([ 1., -1.]), -0.851852)

    With FSDP2 each rank passes its shards (DTensors); every rank gets the whole result::

        before = {n: p.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
        update = {n: before[n] - p.detach() for n, p in model.named_parameters()}
        gradient = {n: p.grad for n, p in model.named_parameters()}
        result = sharded_block_cosines(update, gradient)
    """
    distributed = dist.is_available() and dist.is_initialized()
    if group is not None and not distributed:
        raise ValueError(
            "group was given but torch.distributed is not initialised; call "
            "init_process_group first, or pass group=None for one process"
        )
    ranks = dist.get_process_group_ranks(group or dist.group.WORLD) if distributed else [0]
    # Every rank checks its own tensors, then all exchange their findings and raise
    # together: no rank is left waiting in the all-reduce.
    names, problem = _check_mappings(x_by_name, y_by_name)
    checks = (_check_pair(n, x_by_name[n], y_by_name[n], set(ranks)) for n in names)
    report = (names, problem, next(filter(None, checks), None))
    reports = [report]
    if distributed:
        reports = [None] * len(ranks)
        dist.all_gather_object(reports, report, group=group)
    _raise_first([problem for _, problem, _ in reports])  # mappings
    _check_same_names([names for names, _, _ in reports])
    _raise_first([problem for _, _, problem in reports])  # tensors

    first_rank = not distributed or dist.get_rank(group) == 0
    rows = [_sums(x_by_name[name], y_by_name[name], first_rank) for name in names]
    device = next((row.device for row in rows if row.device.type != "cpu"), rows[0].device)
    sums = torch.stack([row.to(device) for row in rows])
    if distributed:
        dist.all_reduce(sums, op=dist.ReduceOp.SUM, group=group)
    sums = sums.cpu().numpy()
    finite = np.isfinite(sums).all(axis=1)
    if not finite.all():
        raise ValueError(
            f"the sums of tensor {names[int(np.argmin(finite))]!r} are not finite: it holds "
            "NaN or infinity on some rank, or float64 entries beyond about 1e150 (their "
            "squares overflow); expected finite tensors (check the gradients for NaN)"
        )
    return block_cosines_from_sums(*sums.T, names=names)


def _check_mappings(x_by_name: Any, y_by_name: Any) -> tuple[tuple[str, ...], str | None]:
    """The names, in ``x_by_name``'s order, and the first problem with the mappings."""
    for value, side in ((x_by_name, "x_by_name"), (y_by_name, "y_by_name")):
        if not isinstance(value, Mapping):
            return (), (
                f"{side} is a {type(value).__name__}; expected a mapping from names "
                "to tensors, e.g. {n: p.grad for n, p in model.named_parameters()}"
            )
    names = tuple(x_by_name)
    if not names or not all(isinstance(name, str) for name in names):
        return (), "x_by_name is empty or has a key that is not a str; expected tensor names"
    if set(names) != set(y_by_name):
        only_x, only_y = set(names) - set(y_by_name), set(map(str, y_by_name)) - set(names)
        return (), (
            f"x_by_name and y_by_name must have the same names; only in x_by_name: "
            f"{sorted(only_x)}, only in y_by_name: {sorted(only_y)}"
        )
    return names, None


def _layout(tensor: torch.Tensor) -> tuple[Any, tuple[Any, ...]] | None:
    """A DTensor's mesh and placements; None for a plain tensor."""
    return (tensor.device_mesh, tuple(tensor.placements)) if isinstance(tensor, DTensor) else None


def _check_pair(name: str, x: Any, y: Any, ranks: set[int]) -> str | None:
    """The first problem with the tensors called ``name`` on this rank, or None."""
    for value, side in ((x, "x_by_name"), (y, "y_by_name")):
        what = f"{side}[{name!r}]"
        if not isinstance(value, torch.Tensor):
            return (
                f"{what} is {type(value).__name__}; expected a torch.Tensor (a parameter "
                "without a gradient has p.grad None: leave it out of both mappings)"
            )
        if value.device.type == "meta":
            return f"{what} is on the meta device; expected a tensor with values"
        if not value.is_floating_point():
            return f"{what} has dtype {value.dtype}; expected a floating-point tensor"
        mesh, placements = _layout(value) or (None, ())
        if any(p.is_partial() for p in placements):
            return f"{what} has a Partial placement; expected Shard or Replicate placements"
        if mesh is not None and set(mesh.mesh.flatten().tolist()) != ranks:
            return f"{what} lives on a mesh that is not the ranks of group; pass its group"
    if x.shape != y.shape:
        return (
            f"x_by_name[{name!r}] has shape {tuple(x.shape)} but y_by_name[{name!r}] has "
            f"{tuple(y.shape)}; expected paired tensors of the same shape"
        )
    if _layout(x) != _layout(y):
        return (
            f"x_by_name[{name!r}] and y_by_name[{name!r}] have different layouts "
            f"({getattr(x, 'placements', 'plain')} and {getattr(y, 'placements', 'plain')}); "
            "redistribute one: y.redistribute(x.device_mesh, x.placements)"
        )
    if x.numel() == 0:
        return f"x_by_name[{name!r}] is empty (shape {tuple(x.shape)}); expected entries"
    if x.device != y.device:
        return f"x_by_name[{name!r}] is on {x.device} but y_by_name[{name!r}] on {y.device}"
    return None


def _raise_first(problems: list[str | None]) -> None:
    """Raise the lowest rank's problem, saying how many other ranks had one."""
    ranks = [rank for rank, problem in enumerate(problems) if problem is not None]
    if ranks:
        others = len(ranks) - 1
        also = f" (and {others} other rank{'s' * (others > 1)})" if others else ""
        raise ValueError(f"on rank {ranks[0]}{also}: {problems[ranks[0]]}")


def _check_same_names(names_by_rank: list[tuple[str, ...]]) -> None:
    """Raise if a rank's names, or their order, differ from rank 0's."""
    first = names_by_rank[0]
    odd = next((rank for rank, names in enumerate(names_by_rank) if names != first), None)
    if odd is None:
        return
    other = names_by_rank[odd]
    if sorted(first) == sorted(other):
        at = next(i for i, (a, b) in enumerate(zip(first, other, strict=True)) if a != b)
        detail = f"the same names in another order (position {at}: {first[at]!r} on rank 0, "
        detail += f"{other[at]!r} on rank {odd})"
    else:
        detail = f"only on rank 0: {sorted(set(first) - set(other))}, only on rank {odd}: "
        detail += f"{sorted(set(other) - set(first))}"
    raise ValueError(
        f"x_by_name must have the same names in the same order on every rank; rank {odd} "
        f"differs from rank 0 ({detail}). Pass every tensor on every rank in one order "
        "(that of model.named_parameters()); under pipeline parallelism see the Notes"
    )


@torch.no_grad()
def _sums(x: torch.Tensor, y: torch.Tensor, first_rank: bool) -> torch.Tensor:
    """``(<x, y>, ||x||^2, ||y||^2)`` over this rank's part, zeros for a replica not counted."""
    counts = first_rank  # a plain tensor counts on rank 0 of the group
    if isinstance(x, DTensor):  # a DTensor where its coordinate is 0 on every replicated axis
        coordinate = x.device_mesh.get_coordinate()
        counts = not any(
            c for c, p in zip(coordinate, x.placements, strict=True) if p.is_replicate()
        )
        x, y = x.to_local(), y.to_local()
    x, y = x.reshape(-1), y.reshape(-1)
    total = torch.zeros(3, dtype=torch.float64, device=x.device)
    for start in range(0, x.numel() if counts else 0, _CHUNK):
        a, b = x[start : start + _CHUNK].double(), y[start : start + _CHUNK].double()
        total += torch.stack([a @ b, a @ a, b @ b])
    return total
