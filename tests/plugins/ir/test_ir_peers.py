"""Each preset reproduces its library's own numbers on the five users and a random set.

scikit-learn, ranx, ir-measures and pytrec_eval run live (test dependencies).
torchmetrics, RecBole, Spark MLlib and recommenders need torch, a JVM or a long
dependency chain: their values were computed by those libraries with
``tests/plugins/ir/ir_reference/generate.py`` and are pinned in ``pinned.json`` with the
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


@pytest.mark.slow
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


# -- a realistic collection, read from TREC files -------------------------------------------
TREC_MEASURES = ["map", "ndcg", "ndcg_cut_10", "P_10", "recall_100", "recip_rank", "bpref", "Rprec"]


def trec_collection(tmp_path, seed: int = 7, n: int = 60):
    """Graded qrels with -1 grades (some queries judged only -1, some only 0 and -1), a run
    with tied scores (one decimal), ranks that disagree with the scores, ids such as 0301,
    12, 0012 and D5, queries missing from the run and queries the qrels do not judge."""
    rng = np.random.default_rng(seed)
    docs = [str(d) for d in range(1, 400)] + [f"00{d}" for d in range(1, 40)] + ["D5", "d5"]
    qrels, run = [], []
    for i in range(n):
        q = f"0{301 + i}" if i % 5 == 0 else str(301 + i)
        pool = rng.choice(len(docs), 60, replace=False)
        judged = pool[: rng.integers(3, 50)]
        grades = rng.choice([-1, 0, 1, 2, 3], judged.size, p=[0.1, 0.5, 0.2, 0.12, 0.08])
        grades = np.full(judged.size, -1) if i % 9 == 2 else grades
        grades = np.where(grades > 0, 0, grades) if i % 9 == 4 else grades
        qrels += [f"{q} 0 {docs[d]} {g}" for d, g in zip(judged, grades, strict=True)]
        if i % 7 == 3:
            continue  # a judged query the run misses
        ranked = rng.choice(pool, rng.integers(1, 60), replace=False)
        scores = np.round(rng.normal(size=ranked.size), 1)
        ranks = rng.permutation(ranked.size) + 1
        run += [
            f"{q} Q0 {docs[d]} {r} {s} x" for d, s, r in zip(ranked, scores, ranks, strict=True)
        ]
    run += ["9999 Q0 1 1 1.0 x"]  # a query the qrels do not judge
    (tmp_path / "qrels.txt").write_text("\n".join(qrels) + "\n")
    (tmp_path / "a.run").write_text("\n".join(run) + "\n")
    return tmp_path / "a.run", tmp_path / "qrels.txt"


def trec_dicts(run_path, qrels_path):
    run, qrels = {}, {}
    for line in run_path.read_text().splitlines():
        q, _, d, _, s, _ = line.split()
        run.setdefault(q, {})[d] = float(s)
    for line in qrels_path.read_text().splitlines():
        q, _, d, g = line.split()
        qrels.setdefault(q, {})[d] = int(g)
    return run, qrels


@pytest.mark.parametrize("missing", ["nan", "zero"])
def test_trec_eval_preset_matches_pytrec_eval_on_trec_files(tmp_path, missing):
    """Per query, from the files: pytrec_eval's values (trec_eval's C code), and with
    no_predictions='zero' (trec_eval -c) every query of the qrels, 0 where the run has none."""
    pytrec_eval = pytest.importorskip("pytrec_eval")
    from offeval_ir import compute_measures
    from offeval_ir.files import read_qrels, read_run

    run_path, qrels_path = trec_collection(tmp_path)
    run, qrels = trec_dicts(run_path, qrels_path)
    theirs = pytrec_eval.RelevanceEvaluator(qrels, set(TREC_MEASURES)).evaluate(run)
    if missing == "zero":
        theirs.update({q: dict.fromkeys(TREC_MEASURES, 0.0) for q in set(qrels) - set(theirs)})
    conventions = PRESETS["trec_eval"](no_predictions=missing)
    ours = compute_measures(read_run(run_path), read_qrels(qrels_path), TREC_MEASURES, conventions)
    values = ours.per_user.dropna(how="all")
    assert sorted(values.index) == sorted(theirs) and "0301" in theirs
    expected = pd.DataFrame(theirs).T.loc[values.index, TREC_MEASURES]
    np.testing.assert_allclose(values.to_numpy(), expected.to_numpy(), rtol=0, atol=1e-12)


def test_trec_eval_preset_judged_matches_ir_measures_with_ties(tmp_path):
    """ir-measures' Judged@k sorts tied scores by docno ascending (its judged provider:
    key (-score, docno)), not by docno descending as trec_eval does; a -1 grade is judged."""
    ir_measures = pytest.importorskip("ir_measures")
    from offeval_ir import compute_measures
    from offeval_ir.files import read_qrels, read_run

    run_path, qrels_path = trec_collection(tmp_path)
    measures = [ir_measures.Judged @ 5, ir_measures.Judged @ 10]
    qrels = list(ir_measures.read_trec_qrels(str(qrels_path)))
    theirs = ir_measures.iter_calc(measures, qrels, list(ir_measures.read_trec_run(str(run_path))))
    ours = compute_measures(
        read_run(run_path), read_qrels(qrels_path), [str(m) for m in measures]
    ).per_user
    compared = 0
    for metric in theirs:
        mine = ours.loc[metric.query_id, str(metric.measure)]
        if not np.isnan(mine):  # ir-measures also lists the queries the run misses
            assert mine == pytest.approx(metric.value, abs=1e-12), metric
            compared += 1
    assert compared > 80


def test_trec_collection_values_do_not_depend_on_layout(tmp_path):
    """The run shuffled and read in blocks of users, its ids as Python strings or as
    pyarrow's text: the same per-query values (ids are numbered differently on each path)."""
    from offeval_ir import compute_measures
    from offeval_ir.files import read_qrels, read_run

    run_path, qrels_path = trec_collection(tmp_path)
    run, qrels = read_run(run_path), read_qrels(qrels_path)
    expected = compute_measures(run, qrels, TREC_MEASURES).per_user
    as_objects = {"user": object, "item": object}
    for predictions, labels, chunk_rows in [
        (run.sample(frac=1, random_state=0), qrels, 200),
        (run.astype(as_objects), qrels, 300),
        (run, qrels.astype(as_objects), 2_000_000),
    ]:
        got = compute_measures(predictions, labels, TREC_MEASURES, chunk_rows=chunk_rows)
        pd.testing.assert_frame_equal(
            got.per_user.loc[expected.index], expected, check_exact=False, rtol=0, atol=1e-12
        )
