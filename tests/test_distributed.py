"""sharded_block_cosines in real gloo jobs of 2, 3 and 4 processes on this machine.

Also chapter 1's FSDP2 script, ``experiments/fsdp_cosines.py``, as the chapter runs it
(torchrun, 2 ranks, 3 steps here).

Each world size is one job (tests/distributed_worker.py), started once for the module:
process start and the torch import cost seconds per rank, so every case of a world size
runs in the same job and the tests below read what each rank recorded. A hang would be
a failure, not a stuck suite: the job has a deadline and its process group is killed.
"""

from __future__ import annotations

import json
import math
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from cosine_book.distributed import sharded_block_cosines
from cosine_book.gpt import GPT
from cosine_book.similarity import block_cosines

WORKER = Path(__file__).with_name("distributed_worker.py")
FSDP_SCRIPT = Path(__file__).resolve().parents[1] / "experiments" / "fsdp_cosines.py"
DEADLINE = 180  # seconds for one job; about 8 s (2 ranks) to 20 s (4 ranks) on 2 cores
FIELDS = ("local", "x_norms", "y_norms", "weights")


def run_bounded(command: list[str], what: str) -> str:
    """Run ``command`` in its own process group, killed whole after ``DEADLINE``; its stdout."""
    process = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group, to end it whole
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )
    try:
        stdout, stderr = process.communicate(timeout=DEADLINE)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        pytest.fail(f"the {what} job did not finish within {DEADLINE} s (a hang?)")
    assert process.returncode == 0, f"the {what} job failed:\n{stderr[-3000:]}"
    return stdout


@pytest.fixture(scope="module")
def job(tmp_path_factory):
    """Run each world size's job at most once; return every rank's records."""
    done: dict[int, list[dict]] = {}

    def run(world: int) -> list[dict]:
        if world not in done:
            out = tmp_path_factory.mktemp(f"world{world}")
            run_bounded([sys.executable, str(WORKER), str(world), str(out)], f"{world}-rank")
            done[world] = [
                json.loads((out / f"rank{rank}.json").read_text()) for rank in range(world)
            ]
        return done[world]

    return run


def assert_close(got: dict, expected: dict, rel: float, abs_: float) -> None:
    assert "error" not in got, got.get("error")
    assert got["names"] == expected["names"]
    for field in FIELDS:
        a = np.array(got[field], dtype=float)
        b = np.array(expected[field], dtype=float)
        np.testing.assert_allclose(a, b, rtol=rel, atol=abs_, equal_nan=True, err_msg=field)
    for field in ("profile_cosine", "global_cosine"):
        assert got[field] == pytest.approx(expected[field], rel=rel, abs=abs_), field


def assert_same_on_every_rank(ranks: list[dict], key: str) -> None:
    first = ranks[0][key]
    for records in ranks[1:]:
        assert records[key] == first, f"rank {records['rank']} differs from rank 0 in {key}"


@pytest.mark.parametrize("world", [2, 3])
def test_dtensor_mix_equals_single_process(job, world):
    # Shard(0), Shard(1), Replicate() and plain tensors; float32, bfloat16 and float64.
    ranks = job(world)
    for records in ranks:
        # Whole entries, float64 sums: only the order of additions differs.
        assert_close(records["mix"], ranks[0]["mix_reference"], rel=1e-12, abs_=1e-15)
    assert_same_on_every_rank(ranks, "mix")
    assert_same_on_every_rank(ranks, "mix_again")  # still in step after ten refusals
    assert ranks[0]["mix_again"] == ranks[0]["mix"]


def test_empty_shards_take_part(job):
    ranks = job(3)
    # Two rows over three ranks: rank 2 holds none of "e" (Shard(0)), nor, under
    # FSDP2, of the 2-row output layer; the 1-entry temperature is on rank 0 only.
    assert [r["mix_empty_shards"] for r in ranks] == [[], [], ["e"]]
    assert "temperature" in ranks[1]["fsdp_empty_shards"]
    assert {"temperature", "out.weight", "out.bias"} <= set(ranks[2]["fsdp_empty_shards"])


@pytest.mark.parametrize("world", [2, 3])
@pytest.mark.parametrize("case", ["fsdp_update_vs_grad", "fsdp_grad_vs_grad"])
def test_fsdp2_equals_single_process_on_the_total_batch(job, world, case):
    # FSDP2 averages gradients across ranks in float32: equal to float32 rounding.
    ranks = job(world)
    assert all(r["fsdp_is_sharded"] for r in ranks)
    for records in ranks:
        assert_close(records[case], ranks[0][f"{case}_reference"], rel=1e-5, abs_=1e-6)
    assert_same_on_every_rank(ranks, case)


def test_mixed_placements_on_a_2d_mesh(job):
    # (Shard, Shard), (Replicate, Shard) as in HSDP, (Shard, Replicate), ... on a 2 x 2 mesh.
    ranks = job(4)
    for records in ranks:
        assert_close(records["mesh_2d"], ranks[0]["mesh_2d_reference"], rel=1e-12, abs_=1e-15)
        assert_close(records["mix"], ranks[0]["mix_reference"], rel=1e-12, abs_=1e-15)
    assert_same_on_every_rank(ranks, "mesh_2d")


ERRORS = {
    "names_differ": r"same names in the same order on every rank; rank \d differs .*only on",
    "order_differs": r"same names in another order \(position 0: 'a' on rank 0, 'g' on rank",
    "shape_on_one_rank": r"on rank \d: x_by_name\['d'\] has shape \(3, 3\) but .* \(3, 4\)",
    "shape": r"on rank 0 \(and \d other ranks?\): x_by_name\['a'\] has shape \(7, 5\)",
    "integer_dtype": r"on rank 0: x_by_name\['d'\] has dtype torch.int64; expected a floating",
    "meta": r"on rank 1: x_by_name\['d'\] is on the meta device",
    "placements_differ": r"different layouts .*Shard\(dim=0\).*Shard\(dim=1\).*redistribute",
    "partial": r"Partial placement",
    "zero_vector": r"x is the zero vector",
    "not_a_mapping": r"x_by_name is a list; expected a mapping",
}


@pytest.mark.parametrize("world", [2, 3])
@pytest.mark.parametrize("case", list(ERRORS))
def test_bad_input_raises_on_every_rank(job, world, case):
    # Problems found on one rank only (names, a shape, a dtype, a meta tensor) must
    # make every rank raise, with the same message: no rank is left in a collective.
    ranks = job(world)
    messages = [records["errors"][case].get("error") for records in ranks]
    assert None not in messages, f"{case}: some rank did not raise: {messages}"
    assert len(set(messages)) == 1, messages
    assert re.search(ERRORS[case], messages[0]), messages[0]


# -------------------------------------------------- one process (no torch.distributed)


def model_tensors(seed=0):
    generator = torch.Generator().manual_seed(seed)
    shapes = {"w1": (16, 8), "b1": (16,), "w2": (2, 16), "scale": (1,)}
    x = {n: torch.randn(s, generator=generator) for n, s in shapes.items()}
    y = {n: t + torch.randn(t.shape, generator=generator) for n, t in x.items()}
    return x, y


def test_one_process_is_block_cosines():
    x, y = model_tensors()
    got, expected = sharded_block_cosines(x, y), block_cosines(x, y)
    assert got.names == expected.names
    for field in FIELDS:
        np.testing.assert_allclose(getattr(got, field), getattr(expected, field), rtol=1e-14)
    assert got.global_cosine == pytest.approx(expected.global_cosine, rel=1e-14)


def test_one_process_other_dtypes_and_layouts():
    # bfloat16 and strided tensors are summed with torch in float64 slices.
    x, y = model_tensors(1)
    x_bf, y_bf = {n: t.bfloat16() for n, t in x.items()}, {n: t.bfloat16() for n, t in y.items()}
    got = sharded_block_cosines(x_bf, y_bf)
    expected = block_cosines(
        {n: t.double().numpy() for n, t in x_bf.items()},
        {n: t.double().numpy() for n, t in y_bf.items()},
    )
    np.testing.assert_allclose(got.local, expected.local, rtol=1e-13)
    x_t, y_t = {"w": x["w1"].T}, {"w": y["w1"].T}
    assert not x_t["w"].is_contiguous()
    assert sharded_block_cosines(x_t, y_t).local[0] == pytest.approx(
        block_cosines({"w": x["w1"]}, {"w": y["w1"]}).local[0], rel=1e-14
    )


def test_one_process_update_with_grads_requiring_no_copy():
    model = torch.nn.Linear(4, 3)
    model(torch.ones(2, 4)).sum().backward()
    grads = {n: p.grad for n, p in model.named_parameters()}
    params = dict(model.named_parameters())  # require grad: summed under no_grad
    result = sharded_block_cosines(params, grads)
    assert result.names == ("weight", "bias")


@pytest.mark.parametrize(
    ("x", "y", "message"),
    [
        ([torch.ones(2)], {"a": torch.ones(2)}, r"x_by_name is a list; expected a mapping"),
        ({"a": torch.ones(2)}, {"b": torch.ones(2)}, r"same names; only in x_by_name: \['a'\]"),
        ({}, {}, r"x_by_name is empty"),
        ({"a": torch.ones(2)}, {"a": torch.ones(3)}, r"shape \(2,\) but .* \(3,\)"),
        ({"a": torch.ones(2, dtype=torch.int32)}, {"a": torch.ones(2)}, r"dtype torch.int32"),
        ({"a": torch.empty(2, device="meta")}, {"a": torch.ones(2)}, r"meta device"),
        ({"a": torch.ones(2)}, {"a": None}, r"y_by_name\['a'\] is NoneType; .*p.grad None"),
        ({"a": torch.ones(0)}, {"a": torch.ones(0)}, r"x_by_name\['a'\] is empty"),
        ({"a": torch.zeros(2)}, {"a": torch.ones(2)}, r"x is the zero vector"),
        ({"a": torch.tensor([1.0, math.nan])}, {"a": torch.ones(2)}, r"not finite.*NaN"),
    ],
)
def test_one_process_bad_input(x, y, message):
    with pytest.raises(ValueError, match=message):
        sharded_block_cosines(x, y)


def test_group_without_torch_distributed():
    with pytest.raises(ValueError, match="group was given but torch.distributed is not init"):
        sharded_block_cosines({"a": torch.ones(2)}, {"a": torch.ones(2)}, group=object())


# ------------------------------------------- block_cosines on CPU tensors


@pytest.mark.parametrize(
    ("x", "y", "message"),
    [
        (torch.tensor(1.0), torch.tensor(1.0), "single number"),
        (torch.ones(0), torch.ones(0), r"block '0' of x is empty \(shape \(0,\)\)"),
        (torch.ones(2), torch.ones(3), r"shape \(2,\) in x but \(3,\) in y"),
        (torch.tensor([1.0, math.inf]), torch.ones(2), r"of x contains an infinite value"),
    ],
)
def test_cpu_tensor_blocks_refused_as_numpy_blocks_are(x, y, message):
    with pytest.raises(ValueError, match=message):
        block_cosines([x], [y])


@pytest.fixture(scope="module")
def fsdp_output() -> str:
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone"]
    command += ["--nproc-per-node", "2", str(FSDP_SCRIPT), "--steps", "3"]
    return run_bounded(command, "FSDP2 script's 2-rank")


def test_fsdp_script_equals_single_process(fsdp_output):
    names = [name for name, _ in GPT().named_parameters()]
    rows = [line.split() for line in fsdp_output.splitlines()]
    rows = [row for row in rows if row and row[0] in names]
    assert [row[0] for row in rows] == names
    assert all(len(row) == 5 for row in rows)  # name, then local and weight twice
    for row in rows:  # FSDP2 and one process print the same digits
        assert row[1:3] == row[3:5], row
    assert "largest difference below 1e-4: True" in fsdp_output.splitlines()
    assert max(len(line) for line in fsdp_output.splitlines()) <= 79
    assert "global cosine" in fsdp_output and "rho" in fsdp_output
