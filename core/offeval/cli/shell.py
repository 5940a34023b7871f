"""The ``offeval`` command line: the core's commands and every plugin's.

A user mistake gets one line on stderr and a non-zero exit, never a traceback (``--debug``
shows it). A command registered as a :class:`Deferred` is imported only when it runs or
shows its own help, so ``offeval --help`` reads the one-line helps from the references.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, NoReturn

from offeval.cli.options import Parser
from offeval.cli.plugins import PluginsCommand
from offeval.errors import OffevalError, OffevalWarning, command_line
from offeval.lazy import Deferred
from offeval.registry.hookspecs import COMMAND_METHODS
from offeval.registry.manager import Registry, allow_list_note, get_registry

#: The core's own sub-commands by reference (imported when they run or show their help): a
#: plugin's command cannot take their names.
CORE_COMMANDS: Mapping[str, Deferred] = {
    "evaluate": Deferred(
        "offeval.cli.evaluate:EvaluateCommand",
        help="estimate target policies on your own log file",
    ).checked(COMMAND_METHODS),
    "plugins": Deferred(
        "offeval.cli.plugins:PluginsCommand",
        help="what is registered, by which plugin, what failed",
    ).checked(COMMAND_METHODS),
}


class _Shell(Parser):
    """The ``offeval`` parser: an unknown command may be a plugin's the allow-list left out."""

    def error(self, message: str) -> NoReturn:
        """Raise the usage error; after an unknown command, name ``OFFEVAL_PLUGINS`` when set and
        each plugin left out because a plugin it builds on is not loaded (which, and how)."""
        note = allow_list_note()
        if note and "invalid choice" in message:
            message += f"; {note}"
            unmet = [f for f in get_registry().failures if f.stage == "requires"]
            message += "".join(f"; plugin {f.plugin} {f.reason}" for f in unmet)
        super().error(message)


class _CommandParser(Parser):
    """A sub-command's parser; a :class:`Deferred` command's is filled with its arguments
    when first asked to parse (:func:`build_parser` fills the one its command line names)."""

    fill: Callable[[_CommandParser], None] | None = None

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        """Fill the arguments if still pending, then parse as argparse does."""
        if self.fill is not None:
            fill, self.fill = self.fill, None
            fill(self)
        return super().parse_known_args(args, namespace)


def _adopt(sub_parser: argparse.ArgumentParser, command: Any, arguments: Parser) -> None:
    """Give ``sub_parser`` the arguments of ``arguments`` (as argparse's ``parents`` does)
    and the command's ``run``."""
    sub_parser._add_container_actions(arguments)
    sub_parser._defaults.update(arguments._defaults)
    sub_parser.set_defaults(func=command.run)


def _built(name: str, factory: Callable[[], Any]) -> tuple[Any, Parser]:
    """The command and a parser holding its arguments."""
    command = factory()
    if isinstance(command, PluginsCommand):  # it lists them among the plugins' commands
        command.core_commands = CORE_COMMANDS
    arguments = Parser(prog=f"offeval {name}")
    command.add_arguments(arguments)
    return command, arguments


#: argparse's own test of a negative number (a positional when no option looks like one).
_NEGATIVE = re.compile(r"^-\d+$|^-\d*\.\d+$")


def command_named(argv: Sequence[str]) -> str | None:
    """The sub-command a command line names (its first positional word), if any."""
    words = iter(argv)
    for word in words:
        if word == "--":
            return next(words, None)
        if not word.startswith("-") or len(word) == 1 or _NEGATIVE.match(word) or " " in word:
            return word
    return None


def build_parser(registry: Registry | None = None, argv: Sequence[str] | None = None) -> Parser:
    """The argument parser of every sub-command, the plugins' commands included.

    A plugin command that cannot be built is left out, recorded among the registry's
    failures. Given ``argv``, the command line to parse, of the :class:`Deferred` commands
    only the one it names is built; the others show their help and are built if asked to parse.
    """
    registry = registry or get_registry()
    running = command_named(argv) if argv is not None else None
    parser = _Shell(
        prog="offeval",
        description="Offline evaluation of recommendation and ranking policies.",
        epilog="Mistakes are reported in one line; --debug shows the traceback.",
    )
    parser.add_argument("--debug", action="store_true", help="show tracebacks")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_CommandParser)

    commands = [(name, ref, "offeval") for name, ref in CORE_COMMANDS.items()]
    for component in registry.components("command"):
        if component.name in CORE_COMMANDS:
            registry.record_failure(
                component.plugin, "command", f"{component.name}: the name is the core's command's"
            )
            continue
        commands.append((component.name, component.deferred or component.factory, component.plugin))
    for name, factory, plugin in commands:
        deferred = isinstance(factory, Deferred)
        if deferred and "help" in factory.attributes and argv is not None and name != running:
            summary = str(factory.help)
            pending = sub.add_parser(name, help=summary, description=summary, add_help=False)
            pending.fill = lambda into, name=name, factory=factory: _adopt(
                into, *_built(name, factory.resolve())
            )
            continue
        try:
            command, arguments = _built(name, factory.resolve() if deferred else factory)
            summary = str(command.help)
        except Exception as exc:  # a plugin's broken command must not break the others
            registry.record_failure(plugin, "command", f"{name}: {type(exc).__name__}: {exc}")
            continue
        _adopt(
            sub.add_parser(name, help=summary, description=summary, add_help=False),
            command,
            arguments,
        )
    return parser


@contextmanager
def _one_line_warnings() -> Iterator[None]:
    """Within the block, an OffevalWarning shown on stderr is one line, ``offeval: warning:
    <message>``; other warnings as Python shows them (only the formatting changes)."""
    python = warnings.formatwarning

    def formatted(message, category, filename, lineno, line=None) -> str:
        if issubclass(category, OffevalWarning):
            return f"offeval: warning: {message}\n"
        return python(message, category, filename, lineno, line)

    warnings.formatwarning = formatted
    try:
        yield
    finally:
        warnings.formatwarning = python


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``offeval`` command: 0 on success, 2 on a user mistake.

    Without ``argv`` (the program: ``sys.argv``) it ends the process itself, the output
    flushed, if pyarrow was loaded: pyarrow's thread pools sometimes abort the shutdown after a
    correct run (exit status 134, about one run in 900: apache/arrow#34314), which
    ``os._exit`` skips (the command has committed its folders and joined its workers already).
    Given ``argv`` (a test, a caller in Python) it returns the status.
    """
    code = _run(sys.argv[1:] if argv is None else argv)
    if argv is None and "pyarrow" in sys.modules:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):  # the reader went away, or the stream is closed
                pass
        os._exit(code)
    return code


def _run(argv: Sequence[str]) -> int:
    """Parse ``argv`` and run its command: its status, 2 for a user mistake (one line on
    stderr), 1 for an internal error (one line, or the traceback with ``--debug``)."""
    argv = list(argv)
    debug = "--debug" in argv  # anywhere on the line, before or after the sub-command
    argv = [arg for arg in argv if arg != "--debug"]
    try:
        with command_line(), _one_line_warnings():  # hints name options, not Python calls
            args = build_parser(argv=argv).parse_args(argv)
            args.argv = argv  # the command line as typed, for reports that state it
            code = args.func(args)
        return code if isinstance(code, int) else 0
    except SystemExit as exc:  # --help, or a plugin command exiting on its own
        if isinstance(exc.code, str):
            print(f"offeval: error: {exc.code}", file=sys.stderr)
            return 1
        return exc.code if isinstance(exc.code, int) else 0
    except KeyboardInterrupt:
        print("offeval: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader went away (offeval plugins | head): nothing to say
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - keeps Python quiet at exit
        return 0
    except OffevalError as exc:
        if debug:
            raise
        print(f"offeval: error: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:
        if debug:
            raise
        print(
            f"offeval: internal error: {type(exc).__name__}: {exc} "
            "(run again with --debug for the traceback)",
            file=sys.stderr,
        )
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
