"""Many runs judged together on prepared qrels: each run's values, and each run's errors."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from offeval import OffevalError
from offeval_ir import PRESETS, compute_measures, evaluate_runs
from offeval_ir.prepared import prepare_qrels

sys.path.insert(0, str(Path(__file__).parent))
from test_ir_runs import MANY, other_runs  # noqa: E402
from test_ir_trec import pytrec_eval_values, trec_data  # noqa: E402


def awkward_runs(seed: int) -> dict[str, pd.DataFrame]:
    """Runs of one TREC topic set: shuffled scores (ties), a query missing from each, one
    run's rows out of user order, one with queries the qrels lack, one with a query only."""
    run, _ = trec_data(seed)
    runs = other_runs(run, 4, seed)
    runs["shuffled"] = run.sample(frac=1.0, random_state=seed)  # users' rows interleaved
    runs["extra"] = pd.concat([run, run.head(5).assign(user="nowhere")], ignore_index=True)
    runs["one"] = run[run["user"] == "q7"]
    return runs


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize(
    "overrides",
    [{}, {"ties": "item_asc", "no_predictions": "zero"}, {"ties": "input_order"}],
)
def test_runs_judged_together_give_each_runs_own_values(seed, overrides):
    _, qrels = trec_data(seed)
    qrels.loc[qrels.index[::7], "relevance"] = -1  # in the pool, unjudged
    conv = PRESETS["trec_eval"](**overrides)
    runs = awkward_runs(seed)
    # blocks of about two runs each, so that runs meet in blocks and blocks follow blocks
    together = prepare_qrels(qrels, conv).runs_measures(runs, MANY, conv, chunk_rows=500)
    assert together is not None and list(together) == list(runs)
    evaluated = evaluate_runs(runs, qrels, MANY, conv, chunk_rows=500).results
    for name, frame in runs.items():
        alone = compute_measures(frame, qrels, MANY, conv)  # one run at a time
        for got in (together[name], evaluated[name]):
            pd.testing.assert_frame_equal(got.per_user, alone.per_user, rtol=1e-12)
            pd.testing.assert_frame_equal(got.reasons, alone.reasons)
            pd.testing.assert_frame_equal(got.counts, alone.counts)
            assert got.aggregation == alone.aggregation
            pd.testing.assert_frame_equal(got.parts["pnDCG@10"], alone.parts["pnDCG@10"])


def test_runs_judged_together_agree_with_pytrec_eval_query_for_query():
    run, qrels = trec_data(5)
    runs = other_runs(run, 6, seed=5)
    measures = ["ndcg_cut_10", "map", "P_5", "recip_rank"]
    results = evaluate_runs(runs, qrels, measures, chunk_rows=800).results
    for name, frame in runs.items():
        theirs = pytrec_eval_values(frame, qrels)
        ours = results[name].per_user
        assert sorted(ours.dropna(how="all").index) == sorted(theirs)
        for user, values in theirs.items():
            for measure in measures:
                assert ours.loc[user, measure] == pytest.approx(values[measure], abs=1e-12)


def _error_alone(frame: pd.DataFrame, qrels: pd.DataFrame) -> str:
    with pytest.raises(OffevalError) as alone:
        compute_measures(frame, qrels, ["nDCG@10"])
    return str(alone.value)


def test_a_refused_run_among_many_is_named_by_its_own_rows():
    run, qrels = trec_data(6)
    runs = other_runs(run, 4, seed=6)
    twice = runs["r2"].copy()
    at = int(np.flatnonzero(twice["user"].to_numpy()[1:] == twice["user"].to_numpy()[:-1])[0])
    twice.loc[twice.index[at + 1], "item"] = twice["item"].iloc[at]  # a doc listed twice
    unscored = runs["r3"].copy()
    unscored.loc[unscored.index[[4, 9]], "score"] = np.nan
    for bad, name in ((twice, "r2"), (unscored, "r3")):
        with pytest.raises(OffevalError) as together:
            evaluate_runs({**runs, name: bad}, qrels, ["nDCG@10"])
        assert str(together.value) == _error_alone(bad, qrels)
    elsewhere = runs["r1"].assign(user="q999")  # no query of this run is in the qrels
    with pytest.raises(OffevalError, match="run 'r1': no query of the run is in the qrels"):
        evaluate_runs({**runs, "r1": elsewhere}, qrels, ["nDCG@10"])


def test_runs_that_do_not_stack_are_judged_one_at_a_time():
    run, qrels = trec_data(7)
    runs = other_runs(run, 3, seed=7)
    runs["ranked"] = run.drop(columns="score")  # ordered by rank, the others by score
    runs["numbered"] = run.assign(score=run["score"].astype("float32"))  # another dtype
    conv = PRESETS["trec_eval"]()
    assert prepare_qrels(qrels, conv).runs_measures(runs, ["nDCG@10", "map"], conv) is None
    results = evaluate_runs(runs, qrels, ["nDCG@10", "map"], conv).results
    for name, frame in runs.items():
        alone = compute_measures(frame, qrels, ["nDCG@10", "map"], conv)
        pd.testing.assert_frame_equal(results[name].per_user, alone.per_user, rtol=1e-12)


@pytest.mark.parametrize("ties", ["trec_eval", "item_asc"])
def test_infinite_scores_rank_and_tie_as_the_largest_and_smallest_finite_ones(ties):
    run, qrels = trec_data(8)
    conv = PRESETS["trec_eval"]() if ties == "trec_eval" else PRESETS["trec_eval"](ties=ties)
    score = run["score"].to_numpy()
    finite = run.assign(score=np.select([score == 2, score == 0], [10.0, -10.0], score))
    infinite = run.assign(score=np.select([score == 2, score == 0], [np.inf, -np.inf], score))
    ranked = infinite.sort_values(["user", "score"], ascending=[True, False], kind="stable")
    runs = {"ranked": ranked, "as given": infinite}  # rows in rank order, and to be sorted
    expected = compute_measures(finite, qrels, MANY, conv).per_user  # users in run order
    for got in prepare_qrels(qrels, conv).runs_measures(runs, MANY, conv).values():
        pd.testing.assert_frame_equal(got.per_user.loc[expected.index], expected, rtol=1e-12)
