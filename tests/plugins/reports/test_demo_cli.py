"""The reports plugin on the command line: the demo's report, evaluate --report, and
matplotlib left as the user set it."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from offeval.cli.shell import main


@pytest.mark.slow
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
    assert "| estimator | Kendall's tau |" in text and "![estimates against truth" in text
    assert (out / "estimates.png").stat().st_size > 10_000
    section = "which_policies_deserve_an_online_test"
    assert (out / f"{section}_p_best_against_cap.png").stat().st_size > 10_000
    assert "## Which policies deserve an online test" in text  # a plugin's section
    p_best = pd.read_csv(out / f"{section}_p_best.csv", index_col="policy")
    np.testing.assert_allclose(p_best.sum(), 1.0)  # each estimator: one best policy per draw
    summary = pd.read_csv(out / "summary.csv")
    assert {"is", "ncis", "online A/B test"} <= set(summary["estimator"])
    assert summary["p_true_best_ranked_first"].iloc[:-1].between(0, 1).all()
    assert summary["kendall_tau"].between(-1, 1).all()
    assert "true best policy" in capsys.readouterr().out
    page = (out / "report.html").read_text()  # the same document as evaluate --report
    for heading in ("How well each estimator", "Estimators", "How this report was made"):
        assert f"<h2>{heading}" in page, heading
    assert "<td>ncis</td>" in page and "<td>ncis(cap=100)</td>" in page  # label, parameters
    images = re.findall(r'<img src="([^"]+)"', page)
    assert len(images) >= 2 and all((out / name).is_file() for name in images)
    assert not re.findall(r'(?:src|href)="(?:https?:)?//', page)


@pytest.mark.slow
def test_the_demo_leaves_no_figure_for_a_notebook_to_show_unasked():
    from offeval_reports.demo import run_demo

    result = run_demo(n_trajectories=3_000, n_per_cell=2_000, n_policies=4, progress=False)
    assert result.sections[0].figures  # the report's figures exist, unseen until written
    assert not plt.get_fignums()


MAPPING = "--map trajectory=session --map reward=stream".split()


@pytest.mark.slow
def test_importing_the_report_code_leaves_the_users_matplotlib_backend_alone():
    code = (
        "import matplotlib, offeval_reports.demo_report, offeval.cli.shell; "
        "print(matplotlib.get_backend())"
    )
    env = {**os.environ, "MPLBACKEND": "svg"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.strip() == "svg", out.stderr


def test_evaluate_report_on_a_log_without_ground_truth(user_log, tmp_path, capsys):
    report = tmp_path / "report"
    policies = "--policy a=pi_p01 --policy b=pi_p02 --policy c=pi_p03".split()
    estimators = "--estimator ncis:cap=50 --estimator is --baseline a".split()
    args = [*MAPPING, "--map", "propensity=mu", *policies, *estimators, "--quiet"]
    assert main(["evaluate", str(user_log), *args, "--report", str(report)]) == 0
    page = (report / "report.html").read_text()
    for heading in (
        "Estimates",
        "Paired significance grid: is",
        "Weight diagnostics",
        "Importance weights",
        "Which policies deserve an online test",  # the decision plugin's section
        "How this report was made",
    ):
        assert f"<h2>{heading}" in page, heading
    assert "offeval evaluate" in page and "--report" in page  # the command as typed
    images = re.findall(r'<img src="([^"]+)"', page)
    assert len(images) >= 4 and all((report / name).is_file() for name in images)
    assert not re.findall(r'(?:src|href)="(?:https?:)?//', page)  # nothing from the network
    assert (report / "report.md").read_text().startswith("# offeval evaluation report")
