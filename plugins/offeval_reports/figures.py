"""What every figure of the reports shares: the page it is drawn for, and its text."""

from __future__ import annotations

#: Width of the page in inches: a wider figure is shrunk to it, and its text with it.
PAGE_WIDTH = 8.0
#: Smallest font a report's figure uses, in points (12.5 px at the reports' 100 dpi).
MIN_FONT = 9


def figure_text(text: object) -> str:
    """``text`` shown as written in a matplotlib figure (``$`` would start mathematics)."""
    return str(text).replace("$", r"\$")
