"""Tests for cosine_book.diagnostics: chapter 7's checks, as properties and tables."""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse
import torch
from bad_inputs import masked, with_entry
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from cosine_book.diagnostics import (
    all_but_the_top,
    centered_cosine_matrix,
    diagnose_pair,
    embedding_report,
    k_occurrence,
    neighbour_agreement,
    related_pair_cosines,
    top_k_neighbours,
    top_k_overlap,
    with_shared_direction,
)
from cosine_book.portable import standard_normal
from cosine_book.similarity import cosine, cosine_matrix

EPS = np.finfo(np.float64).eps
PROPERTY = settings(max_examples=100, deadline=None)
UNIT = {np.float16: 2.0**-11, np.float32: 2.0**-24, np.float64: 2.0**-53}
FACTORS = [0.3, 1 / 3, 2.5, 1e-3, 1e3, 7.0, -0.3, -1 / 3, -2.5, -1e-3, -1e3, -1.0]


class Wrapped:
    """A minimal array-like: its data through ``__array__`` (as a CPU tensor gives it)."""

    def __init__(self, data):
        self.data = data

    def __array__(self, dtype=None, copy=None):
        return self.data if dtype is None else self.data.astype(dtype, copy=False)


@st.composite
def embeddings(draw, min_rows=2, max_rows=8, min_dim=1, max_dim=5):
    """An (n, d) float64 matrix whose every row has an entry of magnitude >= 0.5."""
    shape = (draw(st.integers(min_rows, max_rows)), draw(st.integers(min_dim, max_dim)))
    finite = st.floats(-10, 10, allow_nan=False, allow_subnormal=False)
    E = draw(hnp.arrays(np.float64, shape, elements=finite))
    E[np.max(np.abs(E), axis=1) < 0.5, draw(st.integers(0, shape[1] - 1))] = 1.0
    return E


@st.composite
def typed_vectors(draw):
    """A float16, float32 or float64 vector of 1..300 entries in [-50, 50], subnormals included."""
    dtype = draw(st.sampled_from([np.float16, np.float32, np.float64]))
    size = draw(st.integers(1, 300))
    elements = st.floats(-50, 50, width=np.finfo(dtype).bits)
    values = draw(hnp.arrays(dtype, size, elements=elements))
    if not values.any():
        values[draw(st.integers(0, size - 1))] = 1.5
    return values


@st.composite
def similarity_matrices(draw, min_n=2, max_n=9):
    """A square matrix with many ties (few distinct values, signed zeros included)."""
    n = draw(st.integers(min_n, max_n))
    levels = st.sampled_from([-1.0, -0.0, 0.0, 0.25, 0.5, 0.5, 1.0, 2.0])
    return draw(hnp.arrays(np.float64, (n, n), elements=levels))


def brute_neighbours(S, k):
    """Top-k by (-S[i, j], j), self excluded: the documented rule, in plain Python."""
    n = len(S)
    return [
        sorted((j for j in range(n) if j != i), key=lambda j: (-S[i][j], j))[:k] for i in range(n)
    ]


def normal_in_both(a, b):
    """Entries where both vectors hold normal numbers (there the rounding is relative)."""
    tiny = np.finfo(a.dtype).smallest_normal
    return np.flatnonzero((np.abs(a) >= tiny) & (np.abs(b) >= tiny))


def kinds(rows):
    return [pair.kind for pair in rows.pairs]


# --- diagnose_pair: theorem "when the cosine is 1", under rounding -----------------------


def test_same_object_views_and_copies():
    a = np.array([1.0, -2.0, 3.0, 0.5])
    assert diagnose_pair(a, a).verdict.startswith("the same array compared with itself")
    for view in (a[:], a.reshape(2, 2).reshape(4), a.view(), Wrapped(a)):
        assert diagnose_pair(a, view).verdict.startswith("two views of the same memory (the same")
    assert diagnose_pair(a, a.copy()).verdict.startswith("two equal arrays (copies)")
    assert diagnose_pair(a, Wrapped(a.copy())).kind == "equal"
    x = np.arange(1.0, 7.0)
    overlap = diagnose_pair(x[:3], x[1:4])
    assert overlap.verdict.startswith("two views of the same memory (overlapping")
    assert diagnose_pair(x[::2], x[1::2]).kind == "different"  # interleaved: other bytes
    listed = [1.0, 2.0]
    assert diagnose_pair(listed, listed).kind == "same object"
    assert (diagnose_pair(a, a).cosine, diagnose_pair(a, a).factor) == (1.0, 1.0)


def test_multiples_and_other_pairs_in_words():
    a = np.array([0.3, -1.7, 2.9, 0.0, 1e-3])
    assert diagnose_pair(a, 2.5 * a).verdict == (
        "a positive multiple (factor κ = 2.5): the same direction, so cosine 1"
    )
    negative = diagnose_pair(a, -3.0 * a)
    assert negative.kind == "negative multiple" and negative.factor == pytest.approx(-3.0)
    assert negative.cosine == pytest.approx(-1.0, abs=4 * EPS)
    assert diagnose_pair(a, 2.0**-40 * a).factor == 2.0**-40  # powers of two: exact
    assert diagnose_pair([1.0, 0.0], [1.0, 1.0]).verdict == "different directions, cosine 0.71"
    assert diagnose_pair([1, 0], [0, 3]).verdict == "orthogonal directions, cosine 0"
    assert diagnose_pair([1.0, 0.0], [1.0, 0.001]).verdict.endswith("cosine 0.9999995")
    x = np.array([1.0, 2.0, 3.0])
    near = diagnose_pair(x, x + [1e-6, 0.0, 0.0])
    assert near.verdict.startswith("nearly parallel but not a multiple (cosine 1 - ")
    opposite = diagnose_pair(x, -x + [1e-6, 0.0, 0.0])
    assert opposite.verdict.startswith("nearly opposite but not a multiple")


@settings(max_examples=150, deadline=None)
@given(typed_vectors(), st.sampled_from(FACTORS))
def test_multiples_are_recognised_at_every_precision(a, factor):
    b = a * factor  # computed in a's dtype, as in PyTorch
    assume(b.any())
    result = diagnose_pair(a, b)
    assert result.precision == a.dtype.name
    if np.array_equal(a, b):
        assert result.kind == "equal"
        return
    sign = "positive" if factor > 0 else "negative"
    assert result.kind == f"{sign} multiple" and result.verdict.startswith(f"a {sign} multiple")
    if a.dtype != np.float64:
        assert f"up to {a.dtype.name} rounding" in result.verdict
    if normal_in_both(a, b).size:  # the scalar as a's dtype stores it, within 2u
        assert result.factor == pytest.approx(factor, rel=5 * UNIT[a.dtype.type])


@settings(max_examples=150, deadline=None)
@given(typed_vectors(), st.sampled_from(FACTORS), st.data())
def test_near_duplicates_are_not_multiples(a, factor, data):
    b = a * factor
    entries = normal_in_both(a, b)
    assume(entries.size >= 2)
    # One entry moved by more than two roundings allow (and the check's margin in float64).
    near = b.copy()
    index = data.draw(st.sampled_from(entries.tolist()))
    near.view(np.dtype(f"i{near.itemsize}"))[index] += 20 if a.dtype == np.float64 else 8
    assume(np.isfinite(near).all())
    result = diagnose_pair(a, near)
    assert result.factor is None and result.kind in (
        "nearly parallel",
        "nearly opposite",
        "different",
    )
    gap = 1 - abs(result.cosine)
    rounds = f"which rounds to {'1' if result.cosine > 0 else '-1'} in {a.dtype.name}"
    assert (rounds in result.verdict) == (0 < gap <= UNIT[a.dtype.type] / 2)


@pytest.mark.parametrize("library", ["numpy", "torch"])
def test_float32_multiples_and_near_duplicates(library):
    rng = np.random.default_rng(0)
    a, noise = (rng.normal(size=256).astype(np.float32) for _ in range(2))
    a, noise = (torch.from_numpy(v) if library == "torch" else v for v in (a, 1e-4 * noise))
    for b, factor in ((0.3 * a, 0.3), (a / 3, 1 / 3), (2.5 * a, 2.5), (-0.3 * a, -0.3)):
        result = diagnose_pair(a, b)
        assert result.precision == "float32" and result.kind.endswith("multiple")
        assert result.factor == pytest.approx(factor, rel=4 * UNIT[np.float32])
    assert "(factor κ = 0.3)" in diagnose_pair(a, 0.3 * a).verdict  # to 6 digits
    near = diagnose_pair(a, a + noise)
    assert near.kind == "nearly parallel" and near.factor is None
    assert "which rounds to 1 in float32" in near.verdict
    assert "more than float32 rounding allows" in near.verdict


def test_bfloat16_and_mixed_precisions():
    t = torch.randn(300, generator=torch.Generator().manual_seed(0)).bfloat16()
    for factor in (0.3, 1 / 3, -2.5):
        result = diagnose_pair(t, factor * t)
        assert result.precision == "bfloat16" and "up to bfloat16 rounding" in result.verdict
        assert result.factor == pytest.approx(factor, rel=5 * 2.0**-8)
    moved = t.clone()
    moved.view(torch.int16)[7] += 8
    assert diagnose_pair(t, moved).factor is None
    assert [diagnose_pair(t, b).kind for b in (t, t[:], t.clone())] == [
        "same object", "shared memory", "equal"]  # fmt: skip
    grad = torch.ones(3, dtype=torch.bfloat16, requires_grad=True)
    assert diagnose_pair(grad, [2.0, 2.0, 2.0]).factor == 2.0
    noise = torch.randn(100, 64, generator=torch.Generator().manual_seed(4))
    x = torch.randn(100, 64, generator=torch.Generator().manual_seed(3)).bfloat16()
    for size in (1e-2, 3e-2, 1e-1):
        assert not any(p.factor for p in diagnose_pair(x, (x.float() + size * noise).bfloat16(),
                                                       axis=-1).pairs)  # fmt: skip
    # A float32 a and a bfloat16 b allow one rounding of each (2^-8 + 2^-24, not 2^-7).
    ones, b = torch.ones(3), torch.tensor([1.0, 1.0, 1.0 + 2**-6]).bfloat16()
    assert diagnose_pair(ones, b).kind == "nearly parallel"  # two steps: beyond one rounding
    assert diagnose_pair(ones.bfloat16(), b).kind == "positive multiple"  # two roundings
    a = np.random.default_rng(2).normal(size=50)
    half = (0.3 * a).astype(np.float16)
    assert "up to float16 rounding, the precision of b" in diagnose_pair(a, half).verdict
    assert "the precision of a" in diagnose_pair(half, a).verdict
    assert diagnose_pair([1, 2, 3], np.float32([2, 4, 6])).precision == "float32"


def test_roundings_allow_a_chain_of_operations():
    # Three float32 multiplications by 1.1 need roundings=3; near-duplicates x + s z with
    # s >= 1e-7 (about 2 unit roundoffs) are multiples at no setting up to 8.
    x = standard_normal(np.random.default_rng(1), (100, 64)).astype(np.float32)
    chained = x * np.float32(1.1) * np.float32(1.1) * np.float32(1.1)
    assert "nearly parallel" in str(diagnose_pair(x, chained, axis=-1))
    assert str(diagnose_pair(x, chained, axis=-1, roundings=3)).endswith("100 positive multiple")
    noise = standard_normal(np.random.default_rng(2), x.shape).astype(np.float32)
    for size in (1e-7, 1e-6, 1e-4):
        for roundings in (2, 3, 4, 8):
            rows = diagnose_pair(x, x + np.float32(size) * noise, axis=-1, roundings=roundings)
            assert "positive multiple" not in kinds(rows), (size, roundings)
    # float16 with a subnormal entry: (a * 0.3) * 1.7 misses κ a there by 1.25 subnormal
    # steps; two roundings allow one step, three 1.5, and the verdict blames that entry.
    a = np.array([0.5, -0.25, 0.125, 0.7, -0.3, -1.341104507446289e-05], dtype=np.float16)
    b = (a * np.float16(0.3)) * np.float16(1.7)
    assert "its entries normal in float16 fit κ a" in diagnose_pair(a, b).verdict
    assert diagnose_pair(a, b, roundings=3).kind == "positive multiple"


def test_subnormal_vectors_and_norms_below_torchs_eps():
    tiny = diagnose_pair(np.float32([3e-45, 1e-45]), np.float32([3e-45, 3e-45]))
    assert tiny.kind == "positive multiple" and "only to within a subnormal step" in tiny.verdict
    assert diagnose_pair([2.0**-1074, 0.0], [2.0**-1073, 0.0]).factor == 2.0
    for size, value in ((1e-9, "0.02"), (1e-10, "0.0002")):
        v = torch.full((1, 4), size / 2)  # norm `size`: torch clamps it at eps = 1e-8
        given = torch.nn.functional.cosine_similarity(v, 2 * v, dim=-1).item()
        assert f"{given:.2g}" == value
        for diagnosis in (diagnose_pair(v, 2 * v, axis=-1).pairs[0], diagnose_pair(v[0], 2 * v[0])):
            assert diagnosis.kind == "positive multiple"
            assert diagnosis.verdict.endswith(f"F.cosine_similarity gives {value}")
    assert "torch's eps" not in diagnose_pair(np.ones(4), 2 * np.ones(4)).verdict


def test_row_mode_is_each_pair_and_matches_torch():
    A = torch.randn(6, 16, generator=torch.Generator().manual_seed(3))
    B = torch.randn(6, 16, generator=torch.Generator().manual_seed(4))
    B[:3] = A[:3] * torch.tensor([[0.3], [-2.0], [1 / 3]])
    rows = diagnose_pair(A, B, axis=-1)
    expected = torch.nn.functional.cosine_similarity(A.double(), B.double(), dim=-1)
    np.testing.assert_allclose([p.cosine for p in rows.pairs], expected, rtol=1e-12, atol=1e-15)
    assert kinds(rows)[:3] == ["positive multiple", "negative multiple", "positive multiple"]
    assert rows.pairs == tuple(diagnose_pair(a, b) for a, b in zip(A, B, strict=True))
    assert diagnose_pair(A, B, axis=1) == rows
    # Printed: the counts in a fixed order of the kinds.
    E = np.array([[1.0, 2.0], [3.0, 4.0], [1.0, 0.0], [1.0, 1.0]])
    F = np.array([[2.0, 4.0], [-3.0, -4.0], [0.0, 1.0], [1.0, 1.0]])
    assert str(diagnose_pair(E, F, axis=-1)) == (
        "4 row pairs (float64): 1 equal, 1 positive multiple, 1 negative multiple, 1 orthogonal"
    )
    assert str(diagnose_pair(E, E, axis=-1)) == "4 row pairs (float64): 4 same object"


def test_row_mode_reports_zero_and_non_finite_rows():
    # F.cosine_similarity gives 0 for a zero row and NaN for a NaN: reported, not refused.
    E = np.arange(12.0).reshape(4, 3) + 1
    bad = E.copy()
    bad[1, 1], bad[2, 0], bad[3] = np.nan, np.inf, 0.0
    rows = diagnose_pair(E.astype(np.float16), bad, axis=-1)
    assert str(rows) == "4 row pairs (float16): 1 equal, 1 zero vector, 2 non-finite"
    assert rows.pairs[1].verdict.startswith("non-finite entries (b, NaN or infinity)")
    assert rows.pairs[3].verdict == "zero vector (b), cosine undefined (torch reports 0)"
    assert math.isnan(rows.pairs[3].cosine) and rows.pairs[3].factor is None
    assert (
        diagnose_pair(bad, bad.copy(), axis=-1)
        .pairs[2]
        .verdict.startswith("non-finite entries (a and b,")
    )
    with pytest.raises(ValueError, match=r"b contains NaN \(first at flat index 1\)"):
        diagnose_pair(E[1], bad[1])


def test_torch_is_not_imported_by_the_module():
    code = "import sys, cosine_book.diagnostics; print('torch' in sys.modules)"
    output = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert output.stdout.strip() == "False"


# --- embedding_report and the proposition "a shared direction, and centring" ------------


@PROPERTY
@given(embeddings())
def test_embedding_report_matches_definitions(E):
    report = embedding_report(E)
    n, norms = E.shape[0], np.linalg.norm(E, axis=1)
    S = (E / norms[:, None]) @ (E / norms[:, None]).T
    singular = np.linalg.svd(E, compute_uv=False)
    p = singular[singular > 0] / singular.sum()
    assert (report.n_rows, report.dim) == E.shape
    for value, expected in (
        (report.mean_cosine, (S.sum() - np.trace(S)) / (n * (n - 1))),
        (report.mean_direction_share, np.sum(E.mean(axis=0) ** 2) / np.mean(norms**2)),
        (report.effective_rank, np.exp(-np.sum(p * np.log(p)))),
        (report.norm_spread, norms.std() / norms.mean()),
    ):
        assert value == pytest.approx(expected, rel=1e-10, abs=1e-12)
    assert report.near_duplicate_pairs == np.count_nonzero(np.triu(S, 1) >= 1 - 1e-9)


@PROPERTY
@given(embeddings(min_rows=3, min_dim=2), st.data())
def test_a_shared_vector_drives_cosines_to_one_and_leaves_centred_ones(E, data):
    v = data.draw(hnp.arrays(np.float64, E.shape[1], elements=st.floats(1, 10)))
    centred = E - E.mean(axis=0)
    smallest = np.min(np.linalg.norm(centred, axis=1))
    assume(smallest > 1e-2)
    reference, largest = centered_cosine_matrix(E), np.max(np.linalg.norm(E, axis=1))
    for size in (1e3, 1e6):
        shifted = E + size * v
        # Each row is within angle asin(r) of v, so cos >= cos(2 asin r) = 1 - 2 r^2.
        r = largest / (size * np.linalg.norm(v))
        assert embedding_report(shifted).mean_cosine >= 1 - 2 * r**2 - 1e-14
        # Centring rounds each entry to a few eps of the largest, M; the cosines of centred
        # rows of norm >= `smallest` move by about that over `smallest`.
        tol = 16 * EPS * np.max(np.abs(shifted)) * math.sqrt(E.shape[1]) / smallest
        np.testing.assert_allclose(centered_cosine_matrix(shifted), reference, rtol=0, atol=tol)


def test_summary_names_each_problem_and_no_remedy():
    rng = np.random.default_rng(0)
    healthy = rng.normal(size=(200, 20))

    def summary(E):
        text = embedding_report(E).summary()
        assert max(len(line) for line in text.splitlines()) <= 79
        return " ".join(text.split())

    # The all-clear says what the checks cannot see (chapter 7's referee: a zero-mean
    # rogue coordinate passes them).
    assert summary(healthy).startswith("200 embeddings of dimension 20") and summary(
        healthy
    ).endswith(
        "cannot see a rogue coordinate with zero mean or rescaled coordinates: compare "
        "neighbour_agreement on known related pairs on cosine_matrix and on "
        "centered_cosine_matrix"
    )
    rogue = healthy.copy()
    rogue[:, 0] *= 10.0  # zero mean, most of the spread: the mean cosine barely moves
    assert "no warning sign among these checks" in summary(rogue)
    assert summary(healthy).startswith("200 embeddings of dimension 20: mean cosine ")
    collapsed = rng.normal(size=(200, 1)) * rng.normal(size=(1, 20))
    for E in (healthy + 5.0, collapsed + 1e-3 * rng.normal(size=(200, 20))):
        text = summary(E)
        assert "a shared direction" in text and "cannot tell a shared offset" in text
        assert "pair_auc" in text and "centered_cosine_matrix" in text
        for remedy in ("retrain", "centre the", "has collapsed"):
            assert remedy not in text
    duplicated = healthy.copy()
    duplicated[1] = 3.0 * duplicated[0]
    assert "1 pair(s) of rows are near-duplicates" in summary(duplicated)
    spread = summary(healthy * np.exp(2 * rng.normal(size=(200, 1))))
    assert "norms vary a lot" in spread and "no warning sign" not in spread


def test_centred_effective_rank():
    assert embedding_report(np.eye(4)).centred_effective_rank == pytest.approx(3.0, rel=1e-14)
    assert embedding_report(np.tile([0.1, 0.7, -0.3], (5, 1))).centred_effective_rank == 0.0
    E = np.random.default_rng(6).normal(size=(30, 5)) + 3.0
    p = np.linalg.svd(E - E.mean(axis=0), compute_uv=False)
    p /= p.sum()
    assert embedding_report(E).centred_effective_rank == pytest.approx(
        np.exp(-np.sum(p * np.log(p))), rel=1e-12)  # fmt: skip


@PROPERTY
@given(embeddings(min_rows=3))
def test_centered_cosine_matrix_is_the_cosine_of_centred_rows(E):
    centred = E - E.mean(axis=0)
    smallest = np.min(np.linalg.norm(centred, axis=1))
    assume(smallest > 1e-3)
    result = centered_cosine_matrix(E)
    tol = 16 * EPS * np.max(np.abs(E)) * math.sqrt(E.shape[1]) / smallest
    np.testing.assert_allclose(result, cosine_matrix(centred), rtol=0, atol=tol)
    np.testing.assert_array_equal(result, result.T)


def test_centered_cosine_matrix_refuses_a_row_at_the_mean():
    with pytest.raises(ValueError, match="row 1 of E equals the mean row"):
        centered_cosine_matrix([[0.0, 1.0], [1.0, 1.0], [2.0, 1.0]])
    with pytest.raises(ValueError, match="row 2 of E equals the mean row"):  # up to rounding
        centered_cosine_matrix([[0.1, 0.3], [0.3, 0.1], [0.2, 0.2]])


@PROPERTY
@given(embeddings(min_rows=3), st.floats(0, 100, allow_subnormal=False))
def test_with_shared_direction_is_its_formula(E, t):
    mean = E.mean(axis=0)
    centred = E - mean
    spread = np.sqrt(np.mean(np.sum(centred**2, axis=1)))
    assume(np.min(np.linalg.norm(centred, axis=1)) > 1e-2 and np.linalg.norm(mean) > 1e-2)
    unit = mean / np.linalg.norm(mean)
    M = np.max(np.abs(E))
    tol = 16 * EPS * (M + t * spread * (1 + M / np.linalg.norm(mean)))
    result = with_shared_direction(E, t)
    np.testing.assert_allclose(result, centred + t * spread * unit, rtol=0, atol=tol)
    np.testing.assert_allclose(result.mean(axis=0), t * spread * unit, rtol=0, atol=tol)
    back = with_shared_direction(E, np.linalg.norm(mean) / spread)  # E itself
    np.testing.assert_allclose(back, E, rtol=0, atol=16 * EPS * M)


def test_with_shared_direction_known_values_and_a_zero_mean():
    E = np.array([[11.0, 10.0], [10.0, 11.0], [12.0, 12.0]])
    np.testing.assert_array_equal(with_shared_direction(E, 0.0), E - 11.0)
    expected = E - 11.0 + 2.0 * math.sqrt(4 / 3) / math.sqrt(2)
    np.testing.assert_allclose(with_shared_direction(E, 2), expected, rtol=0, atol=8 * EPS * 12)
    with pytest.raises(ValueError, match="the mean row of E is zero"):  # 5.6e-17, not 0
        with_shared_direction([[0.1, 1.0], [0.2, -1.0], [-0.3, 0.0]], 1.0)


# --- post-processing and hubness ---------------------------------------------------------


def test_all_but_the_top_centres_and_removes_the_directions():
    rng = np.random.default_rng(0)
    E = rng.normal(size=(50, 6)) * [5.0, 3.0, 1.0, 1.0, 1.0, 1.0] + 10.0
    for D in (0, 1, 3):
        result = all_but_the_top(E, D)
        np.testing.assert_allclose(result.mean(axis=0), 0.0, atol=1e-12)
        top = np.linalg.svd(E - E.mean(axis=0), full_matrices=False)[2][:D]
        np.testing.assert_allclose(result @ top.T, 0.0, atol=1e-10)
    fit = rng.normal(size=(80, 6))
    np.testing.assert_allclose(all_but_the_top(E, 0, fit=fit), E - fit.mean(axis=0))


def test_k_occurrence_counts_the_lists():
    X = np.random.default_rng(0).normal(size=(40, 5))
    S = cosine_matrix(X)
    np.fill_diagonal(S, -np.inf)
    lists = np.argsort(-S, axis=1)[:, :3]
    np.testing.assert_array_equal(k_occurrence(X, 3), np.bincount(lists.ravel(), minlength=40))
    assert k_occurrence(X, 3).sum() == 3 * 40


# --- neighbours and pairs ----------------------------------------------------------------


@PROPERTY
@given(similarity_matrices(), st.data())
def test_top_k_neighbours_follow_the_documented_tie_rule(S, data):
    k = data.draw(st.integers(1, S.shape[0] - 1))
    result = top_k_neighbours(S, k)
    assert result.dtype == np.intp and result.tolist() == brute_neighbours(S, k)


def test_top_k_neighbours_in_chunks_and_with_signed_zeros():
    S = np.random.default_rng(5).integers(0, 5, size=(600, 600)).astype(float)  # two chunks
    assert top_k_neighbours(S, 7).tolist() == brute_neighbours(S, 7)
    zeros = [[9.0, 0.0, -0.0], [-0.0, -9.0, 0.0], [0.0, 0.0, 0.0]]
    assert top_k_neighbours(zeros, 2).tolist() == [[1, 2], [0, 2], [0, 1]]


@PROPERTY
@given(similarity_matrices(), similarity_matrices(), st.data())
def test_top_k_overlap_and_neighbour_agreement_count_the_lists(S1, S2, data):
    n = min(len(S1), len(S2))
    S1, S2 = S1[:n, :n], S2[:n, :n]
    k = data.draw(st.integers(1, n - 1))
    first, second = brute_neighbours(S1, k), brute_neighbours(S2, k)
    shared = sum(len(set(a) & set(b)) for a, b in zip(first, second, strict=True))
    assert top_k_overlap(S1, S2, k) == top_k_overlap(S2, S1, k) == shared / (n * k)
    assert top_k_overlap(S1, S1, k) == 1.0
    labels = data.draw(st.lists(st.sampled_from("abc"), min_size=n, max_size=n))
    same = sum(labels[j] == labels[i] for i, row in enumerate(first) for j in row)
    assert neighbour_agreement(S1, labels, k) == same / (n * k)


@PROPERTY
@given(st.integers(2, 9), st.data())
def test_related_pair_cosines_counts_and_order(n, data):
    S = data.draw(hnp.arrays(np.float64, (n, n), elements=st.floats(-1, 1)))
    labels = data.draw(st.lists(st.sampled_from("abc"), min_size=n, max_size=n))
    related, unrelated = related_pair_cosines(S + np.tril(np.full((n, n), 5.0), -1), labels)
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]  # row-major, upper only
    assert related.tolist() == [S[i, j] for i, j in pairs if labels[i] == labels[j]]
    assert unrelated.tolist() == [S[i, j] for i, j in pairs if labels[i] != labels[j]]


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 10_000))
def test_pair_auc_is_the_mann_whitney_statistic_of_the_pairs(seed):
    # Chapter 7's threshold-free measure: rank-based, so any increasing map keeps it.
    from scipy.stats import mannwhitneyu

    from cosine_book.cluster_recovery import pair_auc

    rng = np.random.default_rng(seed)
    labels = np.arange(12) % 3
    S = rng.normal(size=(12, 12)).round(1)  # ties too
    related, unrelated = related_pair_cosines(S, labels)
    expected = mannwhitneyu(related, unrelated).statistic / (related.size * unrelated.size)
    assert pair_auc(S, labels) == pytest.approx(expected) == pair_auc(np.exp(S), labels)


# --- bad input ---------------------------------------------------------------------------

_v = np.array([1.0, 2.0, 3.0])
_E = np.array([[1.0, 0.0, 2.0], [0.5, 1.0, 0.0], [0.0, 2.0, 1.0], [1.0, 1.0, 1.0]])
_S = cosine_matrix(_E)

MATRIX_FUNCTIONS = [
    ("embedding_report", embedding_report, "E"),
    ("centered_cosine_matrix", centered_cosine_matrix, "E"),
    ("with_shared_direction", lambda E: with_shared_direction(E, 1.0), "E"),
    ("top_k_neighbours", lambda S: top_k_neighbours(S, 1), "S"),
    ("top_k_overlap-S2", lambda S: top_k_overlap(_S, S, 1), "S2"),
    ("neighbour_agreement", lambda S: neighbour_agreement(S, [0, 0, 1, 1], 1), "S"),
    ("related_pair_cosines", lambda S: related_pair_cosines(S, [0, 0, 1, 1]), "S"),
]
MATRIX_KINDS = [
    ("masked", lambda: masked(_S), "is a masked array"),
    ("sparse", lambda: scipy.sparse.csr_array(_S), "is a sparse csr_array"),
    ("complex", lambda: _S + 0j, "is complex"),
    ("ragged", lambda: [[1.0, 2.0], [3.0]], "is ragged"),
    ("NaN", lambda: with_entry(_S, (2, 1), np.nan), r"contains NaN \(first at flat index 9\)"),
    ("inf", lambda: with_entry(_S, (0, 3), -np.inf), "contains an infinite value"),
    ("1-D", lambda: np.ones(4), r"has shape \(4,\); expected a 2-D array"),
    ("one row", lambda: np.ones((1, 1)), r"has shape \(1, 1\); expected at least 2"),
]
PAIR = [  # diagnose_pair: (kind, call, message)
    ("sizes", lambda: diagnose_pair(_v, [1.0, 2.0]), r"a has shape \(3,\) but b .*\(2,\)"),
    ("2-D", lambda: diagnose_pair(np.ones((2, 3)), np.ones((2, 3))),
     r"a has shape \(2, 3\); diagnose_pair compares two 1-D vectors: pass axis=-1 .* or "
     r"flatten both \(a.ravel\(\)\)"),
    ("0-d b", lambda: diagnose_pair(_v, np.float64(3.0)), r"b is a single number \(shape \(\)\)"),
    ("zero a", lambda: diagnose_pair([0.0, -0.0, 0.0], _v), "a is the zero vector"),
    ("NaN a", lambda: diagnose_pair(with_entry(_v, 1, np.nan), _v), "a contains NaN"),
    ("inf b", lambda: diagnose_pair(_v, with_entry(_v, 2, np.inf)), "b contains an infinite"),
    ("complex a", lambda: diagnose_pair(_v + 1j, _v), "a is complex"),
    ("strings b", lambda: diagnose_pair(_v, ["1", "2", "3"]), "b is an array of strings"),
    ("masked b", lambda: diagnose_pair(_v, masked(_v)), "b is a masked array"),
    ("sparse a", lambda: diagnose_pair(scipy.sparse.csr_array(_E), _E), "a is a sparse"),
    ("empty b", lambda: diagnose_pair(_v, []), "b is empty"),
    ("None b", lambda: diagnose_pair(_v, None), "b is an array of Python objects"),
    ("NaN __array__", lambda: diagnose_pair(Wrapped(with_entry(_v, 0, np.nan)), _v),
     "a contains NaN"),
    ("inf float16", lambda: diagnose_pair(_v, np.float16([1, 2, np.inf])),
     r"b contains an infinite value \(first at flat index 2\)"),
    ("NaN bfloat16", lambda: diagnose_pair(torch.tensor([1.0, math.nan, 2.0]).bfloat16(), _v),
     r"a contains NaN \(first at flat index 1\)"),
    ("zero bfloat16", lambda: diagnose_pair(torch.zeros(3, dtype=torch.bfloat16), _v),
     "a is the zero vector"),
    ("2-D bfloat16", lambda: diagnose_pair(torch.ones(2, 3, dtype=torch.bfloat16), _v),
     r"a has shape \(2, 3\); diagnose_pair compares two 1-D vectors"),
    ("complex tensor", lambda: diagnose_pair(torch.ones(3) * 1j, _v), "a is complex"),
    ("meta tensor", lambda: diagnose_pair(_v, torch.ones(3, device="meta")),
     r"b is a torch tensor on meta; move it to the CPU first \(b.cpu\(\)\)"),
    ("sparse tensor", lambda: diagnose_pair(torch.eye(3).to_sparse()[0], _v),
     "a is a torch tensor NumPy cannot read"),
    ("beyond float64", lambda: diagnose_pair(1e300 * _v, 1e-300 * _v),
     "b / a is beyond the float64 range"),
    ("axis 0", lambda: diagnose_pair(_E, _E, axis=0), r"axis must be None .* got 0"),
    ("axis bool", lambda: diagnose_pair(_E, _E, axis=True), "axis must be .* got True"),
    ("rows 1-D", lambda: diagnose_pair(_v, _v, axis=-1),
     r"a has shape \(3,\); axis=-1 diagnoses the row pairs of 2-D batches .* drop axis"),
    ("rows 3-D", lambda: diagnose_pair(np.ones((2, 2, 5)), np.ones((2, 2, 5)), axis=-1),
     r"reshape it first \(a.reshape\(-1, 5\)\)"),
    ("rows shapes", lambda: diagnose_pair(_E, _E[:3], axis=-1),
     r"a has shape \(4, 3\) but b has shape \(3, 3\); .* row i of a is compared"),
    ("roundings 1", lambda: diagnose_pair(_v, _v, roundings=1), "roundings must be at least 2"),
    ("roundings 2.5", lambda: diagnose_pair(_v, _v, roundings=2.5), "roundings must be an int"),
]  # fmt: skip
OTHER = [  # (id, call, message)
    ("report-zero-row", lambda: embedding_report(with_entry(_E, 2, 0.0)),
     r"E has 1 zero row\(s\) \(first: row 2\)"),
    ("centred-equal-rows", lambda: centered_cosine_matrix([[1.0, 2.0], [1.0, 2.0]]),
     r"row 0 of E equals the mean row .* \(2 rows in all\)"),
    ("shared-strength", lambda: with_shared_direction(_E, -0.5), "strength must be nonnegative"),
    ("shared-NaN", lambda: with_shared_direction(_E, math.nan), "strength must be a finite"),
    ("shared-equal-rows", lambda: with_shared_direction([[1.0, 2.0]] * 3, 1.0),
     r"every row of E equals the mean row .* no spread \(ν = 0\)"),
    ("abtt-D", lambda: all_but_the_top(_E, 3), "n_components must be between 0 and 2"),
    ("abtt-fit", lambda: all_but_the_top(_E, 0, fit=np.ones((4, 2))), "fit has 2 columns"),
    ("hubs-k", lambda: k_occurrence(_E, 4), "k must be between 1 and 3"),
    ("hubs-zero", lambda: k_occurrence(with_entry(_E, 1, 0.0), 1), r"E has 1 zero row"),
    ("nonsquare", lambda: top_k_neighbours(np.ones((3, 4)), 1), "expected a square"),
    ("overlap-shapes", lambda: top_k_overlap(_S, np.ones((3, 3)), 1),
     r"S1 has shape \(4, 4\) but S2 has shape \(3, 3\)"),
    ("k-zero", lambda: top_k_neighbours(_S, 0), "k must be between 1 and 3; got 0"),
    ("k-float", lambda: top_k_neighbours(_S, 2.0), "k must be an integer; got 2.0"),
    ("k-bool", lambda: top_k_overlap(_S, _S, True), "k must be an integer; got True"),
    ("labels-short", lambda: neighbour_agreement(_S, [0, 1, 1], 1),
     "labels has 3 labels but there are 4 observations"),
    ("labels-mixed", lambda: related_pair_cosines(_S, [0, "0", 1, 1]),
     "labels mixes labels of different kinds"),
    ("labels-None", lambda: related_pair_cosines(_S, [0, None, 1, 1]),
     r"missing label \(None at index 1\)"),
]  # fmt: skip
BAD_INPUT = [
    *[pytest.param(call, match, id=f"pair-{kind}") for kind, call, match in PAIR],
    *[
        pytest.param(
            lambda f=function, make=make: f(make()), f"{name} {match}", id=f"{label}-{kind}"
        )
        for label, function, name in MATRIX_FUNCTIONS
        for kind, make, match in MATRIX_KINDS
    ],
    *[pytest.param(call, match, id=kind) for kind, call, match in OTHER],
]


@pytest.mark.parametrize(("call", "match"), BAD_INPUT)
def test_bad_input_table(call, match):
    with pytest.raises(ValueError, match=match):
        call()


EDGE_INPUT = [  # inputs at the edges that must give right answers
    pytest.param(lambda: diagnose_pair([True, False], [1, 0]).kind, "equal", id="pair-bool-int"),
    pytest.param(lambda: diagnose_pair([2.0], [-6.0]).factor, -3.0, id="pair-1-entry"),
    pytest.param(lambda: diagnose_pair(np.float16([1, 2]), np.float16([0.3, 0.6])).factor,
                 float(np.float16(0.3)), id="pair-f16-multiple"),  # the ratio, exactly
    pytest.param(lambda: diagnose_pair(torch.tensor([1.0, -2.0]).bfloat16(), [0.5, -1.0]).verdict,
                 "a positive multiple up to bfloat16 rounding, the precision of a (factor κ = 0.5):"
                 " the same direction, so cosine 1 up to rounding", id="pair-bf16-multiple"),
    pytest.param(lambda: diagnose_pair([1.0, 0.0], [2.0, 1e-300]).kind, "nearly parallel",
                 id="pair-zero-entry"),
    pytest.param(lambda: str(diagnose_pair(torch.ones(2, 3).bfloat16(), torch.ones(2, 3), axis=-1)),
                 "2 row pairs (bfloat16): 2 equal", id="rows-bf16-f32"),
    pytest.param(lambda: embedding_report(np.eye(3, dtype=int)).effective_rank, 3.0,
                 id="report-int"),
    pytest.param(lambda: embedding_report([[1.0], [-2.0]]).mean_cosine, -1.0, id="report-1-D"),
    pytest.param(lambda: centered_cosine_matrix([[1.0, 5.0], [3.0, 5.0]]).tolist(),
                 [[1.0, -1.0], [-1.0, 1.0]], id="centred-two-rows"),
    pytest.param(lambda: top_k_neighbours(np.zeros((4, 4), dtype=int), 3).tolist(),
                 [[1, 2, 3], [0, 2, 3], [0, 1, 3], [0, 1, 2]], id="nn-all-tied"),
    pytest.param(lambda: neighbour_agreement(np.eye(4) > 0, np.array([1, 1, 2, 2]), 1), 0.5,
                 id="agreement-bool-ties"),
    pytest.param(lambda: with_shared_direction([[-1.0, 1.0], [0.0, 1.0], [1.0, 1.0]], 0.5).tolist(),
                 [[x, 0.5 * math.sqrt(2 / 3)] for x in (-1.0, 0.0, 1.0)], id="shared-row-at-mean"),
    pytest.param(lambda: [a.tolist() for a in related_pair_cosines(np.eye(3) > 0, [7, 7, 7])],
                 [[0.0, 0.0, 0.0], []], id="related-one-label"),
]  # fmt: skip


@pytest.mark.parametrize(("call", "expected"), EDGE_INPUT)
def test_edge_input_table(call, expected):
    result = call()
    assert result == (
        pytest.approx(expected, rel=1e-14) if isinstance(expected, float) else expected
    )


def test_the_cosine_is_similaritys():
    a, b = np.array([1.0, 2.0, 3.0]), np.array([3.0, -1.0, 0.5])
    assert diagnose_pair(a, b).cosine == cosine(a, b)
