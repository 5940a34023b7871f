"""offeval_ir.measure.trec_eval.rbp: trec_eval's rbp and rbp_resid by hand, as m_rbp.c and
m_rbp_resid.c compute them (pytrec_eval's trec_eval has neither), rbp_resid at its own p too."""

from __future__ import annotations

import pytest
from measure_cases import case, ours, ranked

from offeval_ir import parse_measures


@pytest.mark.parametrize("level", [1, 3])
def test_rbp_is_graded_whatever_the_relevance_level(level):
    run, qrels = case(9)
    values = ours(run, qrels, ["rbp", "rbp_resid"], relevance_threshold=level)
    p = 0.9
    for user, (grades, labels) in ranked(run, qrels).items():
        top = max([*labels, 0])
        scale = top if top > 1 else 1  # gains (the grade) over the query's highest grade
        rbp = sum((1 - p) * p**i * g / scale for i, g in enumerate(grades) if g)
        unjudged = [i for i, g in enumerate(grades) if g is None]
        resid = p ** len(grades) + sum((1 - p) * p**i for i in unjudged) if unjudged else 0.0
        assert values.loc[user, "rbp"] == pytest.approx(rbp, abs=1e-12), user
        assert values.loc[user, "rbp_resid"] == pytest.approx(resid, abs=1e-12), user


@pytest.mark.parametrize("p", [0.5, 0.8])
def test_rbp_resid_reads_its_persistence(p):
    """m_rbp_resid.c reads the pair named p (and ignores gains)."""
    run, qrels = case(4, negative=True)
    measures = parse_measures([f"rbp_resid.p={p}", f"rbp_resid.p={p},1=3"])
    values = ours(run, qrels, measures)
    for user, (grades, _) in ranked(run, qrels).items():
        unjudged = [i for i, g in enumerate(grades) if g is None or g < 0]
        resid = p ** len(grades) + sum((1 - p) * p**i for i in unjudged) if unjudged else 0.0
        assert values.loc[user, f"rbp_resid_p={p}"] == pytest.approx(resid, abs=1e-12), user
        assert values.loc[user, f"rbp_resid_p={p},1=3"] == values.loc[user, f"rbp_resid_p={p}"]
