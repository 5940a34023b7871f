"""Progress bars: on by default where someone watches (notebook, terminal), off on request."""

from __future__ import annotations

import io
import sys
import types

import pytest
from reference_estimators import IS

from offeval import ConfigurationError, LoggingPolicy, evaluate
from offeval.progress import MIN_WORK, VARIABLE, in_notebook, progress_enabled


def test_explicit_choice_wins(monkeypatch, notebook):
    monkeypatch.setenv(VARIABLE, "1")
    assert progress_enabled(False) is False
    monkeypatch.setenv(VARIABLE, "0")
    assert progress_enabled(True) is True


def test_default_is_on_in_a_notebook_and_off_when_nobody_watches(monkeypatch, notebook):
    monkeypatch.delenv(VARIABLE, raising=False)
    assert in_notebook() and progress_enabled(None)
    monkeypatch.setitem(sys.modules, "IPython", types.ModuleType("IPython"))
    monkeypatch.setattr(sys.modules["IPython"], "get_ipython", lambda: None, raising=False)
    monkeypatch.setattr(sys, "stderr", io.StringIO())  # not a terminal
    assert not in_notebook() and not progress_enabled(None)


def test_the_variable_sets_the_default_and_is_checked(monkeypatch, notebook):
    monkeypatch.setenv(VARIABLE, "0")
    assert not progress_enabled(None)
    monkeypatch.setenv(VARIABLE, "yes")
    with pytest.raises(ConfigurationError, match="OFFEVAL_PROGRESS must be 0 or 1, got 'yes'"):
        progress_enabled(None)


def test_by_default_only_steps_long_enough_to_watch_show_a_bar(monkeypatch, notebook):
    monkeypatch.delenv(VARIABLE, raising=False)
    assert progress_enabled(None, MIN_WORK) and not progress_enabled(None, MIN_WORK - 1)
    assert progress_enabled(None, None)  # a stream of unknown length
    monkeypatch.setenv(VARIABLE, "1")
    assert progress_enabled(None, 1)


def test_evaluate_shows_a_bar_with_a_total(small_bandit, capsys, notebook, monkeypatch):
    log, target, _ = small_bandit
    policies = [target, LoggingPolicy()]
    monkeypatch.delenv(VARIABLE, raising=False)
    evaluate(log, policies, [IS()])  # 8,000 cells: too short to watch
    assert capsys.readouterr().err == ""
    monkeypatch.setenv(VARIABLE, "1")
    evaluate(log, policies, [IS()])
    bar = capsys.readouterr().err
    assert "evaluating: 100%" in bar and f"{log.n_rows / 1000:.2f}k/{log.n_rows / 1000:.2f}k" in bar
    evaluate(log, policies, [IS()], progress=False)
    assert capsys.readouterr().err == ""


def test_the_command_line_shows_no_bar_when_stderr_is_not_a_terminal(
    user_log, monkeypatch, capsys, reference_registry
):
    """README: bars show in a terminal or a notebook only (capsys's stderr is no terminal);
    OFFEVAL_PROGRESS=1 still asks for them."""
    from offeval.cli.shell import main

    argv = ["evaluate", str(user_log), "--map", "trajectory=session", "--map", "reward=stream"]
    argv += ["--map", "propensity=mu", "--policy", "a=pi_p01", "--estimator", "is"]
    monkeypatch.delenv(VARIABLE, raising=False)
    assert main(argv) == 0
    assert capsys.readouterr().err == ""
    monkeypatch.setenv(VARIABLE, "1")
    assert main(argv) == 0
    assert "evaluating: 100%|" in capsys.readouterr().err
