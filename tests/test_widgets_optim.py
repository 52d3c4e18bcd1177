"""Tests for the chapter 1 widget (cosine_book.widgets.optim) and its figures and numbers.

The widget's parts: the numbers of one step (cosine_book.optim.truncation_step_summary),
the figure (cosine_book.plotting.optim), the state function and spec
(cosine_book.widgets.optim), and the claims chapter 1's "Explore" text makes about
the settings the HTML version offers.
"""

from __future__ import annotations

import dataclasses
import json
import re
from types import SimpleNamespace

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from cosine_book.datasets import load_digits_split  # noqa: E402
from cosine_book.optim import (  # noqa: E402
    Adam,
    Momentum,
    book_optimizers,
    run_grid,
    train,
    truncation_step_summary,
)
from cosine_book.plotting.optim import (  # noqa: E402
    draw_truncation_step,
    plot_cosines_over_training,
    plot_truncation_run,
    plot_weights_and_profiles,
)
from cosine_book.widgets import truncation_explorer  # noqa: E402
from cosine_book.widgets.core import LiveWidget, static_html, typeset_minus  # noqa: E402
from cosine_book.widgets.optim import (  # noqa: E402
    CHAPTER_PRESETS,
    OFF,
    truncation_spec,
    truncation_state,
)

SMALL_STEPS = 12


@pytest.fixture(scope="module")
def runs():
    rng = np.random.default_rng(7)
    x, y = rng.normal(size=(60, 6)), rng.integers(0, 3, size=60)
    data = SimpleNamespace(x_train=x, y_train=y, x_test=x, y_test=y)
    optimizers = {"Momentum": Momentum(0.1), "Adam": Adam(0.05)}
    return run_grid(data, (None, 0.6, 0.95), optimizers=optimizers, steps=SMALL_STEPS)


@pytest.fixture(scope="module")
def chapter_runs():
    """The two runs of chapter 1 that the presets show, as far as the presets reach.

    ``run_grid`` trains each run with ``train``'s loop from the same initial
    parameters (32 hidden units, seed 0); a shorter run is a prefix of the longer one.
    """
    digits = load_digits_split()
    data = (digits.x_train, digits.y_train, digits.x_test, digits.y_test)
    optimizers = book_optimizers()
    return {
        ("Adam", 0.9): train(optimizers["Adam"], *data, steps=151, threshold=0.9),
        ("Momentum", None): train(optimizers["Momentum"], *data, steps=200),
    }


@pytest.fixture(scope="module")
def chapter_spec():
    """The chapter's spec: its optimizers, thresholds, 200 steps, initial run and step.

    The spec reads only the runs' keys and lengths, so one cheap 200-step run stands
    in for each of the chapter's twelve.
    """
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(20, 3)), rng.integers(0, 2, size=20)
    run = train(Adam(0.05), x, y, x, y, steps=200, n_hidden=2)
    stand_in = {
        (name, threshold): dataclasses.replace(run, optimizer=name, threshold=threshold)
        for name in ("SGD", "Momentum", "Adam")
        for threshold in (None, 0.5, 0.8, 0.9)
    }
    return truncation_spec(stand_in, initial=("Adam", 0.8), step=30)


def frames_of(fragment):
    data = re.search(r'<script type="application/json" class="lgc-frames">(.*?)</script>', fragment)
    return json.loads(data.group(1).replace("<\\/", "</"))


# ------------------------------------------------------------ one step's numbers


def test_summary_reads_the_run_at_the_step(runs):
    run = runs[("Adam", 0.95)]
    summary = truncation_step_summary(run, 5)
    np.testing.assert_array_equal(summary.local, run.local[5])
    np.testing.assert_array_equal(summary.raw_local, run.raw_local[5])
    assert (summary.optimizer, summary.threshold, summary.step) == ("Adam", 0.95, 5)
    assert summary.global_cosine == run.global_cosine[5]
    assert summary.profile_cosine == pytest.approx(summary.weights.sum(), abs=1e-12)
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


@settings(max_examples=40)
@given(
    st.sampled_from(["Momentum", "Adam"]),
    st.sampled_from([None, OFF, 0.6, 0.95]),
    st.integers(0, SMALL_STEPS - 1),
)
def test_state_satisfies_the_block_identity_and_bounds(runs, optimizer, threshold, step):
    # Chapter 2's identity and chapter 3's bounds, at every setting the widget can show.
    view = truncation_state(runs, optimizer, threshold, float(step))
    s = view.summary
    assert view.run is runs[(optimizer, None if threshold == OFF else threshold)]
    assert s.step == step
    defined = ~np.isnan(s.local)
    assert s.global_cosine == pytest.approx(
        np.sum(s.weights[defined] * s.local[defined]), abs=1e-12
    )
    assert s.lower_bound - 1e-12 <= s.global_cosine <= s.upper_bound + 1e-12
    if s.threshold is not None:
        assert np.all(s.local[defined] >= s.threshold - 1e-12)


# ------------------------------------------------------------------ the figures


def test_drawing_reuses_a_figure(runs):
    fig = plt.figure()
    returned = draw_truncation_step(runs[("Adam", 0.6)], 3, fig)
    assert returned is fig
    assert len(fig.axes) == 2
    draw_truncation_step(runs[("Momentum", None)], 4, fig)
    assert len(fig.axes) == 2
    assert fig.axes[1].get_title() == "Momentum, truncation off"
    plt.close(fig)


def test_chapter_figures_draw(runs):
    for fig in (
        plot_cosines_over_training({name: runs[(name, None)] for name in ("Momentum", "Adam")}),
        plot_weights_and_profiles(runs[("Adam", None)], 4),
        plot_truncation_run(runs[("Adam", 0.6)]),
    ):
        assert fig.axes
        plt.close(fig)


# ----------------------------------------------------------- state function, spec


def test_spec_offers_the_runs_and_every_tenth_step(runs):
    spec = truncation_spec(runs, initial=("Adam", 0.6), step=3, every=5)
    optimizer, threshold, step = spec.controls
    assert optimizer.values() == ("Momentum", "Adam")
    assert threshold.values() == (OFF, 0.6, 0.95)
    assert [threshold.show(v) for v in threshold.values()] == ["off", "0.6", "0.95"]
    # Every 5th step, the last, the initial one, and the presets' steps within the run
    # (step 10 of "momentum, τ off, step 10"; step 150 is beyond these 12 steps).
    assert step.values() == (0.0, 3.0, 5.0, 10.0, 11.0)
    assert spec.defaults() == {"optimizer": "Adam", "threshold": 0.6, "step": 3.0}
    assert list(spec.presets) == ["momentum, τ off, step 10"]
    assert len(spec.settings()) == 2 * 3 * 5  # every combination


def test_chapter_spec_offers_the_presets_within_the_frame_budget(chapter_spec):
    settings_ = chapter_spec.settings()
    assert chapter_spec.defaults() == {"optimizer": "Adam", "threshold": 0.8, "step": 30.0}
    steps = (0.0, 10.0, 30.0, 100.0, 150.0, 199.0)
    assert chapter_spec.controls[2].values() == steps
    assert list(chapter_spec.presets) == list(CHAPTER_PRESETS)
    for preset in CHAPTER_PRESETS.values():
        assert {**chapter_spec.defaults(), **preset} in settings_
    assert len(settings_) == 3 * 4 * len(steps) <= 100  # every combination


def test_static_html_frames_are_the_state_functions_readouts(runs):
    spec = truncation_spec(runs, initial=("Adam", 0.95), step=6, every=5)
    data = frames_of(static_html(spec))
    assert len(data["frames"]) == len(spec.settings()) == 2 * 3 * 5
    checked = 0
    for setting in spec.settings():
        key = ",".join(
            str(control.values().index(setting[control.name])) for control in spec.controls
        )
        expected = typeset_minus(spec.readout(truncation_state(runs, **setting)))
        assert data["frames"][key]["readout"] == expected
        checked += 1
    assert checked == 30
    momentum = data["frames"]["0,0,3"]  # the preset: momentum, no truncation, step 10
    assert momentum["label"] == "optimizer = Momentum, τ = off, step = 10"
    plt.close("all")


def test_explorer_is_a_live_widget_whose_controls_redraw(runs, monkeypatch):
    # The HTML version is tested above; here only that the bundle carries it.
    monkeypatch.setattr(
        "cosine_book.widgets.core.static_html",
        lambda spec: f'<div class="lgc-widget" data-widget="{spec.name}"></div>',
    )
    explorer = truncation_explorer(runs, initial=("Adam", 0.6), step=3)
    assert isinstance(explorer, LiveWidget)
    bundle, _ = explorer._repr_mimebundle_()
    assert bundle["text/html"].startswith('<div class="lgc-widget" data-widget="truncation"')
    optimizer, threshold, step = explorer.widget.children[1].children
    assert (optimizer.value, threshold.value, step.value) == ("Adam", 0.6, 3.0)
    # The live slider offers the HTML version's steps, no others.
    assert [value for _, value in step.options] == list(explorer.spec.controls[2].values())
    assert [label for label, _ in threshold.options] == ["off", "0.6", "0.95"]
    output = explorer.widget.children[-1]
    readouts = [output.outputs[-1]["text"]]
    threshold.value = OFF  # "off" is a value a menu can show (None would read as no selection)
    assert threshold.label == "off"
    readouts.append(output.outputs[-1]["text"])
    optimizer.value = "Momentum"
    readouts.append(output.outputs[-1]["text"])
    step.value = 11.0
    readouts.append(output.outputs[-1]["text"])
    assert len(set(readouts)) == 4  # every move redrew (figure and readout replaced)
    plt.close("all")


# ------------------------------------------------------ the chapter's "Explore" claims


def test_claim_adam_at_09_sits_on_the_bound(chapter_runs, chapter_spec):
    # "Press Adam, τ = 0.9, step 150: all four bars sit on the threshold and the global
    # cosine lands exactly on the bound."
    view = truncation_state(chapter_runs, **CHAPTER_PRESETS["Adam, τ = 0.9, step 150"])
    s = view.summary
    assert np.all(s.raw_local < 0.9)  # every tensor truncated ...
    np.testing.assert_allclose(s.local, 0.9, atol=1e-12)  # ... onto the threshold
    assert s.global_cosine == pytest.approx(s.lower_bound, abs=1e-12)
    assert s.global_cosine == pytest.approx(0.9 * s.profile_cosine, abs=1e-12)
    assert s.global_cosine < 0.9 - 0.005  # and below lambda
    # The readout under the figure shows the two numbers equal.
    readout = chapter_spec.readout(view)
    global_text, bound_text = re.findall(r"(?:global cosine|min cᵢ) (-?\d\.\d{3})", readout)
    assert global_text == bound_text


def test_claim_momentum_bias_badly_aimed_global_high(chapter_runs):
    # "Then press momentum, τ off, step 10, one of the early steps where a bias, b2, has a
    # negative local cosine while the global cosine stays high: with a weight near zero"
    view = truncation_state(chapter_runs, **CHAPTER_PRESETS["momentum, τ off, step 10"])
    s = view.summary
    assert s.threshold is None
    b2 = s.names.index("b2")
    assert s.local[b2] < -0.2
    assert s.weights[b2] < 0.01
    assert s.global_cosine > 0.9
    # "one of the early steps where a bias has a negative local cosine": a few, all early.
    biases = [s.names.index("b1"), b2]
    negative = np.flatnonzero(np.any(view.run.local[:, biases] < 0, axis=1))
    assert 10 in negative and len(negative) > 1 and negative.max() < 20
    assert np.all(view.run.global_cosine[negative] > 0.85)


# --------------------------------------------------------------- bad-input table


@pytest.mark.parametrize(
    ("call", "kind", "message"),
    [
        (lambda r: truncation_step_summary(r[("Adam", None)], -1), "negative step", "step"),
        (lambda r: truncation_step_summary(r[("Adam", None)], 12), "step past end", "between"),
        (lambda r: truncation_step_summary(r[("Adam", None)], 2.5), "fractional step", "integer"),
        (lambda r: truncation_step_summary("run", 0), "not a run", "TrainingRun"),
        (lambda r: truncation_state(r, "Adam", OFF, 2.5), "fractional step", "integer"),
        (lambda r: truncation_state(r, "Adam", OFF, float("nan")), "NaN step", "integer"),
        (lambda r: truncation_state(r, "Adam", OFF, True), "bool step", "integer"),
        (lambda r: truncation_state(r, "SGD", OFF, 0), "unknown optimizer", "no run"),
        (lambda r: truncation_state(r, ["Adam"], OFF, 0), "unhashable optimizer", "name"),
        (lambda r: truncation_state(r, "Adam", 0.7, 0), "threshold not run", "no run"),
        (lambda r: truncation_state(r, "Adam", "0.6", 0), "numeric string", "real number"),
        (lambda r: truncation_state(r, "Adam", 1.5, 0), "threshold > 1", r"\[0, 1\]"),
        (lambda r: truncation_state(r, "Adam", float("nan"), 0), "NaN threshold", "finite"),
        (lambda r: truncation_state(list(r), "Adam", OFF, 0), "runs not a mapping", "mapping"),
        (lambda r: truncation_spec({}), "empty runs", "empty"),
        (
            lambda r: truncation_spec({k: v for k, v in r.items() if k != ("Adam", 0.6)}),
            "incomplete grid",
            "missing",
        ),
        (lambda r: truncation_spec(r, initial=("SGD", None)), "unknown initial", "initial"),
        (lambda r: truncation_spec(r, step=12), "step past end", "below"),
        (lambda r: truncation_spec(r, step=-1), "negative step", "at least 0"),
        (lambda r: truncation_spec(r, every=0), "every < 1", "every"),
        (
            lambda r: truncation_spec(r, presets={"x": {"optimizer": "SGD"}}),
            "preset without run",
            "preset 'x'",
        ),
        (
            lambda r: truncation_spec(r, presets={"x": {"step": 999}}),
            "preset step beyond the run",
            "not a value the HTML version offers",
        ),
        (lambda r: plot_truncation_run(r[("Adam", None)]), "run without threshold", "threshold"),
        (lambda r: plot_truncation_run("run"), "not a run", "TrainingRun"),
    ],
)
def test_bad_input_table(runs, call, kind, message):
    with pytest.raises(ValueError, match=message):
        call(runs)
