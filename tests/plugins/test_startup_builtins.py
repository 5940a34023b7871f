"""Start-up with the built-in plugins: ``offeval --help`` imports none of their modules nor
any numerical library, a plugin command's argument mistakes import the module declaring
its arguments alone (no numerical library), the help built from the references is the help
of every command built, and every plugin's public names (now imported on first use) are
still there.

No timing here: ``benchmarks/startup_benchmark.py`` times it.
"""

from __future__ import annotations

import json
import pkgutil
import subprocess
import sys
from importlib import import_module
from pathlib import Path

import pytest
from startup_checks import beyond_packages, imported_after

import offeval_ir.measure as measure
from offeval import get_registry
from offeval.cli.shell import build_parser, main

ROOT = Path(__file__).resolve().parents[2]
#: Every built-in plugin package.
PLUGINS = sorted(p.name for p in (ROOT / "plugins").glob("offeval_*") if p.is_dir())


@pytest.mark.parametrize(
    "argv", [["--help"], [], ["nosuch"], ["--bogus"]], ids=["help", "none", "unknown", "option"]
)
def test_help_and_top_level_mistakes_import_no_plugin_module_and_no_numerical_library(argv):
    done = imported_after(argv)
    assert done["code"] in (0, 2)
    assert done["heavy"] == []
    assert beyond_packages(done["plugins"]) == []  # the packages are loaded, nothing else


#: Each command's own modules: the one declaring its arguments and the one it takes its
#: choices from (neither imports anything numerical).
#: The measure package's modules that are no declaration: the lists its kernels read.
KERNEL_LISTS = {"offeval_ir.measure.ranked", "offeval_ir.measure.trec_eval.lists"}
#: The measure declarations (numpy-free) trec_eval's measure names are checked against.
MEASURE_DECLARATIONS = [
    "offeval_ir.measure",
    *(
        found.name
        for found in pkgutil.walk_packages(measure.__path__, "offeval_ir.measure.")
        if found.name not in KERNEL_LISTS
    ),
]
DECLARED = {
    "metrics": ["offeval_ir.choices", "offeval_ir.command"],
    "compare": ["offeval_ir.choices", "offeval_ir.command"],
    "decide": ["offeval_decision.command", "offeval_decision.methods"],
    "demo": ["offeval_reports.command"],
    "new-plugin": ["offeval_scaffold.scaffold"],
    "trec_eval": sorted(
        ["offeval_ir.trec_catalogue", "offeval_ir.trec_command", "offeval_ir.trec_params"]
        + MEASURE_DECLARATIONS
    ),
}


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["metrics"], "the following arguments are required: run, qrels"),
        (["metrics", "--help"], ""),
        (["metrics", "run", "qrels", "--level", "high"], "--level: invalid float value: 'high'"),
        (["metrics", "run", "qrels", "--run-format", "xml"], "--run-format: invalid choice"),
        (["compare", "q", "a", "b", "--bogus"], "unrecognized arguments: --bogus"),
        (["compare", "qrels", "one.run"], "compare needs at least two runs"),
        (["compare", "qrels", "a/x.run", "b/x.run"], "runs need distinct file names"),
        (["compare", "q", "a", "b", "--correction", "holmes"], "--correction: invalid choice"),
        (["compare", "q", "a", "b", "--test", "wilcoxon"], "--test: invalid choice"),
        (["compare", "q", "a", "b", "--resamples", "0"], "--resamples: 0 is not >= 1"),
        (["decide"], "the following arguments are required: summaries"),
        (["decide", "summaries.json", "--method", "best"], "--method: invalid choice: 'best'"),
        (["decide", "summaries.json", "--draws", "0"], "--draws: 0 is not >= 1"),
        (["demo", "--seed", "-1"], "--seed: -1 is not >= 0"),
        (["demo", "--help"], ""),
        (["new-plugin"], "the following arguments are required: NAME"),
        (["new-plugin", "--help"], ""),
        (["trec_eval"], "the following arguments are required: qrels, run"),
        (["trec_eval", "--help"], ""),
        (["trec_eval", "-x", "q", "r"], "unrecognized arguments: -x"),
        (["trec_eval", "-R", "bogus", "q", "r"], "trec_eval: Illegal rel_format 'bogus'"),
        (["trec_eval", "-T", "x", "q", "r"], "Illegal retrieval results format 'x'"),
        (["trec_eval", "-D", "x", "q", "r"], "-D takes a whole number, got 'x'"),
        (["trec_eval", "-N", "-2", "q", "r"], "-N must be at least 0, got -2"),
        (["trec_eval", "-l", "two", "q", "r"], "-l takes a whole number, got 'two'"),
        (["trec_eval", "-M", "-1", "q", "r"], "-M must be at least 0"),
        (["trec_eval", "-m", "nDCG", "q", "r"], "trec_eval has no measure 'nDCG'"),
        (["trec_eval", "-m", "P.", "q", "r"], "-m P.: no parameters after the dot"),
    ],
)
def test_a_plugin_commands_argument_mistakes_import_its_declarations_alone(argv, message):
    """The command's module is imported (its arguments are declared there), with the module
    of its choices; no other command's, not the module that does its work, and no
    numerical library."""
    done = imported_after(argv)
    assert done["code"] == (0 if "--help" in argv else 2)
    assert message in done["err"] and "Traceback" not in done["err"]
    assert done["heavy"] == []
    assert beyond_packages(done["plugins"]) == DECLARED[argv[0]]


def test_the_demo_checks_its_folder_before_importing_the_simulation(tmp_path):
    (tmp_path / "notes.txt").write_text("not offeval's\n")
    done = imported_after(["demo", "--out", str(tmp_path), "--quiet"])
    assert done["code"] == 2 and "--force" in done["err"]
    assert done["heavy"] == [] and beyond_packages(done["plugins"]) == DECLARED["demo"]


def test_the_registry_asked_for_commands_imports_no_estimator():
    done = imported_after(
        ["--help"], then="from offeval import get_registry; get_registry().names('command')"
    )
    assert done["heavy"] == [] and beyond_packages(done["plugins"]) == []


def test_the_lazy_help_is_the_full_help(capsys):
    """``offeval --help`` from the references reads as the parser with every command built."""
    everything = build_parser().format_help()
    assert main(["--help"]) == 0
    assert capsys.readouterr().out == everything


@pytest.mark.parametrize(
    "name", ["metrics", "compare", "trec_eval", "decide", "demo", "new-plugin"]
)
def test_a_plugin_commands_help_is_the_same_built_alone_or_with_every_other(name, capsys):
    sub = build_parser()._subparsers._group_actions[0].choices[name]
    assert main([name, "--help"]) == 0
    assert capsys.readouterr().out == sub.format_help()


def test_every_builtin_command_is_deferred_and_its_help_is_its_classs():
    commands = get_registry().components("command")
    assert {c.name for c in commands} >= {"metrics", "compare", "decide", "demo", "new-plugin"}
    for component in commands:
        assert component.deferred is not None, component.name
        assert component.deferred.help == component.factory.help  # factory: the class itself
        assert all(hasattr(component.factory, m) for m in ("help", "add_arguments", "run"))


@pytest.mark.parametrize("package", PLUGINS)
def test_every_public_name_of_a_plugin_still_imports(package):
    """``from offeval_x import Name`` for each name of ``__all__``, and ``import *``."""
    plugin = import_module(package)
    for name in plugin.__all__:
        value = getattr(plugin, name)
        assert value is not None and getattr(plugin, name) is value
    namespace: dict = {}
    exec(f"from {package} import *", namespace)
    assert set(plugin.__all__) <= set(namespace)
    with pytest.raises(AttributeError, match=f"module '{package}' has no attribute 'nosuch'"):
        plugin.nosuch  # noqa: B018


@pytest.mark.parametrize("package", PLUGINS)
def test_no_public_name_of_a_plugin_is_also_one_of_its_modules(package):
    """Importing a module ``offeval_x.name`` sets the package's attribute ``name`` to that
    module, hiding a lazily imported public ``name`` (``sweep`` was both, and
    ``from offeval_decision import sweep`` gave the module once any code had imported it)."""
    plugin = import_module(package)
    modules = {module.name for module in pkgutil.iter_modules(plugin.__path__)}
    both = set(plugin.__all__) & modules
    # a public module (offeval_importance.tuning_rules, for the plugins that build on it) is one
    assert all(getattr(plugin, name) is import_module(f"{package}.{name}") for name in both)


def test_importing_every_plugin_imports_none_of_their_modules():
    code = (
        f"import json, sys\nfor p in {PLUGINS!r}: __import__(p)\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith(('offeval_', 'numpy')))))"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = json.loads(run.stdout)
    assert [m for m in loaded if not m.endswith(".hookspecs")] == PLUGINS
