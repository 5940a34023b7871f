"""Tables written for people: Markdown without optional dependencies, CSV safe in spreadsheets."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

#: First characters that make a spreadsheet read a cell as a formula (OWASP "CSV injection").
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")

# Characters with a meaning in Markdown or in the HTML a Markdown renderer passes through
# ($ opens mathematics on GitHub and in MyST). An underscore between two letters or digits
# opens no emphasis: it is left as it is.
_MARKDOWN_SPECIAL = re.compile(r"[\\`*\[\]<>|&~#!$]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")


def markdown_escape(text: object) -> str:
    """``text`` as literal Markdown: special characters backslash-escaped, lines joined (so
    that ``<script>`` shows as written and ``a|b`` does not split a table cell)."""
    flat = " ".join(str(text).splitlines())
    return _MARKDOWN_SPECIAL.sub(lambda m: "\\" + m.group(0), flat)


def markdown_table(
    frame: pd.DataFrame, digits: int = 4, cells: Mapping[Any, Callable[[Any], str]] | None = None
) -> str:
    """A pipe table of ``frame`` (index not included), floats to ``digits`` significant digits,
    text escaped (:func:`markdown_escape`); ``cells`` maps columns to their own cell writers."""

    def cell(v):
        if isinstance(v, (float, np.floating)):
            return "" if np.isnan(v) else f"{v:.{digits}g}"
        return markdown_escape(v)

    writers = [(cells or {}).get(c, cell) for c in frame.columns]
    head = "| " + " | ".join(map(markdown_escape, frame.columns)) + " |"
    rule = "|" + "|".join("---" for _ in frame.columns) + "|"
    body = [
        "| " + " | ".join(write(v) for write, v in zip(writers, row, strict=True)) + " |"
        for row in frame.itertuples(index=False)
    ]
    return "\n".join([head, rule, *body])


def spreadsheet_safe(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``frame`` whose text cells cannot run as spreadsheet formulas: text that
    begins with one of :data:`FORMULA_STARTS` (in cells, column names and the index) gets a
    leading single quote (OWASP's advice); numbers, negative ones too, are left as they are."""

    def safe(value):
        if isinstance(value, tuple):  # a label of a MultiIndex
            return tuple(map(safe, value))
        if isinstance(value, str) and value.startswith(FORMULA_STARTS):
            return "'" + value
        return value

    out = frame.copy()
    for column in out.columns:
        if not pd.api.types.is_numeric_dtype(out[column]):
            out[column] = out[column].map(safe)
    out.columns = out.columns.map(safe)
    out.index = out.index.map(safe)
    out.index.names = [safe(n) for n in frame.index.names]
    return out


def write_csv(frame: pd.DataFrame, path: str | Path, index: bool = False) -> Path:
    """Write ``frame`` as CSV at ``path`` through :func:`spreadsheet_safe`; return the path."""
    spreadsheet_safe(frame).to_csv(path, index=index)
    return Path(path)
