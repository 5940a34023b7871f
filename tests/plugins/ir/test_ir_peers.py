"""Each preset reproduces its library's own numbers on the five users and a random set.

scikit-learn, ranx, ir-measures and pytrec_eval run live (test dependencies).
torchmetrics, RecBole, Spark MLlib and recommenders need torch, a JVM or a long
dependency chain: their values were computed by those libraries with
``tests/plugins/ir/ir_reference/generate.py`` and are pinned in ``pinned.json`` with the
library versions.
"""

from __future__ import annotations

import json
import re
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
    import pytrec_eval

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
    import ir_measures

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
    import ranx

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
    from sklearn import metrics

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
    import pytrec_eval

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
    import ir_measures

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


# -- ranx and pytrec_eval inputs, ir-measures measure objects, taken as they are ------------


def _peer_data(seed: int = 11):
    """A dict-of-dict run and qrels (text ids, tie-free scores, grades 0-3, a query only in
    the qrels and one only in the run)."""
    rng = np.random.default_rng(seed)
    qrels = {
        f"q{q}": {f"d{d}": int(rng.integers(0, 4)) for d in rng.choice(25, 7, replace=False)}
        for q in range(30)
    }
    run = {
        f"q{q}": {f"d{d}": float(s) for d, s in enumerate(rng.permutation(25) + rng.random(25))}
        for q in range(1, 31)
    }
    return run, qrels


def _frames(run, qrels):
    pred = pd.DataFrame(
        [(q, d, s) for q, ds in run.items() for d, s in ds.items()],
        columns=["user", "item", "score"],
    )
    lab = pd.DataFrame(
        [(q, d, g) for q, ds in qrels.items() for d, g in ds.items()],
        columns=["user", "item", "relevance"],
    )
    return pred, lab


PEER_MEASURES = ["nDCG@10", "P(rel=2)@5", "AP", "RR", "R@20", "Rprec", "Bpref"]


@pytest.mark.slow
def test_ranx_objects_dicts_and_ir_measures_tuples_give_the_frames_numbers():
    import ir_measures
    import ranx

    from offeval_ir import compute_measures

    run, qrels = _peer_data()
    pred, lab = _frames(run, qrels)
    expected = compute_measures(pred, lab, PEER_MEASURES).per_user
    scored = [ir_measures.ScoredDoc(q, d, s) for q, ds in run.items() for d, s in ds.items()]
    judged = [ir_measures.Qrel(q, d, g) for q, ds in qrels.items() for d, g in ds.items()]
    peer_frames = (
        pred.rename(columns={"user": "query_id", "item": "doc_id"}),
        lab.rename(columns={"user": "query_id", "item": "doc_id"}),
    )
    for given_run, given_qrels in [
        (run, qrels),
        (ranx.Run(run, name="bm25"), ranx.Qrels(qrels)),
        (scored, judged),
        peer_frames,
        (ranx.Run(run).to_dataframe(), lab),  # ranx's frame columns: q_id, doc_id, score
    ]:
        got = compute_measures(given_run, given_qrels, PEER_MEASURES).per_user
        pd.testing.assert_frame_equal(
            got.loc[expected.index], expected, check_exact=False, rtol=0, atol=1e-12
        )
    assert expected["AP"].notna().sum() == 29  # q0 only judged, q30 only ranked


@pytest.mark.slow
def test_ranx_inputs_give_ranx_numbers():
    """Under the ranx preset, the numbers ranx.evaluate gives for the same objects."""
    import ranx

    from offeval_ir import PRESETS, evaluate_runs

    run, qrels = _peer_data()
    theirs = ranx.evaluate(
        ranx.Qrels(qrels),
        ranx.Run(run),
        ["ndcg@10", "map", "mrr", "precision@5", "recall@20"],
        make_comparable=True,
    )
    evaluation = evaluate_runs(
        [ranx.Run(run, name="bm25")],
        ranx.Qrels(qrels),
        ["nDCG@10", "AP", "RR", "P@5", "R@20"],
        PRESETS["ranx"](),
    )
    means = evaluation.table().set_index("measure")["mean"]
    for ours, their in [
        ("nDCG@10", "ndcg@10"),
        ("AP", "map"),
        ("RR", "mrr"),
        ("P@5", "precision@5"),
        ("R@20", "recall@20"),
    ]:
        assert means[ours] == pytest.approx(theirs[their], abs=1e-12), ours


def test_ir_measures_objects_give_its_means_and_offeval_intervals():
    """The documented path for intervals: ir-measures' measure objects and inputs into
    evaluate_runs; with no_predictions='zero' the means are ir-measures' aggregates."""
    import ir_measures

    from offeval_ir import PRESETS, evaluate_runs

    run, qrels = _peer_data()
    scored = [ir_measures.ScoredDoc(q, d, s) for q, ds in run.items() for d, s in ds.items()]
    judged = [ir_measures.Qrel(q, d, g) for q, ds in qrels.items() for d, g in ds.items()]
    measures = [ir_measures.nDCG @ 10, ir_measures.P(rel=2) @ 5, ir_measures.AP, ir_measures.Bpref]
    theirs = ir_measures.calc_aggregate(measures, judged, scored)
    evaluation = evaluate_runs(
        {"bm25": scored}, judged, measures, PRESETS["trec_eval"](no_predictions="zero")
    )
    table = evaluation.table().set_index("measure")
    for measure in measures:
        row = table.loc[str(measure)]
        assert row["mean"] == pytest.approx(theirs[measure], abs=1e-12), measure
        assert row["ci_low"] < row["mean"] < row["ci_high"] and row["se"] > 0
        assert row["users"] == 30  # the 30 judged queries, q0 (not ranked) as 0


@pytest.mark.slow
def test_compare_systems_takes_values_computed_elsewhere():
    """pytrec_eval's evaluate output and ranx runs ranx has evaluated: the comparison of
    offeval's own per-user values of the same measures."""
    import pytrec_eval
    import ranx

    from offeval_ir import compare_systems, compute_measures

    run, qrels = _peer_data()
    other = {q: {d: -s for d, s in ds.items()} for q, ds in run.items()}
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {"map", "ndcg_cut_10"})
    given = {"bm25": evaluator.evaluate(run), "rev": evaluator.evaluate(other)}
    table = compare_systems(given, resamples=200)
    own = {
        name: compute_measures(r, qrels, ["map", "ndcg_cut_10"])
        for name, r in (("bm25", run), ("rev", other))
    }
    expected = compare_systems(own, resamples=200)
    columns = ["measure", "a", "b", "users", "difference", "p_value", "wins", "ties", "losses"]
    table = table.set_index("measure").loc[["map", "ndcg_cut_10"]].reset_index()
    pd.testing.assert_frame_equal(table[columns], expected[columns], check_exact=False, atol=1e-12)

    runs = [ranx.Run(run, name="bm25"), ranx.Run(other, name="rev")]
    for r in runs:
        ranx.evaluate(ranx.Qrels(qrels), r, ["map"], make_comparable=True)
    table = compare_systems(runs, resamples=200)
    assert list(table["measure"]) == ["map"] and table["users"].iloc[0] == 30


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda f: f["evaluate_runs"]({"q1": {"d1": 1.0}}, {"q1": {"d1": 1}}, ["AP"]),
            r"looks like one run \{qid: \{docid: score\}\}: give \{'name': run\}",
        ),
        (
            lambda f: f["compute_measures"]({"q1": {"d1": "high"}}, {"q1": {"d1": 1}}, ["AP"]),
            r"the score of query 'q1', document 'd1' is 'high', not a number",
        ),
        (lambda f: f["compute_measures"]({"q1": [1, 2]}, {"q1": {"d1": 1}}, ["AP"]), None),
        (
            lambda f: f["compute_measures"]({"q1": {"d1": 1.0}}, {}, ["AP"]),
            "the qrels is an empty dict",
        ),
    ],
)
def test_peer_input_mistakes_are_named(call, message):
    from offeval import OffevalError
    from offeval_ir import compute_measures, evaluate_runs

    functions = {"evaluate_runs": evaluate_runs, "compute_measures": compute_measures}
    with pytest.raises((OffevalError, ValueError)) as error:
        call(functions)
    if message:
        assert re.search(message, str(error.value)), str(error.value)


@pytest.mark.slow
def test_a_ranx_qrels_given_as_the_run_is_named():
    import ranx

    from offeval import ConfigurationError
    from offeval_ir import compute_measures

    run, qrels = _peer_data()
    with pytest.raises(ConfigurationError, match="the run is a ranx Qrels"):
        compute_measures(ranx.Qrels(qrels), ranx.Qrels(qrels), ["AP"])
    with pytest.raises(ConfigurationError, match="single ranx Run"):
        from offeval_ir import evaluate_runs

        evaluate_runs(ranx.Run(run, name="x"), qrels, ["AP"])


def test_an_unsupported_ir_measures_object_says_why():
    import ir_measures

    from offeval import ConfigurationError
    from offeval_ir import compute_measures

    run, qrels = _peer_data()
    with pytest.raises(ConfigurationError, match="judged_only=True"):
        compute_measures(run, qrels, [ir_measures.nDCG(judged_only=True) @ 10])


def test_ir_measures_readers_generators_are_read_once(tmp_path):
    """ir_measures.read_trec_run and read_trec_qrels yield tuples lazily."""
    import ir_measures

    from offeval_ir import compute_measures

    here = Path(__file__).parent / "trec_eval_test"
    run, qrels = here / "results.test", here / "qrels.test"
    got = compute_measures(
        ir_measures.read_trec_run(str(run)), ir_measures.read_trec_qrels(str(qrels)), ["AP"]
    ).per_user["AP"]
    theirs = {
        m.query_id: m.value
        for m in ir_measures.pytrec_eval.iter_calc(
            [ir_measures.AP],
            ir_measures.read_trec_qrels(str(qrels)),
            ir_measures.read_trec_run(str(run)),
        )
    }
    assert set(got.index) == set(theirs) == {"301", "302", "303"}
    for query, value in theirs.items():
        assert got[query] == pytest.approx(value, abs=1e-12)
