"""What an evaluation gives: an :class:`Estimate` of one policy by one estimator, with its
uncertainty, and the :class:`Evaluation` of many, with the covariances between them."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
import pandas as pd

from offeval.engine.fold import FoldState
from offeval.engine.intervals import DEFAULT, IntervalCase, Normal
from offeval.engine.summary import EstimatorSummary
from offeval.errors import OffevalError, OffevalWarning, did_you_mean
from offeval.specs import find_label
from offeval.stats.compare import PairwiseComparison, pairwise_grid
from offeval.stats.inference import Linearisation, quadratic_form, variance
from offeval.stats.moments import Moments, Tally


class Folded(Protocol):
    """What an evaluation reads of the accumulator that folded its pass (the accumulator
    module builds on this one, so it is named by what it has)."""

    policies: list
    estimators: list
    declarations: list
    intervals: list
    methods: dict
    value_ranges: list
    reward_range: tuple[float, float] | None
    moments: Moments | None
    state: FoldState

    def stats(self, p: int, e: int, moments: Moments, covariance: np.ndarray) -> Any:
        """The columns of one (policy, estimator), as its ``combine`` sees them."""


#: The interval of what no pass folded: differences and ratios of estimates.
_NORMAL = Normal()
#: An estimate's row (:meth:`Estimate.to_dict`) before its exclusions and diagnostics.
_COLUMNS = tuple(
    "policy estimator value se ci_low ci_high level interval_method n_units n_excluded".split()
)


@dataclass(frozen=True)
class Estimate:
    """A point estimate with standard error, confidence interval and diagnostics.

    ``n_units``: the units (trajectories) the estimate used; ``excluded``: units left out,
    by reason (the log had ``n_units + n_excluded``); ``diagnostics``: estimator-specific
    numbers (the effective sample size, say); ``interval_method``: the registered interval
    method that computed the interval.
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
    interval_method: str = "normal"

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
        row = {name: getattr(self, name) for name in _COLUMNS}
        row.update({f"excluded_{k}": v for k, v in self.excluded.items()})
        row.update({f"diag_{k}": v for k, v in self.diagnostics.items()})
        return row

    def to_frame(self) -> pd.DataFrame:
        """A one-row DataFrame."""
        return pd.DataFrame([self.to_dict()])

    def __repr__(self) -> str:
        method = "" if self.interval_method == "normal" else f" {self.interval_method}"
        pct = f"{100 * self.level:g}%{method}"
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


class Evaluation:
    """Estimates of many policies by many estimators on one log.

    Every estimate is linearised over the same unit-level columns, so paired differences,
    values relative to a baseline and significance grids are delta-method computations.
    Estimators are named by their label (``"my_est(cap=10)"``), or by their registered name
    or a spec (``"my_est:cap=100"``) when only one of the evaluated estimators matches.
    """

    def __init__(self, acc: Folded, level: float):
        self.level = level
        self.policies = [p.name for p in acc.policies]
        self.estimators = [d.label for d in acc.declarations]
        self.components = list(acc.estimators)
        self.declarations = list(acc.declarations)
        #: Each estimator's interval method (by position), as its estimates say.
        self.intervals = list(acc.intervals)
        self.n_units = acc.moments.n
        self._covariance = acc.moments.covariance()
        self._lin: dict[tuple[str, str], Linearisation] = {}
        self._estimates: dict[tuple[str, str], Estimate] = {}
        #: Why an interval should not be read, by (policy, estimator label).
        self._unread: dict[tuple[str, str], str] = {}
        for p, policy in enumerate(acc.policies):
            for e, estimator in enumerate(acc.estimators):
                stats = acc.stats(p, e, acc.moments, self._covariance)
                lin = estimator.combine(stats)
                label = self.estimators[e]
                self._lin[policy.name, label] = lin
                tally = acc.state.tallies.get((p, e), Tally())
                diagnostics = {**tally.counts, **estimator.diagnose(tally)}
                fitted = self.declarations[e].fitted
                if fitted is not None:  # parameters the estimator fitted from the log
                    diagnostics.update({f"fitted_{k}": v for k, v in fitted(stats).items()})
                excluded = acc.state.excluded.get((p, e), {})
                if sum(excluded.values()) > self.n_units:
                    raise OffevalError(
                        f"estimator {label!r} excluded {sum(excluded.values())} units out of "
                        f"{self.n_units}: a unit was excluded twice"
                    )
                self._estimates[policy.name, label] = self._estimate(
                    policy.name, label, lin, excluded, diagnostics, (acc, p, e)
                )
        for label in self.estimators:  # one warning per estimator, saying why
            notes = {p: self._unread[p, label] for p in self.policies if (p, label) in self._unread}
            if notes:
                listed = "; ".join(f"{policy}: {why}" for policy, why in notes.items())
                warnings.warn(
                    f"{label}'s intervals should not be read ({listed})",
                    OffevalWarning,
                    stacklevel=4,  # evaluate()'s caller
                )

    def _estimate(self, policy, label, lin, excluded=None, diagnostics=None, at=None) -> Estimate:
        """An estimate of ``lin``, its interval the one the pass ``acc`` folded for (p, e)
        (``at=(acc, p, e)``; None: normal), clipped to the value's bounds (which hold the
        truth: coverage is unchanged) with the diagnostic ``interval_clipped``."""
        se = self.standard_error(lin)
        diagnostics, excluded = dict(diagnostics or {}), dict(excluded or {})
        used = self.n_units - sum(excluded.values())
        name, method, p, e = DEFAULT, _NORMAL, -1, -1
        state = declared = known = within = None
        if at is not None:
            acc, p, e = at
            name, declared, within = acc.intervals[e], acc.declarations[e], acc.value_ranges[e]
            method, state = acc.methods[name], acc.state.intervals.get(name)
            known = acc.reward_range or declared.reward_range
        case = IntervalCase(
            p, e, label, lin.value, se, self.level, used, diagnostics, known, declared
        )
        low, high = method.bounds(case, state)
        why = method.unreadable(case, low, high)
        if why:  # said in the evaluation's warning
            diagnostics["interval_unreadable"] = 1
            self._unread[policy, label] = why
        if within is not None and (low < within[0] or high > within[1]):
            low = min(max(low, within[0]), within[1])
            high = max(min(high, within[1]), within[0])
            diagnostics["interval_clipped"] = True
        return Estimate(
            policy, label, lin.value, se, low, high, self.level, used, excluded, diagnostics, name
        )

    def estimate(self, policy: str, estimator: str | None = None) -> Estimate:
        """The estimate of one policy by one estimator (the only one, if omitted)."""
        return self._estimates[self._policy(policy), self._estimator(estimator)]

    def _policy(self, policy: str) -> str:
        if policy not in self.policies:
            close = did_you_mean(policy, self.policies)
            raise OffevalError(f"unknown policy {policy!r}{close}: one of {self.policies}")
        return policy

    def _estimator(self, estimator: str | None) -> str:
        """The label of the estimator named by label, registered name or spec."""
        if estimator is None:
            if len(self.estimators) != 1:
                raise OffevalError(f"name an estimator: one of {self.estimators}")
            return self.estimators[0]
        known = {
            label: (component.name, component.get_params())
            for label, component in zip(self.estimators, self.components, strict=True)
        }
        return find_label(estimator, known)

    def linearisation(self, policy: str, estimator: str | None = None) -> Linearisation:
        """The value and gradient behind an estimate."""
        return self._lin[self._policy(policy), self._estimator(estimator)]

    def standard_error(self, lin: Linearisation) -> float:
        """Standard error of any linearisation of this evaluation's columns (one combining two
        estimators needs ``evaluate(..., covariances="all")``)."""
        return float(np.sqrt(max(variance(lin, self._covariance, self.n_units), 0.0)))

    def difference(self, a: str, b: str, estimator: str | None = None) -> Estimate:
        """Paired difference V(a) - V(b) on the same log, with its (normal) interval; units
        excluded: per reason, the larger of the two estimates' counts (a lower bound when
        exclusions depend on the policy)."""
        est = self._estimator(estimator)
        lin = self._lin[self._policy(a), est].minus(self._lin[self._policy(b), est])
        return self._estimate(f"{a} - {b}", est, lin, self._excluded_by_either(a, b, est))

    def relative(self, baseline: str, estimator: str | None = None) -> list[Estimate]:
        """Every policy's value divided by the baseline's (baseline = 1, se 0), with normal
        intervals; units excluded count as in :meth:`difference`."""
        est = self._estimator(estimator)
        base = self._baseline(baseline, est)
        return [
            self._estimate(
                p, est, self._lin[p, est].ratio(base), self._excluded_by_either(p, baseline, est)
            )
            for p in self.policies
        ]

    def _excluded_by_either(self, a: str, b: str, est: str) -> dict[str, int]:
        first, second = self._estimates[a, est].excluded, self._estimates[b, est].excluded
        return {r: max(first.get(r, 0), second.get(r, 0)) for r in {*first, *second}}

    def _baseline(self, baseline: str, est: str) -> Linearisation:
        base = self._lin[self._policy(baseline), est]
        if not np.isfinite(base.value) or base.value == 0:
            raise OffevalError(
                f"baseline {baseline!r} has value {base.value} under {est}: values relative "
                "to it are undefined; choose another baseline"
            )
        return base

    def covariance(self, estimator: str | None = None, baseline: str | None = None) -> np.ndarray:
        """Covariance matrix of the policies' estimates (already divided by n)."""
        est = self._estimator(estimator)
        lins = [self._lin[p, est] for p in self.policies]
        if baseline is not None:
            base = self._baseline(baseline, est)
            lins = [lin.ratio(base) for lin in lins]
        k = self._covariance.shape[0]
        grads = np.stack([lin.dense(k) for lin in lins])
        return quadratic_form(grads, self._covariance) / self.n_units

    def grid(
        self,
        estimator: str | None = None,
        correction: str | None = None,
        alpha: float = 0.05,
        baseline: str | None = None,
    ) -> PairwiseComparison:
        """Paired significance tests between every pair of policies."""
        values = self.summary(estimator, baseline)
        return pairwise_grid(
            self.policies, values.values, values.covariance, correction=correction, alpha=alpha
        )

    def pairs(
        self,
        estimator: str | None = None,
        correction: str | None = None,
        baseline: str | None = None,
    ) -> pd.DataFrame:
        """The paired tests of one estimator as a table, one row per pair (``a`` minus ``b``):
        what ``offeval evaluate --out`` writes and reports show (with a ``baseline``, of
        values relative to it, named in the column ``relative_to``)."""
        table = self.grid(estimator, correction=correction, baseline=baseline).table.copy()
        if baseline is not None:
            table.insert(2, "relative_to", baseline)
        return table

    @property
    def ess_units(self) -> dict[str, str]:
        """What each estimator's effective sample size counts, by label: its declared
        ``ess_unit``, else rows."""
        return {d.label: d.ess_unit for d in self.declarations}

    def summary(
        self, estimator: str | None = None, baseline: str | None = None
    ) -> EstimatorSummary:
        """One estimator's values and their covariance, for decisions (and for saving)."""
        est = self._estimator(estimator)
        where = self.estimators.index(est)
        component, declared = self.components[where], self.declarations[where]
        if baseline is None:
            values = np.array([self._lin[p, est].value for p in self.policies])
        else:
            values = np.array([e.value for e in self.relative(baseline, est)])
        return EstimatorSummary(
            est,
            component.name,
            list(self.policies),
            values,
            self.covariance(est, baseline),
            self.n_units,
            self.level,
            baseline,
            declared.higher_is_better,
            dict(component.get_params()),
            self.intervals[where] if baseline is None else "normal",
        )

    def to_frame(self) -> pd.DataFrame:
        """One row per (policy, estimator)."""
        return pd.DataFrame([e.to_dict() for e in self._estimates.values()])

    def __repr__(self) -> str:
        frame = self.to_frame()[["policy", "estimator", "value", "se", "ci_low", "ci_high"]]
        return f"Evaluation on {self.n_units:,} units\n{frame.to_string(index=False)}"
