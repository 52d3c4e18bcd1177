"""The package's own arithmetic gives the same bits on another x86-64 CPU.

NumPy picks SIMD kernels for the CPU at run time, OpenBLAS picks its kernels for the
CPU and Numba compiles for the host. The functions below promise results that depend
on none of these: this test computes them here and in a child process set up as an
older CPU (the environment of ``tests/portability.py``, which ``make test`` also uses
to re-run the notebooks) and requires equality to the last bit.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Printed as float.hex, so equality means bit for bit.
COMPUTE = r"""
import json
import numpy as np
from cosine_book.correlation import grouped_correlation, pearson
from cosine_book.similarity import block_cosines, cosine

rng = np.random.default_rng(20261122)
results = {}
for dtype in (np.float64, np.float32, np.float16, np.int32):
    x = (rng.standard_normal(100_003) * 50).astype(dtype)
    y = (x + rng.standard_normal(100_003) * 50).astype(dtype)
    results[f"cosine {np.dtype(dtype).name}"] = [cosine(x, y)]
big = rng.standard_normal(5_000) * 1e300
results["cosine 1e300"] = [cosine(big, big[::-1])]
tiny = rng.standard_normal(5_000) * 1e-300
results["cosine 1e-300"] = [cosine(tiny, tiny[::-1])]
sizes = rng.integers(1, 20_000, size=40)
x_blocks = [rng.standard_normal(s) * 10.0 ** rng.uniform(-5, 5) for s in sizes]
y_blocks = [b + rng.standard_normal(b.size) * np.abs(b).max() for b in x_blocks]
blocks = block_cosines(x_blocks, y_blocks)
results["block_cosines"] = [
    *blocks.local, *blocks.weights, *blocks.x_norms, blocks.profile_cosine, blocks.global_cosine
]
x = rng.standard_normal(50_001) + 1e9
y = 0.3 * x + rng.standard_normal(50_001)
x32 = (rng.standard_normal(50_001) + 1e3).astype(np.float32)
y32 = x32 + rng.standard_normal(x32.size).astype(np.float32)
results["pearson"] = [pearson(x, y), pearson(x32, y32)]
groups = rng.integers(0, 7, size=x.size)
grouped = grouped_correlation(x, y, groups)
results["grouped_correlation"] = [
    grouped.pooled, *grouped.within, grouped.within_covariance, grouped.between_covariance,
    *grouped.x_means, *grouped.y_sds,
]
print(json.dumps({k: [float(v).hex() for v in vals] for k, vals in results.items()}))
"""


def test_results_are_bit_identical_on_a_simulated_older_cpu():
    from portability import compare_here_and_there

    here, there, notes = compare_here_and_there(COMPUTE)
    differing = {name: (here[name], there[name]) for name in here if here[name] != there[name]}
    assert not differing, f"results differ on the simulated CPU ({notes}): {differing}"
