"""The command line with the built-in plugins: evaluate with their estimators, `offeval
plugins` listing them, their mistakes as one line, plugin commands that try to take a
built-in's name."""

from __future__ import annotations

import pandas as pd
import pytest
from cli_checks import one_line_error

import offeval.registry.manager as registry_module
from offeval import Registry, hookimpl
from offeval.cli.shell import main

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


MISTAKES = {
    "bad estimator parameter": (["--estimator", "ncis:cap=-1"], "cap must be a positive"),
    "estimator that cannot run here": (["--estimator", "dcg"], r"--estimator dcg: .*exposure"),
}


@pytest.mark.parametrize("case", MISTAKES.values(), ids=list(MISTAKES))
def test_evaluate_mistakes_are_one_line(user_log, capsys, case):
    extra, *patterns = case
    one_line_error(capsys, [*EVALUATE[:1], str(user_log), *EVALUATE[1:], *extra], *patterns)


#: ``offeval ARGS`` whose interpreter aborts as it shuts down (SIGABRT, as pyarrow's thread
#: pools sometimes do: apache/arrow#34314, "terminate called without an active exception").
ABORTING_AT_SHUTDOWN = (
    "import atexit, os, sys; atexit.register(os.abort); "
    "from offeval.cli.shell import main; raise SystemExit(main())"
)


@pytest.mark.parametrize(
    ("extra", "code"), [([], 0), (["--level", "95"], 2)], ids=["a run", "a mistake"]
)
def test_the_exit_status_is_the_commands_whatever_happens_at_shutdown(user_log, extra, code):
    """Once the command is done (pyarrow loaded: it read the log), nothing the interpreter
    does as it shuts down changes the exit status or loses the output."""
    import subprocess
    import sys

    argv = ["evaluate", str(user_log), "--quiet", *MAPPING, "--map", "propensity=mu"]
    argv += ["--policy", "a=pi_p01", "--estimator", "ips", *extra]
    done = subprocess.run(
        [sys.executable, "-c", ABORTING_AT_SHUTDOWN, *argv], capture_output=True, text=True
    )
    assert done.returncode == code, done.stderr
    if code == 0:
        assert done.stdout.startswith("policy estimator") and " a       ips " in done.stdout
    else:
        assert done.stderr.startswith("offeval: error: ") and done.stderr.count("\n") == 1


def _options(command: str) -> dict[str, str | None]:
    """Every option of ``offeval COMMAND`` (its longest spelling) and its help text."""
    from offeval.cli.shell import build_parser

    parser = build_parser(argv=[command])
    sub = next(a for a in parser._actions if a.dest == "command").choices[command]
    return {max(a.option_strings or [a.dest], key=len): a.help for a in sub._actions}


@pytest.mark.parametrize("command", ["evaluate", "plugins", "new-plugin", "decide"])
def test_every_option_says_what_it_is_for(command):
    silent = [option for option, text in _options(command).items() if not text]
    assert silent == []


def test_map_names_every_role_a_log_understands():
    from offeval.data.log import ROLES

    text = _options("evaluate")["--map"]
    assert "..." not in text
    assert text.startswith(f"column of a role ({', '.join(ROLES)})")


@pytest.mark.parametrize("command", ["evaluate", "plugins", "new-plugin", "decide", "demo"])
def test_each_commands_help_opens_with_what_it_does(command, capsys):
    """``offeval COMMAND --help`` says first what ``offeval --help`` says of the command."""
    from offeval.cli.shell import build_parser

    commands = next(a for a in build_parser(argv=[])._actions if a.dest == "command")
    summary = next(c.help for c in commands._choices_actions if c.dest == command)
    assert main([command, "--help"]) == 0
    description = capsys.readouterr().out.split("\n\n")[1]
    assert " ".join(description.split()) == summary


def test_plugins_lists_one_kind_or_the_names_holding_a_word(capsys):
    assert main(["plugins", "examination"]) == 0
    lines = [line for line in capsys.readouterr().out.splitlines() if " from " in line]
    assert lines and all(line.split()[0] == "examination" for line in lines)
    assert main(["plugins", "--name", "dr"]) == 0
    names = [line.split()[1] for line in capsys.readouterr().out.splitlines() if "from" in line]
    assert "dr" in names and "sndr" in names and all("dr" in name for name in names)
    assert main(["plugins", "estimator", "--name", "snips"]) == 0
    assert [line.split()[:2] for line in capsys.readouterr().out.splitlines()] == [
        ["estimator", "snips"]  # at its defaults: no parameters line
    ]
    one_line_error(
        capsys,
        ["plugins", "estimater"],
        r"no kind 'estimater' \(did you mean estimator\?\); the kinds: estimator, ",
    )
    one_line_error(
        capsys, ["plugins", "--name", "zzz"], r"--name zzz: no component's name holds 'zzz'"
    )
