"""Benchmark block_cosines against two baselines in the same run.

About 200 blocks totalling 50 million float32 entries, sized like the tensors of a
model (log-normal sizes). Baselines:

- concatenate: ``np.concatenate`` both sides, then one naive float32 cosine
  (``np.dot`` and two ``np.linalg.norm``), which is what one writes without a helper;
- dot per block: a single ``np.dot`` pass per block pair (no norms at all), the
  floor for any method that reads every entry once.

Reported as ratios (robust to the machine's speed) plus peak extra memory traced by
``tracemalloc`` (NumPy reports its allocations to it), compared with the largest block.
Targets (P1): within 1.5x of the dot pass (goal 1.2x), at least 5x faster than
concatenation, extra memory no more than the largest block. On a shared virtual
machine the ratio to the dot pass moves by up to 20 % between runs (memory
placement): read it over a few runs.
"""

from __future__ import annotations

import statistics
import time
import tracemalloc

import numpy as np

from cosine_book.similarity import block_cosines

N_BLOCKS = 200
TOTAL = 50_000_000
REPEATS = 7


def make_blocks(seed: int = 0) -> tuple[list[np.ndarray], list[np.ndarray]]:
    rng = np.random.default_rng(seed)
    weights = rng.lognormal(mean=0.0, sigma=1.5, size=N_BLOCKS)
    sizes = np.maximum(1, np.floor(weights / weights.sum() * TOTAL)).astype(int)
    sizes[-1] += TOTAL - sizes.sum()
    x_blocks = [rng.standard_normal(size, dtype=np.float32) for size in sizes]
    y_blocks = [x + rng.standard_normal(x.size, dtype=np.float32) for x in x_blocks]
    return x_blocks, y_blocks


def concatenate_then_cosine(x_blocks, y_blocks) -> float:
    x, y = np.concatenate(x_blocks), np.concatenate(y_blocks)
    return float(np.dot(x, y) / (np.linalg.norm(x) * np.linalg.norm(y)))


def dot_per_block(x_blocks, y_blocks) -> float:
    return float(sum(np.dot(x, y) for x, y in zip(x_blocks, y_blocks, strict=False)))


def with_block_cosines(x_blocks, y_blocks) -> float:
    return block_cosines(x_blocks, y_blocks).global_cosine


def measure(function, x_blocks, y_blocks) -> tuple[float, int]:
    """Median wall time over REPEATS calls, and the peak traced extra memory of one call."""
    function(x_blocks, y_blocks)  # warm-up
    times = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        function(x_blocks, y_blocks)
        times.append(time.perf_counter() - start)
    tracemalloc.start()
    function(x_blocks, y_blocks)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return statistics.median(times), peak


def main() -> None:
    x_blocks, y_blocks = make_blocks()
    largest_block = max(x.nbytes for x in x_blocks)
    results = {
        "block_cosines": measure(with_block_cosines, x_blocks, y_blocks),
        "concatenate + cosine": measure(concatenate_then_cosine, x_blocks, y_blocks),
        "np.dot per block": measure(dot_per_block, x_blocks, y_blocks),
    }
    exact = np.float64(with_block_cosines(x_blocks, y_blocks))
    naive = np.float64(concatenate_then_cosine(x_blocks, y_blocks))
    print(
        f"{N_BLOCKS} float32 blocks, {TOTAL:,} entries per side; "
        f"largest block {largest_block / 2**20:.1f} MiB"
    )
    for name, (seconds, peak) in results.items():
        print(
            f"  {name:<22} median {seconds * 1e3:8.1f} ms"
            f"   peak extra memory {peak / 2**20:8.2f} MiB"
        )
    ours, ours_peak = results["block_cosines"]
    speedup = results["concatenate + cosine"][0] / ours
    versus_dot = ours / results["np.dot per block"][0]
    memory_ratio = ours_peak / largest_block
    print(f"speed-up over concatenation: {speedup:.2f}x (target >= 5)")
    print(f"time relative to one dot pass per block: {versus_dot:.2f}x (target <= 1.5, goal 1.2)")
    print(f"peak extra memory / largest block: {memory_ratio:.3f} (target <= 1)")
    print(f"global cosine: block_cosines {exact:.10f}, naive float32 {naive:.10f}")
    ok = speedup >= 5 and versus_dot <= 1.5 and memory_ratio <= 1
    print("targets met" if ok else "TARGETS MISSED")


if __name__ == "__main__":
    main()
