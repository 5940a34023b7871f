"""One report document, written as ``report.html`` and ``report.md`` with the same content.

Both the demo's report and ``offeval evaluate --report`` are built from the
same parts: paragraphs, figures (PNG files next to the report, referenced by
relative paths, so nothing loads from the network), tables, the plugins'
report sections, and the command and versions that made the report.
"""

from __future__ import annotations

import html
import platform
import re
import shlex
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any

import pandas as pd

from offeval.data.tables import markdown_escape, markdown_table, write_csv
from offeval.registry.sections import ReportSection

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


@dataclass
class ReportDocument:
    """An ordered list of parts: ``(kind, title, payload)`` with kind text, figure or table."""

    heading: str
    parts: list[tuple[str, str, object]] = field(default_factory=list)
    _files: set[str] = field(default_factory=set, repr=False)

    def text(self, body: str, title: str = "") -> None:
        """Markdown paragraphs (separated by blank lines) under an optional heading.

        ``body`` is Markdown: user text in it goes through
        :func:`offeval.data.tables.markdown_escape`. Titles, captions and table
        cells are plain text, escaped when the document is written.
        """
        self.parts.append(("text", title, body))

    def figure(self, path: Path, title: str = "", caption: str = "") -> None:
        """A PNG already written next to the report, with an optional caption below it."""
        self.parts.append(("figure", title, (Path(path), caption)))

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

    def sections(self, sections: list[ReportSection], out: Path) -> None:
        """The plugins' sections: their text, figures (PNG) and tables (also as CSV) in ``out``."""
        pyplot = sys.modules.get("matplotlib.pyplot")  # a section's figure may be pyplot's
        for section in sections:
            self.text(section.text, section.title)
            for name, figure in section.figures.items():
                path = out / self._file_name(section.title, name, ".png")
                figure.savefig(path, dpi=DPI)
                if pyplot is not None:
                    pyplot.close(figure)
                self.figure(path, caption=name.replace("_", " "))
            for name, frame in section.tables.items():
                path = write_csv(frame, out / self._file_name(section.title, name, ".csv"), True)
                caption = f"{name.replace('_', ' ')} ({path.name})"
                shown = frame.reset_index()
                if _reads_better_transposed(frame):
                    shown = _transposed(frame)
                    down, across = shown.columns[0], frame.index.name or "row of the file"
                    caption += f"; shown transposed: a row per {down}, a column per {across}"
                self.table(shown, caption=caption)

    def _file_name(self, title: str, name: str, suffix: str) -> str:
        """``{title}_{name}{suffix}`` in letters, digits and _, unique within the document."""
        stem = "_".join(_slug(part) for part in (title, name))
        candidate, k = stem + suffix, 1
        while candidate in self._files:
            k += 1
            candidate = f"{stem}_{k}{suffix}"
        self._files.add(candidate)
        return candidate

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
                paragraphs = rst_literals(str(payload)).split("\n\n")
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

    def markdown(self) -> str:
        """The document as Markdown, figures as relative image links."""
        lines = [f"# {markdown_escape(self.heading)}", ""]
        for kind, title, payload in self.parts:
            if title:
                lines += [f"## {markdown_escape(title)}", ""]
            if kind == "text":
                lines += [rst_literals(str(payload)).strip(), ""]
            elif kind == "figure":
                path, caption = payload
                alt = markdown_escape(caption or title or path.stem)
                lines += [f"![{alt}]({path.name})", ""]
            else:
                frame, caption, docstrings = payload
                if caption:
                    lines += [markdown_escape(caption), ""]
                lines += [_markdown_table(frame, docstrings), ""]
        return "\n".join(lines)


def _reads_better_transposed(frame: pd.DataFrame) -> bool:
    """Whether a section's table is shown transposed: more columns than rows, all numbers.

    A table of each policy's probability per estimator (policies down, estimators
    across) grows sideways with the estimators, past the page; transposed it grows
    down. Only numbers are transposed: a column then holds one kind of value.
    """
    numeric = all(pd.api.types.is_numeric_dtype(t) for t in frame.dtypes)
    return numeric and len(frame.columns) > len(frame) > 0


def _transposed(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` transposed, its column names in a first column (named after what the
    columns' axis is, else "column"), its row labels as headers."""
    wide = frame.T.astype(float)
    wide.columns = [str(c) for c in frame.index]
    first = frame.columns.name or "column"
    return wide.rename_axis(first).reset_index()


def _slug(text: str) -> str:
    """Lower-case letters, digits and single underscores: safe in a file name and a URL."""
    kept = "".join(c if c.isascii() and c.isalnum() else " " for c in text.lower())
    return "_".join(kept.split()) or "part"


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
#: An RST inline literal, ````x````, not preceded by a backslash (an escaped backtick).
_RST_LITERAL = re.compile(r"(?<![\\`])``(?!`)(.+?)(?<!`)``(?!`)", re.DOTALL)


def rst_literals(text: str) -> str:
    """Markdown ``text`` whose RST literals (````x````, from a docstring) are Markdown's `x`."""
    return _RST_LITERAL.sub(lambda m: f"`{m.group(1)}`", text)


def _literal_pieces(text: str) -> list[tuple[str, bool]]:
    """Docstring ``text`` cut at its RST literals: (piece, whether it is a literal)."""
    pieces, at = [], 0
    for match in _RST_LITERAL.finditer(text):
        pieces += [(text[at : match.start()], False), (match.group(1), True)]
        at = match.end()
    pieces.append((text[at:], False))
    return [(p, code) for p, code in pieces if p]


def _markdown_table(frame: pd.DataFrame, docstrings: Sequence[str] = ()) -> str:
    """:func:`offeval.data.tables.markdown_table`, the RST literals of the cells of the
    columns in ``docstrings`` written as code spans (every other cell as written)."""
    return markdown_table(frame, cells={c: _markdown_literals for c in docstrings})


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
