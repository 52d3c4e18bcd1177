"""Chapter 7's sweeps, too slow for the chapter: the learned query map and hubness.

Run ``.venv/bin/python experiments/ch7_sweeps.py`` (about a minute on 2 cores); it
writes two small files that chapter 7 quotes and ``tests/test_chapter7_claims.py``
checks (re-running one row of each):

- ``ch7_projection.csv``: :func:`cosine_book.embeddings.train_query_projection` at
  every setting of ``SETTINGS`` on the splits ``SPLITS`` of the 40 questions of
  :data:`cosine_book.embeddings.QA_SET` (MiniLM embeddings): trained on half of the
  topics, evaluated on the other half (pool: their answers and other questions);
- ``ch7_hubness.csv``: the skewness of the 10-occurrence of GloVe's ``n`` most
  frequent words, raw, centred and with the top principal direction removed, for
  each ``n`` of ``SIZES``.
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
from scipy.stats import skew

from cosine_book.datasets import load_glove, load_sentence_model
from cosine_book.embeddings import (
    QA_SET,
    all_but_the_top,
    answer_retrieval,
    k_occurrence,
    train_query_projection,
)

HERE = Path(__file__).resolve().parent
PROJECTION = HERE / "ch7_projection.csv"
HUBNESS = HERE / "ch7_hubness.csv"
SETTINGS = [(decay, steps) for decay in (1e-3, 1e-2) for steps in (50, 100)]
SPLITS = range(20)
SIZES = (5_000, 10_000, 20_000)
VARIANTS = {"raw": None, "centred": 0, "top direction removed": 1}


def qa_embeddings() -> dict[str, np.ndarray]:
    """Questions, answers and other questions of QA_SET, embedded by MiniLM (unit rows)."""
    model = load_sentence_model()
    questions, answers, others, _ = zip(*QA_SET, strict=True)
    columns = {"questions": questions, "answers": answers, "others": others}
    return {
        name: model.encode(list(texts), normalize_embeddings=True).astype(np.float64)
        for name, texts in columns.items()
    }


def split(seed: int, n: int = len(QA_SET)) -> tuple[np.ndarray, np.ndarray]:
    """Training and held-out topics of split ``seed``: a random half each."""
    order = np.random.default_rng(seed).permutation(n)
    return order[: n // 2], order[n // 2 :]


def projection_row(texts: dict[str, np.ndarray], decay: float, steps: int, seed: int) -> dict:
    """Recall@1, MRR and questions-first share on the held-out half, before and after."""
    train, held = split(seed)
    Q, A, O = (texts[name] for name in ("questions", "answers", "others"))  # noqa: E741
    W = train_query_projection(Q[train], A[train], O[train], weight_decay=decay, steps=steps)
    before = answer_retrieval(Q[held], A[held], O[held])
    after = answer_retrieval(Q[held] @ W, A[held], O[held])
    row = {"weight_decay": decay, "steps": steps, "split": seed}
    for name, result in (("before", before), ("after", after)):
        row |= {
            f"recall_at_1_{name}": result["recall@1"],
            f"mrr_{name}": round(result["MRR"], 6),
            f"question_first_{name}": result["question first"],
        }
    return row


def hubness_row(vectors: np.ndarray, n: int, variant: str) -> dict:
    """Skewness of the 10-occurrence of the first ``n`` words, after ``variant``."""
    words = vectors[:n].astype(np.float64)
    components = VARIANTS[variant]
    processed = words if components is None else all_but_the_top(words, components)
    counts = k_occurrence(processed, 10)
    skewness = round(float(skew(counts)), 4)
    largest, never = int(counts.max()), int(np.sum(counts == 0))
    return {"n_words": n, "variant": variant, "skew": skewness, "largest": largest, "never": never}


def write(path: Path, rows: list[dict]) -> None:
    """Write ``rows`` as a CSV file with a header."""
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def main() -> None:
    """Run both sweeps and write their files."""
    texts = qa_embeddings()
    write(PROJECTION, [projection_row(texts, d, s, seed) for d, s in SETTINGS for seed in SPLITS])
    vectors = load_glove(max(SIZES)).vectors
    write(HUBNESS, [hubness_row(vectors, n, v) for n in SIZES for v in VARIANTS])


if __name__ == "__main__":
    main()
