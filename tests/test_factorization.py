"""Tests for cosine_book.factorization: the claims of chapter 6.

Cluster recovery has its own tests (tests/test_cluster_recovery.py), and so has
the simulator (tests/test_datasets.py); they are used here as tools.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import scipy.sparse
from bad_inputs import masked, with_entry
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics.pairwise import cosine_similarity

from cosine_book.cluster_recovery import cluster_recovery
from cosine_book.factorization import (
    closed_form_check,
    cosine_matrix,
    dropout_shrinkage,
    fit_alternating,
    fit_objective1,
    fit_objective2,
    gram,
    gram_spectrum,
    item_similarity_suite,
    objective1_loss,
    objective2_loss,
    prediction_item_cosines,
    rescale,
    rescaling_spread,
    standardized_gram,
)
from cosine_book.simulation import make_clustered_interactions

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


# objective: range of lam drawn
LAM_RANGES = {1: (0.01, 30.0), 2: (0.05, 3.0)}


@pytest.mark.parametrize("objective", sorted(LAM_RANGES))
@SETTINGS
@given(seed=st.integers(0, 10**6), k=st.integers(1, 5), lam_share=st.floats(0.0, 1.0))
def test_closed_form_is_stationary_and_minimal(objective, seed, k, lam_share):
    # closed_form_check: the gradient at the closed form and the smallest loss rise over
    # random perturbations, both relative to ||X||^2.
    lam_low, lam_high = LAM_RANGES[objective]
    lam = lam_low + lam_share * (lam_high - lam_low)
    check = closed_form_check(random_data(seed), lam, k, objective, n_perturbations=3, seed=seed)
    assert check.gradient <= 1e-9 and check.loss_rise >= -1e-9


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
    with pytest.raises(ValueError, match="2-D"):
        cosine_matrix([1.0, 2.0])
    with pytest.raises(ValueError, match="lengths"):
        cosine_matrix([[1.0, 2.0]], [[1.0, 2.0, 3.0]])


# Rows of wildly different magnitudes, some near the ends of the float64 range.
_magnitudes = st.sampled_from([1e-300, 1e-170, 1e-20, 1.0, 1e20, 1e200, 1e300])


@SETTINGS
@given(seed=st.integers(0, 10**6), scales=st.lists(_magnitudes, min_size=2, max_size=6))
def test_cosine_matrix_is_exact_at_any_scale(seed, scales):
    rng = np.random.default_rng(seed)
    base = rng.standard_normal((len(scales), 3))
    E = base * np.array(scales)[:, None]
    S = cosine_matrix(E)
    np.testing.assert_array_equal(S, S.T)  # bit for bit
    np.testing.assert_array_equal(np.diag(S), 1.0)
    assert np.all(np.abs(S) <= 1.0)
    np.testing.assert_allclose(S, cosine_similarity(base), atol=1e-14)
    # Scaling a row by a power of two changes nothing, bit for bit.
    np.testing.assert_array_equal(cosine_matrix(np.ldexp(E, 7)), S)
    np.testing.assert_allclose(cosine_matrix(E, base), cosine_similarity(base), atol=1e-14)


def test_cosine_matrix_rows_near_the_ends_of_the_range():
    E = np.array([[3.0, 4.0], [1.0, 1.0], [-2.0, 1.0]])
    expected = cosine_matrix(E)
    for scale in (1e200, 1e-170, 1e300, 1e-300):
        np.testing.assert_allclose(cosine_matrix(scale * E), expected, atol=1e-15)
    # Subnormal rows carry only about 44 bits: right to that precision.
    np.testing.assert_allclose(cosine_matrix(1e-310 * E), expected, atol=1e-12)
    np.testing.assert_allclose(cosine_matrix(E * [[1e200], [1e-170], [1.0]]), expected, atol=1e-15)


def test_standardized_gram_is_that_of_the_standardised_columns():
    X = random_data(3, binary=True, n=30, p=5)
    Z = (X - X.mean(axis=0)) / X.std(axis=0)
    Z *= np.linalg.norm(X) / np.linalg.norm(Z)
    np.testing.assert_allclose(standardized_gram(scipy.sparse.csr_array(X)), Z.T @ Z, atol=1e-12)
    # A constant column gives exactly zero (a rounded mean would leave noise).
    constant = standardized_gram(np.column_stack([np.full(7, 0.1), np.arange(7.0)]))
    np.testing.assert_array_equal(constant[0], 0.0)


def test_rescale_accepts_the_smallest_invertible_scale():
    A = np.ones((2, 2))
    A_D, B_D = rescale(A, 1e-300 * A, [1.0, 5.57e-309])
    assert np.isfinite(B_D).all() and B_D[0, 1] == pytest.approx(1e-300 / 5.57e-309)


# ---------------------------------------------------------------------------
# Bad input: one table for the module
# ---------------------------------------------------------------------------

_X = random_data(0)  # 12 users x 5 items
_A = np.ones((5, 2))
_S = np.eye(4)
_CLUSTERS = [0, 0, 1, 1]


BAD_INPUT = [
    # (call, expected error-message fragment); X-taking functions first
    *[
        pytest.param(call, match, id=f"{name}-{kind}")
        for name, function in [
            ("fit_objective1", lambda X: fit_objective1(X, 1.0)),
            ("fit_objective2", lambda X: fit_objective2(X, 1.0, 2)),
            ("gram", gram),
            ("gram_spectrum", gram_spectrum),
            ("fit_alternating", lambda X: fit_alternating(X, 1.0, 1, n_iter=2)),
            ("objective1_loss", lambda X: objective1_loss(X, _A, _A, 1.0)),
            ("item_similarity_suite", lambda X: item_similarity_suite(X, [0] * 5, k=2)),
        ]
        for kind, call, match in [
            ("masked", lambda f=function: f(masked(_X)), "masked array"),
            ("complex", lambda f=function: f(_X + 1j), "complex"),
            (
                "complex sparse",
                lambda f=function: f(scipy.sparse.csr_array(_X.astype(complex))),
                "complex",
            ),
            ("strings", lambda f=function: f([["1", "2"], ["3", "4"]]), "strings"),
            ("ragged", lambda f=function: f([[1.0, 2.0], [3.0]]), "ragged"),
            ("objects", lambda f=function: f(np.array([[1, None]], dtype=object)), "objects"),
            ("NaN", lambda f=function: f(with_entry(_X, (2, 3), np.nan)), "NaN"),
            ("inf", lambda f=function: f(with_entry(_X, (0, 0), np.inf)), "infinite"),
            (
                "sparse NaN",
                lambda f=function: f(scipy.sparse.csr_array(with_entry(_X, (1, 1), np.nan))),
                "NaN",
            ),
            ("empty", lambda f=function: f(np.ones((0, 5))), "empty"),
            ("1-D", lambda f=function: f(np.ones(5)), "2-D"),
            ("3-D", lambda f=function: f(np.ones((2, 2, 2))), "2-D"),
            ("string", lambda f=function: f("X"), "string"),
        ]
    ],
    # lam, k, objective and the other scalars
    *[
        pytest.param(lambda lam=lam: fit_objective1(_X, lam), match, id=f"lam-{lam!r}")
        for lam, match in [
            (0.0, "lam must be positive"),
            (-1.0, "lam must be positive"),
            (np.nan, "lam must be a finite"),
            (np.inf, "lam must be a finite"),
            ("1", "lam must be a real number"),
            (True, "lam must be a real number"),
            (1j, "lam must be a real number"),
            (None, "lam must be a real number"),
        ]
    ],
    *[
        pytest.param(lambda k=k: fit_objective2(_X, 1.0, k), match, id=f"k-{k!r}")
        for k, match in [
            (0, "k must be between 1 and 5"),
            (6, "k must be between 1 and 5"),
            (-1, "k must be between 1 and 5"),
            (2.5, "k must be an integer"),
            (2.0, "k must be an integer"),
            (True, "k must be an integer"),
            ("3", "k must be an integer"),
        ]
    ],
    pytest.param(lambda: dropout_shrinkage([1.0, -1.0], 1.0), "negative", id="sigma-negative"),
    pytest.param(lambda: dropout_shrinkage([[1.0]], 1.0), "1-D", id="sigma-2D"),
    pytest.param(lambda: dropout_shrinkage([np.nan], 1.0), "NaN", id="sigma-NaN"),
    pytest.param(lambda: dropout_shrinkage([1.0], 0.0), "lam must be positive", id="shrink-lam"),
    pytest.param(lambda: fit_alternating(_X, 1.0, 1, objective=3), "objective must be between 1"),
    pytest.param(lambda: fit_alternating(_X, 1.0, 1, objective=True), "objective must be an int"),
    pytest.param(lambda: fit_alternating(_X, 1.0, 1, objective=1.0), "objective must be an int"),
    pytest.param(lambda: fit_alternating(_X, 1.0, 1, n_iter=0), "n_iter must be at least 1"),
    pytest.param(lambda: fit_alternating(_X, 1.0, 1, seed=-1), "seed must be at least 0"),
    pytest.param(lambda: closed_form_check(np.zeros((3, 2)), 1.0, 1), "all zeros"),
    pytest.param(lambda: closed_form_check(_X, 1.0, 1, n_perturbations=0), "n_perturbations"),
    pytest.param(lambda: item_similarity_suite(_X, [0] * 5, lam1=0.0), "lam1 must be positive"),
    pytest.param(lambda: item_similarity_suite(_X, [0] * 4), "4 labels but there are 5"),
    pytest.param(
        lambda: item_similarity_suite(
            np.column_stack([np.arange(1.0, 4.0), np.zeros(3)]), [0, 1], k=2
        ),
        "lower k",
        id="suite-rank-below-k",
    ),
    # Huge entries: the Gram matrix itself (not the fits) cannot be represented
    pytest.param(lambda: gram(1e200 * _X), "X\\^T X overflows", id="gram-1e200"),
    pytest.param(lambda: objective1_loss(1e200 * _X, _A, _A, 1.0), "loss overflows"),
    pytest.param(lambda: fit_objective1(1e200 * _X, 1.0), "X\\^T X overflows", id="fit1-1e200"),
    # rescale
    pytest.param(lambda: rescale(np.ones((3, 2)), np.ones((3, 3)), [1.0, 1.0]), "same shape"),
    pytest.param(lambda: rescale(_A, _A, [1.0, 1.0, 1.0]), "one scale per latent"),
    pytest.param(lambda: rescale(_A, _A, [1.0, 0.0]), "B diag\\(1/d\\) overflows", id="d-0"),
    pytest.param(lambda: rescale(_A, _A, [1.0, 1e-310]), "B diag\\(1/d\\) over", id="d-1e-310"),
    pytest.param(lambda: rescale(_A, _A, [1.0, -5e-309]), "B diag\\(1/d\\) over", id="d-5e-309"),
    pytest.param(lambda: rescale(_A, _A, [1.0, np.nan]), "d contains NaN"),
    pytest.param(lambda: rescale(_A, _A, [1.0, np.inf]), "d contains an infinite"),
    pytest.param(lambda: rescale(_A, _A, [1.0, 1j]), "d is complex"),
    pytest.param(lambda: rescale(_A, _A, "12"), "d is a string"),
    pytest.param(lambda: rescale(with_entry(_A, (0, 0), np.nan), _A, [1, 1]), "A contains NaN"),
    pytest.param(lambda: rescale(_A, with_entry(_A, (0, 0), -np.inf), [1, 1]), "B contains an inf"),
    pytest.param(lambda: rescale(_A + 1j, _A, [1, 1]), "A is complex"),
    pytest.param(lambda: rescale(masked(_A), _A, [1, 1]), "A is a masked array"),
    pytest.param(lambda: rescale(scipy.sparse.csr_array(_A), _A, [1, 1]), "A is a sparse"),
    pytest.param(lambda: rescale(1e300 * _A, _A, [1.0, 1e10]), "A diag\\(d\\) overflows"),
    pytest.param(lambda: rescale(_A, 10 * _A, [1.0, 1e-308]), "B diag\\(1/d\\) overflows"),
    # cosine_matrix
    pytest.param(lambda: cosine_matrix([[1.0, 2.0], [0.0, 0.0]]), "zero row"),
    pytest.param(lambda: cosine_matrix([[1.0, 2.0]], [[1.0, 2.0, 3.0]]), "lengths"),
    pytest.param(lambda: cosine_matrix([[1.0, 2.0]], [[0.0, 0.0]]), "F has 1 zero row"),
    pytest.param(lambda: cosine_matrix(_A + 1j), "E is complex"),
    pytest.param(lambda: cosine_matrix(_A, _A + 1j), "F is complex"),
    pytest.param(lambda: cosine_matrix(scipy.sparse.csr_array(_A)), "E is a sparse"),
    pytest.param(lambda: cosine_matrix(masked(_A)), "E is a masked array"),
    pytest.param(lambda: cosine_matrix([[1.0, np.inf]]), "E contains an infinite"),
    pytest.param(lambda: cosine_matrix([[1.0], [2.0, 3.0]]), "E is ragged"),
    pytest.param(lambda: cosine_matrix(np.ones((0, 2))), "E is empty"),
    pytest.param(lambda: cosine_matrix([["a"]]), "E is an array of strings"),
    # prediction_item_cosines
    pytest.param(lambda: prediction_item_cosines(_X, np.ones((4, 2)), np.ones((4, 2))), "per item"),
    pytest.param(lambda: prediction_item_cosines(_X, 0 * _A, _A), "all-zero predictions"),
]


@pytest.mark.parametrize(("call", "match"), BAD_INPUT)
def test_bad_input_table(call, match):
    with pytest.raises(ValueError, match=match):
        call()


GOOD_EDGE_INPUT = [
    # (call, check of the result): inputs at the edges that must give right answers
    pytest.param(
        lambda: fit_objective1(1e-150 * _X, 2e-300, 2)[0],
        fit_objective1(_X, 2.0, 2)[0],
        id="fit1-1e-150",
    ),
    pytest.param(
        lambda: cosine_matrix(_X * np.logspace(-300, 300, 12)[:, None]),
        cosine_matrix(_X),
        id="cosine-rows-1e-300..1e300",
    ),
    pytest.param(
        lambda: rescale(_A, _A, [2.0, -0.5])[1], np.tile([0.5, -2.0], (5, 1)), id="rescale-neg"
    ),
    pytest.param(
        lambda: fit_objective1(_X.astype(np.float32), 1.0)[0],
        fit_objective1(_X.astype(np.float32).astype(float), 1.0)[0],
        id="float32",
    ),
    pytest.param(
        lambda: fit_objective1(_X > 0, 1.0)[0],
        fit_objective1((_X > 0).astype(float), 1.0)[0],
        id="bool-X",
    ),
]


@pytest.mark.parametrize(("call", "expected"), GOOD_EDGE_INPUT)
def test_edge_input_table(call, expected):
    np.testing.assert_allclose(call(), expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("objective", [1, 2])
def test_closed_form_check_passes_and_detects_a_wrong_solution(objective, monkeypatch):
    X = random_data(11, n=25, p=6)
    lam = 1.0 if objective == 1 else 0.3
    check = closed_form_check(X, lam, 3, objective, n_perturbations=5)
    assert check.gradient < 1e-12 and check.loss_rise > 0 and check.iterative_gap < 1e-8
    # A deliberately wrong "closed form" (half the right A) must fail every check.
    import cosine_book.factorization as module

    name = f"_objective{objective}"
    right = getattr(module, name)

    def wrong(spectrum, lam, k):
        A, B = right(spectrum, lam, k)
        return 0.5 * A, B

    monkeypatch.setattr(module, name, wrong)
    wrong = module.closed_form_check(X, lam, 3, objective, n_perturbations=5)
    assert wrong.gradient > 1e-6 and wrong.loss_rise < 0 and wrong.iterative_gap > 1e-3


# ---------------------------------------------------------------------------
# Another CPU: the same numbers to a relative 1e-12 (the data: tests/test_portability.py)
# ---------------------------------------------------------------------------

_PORTABLE = r"""
import json
import numpy as np
from cosine_book.factorization import dropout_shrinkage, rescale
from cosine_book.similarity import unit_rows
rng = np.random.default_rng(20261122)
# Rows scaled by exact powers of two from 2**-660 to 2**660.
E = np.ldexp(rng.standard_normal((200, 37)), rng.integers(-660, 661, 200)[:, None])
results = {
    "shrinkage": [dropout_shrinkage(rng.random(50) * 1e100, 3e200)],
    "rescale": [*rescale(E[:, :5], E[:, 5:10], rng.random(5) + 0.5)],
    "unit rows": [unit_rows(E, "E")],
}
print(json.dumps({
    key: [np.frexp(a)[0].ravel().tolist() + np.frexp(a)[1].ravel().tolist() for a in arrays]
    for key, arrays in results.items()
}))
"""


def test_numpy_only_results_agree_on_a_simulated_older_cpu():
    # Entries span 1e-200 .. 1e200: compared as mantissa and exponent, each mantissa to a
    # relative 1e-12, since sums may run in another order on another CPU.
    from portability import compare_here_and_there

    here, there, notes = compare_here_and_there(_PORTABLE)
    for name in here:
        for mine, theirs in zip(here[name], there[name], strict=True):
            half = len(mine) // 2
            np.testing.assert_array_equal(theirs[half:], mine[half:], err_msg=f"{name} ({notes})")
            np.testing.assert_allclose(
                theirs[:half], mine[:half], rtol=1e-12, atol=0, err_msg=f"{name} ({notes})"
            )


# ---------------------------------------------------------------------------
# rescaling_spread: objective 1 under four equally optimal D
# ---------------------------------------------------------------------------

_SMALL_SIM = make_clustered_interactions(n_users=400, n_items=60, n_clusters=3, min_items=5, seed=4)


def test_rescaling_spread_matches_the_suite():
    X, clusters = _SMALL_SIM.X, _SMALL_SIM.item_clusters
    spread = rescaling_spread(X, clusters, lam=20.0, k=6)
    suite = item_similarity_suite(X, clusters, lam1=20.0, lam2=1.0, k=6)
    n = len(clusters)
    for m, label in enumerate(spread.labels):
        S = suite[label]
        recovery = cluster_recovery(S, clusters)
        assert spread.auc[m] == recovery.auc
        assert spread.neighbour_share[m] == recovery.neighbour_share
        assert spread.mean_cosine[m] == (S.sum() - n) / (n * n - n)
    # dense and sparse input agree, and the D do move the scores
    dense = rescaling_spread(X.toarray(), clusters, lam=20.0, k=6)
    np.testing.assert_array_equal(dense.auc, spread.auc)
    assert np.ptp(spread.mean_cosine) > 0.05


@SETTINGS
@given(seed=st.integers(0, 10**6), lam=st.floats(0.01, 100.0))
def test_rescaling_spread_full_rank_case_one_is_the_identity(seed, lam):
    # k = p and alpha = +1/2: B D^-1 = V, orthonormal rows, so every cosine of two
    # distinct items is zero (case 1 of the rescaling theorem).
    X = random_data(seed, n=12, p=5)
    spread = rescaling_spread(X, [0, 0, 1, 1, 2], lam=lam, k=5, n_neighbours=2)
    assert abs(spread.mean_cosine[0]) < 1e-12
    assert np.all((0.0 <= spread.auc) & (spread.auc <= 1.0))
    assert np.all(np.abs(spread.mean_cosine) <= 1.0)


@pytest.mark.parametrize("exponent", [400, -400])
def test_rescaling_spread_is_the_same_in_any_units(exponent):
    X, clusters = _SMALL_SIM.X, _SMALL_SIM.item_clusters
    reference = rescaling_spread(X, clusters, lam=20.0, k=6)
    scaled = rescaling_spread(
        np.ldexp(X.toarray(), exponent), clusters, lam=np.ldexp(20.0, 2 * exponent), k=6
    )
    np.testing.assert_allclose(scaled.auc, reference.auc, rtol=0, atol=1e-3)
    np.testing.assert_allclose(scaled.mean_cosine, reference.mean_cosine, rtol=0, atol=1e-12)


SPREAD_BAD_INPUT = [
    # (call, expected error-message fragment)
    pytest.param(lambda: rescaling_spread(masked(_X), [0, 0, 1, 1, 1], k=2), "masked", id="masked"),
    pytest.param(lambda: rescaling_spread(_X + 1j, [0, 0, 1, 1, 1], k=2), "complex", id="complex"),
    pytest.param(lambda: rescaling_spread([["1", "2"]], [0, 1], k=1), "strings", id="strings"),
    pytest.param(lambda: rescaling_spread([[1.0, 2.0], [3.0]], [0, 1], k=1), "ragged", id="ragged"),
    pytest.param(
        lambda: rescaling_spread(with_entry(_X, (2, 3), np.nan), [0, 0, 1, 1, 1], k=2),
        "NaN",
        id="NaN",
    ),
    pytest.param(
        lambda: rescaling_spread(with_entry(_X, (0, 0), np.inf), [0, 0, 1, 1, 1], k=2),
        "infinite",
        id="inf",
    ),
    pytest.param(
        lambda: rescaling_spread(
            scipy.sparse.csr_array(with_entry(_X, (1, 1), np.nan)), [0, 0, 1, 1, 1], k=2
        ),
        "NaN",
        id="sparse-NaN",
    ),
    pytest.param(lambda: rescaling_spread(np.ones((0, 5)), [0] * 5, k=2), "empty", id="empty"),
    pytest.param(lambda: rescaling_spread(np.ones(5), [0] * 5, k=1), "2-D", id="1-D"),
    pytest.param(lambda: rescaling_spread(_X, [0, 0, 1, 1], k=2), "4 labels but there are 5"),
    pytest.param(
        lambda: rescaling_spread(_X, [0] * 5, k=2, n_neighbours=2),
        "both same-cluster",
        id="one-cluster",
    ),
    pytest.param(
        lambda: rescaling_spread(_X, range(5), k=2, n_neighbours=2),
        "both same-cluster",
        id="singletons",
    ),
    pytest.param(lambda: rescaling_spread(_X, [0, 0, 1, None, 1], k=2), "missing label"),
    pytest.param(lambda: rescaling_spread(np.ones((3, 1)), [0], k=1), "both same-cluster"),
    pytest.param(lambda: rescaling_spread(_X, [0, 0, 1, 1, 1], lam=0.0), "lam must be positive"),
    pytest.param(lambda: rescaling_spread(_X, [0, 0, 1, 1, 1], lam=np.nan), "lam must be a finite"),
    pytest.param(lambda: rescaling_spread(_X, [0, 0, 1, 1, 1], k=6), "k must be between 1 and 5"),
    pytest.param(lambda: rescaling_spread(_X, [0, 0, 1, 1, 1], k=2.0), "k must be an integer"),
    pytest.param(
        lambda: rescaling_spread(_X, [0, 0, 1, 1, 1], k=2, n_neighbours=5), "between 1 and 4"
    ),
    pytest.param(
        lambda: rescaling_spread(np.tile(np.eye(4)[:, :2], 2), [0, 0, 1, 1], k=3, n_neighbours=1),
        "lower k",
        id="rank-below-k",
    ),
]


@pytest.mark.parametrize(("call", "match"), SPREAD_BAD_INPUT)
def test_rescaling_spread_bad_input_table(call, match):
    with pytest.raises(ValueError, match=match):
        call()


# ---------------------------------------------------------------------------
# Chapter 6's claims, each at the smallest size at which it holds (the chapter
# shows them at the paper's size or at 5,000 x 500)
# ---------------------------------------------------------------------------

# Setting B's choices for every unstated ingredient (the chapter's table of choices).
_SETTING_B = {
    "cluster_concentration": None,
    "preference": "lognormal",
    "power_law": "sample",
    "min_items": 10,
}


@pytest.mark.parametrize("seed", [0, 3])
def test_ch6_one_pair_reaches_near_minus_one_and_plus_one_with_the_same_predictions(seed):
    # "A latent dimension is a block of size one": D^-1 keeps one latent dimension and
    # shrinks the others a hundredfold, once for the most negative product e_il e_jl,
    # once for the most positive. Two items of one cluster, one fitted model.
    data = make_clustered_interactions(n_users=300, n_items=30, min_items=10, seed=seed)
    X = data.X.toarray()
    A, B = fit_objective1(X, 45.0)  # k = p
    i, j = np.flatnonzero(data.item_clusters == data.item_clusters[0])[:2]
    predictions = X @ A @ B.T
    products = B[i] * B[j]
    cosines = {}
    for sign in (-1.0, 1.0):
        d = np.full(30, 100.0)
        d[np.argmax(sign * products)] = 1.0
        A_D, B_D = rescale(A, B, d)
        cosines[sign] = cosine_matrix(B_D[[i, j]])[0, 1]
        change = np.abs(X @ A_D @ B_D.T - predictions).max() / np.abs(predictions).max()
        assert change < 1e-12
    assert cosines[-1.0] < -0.99 and cosines[1.0] > 0.99
    # The symmetric minimiser itself sits in between.
    assert -0.99 < cosine_matrix(B[[i, j]])[0, 1] < 0.99


def test_ch6_one_ingredient_at_a_time_leaves_the_conclusion_standing():
    # "Whichever ingredient is changed, the conclusion stands": over seeds, four equally
    # optimal D spread the AUC widely, the stretched D takes the lowest AUC near chance,
    # the mean cosine spreads too, the seeds agree (small spread of the spreads), and
    # the three D of Figure 1 alone stay much closer together than all four.
    for name, value in [(None, None), *_SETTING_B.items()]:
        options = {} if name is None else {name: value}
        runs = []
        for seed in range(3):
            sim = make_clustered_interactions(n_users=2_000, n_items=200, seed=seed, **options)
            spread = rescaling_spread(sim.X, sim.item_clusters, lam=1_000.0)
            runs.append(
                [
                    np.ptp(spread.auc[:3]),
                    np.ptp(spread.auc),
                    spread.auc.min(),
                    np.ptp(spread.mean_cosine),
                ]
            )
        mean, std = np.mean(runs, axis=0), np.std(runs, axis=0)
        three, four, lowest, level = mean
        assert four > 0.3 and lowest < 0.6 and level > 0.15, (name, mean)
        assert np.all(std[1:] < 0.05), (name, std)
        assert three < 0.6 * four, (name, mean)


def test_ch6_equally_optimal_d_hand_out_different_neighbour_lists():
    # The top-10 lists of the three D of Figure 1 overlap only partly; the stretched D
    # keeps far fewer of them.
    from cosine_book.diagnostics import top_k_overlap

    data = make_clustered_interactions(n_users=2_000, n_items=200, seed=0)
    suite = item_similarity_suite(data.X, data.item_clusters, lam1=1_000.0, lam2=10.0)
    keys = [key for key in suite if key.startswith("obj. 1")]
    figure, stretched = keys[:3], keys[3]
    figure_overlaps = [
        top_k_overlap(suite[a], suite[b], 10) for a, b in itertools.combinations(figure, 2)
    ]
    stretched_overlaps = [top_k_overlap(suite[a], suite[stretched], 10) for a in figure]
    assert max(figure_overlaps) < 0.9
    assert max(stretched_overlaps) < 0.35 < min(figure_overlaps) - 0.2


@pytest.mark.parametrize("seed", [1, 2])
def test_ch6_standardised_x_raises_the_auc_but_lowers_the_top_10_share(seed):
    # Setting B's choices, objective 1 at alpha = 0: standardising X orders pairs across
    # the whole matrix better (AUC up) but the ten nearest neighbours worse (share down).
    data = make_clustered_interactions(n_users=2_000, n_items=200, seed=seed, **_SETTING_B)
    suite = item_similarity_suite(data.X, data.item_clusters, lam1=1_000.0, lam2=30.0)
    raw = cluster_recovery(suite["obj. 1, α = 0 (A = B)"], data.item_clusters)
    standardised = cluster_recovery(
        suite["remedy: standardised X, obj. 1 (α = 0)"], data.item_clusters
    )
    assert standardised.auc > raw.auc + 0.02
    assert standardised.neighbour_share < raw.neighbour_share - 0.02
