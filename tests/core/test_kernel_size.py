"""The kernel stays small: core lines and plugin-API names below their ceilings, and each
plugin-API name used by two plugins or listed below with why it is there.

The ceilings are issue 29's targets, 9,000 lines and 40 names, which the redesign reached;
the test prints who uses each name.
"""

from __future__ import annotations

import ast
from pathlib import Path

import offeval.plugin

ROOT = Path(__file__).resolve().parents[2]
#: Lines of core/**/*.py and names of offeval.plugin, at most.
MAX_CORE_LINES = 9_000
MAX_PLUGIN_API_NAMES = 40
#: Names one plugin uses, each kept for third parties or not yet moved to its family.
ONE_USER = {
    # for any third-party plugin writing files, reports or commands
    "EvaluationReport": "what a report writer is given",
    "MarkdownDocument": "a document of text, figures and tables as Markdown, to build on",
    "report_sections": "the sections plugins give a report",
    "OutputFile": "a file written whole or not at all",
    "markdown_table": "a table as Markdown",
    "progress_bar": "a long command's progress",
    "progress_of": "a command's --quiet",
    "check_level": "a confidence level argument",
    "command_line": "hints in the command line's words",
    "plain": "numbers in messages as the user typed them",
    "decimal_comma_hint": "a number written with a decimal comma, named",
    "worthwhile_workers": "workers worth a process",
    "parse_pairs": "the spec grammar",
    "find_label": "the spec grammar",
    # reading a family's own file formats beside the core's tables (IR's TREC and JSON)
    "data_suffix": "the suffix naming a file's format",
    "opened": "a file opened decompressed",
    "separator_named": "a named separator",
    "header_separator": "a header's separator",
    "record_lines": "the lines records start on",
    "line_error": "an error naming a file's line",
}


def users() -> dict[str, set[str]]:
    """Each plugin-API name and the plugins (and the example plugin) importing it."""
    found: dict[str, set[str]] = {name: set() for name in offeval.plugin.__all__}
    code = [*(ROOT / "plugins").glob("offeval_*/**/*.py"), *(ROOT / "examples").glob("*/*/*.py")]
    for path in code:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module == "offeval.plugin":
                for alias in node.names:
                    found.setdefault(alias.name, set()).add(path.relative_to(ROOT).parts[1])
    return found


def test_the_core_and_the_plugin_api_stay_below_their_ceilings():
    lines = sum(len(p.read_text().splitlines()) for p in (ROOT / "core").rglob("*.py"))
    assert lines <= MAX_CORE_LINES, f"core/ has {lines:,} lines"
    assert len(offeval.plugin.__all__) <= MAX_PLUGIN_API_NAMES


def test_each_plugin_api_name_has_two_users_or_a_reason():
    found = users()
    for name, who in sorted(found.items()):
        print(f"{name}: {', '.join(sorted(who)) or '-'}")
    lonely = {name for name, who in found.items() if len(who) < 2}
    assert lonely <= set(ONE_USER), sorted(lonely - set(ONE_USER))
    assert not set(ONE_USER) - set(offeval.plugin.__all__)
