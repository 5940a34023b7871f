"""The command line: demo report, evaluate on a user's file, plugins, errors."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from cli_checks import one_line_error

import offeval.registry.manager as registry_module
from offeval import OffevalError, Registry, hookimpl
from offeval.cli.shell import main


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
    assert "| estimator | kendall_tau |" in text and "![estimates against truth" in text
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


def test_the_demo_leaves_no_figure_for_a_notebook_to_show_unasked():
    from offeval_reports.demo import run_demo

    result = run_demo(n_trajectories=3_000, n_per_cell=2_000, n_policies=4, progress=False)
    assert result.sections[0].figures  # the report's figures exist, unseen until written
    assert not plt.get_fignums()


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
    assert (table["ess_unit"] == "rows").all()  # ESS counts log rows, not sessions
    pairs = pd.read_csv(out / "pairs_ncis_cap_50_.csv")
    assert len(pairs) == 3 and pairs["p_adjusted"].between(0, 1).all()
    assert (pairs["relative_to"] == "a").all()  # differences of values relative to a


def test_evaluate_out_csvs_are_spreadsheet_safe(user_log, tmp_path):
    out = tmp_path / "eval"
    policies = ["--policy", "@SUM(1+1)=pi_p01", "--policy", "b=pi_p02"]
    args = [*MAPPING, "--map", "propensity=mu", *policies, "--estimator", "is"]
    assert main(["evaluate", str(user_log), *args, "--out", str(out), "--quiet"]) == 0
    for name in ("estimates.csv", "pairs_is.csv"):
        text = (out / name).read_text()
        assert "'@SUM(1+1)" in text and ",@SUM" not in text, name
    table = pd.read_csv(out / "estimates.csv")
    assert pd.api.types.is_float_dtype(table["value"])  # numbers stay numbers


def test_evaluate_reports_a_missing_column_cleanly(user_log, capsys):
    code = main(["evaluate", str(user_log), *MAPPING, "--policy", "a=pi_p01", "--quiet"])
    assert code == 2
    assert "column 'propensity'" in capsys.readouterr().err


def test_plugins_lists_components(capsys):
    assert main(["plugins"]) == 0
    out = capsys.readouterr().out
    assert "estimator    ncis" in out and "environment  default" in out
    lines = out.splitlines()
    switch = next(i for i, line in enumerate(lines) if "estimator    switch_dr " in line)
    assert lines[switch + 1].split("parameters: ")[1] == "tau=10.0, reward_model='reward_model'"
    for name in ("ips", "snips", "clipped_ips", "dm", "dr", "sndr", "dr_os", "pi", "iips", "rips"):
        assert f"estimator    {name} " in out, name


EVALUATE = ["evaluate", "--quiet", *MAPPING, "--map", "propensity=mu", "--policy", "a=pi_p01"]
MISTAKES = {
    "level as a percentage": (["--level", "95"], "confidence level", "95"),
    "level not a number": (["--level", "abc"], "--level: invalid float value: 'abc'"),
    "unknown baseline": (["--baseline", "zzz"], "--baseline 'zzz' is not one of the policies"),
    "map without =": (["--map", "session"], "--map 'session' is not key=value"),
    "unknown role": (
        ["--map", "sessions=session"],
        r"--map sessions=session: no role 'sessions'; the roles: trajectory, context, item,",
    ),
    "policy column absent": (["--policy", "b=pi_nope"], "'pi_nope'"),
    "unknown estimator": (["--estimator", "snipz"], "no estimator named 'snipz'"),
    "bad estimator parameter": (["--estimator", "ncis:cap=-1"], "cap must be a positive"),
    "estimator that cannot run here": (["--estimator", "dcg"], r"--estimator dcg: .*exposure"),
    "unknown correction": (["--correction", "magic"], "--correction 'magic'"),
    "chunk size zero": (["--chunk-rows", "0"], "--chunk-rows: 0 is not >= 1"),
    "repeated parameter": (["--estimator", "ncis:cap=1,cap=2"], "'cap' is given twice"),
}


@pytest.mark.parametrize("case", MISTAKES.values(), ids=list(MISTAKES))
def test_evaluate_mistakes_are_one_line(user_log, capsys, case):
    extra, *patterns = case
    one_line_error(capsys, [*EVALUATE[:1], str(user_log), *EVALUATE[1:], *extra], *patterns)


def test_options_are_checked_before_the_file_is_read(tmp_path, capsys):
    missing = str(tmp_path / "nope.csv")
    one_line_error(capsys, ["evaluate", missing, "--policy", "a=x", "--level", "95"], "level")
    one_line_error(capsys, ["evaluate", missing, "--policy", "a=x", "--baseline", "b"], "baseline")
    one_line_error(capsys, ["evaluate", missing, "--policy", "a=x"], "nope.csv: no such file")


def test_file_and_command_mistakes_are_one_line(tmp_path, user_log, capsys):
    one_line_error(capsys, ["evaluate", str(user_log), *MAPPING, "--quiet"], "target policy")
    (tmp_path / "out").write_text("a file")
    args = [*EVALUATE[1:], "--out", str(tmp_path / "out")]
    one_line_error(capsys, ["evaluate", str(user_log), *args], "exists and is not a folder")
    one_line_error(capsys, ["evaluate", str(tmp_path), "--policy", "a=x"], "is a directory")
    one_line_error(capsys, ["evalute"], "invalid choice: 'evalute'")
    one_line_error(capsys, ["metrics", "p.csv", "l.csv"], "p.csv, l.csv: no such file")
    one_line_error(capsys, ["metrics", "p.csv", str(user_log)], "^offeval: error: p.csv: no such")
    one_line_error(capsys, ["metrics", str(user_log), str(user_log), "--preset", "x"], "'x'")


def test_an_unsorted_parquet_file_streamed_is_one_line(tmp_path, user_log, capsys):
    path = tmp_path / "log.parquet"
    pd.read_csv(user_log).sample(frac=1.0, random_state=0).to_parquet(path)
    argv = ["evaluate", str(path), *EVALUATE[1:], "--stream", "--chunk-rows", "500"]
    one_line_error(capsys, argv, "appear in more than one chunk", "sort")


def test_debug_shows_the_traceback_and_internal_errors_are_one_line(user_log, capsys, monkeypatch):
    with pytest.raises(OffevalError, match="confidence level"):
        main(["--debug", *EVALUATE[:1], str(user_log), *EVALUATE[1:], "--level", "95"])

    def broken(*args, **kwargs):
        raise ZeroDivisionError("a bug")

    monkeypatch.setattr("offeval.cli.plugins._plugins", broken)
    one_line_error(
        capsys, ["plugins"], "internal error: ZeroDivisionError: a bug", "--debug", code=1
    )
    with pytest.raises(ZeroDivisionError):
        main(["plugins", "--debug"])  # --debug after the sub-command works too


class BrokenCommand:
    help = "never built"

    def __init__(self):
        raise RuntimeError("cannot build")

    def add_arguments(self, parser):
        """Never reached."""

    def run(self, args):
        """Never reached."""


class BrokenCommandPlugin:
    @hookimpl
    def register_commands(self, register):
        register("broken", BrokenCommand)


class Exits:
    help = "exits with a message"

    def add_arguments(self, parser):
        """No arguments."""

    def run(self, args):
        raise SystemExit("fatal: the plugin gave up")


class TakesEvaluate(Exits):
    help = "tries to take the core's evaluate command"


class TakesDemo(Exits):
    help = "tries to take the reports plugin's demo command"


class CommandPlugin:
    @hookimpl
    def register_commands(self, register):
        register("exits", Exits)
        register("evaluate", TakesEvaluate)
        register("demo", TakesDemo)


def test_plugin_commands_cannot_take_core_commands_and_exit_codes_are_kept(capsys, monkeypatch):
    reg = Registry()
    reg.add_plugin(CommandPlugin(), "cmds")
    monkeypatch.setattr(registry_module, "_default", reg)
    assert reg.get("command", "demo").plugin == "reports"  # a built-in's name stays its own
    (failure,) = reg.failures
    assert failure.plugin == "cmds" and "'demo'" in failure.reason
    one_line_error(capsys, ["exits"], "fatal: the plugin gave up", code=1)
    assert "the name is the core's" in str(reg.failures[-1])  # evaluate stays the core's
    assert main(["evaluate", "--help"]) == 0
    assert "--policy NAME=COLUMN" in capsys.readouterr().out  # the core's evaluate


def test_a_plugin_command_that_fails_to_build_is_isolated(capsys, monkeypatch):
    reg = Registry()
    reg.add_plugin(BrokenCommandPlugin(), "brokencmd")
    monkeypatch.setattr(registry_module, "_default", reg)
    assert main(["plugins"]) == 0
    out = capsys.readouterr().out
    assert "brokencmd (command): broken: RuntimeError: cannot build" in out
    one_line_error(capsys, ["broken"], "invalid choice: 'broken'")


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


def test_section_files_are_safe_names_and_never_overwrite_each_other(tmp_path):
    from matplotlib.figure import Figure

    from offeval.cli.document import ReportDocument
    from offeval.registry.sections import ReportSection

    def section(title):
        frame = pd.DataFrame({"x": [1.0]}, index=pd.Index(["a"], name="policy"))
        return ReportSection(title, "text", {"t/1": frame}, {"a/b #?%": Figure()})

    doc = ReportDocument("report")
    doc.sections([section("Same title"), section("Same title")], tmp_path)
    page = doc.html()
    images = re.findall(r'<img src="([^"]+)"', page)
    assert images == ["same_title_a_b.png", "same_title_a_b_2.png"]
    tables = sorted(p.name for p in tmp_path.glob("*.csv"))
    assert tables == ["same_title_t_1.csv", "same_title_t_1_2.csv"]
