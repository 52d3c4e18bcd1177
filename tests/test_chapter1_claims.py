"""Chapter 1's sentences about its sweep, checked against the committed results files.

Each test quotes the sentence it checks; the numbers come from experiments/*.csv, the
files the chapter reads (tests/test_experiments.py checks that they reproduce).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

EXPERIMENTS = Path(__file__).resolve().parents[1] / "experiments"
OPTIMIZERS = ("Muon", "AdamW", "momentum", "SGD")


@pytest.fixture(scope="module")
def sweep():
    return pd.read_csv(EXPERIMENTS / "optimizer_sweep.csv", comment="#")


@pytest.fixture(scope="module")
def plain(sweep):
    return sweep[sweep["threshold"].isna()]


@pytest.fixture(scope="module")
def best(plain):
    held = plain.groupby(["optimizer", "batch_size", "learning_rate"])["final_held_loss"]
    held = held.agg(["mean", "std", "count"])
    held = held[held["count"] == 3]
    return {
        key: held.loc[key]
        .loc[held.loc[key]["mean"].idxmin()]
        .rename(held.loc[key]["mean"].idxmin())
        for key in {(name, batch) for name, batch, _ in held.index}
    }


def test_ranking_and_gaps(best):
    # "the ranking by held-out loss is the same at both batch sizes: Muon, then AdamW,
    # momentum and SGD. At batch 32 every gap between neighbours is more than twice
    # the larger of their standard deviations over seeds; at batch 8 only Muon's lead
    # is, and AdamW, momentum and SGD end within 0.08 of each other"
    for batch in (8, 32):
        means = [best[name, batch]["mean"] for name in OPTIMIZERS]
        assert means == sorted(means)
    for upper, lower in zip(OPTIMIZERS, OPTIMIZERS[1:], strict=False):
        gap = best[lower, 32]["mean"] - best[upper, 32]["mean"]
        assert gap > 2 * max(best[lower, 32]["std"], best[upper, 32]["std"])
    gap = best["AdamW", 8]["mean"] - best["Muon", 8]["mean"]
    assert gap > 2 * max(best["AdamW", 8]["std"], best["Muon", 8]["std"])
    rest = [best[name, 8]["mean"] for name in OPTIMIZERS[1:]]
    assert max(rest) - min(rest) < 0.08


def test_rates_are_bracketed_and_divergences_counted(plain, best):
    # "Every chosen rate was flanked by worse ones (16 of the 120 runs diverged: SGD at
    # rates 1 and 3, momentum at 0.3 for two of three seeds)"
    finished = plain[plain["diverged"] == 0]
    for (name, batch), row in best.items():
        rates = finished[(finished["optimizer"] == name) & (finished["batch_size"] == batch)]
        assert rates["learning_rate"].min() < row.name < rates["learning_rate"].max()
    diverged = plain[plain["diverged"] == 1]
    assert len(plain) == 120 and len(diverged) == 16
    counts = diverged.groupby(["optimizer", "learning_rate"]).size().to_dict()
    assert counts == {("SGD", 1.0): 6, ("SGD", 3.0): 6, ("momentum", 0.3): 4}


def test_probe_ranges():
    # "SGD's falls from 1 to 0.815 at batch 32 and to 0.639 at batch 8; momentum's
    # falls to 0.158-0.219, AdamW's to 0.060-0.092 and Muon's to 0.033-0.055, with standard
    # deviations over seeds of at most 0.02 (0.05 for SGD at batch 8)"
    probes = pd.read_csv(EXPERIMENTS / "probes.csv", comment="#")
    late = probes[probes["step"] >= 50]
    per_run = late.groupby(["optimizer", "batch_size", "seed"])["probe_global"].mean()
    means = per_run.groupby(level=[0, 1]).mean().round(3)
    sds = per_run.groupby(level=[0, 1]).std()
    assert (means["SGD", 32], means["SGD", 8]) == (0.815, 0.639)
    ranges = {"momentum": (0.158, 0.219), "AdamW": (0.06, 0.092), "Muon": (0.033, 0.055)}
    for name, (low, high) in ranges.items():
        assert sorted(means[name].tolist()) == [low, high]
        assert sds[name].max() <= 0.025
    assert sds["SGD", 8] <= 0.055


def test_truncation_seed_by_seed(sweep, plain, best):
    # "truncation at tau = 0.8 hurt Muon at both batch sizes and AdamW at batch 32,
    # every seed worse. ... momentum at every seed of every setting (12 of 12), AdamW at
    # every seed of its other three settings (9 of 9), Muon at tau = 0.5 at five of six"
    cut = sweep[sweep["threshold"].notna()]
    better = {}
    for (name, batch, tau), group in cut.groupby(["optimizer", "batch_size", "threshold"]):
        base = plain[
            (plain["optimizer"] == name)
            & (plain["batch_size"] == batch)
            & (plain["learning_rate"] == best[name, batch].name)
        ].set_index("seed")["final_held_loss"]
        change = group.set_index("seed")["final_held_loss"] - base
        better[name, batch, tau] = int((change < 0).sum())
    assert better["Muon", 8, 0.8] == better["Muon", 32, 0.8] == better["AdamW", 32, 0.8] == 0
    assert sum(better["momentum", b, t] for b in (8, 32) for t in (0.5, 0.8)) == 12
    assert better["AdamW", 8, 0.5] + better["AdamW", 8, 0.8] + better["AdamW", 32, 0.5] == 9
    assert better["Muon", 8, 0.5] + better["Muon", 32, 0.5] == 5
    # "With AdamW and Muon the global cosine of the truncated update is below tau at
    # every step of the last third, at both thresholds"
    adaptive = cut[cut["optimizer"].isin(["AdamW", "Muon"])]
    np.testing.assert_array_equal(adaptive["below_threshold"], 1.0)


def test_update_profiles_follow_root_sizes():
    # "AdamW's update entries have a root mean square between about 0.12 and 0.35
    # learning rates across tensors and Muon's between about 0.08 and 0.26 ... both
    # update profiles are within a few thousandths of sqrt(n) (cosines 0.996 and
    # 0.999), while the gradient's profiles are not (0.60 and 0.72; AdamW's is even
    # below the flat profile's 0.63): rho is 0.64 and 0.72."
    from cosine_book.gpt import GPT
    from cosine_book.training import load_traces

    traces = load_traces(EXPERIMENTS / "traces.npz")
    sizes = {name: p.numel() for name, p in GPT().named_parameters()}
    root_n = np.sqrt([sizes[name] for name in traces["AdamW", None].names])

    def mean_cosine(profiles):
        return float(np.mean(profiles @ root_n / np.linalg.norm(profiles, axis=1))) / (
            np.linalg.norm(root_n)
        )

    flat = mean_cosine(np.ones((1, root_n.size)))
    assert round(flat, 2) == 0.63
    expected = {"AdamW": (0.12, 0.35, 0.996, 0.60, 0.64), "Muon": (0.08, 0.26, 0.999, 0.72, 0.72)}
    for name, (low, high, update, gradient, rho) in expected.items():
        run = traces[name, None]
        tail = slice(150, 200)
        rms = run.update_norms[tail].mean(axis=0) / root_n / run.learning_rate
        assert (round(rms.min(), 2), round(rms.max(), 2)) == (low, high)
        assert round(mean_cosine(run.update_norms[tail]), 3) == update
        assert round(mean_cosine(run.gradient_norms[tail]), 2) == gradient
        assert round(float(run.profile_cosine[tail].mean()), 2) == rho
    assert mean_cosine(traces["AdamW", None].gradient_norms[150:]) < flat
    assert mean_cosine(traces["Muon", None].gradient_norms[150:]) > flat


def test_truncated_global_cosines_and_momentum_shares(sweep):
    # "it averages 0.30-0.35 at tau = 0.5 and 0.43-0.55 at tau = 0.8. Momentum's is
    # below 0.8 at 96-97 % of those steps, just below it, and below 0.5 at about 30 %.
    # ... rho stays between about 0.5 and 0.7."
    cut = sweep[sweep["threshold"].notna()]
    adaptive = cut[cut["optimizer"].isin(["AdamW", "Muon"])]
    for tau, (low, high) in {0.5: (0.30, 0.35), 0.8: (0.43, 0.55)}.items():
        means = adaptive[adaptive["threshold"] == tau].groupby(["optimizer", "batch_size"])
        means = means["global_cosine"].mean().round(2)
        assert (means.min(), means.max()) == (low, high)
    rho = adaptive.groupby(["optimizer", "batch_size", "threshold"])["profile_cosine"].mean()
    assert 0.5 <= rho.min() and rho.max() <= 0.71
    momentum = cut[cut["optimizer"] == "momentum"]
    shares = momentum.groupby(["threshold", "batch_size"])["below_threshold"].mean().round(2)
    assert sorted(shares[0.8].tolist()) == [0.96, 0.97]
    assert all(0.25 <= share <= 0.35 for share in shares[0.5])


def test_profile_sentences_match_the_printed_table():
    # "AdamW's own profile gives a global cosine of 0.191 (rho = 0.617). Grafting ...
    # raises it to 0.301 (rho = 1), and the best profile ... to its bound, 0.307, and
    # the means over steps 100-149 keep that order. LAMB's profile ... lowers it ...;
    # with norms and biases left out ... it lands between AdamW's own profile and
    # LAMB's." The table is the stored output of the cell (nbval checks it reproduces).
    import json

    notebook = json.loads((EXPERIMENTS.parent / "chapters" / "01_optimizer.ipynb").read_text())
    cell = next(c for c in notebook["cells"] if "LAMB, norms excluded" in "".join(c["source"]))
    text = "".join("".join(o["text"]) for o in cell["outputs"] if o.get("output_type") == "stream")
    rows = {}
    for line in text.splitlines():
        parts = line.rsplit(None, 3)
        if len(parts) == 4 and parts[0].strip() in {
            "AdamW's own", "grafted", "LAMB", "LAMB, norms excluded", "best, (b o c)+"
        }:  # fmt: skip
            rows[parts[0].strip()] = [float(v) for v in parts[1:]]
    own, graft, lamb, lamb_ex, best = (
        rows[k]
        for k in ("AdamW's own", "grafted", "LAMB", "LAMB, norms excluded", "best, (b o c)+")
    )
    assert (own[0], own[1], graft[0], graft[1], best[0]) == (0.191, 0.617, 0.301, 1.0, 0.307)
    assert "bound |(b o c)+| / |b| = 0.307" in text
    assert own[2] < graft[2] < best[2]  # the means keep the order
    assert lamb[0] < lamb_ex[0] < own[0] and lamb[2] < lamb_ex[2] < own[2]
