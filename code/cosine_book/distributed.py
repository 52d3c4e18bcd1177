r"""Block cosines of a model whose tensors are sharded across processes.

Under data or tensor parallelism (FSDP2's ``fully_shard``, ``Shard(d)`` DTensors) no
process holds a whole parameter or gradient, yet the block decomposition of
:mod:`cosine_book.similarity` needs only three sums per tensor,

.. math::

    \langle x_i, y_i \rangle = \sum_r \langle x_i^{(r)}, y_i^{(r)} \rangle, \qquad
    \|x_i\|^2 = \sum_r \|x_i^{(r)}\|^2, \qquad
    \|y_i\|^2 = \sum_r \|y_i^{(r)}\|^2,

where :math:`x_i^{(r)}` is the part of tensor :math:`i` that rank :math:`r` holds.
:func:`sharded_block_cosines` forms these sums where the shards live and adds them
with one all-reduce.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

import numpy as np
import torch
import torch.distributed as dist
from torch.distributed.tensor import DTensor

from cosine_book.similarity import (
    _XP_CHUNK,
    BlockCosines,
    _cpu_tensor_view,
    _raw_sums,
    block_cosines_from_sums,
)

__all__ = ["sharded_block_cosines"]


def sharded_block_cosines(
    x_by_name: Mapping[str, torch.Tensor],
    y_by_name: Mapping[str, torch.Tensor],
    group: Any = None,
) -> BlockCosines:
    r"""Local and global cosines of two sharded models, the same on every rank.

    Chapter 1 compares an optimizer's update :math:`x` with the gradient :math:`y`
    tensor by tensor; this is that comparison when the tensors are split across
    processes. Each rank sums over the entries it holds, in float64,

    .. math::

        s_i^{(r)} = \bigl(\langle x_i^{(r)}, y_i^{(r)} \rangle,\;
        \|x_i^{(r)}\|^2,\; \|y_i^{(r)}\|^2\bigr),

    one all-reduce adds the :math:`s_i^{(r)}` over the ranks, and
    :func:`~cosine_book.similarity.block_cosines_from_sums` turns the totals into
    the result that :func:`~cosine_book.similarity.block_cosines` gives for the
    whole tensors.

    Parameters
    ----------
    x_by_name, y_by_name : mapping from str to torch.Tensor
        The two models tensor by tensor (for example the update and the gradient),
        with the same names. Each tensor is whole on every rank (a plain tensor, or
        a DTensor placed ``Replicate()``) or a DTensor sharded by FSDP2 or tensor
        parallelism, including mixed placements on a mesh of several dimensions.
        Every rank passes every name, in the same order; a rank whose shard of a
        tensor is empty passes it as it is. Paired tensors have the same shape and
        layout (mesh and placements) and a floating dtype.
    group : torch.distributed.ProcessGroup, optional
        The ranks that hold the model (default: all). When torch.distributed is not
        initialised and ``group`` is None, the call is a world of one process and
        needs no collective: then it equals ``block_cosines(x_by_name, y_by_name)``
        to rounding.

    Returns
    -------
    BlockCosines
        The same result on every rank of ``group``: every rank converts the same
        all-reduced sums (gloo and NCCL give every rank the same bits).

    Raises
    ------
    ValueError
        On every rank together (the checks are exchanged before any rank raises, so
        none is left waiting in a collective): if an input is not a mapping, the two
        mappings have different names, the names or their order differ between
        ranks, paired tensors differ in shape or layout, a tensor is not a torch
        tensor, is empty, is on the meta device, has a non-floating dtype or a
        ``Partial`` placement, a DTensor's mesh is not the ranks of ``group``, the
        sums are not finite (NaN or infinity in a tensor), or the whole of ``x`` or
        ``y`` is zero.

    See Also
    --------
    cosine_book.similarity.block_cosines : The same result from whole tensors.

    Notes
    -----
    *Cost.* Two collectives: an all-gather of a few bytes per rank (a digest of the
    names and any error; the name lists only when the digests differ), then one
    all-reduce (sum) of an ``(n_tensors, 3)`` float64 tensor on the shards' device.
    No parameter or gradient is copied or gathered: a contiguous float32 or float64
    CPU shard is read in place by the compiled kernel of
    :mod:`cosine_book.similarity` (so a world of one gives exactly
    ``block_cosines``'s sums); other dtypes (bfloat16) and devices (GPU) are cast to
    float64 in slices of 2**22 entries, so the extra memory is at most two such
    slices (64 MiB), whatever the model's size. Squares of float32 or bfloat16
    entries cannot overflow or underflow in float64; float64 tensors whose sums of
    squares would (entries beyond about 1e150) give non-finite sums and are refused.

    *Accuracy.* Products of float32 or bfloat16 entries are exact in float64, so
    each local sum carries only float64 summation error (the compiled kernel's
    bound of :mod:`cosine_book.similarity`; for the PyTorch route, ``torch.dot`` in
    float64 over slices, relative error at most about ``2**22 * 2**-53``, about
    ``5e-10``, and typically near ``1e-16``), and the all-reduce adds one rounding
    per rank. So the result equals ``block_cosines`` of the whole tensors to about
    ``1e-15`` relative, not bit for bit (the order of the additions differs).

    *Replicated tensors count once.* A plain tensor is assumed to be the same on
    every rank (it is not compared: that would cost a copy and a collective per
    tensor) and is taken from rank 0 of ``group`` only, and a DTensor from the
    ranks whose coordinate is 0 on every mesh dimension where it is
    ``Replicate()``; the other ranks add zeros. Dividing
    everybody's sums by the number of copies instead would be inexact (a sum of
    three equal numbers, divided by 3, rounds), and wrong if the copies differ.

    *The update.* Chapter 1's update is :math:`u = \theta_{before} -
    \theta_{after}` around ``optimizer.step()`` (the step taken is :math:`-u`, so
    :math:`u` agrees with the gradient when it points downhill): it includes each
    parameter group's learning rate and AdamW's weight decay
    :math:`\eta\lambda\theta`, which the raw ``exp_avg / sqrt(exp_avg_sq)`` of the
    optimizer's state leaves out. Taking the difference costs one copy of this
    rank's parameter shards (``p.detach().clone()`` before the step), not of the
    model; rebuilding it from the state instead matches only to rounding.

    *Pipeline parallelism.* Each stage holds different tensors, so the ranks pass
    different names and this function refuses them. The recipe then is: each stage
    forms the three sums of its own tensors and all-reduces them over the ranks of
    that stage (its data- and tensor-parallel group), then the stages exchange
    these small sum vectors (an all-gather of the names and sums across stages, or
    one all-reduce of an ``(all names, 3)`` tensor in which every stage fills its
    own rows and leaves zeros elsewhere, counting each stage once), and
    :func:`~cosine_book.similarity.block_cosines_from_sums` gives the result.

    Examples
    --------
    In one process (torch.distributed not initialised) it is ``block_cosines``:

    >>> import torch
    >>> from cosine_book.similarity import block_cosines
    >>> update = {"w": torch.tensor([[1.0, 0.0], [0.0, 1.0]]), "b": torch.tensor([3.0, 4.0])}
    >>> gradient = {"w": torch.tensor([[1.0, 0.0], [0.0, 1.0]]), "b": torch.tensor([-3.0, -4.0])}
    >>> result = sharded_block_cosines(update, gradient)
    >>> result.names, result.local, round(result.global_cosine, 6)
    (('w', 'b'), array([ 1., -1.]), -0.851852)
    >>> result.global_cosine == block_cosines(update, gradient).global_cosine
    True

    With FSDP2 each rank passes its shards (DTensors) of the update and the
    gradient; every rank gets the whole result::

        before = {n: p.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
        update = {n: before[n] - p.detach() for n, p in model.named_parameters()}
        grads = {n: p.grad for n, p in model.named_parameters()}
        result = sharded_block_cosines(update, grads)
    """
    distributed = dist.is_available() and dist.is_initialized()
    if group is not None and not distributed:
        raise ValueError(
            "group was given but torch.distributed is not initialised; call "
            "torch.distributed.init_process_group first, or pass group=None for one process"
        )
    if distributed:
        rank, world = dist.get_rank(group), dist.get_world_size(group)
        group_ranks = frozenset(
            dist.get_process_group_ranks(dist.group.WORLD if group is None else group)
        )
    else:
        rank, world, group_ranks = 0, 1, frozenset([0])

    # Every rank checks its own input, then the findings are exchanged, so that a
    # problem on one rank makes every rank raise (none waits in the all-reduce).
    names, mapping_problem = _check_mappings(x_by_name, y_by_name)
    tensor_problem = None
    if mapping_problem is None:
        for name in names:
            tensor_problem = _check_pair(name, x_by_name[name], y_by_name[name], group_ranks)
            if tensor_problem is not None:
                break
    report = (
        hashlib.sha256("\0".join(names).encode()).hexdigest(),
        mapping_problem,
        tensor_problem,
    )
    reports: list[Any] = [report]
    if distributed:
        reports = [None] * world
        dist.all_gather_object(reports, report, group=group)
    _raise_reported(reports, names, group, distributed)

    rows = [_local_sums(x_by_name[name], y_by_name[name], rank, distributed) for name in names]
    device = next((row.device for row in rows if row.device.type != "cpu"), rows[0].device)
    sums = torch.stack([row.to(device) for row in rows])
    if distributed:
        dist.all_reduce(sums, op=dist.ReduceOp.SUM, group=group)
    dots, x_sq, y_sq = sums.cpu().numpy().T
    for values, side in ((x_sq, "x_by_name"), (y_sq, "y_by_name"), (dots, "x and y")):
        if not np.isfinite(values).all():
            where = names[int(np.argmin(np.isfinite(values)))]
            raise ValueError(
                f"the sums of tensor {where!r} of {side} are not finite: it contains NaN or "
                "infinity on some rank, or float64 entries so large (beyond about 1e150) "
                "that their squares overflow. Expected finite tensors (check the gradients "
                "for NaN, or rescale float64 ones)"
            )
    return block_cosines_from_sums(dots, x_sq, y_sq, names=names)


def _check_mappings(x_by_name: Any, y_by_name: Any) -> tuple[tuple[str, ...], str | None]:
    """The names, in ``x_by_name``'s order, and the first problem with the two mappings."""
    for value, side in ((x_by_name, "x_by_name"), (y_by_name, "y_by_name")):
        if not isinstance(value, Mapping):
            return (), (
                f"{side} is a {type(value).__name__}; expected a mapping from names to "
                "tensors, e.g. dict(model.named_parameters()) or {name: p.grad for ...}"
            )
    names = tuple(x_by_name)
    if not names:
        return (), "x_by_name is empty; expected at least one tensor"
    if any(not isinstance(name, str) for name in names):
        return (), "x_by_name has a key that is not a str; expected tensor names as keys"
    if set(names) != set(y_by_name):
        only_x = sorted(map(str, set(names) - set(y_by_name)))
        only_y = sorted(map(str, set(y_by_name) - set(names)))
        return (), (
            "x_by_name and y_by_name must have the same names; "
            f"only in x_by_name: {only_x}, only in y_by_name: {only_y}"
        )
    return names, None


def _layout(tensor: torch.Tensor) -> tuple[Any, tuple[Any, ...]] | None:
    """A DTensor's mesh and placements, or None for a plain tensor."""
    if isinstance(tensor, DTensor):
        return tensor.device_mesh, tuple(tensor.placements)
    return None


def _check_pair(
    name: str, x: Any, y: Any, group_ranks: frozenset[int]
) -> str | None:  # one message, or None
    """The first problem with one pair of tensors on this rank, or None."""
    for value, side in ((x, "x_by_name"), (y, "y_by_name")):
        what = f"{side}[{name!r}]"
        if not isinstance(value, torch.Tensor):
            return (
                f"{what} is {type(value).__name__}; expected a torch.Tensor (a parameter "
                "without a gradient has p.grad None: leave it out of both mappings)"
            )
        if value.device.type == "meta":
            return (
                f"{what} is on the meta device and has no values; expected a materialised "
                "tensor (e.g. model.to_empty(device=...) and initialise it first)"
            )
        if not value.is_floating_point():
            return (
                f"{what} has dtype {value.dtype}; expected a floating-point tensor "
                "(parameters, gradients and updates are; convert with .float())"
            )
        layout = _layout(value)
        if layout is not None:
            mesh, placements = layout
            if any(p.is_partial() for p in placements):
                return (
                    f"{what} has a Partial placement ({placements}): its local values are "
                    "partial sums, not entries; expected Shard or Replicate placements "
                    "(call .redistribute(placements=...) with Replicate() instead)"
                )
            if frozenset(mesh.mesh.flatten().tolist()) != group_ranks:
                return (
                    f"{what} lives on a mesh of ranks {sorted(mesh.mesh.flatten().tolist())} "
                    f"but the group has ranks {sorted(group_ranks)}; expected a mesh over "
                    "the ranks of group (pass group=mesh's process group, or all ranks)"
                )
    if tuple(x.shape) != tuple(y.shape):
        return (
            f"x_by_name[{name!r}] has shape {tuple(x.shape)} but y_by_name[{name!r}] has "
            f"{tuple(y.shape)}; expected paired tensors of the same shape"
        )
    if _layout(x) != _layout(y):
        return (
            f"x_by_name[{name!r}] and y_by_name[{name!r}] have different layouts "
            f"({_describe_layout(x)} and {_describe_layout(y)}); expected the same mesh and "
            "placements (redistribute one: y.redistribute(x.device_mesh, x.placements))"
        )
    if x.numel() == 0:
        return f"x_by_name[{name!r}] is empty (shape {tuple(x.shape)}); expected at least one entry"
    x_local, y_local = _local(x), _local(y)
    if x_local.device != y_local.device:
        return (
            f"x_by_name[{name!r}] is on {x_local.device} but y_by_name[{name!r}] on "
            f"{y_local.device}; expected both on the same device"
        )
    return None


def _describe_layout(tensor: torch.Tensor) -> str:
    layout = _layout(tensor)
    if layout is None:
        return "a plain tensor"
    mesh, placements = layout
    return f"a DTensor on mesh {tuple(mesh.shape)} with placements {placements}"


def _local(tensor: torch.Tensor) -> torch.Tensor:
    """The part of a tensor on this rank: a DTensor's local shard, or the tensor itself."""
    if _layout(tensor) is not None:
        return tensor.to_local()
    return tensor


def _raise_reported(
    reports: list[Any], names: tuple[str, ...], group: Any, distributed: bool
) -> None:
    """Raise, on every rank alike, the first problem any rank reported, or return.

    ``reports`` holds each rank's ``(digest of its names, mapping problem, tensor
    problem)``. Mapping problems come first, then names that differ between ranks,
    then problems with a tensor.
    """
    _raise_first([problem for _, problem, _ in reports])
    digests = [digest for digest, _, _ in reports]
    if len(set(digests)) > 1 and distributed:
        lists: list[Any] = [None] * len(reports)
        dist.all_gather_object(lists, names, group=group)  # every rank takes part
        odd = next(r for r, digest in enumerate(digests) if digest != digests[0])
        first, other = lists[0], lists[odd]
        if sorted(first) == sorted(other):
            where = next(i for i, (a, b) in enumerate(zip(first, other, strict=True)) if a != b)
            detail = (
                f"the same names in another order (position {where}: {first[where]!r} on "
                f"rank 0, {other[where]!r} on rank {odd})"
            )
        else:
            detail = (
                f"only on rank 0: {sorted(set(first) - set(other))}, only on rank {odd}: "
                f"{sorted(set(other) - set(first))}"
            )
        raise ValueError(
            f"x_by_name must have the same names in the same order on every rank; rank "
            f"{odd} differs from rank 0 ({detail}). Pass every tensor on every rank, in "
            "one order (e.g. that of model.named_parameters()); under pipeline "
            "parallelism see the Notes of sharded_block_cosines"
        )
    _raise_first([problem for _, _, problem in reports])


def _raise_first(problems: list[str | None]) -> None:
    """Raise the lowest rank's problem, saying how many other ranks had one."""
    ranks = [rank for rank, problem in enumerate(problems) if problem is not None]
    if not ranks:
        return
    others = len(ranks) - 1
    also = "" if others == 0 else f" (and {others} other rank{'s' if others > 1 else ''})"
    raise ValueError(f"on rank {ranks[0]}{also}: {problems[ranks[0]]}")


def _counts_here(tensor: torch.Tensor, rank: int, distributed: bool) -> bool:
    """Whether this rank's part of ``tensor`` enters the sums (replicas count once)."""
    layout = _layout(tensor)
    if layout is None:
        return rank == 0 or not distributed
    mesh, placements = layout
    coordinate = mesh.get_coordinate()
    if coordinate is None:  # this rank is not on the mesh (refused earlier)
        return False
    return all(c == 0 for c, p in zip(coordinate, placements, strict=True) if p.is_replicate())


@torch.no_grad()
def _local_sums(x: torch.Tensor, y: torch.Tensor, rank: int, distributed: bool) -> torch.Tensor:
    """``(<x, y>, ||x||^2, ||y||^2)`` of this rank's parts, float64, on their device."""
    x_local, y_local = _local(x), _local(y)
    device = x_local.device
    if not _counts_here(x, rank, distributed) or x_local.numel() == 0:
        return torch.zeros(3, dtype=torch.float64, device=device)
    x_view, y_view = _cpu_tensor_view(x_local), _cpu_tensor_view(y_local)
    if x_view is not None and y_view is not None:  # read in place by the compiled kernel
        xx, yy, xy = _raw_sums(x_view, y_view)
        return torch.tensor([xy, xx, yy], dtype=torch.float64)
    x_flat, y_flat = x_local.reshape(-1), y_local.reshape(-1)
    total = torch.zeros(3, dtype=torch.float64, device=device)
    for start in range(0, x_flat.numel(), _XP_CHUNK):
        a = x_flat[start : start + _XP_CHUNK].to(torch.float64)
        b = y_flat[start : start + _XP_CHUNK].to(torch.float64)
        total += torch.stack([torch.dot(a, b), torch.dot(a, a), torch.dot(b, b)])
    return total
