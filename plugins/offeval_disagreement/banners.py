"""Banners as the engine sees them: one trajectory per banner, grouped by size.

A banner shows products at ranks 1..n (the rows of its trajectory, sorted by
position); a product is clicked when its reward is positive. Per chunk, the
banners of each size n become dense (banners, n) arrays, so every per-banner
computation is vectorised over banners of the same size.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from offeval import ColumnError, InteractionLog, trajectory_flags

SUBSETS = ("all", "shuffled", "non_shuffled")


@dataclass(frozen=True)
class Group:
    """The banners of one size n in a chunk.

    ``units`` are their indices among the chunk's trajectories and ``rows``
    the (banners, n) log rows of their products, rank by rank.
    """

    n: int
    units: np.ndarray
    rows: np.ndarray


def groups(log: InteractionLog) -> Iterator[Group]:
    """The chunk's banners grouped by size; positions must be exactly 1..n in each banner."""
    sizes = np.diff(np.r_[log.unit_starts, log.n_rows])
    position = log.column("position")
    expected = np.arange(log.n_rows) - np.repeat(log.unit_starts, sizes) + 1
    gaps = position != expected
    if gaps.any():
        raise ColumnError(
            "position",
            "a banner shows its products at ranks 1, 2, ..., n (a rank is missing)",
            log.source_rows[gaps],
        )
    for n in np.unique(sizes):
        units = np.flatnonzero(sizes == n)
        yield Group(int(n), units, log.unit_starts[units][:, None] + np.arange(n))


def clicked(log: InteractionLog) -> np.ndarray:
    """Whether each row's product was clicked (reward > 0)."""
    return log.column("reward") > 0


def shuffled_units(log: InteractionLog) -> np.ndarray:
    """Whether each banner was uniformly shuffled (the ``shuffled`` column, else none)."""
    if "shuffled" not in log.frame:
        return np.zeros(log.n_units, dtype=bool)
    return trajectory_flags(log, "shuffled")


def in_subset(log: InteractionLog, subset: str) -> np.ndarray:
    """Which banners belong to ``subset`` (all, shuffled or non_shuffled)."""
    if subset == "all":
        return np.ones(log.n_units, dtype=bool)
    flag = trajectory_flags(log, "shuffled")
    return flag if subset == "shuffled" else ~flag
