"""Chapter 5's numbers in prose, recomputed from the data (each test quotes its sentence)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf
from scipy import optimize, stats
from statsmodels.stats.contingency_tables import StratifiedTable

from cosine_book.correlation import grouped_correlation
from cosine_book.datasets import load_berkeley_admissions, load_iris_sepals, load_penguin_bills
from cosine_book.group_moments import pooled_correlation
from cosine_book.strata import admission_strata


@pytest.fixture(scope="module")
def bills():
    return load_penguin_bills()


@pytest.fixture(scope="module")
def berkeley():
    table = load_berkeley_admissions()
    female, admitted, department = table.individuals()
    return table, grouped_correlation(female, admitted, department), admission_strata(table)


def test_penguin_reversal_is_clear(bills):
    # "Two of the 344 birds have no bill measurements and are left out"; "Every species shows
    # a clearly positive correlation ... the pooled correlation is negative, and its interval
    # is also well away from zero"
    assert (bills.length.size, bills.n_dropped) == (342, 2)
    for name in ("Adelie", "Chinstrap", "Gentoo"):
        member = bills.species == name
        assert (
            stats.pearsonr(bills.length[member], bills.depth[member]).confidence_interval()[0] > 0.2
        )
    test = stats.pearsonr(bills.length, bills.depth)
    assert test.statistic == pytest.approx(-0.235, abs=5e-4)
    assert test.confidence_interval()[1] < -0.1 and test.pvalue < 1e-4


def test_penguin_partial_and_between(bills):
    # "p < 1e-20"; "the between-species covariance is negative and more than twice the size
    # of the positive within part"
    beaks = grouped_correlation(bills.length, bills.depth, bills.species)
    fit = smf.ols(
        "d ~ l + C(s)", data=pd.DataFrame({"d": bills.depth, "l": bills.length, "s": bills.species})
    ).fit()
    assert fit.pvalues["l"] < 1e-20
    assert beaks.pooled_within == pytest.approx(0.528, abs=5e-4)
    assert -beaks.between_covariance > 2 * beaks.within_covariance > 0


def test_iris_within_noise_and_setosa():
    # "The interval for the pooled r contains zero"; "Setosa supplies most of it";
    # "without setosa, the pooled r (0.554) lies above both ... (0.526 and 0.457)"
    iris = load_iris_sepals()
    test = stats.pearsonr(iris.length, iris.width)
    low, high = test.confidence_interval()
    assert low < 0 < high and round(test.pvalue, 2) == 0.15
    sepals = grouped_correlation(iris.length, iris.width, iris.species)
    dx = sepals.x_means - np.sum(sepals.shares * sepals.x_means)
    dy = sepals.y_means - np.sum(sepals.shares * sepals.y_means)
    terms = sepals.shares * dx * dy
    assert round(terms[0] / terms.sum(), 2) == 0.78
    moments = (sepals.x_means, sepals.y_means, sepals.x_sds, sepals.y_sds, sepals.within)
    assert round(pooled_correlation((0, 1, 1), *moments), 3) == 0.554
    assert pooled_correlation((0, 1, 1), *moments) > sepals.within[1:].max()


def test_berkeley_tests_rest_on_department_a(berkeley):
    # "Only department A ... shows a difference beyond chance"; CMH p about 0.22;
    # "without department A the within covariance is negative"
    table, _, strata = berkeley
    p_values = [stats.fisher_exact(t).pvalue for t in strata.tables()]
    assert p_values[0] < 1e-4 and min(p_values[1:]) > 0.3
    cmh = StratifiedTable(strata.tables()).test_null_odds(correction=False)
    assert round(cmh.pvalue, 2) == 0.22
    female, admitted, department = table.individuals()
    keep = department != "A"
    rest = grouped_correlation(female[keep], admitted[keep], department[keep])
    assert round(rest.within_covariance, 4) == -0.0011


def test_berkeley_causal_numbers(berkeley):
    # "24 %" of a direct effect booked as between; split +1.4 / -15.6; NDE/NIE +7.1/-21.3 and
    # +0.1/-14.3; back-door +4.3; Mantel-Haenszel +1.8 (0.0184); crude about -14
    table, admissions, strata = berkeley
    assert round(admissions.between_shares()[0], 2) == 0.24
    q = np.sum(strata.n1) / np.sum(strata.n1 + strata.n0)
    split = np.array([admissions.within_covariance, admissions.between_covariance]) / (q * (1 - q))
    assert np.round(split * 100, 1).tolist() == [1.4, -15.6]
    assert np.round(np.array(strata.natural_effects(0)) * 100, 1).tolist() == [7.1, -21.3]
    assert np.round(np.array(strata.natural_effects(1)) * 100, 1).tolist() == [0.1, -14.3]
    assert round(strata.difference(strata.mix(None)) * 100, 1) == 4.3
    assert round(strata.mantel_haenszel_difference(), 4) == 0.0184
    assert round(strata.crude_difference() * 100) == -14


def test_standardisation_under_three_standards(berkeley):
    # "Under every standard women's rate is at least as high ... the gap runs from about 0.1
    # to 7 points"
    _, _, strata = berkeley
    gaps = [np.subtract(*strata.standardised(strata.mix(arm))) for arm in (0, None, 1)]
    assert np.round(np.array(gaps) * 100, 1).tolist() == [7.1, 4.3, 0.1]


def test_widget_offsets_non_collapsibility():
    # "At offset 0 ... the pooled r is about 0.44"; "above about +1.15 ... above both"
    flat = pooled_correlation([1, 1], [0, 3], [0, 0], [1, 1], [1, 1], [0.8, 0.8])
    assert round(flat, 2) == 0.44
    above = optimize.brentq(
        lambda gap: pooled_correlation([1, 1], [0, 3], [0, gap], [1, 1], [1, 1], [0.8, 0.8]) - 0.8,
        0.0,
        3.0,
    )
    assert round(above, 2) == 1.15
    for gap in np.arange(2.0, 9.0):
        assert pooled_correlation([1, 1], [0, 3], [0, gap], [1, 1], [1, 1], [0.8, 0.8]) > 0.8


def test_picture_threshold():
    # "Here sigma^2 = 2 ..., so the threshold is -8, and the gaps ... give -25"
    x = np.arange(0.0, 5.0)
    assert x.var() == 2.0
    assert -(0.5 * 2.0 + 0.5 * 2.0) / 0.25 == -8.0
