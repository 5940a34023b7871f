"""The IS family as column emitters for the offeval statistics engine.

Every estimator here targets the expected reward per impression, i.e. per log
row (the impression-to-stream rate of
Gruson et al., WSDM 2019). Its unit of independence is the
trajectory: row contributions are summed per trajectory, so rows of the same
session never count as independent. With one row per trajectory this is the
textbook estimator; with several it is its cluster-robust form.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from offeval import BaseEstimator, ColumnError, ConfigurationError, Contribution, PolicyView
from offeval.plugin import check_number, check_whole
from offeval.stats import Linearisation, Tally, ratio_of_means
from offeval_importance.weights import (
    ROWS,
    capped_reward_column,
    capped_rewards,
    capped_weight_column,
    capped_weights,
    check_cap,
    weight_diagnostics,
    weight_tally,
)

INF = float("inf")


class _ISFamily(BaseEstimator):
    """Shared declarations and diagnostics of the weight-based estimators."""

    cap: float = INF
    estimand = "reward_per_impression"
    requires: tuple[str, ...] = ("propensity",)

    def diagnose(self, tally: Tally) -> dict[str, float]:
        """Effective sample size, weights, clipping and support diagnostics."""
        return weight_diagnostics(tally)


class _Capped(_ISFamily):
    """An estimator of the family with one parameter, the cap on the weights (>= 0 or inf).

    Without a cap it keeps the guarantee ``uncapped`` names; where the cap
    binds it is biased, and promises nothing.
    """

    tags = {"linear_in_reward": True}
    uncapped: str = "unbiased"

    def __init__(self, cap: float = 100.0):
        check_cap(cap)
        self.cap = cap

    @property
    def guarantee(self) -> str | None:
        """``uncapped`` without a cap; none where the cap binds."""
        return self.uncapped if self.cap == INF else None


class _Uncapped:
    """The uncapped form of a capped estimator: no parameter, the cap at infinity."""

    def __init__(self):
        self.cap = INF

    def get_params(self) -> dict:
        """No parameters."""
        return {}


class CIS(_Capped):
    """Capped importance sampling: mean of r * min(cap, pi/mu).

    Biased downwards where weights are capped; ``cap=inf`` is plain IS (unbiased).
    """

    name = "cis"

    @property
    def betting_columns(self) -> dict[str, str] | None:
        """Without a cap (IS), what a betting interval reads: r w, w and the rows, per row.
        Capped weights' mean is below one: no betting interval."""
        if self.cap != INF:
            return None
        return {"rewards": "rw", "weights": "w", "rows": "rows", "divisor": "rows"}

    def contribute(self, view: PolicyView) -> Contribution:
        """Columns: r * min(cap, w) (shared with NCIS), and 1 per row; without a cap, also
        the weights w (shared with SNIPS) that betting intervals read."""
        cap = float(self.cap)
        columns = {"rw": capped_reward_column(cap), "rows": ROWS}
        if cap == INF:
            columns["w"] = capped_weight_column(INF)
        return Contribution(columns, tally=weight_tally(view, cap))

    def combine(self, stats) -> Linearisation:
        """Per-row mean of the capped reward."""
        return ratio_of_means(stats, "rw", "rows")


class IS(_Uncapped, CIS):
    """Importance sampling (inverse propensity scoring): mean of r * pi/mu. Unbiased.

    Its intervals are normal by default; ``evaluate(..., interval="betting")``
    gives betting intervals (Waudby-Smith and Ramdas 2023), which hold
    whatever the tails of the weights, for rewards within the log's range.
    """

    name = "is"


class IPS(IS):
    """Inverse propensity scoring (Horvitz and Thompson 1952; obp's IPW): mean of r * pi/mu.

    The same estimator as ``is``, under the name obp users know. Unbiased
    when the propensities are right and the logger covers the target.
    """

    name = "ips"


class ClippedIPS(CIS):
    """Clipped IPS (obp's IPW with ``lambda_``; Strehl et al. 2010): mean of r * min(cap, pi/mu).

    The same estimator as ``cis``: biased downwards where the cap binds, with
    a lower variance.
    """

    name = "clipped_ips"


class NCIS(_Capped):
    """Normalised capped IS: sum r*min(cap, w) / sum min(cap, w).

    The self-normalised (SNIPS) estimator when ``cap=inf``: consistent.
    """

    name = "ncis"
    uncapped = "consistent"

    def contribute(self, view: PolicyView) -> Contribution:
        """Columns: r * min(cap, w) and min(cap, w), both shared with other estimators."""
        cap = float(self.cap)
        columns = {"rw": capped_reward_column(cap), "w": capped_weight_column(cap)}
        return Contribution(columns, tally=weight_tally(view, cap))

    def combine(self, stats) -> Linearisation:
        """Ratio of the two column means (delta-method standard error)."""
        return ratio_of_means(stats, "rw", "w")


class SNIPS(_Uncapped, NCIS):
    """Self-normalised IPS (Swaminathan and Joachims 2015; obp's SNIPW):
    sum r * pi/mu / sum pi/mu.

    The same estimator as ``ncis(cap=inf)``: consistent, slightly biased in
    small samples, often far less variable than IPS.
    """

    name = "snips"


class PiecewiseNCIS(_ISFamily):
    """Piecewise NCIS (Gilotte et al. 2018): NCIS normalised within groups.

    Rows are split by the log column ``by`` (a context segment); NCIS is
    computed within each group and the groups are averaged with their share
    of rows. The bias of capping is then corrected per segment rather than
    globally. Groups become columns of the engine, so their number is bounded
    by ``max_groups``.
    """

    name = "piecewise_ncis"
    tags = {"linear_in_reward": True}

    def __init__(self, cap: float = 100.0, by: str = "group", max_groups: int = 64):
        check_cap(cap)
        if not isinstance(by, str) or not by:
            raise ConfigurationError(f"by must name a column of the log, got {by!r}")
        check_whole(max_groups, "max_groups", low=1)
        self.cap = cap
        self.by = by
        self.max_groups = max_groups

    @property
    def requires(self) -> tuple[str, ...]:
        """Propensities and the grouping column."""
        return ("propensity", self.by)

    @property
    def guarantee(self) -> str | None:
        """Consistent without a cap (NCIS within each group); biased where the cap binds."""
        return "consistent" if self.cap == INF else None

    def contribute(self, view: PolicyView) -> Contribution:
        """Columns per group g: r*min(cap,w)*[g], min(cap,w)*[g], [g]."""
        cap = float(self.cap)
        codes, groups = pd.factorize(view.log.column(self.by))
        missing = codes < 0
        if missing.any():
            raise ColumnError(
                self.by, "group values must not be missing", view.log.source_rows[missing]
            )
        if groups.size > self.max_groups:
            raise ConfigurationError(
                f"piecewise_ncis: column {self.by!r} has {groups.size} groups in one chunk, "
                f"more than max_groups={self.max_groups}"
            )
        capped, num = view.memo(capped_weights, cap), view.memo(capped_rewards, cap)
        columns = {}
        for g, group in enumerate(groups):
            member = codes == g
            columns["rw", group] = np.where(member, num, 0.0)
            columns["w", group] = np.where(member, capped, 0.0)
            columns["n", group] = member.astype(float)
        return Contribution(columns, tally=weight_tally(view, cap))

    def combine(self, stats) -> Linearisation:
        """sum_g (n_g / n) * (Y_g / W_g), linearised over all group columns."""
        groups = [k[1] for k in stats.keys if k[0] == "rw"]
        n_total = sum(stats.mean(("n", g)) for g in groups)
        value, cols, grad = 0.0, [], []
        for g in groups:
            y, w, n = stats.mean(("rw", g)), stats.mean(("w", g)), stats.mean(("n", g))
            r = y / w if w > 0 else 0.0
            share = n / n_total
            value += share * r
            cols += [stats.index(("rw", g)), stats.index(("w", g)), stats.index(("n", g))]
            grad += [share / w if w > 0 else 0.0, -share * r / w if w > 0 else 0.0, r / n_total]
        # d(share_g)/d(n_h) = -share_g / n_total for every h: subtract value / n_total from each n.
        grad = np.array(grad)
        grad[2::3] -= value / n_total
        return Linearisation(value, np.array(cols), grad)


class PointwiseNCIS(_Capped):
    """Pointwise NCIS (Gilotte et al. 2018): capping corrected slot by slot.

    Each row's capped weight is divided by its slot's expected capped weight
    under the logging policy, E_mu[min(cap, w) | x] = sum_a min(cap*mu(a|x),
    pi(a|x)), computed exactly from the log's candidate sets. Without capping
    this normaliser is 1 and the estimator is IS (unbiased).
    """

    name = "pointwise_ncis"
    requires = ("propensity", "candidates")

    def contribute(self, view: PolicyView) -> Contribution:
        """Columns: r * min(cap, w) / normaliser(slot), and 1 per row."""
        cap = float(self.cap)
        log = view.log
        cands = log.require_candidates()
        mu = cands["propensity"].to_numpy()
        if np.isnan(mu).any():  # from_obp without pi_b: a NaN normaliser would count as 0
            raise ConfigurationError(
                f"{self.name} needs the logger's probability of every candidate, and the "
                "candidate table's are unknown (from_obp without pi_b): give its 'pi_b'"
            )
        capped = np.minimum(cap * mu, view.candidate_probabilities())
        normaliser = np.bincount(cands["slot"].to_numpy(), weights=capped, minlength=log.n_rows)
        with np.errstate(divide="ignore", invalid="ignore"):
            num = np.where(normaliser > 0, view.memo(capped_rewards, cap) / normaliser, 0.0)
        tally = weight_tally(view, cap)
        tally.count("empty_slots", np.count_nonzero(normaliser == 0))
        return Contribution({"pw": num, "rows": ROWS}, tally=tally)

    def combine(self, stats) -> Linearisation:
        """Per-row mean of the slot-normalised capped reward."""
        return ratio_of_means(stats, "pw", "rows")


class BetaIPS(_ISFamily):
    """IPS with an additive control variate (beta*-IPS, Jeunen and Gupta 2026).

    V = mean(w r) - beta * (mean(w) - 1): the weights have known mean 1, so
    subtracting beta times their deviation keeps IPS unbiased while cutting its
    variance. ``beta=None`` uses the variance-optimal beta* = Cov(Y, C) / Var(C)
    (C = sum of w - 1 over a trajectory, Y = sum of w r), estimated from the
    log, so the estimated variance is the smallest over all baselines; its
    asymptotic MSE is never above that of SNIPS. A number fixes beta (0 gives
    IPS).
    """

    name = "beta_ips"
    tags = {"linear_in_reward": True}

    def __init__(self, beta: float | None = None):
        check_number(beta, "beta", optional=True)
        self.beta = beta

    @property
    def guarantee(self) -> str:
        """Unbiased for a fixed beta; consistent when beta* is estimated from the same log."""
        return "consistent" if self.beta is None else "unbiased"

    def contribute(self, view: PolicyView) -> Contribution:
        """Columns: w r, w, and 1 per row (all shared)."""
        columns = {"y": capped_reward_column(INF), "w": capped_weight_column(INF), "n": ROWS}
        return Contribution(columns, tally=weight_tally(view, INF))

    def optimal_beta(self, stats) -> float:
        """beta* = Cov(Y, C) / Var(C), C = W - N: the control-variate (OLS) slope."""
        var_c = stats.cov("w", "w") - 2 * stats.cov("w", "n") + stats.cov("n", "n")
        cov_yc = stats.cov("y", "w") - stats.cov("y", "n")
        return cov_yc / var_c if var_c > 0 else 0.0

    def fitted(self, stats) -> dict[str, float]:
        """The beta used: beta* fitted from the log, or the fixed one."""
        return {"beta": self.optimal_beta(stats) if self.beta is None else float(self.beta)}

    def combine(self, stats) -> Linearisation:
        """(mean(Y) - beta (mean(W) - mean(N))) / mean(N), beta held fixed.

        With beta* fitted from the same log the interval is first-order: it
        treats beta* as known (its estimation error is of a smaller order).
        """
        beta = self.optimal_beta(stats) if self.beta is None else float(self.beta)
        y, w, n = stats.mean("y"), stats.mean("w"), stats.mean("n")
        value = (y - beta * (w - n)) / n
        cols = np.array([stats.index("y"), stats.index("w"), stats.index("n")])
        grad = np.array([1 / n, -beta / n, beta / n - (y - beta * (w - n)) / n**2])
        return Linearisation(value, cols, grad)
