"""What every measure module's test reads: runs and qrels with trec_eval's awkward cases,
each user's lists as Python lists (for brute-force oracles), and pytrec_eval's values."""

from __future__ import annotations

import numpy as np
import pandas as pd

from offeval_ir import PRESETS, compute_measures, trec_eval_measures


def case(seed: int, queries: int = 40, *, negative: bool = False):
    """A run (tied scores on a coarse grid, docnos such as "7", "10" and "d3") and qrels
    graded 0-3 (some documents ranked but not judged, some judged but not ranked, some
    queries judged only non-relevant) of ``queries`` queries; with ``negative``, some
    grades are -1 (in trec_eval's pool, not judged)."""
    rng = np.random.default_rng(seed)
    docs = np.array([str(i) for i in range(1, 15)] + [f"d{i}" for i in range(15)])
    run_rows, qrel_rows = [], []
    for q in range(queries):
        qid = f"q{q}"
        n = int(rng.integers(1, 16))
        chosen = rng.choice(docs, n, replace=False)
        scores = np.round(rng.random(n) * 4) / 2  # 0, 0.5, ..., 2: ties
        run_rows += [(qid, doc, float(s)) for doc, s in zip(chosen, scores, strict=True)]
        judged = rng.choice(docs, int(rng.integers(1, 12)), replace=False)
        only_nonrelevant = q % 9 == 8
        for doc in judged:
            grades = (-1, 0, 0, 1, 1, 2, 3) if negative else (0, 1, 2, 3)
            grade = 0 if only_nonrelevant else int(rng.choice(grades))
            qrel_rows.append((qid, doc, grade))
    run = pd.DataFrame(run_rows, columns=["user", "item", "score"])
    qrels = pd.DataFrame(qrel_rows, columns=["user", "item", "relevance"])
    return run, qrels


def ranked(run: pd.DataFrame, qrels: pd.DataFrame) -> dict:
    """Per query: (the grades of its list in trec_eval's order, score descending then docno
    descending, None for an unjudged document; the grades of its qrels)."""
    order = run.sort_values(["user", "score", "item"], ascending=[True, False, False])
    grades = {(u, i): g for u, i, g in qrels.itertuples(index=False)}
    out = {}
    for user, labels in qrels.groupby("user"):
        items = order.loc[order.user == user, "item"]
        out[user] = ([grades.get((user, i)) for i in items], list(labels.relevance))
    return out


def ours(run: pd.DataFrame, qrels: pd.DataFrame, measures: list, **switches) -> pd.DataFrame:
    """offeval's per-query values under the trec_eval preset (with ``switches``)."""
    conv = PRESETS["trec_eval"](**switches)
    return compute_measures(run, qrels, measures, conv).per_user


def pytrec_eval_values(run: pd.DataFrame, qrels: pd.DataFrame, names: set[str], level: int = 1):
    """pytrec_eval's per-query values ({query: {measure: value}}) at relevance level
    ``level`` (trec_eval's ``-l``)."""
    import pytrec_eval

    run_dict, qrels_dict = {}, {}
    for user, item, score in run.itertuples(index=False):
        run_dict.setdefault(user, {})[item] = score
    for user, item, grade in qrels.itertuples(index=False):
        qrels_dict.setdefault(user, {})[item] = int(grade)
    evaluator = pytrec_eval.RelevanceEvaluator(qrels_dict, names, relevance_level=level)
    return evaluator.evaluate(run_dict)


def assert_agree(ours: pd.DataFrame, theirs: dict, names: dict[str, str]) -> None:
    """Every query pytrec_eval evaluates has offeval's value (column -> pytrec_eval name)."""
    assert theirs
    for user, values in theirs.items():
        for column, name in names.items():
            assert abs(ours.loc[user, column] - values[name]) <= 1e-12, (user, column)


def agree_with_pytrec_eval(trec_names: list[str], seeds=range(4), levels=(1, 2), skip=None):
    """offeval's values of trec_eval's measures (named as ``-m`` names them, at trec_eval's
    default parameters) are pytrec_eval's, query for query, at each relevance level, on
    runs with -1 grades; ``skip(measure, n_rel)`` says where pytrec_eval's trec_eval 9
    differs from trec_eval 10."""
    measures = trec_eval_measures(trec_names)
    for seed in seeds:
        run, qrels = case(seed, negative=True)
        for level in levels:
            theirs = pytrec_eval_values(run, qrels, set(trec_names), level)
            values = ours(run, qrels, measures, relevance_threshold=level)
            n_rel = qrels[qrels.relevance >= level].groupby("user").size()
            assert theirs
            for user, their in theirs.items():
                for m in measures:
                    if skip is None or not skip(m, n_rel.get(user, 0)):
                        assert abs(values.loc[user, m.name] - their[m.name]) <= 1e-12, (
                            user,
                            m.name,
                        )
