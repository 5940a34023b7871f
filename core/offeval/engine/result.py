"""Estimate: the value of one estimator for one policy, with its uncertainty."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd


@dataclass(frozen=True)
class Estimate:
    """A point estimate with standard error, confidence interval and diagnostics.

    ``n_units`` is the number of units (trajectories) the estimate used;
    ``excluded`` counts units left out, by reason (``n_excluded`` in all; the
    log had ``n_units + n_excluded``); ``diagnostics`` holds
    estimator-specific numbers such as the effective sample size, the largest
    importance weight or the share of clipped weights.
    """

    policy: str
    estimator: str
    value: float
    se: float
    ci_low: float
    ci_high: float
    level: float
    n_units: int
    excluded: dict[str, int] = field(default_factory=dict)
    diagnostics: dict[str, Any] = field(default_factory=dict)

    @property
    def n_excluded(self) -> int:
        """Units left out of the estimate, whatever the reason."""
        return sum(self.excluded.values())

    @property
    def interval(self) -> tuple[float, float]:
        """The confidence interval as (low, high)."""
        return self.ci_low, self.ci_high

    def to_dict(self) -> dict[str, Any]:
        """A flat dictionary, one key per field and diagnostic."""
        row = {
            "policy": self.policy,
            "estimator": self.estimator,
            "value": self.value,
            "se": self.se,
            "ci_low": self.ci_low,
            "ci_high": self.ci_high,
            "level": self.level,
            "n_units": self.n_units,
            "n_excluded": self.n_excluded,
        }
        row.update({f"excluded_{k}": v for k, v in self.excluded.items()})
        row.update({f"diag_{k}": v for k, v in self.diagnostics.items()})
        return row

    def to_frame(self) -> pd.DataFrame:
        """A one-row DataFrame."""
        return pd.DataFrame([self.to_dict()])

    def __repr__(self) -> str:
        pct = f"{100 * self.level:g}%"
        lines = [
            f"Estimate {self.estimator} of {self.policy!r}: {self.value:.6g} "
            f"(se {self.se:.3g}, {pct} CI [{self.ci_low:.6g}, {self.ci_high:.6g}], "
            f"{self.n_units:,} units used)"
        ]
        if self.excluded:
            lines.append(f"  excluded: {self.excluded}")
        if self.diagnostics:
            diag = ", ".join(
                f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}"
                for k, v in self.diagnostics.items()
            )
            lines.append(f"  diagnostics: {diag}")
        return "\n".join(lines)
