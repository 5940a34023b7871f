"""``offeval new-plugin``: what it writes, which names it refuses, and that it writes whole.

Installing the package it writes and running its tests (the kit needs the
simulation plugin) is tested in tests/plugins/example/test_new_plugin.py, and the
example plugin (what it writes for the name ``example``) in test_example_plugin.py.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import nbformat
import pytest
from cli_checks import one_line_error

import offeval.data.output
import offeval.registry.manager
from offeval import OffevalError, get_registry
from offeval.cli.shell import main
from offeval_scaffold import scaffold

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "offeval-example-plugin"

tomllib = pytest.importorskip("tomllib")  # Python 3.11+; the pyproject check needs it

FILES = {
    "pyproject.toml",
    "README.md",
    "offeval_my_ips/__init__.py",
    "tests/test_my_ips.py",
    "docs/my_ips.ipynb",
}
#: The template those files are written from (plugins/offeval_scaffold/template).
TEMPLATE = {
    "pyproject.toml.tmpl",
    "README.md.tmpl",
    "$package/__init__.py.tmpl",
    "tests/test_$name.py.tmpl",
    "docs/$name.ipynb.tmpl",
}


@pytest.fixture()
def written(tmp_path) -> Path:
    """The package ``offeval new-plugin my_ips`` writes."""
    return scaffold.scaffold("my_ips", tmp_path / "offeval-my-ips")


def files_in(folder: Path) -> set[str]:
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}


def sources_in(folder: Path) -> set[str]:
    """The files in ``folder`` but what running or installing it leaves (as .gitignore)."""
    return {
        path
        for path in files_in(folder)
        if not any(
            part.startswith(".") or part == "__pycache__" or part.endswith(".egg-info")
            for part in path.split("/")
        )
    }


def offeval_imports(source: str) -> set[str]:
    """The offeval modules a piece of Python source imports from."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {name for name in found if name == "offeval" or name.startswith("offeval.")}


def test_the_plugins_command(capsys):
    assert main(["plugins", "command", "--name", "new-plugin"]) == 0
    assert "command      new-plugin         from scaffold" in capsys.readouterr().out


def test_its_constants_are_the_cores():
    """The marker it removes and the entry-point group it checks, spelt as the core's."""
    assert scaffold.MARKER == offeval.data.output.MARKER
    assert scaffold.ENTRY_POINT_GROUP == offeval.registry.manager.ENTRY_POINT_GROUP


def test_writes_the_package_and_nothing_else(written):
    assert files_in(written) == FILES  # no marker of offeval's output folders: the user's now


def test_the_example_is_what_it_writes_for_its_name(tmp_path, monkeypatch):
    """examples/offeval-example-plugin is the template rendered for the name ``example``,
    file for file. After editing the template (plugins/offeval_scaffold/template), write it again:
    ``offeval new-plugin example --dir examples/offeval-example-plugin --force``."""
    monkeypatch.setattr(scaffold, "check_name", lambda name: name)  # installed or not
    written = scaffold.scaffold("example", tmp_path / "offeval-example")
    assert sources_in(EXAMPLE) == files_in(written)
    for path in sorted(files_in(written)):
        assert (EXAMPLE / path).read_text() == (written / path).read_text(), path


def test_the_template_is_not_python():
    """One file per file written, named by its path and .tmpl: not imported, linted or
    counted as the plugin's lines."""
    assert files_in(scaffold.TEMPLATE) == TEMPLATE


@pytest.mark.slow
def test_the_template_ships_in_the_wheel(tmp_path):
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation"]
        + ["--wheel-dir", str(tmp_path), str(EXAMPLE.parents[1])],
        check=True,
    )
    (wheel,) = tmp_path.glob("offeval-*.whl")
    folder = "offeval_scaffold/template/"
    names = zipfile.ZipFile(wheel).namelist()
    assert {name.removeprefix(folder) for name in names if name.startswith(folder)} == TEMPLATE


def test_the_entry_point_names_the_package(written):
    project = tomllib.loads((written / "pyproject.toml").read_text())
    assert project["build-system"]["build-backend"] == "hatchling.build"
    assert project["project"]["name"] == "offeval-my-ips"
    assert project["project"]["entry-points"]["offeval"] == {"my_ips": "offeval_my_ips"}
    assert any(dep.startswith("offeval>=") for dep in project["project"]["dependencies"])
    assert project["tool"]["hatch"]["build"]["targets"]["wheel"]["packages"] == ["offeval_my_ips"]


def test_the_plugin_imports_the_three_apis_only(written):
    package = (written / "offeval_my_ips" / "__init__.py").read_text()
    test = (written / "tests" / "test_my_ips.py").read_text()
    chapter = nbformat.read(written / "docs" / "my_ips.ipynb", as_version=4)
    code = "\n".join(c.source for c in chapter.cells if c.cell_type == "code")
    assert offeval_imports(package) == {"offeval", "offeval.plugin", "offeval.stats"}
    assert offeval_imports(test) == {"offeval", "offeval.testing"}
    assert offeval_imports(code) == {"offeval"}


def test_the_chapter_stub_is_a_notebook_to_execute(written):
    chapter = nbformat.read(written / "docs" / "my_ips.ipynb", as_version=4)
    nbformat.validate(chapter)
    kinds = [cell.cell_type for cell in chapter.cells]
    assert kinds[0] == "markdown" and chapter.cells[0].source.startswith("# The my_ips estimator")
    assert "code" in kinds
    assert any("assert" in cell.source for cell in chapter.cells if cell.cell_type == "code")


def test_the_estimator_class_is_named_after_the_plugin(written):
    tree = ast.parse((written / "offeval_my_ips" / "__init__.py").read_text())
    classes = [node.name for node in tree.body if isinstance(node, ast.ClassDef)]
    functions = [node.name for node in tree.body if isinstance(node, ast.FunctionDef)]
    assert classes == ["MyIps"]
    assert functions == ["register_estimators"]


@pytest.mark.parametrize(
    ("name", "cls"),
    [("my_ips", "MyIps"), ("x2", "X2"), ("tally", "TallyEstimator"), ("half", "HalfEstimator")],
)
def test_the_class_name_is_free_in_the_package_and_its_test(name, cls):
    assert scaffold.class_name(name) == cls  # Tally is imported, Half is the test's policy


@pytest.mark.slow
def test_its_values_worked_out_by_hand_pass_without_any_plugin(written):
    """The generated test's hand-worked values (the kit needs the simulator: not here)."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-k",
            "by_hand or positive",
        ],
        cwd=written,
        env={**os.environ, "PYTHONPATH": str(written)},
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "\n3 passed" in done.stdout


@pytest.mark.parametrize(
    ("name", "why"),
    [
        (
            "MyIps",
            "lower-case Python identifier (a-z, digits, _; starting with a letter) (try 'myips')",
        ),
        ("my-ips", "(try 'my_ips')"),
        ("2ips", "lower-case Python identifier"),
        ("", "lower-case Python identifier"),
        ("class", "a Python keyword"),
        ("offeval", "a plugin of that name is installed already"),
        # installed, even if not loaded
        ("importance", "a plugin of that name is installed already"),
    ],
)
def test_names_refused(tmp_path, name, why):
    with pytest.raises(OffevalError, match="^" + re.escape(f"new-plugin {name!r}: ")) as caught:
        scaffold.scaffold(name, tmp_path / "out")
    assert why in str(caught.value)
    assert not (tmp_path / "out").exists()


def test_an_estimators_name_is_refused():
    registry = get_registry()
    with pytest.raises(OffevalError, match="plugin 'importance' registers an estimator"):
        scaffold.check_name("balanced_ips", registry)
    assert scaffold.check_name("my_balanced_ips", registry) == "my_balanced_ips"


def test_a_folder_with_files_is_refused_unless_forced(tmp_path):
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "notes.txt").write_text("keep me")
    with pytest.raises(OffevalError, match="not empty: choose another folder, or add --force"):
        scaffold.scaffold("my_ips", folder)
    assert files_in(folder) == {"notes.txt"}
    scaffold.scaffold("my_ips", folder, force=True)
    assert files_in(folder) == FILES


def test_a_rerun_does_not_replace_the_package(written):
    (written / "offeval_my_ips" / "__init__.py").write_text("# my own estimator\n")
    with pytest.raises(OffevalError, match="not empty"):
        scaffold.scaffold("my_ips", written)
    assert (written / "offeval_my_ips" / "__init__.py").read_text() == "# my own estimator\n"


def test_written_whole_or_not_at_all(tmp_path, monkeypatch):
    monkeypatch.setattr(scaffold, "plugin_files", _failing_after_first(scaffold.plugin_files))
    with pytest.raises(OSError):
        scaffold.scaffold("my_ips", tmp_path / "out")
    assert os.listdir(tmp_path) == []  # neither the folder nor a temporary one


def _failing_after_first(plugin_files):
    """``plugin_files`` whose second file cannot be written (a folder is in its way)."""

    def files(name: str) -> dict[str, str]:
        first, *_ = plugin_files(name).items()
        return {first[0]: first[1], f"{first[0]}/below": "cannot: its parent is a file"}

    return files


def test_the_command_line(tmp_path, capsys):
    assert main(["new-plugin", "my_ips", "--dir", str(tmp_path / "p")]) == 0
    out = capsys.readouterr().out
    assert f"python -m pip install -e {tmp_path / 'p'}" in out
    assert files_in(tmp_path / "p") == FILES


def test_a_mistake_is_one_line(tmp_path, capsys):
    assert main(["new-plugin", "My-Ips", "--dir", str(tmp_path / "p")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("offeval: error: new-plugin 'My-Ips': ")
    assert "(try 'my_ips')" in err


def test_a_name_too_long_for_a_file_name_is_one_line(tmp_path, monkeypatch, capsys):
    """The longest name the package's files allow is written; a longer one is refused
    up front (not an OSError from the file system), in one line."""
    monkeypatch.chdir(tmp_path)
    longest = "a" * scaffold.MAX_NAME
    assert main(["new-plugin", longest]) == 0
    assert files_in(tmp_path / f"offeval-{longest}") == {
        path.replace("my_ips", longest) for path in FILES
    }
    capsys.readouterr()
    line = one_line_error(
        capsys,
        ["new-plugin", "b" * 300],
        r"^offeval: error: new-plugin 'b{20}\.\.\.': ",
        rf"at most {scaffold.MAX_NAME} characters \(this one has 300\)",
    )
    assert len(line) < 200
    assert os.listdir(tmp_path) == [f"offeval-{longest}"]
