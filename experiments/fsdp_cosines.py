r"""Chapter 1's block cosines when the model is sharded with FSDP2 across processes.

Run it with a launcher that starts one process per rank, on CPU (gloo)::

    torchrun --standalone --nproc-per-node 2 experiments/fsdp_cosines.py --steps 5
    python -m torch.distributed.run --standalone --nproc-per-node 2 \
        experiments/fsdp_cosines.py --steps 5

Every rank builds chapter 1's model, ``GPT(seed=0)``, shards each block and then the
root with ``fully_shard`` and trains it with AdamW at rate 1e-3 (betas 0.9 and 0.95, no
weight decay, as ``train("AdamW", ...)`` does). Each step draws one
global batch of 32 windows of 64 characters of Tiny Shakespeare from a generator
seeded alike on every rank, and each rank takes its own slice of it, so the ranks
together see what one process would. FSDP2 averages the gradients across ranks.

At every step each rank keeps a copy of its own parameter shards (not of the whole
parameters), steps, and forms its part of the update
:math:`u = \theta_{before} - \theta_{after}` as the difference of the shards;
``sharded_block_cosines`` then compares the update with the gradient tensor by tensor
with one small all-reduce (after a check that every rank passes the same names), and
every rank gets the whole result. Rank 0 prints the last step's local cosines (2
decimals) and weights (3 decimals) of the 30 tensors, the global cosine and
:math:`\rho` (3 decimals), next to the same numbers from one process (rank 0 alone,
no FSDP, the same seed, batches and optimizer, ``block_cosines`` on the whole
tensors: what ``train("AdamW", 1e-3, seed=0)`` records, bit for bit), and whether the
two agree to 1e-4. They differ by float32 rounding only (FSDP2 averages the two
halves' gradients, one process takes the whole batch's), which AdamW magnifies where
a gradient is tiny: up to about 1e-5 in the first ten steps.

The output is the same on every run and x86-64 CPU for ``--steps 5``: checked with
``ATEN_CPU_CAPABILITY`` unset, ``avx2`` and ``default``, every printed number lies
from a rounding boundary at least 200 times as far as it moved between these runs
and the single process (with 3 decimals, a local cosine lies 1.8 times as far). No
timing is printed. About 8 s on 2 cores for 5 steps, most of it starting processes.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from datetime import timedelta

import numpy as np
import torch
import torch.distributed as dist
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import fully_shard
from torch.distributed.tensor import DTensor

from cosine_book.distributed import sharded_block_cosines
from cosine_book.gpt import CONTEXT, GPT
from cosine_book.similarity import BlockCosines, block_cosines
from cosine_book.training import shakespeare_corpus

GLOBAL_BATCH = 32  # windows a step, over all ranks
LEARNING_RATE = 1e-3
MODEL_SEED = 0
BATCH_SEED = 1  # as train(seed=0) draws its mini-batches
# FSDP2 and one process differ by float32 rounding, which AdamW's division by
# sqrt(v) magnifies where a gradient is tiny (the key biases' gradient is zero but
# for rounding, about 1e-11): up to 1e-5 in the first ten steps, 2.5e-6 at step 5.
TOLERANCE = 1e-4


def batches(steps: int) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """The global batches of every step: the same on every rank and in one process."""
    generator = torch.Generator().manual_seed(BATCH_SEED)
    corpus = shakespeare_corpus()
    return [corpus.batch(GLOBAL_BATCH, CONTEXT, generator) for _ in range(steps)]


def train(model: GPT, data, cosines) -> BlockCosines:
    """Train on ``data``; the last step's block cosines of the update and the gradient.

    ``cosines`` is ``sharded_block_cosines`` under FSDP2 (parameters, gradients and
    updates are DTensors: their arithmetic acts on this rank's shards, with no
    communication) or ``block_cosines`` in one process.
    """
    optimizer = torch.optim.AdamW(
        model.parameters(), lr=LEARNING_RATE, betas=(0.9, 0.95), weight_decay=0.0
    )
    parameters = dict(model.named_parameters())
    for inputs, targets in data:
        optimizer.zero_grad(set_to_none=True)
        model.loss(inputs, targets).backward()
        with torch.no_grad():
            # A DTensor's clone copies its local shard only: one copy of this rank's
            # shards, not of the model.
            before = {name: p.detach().clone() for name, p in parameters.items()}
            optimizer.step()
            update = {name: before[name] - p.detach() for name, p in parameters.items()}
        gradient = {name: p.grad for name, p in parameters.items()}
        result = cosines(update, gradient)
    return result


def sharded_run(steps: int, rank: int, world: int) -> tuple[BlockCosines, int, int]:
    """FSDP2 training; the result and how many entries this rank holds, of how many."""
    model = GPT(seed=MODEL_SEED)
    total = sum(p.numel() for p in model.parameters())
    mesh = init_device_mesh("cpu", (world,))
    for block in model.blocks:
        fully_shard(block, mesh=mesh)
    fully_shard(model, mesh=mesh)
    if not all(isinstance(p, DTensor) for p in model.parameters()):
        raise RuntimeError("fully_shard left a parameter that is not a DTensor")
    held = sum(p.to_local().numel() for p in model.parameters())
    share = GLOBAL_BATCH // world
    mine = slice(rank * share, (rank + 1) * share)
    data = [(x[mine], y[mine]) for x, y in batches(steps)]
    return train(model, data, sharded_block_cosines), held, total


def single_run(steps: int) -> BlockCosines:
    """The same training in one process, on whole tensors and whole batches."""
    return train(GPT(seed=MODEL_SEED), batches(steps), block_cosines)


def shown(value: float, decimals: int = 3) -> str:
    """``value`` rounded, with no "-0.000"."""
    return f"{round(float(value), decimals) + 0.0:.{decimals}f}"


def report(sharded: BlockCosines, single: BlockCosines, world: int) -> str:
    """The table rank 0 prints (at most 79 characters a line)."""
    if sharded.names != single.names:
        raise RuntimeError("the sharded and the single-process model name their tensors apart")
    width = max(len(name) for name in sharded.names) + 2
    ranks = f"{world} rank{'s' if world > 1 else ''}"
    lines = [
        f"{'':{width}}{f'{ranks} (FSDP2)':>16}   {'1 process':>13}",
        f"{'tensor':{width}}{'local':>8}{'weight':>8}   {'local':>6}{'weight':>8}",
    ]
    for i, name in enumerate(sharded.names):
        lines.append(
            f"{name:{width}}{shown(sharded.local[i], 2):>8}{shown(sharded.weights[i]):>8}   "
            f"{shown(single.local[i], 2):>6}{shown(single.weights[i]):>8}"
        )
    for label, field in (("global cosine", "global_cosine"), ("rho", "profile_cosine")):
        a, b = shown(getattr(sharded, field)), shown(getattr(single, field))
        lines.append(f"{label + ':':15}{a} ({ranks}), {b} (1 process)")
    differences = [
        np.abs(sharded.local - single.local).max(),
        np.abs(sharded.weights - single.weights).max(),
        abs(sharded.global_cosine - single.global_cosine),
        abs(sharded.profile_cosine - single.profile_cosine),
    ]
    lines.append(f"largest difference below 1e-4: {bool(max(differences) < TOLERANCE)}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Run one rank of the job; rank 0 prints the comparison."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=5, help="AdamW steps (default 5)")
    steps = parser.parse_args(argv).steps
    if steps < 1:
        parser.error(f"--steps must be at least 1; got {steps}")
    if "RANK" not in os.environ or "WORLD_SIZE" not in os.environ:
        parser.error(
            "start one process per rank with a launcher, e.g. torchrun --standalone "
            "--nproc-per-node 2 experiments/fsdp_cosines.py"
        )
    # GPT.forward's logits are a view; GPT.loss only reshapes them (no in-place op, the
    # case FSDP2 warns about), so the warning does not apply.
    warnings.filterwarnings("ignore", "FSDP2-wrapped module .* returned a view tensor")
    torch.set_num_threads(1)  # the ranks share the machine's cores; fixed sums' order
    dist.init_process_group("gloo", timeout=timedelta(seconds=120))
    try:
        rank, world = dist.get_rank(), dist.get_world_size()
        if GLOBAL_BATCH % world:
            raise ValueError(f"the number of ranks must divide {GLOBAL_BATCH}; got {world}")
        sharded, held, total = sharded_run(steps, rank, world)
        if rank == 0:
            single = single_run(steps)
            print(
                f"AdamW (rate {LEARNING_RATE:g}), {steps} steps, {GLOBAL_BATCH} windows a "
                f"step ({GLOBAL_BATCH // world} a rank), {world} ranks\n"
                f"rank 0 holds {held:,} of the model's {total:,} parameter entries\n"
                f"cosines of update and gradient at step {steps}, tensor by tensor:\n"
            )
            print(report(sharded, single, world), flush=True)
    finally:
        dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
