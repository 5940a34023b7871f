"""The command line: demo report, evaluate on a user's file, plugins, errors."""

from __future__ import annotations

import pandas as pd
import pytest

from offeval.cli import main


def test_demo_writes_a_report_with_table_and_plots(tmp_path, capsys):
    out = tmp_path / "report"
    code = main(
        [
            "demo",
            "--trajectories",
            "8000",
            "--per-cell",
            "4000",
            "--policies",
            "6",
            "--out",
            str(out),
            "--quiet",
        ]
    )
    assert code == 0
    text = (out / "report.md").read_text()
    assert "| estimator | kendall_tau |" in text and "![estimates against truth]" in text
    assert (out / "estimates.png").stat().st_size > 10_000
    assert (out / "rank_1.png").stat().st_size > 5_000
    summary = pd.read_csv(out / "summary.csv")
    assert {"is", "ncis(cap=100)", "online A/B test"} <= set(summary["estimator"])
    assert summary["kendall_tau"].between(-1, 1).all()
    assert "true best policy" in capsys.readouterr().out


@pytest.fixture()
def user_log(tmp_path, env):
    log = env.simulate(env.logging_policy(), 4_000, seed=2)
    frame = log.frame.rename(
        columns={"trajectory": "session", "reward": "stream", "propensity": "mu"}
    )
    for p in env.candidate_policies(3):
        frame[f"pi_{p.name}"] = p.probabilities(log.frame)
    path = tmp_path / "log.csv"
    frame.to_csv(path, index=False)
    return path


MAPPING = "--map trajectory=session --map reward=stream".split()


def test_evaluate_a_csv_with_mapping_and_policy_columns(user_log, tmp_path, capsys):
    out = tmp_path / "eval"
    policies = "--policy a=pi_p01 --policy b=pi_p02 --policy c=pi_p03".split()
    estimators = "--estimator ncis:cap=50 --estimator is --baseline a".split()
    args = [*MAPPING, "--map", "propensity=mu", *policies, *estimators]
    assert main(["evaluate", str(user_log), *args, "--out", str(out), "--quiet"]) == 0
    table = pd.read_csv(out / "estimates.csv")
    assert len(table) == 6 and set(table["policy"]) == {"a", "b", "c"}
    assert (table.loc[table["policy"] == "a", "relative_value"] == 1.0).all()
    pairs = pd.read_csv(out / "pairs_ncis_cap_50_.csv")
    assert len(pairs) == 3 and pairs["p_adjusted"].between(0, 1).all()


def test_evaluate_reports_a_missing_column_cleanly(user_log, capsys):
    code = main(["evaluate", str(user_log), *MAPPING, "--policy", "a=pi_p01", "--quiet"])
    assert code == 2
    assert "column 'propensity'" in capsys.readouterr().err


def test_plugins_lists_components(capsys):
    assert main(["plugins"]) == 0
    out = capsys.readouterr().out
    assert "estimator    ncis" in out and "environment  default" in out
