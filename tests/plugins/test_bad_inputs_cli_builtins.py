"""Bad inputs at the command line's edges with the built-in plugins: ``offeval evaluate`` with
their estimators and report writer, ``offeval demo``'s folders, estimator names typed wrong
(the core's command-line bad inputs are in tests/core/test_bad_inputs_cli.py)."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from cli_checks import MAPPING, POLICIES, USER_NAMES, evaluate_args, one_line_error, write_csv

from offeval.cli.shell import main


@pytest.fixture()
def user_log(tmp_path, frame):
    return write_csv(frame, tmp_path / "log.csv")


@pytest.fixture(scope="module")
def frame(env):
    log = env.simulate(env.logging_policy(), 3_000, seed=2)
    out = log.frame.rename(columns=USER_NAMES)
    for p in env.candidate_policies(2):
        out[f"pi_{p.name}"] = p.probabilities(log.frame)
    return out


def test_a_rerun_into_the_same_folder_leaves_no_file_of_the_earlier_run(user_log, tmp_path, capsys):
    out = tmp_path / "results"
    two = ["--estimator", "is", "--estimator", "ncis:cap=50"]
    assert main(evaluate_args(user_log, *two, "--out", str(out))) == 0
    assert (out / "pairs_ncis_cap_50_.csv").is_file()
    assert "replaced" not in capsys.readouterr().err  # nothing was there to replace
    assert main(evaluate_args(user_log, "--estimator", "is", "--out", str(out))) == 0
    assert sorted(p.name for p in out.glob("pairs_*.csv")) == ["pairs_is.csv"]
    assert len(json.loads((out / "summaries.json").read_text())["summaries"]) == 1
    assert set(pd.read_csv(out / "estimates.csv")["estimator"]) == {"is"}
    assert capsys.readouterr().err.strip() == f"replaced the earlier files in {out}/"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_a_failure_while_writing_keeps_the_earlier_folder_whole(
    user_log, tmp_path, capsys, monkeypatch
):
    out = tmp_path / "results"
    assert main(evaluate_args(user_log, "--estimator", "is", "--out", str(out))) == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    # save_summaries runs after estimates.csv is written
    monkeypatch.setattr("offeval.cli.evaluate_run.save_summaries", interrupted)
    argv = evaluate_args(user_log, "--estimator", "ncis", "--out", str(out))
    assert main(argv) == 130
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["log.csv", "results"]


def test_a_failure_in_a_report_leaves_no_half_written_report(user_log, tmp_path, monkeypatch):
    report = tmp_path / "report"

    def disk_full(self, out):
        (out / "report.md").write_text("# cut")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("offeval_reports.document.ReportDocument.write", disk_full)
    assert main(evaluate_args(user_log, "--estimator", "is", "--report", str(report))) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["log.csv"]


def test_out_and_report_may_share_a_folder_but_not_nest(user_log, tmp_path, capsys):
    both = tmp_path / "both"
    argv = evaluate_args(user_log, "--estimator", "is", "--out", str(both), "--report", str(both))
    assert main(argv) == 0
    assert (both / "estimates.csv").is_file() and (both / "report.html").is_file()
    argv = evaluate_args(user_log, "--out", str(both), "--report", str(both / "report"))
    one_line_error(capsys, argv, "one is inside the other")


@pytest.mark.slow
def test_a_demo_rerun_replaces_its_report_folder(tmp_path, capsys):
    out = tmp_path / "report"
    argv = ["demo", "--out", str(out), "--quiet", "--trajectories", "2000"]
    argv += ["--per-cell", "1000", "--policies", "3"]
    assert main(argv) == 0
    (out / "notes_from_the_first_run.txt").write_text("stale")
    capsys.readouterr()
    assert main(argv) == 0
    assert capsys.readouterr().err.strip() == (
        f"replaced the earlier files in {out}/; deleted files offeval did not write: "
        "notes_from_the_first_run.txt"
    )
    assert not (out / "notes_from_the_first_run.txt").exists()
    assert (out / "report.html").is_file() and sorted(p.name for p in tmp_path.iterdir()) == [
        "report"
    ]


def test_the_demo_checks_its_folder_before_simulating(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr("offeval_reports.demo.run_demo", lambda **kw: pytest.fail("simulated"))
    (tmp_path / "data.csv").write_text("x\n1\n")
    one_line_error(capsys, ["demo", "--out", str(tmp_path), "--quiet"], "--force")


def test_a_mistyped_estimator_is_refused_before_the_log_is_read(user_log, capsys, no_reading):
    argv = evaluate_args(user_log, "--estimator", "snipz")
    one_line_error(capsys, argv, r"no estimator named 'snipz' \(did you mean [^)]*\bsnips\?\)")
    argv = evaluate_args(user_log, "--estimator", "ncis:capp=3")
    one_line_error(capsys, argv, "no parameter capp \\(did you mean cap\\?\\)")


def test_hints_name_command_line_options_not_python_calls(frame, tmp_path, capsys):
    path = tmp_path / "log.csv"
    frame.rename(columns={"item": "article"}).to_csv(path, index=False)
    argv = ["evaluate", str(path), "--quiet", *MAPPING, *POLICIES]
    line = one_line_error(capsys, argv, "column 'item'", "--map item=COLUMN")
    assert "mapping=" not in line
    argv = [
        *evaluate_args(tmp_path / "log.csv"),
        "--map",
        "item=article",
        "--estimator",
        "pointwise_ncis",
    ]
    line = one_line_error(capsys, argv, "candidate table", "--candidates FILE")
    assert "from_frame" not in line and "InteractionLog" not in line


def test_evaluate_without_estimator_runs_no_alias_beside_its_original(user_log, tmp_path):
    out = tmp_path / "all"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(evaluate_args(user_log, "--out", str(out))) == 0
    labels = set(pd.read_csv(out / "estimates.csv")["estimator"])
    assert {"is", "cis", "snips", "ncis"} <= labels
    assert not labels & {"ips", "clipped_ips"}


def test_a_streamed_report_says_why_it_has_no_weight_histogram(frame, tmp_path):
    path = tmp_path / "log.parquet"
    frame.to_parquet(path, index=False)
    report = tmp_path / "report"
    argv = evaluate_args(path, "--estimator", "is", "--report", str(report), "--stream")
    assert main(argv) == 0
    page = (report / "report.md").read_text()
    section = page.split("## Importance weights", 1)[1].split("\n## ", 1)[0]
    assert "--stream" in section and not (report / "weights.png").exists()


@pytest.mark.slow
def test_a_warning_during_a_command_is_one_line_on_stderr(frame, tmp_path):
    """Run as a user runs it (pytest records warnings itself, so a process of its own)."""
    path = tmp_path / "log.parquet"
    table = pa.Table.from_pandas(frame, preserve_index=False)
    pq.write_table(table.replace_schema_metadata({b"pandas": b"{not json"}), path)
    argv = evaluate_args(path, "--estimator", "is")
    done = subprocess.run(
        [sys.executable, "-m", "offeval", *argv], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith(f"offeval: warning: {path}: its pandas metadata is broken")


def test_an_estimator_needing_an_unmapped_role_says_which_map_to_add(user_log, capsys):
    argv = ["evaluate", user_log, "--quiet", "--map", "trajectory=session"]
    argv += ["--map", "reward=stream", *POLICIES, "--estimator", "ips"]
    line = one_line_error(capsys, argv, "column 'propensity'", "--map propensity=COLUMN")
    assert "mapping=" not in line


def test_an_estimator_needing_a_ranking_says_to_give_the_policy_with_rerank(user_log, capsys):
    argv = [*evaluate_args(user_log), "--estimator", "dcg"]
    line = one_line_error(capsys, argv, "no exposure", r"--rerank a=SCORE_COLUMN")
    assert "RerankPolicy" not in line


def test_one_policy_gets_no_pairwise_files_or_grids_and_a_sentence_saying_why(
    user_log, tmp_path, capsys
):
    out, report = tmp_path / "out", tmp_path / "report"
    argv = ["evaluate", user_log, "--quiet", *MAPPING, "--policy", "a=pi_p01"]
    argv += ["--estimator", "is", "--out", out, "--report", report]
    assert main([str(arg) for arg in argv]) == 0
    said = capsys.readouterr().out
    assert not list(out.glob("pairs_*")) and not list(report.glob("grid_*"))
    assert "no pairs_*.csv (paired comparisons need two or more policies)" in said
    page = (report / "report.md").read_text()
    assert "1 policy, 1 estimator, 3,000 trajectories" in page
    assert "corrected by" not in page and "Paired comparisons need two or more policies" in page
    two = tmp_path / "two"
    assert (
        main([str(a) for a in evaluate_args(user_log, "--estimator", "is", "--report", two)]) == 0
    )
    page = (two / "report.md").read_text()
    assert "2 policies, 1 estimator," in page and "corrected by holm" in page
    assert list(two.glob("grid_*.png"))


@pytest.mark.slow
def test_a_default_run_says_in_its_outputs_which_estimators_it_skipped(user_log, tmp_path, capsys):
    """Without --estimator, the estimators that cannot run here are skipped: the printed note,
    --out (skipped_estimators.csv) and --report (a section) all say which, and why."""
    out, report = tmp_path / "out", tmp_path / "report"
    argv = ["evaluate", user_log, "--map", "trajectory=session", "--map", "reward=stream"]
    argv += ["--map", "propensity=mu", "--policy", "a=pi_p01", "--policy", "b=pi_p02"]
    assert main([str(a) for a in [*argv, "--quiet", "--out", out, "--report", report]]) == 0
    note = next(line for line in capsys.readouterr().out.splitlines() if "skipped" in line)
    skipped = pd.read_csv(out / "skipped_estimators.csv")
    assert len(skipped) > 0 and skipped["why"].str.len().gt(0).all()
    assert all(name in note for name in skipped["estimator"])  # the same ones as printed
    ran = set(pd.read_csv(out / "estimates.csv")["estimator"])
    assert not ran & set(skipped["estimator"])
    md = (report / "report.md").read_text()
    assert "Estimators not run" in md and all(name in md for name in skipped["estimator"])
