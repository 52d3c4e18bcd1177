"""experiments/fsdp_cosines.py as chapter 1 runs it: torchrun, 2 gloo ranks on CPU.

One job of 3 steps (about 8 s on 2 cores, most of it starting the processes). A hang
would be a failure, not a stuck suite: the job has a deadline and is then killed whole.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from cosine_book.gpt import GPT, GPTConfig

SCRIPT = Path(__file__).resolve().parents[1] / "experiments" / "fsdp_cosines.py"
DEADLINE = 120  # seconds for the job, which takes about 8 s on 2 cores


@pytest.fixture(scope="module")
def output() -> str:
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone"]
    command += ["--nproc-per-node", "2", str(SCRIPT), "--steps", "3"]
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
        pytest.fail(f"the 2-rank job did not finish within {DEADLINE} s (a hang?)")
    assert process.returncode == 0, f"the 2-rank job failed:\n{stderr[-3000:]}"
    return stdout


def test_one_row_per_tensor(output):
    names = list(dict(GPT(GPTConfig()).named_parameters()))
    rows = [line.split() for line in output.splitlines()]
    rows = [row for row in rows if row and row[0] in names]
    assert [row[0] for row in rows] == names
    assert len(rows) == 30
    assert all(len(row) == 5 for row in rows)  # name, then local and weight twice
    for row in rows:  # FSDP2 and one process print the same digits
        assert row[1:3] == row[3:5], row


def test_sharded_equals_single_process(output):
    assert "largest difference below 1e-4: True" in output.splitlines()


def test_lines_fit_the_book(output):
    assert max(len(line) for line in output.splitlines()) <= 79
    assert "global cosine" in output and "rho" in output
