r"""Chapter 7's sweeps, too slow for the chapter.

Run ``.venv/bin/python experiments/ch7_sweeps.py [name ...]`` (all of them: 15 to 25
minutes on 2 cores). Each writes a small file that chapter 7 quotes and
``tests/test_chapter7_claims.py`` checks, re-running one row:

- ``projection``: :func:`cosine_book.embeddings.train_query_projection` at every
  ``(weight_decay, steps)`` of ``SETTINGS``, on the splits ``SPLITS`` of each question
  set (:func:`~cosine_book.datasets.load_qa_set`, MiniLM embeddings by
  :func:`qa_embeddings`):
  trained on half of the topics, evaluated on the other half (pool: their answers and
  other questions; and the whole set's pool, the training half's texts included);
  ``ch7_projection.csv``. ``transfer``: trained on all 40 rows of
  one set, evaluated on the other; ``ch7_transfer.csv``.
- ``hubness``: the skewness of the ``k``-occurrence of GloVe's ``n`` most frequent
  words, for ``n`` in ``SIZES``, ``k`` in ``KS`` and each of ``VARIANTS``;
  ``ch7_hubness.csv``.
- ``balance``: the relative imbalance :math:`\lVert P^\top P - C^\top C\rVert_F /
  \lVert C^\top C\rVert_F` of the dot-product digit model after 300, 1,000 and
  3,000 steps, without decay, with an L2 penalty in the loss and with AdamW's
  decoupled decay, for seeds 0-2; ``ch7_balance.csv``.
- ``seeds``: the chapter's digit figures for training seeds 0-4
  (``ch7_digit_seeds.csv``) and the top-10 overlap of the cosine neighbours between
  seeds (``ch7_seed_overlap.csv``).
- ``float32``: :math:`\cos(x, x)` and :math:`\cos(x, x + \sigma z)` in float32 for
  10,000 random :math:`x \in \mathbb{R}^d`, three ways of computing it, several
  :math:`d`; ``ch7_float32.csv``. The NumPy and PyTorch rows depend on the CPU's
  kernels (they describe the machine that ran the sweep); the left-to-right rows do
  not.
- ``isotropy``: MiniLM's mean cosine over pairs, and the dimensions that carry it, on
  four sets of texts; ``ch7_isotropy.csv``.
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from scipy.special import softmax
from scipy.stats import binomtest, skew
from sklearn.metrics import log_loss

from cosine_book.cluster_recovery import pair_auc
from cosine_book.datasets import (
    load_digits_split,
    load_glove,
    load_qa_set,
    load_sentence_model,
    load_tiny_shakespeare,
)
from cosine_book.diagnostics import (
    all_but_the_top,
    centered_cosine_matrix,
    k_occurrence,
    neighbour_agreement,
    related_pair_cosines,
    top_k_overlap,
)
from cosine_book.embeddings import (
    float32_cosines,
    train_alignment_only,
    train_embedding_model,
    train_query_projection,
)
from cosine_book.portable import power, standard_normal, uniform
from cosine_book.similarity import cosine_matrix

HERE = Path(__file__).resolve().parent
FILES = {
    name: HERE / f"ch7_{name}.csv"
    for name in ("projection", "transfer", "hubness", "balance", "float32", "isotropy")
}
FILES |= {"seeds": HERE / "ch7_digit_seeds.csv", "overlap": HERE / "ch7_seed_overlap.csv"}
PROJECTION, HUBNESS = FILES["projection"], FILES["hubness"]
QA_SETS = {1: load_qa_set(1), 2: load_qa_set(2)}
STEPS = (10, 25, 50, 75, 100, 200)
SETTINGS = [(decay, steps) for decay in (0.0, 1e-3) for steps in STEPS]
SETTINGS += [(1e-2, 50), (1e-2, 100)]
SPLITS = range(20)
SIZES = (5_000, 10_000, 20_000, 50_000)
KS = (5, 10, 50)
VARIANTS = ("raw", "centred", "top direction removed", "whitened")
BALANCE_MODES = {
    "no decay": {},
    "L2 1e-3 in the loss": {"weight_decay": 1e-3},
    "AdamW 1e-2": {"weight_decay": 1e-2, "decoupled": True},
    "AdamW 1e-1": {"weight_decay": 1e-1, "decoupled": True},
}
CHECKPOINTS = (300, 1_000, 3_000)
DIGIT_SEEDS = range(5)
DIMENSIONS = (16, 64, 384, 768, 4096)
FORMULAS = ("left to right", "NumPy dot / norm", "NumPy einsum / norm", "F.cosine_similarity")


def write(path: Path, rows: list[dict]) -> None:
    """Write ``rows`` as a CSV file with a header."""
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


# ------------------------------------------------------------------ question sets


def qa_embeddings(number: int) -> dict[str, np.ndarray]:
    """MiniLM embeddings (unit rows, float64) of a question set's first three columns."""
    model = load_sentence_model()
    columns = zip(*QA_SETS[number], strict=True)
    return {
        name: model.encode(list(texts), normalize_embeddings=True).astype(np.float64)
        for name, texts in zip(("questions", "answers", "others"), columns, strict=False)
    }


def answer_retrieval(queries: np.ndarray, answers: np.ndarray, others: np.ndarray) -> dict:
    """Recall@1, MRR (ties in the answer's favour) and the share of questions first.

    Row ``i`` of ``queries`` is answered by row ``i`` of ``answers``; the pool is all
    ``answers`` and ``others``, ranked by cosine.
    """
    S = cosine_matrix(queries, np.vstack([answers, others]))
    n = len(answers)
    ranks = 1 + np.sum(S > np.diag(S)[:, None], axis=1)
    first = float(np.mean(np.argmax(S, axis=1) >= n))
    recall, mrr = float(np.mean(ranks == 1)), float(np.mean(1 / ranks))
    return {"recall@1": recall, "MRR": mrr, "question first": first}


def split(seed: int, n: int = 40) -> tuple[np.ndarray, np.ndarray]:
    """Training and held-out topics of split ``seed``: a random half each."""
    order = np.random.default_rng(seed).permutation(n)
    return order[: n // 2], order[n // 2 :]


def _scores(prefix: str, result: dict) -> dict:
    return {
        f"recall_at_1_{prefix}": result["recall@1"],
        f"mrr_{prefix}": round(result["MRR"], 6),
        f"question_first_{prefix}": result["question first"],
    }


def projection_row(
    texts: dict[str, np.ndarray], decay: float, steps: int, seed: int, qa_set: int = 1
) -> dict:
    """Recall@1, MRR and questions-first share on the held-out half, before and after."""
    train, held = split(seed)
    Q, A, O = (texts[name] for name in ("questions", "answers", "others"))  # noqa: E741
    W = train_query_projection(Q[train], A[train], O[train], weight_decay=decay, steps=steps)
    row = {"qa_set": qa_set, "weight_decay": decay, "steps": steps, "split": seed}
    row |= _scores("before", answer_retrieval(Q[held], A[held], O[held]))
    row |= _scores("after", answer_retrieval(Q[held] @ W, A[held], O[held]))
    # The whole set's pool, the training half's texts included.
    for name, queries in (("before", Q[held]), ("after", Q[held] @ W)):
        first = np.argmax(cosine_matrix(queries, np.vstack([A, O])), axis=1)
        row[f"recall_at_1_full_pool_{name}"] = float(np.mean(first == held))
    row["training_answer_first"] = float(np.mean(np.isin(first, train)))
    return row | {"distance_from_identity": round(float(np.linalg.norm(W - np.eye(len(W)))), 4)}


def _first_hits(queries: np.ndarray, texts: dict[str, np.ndarray]) -> np.ndarray:
    cosines = cosine_matrix(queries, np.vstack([texts["answers"], texts["others"]]))
    return np.argmax(cosines, axis=1) == np.arange(len(queries))


def transfer_row(
    source: dict[str, np.ndarray], target: dict[str, np.ndarray], decay: float, steps: int
) -> dict:
    """A map trained on all of ``source``, evaluated on ``target``: recall@1, gains, losses."""
    W = train_query_projection(
        source["questions"], source["answers"], source["others"], weight_decay=decay, steps=steps
    )
    before = _first_hits(target["questions"], target)
    after = _first_hits(target["questions"] @ W, target)
    gained, lost = int(np.sum(after & ~before)), int(np.sum(before & ~after))
    p = binomtest(gained, gained + lost).pvalue if gained + lost else 1.0
    return {
        "weight_decay": decay,
        "steps": steps,
        "recall_at_1_before": float(before.mean()),
        "recall_at_1_after": float(after.mean()),
        "gained": gained,
        "lost": lost,
        "mcnemar_p": float(f"{p:.3g}"),
    }


def run_projection() -> None:
    """The split sweep on both sets, then the transfer between them."""
    texts = {qa_set: qa_embeddings(qa_set) for qa_set in QA_SETS}
    rows = [
        projection_row(texts[qa_set], decay, steps, seed, qa_set)
        for qa_set in QA_SETS
        for decay, steps in SETTINGS
        for seed in SPLITS
    ]
    write(FILES["projection"], rows)
    transfer = [
        {"trained_on": source, "evaluated_on": target}
        | transfer_row(texts[source], texts[target], decay, steps)
        for source, target in ((1, 2), (2, 1))
        for decay, steps in SETTINGS
    ]
    write(FILES["transfer"], transfer)


# ------------------------------------------------------------------------- hubness


def whiten(rows: np.ndarray, fit: np.ndarray) -> np.ndarray:
    """ZCA whitening fitted on ``fit``: centred, then unit variance in every direction."""
    mean = fit.mean(axis=0)
    values, vectors = np.linalg.eigh(np.cov((fit - mean).T))
    return (rows - mean) @ vectors @ np.diag(values**-0.5) @ vectors.T


def hubness_row(vectors: np.ndarray, n: int, variant: str, k: int = 10) -> dict:
    """Skewness of the ``k``-occurrence of the first ``n`` words, after ``variant``."""
    words = vectors[:n].astype(np.float64)
    processed = {
        "raw": lambda: words,
        "centred": lambda: all_but_the_top(words, 0),
        "top direction removed": lambda: all_but_the_top(words, 1),
        "whitened": lambda: whiten(words, words),
    }[variant]()
    counts = k_occurrence(processed, k)
    unit = processed / np.linalg.norm(processed, axis=1, keepdims=True)
    total = unit.sum(axis=0)
    return {
        "n_words": n,
        "k": k,
        "variant": variant,
        "skew": round(float(skew(counts)), 4),
        "largest": int(counts.max()),
        "never": int(np.sum(counts == 0)),
        "mean_cosine": round(float((total @ total - n) / (n * (n - 1))), 4),
    }


def run_hubness() -> None:
    """Every size, k and variant."""
    vectors = load_glove(max(SIZES)).vectors
    rows = [hubness_row(vectors, n, v, k) for n in SIZES for k in KS for v in VARIANTS]
    write(FILES["hubness"], rows)


# ---------------------------------------------------------------- digit models


def _digits():
    digits = load_digits_split()
    return digits, (digits.x_train, digits.y_train, digits.x_test, digits.y_test)


def imbalance(model) -> float:
    """|P'P - C'C|_F / |C'C|_F: 0 when the two layers are balanced."""
    M, N = model.P.T @ model.P, model.class_vectors.T @ model.class_vectors
    return float(np.linalg.norm(M - N) / np.linalg.norm(N))


def balance_row(mode: str, steps: int, seed: int) -> dict:
    """The imbalance of the dot model after ``steps`` steps under ``mode``."""
    _, split_ = _digits()
    model = train_embedding_model(
        *split_, objective="dot", steps=steps, seed=seed, **BALANCE_MODES[mode]
    )
    return {
        "mode": mode,
        "seed": seed,
        "steps": steps,
        "imbalance": round(imbalance(model), 4),
        "test_accuracy": round(model.test_accuracy, 4),
    }


def run_balance() -> None:
    """Every mode, checkpoint and seed."""
    rows = [
        balance_row(mode, steps, seed)
        for mode in BALANCE_MODES
        for seed in range(3)
        for steps in CHECKPOINTS
    ]
    write(FILES["balance"], rows)


def digit_seed_row(seed: int) -> tuple[dict, dict]:
    """The chapter's digit figures for one training seed, and its three models' cosines."""
    digits, split_ = _digits()
    labels, x = digits.y_test, digits.x_test
    models = {o: train_embedding_model(*split_, objective=o, seed=seed) for o in ("dot", "cosine")}
    decayed = train_embedding_model(*split_, objective="dot", weight_decay=1e-3, seed=seed)
    row = {"seed": seed}
    for objective, model in models.items():
        row[f"accuracy_{objective}"] = model.test_accuracy
    # The rescaling freedom: the chapter's D (from default_rng(7)).
    scales = power(10.0, uniform(np.random.default_rng(7), -1.0, 1.0, size=16))
    for objective, model in models.items():
        S = cosine_matrix(model.embed(x))
        rescaled = model.rescaled(scales)
        row[f"agreement_{objective}"] = round(neighbour_agreement(S, labels, 10), 4)
        row[f"kept_{objective}"] = round(top_k_overlap(S, cosine_matrix(rescaled.embed(x)), 10), 4)
        probabilities = softmax(rescaled.logits(x), axis=1)
        row[f"loss_rescaled_{objective}"] = round(
            log_loss(labels, probabilities, labels=range(10)), 4
        )
    row["imbalance_none"] = round(imbalance(models["dot"]), 4)
    row["imbalance_l2"] = round(imbalance(decayed), 4)
    # Ranking the classes by cosine instead of the learned score.
    dot = models["dot"]
    learned = dot.logits(x).argmax(axis=1)
    by_cosine = cosine_matrix(dot.embed(x), dot.class_vectors).argmax(axis=1)
    row["cosine_ranking_changes"] = int(np.sum(by_cosine != learned))
    row["cosine_ranking_cost"] = round(
        float(np.mean(learned == labels) - np.mean(by_cosine == labels)), 4
    )
    # Thresholds do not carry over between scales.
    same = {}
    for scale in (5.0, 30.0):
        model = train_embedding_model(*split_, objective="cosine", scale=scale, seed=seed)
        S = cosine_matrix(model.embed(x))
        same[scale] = related_pair_cosines(S, labels)[0]
        row[f"accuracy_s{scale:g}"] = model.test_accuracy
        row[f"pair_auc_s{scale:g}"] = round(pair_auc(S, labels), 4)
    row["s30_pass_at_s5_median"] = round(float(np.mean(same[30.0] >= np.median(same[5.0]))), 4)
    # Whose similarity: the parity model against the digit model.
    parity = train_embedding_model(
        digits.x_train, digits.y_train % 2, x, labels % 2, objective="cosine", seed=seed
    )
    row["parity_digit_overlap"] = round(
        top_k_overlap(cosine_matrix(models["cosine"].embed(x)), cosine_matrix(parity.embed(x)), 10),
        4,
    )
    # Collapse: raw against centred.
    collapsed = train_alignment_only(digits.x_train, seed=seed).embed(x)
    row["collapse_auc_raw"] = round(pair_auc(cosine_matrix(collapsed), labels), 4)
    row["collapse_auc_centred"] = round(pair_auc(centered_cosine_matrix(collapsed), labels), 4)
    cosines = {
        "dot, L2 1e-3": cosine_matrix(decayed.embed(x)),
        "dot": cosine_matrix(models["dot"].embed(x)),
        "cosine": cosine_matrix(models["cosine"].embed(x)),
    }
    return row, cosines


def run_seeds() -> None:
    """Every seed; then the overlap of every pair of seeds, per model."""
    rows, cosines = zip(*(digit_seed_row(seed) for seed in DIGIT_SEEDS), strict=True)
    write(FILES["seeds"], list(rows))
    overlap = [
        {"model": name, "seed_a": a, "seed_b": b}
        | {"overlap": round(top_k_overlap(cosines[a][name], cosines[b][name], 10), 4)}
        for name in cosines[0]
        for a in DIGIT_SEEDS
        for b in DIGIT_SEEDS
        if a < b
    ]
    write(FILES["overlap"], overlap)


# -------------------------------------------------------------- float32 cosines


def _cosines(formula: str, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """float32 cosines of the rows of x and y, computed by ``formula``."""
    if formula == "left to right":  # cumsum: the same bits on every CPU
        return float32_cosines(x, y)
    if formula == "NumPy dot / norm":
        return np.array(
            [
                np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b))
                for a, b in zip(x, y, strict=True)
            ]
        )
    if formula == "NumPy einsum / norm":  # all rows at once
        norms = np.linalg.norm(x, axis=1) * np.linalg.norm(y, axis=1)
        return np.einsum("ij,ij->i", x, y) / norms
    a, b = torch.from_numpy(x), torch.from_numpy(y)
    return F.cosine_similarity(a, b, dim=-1).numpy()


def float32_rows(d: int, n: int = 10_000) -> list[dict]:
    """The shares of cos(x, x) above, at and below 1, and cos(x, x + noise) >= 1."""
    rng = np.random.default_rng(0)
    x = standard_normal(rng, (n, d)).astype(np.float32)  # as the chapter draws them
    noise = standard_normal(rng, (n, d)).astype(np.float32)
    eps = float(np.finfo(np.float32).eps)
    rows = []
    for formula in FORMULAS:
        self_cosines = _cosines(formula, x, x).astype(np.float64)
        row = {"d": d, "formula": formula}
        for name, share in (
            ("above_1", np.mean(self_cosines > 1)),
            ("exactly_1", np.mean(self_cosines == 1)),
            ("below_1", np.mean(self_cosines < 1)),
        ):
            row[name] = round(float(share), 4)
        row["farthest_eps"] = round(float(np.max(np.abs(self_cosines - 1))) / eps, 2)
        for size in (1e-4, 1e-3):
            y = x + np.float32(size) * noise
            row[f"noise_{size:g}_at_least_1"] = round(
                float(np.mean(_cosines(formula, x, y) >= 1)), 4
            )
        rows.append(row)
    return rows


def run_float32() -> None:
    """Every d."""
    torch.set_num_threads(1)
    write(FILES["float32"], [row for d in DIMENSIONS for row in float32_rows(d)])


# -------------------------------------------------------------------- isotropy


def corpus_texts(name: str) -> list[str]:
    """The texts of one corpus of the isotropy sweep."""
    if name.startswith("question set"):
        rows = QA_SETS[int(name[-1])]
        return [text for row in rows for text in row[:3]]
    if name == "Tiny Shakespeare, 2,000 lines":
        lines = [line.strip() for line in load_tiny_shakespeare().split("\n")]
        return [line for line in lines if len(line) >= 20][:2_000]
    return list(load_glove(2_000).words)  # "2,000 frequent words"


CORPORA = (
    "question set 1",
    "question set 2",
    "Tiny Shakespeare, 2,000 lines",
    "GloVe's 2,000 most frequent words",
)


def isotropy_row(name: str) -> dict:
    """Mean cosine over pairs of distinct rows, and the three dimensions that carry most."""
    texts = corpus_texts(name)
    model = load_sentence_model()
    unit = model.encode(texts, normalize_embeddings=True, batch_size=64).astype(np.float64)
    n = len(unit)
    parts = (unit.sum(axis=0) ** 2 - np.sum(unit * unit, axis=0)) / (n * (n - 1))
    row = {"corpus": name, "n_texts": n, "mean_cosine": round(float(parts.sum()), 4)}
    for rank, j in enumerate(np.argsort(-np.abs(parts), kind="stable")[:3], start=1):
        row[f"dim_{rank}"] = int(j)
        row[f"share_{rank}"] = round(float(parts[j] / parts.sum()), 4)
    return row


def run_isotropy() -> None:
    """Every corpus."""
    write(FILES["isotropy"], [isotropy_row(name) for name in CORPORA])


SWEEPS = {
    "projection": run_projection,
    "hubness": run_hubness,
    "balance": run_balance,
    "seeds": run_seeds,
    "float32": run_float32,
    "isotropy": run_isotropy,
}


def main(names: list[str]) -> None:
    """Run the named sweeps (all without names) and write their files."""
    for name in names or SWEEPS:
        SWEEPS[name]()


if __name__ == "__main__":
    main(sys.argv[1:])
