"""Rates of a binary outcome in two arms across strata: Berkeley's admissions (chapter 5).

One 2 x 2 table (arm by outcome) per stratum; every summary is a weighted average of the
per-stratum rates. Tests of significance are left to ``scipy.stats`` and ``statsmodels``
(:meth:`Strata.tables` gives the tables they take).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import stats

from cosine_book.datasets import BerkeleyAdmissions

__all__ = ["admission_strata"]


def _counts(value: ArrayLike, name: str, size: int) -> NDArray[np.int64]:
    array = np.asarray(value)
    if array.ndim != 1 or array.size == 0 or array.size != size:
        raise ValueError(f"{name} must be a nonempty 1-D array of counts, one per stratum")
    if not np.issubdtype(array.dtype, np.integer) or np.any(array < 0):
        raise ValueError(f"{name} must hold nonnegative integer counts; got {array!r}")
    return array.astype(np.int64)


@dataclass(frozen=True)
class Strata:
    """Per-stratum units ``n1, n0`` of arms 1 and 0 and their positive outcomes ``k1, k0``.

    In chapter 5 arm 1 is women, arm 0 men, the outcome admission.

    >>> s = Strata(("A", "B"), [10, 10], [5, 2], [10, 30], [4, 3])
    >>> round(s.mantel_haenszel_difference(), 4)  # 0.1 in both strata
    0.1
    """

    labels: tuple[str, ...]
    n1: NDArray[np.int64]
    k1: NDArray[np.int64]
    n0: NDArray[np.int64]
    k0: NDArray[np.int64]

    def __post_init__(self) -> None:
        for name in ("n1", "k1", "n0", "k0"):
            object.__setattr__(self, name, _counts(getattr(self, name), name, len(self.labels)))
        if np.any(self.n1 == 0) or np.any(self.n0 == 0):
            raise ValueError("n1 and n0 must be positive in every stratum (both arms present)")
        if np.any(self.k1 > self.n1) or np.any(self.k0 > self.n0):
            raise ValueError("k1 <= n1 and k0 <= n0 are required (outcomes are counts of units)")

    @property
    def rates(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Outcome rates ``(a_1, a_0)`` in each stratum."""
        return self.k1 / self.n1, self.k0 / self.n0

    def mix(self, arm: int | None) -> NDArray[np.float64]:
        """Distribution of arm ``arm``'s units over the strata (``None``: everybody)."""
        n = {1: self.n1, 0: self.n0, None: self.n1 + self.n0}[arm]
        return n / n.sum()

    def difference(self, weights: ArrayLike) -> float:
        """Weighted average ``sum w (a_1 - a_0) / sum w`` of the stratum differences."""
        w = np.asarray(weights, dtype=np.float64)
        a1, a0 = self.rates
        return float(np.sum(w * (a1 - a0)) / w.sum())

    def mantel_haenszel_difference(self) -> float:
        """Mantel-Haenszel risk difference: weights ``n_1 n_0 / (n_1 + n_0)``."""
        return self.difference(self.n1 * self.n0 / (self.n1 + self.n0))

    def mantel_haenszel_interval(self) -> tuple[float, float]:
        """95 % Wald interval of the Mantel-Haenszel risk difference, Sato's (1989) variance.

        ``(RD sum P + sum Q) / W**2`` with ``N = n_1 + n_0``, ``W = sum n_1 n_0 / N``,
        ``P = (n_1**2 k_0 - n_0**2 k_1 + n_1 n_0 (n_0 - n_1) / 2) / N**2`` and
        ``Q = (k_1 (n_0 - k_0) + k_0 (n_1 - k_1)) / (2 N)``.
        """
        n1, k1, n0, k0 = (v.astype(np.float64) for v in (self.n1, self.k1, self.n0, self.k0))
        n = n1 + n0
        rd = self.mantel_haenszel_difference()
        p = (n1 * n1 * k0 - n0 * n0 * k1 + n1 * n0 * (n0 - n1) / 2) / (n * n)
        q = (k1 * (n0 - k0) + k0 * (n1 - k1)) / (2 * n)
        se = np.sqrt(rd * p.sum() + q.sum()) / np.sum(n1 * n0 / n)
        z = stats.norm.ppf(0.975)
        return float(rd - z * se), float(rd + z * se)

    def standardised(self, mix: ArrayLike) -> tuple[float, float]:
        """Overall rates ``(sum m a_1, sum m a_0)`` of both arms under the stratum mix ``m``."""
        m = np.asarray(mix, dtype=np.float64)
        if m.shape != self.n1.shape or np.any(m < 0) or not np.isclose(m.sum(), 1.0):
            raise ValueError("mix must be a distribution over the strata (nonnegative, sum 1)")
        a1, a0 = self.rates
        return float(m @ a1), float(m @ a0)

    def natural_effects(self, reference: int) -> tuple[float, float]:
        """Natural direct and indirect effects of arm 1 versus arm 0 (the mediation formula).

        ``reference=0``: pure NDE ``sum_g P(g | 0) (a_1 - a_0)`` and total NIE
        ``sum_g (P(g | 1) - P(g | 0)) a_1``; ``reference=1``: total NDE and pure NIE, the
        same with ``P(g | 1)`` and ``a_0``. Either pair adds up to the crude difference.
        """
        a1, a0 = self.rates
        shift = self.mix(1) - self.mix(0)
        if reference == 0:
            return self.difference(self.mix(0)), float(shift @ a1)
        return self.difference(self.mix(1)), float(shift @ a0)

    def crude_difference(self) -> float:
        """Overall rate of arm 1 minus overall rate of arm 0, ignoring the strata."""
        return float(self.k1.sum() / self.n1.sum() - self.k0.sum() / self.n0.sum())

    def summaries(self) -> dict[str, float]:
        """Every chapter 5 summary of arm 1 versus arm 0, by name (differences of rates)."""
        pure_nde, total_nie = self.natural_effects(0)
        total_nde, pure_nie = self.natural_effects(1)
        return {
            "crude": self.crude_difference(),
            "pure NDE": pure_nde,
            "total NDE": total_nde,
            "total NIE": total_nie,
            "pure NIE": pure_nie,
            "interaction": total_nde - pure_nde,
            "standardised CDE": self.difference(self.mix(None)),
            "Mantel-Haenszel": self.mantel_haenszel_difference(),
        }

    def resample(self, rng: np.random.Generator) -> Strata:
        """The units drawn with replacement (integer draws only, the same on every CPU)."""
        cells = np.stack([self.k1, self.n1 - self.k1, self.k0, self.n0 - self.k0], axis=1)
        codes = np.repeat(np.arange(cells.size), cells.ravel())
        drawn = np.bincount(codes[rng.integers(0, codes.size, codes.size)], minlength=cells.size)
        k1, f1, k0, f0 = drawn.reshape(cells.shape).T
        return Strata(self.labels, k1 + f1, k1, k0 + f0, k0)

    def bootstrap(self, draws: int, seed: int) -> dict[str, NDArray[np.float64]]:
        """:meth:`summaries` of ``draws`` resamples of the units. Used in chapter 5."""
        rng = np.random.default_rng(seed)
        rows = [self.resample(rng).summaries() for _ in range(draws)]
        return {name: np.array([row[name] for row in rows]) for name in rows[0]}

    def tables(self) -> list[NDArray[np.int64]]:
        """One 2 x 2 table ``[[k1, n1 - k1], [k0, n0 - k0]]`` per stratum."""
        return [
            np.array([[k1, n1 - k1], [k0, n0 - k0]])
            for n1, k1, n0, k0 in zip(self.n1, self.k1, self.n0, self.k0, strict=True)
        ]

    def drop(self, label: str) -> Strata:
        """The same strata without ``label``."""
        keep = np.array([lab != label for lab in self.labels])
        if keep.all():
            raise ValueError(f"label {label!r} is not a stratum; strata are {self.labels}")
        labels = tuple(lab for lab in self.labels if lab != label)
        return Strata(labels, self.n1[keep], self.k1[keep], self.n0[keep], self.k0[keep])


def admission_strata(table: BerkeleyAdmissions) -> Strata:
    """Berkeley's departments as strata, women as arm 1 and men as arm 0. Used in chapter 5.

    >>> from cosine_book.datasets import load_berkeley_admissions
    >>> s = admission_strata(load_berkeley_admissions())
    >>> s.labels, int(s.n1.sum()), int(s.n0.sum())
    (('A', 'B', 'C', 'D', 'E', 'F'), 1835, 2691)
    """
    labels = tuple(sorted(set(table.department.tolist())))
    women, men = table.sex == "female", table.sex == "male"

    def pick(counts: NDArray[np.int64], arm: NDArray[np.bool_]) -> NDArray[np.int64]:
        return np.array([counts[arm & (table.department == lab)].sum() for lab in labels])

    return Strata(
        labels,
        pick(table.applicants, women),
        pick(table.admitted, women),
        pick(table.applicants, men),
        pick(table.admitted, men),
    )
