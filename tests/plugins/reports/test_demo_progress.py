"""The demo's probe evaluations (the reports plugin) show no progress bar."""

from __future__ import annotations

import sys
import types

import pytest

from offeval.progress import VARIABLE
from offeval.registry.manager import get_registry
from offeval_reports.demo import usable_estimators


class ZMQInteractiveShell:
    """Stands in for the shell of a Jupyter kernel (only its class name is looked at)."""


@pytest.fixture()
def notebook(monkeypatch):
    fake = types.ModuleType("IPython")
    fake.get_ipython = ZMQInteractiveShell
    monkeypatch.setitem(sys.modules, "IPython", fake)


def test_the_demos_probe_evaluations_show_no_bar(env, capsys, notebook, monkeypatch):
    monkeypatch.setenv(VARIABLE, "1")
    log = env.simulate(env.logging_policy(), 300, seed=1, with_candidates=True)
    usable, _ = usable_estimators(get_registry(), log, env.candidate_policies(1)[0], env)
    assert len(usable) > 5 and capsys.readouterr().err == ""
