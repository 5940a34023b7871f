"""The house's architecture, checked: the core in layers without a cycle, plugins built on the
declared plugin API alone, no plugin importing another, and no drawing in the core."""

from __future__ import annotations

import ast
import inspect
import subprocess
import sys
from pathlib import Path

import offeval.plugin

ROOT = Path(__file__).resolve().parents[2]
PLUGIN_CODE = [
    *sorted((ROOT / "plugins").glob("offeval_*/**/*.py")),
    *sorted((ROOT / "examples").glob("*/*/**/*.py")),
]


def _imports(path: Path) -> list[tuple[int, str, list[str]]]:
    """(line, module, names) of every import in a file, ``import x`` as (line, x, [])."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.level == 0:
            found.append((node.lineno, node.module, [a.name for a in node.names]))
        elif isinstance(node, ast.Import):
            found += [(node.lineno, a.name, []) for a in node.names]
    return found


def test_the_import_linter_contracts_hold():
    """pyproject.toml's contracts: layers, plugin independence, plugins on the API only."""
    linter = Path(sys.executable).parent / "lint-imports"
    run = subprocess.run(
        [str(linter), "--no-cache"], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert "3 kept, 0 broken" in run.stdout


def test_plugins_import_nothing_from_offeval_but_the_plugin_api():
    """``from offeval.plugin import ...`` and nothing else of offeval, in every plugin and the
    example plugin; each name they take is one the API declares."""
    assert PLUGIN_CODE, "no plugin code found"
    declared = set(offeval.plugin.__all__)
    wrong = []
    for path in PLUGIN_CODE:
        for line, module, names in _imports(path):
            where = f"{path.relative_to(ROOT)}:{line}"
            if module == "offeval.plugin":
                wrong += [f"{where}: {n} is not declared" for n in names if n not in declared]
            elif module == "offeval" or module.startswith("offeval."):
                wrong.append(f"{where}: imports {module}")
    assert not wrong, "\n".join(wrong)


def test_no_plugin_imports_another():
    """A plugin's own package only: shared building blocks are the plugin API's."""
    wrong = []
    for path in PLUGIN_CODE:
        own = path.relative_to(ROOT).parts[1 if path.is_relative_to(ROOT / "plugins") else 2]
        for line, module, _ in _imports(path):
            top = module.split(".")[0]
            if top.startswith("offeval_") and top != own:
                wrong.append(f"{path.relative_to(ROOT)}:{line}: imports {module}")
    assert not wrong, "\n".join(wrong)


def test_the_core_draws_nothing():
    """No module of the core imports matplotlib: figures are the reports plugin's."""
    core = ROOT / "core" / "offeval"
    drawing = [
        f"{path.relative_to(ROOT)}:{line}"
        for path in sorted(core.rglob("*.py"))
        for line, module, _ in _imports(path)
        if module.split(".")[0] == "matplotlib"
    ]
    assert not drawing, drawing


def test_every_declared_name_is_documented():
    """The plugin API is a contract: each name it declares exists and has a docstring."""
    objects = {name: getattr(offeval.plugin, name) for name in offeval.plugin.__all__}
    undocumented = [
        name
        for name, obj in objects.items()
        if (inspect.isroutine(obj) or inspect.isclass(obj) or inspect.ismodule(obj))
        and not inspect.getdoc(obj)
    ]
    assert not undocumented, undocumented
