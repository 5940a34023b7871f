"""Each preset reproduces its library's own numbers on the five users and a random set.

scikit-learn, ranx, ir-measures and pytrec_eval run live (test dependencies).
torchmetrics, RecBole, Spark MLlib and recommenders need torch, a JVM or a long
dependency chain: their values were computed by those libraries with
``tests/ir_reference/generate.py`` and are pinned in ``pinned.json`` with the
library versions.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from offeval_ir import PRESETS, Judgements, compute

sys.path.insert(0, str(Path(__file__).parent / "ir_reference"))
from data import DATASETS, KS, universe_scores  # noqa: E402

PINNED = json.loads((Path(__file__).parent / "ir_reference" / "pinned.json").read_text())


def judgements_from_lists(predictions, labels):
    return Judgements.from_lists(predictions, labels)


def judgements_from_scores(scores, labels):
    pred = pd.DataFrame(
        [(u, i, s) for u, d in scores.items() for i, s in d.items()],
        columns=["user", "item", "score"],
    )
    lab = pd.DataFrame(
        [(u, i, g) for u, d in labels.items() for i, g in d.items()],
        columns=["user", "item", "relevance"],
    )
    return Judgements.from_frames(pred, lab, users=list(scores))


def ours(preset, judgements, metrics):
    conv = PRESETS[preset]()
    return compute(judgements, metrics, KS, conv)


# -- trec_eval via pytrec_eval and ir-measures ----------------------------------------------
TREC = {"precision": "P_{k}", "recall": "recall_{k}", "ap": "map_cut_{k}", "ndcg": "ndcg_cut_{k}"}


def trec_inputs(predictions, labels):
    run = {  # a run file has no line for a user without predictions
        str(u): {str(i): float(len(lst) - r) for r, i in enumerate(lst)}
        for u, lst in predictions.items()
        if lst
    }
    qrels = {str(u): {str(i): int(g) for i, g in d.items()} for u, d in labels.items() if d}
    return run, qrels


@pytest.mark.parametrize("dataset", DATASETS)
def test_trec_eval_preset_matches_pytrec_eval(dataset):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    predictions, labels, _ = DATASETS[dataset]
    run, qrels = trec_inputs(predictions, labels)
    names = {TREC[m].format(k=k): f"{m}@{k}" for m in TREC for k in KS}
    theirs = pytrec_eval.RelevanceEvaluator(qrels, set(names) | {"recip_rank"}).evaluate(run)
    result = ours("trec_eval", judgements_from_lists(predictions, labels), list(TREC) + ["rr"])
    rr_full = compute(
        judgements_from_lists(predictions, labels), ["rr"], [None], PRESETS["trec_eval"]()
    ).per_user["rr"]
    evaluated = sorted(theirs, key=int)
    assert [int(q) for q in evaluated] == result.per_user.dropna().index.tolist()
    for q in evaluated:
        for trec_name, our_name in names.items():
            assert result.per_user.loc[int(q), our_name] == pytest.approx(
                theirs[q][trec_name], abs=1e-12
            ), our_name
        assert rr_full.loc[int(q)] == pytest.approx(theirs[q]["recip_rank"], abs=1e-12)


@pytest.mark.parametrize("dataset", DATASETS)
def test_trec_eval_preset_matches_ir_measures_means(dataset):
    ir_measures = pytest.importorskip("ir_measures")
    predictions, labels, _ = DATASETS[dataset]
    run, qrels = trec_inputs(predictions, labels)
    qrel_rows = [ir_measures.Qrel(q, d, r) for q, ds in qrels.items() for d, r in ds.items()]
    run_rows = [ir_measures.ScoredDoc(q, d, s) for q, ds in run.items() for d, s in ds.items()]
    measures = {}
    for k in KS:
        measures.update(
            {
                ir_measures.P @ k: f"precision@{k}",
                ir_measures.R @ k: f"recall@{k}",
                ir_measures.AP @ k: f"ap@{k}",
                ir_measures.RR @ k: f"rr@{k}",
                ir_measures.nDCG @ k: f"ndcg@{k}",
                ir_measures.Success @ k: f"hit_rate@{k}",
            }
        )
    theirs = ir_measures.calc_aggregate(list(measures), qrel_rows, run_rows)
    # ir-measures' aggregates count a judged query missing from the run as 0: trec_eval -c
    result = compute(
        judgements_from_lists(predictions, labels),
        ["precision", "recall", "ap", "rr", "ndcg", "hit_rate"],
        KS,
        PRESETS["trec_eval"](no_predictions="zero"),
    )
    for measure, name in measures.items():
        assert result.mean[name] == pytest.approx(theirs[measure], abs=1e-12), name


@pytest.mark.parametrize("dataset", DATASETS)
def test_ranx_preset_matches_ranx(dataset):
    ranx = pytest.importorskip("ranx")
    predictions, labels, _ = DATASETS[dataset]
    run, qrels = trec_inputs(predictions, labels)
    names = {
        f"{r}@{k}": f"{o}@{k}"
        for k in KS
        for r, o in [
            ("precision", "precision"),
            ("recall", "recall"),
            ("f1", "f1"),
            ("hit_rate", "hit_rate"),
            ("map", "ap"),
            ("mrr", "rr"),
            ("ndcg", "ndcg"),
        ]
    }
    q = ranx.Qrels(qrels)
    r = ranx.Run({u: docs for u, docs in run.items() if docs})
    theirs = ranx.evaluate(q, r, list(names), make_comparable=True)
    result = ours(
        "ranx",
        judgements_from_lists(predictions, labels),
        ["precision", "recall", "f1", "hit_rate", "ap", "rr", "ndcg"],
    )
    for their_name, our_name in names.items():
        assert result.mean[our_name] == pytest.approx(theirs[their_name], abs=1e-9), our_name


@pytest.mark.parametrize("dataset", DATASETS)
def test_sklearn_preset_matches_ndcg_score(dataset):
    metrics = pytest.importorskip("sklearn.metrics")
    predictions, labels, items = DATASETS[dataset]
    scores = universe_scores(predictions, items, tie_free=False)
    users = list(predictions)
    y_true = np.array([[labels[u].get(i, 0) for i in items] for u in users], dtype=float)
    y_score = np.array([[scores[u][i] for i in items] for u in users])
    result = ours("sklearn", judgements_from_scores(scores, labels), ["ndcg", "dcg"])
    for k in KS:
        per_user = [metrics.ndcg_score(y_true[[n]], y_score[[n]], k=k) for n in range(len(users))]
        np.testing.assert_allclose(result.per_user[f"ndcg@{k}"], per_user, atol=1e-12)
        assert result.mean[f"ndcg@{k}"] == pytest.approx(metrics.ndcg_score(y_true, y_score, k=k))
        assert result.mean[f"dcg@{k}"] == pytest.approx(metrics.dcg_score(y_true, y_score, k=k))


# -- pinned values ------------------------------------------------------------------------------
def pinned_cases():
    for preset, entry in PINNED.items():
        for dataset, values in entry["data"].items():
            yield pytest.param(preset, dataset, values, id=f"{preset}-{entry['version']}-{dataset}")


@pytest.mark.parametrize(("preset", "dataset", "values"), list(pinned_cases()))
def test_preset_matches_pinned_library_values(preset, dataset, values):
    predictions, labels, items = DATASETS[dataset]
    if preset == "torchmetrics":  # torchmetrics ranks every candidate it is given
        judgements = judgements_from_scores(
            universe_scores(predictions, items, tie_free=True), labels
        )
    else:
        judgements = judgements_from_lists(predictions, labels)
    metrics = sorted({name.split("@")[0] for name in values})
    result = ours(preset, judgements, metrics)
    # torchmetrics computes in float32 (relative precision 6e-8 per operation)
    tol = 1e-6 if preset == "torchmetrics" else 1e-9
    for name, reference in values.items():
        if "mean" in reference:
            assert result.mean[name] == pytest.approx(reference["mean"], abs=tol), name
        else:
            users = [int(u) for u in reference]
            np.testing.assert_allclose(
                result.per_user.loc[users, name], list(reference.values()), atol=tol, err_msg=name
            )
            assert result.per_user[name].notna().sum() == len(users), name
