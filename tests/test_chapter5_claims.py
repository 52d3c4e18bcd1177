"""Chapter 5's numbers in prose, recomputed from the data (each test quotes its sentence)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
import statsmodels.formula.api as smf
from notebook_outputs import outputs_text
from scipy import optimize, stats
from statsmodels.stats.contingency_tables import StratifiedTable
from statsmodels.stats.meta_analysis import combine_effects
from statsmodels.stats.multitest import multipletests

from cosine_book.correlation import grouped_correlation, pooled_correlation
from cosine_book.datasets import load_berkeley_admissions, load_iris_sepals, load_penguin_bills
from cosine_book.strata import admission_strata

CHAPTER = Path(__file__).resolve().parents[1] / "chapters" / "05_simpson.ipynb"


def points(value, digits=1):
    """``value`` in percentage points, rounded; refuses a value within 1e-6 of a tie."""
    scaled = value * 100 * 10**digits
    assert abs(scaled - np.floor(scaled) - 0.5) > 1e-6, value
    return round(value * 100, digits)


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
    # +0.1/-14.3; standardised controlled direct effect +4.3; Mantel-Haenszel +1.8 (0.0184);
    # crude about -14
    table, admissions, strata = berkeley
    assert round(admissions.between_shares[0], 2) == 0.24
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


def widget_r(gap):
    return pooled_correlation([1, 1], [0, 3], [0, gap], [1, 1], [1, 1], [0.8, 0.8])


def test_widget_offsets_non_collapsibility():
    # "At offset 0 ... the pooled r is about 0.44"; "above about +1.15 ... above both";
    # "the pooled slope is 0.246 against 0.8"; "B on the extension of A's regression line,
    # at offset +2.4 ... pooled least-squares slope is 0.800 ... pooled r is 0.923"
    flat = pooled_correlation([1, 1], [0, 3], [0, 0], [1, 1], [1, 1], [0.8, 0.8])
    assert round(flat, 2) == 0.44
    # Pooled slope = (within + between covariance) / (within + between variance of x).
    for gap, slope in ((0.0, 0.246), (2.4, 0.800)):
        assert round((0.8 + 0.25 * 3 * gap) / (1 + 0.25 * 9), 3) == slope
    # On A's line the pooled data are two clouds around one line of slope 0.8 ...
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.random(2000) * 2, rng.random(2000) * 2 + 3])
    y = 0.8 * x + np.concatenate([rng.random(2000) - 0.5] * 2)
    assert stats.linregress(x, y).slope == pytest.approx(0.8, abs=0.02)
    assert round(widget_r(2.4), 3) == 0.923
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


def test_widget_overshoots_then_falls_back():
    # "it peaks at 0.943 (offset +3.75) and then falls back slowly (0.915 at +8);
    # downwards it grows in magnitude (-0.70 at -8). Both ends tend to +-0.83"
    peak = optimize.minimize_scalar(lambda g: -widget_r(g), bounds=(0, 8), method="bounded")
    assert round(peak.x, 2) == 3.75 and round(widget_r(peak.x), 3) == 0.943
    assert round(widget_r(8.0), 3) == 0.915 and round(widget_r(-8.0), 2) == -0.70
    ups = [widget_r(g) for g in np.arange(3.75, 200.0, 0.25)]
    assert all(a > b for a, b in zip(ups, ups[1:], strict=False))
    downs = [widget_r(g) for g in np.arange(-1.0, -200.0, -0.25)]
    assert all(a > b for a, b in zip(downs, downs[1:], strict=False))
    limit = 0.5 * 3 / np.sqrt(1 + 0.25 * 9)
    assert round(limit, 2) == 0.83
    assert widget_r(1e9) == pytest.approx(limit, abs=1e-6)
    assert widget_r(-1e9) == pytest.approx(-limit, abs=1e-6)


def test_penguins_by_species_and_sex(bills):
    # "333 of the 342 birds; using it loses 9 more"; within r's by species and sex;
    # "falls from 0.530 to 0.187 (95 % interval [0.08, 0.29]): about 80 % of the
    # within-species covariance (1.75 -> 0.35)"; by sex -0.43, -0.40; by island -0.44,
    # +0.36, +0.25; "separate slopes per species do not fit significantly better (p = 0.62)"
    sexed = bills.sex != ""
    assert (sexed.sum(), (~sexed).sum()) == (333, 9)
    length, depth = bills.length[sexed], bills.depth[sexed]
    cells = np.char.add(np.char.add(bills.species[sexed], " "), bills.sex[sexed])
    both = grouped_correlation(length, depth, cells)
    assert np.round(both.within, 2).tolist() == [0.16, -0.04, 0.26, 0.45, 0.43, 0.31]
    # "for both Adelie groups and for Chinstrap females not distinguishable from zero"
    tests = [stats.pearsonr(length[cells == c], depth[cells == c]) for c in both.labels]
    covers_zero = [t.confidence_interval()[0] < 0 < t.confidence_interval()[1] for t in tests]
    assert covers_zero == [True, True, True, False, False, False]
    species = grouped_correlation(length, depth, bills.species[sexed])
    assert round(species.pooled_within, 3) == 0.530 and round(both.pooled_within, 3) == 0.187
    assert np.round(both.pooled_within_interval(), 2).tolist() == [0.08, 0.29]
    assert (round(species.within_covariance, 2), round(both.within_covariance, 2)) == (1.75, 0.35)
    assert round(1 - both.within_covariance / species.within_covariance, 2) == 0.80
    by_sex = grouped_correlation(length, depth, bills.sex[sexed])
    assert np.round(by_sex.within, 2).tolist() == [-0.43, -0.40]
    by_island = grouped_correlation(bills.length, bills.depth, bills.island)
    assert np.round(by_island.within, 2).tolist() == [-0.44, 0.36, 0.25]
    frame = pd.DataFrame({"d": bills.depth, "l": bills.length, "s": bills.species})
    common = smf.ols("d ~ l + C(s)", data=frame).fit()
    separate = smf.ols("d ~ l * C(s)", data=frame).fit()
    f_value, p_value, _ = separate.compare_f_test(common)
    assert (round(f_value, 2), round(p_value, 2)) == (0.48, 0.62)


def test_iris_excess_is_within_noise():
    # "pooled r (0.554) lies above both"; bootstrap: "+0.028 ... [-0.15, +0.10] ...
    # positive in only about half of the resamples": the notebook's bootstrap printed
    cells = json.loads(CHAPTER.read_text())["cells"]
    printed = "".join(outputs_text(c) for c in cells if c["cell_type"] == "code")
    assert "pooled r minus the larger within r: +0.028" in printed
    assert "95% bootstrap interval [-0.15, +0.10]" in printed
    assert "positive in 51% of the resamples" in printed


def test_berkeley_multiplicity_and_heterogeneity(berkeley):
    # "Holm-adjusted p = 0.0001"; "Breslow-Day ... chi2_5 = 18.83, p = 0.0021"; "Cochran's Q
    # ... 25.4, p = 0.0001"; "interaction ... chi2_5 = 20.2, p = 0.0011"; "Without
    # department A ... Breslow-Day p = 0.63 ... CMH p = 0.72"
    _, _, strata = berkeley
    fisher = [stats.fisher_exact(t).pvalue for t in strata.tables()]
    holm = multipletests(fisher, method="holm")[1]
    assert f"{holm[0]:.2g}" == "0.0001" and min(holm[1:]) == 1.0
    table = StratifiedTable(strata.tables())
    bd = table.test_equal_odds()
    assert (round(bd.statistic, 2), round(bd.pvalue, 4)) == (18.83, 0.0021)
    a1, a0 = strata.rates
    q = combine_effects(a1 - a0, a1 * (1 - a1) / strata.n1 + a0 * (1 - a0) / strata.n0)
    q_test = q.test_homogeneity()
    assert (round(q_test.statistic, 1), round(q_test.pvalue, 4)) == (25.4, 0.0001)
    rows = pd.DataFrame(
        {
            "k": np.concatenate([strata.k1, strata.k0]),
            "r": np.concatenate([strata.n1 - strata.k1, strata.n0 - strata.k0]),
            "f": [1] * 6 + [0] * 6,
            "d": list(strata.labels) * 2,
        }
    )
    fit = smf.glm("k + r ~ C(d) + f", rows, family=sm.families.Binomial()).fit()
    assert fit.df_resid == 5 and round(fit.deviance, 1) == 20.2
    assert round(stats.chi2.sf(fit.deviance, 5), 4) == 0.0011
    rest = StratifiedTable(strata.drop("A").tables())
    assert round(rest.test_equal_odds().pvalue, 2) == 0.63
    assert round(rest.test_null_odds(correction=False).pvalue, 2) == 0.72


def test_berkeley_mantel_haenszel_intervals(berkeley):
    # "1.8 points higher ..., with a 95 % interval from -1.1 to +4.7 points (Sato's
    # variance); the Mantel-Haenszel odds ratio, 1.105 [0.94, 1.30]"
    _, _, strata = berkeley
    low, high = strata.mantel_haenszel_interval()
    assert (points(low), points(high)) == (-1.1, 4.7)
    table = StratifiedTable(strata.tables())
    assert round(table.oddsratio_pooled, 3) == 1.105
    assert np.round(table.oddsratio_pooled_confint(), 2).tolist() == [0.94, 1.30]


def test_berkeley_effects_with_bootstrap_intervals(berkeley):
    # The table of estimates and 95 % bootstrap intervals (4,000 resamples, seed 1973),
    # quoted in the text and the takeaways; "-14.2 points"; "the pooled phi rescales it"
    table, admissions, strata = berkeley
    effects = strata.summaries()
    boot = strata.bootstrap(draws=4000, seed=1973)
    expected = {
        "crude": (-14.2, -17.0, -11.4),
        "pure NDE": (7.1, 2.2, 11.8),
        "total NIE": (-21.3, -25.5, -16.9),
        "total NDE": (0.1, -3.0, 3.2),
        "pure NIE": (-14.3, -16.4, -12.2),
        "interaction": (-7.0, -11.4, -2.5),
        "standardised CDE": (4.3, 0.6, 7.8),
        "Mantel-Haenszel": (1.8, -1.1, 4.7),
    }
    for key, (estimate, low, high) in expected.items():
        bounds = np.quantile(boot[key], [0.025, 0.975])
        assert (points(effects[key]), points(bounds[0]), points(bounds[1])) == (
            estimate,
            low,
            high,
        ), key
    female, admitted, _ = table.individuals()
    q, a = female.mean(), admitted.mean()
    phi = effects["crude"] * np.sqrt(q * (1 - q) / (a * (1 - a)))
    assert phi == pytest.approx(admissions.pooled, abs=1e-12)
