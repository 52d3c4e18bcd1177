"""Tests for the loaders in cosine_book.datasets: digits, iris and Berkeley."""

import numpy as np
import pytest

from cosine_book.correlation import grouped_correlation, pearson
from cosine_book.datasets import load_berkeley_admissions, load_digits_split, load_iris_sepals


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


def test_digits_split_is_reproducible_and_disjoint():
    split = load_digits_split(test_fraction=0.25, seed=3)
    again = load_digits_split(test_fraction=0.25, seed=3)
    np.testing.assert_array_equal(split.x_train, again.x_train)
    assert split.x_train.shape == (1348, 64) and split.x_test.shape == (449, 64)
    assert split.y_train.dtype == np.int64 and set(split.y_test.tolist()) <= set(range(10))
    assert 0.0 <= split.x_train.min() and split.x_train.max() <= 1.0
    # Same seed as an int of another type: the same split.
    np.testing.assert_array_equal(load_digits_split(0.25, np.int64(3)).y_test, split.y_test)


# Bad input: (arguments, expected error-message fragment)
BAD_INPUT = [
    pytest.param({"test_fraction": 0.0}, "test_fraction must lie in \\(0, 1\\)", id="fraction-0"),
    pytest.param({"test_fraction": 1.0}, "test_fraction must lie in \\(0, 1\\)", id="fraction-1"),
    pytest.param({"test_fraction": -0.1}, "must lie in \\(0, 1\\)", id="fraction-negative"),
    pytest.param({"test_fraction": np.nan}, "test_fraction must be a finite", id="fraction-nan"),
    pytest.param({"test_fraction": np.inf}, "test_fraction must be a finite", id="fraction-inf"),
    pytest.param({"test_fraction": "0.25"}, "must be a real number", id="fraction-string"),
    pytest.param({"test_fraction": True}, "must be a real number", id="fraction-bool"),
    pytest.param({"test_fraction": 0.25j}, "must be a real number", id="fraction-complex"),
    pytest.param({"test_fraction": [0.25]}, "must be a real number", id="fraction-list"),
    pytest.param({"test_fraction": 1e-9}, "leaves 0 of 1797 images", id="fraction-empty-test"),
    pytest.param({"test_fraction": 1 - 1e-9}, "leaves 1797 of 1797", id="fraction-empty-train"),
    pytest.param({"seed": -1}, "seed must be at least 0", id="seed-negative"),
    pytest.param({"seed": 1.5}, "seed must be an integer", id="seed-float"),
    pytest.param({"seed": True}, "seed must be an integer", id="seed-bool"),
    pytest.param({"seed": "0"}, "seed must be an integer", id="seed-string"),
]


@pytest.mark.parametrize(("kwargs", "match"), BAD_INPUT)
def test_digits_split_bad_input_table(kwargs, match):
    with pytest.raises(ValueError, match=match):
        load_digits_split(**kwargs)


def test_loaders_without_arguments_are_the_same_every_call():
    first, second = load_iris_sepals(), load_iris_sepals()
    np.testing.assert_array_equal(first.length, second.length)
    table = load_berkeley_admissions()
    assert table.applicants.dtype == np.int64 and (table.admitted >= 0).all()
