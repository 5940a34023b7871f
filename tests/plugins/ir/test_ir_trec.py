"""The trec_eval preset reproduces trec_eval (through pytrec_eval) user for user on the data
trec_eval users have: tied scores, docnos compared as text, queries judged only
non-relevant, queries on one side only, and run files whose rank column disagrees with
their scores."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from offeval import ConfigurationError
from offeval_ir import PRESETS, Judgements, compute, compute_frames

KS = (1, 5, 10)
#: offeval column -> trec_eval measure
TREC_NAMES = {
    **{f"precision@{k}": f"P_{k}" for k in KS},
    **{f"recall@{k}": f"recall_{k}" for k in KS},
    **{f"ndcg@{k}": f"ndcg_cut_{k}" for k in KS},
    **{f"success@{k}": f"success_{k}" for k in KS},
    "ap@10": "map_cut_10",
    "ap": "map",
    "ndcg": "ndcg",
    "rr": "recip_rank",
    "rprec": "Rprec",
    "bpref": "bpref",
}
METRICS = ["precision", "recall", "ndcg", "success", "ap", "rr", "rprec", "bpref"]


def trec_data(seed: int):
    """A run and qrels as trec_eval reads them, with every awkward case in them.

    Scores on a coarse grid (many ties), docnos such as "7", "10" and "d3" (text order
    differs from number order), 6 queries judged only non-relevant, 5 only in the qrels,
    5 only in the run, and a rank column written backwards (trec_eval ignores it).
    """
    rng = np.random.default_rng(seed)
    docs = np.array([str(i) for i in range(1, 15)] + [f"d{i}" for i in range(15)])
    run_rows, qrel_rows = [], []
    for q in range(40):
        qid = f"q{q}"
        if q < 35:
            n = int(rng.integers(1, 16))
            chosen = rng.choice(docs, n, replace=False)
            scores = np.round(rng.random(n) * 4) / 2  # 0, 0.5, ..., 2: ties
            for rank, (doc, score) in enumerate(zip(chosen, scores, strict=True)):
                run_rows.append((qid, "Q0", doc, n - rank, float(score), "tag"))
        if q >= 5:
            judged = rng.choice(docs, int(rng.integers(1, 12)), replace=False)
            only_nonrelevant = q >= 34
            for doc in judged:
                grade = 0 if only_nonrelevant else int(rng.integers(0, 4))
                qrel_rows.append((qid, "0", doc, grade))
    run = pd.DataFrame(run_rows, columns=["user", "q0", "item", "rank", "score", "tag"])
    qrels = pd.DataFrame(qrel_rows, columns=["user", "iter", "item", "relevance"])
    return run, qrels


def pytrec_eval_values(run: pd.DataFrame, qrels: pd.DataFrame) -> dict:
    import pytrec_eval

    run_dict, qrel_dict = {}, {}
    for user, item, score in run[["user", "item", "score"]].itertuples(index=False):
        run_dict.setdefault(user, {})[item] = score
    for user, item, grade in qrels[["user", "item", "relevance"]].itertuples(index=False):
        qrel_dict.setdefault(user, {})[item] = grade
    return pytrec_eval.RelevanceEvaluator(qrel_dict, set(TREC_NAMES.values())).evaluate(run_dict)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_trec_eval_preset_equals_pytrec_eval_user_for_user(seed):
    run, qrels = trec_data(seed)
    theirs = pytrec_eval_values(run, qrels)
    ours = compute_frames(run, qrels, METRICS, (*KS, None), PRESETS["trec_eval"]()).per_user
    evaluated = ours.dropna(how="all").index
    assert sorted(evaluated) == sorted(theirs)  # the queries of both run and qrels
    assert {f"q{q}" for q in range(34, 35)} <= set(evaluated)  # judged only non-relevant: 0
    for user, values in theirs.items():
        for column, name in TREC_NAMES.items():
            assert ours.loc[user, column] == pytest.approx(values[name], abs=1e-12), (
                user,
                column,
            )


def test_c_switch_scores_judged_queries_missing_from_the_run_as_zero():
    run, qrels = trec_data(0)
    default = compute_frames(run, qrels, ["ndcg"], [10], PRESETS["trec_eval"]())
    with_c = compute_frames(run, qrels, ["ndcg"], [10], PRESETS["trec_eval"](no_predictions="zero"))
    only_qrels = [f"q{q}" for q in range(35, 40)]
    assert default.per_user.loc[only_qrels, "ndcg@10"].isna().all()
    assert (with_c.per_user.loc[only_qrels, "ndcg@10"] == 0).all()
    n = default.counts.loc["ndcg@10", "users"]
    assert with_c.counts.loc["ndcg@10", "users"] == n + 5
    assert with_c.mean["ndcg@10"] == pytest.approx(default.mean["ndcg@10"] * n / (n + 5))


def test_scores_order_the_list_under_trec_eval_and_ranks_under_rank_conventions():
    run = pd.DataFrame(
        {"user": "q", "item": ["a", "b", "c"], "rank": [1, 2, 3], "score": [1.0, 2.0, 3.0]}
    )
    qrels = pd.DataFrame({"user": "q", "item": ["a"], "relevance": [1]})
    trec = compute_frames(run, qrels, ["rr"], [None], PRESETS["trec_eval"]())
    by_rank = compute_frames(run, qrels, ["rr"], [None], PRESETS["trec_eval"](order_by="rank"))
    assert trec.mean["rr"] == pytest.approx(1 / 3) and by_rank.mean["rr"] == 1.0
    judgements = Judgements.from_frames(run, qrels)  # ordered by rank
    with pytest.raises(ConfigurationError, match="ordered by rank.*order by score"):
        compute(judgements, ["rr"], [None], PRESETS["trec_eval"]())


@pytest.mark.parametrize("how", ["frames", "judgements"])
def test_the_conventions_tie_order_decides_however_the_judgements_were_built(how):
    """Three items tied on score; the relevant one is 'b'. Every tie policy gives its own
    value, and the same value from rank input with duplicate ranks."""
    pred = pd.DataFrame({"user": 1, "item": ["c", "a", "b", "z"], "score": [1.0, 1, 1, 0.5]})
    lab = pd.DataFrame({"user": [1], "item": ["b"], "relevance": [1]})
    ranked = pred.assign(rank=[1, 1, 1, 2]).drop(columns="score")
    expected = {"item_desc": 1 / 2, "item_asc": 1 / 2, "input_order": 1 / 3}
    expected_rr = {"item_desc": 1 / 2, "item_asc": 1 / 2, "input_order": 1 / 3}
    for ties, rr in expected_rr.items():
        conv = PRESETS["trec_eval"](ties=ties)
        for frame in (pred, ranked):
            if how == "frames":
                got = compute_frames(frame, lab, ["rr"], [None], conv).mean["rr"]
            else:
                got = compute(Judgements.from_frames(frame, lab), ["rr"], [None], conv).mean["rr"]
            assert got == pytest.approx(rr), (ties, list(frame))
    assert expected == expected_rr
    expected_p1 = compute(
        Judgements.from_frames(pred, lab), ["precision"], [1], PRESETS["trec_eval"](ties="expected")
    ).mean["precision@1"]
    assert expected_p1 == pytest.approx(1 / 3)  # 'b' first in one of three orders


def test_tie_order_by_item_id_follows_text_order_for_text_ids():
    """trec_eval compares docnos as text: '9' sorts after '10', so descending puts it first."""
    pred = pd.DataFrame({"user": "q", "item": ["10", "9"], "score": [1.0, 1.0]})
    lab = pd.DataFrame({"user": "q", "item": ["9"], "relevance": [1]})
    got = compute_frames(pred, lab, ["rr"], [None], PRESETS["trec_eval"]()).mean["rr"]
    assert got == 1.0


def test_judged_at_k_equals_ir_measures():
    import ir_measures

    run, qrels = trec_data(4)
    # ir-measures orders tied scores by docid ascending
    conv = PRESETS["trec_eval"](ties="item_asc")
    ours = compute_frames(run, qrels, ["judged"], KS, conv).per_user
    measures = [ir_measures.Judged @ k for k in KS]
    qrel_rows = [
        ir_measures.Qrel(u, i, int(g))
        for u, i, g in qrels[["user", "item", "relevance"]].itertuples(index=False)
    ]
    run_rows = [
        ir_measures.ScoredDoc(u, i, s)
        for u, i, s in run[["user", "item", "score"]].itertuples(index=False)
    ]
    checked = 0
    for metric in ir_measures.iter_calc(measures, qrel_rows, run_rows):
        k = metric.measure["cutoff"]
        value = ours.loc[metric.query_id, f"judged@{k}"]
        if np.isnan(value):  # ir-measures scores a judged query missing from the run as 0
            assert metric.query_id not in set(run["user"]) and metric.value == 0
            continue
        assert value == pytest.approx(metric.value, abs=1e-12)
        checked += 1
    assert checked == len(KS) * ours["judged@1"].notna().sum()


def test_err_rbp_and_residual_equal_their_definitions_rank_by_rank():
    """ERR (Chapelle et al. 2009, stopping at grade g with (2^g - 1) / 2^4 as gdeval) and
    RBP with its residual (Moffat and Zobel 2008), summed rank by rank in plain Python."""
    rng = np.random.default_rng(0)
    preds = {u: [f"d{i}" for i in rng.permutation(12)[: rng.integers(1, 9)]] for u in range(30)}
    labels = {
        u: {f"d{i}": int(rng.integers(0, 4)) for i in rng.permutation(12)[: rng.integers(1, 7)]}
        for u in range(30)
    }
    p = 0.7
    conv = PRESETS["trec_eval"](rbp_persistence=p, relevance_threshold=2)
    ks = (3, 5, None)
    ours = compute(Judgements.from_lists(preds, labels), ["err", "rbp", "rbp_residual"], ks, conv)
    for u in range(30):
        for k in ks:
            ranked = preds[u][:k] if k else preds[u]
            err, reach, rbp, residual = 0.0, 1.0, 0.0, 0.0
            for rank, doc in enumerate(ranked, start=1):
                stop = (2 ** labels[u].get(doc, 0) - 1) / 2**4
                err += reach * stop / rank
                reach *= 1 - stop
                weight = (1 - p) * p ** (rank - 1)
                if doc in labels[u]:
                    rbp += weight * (labels[u][doc] >= 2)
                else:
                    residual += weight
            residual += p ** len(ranked)
            suffix = "" if k is None else f"@{k}"
            row = ours.per_user.loc[u]
            assert row[f"err{suffix}"] == pytest.approx(err, abs=1e-12)
            assert row[f"rbp{suffix}"] == pytest.approx(rbp, abs=1e-12)
            assert row[f"rbp_residual{suffix}"] == pytest.approx(residual, abs=1e-12)
