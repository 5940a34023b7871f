"""A plugin written by ``offeval new-plugin`` installs, is discovered, and passes its own
tests (the conformance kit among them) and its chapter runs, with nothing edited."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from offeval_scaffold.scaffold import scaffold

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def package(tmp_path_factory) -> Path:
    """The package ``offeval new-plugin my_ips`` writes."""
    return scaffold("my_ips", tmp_path_factory.mktemp("new") / "offeval-my-ips")


@pytest.fixture(scope="module")
def site(tmp_path_factory, package, pip_install) -> Path:
    """That package built and installed into a fresh folder."""
    return pip_install(package, tmp_path_factory.mktemp("site"))


@pytest.mark.slow
def test_listed_by_offeval_plugins(site, python_in):
    lines = python_in(site, "-m", "offeval", "plugins").stdout.splitlines()
    assert "my_ips" in lines[0].removeprefix("plugins:").split(", ")
    assert any(
        line.split()[:5] == ["estimator", "my_ips", "from", "my_ips", "Importance"]
        for line in lines
    )
    assert "failed:" not in lines


@pytest.mark.slow
def test_in_the_registry_by_name_and_spec(site, python_in):
    code = (
        "from offeval import get_registry\n"
        "reg = get_registry()\n"
        "est = reg.create_from_spec('estimator', 'my_ips:cap=20')\n"
        "print(reg.get('estimator', 'my_ips').plugin, type(est).__name__, est.cap, est.label,\n"
        "      est.guarantee, reg.create('estimator', 'my_ips').guarantee, len(reg.failures))\n"
    )
    out = python_in(site, "-c", code).stdout.split()
    assert out == ["my_ips", "MyIps", "20", "my_ips(cap=20)", "None", "unbiased", "0"]


@pytest.mark.slow
def test_its_own_tests_pass(site, package, python_in):
    done = python_in(site, "-m", "pytest", "-v", "-p", "no:cacheprovider", cwd=package)
    assert "test_conformance[my_ips-check_unbiased] PASSED" in done.stdout  # the kit ran
    assert "test_value_worked_out_by_hand[3-1.6666666666666667-1] PASSED" in done.stdout


@pytest.mark.slow
def test_its_chapter_runs(site, package, python_in, tmp_path):
    chapter = tmp_path / "my_ips.ipynb"
    chapter.write_text((package / "docs" / "my_ips.ipynb").read_text())
    python_in(site, "-m", "jupyter", "execute", "--inplace", str(chapter))
    import nbformat

    cells = nbformat.read(chapter, as_version=4).cells
    table = cells[1].outputs[0]["data"]["text/plain"]
    assert "my_ips(cap=10)" in table and "truth" in table


@pytest.mark.slow
def test_its_package_keeps_the_plugin_api_contract(site, site_environment, tmp_path):
    """import-linter's contract for the built-in plugins, applied to the written package."""
    tomllib = pytest.importorskip("tomllib")
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    (contract,) = [c for c in contracts["contracts"] if c["id"] == "plugin-api"]
    config = tmp_path / "contracts.toml"
    forbidden = ", ".join(f'"{module}"' for module in contract["forbidden_modules"])
    config.write_text(
        '[tool.importlinter]\nroot_packages = ["offeval", "offeval_my_ips"]\n\n'
        "[[tool.importlinter.contracts]]\n"
        'name = "The plugin uses the declared plugin API only"\ntype = "forbidden"\n'
        f'source_modules = ["offeval_my_ips"]\nforbidden_modules = [{forbidden}]\n'
        "allow_indirect_imports = true\n"
    )
    linter = Path(sys.executable).parent / "lint-imports"
    done = subprocess.run(
        [str(linter), "--no-cache", str(config)],
        env=site_environment(site),
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 kept, 0 broken" in done.stdout
