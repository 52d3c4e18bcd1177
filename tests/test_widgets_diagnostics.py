"""Tests for the chapter 7 widget (cosine_book.widgets.diagnostics), its computation
(with_shared_direction, prepare_shared_direction, shared_direction_update, and
shared_direction_frame, which adds the pair AUC and the related pairs' pass rate) and the
chapter 7 figures (cosine_book.plotting.diagnostics). The chapter's "try this" sentence is
checked on the data the chapter gives the widget and on every setting the HTML version
offers."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pytest

from cosine_book.cluster_recovery import pair_auc
from cosine_book.datasets import load_digits_split
from cosine_book.diagnostics import centered_cosine_matrix, related_pair_cosines
from cosine_book.embeddings import hidden_features, train_embedding_model
from cosine_book.factorization import cosine_matrix
from cosine_book.plotting.diagnostics import (
    dimension_contributions_figure,
    k_occurrence_figure,
    neighbour_images_figure,
    pair_cosines_figure,
    shared_direction_figure,
)
from cosine_book.widgets import shared_direction_widget
from cosine_book.widgets.core import LiveWidget, static_html
from cosine_book.widgets.diagnostics import (
    SWEEP_STRENGTHS,
    prepare_shared_direction,
    shared_direction_frame,
    shared_direction_readout,
    shared_direction_spec,
    shared_direction_update,
    with_shared_direction,
)


@pytest.fixture(scope="module")
def chapter_spec():
    """The widget as chapter 7 builds it: hidden features of the dot-objective model."""
    digits = load_digits_split()
    model = train_embedding_model(
        digits.x_train, digits.y_train, digits.x_test, digits.y_test, objective="dot"
    )
    setup = prepare_shared_direction(hidden_features(model, digits.x_test), digits.y_test)
    return shared_direction_spec(setup, name="of the hidden layer")


def toy():
    labels = np.repeat([0, 1, 2], 8)
    rng = np.random.default_rng(0)
    return rng.normal(size=(24, 5)) + 2.0 * np.eye(5)[labels], labels


def test_try_this_claim_of_chapter_7(chapter_spec):
    # "Move t from 0 to 3: both filled distributions slide to the right and merge near 1,
    # and the mean raw cosine climbs from about 0 to 0.90. The threshold 0.5 first passes
    # 68.4 % of the same-digit and 3.3 % of the different-digit pairs, and from t = 2.25 on,
    # all of both: it no longer separates anything. Meanwhile the pair AUC stays between 0.93 and
    # 0.94 and the top-10 agreement between 0.90 and 0.92, and the dashed centred
    # distributions do not move at all."
    frames = [chapter_spec.state(**setting) for setting in chapter_spec.settings()]
    start, end = frames[0], frames[-1]
    assert chapter_spec.defaults() == {"strength": 0.0}
    assert (start.state.strength, end.state.strength) == (0.0, 3.0)
    assert abs(start.state.mean_cosine) < 0.005 and round(end.state.mean_cosine, 2) == 0.90
    assert np.all(np.diff([f.state.mean_cosine for f in frames]) > 0)
    assert f"{start.related_above:.1%}" == "68.4%"
    assert f"{start.state.unrelated_above:.1%}" == "3.3%"
    assert end.related_above == 1.0 and end.state.unrelated_above == 1.0
    # "... and from t = 2.25 on, all of both": on every setting of the slider.
    full = [f.state.strength for f in frames if f.related_above == f.state.unrelated_above == 1]
    assert full == [2.25, 2.5, 2.75, 3.0]
    for frame in frames:
        assert 0.93 <= frame.auc <= 0.94
        assert 0.90 <= frame.state.agreement <= 0.92
        assert frame.state.centred_agreement == start.state.centred_agreement
        assert frame.centred_auc == start.centred_auc
        np.testing.assert_array_equal(frame.state.centred_related, start.state.centred_related)
        np.testing.assert_array_equal(frame.state.centred_unrelated, start.state.centred_unrelated)
    centres = (start.state.bin_edges[:-1] + start.state.bin_edges[1:]) / 2

    def mean_of(counts):
        return np.sum(centres * counts) / np.sum(counts)

    for field in ("related", "unrelated"):
        assert mean_of(getattr(end.state, field)) > 0.85 > mean_of(getattr(start.state, field))
    gap_start = mean_of(start.state.related) - mean_of(start.state.unrelated)
    gap_end = mean_of(end.state.related) - mean_of(end.state.unrelated)
    assert 0 < gap_end < gap_start / 4


def test_frame_adds_auc_and_pass_rates_of_the_raw_and_centred_cosines():
    E, labels = toy()
    setup = prepare_shared_direction(E, labels, k=3)
    base = shared_direction_frame(setup, 0.0)
    for value in (0.0, 1.25, 0.6):  # on the sweep and off it
        frame = shared_direction_frame(setup, value, sweep=base)
        S = cosine_matrix(with_shared_direction(E, value))
        related, unrelated = related_pair_cosines(S, labels)
        assert frame.auc == pytest.approx(pair_auc(S, labels))
        assert frame.related_above == np.mean(related >= 0.5)
        assert frame.state.unrelated_above == np.mean(unrelated >= 0.5)  # the false matches
        alone = shared_direction_frame(setup, value)  # the sweep computed anew
        assert (alone.auc, alone.related_above) == (frame.auc, frame.related_above)
    centred = centered_cosine_matrix(E)
    assert base.centred_auc == pytest.approx(pair_auc(centred, labels))
    assert base.sweep_auc.shape == base.sweep_related_above.shape == (len(SWEEP_STRENGTHS),)


def test_html_version_offers_every_strength(chapter_spec):
    assert [setting["strength"] for setting in chapter_spec.settings()] == list(SWEEP_STRENGTHS)
    html = static_html(chapter_spec)
    # One frame per strength, plus the first frame shown before any move.
    assert html.count("data:image/png;base64") == len(SWEEP_STRENGTHS) + 1
    assert len(html.encode()) < 5e6


def test_update_at_zero_is_the_prepared_base():
    E, labels = toy()
    setup = prepare_shared_direction(E, labels, k=3)
    at_zero = shared_direction_update(setup, 0.0)
    for field in ("mean_cosine", "agreement", "unrelated_above", "centred_agreement"):
        assert getattr(at_zero, field) == getattr(setup.base, field)
    np.testing.assert_array_equal(at_zero.related, setup.base.related)
    # The sweep holds the update at each of its strengths.
    for position, value in enumerate(SWEEP_STRENGTHS):
        state = shared_direction_update(setup, value)
        assert state.agreement == setup.base.sweep_agreement[position]
        assert state.mean_cosine == setup.base.sweep_mean_cosine[position]
        assert state.unrelated_above == setup.base.sweep_unrelated_above[position]


def test_spec_state_is_the_update():
    E, labels = toy()
    setup = prepare_shared_direction(E, labels, k=3)
    spec = shared_direction_spec(setup)
    for value in (0.0, 1.25, 3.0):
        from_spec = spec.state(strength=value).state
        direct = shared_direction_update(setup, value)
        assert (from_spec.mean_cosine, from_spec.agreement) == (
            direct.mean_cosine,
            direct.agreement,
        )
        np.testing.assert_array_equal(from_spec.unrelated, direct.unrelated)


def test_counts_cover_every_pair():
    E, labels = toy()
    state = shared_direction_update(prepare_shared_direction(E, labels, k=3), 2.0)
    n = labels.size
    same = sum(int(np.sum(labels == g)) * (int(np.sum(labels == g)) - 1) // 2 for g in range(3))
    assert state.related.sum() == same
    assert state.unrelated.sum() == n * (n - 1) // 2 - same
    assert state.centred_related.sum() == same


def test_readout_and_widget():
    E, labels = toy()
    setup = prepare_shared_direction(E, labels, k=3)
    text = shared_direction_readout(shared_direction_frame(setup, 0.5))
    assert text.startswith("t = 0.50: mean cosine ")
    assert "pair AUC" in text and "share ≥ 0.5, related / unrelated: " in text
    assert "top-3 label agreement" in text
    assert isinstance(shared_direction_widget(setup), LiveWidget)


@pytest.mark.parametrize(
    ("call", "fragment"),
    [
        (lambda setup: shared_direction_spec(setup, strength=0.3), "strength must be one of"),
        (lambda setup: shared_direction_spec(setup, strength=-1.0), "strength"),
        (lambda setup: shared_direction_spec("setup"), "SharedDirectionSetup"),
        (lambda setup: shared_direction_update(setup, -0.5), "strength must be nonnegative"),
        (lambda setup: shared_direction_update(setup, np.nan), "strength"),
        (lambda setup: shared_direction_update(None, 1.0), "SharedDirectionSetup"),
        (lambda setup: shared_direction_frame(None, 1.0), "SharedDirectionSetup"),
        (lambda setup: shared_direction_frame(setup, -1.0), "strength"),
    ],
)
def test_spec_and_update_refuse_bad_settings(call, fragment):
    E, labels = toy()
    setup = prepare_shared_direction(E, labels, k=3)
    with pytest.raises(ValueError, match=fragment):
        call(setup)


@pytest.mark.parametrize(
    ("embeddings", "labels", "kwargs", "fragment"),
    [
        (np.ones((4, 2)) * np.nan, [0, 0, 1, 1], {}, "embeddings"),
        (np.ones((4, 2)), [0, 0, 1], {}, "labels"),
        (np.ones(4), [0, 0, 1, 1], {}, "embeddings"),
        (np.eye(4) + 1.0, [0, 0, 1, 1], {"k": 0}, "k"),
        (np.eye(4) + 1.0, [0, 0, 1, 1], {"k": 4}, "k"),
        (np.eye(4) + 1.0, [0, 0, 1, 1], {"k": 1, "threshold": 1.5}, "threshold"),
        (np.array([[1.0, 2.0], [-1.0, -2.0]]), [0, 1], {"k": 1}, "mean row"),
    ],
)
def test_prepare_refuses_bad_input(embeddings, labels, kwargs, fragment):
    with pytest.raises(ValueError, match=fragment):
        prepare_shared_direction(embeddings, labels, **kwargs)


def test_figures_draw():
    E, labels = toy()
    fig = shared_direction_figure(
        shared_direction_frame(prepare_shared_direction(E, labels, k=3), 1.0)
    )
    assert fig.get_layout_engine() is None  # fixed margins, drawn once per frame
    assert fig.axes[1].get_xlabel() == "strength t of the shared direction"
    plt.close(fig)
    rng = np.random.default_rng(1)
    fig = pair_cosines_figure(
        {"a": (rng.uniform(size=10), rng.uniform(size=30)), "b": ([0.5], [0.1, 0.2])},
        threshold=0.4,
    )
    assert [ax.get_title() for ax in fig.axes] == ["a", "b"]
    plt.close(fig)
    fig = neighbour_images_figure(rng.uniform(size=(5, 4)), 0, {"x": [1, 2]}, shape=(2, 2))
    assert len(fig.axes) == 3
    plt.close(fig)
    fig = k_occurrence_figure({"raw": [0, 1, 5, 30], "centred": [2, 2, 3, 4]})
    assert [line.get_label() for line in fig.axes[0].patches] == ["raw", "centred"]
    plt.close(fig)
    fig = dimension_contributions_figure({"a": [0.5, -0.1], "b": [0.1, 0.1, 0.0]})
    assert [ax.get_title() for ax in fig.axes] == ["a: mean cosine 0.40", "b: mean cosine 0.20"]
    plt.close(fig)


@pytest.mark.parametrize(
    ("call", "fragment"),
    [
        (lambda: pair_cosines_figure({}), "at least one model"),
        (lambda: pair_cosines_figure({"a": ([np.nan], [0.1])}), "related cosines"),
        (lambda: neighbour_images_figure(np.ones((3, 4)), 5, {"a": [1]}), "query"),
        (lambda: neighbour_images_figure(np.ones((3, 4)), 0, {}), "at least one"),
        (lambda: k_occurrence_figure({}), "at least one"),
        (lambda: dimension_contributions_figure({}), "at least one"),
        (lambda: dimension_contributions_figure({"a": [np.nan]}), "contributions of 'a'"),
    ],
)
def test_figures_refuse_bad_input(call, fragment):
    with pytest.raises(ValueError, match=fragment):
        call()


def test_widget_figure_draws_the_states_histograms_as_densities():
    E, labels = toy()
    frame = shared_direction_frame(prepare_shared_direction(E, labels, k=3), 1.0)
    state = frame.state
    fig = shared_direction_figure(frame)
    steps = [artist for artist in fig.axes[0].patches if type(artist).__name__ == "StepPatch"]
    # Per kind of pair: filled raw, raw outline and centred outline.
    assert len(steps) == 6
    width = state.bin_edges[1] - state.bin_edges[0]
    for patch, counts in zip(steps[::3], (state.related, state.unrelated), strict=True):
        np.testing.assert_allclose(patch.get_data().values, counts / (counts.sum() * width))
        assert float(np.sum(patch.get_data().values) * width) == pytest.approx(1.0)
    plt.close(fig)


def test_widget_histograms_share_one_y_axis_across_the_sweep():
    E, labels = toy()
    setup = prepare_shared_direction(E, labels, k=3)
    tops = set()
    base = shared_direction_frame(setup, 0.0)
    for strength in SWEEP_STRENGTHS:
        fig = shared_direction_figure(shared_direction_frame(setup, strength, sweep=base))
        tops.add(fig.axes[0].get_ylim()[1])
        heights = [p.get_data().values.max() for p in fig.axes[0].patches if hasattr(p, "get_data")]
        assert max(heights) <= fig.axes[0].get_ylim()[1]
        plt.close(fig)
    assert len(tops) == 1
