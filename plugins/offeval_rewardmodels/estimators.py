"""Direct-method and doubly robust estimators as column emitters for the engine.

Definitions follow obp (``obp.ope.estimators``, zr-obp 0.5), per log row i
(a slot: the item shown at one position of one trajectory), with q̂(x_i, pi)
= sum_a pi(a|x_i) q̂(x_i, a) over the slot's candidates and w_i = pi/mu:

- DM:        q̂(x_i, pi)
- DR:        q̂(x_i, pi) + min(w_i, lambda) (r_i - q̂(x_i, a_i))  (lambda = inf: no clip)
- SNDR:      q̂(x_i, pi) + w_i (r_i - q̂(x_i, a_i)) / mean(w)
- Switch-DR: q̂(x_i, pi) + 1{w_i <= tau} w_i (r_i - q̂(x_i, a_i))
- DR-OS:     q̂(x_i, pi) + lambda w_i / (w_i^2 + lambda) (r_i - q̂(x_i, a_i))
- SG-DR:     q̂(x_i, pi) + w_i / (1 - lambda + lambda w_i) (r_i - q̂(x_i, a_i))

each averaged over rows: the reward per impression. The unit of independence
is the trajectory (row terms are summed per trajectory, as in the ``importance``
plugin), so standard errors are cluster-robust. Unlike obp, q̂(x_i, pi) is not
divided by the target's mass over the candidates (obp's ``np.average``): the
two agree when the target's probabilities at a slot sum to 1 over its
candidates, and the diagnostic ``target_mass_per_slot`` says whether they do.

The reward model is held fixed: standard errors do not include its own
estimation error. Cross-fit it by trajectory (:func:`fit_reward_model`) so
that no row's prediction was fitted on that row's trajectory.
"""

from __future__ import annotations

import numpy as np

from offeval import BaseEstimator, Contribution, InteractionLog, PolicyView, Shared
from offeval.plugin import check_number
from offeval.stats import Linearisation, Tally, ratio_of_means
from offeval_importance import ROWS, capped_weight_column, weight_diagnostics, weight_tally
from offeval_rewardmodels import rewardmodel
from offeval_rewardmodels.columns import (
    correction_column,
    model_column,
    model_side,
    shrunk_residuals,
    switched_residuals,
)
from offeval_rewardmodels.weighting import clipped_column, subgaussian_column

INF = float("inf")

#: Why an estimator that reads the rewards only through the model fails the kit's data check.
IGNORES_REWARDS = (
    "reads the rewards only through the reward model, which is fitted before evaluation: "
    "shuffling the log's rewards leaves the predictions, hence the estimate, unchanged"
)


class _RewardModelEstimator(BaseEstimator):
    """Shared parameter, declarations, tallies and the kit's reward model."""

    estimand = "reward_per_impression"
    reward_model: str = rewardmodel.DEFAULT_COLUMN

    def __init__(self, reward_model: str = rewardmodel.DEFAULT_COLUMN):
        self.reward_model = rewardmodel.check_column(reward_model)

    @property
    def requires(self) -> tuple[str, ...]:
        """Propensities, the candidate table and the reward-model column."""
        return ("propensity", "candidates", self.reward_model)

    def model_tally(self, view: PolicyView, tally: Tally) -> Tally:
        """The target's mass over the candidates, and the model's mean residual on the log."""
        side = model_side(view, self.reward_model, self.name)
        tally.add("target_mass", side.mass)
        tally.add("model_slots", view.log.n_rows)
        if self.reward_model in view.log.frame:
            tally.add("residual", float(rewardmodel.residuals(view.log, self.reward_model).sum()))
        return tally

    def diagnose(self, tally: Tally) -> dict[str, float]:
        """Weight diagnostics (as the IS family's), the target's mass and the model's residual."""
        out = weight_diagnostics(tally) if "sum_w" in tally.sums else {}
        return {**out, **model_diagnostics(tally)}

    def prepare_kit_log(self, log: InteractionLog) -> InteractionLog:
        """The conformance kit's logs with this estimator's reward-model column.

        The kit's simulator writes no reward model: it gets the
        scikit-learn-free one of :func:`item_position_means` (cross-fitted by
        trajectory, context-blind, so deliberately imperfect).
        """
        return rewardmodel.attach_kit_model(log, self.reward_model)


def model_diagnostics(tally: Tally) -> dict[str, float]:
    """Mean target mass per slot (1 when the candidates cover the target) and mean residual."""
    s = tally.sums
    slots = s.get("model_slots", 0.0)
    out = {"target_mass_per_slot": s.get("target_mass", 0.0) / slots if slots else float("nan")}
    if "residual" in s:
        out["mean_residual"] = s["residual"] / slots if slots else float("nan")
    return out


def model_plus_correction(stats) -> Linearisation:
    """(mean(model) + mean(correction)) / mean(rows): the per-row mean of their sum."""
    m, c, n = stats.mean("model"), stats.mean("correction"), stats.mean("rows")
    cols = np.array([stats.index("model"), stats.index("correction"), stats.index("rows")])
    return Linearisation((m + c) / n, cols, np.array([1 / n, 1 / n, -(m + c) / n**2]))


class DM(_RewardModelEstimator):
    """Direct method: the mean over log rows of q̂(x_i, pi) = sum_a pi(a|x_i) q̂(x_i, a).

    Beygelzimer and Langford (2009); Dudík, Erhan, Langford and Li (ICML
    2011). Biased unless the reward model is right (``guarantee = None``);
    its variance is small because it never divides by a propensity. Needs the
    candidate table with the reward-model column (the log's own column and
    propensities are not read).
    """

    name = "dm"
    guarantee = None
    expected_failed_checks = {"check_depends_on_data": "DM " + IGNORES_REWARDS}

    @property
    def requires(self) -> tuple[str, ...]:
        """Only the candidate table (with the reward-model column)."""
        return ("candidates",)

    def contribute(self, view: PolicyView) -> Contribution:
        """Columns: q̂(x_i, pi) (shared) and 1 per row."""
        tally = self.model_tally(view, Tally())
        return Contribution({"model": model_column(self.reward_model), "rows": ROWS}, tally=tally)

    def combine(self, stats) -> Linearisation:
        """Per-row mean of the model's value of the target."""
        return ratio_of_means(stats, "model", "rows")


class _Shrunk(_RewardModelEstimator):
    """A DR whose correction's weights obp's ``lambda_`` clips or shrinks: ``lambda_ = inf`` is
    DR (unbiased), ``lambda_ = 0`` zeroes every weight (DM); biased in between."""

    def __init__(self, lambda_: float, reward_model: str):
        super().__init__(reward_model)
        check_number(lambda_, "lambda_", low=0, finite=False)
        self.lambda_ = lambda_

    @property
    def guarantee(self) -> str | None:
        """Unbiased at ``lambda_ = inf`` (DR); biased where the clip or shrinkage acts."""
        return "unbiased" if self.lambda_ == INF else None

    @property
    def expected_failed_checks(self) -> dict[str, str]:
        """``lambda_ = 0`` zeroes every weight: it is DM then."""
        if self.lambda_ == 0:
            return {"check_depends_on_data": f"{self.name}(lambda_=0) " + IGNORES_REWARDS}
        return {}


class DR(_Shrunk):
    """Doubly robust: q̂(x_i, pi) + min(w_i, lambda_) (r_i - q̂(x_i, a_i)), averaged over log rows.

    Dudík, Erhan, Langford and Li (ICML 2011). Without a clip (``lambda_=inf``,
    the default, as obp's) it is unbiased when the propensities are right and
    the target is supported, whatever the reward model (the correction has
    mean q(x, pi) - q̂(x, pi) under the logger), provided the model was not
    fitted on the row's own trajectory; a good model lowers the variance below
    IS's. A finite ``lambda_`` clips the weights in the correction (obp's
    ``DoublyRobust(lambda_)``, DR with pessimistic shrinkage of Su et al.
    2020): lower variance, biased where the clip binds (``clipped_share``);
    ``lambda_=0`` is DM.
    """

    name = "dr"

    def __init__(self, lambda_: float = INF, reward_model: str = rewardmodel.DEFAULT_COLUMN):
        super().__init__(lambda_, reward_model)

    def contribute(self, view: PolicyView) -> Contribution:
        """Columns: q̂(x_i, pi), min(w_i, lambda_) (r_i - q̂_i) and 1 per row, all shared."""
        column, lam = self.reward_model, float(self.lambda_)
        tally = self.model_tally(view, weight_tally(view, lam))
        columns = {"model": model_column(column), "correction": clipped_column(column, lam)}
        return Contribution({**columns, "rows": ROWS}, tally=tally)

    def combine(self, stats) -> Linearisation:
        """(mean(model) + mean(correction)) / mean(rows)."""
        return model_plus_correction(stats)


class SNDR(_RewardModelEstimator):
    """Self-normalised DR: mean of q̂(x_i, pi) + sum_i w_i (r_i - q̂_i) / sum_i w_i.

    obp's ``SelfNormalizedDoublyRobust`` (after Kallus and Uehara, NeurIPS
    2019): DR's correction divided by the mean weight, as SNIPS divides IS.
    Consistent (the mean weight tends to 1), not unbiased; bounded corrections
    when weights are large. obp's class accepts a ``lambda_`` (inherited from
    ``DoublyRobust``) and ignores it: its weights are never clipped, nor are
    these.
    """

    name = "sndr"
    guarantee = "consistent"

    def contribute(self, view: PolicyView) -> Contribution:
        """Columns: q̂(x_i, pi), w_i (r_i - q̂_i), w_i and 1 per row, all shared."""
        column = self.reward_model
        tally = self.model_tally(view, weight_tally(view, INF))
        columns = {
            "model": model_column(column),
            "correction": correction_column(column),
            "w": capped_weight_column(INF),
            "rows": ROWS,
        }
        return Contribution(columns, tally=tally)

    def combine(self, stats) -> Linearisation:
        """mean(model)/mean(rows) + mean(correction)/mean(w), with its gradient."""
        m, c = stats.mean("model"), stats.mean("correction")
        w, n = stats.mean("w"), stats.mean("rows")
        keys = ("model", "correction", "w", "rows")
        cols = np.array([stats.index(k) for k in keys])
        if w == 0:
            return Linearisation(float("nan"), cols, np.full(4, np.nan))
        grad = np.array([1 / n, 1 / w, -c / w**2, -m / n**2])
        return Linearisation(m / n + c / w, cols, grad)


class SwitchDR(_RewardModelEstimator):
    """Switch-DR: DR where w_i <= tau, the model alone where the weight is larger.

    q̂(x_i, pi) + 1{w_i <= tau} w_i (r_i - q̂(x_i, a_i)), averaged over rows:
    obp's ``SwitchDoublyRobust`` with ``lambda_ = tau`` (Wang, Agarwal and
    Dudík, ICML 2017). ``tau=inf`` is DR (unbiased); a finite tau trades the
    bias of the model on the switched rows for variance (``guarantee = None``).
    The default tau = 10 differs from obp's (inf, which is DR itself).
    """

    name = "switch_dr"

    def __init__(self, tau: float = 10.0, reward_model: str = rewardmodel.DEFAULT_COLUMN):
        super().__init__(reward_model)
        check_number(tau, "tau", low=0, finite=False)
        self.tau = tau

    @property
    def guarantee(self) -> str | None:
        """Unbiased without switching (DR); biased where rows switch to the model."""
        return "unbiased" if self.tau == INF else None

    @property
    def expected_failed_checks(self) -> dict[str, str]:
        """tau = 0 switches every weighted row to the model: it is DM then."""
        return (
            {"check_depends_on_data": f"{self.name}(tau=0) " + IGNORES_REWARDS}
            if self.tau == 0
            else {}
        )

    def contribute(self, view: PolicyView) -> Contribution:
        """Columns: q̂(x_i, pi), 1{w_i <= tau} w_i (r_i - q̂_i) and 1 per row, all shared."""
        column, tau = self.reward_model, float(self.tau)
        tally = self.model_tally(view, weight_tally(view, INF))
        tally.count("switched", int(np.count_nonzero(view.weights() > tau)))
        columns = {
            "model": model_column(column),
            "correction": Shared(switched_residuals, (column, tau)),
            "rows": ROWS,
        }
        return Contribution(columns, tally=tally)

    def combine(self, stats) -> Linearisation:
        """As DR, with the switched correction."""
        return model_plus_correction(stats)

    def diagnose(self, tally: Tally) -> dict[str, float]:
        """DR's diagnostics and the share of rows switched to the model."""
        out = super().diagnose(tally)
        rows = tally.sums.get("rows", 0.0)
        out["switched_share"] = tally.counts.get("switched", 0) / rows if rows else float("nan")
        return out


class DROS(_Shrunk):
    """DR with optimistic shrinkage (DR-OS): weights shrunk to lambda w / (w^2 + lambda).

    q̂(x_i, pi) + lambda w_i / (w_i^2 + lambda) (r_i - q̂(x_i, a_i)), averaged
    over rows: obp's ``DoublyRobustWithShrinkage`` (Su, Dimakopoulou,
    Krishnamurthy and Dudík, ICML 2020), with obp's parameter name
    ``lambda_``. ``lambda_=inf`` is DR (unbiased), ``lambda_=0`` is DM; in
    between the estimator is biased (``guarantee = None``). The default
    lambda_ = 100 differs from obp's (0, which is DM): weights below about 3
    are barely shrunk, a weight of 10 is halved.
    """

    name = "dr_os"

    def __init__(self, lambda_: float = 100.0, reward_model: str = rewardmodel.DEFAULT_COLUMN):
        super().__init__(lambda_, reward_model)

    def contribute(self, view: PolicyView) -> Contribution:
        """Columns: q̂(x_i, pi), the shrunk correction and 1 per row, all shared."""
        column = self.reward_model
        tally = self.model_tally(view, weight_tally(view, INF))
        columns = {
            "model": model_column(column),
            "correction": Shared(shrunk_residuals, (column, float(self.lambda_))),
            "rows": ROWS,
        }
        return Contribution(columns, tally=tally)

    def combine(self, stats) -> Linearisation:
        """As DR, with the shrunk correction."""
        return model_plus_correction(stats)


class SubGaussianDR(_RewardModelEstimator):
    """Sub-Gaussian DR: q̂(x_i, pi) + w_i / (1 - lambda_ + lambda_ w_i) (r_i - q̂(x_i, a_i)).

    Averaged over rows: obp's ``SubGaussianDoublyRobust`` (Metelli, Russo and
    Restelli, NeurIPS 2021). The weight's power mean with 1 shrinks large
    weights smoothly (never above 1 / lambda_), which gives the correction
    sub-Gaussian tails; ``lambda_=0`` (the default, as obp's) is DR
    (unbiased), ``lambda_=1`` gives every supported row weight 1; in between
    it is biased (``guarantee = None``). obp returns NaN for a row with w = 0
    at lambda_ = 1; here such a row's correction is 0.
    """

    name = "sg_dr"

    def __init__(self, lambda_: float = 0.0, reward_model: str = rewardmodel.DEFAULT_COLUMN):
        super().__init__(reward_model)
        check_number(lambda_, "lambda_", low=0, high=1)
        self.lambda_ = lambda_

    @property
    def guarantee(self) -> str | None:
        """Unbiased at lambda_ = 0 (DR); biased otherwise."""
        return "unbiased" if self.lambda_ == 0 else None

    def contribute(self, view: PolicyView) -> Contribution:
        """Columns: q̂(x_i, pi), the sub-Gaussian correction and 1 per row, all shared."""
        column = self.reward_model
        tally = self.model_tally(view, weight_tally(view, INF))
        columns = {
            "model": model_column(column),
            "correction": subgaussian_column(column, float(self.lambda_)),
            "rows": ROWS,
        }
        return Contribution(columns, tally=tally)

    def combine(self, stats) -> Linearisation:
        """As DR, with the sub-Gaussian correction."""
        return model_plus_correction(stats)
