"""Chapter 3's theorems as Hypothesis properties: sharp range, refinement, mediant.

The two-sided bound and its sharpness for fixed rho are tested in test_similarity.py
and test_widgets_blocks.py; this file covers thm-ch3-local-range, thm-ch3-refinement,
thm-ch3-mediant and the adversarial edge search.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from cosine_book.similarity import (
    block_cosines,
    blocks_with,
    cosine,
    edge_search,
    local_cosine_range,
    profiles_with_cosine,
)

PROPERTY = settings(max_examples=120, deadline=None)
entries = st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False)


@st.composite
def vector_pairs(draw, max_size=12):
    """Two vectors of the same length, neither (nearly) zero."""
    size = draw(st.integers(2, max_size))
    x = draw(hnp.arrays(np.float64, size, elements=entries))
    y = draw(hnp.arrays(np.float64, size, elements=entries))
    assume(np.linalg.norm(x) > 1e-3 and np.linalg.norm(y) > 1e-3)
    return x, y


@st.composite
def nested_splits(draw, size):
    """Cut points of a split of range(size) and of a coarser split (a subset of them)."""
    inner = list(range(1, size))
    fine = sorted(draw(st.sets(st.sampled_from(inner), max_size=len(inner))))
    coarse = sorted(draw(st.sets(st.sampled_from(fine), max_size=len(fine)))) if fine else []
    return [0, *fine, size], [0, *coarse, size]


def split(vector, stops):
    return [vector[a:b] for a, b in zip(stops[:-1], stops[1:], strict=True)]


# ----------------------------------------------------- thm-ch3-local-range, parts 1-2


@PROPERTY
@given(vector_pairs(), st.data())
def test_global_cosine_lies_in_the_range_of_the_local_cosines_and_within_rho(pair, data):
    x, y = pair
    stops, _ = data.draw(nested_splits(x.size))
    s = block_cosines(split(x, stops), split(y, stops))
    assume(s.profile_cosine > 0)  # hypothesis of the theorem: a block nonzero on both sides
    assert abs(s.global_cosine) <= s.profile_cosine + 1e-12
    if s.local.size == 1:  # one block: the global cosine is the local one
        assert s.global_cosine == pytest.approx(s.local[0], abs=1e-12)
        return
    lower, upper = local_cosine_range(s.local)
    assert lower - 1e-12 <= s.global_cosine <= upper + 1e-12
    defined = s.local[~np.isnan(s.local)]
    assert lower == min(defined.min(), 0.0) and upper == max(defined.max(), 0.0)


# ------------------------------------------------------- thm-ch3-local-range, part 3


def _attain(local, target):
    """Vectors with these local cosines (2-d blocks, positive norms) and global cosine target.

    The proof's recipe: pick rho in (0, 1] with target strictly inside
    (rho c_min, rho c_max) (or equal to rho c when all are equal), then bisect the
    two-block sweep of profiles_with_cosine.
    """
    c_min, c_max = min(local), max(local)
    if c_max - c_min < 1e-9:
        rho = target / c_max
        return block_cosines(*blocks_with(local, *profiles_with_cosine(rho, 0.5)))
    if c_min < target < c_max:
        rho = 1.0
    elif target > 0:  # 0 < target <= c_min
        rho = (target / c_max + min(1.0, target / c_min)) / 2
    else:  # c_max <= target < 0
        rho = (target / c_min + min(1.0, target / c_max)) / 2
    sign = 1.0 if local[0] > local[1] else -1.0
    low, high = 0.0, 1.0
    for _ in range(60):
        middle = (low + high) / 2
        value = block_cosines(*blocks_with(local, *profiles_with_cosine(rho, middle)))
        if sign * (value.global_cosine - target) > 0:
            low = middle
        else:
            high = middle
    return block_cosines(*blocks_with(local, *profiles_with_cosine(rho, (low + high) / 2)))


@settings(max_examples=80, deadline=None)
@given(st.floats(-1.0, 1.0), st.floats(-1.0, 1.0), st.floats(0.02, 0.98))
def test_every_value_strictly_inside_the_local_range_is_attained(c1, c2, fraction):
    lower, upper = local_cosine_range([c1, c2])
    assume(upper - lower > 1e-3)
    target = lower + fraction * (upper - lower)
    assume(abs(target) > 1e-6)
    s = _attain([c1, c2], target)
    assert (s.x_norms > 0).all() and (s.y_norms > 0).all()
    np.testing.assert_allclose(s.local, [c1, c2], atol=1e-12)
    assert s.global_cosine == pytest.approx(target, abs=1e-9)


def test_ends_of_the_local_range_are_approached_not_crossed():
    # Positive local cosines: the global cosine stays positive and approaches 0 and c_max.
    local = [0.9, 0.7]
    near_zero = block_cosines(*blocks_with(local, *profiles_with_cosine(1e-6, 0.5)))
    near_top = block_cosines(*blocks_with(local, *profiles_with_cosine(1.0, 1e-6)))
    assert 0 < near_zero.global_cosine < 1e-5
    assert 0.9 - 1e-5 < near_top.global_cosine < 0.9


@pytest.mark.parametrize(
    ("local", "message"),
    [
        ([], "empty"),
        ([0.5], "at least two"),
        ([float("nan")], "at least two"),
        ([float("nan")] * 2, "at least one"),
        ([0.5, 1.5], r"\[-1, 1\]"),
    ],
)
def test_local_cosine_range_rejects_bad_input(local, message):
    with pytest.raises(ValueError, match=message):
        local_cosine_range(local)


# ----------------------------------------------------------- thm-ch3-refinement


@PROPERTY
@given(vector_pairs(), st.data())
def test_rho_can_only_fall_when_blocks_are_split(pair, data):
    x, y = pair
    fine, coarse = data.draw(nested_splits(x.size))
    rho_fine = block_cosines(split(x, fine), split(y, fine)).profile_cosine
    rho_coarse = block_cosines(split(x, coarse), split(y, coarse)).profile_cosine
    assert rho_fine <= rho_coarse + 1e-12
    # The coordinate split is the finest: its rho is cos(|x|, |y|), the smallest of all.
    rho_coordinates = cosine(np.abs(x), np.abs(y))
    assert rho_coordinates <= rho_fine + 1e-12
    assert abs(cosine(x, y)) <= rho_coordinates + 1e-12


def test_merging_proportional_pieces_keeps_rho_and_others_raise_it():
    # ex-ch3-merge-equality: equality exactly when the two pieces' norm pairs are proportional.
    x = np.array([1.0, 2.0, 3.0])
    proportional = np.array([2.0, 4.0, -1.0])
    other = np.array([4.0, 2.0, -1.0])
    for y, same in [(proportional, True), (other, False)]:
        fine = block_cosines(split(x, [0, 1, 2, 3]), split(y, [0, 1, 2, 3])).profile_cosine
        merged = block_cosines(split(x, [0, 2, 3]), split(y, [0, 2, 3])).profile_cosine
        assert (abs(merged - fine) < 1e-12) == same
        assert merged >= fine - 1e-12


def test_abs_cap_is_attained_when_the_products_share_a_sign():
    # ex-ch3-abs-equality.
    x, y = np.array([1.0, -2.0, 3.0]), np.array([2.0, -1.0, 0.5])
    assert cosine(x, y) == pytest.approx(cosine(np.abs(x), np.abs(y)), abs=1e-15)
    assert cosine(x, -y) == pytest.approx(-cosine(np.abs(x), np.abs(y)), abs=1e-15)


# -------------------------------------------------------------- thm-ch3-mediant


@PROPERTY
@given(st.lists(st.tuples(st.floats(-1.0, 1.0), st.floats(1e-3, 1e3)), min_size=1, max_size=8))
def test_mediant_lies_between_the_smallest_and_largest_fraction(pairs):
    # Blocks with inner products p_i = c_i q_i and norm products q_i (both norms sqrt(q_i)):
    # block_cosines' global cosine over rho is the mediant sum p / sum q, and it lies
    # between the smallest and the largest fraction p_i / q_i = c_i.
    local = [c for c, _ in pairs]
    norms = [math.sqrt(q) for _, q in pairs]
    s = block_cosines(*blocks_with(local, norms, norms))
    mediant = math.fsum(c * q for c, q in pairs) / math.fsum(q for _, q in pairs)
    assert s.global_cosine / s.profile_cosine == pytest.approx(mediant, abs=1e-12)
    assert min(local) - 1e-12 <= s.global_cosine / s.profile_cosine <= max(local) + 1e-12


@PROPERTY
@given(vector_pairs(), st.data())
def test_averaged_local_cosine_is_the_mediant_and_global_over_rho(pair, data):
    x, y = pair
    stops, _ = data.draw(nested_splits(x.size))
    xs, ys = split(x, stops), split(y, stops)
    s = block_cosines(xs, ys)
    assume(s.profile_cosine > 1e-6)
    on_both = [i for i, (a, b) in enumerate(zip(xs, ys, strict=True)) if a.any() and b.any()]
    mediant = math.fsum(float(xs[i] @ ys[i]) for i in on_both) / math.fsum(
        float(np.linalg.norm(xs[i]) * np.linalg.norm(ys[i])) for i in on_both
    )
    average = np.sum(s.weights[on_both] / s.profile_cosine * s.local[on_both])
    assert average == pytest.approx(mediant, abs=1e-9)
    assert s.global_cosine / s.profile_cosine == pytest.approx(mediant, abs=1e-9)


def test_simpson_reversal_of_ex_ch3_simpson():
    first = block_cosines(*blocks_with([0.9, 0.2], [0.1**0.5, 0.9**0.5], [0.1**0.5, 0.9**0.5]))
    second = block_cosines(*blocks_with([0.8, 0.1], [0.9**0.5, 0.1**0.5], [0.9**0.5, 0.1**0.5]))
    assert first.profile_cosine == pytest.approx(1.0) == second.profile_cosine
    assert (first.local > second.local).all()
    assert first.global_cosine == pytest.approx(0.27, abs=1e-12)
    assert second.global_cosine == pytest.approx(0.73, abs=1e-12)


# ------------------------------------------------------------ the edge search


@pytest.mark.parametrize("n_blocks", [2, 3])
def test_edge_search_finds_no_violation_and_reaches_the_edges(n_blocks):
    best = edge_search(np.random.default_rng(1), n_searches=3, n_blocks=n_blocks, size=2)
    assert best.shape == (2, 3)
    assert (best <= 1e-12).all()
    assert (np.abs(best) < 1e-6).any()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [({"n_searches": 0}, "n_searches"), ({"n_blocks": 1}, "n_blocks"), ({"size": 0}, "size")],
)
def test_edge_search_rejects_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        edge_search(np.random.default_rng(0), **kwargs)
