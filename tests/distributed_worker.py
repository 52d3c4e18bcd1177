"""A gloo job for tests/test_distributed.py: ``python distributed_worker.py WORLD OUT``.

Starts WORLD processes on 127.0.0.1 (a free port), runs every case of
``sharded_block_cosines`` on each rank, and writes what each rank saw to
``OUT/rank<r>.json``: a result's fields, or the ValueError's message. Rank 0 also
stores the single-process references (``block_cosines`` of the whole tensors, and of
an unsharded copy of the FSDP2 model trained on the same total batch). The test
compares the files; this script asserts nothing.
"""

from __future__ import annotations

import copy
import json
import math
import os
import socket
import sys
from datetime import timedelta
from pathlib import Path

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch import nn
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import fully_shard
from torch.distributed.tensor import DTensor, Partial, Replicate, Shard, distribute_tensor

from cosine_book.distributed import sharded_block_cosines
from cosine_book.similarity import block_cosines

BATCH = 12  # divisible by 2, 3 and 4: equal local batches, so averaged gradients match


def as_record(result) -> dict:
    def floats(values):
        return [None if math.isnan(v) else v for v in map(float, values)]

    return {
        "names": list(result.names),
        "local": floats(result.local),
        "x_norms": floats(result.x_norms),
        "y_norms": floats(result.y_norms),
        "weights": floats(result.weights),
        "profile_cosine": result.profile_cosine,
        "global_cosine": result.global_cosine,
    }


def whole_result(x: dict, y: dict) -> dict:
    """``block_cosines`` of the whole tensors, as float64 NumPy arrays (bfloat16 is exact)."""
    x, y = ({n: t.detach().double().numpy() for n, t in m.items()} for m in (x, y))
    return as_record(block_cosines(x, y))


def attempt(function) -> dict:
    try:
        return as_record(function())
    except ValueError as error:
        return {"error": str(error)}


# ---------------------------------------------------------------- DTensors on a 1-D mesh


def whole_tensors(seed: int = 0) -> tuple[dict, dict]:
    """The same whole tensors on every rank (one generator, one seed)."""
    generator = torch.Generator().manual_seed(seed)
    shapes = {"a": (7, 5), "b": (4, 5), "c": (6,), "d": (3, 3), "e": (2,), "f": (9, 4), "g": (5, 3)}
    x, y = {}, {}
    for i, (name, shape) in enumerate(shapes.items()):
        scale = 10.0 ** (i - 3)
        x[name] = scale * torch.randn(shape, generator=generator)
        y[name] = (i % 3 - 1) * x[name] + scale * torch.randn(shape, generator=generator)
    x["f"], y["f"] = x["f"].bfloat16(), y["f"].bfloat16()
    x["g"], y["g"] = x["g"].double(), y["g"].double()
    return x, y


# Shard(0), Shard(1), Replicate() and plain tensors ("d"), as under tensor parallelism.
MESH_1D = {
    "a": [Shard(0)],
    "b": [Shard(1)],
    "c": [Replicate()],
    "e": [Shard(0)],  # 2 rows: an empty shard on rank 2 of 3
    "f": [Shard(0)],
    "g": [Shard(1)],
}
MESH_2D = {
    "a": [Shard(0), Shard(1)],
    "b": [Replicate(), Shard(0)],  # as in HSDP: replicated across "dp"
    "c": [Shard(0), Replicate()],
    "e": [Replicate(), Replicate()],
    "f": [Shard(1), Shard(0)],
    "g": [Replicate(), Shard(1)],
}


def laid_out(tensors: dict, mesh, placements: dict) -> dict:
    """The tensors distributed on ``mesh`` as ``placements`` says, the others plain."""
    return {
        name: distribute_tensor(t, mesh, placements[name]) if name in placements else t
        for name, t in tensors.items()
    }


def dtensor_cases(rank: int, world: int, records: dict) -> None:
    mesh = init_device_mesh("cpu", (world,))
    x_whole, y_whole = whole_tensors()
    x, y = laid_out(x_whole, mesh, MESH_1D), laid_out(y_whole, mesh, MESH_1D)
    records["mix"] = attempt(lambda: sharded_block_cosines(x, y))
    records["mix_empty_shards"] = [name for name, t in x.items() if _local(t).numel() == 0]
    if rank == 0:
        records["mix_reference"] = whole_result(x_whole, y_whole)
    last = world - 1

    def changed(mapping: dict, on_rank: int | None, **tensors) -> dict:
        """``mapping`` with some tensors replaced, on one rank (or every rank: None)."""
        return {**mapping, **tensors} if on_rank in (None, rank) else mapping

    def renamed(mapping: dict) -> dict:  # "a" is called "z" on the last rank
        return {("z" if k == "a" and rank == last else k): v for k, v in mapping.items()}

    def partial() -> dict:
        return {"p": DTensor.from_local(torch.ones(3), mesh, [Partial()])}

    keys = list(x)[::-1] if rank == last else list(x)
    meta = torch.empty(3, 3, device="meta")
    cases = {
        "names_differ": (renamed(x), renamed(y)),
        "order_differs": ({k: x[k] for k in keys}, {k: y[k] for k in keys}),
        "shape_on_one_rank": (x, changed(y, last, d=torch.zeros(3, 4))),
        "shape": (x, changed(y, None, a=distribute_tensor(torch.ones(7, 4), mesh, [Shard(0)]))),
        "integer_dtype": (changed(x, 0, d=torch.ones(3, 3, dtype=torch.int64)), y),
        "meta": (changed(x, 1, d=meta), changed(y, 1, d=meta)),
        "placements_differ": (
            x,
            changed(y, None, a=distribute_tensor(y_whole["a"], mesh, [Shard(1)])),
        ),
        "partial": (partial(), partial()),
        "zero_vector": ({k: torch.zeros_like(v) for k, v in x.items()}, y),
        "not_a_mapping": (list(x.values()), y),
    }
    records["errors"] = {
        case: attempt(lambda inputs=inputs: sharded_block_cosines(*inputs))
        for case, inputs in cases.items()
    }
    # The ranks are still in step after all the refusals: the same call, the same answer.
    records["mix_again"] = attempt(lambda: sharded_block_cosines(x, y))


def _local(tensor):
    return tensor.to_local() if isinstance(tensor, DTensor) else tensor


# ---------------------------------------------------------------- a 2-D mesh


def mesh_2d_cases(rank: int, world: int, records: dict) -> None:
    mesh = init_device_mesh("cpu", (2, world // 2), mesh_dim_names=("dp", "tp"))
    x_whole, y_whole = whole_tensors(seed=1)
    x, y = laid_out(x_whole, mesh, MESH_2D), laid_out(y_whole, mesh, MESH_2D)
    records["mesh_2d"] = attempt(lambda: sharded_block_cosines(x, y))
    if rank == 0:
        records["mesh_2d_reference"] = whole_result(x_whole, y_whole)


# ---------------------------------------------------------------- FSDP2


class Tiny(nn.Module):
    """Several parameter tensors; ``out`` (2 rows) and ``temperature`` (1 entry) are
    too small to give every one of three ranks a row."""

    def __init__(self) -> None:
        super().__init__()
        self.inp = nn.Linear(8, 16)
        self.norm = nn.LayerNorm(16)
        self.out = nn.Linear(16, 2)
        self.temperature = nn.Parameter(torch.full((1,), 1.5))

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        return self.out(torch.relu(self.norm(self.inp(inputs)))) * self.temperature


def adamw(model: nn.Module) -> torch.optim.Optimizer:
    """Two groups with their own learning rate and weight decay: both enter the update."""
    matrices = [p for n, p in model.named_parameters() if n.endswith("weight") and p.ndim == 2]
    others = [p for n, p in model.named_parameters() if not (n.endswith("weight") and p.ndim == 2)]
    return torch.optim.AdamW(
        [
            {"params": matrices, "lr": 1e-2, "weight_decay": 0.1},
            {"params": others, "lr": 3e-3, "weight_decay": 0.0},
        ]
    )


def train_and_compare(model, optimizer, inputs, targets) -> tuple[dict, dict]:
    """Two steps; the update and gradient of the second, by parameter name."""
    for _ in range(2):
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(inputs), targets)
        loss.backward()
        before = {n: p.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    update = {n: p.detach() - before[n] for n, p in model.named_parameters()}
    grads = {n: p.grad for n, p in model.named_parameters()}
    return update, grads


def fsdp_cases(rank: int, world: int, records: dict) -> None:
    torch.manual_seed(0)
    model = Tiny()
    reference = copy.deepcopy(model)
    generator = torch.Generator().manual_seed(1)
    inputs = torch.randn(BATCH, 8, generator=generator)
    targets = torch.randn(BATCH, 2, generator=generator)
    mesh = init_device_mesh("cpu", (world,))
    fully_shard(model.inp, mesh=mesh)
    fully_shard(model.out, mesh=mesh)
    fully_shard(model, mesh=mesh)
    rows = slice(rank * BATCH // world, (rank + 1) * BATCH // world)
    update, grads = train_and_compare(model, adamw(model), inputs[rows], targets[rows])
    records["fsdp_empty_shards"] = [n for n, g in grads.items() if _local(g).numel() == 0]
    records["fsdp_is_sharded"] = all(isinstance(g, DTensor) for g in grads.values())
    records["fsdp_update_vs_grad"] = attempt(lambda: sharded_block_cosines(update, grads))
    records["fsdp_grad_vs_grad"] = attempt(lambda: sharded_block_cosines(grads, grads))
    if rank == 0:
        ref_update, ref_grads = train_and_compare(reference, adamw(reference), inputs, targets)
        records["fsdp_update_vs_grad_reference"] = whole_result(ref_update, ref_grads)
        records["fsdp_grad_vs_grad_reference"] = whole_result(ref_grads, ref_grads)


# ---------------------------------------------------------------- the job


def run_rank(rank: int, world: int, port: int, out: str) -> None:
    torch.set_num_threads(1)  # ranks share the machine's cores
    dist.init_process_group(
        "gloo",
        init_method=f"tcp://127.0.0.1:{port}",
        rank=rank,
        world_size=world,
        timeout=timedelta(seconds=60),
    )
    records: dict = {"world": world, "rank": rank}
    try:
        dtensor_cases(rank, world, records)
        fsdp_cases(rank, world, records)
        if world == 4:
            mesh_2d_cases(rank, world, records)
    finally:
        Path(out, f"rank{rank}.json").write_text(json.dumps(records))
        dist.destroy_process_group()


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def main() -> None:
    world, out = int(sys.argv[1]), sys.argv[2]
    os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
    mp.spawn(run_rank, args=(world, free_port(), out), nprocs=world, join=True)


if __name__ == "__main__":
    main()
