"""Discrete choices made from floats, independent of rounding.

Values equal in exact arithmetic can differ in their last bits from one BLAS kernel,
chunking or worker count to another, so every choice offeval makes from floats (a
tuning grid's rule, a best policy, an inverted pair) treats ``a`` and ``b`` as tied
when ``|a - b| <= RTOL * max(|a|, |b|)`` (nan is never tied, nor chosen while a number
is there), and breaks ties by taking the first in the given order.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

#: Relative tolerance within which two floats count as one value in a discrete choice:
#: far above rounding noise (about 1e-16 per operation), far below any difference that
#: a choice should act on.
RTOL = 1e-9


def tied(a: np.ndarray | float, b: np.ndarray | float, rtol: float = RTOL) -> np.ndarray:
    """Whether ``a`` and ``b`` are equal within ``rtol`` of the larger magnitude (elementwise)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    with np.errstate(invalid="ignore"):
        return (a == b) | (np.abs(a - b) <= rtol * np.maximum(np.abs(a), np.abs(b)))


def first_minimum(values: Sequence[float] | np.ndarray, rtol: float = RTOL) -> int:
    """The index of the first value (in the given order) tied with the smallest; nan is
    skipped, and all-nan gives 0."""
    values = np.asarray(values, dtype=float)
    finite = ~np.isnan(values)
    if not finite.any():
        return 0
    low = np.min(values[finite])
    return int(np.flatnonzero(finite & tied(values, low, rtol))[0])


def first_maximum(values: Sequence[float] | np.ndarray, rtol: float = RTOL) -> int:
    """The index of the first value (in the given order) tied with the largest; nan is
    skipped, and all-nan gives 0."""
    return first_minimum(-np.asarray(values, dtype=float), rtol)


def tie_groups(values: Sequence[float] | np.ndarray, rtol: float = RTOL) -> np.ndarray:
    """Each value's rank among the distinct values, ties merged: 0 for the smallest group. In
    ascending order a value joins the current group when tied with its smallest member, else
    starts the next (a group never spans more than ``rtol``); nan is last."""
    values = np.asarray(values, dtype=float)
    order = np.argsort(values, kind="stable")
    groups = np.empty(values.size, dtype=np.int64)
    group, start = -1, None
    for index in order:  # one step per candidate of a choice, not per log row
        value = values[index]
        if start is None or not (tied(value, start, rtol) or (np.isnan(value) and np.isnan(start))):
            group, start = group + 1, value
        groups[index] = group
    return groups


def tolerant_order(
    values: Sequence[float] | np.ndarray, rtol: float = RTOL, *, descending: bool = False
) -> np.ndarray:
    """Indices that sort ``values`` (ascending, or descending), tied values kept in their
    given order."""
    groups = tie_groups(values, rtol)
    if descending:
        values = np.asarray(values, dtype=float)
        groups = np.where(np.isnan(values), groups.max(initial=0) + 1, -groups)
    return np.argsort(groups, kind="stable")


def tolerant_sign(a: np.ndarray, b: np.ndarray, rtol: float = RTOL) -> np.ndarray:
    """The sign of ``a - b`` elementwise, 0 where ``a`` and ``b`` are tied."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return np.where(tied(a, b, rtol), 0.0, np.sign(a - b))
