"""trec_eval's precisions relative to R: at multiples of R, over min(k, R), over the set."""

from __future__ import annotations

from offeval_ir.measure.declaration import Declaration, TrecSpelling
from offeval_ir.trec_params import multiple, reader


def rprec_mult(x, multiple, k):
    """Precision at rank floor(x R + 0.9) (C's cast of x R + 0.9; 0 at rank 0)."""
    xp = x.xp
    cut = xp.floor(multiple * x.n_rel + 0.9)
    return xp.where(cut > 0, x.hits_at(cut) / cut, 0.0)


def relative_p(x, param, k):
    """Hits in the top k over min(k, R) (m_rel_P.c; 0 without a relevant label)."""
    xp = x.xp
    return x.hits_at(xp.full(len(x.lengths), float(k))) / xp.minimum(k, x.n_rel)


def set_relative_p(x, param, k):
    """Relevant retrieved over min(retrieved, R)."""
    return x.rel_ret() / x.xp.minimum(x.lengths, x.n_rel)


def set_map(x, param, k):
    """Set precision times set recall: relevant retrieved^2 / (retrieved R)."""
    found = x.rel_ret()
    return found * found / (x.lengths * x.n_rel)


def _trec(name, kernel, summary, *spellings, **more) -> Declaration:
    return Declaration(
        name, kernel, summary, "trec_eval", cutoff=None, trec_eval=spellings,
        value_range=None, **more,
    )  # fmt: skip


MEASURES = (
    _trec(
        "Rprec_mult",
        rprec_mult,
        "precision at a multiple of R",
        TrecSpelling(
            "Rprec_mult", "level", defaults=tuple(round(0.2 * i, 1) for i in range(1, 11))
        ),
        param_doc="a multiple of R",
        read=reader("a multiple of R", multiple, required=True),
    ),
    _trec(
        "relative_P",
        relative_p,
        "hits in the top k over min(k, R)",
        TrecSpelling("relative_P", "cut"),
        needs_cutoff=True,
    ),
    _trec(
        "set_relative_P",
        set_relative_p,
        "relevant retrieved over min(retrieved, R)",
        TrecSpelling("set_relative_P", "plain"),
    ),
    _trec("set_map", set_map, "set precision times set recall", TrecSpelling("set_map", "plain")),
)
