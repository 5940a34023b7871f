"""trec_eval's counts, summed over queries (not averaged) in its ``all`` line."""

from __future__ import annotations

from offeval_ir.measure.declaration import Declaration, TrecSpelling


def num_q(x, param, k):
    """1 per query (num_q)."""
    return x.xp.ones(len(x.lengths))


def num_ret(x, param, k):
    """Documents retrieved (num_ret)."""
    return x.lengths


def num_rel(x, param, k):
    """Relevant documents judged (num_rel)."""
    return x.n_rel


def num_rel_ret(x, param, k):
    """Relevant documents retrieved (num_rel_ret)."""
    return x.rel_ret()


def num_nonrel_judged_ret(x, param, k):
    """Judged non-relevant documents retrieved (num_nonrel_judged_ret)."""
    return (x.judged & ~x.rel).sum(axis=1).astype(float)


def _count(kernel) -> Declaration:
    name = kernel.__name__
    return Declaration(
        name,
        kernel,
        kernel.__doc__.split(" (")[0],
        provider="trec_eval",
        cutoff=None,
        trec_eval=(TrecSpelling(name, "plain", aggregate="sum"),),
        value_range=None,
    )


MEASURES = tuple(
    _count(kernel) for kernel in (num_q, num_ret, num_rel, num_rel_ret, num_nonrel_judged_ret)
)
