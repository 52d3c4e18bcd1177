"""cosine_book.strata: chapter 5's Mantel-Haenszel identity, the mediation formula, bad input."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from cosine_book.correlation import grouped_correlation
from cosine_book.strata import Strata


@st.composite
def strata(draw):
    size = draw(st.integers(1, 5))
    n1 = draw(st.lists(st.integers(1, 25), min_size=size, max_size=size))
    n0 = draw(st.lists(st.integers(1, 25), min_size=size, max_size=size))
    k1 = [draw(st.integers(0, n)) for n in n1]
    k0 = [draw(st.integers(0, n)) for n in n0]
    labels = tuple(f"s{g}" for g in range(size))
    return Strata(labels, np.array(n1), np.array(k1), np.array(n0), np.array(k0))


def individuals(s: Strata):
    """One row per unit: arm (1/0), outcome (1/0), stratum label."""
    arm, outcome, label = [], [], []
    for g, name in enumerate(s.labels):
        for a, n, k in ((1.0, s.n1[g], s.k1[g]), (0.0, s.n0[g], s.k0[g])):
            arm += [a] * n
            outcome += [1.0] * k + [0.0] * (n - k)
            label += [name] * n
    return np.array(arm), np.array(outcome), np.array(label)


@settings(max_examples=150, deadline=None)
@given(strata())
def test_within_covariance_over_weights_is_mantel_haenszel(s):
    # prf:proposition prop-ch5-mantel-haenszel
    arm, outcome, label = individuals(s)
    assume(0 < outcome.sum() < outcome.size)  # grouped_correlation needs a varying outcome
    result = grouped_correlation(arm, outcome, label)
    q = result.x_means
    weights = np.sum(result.shares * q * (1 - q))
    assert result.within_covariance / weights == pytest.approx(
        s.mantel_haenszel_difference(), abs=1e-12
    )


@settings(max_examples=150, deadline=None)
@given(strata(), st.sampled_from([0, 1]))
def test_natural_effects_add_up_to_the_crude_difference(s, reference):
    nde, nie = s.natural_effects(reference)
    assert nde + nie == pytest.approx(s.crude_difference(), abs=1e-12)


@settings(max_examples=100, deadline=None)
@given(strata())
def test_standardised_gap_is_a_weighted_difference(s):
    for arm in (0, 1, None):
        women, men = s.standardised(s.mix(arm))
        assert women - men == pytest.approx(s.difference(s.mix(arm)), abs=1e-12)


GOOD = {"labels": ("a",), "n1": [2], "k1": [1], "n0": [3], "k0": [1]}


@pytest.mark.parametrize(
    ("changes", "match"),
    [
        ({"n1": [0]}, "both arms present"),
        ({"k1": [3]}, "k1 <= n1"),
        ({"n0": [2.5]}, "integer counts"),
        ({"k0": [-1]}, "nonnegative integer"),
        ({"n1": [2, 2]}, "one per stratum"),
        ({"n1": []}, "one per stratum"),
    ],
)
def test_strata_bad_input_table(changes, match):
    with pytest.raises(ValueError, match=match):
        Strata(**{**GOOD, **changes})


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda s: s.standardised([0.5]), "distribution"),
        (lambda s: s.drop("z"), "not a stratum"),
    ],
)
def test_strata_method_bad_input_table(call, match):
    with pytest.raises(ValueError, match=match):
        call(Strata(**GOOD))


@settings(max_examples=150, deadline=None)
@given(strata())
def test_summaries_pure_and_total_effects_and_their_interaction(s):
    # pure NDE + total NIE = total NDE + pure NIE = crude; they differ by the interaction
    # sum_g (P(g | 1) - P(g | 0)) (a_1 - a_0) (Robins and Greenland, 1992).
    out = s.summaries()
    a1, a0 = s.rates
    interaction = float((s.mix(1) - s.mix(0)) @ (a1 - a0))
    assert out["pure NDE"] + out["total NIE"] == pytest.approx(out["crude"], abs=1e-12)
    assert out["total NDE"] + out["pure NIE"] == pytest.approx(out["crude"], abs=1e-12)
    assert out["interaction"] == pytest.approx(interaction, abs=1e-12)
    assert out["total NIE"] - out["pure NIE"] == pytest.approx(interaction, abs=1e-12)
    assert out["standardised CDE"] == pytest.approx(s.difference(s.n1 + s.n0), abs=1e-12)


@settings(max_examples=100, deadline=None)
@given(strata(), st.integers(0, 2**32))
def test_resample_keeps_the_number_of_units_and_is_reproducible(s, seed):
    try:
        first = s.resample(np.random.default_rng(seed))
    except ValueError:
        return  # an arm of a stratum drawn empty: refused, as documented
    second = s.resample(np.random.default_rng(seed))
    total = int(np.sum(s.n1 + s.n0))
    assert int(np.sum(first.n1 + first.n0)) == total
    for name in ("n1", "k1", "n0", "k0"):
        assert getattr(first, name).tolist() == getattr(second, name).tolist()


def test_mantel_haenszel_interval_one_stratum_is_close_to_wald():
    # One large stratum: Sato's variance is close to the binomial (Wald) variance.
    s = Strata(("a",), np.array([4000]), np.array([1200]), np.array([6000]), np.array([1500]))
    low, high = s.mantel_haenszel_interval()
    wald = np.sqrt(0.3 * 0.7 / 4000 + 0.25 * 0.75 / 6000)
    assert (high - low) / (2 * 1.959963984540054) == pytest.approx(wald, rel=0.02)
