"""Chapter 6's two sweeps that do not fit in the chapter's time budget.

Run with ``cd experiments && ../.venv/bin/python netflix_sweep.py`` (about half a minute
on 2 cores). Writes three small CSV files beside this script, which chapter 6 reads
and ``tests/test_chapter6_claims.py`` re-checks (re-running one row of each):

- ``netflix_ingredients.csv``: the simulation with one unstated ingredient of the
  paper changed at a time, five seeds each, 5,000 users x 500 items; per data set,
  the AUC, top-10 share and mean cosine of objective 1's item cosines under four
  equally optimal rescalings D (``rescaling_spread``).
- ``netflix_trained.csv``: the two remedies trained with PyTorch on MovieLens
  (ratings >= 4, movies with >= 20 positives, split seed 0, k = 50), three seeds
  each: recall@10, nDCG@10 and popularity of the recommendations, the mean item
  cosine, and for each run the top-10 neighbour overlap of its item cosines with
  those under a rescaling D that gives every latent dimension of B unit norm, and
  the change of the loss under that rescaling.
- ``netflix_trained_pairs.csv``: for each model and pair of seeds, the top-10
  neighbour overlap and the largest difference of the item cosines.
"""

from __future__ import annotations

import csv
import itertools
from pathlib import Path

import numpy as np

from cosine_book.datasets import load_movielens
from cosine_book.diagnostics import top_k_overlap
from cosine_book.factorization import cosine_matrix, rescaling_spread
from cosine_book.recommenders import (
    cosine_factors,
    evaluate_rankings,
    holdout_split,
    implicit_feedback,
    train_embeddings,
)
from cosine_book.simulation import make_clustered_interactions

HERE = Path(__file__).resolve().parent
INGREDIENTS = {
    "none (choices of setting A)": {},
    "p_c: all equal": {"cluster_concentration": None},
    "p_uc: log-normal": {"preference": "lognormal"},
    "power law: Pareto draws": {"power_law": "sample"},
    "k_u: 10 x power-law value": {"min_items": 10},
}
SEEDS = (0, 1, 2, 3, 4)
LAM_SMALL = 2_500.0
# The trained remedies: (score, learning rate, steps), each from three seeds.
MODELS = {
    "trained with cosine (softmax)": ("cosine", 0.05, 200),
    "dot, negatives ~ count^(3/4)": ("dot", 0.02, 100),
}
TRAIN_SEEDS = (0, 1, 2)
K = 50


def ingredient_row(changed: str, seed: int) -> dict:
    """One data set of the one-ingredient-at-a-time sweep, scored under the four D."""
    sim = make_clustered_interactions(n_users=5_000, n_items=500, seed=seed, **INGREDIENTS[changed])
    spread = rescaling_spread(sim.X, sim.item_clusters, lam=LAM_SMALL)
    row = {"ingredient": changed, "seed": seed}
    for name, values in (
        ("auc", spread.auc),
        ("share", spread.neighbour_share),
        ("mean_cosine", spread.mean_cosine),
    ):
        row |= {f"{name}_{m}": round(float(v), 6) for m, v in enumerate(values)}
    return row


def movielens_split():
    """The chapter's MovieLens training and held-out data (split seed 0)."""
    data = implicit_feedback(load_movielens(), threshold=4.0, min_positives=20)
    return holdout_split(data.X, share=0.2, min_items=5, seed=0)


def trained_run(model: str, seed: int, train, test) -> tuple[dict, np.ndarray]:
    """Train one remedy from one seed; its scores and its item cosines."""
    score, rate, steps = MODELS[model]
    A, B, loss = train_embeddings(
        train, K, score=score, learning_rate=rate, n_steps=steps, seed=seed
    )
    factors = cosine_factors(A, B) if score == "cosine" else (A, B)
    result = evaluate_rankings(train, test, {model: factors})
    cosines = cosine_matrix(B)
    # D = diag(column norms of B): B D^-1 has unit-norm columns, A D keeps A B^T.
    d = np.linalg.norm(B, axis=0)
    rescaled = cosine_matrix(B / d)
    n = cosines.shape[0]
    row = {
        "model": model,
        "seed": seed,
        "recall": round(float(result.recall.mean()), 6),
        "ndcg": round(float(result.ndcg.mean()), 6),
        "popularity": round(float(result.popularity.mean()), 6),
        "mean_item_cosine": round((float(cosines.sum()) - n) / (n * n - n), 6),
        "loss": round(loss, 6),
        "overlap_under_d": round(top_k_overlap(cosines, rescaled, 10), 6),
        "loss_change_under_d": round(
            _full_loss(train, A * d, B / d, score) - _full_loss(train, A, B, score), 6
        ),
    }
    return row, cosines


def _full_loss(train, A, B, score: str) -> float:
    """The training loss (for negative sampling: its expectation over the negatives)."""
    import torch

    X = torch.tensor(train.toarray(), dtype=torch.float64)
    A, B = torch.tensor(A), torch.tensor(B)
    user = X @ A
    if score == "cosine":
        unit = torch.nn.functional.normalize
        logits = unit(user, dim=1) @ unit(B, dim=1).T / 0.1
        return float(-(X * torch.log_softmax(logits, dim=1)).sum() / X.sum())
    logits = user @ B.T
    draw = X.sum(dim=0) ** 0.75
    draw = draw / draw.sum()
    positive = -(X * torch.nn.functional.logsigmoid(logits)).sum()
    negative = -(
        5.0 * X.sum(dim=1, keepdim=True) * draw * torch.nn.functional.logsigmoid(-logits)
    ).sum()
    return float((positive + negative) / X.sum())


def write(path: Path, rows: list[dict]) -> None:
    """Rows as a CSV file with a header."""
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def main() -> None:
    """Run both sweeps and write the three files."""
    rows = [ingredient_row(changed, seed) for changed in INGREDIENTS for seed in SEEDS]
    write(HERE / "netflix_ingredients.csv", rows)
    train, test = movielens_split()
    runs, pairs = [], []
    for model in MODELS:
        cosines = {}
        for seed in TRAIN_SEEDS:
            row, cosines[seed] = trained_run(model, seed, train, test)
            runs.append(row)
            print(row, flush=True)
        for first, second in itertools.combinations(TRAIN_SEEDS, 2):
            pairs.append(
                {
                    "model": model,
                    "seeds": f"{first}-{second}",
                    "overlap": round(top_k_overlap(cosines[first], cosines[second], 10), 6),
                    "largest_difference": round(
                        float(np.abs(cosines[first] - cosines[second]).max()), 6
                    ),
                }
            )
    write(HERE / "netflix_trained.csv", runs)
    write(HERE / "netflix_trained_pairs.csv", pairs)


if __name__ == "__main__":
    main()
