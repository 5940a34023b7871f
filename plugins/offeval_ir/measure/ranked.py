"""The offeval provider: the ranked lists its kernels read, and its columns for all users.

:func:`columns` computes offeval's measures (:func:`offeval_ir.metrics.compute` hands it
the ones it owns): one :class:`Ranked` for all of them, each measure's kernel
(``kernel(lists, k)``, declared in its module) called at each of its cut-offs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import cached_property

import numpy as np

from offeval import ConfigurationError
from offeval_ir.conventions import Conventions
from offeval_ir.judgements import Judgements
from offeval_ir.measure.registry import DECLARATIONS, declaration


def _discounts(n: int, base: float, discount: str) -> np.ndarray:
    """1 / log_b(rank + 1) of ranks 1..n (``shifted``), or 1 / max(1, log_b rank) (``clipped``)."""
    if discount == "clipped":
        return np.log(base) / np.maximum(np.log(base), np.log(np.arange(1, n + 1)))
    return np.log(base) / np.log(np.arange(2, n + 2))


def _tie_mean(values: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """Replace each per-rank value by the mean of its tie group (expected value)."""
    valid = groups >= 0
    g = groups[valid]
    sums = np.bincount(g, weights=values[valid])
    counts = np.bincount(g)
    out = np.zeros_like(values)
    out[valid] = (sums / counts)[g]
    return out


def _at_last(values: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """Each tie group's sum of ``values`` at the group's last rank, 0 at its other ranks
    (``ties='last'``: every item of the group at that rank)."""
    rows, cols = np.nonzero(groups >= 0)
    g = groups[rows, cols]
    last = np.zeros(int(groups.max()) + 1, dtype=np.int64)
    np.maximum.at(last, g, cols)
    flat = rows * values.shape[1] + last[g]
    summed = np.bincount(flat, weights=values[rows, cols], minlength=values.size)
    return summed.reshape(values.shape)


class Ranked:
    """Every user's list in the conventions' order, read up to ``n_ranks`` ranks.

    ``rel`` is 1 where a rank is relevant (at ``relevance_threshold``), ``judged`` 1
    where it is judged, ``gain`` its DCG gain, each the mean over its tie group under
    ``ties='expected'`` (``tied``), or under ``ties='last'`` (``last``) the tie group's
    sum at its last rank and 0 at its other ranks; ``grades`` are the ranks' grades
    (negative grades read as 0 when ``negative``), ``graded`` what DCG's ideal of the list
    sorts (both in stored order).
    Kernels share what they build through :meth:`memo`.
    """

    xp = np

    def __init__(self, j: Judgements, conv: Conventions, n_ranks: int, tied: bool):
        self.j, self.conv, self.n_ranks, self.tied = j, conv, n_ranks, tied
        self.negative = bool((j.label_grades < 0).any() or (j.grades < 0).any())
        self.last = conv.ties == "last" and j.tie_group is not None
        width = j.max_length if tied or self.last else n_ranks
        self.width = width
        grades = np.maximum(j.grades[:, :width], 0) if self.negative else j.grades[:, :width]
        rel = (grades >= conv.relevance_threshold).astype(float)
        if conv.nonpositive_scores == "irrelevant" and j.positive is not None:
            rel *= j.positive[:, :width]
        self.grades = grades
        self._graded = grades if conv.dcg_relevance == "graded" else rel
        self.rel = self._grouped(rel)
        self.graded = self._graded[:, :n_ranks]
        self.n_rel = j.n_relevant(conv.relevance_threshold).astype(float)
        self._memo: dict = {}

    def _grouped(self, values: np.ndarray) -> np.ndarray:
        """Per-rank ``values`` of the ranks read, over each tie group as the conventions'
        ``ties`` says (the group's mean, or its sum at its last rank), else as stored."""
        if self.tied:
            return _tie_mean(values, self.j.tie_group)[:, : self.n_ranks]
        if self.last:
            return _at_last(values, self.j.tie_group)[:, : self.n_ranks]
        return values

    @cached_property
    def gain(self) -> np.ndarray:
        """Each rank's DCG gain: its grade (``gain='linear'``) or 2^grade - 1."""
        return self._grouped(self.gains_of(self._graded))

    @cached_property
    def judged(self) -> np.ndarray:
        """1 where a rank is judged (a label of any grade), 0 elsewhere."""
        return self._grouped(self.j.judged[:, : self.width].astype(float))

    @cached_property
    def discounts(self) -> np.ndarray:
        """DCG's discount of each rank read (the conventions' ``discount``)."""
        return _discounts(self.n_ranks, self.conv.log_base, self.conv.discount)

    def discounts_of(self, n: int) -> np.ndarray:
        """The discounts of ``n`` ranks."""
        return _discounts(n, self.conv.log_base, self.conv.discount)

    def gains_of(self, grades: np.ndarray) -> np.ndarray:
        """The DCG gains of ``grades`` under the conventions."""
        return grades if self.conv.gain == "linear" else np.expm1(grades * np.log(2))

    def read(self, k: int | None) -> int:
        """The ranks read at cut-off ``k`` (all of them without one)."""
        return self.n_ranks if k is None else int(k)

    def cut(self, k: int | None) -> np.ndarray | float:
        """The cut-off per user: k, or each user's list length without one."""
        return self.j.lengths.astype(float) if k is None else float(self.read(k))

    def in_list(self, k: int | None) -> np.ndarray:
        """min(k, the list's length) per user."""
        return np.minimum(self.cut(k), self.j.lengths)

    def upto(self, matrix: np.ndarray, k: int | None, weights: np.ndarray | None = None):
        """Per user, the (weighted) sum of the first k columns (all of them when k is
        larger)."""
        head = matrix[:, : self.read(k)]
        if weights is None:
            return head.sum(axis=1)
        return head @ weights[: head.shape[1]]

    def hits(self, k: int | None) -> np.ndarray:
        """Relevant items in the top k per user."""
        return self.memo(("hits", k), lambda: self.upto(self.rel, k))

    def memo(self, key: object, build: Callable[[], object]):
        """What ``build`` gives, built once for all the kernels of these lists."""
        if key not in self._memo:
            self._memo[key] = build()
        return self._memo[key]


def columns(
    j: Judgements, conv: Conventions, cutoffs: Mapping[str, Sequence[int | None]]
) -> dict[str, np.ndarray]:
    """Per user, each offeval measure at each of its cut-offs, keyed ``metric@k``
    (``metric`` without a cut-off); ``j`` in the conventions' order. Ranks past the
    largest cut-off are never read (tie groups are averaged first, in full)."""
    ks = [k for cuts in cutoffs.values() for k in cuts]
    n_ranks = j.max_length if None in ks else min(j.max_length, int(max(ks)))
    tied = j.tie_group is not None and conv.ties == "expected"
    lists = Ranked(j, conv, n_ranks, tied)
    out = {}
    with np.errstate(divide="ignore", invalid="ignore"):
        for metric, cuts in cutoffs.items():
            kernel = declaration(metric).kernel
            for k in cuts:
                value = kernel(lists, k)
                out[metric if k is None else f"{metric}@{k}"] = np.nan_to_num(
                    value, nan=0.0, posinf=0.0
                )
    return out


#: The measures ``ties='last'`` is defined for (their declarations' ``tie_last``).
AT_LAST = tuple(name for name, declared in DECLARATIONS.items() if declared.tie_last)


def check_last(metrics: Iterable[str], conv: Conventions) -> None:
    """``ties='last'`` on tied lists: a ConfigurationError for a metric it is not defined
    for (its declaration's ``tie_last`` unset, or DCG's ideal of the list's own grades), of
    any provider (:func:`offeval_ir.metrics.compute` asks before computing)."""
    metrics = list(metrics)
    undefined = sorted(m for m in metrics if not getattr(declaration(m), "tie_last", False))
    if conv.ideal == "list":
        undefined += sorted(m for m in metrics if m in ("ndcg", "idcg"))
    if undefined:
        raise ConfigurationError(
            f"ties='last' is defined here for {', '.join(AT_LAST)} (ndcg and idcg with "
            f"ideal='labels' or 'k'); for {undefined} choose another tie policy (ties: "
            "item_desc, item_asc, input_order)"
        )
