"""Tests for the chapter 6 widget: its state (rescaling_update), figures, spec and claims."""

from __future__ import annotations

import base64
import io
import json
import re

import matplotlib.pyplot as plt
import numpy as np
import pytest
import scipy.sparse
from bad_inputs import with_entry
from hypothesis import given, settings
from hypothesis import strategies as st

from cosine_book.cluster_recovery import cluster_order, cluster_recovery
from cosine_book.factorization import (
    Spectrum,
    cosine_matrix,
    dropout_shrinkage,
    fit_objective1,
    gram_spectrum,
    rescale,
)
from cosine_book.plotting.factorization import downsample, plot_cosine_heatmaps, rescaling_figure
from cosine_book.simulation import make_clustered_interactions
from cosine_book.widgets import rescaling_widget
from cosine_book.widgets.core import LiveWidget, kernel_widget, static_html, typeset_minus
from cosine_book.widgets.factorization import (
    prepare_rescaling_state,
    rescaling_readout,
    rescaling_spec,
    rescaling_update,
)


@pytest.fixture(scope="module")
def small():
    data = make_clustered_interactions(n_users=800, n_items=60, n_clusters=3, min_items=8, seed=2)
    state = prepare_rescaling_state(
        data.X, data.item_clusters, data.item_popularity, k=60, n_check_users=50
    )
    return data, state


def frames_of(fragment):
    data = re.search(r'<script type="application/json" class="lgc-frames">(.*?)</script>', fragment)
    return json.loads(data.group(1).replace("<\\/", "</"))


# ---------------------------------------------------------------------------
# The state function: rescaling_update
# ---------------------------------------------------------------------------


def test_update_keeps_predictions(small):
    _, state = small
    results = [rescaling_update(state, 50.0, alpha) for alpha in (-1.0, -0.5, 0.0, 0.5, 1.0)]
    assert max(result.max_prediction_change for result in results) < 1e-12
    # Full rank and alpha = 1/2: B_D = V, whose rows are orthonormal: the identity.
    np.testing.assert_allclose(results[3].cosines, np.eye(60), atol=1e-8)
    assert np.abs(results[0].cosines - results[4].cosines).max() > 0.3
    assert (results[2].lam, results[2].alpha, results[2].reference_lam) == (50.0, 0.0, 50.0)


def test_update_matches_package_functions(small):
    data, state = small
    update = rescaling_update(state, 50.0, 0.25)
    A, B = fit_objective1(data.X, 50.0, 60)
    f = dropout_shrinkage(gram_spectrum(data.X).singular_values, 50.0)
    _, B_D = rescale(A, B, f**0.25)
    order = cluster_order(data.item_clusters, data.item_popularity)
    expected = cosine_matrix(B_D)[np.ix_(order, order)]
    np.testing.assert_allclose(update.cosines, expected, atol=1e-10)
    exact = cluster_recovery(expected, data.item_clusters[order])
    assert update.recovery.auc == pytest.approx(exact.auc, abs=2e-3)
    assert update.recovery.neighbour_share == pytest.approx(exact.neighbour_share)
    n = expected.shape[0]
    assert update.mean_cosine == pytest.approx((expected.sum() - n) / (n * n - n), abs=1e-12)


def test_update_against_another_lam_sees_a_different_model(small):
    _, state = small
    same = rescaling_update(state, 50.0, 0.75, reference_lam=50.0)
    other = rescaling_update(state, 500.0, 0.75, reference_lam=50.0)
    assert same.max_prediction_change < 1e-12 < 1e-2 < other.max_prediction_change


@settings(max_examples=40, deadline=None)
@given(alpha=st.floats(-40.0, 40.0), log_lam=st.floats(0.0, 4.0))
def test_any_alpha_keeps_predictions_and_gives_the_cosines_of_b_d(small, alpha, log_lam):
    # Theorem thm-ch6-rescaling: D = diag(f)^alpha leaves X A B^T unchanged; the cosines
    # are those of the rows of V diag(f)^(1/2 - alpha), at any alpha that fits in float64.
    _, state = small
    lam = 10.0**log_lam
    update = rescaling_update(state, lam, alpha)
    assert update.max_prediction_change < 1e-9
    f = dropout_shrinkage(state.singular_values, lam)
    log_scales = (0.5 - alpha) * np.log2(f)
    expected = cosine_matrix(state.vectors * np.exp2(log_scales - log_scales.max()))
    np.testing.assert_allclose(update.cosines, expected, atol=1e-9)
    assert np.all(np.abs(update.cosines) <= 1.0)


def test_state_keeps_the_display_order_and_check_users(small):
    data, state = small
    order = cluster_order(data.item_clusters, data.item_popularity)
    np.testing.assert_array_equal(state.clusters, data.item_clusters[order])
    assert np.all(np.diff(state.cluster_index) >= 0)
    assert state.check_rows.shape == (50, 60)
    again = prepare_rescaling_state(
        data.X, data.item_clusters, data.item_popularity, k=60, n_check_users=50
    )
    np.testing.assert_array_equal(again.check_rows, state.check_rows)
    given_spectrum = prepare_rescaling_state(
        data.X.toarray(),
        data.item_clusters,
        data.item_popularity,
        k=60,
        n_check_users=50,
        spectrum=gram_spectrum(data.X),
    )
    np.testing.assert_array_equal(given_spectrum.vectors, state.vectors)


def test_chapter_6_imports_the_state_functions_from_factorization():
    from cosine_book import factorization
    from cosine_book.factorization import RescalingState
    from cosine_book.factorization import prepare_rescaling_state as imported

    assert (
        imported is prepare_rescaling_state and factorization.rescaling_update is rescaling_update
    )
    assert isinstance(_state(), RescalingState)
    with pytest.raises(AttributeError, match="no attribute 'missing'"):
        factorization.missing  # noqa: B018


# ---------------------------------------------------------------------------
# Figures
# ---------------------------------------------------------------------------


def test_downsample_averages_tiles_of_nearly_equal_size():
    matrix = np.arange(35.0).reshape(5, 7)
    shown = downsample(matrix, cells=2)
    # rows {0,1} {2,3,4}; columns {0,1,2} {3,4,5,6}
    assert shown.tolist() == [
        [matrix[:2, :3].mean(), matrix[:2, 3:].mean()],
        [matrix[2:, :3].mean(), matrix[2:, 3:].mean()],
    ]
    np.testing.assert_array_equal(downsample(matrix, cells=10), matrix)
    assert downsample(np.ones((1000, 1000))).shape == (200, 200)


@pytest.mark.parametrize("scale", [1e300, 1e-300, 2.0**-1020])
def test_downsample_at_any_scale(scale):
    matrix = np.random.default_rng(1).random((9, 9)) + 0.5
    np.testing.assert_allclose(downsample(scale * matrix, 4) / scale, downsample(matrix, 4))


def test_rescaling_figure_shows_the_downsampled_cosines(small):
    _, state = small
    update = rescaling_update(state, 50.0, -0.25)
    fig = rescaling_figure(update)
    np.testing.assert_array_equal(fig.axes[0].images[0].get_array(), downsample(update.cosines))
    assert fig.axes[0].get_title() == "objective 1, λ = 50, α = -0.25"
    plt.close(fig)


def test_plot_cosine_heatmaps_orders_items_and_checks_input():
    truth = np.kron(np.eye(2), np.ones((2, 2)))
    clusters, popularity = [1, 0, 1, 0], [1.0, 2.0, 3.0, 4.0]
    fig = plot_cosine_heatmaps({"a": truth, "b": -truth}, ["a", "b"], clusters, popularity)
    shown = fig.axes[0].images[0].get_array()
    order = [3, 1, 2, 0]  # cluster 0 by descending popularity, then cluster 1
    np.testing.assert_array_equal(shown, truth[np.ix_(order, order)])
    assert [ax.get_title() for ax in fig.axes[:2]] == ["a", "b"]
    plt.close(fig)


def test_heatmap_panels_draw_every_4th_of_1000_items_and_score_all_of_them():
    # Chapter 6's captions: "Each panel draws every 4th item, in the order shown; the
    # scores under the panels use all items." Each drawn cell is one real pair.
    from cosine_book.cluster_recovery import pair_auc

    rng = np.random.default_rng(0)
    clusters = np.repeat(np.arange(4), 250)
    signs = rng.choice([-1.0, 1.0], size=(1000, 1000))
    noisy = np.triu(signs) + np.triu(signs, 1).T  # symmetric, entries +-1
    fig = plot_cosine_heatmaps(
        {"noise": noisy}, ["noise"], clusters, np.arange(1000.0), annotate=True
    )
    image = fig.axes[0].images[0]
    shown = image.get_array()
    assert shown.shape == (250, 250)
    assert set(np.unique(shown)) == {-1.0, 1.0}  # real pairs, no tile means near 0
    assert image.get_extent() == [-0.5, 999.5, 999.5, -0.5]  # in item coordinates
    auc = pair_auc(noisy, clusters)
    assert fig.axes[0].texts[0].get_text().startswith(f"AUC {auc:.3f}")
    plt.close(fig)


# ---------------------------------------------------------------------------
# Bad input, one table for the module's public functions
# ---------------------------------------------------------------------------

_X = (np.random.default_rng(0).random((30, 6)) < 0.5).astype(float)
_X[0] = 1.0
_CLUSTERS = [0, 0, 0, 1, 1, 1]
_POPULARITY = np.arange(6.0)


def _state(**kwargs):
    arguments = {"k": 3, "n_check_users": 5, **kwargs}
    return prepare_rescaling_state(
        arguments.pop("X", _X),
        arguments.pop("clusters", _CLUSTERS),
        arguments.pop("popularity", _POPULARITY),
        **arguments,
    )


_SIGMA_ZERO = np.array([3.0, 2.0, 0.0, 0.0, 0.0, 0.0])  # k = 3 reaches a zero

BAD_INPUT = [
    # prepare_rescaling_state
    pytest.param(lambda: _state(X=np.ma.masked_array(_X)), "masked", id="X-masked"),
    pytest.param(lambda: _state(X=_X + 1j), "complex", id="X-complex"),
    pytest.param(lambda: _state(X=with_entry(_X, (1, 1), np.nan)), "NaN", id="X-NaN"),
    pytest.param(lambda: _state(X=[["1"] * 6] * 30), "strings", id="X-strings"),
    pytest.param(lambda: _state(X=np.ones(6)), "2-D", id="X-1D"),
    pytest.param(lambda: _state(clusters=[0, 1]), "2 labels but there are 6", id="clusters-len"),
    pytest.param(lambda: _state(clusters=[0, None, 1, 1, 0, 0]), "missing", id="clusters-None"),
    pytest.param(lambda: _state(popularity=np.ones(5)), "5 entries", id="popularity-len"),
    pytest.param(
        lambda: _state(popularity=with_entry(_POPULARITY, 2, np.inf)),
        "infinite",
        id="popularity-inf",
    ),
    pytest.param(lambda: _state(clusters=[0] * 6), "different clusters", id="one-cluster"),
    pytest.param(lambda: _state(clusters=list(range(6))), "in one cluster", id="no-pairs"),
    pytest.param(lambda: _state(k=0), "k must be between 1 and 6", id="k-0"),
    pytest.param(lambda: _state(k=7), "k must be between 1 and 6", id="k-7"),
    pytest.param(lambda: _state(k=2.0), "k must be an integer", id="k-float"),
    pytest.param(lambda: _state(n_check_users=0), "n_check_users must be at least 1"),
    pytest.param(lambda: _state(seed=-1), "seed must be at least 0"),
    pytest.param(
        lambda: _state(spectrum=Spectrum(np.ones(4), np.eye(4))), "for 4 items", id="spectrum-p"
    ),
    pytest.param(
        lambda: _state(spectrum=Spectrum(np.ones(2), np.eye(6)[:, :2])),
        "at least k = 3",
        id="spectrum-short",
    ),
    # rescaling_update
    pytest.param(lambda: rescaling_update("state", 1.0, 0.0), "RescalingState", id="state-str"),
    pytest.param(lambda: rescaling_update(_state(), 0.0, 0.0), "lam must be positive"),
    pytest.param(lambda: rescaling_update(_state(), np.nan, 0.0), "lam must be a finite"),
    pytest.param(lambda: rescaling_update(_state(), "1", 0.0), "lam must be a real number"),
    pytest.param(lambda: rescaling_update(_state(), 1.0, np.inf), "alpha must be a finite"),
    pytest.param(lambda: rescaling_update(_state(), 1.0, None), "alpha must be a real number"),
    pytest.param(
        lambda: rescaling_update(_state(), 1.0, 0.0, reference_lam=-1.0),
        "reference_lam must be positive",
    ),
    pytest.param(
        lambda: rescaling_update(_state(), 1.0, 1e6), "beyond the float64 range", id="alpha-1e6"
    ),
    pytest.param(
        lambda: rescaling_update(_state(spectrum=Spectrum(_SIGMA_ZERO, np.eye(6))), 1.0, 0.0),
        "1 of the top k singular values are zero",
        id="sigma-zero",
    ),
    # rescaling_spec, rescaling_widget
    pytest.param(lambda: rescaling_spec(None), "RescalingState", id="spec-state"),
    pytest.param(lambda: rescaling_spec(_state(), lam=5.0), r"lam must lie in \[10, 1e\+06\]"),
    pytest.param(lambda: rescaling_spec(_state(), lam=np.nan), "lam must be a finite"),
    pytest.param(lambda: rescaling_widget(_state(), alpha=2.0), r"alpha must lie in \[-1, 1\]"),
    # figures
    pytest.param(lambda: rescaling_figure(np.eye(3)), "RescalingUpdate", id="figure-array"),
    pytest.param(lambda: downsample(np.ones(4)), "2-D", id="downsample-1D"),
    pytest.param(lambda: downsample(with_entry(np.ones((2, 2)), 0, np.nan)), "NaN"),
    pytest.param(lambda: downsample(np.ones((2, 2)), cells=0), "cells must be at least 1"),
    pytest.param(lambda: downsample(np.ones((2, 2)), cells=1.5), "cells must be an integer"),
    pytest.param(
        lambda: plot_cosine_heatmaps({"a": np.eye(2)}, ["c"], [0, 1], [1, 2]), "no similarity"
    ),
    pytest.param(
        lambda: plot_cosine_heatmaps({"a": np.eye(2)}, ["a"], [0, 1], [1, 2], titles=["x", "y"]),
        "titles",
    ),
    pytest.param(
        lambda: plot_cosine_heatmaps({"a": np.eye(2)}, ["a"], [0, 1], [1, 2], n_cols=0),
        "n_cols must be at least 1",
    ),
    pytest.param(
        lambda: plot_cosine_heatmaps({"a": np.eye(3)}, ["a"], [0, 1], [1, 2]),
        r"expected \(2, 2\)",
        id="heatmaps-shape",
    ),
    pytest.param(
        lambda: plot_cosine_heatmaps(
            {"a": with_entry(np.eye(2), 0, np.inf)}, ["a"], [0, 1], [1, 2]
        ),
        "infinite",
        id="heatmaps-inf",
    ),
    pytest.param(
        lambda: plot_cosine_heatmaps({"a": np.eye(2)}, ["a"], [0, 1], [1, np.nan]),
        "popularity contains NaN",
        id="heatmaps-popularity",
    ),
]


@pytest.mark.parametrize(("call", "match"), BAD_INPUT)
def test_bad_input_table(call, match):
    with pytest.raises(ValueError, match=match):
        call()
    plt.close("all")


def _numbers(update):
    return [update.recovery.auc, update.mean_cosine, update.max_prediction_change]


GOOD_EDGE_INPUT = [
    # (call, check of the result): inputs at the edges that must give right answers
    pytest.param(
        lambda: rescaling_update(_state(X=1e150 * _X), 2e300, 0.5).cosines,
        rescaling_update(_state(), 2.0, 0.5).cosines,
        id="X-1e150",
    ),
    pytest.param(
        lambda: _numbers(
            rescaling_update(_state(X=1e-150 * _X), 2e-300, -1.0, reference_lam=3e-300)
        ),
        _numbers(rescaling_update(_state(), 2.0, -1.0, reference_lam=3.0)),
        id="X-1e-150",
    ),
    pytest.param(
        lambda: rescaling_update(_state(X=scipy.sparse.csr_array(_X)), 2.0, -1.0).cosines,
        rescaling_update(_state(), 2.0, -1.0).cosines,
        id="X-sparse",
    ),
    pytest.param(
        lambda: rescaling_update(_state(clusters=list("aabbba")), 2.0, 0.3).recovery.auc,
        rescaling_update(_state(clusters=[0, 0, 1, 1, 1, 0]), 2.0, 0.3).recovery.auc,
        id="string-labels",
    ),
    pytest.param(lambda: downsample([[2.0]], cells=5), [[2.0]], id="downsample-1x1"),
]


@pytest.mark.parametrize(("call", "expected"), GOOD_EDGE_INPUT)
def test_edge_input_table(call, expected):
    np.testing.assert_allclose(call(), expected, rtol=1e-12, atol=1e-12)


# ---------------------------------------------------------------------------
# The spec and its two front ends
# ---------------------------------------------------------------------------


def test_spec_offers_a_grid_of_20_settings(small):
    _, state = small
    spec = rescaling_spec(state)
    lam_control, alpha_control = spec.controls
    assert lam_control.values() == (2.0, 3.0, 4.0, 5.0)
    assert alpha_control.values() == tuple(np.linspace(-1.0, 1.0, 5))
    assert spec.defaults() == {"log_lam": 4.0, "alpha": 0.0}
    assert len(spec.settings()) == 20 <= 40
    update = spec.state(log_lam=3.0, alpha=-0.5)
    assert (update.lam, update.alpha, update.reference_lam) == (1000.0, -0.5, 1e4)
    # A starting lam off the grid is offered too, and is its own reference exactly.
    odd = rescaling_spec(state, lam=3e4, alpha=0.3)
    assert len(odd.settings()) == 5 * 6
    assert odd.state(**odd.defaults()).lam == 3e4


@pytest.fixture(scope="module")
def small_html(small):
    _, state = small
    spec = rescaling_spec(state, lam=100.0)
    return spec, static_html(spec)


def test_static_frames_are_what_the_state_function_gives(small_html):
    spec, fragment = small_html
    data = frames_of(fragment)
    assert len(data["frames"]) == len(data["images"]) == 20
    lam_values, alpha_values = (control.values() for control in spec.controls)
    for key in ("0,0", "0,4", "3,2", "2,3"):
        i, j = map(int, key.split(","))
        update = spec.state(log_lam=lam_values[i], alpha=alpha_values[j])
        assert data["frames"][key]["readout"] == typeset_minus(rescaling_readout(update))
    png = base64.b64decode(data["images"][0].split(",", 1)[1])
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert "<script src" not in fragment and "http" not in fragment


def test_widget_function_returns_a_live_widget_that_redraws(small):
    _, state = small
    live = rescaling_widget(state, lam=100.0)
    assert isinstance(live, LiveWidget) and live.spec.name == "rescaling"
    box = kernel_widget(live.spec)
    output = box.children[-1]
    alpha_slider = box.children[1].children[1]
    alpha_slider.value = 0.5
    expected = rescaling_readout(live.spec.state(log_lam=2.0, alpha=0.5))
    assert output.outputs[-1]["text"] == expected + "\n"
    plt.close("all")


# ---------------------------------------------------------------------------
# Chapter 6, "Explore: turn the dial on D": every claim, on the chapter's data and
# the settings the HTML version offers
# ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def chapter():
    """The widget of the chapter (setting A) and a summary of every setting it offers."""
    data = make_clustered_interactions(seed=0)
    state = prepare_rescaling_state(data.X, data.item_clusters, data.item_popularity, k=50)
    spec = rescaling_spec(state, lam=1e4, alpha=0.0)
    index = state.cluster_index
    same = index[:, None] == index[None, :]
    np.fill_diagonal(same, False)
    different = index[:, None] != index[None, :]
    quarters = []
    for cluster in np.unique(index):
        members = np.flatnonzero(index == cluster)  # most popular first
        quarter = members.size // 4
        quarters.append((members[:quarter], members[-quarter:]))
    summaries = {}
    for setting in spec.settings():
        update = spec.state(**setting)
        cosines = update.cosines

        def mean_within(items, cosines=cosines):
            block = cosines[np.ix_(items, items)]
            return (block.sum() - items.size) / (items.size**2 - items.size)

        summaries[setting["log_lam"], setting["alpha"]] = {
            "mean cosine": update.mean_cosine,
            "auc": update.recovery.auc,
            "prediction change": update.max_prediction_change,
            "readout": rescaling_readout(update),
            "deep red same-cluster share": float(np.mean(cosines[same] > 0.75)),
            "between-cluster mean": float(np.mean(cosines[different])),
            "popular quarters": [mean_within(popular) for popular, _ in quarters],
            "unpopular quarters": [mean_within(unpopular) for _, unpopular in quarters],
        }
    return spec, state, summaries


def sweep(chapter, log_lam=4.0):
    """Summaries as alpha moves from -1 to 1 at a fixed lam."""
    spec, _, summaries = chapter
    return [summaries[log_lam, alpha] for alpha in spec.controls[1].values()]


def test_ch6_the_heatmap_goes_from_saturated_red_to_pale(chapter):
    states = sweep(chapter)
    deep = [s["deep red same-cluster share"] for s in states]
    background = [s["between-cluster mean"] for s in states]
    assert all(a > b for a, b in zip(deep, deep[1:], strict=False))
    assert all(a > b for a, b in zip(background, background[1:], strict=False))
    assert deep[0] > 0.95 and background[0] > 0.25  # blocks deep red, background pink
    assert deep[-1] < 0.05 and abs(background[-1]) < 0.02  # pale blocks, white background


@pytest.mark.parametrize("log_lam", [2.0, 3.0, 4.0, 5.0])
def test_ch6_the_mean_cosine_falls_as_alpha_rises_at_every_lam(chapter, log_lam):
    means = [s["mean cosine"] for s in sweep(chapter, log_lam)]
    assert all(a > b for a, b in zip(means, means[1:], strict=False))


def test_ch6_clusters_fade_from_their_most_popular_items(chapter):
    states = sweep(chapter)
    for state in states:
        assert all(
            popular < unpopular
            for popular, unpopular in zip(
                state["popular quarters"], state["unpopular quarters"], strict=True
            )
        )
    # At alpha = 1 the most popular quarter of every cluster is pale, the least
    # popular quarter still clearly red.
    assert max(states[-1]["popular quarters"]) < 0.35
    assert min(states[-1]["unpopular quarters"]) > 0.25
    assert np.mean(states[-1]["unpopular quarters"]) > 2 * np.mean(states[-1]["popular quarters"])


def test_ch6_the_auc_drifts_down(chapter):
    aucs = [s["auc"] for s in sweep(chapter)]
    assert all(a >= b for a, b in zip(aucs, aucs[1:], strict=False))
    assert aucs[0] - aucs[-1] > 0.05


def test_ch6_predictions_stay_at_rounding_level_at_the_starting_lam_only(chapter):
    spec, _, summaries = chapter
    for (log_lam, _alpha), summary in summaries.items():
        change = summary["prediction change"]
        last_line = summary["readout"].splitlines()[-1]
        if log_lam == 4.0:
            assert change < 1e-12 and last_line.endswith("< 1e-12")
        else:
            assert change > 1e-2 and not last_line.endswith("< 1e-12")
        assert "vs λ = 10,000, α = 0" in last_line


def test_ch6_frames_fit_the_page_budget(chapter):
    # 5 MB of widget payload per page: 20 frames of base64 PNG must stay well under it.
    # The noisiest frames (alpha = 1) are the largest.
    spec, _, _ = chapter
    for log_lam, alpha in [(5.0, 1.0), (4.0, 1.0)]:
        fig = rescaling_figure(spec.state(log_lam=log_lam, alpha=alpha))
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png", dpi=80, metadata={"Software": None})
        plt.close(fig)
        assert 4 / 3 * len(buffer.getvalue()) * len(spec.settings()) < 3_500_000


@pytest.mark.parametrize("log_lam", [2.0, 3.0, 4.0, 5.0])
def test_ch6_at_every_lam_auc_never_rises_and_popular_items_stay_less_alike(chapter, log_lam):
    # "At every lambda offered the mean cosine still falls and the AUC never rises as
    # alpha grows, and the most popular items of each cluster stay less alike than its
    # least popular ones"
    states = sweep(chapter, log_lam)
    aucs = [s["auc"] for s in states]
    assert all(a >= b for a, b in zip(aucs, aucs[1:], strict=False))
    for state in states:
        assert all(
            popular < unpopular
            for popular, unpopular in zip(
                state["popular quarters"], state["unpopular quarters"], strict=True
            )
        )


def test_ch6_the_swing_grows_with_lam_and_lam_100_barely_moves(chapter):
    # "At lambda = 100,000 the swing is larger still; at lambda = 100 ... the heatmap
    # barely changes and is never saturated. At alpha = +1/2 the picture is the same for
    # every lambda"
    def swing(log_lam):
        means = [s["mean cosine"] for s in sweep(chapter, log_lam)]
        return means[0] - means[-1]

    assert swing(5.0) > swing(4.0) > swing(3.0) > swing(2.0)
    low = sweep(chapter, 2.0)
    assert swing(2.0) < 0.02 and low[0]["auc"] - low[-1]["auc"] < 0.01
    assert max(s["deep red same-cluster share"] for s in low) < 0.5
    spec, _, summaries = chapter
    halves = [summaries[log_lam, 0.5]["mean cosine"] for log_lam in (2.0, 3.0, 4.0, 5.0)]
    assert max(halves) - min(halves) < 1e-9
