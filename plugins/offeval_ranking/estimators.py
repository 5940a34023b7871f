"""DCG as an off-policy estimator of online reward, nDCG and post-normalised nDCG.

The unit is the trajectory. For a logged row i (item a_i, reward c_i) the
unbiased DCG contribution is c_i * eps(x, a_i) * min(m, 1 / eps0(x, a_i))
(Jeunen, Potapov and Ustimenko, KDD 2024, Eq. 10; with e(logged rank) for
eps0, Eq. 11). ``cap`` = m = inf is unbiased under the paper's assumptions;
m = 1 is naive DCG on raw interactions. The label view ``debiased`` uses
Q_hat = c * min(m, 1/eps0), ``raw`` uses c (the same as m = 1). DCG is the
mean over trajectories of the per-trajectory sum (``per="trajectory"``:
expected reward per trajectory), or that sum over the rows logged
(``per="impression"``). nDCG and pnDCG divide by the ideal DCG, defined for
rewards >= 0 only: they refuse a negative reward (DCG takes any).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from offeval import BaseEstimator, ColumnError, ConfigurationError, Contribution, PolicyView
from offeval.plugin import check_choice, check_number, check_whole
from offeval.stats import Linearisation, Tally, ratio_of_means
from offeval_ranking import exposure
from offeval_ranking.examination import CutOff, examination_model

LABELS = ("debiased", "raw")
PER = ("trajectory", "impression")
ZERO_IDEAL = ("exclude", "zero")
SOURCE_CODES = {source: code for code, source in enumerate((*exposure.SOURCES[1:], "policy"))}


@dataclass
class Rows:
    """Per-row quantities of one DCG configuration on one chunk."""

    labels: np.ndarray  # c or Q_hat, zero on excluded trajectories
    target: np.ndarray  # eps(x, a_i)
    included: np.ndarray  # per trajectory, bool
    unit: np.ndarray  # trajectory index of each row
    tally: Tally
    excluded: dict[str, int]


@dataclass
class LoggingSide:
    """Per-row quantities that depend on the log, not on the target: shared across policies."""

    source: str  # where eps0 came from
    inverse: np.ndarray  # min(m, 1 / eps0), 0 where eps0 = 0
    labels: np.ndarray  # c or Q_hat = c * inverse
    unexposed: np.ndarray | None  # eps0 <= 0, or None when every row is exposed
    clipped: int  # rows whose 1 / eps0 exceeds the cap


_ALL = object()  # marker: every trajectory included


def _logging_side(log, logging, model, cap: float, labels: str) -> LoggingSide:
    """eps0 of every row, its capped inverse and the labels (see :class:`LoggingSide`)."""
    eps0, source = exposure.logging_exposure(log, logging, model)
    exposed = eps0 > 0
    all_exposed = bool(exposed.all())
    if all_exposed:
        inverse = np.minimum(cap, 1.0 / eps0)
    else:
        inverse = np.zeros_like(eps0)
        inverse[exposed] = np.minimum(cap, 1.0 / eps0[exposed])
    reward = log.column("reward")
    values = reward * inverse if labels == "debiased" else reward
    clipped = int(np.count_nonzero(eps0[exposed] * cap < 1))
    return LoggingSide(source, inverse, values, None if all_exposed else ~exposed, clipped)


def _known_candidates(log) -> bool:
    """A candidate table whose propensities are known (from_obp without pi_b leaves them NaN)."""
    return log.has_candidates and not np.isnan(log.candidates["propensity"].to_numpy()).any()


class _DCGFamily(BaseEstimator):
    """Shared configuration and row computations of DCG, nDCG and pnDCG."""

    examination = "logarithmic"
    cap = float("inf")
    labels = "debiased"
    cutoff = None
    logging = "auto"
    support = "fail"

    def __init__(self, examination, cap: float, labels: str, cutoff, logging, support: str):
        """Keep the family's parameters and check them (a subclass sets its own first)."""
        self.examination = examination
        self.cap = cap
        self.labels = labels
        self.cutoff = cutoff
        self.logging = logging
        self.support = support
        self._check()

    def _check(self) -> None:
        """Validate the shared parameters and resolve the examination model (at construction)."""
        check_number(self.cap, "cap m", low=1, finite=False)
        check_choice(self.labels, "labels", LABELS)
        check_choice(self.support, "support", exposure.SUPPORT_POLICIES)
        check_whole(self.cutoff, "cutoff", low=1, floats=True, optional=True)
        if isinstance(self.logging, str):
            check_choice(self.logging, "logging", exposure.SOURCES)
        elif not callable(getattr(self.logging, "exposure", None)):
            raise ConfigurationError(
                f"logging must be one of {exposure.SOURCES} or a policy with exposure(), "
                f"got {self.logging!r}"
            )
        self._model = examination_model(self.examination)

    @property
    def requires(self) -> tuple[str, ...]:
        """Target exposures, and the logging columns named by ``logging``."""
        extra = {"exposure": ("exposure",), "rank_probabilities": ("rank_probability_*",)}
        return ("exposure()", *extra.get(self.logging if isinstance(self.logging, str) else "", ()))

    @property
    def assumptions(self) -> dict:
        """Users examine ranks as the examination model says (the environment's parameter:
        the model itself, a callable on 1-based ranks)."""
        return {"examination": self._model}

    def _target_model(self):
        return self._model if self.cutoff is None else CutOff(self.cutoff, self._model)

    def _logging_key(self) -> tuple:
        logging = self.logging if isinstance(self.logging, str) else id(self.logging)
        return (logging, exposure.model_key(self._model), float(self.cap), self.labels)

    def _logging_side(self, view: PolicyView) -> LoggingSide:
        """The policy-free half of :meth:`rows`, computed once per chunk for every policy."""
        return view.log.memo(
            _logging_side,
            self.logging,
            self._model,
            float(self.cap),
            self.labels,
            key=self._logging_key(),
        )

    def rows(self, view: PolicyView) -> Rows:
        """Labels and exposures of every row, with the support policy applied."""
        log = view.log
        side = self._logging_side(view)
        target_model = self._target_model()
        eps = exposure.target_exposure(view, target_model)
        unit = log.unit_index
        tally = Tally()
        bad_units = None
        row_count = 0
        if side.unexposed is not None:
            bad_rows = side.unexposed & (eps > 0)
            row_count = exposure.check_support(
                bad_rows, float(eps[bad_rows].sum()), log.source_rows, self.support
            )
            if row_count:
                bad_units = np.bincount(unit[bad_rows], minlength=log.n_units)
        if _known_candidates(log) and side.source != "rank":
            per_unit, mass = exposure.candidate_support(view, target_model, self._model)
            exposure.check_support(per_unit > 0, mass, log.unit_ids, self.support)
            tally.count("candidate_violations", int(per_unit.sum()))
            tally.add("unsupported_exposure", mass)
            bad_units = per_unit if bad_units is None else bad_units + per_unit
        labels, included, dropped = side.labels, _ALL, 0
        if bad_units is not None and self.support == "drop":
            included = bad_units == 0
            dropped = int(log.n_units - np.count_nonzero(included))
            if dropped:
                labels = np.where(included[unit], labels, 0.0)
        tally.add("rows", log.n_rows)
        tally.count("clipped", side.clipped)
        tally.count("row_violations", row_count)
        tally.add(f"source_{side.source}", log.n_rows)
        ratio = side.inverse * eps
        tally.maximum("max_weight", float(ratio.max(initial=0.0)))
        tally.add("sum_w", float(ratio.sum()))
        tally.add("sum_w2", float(ratio @ ratio))
        if included is _ALL:
            included = np.ones(log.n_units, dtype=bool)
        excluded = {"support": dropped} if dropped else {}
        return Rows(labels, eps, included, unit, tally, excluded)

    def diagnose(self, tally: Tally) -> dict[str, float]:
        """Effective sample size, largest weight, clipped share, support, eps0 source."""
        s, m, c = tally.sums, tally.maxima, tally.counts
        rows = s.get("rows", 0.0)
        out = {
            "ess": s["sum_w"] ** 2 / s["sum_w2"] if s.get("sum_w2", 0) > 0 else 0.0,
            "max_weight": m.get("max_weight", float("nan")),
            "clipped_share": c.get("clipped", 0) / rows if rows else float("nan"),
            "support_violations": c.get("row_violations", 0) + c.get("candidate_violations", 0),
        }
        if "unsupported_exposure" in s:
            out["unsupported_exposure"] = s["unsupported_exposure"]
        for source, code in SOURCE_CODES.items():
            if s.get(f"source_{source}"):
                out["logging_exposure_source"] = code
        return out


class DCG(_DCGFamily):
    """Unbiased (m = inf) or clipped DCG: expected reward per trajectory under the target.

    Parameters: ``examination`` (registered model or spec, e.g.
    ``"exponential(gamma=0.7)"``), ``cap`` m >= 1, ``labels`` (``debiased``
    or ``raw``), ``cutoff`` (the target shows its top n: DCG@n), ``logging``
    (eps0 source, see :mod:`offeval.engine.exposure`), ``per`` (``trajectory``
    or ``impression``) and ``support`` (``fail``, ``drop``, ``warn``).
    """

    name = "dcg"
    tags = {"linear_in_reward": True}

    def __init__(
        self,
        examination="logarithmic",
        cap: float = float("inf"),
        labels: str = "debiased",
        cutoff: int | None = None,
        logging="auto",
        per: str = "trajectory",
        support: str = "fail",
    ):
        self.per = per
        super().__init__(examination, cap, labels, cutoff, logging, support)
        check_choice(per, "per", PER)

    @property
    def estimand(self) -> str:
        """Reward per trajectory or per impression, as ``per`` says."""
        return f"reward_per_{self.per}"

    @property
    def guarantee(self) -> str | None:
        """Unbiased (Eq. 10) unclipped, on de-biased labels, the whole ranking, full support."""
        exact = self.cap == float("inf") and self.labels == "debiased" and self.cutoff is None
        return "unbiased" if exact and self.support == "fail" else None

    def contribute(self, view: PolicyView) -> Contribution:
        """Columns: label x target exposure per row, and the included units (or rows)."""
        r = self.rows(view)
        columns = {"dcg": r.labels * r.target}
        units = {}
        if self.per == "impression":
            columns["count"] = r.included[r.unit].astype(float)
        else:
            units["count"] = r.included.astype(float)
        return Contribution(columns, units, r.tally, r.excluded)

    def combine(self, stats) -> Linearisation:
        """Mean DCG per included trajectory (or per included row)."""
        return ratio_of_means(stats, "dcg", "count")


def _ideal(log, labels: np.ndarray, ideal_model) -> np.ndarray:
    """Each trajectory's ideal DCG: its labels sorted best first, discounted by rank.

    The labels are never negative (:meth:`_Normalised.check_rewards`), so only the
    positive ones are sorted: they come first in every trajectory, and their ranks are
    their places among themselves.
    """
    rows = np.flatnonzero(labels > 0)
    unit = log.unit_index[rows]
    order = np.lexsort((-labels[rows], unit))
    rows, unit = rows[order], unit[order]
    first = np.r_[True, unit[1:] != unit[:-1]] if unit.size else np.zeros(0, bool)
    starts = np.flatnonzero(first)
    rank = np.arange(rows.size) - np.repeat(starts, np.diff(np.r_[starts, rows.size])) + 1
    gains = labels[rows] * exposure.at_ranks(ideal_model, rank)
    return np.bincount(unit, weights=gains, minlength=log.n_units)


class _Normalised(_DCGFamily):
    """DCG parameters plus the ideal's cut-off; rewards must not be negative.

    The ideal DCG is the largest DCG a ranking of the trajectory's items can
    reach, and normalising by it assumes gains >= 0: with a negative gain,
    sorting the labels best first no longer bounds the DCG (nDCG of rewards
    [1, -0.5] would be negative, and its scale meaningless). A negative reward
    is therefore refused, naming its rows; DCG itself takes any reward. The
    true value lies in [0, 1], and normal intervals are clipped to it.
    """

    ideal_cutoff = "same"
    value_range = (0.0, 1.0)

    def __init__(
        self,
        examination="logarithmic",
        cap: float = float("inf"),
        labels: str = "debiased",
        cutoff: int | None = None,
        ideal_cutoff="same",
        logging="auto",
        support: str = "fail",
    ):
        self.ideal_cutoff = ideal_cutoff
        super().__init__(examination, cap, labels, cutoff, logging, support)

    def _check(self) -> None:
        super()._check()
        if self.ideal_cutoff != "same":
            check_whole(self.ideal_cutoff, "ideal_cutoff", low=1, floats=True, optional=True)

    def _ideal_model(self):
        depth = self.cutoff if self.ideal_cutoff == "same" else self.ideal_cutoff
        return self._model if depth is None else CutOff(int(depth), self._model)

    @staticmethod
    def check_rewards(log) -> None:
        """Refuse negative rewards (a :class:`ColumnError` naming their rows)."""
        negative = log.column("reward") < 0
        if negative.any():
            raise ColumnError(
                "reward",
                "nDCG and pnDCG need rewards >= 0 (the ideal DCG of negative gains is not "
                "defined); use dcg, or shift the rewards",
                log.source_rows[negative],
            )

    def _per_unit(self, view: PolicyView) -> tuple[Rows, np.ndarray, np.ndarray]:
        """Rows, each trajectory's DCG, and its ideal DCG (shared by every policy)."""
        log = view.log
        self.check_rewards(log)
        r = self.rows(view)
        dcg = np.bincount(r.unit, weights=r.labels * r.target, minlength=log.n_units)
        model = self._ideal_model()
        ideal = log.memo(
            _ideal,
            self._logging_side(view).labels,
            model,
            key=(self._logging_key(), exposure.model_key(model)),
        )
        return r, dcg, ideal


class NDCG(_Normalised):
    """Mean over trajectories of DCG / ideal DCG (the ideal from the trajectory's own labels).

    Trajectories whose ideal DCG is 0 (no positive label) are excluded and
    counted (``zero_ideal="exclude"``) or scored 0 (``"zero"``). Rewards must
    be >= 0: a negative one is refused, as its ideal DCG is not defined. Not
    an estimator of online reward: it can order policies differently from DCG.
    """

    name = "ndcg"

    def __init__(
        self,
        examination="logarithmic",
        cap: float = float("inf"),
        labels: str = "debiased",
        cutoff: int | None = None,
        ideal_cutoff="same",
        zero_ideal: str = "exclude",
        logging="auto",
        support: str = "fail",
    ):
        self.zero_ideal = zero_ideal
        super().__init__(examination, cap, labels, cutoff, ideal_cutoff, logging, support)
        check_choice(zero_ideal, "zero_ideal", ZERO_IDEAL)

    def contribute(self, view: PolicyView) -> Contribution:
        """Unit columns: each trajectory's nDCG, and whether it counts."""
        r, dcg, ideal = self._per_unit(view)
        positive = ideal > 0
        counted = r.included & (positive | (self.zero_ideal == "zero"))
        value = np.where(positive & counted, dcg / np.where(positive, ideal, 1.0), 0.0)
        zero = int((r.included & ~positive).sum())
        r.tally.count("zero_ideal", zero)
        excluded = dict(r.excluded)
        if zero and self.zero_ideal == "exclude":
            excluded["zero_ideal"] = zero
        units = {"ndcg": value, "counted": counted.astype(float)}
        return Contribution(unit_columns=units, tally=r.tally, excluded=excluded)

    def combine(self, stats) -> Linearisation:
        """Mean nDCG over the trajectories counted."""
        return ratio_of_means(stats, "ndcg", "counted")


class PNDCG(_Normalised):
    """Post-normalised DCG: mean DCG / mean ideal DCG. Orders policies as DCG does.

    Rewards must be >= 0: a negative one is refused, as its ideal DCG is not defined.
    """

    name = "pndcg"

    def contribute(self, view: PolicyView) -> Contribution:
        """Columns: DCG per row, and each trajectory's ideal DCG as a unit column."""
        r, _, ideal = self._per_unit(view)
        units = {"ideal": np.where(r.included, ideal, 0.0)}
        return Contribution({"dcg": r.labels * r.target}, units, r.tally, r.excluded)

    def combine(self, stats) -> Linearisation:
        """Ratio of mean DCG to mean ideal DCG (delta-method standard error)."""
        return ratio_of_means(stats, "dcg", "ideal")
