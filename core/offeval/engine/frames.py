"""An evaluation as tables: its paired tests, what its effective sample sizes count, and
the estimators that could not run.

What ``offeval evaluate --out`` writes as CSV, and reports show.
"""

from __future__ import annotations

import pandas as pd

from offeval.engine.result import Evaluation


def pairs_table(
    evaluation: Evaluation, estimator: str, correction: str | None, baseline: str | None
) -> pd.DataFrame:
    """The paired tests of one estimator, one row per pair (``a`` minus ``b``).

    With a ``baseline``, the differences are between values relative to it
    (baseline = 1), and the column ``relative_to`` names it on every row.
    """
    table = evaluation.grid(estimator, correction=correction, baseline=baseline).table.copy()
    if baseline is not None:
        table.insert(2, "relative_to", baseline)
    return table


def ess_units(evaluation: Evaluation) -> dict[str, str]:
    """What each estimator's effective sample size counts: its tag ``ess_unit``, else rows."""
    return {d.label: d.ess_unit for d in evaluation.declarations}


def skipped_table(skipped: dict[str, str]) -> pd.DataFrame:
    """The estimators that could not run, one row each: ``estimator`` and ``why``."""
    return pd.DataFrame({"estimator": list(skipped), "why": list(skipped.values())})
