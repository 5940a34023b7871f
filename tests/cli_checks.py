"""Checks of the command line shared by the CLI tests."""

from __future__ import annotations

import re

from offeval.cli.shell import main


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
