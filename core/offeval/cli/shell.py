"""The ``offeval`` command line: the core's commands and every plugin's.

A user mistake gets one line on stderr and a non-zero exit, never a
traceback (``--debug`` shows it). The core's commands (``evaluate``,
``plugins``, ``new-plugin``) keep their names; plugins add theirs through the
hook ``register_commands`` (the demo is one).
"""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import NoReturn

from offeval.cli.evaluate import EvaluateCommand
from offeval.cli.options import Parser
from offeval.cli.plugins import PluginsCommand
from offeval.cli.scaffold import NewPluginCommand
from offeval.errors import OffevalError, OffevalWarning, command_line
from offeval.registry.manager import Registry, allow_list_note, get_registry

#: The core's own sub-commands: a plugin's command cannot take their names.
CORE_COMMANDS = {
    "evaluate": EvaluateCommand,
    "plugins": PluginsCommand,
    "new-plugin": NewPluginCommand,
}


class _Shell(Parser):
    """The ``offeval`` parser: an unknown command may be a plugin's that the allow-list left out."""

    def error(self, message: str) -> NoReturn:
        """Raise the usage error, naming ``OFFEVAL_PLUGINS`` after an unknown command when set."""
        note = allow_list_note()
        if note and "invalid choice" in message:
            message += f"; {note}"
        super().error(message)


def build_parser(registry: Registry | None = None) -> Parser:
    """The argument parser of every sub-command, the plugins' commands included.

    A plugin command that cannot be built is left out and recorded among the
    registry's failures (``offeval plugins`` lists them).
    """
    registry = registry or get_registry()
    parser = _Shell(
        prog="offeval",
        description="Offline evaluation of recommendation and ranking policies.",
        epilog="Mistakes are reported in one line; --debug shows the traceback.",
    )
    parser.add_argument("--debug", action="store_true", help="show tracebacks")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)

    commands = [(name, cls, "offeval") for name, cls in CORE_COMMANDS.items()]
    for component in registry.components("command"):
        if component.name in CORE_COMMANDS:
            registry.record_failure(
                component.plugin, "command", f"{component.name}: the name is the core's command's"
            )
            continue
        commands.append((component.name, component.factory, component.plugin))
    for name, factory, plugin in commands:
        try:
            command = factory()
            if isinstance(command, PluginsCommand):  # it lists them among the plugins' commands
                command.core_commands = CORE_COMMANDS
            arguments = Parser(prog=f"offeval {name}")
            command.add_arguments(arguments)
            summary = str(command.help)
        except Exception as exc:  # a plugin's broken command must not break the others
            registry.record_failure(plugin, "command", f"{name}: {type(exc).__name__}: {exc}")
            continue
        sub_parser = sub.add_parser(name, help=summary, parents=[arguments], add_help=False)
        sub_parser.set_defaults(func=command.run)
    return parser


@contextmanager
def _one_line_warnings() -> Iterator[None]:
    """Within the block, an OffevalWarning shown on stderr is one line, ``offeval: warning:
    <message>`` (no file, line number or source line); other warnings as Python shows them.

    Only the formatting changes: which warnings are shown (filters) and whoever
    records them (``warnings.catch_warnings(record=True)``) are left alone.
    """
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
    """Entry point of the ``offeval`` command: 0 on success, 2 on a user mistake."""
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv  # anywhere on the line, before or after the sub-command
    argv = [arg for arg in argv if arg != "--debug"]
    try:
        with command_line(), _one_line_warnings():  # hints name options, not Python calls
            args = build_parser().parse_args(argv)
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
