"""What every command's arguments share: one-line usage errors, whole-number types
(:func:`at_least`), ``--force`` and ``--quiet``. Nothing numerical is imported here: a
command declares its arguments, and answers a mistake in them, without numpy."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import NoReturn

from offeval.errors import OffevalError

__all__ = ["Parser", "UsageError", "at_least", "force_option", "progress_of"]


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


def at_least(low: int) -> Callable[[str], int]:
    """An argparse ``type``: the text of a whole number >= ``low``, as an ``int`` (its errors
    are :class:`argparse.ArgumentTypeError`, which argparse prefixes with the option)."""

    def whole(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"{value} is not >= {low}")
        return value

    whole.__name__ = f"whole number >= {low}"
    return whole
