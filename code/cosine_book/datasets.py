"""Loaders for the real data the book uses, each with its provenance.

Nothing here downloads: every dataset ships inside an installed package
(scikit-learn bundles its small classic datasets) or is committed to this
package under ``cosine_book/data/`` with its source named in the loader.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

__all__ = ["DigitsSplit", "load_digits_split"]


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
        Share of the images held out for testing, in ``(0, 1)``.
    seed : int
        Seed of the random permutation that makes the split.

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
    if not 0.0 < test_fraction < 1.0:
        raise ValueError(f"test_fraction must lie in (0, 1); got {test_fraction}")
    from sklearn.datasets import load_digits

    digits = load_digits()
    images = digits.data.astype(np.float64) / 16.0
    labels = digits.target.astype(np.int64)
    order = np.random.default_rng(seed).permutation(len(labels))
    n_test = int(round(test_fraction * len(labels)))
    test, train = order[:n_test], order[n_test:]
    return DigitsSplit(images[train], images[test], labels[train], labels[test])
