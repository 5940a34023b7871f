"""The plugin registry without plugins: the core's hook specifications, the core names no
plugin, spec strings, a plugin added, used and removed (the built-in plugins' registry tests
are in tests/plugins/test_registry_builtins.py)."""

from __future__ import annotations

import ast
import inspect
import re
from pathlib import Path

import pytest
from reference_estimators import SNIS, ReferencePlugin

from offeval import RegistryError
from offeval.registry.manager import Registry
from offeval.specs import parse_spec

CORE = Path(__file__).resolve().parents[2] / "core" / "offeval"


PLUGINS = (
    "ncis",
    "betting",
    "dcg",
    "ndcg",
    "pndcg",
    "ir",
    "simulation",
    "decision",
    "disagreement",
)


def test_core_hookspecs_hold_what_the_core_calls_and_the_demo_contract():
    """The core calls these; ``register_demo_estimators`` is called by the reports plugin's
    demo but implemented by every estimator plugin, so it is the core's declared contract
    (a plugin's own hookspec would tie four plugins to one)."""
    from offeval.registry import hookspecs

    specs = {n for n, f in inspect.getmembers(hookspecs, inspect.isfunction) if n.startswith("reg")}
    assert specs == {
        "register_hookspecs",
        "register_component_kinds",
        "register_estimators",
        "register_environments",
        "register_commands",
        "register_reports",
        "register_reward_models",
        "register_policies",
        "register_intervals",
        "register_demo_estimators",
        "register_report_sections",
    }
    for name in specs:
        function = getattr(hookspecs, name)
        assert next(iter(inspect.signature(function).parameters)) == "register", name
        assert "register(" in inspect.getdoc(function), f"{name} must document its callback"


def _code_strings(tree: ast.AST) -> list[str]:
    """String constants and names in code, docstrings left out."""
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            if node.body and isinstance(node.body[0], ast.Expr):
                docstrings.add(id(node.body[0].value))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if id(node) not in docstrings:
                out.append(node.value)
        elif isinstance(node, ast.Name):
            out.append(node.id)
        elif isinstance(node, ast.alias):
            out.append(node.name)
    return out


def test_the_core_names_no_plugin():
    pattern = re.compile(rf"^offeval_|\b({'|'.join(PLUGINS)})\b")
    found = {
        f"{path.name}: {text!r}"
        for path in CORE.rglob("*.py")
        for text in _code_strings(ast.parse(path.read_text()))
        if pattern.search(text)
    }
    assert not found


def test_spec_values_are_literals_never_evaluated():
    name, params = parse_spec("x:a=__import__('os').getcwd(),b=[1, 2],c=(1+1)")
    assert params == {"a": "__import__('os').getcwd()", "b": [1, 2], "c": "(1+1)"}


def test_a_plugin_is_added_used_and_removed():
    reg = Registry(entry_points=False)
    assert reg.plugins == ["offeval"] and reg.names("estimator") == []
    reg.add_plugin(ReferencePlugin(), "reference")
    assert reg.names("estimator") == ["is", "snis"]
    assert isinstance(reg.create_from_spec("estimator", "snis"), SNIS)
    with pytest.raises(RegistryError, match=r"no estimator named 'snsi' \(did you mean snis\?\)"):
        reg.get("estimator", "snsi")
    with pytest.raises(RegistryError, match="no parameter cap; its parameters: none"):
        reg.create("estimator", "snis", cap=3)
    with pytest.raises(RegistryError, match="already registered"):
        reg.add_plugin(ReferencePlugin(), "reference")
    reg.remove_plugin("reference")
    assert reg.names("estimator") == []


def test_a_hook_no_plugin_specifies_is_a_failure_unless_marked_optional():
    """As pluggy's check_pending: ``hookimpl(optionalhook=True)`` implements a hook of a
    plugin that may not be installed; any other implementation of it is a misspelling."""
    from offeval import hookimpl

    class Optional:
        @hookimpl(optionalhook=True)
        def register_widgets(self, register):
            """A hook of a plugin that is not installed here."""

        @hookimpl
        def register_estimator(self, register):
            """Misspelled: register_estimators."""

    reg = Registry(entry_points=False)
    reg.add_plugin(Optional(), "optional")
    [failure] = reg.failures
    assert (failure.plugin, failure.stage) == ("optional", "register_estimator")
    assert "implements a hook that no plugin specifies" in failure.reason
    with pytest.raises(RegistryError, match="plugin 'optional': unknown hook 'register_estimator'"):
        reg.check_pending()
