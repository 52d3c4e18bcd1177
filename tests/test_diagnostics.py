"""Tests for cosine_book.diagnostics: the checks of chapter 7, as properties and tables."""

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

from cosine_book import diagnostics
from cosine_book.diagnostics import (
    EmbeddingReport,
    PairDiagnosis,
    RowDiagnoses,
    centered_cosine_matrix,
    diagnose_pair,
    embedding_report,
    neighbour_agreement,
    related_pair_cosines,
    top_k_neighbours,
    top_k_overlap,
)
from cosine_book.portable import standard_normal
from cosine_book.similarity import cosine_matrix
from cosine_book.widgets.diagnostics import with_shared_direction

EPS = np.finfo(np.float64).eps
PROPERTY_SETTINGS = settings(max_examples=100, deadline=None)


class Wrapped:
    """A minimal array-like: exposes its data through ``__array__`` (like a CPU tensor)."""

    def __init__(self, data):
        self.data = data

    def __array__(self, dtype=None, copy=None):
        if copy:
            return np.array(self.data, dtype=dtype, copy=True)
        return self.data if dtype is None else self.data.astype(dtype, copy=False)


@st.composite
def vectors(draw, min_size=1, max_size=8):
    """A float64 vector with largest entry in [1, 10] in magnitude (never zero)."""
    size = draw(st.integers(min_size, max_size))
    values = draw(
        hnp.arrays(
            np.float64,
            size,
            elements=st.floats(-10, 10, allow_nan=False, allow_subnormal=False),
        )
    )
    if np.max(np.abs(values)) < 1:
        values[draw(st.integers(0, size - 1))] = draw(st.sampled_from([1.0, -1.0, 3.5]))
    return values


@st.composite
def embeddings(draw, min_rows=2, max_rows=8, min_dim=1, max_dim=5):
    """An (n, d) float64 matrix whose every row has an entry of magnitude >= 0.5."""
    n = draw(st.integers(min_rows, max_rows))
    d = draw(st.integers(min_dim, max_dim))
    E = draw(
        hnp.arrays(
            np.float64,
            (n, d),
            elements=st.floats(-10, 10, allow_nan=False, allow_subnormal=False),
        )
    )
    small = np.max(np.abs(E), axis=1) < 0.5
    E[small, draw(st.integers(0, d - 1))] = 1.0
    return E


@st.composite
def similarity_matrices(draw, min_n=2, max_n=9):
    """A square matrix with many ties (few distinct values, signed zeros included)."""
    n = draw(st.integers(min_n, max_n))
    levels = st.sampled_from([-1.0, -0.0, 0.0, 0.25, 0.5, 0.5, 1.0, 2.0])
    return draw(hnp.arrays(np.float64, (n, n), elements=levels))


def brute_neighbours(S, k):
    """Top-k by (-S[i, j], j), self excluded: the documented rule, in plain Python."""
    S = np.asarray(S, dtype=float)
    n = S.shape[0]
    return [
        sorted((j for j in range(n) if j != i), key=lambda j: (-S[i, j], j))[:k] for i in range(n)
    ]


# ---------------------------------------------------------------------------
# diagnose_pair
# ---------------------------------------------------------------------------


def test_diagnose_pair_same_object_view_copy():
    a = np.array([1.0, -2.0, 3.0, 0.5])
    same = diagnose_pair(a, a)
    assert isinstance(same, PairDiagnosis)
    assert same.same_object and same.shares_memory and same.identical
    assert same.cosine == 1.0 and same.positive_multiple == 1.0
    assert same.verdict.startswith("the same array compared with itself")
    assert (same.kind, same.factor, same.precision) == ("same object", 1.0, "float64")

    for view in (a[:], a.reshape(2, 2).reshape(4), a[::-1][::-1], a.view()):
        result = diagnose_pair(a, view)
        assert not result.same_object and result.shares_memory
        assert result.verdict.startswith("two views of the same memory (the same entries)")
        assert result.cosine == 1.0 and result.positive_multiple == 1.0

    copy = diagnose_pair(a, a.copy())
    assert not copy.same_object and not copy.shares_memory and copy.identical
    assert copy.verdict.startswith("two equal arrays (copies)")
    assert copy.positive_multiple == 1.0


def test_diagnose_pair_overlapping_views_with_different_entries():
    x = np.arange(1.0, 7.0)
    result = diagnose_pair(x[:3], x[1:4])
    assert result.shares_memory and not result.identical
    assert result.verdict.startswith("two views of the same memory (overlapping")
    assert f"cosine {result.cosine:.2g}" in result.verdict
    # Interleaved strides touch different bytes: not shared memory.
    assert not diagnose_pair(x[::2], x[1::2]).shares_memory


def test_diagnose_pair_array_like_objects():
    data = np.array([1.0, 2.0, 3.0])
    shared = diagnose_pair(Wrapped(data), Wrapped(data))
    assert shared.shares_memory and not shared.same_object
    assert shared.verdict.startswith("two views of the same memory")
    copied = diagnose_pair(Wrapped(data), Wrapped(data.copy()))
    assert not copied.shares_memory and copied.identical
    wrapper = Wrapped(data)
    assert diagnose_pair(wrapper, wrapper).same_object
    listed = [1.0, 2.0]
    assert diagnose_pair(listed, listed).verdict.startswith("the same array")
    assert diagnose_pair([1.0, 2.0], [1.0, 2.0]).verdict.startswith("two equal arrays")


def test_diagnose_pair_multiples():
    a = np.array([0.3, -1.7, 2.9, 0.0, 1e-3])
    half = diagnose_pair(a, 2.5 * a)
    assert half.positive_multiple == pytest.approx(2.5, rel=2 * EPS)
    assert half.verdict.startswith("a positive multiple (factor κ = 2.5)")
    assert half.cosine == pytest.approx(1.0, abs=4 * EPS)
    assert diagnose_pair(a, 4.0 * a).positive_multiple == 4.0
    assert diagnose_pair(a, 2.0**-40 * a).positive_multiple == 2.0**-40
    negative = diagnose_pair(a, -3.0 * a)
    assert negative.positive_multiple is None
    assert negative.verdict.startswith("a negative multiple (factor κ = -3)")
    assert negative.cosine == pytest.approx(-1.0, abs=4 * EPS)
    assert (negative.kind, negative.factor) == ("negative multiple", -3.0)
    # Another shape is refused (never silently flattened): see the bad-input table.
    with pytest.raises(ValueError, match="pass axis=-1"):
        diagnose_pair(a[:4], a[:4].copy().reshape(2, 2))


def test_diagnose_pair_generic_and_nearly_parallel():
    generic = diagnose_pair([1.0, 0.0], [1.0, 1.0])
    assert generic.positive_multiple is None and not generic.identical
    assert generic.verdict == "different directions, cosine 0.71"
    assert diagnose_pair([1, 0], [0, 3]).verdict == "orthogonal directions, cosine 0"
    # Perturbed far beyond rounding, but the angle is 1e-6: nearly parallel.
    x = np.array([1.0, 2.0, 3.0])
    near = diagnose_pair(x, x + np.array([1e-6, 0.0, 0.0]))
    assert near.positive_multiple is None
    assert near.verdict.startswith("nearly parallel but not a multiple (cosine 1 - ")
    opposite = diagnose_pair(x, -x + np.array([1e-6, 0.0, 0.0]))
    assert opposite.verdict.startswith("nearly opposite but not a multiple")
    # Cosines just below 1 are printed with enough digits not to read as 1.
    assert diagnose_pair([1.0, 0.0], [1.0, 0.001]).verdict == (
        "different directions, cosine 0.9999995"
    )


def test_diagnose_pair_factor_outside_the_float64_range():
    a = np.array([1.0, 2.0, -3.0])
    result = diagnose_pair(1e300 * a, 1e-300 * a)
    assert result.positive_multiple is None
    assert result.verdict.startswith("a positive multiple (factor κ = 1e-600 roughly, outside")
    assert result.cosine == pytest.approx(1.0, abs=4 * EPS)
    assert "κ = -1e600 roughly" in diagnose_pair(1e-300 * a, -1e300 * a).verdict


@pytest.mark.parametrize("scale", [1e300, 1e-300, 2.0**-1060, 1.7e308])
def test_diagnose_pair_at_extreme_scales(scale):
    a = np.array([1.0, -0.5, 0.25, 0.0])
    exact = diagnose_pair(scale * a, (scale / 4) * a)
    assert exact.positive_multiple == 0.25
    b = np.array([0.5, 1.0, 0.0, 0.0])
    generic = diagnose_pair(scale * a, scale * b)
    assert generic.cosine == pytest.approx(diagnose_pair(a, b).cosine, abs=4 * EPS)


@PROPERTY_SETTINGS
@given(
    vectors(),
    st.floats(1e-6, 1e6, allow_subnormal=False),
    st.integers(-60, 60),
    st.sampled_from([1, -1]),
)
def test_diagnose_pair_recovers_any_factor(a, t, power, sign):
    result = diagnose_pair(a, sign * t * a)
    if sign > 0:
        assert result.positive_multiple == pytest.approx(t, rel=2 * EPS)
        assert result.verdict.startswith(("a positive multiple", "two equal arrays"))
    else:
        assert result.positive_multiple is None
        assert result.verdict.startswith("a negative multiple")
    # Power-of-two factors are exact.
    assert diagnose_pair(a, 2.0**power * a).positive_multiple == 2.0**power


@PROPERTY_SETTINGS
@given(vectors(min_size=2))
def test_diagnose_pair_properties_of_one_array(a):
    assert diagnose_pair(a, a).verdict.startswith("the same array compared with itself")
    assert diagnose_pair(a, a.copy()).verdict.startswith("two equal arrays (copies)")
    assert diagnose_pair(a, a[:]).verdict.startswith("two views of the same memory")
    result = diagnose_pair(a, a.copy())
    assert result.cosine == 1.0 and result.positive_multiple == 1.0


@PROPERTY_SETTINGS
@given(vectors(min_size=2, max_size=6), st.data())
def test_diagnose_pair_generic_pairs_are_not_multiples(a, data):
    b = data.draw(vectors(min_size=a.size, max_size=a.size))
    result = diagnose_pair(a, b)
    assert result.cosine == diagnostics.cosine(a, b)
    if result.positive_multiple is not None:
        tol = 16 * EPS * np.max(np.abs(b))
        np.testing.assert_allclose(b, result.positive_multiple * a, rtol=0, atol=tol)
    if result.verdict.startswith("different directions"):
        assert abs(result.cosine) < 1 - 1e-9


# Multiples and near-duplicates at every precision (review of chapters 6-7, items 9 and 10)

UNIT = {np.float16: 2.0**-11, np.float32: 2.0**-24, np.float64: 2.0**-53}
FACTORS = [0.3, 1 / 3, 2.5, 1e-3, 1e3, 7.0, -0.3, -1 / 3, -2.5, -1e-3, -1e3, -1.0]


@st.composite
def typed_vectors(draw, max_size=300):
    """A float16, float32 or float64 vector of 1..300 entries in [-50, 50], subnormals included."""
    dtype = draw(st.sampled_from([np.float16, np.float32, np.float64]))
    size = draw(st.integers(1, max_size))
    width = np.finfo(dtype).bits
    values = draw(hnp.arrays(dtype, size, elements=st.floats(-50, 50, width=width)))
    if not values.any():
        values[draw(st.integers(0, size - 1))] = 1.5
    return values


def bumped(values, index, ulps):
    """A copy of ``values`` with entry ``index`` moved ``ulps`` units in the last place outwards."""
    moved = values.copy()
    moved.view(np.dtype(f"i{moved.itemsize}"))[index] += ulps
    return moved


def normal_in_both(a, b):
    """Entries where both vectors hold normal numbers (there the rounding is relative)."""
    tiny = np.finfo(a.dtype).smallest_normal
    return np.flatnonzero((np.abs(a) >= tiny) & (np.abs(b) >= tiny))


@settings(max_examples=150, deadline=None)
@given(typed_vectors(), st.sampled_from(FACTORS))
def test_diagnose_pair_recognises_multiples_at_every_precision(a, factor):
    b = a * factor  # computed in a's dtype, as in PyTorch
    assume(b.any())
    result = diagnose_pair(a, b)
    assert result.precision == a.dtype.name
    if np.array_equal(a, b):
        assert result.kind == "equal"
        return
    sign = "positive" if factor > 0 else "negative"
    assert result.kind == f"{sign} multiple"
    assert result.verdict.startswith(f"a {sign} multiple")
    if a.dtype != np.float64:
        assert f"up to {a.dtype.name} rounding" in result.verdict
    assert (result.positive_multiple is not None) == (factor > 0)
    if normal_in_both(a, b).size:
        # The factor is the scalar rounded to a's dtype, read to within 2u, then shortened.
        assert result.factor == pytest.approx(factor, rel=5 * UNIT[a.dtype.type])


@settings(max_examples=150, deadline=None)
@given(typed_vectors(), st.sampled_from(FACTORS), st.data())
def test_diagnose_pair_near_duplicates_are_not_multiples(a, factor, data):
    b = a * factor
    entries = normal_in_both(a, b)
    assume(entries.size >= 2)
    # One entry moved by more than two roundings allow (and the check's margin in float64).
    ulps = 20 if a.dtype == np.float64 else 8
    near = bumped(b, data.draw(st.sampled_from(entries.tolist())), ulps)
    assume(np.isfinite(near).all())
    result = diagnose_pair(a, near)
    assert result.factor is None and result.positive_multiple is None
    assert result.kind in ("nearly parallel", "nearly opposite", "different")
    assert "so cosine" not in result.verdict
    gap = 1 - abs(result.cosine)
    rounds = f"which rounds to {'1' if result.cosine > 0 else '-1'} in {a.dtype.name}"
    assert (rounds in result.verdict) == (0 < gap <= UNIT[a.dtype.type] / 2)


@pytest.mark.parametrize("library", ["numpy", "torch"])
def test_float32_multiples_are_recognised(library):
    # Review item 10: 0.3 * a, a / 3 and 2.5 * a in float32 were "not a multiple".
    a = np.random.default_rng(0).normal(size=256).astype(np.float32)
    if library == "torch":
        a = torch.from_numpy(a)
    for b, factor in ((0.3 * a, 0.3), (a / 3, 1 / 3), (2.5 * a, 2.5), (-0.3 * a, -0.3)):
        result = diagnose_pair(a, b)
        assert result.precision == "float32"
        assert result.kind == ("positive multiple" if factor > 0 else "negative multiple")
        assert result.factor == pytest.approx(factor, rel=4 * UNIT[np.float32])
    assert diagnose_pair(a, 0.3 * a).factor == 0.3  # the shortest decimal, not 0.30000001...


def test_float32_near_duplicates_are_not_multiples():
    # Review item 9: a + 1e-4 * noise has a cosine that rounds to 1 in float32.
    rng = np.random.default_rng(1)
    for _ in range(20):
        a = rng.normal(size=256).astype(np.float32)
        b = a + (1e-4 * rng.normal(size=256)).astype(np.float32)
        result = diagnose_pair(a, b)
        assert result.kind == "nearly parallel" and result.factor is None
        assert "which rounds to 1 in float32" in result.verdict
        assert "more than float32 rounding allows" in result.verdict


def test_bfloat16_tensors():
    t = torch.randn(300, generator=torch.Generator().manual_seed(0)).to(torch.bfloat16)
    for b, factor in ((0.3 * t, 0.3), (t / 3, 1 / 3), (-2.5 * t, -2.5)):
        result = diagnose_pair(t, b)
        assert result.precision == "bfloat16"
        assert result.factor == pytest.approx(factor, rel=5 * 2.0**-8)
        assert "up to bfloat16 rounding" in result.verdict
    moved = t.clone()
    moved.view(torch.int16)[7] += 8
    assert diagnose_pair(t, moved).factor is None
    assert diagnose_pair(t, t).kind == "same object"
    assert diagnose_pair(t, t[:]).kind == "shared memory"
    assert diagnose_pair(t, t.clone()).kind == "equal"
    assert diagnose_pair(t[:3], t[1:4]).shares_memory
    grad = torch.ones(3, dtype=torch.bfloat16, requires_grad=True)
    assert diagnose_pair(grad, [2.0, 2.0, 2.0]).factor == 2.0


def test_zero_rows_are_reported_per_row_not_refused():
    # Row mode reports a zero row (F.cosine_similarity clamps the norm and gives 0); one
    # pair of vectors still refuses a zero vector (the bad-input table).
    E = torch.tensor(_E, dtype=torch.float32)
    zeroed = E.clone()
    zeroed[2] = 0.0
    rows = diagnose_pair(E, zeroed, axis=-1)
    assert [pair.kind for pair in rows.pairs] == ["equal"] * 2 + ["zero vector", "equal"]
    assert rows.pairs[2].verdict == "zero vector (b), cosine undefined (torch reports 0)"
    assert math.isnan(rows.pairs[2].cosine) and rows.pairs[2].factor is None
    assert F_cosine(E, zeroed)[2] == 0.0
    assert str(rows) == "4 row pairs (float32): 3 equal, 1 zero vector"
    both = diagnose_pair(torch.zeros(2, 3, dtype=torch.bfloat16), torch.zeros(2, 3), axis=-1)
    assert {pair.verdict for pair in both.pairs} == {
        "zero vector (a and b), cosine undefined (torch reports 0)"
    }
    assert diagnose_pair(zeroed, zeroed, axis=-1).pairs[2].kind == "zero vector"
    with pytest.raises(ValueError, match="b is the zero vector"):
        diagnose_pair(E[2], zeroed[2])


def F_cosine(a, b):
    return torch.nn.functional.cosine_similarity(a, b, dim=-1)


def _chain(x, factor, length):
    for _ in range(length):
        x = x * factor
    return x


def test_roundings_allow_a_chain_of_operations():
    # Three float32 multiplications by 1.1 need roundings=3; near-duplicates x + s z are
    # called multiples at no setting up to 8 for s >= 1e-7 (about 2 float32 unit
    # roundoffs); below that they cannot be told from rounding (chapter 7 counts them).
    x = standard_normal(np.random.default_rng(1), (100, 64)).astype(np.float32)
    chained = _chain(x, np.float32(1.1), 3)
    assert "nearly parallel" in str(diagnose_pair(x, chained, axis=-1))
    assert str(diagnose_pair(x, chained, axis=-1, roundings=3)).endswith("100 positive multiple")
    verdict = [p.verdict for p in diagnose_pair(x, chained, axis=-1).pairs if p.factor is None]
    assert "float32 unit roundoffs" in verdict[0] and "allows (1.2e-07)" in verdict[0]
    noise = standard_normal(np.random.default_rng(2), x.shape).astype(np.float32)
    for size in (1e-7, 1e-6, 1e-4):
        near = x + np.float32(size) * noise
        for roundings in (2, 3, 4, 8):
            rows = diagnose_pair(x, near, axis=-1, roundings=roundings).pairs
            assert not any(p.kind == "positive multiple" for p in rows), (size, roundings)


def test_roundings_widen_the_subnormal_allowance_too():
    # float16: b = (a * 0.3) * 1.7. The last entry of a is subnormal; its products miss
    # κ a by 1.25 subnormal steps (the first rounding's half step grows by 1.7 before the
    # second). Two roundings allow one step, three 1.5; the verdict blames that entry,
    # since the normal entries fit. A change of 8 steps in a normal entry is no multiple.
    a = np.array([0.5, -0.25, 0.125, 0.7, -0.3, -1.341104507446289e-05], dtype=np.float16)
    b = (a * np.float16(0.3)) * np.float16(1.7)
    two = diagnose_pair(a, b)
    assert two.factor is None and "off by over half a subnormal step" in two.verdict
    assert "its entries normal in float16 fit κ a" in two.verdict
    assert diagnose_pair(a, b, roundings=3).kind == "positive multiple"
    near = b.copy()
    near[0] += np.float16(8 * 2.0**-12)  # 8 steps of float16 in [0.25, 0.5): exact
    for roundings in (2, 3, 4):
        assert diagnose_pair(a, near, roundings=roundings).factor is None


def test_bfloat16_multiples_and_near_duplicates():
    # bfloat16 inputs: multiples by PyTorch (one rounding) pass, near-duplicates do not;
    # a float32 a and a bfloat16 b allow one rounding of each (2^-8 + 2^-24, not 2^-7).
    x = torch.randn(100, 64, generator=torch.Generator().manual_seed(3)).bfloat16()
    for factor in (0.3, 1 / 3, 1.1, -2.5):
        kinds = {p.kind for p in diagnose_pair(x, x * factor, axis=-1).pairs}
        assert kinds == {"positive multiple" if factor > 0 else "negative multiple"}
    noise = torch.randn(100, 64, generator=torch.Generator().manual_seed(4))
    for size in (1e-2, 3e-2, 1e-1):
        near = (x.float() + size * noise).bfloat16()
        assert not any(p.factor for p in diagnose_pair(x, near, axis=-1).pairs), size
    a = torch.randn(64, generator=torch.Generator().manual_seed(5))
    assert diagnose_pair(a, (0.3 * a).bfloat16()).kind == "positive multiple"
    theta = diagnostics._allowance(
        diagnostics._PRECISIONS["float32"], diagnostics._PRECISIONS["bfloat16"], 2
    )
    assert theta == 2.0**-8 + 2.0**-24 + 4 * 2.0**-53
    ones, b = torch.ones(3), torch.tensor([1.0, 1.0, 1.0 + 2**-6]).bfloat16()
    assert diagnose_pair(ones, b).kind == "nearly parallel"  # two steps: beyond one rounding
    assert diagnose_pair(ones.bfloat16(), b).kind == "positive multiple"  # two roundings


def test_subnormal_vectors_say_so():
    a = np.array([3e-45, 1e-45], dtype=np.float32)
    b = np.array([3e-45, 3e-45], dtype=np.float32)
    result = diagnose_pair(a, b)
    assert result.kind == "positive multiple"
    assert "only to within a subnormal step" in result.verdict
    assert "no entry is normal (at least 1.2e-38 in float32)" in result.verdict
    normal = np.array([1.0, 2.0], dtype=np.float32)
    assert "subnormal" not in diagnose_pair(normal, 2 * normal).verdict


def test_mixed_dtypes_use_the_narrower_precision():
    a = np.random.default_rng(2).normal(size=50)
    half = (0.3 * a).astype(np.float16)
    result = diagnose_pair(a, half)
    assert result.precision == "float16" and result.kind == "positive multiple"
    assert "up to float16 rounding, the precision of b" in result.verdict
    assert "the precision of a" in diagnose_pair(half, a).verdict
    assert diagnose_pair([1, 2, 3], np.float32([2, 4, 6])).precision == "float32"
    assert diagnose_pair([1, 2, 3], [2.0, 4.0, 6.0]).precision == "float64"


def test_row_mode():
    A = np.array([[1.0, 2.0], [3.0, 4.0], [1.0, 0.0], [1.0, 1.0]])
    B = np.array([[2.0, 4.0], [-3.0, -4.0], [0.0, 1.0], [1.0, 1.0]])
    rows = diagnose_pair(A, B, axis=-1)
    assert isinstance(rows, RowDiagnoses) and len(rows.pairs) == 4
    kinds = [pair.kind for pair in rows.pairs]
    assert kinds == ["positive multiple", "negative multiple", "orthogonal", "equal"]
    # The counts in a fixed order of the verdicts, not in the order of the rows.
    assert (
        str(rows)
        == rows.summary()
        == (
            "4 row pairs (float64): 1 equal, 1 positive multiple, 1 negative multiple, 1 orthogonal"
        )
    )
    assert rows.pairs[0].factor == 2.0
    np.testing.assert_array_equal([pair.cosine for pair in rows.pairs], [1.0, -1.0, 0.0, 1.0])
    assert diagnose_pair(A, B, axis=1) == rows
    assert str(diagnose_pair(A, A, axis=-1)) == "4 row pairs (float64): 4 same object"
    assert str(diagnose_pair(A, A[:], axis=-1)) == "4 row pairs (float64): 4 shared memory"


def test_row_mode_matches_torch_dim_minus_one():
    generator = torch.Generator().manual_seed(3)
    A = torch.randn(6, 16, generator=generator)
    B = torch.randn(6, 16, generator=generator)
    B[:3] = A[:3] * torch.tensor([[0.3], [-2.0], [1 / 3]])
    rows = diagnose_pair(A, B, axis=-1)
    expected = torch.nn.functional.cosine_similarity(A.double(), B.double(), dim=-1)
    cosines = [pair.cosine for pair in rows.pairs]
    np.testing.assert_allclose(cosines, expected.numpy(), rtol=1e-12, atol=1e-15)
    kinds = [pair.kind for pair in rows.pairs[:3]]
    assert kinds == ["positive multiple", "negative multiple", "positive multiple"]
    assert rows.precision == "float32"
    for i, pair in enumerate(rows.pairs):
        assert pair == diagnose_pair(A[i], B[i])


@PROPERTY_SETTINGS
@given(embeddings(max_dim=6), st.data())
def test_row_mode_is_each_pair(A, data):
    factors = data.draw(hnp.arrays(np.float64, A.shape[0], elements=st.sampled_from(FACTORS)))
    B = A * factors[:, None]
    B[::2] = data.draw(
        embeddings(min_rows=A.shape[0], max_rows=A.shape[0], min_dim=A.shape[1], max_dim=A.shape[1])
    )[::2]
    rows = diagnose_pair(A, B, axis=-1)
    assert rows.pairs == tuple(diagnose_pair(A[i], B[i]) for i in range(A.shape[0]))


def test_torch_is_not_imported_by_the_module():
    code = "import sys, cosine_book.diagnostics; print('torch' in sys.modules)"
    output = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert output.stdout.strip() == "False"


# ---------------------------------------------------------------------------
# embedding_report
# ---------------------------------------------------------------------------


def direct_report(E):
    """The report's numbers from their definitions, with plain NumPy (inputs near 1)."""
    E = np.asarray(E, dtype=float)
    n = E.shape[0]
    norms = np.linalg.norm(E, axis=1)
    unit = E / norms[:, None]
    S = unit @ unit.T
    singular = np.linalg.svd(E, compute_uv=False)
    p = singular[singular > 0] / singular.sum()
    return {
        "mean_cosine": (S.sum() - np.trace(S)) / (n * (n - 1)),
        "mean_direction_share": np.sum(E.mean(axis=0) ** 2) / np.mean(norms**2),
        "top_component_share": singular[0] ** 2 / np.sum(singular**2),
        "effective_rank": np.exp(-np.sum(p * np.log(p))),
        "norm_spread": norms.std() / norms.mean(),
        "near_duplicate_pairs": int(np.count_nonzero(np.triu(S, 1) >= 1 - 1e-9)),
    }


FLOAT_FIELDS = [
    "mean_cosine",
    "mean_direction_share",
    "top_component_share",
    "effective_rank",
    "norm_spread",
]


def assert_reports_close(report, expected, tol=1e-12):
    expected = expected if isinstance(expected, dict) else vars(expected)
    for field in FLOAT_FIELDS:
        assert getattr(report, field) == pytest.approx(expected[field], rel=tol, abs=tol), field
    assert report.near_duplicate_pairs == expected["near_duplicate_pairs"]


def test_embedding_report_known_values():
    report = embedding_report(np.eye(4))
    assert isinstance(report, EmbeddingReport)
    assert (report.n_rows, report.dim) == (4, 4)
    assert report.mean_cosine == 0.0
    assert report.mean_direction_share == pytest.approx(0.25, rel=1e-15)
    assert report.top_component_share == pytest.approx(0.25, rel=1e-15)
    assert report.effective_rank == pytest.approx(4.0, rel=1e-14)
    assert report.norm_spread == 0.0 and report.near_duplicate_pairs == 0
    rank_one = embedding_report(np.outer([1.0, 2.0, -3.0], [1.0, 1.0, 0.5]))
    assert rank_one.effective_rank == pytest.approx(1.0, abs=1e-12)
    assert rank_one.top_component_share == pytest.approx(1.0, abs=1e-15)
    assert rank_one.near_duplicate_pairs == 1  # rows 0 and 1 point the same way
    assert rank_one.mean_cosine == pytest.approx(-1 / 3, rel=1e-14)


@PROPERTY_SETTINGS
@given(embeddings())
def test_embedding_report_matches_definitions(E):
    report = embedding_report(E)
    assert (report.n_rows, report.dim) == E.shape
    expected = direct_report(E)
    for field in FLOAT_FIELDS:
        assert getattr(report, field) == pytest.approx(expected[field], rel=1e-10, abs=1e-12)
    assert 0 <= report.mean_direction_share <= 1 and 0 < report.top_component_share <= 1
    assert 1 - 1e-12 <= report.effective_rank <= min(E.shape) + 1e-12
    assert -1 <= report.mean_cosine <= 1 and report.norm_spread >= 0


@PROPERTY_SETTINGS
@given(embeddings(), st.sampled_from([1e-300, 1e300, 2.0**-1000, 3e-150]))
def test_embedding_report_is_the_same_at_any_scale(E, scale):
    assert_reports_close(embedding_report(scale * E), embedding_report(E))


@PROPERTY_SETTINGS
@given(embeddings(), st.data())
def test_embedding_report_invariances(E, data):
    report = embedding_report(E)
    permutation = data.draw(st.permutations(range(E.shape[0])))
    assert_reports_close(embedding_report(E[list(permutation)]), report)
    # Scaling rows by positive factors (from 1e-300 to 1e300) leaves the cosines alone.
    factors = data.draw(
        hnp.arrays(np.float64, E.shape[0], elements=st.sampled_from([1e-300, 0.37, 3.0, 1e300]))
    )
    rescaled = embedding_report(E * factors[:, None])
    assert rescaled.mean_cosine == pytest.approx(report.mean_cosine, abs=1e-14)
    assert rescaled.near_duplicate_pairs == report.near_duplicate_pairs


@PROPERTY_SETTINGS
@given(embeddings(min_dim=2), vectors(min_size=5, max_size=5))
def test_a_shared_vector_drives_mean_cosine_to_one(E, direction):
    v = direction[: E.shape[1]].copy()
    if np.max(np.abs(v)) < 1:
        v[0] = 1.0
    largest = np.max(np.linalg.norm(E, axis=1))
    previous = None
    for size in [1e3, 1e6, 1e9]:
        report = embedding_report(E + size * v)
        # Each row is within angle asin(r) of v, so each pair within 2 asin(r):
        # cos >= cos(2 asin r) = 1 - 2 r**2, with r = max|e_i| / |size v|.
        r = largest / (size * np.linalg.norm(v))
        # (1e-14: rounding of the cosines and of their mean)
        assert report.mean_cosine >= 1 - 2 * r**2 - 1e-14
        assert report.mean_direction_share >= 1 - (r / (1 - r)) ** 2 - 1e-14
        if previous is not None:
            assert 1 - report.mean_cosine <= max(1 - previous, 0) + 1e-14
        previous = report.mean_cosine
    assert "a shared direction" in report.summary()


def test_embedding_report_in_chunks_matches_the_whole_matrix():
    rng = np.random.default_rng(3)
    n = 2 * diagnostics._CHUNK + 37  # three chunks, the last one short
    E = rng.normal(size=(n, 3))
    E[100] = 2.5 * E[7]  # a near-duplicate pair across chunks
    E[n - 1] = E[n - 2]
    report = embedding_report(E)
    S = cosine_matrix(E)
    assert report.mean_cosine == pytest.approx((S.sum() - n) / (n * (n - 1)), abs=1e-14)
    assert report.near_duplicate_pairs == np.count_nonzero(np.triu(S, 1) >= 1 - 1e-9) >= 2


def test_summary_names_each_problem():
    def summary(E):
        # Lines are wrapped at 79 characters; the checks read the unwrapped words.
        text = embedding_report(E).summary()
        assert max(len(line) for line in text.splitlines()) <= 79
        return text

    rng = np.random.default_rng(0)
    healthy = rng.normal(size=(200, 20))
    text = summary(healthy)
    assert text.splitlines()[-1] == "nothing looks wrong"
    assert text.startswith("200 embeddings of dimension 20: mean cosine ")

    shared = " ".join(summary(healthy + 5.0).split())
    assert "a shared direction" in shared
    assert "centered_cosine_matrix" in shared

    duplicated = healthy.copy()
    duplicated[1] = 3.0 * duplicated[0]
    text = " ".join(summary(duplicated).split())
    assert "1 pair(s) of rows are near-duplicates" in text

    collapsed = rng.normal(size=(200, 1)) * rng.normal(size=(1, 20))
    collapsed += 1e-3 * rng.normal(size=(200, 20))
    text = " ".join(summary(collapsed).split())
    assert "a shared direction" in text and "cannot tell a shared offset" in text

    spread = healthy * np.exp(2 * rng.normal(size=(200, 1)))
    text = " ".join(summary(spread).split())
    assert "norms vary a lot" in text and "dot product and cosine will rank differently" in text
    assert "nothing looks wrong" not in text


def _advice(E):
    return " ".join(embedding_report(E).summary().split())


def test_summary_gives_no_remedy_it_cannot_justify():
    # Review (chapter 7, item 1): without labels the report cannot tell a shared
    # offset from collapse, so it names neither remedy, for either kind of set.
    rng = np.random.default_rng(4)
    m = rng.normal(size=16)
    collapsed = 100 * m / np.linalg.norm(m) + rng.normal(size=(300, 16))  # one direction
    offset = 5.0 * rng.normal(size=20) + rng.normal(size=(200, 20))  # healthy, shifted
    shared = rng.normal(size=20)
    low_rank = shared + 1e-2 * rng.normal(size=(300, 2)) @ rng.normal(size=(2, 20))
    for E in (collapsed, offset, low_rank):
        text = _advice(E)
        assert "a shared direction" in text and "cannot tell a shared offset" in text
        for remedy in ("retrain", "centre the", "brings it out", "has collapsed"):
            assert remedy not in text
        assert "pair_auc" in text and "centered_cosine_matrix" in text
    assert "centred 15.9 of at most 16" in _advice(collapsed)


def test_centred_effective_rank():
    assert embedding_report(np.eye(4)).centred_effective_rank == pytest.approx(3.0, rel=1e-14)
    rank_one = np.outer([1.0, 2.0, -3.0, 0.5], [1.0, 1.0, 0.5])
    assert embedding_report(rank_one).centred_effective_rank == pytest.approx(1.0, abs=1e-12)
    equal_rows = np.tile([0.1, 0.7, -0.3], (5, 1))
    assert embedding_report(equal_rows).centred_effective_rank == 0.0
    E = np.random.default_rng(6).normal(size=(30, 5)) + 3.0
    singular = np.linalg.svd(E - E.mean(axis=0), compute_uv=False)
    p = singular / singular.sum()
    expected = np.exp(-np.sum(p * np.log(p)))
    assert embedding_report(E).centred_effective_rank == pytest.approx(expected, rel=1e-12)
    assert embedding_report(1e300 * E).centred_effective_rank == pytest.approx(expected, rel=1e-12)


# ---------------------------------------------------------------------------
# centered_cosine_matrix
# ---------------------------------------------------------------------------


def centred_rows(E):
    return E - E.mean(axis=0)


@PROPERTY_SETTINGS
@given(embeddings(min_rows=3))
def test_centered_cosine_matrix_is_cosine_of_centred_rows(E):
    C = centred_rows(E)
    assume(np.min(np.linalg.norm(C, axis=1)) > 1e-3)
    result = centered_cosine_matrix(E)
    expected = cosine_matrix(C)
    # Centring rounds each entry to about eps * max|E|; a cosine of rows of norm r moves
    # by about that over r.
    tol = 16 * EPS * np.max(np.abs(E)) * math.sqrt(E.shape[1]) / np.min(np.linalg.norm(C, axis=1))
    np.testing.assert_allclose(result, expected, rtol=0, atol=tol)
    np.testing.assert_array_equal(result, result.T)
    np.testing.assert_array_equal(np.diagonal(result), 1.0)


@PROPERTY_SETTINGS
@given(embeddings(min_rows=3, min_dim=2), vectors(min_size=5, max_size=5))
def test_a_shared_vector_leaves_centred_cosines_unchanged(E, direction):
    v = direction[: E.shape[1]]
    C = centred_rows(E)
    smallest = np.min(np.linalg.norm(C, axis=1))
    assume(smallest > 1e-2)
    reference = centered_cosine_matrix(E)
    for size in [1.0, 1e3, 1e6]:
        shifted = E + size * v
        # E + size v is rounded to eps/2 of its largest entry M; centring adds a few
        # such roundings per entry. A centred row of norm >= `smallest` then moves by
        # at most ~ 4 eps M sqrt(d), and its cosines by about twice that over `smallest`.
        M = np.max(np.abs(shifted))
        tol = 16 * EPS * M * math.sqrt(E.shape[1]) / smallest
        np.testing.assert_allclose(centered_cosine_matrix(shifted), reference, rtol=0, atol=tol)


@pytest.mark.parametrize("scale", [1e300, 1e-300, 2.0**-1040])
def test_centered_cosine_matrix_at_extreme_scales(scale):
    E = np.array([[3.0, 1.0, 0.5], [1.0, 4.0, 1.0], [0.0, 1.0, 5.0], [2.0, 2.0, 2.5]])
    np.testing.assert_allclose(
        centered_cosine_matrix(scale * E), centered_cosine_matrix(E), rtol=0, atol=1e-12
    )


def test_centered_cosine_matrix_refuses_a_row_equal_to_the_mean():
    with pytest.raises(ValueError, match="row 1 of E equals the mean row"):
        centered_cosine_matrix([[0.0, 1.0], [1.0, 1.0], [2.0, 1.0]])
    # Equal to the mean only up to rounding (0.1 + 0.3 + 0.2 != 0.6): still refused,
    # not turned into a cosine of rounding noise.
    with pytest.raises(ValueError, match="row 2 of E equals the mean row"):
        centered_cosine_matrix([[0.1, 0.3], [0.3, 0.1], [0.2, 0.2]])
    with pytest.raises(ValueError, match=r"row 0 of E .* \(3 rows in all\)"):
        centered_cosine_matrix([[0.1, 0.7]] * 3)


# ---------------------------------------------------------------------------
# top_k_neighbours, top_k_overlap, neighbour_agreement
# ---------------------------------------------------------------------------


@PROPERTY_SETTINGS
@given(similarity_matrices(), st.data())
def test_top_k_neighbours_follow_the_documented_tie_rule(S, data):
    n = S.shape[0]
    k = data.draw(st.integers(1, n - 1))
    result = top_k_neighbours(S, k)
    assert result.shape == (n, k) and result.dtype == np.intp
    assert result.tolist() == brute_neighbours(S, k)
    # The stable sort of -S with the diagonal left out gives the same lists.
    order = np.argsort(-S, axis=1, kind="stable")
    stable = [[j for j in row if j != i][:k] for i, row in enumerate(order.tolist())]
    assert result.tolist() == stable


def test_top_k_neighbours_ties_signed_zeros_and_the_diagonal():
    S = np.array(
        [
            [9.0, 0.0, -0.0, 0.0, 0.5],
            [-0.0, -9.0, 0.0, 0.0, 0.0],
            [1.0, 1.0, 1.0, 1.0, 1.0],
            [0.0, 2.0, 2.0, 5.0, 2.0],
            [0.0, 0.0, 0.0, 0.0, 0.0],
        ]
    )
    assert top_k_neighbours(S, 3).tolist() == [
        [4, 1, 2],
        [0, 2, 3],
        [0, 1, 3],
        [1, 2, 4],
        [0, 1, 2],
    ]
    assert top_k_neighbours(S, 4).tolist() == brute_neighbours(S, 4)


def test_top_k_neighbours_in_chunks_matches_the_stable_sort():
    rng = np.random.default_rng(5)
    n = diagnostics._CHUNK + 88
    S = rng.integers(0, 5, size=(n, n)).astype(float)
    order = np.argsort(-S, axis=1, kind="stable")
    expected = [[j for j in row if j != i][:7] for i, row in enumerate(order.tolist())]
    assert top_k_neighbours(S, 7).tolist() == expected


@PROPERTY_SETTINGS
@given(similarity_matrices(), similarity_matrices(), st.data())
def test_top_k_overlap_properties(S1, S2, data):
    n = min(S1.shape[0], S2.shape[0])
    S1, S2 = S1[:n, :n], S2[:n, :n]
    assume(n >= 2)
    k = data.draw(st.integers(1, n - 1))
    assert top_k_overlap(S1, S1, k) == 1.0
    overlap = top_k_overlap(S1, S2, k)
    assert overlap == top_k_overlap(S2, S1, k)
    assert 0.0 <= overlap <= 1.0
    first, second = brute_neighbours(S1, k), brute_neighbours(S2, k)
    shared = sum(len(set(a) & set(b)) for a, b in zip(first, second, strict=True))
    assert overlap == shared / (n * k)
    if k == n - 1:
        assert overlap == 1.0  # every other item is a neighbour under both


@PROPERTY_SETTINGS
@given(st.lists(st.integers(2, 5), min_size=1, max_size=4), st.data())
def test_neighbour_agreement_of_label_blocks_is_one(sizes, data):
    labels = np.repeat(np.arange(len(sizes)), sizes)
    permutation = np.array(data.draw(st.permutations(range(labels.size))))
    labels = labels[permutation]
    assume(labels.size >= 2)
    S = (labels[:, None] == labels[None, :]).astype(float)
    k = data.draw(st.integers(1, min(sizes) - 1))
    assert neighbour_agreement(S, labels, k) == 1.0
    assert neighbour_agreement(S, [f"group {label}" for label in labels], k) == 1.0
    S_noisy = S + 0.1 * data.draw(
        hnp.arrays(np.float64, S.shape, elements=st.floats(0, 1, allow_subnormal=False))
    )
    assert neighbour_agreement(S_noisy, labels, k) == 1.0


@PROPERTY_SETTINGS
@given(similarity_matrices(), st.data())
def test_neighbour_agreement_matches_brute_force(S, data):
    n = S.shape[0]
    labels = data.draw(st.lists(st.sampled_from("abc"), min_size=n, max_size=n))
    k = data.draw(st.integers(1, n - 1))
    expected = sum(
        sum(labels[j] == labels[i] for j in row) for i, row in enumerate(brute_neighbours(S, k))
    ) / (n * k)
    assert neighbour_agreement(S, labels, k) == expected


def test_neighbour_agreement_known_value():
    S = cosine_matrix([[1.0, 0.1], [1.0, 0.2], [0.1, 1.0], [0.2, 1.0], [1.0, 0.95]])
    labels = ["x", "x", "y", "y", "y"]
    # Item 4 (label y) is nearest to item 1 (cosine 0.846, label x), then to item 3.
    assert top_k_neighbours(S, 2).tolist() == [[1, 4], [0, 4], [3, 4], [2, 4], [1, 3]]
    assert neighbour_agreement(S, labels, 1) == 4 / 5
    assert neighbour_agreement(S, labels, 2) == 7 / 10


# ---------------------------------------------------------------------------
# with_shared_direction
# ---------------------------------------------------------------------------


def shared_direction_parts(E):
    """Mean row, its unit direction and the RMS norm s of the centred rows, in plain NumPy."""
    mean = E.mean(axis=0)
    centred = E - mean
    spread = np.sqrt(np.mean(np.sum(centred**2, axis=1)))
    norm = np.linalg.norm(mean)
    # A zero mean has no direction (the tests then assume it away).
    return mean, mean / norm if norm > 0 else np.zeros_like(mean), spread


def test_with_shared_direction_known_values():
    E = np.array([[11.0, 10.0], [10.0, 11.0], [12.0, 12.0]])
    np.testing.assert_array_equal(with_shared_direction(E, 0.0), E - 11.0)
    s = math.sqrt(4 / 3)
    expected = E - 11.0 + 2.0 * s / math.sqrt(2)
    np.testing.assert_allclose(with_shared_direction(E, 2), expected, rtol=0, atol=8 * EPS * 12)
    # The mean direction need not be along an axis diagonal; s counts every row.
    F = np.array([[3.0, 0.0], [1.0, 0.0], [2.0, 2.0], [2.0, -2.0]])  # mean [2, 0], s = sqrt(2.5)
    result = with_shared_direction(F, 1.0)
    np.testing.assert_allclose(result.mean(axis=0), [math.sqrt(2.5), 0.0], rtol=0, atol=1e-15)
    np.testing.assert_allclose(with_shared_direction(F, 2 / math.sqrt(2.5)), F, atol=1e-15)


@PROPERTY_SETTINGS
@given(embeddings(min_rows=3), st.floats(0, 100, allow_subnormal=False))
def test_with_shared_direction_properties(E, t):
    mean, unit, spread = shared_direction_parts(E)
    C = E - mean
    smallest = np.min(np.linalg.norm(C, axis=1))
    M = np.max(np.abs(E))
    assume(smallest > 1e-2 and np.linalg.norm(mean) > 1e-2)
    result = with_shared_direction(E, t)
    assert result.shape == E.shape
    # The rows are C + t s m_hat, each entry rounded a few times: within a few eps of
    # max|C| + t s. The reference m_hat and s (plain NumPy) are themselves off by about
    # eps M / |mean| relative, hence the last term.
    shared = t * spread
    tol = 16 * EPS * (M + shared * (1 + M / np.linalg.norm(mean)))
    np.testing.assert_allclose(result, C + shared * unit, rtol=0, atol=tol)
    # The mean row of the result is t s m_hat.
    np.testing.assert_allclose(result.mean(axis=0), shared * unit, rtol=0, atol=tol)
    # Centred cosines do not see the shared part. Centring the result rounds each entry to
    # a few eps of its largest entry (<= M + t s); a centred row of norm >= `smallest`
    # then moves by ~ 4 eps (M + t s) sqrt(d), and its cosines by about twice that over
    # `smallest` (as in test_a_shared_vector_leaves_centred_cosines_unchanged).
    cos_tol = 16 * EPS * (2 * M + shared) * math.sqrt(E.shape[1]) / smallest
    np.testing.assert_allclose(
        centered_cosine_matrix(result), centered_cosine_matrix(E), rtol=0, atol=cos_tol
    )
    # E = (E - mean) + mean: the strength |mean| / s gives E back, up to rounding.
    back = with_shared_direction(E, np.linalg.norm(mean) / spread)
    np.testing.assert_allclose(back, E, rtol=0, atol=16 * EPS * M)


@PROPERTY_SETTINGS
@given(embeddings(min_rows=3), st.sampled_from([0.0, 0.5, 3.0]))
def test_with_shared_direction_mean_cosine_grows_with_the_strength(E, t):
    mean, _, _ = shared_direction_parts(E)
    C = E - mean
    assume(np.min(np.linalg.norm(C, axis=1)) > 1e-2 and np.linalg.norm(mean) > 1e-2)
    low = embedding_report(with_shared_direction(E, t)).mean_cosine
    high = embedding_report(with_shared_direction(E, t + 100.0)).mean_cosine
    # Rows within angle asin(1 / t') of m_hat when |C_i| <= s * sqrt(n) ... a bound is
    # simpler in terms of the largest centred row r: each pair has cos >= 1 - 2 (r / t s)^2.
    r = np.max(np.linalg.norm(C, axis=1)) / (np.linalg.norm(C) / math.sqrt(E.shape[0]))
    assert high >= 1 - 2 * (r / (t + 100.0)) ** 2 - 1e-12
    assert high >= low - 1e-12


@PROPERTY_SETTINGS
@given(
    embeddings(min_rows=3),
    st.sampled_from([1e300, 1e-300, 2.0**-1000, 2.0**900]),
    st.sampled_from([0.0, 0.75, 7.0]),
)
def test_with_shared_direction_at_any_scale(E, scale, t):
    mean, _, _ = shared_direction_parts(E)
    assume(np.min(np.linalg.norm(E - mean, axis=1)) > 1e-2 and np.linalg.norm(mean) > 1e-2)
    reference = with_shared_direction(E, t)
    result = with_shared_direction(scale * E, t)
    if math.frexp(scale)[0] == 0.5 and scale > 2.0**-1000:
        # A power of two that keeps every entry normal: exactly the same arithmetic.
        np.testing.assert_array_equal(result, scale * reference)
    # Otherwise scale * E is rounded once (relative eps/2); the result follows to a few eps
    # of its largest entry (entries below the normal range lose their relative accuracy,
    # so compare in units of the largest entry).
    peak = np.max(np.abs(reference))
    np.testing.assert_allclose(result / scale, reference, rtol=0, atol=64 * EPS * peak)


def test_with_shared_direction_refuses_a_zero_mean_up_to_rounding():
    # 0.1 + 0.2 - 0.3 is 5.6e-17, not 0: still no mean direction.
    E = np.array([[0.1, 1.0], [0.2, -1.0], [-0.3, 0.0]])
    assert np.sum(E[:, 0]) != 0
    with pytest.raises(ValueError, match="the mean row of E is zero"):
        with_shared_direction(E, 1.0)
    # A mean well above rounding is accepted, however small next to the rows.
    E[2, 0] = -0.3 + 1e-9
    result = with_shared_direction(E, 1.0)
    assert result[0, 0] > result[0, 0] - result.mean(axis=0)[0]


def test_with_shared_direction_refuses_an_overflow():
    E = np.array([[1e308, 0.0], [0.0, 1e308]])
    assert np.max(np.abs(with_shared_direction(E, 1.0))) < np.inf
    # Centred rows +-5e307 (1, -1), s = 7.07e307, m_hat = (1, 1) / sqrt(2): at t = 3 the
    # largest entry is 5e307 + 3 * 5e307 = 2e308, beyond float64.
    assert np.max(np.abs(with_shared_direction(E, 2.0))) < np.inf
    with pytest.raises(ValueError, match="strength 3.0 is too large"):
        with_shared_direction(E, 3.0)
    # Entries near 2 tolerate any strength (t s m_hat <= 1.8e308 / 4 here) ...
    assert np.max(np.abs(with_shared_direction(np.eye(2) + 1.0, 1.7e308))) < np.inf
    # ... but not entries near 1.99, whose centred rows have norm > 2 in units of 2:
    # t s overflows already (refused before any array arithmetic).
    F = 1.99 * np.array([[1.0, -1.0, 1.0, -1.0], [-1.0, 1.0, -1.0, 1.0], [1.0, 1.0, 1.0, 1.0]])
    with pytest.raises(ValueError, match=r"strength 1e\+308 is too large"):
        with_shared_direction(F, 1e308)


# ---------------------------------------------------------------------------
# related_pair_cosines
# ---------------------------------------------------------------------------


@PROPERTY_SETTINGS
@given(st.integers(2, 9), st.data())
def test_related_pair_cosines_counts_and_order(n, data):
    S = data.draw(hnp.arrays(np.float64, (n, n), elements=st.floats(-1, 1, allow_subnormal=False)))
    labels = data.draw(st.lists(st.sampled_from("abc"), min_size=n, max_size=n))
    related, unrelated = related_pair_cosines(S, labels)
    counts = [labels.count(label) for label in set(labels)]
    same = sum(c * (c - 1) // 2 for c in counts)
    assert related.shape == (same,) and unrelated.shape == (n * (n - 1) // 2 - same,)
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]  # row-major
    assert related.tolist() == [S[i, j] for i, j in pairs if labels[i] == labels[j]]
    assert unrelated.tolist() == [S[i, j] for i, j in pairs if labels[i] != labels[j]]
    # Only the upper triangle is read.
    lower = S + np.tril(np.full((n, n), 5.0))
    upper_related, upper_unrelated = related_pair_cosines(lower, labels)
    np.testing.assert_array_equal(upper_related, related)
    np.testing.assert_array_equal(upper_unrelated, unrelated)


# ---------------------------------------------------------------------------
# Bad input: (function, input kind) -> expected error-message fragment
# ---------------------------------------------------------------------------

_v = np.array([1.0, 2.0, 3.0])
_E = np.array([[1.0, 0.0, 2.0], [0.5, 1.0, 0.0], [0.0, 2.0, 1.0], [1.0, 1.0, 1.0]])
_S = cosine_matrix(_E)


MATRIX_FUNCTIONS = [
    ("embedding_report", embedding_report, "E"),
    ("centered_cosine_matrix", centered_cosine_matrix, "E"),
    ("with_shared_direction", lambda E: with_shared_direction(E, 1.0), "E"),
    ("top_k_neighbours", lambda S: top_k_neighbours(S, 1), "S"),
    ("top_k_overlap-S1", lambda S: top_k_overlap(S, _S, 1), "S1"),
    ("top_k_overlap-S2", lambda S: top_k_overlap(_S, S, 1), "S2"),
    ("neighbour_agreement", lambda S: neighbour_agreement(S, [0, 0, 1, 1], 1), "S"),
    ("related_pair_cosines", lambda S: related_pair_cosines(S, [0, 0, 1, 1]), "S"),
]

MATRIX_KINDS = [
    # (input kind, the bad matrix, message fragment after the argument's name)
    ("masked", lambda: masked(_S), "is a masked array"),
    ("sparse", lambda: scipy.sparse.csr_array(_S), "is a sparse csr_array"),
    ("complex", lambda: _S + 0j, "is complex"),
    ("strings", lambda: [["1", "2"], ["3", "4"]], "is an array of strings"),
    ("ragged", lambda: [[1.0, 2.0], [3.0]], "is ragged"),
    (
        "objects",
        lambda: np.array([[1.0, None], [None, 1.0]], dtype=object),
        "is an array of Python",
    ),
    ("NaN", lambda: with_entry(_S, (2, 1), np.nan), r"contains NaN \(first at flat index 9\)"),
    ("inf", lambda: with_entry(_S, (0, 3), -np.inf), "contains an infinite value"),
    ("empty", lambda: np.ones((0, 4)), "is empty"),
    ("1-D", lambda: np.ones(4), r"has shape \(4,\); expected a 2-D array"),
    ("3-D", lambda: np.ones((2, 2, 2)), r"has shape \(2, 2, 2\); expected a 2-D array"),
    ("string", lambda: "S", "is a string"),
    ("one row", lambda: np.ones((1, 1)), r"has shape \(1, 1\); expected at least 2"),
]

BAD_INPUT = [
    # diagnose_pair: either argument
    *[
        pytest.param(call, match, id=f"diagnose_pair-{kind}")
        for kind, call, match in [
            ("sizes", lambda: diagnose_pair(_v, [1.0, 2.0]), r"a has shape \(3,\) but b .*\(2,\)"),
            (
                "2-D",
                lambda: diagnose_pair(np.ones((2, 3)), np.ones((2, 3))),
                r"a has shape \(2, 3\); diagnose_pair compares two 1-D vectors: pass axis=-1 "
                r"to diagnose each pair of rows .* or flatten both \(a.ravel\(\)\)",
            ),
            ("2-D b", lambda: diagnose_pair(_v, np.ones((1, 3))), r"b has shape \(1, 3\);"),
            ("0-d", lambda: diagnose_pair(2.0, -6.0), r"a is a single number \(shape \(\)\)"),
            ("0-d b", lambda: diagnose_pair(_v, np.float64(3.0)), "b is a single number"),
            ("zero a", lambda: diagnose_pair([0.0, -0.0, 0.0], _v), "a is the zero vector"),
            ("zero b", lambda: diagnose_pair(_v, np.zeros(3)), "b is the zero vector"),
            ("NaN a", lambda: diagnose_pair(with_entry(_v, 1, np.nan), _v), "a contains NaN"),
            (
                "inf b",
                lambda: diagnose_pair(_v, with_entry(_v, 2, np.inf)),
                "b contains an infinite",
            ),
            ("complex a", lambda: diagnose_pair(_v + 1j, _v), "a is complex"),
            ("strings b", lambda: diagnose_pair(_v, ["1", "2", "3"]), "b is an array of strings"),
            ("string a", lambda: diagnose_pair("abc", _v), "a is a string"),
            ("masked b", lambda: diagnose_pair(_v, masked(_v)), "b is a masked array"),
            ("sparse a", lambda: diagnose_pair(scipy.sparse.csr_array(_E), _E), "a is a sparse"),
            ("ragged a", lambda: diagnose_pair([[1.0], [1.0, 2.0]], _v), "a is ragged"),
            ("empty b", lambda: diagnose_pair(_v, []), "b is empty"),
            ("None b", lambda: diagnose_pair(_v, None), "b is an array of Python objects"),
            (
                "NaN in __array__",
                lambda: diagnose_pair(Wrapped(with_entry(_v, 0, np.nan)), _v),
                "a contains NaN",
            ),
            # float16, bfloat16 (PyTorch only) and other tensors
            (
                "NaN float16",
                lambda: diagnose_pair(np.float16([1, np.nan, 2]), _v),
                "a contains NaN",
            ),
            (
                "inf float16",
                lambda: diagnose_pair(_v, np.float16([1, 2, np.inf])),
                r"b contains an infinite value \(first at flat index 2\)",
            ),
            (
                "sizes float16",
                lambda: diagnose_pair(np.float16([1, 2]), _v),
                r"a has shape \(2,\) but b has shape \(3,\); expected the same shape",
            ),
            (
                "NaN bfloat16",
                lambda: diagnose_pair(torch.tensor([1.0, math.nan, 2.0], dtype=torch.bfloat16), _v),
                r"a contains NaN \(first at flat index 1\)",
            ),
            (
                "inf bfloat16",
                lambda: diagnose_pair(
                    _v, torch.tensor([1.0, 2.0, -math.inf], dtype=torch.bfloat16)
                ),
                "b contains an infinite value",
            ),
            (
                "zero bfloat16",
                lambda: diagnose_pair(torch.zeros(3, dtype=torch.bfloat16), _v),
                "a is the zero vector",
            ),
            (
                "2-D bfloat16",
                lambda: diagnose_pair(torch.ones(2, 3, dtype=torch.bfloat16), _v),
                r"a has shape \(2, 3\); diagnose_pair compares two 1-D vectors: pass axis=-1",
            ),
            (
                "empty bfloat16",
                lambda: diagnose_pair(_v, torch.ones(0, dtype=torch.bfloat16)),
                "b is empty",
            ),
            ("complex tensor", lambda: diagnose_pair(torch.ones(3) * 1j, _v), "a is complex"),
            (
                "meta tensor",
                lambda: diagnose_pair(_v, torch.ones(3, device="meta")),
                r"b is a torch tensor on meta; move it to the CPU first \(b.cpu\(\)\)",
            ),
            (
                "sparse tensor",
                lambda: diagnose_pair(torch.eye(3).to_sparse()[0], _v),
                "a is a torch tensor NumPy cannot read",
            ),
            # the row mode (axis=-1) and its 2-D batches
            ("axis 0", lambda: diagnose_pair(_E, _E, axis=0), r"axis must be None .* got 0"),
            ("axis bool", lambda: diagnose_pair(_E, _E, axis=True), "axis must be .* got True"),
            ("axis str", lambda: diagnose_pair(_E, _E, axis="rows"), "got 'rows'"),
            (
                "rows 1-D",
                lambda: diagnose_pair(_v, _v, axis=-1),
                r"a has shape \(3,\); axis=-1 diagnoses the row pairs of 2-D batches of shape "
                r"\(n, d\): drop axis",
            ),
            (
                "rows 3-D",
                lambda: diagnose_pair(np.ones((2, 2, 5)), np.ones((2, 2, 5)), axis=-1),
                r"a has shape \(2, 2, 5\); .* reshape it first \(a.reshape\(-1, 5\)\)",
            ),
            (
                "rows shapes",
                lambda: diagnose_pair(_E, _E[:3], axis=-1),
                r"a has shape \(4, 3\) but b has shape \(3, 3\); .* row i of a is compared",
            ),
            ("roundings 1", lambda: diagnose_pair(_v, _v, roundings=1), "roundings must be"),
            ("roundings 2.5", lambda: diagnose_pair(_v, _v, roundings=2.5), "roundings must be"),
            (
                "rows tensor 3-D",
                lambda: diagnose_pair(torch.ones(2, 2, 2), torch.ones(2, 2, 2), axis=-1),
                r"a has shape \(2, 2, 2\); axis=-1",
            ),
        ]
    ],
    # the matrix functions, every kind of bad matrix
    *[
        pytest.param(
            lambda f=function, make=make: f(make()),
            f"{name} {match}",
            id=f"{label}-{kind}",
        )
        for label, function, name in MATRIX_FUNCTIONS
        for kind, make, match in MATRIX_KINDS
    ],
    # zero rows, shapes, k and labels
    pytest.param(
        lambda: embedding_report(with_entry(_E, 2, 0.0)), "E has 1 zero row", id="report-zero"
    ),
    pytest.param(
        lambda: embedding_report(np.zeros((3, 2))),
        r"3 zero row\(s\) \(first: row 0\)",
        id="report-all-zero",
    ),
    pytest.param(
        lambda: centered_cosine_matrix(np.zeros((3, 2))),
        "row 0 of E equals the mean row",
        id="centered-all-zero",
    ),
    pytest.param(
        lambda: centered_cosine_matrix([[1.0, 2.0], [1.0, 2.0]]),
        r"row 0 of E equals the mean row .* \(2 rows in all\)",
        id="centered-equal-rows",
    ),
    pytest.param(lambda: top_k_neighbours(np.ones((3, 4)), 1), "expected a square", id="nonsquare"),
    pytest.param(
        lambda: top_k_overlap(_S, np.ones((3, 3)), 1),
        r"S1 has shape \(4, 4\) but S2 has shape \(3, 3\)",
        id="overlap-shapes",
    ),
    pytest.param(lambda: top_k_overlap(_S, _S.T[:, :3], 1), "S2 has shape", id="overlap-square"),
    *[
        pytest.param(call, match, id=f"k-{kind}")
        for kind, call, match in [
            ("zero", lambda: top_k_neighbours(_S, 0), "k must be between 1 and 3; got 0"),
            ("n", lambda: top_k_overlap(_S, _S, 4), "k must be between 1 and 3; got 4"),
            ("negative", lambda: neighbour_agreement(_S, [0] * 4, -1), "k must be between 1"),
            ("float", lambda: top_k_neighbours(_S, 2.0), "k must be an integer; got 2.0"),
            ("bool", lambda: top_k_overlap(_S, _S, True), "k must be an integer; got True"),
            ("string", lambda: neighbour_agreement(_S, [0] * 4, "2"), "k must be an integer"),
            ("None", lambda: top_k_neighbours(_S, None), "k must be an integer; got None"),
        ]
    ],
    *[
        pytest.param(
            lambda labels=labels: neighbour_agreement(_S, labels, 1), match, id=f"labels-{kind}"
        )
        for kind, labels, match in [
            ("short", [0, 1, 1], "labels has 3 labels but there are 4 observations"),
            ("2-D", np.zeros((2, 2), dtype=int), r"labels has shape \(2, 2\)"),
            ("mixed", [0, "0", 1, 1], "labels mixes labels of different kinds"),
            ("None", [0, None, 1, 1], r"missing label \(None at index 1\)"),
            ("NaN", np.array([0.0, 1.0, np.nan, 1.0]), r"missing label \(NaN at index 2\)"),
            ("string", "abcd", "labels is a string"),
        ]
    ],
    *[
        pytest.param(
            lambda strength=strength: with_shared_direction(_E, strength),
            match,
            id=f"strength-{kind}",
        )
        for kind, strength, match in [
            ("negative", -0.5, "strength must be nonnegative; got -0.5"),
            ("NaN", math.nan, "strength must be a finite real number; got nan"),
            ("inf", math.inf, "strength must be a finite real number; got inf"),
            ("string", "1", "strength must be a real number; got '1'"),
            ("None", None, "strength must be a real number; got None"),
            ("bool", True, "strength must be a real number; got True"),
            ("array", np.ones(2), "strength must be a real number"),
            ("complex", 1j, "strength must be a real number"),
        ]
    ],
    pytest.param(
        lambda: with_shared_direction(1e300 * _E, 1e10),
        r"strength 10000000000.0 is too large: the rows would overflow float64",
        id="shared-overflow",
    ),
    pytest.param(
        lambda: with_shared_direction([[1.0, 2.0], [-1.0, -2.0]], 1.0),
        "the mean row of E is zero .* no mean direction",
        id="shared-zero-mean",
    ),
    pytest.param(
        lambda: with_shared_direction(np.zeros((3, 2)), 0.0),
        "the mean row of E is zero",
        id="shared-all-zero",
    ),
    pytest.param(
        lambda: with_shared_direction([[1.0, 2.0], [1.0, 2.0], [1.0, 2.0]], 1.0),
        r"every row of E equals the mean row .* no spread \(ν = 0\)",
        id="shared-equal-rows",
    ),
    pytest.param(
        lambda: related_pair_cosines(np.ones((3, 4)), [0, 1, 2]),
        "expected a square",
        id="related-nonsquare",
    ),
    *[
        pytest.param(
            lambda labels=labels: related_pair_cosines(_S, labels), match, id=f"related-{kind}"
        )
        for kind, labels, match in [
            ("short", [0, 1, 1], "labels has 3 labels but there are 4 observations"),
            ("2-D", np.zeros((2, 2), dtype=int), r"labels has shape \(2, 2\)"),
            ("mixed", [0, "0", 1, 1], "labels mixes labels of different kinds"),
            ("None", [0, None, 1, 1], r"missing label \(None at index 1\)"),
            ("NaN", np.array([0.0, 1.0, np.nan, 1.0]), r"missing label \(NaN at index 2\)"),
            ("string", "abcd", "labels is a string"),
        ]
    ],
]


@pytest.mark.parametrize(("call", "match"), BAD_INPUT)
def test_bad_input_table(call, match):
    with pytest.raises(ValueError, match=match):
        call()


GOOD_EDGE_INPUT = [
    # (call, expected value): inputs at the edges that must give right answers
    pytest.param(lambda: diagnose_pair([True, False], [1, 0]).identical, True, id="pair-bool-int"),
    pytest.param(
        lambda: diagnose_pair(np.float32([1.5, 2.0]), [1.5, 2.0]).identical, True, id="pair-f32"
    ),
    pytest.param(
        lambda: diagnose_pair([2.0], [-6.0]).verdict.split(":")[0],
        "a negative multiple (factor κ = -3)",
        id="pair-1-entry",
    ),
    pytest.param(
        lambda: diagnose_pair(np.ones((2, 3)).ravel(), np.ones(6)).positive_multiple,
        1.0,
        id="pair-flattened",
    ),
    pytest.param(
        lambda: diagnose_pair(np.float16([1, 2]), np.float16([0.3, 0.6])).factor,
        0.3,
        id="pair-f16-multiple",
    ),
    pytest.param(
        lambda: diagnose_pair(torch.tensor([1.0, -2.0], dtype=torch.bfloat16), [0.5, -1.0]).verdict,
        "a positive multiple up to bfloat16 rounding, the precision of a (factor κ = 0.5): the "
        "same direction, so cosine 1 up to rounding",
        id="pair-bf16-multiple",
    ),
    pytest.param(
        lambda: diagnose_pair([2.0**-1074, 0.0], [2.0**-1073, 0.0]).factor, 2.0, id="pair-subnormal"
    ),
    pytest.param(
        lambda: diagnose_pair([1.0, 0.0], [2.0, 1e-300]).kind,
        "nearly parallel",
        id="pair-zero-entry",
    ),
    pytest.param(
        lambda: diagnose_pair(
            torch.ones(2, 3, dtype=torch.bfloat16), torch.ones(2, 3), axis=-1
        ).summary(),
        "2 row pairs (bfloat16): 2 equal",
        id="rows-bf16-f32",
    ),
    pytest.param(
        lambda: str(diagnose_pair(np.float16([[1, 2]]), np.float16([[3, 6]]), axis=-1)),
        "1 row pairs (float16): 1 positive multiple",
        id="rows-f16-one-row",
    ),
    pytest.param(
        lambda: diagnose_pair([1e-300, 0.0], [0.0, 3e300]).verdict,
        "orthogonal directions, cosine 0",
        id="pair-extreme",
    ),
    pytest.param(
        lambda: embedding_report(np.eye(3, dtype=int)).effective_rank, 3.0, id="report-int"
    ),
    pytest.param(
        lambda: embedding_report(Wrapped(np.eye(3) > 0)).mean_cosine, 0.0, id="report-bool"
    ),
    pytest.param(
        lambda: embedding_report(np.eye(2) * 1.7e308).mean_direction_share, 0.5, id="report-max"
    ),
    pytest.param(lambda: embedding_report([[1.0], [-2.0]]).mean_cosine, -1.0, id="report-1-D-rows"),
    pytest.param(
        lambda: centered_cosine_matrix([[1.0, 5.0], [3.0, 5.0]]).tolist(),
        [[1.0, -1.0], [-1.0, 1.0]],
        id="centered-two-rows",
    ),
    pytest.param(
        lambda: top_k_neighbours([[0.0, -0.0], [-0.0, 0.0]], 1).tolist(), [[1], [0]], id="nn-2"
    ),
    pytest.param(
        lambda: top_k_neighbours(np.zeros((4, 4), dtype=int), 3).tolist(),
        [[1, 2, 3], [0, 2, 3], [0, 1, 3], [0, 1, 2]],
        id="nn-all-tied",
    ),
    pytest.param(lambda: top_k_overlap(_S, -_S, 3), 1.0, id="overlap-k-max"),
    pytest.param(
        lambda: neighbour_agreement(np.eye(4) > 0, np.array([1, 1, 2, 2]), 1),
        0.5,
        id="agreement-bool-ties",
    ),
    pytest.param(
        lambda: with_shared_direction([[1.0, 5.0], [3.0, 5.0]], 0.0).tolist(),
        [[-1.0, 0.0], [1.0, 0.0]],
        id="shared-two-rows-centred",
    ),
    pytest.param(
        lambda: with_shared_direction(np.array([[1, 5], [-1, 5]]), 2).tolist(),
        [[1.0, 2.0], [-1.0, 2.0]],
        id="shared-int",
    ),
    pytest.param(
        # One row at the mean is allowed here (it becomes t s m_hat).
        lambda: with_shared_direction([[-1.0, 1.0], [0.0, 1.0], [1.0, 1.0]], 0.5).tolist(),
        # mean [0, 1], s = sqrt(2/3): t s m_hat = [0, 0.5 sqrt(2/3)]
        [[x, 0.5 * math.sqrt(2 / 3)] for x in (-1.0, 0.0, 1.0)],
        id="shared-row-at-the-mean",
    ),
    pytest.param(
        lambda: with_shared_direction(np.array([[1.7e308, 0.0], [0.0, 1.7e308]]), 0.0)[0, 0],
        0.85e308,
        id="shared-max",
    ),
    pytest.param(
        lambda: str([a.tolist() for a in related_pair_cosines([[1, 2], [3, 4]], ["x", "y"])]),
        "[[], [2.0]]",
        id="related-2-different",
    ),
    pytest.param(
        lambda: str([a.tolist() for a in related_pair_cosines(np.eye(3) > 0, [7, 7, 7])]),
        "[[0.0, 0.0, 0.0], []]",
        id="related-bool-one-label",
    ),
]


@pytest.mark.parametrize(("call", "expected"), GOOD_EDGE_INPUT)
def test_edge_input_table(call, expected):
    result = call()
    if isinstance(expected, (str, bool)):
        assert result == expected
    else:
        np.testing.assert_allclose(result, expected, rtol=1e-14, atol=0)


@pytest.mark.parametrize(("size", "value"), [(1e-9, "0.02"), (1e-10, "0.0002")])
def test_a_norm_below_torchs_eps_is_flagged(size, value):
    # Review (chapter 7, item 5): torch clamps each norm at eps = 1e-8, so its cosine of
    # v and 2 v is far from 1; the check still finds the multiple and says what torch gives.
    torch = pytest.importorskip("torch")
    v = torch.full((1, 4), size / 2)  # norm `size`
    given = torch.nn.functional.cosine_similarity(v, 2 * v, dim=-1).item()
    assert f"{given:.2g}" == value
    for diagnosis in (diagnose_pair(v, 2 * v, axis=-1).pairs[0], diagnose_pair(v[0], 2 * v[0])):
        assert diagnosis.kind == "positive multiple"
        assert diagnosis.verdict.endswith(
            f"a norm is below torch's eps (1e-8): F.cosine_similarity gives {value}"
        )
    assert "torch's eps" not in diagnose_pair(v[0] / size, 2 * v[0] / size).verdict


def test_rows_report_non_finite_rows_one_by_one():
    # Review (chapter 7, item 6): one NaN or infinite row no longer refuses the batch;
    # two vectors (no axis) are still refused with a ValueError.
    E = np.arange(12.0).reshape(4, 3) + 1
    bad = E.copy()
    bad[1, 1], bad[2, 0] = np.nan, np.inf
    rows = diagnose_pair(E.astype(np.float16), bad, axis=-1)
    assert [p.kind for p in rows.pairs] == ["equal", "non-finite", "non-finite", "equal"]
    assert rows.pairs[1].verdict.startswith("non-finite entries (b, NaN or infinity)")
    assert math.isnan(rows.pairs[1].cosine) and rows.pairs[1].factor is None
    assert str(rows) == "4 row pairs (float16): 2 equal, 2 non-finite"
    both = diagnose_pair(bad, bad.copy(), axis=-1)
    assert both.pairs[2].verdict.startswith("non-finite entries (a and b,")
    with pytest.raises(ValueError, match=r"b contains NaN \(first at flat index 1\)"):
        diagnose_pair(E[1], bad[1])
