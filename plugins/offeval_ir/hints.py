"""Hints in error messages, in the words of whoever will read them.

The same mistake is fixed with a keyword argument in Python (``format='csv'``)
and with an option at the command line (``--run-format csv``): messages give
both spellings to :func:`hint`, which picks the command line's while
:func:`command_line` is active (``offeval metrics`` and ``offeval compare``
run inside it).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_AT_COMMAND_LINE: ContextVar[bool] = ContextVar("offeval_ir_command_line", default=False)


@contextmanager
def command_line() -> Iterator[None]:
    """Within this block, hints name command-line options."""
    token = _AT_COMMAND_LINE.set(True)
    try:
        yield
    finally:
        _AT_COMMAND_LINE.reset(token)


def hint(python: str, cli: str) -> str:
    """``cli`` inside :func:`command_line`, ``python`` elsewhere."""
    return cli if _AT_COMMAND_LINE.get() else python


def switch(name: str, value: object) -> str:
    """How to set a convention switch: ``--set name=value`` or ``Conventions(name=value)``."""
    return hint(f"Conventions({name}={value!r})", f"--set {name}={value}")
