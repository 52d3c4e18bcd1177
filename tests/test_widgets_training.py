"""Tests for cosine_book.widgets.training: chapter 1's widget and its "try this" text."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cosine_book.gpt import GPT
from cosine_book.plotting.training import plot_cone_projection
from cosine_book.training import load_traces
from cosine_book.widgets.core import static_html
from cosine_book.widgets.training import training_explorer

TRACES = Path(__file__).resolve().parents[1] / "experiments" / "traces.npz"


@pytest.fixture(scope="module")
def runs():
    return load_traces(TRACES)


@pytest.fixture(scope="module")
def spec(runs):
    sizes = {name: p.numel() for name, p in GPT().named_parameters()}
    return training_explorer(runs, sizes, initial=("AdamW", 0.8)).spec


def offered(spec):
    return [int(step) for step in spec.controls[2].values()]


def test_the_widget_offers_every_run_at_every_step(spec, runs):
    optimizers = {name for name, _ in runs}
    assert set(spec.controls[0].values()) == optimizers == {"SGD", "momentum", "AdamW", "Muon"}
    assert spec.controls[1].values() == ("off", "0.5", "0.8")
    assert len(spec.settings()) == 4 * 3 * len(offered(spec))
    run, step = spec.state(optimizer="Muon", threshold="0.5", step=20.0)
    assert (run.optimizer, run.threshold, step) == ("Muon", 0.5, 20)


def test_adaptive_optimizers_truncated_stay_below_the_threshold(spec, runs):
    # "Try AdamW or Muon with tau at 0.5 or 0.8: at every step offered, every filled
    # marker sits on or above the dotted threshold while the global cosine lies below
    # it, between rho tau and tau."
    for name in ("AdamW", "Muon"):
        for tau in (0.5, 0.8):
            run = runs[name, tau]
            for step in offered(spec):
                local = run.local[step]
                assert np.nanmin(local) >= tau - 1e-6
                # Stored in float32: rho tau and the global cosine agree to about 1e-7.
                assert run.profile_cosine[step] * tau - 1e-6 <= run.global_cosine[step] < tau


def test_momentum_sits_just_under_the_threshold(spec, runs):
    # "Then momentum at tau = 0.8: after step 0 its rho is above 0.9 and the global
    # cosine sits just under the threshold."
    run = runs["momentum", 0.8]
    for step in offered(spec)[1:]:
        assert run.profile_cosine[step] > 0.9
        assert 0.7 < run.global_cosine[step] < 0.8


def test_sgd_is_never_truncated(runs):
    # "SGD's markers all sit at 1, with or without truncation."
    for tau in (None, 0.5, 0.8):
        np.testing.assert_allclose(runs["SGD", tau].local, 1.0, atol=1e-4)


def test_bad_input_names_the_argument(runs):
    sizes = {name: p.numel() for name, p in GPT().named_parameters()}
    partial = {key: run for key, run in runs.items() if key != ("Muon", 0.5)}
    with pytest.raises(ValueError, match=r"runs must cover .* missing \[\('Muon', 0.5\)\]"):
        training_explorer(partial, sizes)
    with pytest.raises(ValueError, match=r"threshold must lie in \[0, 1\]"):
        plot_cone_projection(1.5)


def test_frames_and_readout(spec):
    fragment = static_html(spec)
    assert fragment.count('data-widget="training"') == 1
    assert "Not a valid setting" not in fragment
    readout = spec.readout(spec.state(optimizer="AdamW", threshold="0.8", step=150.0))
    assert readout.startswith("global cosine ") and "ρ × smallest local" in readout
