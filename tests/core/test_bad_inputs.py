"""A battery of bad inputs: each is an offeval error naming the column or parameter and the
user's own row labels (string, MultiIndex and datetime indexes included), never a crash from
pandas, numpy, pyarrow or the OS, and never a silent wrong number."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from offeval import (
    Accumulator,
    ColumnError,
    ColumnPolicy,
    ConfigurationError,
    Contribution,
    InteractionLog,
    LoggingPolicy,
    OffevalError,
    RegistryError,
    RerankPolicy,
    RowError,
    SplitUnitError,
    evaluate,
    get_registry,
    read_table,
    stream_parquet,
)
from offeval.engine.bootstrap import bootstrap
from offeval.stats import Linearisation
from offeval_dcg import DCG, NDCG, PNDCG
from offeval_ir import Conventions, Judgements, compute
from offeval_ncis import CIS, IS, NCIS, BetaIPS, PiecewiseNCIS, PointwiseNCIS

LABELS = ["s1", "s2", "s3", "s4", "s5", "s6"]


def frame(index=None, **overrides) -> pd.DataFrame:
    """Two trajectories of three rows, labelled by strings unless told otherwise."""
    data = {
        "session": [10, 10, 10, 20, 20, 20],
        "item": ["a", "b", "c", "a", "c", "d"],
        "rank": [1, 2, 3, 3, 2, 1],
        "click": [1.0, 0.0, 0.0, 0.0, 1.0, 0.0],
        "mu": [0.5, 0.25, 0.25, 0.2, 0.3, 0.5],
        "pi": [0.6, 0.2, 0.2, 0.1, 0.5, 0.4],
        "score": [3.0, 2.0, 1.0, 0.5, 1.5, 2.5],
    }
    data.update(overrides)
    return pd.DataFrame(data, index=LABELS if index is None else index)


MAP = {"trajectory": "session", "position": "rank", "reward": "click", "propensity": "mu"}


def build(data=None, mapping=MAP, **kw):
    return InteractionLog.from_frame(frame() if data is None else data, mapping, **kw)


def fails(call, error, *patterns):
    """``call()`` raises ``error`` whose message contains every pattern (regexes)."""
    with pytest.raises(error) as info:
        call()
    message = str(info.value)
    for pattern in patterns:
        assert re.search(pattern, message), f"{pattern!r} not in {message!r}"
    assert issubclass(error, OffevalError) and isinstance(info.value, ValueError)
    return info.value


# -- logs -------------------------------------------------------------------------------
LOG_CASES = {
    "missing reward role": (
        lambda: build(mapping={"trajectory": "session"}),
        ColumnError,
        "'reward'",
        "required",
    ),
    "missing item column": (lambda: build(frame().drop(columns="item")), ColumnError, "'item'"),
    "mapped column absent": (
        lambda: build(mapping={**MAP, "reward": "clicks"}),
        ColumnError,
        "'clicks'",
        "role 'reward'",
    ),
    "unknown role": (
        lambda: build(mapping={**MAP, "rewards": "click"}),
        OffevalError,
        "unknown column roles \\['rewards'\\]",
    ),
    "two roles on one column": (
        lambda: build(mapping={**MAP, "context": "session"}),
        ColumnError,
        "'session'",
        "two roles",
    ),
    "role beside a column of its name": (
        lambda: build(frame(reward=[1.0] * 6)),
        ColumnError,
        "'reward'",
        "'click'",
        "rename or drop",
    ),
    "NaN reward": (
        lambda: build(frame(click=[1.0, np.nan, 0, 0, np.nan, 0])),
        ColumnError,
        r"'click' \(role reward\)",
        r"rows \['s2', 's5'\]",
    ),
    "inf reward": (
        lambda: build(frame(click=[1.0, 0, 0, np.inf, 0, 0])),
        ColumnError,
        r"rows \['s4'\]",
    ),
    "text reward": (
        lambda: build(frame(click=[1, 0, "yes", 0, 1, 0])),
        ColumnError,
        r"'click' \(role reward\)",
        "numeric",
        r"rows \['s3'\]",
    ),
    "propensity zero": (
        lambda: build(frame(mu=[0.5, 0.0, 0.2, 0.2, 0.3, 0.5])),
        ColumnError,
        r"'mu' \(role propensity\)",
        r"\(0, 1\]",
        r"rows \['s2'\]",
    ),
    "propensity above one": (
        lambda: build(frame(mu=[0.5, 0.2, 0.2, 0.2, 1.3, 0.5])),
        ColumnError,
        r"rows \['s5'\]",
    ),
    "propensity NaN": (
        lambda: build(frame(mu=[np.nan, 0.2, 0.2, 0.2, 0.3, 0.5])),
        ColumnError,
        r"rows \['s1'\]",
    ),
    "propensity text": (
        lambda: build(frame(mu=["0.5", "x", 0.2, 0.2, 0.3, 0.5])),
        ColumnError,
        r"'mu' \(role propensity\)",
        r"rows \['s2'\]",
    ),
    "exposure zero": (
        lambda: build(frame(exposure=[1, 0.5, 0, 1, 1, 1])),
        ColumnError,
        "'exposure'",
        r"rows \['s3'\]",
    ),
    "exposure negative": (
        lambda: build(frame(exposure=[1, 0.5, 1, -1, 1, 1])),
        ColumnError,
        r"rows \['s4'\]",
    ),
    "logging score NaN": (
        lambda: build(frame(logging_score=[1, 2, np.nan, 1, 2, 3])),
        ColumnError,
        "'logging_score'",
        r"rows \['s3'\]",
    ),
    "shuffled maybe": (
        lambda: build(frame(shuffled=["yes", "no", "maybe", "no", "no", "no"])),
        ColumnError,
        "'shuffled'",
        "true or false",
        r"rows \['s3'\]",
    ),
    "shuffled two": (
        lambda: build(frame(shuffled=[0, 1, 2, 0, 0, 0])),
        ColumnError,
        r"rows \['s3'\]",
    ),
    "shuffled missing": (
        lambda: build(frame(shuffled=[True, None, True, True, True, True])),
        ColumnError,
        r"rows \['s2'\]",
    ),
    "position zero": (
        lambda: build(frame(rank=[0, 2, 3, 3, 2, 1])),
        ColumnError,
        r"'rank' \(role position\)",
        "whole number",
        r"rows \['s1'\]",
    ),
    "position fraction": (
        lambda: build(frame(rank=[1, 2.5, 3, 3, 2, 1])),
        ColumnError,
        r"rows \['s2'\]",
    ),
    "position negative": (
        lambda: build(frame(rank=[1, 2, 3, -3, 2, 1])),
        ColumnError,
        r"rows \['s4'\]",
    ),
    "position beyond the integer range": (
        lambda: build(frame(rank=[1, 2, 1e30, 3, 2, 1])),
        ColumnError,
        "2147483647",
        r"rows \['s3'\]",
    ),
    "position NaN": (
        lambda: build(frame(rank=[1, 2, 3, 3, np.nan, 1])),
        ColumnError,
        r"rows \['s5'\]",
    ),
    "position text": (
        lambda: build(frame(rank=[1, 2, 3, "third", 2, 1])),
        ColumnError,
        r"'rank' \(role position\)",
        r"rows \['s4'\]",
    ),
    "duplicate position": (
        lambda: build(frame(rank=[1, 2, 2, 3, 2, 1])),
        ColumnError,
        "duplicate position",
        r"rows \['s(2|3)'\]",
    ),
    "missing trajectory id": (
        lambda: build(frame(session=[10, 10, None, 20, 20, 20])),
        ColumnError,
        r"'session' \(role trajectory\)",
        r"rows \['s3'\]",
    ),
    "missing item": (
        lambda: build(frame(item=["a", None, "c", "a", "c", "d"])),
        ColumnError,
        "'item'",
        r"rows \['s2'\]",
    ),
    "missing context": (
        lambda: build(frame(user=["u", "u", "u", None, None, None]), {**MAP, "context": "user"}),
        ColumnError,
        r"'user' \(role context\)",
        r"rows \['s4', 's5', 's6'\]",
    ),
    "no rows": (lambda: build(frame().iloc[:0]), OffevalError, "no rows"),
    "not a frame": (lambda: InteractionLog.from_frame({"a": [1]}), OffevalError, "DataFrame"),
    "mapping not a dict": (lambda: build(mapping=["session"]), OffevalError, "mapping"),
    "MultiIndex labels": (
        lambda: build(
            frame(
                pd.MultiIndex.from_tuples([(d, k) for d in "xy" for k in (1, 2, 3)]),
                click=[0, 0, 0, 0, np.nan, 0],
            )
        ),
        ColumnError,
        r"rows \[\('y', 2\)\]",
    ),
    "datetime labels": (
        lambda: build(
            frame(
                pd.date_range("2026-01-01", periods=6, freq="D"),
                mu=[0.5, 0.2, 0.2, 0.2, 0.3, 7.0],
            )
        ),
        ColumnError,
        r"rows \['2026-01-06 00:00:00'\]",
    ),
    "integer labels after sorting": (
        lambda: build(frame(index=[50, 40, 30, 20, 10, 0], click=[0, 0, np.nan, 0, 0, 0])),
        ColumnError,
        r"rows \[30\]",
    ),
}


def candidates(**overrides) -> pd.DataFrame:
    data = {
        "trajectory": [10, 10, 10, 20, 20, 20],
        "position": [1, 2, 3, 3, 2, 1],
        "item": ["a", "b", "c", "a", "c", "d"],
        "propensity": [0.5, 0.25, 0.25, 0.2, 0.3, 0.5],
    }
    data.update(overrides)
    return pd.DataFrame(data, index=[f"c{i}" for i in range(1, 7)])


CANDIDATE_CASES = {
    "candidate column missing": (
        lambda: build(candidates=candidates().drop(columns="propensity")),
        ColumnError,
        "'propensity'",
        "candidate table",
    ),
    "candidate propensity above one": (
        lambda: build(candidates=candidates(propensity=[0.5, 2, 0.2, 0.2, 0.3, 0.5])),
        ColumnError,
        r"candidate rows \['c2'\]",
    ),
    "candidate listed twice": (
        lambda: build(
            candidates=candidates(item=["a", "b", "c", "a", "c", "c"], position=[1, 2, 3, 3, 2, 2])
        ),
        ColumnError,
        "twice",
        r"candidate rows \['c6'\]",
    ),
    "candidate for a slot not in the log": (
        lambda: build(candidates=candidates(position=[1, 2, 3, 3, 2, 9])),
        ColumnError,
        r"candidate rows \['c6'\]",
    ),
    "logged item absent from its candidates": (
        lambda: build(candidates=candidates(item=["a", "b", "z", "a", "c", "d"])),
        ColumnError,
        "absent from its slot",
        r"rows \['s3'\]",
    ),
    "candidates not a frame": (
        lambda: build(candidates=[1, 2]),
        OffevalError,
        "candidates must be a pandas DataFrame",
    ),
}


@pytest.mark.parametrize(
    "case", [*LOG_CASES.values(), *CANDIDATE_CASES.values()], ids=[*LOG_CASES, *CANDIDATE_CASES]
)
def test_bad_logs(case):
    call, error, *patterns = case
    fails(call, error, *patterns)


def test_booleans_mean_booleans():
    log = build(frame(shuffled=["yes", "No", "TRUE", "false", 0, 1]))
    by_label = dict(zip(log.source_rows, log.frame["shuffled"], strict=True))
    assert by_label == {"s1": True, "s2": False, "s3": True, "s4": False, "s5": False, "s6": True}


# -- files ------------------------------------------------------------------------------
def write(path, content: bytes):
    path.write_bytes(content)
    return path


FILE_CASES = {
    "missing": (lambda d: d / "nope.csv", "nope.csv: no such file"),
    "directory": (lambda d: d, "is a directory"),
    "wrong extension": (lambda d: write(d / "log.json", b"{}"), "unsupported file type '.json'"),
    "empty": (lambda d: write(d / "empty.csv", b""), "empty.csv: the file is empty"),
    "header only": (lambda d: write(d / "head.csv", b"a,b\n"), "head.csv: the file has no rows"),
    "ragged": (
        lambda d: write(d / "ragged.csv", b"a,b\n1,2\n3,4,5\n"),
        "ragged.csv: not a well-formed delimited file",
    ),
    "binary csv": (
        lambda d: write(d / "bin.csv", bytes(range(256)) * 4),
        "bin.csv: not a (text file|well-formed)",
    ),
    "garbage parquet": (
        lambda d: write(d / "bad.parquet", b"not parquet at all"),
        "bad.parquet: cannot read it as parquet",
    ),
    "empty parquet": (lambda d: write(d / "zero.parquet", b""), "zero.parquet: cannot read it"),
}


@pytest.mark.parametrize("case", FILE_CASES.values(), ids=list(FILE_CASES))
def test_bad_files(tmp_path, case):
    make, pattern = case
    path = make(tmp_path)
    fails(lambda: read_table(path), OffevalError, pattern)
    fails(lambda: InteractionLog.from_file(path, MAP), OffevalError, pattern)


def test_bad_streams(tmp_path):
    csv = write(tmp_path / "log.csv", b"a\n1\n")
    fails(lambda: stream_parquet(csv), OffevalError, "only Parquet files can be streamed")
    path = tmp_path / "log.parquet"
    frame().to_parquet(path)
    fails(lambda: stream_parquet(path), ColumnError, "'trajectory'", "log.parquet")
    fails(lambda: stream_parquet(path, MAP, batch_rows=0), OffevalError, "batch_rows")
    garbage = write(tmp_path / "x.parquet", b"PAR1garbage")
    fails(lambda: stream_parquet(garbage, MAP), OffevalError, "x.parquet: cannot read")


# -- policies, found in a later chunk -----------------------------------------------------
def long_frame(n=400, index=None) -> pd.DataFrame:
    """n trajectories of two rows, with labels r0, r1, ... unless told otherwise."""
    rng = np.random.default_rng(0)
    data = pd.DataFrame(
        {
            "session": np.repeat(np.arange(n), 2),
            "item": np.tile([1, 2], n),
            "rank": np.tile([1, 2], n),
            "click": rng.integers(0, 2, 2 * n).astype(float),
            "mu": 0.5,
            "pi": 0.5,
            "score": rng.random(2 * n),
        }
    )
    data.index = [f"r{i}" for i in range(2 * n)] if index is None else index
    return data


def late(column: str, value) -> InteractionLog:
    data = long_frame()
    data[column] = data[column].astype(object)
    data.loc["r701", column] = value
    return build(data)


class Custom:
    """A user's policy whose answers can be made wrong."""

    def __init__(self, answer):
        self.name = "custom"
        self.answer = answer

    def probabilities(self, rows):
        return self.answer(rows)


POLICY_CASES = {
    "probability above one in a later chunk": (
        lambda: evaluate(late("pi", 1.5), [ColumnPolicy("pi")], [IS()], chunk_rows=100),
        ColumnError,
        "'pi'",
        r"\[0, 1\]",
        r"rows \['r701'\]",
    ),
    "NaN probability in a later chunk": (
        lambda: evaluate(late("pi", np.nan), [ColumnPolicy("pi")], [IS()], chunk_rows=100),
        ColumnError,
        r"rows \['r701'\]",
    ),
    "text probability": (
        lambda: evaluate(late("pi", "high"), [ColumnPolicy("pi")], [IS()], chunk_rows=100),
        ColumnError,
        r"rows \['r701'\]",
    ),
    "policy column absent": (
        lambda: evaluate(build(), [ColumnPolicy("nope")], [IS()]),
        ColumnError,
        "'nope'",
        "absent",
    ),
    "NaN score in a later chunk": (
        lambda: evaluate(late("score", np.nan), [RerankPolicy("score")], [DCG()], chunk_rows=100),
        ColumnError,
        "'score'",
        r"rows \['r701'\]",
    ),
    "score column absent": (
        lambda: evaluate(build(), [RerankPolicy("nope")], [DCG()]),
        ColumnError,
        "'nope'",
    ),
    "zero temperature": (lambda: RerankPolicy("score", temperature=0), ConfigurationError, "temp"),
    "wrong shape from a policy": (
        lambda: evaluate(build(), [Custom(lambda rows: np.ones(2))], [IS()]),
        OffevalError,
        "policy 'custom'",
        r"shape \(2,\) for 6 rows",
    ),
    "NaN from a policy": (
        lambda: evaluate(
            build(), [Custom(lambda rows: np.where(rows["item"] == "d", np.nan, 0.5))], [IS()]
        ),
        RowError,
        "policy 'custom'",
        r"rows \['s6'\]",
    ),
    "probabilities outside [0, 1] from a policy": (
        lambda: evaluate(build(), [Custom(lambda rows: rows["position"] * 0.4)], [IS()]),
        RowError,
        "policy 'custom'",
        r"\[0, 1\]",
        r"rows \['s3', 's4'\]",
    ),
    "text from a policy": (
        lambda: evaluate(build(), [Custom(lambda rows: ["x"] * len(rows))], [IS()]),
        OffevalError,
        "did not return numbers",
    ),
    "not a policy": (lambda: evaluate(build(), [object()], [IS()]), OffevalError, "not a policy"),
    "policy without probabilities": (
        lambda: evaluate(build(), [type("P", (), {"name": "p"})()], [IS()]),
        ConfigurationError,
        "policy 'p'",
        r"no probabilities\(\)",
    ),
    "ranking estimator with a probability policy": (
        lambda: evaluate(build(), [ColumnPolicy("pi")], [DCG()]),
        ConfigurationError,
        r"no exposure\(\) method",
    ),
    "candidate probabilities outside [0, 1]": (
        lambda: evaluate(
            build(candidates=candidates(pi=[0.5, 0.2, 0.2, 0.2, 3.0, 0.4])),
            [ColumnPolicy("pi")],
            [PointwiseNCIS()],
        ),
        ColumnError,
        r"candidate rows \['c5'\]",
    ),
}


@pytest.mark.parametrize("case", POLICY_CASES.values(), ids=list(POLICY_CASES))
def test_bad_policies(case):
    call, error, *patterns = case
    fails(call, error, *patterns)


# -- estimators: parameters are checked at construction -----------------------------------
ESTIMATOR_CASES = {
    "cap zero": (lambda: NCIS(cap=0), "cap"),
    "cap negative": (lambda: CIS(cap=-1), "cap"),
    "cap text": (lambda: NCIS(cap="100"), "cap"),
    "cap boolean": (lambda: NCIS(cap=True), "cap"),
    "cap NaN": (lambda: CIS(cap=float("nan")), "cap"),
    "no groups": (lambda: PiecewiseNCIS(max_groups=0), "max_groups"),
    "empty group column": (lambda: PiecewiseNCIS(by=""), "by"),
    "beta text": (lambda: BetaIPS(beta="x"), "beta"),
    "beta infinite": (lambda: BetaIPS(beta=float("inf")), "beta"),
    "DCG cap below one": (lambda: DCG(cap=0.5), "cap m"),
    "DCG labels": (lambda: DCG(labels="clicks"), "labels"),
    "DCG per": (lambda: DCG(per="session"), "per"),
    "DCG support": (lambda: DCG(support="ignore"), "support"),
    "DCG cutoff zero": (lambda: DCG(cutoff=0), "cutoff"),
    "DCG cutoff fraction": (lambda: DCG(cutoff=2.5), "cutoff"),
    "DCG unknown model": (lambda: DCG(examination="nosuch"), "no examination named 'nosuch'"),
    "DCG logging": (lambda: DCG(logging="guess"), "logging"),
    "nDCG zero ideal": (lambda: NDCG(zero_ideal="nan"), "zero_ideal"),
    "nDCG ideal cutoff": (lambda: NDCG(ideal_cutoff=0), "ideal_cutoff"),
    "pnDCG ideal cutoff": (lambda: PNDCG(ideal_cutoff="all"), "ideal_cutoff"),
    "unknown parameter": (
        lambda: get_registry().create("estimator", "ncis", capp=3),
        "no parameter capp",
    ),
    "parameter given twice": (
        lambda: get_registry().create_from_spec("estimator", "ncis:cap=1,cap=2"),
        "'cap' is given twice",
    ),
    "unbalanced spec": (
        lambda: get_registry().create_from_spec("estimator", "dcg:examination=exponential("),
        "unbalanced",
    ),
    "unknown estimator": (
        lambda: get_registry().create_from_spec("estimator", "snipz"),
        "no estimator named 'snipz'",
    ),
    "bad value through a spec": (
        lambda: get_registry().create_from_spec("estimator", "ncis:cap=-5"),
        "cap must be a positive number",
    ),
    "empty spec": (lambda: get_registry().create_from_spec("estimator", " "), "spec"),
}


@pytest.mark.parametrize("case", ESTIMATOR_CASES.values(), ids=list(ESTIMATOR_CASES))
def test_bad_estimator_parameters(case):
    call, pattern = case
    fails(call, OffevalError, pattern)


def test_estimator_needs_named_when_missing():
    log = build(frame().drop(columns="mu"), {**MAP, "propensity": "pi"})
    fails(
        lambda: evaluate(log, [ColumnPolicy("pi")], [PiecewiseNCIS()]),
        ColumnError,
        "'group'",
    )
    fails(
        lambda: evaluate(build(), [ColumnPolicy("pi")], [PointwiseNCIS()]),
        ConfigurationError,
        "candidate sets",
    )
    no_mu = build(frame(), {k: v for k, v in MAP.items() if k != "propensity"})
    fails(lambda: evaluate(no_mu, [ColumnPolicy("pi")], [IS()]), ColumnError, "'propensity'")
    many = long_frame().assign(group=np.arange(800))
    fails(
        lambda: evaluate(build(many), [ColumnPolicy("pi")], [PiecewiseNCIS(max_groups=8)]),
        ConfigurationError,
        "'group'",
        "max_groups=8",
    )


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
    return evaluate(build(), [ColumnPolicy("pi"), LoggingPolicy()], [IS(), NCIS()])


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
    "bootstrap with one replicate": (
        lambda: bootstrap(build(), [ColumnPolicy("pi")], [IS()], replicates=1),
        OffevalError,
        "replicates",
    ),
    "bootstrap with an unknown baseline": (
        lambda: bootstrap(build(), [ColumnPolicy("pi")], [IS()], baseline="x"),
        OffevalError,
        "baseline 'x'",
    ),
}


@pytest.mark.parametrize("case", ENGINE_CASES.values(), ids=list(ENGINE_CASES))
def test_bad_engine_calls(case):
    call, error, *patterns = case
    fails(call, error, *patterns)


def test_a_zero_baseline_is_refused():
    zero = build(frame(click=[0.0] * 6))
    ev = evaluate(zero, [ColumnPolicy("pi"), LoggingPolicy()], [IS()])
    fails(lambda: ev.relative("logging"), OffevalError, "baseline 'logging' has value 0.0")
    fails(lambda: ev.grid(baseline="logging"), OffevalError, "baseline 'logging'")


def test_an_ambiguous_registered_name_is_refused():
    ev = evaluate(build(), [ColumnPolicy("pi")], [NCIS(cap=10), NCIS(cap=1000)])
    fails(lambda: ev.estimate("pi", "ncis"), OffevalError, "ambiguous", "ncis\\(cap=10\\)")
    assert ev.estimate("pi", "ncis:cap=10").estimator == "ncis(cap=10)"
    single = evaluate(build(), [ColumnPolicy("pi")], [BetaIPS()])
    assert single.estimate("pi", "beta_ips").estimator == "beta_ips"


def test_labels_omit_defaults_and_the_full_spelling_still_finds_them():
    ev = evaluate(build(), [ColumnPolicy("pi")], [NCIS(), NCIS(cap=10)])
    assert ev.estimators == ["ncis", "ncis(cap=10)"]
    assert NCIS().full_label == "ncis(cap=100)"
    assert ev.estimate("pi", "ncis(cap=100)").estimator == "ncis"
    assert ev.estimate("pi", "ncis:cap=100.0").estimator == "ncis"


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


# -- IR judgements -------------------------------------------------------------------------
def judgements(pred=None, lab=None, **kw):
    pred = (
        pred
        if pred is not None
        else pd.DataFrame(
            {"user": [1, 1, 2], "item": ["a", "b", "a"], "rank": [1, 2, 1]},
            index=["p1", "p2", "p3"],
        )
    )
    lab = (
        lab
        if lab is not None
        else pd.DataFrame(
            {"user": [1, 2], "item": ["a", "b"], "relevance": [1, 2]}, index=["l1", "l2"]
        )
    )
    return Judgements.from_frames(pred, lab, **kw)


IR_CASES = {
    "negative grade": (
        lambda: judgements(
            lab=pd.DataFrame(
                {"user": [1, 2], "item": ["a", "b"], "relevance": [1, -2]}, index=["l1", "l2"]
            )
        ),
        "relevance",
        r"rows \['l2'\]",
    ),
    "text grade": (
        lambda: judgements(
            lab=pd.DataFrame(
                {"user": [1, 2], "item": ["a", "b"], "relevance": ["x", 1]}, index=["l1", "l2"]
            )
        ),
        "relevance",
        r"rows \['l1'\]",
    ),
    "duplicate prediction": (
        lambda: judgements(
            pred=pd.DataFrame(
                {"user": [1, 1, 2], "item": ["a", "a", "a"], "rank": [1, 2, 1]},
                index=["p1", "p2", "p3"],
            )
        ),
        "twice",
        r"rows \['p2'\]",
    ),
    "missing user": (
        lambda: judgements(
            pred=pd.DataFrame(
                {"user": [1, None, 2], "item": ["a", "b", "a"], "rank": [1, 2, 1]},
                index=["p1", "p2", "p3"],
            )
        ),
        "'user'",
        r"rows \['p2'\]",
    ),
    "no rank nor score": (
        lambda: judgements(pred=pd.DataFrame({"user": [1], "item": ["a"]})),
        "rank or a score",
    ),
    "unknown order column": (lambda: judgements(order_by="random"), "order_by"),
    "unknown tie policy": (lambda: Conventions(ties="random"), "ties"),
    "role named twice": (lambda: judgements(columns={"user": "a", "query": "b"}), "twice"),
    "unknown role": (lambda: judgements(columns={"qid2": "a"}), "unknown column role"),
    "cut-off zero": (lambda: compute(judgements(), ["ndcg"], [0]), "cut-off k"),
    "unknown metric": (lambda: compute(judgements(), ["ndgc"], [5]), "unknown metrics"),
}


@pytest.mark.parametrize("case", IR_CASES.values(), ids=list(IR_CASES))
def test_bad_judgements(case):
    call, *patterns = case
    fails(call, OffevalError, *patterns)


# -- the registry --------------------------------------------------------------------------
def test_bad_registry_calls():
    reg = get_registry()
    fails(lambda: reg.names("metric"), RegistryError, "unknown component kind 'metric'")
    fails(lambda: reg.get("estimator", "nope"), RegistryError, "registered: beta_ips")
    fails(lambda: reg.register("estimator", "has space", IS), RegistryError, "not a valid name")
    fails(lambda: reg.create("environment", "default", seeds=1), RegistryError, "seeds")


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


REVIEW_CASES = {
    "text scores": (
        lambda: evaluate(late("score", "high"), [RerankPolicy("score")], [DCG()], chunk_rows=100),
        ColumnError,
        "'score'",
        r"rows \['r701'\]",
    ),
    "cut-off given as text": (lambda: DCG(examination="cutoff(n=x)"), ConfigurationError, "n"),
    "cut-off given as a boolean": (lambda: DCG(examination="cutoff(n=true)"), ConfigurationError),
    "gamma given as a boolean": (
        lambda: DCG(examination="exponential(gamma=true)"),
        ConfigurationError,
        "gamma",
    ),
    "table of text": (lambda: DCG(examination="table(values=x)"), ConfigurationError, "table"),
    "learnt values of text": (lambda: DCG(examination="pbm(values=x)"), ConfigurationError),
    "duplicate column names": (
        lambda: build(pd.concat([frame(), frame()[["mu"]]], axis=1)),
        OffevalError,
        r"duplicate column names: \['mu'\]",
    ),
    "candidate keys of another type": (
        lambda: build(
            candidates=candidates().assign(trajectory=lambda d: d["trajectory"].astype(str))
        ),
        ColumnError,
        "the log's types",
    ),
    "missing group": (
        lambda: evaluate(
            build(frame(group=["a", "a", "a", None, None, None])),
            [ColumnPolicy("pi")],
            [PiecewiseNCIS()],
        ),
        ColumnError,
        "'group'",
        r"rows \['s6', 's5', 's4'\]",
    ),
    "a list as a column name": (
        lambda: build(mapping={**MAP, "reward": ["click"]}),
        OffevalError,
        r"only \['trajectory', 'context'\] may map to several columns.*'reward'",
    ),
    "a composite key of one column": (
        lambda: build(mapping={**MAP, "trajectory": ["session"]}),
        OffevalError,
        "two or more",
    ),
    "misnamed rank probability column": (
        lambda: evaluate(
            build(frame(rank_probability_x=0.5)),
            [RerankPolicy("score")],
            [DCG(logging="rank_probabilities")],
        ),
        ColumnError,
        "'rank_probability_x'",
    ),
    "NaN rank probability": (
        lambda: evaluate(
            build(frame(rank_probability_1=[0.5, np.nan, 0.5, 0.5, 0.5, 0.5])),
            [RerankPolicy("score")],
            [DCG(logging="rank_probabilities")],
        ),
        ColumnError,
        r"rows \['s2'\]",
    ),
    "spec with an open bracket": (
        lambda: get_registry().create_from_spec("estimator", "ncis(cap=3"),
        RegistryError,
        "unbalanced",
    ),
}


@pytest.mark.parametrize("case", REVIEW_CASES.values(), ids=list(REVIEW_CASES))
def test_review_findings(case):
    call, error, *patterns = case
    fails(call, error, *patterns)


def test_rank_probability_columns_are_read_by_their_rank_number():
    probs = {"rank_probability_1": 0.6, "rank_probability_3": 0.4}
    by_columns = build(frame(**probs))
    exposure = 0.6 / np.log2(2) + 0.4 / np.log2(4)
    by_exposure = build(frame(exposure=exposure))
    policy = [RerankPolicy("score")]
    a = evaluate(by_columns, policy, [DCG(logging="rank_probabilities")]).estimate("score")
    b = evaluate(by_exposure, policy, [DCG(logging="exposure")]).estimate("score")
    assert a.value == pytest.approx(b.value, rel=1e-12)


def test_a_pair_with_an_undefined_standard_error_is_not_significant():
    one = build(frame().iloc[:3])
    grid = evaluate(one, [ColumnPolicy("pi"), LoggingPolicy()], [IS()]).grid()
    row = grid.table.iloc[0]
    assert np.isnan(row["se"]) and np.isnan(row["p_value"]) and not row["significant"]


def test_a_stream_keeps_the_files_own_row_labels(tmp_path):
    path = tmp_path / "labelled.parquet"
    data = long_frame(30)
    data.loc["r33", "click"] = np.nan
    data.to_parquet(path)
    fails(lambda: list(stream_parquet(path, MAP, batch_rows=10)), ColumnError, r"\['r33'\]")


# -- banners (the disagreement plugin) ----------------------------------------------------
def banner_frame(**overrides) -> pd.DataFrame:
    data = {
        "trajectory": [1, 1, 1, 2, 2],
        "item": ["a", "b", "c", "a", "d"],
        "position": [1, 2, 3, 1, 2],
        "reward": [0, 1, 0, 1, 0],
        "logging_score": [0.5, 0.1, -0.2, 1.0, 0.0],
        "model": [0.3, 0.2, 0.1, 0.0, 0.4],
    }
    data.update(overrides)
    return pd.DataFrame(data, index=["b1", "b2", "b3", "b4", "b5"])


def disagreement(frame_, estimator):
    from offeval_disagreement import CounterfactualDisagreement, PairwiseDisagreement

    made = {"cd": CounterfactualDisagreement, "pd": PairwiseDisagreement}
    kind, *params = estimator
    return evaluate(
        InteractionLog.from_frame(frame_), [RerankPolicy("model")], [made[kind](*params)]
    )


BANNER_CASES = {
    "a rank missing from a banner": (
        lambda: disagreement(banner_frame(position=[1, 2, 4, 1, 2]), ("pd",)),
        ColumnError,
        "'position'",
        r"rows \['b3'\]",
    ),
    "no logging scores for Plackett-Luce": (
        lambda: disagreement(banner_frame().drop(columns="logging_score"), ("cd",)),
        ColumnError,
        "'logging_score'",
    ),
    "a pool mass that changes within a banner": (
        lambda: disagreement(banner_frame(logging_pool=[0.0, 0.0, 1.0, 0.0, 0.0]), ("cd",)),
        ColumnError,
        "'logging_pool'",
        r"trajectories \[1\].*rows \['b3'\]",
    ),
    "ordering probabilities that do not sum to one": (
        lambda: disagreement(
            banner_frame(
                ordering_probability_1=[0.5, 0.5, 0.5, 0.5, 0.5],
                ordering_probability_2=[0.5, 0.5, 0.5, 0.5, 0.5],
                ordering_probability_3=[0.0, 0.0, 0.0, 0.0, 0.0],
            ),
            ("cd", "all", "columns"),
        ),
        ColumnError,
        "ordering_probability_",
    ),
    "a subset without the shuffled flag": (
        lambda: disagreement(banner_frame(), ("pd", "shuffled")),
        ColumnError,
        "'shuffled'",
    ),
    "a score that is not a number": (
        lambda: disagreement(banner_frame(model=[0.1, "x", 0.2, 0.3, 0.4]), ("pd",)),
        ColumnError,
        "'model'",
        r"rows \['b2'\]",
    ),
}


@pytest.mark.parametrize("case", BANNER_CASES.values(), ids=list(BANNER_CASES))
def test_bad_banners(case):
    call, error, *patterns = case
    fails(call, error, *patterns)


def test_explicit_ordering_probabilities_are_used():
    from offeval_disagreement import CounterfactualDisagreement

    q = np.array([[0.2, 0.5, 0.3], [0.3, 0.2, 0.5], [0.5, 0.3, 0.2]])  # [product, rank]
    first = (
        banner_frame()
        .iloc[:3]
        .assign(**{f"ordering_probability_{r + 1}": q[:, r] for r in range(3)})
    )
    est = evaluate(
        InteractionLog.from_frame(first),
        [RerankPolicy("model")],
        [CounterfactualDisagreement(logging="columns")],
    ).estimate("model")
    # clicked b (score 0.2) at rank 2: a (0.3, q = 0.5) is above, c (0.1, q = 0.3) below
    assert est.value == pytest.approx(0.5 / (0.5 + 0.3))


def test_an_estimator_needing_candidates_names_both_ways_to_give_them():
    fails(
        lambda: evaluate(build(), [ColumnPolicy("pi")], [PointwiseNCIS()]),
        ConfigurationError,
        r"candidates=table",
        r"from_obp\(\.\.\., with_candidates=True\)",
    )


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


def test_a_column_error_names_a_numpy_string_column_as_text():
    error = ColumnError(np.str_("pi"), "is absent")
    assert str(error).startswith("column 'pi'")  # not column np.str_('pi')


def test_numpy_numbers_and_names_are_taken_and_shown_as_plain_values():
    log = build()
    fails(lambda: list(log.chunks(np.int64(0))), OffevalError, r"got 0$")
    one = np.int64(1)
    policy = [ColumnPolicy("pi")]
    fails(lambda: bootstrap(log, policy, [IS()], replicates=one), OffevalError, "got 1$")
    boot = bootstrap(log, [ColumnPolicy("pi")], [IS()], replicates=np.int64(20), seed=0)
    assert len(boot) == 1  # a numpy whole number is a whole number
    name = np.array(["pi"])[0]
    policy = ColumnPolicy("missing", name=name)
    fails(lambda: evaluate(log, [policy], [IS()]), ColumnError, r"policy 'pi' reads")
