"""One report document, written as ``report.html`` and ``report.md`` with the same content.

Both the demo's report and ``offeval evaluate --report`` are built from the
same parts: paragraphs, figures (PNG files next to the report, referenced by
relative paths, so nothing loads from the network), tables, the plugins'
report sections, and the command and versions that made the report. The
Markdown, and the layout of the plugins' sections, are the core's
:class:`~offeval.plugin.MarkdownDocument` (``evaluate --out`` writes
``sections.md`` with it); this module adds the HTML page.
"""

from __future__ import annotations

import html
import platform
import re
import shlex
import sys
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any

import pandas as pd

from offeval.plugin import MarkdownDocument, markdown_escape, markdown_table

#: Packages whose versions a report states.
PACKAGES = ("offeval", "numpy", "pandas", "scipy", "statsmodels", "matplotlib")
#: Resolution of every PNG a report writes (8 inch wide figures are 800 px: page width).
DPI = 100

#: The page's style. A table wider than the page scrolls sideways in its own box
#: (``div.table``) instead of being cut at the page's edge, its first column (what
#: each row is) staying in view; in print, where nothing scrolls, tables wrap their
#: cells and shrink their text to fit the paper. A table's caption is above it
#: (``p.caption`` then ``div.table``) and a gap separates it from what follows.
_STYLE = (
    "body{font-family:sans-serif;max-width:60em;margin:2em auto;padding:0 1em;color:#222}"
    "img{max-width:100%;height:auto}"
    "div.table{overflow-x:auto;max-width:100%;margin-bottom:1.5em;"
    # shadows at an edge where the table goes on (they scroll away with it)
    "background:linear-gradient(to right,#fff 30%,#fff0),"
    "linear-gradient(to left,#fff 30%,#fff0) 100% 0,"
    "radial-gradient(farthest-side at 0 50%,#0003,#0000),"
    "radial-gradient(farthest-side at 100% 50%,#0003,#0000) 100% 0;"
    "background-repeat:no-repeat;background-size:3em 100%,3em 100%,1em 100%,1em 100%;"
    "background-attachment:local,local,scroll,scroll}"
    "table{border-collapse:collapse;font-size:0.85em}"
    "td,th{padding:0.2em 0.6em;border-bottom:1px solid #ddd;text-align:left;vertical-align:top}"
    "td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}"
    # the first column stays in view while the rest scrolls under it
    "div.table td:first-child,div.table th:first-child{position:sticky;left:0;z-index:1;"
    "background:#fff;box-shadow:inset -1px 0 0 #eee}"
    "code{background:#f4f4f4;padding:0 0.2em}p.caption{font-size:0.85em;color:#555}"
    "p.caption{margin-bottom:0.3em}img+p.caption{margin-top:0.2em;margin-bottom:1.5em}"
    "@media print{body{max-width:none;margin:0;padding:0}"
    "div.table{overflow:visible}"
    "div.table td:first-child,div.table th:first-child{position:static;box-shadow:none}"
    "table{width:100%;table-layout:auto;font-size:7pt;page-break-inside:auto}"
    "tr{page-break-inside:avoid}"
    "td,th{padding:0.1em 0.25em}th{overflow-wrap:anywhere}td{overflow-wrap:break-word}"
    "td.num{white-space:nowrap}"
    "img{max-width:100%;page-break-inside:avoid}}"
)


class ReportDocument(MarkdownDocument):
    """The report's parts (:class:`~offeval.plugin.MarkdownDocument`), written as HTML too."""

    dpi = DPI

    def table(
        self,
        frame: pd.DataFrame,
        title: str = "",
        caption: str = "",
        *,
        headers: Mapping[str, str] | None = None,
        docstrings: Sequence[str] = (),
    ) -> None:
        """A table, shown without its index, with an optional caption above it.

        ``headers`` maps column names to the headers shown (``ci_low`` ->
        "95% CI low"; the frame and its CSV keep their names); a column not in
        it shows its own name. The cells of the columns named in ``docstrings``
        are docstring text: their RST literals (````x````) show as code. Every
        other cell shows as written.
        """
        shown = frame.rename(columns=dict(headers)) if headers else frame
        renamed = [dict(headers or {}).get(c, c) for c in docstrings]
        self.parts.append(("table", title, (shown, caption, tuple(renamed))))

    def table_markdown(self, frame: pd.DataFrame, docstrings: tuple[str, ...]) -> str:
        """:func:`~offeval.plugin.markdown_table`, the RST literals of the cells of the
        columns in ``docstrings`` written as code spans (every other cell as written)."""
        return markdown_table(frame, cells={c: _markdown_literals for c in docstrings})

    def provenance(self, argv: list[str]) -> None:
        """The command that made the report, when, and the versions it ran with."""
        made = provenance(argv)
        frame = pd.DataFrame({"": list(made), "value": list(made.values())})
        self.table(frame, "How this report was made")

    def write(self, out: Path) -> Path:
        """Write ``report.html`` and ``report.md`` into ``out``; return the HTML's path."""
        (out / "report.html").write_text(self.html())
        (out / "report.md").write_text(self.markdown())
        return out / "report.html"

    def html(self) -> str:
        """The document as one HTML page with its style inline."""
        body = []
        for kind, title, payload in self.parts:
            if title:
                body.append(f"<h2>{html.escape(title)}</h2>")
            if kind == "text":
                paragraphs = str(payload).split("\n\n")
                body += [f"<p>{_markdown_inline(p)}</p>" for p in paragraphs if p.strip()]
            elif kind == "figure":
                path, caption = payload
                alt = html.escape(caption or title or path.stem)
                body.append(f'<img src="{html.escape(path.name)}" alt="{alt}">')
                if caption:
                    body.append(f'<p class="caption">{html.escape(caption)}</p>')
            else:
                frame, caption, docstrings = payload
                if caption:
                    body.append(f'<p class="caption">{html.escape(caption)}</p>')
                body.append(f'<div class="table">{html_table(frame, docstrings)}</div>')
        return (
            '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f"<title>{html.escape(self.heading)}</title><style>{_STYLE}</style></head><body>"
            f"<h1>{html.escape(self.heading)}</h1>\n" + "\n".join(body) + "\n</body></html>\n"
        )


def html_table(frame: pd.DataFrame, docstrings: Sequence[str] = ()) -> str:
    """A table without its index; numeric columns right-aligned, numbers to 4 significant digits.

    Cells of the columns in ``docstrings`` show their RST literals (````x````) as
    ``<code>x</code>``; every other cell is shown as written. A long word of a header
    or a cell may break after ``(``, ``=`` and ``,`` (estimator labels make narrower
    columns, and a transposed table's first column of labels narrower too).
    """
    numeric = [pd.api.types.is_numeric_dtype(frame[c]) for c in frame.columns]
    literal = [c in docstrings for c in frame.columns]

    def cell(tag: str, value, num: bool, code: bool) -> str:
        if num and isinstance(value, float):
            text = "" if value != value else f"{value:.4g}"  # NaN shows as an empty cell
        elif code:
            text = "".join(
                f"<code>{html.escape(p)}</code>" if is_code else html.escape(p)
                for p, is_code in _literal_pieces(str(value))
            )
        else:
            text = _LONG_WORD.sub(
                lambda m: _BREAKS.sub(r"\1<wbr>", m.group(0)), html.escape(str(value))
            )
        return f'<{tag} class="num">{text}</{tag}>' if num else f"<{tag}>{text}</{tag}>"

    columns = list(zip(numeric, literal, strict=True))
    head = "".join(
        cell("th", c, n, False) for c, (n, _) in zip(frame.columns, columns, strict=True)
    )
    rows = [
        "<tr>"
        + "".join(cell("td", v, n, code) for v, (n, code) in zip(row, columns, strict=True))
        + "</tr>"
        for row in frame.itertuples(index=False)
    ]
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


#: A word of a header too long for a narrow column, and where it may break: after these.
_LONG_WORD, _BREAKS = re.compile(r"\S{16,}"), re.compile(r"([(=,])")


def _literal_pieces(text: str) -> list[tuple[str, bool]]:
    """Docstring ``text`` cut at its RST literals: (piece, whether it is a literal)."""
    pieces, at = [], 0
    for match in MarkdownDocument.RST_LITERAL.finditer(text):
        pieces += [(text[at : match.start()], False), (match.group(1), True)]
        at = match.end()
    pieces.append((text[at:], False))
    return [(p, code) for p, code in pieces if p]


def _markdown_literals(value: Any) -> str:
    """A docstring cell's text as one Markdown table cell: its RST literals as code spans,
    the rest escaped (:func:`markdown_escape`)."""
    return "".join(
        "`" + " ".join(p.splitlines()).replace("|", "\\|") + "`" if code else markdown_escape(p)
        for p, code in _literal_pieces(str(value))
    )


_BACKSLASH_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")


def _markdown_inline(text: str) -> str:
    """A paragraph of the Markdown this module writes as HTML: `code` spans, backslash escapes.

    Outside code spans, a backslash before punctuation shows the punctuation
    alone (as :func:`offeval.data.tables.markdown_escape` meant it); every
    character is HTML-escaped.
    """
    pieces = re.split(r"(?<!\\)`", text)
    if len(pieces) % 2 == 0:  # an unpaired backtick: no code spans
        pieces = [text]
    return "".join(
        f"<code>{html.escape(p)}</code>" if i % 2 else html.escape(_BACKSLASH_ESCAPE.sub(r"\1", p))
        for i, p in enumerate(pieces)
    )


def provenance(argv: list[str]) -> dict[str, str]:
    """The command that made a report, when, and the versions it ran with."""
    versions = {}
    for package in PACKAGES:
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            continue
    return {
        "command": shlex.join(["offeval", *argv]),
        "written": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "python": f"{platform.python_version()} ({sys.platform})",
        **versions,
    }
