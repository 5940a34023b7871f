"""Checks of the command line shared by the CLI tests."""

from __future__ import annotations

import re

from offeval.cli.shell import main

#: The user's names of the roles in the CSV log the CLI tests write (``user_log``).
USER_NAMES = {"trajectory": "session", "reward": "stream", "propensity": "mu"}
#: The same, as options.
MAPPING = [arg for role, column in USER_NAMES.items() for arg in ("--map", f"{role}={column}")]
POLICIES = ["--policy", "a=pi_p01", "--policy", "b=pi_p02"]


def one_line_error(capsys, argv, *patterns, code=2):
    """The command fails with ``code`` and exactly one line on stderr, no traceback; the line.

    ``argv`` may hold paths; each ``pattern`` is a regular expression the line must hold.
    """
    assert main([str(arg) for arg in argv]) == code
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err
    assert "Traceback" not in captured.err + captured.out
    for pattern in patterns:
        assert re.search(pattern, lines[0]), (pattern, lines[0])
    return lines[0]


def evaluate_args(path, *extra) -> list:
    """``offeval evaluate`` of the CSV log at ``path`` with two policies, quiet, and ``extra``."""
    return ["evaluate", str(path), "--quiet", *MAPPING, *POLICIES, *extra]


def write_csv(frame, path):
    """``frame`` written at ``path`` as CSV, without its row labels; the path."""
    frame.to_csv(path, index=False)
    return path
