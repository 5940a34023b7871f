"""IR on Dask: evaluate_runs on Dask frames gives the in-memory numbers, whatever the
partitions and however the input spreads a user's rows over them."""

from __future__ import annotations

import sys
from pathlib import Path

import dask
import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest

from offeval import ConfigurationError, OffevalError
from offeval_ir import evaluate_runs

sys.path.insert(0, str(Path(__file__).parent))
from test_ir_trec import trec_data  # noqa: E402

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


def evaluate_runs_dask(*args, **kwargs):
    from offeval_ir.distributed import evaluate_runs_dask

    return evaluate_runs_dask(*args, **kwargs)


def small_collection():
    labels = pd.DataFrame(
        {"user": np.arange(20).repeat(2), "item": np.tile([1, 2], 20), "relevance": 1}
    )
    run = pd.DataFrame(
        {"user": np.arange(20).repeat(2), "item": np.tile([1, 3], 20), "score": [2.0, 1.0] * 20}
    )
    return run, labels


def test_text_run_ids_and_number_qrels_ids_are_the_in_memory_error_before_any_work():
    """Was: nDCG mean NaN over 0 users and pnDCG 0.0, no error."""
    run, labels = small_collection()
    run = run.assign(user=run["user"].astype(str))
    with pytest.raises(OffevalError, match="no query of the run is in the qrels") as memory:
        evaluate_runs({"r": run}, labels, ["nDCG@3", "pnDCG@3"])
    assert "make both sides text" in str(memory.value)
    with pytest.raises(OffevalError) as on_dask:
        evaluate_runs({"r": dd.from_pandas(run, npartitions=2)}, labels, ["nDCG@3", "pnDCG@3"])
    message = str(on_dask.value)
    assert message.startswith("run 'r': no query of the run is in the qrels: queries of the run")
    assert "the run's ids are text and the qrels' numbers: make both sides text" in message


def test_a_run_none_of_whose_queries_is_in_the_qrels_is_the_in_memory_error():
    run, labels = small_collection()
    run = run.assign(user=run["user"] + 100)  # same type, no common query
    with pytest.raises(OffevalError, match="are these the qrels") as memory:
        evaluate_runs({"r": run}, labels, ["P@2"])
    with dask.config.set(scheduler="sync"), pytest.raises(OffevalError) as on_dask:
        evaluate_runs_dask({"r": dd.from_pandas(run, npartitions=3)}, labels, ["P@2"], partitions=4)
    head = "run 'r': no query of the run is in the qrels: queries of the run ["
    assert str(memory.value).startswith(head) and str(on_dask.value).startswith(head)
    assert str(on_dask.value).endswith("; are these the qrels of this run's topics?")


@pytest.mark.parametrize("label_type", [float, np.int32, np.int64])
def test_whole_float_qrels_ids_meet_integer_run_ids_as_in_memory(label_type):
    """Was: SplitUnitError '6 trajectories appear in more than one chunk'."""
    run, labels = small_collection()
    labels = labels.astype({"user": label_type})
    expected = evaluate_runs({"r": run}, labels, ["P@2", "pnDCG@2"]).table()
    assert expected["users"].tolist() == [20, 20]
    with dask.config.set(scheduler="sync"):
        got = evaluate_runs_dask(
            {"r": dd.from_pandas(run, npartitions=2)}, labels, ["P@2", "pnDCG@2"], partitions=4
        ).table()
    pd.testing.assert_frame_equal(got, expected, rtol=1e-12)


def test_canonical_ids_hash_whole_floats_as_their_integers():
    from offeval.plugin import hash_ids
    from offeval_ir.distributed import canonical_ids

    ints = hash_ids(canonical_ids(np.array([0, 3, -7, 2**40])))
    for same in (
        np.array([0.0, 3.0, -7.0, 2.0**40]),
        np.array([0, 3, -7, 2**40], dtype=object).astype(float).astype(object),
        np.array([0, 3, -7, 2**40], dtype=np.int64).astype(object),
    ):
        assert (hash_ids(canonical_ids(same)) == ints).all()
    mixed = canonical_ids(np.array([1.5, 2.0, np.nan]))
    assert mixed.tolist()[0] == 1.5 and type(mixed[1]) is int and np.isnan(mixed[2])


def test_a_ratio_measure_over_no_user_is_nan_as_its_aggregate():
    """Was: pnDCG 0.0 (se 0) over no user, where the per-user aggregate is NaN."""
    from offeval_ir import compute_measures
    from offeval_ir.conventions import PRESETS

    labels = pd.DataFrame({"user": [0, 1], "item": [1, 1], "relevance": [0, 0]})
    run = pd.DataFrame({"user": [0, 1], "item": [1, 2], "score": [1.0, 1.0]})
    conv = PRESETS["recbole"]()  # users without a relevant item are not averaged
    aggregate = compute_measures(run, labels, ["pnDCG@3"], conv).value["pnDCG@3"]
    table = evaluate_runs({"a": run}, labels, ["pnDCG@3"], conv).table()
    assert np.isnan(aggregate) and table["users"].tolist() == [0]
    assert np.isnan(table["mean"].iloc[0]) and np.isnan(table["se"].iloc[0])
