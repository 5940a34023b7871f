"""Start-up with the built-in plugins: ``offeval --help`` imports none of their modules nor
any numerical library, a plugin command imports its own module alone, the help built from
the references is the help of every command built, and every plugin's public names (now
imported on first use) are still there.

No timing here: ``benchmarks/startup_benchmark.py`` times it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from importlib import import_module
from pathlib import Path

import pytest
from startup_checks import beyond_packages, imported_after

from offeval.cli.shell import build_parser, main
from offeval.plugin import get_registry

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


@pytest.mark.parametrize("argv", [["metrics"], ["metrics", "--help"], ["compare", "--bogus"]])
def test_a_plugin_command_imports_its_own_module_alone(argv):
    """The command's module is imported (its arguments are declared there), no other
    command's; neither statsmodels nor matplotlib, which no IR argument needs."""
    done = imported_after(argv)
    assert done["code"] in (0, 2)
    assert not {"statsmodels", "matplotlib", "sklearn"} & set(done["heavy"])
    others = ("offeval_reports.", "offeval_decision.", "offeval_dcg.estimators")
    assert not [m for m in done["plugins"] if m.startswith(others)]
    assert "offeval_ir.command" in done["plugins"]


def test_the_registry_asked_for_commands_imports_no_estimator():
    done = imported_after(
        ["--help"], then="from offeval.plugin import get_registry; get_registry().names('command')"
    )
    assert done["heavy"] == [] and beyond_packages(done["plugins"]) == []


def test_the_lazy_help_is_the_full_help(capsys):
    """``offeval --help`` from the references reads as the parser with every command built."""
    everything = build_parser().format_help()
    assert main(["--help"]) == 0
    assert capsys.readouterr().out == everything


@pytest.mark.parametrize("name", ["metrics", "compare", "trec_eval", "decide", "demo"])
def test_a_plugin_commands_help_is_the_same_built_alone_or_with_every_other(name, capsys):
    sub = build_parser()._subparsers._group_actions[0].choices[name]
    assert main([name, "--help"]) == 0
    assert capsys.readouterr().out == sub.format_help()


def test_every_builtin_command_is_deferred_and_its_help_is_its_classs():
    commands = get_registry().components("command")
    assert {c.name for c in commands} >= {"metrics", "compare", "decide", "demo"}
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


def test_importing_every_plugin_imports_none_of_their_modules():
    code = (
        f"import json, sys\nfor p in {PLUGINS!r}: __import__(p)\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith(('offeval_', 'numpy')))))"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = json.loads(run.stdout)
    assert [m for m in loaded if not m.endswith(".hookspecs")] == PLUGINS
