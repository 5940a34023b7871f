"""Start-up of the core alone: ``offeval --help`` and argument mistakes import no numerical
library, the lazily built command line says what the fully built one says, components
registered by reference (:class:`Deferred`) and collected kind by kind behave as if eager,
the plugin API's names, imported on first use, are its modules' objects, and intervals and
p-values computed without scipy.stats are scipy.stats' numbers.

No timing here (``benchmarks/startup_benchmark.py`` times it); with the built-in plugins:
tests/plugins/test_startup_builtins.py.
"""

from __future__ import annotations

import subprocess
import sys
from importlib import import_module
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from startup_checks import beyond_packages, imported_after

import offeval.plugin
import offeval.registry.manager as manager
from offeval import hookimpl
from offeval.cli.shell import CORE_COMMANDS, build_parser, command_named, main
from offeval.errors import RegistryError
from offeval.plugin import Deferred, lazy_names
from offeval.registry.manager import Component, Registry
from offeval.stats.inference import interval, p_value

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    "argv",
    [["--help"], [], ["nosuch"], ["--bogus"], ["plugins", "--bogus"], ["plugins", "--help"]],
    ids=["help", "no command", "unknown command", "unknown option", "plugins", "plugins help"],
)
def test_help_and_mistakes_before_a_command_runs_import_no_numerical_library(argv):
    done = imported_after(argv)
    assert done["code"] in (0, 2)
    assert done["heavy"] == [] and done["plugins"] == []


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["evaluate"], "the following arguments are required: log"),
        (["evaluate", "--help"], ""),
        (["evaluate", "log.csv", "--chunk-rows", "0"], "--chunk-rows: 0 is not >= 1"),
        (["evaluate", "log.csv", "--decimal", ";"], "--decimal: invalid choice: ';'"),
        (["evaluate", "log.csv", "--level", "high"], "--level: invalid float value: 'high'"),
    ],
    ids=["no log", "help", "chunk rows", "decimal", "level"],
)
def test_evaluates_argument_mistakes_import_no_numerical_library(argv, message):
    """The command's arguments are declared in a module of its own (offeval.cli.evaluate);
    reading, checking and evaluating the log (offeval.cli.evaluate_run) is not imported."""
    done = imported_after(argv, then="assert 'offeval.cli.evaluate_run' not in sys.modules")
    assert done["code"] == (0 if "--help" in argv else 2)
    assert message in done["err"] and "Traceback" not in done["err"]
    assert done["heavy"] == [] and beyond_packages(done["plugins"]) == []


@pytest.mark.parametrize("name", ["evaluate", "plugins"])
def test_a_commands_help_is_the_same_built_alone_or_with_every_other(name, capsys):
    sub = build_parser()._subparsers._group_actions[0].choices[name]
    assert main([name, "--help"]) == 0
    assert capsys.readouterr().out == sub.format_help()


def test_a_pending_command_asked_to_parse_fills_itself():
    """Should the command line name a command it was not built for, that command still
    parses its arguments (only which commands are imported beforehand changes)."""
    parser = build_parser(argv=["--help"])
    args = parser.parse_args(["plugins", "estimator", "--name", "ips"])
    assert args.command == "plugins" and args.kind == "estimator" and args.name == "ips"
    assert args.func.__self__.__class__ is CORE_COMMANDS["plugins"].resolve()


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        (["metrics", "run", "qrels"], "metrics"),
        (["-h"], None),
        (["--help", "demo"], "demo"),
        (["--", "compare"], "compare"),
        (["-5"], "-5"),  # argparse takes a negative number for a positional
        (["-"], "-"),
        ([], None),
    ],
)
def test_the_command_a_line_names_is_its_first_positional_word(argv, named):
    assert command_named(argv) == named


def test_core_commands_map_names_to_their_classes_imported_on_resolve():
    from offeval.cli import evaluate, plugins

    assert list(CORE_COMMANDS) == ["evaluate", "plugins"]
    assert "evaluate" in CORE_COMMANDS and "metrics" not in CORE_COMMANDS
    assert CORE_COMMANDS["evaluate"].resolve() is evaluate.EvaluateCommand
    assert CORE_COMMANDS["plugins"].resolve() is plugins.PluginsCommand
    for ref in CORE_COMMANDS.values():
        assert ref.help == ref.resolve().help


# -- Deferred: a component registered by reference -------------------------------------------


class Described:
    """A command whose help is its own."""

    help = "the real help"

    def add_arguments(self, parser):
        """Nothing."""

    def run(self, args):
        """Nothing."""
        return 0


class LazyCommands:
    """Registers commands by reference: one right, one whose help differs, one missing."""

    @hookimpl
    def register_commands(self, register):
        here = __name__
        register("right", Deferred(f"{here}:Described", help="the real help"))
        register("wrong-help", Deferred(f"{here}:Described", help="another help"))
        register("missing", Deferred(f"{here}:Nowhere", help="not there"))


def test_a_deferred_component_is_imported_when_its_factory_is_read():
    registry = Registry(entry_points=False)
    registry.add_plugin(LazyCommands(), "lazy")
    right = registry.get("command", "right")
    assert right.deferred is not None and right.deferred.help == "the real help"
    assert right.factory is Described and right.deferred.resolve() is Described
    assert right == Component("command", "right", Described, "lazy")
    with pytest.raises(RegistryError, match=r"Nowhere"):
        registry.get("command", "missing").factory  # noqa: B018
    with pytest.raises(RegistryError, match=r"its help differ from what its registration"):
        registry.get("command", "wrong-help").factory  # noqa: B018


def test_a_deferred_command_that_cannot_be_built_is_left_out_as_a_failure(monkeypatch, capsys):
    registry = Registry(entry_points=False)
    registry.add_plugin(LazyCommands(), "lazy")
    monkeypatch.setattr(manager, "_default", registry)
    assert main(["right"]) == 0
    assert main(["wrong-help"]) == 2
    assert "invalid choice: 'wrong-help'" in capsys.readouterr().err
    (failure,) = registry.failures
    assert failure.plugin == "lazy" and failure.stage == "command"
    assert "wrong-help: RegistryError" in failure.reason


@pytest.mark.parametrize("target", ["nocolon", ":Name", "module:", "bad module:Name"])
def test_a_deferred_target_must_name_a_module_and_an_attribute(target):
    with pytest.raises(RegistryError, match="is not 'package.module:Name'"):
        Deferred(target)


class BrokenEverywhere:
    """Fails while its estimators are collected and while its command is built."""

    @hookimpl
    def register_estimators(self, register):
        raise RuntimeError("estimators broke")

    @hookimpl
    def register_commands(self, register):
        register("broken", BrokenCommand)


class BrokenCommand(Described):
    """A command that cannot be built."""

    def __init__(self):
        raise RuntimeError("command broke")


def test_failures_keep_the_order_of_a_full_load_though_kinds_are_collected_lazily(monkeypatch):
    """Collecting the estimators (not needed for the help) still comes before the command's
    failure, as when every kind was collected at load."""
    monkeypatch.delenv(manager.ALLOW_ENV)
    monkeypatch.setattr(
        manager, "entry_points", lambda group: [FakeEntryPoint("broken", BrokenEverywhere())]
    )
    registry = Registry()
    build_parser(registry, argv=["--help"])
    assert [(f.stage, f.reason.split(": ")[-1]) for f in registry.failures] == [
        ("register_estimators", "estimators broke"),
        ("command", "command broke"),
    ]


class FakeEntryPoint:
    """An installed plugin, as importlib.metadata lists it."""

    def __init__(self, name, plugin):
        self.name, self._plugin, self.dist = name, plugin, None

    def load(self):
        """The plugin object."""
        return self._plugin


# -- names imported on first use --------------------------------------------------------------


def _plugin_api_modules() -> dict[str, str]:
    return {name: where for where, names in offeval.plugin._WHERE.items() for name in names}


def test_the_plugin_api_is_declared_once():
    """Its one list of names and modules is ``__all__``: each name once, none elsewhere."""
    names = [name for names in offeval.plugin._WHERE.values() for name in names]
    assert sorted(names) == sorted(set(names)) == offeval.plugin.__all__


def test_each_plugin_api_name_is_the_object_of_its_module():
    for name, module in _plugin_api_modules().items():
        source = import_module(module)
        expected = getattr(source, name, None) or import_module(f"{module}.{name}")
        assert getattr(offeval.plugin, name) is expected, name


def test_a_name_the_plugin_api_does_not_declare_is_an_attribute_error():
    with pytest.raises(AttributeError, match="has no attribute 'evalaute'"):
        offeval.plugin.evalaute  # noqa: B018


def test_lazy_names_refuse_a_module_of_another_package():
    with pytest.raises(RegistryError, match=r"\['offeval_ranking.estimators'\] are not modules"):
        lazy_names("offeval_importance", {"offeval_ranking.estimators": ("DCG",)})


# -- intervals and p-values without scipy.stats ------------------------------------------------

DEGREES = [None, 0.5, 1, 2, 3.5, 10, 1e3, 1e8, np.inf, 0, -1, np.nan]
STATISTICS = [-np.inf, -40, -5, -1.96, -1e-9, 0.0, 1e-9, 0.3, 2.5, 8, 40, np.inf, np.nan]


def same(ours, theirs) -> bool:
    """Equal values (nan where nan), the same shape and the same type."""
    return type(ours) is type(theirs) and np.array_equal(
        np.asarray(ours), np.asarray(theirs), equal_nan=True
    )


@pytest.mark.parametrize("df", DEGREES)
def test_p_values_are_scipy_stats_norm_and_t_without_importing_it(df):
    from scipy import stats

    dist = stats.norm if df is None else stats.t(df)
    for z in [*STATISTICS, np.array(STATISTICS)]:
        assert same(p_value(z, "two-sided", df), 2 * dist.sf(np.abs(z))), z
        assert same(p_value(z, "greater", df), dist.sf(z)), z
        assert same(p_value(z, "less", df), dist.cdf(z)), z


@pytest.mark.parametrize("df", DEGREES)
def test_intervals_are_scipy_stats_norm_and_t_without_importing_it(df):
    from scipy import stats

    for level in (0.5, 0.9, 0.95, 0.99, 0.999999, 1e-9):
        tail = (1 + level) / 2
        q = stats.norm.ppf(tail) if df is None else stats.t.ppf(tail, df)
        for value, se in ((1.0, 0.2), (np.array([1.0, -2.0]), np.array([0.1, np.nan]))):
            low, high = interval(value, se, level, df)
            assert same(low, value - q * se) and same(high, value + q * se), (level, value)


def test_intervals_with_degrees_per_row_are_scipy_stats_t():
    """As the IR plugin computes them: a frame's columns, degrees of freedom per row."""
    from scipy import stats

    frame = pd.DataFrame({"d": [0.1, 0.2, -0.3, 0.05], "se": [0.1, 0.0, 0.2, 0.01]})
    df = pd.Series([0, 1, 2, 49])
    low, high = interval(frame["d"], frame["se"], 0.9, df=df)
    q = stats.t.ppf(0.95, df)
    pd.testing.assert_series_equal(low, frame["d"] - q * frame["se"])
    pd.testing.assert_series_equal(high, frame["d"] + q * frame["se"])


def test_the_inference_module_imports_no_scipy_stats():
    code = (
        "import sys\nfrom offeval.stats.inference import interval, p_value\n"
        "interval(1.0, 0.5, df=9), p_value(2.0, df=9), p_value(2.0)\n"
        "print('scipy.stats' in sys.modules)"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert run.stdout.strip() == "False"
