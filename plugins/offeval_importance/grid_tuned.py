"""Estimators that choose their own parameter from the log (obp 0.5.7's ``*Tuning`` estimators).

:class:`GridTuned` is what such estimators share: the grid of candidate
values and the rule's parameters (checked), the label, the candidates in
obp's order, the column the estimated MSE's bias bound reads, and the choice
itself (:mod:`offeval_importance.tuning_rules`) in ``combine``. An estimator plugin
gives each candidate's column and value; the estimate is the chosen
candidate's, with that candidate's standard error, and the chosen value is
reported as ``fitted_lambda_``.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

from offeval import Shared
from offeval.plugin import check_flag
from offeval.stats import Linearisation
from offeval_importance import tuning_rules as tuning


class GridTuned:
    """Mixin of an estimator computed at every value of ``lambdas``, one chosen from the log.

    A subclass calls :meth:`set_tuning` from its ``__init__`` (parameters
    ``lambdas``, ``tuning_method``, ``use_bias_upper_bound``, ``delta`` as obp
    names them), emits :meth:`candidate_key` columns for every value of
    :attr:`grid`, the unclipped estimator's column under :attr:`untuned_key`,
    1 per row under ``"rows"`` and :meth:`tuning_columns`; it defines
    :meth:`candidate_value` (the candidate's estimate from its column). The
    grid's bounds are ``high`` (and 0), its default ``default_lambdas``, and
    ``descending`` gives obp's order of the grid, in which ties are broken.
    List it before the estimator's base class (``class X(GridTuned, Base)``):
    its ``label_params``, ``combine`` and ``fitted`` must come first.

    ``tuning_method`` is ``"slope"`` (SLOPE, Su, Srinath and Krishnamurthy,
    ICML 2020, as obp implements it) or ``"mse"`` (the smallest estimated
    variance + squared bias, the bias raised to a high-probability bound with
    ``use_bias_upper_bound``, at level ``delta``). Widths, estimates and MSEs
    equal within a relative 1e-9 are ties, broken as obp does: the first value
    in obp's grid order (so the choice does not depend on rounding, a BLAS
    kernel or the chunking). The interval is the chosen
    candidate's: the choice's own uncertainty is not in it. The bound's
    largest-weight term reads sqrt(sum of w^2), at least the largest weight,
    where obp reads the largest weight (the engine does not hand ``combine``
    the tally that holds it): with the bound, the MSE rule may choose a less
    clipped candidate than obp's.
    """

    default_lambdas: tuple[float, ...] = tuning.LARGE_WEIGHTS
    high: float = float("inf")
    descending: bool = True
    #: The column of the estimator without clip, switch or shrinkage (its bias is read
    #: against it).
    untuned_key: Hashable = "untuned"

    lambdas: tuple[float, ...]
    tuning_method: str
    use_bias_upper_bound: bool
    delta: float

    def set_tuning(
        self, lambdas: Any, tuning_method: Any, use_bias_upper_bound: Any, delta: Any
    ) -> None:
        """Check and keep the grid and the rule's parameters."""
        self.lambdas = tuning.check_grid(lambdas, "lambdas", high=self.high)
        self.tuning_method, self.delta = tuning.check_tuning(tuning_method, delta)
        self.use_bias_upper_bound = check_flag(use_bias_upper_bound, "use_bias_upper_bound")

    def label_params(self) -> dict:
        """The changed parameters, the grid only when it is not the default one."""
        out = self.changed_params()  # type: ignore[attr-defined]
        if out.get("lambdas") == tuning.check_grid(self.default_lambdas, high=self.high):
            del out["lambdas"]
        return out

    @property
    def grid(self) -> tuple[float, ...]:
        """The candidates in obp's order (descending for clips and switches, else ascending)."""
        return tuple(sorted(self.lambdas, reverse=self.descending))

    def candidate_key(self, lambda_: float) -> Hashable:
        """The key of the candidate's column."""
        return ("candidate", lambda_)

    def candidate_value(self, stats, key: Hashable) -> Linearisation:
        """The estimate of the candidate whose column is ``key``."""
        raise NotImplementedError

    def tuning_columns(self) -> dict[Hashable, Shared]:
        """w^2 per row where the estimated MSE's bias bound reads it, else nothing."""
        if self.tuning_method == "mse" and self.use_bias_upper_bound:
            return {"w2": Shared(tuning.squared_weights)}
        return {}

    def chosen(self, stats) -> int:
        """The index in :attr:`grid` of the candidate the rule chooses."""
        rows = stats.mean("rows")
        untuned = stats.mean(self.untuned_key)
        candidates = [
            tuning.Candidate(
                self.candidate_value(stats, self.candidate_key(lam)),
                (untuned - stats.mean(self.candidate_key(lam))) / rows,
            )
            for lam in self.grid
        ]
        bound = None
        if self.tuning_method == "mse" and self.use_bias_upper_bound:
            bound = tuning.weight_bound(stats, "w2", "rows")
        return tuning.choose(stats, candidates, self.tuning_method, self.delta, bound)

    def combine(self, stats) -> Linearisation:
        """The chosen candidate's estimate."""
        return self.candidate_value(stats, self.candidate_key(self.grid[self.chosen(stats)]))

    def fitted(self, stats) -> dict[str, float]:
        """The chosen value of the parameter."""
        return {"lambda_": self.grid[self.chosen(stats)]}
