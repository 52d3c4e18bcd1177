"""Tests for cosine_book.plotting.optim: chapter 1's figures draw what they claim."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest

from cosine_book.optim import SGD, Adam, train, truncate_to_cosine
from cosine_book.plotting.optim import (
    plot_aim_over_training,
    plot_cone_projection,
    plot_cosines_over_training,
)


@pytest.fixture(scope="module")
def runs():
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(30, 4)), rng.integers(0, 3, size=30)
    return {
        "SGD": train(SGD(0.1), x, y, x, y, steps=6),
        "Adam": train(Adam(0.01), x, y, x, y, steps=6),
    }


def test_cone_figure_marks_each_projection_where_truncation_puts_it():
    updates = [(2.0, 1.0), (0.0, 1.0), (-0.9, 0.2)]
    fig = plot_cone_projection((1.0, 0.0), 0.6, updates)
    dots = [line for line in fig.axes[0].lines if line.get_marker() == "o"]
    drawn = [tuple(np.ravel(line.get_xydata())) for line in dots]
    expected = [tuple(truncate_to_cosine(u, (1.0, 0.0), 0.6)) for u in updates]
    np.testing.assert_allclose(drawn, expected, atol=1e-12)
    plt.close(fig)


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"gradient": (0.0, 0.0)}, "nonzero vector of 2 entries"),
        ({"gradient": (1.0, 0.0, 0.0)}, "nonzero vector of 2 entries"),
        ({"gradient": (np.nan, 1.0)}, "gradient"),
        ({"threshold": 1.0}, "below 1"),
        ({"threshold": -0.1}, "threshold"),
        ({"updates": [(1.0, 2.0, 3.0)]}, "2 entries"),
    ],
)
def test_cone_figure_refuses_bad_input(kwargs, fragment):
    with pytest.raises(ValueError, match=fragment):
        plot_cone_projection(**kwargs)


def test_aim_figure_draws_one_line_per_run_and_adams_own_norm(runs):
    fig = plot_aim_over_training(runs, {"SGD": 0.1, "Adam": 0.01})
    loss_ax, length_ax, cos_ax, linf_ax = fig.axes
    assert len(loss_ax.lines) == len(length_ax.lines) == len(linf_ax.lines) == 2
    # SGD's own-norm cosine is its Euclidean cosine, so only Adam gets a dotted line.
    assert [line.get_label() for line in cos_ax.lines] == ["SGD", "Adam", "Adam, own norm"]
    np.testing.assert_array_equal(loss_ax.lines[1].get_ydata(), runs["Adam"].loss)
    plt.close(fig)


@pytest.mark.parametrize(
    ("rates", "fragment"),
    [({"SGD": 0.1}, "no rate for \\['Adam'\\]"), ({"SGD": 0.1, "Adam": 0.0}, "positive")],
)
def test_aim_figure_refuses_missing_or_bad_rates(runs, rates, fragment):
    with pytest.raises(ValueError, match=fragment):
        plot_aim_over_training(runs, rates)


def test_cosines_figure_has_every_tensor_and_the_global_cosine(runs):
    fig = plot_cosines_over_training(runs)
    assert len(fig.axes) == 2
    for ax, run in zip(fig.axes, runs.values(), strict=True):
        # seaborn also leaves empty legend proxies among the lines: count drawn ones.
        drawn = [line for line in ax.lines if len(line.get_xdata())]
        assert len(drawn) == len(run.names) + 1
        np.testing.assert_array_equal(drawn[-1].get_ydata(), run.global_cosine)
    plt.close(fig)
