"""Report sections that plugins contribute to the demo's and evaluate's reports.

The core writes reports but decides nothing about their analyses: it asks
every plugin (hook ``register_report_sections``) for sections computed from a
:class:`ReportContext`, and writes what they give.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from offeval.engine.summary import EstimatorSummary


@dataclass(frozen=True)
class ReportContext:
    """What a report is about: the evaluation's summaries, and what else is known.

    ``summaries`` are by estimator label; ``truth`` holds the policies' exact
    values where known (the demo), else None; ``log`` and ``policies`` are
    there when a section may re-evaluate (a sweep over settings, say);
    ``seed`` seeds any simulation a section runs; ``workers`` processes may
    share a section's re-evaluation (as they shared the evaluation).
    """

    summaries: dict[str, EstimatorSummary]
    truth: pd.Series | None = None
    log: Any = None
    policies: list | None = None
    seed: int = 0
    workers: int = 1


@dataclass
class ReportSection:
    """A titled part of a report.

    ``text`` is Markdown; ``tables`` and ``figures`` are written next to the
    report (CSV, PNG) under their names; ``columns`` adds columns to the
    report's per-estimator summary (indexed by estimator label).
    """

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
            registry.record_failure(
                plugin,
                "register_report_sections",
                f"gave {type(section).__name__}, not a ReportSection",
            )
    return sections


@dataclass(frozen=True)
class EvaluationReport:
    """What a report writer (hook ``register_reports``) is given to report one evaluation.

    ``table`` holds the estimates as printed (with ``relative_*`` columns
    when a ``baseline`` is given); ``correction`` is the multiple-comparison
    correction of the paired tests (None: uncorrected); ``log`` and
    ``policies`` are there when the log was read whole (for the importance
    weights' histogram), else ``weights_note`` says why not; ``argv`` is the
    command line that made it; ``skipped`` maps the estimators that could
    not run to why.
    """

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
