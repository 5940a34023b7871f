"""trec_eval's rbp (graded gains, p = 0.9) and rbp_resid."""

from __future__ import annotations

from offeval_ir.measure.declaration import Declaration, TrecSpelling
from offeval_ir.trec_params import persistence_and_gains, reader


def trec_rbp(x, pairs, k):
    """m_rbp.c: (1 - p) sum over ranks of p^(rank - 1) gain, p = 0.9 unless given, gains as
    trec_eval's (the grade) rescaled to [0, 1] by (g - min) / (max - min) over the query's
    grade levels 0..highest when some gain lies outside [0, 1].

    trec_eval 10.0 leaves that min and max uninitialised (m_rbp.c), so its rbp can
    change with the other measures of the same command (``-m rbp.p=0.8`` alone gives
    0.3077 on its test collection, next to ``-m G.1=3,...`` 0.0020); this is the
    reading with both starting at 0, which trec_eval's runs of rbp alone show (with
    ``rbp.0=1`` too) and its stored outputs agree with."""
    xp = x.xp
    pairs = dict(pairs or {})
    p = pairs.pop("p", 0.9)
    ranked, _ = x.gains(pairs)
    mapped = {int(n): v for n, v in pairs.items() if n.lstrip("+-").isdigit()}
    # the gain table: levels 0..top at their default gain (the level) unless mapped, and
    # every mapped level at its gain
    graded = xp.arange(x.label_grades.shape[1]) < x.n_graded[:, None]
    top = xp.max(xp.where(graded, x.label_grades, -1.0), axis=1, initial=-1.0)
    default_high = top.copy()  # the highest level not mapped
    for level in sorted(mapped, reverse=True):
        default_high = xp.where(default_high == level, default_high - 1, default_high)
    # trec_eval's min and max start from 0 (uninitialised in m_rbp.c; 0 is what its
    # runs of a single rbp measure show)
    high = xp.maximum(default_high, 0.0)
    low = xp.zeros_like(high)
    if mapped:
        high = xp.maximum(high, max(mapped.values()))
        low = xp.minimum(low, min(mapped.values()))
    rescale = ((low < 0) | (high > 1)) & (high > low)
    scaled = xp.where(
        rescale[:, None],
        # every judged rank has a level of the table, rescaled (grade 0 too)
        xp.where(x.judged, (ranked - low[:, None]) / (high - low)[:, None], 0.0),
        ranked,
    )
    weights = p ** xp.arange(scaled.shape[1])
    return (1 - p) * (scaled @ weights)


def rbp_resid(x, pairs, k):
    """m_rbp_resid.c: p^n + (1 - p) sum over unjudged ranks of p^(rank - 1), p = 0.9 unless
    given (``p=0.8``; gains, which it reads too, change nothing), n the list's length; 0
    when no rank of the list is unjudged (as trec_eval)."""
    p = (pairs or {}).get("p", 0.9)
    unjudged = x.inside & ~x.judged
    weights = p ** x.xp.arange(unjudged.shape[1])
    value = p**x.lengths + (1 - p) * (unjudged @ weights)
    return x.xp.where(unjudged.any(axis=1), value, 0.0)


MEASURES = (
    Declaration(
        "trec_rbp",
        trec_rbp,
        "trec_eval's rank-biased precision on graded gains",
        provider="trec_eval",
        cutoff=None,
        trec_eval=(TrecSpelling("rbp", "plain"), TrecSpelling("rbp", "free")),
        value_range=None,
        param_doc="p=persistence and gains as grade=gain,...",
        read=reader("p=persistence and gains as grade=gain,...", persistence_and_gains),
    ),
    Declaration(
        "rbp_resid",
        rbp_resid,
        "trec_eval's RBP residual",
        provider="trec_eval",
        cutoff=None,
        trec_eval=(TrecSpelling("rbp_resid", "plain"), TrecSpelling("rbp_resid", "free")),
        value_range=None,
        param_doc="p=persistence (gains as grade=gain,... change nothing)",
        read=reader("p=persistence and gains as grade=gain,...", persistence_and_gains),
    ),
)
