"""Chapter 1's sweep: optimizers x learning rates x seeds x batch sizes, then truncation.

Run by ``make experiments`` (about ten minutes on 2 cores); writes
``experiments/optimizer_sweep.csv``, one row per run, which chapter 1 reads, and
``experiments/traces.npz``, the per-step record of the runs the chapter's figures
and widget show. Rows already in the CSV are kept, so an interrupted sweep resumes.
``tests/test_experiments.py`` re-runs one row and checks it reproduces.

Stage 1 trains every optimizer at four to six learning rates, three seeds and two
batch sizes. Stage 2 takes each optimizer's best rate (lowest held-out loss, averaged
over seeds, per batch size) and trains it again with truncation at each threshold.
Stage 3 re-runs the best-rate runs without truncation, comparing the update with the
gradient of the 128 probe windows every ten steps (stages 1 and 2 do so every 40
steps, and their CSV columns ``probe_*`` average only the probes of the last third,
step 160).
"""

from __future__ import annotations

import csv
import sys
from multiprocessing import get_context
from pathlib import Path

import numpy as np

from cosine_book.training import train

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "optimizer_sweep.csv"
TRACES = HERE / "traces.npz"
STEPS = 200
SEEDS = (0, 1, 2)
BATCH_SIZES = (8, 32)
RATES = {
    "SGD": (0.03, 0.1, 0.3, 1.0, 3.0),
    "momentum": (0.01, 0.03, 0.1, 0.3),
    "AdamW": (0.0003, 0.001, 0.003, 0.01, 0.03),
    "Muon": (0.0003, 0.001, 0.003, 0.01, 0.03, 0.1),
}
THRESHOLDS = (0.5, 0.8)
PROBE_EVERY = 40
PROBE_WINDOWS = 128
# The runs whose per-step record the chapter shows (batch size, seed 0, every threshold).
TRACE_BATCH = 32
COLUMNS = (
    "optimizer", "learning_rate", "batch_size", "seed", "threshold", "final_held_loss",
    "final_train_loss", "global_cosine", "profile_cosine", "smallest_local", "largest_local",
    "probe_global", "probe_profile", "below_threshold", "diverged",
)  # fmt: skip


def label(optimizer: str, rate, batch_size, seed, threshold) -> str:
    """What identifies a run, as text: optimizer, rate, batch size, seed, threshold."""
    threshold = "off" if threshold in ("", None) else f"{float(threshold):g}"
    return f"{optimizer}|{float(rate):g}|{int(batch_size)}|{int(seed)}|{threshold}"


def row_label(row: dict) -> str:
    """The label of a CSV row."""
    return label(*(row[c] for c in COLUMNS[:5]))


def summary(run) -> dict:
    """One CSV row: the run's settings and its averages over the last third of its steps."""
    tail = slice(2 * run.steps // 3, None)
    probe_tail = run.probe_steps >= 2 * run.steps // 3
    below = (
        float(np.mean(run.global_cosine[tail] < run.threshold)) if run.threshold is not None else ""
    )
    row = {
        "optimizer": run.optimizer,
        "learning_rate": f"{run.learning_rate:g}",
        "batch_size": run.batch_size,
        "seed": run.seed,
        "threshold": "" if run.threshold is None else f"{run.threshold:g}",
        "diverged": int(run.diverged),
    }
    if run.diverged:
        return {**row, **{column: "nan" for column in COLUMNS if column not in row}}
    return {
        **row,
        "final_held_loss": f"{run.final_held_loss:.6f}",
        "final_train_loss": f"{float(np.mean(run.loss[-20:])):.6f}",
        "global_cosine": f"{float(np.mean(run.global_cosine[tail])):.6f}",
        "profile_cosine": f"{float(np.mean(run.profile_cosine[tail])):.6f}",
        "smallest_local": f"{float(np.mean(np.nanmin(run.local[tail], axis=1))):.6f}",
        "largest_local": f"{float(np.mean(np.nanmax(run.local[tail], axis=1))):.6f}",
        "probe_global": f"{float(np.mean(run.probe_global[probe_tail])):.6f}",
        "probe_profile": f"{float(np.mean(run.probe_profile[probe_tail])):.6f}",
        "below_threshold": below if below == "" else f"{below:.4f}",
    }


def run_one(settings: tuple) -> tuple[dict, dict | None]:
    """Train one setting; return its CSV row (and its trace if the chapter shows it)."""
    optimizer, rate, batch_size, seed, threshold = settings
    run = train(
        optimizer,
        rate,
        steps=STEPS,
        batch_size=batch_size,
        seed=seed,
        threshold=threshold,
        probe_every=PROBE_EVERY,
        probe_windows=PROBE_WINDOWS,
    )
    trace = None
    if seed == 0 and batch_size == TRACE_BATCH:
        trace = {
            field: getattr(run, field)
            for field in ("loss", "local", "raw_local", "weights", "global_cosine",
                          "profile_cosine", "update_norms", "gradient_norms")
        }  # fmt: skip
        trace["names"] = np.array(run.names)
    return summary(run), trace


def read_rows() -> list[dict]:
    """The rows of the CSV so far (none if it does not exist)."""
    if not RESULTS.exists():
        return []
    with RESULTS.open() as handle:
        return list(csv.DictReader(line for line in handle if not line.startswith("#")))


def write_rows(rows: list[dict]) -> None:
    """Write every row, sorted, under a comment line that names this script."""

    def order(row: dict) -> tuple:
        return (row["optimizer"], float(row["learning_rate"]), int(row["batch_size"]),
                int(row["seed"]), row["threshold"])  # fmt: skip

    with RESULTS.open("w", newline="") as handle:
        handle.write(f"# experiments/optimizer_sweep.py: {STEPS} steps a run; see its docstring\n")
        writer = csv.DictWriter(handle, COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(sorted(rows, key=order))


def best_rates(rows: list[dict]) -> dict[tuple[str, int], float]:
    """Each optimizer's rate with the lowest mean held-out loss, per batch size."""
    best = {}
    for optimizer, rates in RATES.items():
        for batch_size in BATCH_SIZES:
            means = {}
            for rate in rates:
                losses = [
                    float(row["final_held_loss"])
                    for row in rows
                    if row_label(row)
                    in {label(optimizer, rate, batch_size, s, None) for s in SEEDS}
                ]
                if len(losses) == len(SEEDS) and np.isfinite(losses).all():
                    means[rate] = float(np.mean(losses))
            best[optimizer, batch_size] = min(means, key=means.get)
    return best


def run_stage(settings: list[tuple], rows: list[dict], traces: dict) -> None:
    """Train the settings not yet in ``rows`` (two at a time), saving after each."""
    done = {row_label(row) for row in rows}
    todo = [
        s for s in settings if label(*s) not in done or (s in TRACED and label(*s) not in traces)
    ]
    print(f"{len(todo)} runs to do", file=sys.stderr)
    with get_context("spawn").Pool(2) as pool:
        for row, trace in pool.imap_unordered(run_one, todo):
            rows[:] = [r for r in rows if row_label(r) != row_label(row)] + [row]
            if trace is not None:
                traces[row_label(row)] = trace
            write_rows(rows)
            print(" ".join(f"{row[c]}" for c in COLUMNS[:6]), file=sys.stderr, flush=True)


TRACED: set = set()


PROBES = HERE / "probes.csv"
PROBE_DENSE = 10


def run_probes(settings: tuple) -> list[dict]:
    """One best-rate run, probed every ``PROBE_DENSE`` steps: a row per probe."""
    optimizer, rate, batch_size, seed, _ = settings
    run = train(
        optimizer, rate, steps=STEPS, batch_size=batch_size, seed=seed,
        probe_every=PROBE_DENSE, probe_windows=PROBE_WINDOWS,
    )  # fmt: skip
    return [
        {
            "optimizer": optimizer,
            "learning_rate": f"{rate:g}",
            "batch_size": batch_size,
            "seed": seed,
            "step": int(step),
            "batch_global": f"{run.global_cosine[step]:.6f}",
            "probe_global": f"{probe:.6f}",
            "probe_profile": f"{profile:.6f}",
        }  # fmt: skip
        for step, probe, profile in zip(
            run.probe_steps, run.probe_global, run.probe_profile, strict=True
        )
    ]


def main() -> None:
    """Stage 1, the best rates, stage 2 and the traces (see the module docstring)."""
    rows = read_rows()
    traces: dict = {}
    if TRACES.exists():
        with np.load(TRACES) as stored:
            for name in stored.files:
                run, field = name.split("/")
                traces.setdefault(run, {})[field] = stored[name]
    stage1 = [
        (optimizer, rate, batch_size, seed, None)
        for optimizer, rates in RATES.items()
        for rate in rates
        for batch_size in BATCH_SIZES
        for seed in SEEDS
    ]
    run_stage(stage1, rows, traces)
    best = best_rates(rows)
    # The chapter shows the best-rate runs of seed 0 at TRACE_BATCH, with and without
    # truncation: those are re-run if their trace is missing.
    TRACED.update(
        (optimizer, best[optimizer, TRACE_BATCH], TRACE_BATCH, 0, threshold)
        for optimizer in RATES
        for threshold in (None, *THRESHOLDS)
    )
    stage2 = [
        (optimizer, best[optimizer, batch_size], batch_size, seed, threshold)
        for optimizer in RATES
        for batch_size in BATCH_SIZES
        for seed in SEEDS
        for threshold in THRESHOLDS
    ]
    run_stage(stage2 + sorted(TRACED - set(stage2), key=str), rows, traces)
    shown = {label(*s) for s in TRACED}
    arrays = {
        f"{run}/{field}": value.astype(np.float32) if value.dtype == np.float64 else value
        for run, trace in traces.items()
        if run in shown
        for field, value in trace.items()
    }
    np.savez_compressed(TRACES, **arrays)
    if not PROBES.exists():
        settings = [
            (optimizer, best[optimizer, batch_size], batch_size, seed, None)
            for optimizer in RATES
            for batch_size in BATCH_SIZES
            for seed in SEEDS
        ]
        with get_context("spawn").Pool(2) as pool:
            rows = [row for runs in pool.map(run_probes, settings) for row in runs]
        with PROBES.open("w", newline="") as handle:
            handle.write(
                f"# experiments/optimizer_sweep.py stage 3: probes every {PROBE_DENSE} steps\n"
            )
            writer = csv.DictWriter(handle, list(rows[0]), lineterminator="\n")
            writer.writeheader()
            writer.writerows(rows)


if __name__ == "__main__":
    main()
