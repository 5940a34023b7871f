"""trec_eval's interpolated precision: at recall levels, and their 11-point average."""

from __future__ import annotations

from offeval_ir.measure.declaration import Declaration, TrecSpelling
from offeval_ir.trec_params import reader, recall_level, recall_levels

#: trec_eval's default recall levels of iprec_at_recall and 11pt_avg.
RECALL_LEVELS = tuple(round(0.1 * i, 1) for i in range(11))


def interpolated(x, levels: tuple[float, ...]) -> list:
    """trec_eval's interpolated precision at each recall level (m_iprec_at_recall.c).

    The cut-off of level x is round(x R) relevant items (rounded half away from zero,
    C's lround); its value is the best precision at any rank from the rank of that
    relevant item on (all ranks for 0 relevant items), 0 when the list holds fewer
    relevant items.
    """
    xp = x.xp
    if "best_after" not in x.cache:
        hits = x.hits
        ranks = xp.arange(1, x.rel.shape[1] + 1)
        precision = xp.where(x.inside, hits / ranks, 0.0)
        best_after = xp.maximum.accumulate(precision[:, ::-1], axis=1)[:, ::-1]
        if best_after.shape[1] == 0:
            best_after = xp.zeros((len(x.lengths), 1))
        x.cache["best_after"] = best_after
    hits, best_after = x.hits, x.cache["best_after"]
    found = hits[:, -1] if hits.shape[1] else xp.zeros(len(x.lengths))
    out = []
    for level in levels:
        scaled = level * x.n_rel
        cut = xp.floor(scaled) + (scaled - xp.floor(scaled) >= 0.5)  # C's lround
        at = xp.argmax(hits >= xp.maximum(cut, 1)[:, None], axis=1) if hits.shape[1] else 0
        value = xp.where(cut > 0, best_after[xp.arange(len(cut)), at], best_after[:, 0])
        out.append(xp.where(cut <= found, value, 0.0))
    return out


def iprec_at_recall(x, level, k):
    """Interpolated precision at the recall level: the best precision at any recall
    >= the level."""
    return interpolated(x, (level,))[0]


def eleven_point(x, levels, k):
    """The interpolated precisions at the levels, added from the last level to the first
    (as m_11pt_avg.c adds them: a mean on a tie of the fourth decimal prints as there),
    over the number of levels."""
    levels = RECALL_LEVELS if levels is None else levels
    total = x.xp.zeros(len(x.lengths))
    for value in reversed(interpolated(x, tuple(levels))):
        total = total + value
    return total / len(levels)


MEASURES = (
    Declaration(
        "iprec_at_recall",
        iprec_at_recall,
        "interpolated precision at a recall level",
        provider="trec_eval",
        cutoff=None,
        trec_eval=(TrecSpelling("iprec_at_recall", "level", defaults=RECALL_LEVELS),),
        value_range=None,
        param_doc="a recall level",
        read=reader("a recall level", recall_level, required=True),
    ),
    Declaration(
        "11pt_avg",
        eleven_point,
        "mean interpolated precision over recall levels (11 by default)",
        provider="trec_eval",
        cutoff=None,
        trec_eval=(
            TrecSpelling("11pt_avg", "plain"),
            TrecSpelling("11pt_avg", "free", underscore=True, sorted_levels=True),
        ),
        value_range=None,
        param_doc="recall levels",
        read=reader("recall levels", recall_levels),
    ),
)
