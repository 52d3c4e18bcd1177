"""Tests for the chapter 7 widget (cosine_book.widgets.diagnostics), its computation
(prepare_shared_direction, shared_direction_update in cosine_book.diagnostics) and the
chapter 7 figures (cosine_book.plotting.diagnostics). The chapter's "try this" sentence is
checked on the data the chapter gives the widget and on the settings the HTML version
offers."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pytest

from cosine_book.datasets import load_digits_split
from cosine_book.diagnostics import (
    SWEEP_STRENGTHS,
    centered_cosine_matrix,
    embedding_report,
    false_match_share,
    neighbour_agreement,
    prepare_shared_direction,
    shared_direction_update,
)
from cosine_book.embeddings import hidden_features, train_embedding_model
from cosine_book.factorization import cosine_matrix
from cosine_book.plotting.diagnostics import (
    neighbour_images_figure,
    pair_cosines_figure,
    shared_direction_figure,
)
from cosine_book.widgets import shared_direction_widget
from cosine_book.widgets.core import LiveWidget, static_html
from cosine_book.widgets.diagnostics import shared_direction_readout, shared_direction_spec


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
    # the mean raw cosine climbs, and the share of different-digit pairs that the
    # threshold 0.5 calls similar goes from a few per cent to all of them; the top-10
    # agreement barely moves, and the dashed centred distributions do not move at all."
    start, end = (chapter_spec.state(strength=value) for value in (0.0, 3.0))
    assert chapter_spec.defaults() == {"strength": 0.0}
    assert end.mean_cosine > 0.85 > start.mean_cosine
    assert start.unrelated_above < 0.05
    assert end.unrelated_above == 1.0
    assert abs(end.agreement - start.agreement) < 0.02
    assert end.centred_agreement == start.centred_agreement
    np.testing.assert_array_equal(end.centred_related, start.centred_related)
    np.testing.assert_array_equal(end.centred_unrelated, start.centred_unrelated)
    centres = (start.bin_edges[:-1] + start.bin_edges[1:]) / 2

    def mean_of(counts):
        return np.sum(centres * counts) / np.sum(counts)

    for field in ("related", "unrelated"):
        assert mean_of(getattr(end, field)) > 0.85 > mean_of(getattr(start, field))
    gap_start = mean_of(start.related) - mean_of(start.unrelated)
    gap_end = mean_of(end.related) - mean_of(end.unrelated)
    assert 0 < gap_end < gap_start / 4
    # Along the whole sweep the mean cosine climbs and the false matches never fall.
    assert np.all(np.diff(start.sweep_mean_cosine) > 0)
    assert np.all(np.diff(start.sweep_unrelated_above) >= 0)


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
        from_spec, direct = spec.state(strength=value), shared_direction_update(setup, value)
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
    text = shared_direction_readout(shared_direction_update(setup, 0.5))
    assert text.startswith("t = 0.50: mean cosine ")
    assert "unrelated pairs ≥ 0.5: " in text
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
        shared_direction_update(prepare_shared_direction(E, labels, k=3), 1.0)
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


@pytest.mark.parametrize(
    ("call", "fragment"),
    [
        (lambda: pair_cosines_figure({}), "at least one model"),
        (lambda: pair_cosines_figure({"a": ([np.nan], [0.1])}), "related cosines"),
        (lambda: neighbour_images_figure(np.ones((3, 4)), 5, {"a": [1]}), "query"),
        (lambda: neighbour_images_figure(np.ones((3, 4)), 0, {}), "at least one"),
    ],
)
def test_figures_refuse_bad_input(call, fragment):
    with pytest.raises(ValueError, match=fragment):
        call()


def test_chapter_7_claims_about_centring_the_hidden_layer():
    # Chapter 7, "A shared mean direction": the ReLU hidden layer carries a strong shared
    # direction; most pairs of different digits pass the threshold 0.5 raw, a few per cent
    # after centring, while the top-10 neighbour agreement barely changes.
    digits = load_digits_split()
    model = train_embedding_model(
        digits.x_train, digits.y_train, digits.x_test, digits.y_test, objective="dot"
    )
    features = hidden_features(model, digits.x_test)
    raw, centred = cosine_matrix(features), centered_cosine_matrix(features)
    assert embedding_report(features).mean_direction_share > 0.5
    assert false_match_share(raw, digits.y_test) > 0.9
    assert false_match_share(centred, digits.y_test) < 0.05
    raw_agreement = neighbour_agreement(raw, digits.y_test, 10)
    centred_agreement = neighbour_agreement(centred, digits.y_test, 10)
    assert abs(raw_agreement - centred_agreement) < 0.02


def test_false_match_share():
    S = np.array([[1.0, 0.9, 0.6], [0.9, 1.0, 0.2], [0.6, 0.2, 1.0]])
    assert false_match_share(S, ["a", "a", "b"], 0.5) == 0.5
    assert false_match_share(S, ["a", "a", "b"], 0.7) == 0.0
    assert false_match_share(S, ["a", "a", "a"]) == 0.0  # no unrelated pair
    with pytest.raises(ValueError, match="threshold"):
        false_match_share(S, ["a", "a", "b"], np.nan)
    with pytest.raises(ValueError, match="labels"):
        false_match_share(S, ["a", "b"])


def test_widget_figure_draws_the_states_histograms_as_densities():
    E, labels = toy()
    state = shared_direction_update(prepare_shared_direction(E, labels, k=3), 1.0)
    fig = shared_direction_figure(state)
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
    for strength in SWEEP_STRENGTHS:
        fig = shared_direction_figure(shared_direction_update(setup, strength))
        tops.add(fig.axes[0].get_ylim()[1])
        heights = [p.get_data().values.max() for p in fig.axes[0].patches if hasattr(p, "get_data")]
        assert max(heights) <= fig.axes[0].get_ylim()[1]
        plt.close(fig)
    assert len(tops) == 1
