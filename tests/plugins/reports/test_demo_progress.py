"""The demo's probe evaluations (the reports plugin) show no progress bar."""

from __future__ import annotations

from offeval.progress import VARIABLE
from offeval.registry.manager import get_registry
from offeval_reports.demo import usable_estimators


def test_the_demos_probe_evaluations_show_no_bar(env, capsys, notebook, monkeypatch):
    monkeypatch.setenv(VARIABLE, "1")
    log = env.simulate(env.logging_policy(), 300, seed=1, with_candidates=True)
    usable, _ = usable_estimators(get_registry(), log, env.candidate_policies(1)[0], env)
    assert len(usable) > 5 and capsys.readouterr().err == ""
