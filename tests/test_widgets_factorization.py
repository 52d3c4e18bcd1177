"""The chapter 6 widget (state, figure, spec, claims) and the chapter's heatmaps."""

from __future__ import annotations

import base64
import io
import json
import re

import matplotlib.pyplot as plt
import numpy as np
import pytest
from bad_inputs import with_entry
from hypothesis import given, settings
from hypothesis import strategies as st

from cosine_book.cluster_recovery import cluster_recovery, pair_auc
from cosine_book.factorization import fit_closed_form, gram_spectrum
from cosine_book.plotting.factorization import plot_cosine_heatmaps
from cosine_book.similarity import cosine_matrix
from cosine_book.simulation import make_clustered_interactions
from cosine_book.widgets import rescaling_widget
from cosine_book.widgets.core import LiveWidget, kernel_widget, static_html, typeset_minus


def display_order(data):
    return np.lexsort((-data.item_popularity, data.item_clusters))


def shrinkage(sigma, lam):
    return sigma**2 / (sigma**2 + lam)


@pytest.fixture(scope="module")
def small():
    data = make_clustered_interactions(n_users=800, n_items=60, n_clusters=3, min_items=8, seed=2)
    spec = rescaling_widget(data.X, data.item_clusters, data.item_popularity, k=60).spec
    return data, spec


def frames_of(fragment):
    data = re.search(r'<script type="application/json" class="lgc-frames">(.*?)</script>', fragment)
    return json.loads(data.group(1).replace("<\\/", "</"))


# ---------------------------------------------------------------------------
# The state: theorem thm-ch6-rescaling with D = diag(f)^alpha, in display order
# ---------------------------------------------------------------------------


def test_update_keeps_predictions(small):
    _, spec = small
    results = [
        spec.state(log_lam=spec.defaults()["log_lam"], alpha=a) for a in spec.controls[1].values()
    ]
    assert max(result.max_prediction_change for result in results) < 1e-12
    # Full rank and alpha = 1/2: B_D = V, whose rows are orthonormal: the identity.
    np.testing.assert_allclose(results[3].cosines, np.eye(60), atol=1e-8)
    assert np.abs(results[0].cosines - results[4].cosines).max() > 0.3
    assert (results[2].lam, results[2].alpha, results[2].reference_lam) == (1e4, 0.0, 1e4)


def test_update_is_the_package_computation_in_display_order(small):
    data, spec = small
    result = spec.state(log_lam=spec.defaults()["log_lam"], alpha=0.25)
    A, B = fit_closed_form(data.X, 1e4, 60)
    f = shrinkage(gram_spectrum(data.X).singular_values, 1e4)
    order = display_order(data)
    expected = cosine_matrix(B / f**0.25)[np.ix_(order, order)]
    np.testing.assert_allclose(result.cosines, expected, atol=1e-10)
    exact = cluster_recovery(expected, data.item_clusters[order])
    assert result.recovery.auc == pytest.approx(exact.auc, abs=2e-3)
    assert result.recovery.neighbour_share == pytest.approx(exact.neighbour_share)
    n = expected.shape[0]
    assert result.mean_cosine == pytest.approx((expected.sum() - n) / (n * n - n), abs=1e-12)


def test_another_lam_is_another_model(small):
    _, spec = small
    assert spec.state(log_lam=np.log10(500.0), alpha=0.75).max_prediction_change > 1e-2


@settings(max_examples=40, deadline=None)
@given(alpha=st.floats(-40.0, 40.0), log_lam=st.one_of(st.just(4.0), st.floats(2.0, 6.0)))
def test_any_alpha_keeps_predictions_and_gives_the_cosines_of_b_d(small, alpha, log_lam):
    # D = diag(f)^alpha leaves X A B^T unchanged; the cosines are those of the rows of
    # V diag(f)^(1/2 - alpha), at any alpha that fits in float64.
    data, spec = small
    result = spec.state(log_lam=log_lam, alpha=alpha)
    spectrum = gram_spectrum(data.X)
    if log_lam == 4.0:
        assert result.max_prediction_change < 1e-9
    log_scales = (0.5 - alpha) * np.log2(shrinkage(spectrum.singular_values, result.lam))
    B_D = spectrum.vectors[display_order(data)] * np.exp2(log_scales - log_scales.max())
    np.testing.assert_allclose(result.cosines, cosine_matrix(B_D), atol=1e-9)
    assert np.all(np.abs(result.cosines) <= 1.0)


# ---------------------------------------------------------------------------
# Bad input, one table for the module's public functions
# ---------------------------------------------------------------------------

# ---------------------------------------------------------------------------
# Figures
# ---------------------------------------------------------------------------


def test_the_widget_figure_shows_tile_means_of_the_cosines():
    data = make_clustered_interactions(n_users=2_000, n_items=500, min_items=10, seed=1)
    spec = rescaling_widget(data.X, data.item_clusters, data.item_popularity, k=20).spec
    result = spec.state(log_lam=4.0, alpha=-0.25)
    fig = spec.draw(result)
    shown = fig.axes[0].images[0].get_array()
    assert shown.shape == (200, 200)  # 500 items: tiles of 2 and 3 rows and columns
    starts = np.arange(200) * 500 // 200
    np.testing.assert_allclose(
        shown[7, 9], result.cosines[starts[7] : starts[8], starts[9] : starts[10]].mean()
    )
    assert fig.axes[0].get_title() == "objective 1, λ = 10,000, α = -0.25"
    plt.close(fig)


def test_plot_cosine_heatmaps_orders_items_by_cluster_then_popularity():
    truth = np.kron(np.eye(2), np.ones((2, 2)))
    clusters, popularity = [1, 0, 1, 0], [1.0, 2.0, 3.0, 4.0]
    fig = plot_cosine_heatmaps({"a": truth, "b": -truth}, ["a", "b"], clusters, popularity)
    order = [3, 1, 2, 0]  # cluster 0 by descending popularity, then cluster 1
    np.testing.assert_array_equal(fig.axes[0].images[0].get_array(), truth[np.ix_(order, order)])
    assert [ax.get_title() for ax in fig.axes[:2]] == ["a", "b"]
    plt.close(fig)


def test_heatmap_panels_draw_every_4th_of_1000_items_and_score_all_of_them():
    # Chapter 6's captions: "Each panel draws every 4th item, in the order shown; the
    # scores under the panels use all items." Each drawn cell is one real pair.
    rng = np.random.default_rng(0)
    clusters = np.repeat(np.arange(4), 250)
    signs = rng.choice([-1.0, 1.0], size=(1000, 1000))
    noisy = np.triu(signs) + np.triu(signs, 1).T  # symmetric, entries +-1
    fig = plot_cosine_heatmaps({"noise": noisy}, ["noise"], clusters, np.arange(1000.0))
    image = fig.axes[0].images[0]
    assert image.get_array().shape == (250, 250)
    assert set(np.unique(image.get_array())) == {-1.0, 1.0}  # real pairs, no tile means
    assert image.get_extent() == [-0.5, 999.5, 999.5, -0.5]  # in item coordinates
    assert fig.axes[0].texts[0].get_text().startswith(f"AUC {pair_auc(noisy, clusters):.3f}")
    plt.close(fig)


# ---------------------------------------------------------------------------
# Bad input, one table for the widget function
# ---------------------------------------------------------------------------

_X = (np.random.default_rng(0).random((30, 6)) < 0.5).astype(float)
_CLUSTERS = [0, 0, 0, 1, 1, 1]


_POPULARITY = np.arange(6.0)


def _widget(X=_X, clusters=_CLUSTERS, popularity=_POPULARITY, **kwargs):
    return rescaling_widget(X, clusters, popularity, **{"k": 3} | kwargs)


BAD_INPUT = [
    pytest.param(lambda: _widget(X=np.ma.masked_array(_X)), "masked", id="X-masked"),
    pytest.param(lambda: _widget(X=with_entry(_X, (1, 1), np.nan)), "NaN", id="X-NaN"),
    pytest.param(lambda: _widget(X=np.ones(6)), "2-D", id="X-1D"),
    pytest.param(lambda: _widget(clusters=[0, 1]), "2 labels but there are 6", id="clusters"),
    pytest.param(lambda: _widget(popularity=np.ones(5)), "5 entries", id="popularity-len"),
    pytest.param(lambda: _widget(popularity=[1.0, np.inf] * 3), "infinite", id="popularity"),
    pytest.param(lambda: _widget(k=7), "k must be between 1 and 6", id="k-7"),
    pytest.param(lambda: _widget(X=np.tile(_X[:, :2], 3), k=3), "rank below k", id="rank"),
]


@pytest.mark.parametrize(("call", "match"), BAD_INPUT)
def test_bad_input_table(call, match):
    with pytest.raises(ValueError, match=match):
        call()


# ---------------------------------------------------------------------------
# The spec and its two front ends
# ---------------------------------------------------------------------------


def test_spec_offers_a_grid_of_20_settings():
    data = make_clustered_interactions(n_users=800, n_items=60, n_clusters=3, min_items=8, seed=2)
    spec = rescaling_widget(data.X, data.item_clusters, data.item_popularity, k=10).spec
    lam_control, alpha_control = spec.controls
    assert lam_control.values() == (2.0, 3.0, 4.0, 5.0)
    assert alpha_control.values() == tuple(np.linspace(-1.0, 1.0, 5))
    assert spec.defaults() == {"log_lam": 4.0, "alpha": 0.0}
    assert len(spec.settings()) == 20
    result = spec.state(log_lam=3.0, alpha=-0.5)
    assert (result.lam, result.alpha, result.reference_lam) == (1000.0, -0.5, 1e4)


@pytest.fixture(scope="module")
def small_html(small):
    _, spec = small
    return spec, static_html(spec)


def test_static_frames_are_what_the_state_function_gives(small_html):
    spec, fragment = small_html
    data = frames_of(fragment)
    assert len(data["frames"]) == len(data["images"]) == 20
    lam_values, alpha_values = (control.values() for control in spec.controls)
    for key in ("0,0", "0,4", "3,2", "2,3"):
        i, j = map(int, key.split(","))
        update = spec.state(log_lam=lam_values[i], alpha=alpha_values[j])
        assert data["frames"][key]["readout"] == typeset_minus(spec.readout(update))
    png = base64.b64decode(data["images"][0].split(",", 1)[1])
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert "<script src" not in fragment and "http" not in fragment


def test_widget_function_returns_a_live_widget_that_redraws(small):
    data, _ = small
    live = rescaling_widget(data.X, data.item_clusters, data.item_popularity)
    assert isinstance(live, LiveWidget) and live.spec.name == "rescaling"
    box = kernel_widget(live.spec)
    output = box.children[-1]
    alpha_slider = box.children[1].children[1]
    alpha_slider.value = 0.5
    expected = live.spec.readout(live.spec.state(log_lam=4.0, alpha=0.5))
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
    spec = rescaling_widget(data.X, data.item_clusters, data.item_popularity).spec
    index = data.item_clusters[display_order(data)]
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
            "readout": spec.readout(update),
            "deep red same-cluster share": float(np.mean(cosines[same] > 0.75)),
            "between-cluster mean": float(np.mean(cosines[different])),
            "popular quarters": [mean_within(popular) for popular, _ in quarters],
            "unpopular quarters": [mean_within(unpopular) for _, unpopular in quarters],
        }
    return spec, summaries


def sweep(chapter, log_lam=4.0):
    """Summaries as alpha moves from -1 to 1 at a fixed lam."""
    spec, summaries = chapter
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
    spec, summaries = chapter
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
    spec, _ = chapter
    for log_lam, alpha in [(5.0, 1.0), (4.0, 1.0)]:
        fig = spec.draw(spec.state(log_lam=log_lam, alpha=alpha))
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
    spec, summaries = chapter
    halves = [summaries[log_lam, 0.5]["mean cosine"] for log_lam in (2.0, 3.0, 4.0, 5.0)]
    assert max(halves) - min(halves) < 1e-9
