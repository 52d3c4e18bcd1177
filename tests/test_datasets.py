"""Tests for cosine_book.datasets: the loaders (real data and models) and the simulator."""

import os
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from cosine_book.cluster_recovery import cluster_recovery
from cosine_book.correlation import grouped_correlation, pearson
from cosine_book.datasets import (
    TINY_SHAKESPEARE_SHA256,
    load_berkeley_admissions,
    load_digits_split,
    load_glove,
    load_iris_sepals,
    load_movielens,
    load_sentence_model,
    load_tiny_shakespeare,
)
from cosine_book.similarity import cosine_matrix
from cosine_book.simulation import make_clustered_interactions


def test_tiny_shakespeare_is_the_published_file():
    import hashlib

    text = load_tiny_shakespeare()
    assert hashlib.sha256(text.encode("utf-8")).hexdigest() == TINY_SHAKESPEARE_SHA256
    assert len(text) == 1_115_394 and len(set(text)) == 65
    assert text.endswith("Whiles thou art waking.\n")


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


# ---------------------------------------------------------------------------
# make_clustered_interactions: the simulated data of chapter 6
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
    data = make_clustered_interactions(seed=5, **kwargs)
    again = make_clustered_interactions(seed=5, **kwargs)
    other = make_clustered_interactions(seed=6, **kwargs)
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
    data = make_clustered_interactions(
        n_users=2000, n_items=100, n_clusters=3, min_items=10, seed=1
    )
    raw = cosine_matrix(data.X.T.toarray())
    assert cluster_recovery(raw, data.item_clusters).auc > 0.8


def test_simulator_defaults_are_the_papers_size_and_setting_a():
    # Chapter 6 prints these for setting A: 20,000 x 1,000, 5 clusters, seed 0.
    data = make_clustered_interactions(n_users=300)  # items and clusters as the paper
    assert data.X.shape == (300, 1000) and data.cluster_probabilities.size == 5
    assert np.bincount(data.item_clusters).tolist() == [167, 239, 110, 381, 103]
    assert data.items_per_user.min() >= 20


SIMULATOR_BAD_INPUT = [
    # (arguments, expected error-message fragment)
    pytest.param({"n_users": 0}, "n_users must be at least 1"),
    pytest.param({"n_users": 2.5}, "n_users must be an integer"),
    pytest.param({"n_items": True}, "n_items must be an integer"),
    pytest.param({"n_items": 3, "n_clusters": 5}, "n_clusters must be between 1 and 3"),
    pytest.param({"n_items": 20, "min_items": 21}, "min_items must be"),
    pytest.param({"n_items": 20, "min_items": 2.0}, "min_items must be"),
    pytest.param({"preference": "uniform"}, "preference must be"),
    pytest.param({"power_law": 3}, "power_law must be"),
    pytest.param({"n_clusters": "3"}, "n_clusters must be an integer"),
    pytest.param({"cluster_concentration": 0}, "cluster_concentration"),
    pytest.param({"seed": -1}, "seed must be at least 0"),
    pytest.param({"seed": 1.5}, "seed must be an integer"),
]


@pytest.mark.parametrize(("kwargs", "match"), SIMULATOR_BAD_INPUT)
def test_simulator_bad_input_table(kwargs, match):
    with pytest.raises(ValueError, match=match):
        make_clustered_interactions(**kwargs)


# ------------------------------------------------ real data of chapters 6 and 7


def test_movielens_sample_as_documented():
    data = load_movielens()
    assert len(data.ratings) == 100_004
    assert (int(data.users.max()) + 1, len(data.titles)) == (671, 9066)
    assert set(np.unique(data.ratings)) == {0.5 * k for k in range(1, 11)}
    years = pd.to_datetime(data.timestamps, unit="s").year
    assert (years.min(), years.max()) == (1995, 2016)
    # Every (user, movie) pair is rated once, and the titles are those of the ids.
    assert len(np.unique(data.users * len(data.titles) + data.movies)) == 100_004
    assert "Toy Story (1995)" in data.titles or "Toy Story" in data.titles


def test_glove_words_are_frequent_alphabetic_tokens_with_published_vectors():
    glove = load_glove(20_000)
    assert glove.vectors.shape == (20_000, 50) and glove.vectors.dtype == np.float32
    assert all(word.isalpha() for word in glove.words)
    assert glove.words[:3] == ("the", "of", "to")
    # The published first coordinates of "the" in glove.6B.50d.txt.
    np.testing.assert_array_equal(glove.vectors[0, :3], np.float32([0.418, 0.24968, -0.41242]))
    dog = glove.vectors[glove.index("dog")]
    cosines = glove.vectors @ dog / np.linalg.norm(glove.vectors, axis=1) / np.linalg.norm(dog)
    nearest = [glove.words[i] for i in np.argsort(-cosines)[1:6]]
    assert "cat" in nearest and "dogs" in nearest
    with pytest.raises(ValueError, match=r"word 'zzzqx' is not among these 20,000 words"):
        glove.index("zzzqx")
    with pytest.raises(ValueError, match="n_words"):
        load_glove(0)


def test_sentence_model_loads_offline_and_ranks_the_python_sentences():
    model = load_sentence_model()
    sentences = [
        "I like Python because I can build AI applications",
        "I like Python because I can think of new paradigms",
        "I like snakes because I can stroke them",
    ]
    vectors = model.encode(sentences, normalize_embeddings=True)
    assert vectors.shape == (3, 384) and vectors.dtype == np.float32
    cosines = vectors @ vectors.T
    assert cosines[0, 1] > 0.7 > 0.5 > cosines[0, 2]


SCRIPT_UNDER_BLOCKED_NETWORK = """
import urllib.request
try:
    urllib.request.urlopen("http://example.org", timeout=5)
except OSError as error:
    assert "blocked" in str(error), error
else:
    raise SystemExit("the network was reachable")
from cosine_book.datasets import load_glove, load_movielens, load_sentence_model
load_movielens(); load_glove(100)
print(load_sentence_model().encode(["offline"]).shape)
"""


def test_loaders_run_with_the_network_blocked():
    # conftest.py puts tests/offline on PYTHONPATH: every Python the tests start,
    # nbval's kernels included, refuses connections beyond this machine.
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT_UNDER_BLOCKED_NETWORK],
        capture_output=True,
        text=True,
        timeout=300,
        env={k: v for k, v in os.environ.items() if not k.startswith(("HF_", "TRANSFORMERS_"))},
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == "(1, 384)"
    assert "Loading weights" not in result.stderr  # no progress bar in a chapter's output


def test_penguin_bills_complete_cases():
    from cosine_book.datasets import load_penguin_bills

    bills = load_penguin_bills()
    assert bills.n_dropped == 2 and bills.length.size == bills.depth.size == 342
    assert not np.isnan(bills.length).any() and not np.isnan(bills.depth).any()
    names, counts = np.unique(bills.species, return_counts=True)
    assert dict(zip(names.tolist(), counts.tolist(), strict=True)) == {
        "Adelie": 151,
        "Chinstrap": 68,
        "Gentoo": 123,
    }
    assert "CC0" in load_penguin_bills.__doc__
