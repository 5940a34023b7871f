"""The example third-party plugin installs, is discovered, uses the declared API only,
and passes the kit. It is what ``offeval new-plugin example`` writes (a test in
tests/plugins/scaffold/test_scaffold.py keeps it so): its estimator is named ``example`` too."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "offeval-example-plugin"


@pytest.fixture(scope="module")
def site(tmp_path_factory, pip_install) -> Path:
    """The example plugin installed (with its entry point) into a fresh folder."""
    return pip_install(EXAMPLE, tmp_path_factory.mktemp("site"))


@pytest.mark.slow
def test_discovered_through_its_entry_point_and_conforms(site, python_in):
    code = (
        "from offeval import get_registry\n"
        "from offeval.testing import check_estimator\n"
        "reg = get_registry()\n"
        "comp = reg.get('estimator', 'example')\n"
        "print(comp.plugin, reg.failures)\n"
        "check_estimator(reg.create('estimator', 'example', cap=3))\n"
        "check_estimator(reg.create('estimator', 'example'))\n"
        "print('conforms')\n"
    )
    assert python_in(site, "-c", code).stdout.split() == ["example", "[]", "conforms"]


@pytest.mark.slow
def test_listed_by_offeval_plugins(site, python_in):
    out = python_in(site, "-m", "offeval", "plugins").stdout
    assert any(
        line.split()[:4] == ["estimator", "example", "from", "example"] for line in out.splitlines()
    )


def test_imports_the_declared_api_only():
    source = (EXAMPLE / "offeval_example" / "__init__.py").read_text()
    modules = {
        node.module
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("offeval")
    }
    plain = {
        alias.name
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Import)
        for alias in node.names
    }
    assert modules == {"offeval", "offeval.plugin", "offeval.stats"}
    assert not {name for name in plain if name.split(".")[0] == "offeval"}


def test_not_there_without_installing():
    from offeval import get_registry

    assert "example" not in get_registry().names("estimator")
