"""Tests for cosine_book.factorization and its widget: the claims of chapter 6."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import roc_auc_score
from sklearn.metrics.pairwise import cosine_similarity

from cosine_book.factorization import (
    closed_form_check,
    cluster_order,
    cluster_recovery,
    cosine_matrix,
    dropout_shrinkage,
    fit_alternating,
    fit_objective1,
    fit_objective2,
    gram,
    gram_spectrum,
    objective1_gradient,
    objective1_loss,
    objective2_gradient,
    objective2_loss,
    prediction_item_cosines,
    rescale,
    same_cluster_matrix,
    simulate_interactions,
    standardize_columns,
)
from cosine_book.widgets.factorization import (
    _RescalingView,
    prepare_rescaling_state,
    rescaling_update,
    rescaling_widget,
)

SETTINGS = settings(max_examples=25, deadline=None)


def random_data(seed: int, n: int = 12, p: int = 5, binary: bool = False) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if binary:
        X = (rng.random((n, p)) < 0.5).astype(float)
        X[np.arange(p) % n, np.arange(p)] = 1.0  # no empty item column
        return X
    return rng.standard_normal((n, p))


# ---------------------------------------------------------------------------
# Spectrum
# ---------------------------------------------------------------------------


@SETTINGS
@given(seed=st.integers(0, 10**6))
def test_gram_spectrum_matches_svd(seed):
    X = random_data(seed, n=9, p=6)
    spectrum = gram_spectrum(X)
    np.testing.assert_allclose(
        spectrum.singular_values, np.linalg.svd(X, compute_uv=False), atol=1e-9
    )
    V = spectrum.vectors
    np.testing.assert_allclose(V.T @ V, np.eye(6), atol=1e-10)
    assert np.all(np.diff(spectrum.singular_values) <= 0)
    # Sign convention: the largest-magnitude entry of each column is positive.
    pivots = np.argmax(np.abs(V), axis=0)
    assert np.all(V[pivots, np.arange(6)] > 0)


def test_gram_spectrum_clips_rank_deficiency_and_accepts_sparse():
    X = np.array([[1.0, 1.0, 0.0], [2.0, 2.0, 0.0]])  # rank 1, two zero singular values
    dense = gram_spectrum(X)
    sparse = gram_spectrum(scipy.sparse.csr_array(X))
    assert np.all(dense.singular_values >= 0)
    np.testing.assert_allclose(dense.singular_values, [np.sqrt(10.0), 0.0, 0.0], atol=1e-7)
    np.testing.assert_allclose(dense.singular_values, sparse.singular_values)
    np.testing.assert_allclose(np.abs(dense.vectors[:, 0]), [2**-0.5, 2**-0.5, 0.0])


def test_gram_sparse_equals_dense():
    X = random_data(3, binary=True)
    np.testing.assert_array_equal(gram(scipy.sparse.csr_matrix(X)), X.T @ X)


# ---------------------------------------------------------------------------
# Closed forms are minimisers
# ---------------------------------------------------------------------------


CLOSED_FORMS = {
    # objective: (closed form, loss, gradient, range of lam drawn)
    1: (fit_objective1, objective1_loss, objective1_gradient, (0.01, 30.0)),
    2: (fit_objective2, objective2_loss, objective2_gradient, (0.05, 3.0)),
}


@pytest.mark.parametrize("objective", sorted(CLOSED_FORMS))
@SETTINGS
@given(seed=st.integers(0, 10**6), k=st.integers(1, 5), lam_share=st.floats(0.0, 1.0))
def test_closed_form_is_stationary_and_minimal(objective, seed, k, lam_share):
    fit, loss, gradient_of, (lam_low, lam_high) = CLOSED_FORMS[objective]
    lam = lam_low + lam_share * (lam_high - lam_low)
    X = random_data(seed)
    A, B = fit(X, lam, k)
    scale = np.linalg.norm(X) ** 2
    for gradient in gradient_of(X, A, B, lam):
        assert np.abs(gradient).max() <= 1e-9 * scale
    best = loss(X, A, B, lam)
    rng = np.random.default_rng(seed + 1)
    for size in (1e-3, 1e-1, 1.0):
        dA, dB = rng.standard_normal((2, *A.shape)) * size
        assert loss(X, A + dA, B + dB, lam) >= best - 1e-9 * scale


def test_objective1_full_rank_is_ridge_solution():
    X = random_data(0, n=20, p=6)
    A, B = fit_objective1(X, lam=3.0)
    G = X.T @ X
    np.testing.assert_allclose(A @ B.T, np.linalg.solve(G + 3.0 * np.eye(6), G), atol=1e-10)


def test_objective2_predictions_soft_threshold_singular_values():
    X = random_data(5, n=15, p=6)
    U, sigma, Vt = np.linalg.svd(X, full_matrices=False)
    lam = float(sigma[2])  # the third and later singular values are cut to zero
    A, B = fit_objective2(X, lam, k=4)
    expected = U @ np.diag(np.clip(sigma - lam, 0, None)) @ Vt
    np.testing.assert_allclose(X @ A @ B.T, expected, atol=1e-10)
    assert np.allclose(B[:, 2:], 0.0) and np.allclose(A[:, 2:], 0.0)


@pytest.mark.parametrize("objective", [1, 2])
@pytest.mark.parametrize("seed", [0, 1])
def test_closed_forms_agree_with_alternating_solver(objective, seed):
    X = random_data(seed, n=30, p=6)
    lam = 2.0 if objective == 1 else 0.5
    fit = fit_objective1 if objective == 1 else fit_objective2
    A, B = fit(X, lam, 3)
    A_iter, B_iter = fit_alternating(X, lam, 3, objective, n_iter=3000, seed=seed + 10)
    loss = objective1_loss if objective == 1 else objective2_loss
    assert loss(X, A_iter, B_iter, lam) == pytest.approx(loss(X, A, B, lam), rel=1e-9)
    np.testing.assert_allclose(A_iter @ B_iter.T, A @ B.T, atol=1e-6)
    # The alternating solution differs from the closed form, but not its cosines
    # for objective 2 (unique up to rotation).
    if objective == 2:
        np.testing.assert_allclose(cosine_matrix(B_iter), cosine_matrix(B), atol=1e-6)


def test_sparse_and_dense_inputs_give_the_same_fit():
    X = random_data(2, binary=True)
    for fit, lam in ((fit_objective1, 1.0), (fit_objective2, 0.5)):
        A_dense, B_dense = fit(X, lam, 3)
        A_sparse, B_sparse = fit(scipy.sparse.csr_array(X), lam, 3)
        np.testing.assert_allclose(A_dense, A_sparse, atol=1e-12)
        np.testing.assert_allclose(B_dense, B_sparse, atol=1e-12)


# ---------------------------------------------------------------------------
# Rescaling freedom (objective 1) and its absence (objective 2)
# ---------------------------------------------------------------------------

scales = st.lists(st.floats(0.1, 10.0), min_size=4, max_size=4)


@SETTINGS
@given(seed=st.integers(0, 10**6), d=scales)
def test_rescaling_keeps_objective1_predictions_and_loss(seed, d):
    X = random_data(seed)
    A, B = fit_objective1(X, 1.5, 4)
    A_D, B_D = rescale(A, B, d)
    np.testing.assert_allclose(X @ A_D @ B_D.T, X @ A @ B.T, atol=1e-10)
    assert objective1_loss(X, A_D, B_D, 1.5) == pytest.approx(
        objective1_loss(X, A, B, 1.5), rel=1e-10
    )


def test_rescaling_changes_cosines():
    X = random_data(1, n=30, p=6)
    A, B = fit_objective1(X, 2.0, 4)
    A_D, B_D = rescale(A, B, [1.0, 3.0, 0.2, 5.0])
    assert np.abs(cosine_matrix(B_D) - cosine_matrix(B)).max() > 0.05
    assert np.abs(cosine_matrix(X @ A_D) - cosine_matrix(X @ A)).max() > 0.05


@SETTINGS
@given(seed=st.integers(0, 10**6), d=scales)
def test_rescaling_raises_objective2_loss(seed, d):
    X = random_data(seed)
    lam = 0.2
    A, B = fit_objective2(X, lam, 4)
    A_D, B_D = rescale(A, B, d)
    gap = objective2_loss(X, A_D, B_D, lam) - objective2_loss(X, A, B, lam)
    # Exactly lam * sum_i (sigma_i - lam)_+ (d_i - 1/d_i)^2 >= 0,
    # and zero only if every kept dimension has d_i = 1.
    sigma = np.linalg.svd(X, compute_uv=False)[:4]
    kept = np.clip(sigma - lam, 0, None)
    expected = lam * np.sum(kept * (np.asarray(d) - 1 / np.asarray(d)) ** 2)
    assert gap == pytest.approx(expected, rel=1e-6, abs=1e-9)


def test_objective2_cosines_invariant_to_rotation():
    X = random_data(4, n=20, p=6)
    A, B = fit_objective2(X, 0.3, 4)
    rotation, _ = np.linalg.qr(np.random.default_rng(0).standard_normal((4, 4)))
    assert objective2_loss(X, A @ rotation, B @ rotation, 0.3) == pytest.approx(
        objective2_loss(X, A, B, 0.3), rel=1e-10
    )
    np.testing.assert_allclose(cosine_matrix(B @ rotation), cosine_matrix(B), atol=1e-12)


def test_special_case_identity_item_cosines():
    # Full rank, D = diag(f)^(1/2): B_D = V, so item-item cosine is the identity and
    # user-item cosine ranks items like the dot product.
    X = random_data(7, binary=True, n=25, p=6)
    lam = 2.0
    A, B = fit_objective1(X, lam)
    f = dropout_shrinkage(gram_spectrum(X).singular_values, lam)
    A_D, B_D = rescale(A, B, np.sqrt(f))
    np.testing.assert_allclose(cosine_matrix(B_D), np.eye(6), atol=1e-10)
    user_item = cosine_matrix(X @ A_D, B_D)
    scores = X @ A_D @ B_D.T
    np.testing.assert_allclose(
        user_item, scores / np.linalg.norm(X @ A_D, axis=1, keepdims=True), atol=1e-10
    )


def test_special_case_raw_user_cosines():
    # Full rank, D = diag(f)^(-1/2): A_D = V, so user-user cosine is that of raw rows of X.
    X = random_data(8, binary=True, n=25, p=6)
    lam = 2.0
    A, B = fit_objective1(X, lam)
    f = dropout_shrinkage(gram_spectrum(X).singular_values, lam)
    A_D, B_D = rescale(A, B, 1 / np.sqrt(f))
    np.testing.assert_allclose(cosine_matrix(X @ A_D), cosine_matrix(X), atol=1e-10)


def test_prediction_cosines_invariant_and_match_direct():
    X = random_data(9, binary=True, n=40, p=7)
    A, B = fit_objective1(X, 3.0, 4)
    direct = cosine_similarity((X @ A @ B.T).T)
    np.testing.assert_allclose(prediction_item_cosines(X, A, B), direct, atol=1e-10)
    A_D, B_D = rescale(A, B, [0.1, 1.0, 7.0, 2.0])
    np.testing.assert_allclose(
        prediction_item_cosines(X, A_D, B_D), prediction_item_cosines(X, A, B), atol=1e-10
    )


# ---------------------------------------------------------------------------
# Cosines, recovery, ordering
# ---------------------------------------------------------------------------


@SETTINGS
@given(seed=st.integers(0, 10**6))
def test_cosine_matrix_matches_sklearn(seed):
    E = random_data(seed, n=7, p=3)
    F = random_data(seed + 1, n=4, p=3)
    np.testing.assert_allclose(cosine_matrix(E), cosine_similarity(E), atol=1e-12)
    np.testing.assert_allclose(cosine_matrix(E, F), cosine_similarity(E, F), atol=1e-12)
    assert np.all(np.diag(cosine_matrix(E)) == 1.0)


def test_cosine_matrix_errors():
    with pytest.raises(ValueError, match="zero row"):
        cosine_matrix([[1.0, 2.0], [0.0, 0.0]])
    with pytest.raises(ValueError, match="NaN"):
        cosine_matrix([[1.0, np.nan]])
    with pytest.raises(ValueError, match="2-d"):
        cosine_matrix([1.0, 2.0])
    with pytest.raises(ValueError, match="lengths"):
        cosine_matrix([[1.0, 2.0]], [[1.0, 2.0, 3.0]])


@SETTINGS
@given(seed=st.integers(0, 10**6))
def test_cluster_recovery_auc_matches_sklearn(seed):
    rng = np.random.default_rng(seed)
    clusters = rng.integers(0, 3, size=15)
    clusters[:3] = [0, 1, 2]
    S = np.round(rng.standard_normal((15, 15)), 1)  # rounding creates ties
    S = (S + S.T) / 2
    rows, cols = np.triu_indices(15, k=1)
    expected = roc_auc_score(clusters[rows] == clusters[cols], S[rows, cols])
    assert cluster_recovery(S, clusters, 3).auc == pytest.approx(expected, abs=1e-12)
    assert cluster_recovery(S, clusters, 3, auc_bins=4096).auc == pytest.approx(expected, abs=1e-2)


def test_cluster_recovery_neighbour_share():
    clusters = np.array([0, 0, 0, 1, 1, 1])
    truth = cluster_recovery(same_cluster_matrix(clusters), clusters, n_neighbours=2)
    assert (truth.auc, truth.neighbour_share) == (1.0, 1.0)
    # Similarity that prefers the other cluster: no neighbour in the same cluster.
    flipped = 1.0 - same_cluster_matrix(clusters)
    result = cluster_recovery(flipped, clusters, n_neighbours=2)
    assert result.neighbour_share == 0.0 and result.auc == 0.0


def test_cluster_recovery_errors():
    with pytest.raises(ValueError, match="square"):
        cluster_recovery(np.ones((3, 2)), [0, 1, 0])
    with pytest.raises(ValueError, match="one label per item"):
        cluster_recovery(np.eye(3), [0, 1])
    with pytest.raises(ValueError, match="both"):
        cluster_recovery(np.eye(3), [0, 0, 0], n_neighbours=1)
    with pytest.raises(ValueError, match="k must be"):
        cluster_recovery(np.eye(3), [0, 1, 0], n_neighbours=3)


def test_cluster_order_sorts_by_cluster_then_popularity():
    order = cluster_order([2, 0, 2, 0, 1], [0.5, 0.1, 0.9, 0.3, 0.2])
    assert order.tolist() == [3, 1, 4, 2, 0]


def test_standardize_columns():
    X = random_data(3, binary=True, n=30, p=5)
    Z = standardize_columns(scipy.sparse.csr_array(X))
    np.testing.assert_allclose(Z.mean(axis=0), 0.0, atol=1e-12)
    np.testing.assert_allclose(Z.std(axis=0), 1.0)


# ---------------------------------------------------------------------------
# Bad input
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("lam", [0.0, -1.0, np.nan, np.inf])
def test_bad_lambda(lam):
    X = random_data(0)
    for call in (
        lambda: fit_objective1(X, lam),
        lambda: fit_objective2(X, lam, 2),
        lambda: dropout_shrinkage([1.0], lam),
    ):
        with pytest.raises(ValueError, match="lam must be a positive"):
            call()


@pytest.mark.parametrize("k", [0, 6, -1, 2.5, True, "3"])
def test_bad_k(k):
    X = random_data(0)  # 5 items
    with pytest.raises(ValueError, match="k must be"):
        fit_objective1(X, 1.0, k)
    with pytest.raises(ValueError, match="k must be"):
        fit_objective2(X, 1.0, k)


def test_bad_shapes_and_values():
    with pytest.raises(ValueError, match="2-d"):
        fit_objective1(np.ones(5), 1.0)
    with pytest.raises(ValueError, match="2-d"):
        fit_objective1(np.ones((2, 2, 2)), 1.0)
    with pytest.raises(ValueError, match="at least one"):
        fit_objective1(np.ones((0, 3)), 1.0)
    with pytest.raises(ValueError, match="NaN"):
        fit_objective2(np.array([[1.0, np.nan]]), 1.0, 1)
    with pytest.raises(ValueError, match="same shape"):
        rescale(np.ones((3, 2)), np.ones((3, 3)), [1.0, 1.0])
    with pytest.raises(ValueError, match="one scale per latent"):
        rescale(np.ones((3, 2)), np.ones((3, 2)), [1.0, 1.0, 1.0])
    with pytest.raises(ValueError, match="nonzero"):
        rescale(np.ones((3, 2)), np.ones((3, 2)), [1.0, 0.0])
    with pytest.raises(ValueError, match="one row per item"):
        objective1_loss(np.ones((4, 3)), np.ones((2, 1)), np.ones((2, 1)), 1.0)
    with pytest.raises(ValueError, match="objective must be"):
        fit_alternating(np.ones((4, 3)), 1.0, 1, objective=3)


def test_simulator_bad_parameters():
    with pytest.raises(ValueError, match="n_users"):
        simulate_interactions(n_users=0)
    with pytest.raises(ValueError, match="exceeds"):
        simulate_interactions(n_items=3, n_clusters=5)
    with pytest.raises(ValueError, match="min_items"):
        simulate_interactions(n_users=10, n_items=20, min_items=21)
    with pytest.raises(ValueError, match="preference"):
        simulate_interactions(n_users=10, n_items=20, min_items=2, preference="uniform")


# ---------------------------------------------------------------------------
# Simulator
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"cluster_concentration": None, "preference": "lognormal", "power_law": "sample"},
    ],
)
def test_simulator_is_seeded_and_consistent(options):
    kwargs = {"n_users": 300, "n_items": 60, "n_clusters": 4, "min_items": 3, **options}
    data = simulate_interactions(seed=5, **kwargs)
    again = simulate_interactions(seed=5, **kwargs)
    other = simulate_interactions(seed=6, **kwargs)
    assert (data.X != again.X).nnz == 0
    assert (data.X != other.X).nnz > 0
    X = data.X.toarray()
    assert set(np.unique(X)) <= {0.0, 1.0}
    np.testing.assert_array_equal(X.sum(axis=1), data.items_per_user)
    assert data.items_per_user.min() >= 3 and data.items_per_user.max() <= 60
    assert set(data.item_clusters) <= set(range(4))
    for c in np.unique(data.item_clusters):
        assert data.item_popularity[data.item_clusters == c].sum() == pytest.approx(1.0)
    assert np.all((0.25 <= data.cluster_exponents) & (data.cluster_exponents <= 1.5))


def test_simulated_clusters_are_recoverable():
    # Users prefer few clusters, so items of a cluster co-occur: raw item cosines see it.
    data = simulate_interactions(n_users=2000, n_items=100, n_clusters=3, min_items=10, seed=1)
    raw = cosine_matrix(data.X.T.toarray())
    assert cluster_recovery(raw, data.item_clusters).auc > 0.8


# ---------------------------------------------------------------------------
# Widget
# ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def small_state():
    data = simulate_interactions(n_users=800, n_items=60, n_clusters=3, min_items=8, seed=2)
    state = prepare_rescaling_state(
        data.X, data.item_clusters, data.item_popularity, k=60, n_check_users=50
    )
    return data, state


def test_widget_update_keeps_predictions(small_state):
    data, state = small_state
    results = [rescaling_update(state, 50.0, alpha) for alpha in (-1.0, -0.5, 0.0, 0.5, 1.0)]
    assert max(result.max_prediction_change for result in results) < 1e-10
    # Full rank and alpha = 1/2: the identity matrix.
    np.testing.assert_allclose(results[3].cosines, np.eye(60), atol=1e-8)
    assert np.abs(results[0].cosines - results[4].cosines).max() > 0.3


def test_widget_update_matches_package_functions(small_state):
    data, state = small_state
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


def test_widget_builds_and_redraws(small_state):
    _, state = small_state
    widget = rescaling_widget(state, lam=50.0, alpha=0.0)
    assert type(widget).__name__ == "VBox"
    view = _RescalingView(state, 50.0, 0.0)
    first = view.picture.value
    view.redraw(50.0, 1.0)
    assert view.picture.value != first and view.picture.value[:2] == b"\xff\xd8"
    assert "α = 0" in view.panel.value
    with pytest.raises(ValueError, match="lam"):
        rescaling_update(state, -1.0, 0.0)
    with pytest.raises(ValueError, match="alpha"):
        rescaling_update(state, 1.0, np.nan)


@pytest.mark.parametrize("objective", [1, 2])
def test_closed_form_check_passes_and_detects_a_wrong_solution(objective, monkeypatch):
    X = random_data(11, n=25, p=6)
    lam = 1.0 if objective == 1 else 0.3
    check = closed_form_check(X, lam, 3, objective, n_perturbations=5)
    assert check.gradient < 1e-12 and check.loss_rise > 0 and check.iterative_gap < 1e-8
    # A deliberately wrong "closed form" (half the right A) must fail every check.
    import cosine_book.factorization as module

    name = "fit_objective1" if objective == 1 else "fit_objective2"
    right = getattr(module, name)
    monkeypatch.setattr(
        module, name, lambda X, lam, k: (0.5 * right(X, lam, k)[0], right(X, lam, k)[1])
    )
    wrong = module.closed_form_check(X, lam, 3, objective, n_perturbations=5)
    assert wrong.gradient > 1e-6 and wrong.loss_rise < 0 and wrong.iterative_gap > 1e-3


def test_plot_cosine_heatmaps_orders_items_and_checks_input():
    import matplotlib.pyplot as plt

    from cosine_book.widgets.factorization import plot_cosine_heatmaps

    truth = np.kron(np.eye(2), np.ones((2, 2)))
    clusters, popularity = [1, 0, 1, 0], [1.0, 2.0, 3.0, 4.0]
    fig = plot_cosine_heatmaps({"a": truth, "b": -truth}, ["a", "b"], clusters, popularity)
    shown = fig.axes[0].images[0].get_array()
    order = [3, 1, 2, 0]  # cluster 0 by descending popularity, then cluster 1
    np.testing.assert_array_equal(shown, truth[np.ix_(order, order)])
    assert [ax.get_title() for ax in fig.axes[:2]] == ["a", "b"]
    plt.close(fig)
    with pytest.raises(ValueError, match="no similarity named"):
        plot_cosine_heatmaps({"a": truth}, ["c"], clusters, popularity)
    with pytest.raises(ValueError, match="titles"):
        plot_cosine_heatmaps({"a": truth}, ["a"], clusters, popularity, titles=["x", "y"])
    with pytest.raises(ValueError, match="n_cols"):
        plot_cosine_heatmaps({"a": truth}, ["a"], clusters, popularity, n_cols=0)
