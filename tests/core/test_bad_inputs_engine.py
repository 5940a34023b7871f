"""Bad calls of the engine: evaluate's arguments, estimators that emit the wrong columns,
results asked for what they do not hold, trajectories split across chunks or Dask
partitions, numpy numbers in messages."""

from __future__ import annotations

import numpy as np
import pytest
from bad_input_logs import MAP, build, cases, fails, frame, long_frame
from reference_estimators import IS, SNIS

from offeval import (
    Accumulator,
    ColumnError,
    ColumnPolicy,
    Contribution,
    InteractionLog,
    LoggingPolicy,
    OffevalError,
    SplitUnitError,
    evaluate,
    stream_parquet,
)
from offeval.stats import Linearisation


# -- the engine ---------------------------------------------------------------------------
class EmitsWrongShape(IS):
    name = "wrong_shape"

    def contribute(self, view):
        return Contribution({"rw": np.ones(3), "rows": view.log.ones})


class ReadsAnUnknownColumn(IS):
    name = "unknown_column"

    def combine(self, stats):
        return Linearisation(stats.mean("nope"), np.array([0]), np.array([1.0]))


class ReturnsADict(IS):
    name = "returns_dict"

    def contribute(self, view):
        return {"rw": view.log.ones}


class PositionalTally(IS):
    name = "positional_tally"

    def contribute(self, view):
        out = super().contribute(view)
        return Contribution(out.columns, out.tally)


def evaluation():
    return evaluate(build(), [ColumnPolicy("pi"), LoggingPolicy()], [IS(), SNIS()])


ENGINE_CASES = {
    "no policies": (
        lambda: evaluate(build(), [], [IS()]),
        OffevalError,
        "at least one target policy",
    ),
    "no estimators": (
        lambda: evaluate(build(), [ColumnPolicy("pi")], []),
        OffevalError,
        "at least one estimator",
    ),
    "a policy, not a list": (
        lambda: evaluate(build(), ColumnPolicy("pi"), [IS()]),
        OffevalError,
        "at least one target policy",
    ),
    "an estimator name, not an estimator": (
        lambda: evaluate(build(), [ColumnPolicy("pi")], ["is"]),
        OffevalError,
        "'is' is not an estimator",
        "create_from_spec",
    ),
    "duplicate policy names": (
        lambda: evaluate(build(), [ColumnPolicy("pi"), ColumnPolicy("pi")], [IS()]),
        OffevalError,
        "unique",
    ),
    "duplicate estimators": (
        lambda: evaluate(build(), [ColumnPolicy("pi")], [IS(), IS()]),
        OffevalError,
        "must differ",
    ),
    "level as a percentage": (
        lambda: evaluate(build(), [ColumnPolicy("pi")], [IS()], level=95),
        OffevalError,
        "confidence level",
        "95",
    ),
    "level zero": (
        lambda: evaluate(build(), [ColumnPolicy("pi")], [IS()], level=0),
        OffevalError,
        "confidence level",
    ),
    "chunk size zero": (
        lambda: evaluate(build(), [ColumnPolicy("pi")], [IS()], chunk_rows=0),
        OffevalError,
        "chunk size",
    ),
    "chunk size fraction": (
        lambda: evaluate(build(), [ColumnPolicy("pi")], [IS()], chunk_rows=2.5),
        OffevalError,
        "chunk size",
    ),
    "a DataFrame instead of a log": (
        lambda: evaluate(frame(), [ColumnPolicy("pi")], [IS()]),
        OffevalError,
        "InteractionLog chunks, got str",
    ),
    "unknown policy": (
        lambda: evaluation().estimate("new", "is"),
        OffevalError,
        "unknown policy 'new'",
        "'pi'",
    ),
    "mistyped policy": (
        lambda: evaluation().estimate("loging", "is"),
        OffevalError,
        r"unknown policy 'loging' \(did you mean logging\?\)",
    ),
    "unknown estimator": (
        lambda: evaluation().estimate("pi", "snips"),
        OffevalError,
        "unknown estimator 'snips'",
    ),
    "no estimator named": (lambda: evaluation().estimate("pi"), OffevalError, "name an estimator"),
    "unknown baseline": (
        lambda: evaluation().relative("nobody", "is"),
        OffevalError,
        "unknown policy 'nobody'",
    ),
    "difference with an unknown policy": (
        lambda: evaluation().difference("pi", "nobody", "is"),
        OffevalError,
        "'nobody'",
    ),
    "unknown correction": (
        lambda: evaluation().grid("is", correction="magic"),
        OffevalError,
        r"correction must be one of \('bonferroni', .*got 'magic'",
    ),
    "contribute returns a dict": (
        lambda: evaluate(build(), [ColumnPolicy("pi")], [ReturnsADict()]),
        OffevalError,
        "not a Contribution",
    ),
    "tally passed by position": (
        lambda: evaluate(build(), [ColumnPolicy("pi")], [PositionalTally()]),
        OffevalError,
        "tally=",
    ),
    "column of the wrong shape": (
        lambda: evaluate(build(), [ColumnPolicy("pi")], [EmitsWrongShape()]),
        OffevalError,
        "'rw'",
        r"shape \(3,\)",
        "6 rows",
    ),
    "reads a column it never emitted": (
        lambda: evaluate(build(), [ColumnPolicy("pi")], [ReadsAnUnknownColumn()]),
        OffevalError,
        "'nope'",
        "never emitted",
    ),
}


@cases(ENGINE_CASES)
def test_bad_engine_calls(case):
    fails(*case)


def test_a_zero_baseline_is_refused():
    zero = build(frame(click=[0.0] * 6))
    ev = evaluate(zero, [ColumnPolicy("pi"), LoggingPolicy()], [IS()])
    fails(lambda: ev.relative("logging"), OffevalError, "baseline 'logging' has value 0.0")
    fails(lambda: ev.grid(baseline="logging"), OffevalError, "baseline 'logging'")


# -- units split across chunks -------------------------------------------------------------
def test_an_iterable_splitting_a_trajectory_names_it():
    data = long_frame(50)
    parts = [build(data.iloc[:51]), build(data.iloc[51:])]  # trajectory 25 in both
    error = fails(
        lambda: evaluate(parts, [ColumnPolicy("pi")], [IS()]),
        SplitUnitError,
        r"ids \[25\]",
        "sort the input by trajectory",
    )
    assert error.ids == [25]


def test_a_string_trajectory_split_across_chunks_is_named():
    data = long_frame(10).assign(session=lambda d: "u" + d["session"].astype(str))
    parts = [build(data.iloc[:5]), build(data.iloc[5:])]
    fails(lambda: evaluate(parts, [ColumnPolicy("pi")], [IS()]), SplitUnitError, r"\['u2'\]")


def test_merging_accumulators_that_share_a_trajectory_is_refused():
    data = long_frame(10)
    a = Accumulator([ColumnPolicy("pi")], [IS()]).add(build(data.iloc[:8]))
    b = Accumulator([ColumnPolicy("pi")], [IS()]).add(build(data.iloc[6:12]))
    fails(lambda: a.merge(b), SplitUnitError, r"ids \[3\]")


def test_an_unsorted_parquet_file_streamed_is_an_error_naming_a_trajectory(tmp_path):
    data = long_frame(60).sample(frac=1.0, random_state=0)
    path = tmp_path / "shuffled.parquet"
    data.to_parquet(path)
    stream = stream_parquet(path, MAP, batch_rows=7)
    fails(
        lambda: evaluate(stream, [ColumnPolicy("pi")], [IS()]),
        SplitUnitError,
        r"trajector(y|ies) appears? in more than one chunk \(ids \[\d+",
        "sort_by",
    )
    # the same rows sorted by trajectory stream to the numbers of the whole file
    data.sort_values("session").to_parquet(path)
    streamed = evaluate(stream_parquet(path, MAP, batch_rows=7), [ColumnPolicy("pi")], [IS()])
    whole = evaluate(InteractionLog.from_file(path, MAP), [ColumnPolicy("pi")], [IS()])
    a, b = streamed.estimate("pi"), whole.estimate("pi")
    assert a.n_units == b.n_units == 60
    assert a.value == pytest.approx(b.value, rel=1e-12) and a.se == pytest.approx(b.se, rel=1e-9)


def test_dask_partitions_splitting_a_trajectory_name_it():
    dd = pytest.importorskip("dask.dataframe")
    data = long_frame(20).reset_index(drop=True)
    ddf = dd.from_pandas(data, npartitions=3, sort=False)
    from offeval.engine.distributed import evaluate_dask

    fails(
        lambda: evaluate_dask(ddf, [ColumnPolicy("pi")], [IS()], mapping=MAP),
        SplitUnitError,
        r"ids \[\d+\]",
        "repartition",
    )
    fails(
        lambda: evaluate_dask(data, [ColumnPolicy("pi")], [IS()], mapping=MAP),
        OffevalError,
        "expected a dask DataFrame",
    )
    fails(
        lambda: evaluate_dask(ddf, [ColumnPolicy("pi")], [IS()], mapping=MAP, level=95),
        OffevalError,
        "confidence level",
    )


# -- found in review -----------------------------------------------------------------------
def test_an_id_arriving_with_another_dtype_is_still_the_same_trajectory():
    data = long_frame(10)
    first = build(data.iloc[:10])
    second = build(data.iloc[8:].assign(session=lambda d: d["session"].astype(object)))
    fails(lambda: evaluate([first, second], [ColumnPolicy("pi")], [IS()]), SplitUnitError, r"\[4\]")
    mixed = build(long_frame(2).assign(session=[1, 1, "1", "1"]))
    assert evaluate([mixed], [ColumnPolicy("pi")], [IS()]).n_units == 2  # 1 and "1" differ


def test_dask_names_string_trajectories_split_across_partitions():
    dd = pytest.importorskip("dask.dataframe")
    from offeval.engine.distributed import evaluate_dask

    data = long_frame(20).reset_index(drop=True)
    data["session"] = "s" + data["session"].astype(str)
    ddf = dd.from_pandas(data, npartitions=3, sort=False)
    fails(
        lambda: evaluate_dask(ddf, [ColumnPolicy("pi")], [IS()], mapping=MAP),
        SplitUnitError,
        r"ids \['s\d+'\]",
    )


def test_a_pair_with_an_undefined_standard_error_is_not_significant():
    one = build(frame().iloc[:3])
    grid = evaluate(one, [ColumnPolicy("pi"), LoggingPolicy()], [IS()]).grid()
    row = grid.table.iloc[0]
    assert np.isnan(row["se"]) and np.isnan(row["p_value"]) and not row["significant"]


@pytest.mark.parametrize(
    ("call", "shown"),
    [
        (lambda: evaluate(build(), [ColumnPolicy("pi")], [IS()], workers=np.int64(0)), "got 0"),
        (lambda: evaluate(build(), [ColumnPolicy("pi")], [IS()], chunk_rows=np.int64(0)), "got 0"),
        (lambda: evaluate(build(), [ColumnPolicy("pi")], [IS()], level=np.float64(95.0)), "95.0"),
    ],
)
def test_engine_messages_show_numpy_numbers_as_plain_values(call, shown):
    with pytest.raises(OffevalError) as exc:
        call()
    assert "np." not in str(exc.value) and shown in str(exc.value)


def test_numpy_numbers_and_names_are_taken_and_shown_as_plain_values():
    log = build()
    fails(lambda: list(log.chunks(np.int64(0))), OffevalError, r"got 0$")
    name = np.array(["pi"])[0]
    policy = ColumnPolicy("missing", name=name)
    fails(lambda: evaluate(log, [policy], [IS()]), ColumnError, r"policy 'pi' reads")


def test_summaries_nested_too_deeply_are_one_error_naming_the_file(tmp_path):
    """JSON nesting 100,000 arrays raised RecursionError from load_summaries."""
    from offeval.engine.summary import load_summaries

    path = tmp_path / "summaries.json"
    path.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(OffevalError, match=r"summaries.json: not a summaries file \(nested too"):
        load_summaries(tmp_path)
