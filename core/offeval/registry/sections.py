"""Report sections that plugins contribute (hook ``register_report_sections``) to the demo's
and evaluate's reports, and the Markdown document that writes them."""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import pandas as pd

from offeval.data.tables import markdown_escape, markdown_table, write_csv

if TYPE_CHECKING:  # the registry lies below the engine, which looks components up in it
    from offeval.engine.summary import EstimatorSummary


@dataclass(frozen=True)
class ReportContext:
    """What a report is about: the evaluation's ``summaries`` by estimator label, the
    policies' exact values (``truth``) where known (the demo), the ``log`` and ``policies`` for
    a section that re-evaluates (a sweep over settings, say) on ``workers`` processes, as the
    evaluation did, and the ``seed`` of any simulation a section runs."""

    summaries: dict[str, EstimatorSummary]
    truth: pd.Series | None = None
    log: Any = None
    policies: list | None = None
    seed: int = 0
    workers: int = 1


@dataclass
class ReportSection:
    """A titled part of a report: ``text`` in Markdown, ``tables`` and ``figures`` written next
    to the report (CSV, PNG) under their names, ``columns`` added to the report's per-estimator
    summary (indexed by estimator label)."""

    title: str
    text: str = ""
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    figures: dict[str, Any] = field(default_factory=dict)
    columns: pd.DataFrame | None = None


def report_sections(registry, context: ReportContext) -> list[ReportSection]:
    """Every section the plugins give for this context (a failing plugin is reported, skipped)."""
    sections = []
    for plugin, section in registry.call("register_report_sections", report=context):
        if isinstance(section, ReportSection):
            sections.append(section)
        else:
            why = f"gave {type(section).__name__}, not a ReportSection"
            registry.record_failure(plugin, "register_report_sections", why)
    return sections


@dataclass(frozen=True)
class EvaluationReport:
    """What a report writer (hook ``register_reports``) is given to report one evaluation:
    ``table``, the estimates as printed (``relative_*`` columns with a ``baseline``);
    ``correction``, the paired tests' multiple-comparison correction (None: uncorrected);
    ``log`` and ``policies`` when the log was read whole (for the importance weights'
    histogram), else ``weights_note`` says why not; ``argv``, the command line that made it;
    ``skipped``, the estimators that could not run and why."""

    evaluation: Any
    table: pd.DataFrame
    baseline: str | None = None
    correction: str | None = None
    sections: list[ReportSection] = field(default_factory=list)
    log: Any = None
    policies: list | None = None
    argv: list[str] | None = None
    weights_note: str | None = None
    skipped: dict[str, str] = field(default_factory=dict)


@dataclass
class MarkdownDocument:
    """An ordered list of parts written as Markdown: ``(kind, title, payload)``, kind text
    (its payload Markdown), figure (``(path, caption)``, a PNG next to the document) or table
    (``(frame, caption, docstrings)``, ``docstrings`` naming the columns a subclass writes its
    own way, :meth:`table_markdown`; here none)."""

    heading: str
    parts: list[tuple[str, str, object]] = field(default_factory=list)
    _files: set[str] = field(default_factory=set, repr=False)
    #: Resolution of the sections' figures (8 inch wide figures are 800 px: page width).
    dpi: ClassVar[int] = 100
    #: An RST inline literal, ````x````, not preceded by a backslash (an escaped backtick).
    RST_LITERAL: ClassVar[re.Pattern] = re.compile(
        r"(?<![\\`])``(?!`)(.+?)(?<!`)``(?!`)", re.DOTALL
    )

    def text(self, body: str, title: str = "") -> None:
        """Markdown paragraphs under an optional heading: user text in ``body`` goes through
        :func:`~offeval.data.tables.markdown_escape`; RST literals (````x````) become `x`."""
        literals = self.RST_LITERAL.sub(lambda m: f"`{m.group(1)}`", str(body))
        self.parts.append(("text", title, literals))

    def figure(self, path: Path, title: str = "", caption: str = "") -> None:
        """A PNG already written next to the document, with an optional caption below it."""
        self.parts.append(("figure", title, (Path(path), caption)))

    def table(self, frame: pd.DataFrame, title: str = "", caption: str = "") -> None:
        """A table, shown without its index, with an optional caption above it."""
        self.parts.append(("table", title, (frame, caption, ())))

    def sections(self, sections: list[ReportSection], out: Path) -> None:
        """The plugins' sections: their text, figures (PNG) and tables (also as CSV) in ``out``."""
        pyplot = sys.modules.get("matplotlib.pyplot")  # a section's figure may be pyplot's
        for section in sections:
            self.text(section.text, section.title)
            for name, figure in section.figures.items():
                path = out / self._file_name(section.title, name, ".png")
                figure.savefig(path, dpi=self.dpi)
                if pyplot is not None:
                    pyplot.close(figure)
                self.figure(path, caption=name.replace("_", " "))
            for name, frame in section.tables.items():
                path = write_csv(frame, out / self._file_name(section.title, name, ".csv"), True)
                caption = f"{name.replace('_', ' ')} ({path.name})"
                shown = frame.reset_index()
                numeric = all(pd.api.types.is_numeric_dtype(t) for t in frame.dtypes)
                if numeric and len(frame.columns) > len(frame) > 0:  # wide: grows down, transposed
                    shown = frame.T.astype(float)
                    shown.columns = [str(c) for c in frame.index]
                    shown = shown.rename_axis(frame.columns.name or "column").reset_index()
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

    def markdown(self) -> str:
        """The document as Markdown, figures as relative image links."""
        lines = [f"# {markdown_escape(self.heading)}", ""]
        for kind, title, payload in self.parts:
            if title:
                lines += [f"## {markdown_escape(title)}", ""]
            if kind == "text":
                lines += [str(payload).strip(), ""]
            elif kind == "figure":
                path, caption = payload
                alt = markdown_escape(caption or title or path.stem)
                lines += [f"![{alt}]({path.name})", ""]
            else:
                frame, caption, docstrings = payload
                if caption:
                    lines += [markdown_escape(caption), ""]
                lines += [self.table_markdown(frame, docstrings), ""]
        return "\n".join(lines)

    def table_markdown(self, frame: pd.DataFrame, docstrings: tuple[str, ...]) -> str:
        """A table part as a Markdown table (:func:`~offeval.data.tables.markdown_table`)."""
        return markdown_table(frame)


def _slug(text: str) -> str:
    """Lower-case letters, digits and single underscores: safe in a file name and a URL."""
    kept = "".join(c if c.isascii() and c.isalnum() else " " for c in text.lower())
    return "_".join(kept.split()) or "part"
