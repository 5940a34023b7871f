"""Every registered estimator runs from the command line: the registry is walked (every name,
aliases included, whatever plugin registered it), each estimator's conformance-kit log is
written to files (a log, its candidate table when the estimator needs one, the reward model's
column when it reads one), and `offeval evaluate` on them gives what evaluating the same log
in Python gives; a run without --estimator writes every distinct estimator into --out and
--report."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd
import pytest

from offeval import ColumnPolicy, InteractionLog, evaluate
from offeval.cli.shell import main
from offeval.engine.declaration import declaration_of
from offeval.registry.manager import get_registry
from offeval.testing import kit_setup
from offeval_ranking import RerankPolicy

#: Estimators that cannot run from files, with the reason. The goal is none.
CANNOT_RUN_FROM_FILES: dict[str, str] = {}
#: Policy methods a probability column cannot answer: such estimators get ranking policies
#: (--rerank, scores of each row).
RANKING = ("scores()", "exposure()", "prefix_probabilities()")
#: Trajectories of each kit log written to files.
TRAJECTORIES = 200


def _names() -> list[str]:
    return get_registry().names("estimator")


def kit_files(estimator, folder, n: int = TRAJECTORIES):
    """The estimator's kit log with two target policies' columns (probabilities ``pi_*`` and
    scores ``s_*``) in its rows and candidate rows, written as Parquet files; the log in
    memory with the same columns; the options that name the files and the policies."""
    _, log, policies = kit_setup(estimator, n)
    columns, cand_columns = {}, {}
    cands = log.candidates
    if cands is not None:
        cand_rows = cands.assign(context=log.frame["context"].to_numpy()[cands["slot"]])
    for policy, name in zip(policies, "ab", strict=True):
        columns[f"pi_{name}"] = policy.probabilities(log.frame)
        columns[f"s_{name}"] = policy.scores(log.frame)
        if cands is not None:
            cand_columns[f"pi_{name}"] = policy.probabilities(cand_rows)
            cand_columns[f"s_{name}"] = policy.scores(cand_rows)
    frame = log.frame.assign(**columns)
    frame.to_parquet(folder / "log.parquet", index=False)
    argv = [str(folder / "log.parquet")]
    if cands is not None:
        cands = cands.assign(**cand_columns)
        cands.drop(columns="slot").to_parquet(folder / "cands.parquet", index=False)
        argv += ["--candidates", str(folder / "cands.parquet")]
    ranking = bool(set(RANKING) & set(declaration_of(estimator).requires))
    option, prefix = ("--rerank", "s") if ranking else ("--policy", "pi")
    argv += [a for name in "ab" for a in (option, f"{name}={prefix}_{name}")]
    made = RerankPolicy if ranking else ColumnPolicy
    targets = [made(f"{prefix}_{name}", name=name) for name in "ab"]
    memory = InteractionLog(
        frame, log.source_rows, log.unit_starts, cands, log.candidate_source_rows
    )
    return memory, targets, argv


@pytest.mark.parametrize("name", _names())
def test_every_registered_estimator_runs_from_files(name, tmp_path):
    if name in CANNOT_RUN_FROM_FILES:
        pytest.xfail(CANNOT_RUN_FROM_FILES[name])
    estimator = get_registry().create("estimator", name)
    log, policies, argv = kit_files(estimator, tmp_path)
    out = tmp_path / "out"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        code = main(["evaluate", *argv, "--estimator", name, "--quiet", "--out", str(out)])
        assert code == 0
        expected = evaluate(log, policies, [estimator], progress=False)
    table = pd.read_csv(out / "estimates.csv")
    assert sorted(table["policy"]) == ["a", "b"]
    for row in table.itertuples():
        theirs = expected.estimate(row.policy, row.estimator)
        assert np.isfinite(row.value) and np.isfinite(row.se), row
        assert row.value == pytest.approx(theirs.value, rel=1e-9, abs=1e-12), row
        assert row.se == pytest.approx(theirs.se, rel=1e-9, abs=1e-12), row


def test_a_run_without_estimator_writes_every_one_into_out_and_report(tmp_path):
    """The log of the estimator that needs the most (candidates, reward model, the logger's
    Plackett-Luce columns) serves every estimator, with ranking policies."""
    registry = get_registry()
    needs = {n: declaration_of(registry.create("estimator", n)).requires for n in _names()}
    richest = max(needs, key=lambda n: (len(needs[n]), n))
    _, _, argv = kit_files(registry.create("estimator", richest), tmp_path)
    argv = [a.replace("--policy", "--rerank").replace("=pi_", "=s_") for a in argv]
    out = tmp_path / "out"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        code = main(["evaluate", *argv, "--quiet", "--out", str(out), "--report", str(out)])
    assert code == 0
    labels = set(pd.read_csv(out / "estimates.csv")["estimator"])
    assert labels == set(registry.distinct("estimator"))
    assert not (out / "skipped_estimators.csv").exists()
    report = (out / "report.md").read_text()
    assert all(label in report for label in labels)


@pytest.mark.parametrize(
    "options, methods",
    [
        ([], {"rips": "betting", "iips": "normal"}),
        (["--interval", "normal"], {"rips": "normal", "iips": "normal"}),
        (
            ["--interval", "betting", "--reward-range", "0,1"],
            {"rips": "betting", "iips": "betting"},
        ),
        (
            ["--interval", "iips=betting", "--reward-range", "0,1"],
            {"rips": "betting", "iips": "betting"},
        ),
        (["--interval", "rips=normal"], {"rips": "normal", "iips": "normal"}),
    ],
)
def test_interval_chooses_each_estimators_interval_method(tmp_path, capsys, options, methods):
    """RIPS's own intervals are betting ones (its prefix weights are heavy-tailed); --interval
    chooses for every estimator that offers betting intervals or by label, and the intervals
    written are those evaluate gives for the same choice."""
    estimators = [get_registry().create("estimator", name) for name in ("rips", "iips")]
    log, policies, argv = kit_files(estimators[0], tmp_path)
    out = tmp_path / "out"
    chosen = ["--estimator", "rips", "--estimator", "iips", *options]
    assert main(["evaluate", *argv, *chosen, "--quiet", "--out", str(out)]) == 0
    shown = "interval_method" in capsys.readouterr().out
    assert shown == ("betting" in methods.values())  # shown where some interval is not normal
    table = pd.read_csv(out / "estimates.csv")
    assert dict(zip(table["estimator"], table["interval_method"], strict=False)) == methods
    expected = evaluate(
        log, policies, estimators, interval=methods, reward_range=(0, 1), progress=False
    )
    for row in table.itertuples():
        theirs = expected.estimate(row.policy, row.estimator)
        assert (row.ci_low, row.ci_high) == pytest.approx((theirs.ci_low, theirs.ci_high))


def test_interval_mistakes_are_one_line(tmp_path, capsys):
    from cli_checks import one_line_error

    _, _, argv = kit_files(get_registry().create("estimator", "snips"), tmp_path)
    evaluate_snips = ["evaluate", *argv, "--estimator", "snips", "--quiet"]
    one_line_error(capsys, [*evaluate_snips, "--interval", "bca"], r"--interval bca: .*normal")
    one_line_error(
        capsys,
        [*evaluate_snips, "--interval", "betting", "--interval", "normal"],
        r"one method for every estimator, or LABEL=METHOD",
    )
    offer = [
        name
        for name in get_registry().distinct("estimator")
        if "betting" in declaration_of(get_registry().create("estimator", name)).intervals
    ]
    assert "is" in offer and "snips" not in offer
    one_line_error(
        capsys,
        [*evaluate_snips, "--interval", "betting"],
        r"none of the estimators offers betting intervals \(registered estimators that do: "
        + re.escape(", ".join(offer))
        + r"\)",
    )
    one_line_error(
        capsys,
        [*evaluate_snips, "--interval", "snips=betting"],
        r"--interval snips=betting: snips offers no betting intervals",
    )
    one_line_error(
        capsys,
        ["evaluate", *argv, "--quiet", "--estimator", "is", "--interval", "betting"],
        r"betting intervals \(is\) need the rewards' known bounds: add --reward-range LOW,HIGH",
    )
    one_line_error(
        capsys,
        ["evaluate", *argv, "--quiet", "--estimator", "is", "--reward-range", "1,0"],
        r"--reward-range must have its low end below its high end, got 1,0",
    )
    one_line_error(
        capsys,
        [*evaluate_snips, "--interval", "is=betting"],
        r"--interval is=betting: no estimator 'is' among snips",
    )


def test_interval_mistakes_are_found_before_any_row_is_read(tmp_path, capsys):
    """With --estimator given, a label --interval cannot use is refused from the header alone:
    a log whose rows would be refused gets the --interval line, not the rows' error."""
    from cli_checks import one_line_error

    _, _, argv = kit_files(get_registry().create("estimator", "snips"), tmp_path)
    frame = pd.read_parquet(argv[0])
    frame["propensity"] = "not a number"
    frame.to_csv(tmp_path / "log.csv", index=False)
    argv = [str(tmp_path / "log.csv"), *argv[1:]]
    base = ["evaluate", *argv, "--estimator", "snips", "--quiet"]
    one_line_error(capsys, [*base, "--interval", "snips=betting"], r"^.*--interval snips=betting")
    one_line_error(capsys, base, r"propensity")  # the rows' own mistake, without --interval
