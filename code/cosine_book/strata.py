"""Rates of a binary outcome in two arms across strata: standardisation and effects.

Chapter 5 reads the Berkeley admissions as one 2 x 2 table (sex by admission) per
department. Everything here is a weighted average of the per-stratum rates:

- :meth:`Strata.difference`: the stratum differences ``a_1 - a_0`` averaged with any
  nonnegative weights. Weights ``n_1 n_0 / n`` give the Mantel-Haenszel risk
  difference; weights ``n`` (the stratum's share of everybody) give the back-door
  (standardised to the total) difference.
- :meth:`Strata.standardised`: both arms' overall rates under one mix of strata.
- :meth:`Strata.natural_effects`: natural direct and indirect effects by the
  mediation formula, with the stratum as the mediator.

Used in chapter 5. Tests of significance are left to ``scipy.stats`` and
``statsmodels`` (:meth:`Strata.tables` gives the tables they take).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from cosine_book.datasets import BerkeleyAdmissions

__all__ = ["Strata", "admission_strata"]


def _counts(value: ArrayLike, name: str, size: int | None) -> NDArray[np.int64]:
    array = np.asarray(value)
    if array.ndim != 1 or array.size == 0 or (size is not None and array.size != size):
        raise ValueError(f"{name} must be a nonempty 1-D array of counts, one per stratum")
    if not np.issubdtype(array.dtype, np.integer) or np.any(array < 0):
        raise ValueError(f"{name} must hold nonnegative integer counts; got {array!r}")
    return array.astype(np.int64)


@dataclass(frozen=True)
class Strata:
    """Per-stratum counts of two arms (1 and 0) and of their positive outcomes.

    Arm 1 is women and arm 0 men in chapter 5; the outcome is admission.
    Every stratum must have at least one unit in each arm.

    Examples
    --------
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
        size = len(self.labels)
        for name in ("n1", "k1", "n0", "k0"):
            object.__setattr__(self, name, _counts(getattr(self, name), name, size))
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
        if w.shape != self.n1.shape or np.any(w < 0) or not w.sum() > 0:
            raise ValueError("weights must be nonnegative, one per stratum, with a positive sum")
        a1, a0 = self.rates
        return float(np.sum(w * (a1 - a0)) / w.sum())

    def mantel_haenszel_difference(self) -> float:
        """Mantel-Haenszel risk difference: weights ``n_1 n_0 / (n_1 + n_0)``."""
        return self.difference(self.n1 * self.n0 / (self.n1 + self.n0))

    def standardised(self, mix: ArrayLike) -> tuple[float, float]:
        """Overall rates ``(sum m a_1, sum m a_0)`` of both arms under the stratum mix ``m``."""
        m = np.asarray(mix, dtype=np.float64)
        if m.shape != self.n1.shape or np.any(m < 0) or not np.isclose(m.sum(), 1.0):
            raise ValueError("mix must be a distribution over the strata (nonnegative, sum 1)")
        a1, a0 = self.rates
        return float(m @ a1), float(m @ a0)

    def natural_effects(self, reference: int) -> tuple[float, float]:
        """Natural direct and indirect effect of arm 1 versus arm 0 (mediation formula).

        ``reference=0``: NDE ``sum_g P(g | 0) (a_1 - a_0)``, NIE
        ``sum_g (P(g | 1) - P(g | 0)) a_1``. ``reference=1``: the same with the
        roles of the mixes swapped, NDE ``sum_g P(g | 1) (a_1 - a_0)``, NIE
        ``sum_g (P(g | 1) - P(g | 0)) a_0``. In both, NDE + NIE is the crude
        difference of the overall rates.
        """
        if reference not in (0, 1):
            raise ValueError(
                f"reference must be 0 or 1 (the arm whose mix is held); got {reference!r}"
            )
        a1, a0 = self.rates
        shift = self.mix(1) - self.mix(0)
        if reference == 0:
            return self.difference(self.mix(0)), float(shift @ a1)
        return self.difference(self.mix(1)), float(shift @ a0)

    def crude_difference(self) -> float:
        """Overall rate of arm 1 minus overall rate of arm 0, ignoring the strata."""
        return float(self.k1.sum() / self.n1.sum() - self.k0.sum() / self.n0.sum())

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

    Examples
    --------
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
