"""IR on Dask: evaluate_runs on Dask frames gives the in-memory numbers, whatever the
partitions and however the input spreads a user's rows over them."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from offeval import ConfigurationError
from offeval_ir import evaluate_runs

sys.path.insert(0, str(Path(__file__).parent))
from test_ir_trec import trec_data  # noqa: E402

dask = pytest.importorskip("dask")
dd = pytest.importorskip("dask.dataframe")

MEASURES = ["nDCG@10", "map", "pnDCG@5", "P@5", "gm_map", "recip_rank"]


def scattered(frame: pd.DataFrame, partitions: int, seed: int):
    """A Dask frame whose rows are shuffled, so each user's rows span partitions."""
    rows = frame.sample(frac=1, random_state=seed).reset_index(drop=True)
    return dd.from_pandas(rows, npartitions=partitions, sort=False)


def runs_and_qrels(seed: int):
    run, qrels = trec_data(seed)
    rng = np.random.default_rng(seed)
    other = run.assign(score=rng.permutation(run["score"].to_numpy()))
    other = other[~other["user"].isin(["q7", "q8"])]  # queries one run lacks
    return {"a": run, "b": other, "c": run.assign(score=-run["score"])}, qrels


@pytest.mark.parametrize(("seed", "partitions"), [(0, 3), (1, 4)])
def test_dask_frames_give_the_in_memory_means_errors_and_comparisons(seed, partitions):
    runs, qrels = runs_and_qrels(seed)
    expected = evaluate_runs(runs, qrels, MEASURES)
    inputs = {name: scattered(f, partitions, j) for j, (name, f) in enumerate(runs.items())}
    assert inputs["a"].map_partitions(lambda p: p["user"].nunique()).compute().sum() > 35
    with dask.config.set(scheduler="sync"):
        got = evaluate_runs(inputs, scattered(qrels, 2, 9), MEASURES)
    key = ["run", "measure"]
    pd.testing.assert_frame_equal(
        got.table().sort_values(key).reset_index(drop=True),
        expected.table().sort_values(key).reset_index(drop=True),
        rtol=1e-10,
    )
    # the randomisation test draws signs per user, in the users' order, which differs:
    # its p-values agree within Monte Carlo error (10,000 resamples: se <= 0.005)
    random = [c for c in expected.compare().columns if "randomization" in c]
    got_table, expected_table = got.compare(), expected.compare()
    pd.testing.assert_frame_equal(
        got_table.drop(columns=random), expected_table.drop(columns=random), rtol=1e-9
    )
    assert np.allclose(got_table["p_randomization"], expected_table["p_randomization"], atol=0.03)
    for name in runs:  # the per-user values, users in another order
        pd.testing.assert_frame_equal(
            got.results[name].per_user.sort_index(),
            expected.results[name].per_user.sort_index(),
            rtol=1e-12,
            check_dtype=False,
        )
    assert got.not_averaged == expected.not_averaged


def test_dask_runs_with_in_memory_qrels_and_the_threaded_scheduler():
    runs, qrels = runs_and_qrels(2)
    expected = evaluate_runs(runs, qrels, ["nDCG@10", "map"]).table()
    inputs = {name: scattered(f, 2, 1) for name, f in runs.items()}
    with dask.config.set(scheduler="threads"):
        got = evaluate_runs(inputs, qrels, ["nDCG@10", "map"]).table()
    pd.testing.assert_frame_equal(got, expected, rtol=1e-10)


def test_dask_inputs_are_checked_before_any_work():
    runs, qrels = runs_and_qrels(0)
    inputs = {"a": scattered(runs["a"], 2, 0)}
    with pytest.raises(ConfigurationError, match="run names must be text"):
        evaluate_runs({1: inputs["a"]}, qrels, ["map"])
    with pytest.raises(ConfigurationError, match=r"no user column 'query'"):
        evaluate_runs(
            inputs, qrels.rename(columns={"user": "query"}), ["map"], columns={"user": "query"}
        )
    with pytest.raises(ConfigurationError, match="unknown measure"):
        evaluate_runs(inputs, qrels, ["nDGC@10"])
