"""The house's architecture, checked: the core in layers without a cycle, importing no plugin;
plugins built on the user's API and the declared plugin API, each importing another only as
it declares (REQUIRES); and no drawing in the core."""

from __future__ import annotations

import ast
import inspect
import subprocess
import sys
from functools import cache
from pathlib import Path

import tomllib

import offeval
import offeval.plugin
import offeval.stats

ROOT = Path(__file__).resolve().parents[2]
#: Plugins' code (their tests, which may use the conformance kit offeval.testing, left out).
PLUGIN_CODE = [
    *sorted((ROOT / "plugins").glob("offeval_*/**/*.py")),
    *(p for p in sorted((ROOT / "examples").glob("*/*/**/*.py")) if "tests" not in p.parts),
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
    assert "4 kept, 0 broken" in run.stdout


def test_plugins_import_nothing_from_offeval_but_its_three_apis():
    """``from offeval import ...`` (the user's API), ``from offeval.stats import ...`` (the
    statistics) and ``from offeval.plugin import ...``, and nothing else of offeval, in every
    plugin and the example plugin; each name they take is one of those APIs'."""
    assert PLUGIN_CODE, "no plugin code found"
    declared = {
        "offeval": set(offeval.__all__),
        "offeval.plugin": set(offeval.plugin.__all__),
        "offeval.stats": set(offeval.stats.__all__),
    }
    wrong = []
    for path in PLUGIN_CODE:
        for line, module, names in _imports(path):
            where = f"{path.relative_to(ROOT)}:{line}"
            if module in declared:
                wrong += [
                    f"{where}: {n} is not declared" for n in names if n not in declared[module]
                ]
            elif module.startswith("offeval."):
                wrong.append(f"{where}: imports {module}")
    assert not wrong, "\n".join(wrong)


def _built_in_plugins() -> dict[str, str]:
    """Each built-in plugin's package and its name (its entry point's)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    return {pkg: name for name, pkg in project["project"]["entry-points"]["offeval"].items()}


@cache
def _requires(package: str) -> tuple[str, ...]:
    """A plugin's ``REQUIRES``, read from its ``__init__.py`` (the plugin is not imported)."""
    tree = ast.parse((ROOT / "plugins" / package / "__init__.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and [t.id for t in node.targets] == ["REQUIRES"]:
            return tuple(ast.literal_eval(node.value))
    return ()


@cache
def _public(package: str) -> set[str]:
    """A plugin's public names: its ``__all__`` (lists it unpacks into it included), read from
    its ``__init__.py``."""
    tree = ast.parse((ROOT / "plugins" / package / "__init__.py").read_text())
    lists = {
        node.targets[0].id: node.value
        for node in tree.body
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)
    }

    def names(value: ast.expr) -> set[str]:
        found = set()
        for e in getattr(value, "elts", []):
            if isinstance(e, ast.Constant):
                found.add(e.value)
            elif isinstance(e, ast.Starred):
                found |= names(lists[e.value.id])
        return found

    return names(lists.get("__all__"))


def test_a_plugin_imports_another_only_as_it_declares():
    """A built-in imports another plugin only when it declares it builds on it (REQUIRES), and
    then only that plugin's public names (``from offeval_importance import capped_weights``) and
    public modules (``from offeval_ir.agreement_statistics import agreement``): the rest of
    its modules are its own."""
    plugins = _built_in_plugins()
    wrong = []
    for path in sorted((ROOT / "plugins").glob("offeval_*/**/*.py")):
        own = path.relative_to(ROOT).parts[1]
        declared = {pkg for pkg, name in plugins.items() if name in _requires(own)}
        for line, module, names in _imports(path):
            top = module.split(".")[0]
            if not top.startswith("offeval_") or top == own:
                continue
            where = f"{path.relative_to(ROOT)}:{line}"
            if top not in declared:
                wrong.append(f"{where}: imports {module}, but {own} does not declare {top}")
            elif module != top and module.split(".")[1] not in _public(top):
                wrong.append(f"{where}: imports {module}, not {top}'s public names")
            elif module == top:
                public = _public(top)
                wrong += [f"{where}: {n} is not public in {top}" for n in names if n not in public]
    assert not wrong, "\n".join(wrong)


def test_every_declared_dependency_is_a_built_in_plugin():
    """REQUIRES names plugins that exist, and no plugin builds on itself."""
    plugins = _built_in_plugins()
    wrong = [
        f"{pkg}: {need}"
        for pkg, name in plugins.items()
        for need in _requires(pkg)
        if need not in plugins.values() or need == name
    ]
    assert not wrong, wrong


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
