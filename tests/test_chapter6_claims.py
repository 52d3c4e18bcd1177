"""Chapter 6's sentences, checked against computation and against the stored outputs.

Each test quotes the sentence it checks. The first test guards every decimal number of
the prose: it must appear in the text printed by a code cell above it, so that prose
and outputs cannot drift apart. The others re-compute what the sentences claim (at the
chapter's sizes where that is quick), and re-run one row of each results file that
``experiments/netflix_sweep.py`` wrote.
"""

from __future__ import annotations

import csv
import importlib.util
import json
import re
from pathlib import Path

import numpy as np
import pytest

from cosine_book.datasets import load_movielens
from cosine_book.factorization import (
    cosine_matrix,
    dropout_shrinkage,
    fit_alternating,
    fit_objective1,
    gram_spectrum,
    rescale,
)
from cosine_book.recommenders import (
    cosine_factors,
    evaluate_rankings,
    holdout_split,
    implicit_feedback,
)
from cosine_book.simulation import make_clustered_interactions

ROOT = Path(__file__).resolve().parents[1]
CHAPTER = ROOT / "chapters" / "06_netflix.ipynb"
EXPERIMENTS = ROOT / "experiments"
# Numbers in the prose that are inputs, not results.
INPUTS = {"0.25"}  # the paper's Uniform(0.25, 1.5)


def outputs_text(cell: dict) -> str:
    parts = []
    for output in cell.get("outputs", []):
        if "text" in output:
            parts.append("".join(output["text"]))
        else:
            parts.append("".join(output.get("data", {}).get("text/plain", "")))
    return "".join(parts)


def test_every_decimal_in_the_prose_is_printed_above_it():
    printed = ""
    for index, cell in enumerate(json.loads(CHAPTER.read_text())["cells"]):
        if cell["cell_type"] == "code":
            printed += outputs_text(cell)
            continue
        text = re.sub(r"\$\$.*?\$\$", "", "".join(cell["source"]), flags=re.S)
        for match in re.finditer(r"(?<![\w.])\d+\.\d{2,}(?!\w)", text):
            number = match.group()
            assert number in INPUTS or number in printed, (index, number)


def load_sweep():
    spec = importlib.util.spec_from_file_location("netflix_sweep", EXPERIMENTS / "netflix_sweep.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def read(name: str) -> list[dict]:
    with (EXPERIMENTS / name).open() as handle:
        return list(csv.DictReader(handle))


def test_a_row_of_the_ingredient_sweep_reproduces():
    # "the script experiments/netflix_sweep.py ... writes its results to
    # experiments/netflix_ingredients.csv" (numpy only: the same on every machine)
    sweep = load_sweep()
    rows = read("netflix_ingredients.csv")
    assert len(rows) == 25
    stored = next(r for r in rows if r["ingredient"] == "p_c: all equal" and r["seed"] == "3")
    fresh = sweep.ingredient_row("p_c: all equal", 3)
    for key, value in fresh.items():
        if key not in ("ingredient", "seed"):
            assert float(stored[key]) == pytest.approx(value, abs=2e-6), key


def test_a_trained_remedy_reproduces_and_d_leaves_the_dot_loss_alone():
    # "Each is trained from seeds 0, 1 and 2 by experiments/netflix_sweep.py ... (a test
    # re-runs one training)"; torch kernels may differ in the last bits between CPUs.
    sweep = load_sweep()
    train, test = sweep.movielens_split()
    model = "trained with cosine (softmax)"
    row, _ = sweep.trained_run(model, 1, train, test)
    stored = next(
        r for r in read("netflix_trained.csv") if r["model"] == model and r["seed"] == "1"
    )
    for key in ("recall", "ndcg", "popularity", "mean_item_cosine", "overlap_under_d"):
        assert float(stored[key]) == pytest.approx(row[key], abs=0.01), key
    # "the loss is exactly the same after rescaling (change 0.000)" for negative sampling,
    # and rises for the cosine-trained model.
    for stored_row in read("netflix_trained.csv"):
        change = float(stored_row["loss_change_under_d"])
        if stored_row["model"].startswith("dot"):
            assert abs(change) < 1e-6
        else:
            assert change > 0.001
    # "three seeds share only about 60 % ... only a quarter of their neighbour lists"
    pairs = read("netflix_trained_pairs.csv")
    cosine = [float(p["overlap"]) for p in pairs if p["model"] == model]
    negatives = [float(p["overlap"]) for p in pairs if p["model"] != model]
    assert max(cosine) < 0.7 and max(negatives) < 0.35


def test_the_simulators_cap_binds_and_its_users_carry_nothing():
    # "8 users in setting A (4 in B) who consume every item, and 32 (12) who consume at
    # least half of them"
    a = make_clustered_interactions(seed=0)
    b = make_clustered_interactions(
        seed=1, cluster_concentration=None, preference="lognormal", power_law="sample", min_items=10
    )
    for data, every, half in ((a, 8, 32), (b, 4, 12)):
        assert np.sum(data.items_per_user == 1000) == every
        assert np.sum(data.items_per_user >= 500) == half


@pytest.fixture(scope="module")
def movielens():
    return implicit_feedback(load_movielens(), threshold=4.0, min_positives=20).X


def test_movielens_dot_beats_cosine_below_full_rank_and_ties_at_full_rank(movielens):
    # "At k = 50 the dot product reaches ... every cosine 0.187 to 0.192. At k = p = 656
    # the alpha = +1/2 cosine ties the dot product exactly ..., while the cosines under
    # alpha = 0 and -1/2 still lose": split by split.
    p = movielens.shape[1]
    for seed in range(5):
        train, test = holdout_split(movielens, share=0.2, min_items=5, seed=seed)
        spectrum = gram_spectrum(train)
        for k in (50, p):
            A, B = fit_objective1(spectrum, 300.0, k)
            f = dropout_shrinkage(spectrum.singular_values[:k], 300.0)
            result = evaluate_rankings(
                train,
                test,
                {
                    "dot": (A, B),
                    "+1/2": cosine_factors(A, B, f**0.5),
                    "0": cosine_factors(A, B),
                    "-1/2": cosine_factors(A, B, f**-0.5),
                },
            )
            dot, plus, zero, minus = result.recall.mean(axis=1)
            if k == 50:
                assert max(plus, zero, minus) < dot - 0.07
            else:
                np.testing.assert_array_equal(result.recall[0], result.recall[1])
                assert minus < zero < dot - 0.02


def test_seeds_agree_on_predictions_and_disagree_on_cosines():
    # "The five fits agree on every prediction to better than 1e-8 of the largest one,
    # and their item-item cosines differ by up to 0.72"
    small = make_clustered_interactions(
        n_users=2_000, n_items=100, n_clusters=5, min_items=10, seed=3
    ).X.toarray()
    fits = [fit_alternating(small, 300.0, 5, objective=1, seed=s, n_iter=500) for s in range(5)]
    products = [A @ B.T for A, B in fits]
    cosines = [cosine_matrix(B) for _, B in fits]
    scale = np.abs(products[0]).max()
    assert max(np.abs(P - products[0]).max() for P in products) < 1e-8 * scale
    largest = max(np.abs(S - T).max() for S in cosines for T in cosines)
    assert largest > 0.6


def test_dot_product_retrieval_ignores_d_and_cosine_retrieval_depends_on_it():
    # "the dot product, the score the model was trained for and the same under every D
    # ... every cosine ranking does far worse ... The last column shows what the cosine
    # favours: rare items" (a smaller simulation)
    data = make_clustered_interactions(n_users=2_000, n_items=200, seed=0)
    train, test = holdout_split(data.X, share=0.2, min_items=10, seed=0)
    spectrum = gram_spectrum(train)
    A, B = fit_objective1(spectrum, 1_000.0, 50)
    f = dropout_shrinkage(spectrum.singular_values[:50], 1_000.0)
    reference = train.toarray() @ A @ B.T
    scorers = {"dot": (A, B)}
    for m, d in enumerate((f**0.5, np.ones(50), f**-0.5, np.r_[np.ones(49), 0.01])):
        A_D, B_D = rescale(A, B, d)
        np.testing.assert_allclose(
            train.toarray() @ A_D @ B_D.T, reference, rtol=0, atol=1e-12 * reference.max()
        )
        scorers[m] = cosine_factors(A, B, d)
    result = evaluate_rankings(train, test, scorers)
    recall = result.recall.mean(axis=1)
    popularity = result.popularity.mean(axis=1)
    assert recall[1:].max() < 0.7 * recall[0]
    assert popularity[1:].max() < popularity[0]
