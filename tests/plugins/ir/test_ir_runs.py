"""Measure strings per user, and runs through the engine: means, intervals, exclusions."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from offeval import ConfigurationError
from offeval_ir import PRESETS, compute_frames, compute_measures, evaluate_runs
from offeval_ir.prepared import prepare_qrels
from offeval_ir.runs import evaluate_results

sys.path.insert(0, str(Path(__file__).parent))
from test_ir_trec import pytrec_eval_values, trec_data  # noqa: E402


def test_measure_columns_are_named_as_typed_and_carry_their_own_switches():
    run, qrels = trec_data(1)
    conv = PRESETS["trec_eval"]()
    got = compute_measures(
        run, qrels, ["nDCG@10", "ndcg_cut_10", "P(rel=2)@5", "RBP(p=0.5)", "map"], conv
    ).per_user
    assert list(got.columns) == ["nDCG@10", "ndcg_cut_10", "P(rel=2)@5", "RBP(p=0.5)", "map"]
    plain = compute_frames(run, qrels, ["ndcg", "ap"], [10, None], conv).per_user
    pd.testing.assert_series_equal(got["nDCG@10"], plain["ndcg@10"], check_names=False)
    pd.testing.assert_series_equal(got["ndcg_cut_10"], plain["ndcg@10"], check_names=False)
    pd.testing.assert_series_equal(got["map"], plain["ap"], check_names=False)
    strict = compute_frames(run, qrels, ["precision"], [5], conv.with_(relevance_threshold=2))
    pd.testing.assert_series_equal(
        got["P(rel=2)@5"], strict.per_user["precision@5"], check_names=False
    )
    rbp = compute_frames(run, qrels, ["rbp"], [None], conv.with_(rbp_persistence=0.5))
    pd.testing.assert_series_equal(got["RBP(p=0.5)"], rbp.per_user["rbp"], check_names=False)
    with pytest.raises(ConfigurationError, match="distinct"):
        compute_measures(run, qrels, ["AP", "AP"])
    with pytest.raises(ConfigurationError, match="unknown measure"):
        compute_measures(run, qrels, ["nDGC@10"])


def test_engine_means_intervals_and_exclusions_are_the_per_user_ones():
    run, qrels = trec_data(2)
    other = run.assign(score=np.random.default_rng(0).permutation(run["score"].to_numpy()))
    other = other[other["user"] != "q10"]  # a user one run ranks and the other does not
    ev = evaluate_runs({"a": run, "b": other}, qrels, ["nDCG@10", "AP"])
    table = ev.table().set_index(["run", "measure"])
    for name in ("a", "b"):
        values = ev.results[name].per_user
        counts = ev.results[name].counts
        for measure in ("nDCG@10", "AP"):
            row = table.loc[(name, measure)]
            used = values[measure].dropna()
            assert row["mean"] == pytest.approx(used.mean(), rel=1e-12)
            assert row["users"] == counts.loc[measure, "users"] == len(used)
            n_all = ev.evaluation.n_units  # users of either run or the qrels
            spread = ((used - used.mean()) ** 2).sum()
            se = np.sqrt(spread / len(used) ** 2 * n_all / (n_all - 1))  # delta method, N units
            assert row["se"] == pytest.approx(se, rel=1e-12)
            assert row["ci_low"] < row["mean"] < row["ci_high"]
            excluded = row["excluded_no_labels"] + row["excluded_no_predictions"]
            assert row["users"] + excluded == n_all
    assert table.loc[("b", "AP"), "excluded_no_predictions"] == (
        table.loc[("a", "AP"), "excluded_no_predictions"] + 1
    )


MANY = [
    "nDCG@10",
    "ndcg_cut_5",
    "P(rel=2)@5",
    "RBP(p=0.5)",
    "map",
    "gm_map",
    "Rprec",
    "bpref",
    "recip_rank",
    "DCG@5",
    "iDCG@5",
    "pnDCG@10",
    "Judged@10",
    "success_3",
    "recall_10",
]


def other_runs(run, count, seed=0):
    """Runs over the same queries with shuffled scores (ties kept), some queries dropped."""
    rng = np.random.default_rng(seed)
    out = {}
    for j in range(count):
        shuffled = run.assign(score=rng.permutation(run["score"].to_numpy()))
        out[f"r{j}"] = shuffled[shuffled["user"] != f"q{j + 6}"]
    return out


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize(
    "overrides",
    [{}, {"ties": "item_asc", "no_predictions": "zero"}, {"ties": "input_order"}],
)
def test_prepared_qrels_give_the_per_run_values(seed, overrides):
    run, qrels = trec_data(seed)  # ties, text ids, queries of the run only and qrels only
    qrels.loc[qrels.index[::7], "relevance"] = -1  # in the pool, unjudged
    conv = PRESETS["trec_eval"](**overrides)
    prepared = prepare_qrels(qrels, conv)
    for frame in other_runs(run, 2, seed).values():
        expected = compute_measures(frame, qrels, MANY, conv)
        got = prepared.measures(frame, MANY, conv)
        pd.testing.assert_frame_equal(got.per_user, expected.per_user, rtol=1e-12)
        pd.testing.assert_frame_equal(got.reasons, expected.reasons)
        pd.testing.assert_frame_equal(got.counts, expected.counts)
        assert (
            got.aggregation
            == expected.aggregation
            == {
                "gm_map": "geometric",
                "pnDCG@10": "ratio",
            }
        )
        pd.testing.assert_frame_equal(got.parts["pnDCG@10"], expected.parts["pnDCG@10"])


def test_prepared_qrels_agree_with_pytrec_eval():
    run, qrels = trec_data(3)
    theirs = pytrec_eval_values(run, qrels)
    ours = prepare_qrels(qrels).measures(run, ["ndcg_cut_10", "map", "P_5", "recip_rank"])
    ours = ours.per_user
    assert sorted(ours.dropna(how="all").index) == sorted(theirs)
    for user, values in theirs.items():
        for name in ("ndcg_cut_10", "map", "P_5", "recip_rank"):
            assert ours.loc[user, name] == pytest.approx(values[name], abs=1e-12)


def test_evaluate_runs_on_prepared_qrels_is_the_per_run_path():
    run, qrels = trec_data(1)
    runs = other_runs(run, 3)
    measures = ["nDCG@10", "map", "pnDCG@10", "gm_map"]
    ev = evaluate_runs(runs, qrels, measures)  # several runs: prepared qrels
    per_run = {name: compute_measures(f, qrels, measures) for name, f in runs.items()}
    expected = evaluate_results(per_run)
    pd.testing.assert_frame_equal(ev.table(), expected.table(), rtol=1e-12)
    pd.testing.assert_frame_equal(ev.compare(), expected.compare(), rtol=1e-10)
    # larger runs than chunk_rows go the per-run path, with the same numbers
    blocked = evaluate_runs(runs, qrels, measures, chunk_rows=10)
    pd.testing.assert_frame_equal(blocked.table(), expected.table(), rtol=1e-12)


def pndcg_case():
    run, qrels = trec_data(4)
    runs = other_runs(run, 2, seed=4)
    runs["a"] = run
    ev = evaluate_runs(runs, qrels, ["pnDCG@10", "DCG@10", "iDCG@10"])
    return ev


def test_pndcg_is_mean_dcg_over_mean_idcg_with_its_delta_method_error():
    ev = pndcg_case()
    table = ev.table().set_index(["run", "measure"])
    n_all = ev.evaluation.n_units
    for name, result in ev.results.items():
        used = result.reasons["pnDCG@10"] == 0
        dcg = result.per_user.loc[used, "DCG@10"].to_numpy()
        idcg = result.per_user.loc[used, "iDCG@10"].to_numpy()
        ratio = dcg.mean() / idcg.mean()
        row = table.loc[(name, "pnDCG@10")]
        assert row["aggregate"] == "ratio"
        assert row["mean"] == pytest.approx(ratio, rel=1e-12)
        assert row["mean"] != pytest.approx(result.per_user.loc[used, "pnDCG@10"].mean())
        # the delta method over all N units (left-out users contribute zeros)
        num, den = np.zeros(n_all), np.zeros(n_all)
        num[: used.sum()], den[: used.sum()] = dcg, idcg
        influence = (num - ratio * den) / den.mean()
        se = np.sqrt((influence**2).sum() / (n_all * (n_all - 1)))
        assert row["se"] == pytest.approx(se, rel=1e-9)
    # and a bootstrap over users agrees with it
    result = ev.results["a"]
    used = (result.reasons["pnDCG@10"] == 0).to_numpy()
    dcg = result.per_user["DCG@10"].to_numpy()[used]
    idcg = result.per_user["iDCG@10"].to_numpy()[used]
    rng = np.random.default_rng(0)
    draws = rng.integers(0, used.sum(), (4000, used.sum()))
    boot = dcg[draws].sum(axis=1) / idcg[draws].sum(axis=1)
    assert table.loc[("a", "pnDCG@10"), "se"] == pytest.approx(boot.std(), rel=0.1)


def test_paired_comparisons_of_pndcg_are_on_common_queries():
    ev = pndcg_case()
    table = ev.compare(["pnDCG@10"], test="randomization", resamples=2000)
    every = np.logical_and.reduce(
        [
            r.reasons["pnDCG@10"].reindex(ev.results["a"].per_user.index) == 0
            for r in ev.results.values()
        ]
    )
    users = ev.results["a"].per_user.index[every]
    assert 0 < len(users) < ev.evaluation.n_units

    def sums(name):
        values = ev.results[name].per_user.loc[users]
        return values["DCG@10"].to_numpy(), values["iDCG@10"].to_numpy()

    for row in table.itertuples():
        (dcg_a, den_a), (dcg_b, den_b) = sums(row.a), sums(row.b)
        ratio_a, ratio_b = dcg_a.sum() / den_a.sum(), dcg_b.sum() / den_b.sum()
        assert row.users == len(users)
        assert row.mean_a == pytest.approx(ratio_a, rel=1e-12)
        assert row.mean_b == pytest.approx(ratio_b, rel=1e-12)
        assert row.difference == pytest.approx(ratio_a - ratio_b, rel=1e-9)
        # brute-force delta method: each user's influence on ratio_a - ratio_b
        influence = (dcg_a - ratio_a * den_a) / den_a.mean() - (
            dcg_b - ratio_b * den_b
        ) / den_b.mean()
        assert row.se == pytest.approx(influence.std(ddof=1) / np.sqrt(len(users)), rel=1e-9)
        assert 0 < row.p_randomization <= 1


def test_gm_map_is_a_geometric_mean_with_its_delta_method_error():
    run, qrels = trec_data(5)
    theirs = pytrec_eval_values(run, qrels)
    ev = evaluate_runs({"a": run, "b": other_runs(run, 1)["r0"]}, qrels, ["gm_map", "map"])
    row = ev.table().set_index(["run", "measure"]).loc[("a", "gm_map")]
    logs = np.log(np.maximum([v["map"] for v in theirs.values()], 1e-5))
    assert row["aggregate"] == "geometric"
    assert row["mean"] == pytest.approx(np.exp(logs.mean()), rel=1e-12)
    n_all, n = ev.evaluation.n_units, len(logs)
    spread = ((logs - logs.mean()) ** 2).sum()
    se_log = np.sqrt(spread / n**2 * n_all / (n_all - 1))
    assert row["se"] == pytest.approx(np.exp(logs.mean()) * se_log, rel=1e-9)
    compared = ev.compare(["gm_map"]).iloc[0]
    assert compared["difference"] == pytest.approx(
        compared["mean_a"] - compared["mean_b"], rel=1e-12
    )
