"""Measure strings per user, and runs through the engine: means, intervals, exclusions."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from offeval import ConfigurationError
from offeval_ir import PRESETS, compute_frames, compute_measures, evaluate_runs

sys.path.insert(0, str(Path(__file__).parent))
from test_ir_trec import trec_data  # noqa: E402


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
