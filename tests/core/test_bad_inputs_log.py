"""Bad logs (InteractionLog.from_frame): columns, roles, values and candidate tables, with
string, MultiIndex and datetime row labels."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from bad_input_logs import MAP, build, candidates, cases, fails, frame

from offeval import ColumnError, InteractionLog, OffevalError

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
    "propensity too small for its weight": (  # IS was inf and SNIPS nan, with RuntimeWarnings
        lambda: build(frame(mu=[0.5, 0.2, 1e-320, 0.2, 0.3, 0.5])),
        ColumnError,
        r"'mu' \(role propensity\)",
        r"must be at least 1e-150: a smaller propensity's importance weight overflows",
        r"rows \['s3'\]",
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
    fails(*case)


def test_booleans_mean_booleans():
    log = build(frame(shuffled=["yes", "No", "TRUE", "false", 0, 1]))
    by_label = dict(zip(log.source_rows, log.frame["shuffled"], strict=True))
    assert by_label == {"s1": True, "s2": False, "s3": True, "s4": False, "s5": False, "s6": True}


REVIEW_CASES = {
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
}


@cases(REVIEW_CASES)
def test_review_findings(case):
    fails(*case)


def test_a_column_error_names_a_numpy_string_column_as_text():
    error = ColumnError(np.str_("pi"), "is absent")
    assert str(error).startswith("column 'pi'")  # not column np.str_('pi')
