"""Chapter 6's sweeps that do not fit in the chapter's time budget.

Run with ``cd experiments && ../.venv/bin/python netflix_sweep.py [PART ...]``, PART
among ``ingredients lambda thresholds adam tail trained`` (default: all; about 7 minutes of CPU
on one thread). Writes small CSV files beside this script, which chapter 6 reads and
``tests/test_chapter6_claims.py`` re-checks (re-running one row of each):

- ``netflix_ingredients.csv``: the simulation with one unstated ingredient of the
  paper changed at a time, five seeds each, 5,000 users x 500 items; per data set,
  the AUC, top-10 share and mean cosine of objective 1's item cosines under four
  equally optimal rescalings D (``item_similarity_suite``).
- ``netflix_lambda.csv``: MovieLens (ratings >= 4, movies with >= 20 positives), test
  splits 0-4, k = 50 and k = p: for the dot product and the cosines under the three D
  of Figure 1, the validation recall@10 (a validation split of the training data) and
  the test recall@10 at every lambda of ``GRID``, and which lambda the validation chose
  (``choose_lambda``).
- ``netflix_thresholds.csv``: split 0 at three rating thresholds and four ranks, each
  ranking at its own in-split lambda.
- ``netflix_tuning.csv``: the validation recall@10 of every setting of the trained
  remedies (temperature of the cosine model; learning rate, steps, negatives and
  inverse-propensity weights of the dot models).
- ``netflix_trained.csv``: the chosen settings (and the untuned tau = 0.1) trained
  with PyTorch on split 0, three seeds each: recall@10, nDCG@10 and popularity of the
  recommendations, the mean item cosine, the top-10 neighbour overlap of its item
  cosines with those under a rescaling D that gives every latent dimension of B unit
  norm, and the change of the loss under that rescaling.
- ``netflix_trained_pairs.csv``: for two seeds of one model, or two models from one
  seed, the top-10 neighbour overlap and the largest difference of the item cosines.
- ``netflix_trained_splits.csv``: the tuned cosine model (seed 0) on splits 0-4.
- ``netflix_adam.csv`` (part ``adam``, about a minute): objective 1 on the chapter's
  small simulated data (lambda = 300, k = 5) trained with Adam (learning rate 0.01,
  3,000 steps) from seeds 0-2 at three start sizes, and with weight decay 1e-4 from
  the largest: the largest imbalance, distance of the product from the closed form,
  and difference of an item cosine between seeds.
- ``netflix_tail.csv`` (part ``tail``, about a minute): split 0, seed 0, recall@10
  overall and on held-out films in the less popular two thirds (``tail_recall``)
  for uniform negatives, inverse-propensity weights with gamma = 1/4, 1/2 and 1 (the
  chosen learning rate and steps), the tuned cosine model and the closed-form dot product.
"""

from __future__ import annotations

import csv
import itertools
import json
import sys
from pathlib import Path

import numpy as np
import scipy.sparse

from cosine_book.cluster_recovery import cluster_recovery
from cosine_book.datasets import load_movielens
from cosine_book.diagnostics import top_k_overlap
from cosine_book.factorization import (
    RESCALINGS,
    fit_closed_form,
    fit_gradient_descent,
    gram_spectrum,
    item_similarity_suite,
)
from cosine_book.recommenders import evaluate_rankings, holdout_split, implicit_feedback
from cosine_book.similarity import cosine_matrix, unit_rows
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
K = 50
TRAIN_SEEDS = (0, 1, 2)
# The trained remedies. Each family's settings are tuned on a validation split of the
# training data (seed 100), never on the held-out items: (family, settings) per row.
BASE = {
    "cosine": {"score": "cosine", "learning_rate": 0.05, "n_steps": 200},
    "dot": {"score": "dot", "learning_rate": 0.02, "n_steps": 100},
}
TUNING = {
    "cosine (softmax), tau": [("cosine", {"temperature": t}) for t in (0.05, 0.1, 0.3, 1.0)],
    "dot, uniform negatives": [
        ("dot", {"negative_power": 0.0, "learning_rate": lr, "n_steps": n})
        for lr in (0.02, 0.05)
        for n in (100, 300)
    ],
    "dot, negatives ~ count^(3/4)": [
        ("dot", {"negative_power": 0.75, "learning_rate": lr, "n_steps": n})
        for lr in (0.02, 0.05)
        for n in (100, 300)
    ],
    "dot, IPS weights": [
        ("dot", {"negative_power": 0.0, "propensity_power": g, "learning_rate": lr, "n_steps": n})
        for g in (0.25, 0.5)
        for lr in (0.02, 0.05)
        for n in (100, 300)
    ],
}
UNTUNED = ("cosine", {"temperature": 0.1})  # the setting of the chapter's first version
SPLITS = (0, 1, 2, 3, 4)
# Objective 1 on MovieLens: lambda chosen per ranking inside each training split.
GRID = (100.0, 300.0, 1_000.0, 3_000.0, 10_000.0, 30_000.0)
THRESHOLDS = {">= 4": 4.0, ">= 3.5": 3.5, "any rating": 0.0}
THRESHOLD_RANKS = (10, 20, 50, 100)
# The dot product, and the cosines under Figure 1's D = diag(f)^alpha (alpha per label).
RANKINGS = {
    "dot product": None,
    "cosine, α = +1/2": 0.5,
    "cosine, α = 0": 0.0,
    "cosine, α = −1/2": -0.5,
}


def cosine_factors(A, B, d=1.0):
    """Factors ranking each user's items by cos(x_u A D, row i of B D^-1)."""
    return A * d, unit_rows(B / d)


def closed_form_scorers(spectrum, lam: float, k: int) -> dict:
    """Objective 1 at ``lam`` and rank ``k``: the scorers of ``RANKINGS``."""
    A, B = fit_closed_form(spectrum, lam, k)
    sigma = spectrum.singular_values[:k]
    f = sigma**2 / (sigma**2 + lam)
    return {
        label: (A, B) if alpha is None else cosine_factors(A, B, f**alpha)
        for label, alpha in RANKINGS.items()
    }


def choose_lambda(train, k: int) -> tuple[np.ndarray, dict]:
    """Validation recall@10 per lambda of ``GRID`` and ranking; the best lambda per ranking.

    ``train`` is split again (seed 100), never the test data; ties: the smaller lambda.
    """
    fit, validation = validation_split(train)
    spectrum = gram_spectrum(fit)
    recall = np.zeros((len(GRID), len(RANKINGS)))
    for row, lam in enumerate(GRID):
        scorers = closed_form_scorers(spectrum, lam, k)
        recall[row] = evaluate_rankings(fit, validation, scorers).recall.mean(axis=1)
    return recall, {label: GRID[np.argmax(recall[:, m])] for m, label in enumerate(RANKINGS)}


def test_recalls(train, test, k: int, lams) -> dict:
    """Test recall@10 of every closed-form ranking at each lambda: {(label, lam): recall}."""
    spectrum = gram_spectrum(train)
    out = {}
    for lam in lams:
        result = evaluate_rankings(train, test, closed_form_scorers(spectrum, lam, k))
        for m, label in enumerate(result.labels):
            out[label, lam] = float(result.recall[m].mean())
    return out


def lambda_rows(split: int, k: int | None = None) -> list[dict]:
    """One split: per ranking and lambda, validation and test recall; the chosen lambda."""
    train, test = movielens_split(split)
    k = train.shape[1] if k is None else k
    recall, best = choose_lambda(train, k)
    tested = test_recalls(train, test, k, GRID)
    rows = []
    for m, label in enumerate(RANKINGS):
        for row, lam in enumerate(GRID):
            rows.append(
                {
                    "split": split,
                    "k": k,
                    "ranking": label,
                    "lambda": lam,
                    "chosen": lam == best[label],
                    "validation_recall": round(float(recall[row, m]), 6),
                    "test_recall": round(tested[label, lam], 6),
                }
            )
    return rows


def threshold_rows(name: str, k: int) -> list[dict]:
    """Split 0 at one threshold and rank: each ranking at its own in-split lambda."""
    X = implicit_feedback(load_movielens(), threshold=THRESHOLDS[name], min_positives=20).X
    train, test = holdout_split(X, share=0.2, min_items=5, seed=0)
    rows = []
    for label, lam in choose_lambda(train, k)[1].items():
        recall = test_recalls(train, test, k, [lam])[label, lam]
        rows.append(
            {"positives": name, "p": X.shape[1], "k": k, "ranking": label, "lambda": lam}
            | {"test_recall": round(recall, 6)}
        )
    return rows


def ingredient_row(changed: str, seed: int) -> dict:
    """One data set of the one-ingredient-at-a-time sweep, scored under the four D."""
    sim = make_clustered_interactions(n_users=5_000, n_items=500, seed=seed, **INGREDIENTS[changed])
    suite = item_similarity_suite(sim.X, sim.item_clusters, lam1=LAM_SMALL, lam2=LAM_SMALL**0.5)
    n = sim.X.shape[1]
    scores = []
    for label in RESCALINGS:
        recovery = cluster_recovery(suite[label], sim.item_clusters)
        level = (float(np.sum(suite[label])) - n) / (n * (n - 1))
        scores.append((recovery.auc, recovery.neighbour_share, level))
    row = {"ingredient": changed, "seed": seed}
    for name, values in zip(
        ("auc", "share", "mean_cosine"), zip(*scores, strict=True), strict=True
    ):
        row |= {f"{name}_{m}": round(float(v), 6) for m, v in enumerate(values)}
    return row


def movielens_split(seed: int = 0):
    """The chapter's MovieLens training and held-out data (split ``seed``)."""
    data = implicit_feedback(load_movielens(), threshold=4.0, min_positives=20)
    return holdout_split(data.X, share=0.2, min_items=5, seed=seed)


def validation_split(train):
    """The training data split again (seed 100): where every setting is chosen."""
    return holdout_split(train, share=0.2, min_items=5, seed=100)


def settings_of(family: str, options: dict) -> dict:
    """The keyword arguments of ``train_embeddings`` for one configuration."""
    return BASE[family] | options


def _loss(torch, X, A, B, kwargs: dict, negatives=None):
    """Softmax cross-entropy over all items (cosine score) or negative sampling (dot).

    For the dot score, ``negatives`` holds 50 sampled item indices per user; without them,
    the expectation over negatives drawn in proportion to ``count ** negative_power``.
    Inverse-propensity weights ``count ** -propensity_power`` (scaled to keep the total)
    multiply the positive terms.
    """
    user = X @ A
    if kwargs["score"] == "cosine":
        unit = torch.nn.functional.normalize
        logits = unit(user, dim=1) @ unit(B, dim=1).T / kwargs["temperature"]
        return -(X * torch.log_softmax(logits, dim=1)).sum() / X.sum()
    logits, counts = user @ B.T, X.sum(dim=0)
    observed, gamma = X, kwargs.get("propensity_power", 0.0)
    if gamma > 0:
        inverse = torch.where(counts > 0, counts.clamp(min=1.0) ** -gamma, 0.0)
        observed = X * (inverse * X.sum() / (X @ inverse).sum())
    positive = -(observed * torch.nn.functional.logsigmoid(logits)).sum()
    if negatives is None:
        draw = counts ** kwargs.get("negative_power", 0.75)
        weight = 5.0 * X.sum(dim=1, keepdim=True) * draw / draw.sum()
        return (positive - (weight * torch.nn.functional.logsigmoid(-logits)).sum()) / X.sum()
    sampled = torch.gather(logits, 1, negatives)  # five negatives per positive, on average
    weight = 5.0 * X.sum(dim=1, keepdim=True) / negatives.shape[1]
    return (positive - (weight * torch.nn.functional.logsigmoid(-sampled)).sum()) / X.sum()


def train_embeddings(X, k: int, *, seed: int = 0, **kwargs) -> tuple:
    """Train ``score(XA, B)`` with Adam in PyTorch (float64, one thread): ``(A, B, loss)``.

    ``score="cosine"``: cos(x_u A, b_i) / temperature under the softmax cross-entropy
    (remedy 1); ``score="dot"``: x_u A . b_i under word2vec's logistic loss, five
    negatives per positive drawn in proportion to ``count ** negative_power`` (remedy 4).
    Full batch, ``n_steps`` steps at ``learning_rate`` from N(0, 0.1^2) entries.
    """
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # sums in the same order on every machine
    try:
        generator = torch.Generator().manual_seed(seed)
        dense = X.toarray() if scipy.sparse.issparse(X) else np.asarray(X, dtype=np.float64)
        Xt = torch.tensor(dense, dtype=torch.float64)
        shape = (Xt.shape[1], k)
        A = (0.1 * torch.randn(shape, generator=generator, dtype=torch.float64)).requires_grad_()
        B = (0.1 * torch.randn(shape, generator=generator, dtype=torch.float64)).requires_grad_()
        draw = Xt.sum(dim=0) ** kwargs.get("negative_power", 0.75)
        optimizer = torch.optim.Adam([A, B], lr=kwargs.get("learning_rate", 0.05))
        for _ in range(kwargs.get("n_steps", 300)):
            negatives = None
            if kwargs["score"] == "dot":
                negatives = torch.multinomial(
                    draw.expand(Xt.shape[0], -1), 50, replacement=True, generator=generator
                )
            optimizer.zero_grad()
            loss = _loss(torch, Xt, A, B, kwargs, negatives)
            loss.backward()
            optimizer.step()
        return A.detach().numpy().copy(), B.detach().numpy().copy(), float(loss.detach())
    finally:
        torch.set_num_threads(threads)


def trained_run(
    model: str, family: str, options: dict, seed: int, train, test
) -> tuple[dict, np.ndarray]:
    """Train one configuration from one seed; its scores and its item cosines."""
    kwargs = settings_of(family, options)
    A, B, loss = train_embeddings(train, K, seed=seed, **kwargs)
    factors = cosine_factors(A, B) if family == "cosine" else (A, B)
    result = evaluate_rankings(train, test, {model: factors})
    cosines = cosine_matrix(B)
    # D = diag(column norms of B): B D^-1 has unit-norm columns, A D keeps A B^T.
    d = np.linalg.norm(B, axis=0)
    rescaled = cosine_matrix(B / d)
    n = cosines.shape[0]
    row = {
        "model": model,
        "settings": json.dumps(options, sort_keys=True),
        "seed": seed,
        "recall": round(float(result.recall.mean()), 6),
        "ndcg": round(float(result.ndcg.mean()), 6),
        "popularity": round(float(result.popularity.mean()), 6),
        "mean_item_cosine": round((float(cosines.sum()) - n) / (n * n - n), 6),
        "loss": round(loss, 6),
        "overlap_under_d": round(top_k_overlap(cosines, rescaled, 10), 6),
        "loss_change_under_d": round(
            _full_loss(train, A * d, B / d, kwargs) - _full_loss(train, A, B, kwargs), 6
        ),
    }
    return row, cosines


def _full_loss(train, A, B, kwargs: dict) -> float:
    """The training loss (for negative sampling: its expectation over the negatives)."""
    import torch

    X = torch.tensor(train.toarray(), dtype=torch.float64)
    return float(_loss(torch, X, torch.tensor(A), torch.tensor(B), kwargs))


ADAM_RUNS = ((1e-3, 0.0), (1e-2, 0.0), (1e-1, 0.0), (1e-1, 1e-4))  # (start sd, decay)


def adam_row(init: float, weight_decay: float) -> dict:
    """Objective 1 (small data, lambda = 300, k = 5) by Adam from seeds 0-2."""
    X = make_clustered_interactions(
        n_users=2_000, n_items=100, n_clusters=5, min_items=10, seed=3
    ).X.toarray()
    A0, B0 = fit_closed_form(X, 300.0, 5)
    fits = [
        fit_gradient_descent(
            X,
            300.0,
            5,
            init=init,
            step=1e-2,
            n_steps=3_000,
            seed=seed,
            optimizer="adam",
            weight_decay=weight_decay,
        )
        for seed in TRAIN_SEEDS
    ]
    cosines = [cosine_matrix(B) for _, B in fits]
    return {
        "init": init,
        "weight_decay": weight_decay,
        "imbalance": round(max(float(np.linalg.norm(A.T @ A - B.T @ B)) for A, B in fits), 6),
        "product_gap": round(max(float(np.abs(A @ B.T - A0 @ B0.T).max()) for A, B in fits), 6),
        "seed_cosine_gap": round(max(float(np.abs(S - cosines[0]).max()) for S in cosines), 6),
    }


TAIL_RUNS = {
    "dot, uniform negatives": (
        "dot",
        {"negative_power": 0.0, "learning_rate": 0.05, "n_steps": 100},
    ),
    **{
        f"dot, IPS weights, gamma = {g:g}": (
            "dot",
            {"negative_power": 0.0, "propensity_power": g, "learning_rate": 0.02, "n_steps": 100},
        )
        for g in (0.25, 0.5, 1.0)
    },
    "cosine (softmax), tau = 0.3": ("cosine", {"temperature": 0.3}),
}


def tail_rows(models=None) -> list[dict]:
    """Overall and tail recall@10 on split 0 (seed 0) of trained models and the closed form."""
    train, test = movielens_split(0)
    scorers = {}
    for model, (family, options) in (models or TAIL_RUNS).items():
        A, B, _ = train_embeddings(train, K, seed=0, **settings_of(family, options))
        scorers[model] = cosine_factors(A, B) if family == "cosine" else (A, B)
    if models is None:
        lam = next(
            r["lambda"] for r in lambda_rows(0, K) if r["chosen"] and r["ranking"] == "dot product"
        )
        scorers["closed-form dot product"] = fit_closed_form(gram_spectrum(train), lam, K)
    overall = evaluate_rankings(train, test, scorers).recall.mean(axis=1)
    return [
        {"model": model, "recall": round(float(r), 6), "tail_recall": round(float(t), 6)}
        for model, r, t in zip(scorers, overall, tail_recall(train, test, scorers), strict=True)
    ]


def tail_recall(train, test, scorers: dict) -> np.ndarray:
    """Recall@10 counting only the held-out films in the less popular two thirds."""
    counts = np.asarray(train.sum(axis=0)).ravel()
    tail = np.zeros(counts.size)
    tail[np.argsort(counts, kind="stable")[: round(2 / 3 * counts.size)]] = 1.0
    return evaluate_rankings(train, test.multiply(tail), scorers).recall.mean(axis=1)


def write(path: Path, rows: list[dict]) -> None:
    """Rows as a CSV file with a header."""
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def tune(train) -> tuple[list[dict], dict]:
    """Every configuration of ``TUNING`` on the validation split; the best per family."""
    fit, validation = validation_split(train)
    rows, best = [], {}
    for model, configurations in TUNING.items():
        scores = []
        for family, options in configurations:
            A, B, _ = train_embeddings(fit, K, seed=0, **settings_of(family, options))
            factors = cosine_factors(A, B) if family == "cosine" else (A, B)
            recall = float(evaluate_rankings(fit, validation, {model: factors}).recall.mean())
            scores.append(recall)
            row = {"model": model, "settings": json.dumps(options, sort_keys=True)}
            rows.append(row | {"validation_recall": round(recall, 6)})
            print(rows[-1], flush=True)
        best[model] = configurations[int(np.argmax(scores))]
    return rows, best


def main() -> None:
    """Run the sweeps named on the command line (default: all) and write their files."""
    parts = sys.argv[1:] or ["ingredients", "lambda", "thresholds", "adam", "tail", "trained"]
    if "ingredients" in parts:
        rows = [ingredient_row(changed, seed) for changed in INGREDIENTS for seed in SEEDS]
        write(HERE / "netflix_ingredients.csv", rows)
    if "lambda" in parts:
        rows = [row for split in SPLITS for k in (K, None) for row in lambda_rows(split, k)]
        write(HERE / "netflix_lambda.csv", rows)
    if "thresholds" in parts:
        rows = [
            row for name in THRESHOLDS for k in THRESHOLD_RANKS for row in threshold_rows(name, k)
        ]
        write(HERE / "netflix_thresholds.csv", rows)
    if "tail" in parts:
        write(HERE / "netflix_tail.csv", tail_rows())
    if "adam" in parts:
        write(HERE / "netflix_adam.csv", [adam_row(*run) for run in ADAM_RUNS])
    if "trained" not in parts:
        return
    train, test = movielens_split()
    tuning, best = tune(train)
    write(HERE / "netflix_tuning.csv", tuning)
    models = {"cosine (softmax), tau = 0.1, untuned": UNTUNED} | best
    runs, pairs, cosines = [], [], {}
    for model, (family, options) in models.items():
        for seed in TRAIN_SEEDS:
            row, cosines[model, seed] = trained_run(model, family, options, seed, train, test)
            runs.append(row)
            print(row, flush=True)
    for first, second in itertools.combinations(list(cosines), 2):
        if first[0] != second[0] and first[1] != second[1]:
            continue  # same model, two seeds; or two models, the same seed
        pairs.append(
            {
                "model": first[0],
                "other": second[0],
                "seeds": f"{first[1]}-{second[1]}",
                "overlap": round(top_k_overlap(cosines[first], cosines[second], 10), 6),
                "largest_difference": round(
                    float(np.abs(cosines[first] - cosines[second]).max()), 6
                ),
            }
        )
    write(HERE / "netflix_trained.csv", runs)
    write(HERE / "netflix_trained_pairs.csv", pairs)
    family, options = best["cosine (softmax), tau"]
    splits = []
    for split in SPLITS:
        train_s, test_s = movielens_split(split)
        row, _ = trained_run("cosine (softmax), tuned", family, options, 0, train_s, test_s)
        splits.append(row | {"split": split})
        print(splits[-1], flush=True)
    write(HERE / "netflix_trained_splits.csv", splits)


if __name__ == "__main__":
    main()
