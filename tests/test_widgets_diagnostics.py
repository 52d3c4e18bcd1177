"""Tests for the chapter 7 widget (cosine_book.widgets.diagnostics) and the chapter 7
figures (cosine_book.plotting.diagnostics). The chapter's "try this" sentence is checked on
the data the chapter gives the widget, at every setting the HTML version offers."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pytest

from cosine_book.cluster_recovery import pair_auc
from cosine_book.datasets import load_digits_split
from cosine_book.diagnostics import (
    centered_cosine_matrix,
    neighbour_agreement,
    related_pair_cosines,
    with_shared_direction,
)
from cosine_book.embeddings import train_embedding_model
from cosine_book.plotting.diagnostics import (
    dimension_contributions_figure,
    k_occurrence_figure,
    neighbour_images_figure,
    pair_cosines_figure,
    shared_direction_figure,
)
from cosine_book.similarity import cosine_matrix
from cosine_book.widgets import shared_direction_widget
from cosine_book.widgets.core import static_html

STRENGTHS = [i / 4 for i in range(13)]


@pytest.fixture(scope="module")
def chapter_spec():
    """The widget as chapter 7 builds it: hidden features of the dot-objective model."""
    digits = load_digits_split()
    split = (digits.x_train, digits.y_train, digits.x_test, digits.y_test)
    hidden = train_embedding_model(*split, objective="dot").hidden(digits.x_test)
    return shared_direction_widget(hidden, digits.y_test, name="of the hidden layer").spec


@pytest.fixture(scope="module")
def toy():
    labels = np.repeat([0, 1, 2], 8)
    E = np.random.default_rng(0).normal(size=(24, 5)) + 2.0 * np.eye(5)[labels]
    return E, labels, shared_direction_widget(E, labels).spec


def test_try_this_claim_of_chapter_7(chapter_spec):
    # "Move t from 0 to 3: both filled distributions slide to the right and merge near 1,
    # and the mean raw cosine climbs from about 0 to 0.90. The threshold 0.5 first passes
    # 68.4 % of the same-digit and 3.3 % of the different-digit pairs, and from t = 2.25 on,
    # all of both. Meanwhile the pair AUC stays between 0.93 and 0.94 and the top-10
    # agreement between 0.90 and 0.92, and the dashed centred distributions do not move."
    assert [s["strength"] for s in chapter_spec.settings()] == STRENGTHS
    frames = [chapter_spec.state(**setting) for setting in chapter_spec.settings()]
    start, end = frames[0].raw, frames[-1].raw
    assert abs(start["mean_cosine"]) < 0.005 and round(end["mean_cosine"], 2) == 0.90
    assert np.all(np.diff([f.raw["mean_cosine"] for f in frames]) > 0)
    assert (f"{start['related_above']:.1%}", f"{start['unrelated_above']:.1%}") == ("68.4%", "3.3%")
    full = [f.strength for f in frames if f.raw["related_above"] == f.raw["unrelated_above"] == 1]
    assert full == [2.25, 2.5, 2.75, 3.0]
    for frame in frames:
        assert 0.93 <= frame.raw["auc"] <= 0.94 and 0.90 <= frame.raw["agreement"] <= 0.92
        assert frame.centred is frames[0].centred
    centres = (frames[0].bin_edges[:-1] + frames[0].bin_edges[1:]) / 2

    def mean_of(counts):
        return np.sum(centres * counts) / np.sum(counts)

    for kind in ("related", "unrelated"):
        assert mean_of(end[kind]) > 0.85 > mean_of(start[kind])
    gap_start = mean_of(start["related"]) - mean_of(start["unrelated"])
    assert 0 < mean_of(end["related"]) - mean_of(end["unrelated"]) < gap_start / 4
    html = static_html(chapter_spec)  # one frame per strength, and the first one again
    assert html.count("data:image/png;base64") == len(STRENGTHS) + 1 and len(html) < 5e6


def test_states_are_their_definitions_on_and_off_the_sweep(toy):
    E, labels, spec = toy
    for t in (0.0, 1.25, 0.6):  # on the sweep and off it
        state = spec.state(strength=t)
        S = cosine_matrix(with_shared_direction(E, t))
        related, unrelated = related_pair_cosines(S, labels)
        assert state.raw["auc"] == pair_auc(S, labels)
        assert state.raw["agreement"] == neighbour_agreement(S, labels, 10)
        assert state.raw["related_above"] == np.mean(related >= 0.5)
        assert state.raw["unrelated_above"] == np.mean(unrelated >= 0.5)
        np.testing.assert_array_equal(
            state.raw["related"], np.histogram(related, state.bin_edges)[0]
        )
        assert state.raw["unrelated"].sum() == unrelated.size
    centred = centered_cosine_matrix(E)
    assert state.centred["auc"] == pair_auc(centred, labels)
    for position, t in enumerate(STRENGTHS):
        assert spec.state(strength=t).raw["mean_cosine"] == state.sweep["mean_cosine"][position]
    text = spec.readout(spec.state(strength=0.5))
    assert text.startswith("t = 0.50: mean cosine ") and "top-10 label agreement" in text


@pytest.mark.parametrize(
    ("embeddings", "labels", "fragment"),
    [
        (np.ones((4, 2)) * np.nan, [0, 0, 1, 1], "embeddings contains NaN"),
        (np.ones(4), [0, 0, 1, 1], "embeddings has shape"),
        (np.ones((4, 2)), [0, 0, 1], "labels has 3 labels"),
        (np.array([[1.0, 2.0], [-1.0, -2.0]]), [0, 1], "the mean row of E is zero"),
    ],
)
def test_the_widget_refuses_bad_input(embeddings, labels, fragment):
    with pytest.raises(ValueError, match=fragment):
        shared_direction_widget(embeddings, labels)


def test_the_widget_figure_draws_densities_on_one_y_axis(toy):
    _, _, spec = toy
    tops = set()
    for t in STRENGTHS:
        state = spec.state(strength=t)
        fig = shared_direction_figure(state)
        steps = [p for p in fig.axes[0].patches if type(p).__name__ == "StepPatch"]
        assert len(steps) == 6 and fig.get_layout_engine() is None  # drawn once per frame
        width = state.bin_edges[1] - state.bin_edges[0]
        for patch, counts in zip(steps[::3], (state.raw["related"], state.raw["unrelated"]),
                                 strict=True):  # fmt: skip
            np.testing.assert_allclose(patch.get_data().values, counts / (counts.sum() * width))
        assert max(p.get_data().values.max() for p in steps) <= fig.axes[0].get_ylim()[1]
        tops.add(fig.axes[0].get_ylim()[1])
        plt.close(fig)
    assert len(tops) == 1


def test_the_chapter_figures_draw():
    rng = np.random.default_rng(1)
    fig = pair_cosines_figure({"a": (rng.uniform(size=10), rng.uniform(size=30)),
                               "b": ([0.5], [0.1, 0.2])}, threshold=0.4)  # fmt: skip
    assert [ax.get_title() for ax in fig.axes] == ["a", "b"]
    fig = neighbour_images_figure(rng.uniform(size=(5, 64)), 0, {"x": [1, 2]}, labels="abcde")
    assert len(fig.axes) == 3 and fig.axes[1].get_title() == "b"
    fig = k_occurrence_figure({"raw": [0, 1, 5, 30], "centred": [2, 2, 3, 4]})
    assert [patch.get_label() for patch in fig.axes[0].patches] == ["raw", "centred"]
    fig = dimension_contributions_figure({"a": [0.5, -0.1], "b": [0.1, 0.1, 0.0]})
    assert [ax.get_title() for ax in fig.axes] == ["a: mean cosine 0.40", "b: mean cosine 0.20"]
    plt.close("all")
