"""Third-party plugins built and installed as a user installs them: into a fresh folder.

``pip install --no-deps --no-build-isolation --target SITE PACKAGE`` (no
network: hatchling comes from the test environment), then Python run in a
subprocess with SITE on its path, so the entry point is discovered the way
an installed plugin's is.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest


def _install(package: Path, site: Path) -> Path:
    """``package`` (a folder with a pyproject.toml) built and installed into ``site``."""
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
            str(site),
            str(package),
        ],
        check=True,
    )
    return site


@pytest.fixture(scope="module")
def pip_install() -> Callable[[Path, Path], Path]:
    """``pip_install(package, site)``: the package built and installed into ``site``."""
    return _install


def with_site(site: Path) -> dict[str, str]:
    """The environment of a subprocess that sees what is installed in ``site``."""
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")]),
    }


@pytest.fixture(scope="module")
def site_environment() -> Callable[[Path], dict[str, str]]:
    """``site_environment(site)``: the environment of a subprocess that sees ``site``."""
    return with_site


@pytest.fixture(scope="module")
def python_in() -> Callable[..., subprocess.CompletedProcess]:
    """``python_in(site, *args, cwd=None)``: Python run with ``site`` on its path; must succeed."""

    def run(site: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
        done = subprocess.run(
            [sys.executable, *args], env=with_site(site), cwd=cwd, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stdout + done.stderr
        return done

    return run
