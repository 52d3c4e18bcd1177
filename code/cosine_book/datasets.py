"""Loaders for the real data the book uses, each with its provenance.

Nothing here downloads: every dataset ships inside an installed package
(scikit-learn bundles its small classic datasets) or is committed to this
package under ``cosine_book/data/`` with its source named in the loader.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from cosine_book._validation import as_float_scalar, as_int_scalar

__all__ = [
    "BerkeleyAdmissions",
    "DigitsSplit",
    "IrisSepals",
    "load_berkeley_admissions",
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
