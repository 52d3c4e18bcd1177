"""Tests for the chapter 1 widget (cosine_book.widgets.optim), without a browser."""

from __future__ import annotations

from types import SimpleNamespace

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from cosine_book.optim import Adam, Momentum, run_grid  # noqa: E402
from cosine_book.widgets import truncation_explorer  # noqa: E402
from cosine_book.widgets.optim import (  # noqa: E402
    draw_truncation_step,
    truncation_step_summary,
)


@pytest.fixture(scope="module")
def runs():
    rng = np.random.default_rng(7)
    x, y = rng.normal(size=(60, 6)), rng.integers(0, 3, size=60)
    data = SimpleNamespace(x_train=x, y_train=y, x_test=x, y_test=y)
    optimizers = {"Momentum": Momentum(0.1), "Adam": Adam(0.05)}
    return run_grid(data, (None, 0.6, 0.95), optimizers=optimizers, steps=12)


def test_summary_reads_the_run_at_the_step(runs):
    run = runs[("Adam", 0.95)]
    summary = truncation_step_summary(run, 5)
    np.testing.assert_array_equal(summary.local, run.local[5])
    np.testing.assert_array_equal(summary.raw_local, run.raw_local[5])
    assert summary.global_cosine == run.global_cosine[5]
    assert summary.profile_cosine == pytest.approx(summary.weights.sum(), abs=1e-12)
    assert summary.threshold == 0.95
    assert summary.lower_bound <= summary.global_cosine + 1e-12
    assert summary.global_cosine <= summary.upper_bound + 1e-12
    # With the threshold this high, truncation sets every tensor to cosine 0.95 exactly
    # and the global cosine sits on its lower bound rho * 0.95.
    if np.all(summary.raw_local < 0.95):
        assert summary.global_cosine == pytest.approx(0.95 * summary.profile_cosine, abs=1e-9)


def test_summary_copies_so_callers_cannot_corrupt_the_run(runs):
    run = runs[("Momentum", None)]
    summary = truncation_step_summary(run, 0)
    summary.local[:] = 5.0
    assert np.all(run.local[0] <= 1.0)


@pytest.mark.parametrize("step", [-1, 12, 2.5])
def test_summary_rejects_bad_steps(runs, step):
    with pytest.raises(ValueError, match="step"):
        truncation_step_summary(runs[("Adam", None)], step)


def test_drawing_reuses_a_figure(runs):
    fig = plt.figure()
    returned = draw_truncation_step(runs[("Adam", 0.6)], 3, fig)
    assert returned is fig
    assert len(fig.axes) == 2
    draw_truncation_step(runs[("Momentum", None)], 4, fig)
    assert len(fig.axes) == 2
    plt.close(fig)


def test_explorer_controls_cover_the_runs_and_redraw(runs, capsys):
    explorer = truncation_explorer(runs, initial=("Adam", 0.6), step=3)
    optimizer, threshold, step = explorer.children[:3]
    assert list(optimizer.options) == ["Momentum", "Adam"]
    assert list(threshold.options) == ["off", "0.6", "0.95"]
    assert (optimizer.value, threshold.value, step.value, step.max) == ("Adam", "0.6", 3, 11)
    for value in ("off", "0.95"):
        threshold.value = value
    optimizer.value = "Momentum"
    step.value = 11
    assert not plt.get_fignums()  # every figure drawn was closed again
    capsys.readouterr()


def test_explorer_rejects_incomplete_grids(runs):
    with pytest.raises(ValueError, match="empty"):
        truncation_explorer({})
    partial = dict(runs)
    del partial[("Adam", 0.6)]
    with pytest.raises(ValueError, match="missing"):
        truncation_explorer(partial)
    with pytest.raises(ValueError, match="initial"):
        truncation_explorer(runs, initial=("SGD", None))
