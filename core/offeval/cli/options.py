"""What every command's arguments share: one-line usage errors, ``--force`` and ``--quiet``
(whole-number types are :func:`offeval.validation.at_least`)."""

from __future__ import annotations

import argparse
from typing import NoReturn

from offeval.errors import OffevalError

__all__ = ["Parser", "UsageError", "force_option", "progress_of"]


class UsageError(OffevalError):
    """A command-line argument is malformed."""


class Parser(argparse.ArgumentParser):
    """argparse, but a usage mistake is one line naming the command's --help."""

    def error(self, message: str) -> NoReturn:
        """Raise instead of printing the usage block."""
        raise UsageError(f"{message} (see {self.prog} --help)")


def progress_of(args: argparse.Namespace) -> bool | None:
    """Off with --quiet; else offeval's default (:mod:`offeval.progress`): shown in a
    terminal (not when stderr is redirected to a file or a pipe), per OFFEVAL_PROGRESS."""
    return False if args.quiet else None


def force_option(parser: argparse.ArgumentParser) -> None:
    """``--force``: replace an output folder that offeval did not write."""
    parser.add_argument(
        "--force",
        action="store_true",
        help="replace an output folder that offeval did not write (its files are deleted)",
    )
