"""Tests for cosine_book.datasets: the loaders (real data and models) and the simulator."""

import hashlib
import os
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from cosine_book.cluster_recovery import cluster_recovery
from cosine_book.correlation import grouped_correlation, pearson
from cosine_book.datasets import (
    load_berkeley_admissions,
    load_digits_split,
    load_glove,
    load_iris_sepals,
    load_movielens,
    load_penguin_bills,
    load_qa_set,
    load_sentence_model,
    load_tiny_shakespeare,
)
from cosine_book.similarity import cosine_matrix
from cosine_book.simulation import make_clustered_interactions


def test_tiny_shakespeare_is_the_published_file():
    text = load_tiny_shakespeare()
    digest = "86c4e6aa9db7c042ec79f339dcb96d42b0075e16b8fc2e86bf0ca57e2dc565ed"  # data/README.md
    assert hashlib.sha256(text.encode("utf-8")).hexdigest() == digest
    assert len(text) == 1_115_394 and len(set(text)) == 65


def test_berkeley_published_totals_and_individuals():
    table = load_berkeley_admissions()
    men, women = table.sex == "male", table.sex == "female"
    assert (men | women).all() and sorted(set(table.department.tolist())) == list("ABCDEF")
    assert (int(table.applicants[men].sum()), int(table.admitted[men].sum())) == (2691, 1198)
    assert (int(table.applicants[women].sum()), int(table.admitted[women].sum())) == (1835, 557)
    a_women = (table.department == "A") & women
    assert (int(table.applicants[a_women][0]), int(table.admitted[a_women][0])) == (108, 89)
    assert (table.admitted <= table.applicants).all() and table.applicants.dtype == np.int64
    female, admitted, department = table.individuals()
    for dept, sex, n_applied, n_admitted in zip(
        table.department, table.sex, table.applicants, table.admitted, strict=True
    ):
        rows = (department == dept) & (female == (1.0 if sex == "female" else 0.0))
        assert rows.sum() == n_applied and admitted[rows].sum() == n_admitted
    # Pooled: women admitted less often; within four of six departments, more often.
    result = grouped_correlation(female, admitted, department)
    assert result.pooled < 0 and (result.within > 0).sum() == 4


def test_iris_sepals_simpson_reversal():
    iris = load_iris_sepals()
    assert iris.length.shape == iris.width.shape == iris.species.shape == (150,)
    assert pearson(iris.length, iris.width) == pytest.approx(-0.1176, abs=1e-4)  # well known
    within = grouped_correlation(iris.length, iris.width, iris.species).within
    np.testing.assert_allclose(within, [0.7425, 0.5259, 0.4572], atol=1e-4)


def test_penguin_bills_complete_cases():
    bills = load_penguin_bills()
    assert bills.n_dropped == 2 and bills.length.size == bills.depth.size == 342
    assert not np.isnan(bills.length).any() and not np.isnan(bills.depth).any()
    names, counts = np.unique(bills.species, return_counts=True)
    assert dict(zip(names.tolist(), counts.tolist(), strict=True)) == {
        "Adelie": 151, "Chinstrap": 68, "Gentoo": 123}  # fmt: skip
    assert int((bills.sex == "").sum()) == 9 and "CC0" in load_penguin_bills.__doc__


def test_digits_split_is_a_partition():
    from sklearn.datasets import load_digits

    digits = load_digits_split()
    assert digits.x_train.shape == (1348, 64) and digits.x_test.shape == (449, 64)
    assert digits.y_train.dtype == np.int64 and set(digits.y_test.tolist()) == set(range(10))
    assert 0.0 <= digits.x_train.min() and digits.x_train.max() == 1.0
    labels = np.sort(np.concatenate([digits.y_train, digits.y_test]))
    np.testing.assert_array_equal(np.bincount(labels), np.bincount(load_digits().target))


@pytest.mark.parametrize("number", [1, 2])
def test_the_question_sets(number):
    rows = load_qa_set(number)
    assert len(rows) == 40 and all(len(row) == 4 for row in rows)
    for question, answer, other, rewrite in rows:
        for text in (question, answer, other, rewrite):
            assert text == text.strip() and "  " not in text
        assert question.endswith("?") and other.endswith("?")
        assert answer.endswith(".") and rewrite.endswith(".")
    assert len({row[0] for row in rows}) == 40 and len({row[2] for row in rows}) == 40
    assert not {row[0] for row in load_qa_set(1)} & {row[0] for row in load_qa_set(2)}
    with pytest.raises(ValueError, match="number must be between 1 and 2"):
        load_qa_set(3)


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
    dog = glove.vectors[glove.words.index("dog")]
    cosines = glove.vectors @ dog / np.linalg.norm(glove.vectors, axis=1) / np.linalg.norm(dog)
    nearest = [glove.words[i] for i in np.argsort(-cosines)[1:6]]
    assert "cat" in nearest and "dogs" in nearest
    with pytest.raises(ValueError, match="n_words must be between 1 and 400000"):
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
