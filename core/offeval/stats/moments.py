"""Mergeable moment accumulators (counts, means, co-moments), blocks folded with the pairwise
update of Chan, Golub and LeVeque (each block's moments around its own mean, then merged):
numerically stable, and independent of how the data were cut into blocks (up to rounding).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


def _cross(centred: np.ndarray) -> np.ndarray:
    """Full cross-product matrix of centred columns (one ``dsyrk``; scipy.linalg imported on
    first use, not by a command that only lists its options)."""
    from scipy.linalg.blas import dsyrk

    upper = dsyrk(1.0, np.asfortranarray(centred), trans=1)
    return np.triu(upper) + np.triu(upper, 1).T


def _essential(groups: list[np.ndarray], k: int) -> list[np.ndarray] | None:
    """The groups that are not inside another one; None when one product of all is cheaper."""
    sets = sorted({tuple(int(i) for i in g) for g in groups if len(g)}, key=len, reverse=True)
    kept: list[tuple[int, ...]] = []
    for group in sets:
        if not any(set(group) <= set(other) for other in kept):
            kept.append(group)
    if sum(len(g) ** 2 for g in kept) >= k * k:
        return None
    return [np.array(g, dtype=np.int64) for g in kept]


@dataclass
class Moments:
    """Count, mean vector and co-moment matrix of k columns (the sum over units of the outer
    product of deviations from the mean: ``comoment / (n - 1)`` is the sample covariance)."""

    n: int
    mean: np.ndarray
    comoment: np.ndarray

    @classmethod
    def empty(cls, k: int) -> Moments:
        """Moments of no data over k columns."""
        return cls(0, np.zeros(k), np.zeros((k, k)))

    @classmethod
    def from_array(
        cls, x: np.ndarray, *, overwrite: bool = False, groups: list[np.ndarray] | None = None
    ) -> Moments:
        """Moments of the rows of an (n, k) array; ``overwrite``: centred in place (a float
        array the caller no longer needs, fastest Fortran-ordered); ``groups`` (lists of
        column indices): only the cross-products within each group, the others NaN (unless
        the groups would cost more than all of them)."""
        x = np.asarray(x, dtype=float)
        if x.ndim == 1:
            x = x[:, None]
        n, k = x.shape
        if n == 0:
            return cls.empty(k)
        if k == 0:
            return cls(n, np.zeros(0), np.zeros((0, 0)))
        mean = x.mean(axis=0)
        centred = x if overwrite and x.flags.writeable else x.copy(order="F")
        centred -= mean
        groups = _essential(groups, k) if groups is not None else None
        if groups is None:
            return cls(n, mean, _cross(centred))
        comoment = np.full((k, k), np.nan)
        for group in groups:
            comoment[np.ix_(group, group)] = _cross(centred[:, group])
        return cls(n, mean, comoment)

    def merge(self, other: Moments) -> Moments:
        """Moments of the union of the two samples."""
        if self.n == 0:
            return other
        if other.n == 0:
            return self
        n = self.n + other.n
        delta = other.mean - self.mean
        mean = self.mean + delta * (other.n / n)
        comoment = self.comoment + other.comoment + np.outer(delta, delta) * (self.n * other.n / n)
        return Moments(n, mean, comoment)

    def extended(self, extra: int) -> Moments:
        """The same moments with ``extra`` new columns that were all zero."""
        k = self.mean.size + extra
        comoment = np.zeros((k, k))
        comoment[: self.mean.size, : self.mean.size] = self.comoment
        return Moments(self.n, np.r_[self.mean, np.zeros(extra)], comoment)

    def gathered(self, index: np.ndarray) -> Moments:
        """Moments of the columns ``x[:, index]`` (index -1: a column of zeros)."""
        index = np.asarray(index, dtype=np.int64)
        present = index >= 0
        if present.all() and np.array_equal(index, np.arange(self.mean.size)):
            return self
        k = index.size
        mean, comoment = np.zeros(k), np.zeros((k, k))
        mean[present] = self.mean[index[present]]
        comoment[np.ix_(present, present)] = self.comoment[np.ix_(index[present], index[present])]
        return Moments(self.n, mean, comoment)

    def covariance(self, ddof: int = 1) -> np.ndarray:
        """Sample covariance matrix of the columns."""
        if self.n <= ddof:
            return np.full_like(self.comoment, np.nan)
        return self.comoment / (self.n - ddof)


@dataclass
class Tally:
    """Mergeable named scalars for diagnostics: counts, sums, maxima and minima. ``counts``
    (rows clipped, support violations) go into the estimate's diagnostics whatever
    ``diagnose`` returns; the others are raw material for ``diagnose``."""

    counts: dict[str, int] = field(default_factory=dict)
    sums: dict[str, float] = field(default_factory=dict)
    maxima: dict[str, float] = field(default_factory=dict)
    minima: dict[str, float] = field(default_factory=dict)

    def count(self, name: str, events: int) -> None:
        """Add ``events`` to the reported count ``name``."""
        self.counts[name] = self.counts.get(name, 0) + int(events)

    def add(self, name: str, value: float) -> None:
        """Add ``value`` to the running sum ``name``."""
        self.sums[name] = self.sums.get(name, 0.0) + float(value)

    def maximum(self, name: str, value: float) -> None:
        """Keep the largest value seen under ``name``."""
        self.maxima[name] = max(self.maxima.get(name, -np.inf), float(value))

    def minimum(self, name: str, value: float) -> None:
        """Keep the smallest value seen under ``name``."""
        self.minima[name] = min(self.minima.get(name, np.inf), float(value))

    def merge(self, other: Tally) -> Tally:
        """The tally of both samples."""
        out = Tally(dict(self.counts), dict(self.sums), dict(self.maxima), dict(self.minima))
        for name, value in other.counts.items():
            out.count(name, value)
        for name, value in other.sums.items():
            out.add(name, value)
        for name, value in other.maxima.items():
            out.maximum(name, value)
        for name, value in other.minima.items():
            out.minimum(name, value)
        return out
