"""The example third-party plugin installs, is discovered, and passes the kit."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "offeval-example-plugin"


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The example plugin installed (with its entry point) into a fresh folder."""
    target = tmp_path_factory.mktemp("site")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "--target",
            str(target),
            str(EXAMPLE),
        ],
        check=True,
    )
    return target


def run(site: Path, code: str) -> str:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")]),
    }
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_discovered_through_its_entry_point_and_conforms(site):
    out = run(
        site,
        (
            "from offeval import get_registry\n"
            "from offeval.testing import check_estimator\n"
            "reg = get_registry()\n"
            "comp = reg.get('estimator', 'trimmed_is')\n"
            "print(comp.plugin, reg.failures)\n"
            "check_estimator(reg.create('estimator', 'trimmed_is', max_weight=3))\n"
            "print('conforms')\n"
        ),
    )
    assert out.split() == ["example", "[]", "conforms"]


def test_listed_by_offeval_plugins(site):
    out = run(site, "from offeval.cli.shell import main; main(['plugins'])")
    assert "trimmed_is" in out and "from example" in out


def test_not_there_without_installing():
    from offeval import get_registry

    assert "trimmed_is" not in get_registry().names("estimator")
