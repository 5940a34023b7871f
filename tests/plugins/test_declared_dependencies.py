"""Each built-in plugin loads, and runs its commands, with only the plugins it declares it
builds on (REQUIRES, followed through); without one of them it stays out, named."""

from __future__ import annotations

import os
import subprocess
import sys
from importlib import import_module
from pathlib import Path

import pytest
import tomllib

from offeval.testing import declared_plugins

ROOT = Path(__file__).resolve().parents[2]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
BUILT_INS = PROJECT["project"]["entry-points"]["offeval"]  # name -> package


def declared(name: str) -> set[str]:
    """The plugin and every plugin it builds on, followed through their REQUIRES."""
    return set(declared_plugins(name))


def offeval(args: list[str], plugins: set[str]) -> subprocess.CompletedProcess:
    env = {"OFFEVAL_PLUGINS": ",".join(sorted(plugins)), "OFFEVAL_PROGRESS": "0"}
    return subprocess.run(
        [sys.executable, "-m", "offeval", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        check=False,
    )


def test_declared_plugins_follows_the_built_ins_requires():
    slates = ["betting", "importance", "ir", "ranking", "rewardmodels", "simulation", "slates"]
    assert declared_plugins("slates") == slates
    assert declared_plugins("ir") == ["ir"]
    assert declared_plugins("obp", "ir") == ["importance", "ir", "obp", "rewardmodels"]
    for name, package in BUILT_INS.items():  # each one, its own REQUIRES and all of theirs
        own = getattr(import_module(package), "REQUIRES", ())
        assert set(declared_plugins(name)) == {name}.union(*map(declared_plugins, own))


@pytest.mark.parametrize("name", sorted(BUILT_INS))
def test_a_built_in_loads_with_what_it_declares_alone(name):
    plugins = declared(name)
    code = (
        "from offeval import get_registry\n"
        "r = get_registry()\n"
        "print(sorted(r.plugins)); print([(f.plugin, f.reason) for f in r.failures])"
    )
    env = {**os.environ, "OFFEVAL_PLUGINS": ",".join(sorted(plugins))}
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    loaded, failures = run.stdout.splitlines()
    assert failures == "[]", failures
    assert set(eval(loaded)) == {"offeval", *plugins}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(BUILT_INS))
def test_a_built_ins_commands_answer_with_what_it_declares_alone(name):
    """Its own commands are listed and answer ``--help`` (which builds their parsers)."""
    plugins = declared(name)
    listed = offeval(["plugins", "command"], plugins)
    assert listed.returncode == 0, listed.stderr
    rows = [line.split() for line in listed.stdout.splitlines()]
    assert ["command", "evaluate", "from", "offeval"] == [r for r in rows if r[1] == "evaluate"][0][
        :4
    ]
    own = [row[1] for row in rows if row[:1] == ["command"] and row[3] == name]
    for command in own:
        run = offeval([command, "--help"], plugins)
        assert run.returncode == 0, (command, run.stderr[-500:])


def test_the_demo_without_the_family_it_builds_on_names_it():
    run = offeval(["demo"], {"reports"})
    assert run.returncode == 2
    [line] = run.stderr.strip().splitlines()
    assert "plugin reports builds on plugin 'simulation', which is not loaded" in line
    assert "add simulation to OFFEVAL_PLUGINS" in line
