"""The plugin API: what a plugin needs from offeval beyond its two public namespaces.

A plugin (built in or third party) imports from three places and nothing else of
offeval (a test and an import-linter contract check it): :mod:`offeval`, the user's
API (logs and policies, the estimator protocol, :func:`~offeval.evaluate`, the errors,
the registry and its hook markers); :mod:`offeval.stats`, the statistics (moments,
linearised estimates, intervals, paired tests, correlations, ties); and this module.
What one family of plugins shares (importance weights, reward models, exposures)
is that family's plugin's public API, imported by the plugins that declare they
build on it (``REQUIRES``). The names here, by job:

- **Registering**: ``Register``, the type of the ``register`` callback every hook
  receives; :class:`Deferred`, a component registered by reference (imported when
  first used); :class:`Alias`, another name for a component (``my-est`` for
  ``my_est``, with its own parameter names and defaults); :func:`lazy_names`, a
  plugin's public names imported on first use.
- **Logs**: :data:`PROBABILITY_TOLERANCE` and :func:`hash_ids` (stable ids of any
  kind). The log's own limits are its class's: ``InteractionLog.ROLES``,
  ``MIN_PROPENSITY`` and ``TINY_PROPENSITY`` (why a smaller one is refused), and
  ``log.regular_slots`` (the candidates per slot when every slot has as many).
- **Workers**: :func:`worthwhile_workers`.
- **Errors and arguments in the user's words**: :func:`hint`, :func:`command_line`,
  :func:`plain`, :func:`decimal_comma_hint`, :func:`describe_rows` (the user's row
  labels), :func:`did_you_mean`;
  the scalar checks :func:`check_whole`, :func:`check_number`, :func:`check_choice`,
  :func:`check_flag`, :func:`check_level`; a command's :func:`at_least`,
  :func:`force_option`, :func:`progress_of`, :func:`progress_bar`; the spec grammar
  (:func:`parse_pairs`, :func:`find_label`).
- **Data files** (read by :func:`offeval.read_table`): the suffix naming a format
  (:func:`data_suffix`), a file :func:`opened` decompressed, :func:`separator_named`,
  :func:`header_separator`, the lines records start on (:func:`record_lines`) and an
  error naming one (:func:`line_error`).
- **Output**: :class:`OutputFolder`, :class:`OutputFile` (written whole or not at
  all), :func:`write_csv`, :func:`markdown_table`, :func:`markdown_escape`; report
  sections (:class:`ReportSection`, :class:`ReportContext`, gathered by
  :func:`report_sections`), what a report writer is given (:class:`EvaluationReport`)
  and the Markdown document it builds on (:class:`MarkdownDocument`).

Each name is imported on first use, so ``from offeval.plugin import Register`` costs
pluggy alone and ``offeval --help`` imports no numerical library.
"""

from __future__ import annotations

from offeval.lazy import lazy_names

#: Each module of the core and the names of the API it defines: the one list of them.
_WHERE = {
    "offeval.cli.options": ("at_least", "force_option", "progress_of"),
    "offeval.data.files": (
        "data_suffix",
        "header_separator",
        "line_error",
        "opened",
        "record_lines",
        "separator_named",
    ),
    "offeval.data.output": ("OutputFile", "OutputFolder"),
    "offeval.data.policy": ("PROBABILITY_TOLERANCE",),
    "offeval.data.tables": ("markdown_escape", "markdown_table", "write_csv"),
    "offeval.data.units": ("hash_ids",),
    "offeval.engine.parallel": ("worthwhile_workers",),
    "offeval.errors": (
        "command_line",
        "decimal_comma_hint",
        "describe_rows",
        "did_you_mean",
        "hint",
        "plain",
    ),
    "offeval.lazy": ("Deferred", "lazy_names"),
    "offeval.progress": ("progress_bar",),
    "offeval.registry.aliases": ("Alias",),
    "offeval.registry.hookspecs": ("Register",),
    "offeval.registry.sections": (
        "EvaluationReport",
        "MarkdownDocument",
        "ReportContext",
        "ReportSection",
        "report_sections",
    ),
    "offeval.specs": ("find_label", "parse_pairs"),
    "offeval.validation": (
        "check_choice",
        "check_flag",
        "check_level",
        "check_number",
        "check_whole",
    ),
}

__all__ = sorted(name for names in _WHERE.values() for name in names)

__getattr__ = lazy_names(__name__, _WHERE)


def __dir__() -> list[str]:
    """The declared names, imported yet or not, and the module's dunders."""
    return sorted({*__all__, *(n for n in globals() if n.startswith("__"))})
