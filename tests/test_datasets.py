"""Tests for the iris and Berkeley loaders in cosine_book.datasets."""

import numpy as np
import pytest

from cosine_book.correlation import grouped_correlation, pearson
from cosine_book.datasets import load_berkeley_admissions, load_iris_sepals


def test_berkeley_published_totals():
    table = load_berkeley_admissions()
    men, women = table.sex == "male", table.sex == "female"
    assert (men | women).all()
    assert int(table.applicants[men].sum()) == 2691
    assert int(table.admitted[men].sum()) == 1198
    assert int(table.applicants[women].sum()) == 1835
    assert int(table.admitted[women].sum()) == 557


def test_berkeley_department_a_and_shape():
    table = load_berkeley_admissions()
    assert sorted(set(table.department.tolist())) == list("ABCDEF")
    assert len(table.department) == 12
    a_men = (table.department == "A") & (table.sex == "male")
    a_women = (table.department == "A") & (table.sex == "female")
    assert (int(table.applicants[a_men][0]), int(table.admitted[a_men][0])) == (825, 512)
    assert (int(table.applicants[a_women][0]), int(table.admitted[a_women][0])) == (108, 89)
    assert (table.admitted <= table.applicants).all()


def test_berkeley_individuals_reproduce_counts():
    table = load_berkeley_admissions()
    female, admitted, department = table.individuals()
    assert female.size == admitted.size == department.size == table.applicants.sum()
    for dept, sex, n_applied, n_admitted in zip(
        table.department, table.sex, table.applicants, table.admitted, strict=True
    ):
        rows = (department == dept) & (female == (1.0 if sex == "female" else 0.0))
        assert rows.sum() == n_applied
        assert admitted[rows].sum() == n_admitted


def test_berkeley_simpson_reversal():
    female, admitted, department = load_berkeley_admissions().individuals()
    result = grouped_correlation(female, admitted, department)
    # Pooled: women admitted less often; within four of six departments, more often.
    assert result.pooled < 0
    assert (result.within > 0).sum() == 4
    assert result.between_covariance < 0 < result.within_covariance


def test_iris_sepals_simpson_reversal():
    iris = load_iris_sepals()
    assert iris.length.shape == iris.width.shape == iris.species.shape == (150,)
    for name in ("setosa", "versicolor", "virginica"):
        assert (iris.species == name).sum() == 50
    pooled = pearson(iris.length, iris.width)
    assert pooled == pytest.approx(np.corrcoef(iris.length, iris.width)[0, 1])
    assert pooled == pytest.approx(-0.1176, abs=1e-4)  # the well-known pooled value
    within = grouped_correlation(iris.length, iris.width, iris.species).within
    assert (within > 0).all()
    np.testing.assert_allclose(within, [0.7425, 0.5259, 0.4572], atol=1e-4)
