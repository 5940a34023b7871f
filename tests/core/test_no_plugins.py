"""The core tests run without plugins (tests/core/conftest.py): each way to reach one fails."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

from offeval import RegistryError, get_registry


@pytest.mark.parametrize("name", ["offeval_importance", "offeval_simulation.environment"])
def test_importing_a_plugin_fails_loudly(name):
    with pytest.raises(ModuleNotFoundError, match="core tests run without plugins"):
        importlib.import_module(name)


def test_the_registry_loads_no_plugin():
    registry = get_registry()
    assert registry.plugins == ["offeval"] and registry.failures == []
    with pytest.raises(RegistryError, match="no estimator named 'ncis'; registered: none"):
        registry.create("estimator", "ncis")


def test_a_command_run_by_a_core_test_loads_no_plugin():
    done = subprocess.run(
        [sys.executable, "-m", "offeval", "plugins"], capture_output=True, text=True, check=True
    )
    assert done.stdout.splitlines()[0] == "plugins: offeval", done.stdout
