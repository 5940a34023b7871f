"""Bad inputs to the decision plugin and to saved estimator summaries.

Covers ``summaries.json`` as :func:`offeval.engine.summary.load_summaries` and
``offeval decide`` read it (each mistake one offeval error naming the file,
the estimator and the field), ``offeval decide``'s options, and
:func:`offeval_decision.ab_sample_size`'s parameters. Never a Python crash,
never a field read as something else than what was written.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from offeval import ConfigurationError, OffevalError
from offeval.cli.shell import main
from offeval.engine.summary import EstimatorSummary, load_summaries, save_summaries
from offeval_decision import ab_sample_size


def good(**changes) -> dict:
    """One valid summary as saved, with ``changes`` (a value of ``...`` removes the field)."""
    summary = {
        "estimator": "is",
        "name": "is",
        "policies": ["a", "b", "c"],
        "values": [0.1, 0.2, 0.3],
        "covariance": (np.eye(3) * 1e-4).tolist(),
        "n_units": 100,
        "level": 0.95,
        "baseline": None,
        "higher_is_better": True,
        "params": {},
    }
    summary.update(changes)
    return {k: v for k, v in summary.items() if v is not ...}


def write(folder: Path, *summaries, **top) -> Path:
    """A summaries file holding ``summaries`` (top-level keys replaced by ``top``)."""
    payload = {"summaries_version": 1, "summaries": list(summaries), **top}
    path = folder / "summaries.json"
    path.write_text(json.dumps(payload))
    return path


def test_a_valid_file_loads_and_non_finite_values_are_kept_for_decide_to_skip(tmp_path):
    path = write(tmp_path, good(), good(estimator="x", values=["nan", 0.2, "inf"]))
    loaded = load_summaries(path)
    assert list(loaded) == ["is", "x"]
    assert loaded["is"].higher_is_better is True
    assert np.isnan(loaded["x"].values[0]) and loaded["x"].values[2] == np.inf


FIELD_MISTAKES = {
    "higher_is_better as text": (
        {"higher_is_better": "false"},
        "higher_is_better",
        "must be true or false, got 'false'",
    ),
    "higher_is_better as 0": ({"higher_is_better": 0}, "higher_is_better", "true or false"),
    "policies as one string": (
        {"policies": "abc"},
        "policies",
        "must be a list of policy names, got the text 'abc'",
    ),
    "policies as numbers": ({"policies": [1, 2, 3]}, "policies", "names must be text"),
    "policies repeated": ({"policies": ["a", "b", "a"]}, "policies", r"repeat: \['a'\]"),
    "no policies": (
        {"policies": [], "values": [], "covariance": []},
        "policies",
        "at least one",
    ),
    "values too few": ({"values": [0.1, 0.2]}, "values", "one number per policy \\(3\\), got 2"),
    "values as text": ({"values": [0.1, "high", 0.3]}, "values", "'high' is not a number"),
    "values as booleans": ({"values": [0.1, True, 0.3]}, "values", "True is not a number"),
    "values nested": ({"values": [[0.1], [0.2], [0.3]]}, "values", "is not a number"),
    "values missing": ({"values": ...}, "values", "missing"),
    "covariance ragged": (
        {"covariance": [[1e-4, 0, 0], [0, 1e-4], [0, 0, 1e-4]]},
        "covariance",
        "3x3",
    ),
    "covariance a vector": ({"covariance": [1e-4, 1e-4, 1e-4]}, "covariance", "3x3"),
    "covariance as text": (
        {"covariance": [[1e-4, 0, 0], [0, "x", 0], [0, 0, 1e-4]]},
        "covariance",
        "'x' is not a number",
    ),
    "covariance asymmetric": (
        {"covariance": [[1e-4, 5e-5, 0], [-5e-5, 1e-4, 0], [0, 0, 1e-4]]},
        "covariance",
        r"must be symmetric: \('a', 'b'\) is 5e-05 but \('b', 'a'\) is -5e-05",
    ),
    "covariance not PSD": (
        {"covariance": [[1e-4, 2e-4, 0], [2e-4, 1e-4, 0], [0, 0, 1e-4]]},
        "covariance",
        "must be positive semi-definite: its smallest eigenvalue is -0.0001",
    ),
    "negative variance": (
        {"covariance": [[1e-4, 0, 0], [0, -1e-4, 0], [0, 0, 1e-4]]},
        "covariance",
        r"negative variance for policies \['b'\]",
    ),
    "n_units as text": ({"n_units": "100"}, "n_units", "whole number"),
    "n_units fractional": ({"n_units": 10.5}, "n_units", "whole number"),
    "n_units negative": ({"n_units": -1}, "n_units", "whole number"),
    "level above one": ({"level": 1.5}, "level", r"in \(0, 1\)"),
    "level as text": ({"level": "0.95"}, "level", r"in \(0, 1\)"),
    "baseline not a policy": ({"baseline": "zzz"}, "baseline", "not one of the policies"),
    "baseline a number": ({"baseline": 3}, "baseline", "not one of the policies"),
    "params a list": ({"params": [1, 2]}, "params", "object"),
    "params nested": ({"params": {"cap": [1, 2]}}, "params", "'cap'"),
    "name missing": ({"name": ...}, "name", "missing"),
    "name a number": ({"name": 3}, "name", "text"),
    "misspelled field": ({"higher_is_beter": False}, "higher_is_beter", "unknown field"),
}


@pytest.mark.parametrize(
    ("changes", "field", "problem"), FIELD_MISTAKES.values(), ids=FIELD_MISTAKES.keys()
)
def test_each_field_is_read_against_its_schema_and_named(tmp_path, changes, field, problem):
    path = write(tmp_path, good(estimator="ok"), good(**changes))
    with pytest.raises(OffevalError) as caught:
        load_summaries(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: summary 'is', field '{field}': "), message
    assert re.search(problem, message), message
    assert "\n" not in message


@pytest.mark.parametrize(
    ("summaries", "top", "match"),
    [
        ([good(), good()], {}, r"summaries #1 and #2 are both labelled 'is'"),
        ([good(estimator=...)], {}, r"summary #1, field 'estimator': missing"),
        ([good(estimator="")], {}, r"summary #1, field 'estimator': must be non-empty text"),
        ([good(estimator=["is"])], {}, r"summary #1, field 'estimator': must be non-empty text"),
        ([["is"]], {}, r"summary #1 must be an object"),
        ([], {"summaries": {"is": good()}}, r"'summaries' must be a list"),
        ([], {"extra": 1}, r"unknown key 'extra'"),
    ],
    ids=[
        "two with one label",
        "no label",
        "empty label",
        "label a list",
        "summary a list",
        "summaries an object",
        "unknown top key",
    ],
)
def test_the_file_as_a_whole_is_checked(tmp_path, summaries, top, match):
    path = write(tmp_path, *summaries, **top)
    with pytest.raises(OffevalError, match=f"^{re.escape(str(path))}: .*{match}"):
        load_summaries(path)


@pytest.mark.parametrize(
    "text", ["[1, 2]", '{"summaries_version": true, "summaries": []}', '{"summaries": []}']
)
def test_a_file_that_is_not_a_summaries_file_of_this_version_is_refused(tmp_path, text):
    path = tmp_path / "summaries.json"
    path.write_text(text)
    with pytest.raises(OffevalError, match="not an offeval summaries file of version 1"):
        load_summaries(path)


@pytest.mark.parametrize(
    "changes",
    [{"higher_is_better": "false"}, {"policies": "abc"}, {"covariance": None}, {"n_units": []}],
    ids=["text boolean", "one string of policies", "no covariance", "n_units a list"],
)
def test_decide_reports_a_malformed_file_in_one_line(tmp_path, capsys, changes):
    write(tmp_path, good(**changes))
    assert main(["decide", str(tmp_path), "--draws", "100"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("offeval: error: ") and captured.err.count("\n") == 1
    assert f"summary 'is', field '{next(iter(changes))}'" in captured.err


@pytest.mark.parametrize(
    "text",
    ["[" * 100_000, '{"summaries_version": 1, "summaries": [' + '{"a": ' * 100_000 + "1"],
    ids=["a file of brackets", "a summary nested deep"],
)
def test_decide_on_json_nested_too_deep_is_one_line_naming_the_file(tmp_path, capsys, text):
    path = tmp_path / "deep.json"
    path.write_text(text)
    for given in (path, tmp_path / "summaries.json"):  # the file, or the folder holding it
        given.write_text(text)
        assert main(["decide", str(given if given == path else tmp_path)]) == 2
        captured = capsys.readouterr()
        assert captured.out == "" and captured.err.count("\n") == 1, captured.err
        assert captured.err.startswith(f"offeval: error: {given}: not a summaries file (")
        assert "nested too deeply" in captured.err


def test_decide_on_an_empty_file_says_so(tmp_path, capsys):
    save_summaries(tmp_path / "summaries.json", [])
    assert main(["decide", str(tmp_path)]) == 2
    assert "holds no summaries" in capsys.readouterr().err


@pytest.mark.parametrize(
    "mistake",
    [["--depth", "0"], ["--depth", "4"], ["--depth", "two"]],
    ids=["depth 0", "depth beyond the policies", "depth as text"],
)
def test_decide_depth_is_checked(tmp_path, capsys, mistake):
    write(tmp_path, good())
    assert main(["decide", str(tmp_path), "--draws", "100", *mistake]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "--depth" in captured.err and captured.err.count("\n") == 1


def test_the_constructor_refuses_one_string_of_policies():
    with pytest.raises(OffevalError, match="policies must be a list of names"):
        EstimatorSummary("is", "is", "ab", np.zeros(2), np.eye(2), 10)


@pytest.mark.parametrize(
    ("kwargs", "parameter"),
    [
        ({"lift": float("nan")}, "lift"),
        ({"lift": "0.01"}, "lift"),
        ({"lift": float("inf")}, "lift"),
        ({"lift": True}, "lift"),
        ({"sd_a": float("nan")}, "sd_a"),
        ({"sd_a": "0.1"}, "sd_a"),
        ({"sd_a": -0.1}, "sd_a"),
        ({"sd_a": float("inf")}, "sd_a"),
        ({"sd_b": float("nan")}, "sd_b"),
        ({"sd_b": -1.0}, "sd_b"),
        ({"alpha": "0.05"}, "alpha"),
        ({"alpha": float("nan")}, "alpha"),
        ({"power": None}, "power"),
        ({"ratio": float("nan")}, "ratio"),
        ({"ratio": 0}, "ratio"),
        ({"ratio": "1"}, "ratio"),
        ({"ratio": float("inf")}, "ratio"),
    ],
    ids=lambda v: repr(v) if not isinstance(v, str) else v,
)
def test_ab_sample_size_names_the_bad_parameter(kwargs, parameter):
    arguments = {"lift": 0.01, "sd_a": 0.3, **kwargs}
    with pytest.raises(ConfigurationError, match=f"^{parameter} must be "):
        ab_sample_size(**arguments)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"sd": "0.3"}, "^sd must be a finite number >= 0, got '0.3'"),
        ({"sd": float("nan")}, "^sd must be a finite number >= 0"),
        ({"level": 95}, r"^level must be a number in \(0, 1\), got 95"),
        ({"alpha": None}, r"^alpha must be a number in \(0, 1\)"),
        ({"power": "high"}, r"^power must be a number in \(0, 1\)"),
        ({"candidates": "new"}, "^candidates must be a list of policy names, not one string"),
    ],
    ids=["sd text", "sd nan", "level in percent", "alpha none", "power text", "one candidate"],
)
def test_plan_ab_test_names_the_bad_parameter(kwargs, match):
    from offeval_decision import plan_ab_test

    summary = EstimatorSummary(
        "is", "is", ["base", "new"], np.array([0.1, 0.11]), np.eye(2) * 1e-6, 100
    )
    arguments = {"candidates": ["new"], "baseline": "base", "sd": 0.3, **kwargs}
    with pytest.raises(ConfigurationError, match=match):
        plan_ab_test(summary, **arguments)


def test_decide_out_never_replaces_its_inputs_or_a_folder_offeval_did_not_write(tmp_path, capsys):
    write(tmp_path, good())
    decide = ["decide", str(tmp_path), "--draws", "100", "--out"]
    assert main([*decide, str(tmp_path)]) == 2  # would delete summaries.json
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1
    assert "holds the input" in captured.err and (tmp_path / "summaries.json").exists()
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    (theirs / "notes.txt").write_text("mine")
    assert main([*decide, str(theirs)]) == 2
    assert "--force" in capsys.readouterr().err and (theirs / "notes.txt").exists()
    assert main([*decide, str(theirs), "--force"]) == 0
    assert not (theirs / "notes.txt").exists() and (theirs / "ranks_is.csv").exists()


# -- --attributes ------------------------------------------------------------------------------


def test_attributes_with_a_misspelt_policy_name_the_file_and_suggest(tmp_path, capsys):
    """The attributes file names 'olf' where the summaries have 'old': the error names the
    file, the policy without a row, the file's names no policy has, and the closest one."""
    from cli_checks import one_line_error

    summaries = write(tmp_path, good(policies=["new", "old", "base"]))
    attributes = tmp_path / "attributes.csv"
    attributes.write_text("policy,team\nnew,a\nolf,b\nbase,a\n")
    err = one_line_error(capsys, ["decide", summaries, "--attributes", attributes])
    assert "attributes.csv" in err and "'old' (did you mean olf?)" in err, err
    assert "['olf']" in err  # the unknown name, as the file spells it
