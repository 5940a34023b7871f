"""Expected reciprocal rank (Chapelle et al. 2009)."""

from __future__ import annotations

from offeval_ir.measure.declaration import Declaration, Spelling


def _terms(lists):
    """ERR's summands: P(stop at rank r) / r, stopping at grade g with probability
    (2^g - 1) / 2^max (``err_max_grade``) after not stopping above."""
    xp, max_grade = lists.xp, lists.conv.err_max_grade
    grades = lists.grades[:, : lists.n_ranks]
    stop = xp.expm1(xp.minimum(grades, max_grade) * xp.log(2)) / 2.0**max_grade
    reach = xp.cumprod(1 - stop, axis=1)
    reach = xp.concatenate([xp.ones((len(stop), 1)), reach[:, :-1]], axis=1)
    return stop * reach / xp.arange(1, stop.shape[1] + 1)


def err(lists, k):
    """ERR@k = sum over ranks r <= k of R_r / r prod over i < r of (1 - R_i),
    R_i = (2^g_i - 1) / 2^max."""
    return lists.upto(lists.memo("err_terms", lambda: _terms(lists)), k)


MEASURES = (
    Declaration(
        "err",
        err,
        "expected reciprocal rank: the reciprocal rank where a cascade user stops",
        ir_measures=(Spelling("ERR"),),
    ),
)
