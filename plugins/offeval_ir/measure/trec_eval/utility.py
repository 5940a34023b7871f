"""trec_eval's utility."""

from __future__ import annotations

from offeval_ir.measure.declaration import Declaration, TrecSpelling
from offeval_ir.trec_params import coefficients, reader


def utility(x, coefficients, k):
    """a rel_ret + b nonrel_ret + c rel_not_ret + d nonrel_not_ret, with trec_eval's
    collection size -N 0 (so the last term counts -(rel_not_ret + nonrel_ret)).

    A query without predictions (scored under ``-c``) gets what trec_eval gives it:
    trec_eval evaluates such a query on a one-document list of an unjudged document
    and then zeroes the value named ``utility``, so bare utility is 0 and utility with
    coefficients is b + c R - d (1 + R)."""
    a, b, c, d = coefficients if coefficients is not None else (1.0, -1.0, 0.0, 0.0)
    found = x.rel_ret()
    value = (
        a * found
        + b * (x.lengths - found)
        + c * (x.n_rel - found)
        + d * (0 + found - x.lengths - x.n_rel)
    )
    empty = b + c * x.n_rel - d * (1 + x.n_rel) if coefficients is not None else 0.0
    return x.xp.where(x.lengths > 0, value, empty)


MEASURES = (
    Declaration(
        "utility",
        utility,
        "a linear utility of the retrieved and missed documents",
        provider="trec_eval",
        cutoff=None,
        trec_eval=(
            TrecSpelling("utility", "plain"),
            TrecSpelling("utility", "free", underscore=True),
        ),
        value_range=None,
        param_doc="four coefficients",
        read=reader("four coefficients", coefficients),
    ),
)
