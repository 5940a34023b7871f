"""The trec_eval provider: the lists its kernels read, and its columns for all users."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from offeval_ir.conventions import Conventions
from offeval_ir.judgements import Judgements
from offeval_ir.measure.registry import DECLARATIONS, checked_param


@dataclass(frozen=True)
class Lists:
    """The ranked lists as trec_eval's form_res_rels.c sees them (U users x W ranks)."""

    grades: np.ndarray  # label grade at each rank (0 unlabelled, past the end)
    inside: np.ndarray  # rank within the list
    judged: np.ndarray  # labelled with grade >= 0 (trec_eval's judged)
    pooled_unjudged: np.ndarray  # labelled with a negative grade
    rel: np.ndarray  # judged with grade >= the relevance level
    lengths: np.ndarray  # num_ret
    n_rel: np.ndarray  # num_rel
    label_grades: np.ndarray  # the user's label grades, decreasing (padding 0s, negatives last)
    n_graded: np.ndarray  # labels of grade >= 0 (the first n_graded of label_grades)
    cache: dict = field(default_factory=dict)  # what several measures share
    xp = np

    @classmethod
    def of(cls, j: Judgements, threshold: float, k: int | None) -> Lists:
        """The lists of ``j`` (in the conventions' order) cut at ``k``, relevant at
        ``threshold``."""
        width = j.max_length if k is None else min(j.max_length, k)
        lengths = j.lengths if k is None else np.minimum(j.lengths, k)
        inside = np.arange(width) < lengths[:, None]
        grades = j.grades[:, :width].astype(float)
        labelled = j.judged[:, :width] & inside
        judged = labelled & (grades >= 0)
        return cls(
            grades=np.where(inside, grades, 0.0),
            inside=inside,
            judged=judged,
            pooled_unjudged=labelled & (grades < 0),
            rel=judged & (grades >= threshold),
            lengths=lengths.astype(float),
            n_rel=j.n_relevant(threshold).astype(float),
            label_grades=j.label_grades.astype(float),
            n_graded=j.n_judged - (j.label_grades < 0).sum(axis=1),
        )

    @property
    def hits(self) -> np.ndarray:
        """Relevant ranks so far, at each rank."""
        if "hits" not in self.cache:
            self.cache["hits"] = np.cumsum(self.rel, axis=1)
        return self.cache["hits"]

    def hits_at(self, cut: np.ndarray) -> np.ndarray:
        """Relevant items in the top ``cut`` ranks per user (``cut`` may exceed the list)."""
        hits = self.hits
        if hits.shape[1] == 0:
            return np.zeros(len(cut))
        read = np.clip(cut, 0, hits.shape[1]).astype(np.int64)
        got = hits[np.arange(len(read)), np.maximum(read - 1, 0)]
        return np.where(read > 0, got, 0.0)

    def rel_ret(self) -> np.ndarray:
        """Relevant items retrieved per user (num_rel_ret)."""
        return self.rel.sum(axis=1).astype(float)

    def gains(self, pairs: dict[str, float] | None) -> tuple[np.ndarray, np.ndarray]:
        """(gain of each rank, gains of the labels in decreasing order) under trec_eval's
        gains: a grade's gain is the grade unless ``pairs`` maps it (gain_init.c); a rank
        not judged, or of negative grade, has gain 0, and so does a label of negative
        grade (computed once per set of gains and shared by the measures of the lists).

        trec_eval sorts the gain levels with a comparator that truncates their difference
        to an integer (gain_init.c's comp_rel_gain), so gains given less than 1 apart
        (``G.1=3,2=0.5``) are ordered as the C library's qsort leaves them; offeval orders
        them by value, and agrees with trec_eval whenever the gains are whole numbers
        apart."""
        key = ("gains", tuple(sorted((pairs or {}).items())))
        if key not in self.cache:
            self.cache[key] = self._gains_of(pairs)
        return self.cache[key]

    def _gains_of(self, pairs: dict[str, float] | None):
        mapped = {
            int(name): value for name, value in (pairs or {}).items() if name.lstrip("+-").isdigit()
        }

        def gain_of(grades: np.ndarray) -> np.ndarray:
            out = grades.copy()
            for grade, value in mapped.items():
                out[grades == grade] = value
            return out

        ranked = np.where(self.judged, gain_of(self.grades), 0.0)
        columns = np.arange(self.label_grades.shape[1])
        graded = columns < self.n_graded[:, None]  # not the padding, not the negative grades
        labels = np.where(graded, gain_of(self.label_grades), -np.inf)  # the rest sorts last
        ideal = -np.sort(-labels, axis=1)
        # trec_eval's ideal list stops at the first gain <= 0
        positive = np.cumprod(ideal > 0, axis=1).astype(bool)
        return ranked, np.where(positive, ideal, 0.0)


def columns(
    j: Judgements, conv: Conventions, cutoffs: Mapping[str, Sequence[int | None]]
) -> dict[str, np.ndarray]:
    """Per user, each trec_eval measure at each of its cut-offs, keyed ``metric@k``
    (``metric`` without one); ``j`` in the conventions' order (ties resolved). A measure
    that needs a cut-off is NaN without one."""
    out = {}
    built: dict[int | None, Lists] = {}
    for k in dict.fromkeys(k for cuts in cutoffs.values() for k in cuts):
        cut = None if k is None or k >= j.max_length else k  # a cut past every list: none
        if cut not in built:
            built[cut] = Lists.of(j, conv.relevance_threshold, cut)
        lists = built[cut]
        for metric in (m for m, cuts in cutoffs.items() if k in cuts):
            declared = DECLARATIONS[metric.partition(":")[0]]
            if k is None and declared.needs_cutoff:  # not defined: a column of NaN
                out[metric] = np.full(j.n_users, np.nan)
                continue
            with np.errstate(divide="ignore", invalid="ignore"):
                value = declared.kernel(lists, checked_param(metric, k), k)
            out[metric if k is None else f"{metric}@{k}"] = np.nan_to_num(
                value, nan=0.0, posinf=0.0, neginf=0.0
            )
    return out
