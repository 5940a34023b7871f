"""What the reports' tables show: headers people read, units, the estimators not run by reason.

The frames keep their column names (the CSV files and the Python API use them);
only the rendered report shows these headers.
"""

from __future__ import annotations

import pandas as pd

from offeval import Evaluation

#: The unit of each estimand, as a table or an axis says it.
UNITS = {
    "reward_per_impression": "reward per impression",
    "reward_per_trajectory": "reward per trajectory",
}
#: What an estimate without an estimand (a normalised metric, a rate) is measured in.
OWN_SCALE = "own scale"


def headers(level: float = 0.95) -> dict[str, str]:
    """Column name -> header shown, for the columns the reports' tables share.

    ``level`` is the intervals' level (0.95 shows "95% CI low").
    """
    ci = f"{level:.0%} CI"
    return {
        # estimates
        "value": "estimate",
        "se": "std. error",
        "ci_low": f"{ci} low",
        "ci_high": f"{ci} high",
        "n_units": "trajectories used",
        "relative_value": "relative to baseline (baseline = 1)",
        "relative_ci_low": f"{ci} low (relative)",
        "relative_ci_high": f"{ci} high (relative)",
        # the demo's summary
        "kendall_tau": "Kendall's tau",
        "tau_p_value": "p-value of tau",
        "mean_abs_error": "mean abs. error (reward per impression)",
        "ci_coverage": f"{ci} coverage (share of policies)",
        "picked": "policy picked",
        "p_true_best_ranked_first": "P(true best ranked first)",
        # paired tests
        "a": "policy a",
        "b": "policy b",
        "relative_to": "relative to",
        "difference": "difference a - b",
        "z": "z",
        "p_value": "p-value",
        "p_adjusted": "p-value (corrected)",
        "significant": "significant",
        # weights
        "ess": "effective sample size",
        "ess unit": "unit of the effective sample size",
        "ess_share": "effective sample size / number of weights",
        "mean_weight": "mean weight (1 if propensities are right)",
        "mean_weight_z": "mean weight: z against 1",
        "max_weight": "largest weight (pi / mu)",
        "clipped_share": "share of weights capped",
        "support_violations": "unsupported cells (count)",
        "unsupported_mass_per_slot": "unsupported target mass per slot",
    }


def unit_of(declaration) -> str:
    """The unit an estimator's values are in: its estimand's, else its own scale."""
    return UNITS.get(declaration.estimand, OWN_SCALE)


def units(evaluation: Evaluation) -> dict[str, str]:
    """Each estimator's label -> the unit of its values (:func:`unit_of`)."""
    return {d.label: unit_of(d) for d in evaluation.declarations}


def skipped_by_reason(skipped: dict[str, str]) -> pd.DataFrame:
    """The estimators not run, one row per reason: ``why`` and the ``estimators`` it stops.

    A reason that starts with the estimator's own name ("dr needs the log's
    candidate table ...") is the same reason as another estimator's with its
    name: the name is left out, so that they share a row. Rows are in the order
    of their first estimator.
    """
    grouped: dict[str, list[str]] = {}
    for estimator, why in skipped.items():
        reason = why.removeprefix(f"{estimator} ") if why.startswith(f"{estimator} ") else why
        grouped.setdefault(reason, []).append(estimator)
    return pd.DataFrame(
        {
            "estimators": [", ".join(names) for names in grouped.values()],
            "why": list(grouped),
        }
    )
