"""Markdown tables without optional dependencies."""

from __future__ import annotations

import numpy as np
import pandas as pd


def markdown_table(frame: pd.DataFrame, digits: int = 4) -> str:
    """A pipe table of ``frame`` (index not included), floats to ``digits`` significant digits."""

    def cell(v):
        if isinstance(v, (float, np.floating)):
            return "" if np.isnan(v) else f"{v:.{digits}g}"
        return str(v)

    head = "| " + " | ".join(map(str, frame.columns)) + " |"
    rule = "|" + "|".join("---" for _ in frame.columns) + "|"
    body = ["| " + " | ".join(cell(v) for v in row) + " |" for row in frame.itertuples(index=False)]
    return "\n".join([head, rule, *body])
