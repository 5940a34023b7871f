"""The Estimator protocol, a base class with scikit-learn-style parameters,
and what an estimator hands to the statistics engine."""

from __future__ import annotations

import inspect
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol, runtime_checkable

import numpy as np

from offeval.errors import ConfigurationError
from offeval.log import InteractionLog
from offeval.policy import Policy
from offeval.stats.inference import Linearisation
from offeval.stats.moments import Tally


class PolicyView:
    """A policy seen on one log chunk, with its probabilities computed once.

    Every estimator evaluating the same policy on the same chunk shares one
    view, so the policy is queried once however many estimators run.
    """

    def __init__(self, policy: Policy, log: InteractionLog):
        self.policy = policy
        self.log = log
        self._cache: dict[str, np.ndarray] = {}

    def probabilities(self) -> np.ndarray:
        """Target probability of each logged row's (item, position)."""
        if "rows" not in self._cache:
            self._cache["rows"] = np.asarray(self.policy.probabilities(self.log.frame), float)
        return self._cache["rows"]

    def candidate_probabilities(self) -> np.ndarray:
        """Target probability of each row of the log's candidate table."""
        if "candidates" not in self._cache:
            cands = self._candidates()
            rows = cands.assign(context=self.log.frame["context"].to_numpy()[cands["slot"]])
            self._cache["candidates"] = np.asarray(self.policy.probabilities(rows), float)
        return self._cache["candidates"]

    def _candidates(self):
        if self.log.candidates is None:
            raise ConfigurationError(
                "this estimator needs the log's candidate sets (candidates=...)"
            )
        return self.log.candidates

    def slot_sums(self, values: np.ndarray) -> np.ndarray:
        """Sum a per-candidate quantity over each slot: one value per log row."""
        slot = self._candidates()["slot"].to_numpy()
        return np.bincount(slot, weights=values, minlength=self.log.n_rows)

    def support(self) -> tuple[int, float]:
        """Candidates the target may show but the logger never does: count and mass."""
        if "support" not in self._cache:
            mu = self._candidates()["propensity"].to_numpy()
            pi = self.candidate_probabilities()
            unsupported = (mu == 0) & (pi > 0)
            self._cache["support"] = (int(unsupported.sum()), float(pi[unsupported].sum()))
        return self._cache["support"]

    def weights(self) -> np.ndarray:
        """Importance weights pi/mu of the logged rows."""
        if "weights" not in self._cache:
            self._cache["weights"] = self.probabilities() / self.log.column("propensity")
        return self._cache["weights"]

    def capped_weights(self, cap: float) -> np.ndarray:
        """min(cap, pi/mu) per row, computed once per cap."""
        key = f"capped:{cap!r}"
        if key not in self._cache:
            w = self.weights()
            self._cache[key] = w if cap >= self.weight_summary()[2] else np.minimum(w, cap)
        return self._cache[key]

    def capped_rewards(self, cap: float) -> np.ndarray:
        """reward * min(cap, pi/mu) per row, computed once per cap."""
        key = f"capped_rewards:{cap!r}"
        if key not in self._cache:
            self._cache[key] = self.log.column("reward") * self.capped_weights(cap)
        return self._cache[key]

    def exposure(self, examination) -> np.ndarray:
        """Target exposure sum_i e(i) P(rank i) of each logged row's item, computed once."""
        key = f"exposure:{getattr(examination, 'spec', repr(examination))}"
        if key not in self._cache:
            self._cache[key] = self._exposures(self.log.frame, examination)
        return self._cache[key]

    def candidate_exposure(self, examination) -> np.ndarray:
        """Target exposure of each distinct (trajectory, item) of the candidate table."""
        key = f"candidate_exposure:{getattr(examination, 'spec', repr(examination))}"
        if key not in self._cache:
            cands = self._candidates()
            first = self.log.candidate_items[1]
            rows = cands.iloc[first][["trajectory", "item", "position"]]
            if "context" in self.log.frame:
                slots = cands["slot"].to_numpy()[first]
                rows = rows.assign(context=self.log.frame["context"].to_numpy()[slots])
            self._cache[key] = self._exposures(rows, examination)
        return self._cache[key]

    def _exposures(self, rows, examination) -> np.ndarray:
        if not hasattr(self.policy, "exposure"):
            raise ConfigurationError(
                f"policy {self.policy.name!r} gives no exposures: exposure-based estimators "
                "need a ranking policy with exposure(rows, examination), e.g. RerankPolicy"
            )
        return np.asarray(self.policy.exposure(rows, examination), dtype=float)

    def weight_summary(self) -> tuple[float, float, float]:
        """Sum, sum of squares and maximum of the weights, computed once."""
        if "weight_summary" not in self._cache:
            w = self.weights()
            self._cache["weight_summary"] = (float(w.sum()), float(w @ w), float(w.max(initial=0)))
        return self._cache["weight_summary"]


@dataclass(frozen=True)
class Shared:
    """A column key whose values do not depend on the policy (e.g. row counts).

    The engine stores such a column once for all policies instead of once each.
    """

    name: str


@dataclass
class Contribution:
    """Row-level columns an estimator emits for one policy on one log chunk.

    The engine sums each column over the rows of a trajectory (the unit) and
    folds the unit sums into one moment accumulator. Columns are keyed so that
    estimators sharing a column (CIS and NCIS share their numerator) store it
    once. ``tally`` carries mergeable diagnostics; ``excluded`` counts units
    left out of the estimate, by reason.
    """

    columns: dict[Hashable, np.ndarray]
    tally: Tally = field(default_factory=Tally)
    excluded: dict[str, int] = field(default_factory=dict)


class ColumnStats(Protocol):
    """Moments of one policy's columns, as an estimator's ``combine`` sees them.

    ``n`` is the number of units, ``keys`` maps each column key to its index in
    the evaluation's column space; ``mean`` and ``cov`` are over units.
    """

    n: int
    keys: dict[Hashable, int]

    def mean(self, key: Hashable) -> float:
        """Mean of one column over units."""
        ...

    def cov(self, a: Hashable, b: Hashable) -> float:
        """Sample covariance of two columns over units."""
        ...

    def index(self, key: Hashable) -> int:
        """Index of a column in the evaluation's column space."""
        ...


@runtime_checkable
class Estimator(Protocol):
    """A named, configured off-policy estimator.

    ``contribute`` turns one log chunk and one policy into row-level columns;
    ``combine`` maps the accumulated moments of those columns to a value and
    its gradient; ``diagnose`` turns the accumulated tally into diagnostics.
    """

    name: str

    def get_params(self) -> dict[str, Any]: ...
    def contribute(self, view: PolicyView) -> Contribution: ...
    def combine(self, stats: ColumnStats) -> Linearisation: ...
    def diagnose(self, tally: Tally) -> dict[str, float]: ...


class BaseEstimator:
    """Convenience base: parameters stored as given, a readable label and repr.

    Subclasses declare ``name`` and keyword-only ``__init__`` parameters, each
    with a default, and assign them unchanged to attributes of the same name.
    ``tags`` declare properties the conformance kit checks (see
    :mod:`offeval.testing`).
    """

    name: ClassVar[str] = ""
    tags: ClassVar[dict[str, Any]] = {}

    @classmethod
    def param_names(cls) -> list[str]:
        """The names of the constructor's parameters."""
        sig = inspect.signature(cls.__init__)
        return [p for p in sig.parameters if p != "self"]

    def get_params(self) -> dict[str, Any]:
        """The parameters as given to the constructor."""
        return {p: getattr(self, p) for p in self.param_names()}

    def label_params(self) -> dict[str, Any]:
        """The parameters the label shows: all of them, unless a subclass says otherwise."""
        return self.get_params()

    @property
    def label(self) -> str:
        """Short human label, e.g. ``ncis(cap=100)``."""
        params = ", ".join(f"{k}={_fmt(v)}" for k, v in self.label_params().items())
        return f"{self.name}({params})" if params else self.name

    def diagnose(self, tally: Tally) -> dict[str, float]:
        """By default, every tallied sum, maximum and minimum."""
        return {**tally.sums, **tally.maxima, **tally.minima}

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({params})"


def _fmt(value: Any) -> str:
    if value is not None and not isinstance(value, (str, int, float)):
        return str(getattr(value, "spec", None) or getattr(value, "name", None) or value)
    if isinstance(value, float) and value == float("inf"):
        return "inf"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return f"{value:g}"
    return str(value)
