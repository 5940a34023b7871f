"""The command line without plugins: evaluate on a user's file with the reference estimators,
mistakes as one line, plugin commands isolated, report section files (the demo, the built-in
estimators and commands are in tests/plugins/reports/test_demo_cli.py and
tests/plugins/test_cli_builtins.py)."""

from __future__ import annotations

import re

import pandas as pd
import pytest
from cli_checks import one_line_error
from reference_estimators import IS

import offeval.registry.manager as registry_module
from offeval import OffevalError, Registry, hookimpl
from offeval.cli.shell import main

MAPPING = "--map trajectory=session --map reward=stream".split()


def test_evaluate_out_csvs_are_spreadsheet_safe(user_log, tmp_path, reference_registry):
    out = tmp_path / "eval"
    policies = ["--policy", "@SUM(1+1)=pi_p01", "--policy", "b=pi_p02"]
    args = [*MAPPING, "--map", "propensity=mu", *policies, "--estimator", "is"]
    assert main(["evaluate", str(user_log), *args, "--out", str(out), "--quiet"]) == 0
    for name in ("estimates.csv", "pairs_is.csv"):
        text = (out / name).read_text()
        assert "'@SUM(1+1)" in text and ",@SUM" not in text, name
    table = pd.read_csv(out / "estimates.csv")
    assert pd.api.types.is_float_dtype(table["value"])  # numbers stay numbers


def test_evaluate_reports_a_missing_column_cleanly(user_log, capsys, reference_registry):
    code = main(["evaluate", str(user_log), *MAPPING, "--policy", "a=pi_p01", "--quiet"])
    assert code == 2
    assert "column 'propensity'" in capsys.readouterr().err


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


def test_an_unsorted_parquet_file_streamed_is_one_line(
    tmp_path, user_log, capsys, reference_registry
):
    path = tmp_path / "log.parquet"
    pd.read_csv(user_log).sample(frac=1.0, random_state=0).to_parquet(path)
    argv = ["evaluate", str(path), *EVALUATE[1:], "--stream", "--chunk-rows", "500"]
    one_line_error(capsys, argv, "appear in more than one chunk", "sort")


def test_debug_shows_the_traceback_and_internal_errors_are_one_line(user_log, capsys, monkeypatch):
    with pytest.raises(OffevalError, match="confidence level"):
        main(["--debug", *EVALUATE[:1], str(user_log), *EVALUATE[1:], "--level", "95"])

    def broken(*args, **kwargs):
        raise ZeroDivisionError("a bug")

    monkeypatch.setattr("offeval.cli.plugins.get_registry", broken)
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


def test_a_plugin_command_that_fails_to_build_is_isolated(capsys, monkeypatch):
    reg = Registry()
    reg.add_plugin(BrokenCommandPlugin(), "brokencmd")
    monkeypatch.setattr(registry_module, "_default", reg)
    assert main(["plugins"]) == 0
    out = capsys.readouterr().out
    assert "brokencmd (command): broken: RuntimeError: cannot build" in out
    one_line_error(capsys, ["broken"], "invalid choice: 'broken'")


class HelloCommand:
    """Say hello."""

    help = "say hello"

    def add_arguments(self, parser):
        """No arguments."""

    def run(self, args):
        """Nothing to do."""


class HelloPlugin:
    @hookimpl
    def register_commands(self, register):
        register("hello", HelloCommand)


def test_offeval_plugins_lists_the_cores_commands_among_the_plugins(capsys, monkeypatch):
    reg = Registry(entry_points=False)
    reg.add_plugin(HelloPlugin(), "greet")
    monkeypatch.setattr(registry_module, "_default", reg)
    assert main(["plugins"]) == 0
    lines = [line.split() for line in capsys.readouterr().out.splitlines()]
    commands = [words[1:4] for words in lines if words[:1] == ["command"]]
    assert commands == [
        ["evaluate", "from", "offeval"],
        ["hello", "from", "greet"],
        ["plugins", "from", "offeval"],
    ]


def test_section_files_are_safe_names_and_never_overwrite_each_other(tmp_path):
    from matplotlib.figure import Figure

    from offeval.registry.sections import MarkdownDocument, ReportSection

    def section(title):
        frame = pd.DataFrame({"x": [1.0]}, index=pd.Index(["a"], name="policy"))
        return ReportSection(title, "text", {"t/1": frame}, {"a/b #?%": Figure()})

    doc = MarkdownDocument("report")
    doc.sections([section("Same title"), section("Same title")], tmp_path)
    images = re.findall(r"!\[[^]]*\]\(([^)]+)\)", doc.markdown())
    assert images == ["same_title_a_b.png", "same_title_a_b_2.png"]
    tables = sorted(p.name for p in tmp_path.glob("*.csv"))
    assert tables == ["same_title_t_1.csv", "same_title_t_1_2.csv"]


def test_evaluate_a_csv_gives_the_brute_force_values(user_log, tmp_path, reference_registry):
    out = tmp_path / "eval"
    policies = "--policy a=pi_p01 --policy b=pi_p02 --baseline b".split()
    args = [*MAPPING, "--map", "propensity=mu", *policies, "--estimator", "is"]
    assert main(["evaluate", str(user_log), *args, "--out", str(out), "--quiet"]) == 0
    table = pd.read_csv(out / "estimates.csv").set_index("policy")
    log = pd.read_csv(user_log)
    for policy, column in (("a", "pi_p01"), ("b", "pi_p02")):
        expected = (log["stream"] * log[column] / log["mu"]).mean()
        assert table.loc[policy, "value"] == pytest.approx(expected, rel=1e-12)
    assert table.loc["b", "value"] == pytest.approx(log["stream"].mean(), rel=1e-12)  # on-policy
    relative = table.loc["a", "value"] / table.loc["b", "value"]
    assert table.loc["a", "relative_value"] == pytest.approx(relative, rel=1e-12)


def test_report_without_a_writer_names_the_allow_list_that_left_it_out(
    user_log, tmp_path, capsys, monkeypatch
):
    argv = [*EVALUATE[:1], str(user_log), *EVALUATE[1:], "--report", tmp_path / "report"]
    monkeypatch.setenv("OFFEVAL_PLUGINS", "importance")
    registry_module.reset_registry()
    one_line_error(
        capsys,
        argv,
        "--report .*: no report writer is loaded "
        r"\(OFFEVAL_PLUGINS='importance' loads only the plugins it names; offeval plugins lists",
    )
    monkeypatch.delenv("OFFEVAL_PLUGINS")
    monkeypatch.setattr(registry_module, "_default", Registry(entry_points=False))
    one_line_error(
        capsys,
        argv,
        r"--report .*: no report writer is installed \(a plugin registers one with the hook "
        "register_reports; offeval plugins lists what is installed",
    )
    assert not (tmp_path / "report").exists()


def test_an_unknown_command_names_the_allow_list_that_may_leave_its_plugin_out(capsys, monkeypatch):
    monkeypatch.setenv("OFFEVAL_PLUGINS", "importance,simulation")
    registry_module.reset_registry()
    one_line_error(
        capsys,
        ["demo"],
        r"invalid choice: 'demo' \(choose from .*\); OFFEVAL_PLUGINS='importance,simulation' loads "
        r"only the plugins it names \(see offeval --help\)$",
    )
    monkeypatch.delenv("OFFEVAL_PLUGINS")
    monkeypatch.setattr(registry_module, "_default", Registry(entry_points=False))
    line = one_line_error(capsys, ["demo"], r"invalid choice: 'demo' \(choose from .*\)")
    assert "OFFEVAL_PLUGINS" not in line


class TaggedIS(IS):
    """Importance sampling with a text parameter, to give labels that read alike in a file name."""

    name = "tagged"

    def __init__(self, tag: str = ""):
        self.tag = tag


class TaggedPlugin:
    @hookimpl
    def register_estimators(self, register):
        register("tagged", TaggedIS)


def test_estimators_whose_labels_read_alike_get_a_pairs_file_each(
    user_log, tmp_path, capsys, reference_registry
):
    reference_registry.add_plugin(TaggedPlugin(), "tagged")
    out = tmp_path / "eval"
    specs = ["--estimator", "tagged:tag=q.hat", "--estimator", "tagged:tag=q_hat"]
    argv = [*EVALUATE[:1], str(user_log), *EVALUATE[1:], "--policy", "b=pi_p03", *specs]
    assert main([*argv, "--out", str(out)]) == 0
    files = sorted(p.name for p in out.glob("pairs_*.csv"))
    assert files == ["pairs_tagged_tag_q_hat_.csv", "pairs_tagged_tag_q_hat__2.csv"]
    printed = capsys.readouterr().out
    assert "pairs_tagged_tag_q_hat__2.csv holds tagged(tag=q_hat)" in printed
    log = pd.read_csv(user_log)
    for name in files:  # each estimator's own pairs (the same values: both are IS)
        pairs = pd.read_csv(out / name)
        weights = log["pi_p01"] / log["mu"] - log["pi_p03"] / log["mu"]
        assert pairs["difference"].iloc[0] == pytest.approx((log["stream"] * weights).mean())
