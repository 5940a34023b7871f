"""Bad IR judgements (the IR plugin's Judgements, Conventions and compute): negative or
text grades, duplicate predictions, missing ids, unknown roles, cut-offs and metrics."""

from __future__ import annotations

import pandas as pd
from bad_input_logs import cases, fails

from offeval import OffevalError
from offeval_ir import Conventions, Judgements, compute


# -- IR judgements -------------------------------------------------------------------------
def judgements(pred=None, lab=None, **kw):
    pred = (
        pred
        if pred is not None
        else pd.DataFrame(
            {"user": [1, 1, 2], "item": ["a", "b", "a"], "rank": [1, 2, 1]},
            index=["p1", "p2", "p3"],
        )
    )
    lab = (
        lab
        if lab is not None
        else pd.DataFrame(
            {"user": [1, 2], "item": ["a", "b"], "relevance": [1, 2]}, index=["l1", "l2"]
        )
    )
    return Judgements.from_frames(pred, lab, **kw)


IR_CASES = {
    "negative grade": (
        lambda: judgements(
            lab=pd.DataFrame(
                {"user": [1, 2], "item": ["a", "b"], "relevance": [1, -2]}, index=["l1", "l2"]
            )
        ),
        "relevance",
        r"rows \['l2'\]",
    ),
    "text grade": (
        lambda: judgements(
            lab=pd.DataFrame(
                {"user": [1, 2], "item": ["a", "b"], "relevance": ["x", 1]}, index=["l1", "l2"]
            )
        ),
        "relevance",
        r"rows \['l1'\]",
    ),
    "duplicate prediction": (
        lambda: judgements(
            pred=pd.DataFrame(
                {"user": [1, 1, 2], "item": ["a", "a", "a"], "rank": [1, 2, 1]},
                index=["p1", "p2", "p3"],
            )
        ),
        "twice",
        r"rows \['p2'\]",
    ),
    "missing user": (
        lambda: judgements(
            pred=pd.DataFrame(
                {"user": [1, None, 2], "item": ["a", "b", "a"], "rank": [1, 2, 1]},
                index=["p1", "p2", "p3"],
            )
        ),
        "'user'",
        r"rows \['p2'\]",
    ),
    "no rank nor score": (
        lambda: judgements(pred=pd.DataFrame({"user": [1], "item": ["a"]})),
        "rank or a score",
    ),
    "unknown order column": (lambda: judgements(order_by="random"), "order_by"),
    "unknown tie policy": (lambda: Conventions(ties="random"), "ties"),
    "role named twice": (lambda: judgements(columns={"user": "a", "query": "b"}), "twice"),
    "unknown role": (lambda: judgements(columns={"qid2": "a"}), "unknown column role"),
    "cut-off zero": (lambda: compute(judgements(), ["ndcg"], [0]), "cut-off k"),
    "unknown metric": (lambda: compute(judgements(), ["ndgc"], [5]), "unknown metrics"),
}


@cases(IR_CASES, error=OffevalError)
def test_bad_judgements(case):
    fails(*case)
