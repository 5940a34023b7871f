"""DCG as an off-policy estimator of online reward, nDCG and post-normalised nDCG.

The unit is the trajectory. For a logged row i (item a_i, reward c_i) the
unbiased DCG contribution is c_i * eps(x, a_i) * min(m, 1 / eps0(x, a_i))
(seed 000, Eq. 10; with e(logged rank) for eps0, Eq. 11). ``cap`` = m = inf
is unbiased under the seed's assumptions; m = 1 is naive DCG on raw
interactions. The label view ``debiased`` uses Q_hat = c * min(m, 1/eps0),
``raw`` uses c (the same as m = 1). DCG is the mean over trajectories of the
per-trajectory sum (``per="trajectory"``: expected reward per trajectory), or
that sum over the rows logged (``per="impression"``).
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass

import numpy as np

from offeval import BaseEstimator, ConfigurationError, Contribution, PolicyView
from offeval.stats import Linearisation, Tally, ratio_of_means
from offeval_dcg.examination import CutOff, at_ranks, examination_model
from offeval_dcg.exposure import (
    SOURCES,
    candidate_support,
    check_support,
    logging_exposure,
)

LABELS = ("debiased", "raw")
PER = ("trajectory", "impression")
ZERO_IDEAL = ("exclude", "zero")
SOURCE_CODES = {source: code for code, source in enumerate((*SOURCES[1:], "policy"))}


@dataclass
class Rows:
    """Per-row quantities of one DCG configuration on one chunk."""

    labels: np.ndarray  # c or Q_hat, zero on excluded trajectories
    target: np.ndarray  # eps(x, a_i)
    included: np.ndarray  # per trajectory, bool
    first: np.ndarray  # 1 on each trajectory's first row
    unit: np.ndarray  # trajectory index of each row
    tally: Tally
    excluded: dict[str, int]


def _check_cap(cap) -> float:
    if not isinstance(cap, (int, float)) or isinstance(cap, bool) or not cap >= 1:
        raise ConfigurationError(f"cap m must be a number >= 1 or inf, got {cap!r}")
    return float(cap)


def _plain(value) -> bool:
    return value is None or isinstance(value, (str, int, float))


def _choice(name: str, value, options) -> None:
    if value not in options:
        raise ConfigurationError(f"{name} must be one of {options}, got {value!r}")


class _DCGFamily(BaseEstimator):
    """Shared configuration and row computations of DCG, nDCG and pnDCG."""

    examination = "logarithmic"
    cap = float("inf")
    labels = "debiased"
    cutoff = None
    logging = "auto"
    support = "fail"

    def label_params(self) -> dict:
        """Only the parameters that differ from their defaults, e.g. ``dcg(cap=2)``."""
        defaults = inspect.signature(type(self).__init__).parameters
        return {
            key: value
            for key, value in self.get_params().items()
            if not (_plain(value) and value == defaults[key].default)
        }

    def _models(self):
        model = examination_model(self.examination)
        target = model if self.cutoff is None else CutOff(self.cutoff, model)
        return model, target

    def _key(self) -> tuple:
        logging = self.logging if isinstance(self.logging, str) else repr(self.logging)
        model = examination_model(self.examination)
        return (getattr(model, "spec", repr(model)), self.cap, self.labels, self.cutoff, logging)

    def rows(self, view: PolicyView) -> Rows:
        """Labels and exposures of every row, with the support policy applied."""
        cap = _check_cap(self.cap)
        _choice("labels", self.labels, LABELS)
        model, target_model = self._models()
        log = view.log
        reward = log.column("reward")
        eps = view.exposure(target_model)
        eps0, source = logging_exposure(view, self.logging, model)
        bad_rows = (eps0 <= 0) & (eps > 0)
        row_count = check_support(
            bad_rows, float(eps[bad_rows].sum()), log.source_rows, self.support
        )
        unit = log.unit_index
        bad_units = np.bincount(unit[bad_rows], minlength=log.n_units)
        tally = Tally()
        if log.has_candidates and source != "rank":
            per_unit, mass = candidate_support(view, target_model, model)
            trajectories = log.frame["trajectory"].to_numpy()[log.unit_starts]
            check_support(per_unit > 0, mass, trajectories, self.support)
            tally.add("candidate_violations", int(per_unit.sum()))
            tally.add("unsupported_exposure", mass)
            bad_units = bad_units + per_unit
        included = ~((bad_units > 0) & (self.support == "drop"))
        exposed = eps0 > 0
        inverse = np.zeros_like(eps0)
        inverse[exposed] = np.minimum(cap, 1.0 / eps0[exposed])
        weight = inverse if self.labels == "debiased" else np.ones_like(inverse)
        labels = np.where(included[unit], reward * weight, 0.0)
        first = np.zeros(log.n_rows)
        first[log.unit_starts] = 1.0
        tally.add("rows", log.n_rows)
        tally.add("clipped", int(np.count_nonzero(eps0[exposed] * cap < 1)))
        tally.add("row_violations", row_count)
        tally.add(f"source_{source}", log.n_rows)
        ratio = inverse * eps
        tally.maximum("max_weight", float(ratio.max(initial=0.0)))
        tally.add("sum_w", float(ratio.sum()))
        tally.add("sum_w2", float(ratio @ ratio))
        dropped = int((~included).sum())
        return Rows(
            labels, eps, included, first, unit, tally, {"support": dropped} if dropped else {}
        )

    def diagnose(self, tally: Tally) -> dict[str, float]:
        """Effective sample size, largest weight, clipped share, support, eps0 source."""
        s, m = tally.sums, tally.maxima
        rows = s.get("rows", 0.0)
        out = {
            "ess": s["sum_w"] ** 2 / s["sum_w2"] if s.get("sum_w2", 0) > 0 else 0.0,
            "max_weight": m.get("max_weight", float("nan")),
            "clipped_share": s.get("clipped", 0.0) / rows if rows else float("nan"),
            "support_violations": int(
                s.get("row_violations", 0) + s.get("candidate_violations", 0)
            ),
        }
        if "unsupported_exposure" in s:
            out["unsupported_exposure"] = s["unsupported_exposure"]
        for source, code in SOURCE_CODES.items():
            if s.get(f"source_{source}"):
                out["logging_exposure_source"] = code
        if "zero_ideal" in s:
            out["zero_ideal"] = int(s["zero_ideal"])
        return out


class DCG(_DCGFamily):
    """Unbiased (m = inf) or clipped DCG: expected reward per trajectory under the target.

    Parameters: ``examination`` (registered model or spec, e.g.
    ``"exponential(gamma=0.7)"``), ``cap`` m >= 1, ``labels`` (``debiased``
    or ``raw``), ``cutoff`` (the target shows its top n: DCG@n), ``logging``
    (eps0 source, see :mod:`offeval_dcg.exposure`), ``per`` (``trajectory``
    or ``impression``) and ``support`` (``fail``, ``drop``, ``warn``).
    """

    name = "dcg"
    tags = {"linear_in_reward": True, "policy": "ranking"}

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
        self.examination = examination
        self.cap = cap
        self.labels = labels
        self.cutoff = cutoff
        self.logging = logging
        self.per = per
        self.support = support

    def _denominator(self):
        _choice("per", self.per, PER)
        return (
            ("dcg_rows", self._key(), self.support)
            if self.per == "impression"
            else (
                "dcg_units",
                self._key(),
                self.support,
            )
        )

    def contribute(self, view: PolicyView) -> Contribution:
        """Columns: label x target exposure per row, and the included units (or rows)."""
        r = self.rows(view)
        den_key = self._denominator()
        inside = r.included[r.unit].astype(float)
        den = inside if self.per == "impression" else r.first * inside
        columns = {("dcg", self._key(), self.support): r.labels * r.target, den_key: den}
        return Contribution(columns, r.tally, r.excluded)

    def combine(self, stats) -> Linearisation:
        """Mean DCG per included trajectory (or per included row)."""
        return ratio_of_means(stats, ("dcg", self._key(), self.support), self._denominator())


def _ideal(r: Rows, ideal_model, view: PolicyView) -> np.ndarray:
    """Per-row contributions to each trajectory's ideal DCG (labels sorted, best first)."""
    log = view.log
    order = np.lexsort((-r.labels, r.unit))
    rank = np.arange(log.n_rows) - log.unit_starts[r.unit[order]] + 1
    out = np.empty(log.n_rows)
    out[order] = r.labels[order] * at_ranks(ideal_model, rank)
    return out


class _Normalised(_DCGFamily):
    """DCG parameters plus the ideal's cut-off."""

    ideal_cutoff = "same"

    def _ideal_model(self):
        model, _ = self._models()
        depth = self.cutoff if self.ideal_cutoff == "same" else self.ideal_cutoff
        if depth is not None and (int(depth) != depth or depth < 1):
            raise ConfigurationError(f"ideal_cutoff must be 'same', None or n >= 1, got {depth!r}")
        return model if depth is None else CutOff(int(depth), model)

    def _per_unit(self, view: PolicyView) -> tuple[Rows, np.ndarray, np.ndarray]:
        r = self.rows(view)
        dcg = np.bincount(r.unit, weights=r.labels * r.target, minlength=view.log.n_units)
        ideal = np.bincount(
            r.unit, weights=_ideal(r, self._ideal_model(), view), minlength=view.log.n_units
        )
        return r, dcg, ideal


class NDCG(_Normalised):
    """Mean over trajectories of DCG / ideal DCG (the ideal from the trajectory's own labels).

    Trajectories whose ideal DCG is 0 (no positive label) are excluded and
    counted (``zero_ideal="exclude"``) or scored 0 (``"zero"``). Not an
    estimator of online reward: it can order policies differently from DCG.
    """

    name = "ndcg"
    tags = {"policy": "ranking", "normalised": True}

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
        self.examination = examination
        self.cap = cap
        self.labels = labels
        self.cutoff = cutoff
        self.ideal_cutoff = ideal_cutoff
        self.zero_ideal = zero_ideal
        self.logging = logging
        self.support = support

    def _keys(self) -> tuple:
        base = (self._key(), self.ideal_cutoff, self.zero_ideal, self.support)
        return ("ndcg", *base), ("ndcg_units", *base)

    def contribute(self, view: PolicyView) -> Contribution:
        """Columns on each trajectory's first row: its nDCG and whether it counts."""
        _choice("zero_ideal", self.zero_ideal, ZERO_IDEAL)
        r, dcg, ideal = self._per_unit(view)
        positive = ideal > 0
        counted = r.included & (positive | (self.zero_ideal == "zero"))
        value = np.where(positive & counted, dcg / np.where(positive, ideal, 1.0), 0.0)
        starts = view.log.unit_starts
        num, den = np.zeros(view.log.n_rows), np.zeros(view.log.n_rows)
        num[starts], den[starts] = value, counted
        zero = int((r.included & ~positive).sum())
        r.tally.add("zero_ideal", zero)
        excluded = dict(r.excluded)
        if zero and self.zero_ideal == "exclude":
            excluded["zero_ideal"] = zero
        keys = self._keys()
        return Contribution({keys[0]: num, keys[1]: den}, r.tally, excluded)

    def combine(self, stats) -> Linearisation:
        """Mean nDCG over the trajectories counted."""
        keys = self._keys()
        return ratio_of_means(stats, keys[0], keys[1])


class PNDCG(_Normalised):
    """Post-normalised DCG: mean DCG / mean ideal DCG. Orders policies as DCG does."""

    name = "pndcg"
    tags = {"policy": "ranking", "normalised": True}

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
        self.examination = examination
        self.cap = cap
        self.labels = labels
        self.cutoff = cutoff
        self.ideal_cutoff = ideal_cutoff
        self.logging = logging
        self.support = support

    def _keys(self) -> tuple:
        base = (self._key(), self.ideal_cutoff, self.support)
        return ("pndcg", *base), ("ideal_dcg", *base)

    def contribute(self, view: PolicyView) -> Contribution:
        """Columns: DCG per row, and ideal DCG on each trajectory's first row."""
        r, _, ideal = self._per_unit(view)
        den = np.zeros(view.log.n_rows)
        den[view.log.unit_starts] = np.where(r.included, ideal, 0.0)
        keys = self._keys()
        return Contribution({keys[0]: r.labels * r.target, keys[1]: den}, r.tally, r.excluded)

    def combine(self, stats) -> Linearisation:
        """Ratio of mean DCG to mean ideal DCG (delta-method standard error)."""
        keys = self._keys()
        return ratio_of_means(stats, keys[0], keys[1])
