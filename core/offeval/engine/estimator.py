"""The Estimator protocol, a base class with scikit-learn-style parameters, and what an
estimator hands to the engine, which keys every column by (policy, estimator, the estimator's
own key): estimators never read each other's columns unless :class:`Shared`."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol, runtime_checkable

import numpy as np
import pandas as pd

from offeval.data.log import InteractionLog
from offeval.data.policy import DenseTable, Policy
from offeval.data.slots import slot_sums
from offeval.engine.declaration import ESTIMANDS as ESTIMANDS  # re-exported: its home was here
from offeval.engine.declaration import GUARANTEES as GUARANTEES
from offeval.errors import ColumnError, ConfigurationError, OffevalError, RowError, hint
from offeval.stats.inference import Linearisation
from offeval.stats.moments import Tally

#: Policy methods a ranking policy (the ranking family's ``RerankPolicy``, say) has.
RANKING_METHODS = ("exposure", "scores", "ranks", "marginals")


def _name(policy: Policy) -> str:
    """A policy's name (its class's name when it has none)."""
    return getattr(policy, "name", type(policy).__name__)


class PolicyView:
    """A policy seen on one log chunk, shared by its estimators: answers computed once and
    checked (one finite value per row, probabilities in [0, 1]), a policy's error about its
    rows naming the user's input rows; :meth:`memo` caches any other quantity."""

    def __init__(self, policy: Policy, log: InteractionLog):
        self.policy = policy
        self.log = log
        self._cache: dict[Hashable, Any] = {}

    def memo(self, function: Callable[..., Any], *args: Any, key: Hashable = None) -> Any:
        """``function(view, *args)``, computed once per view (keyed by ``key`` instead of
        the arguments when they are not hashable)."""
        key = (function, args if key is None else key)
        if key not in self._cache:
            self._cache[key] = function(self, *args)
        return self._cache[key]

    def ask(
        self,
        method: str,
        *args: Any,
        rows=None,
        labels: np.ndarray | None = None,
        table: str = "rows",
    ) -> np.ndarray:
        """Call ``policy.<method>(rows, *args)``: one finite float per row, errors relabelled
        (``rows``: the log's by default; ``labels``: their input labels)."""
        if rows is None:
            rows, labels = self.log.frame, self.log.source_rows
        values = self._answer(method, args, rows, labels, table)
        if not (values.size and np.isfinite(values.min()) and np.isfinite(values.max())):
            self._check_finite(values, method, labels, table)  # NaN, inf show in min or max
        return values

    def _answer(self, method: str, args: tuple, rows, labels, table: str) -> np.ndarray:
        """``policy.<method>(rows, *args)`` as one float per row (not checked finite)."""
        function = getattr(self.policy, method, None)
        name = _name(self.policy)
        if not callable(function):
            advice = ""
            if method in RANKING_METHODS:  # how to give a policy that has it
                advice = "; " + hint(
                    "give a ranking policy (one with exposure, scores, ranks and marginals)",
                    f"give the policy as a ranking: --rerank {name}=SCORE_COLUMN",
                )
            raise ConfigurationError(
                f"policy {name!r} ({type(self.policy).__name__}) has no {method}() method, "
                f"which this estimator needs{advice}"
            )
        try:
            values = function(rows, *args)
        except ColumnError as err:
            raise err.at_labels(labels, table) from None
        try:
            values = np.asarray(values, dtype=float)
        except (TypeError, ValueError) as exc:
            raise OffevalError(
                f"policy {name!r}: {method}() did not return numbers ({exc})"
            ) from None
        if values.shape != (len(rows),):
            raise OffevalError(
                f"policy {name!r}: {method}() returned shape {values.shape} for {len(rows)} rows"
            )
        return values

    def _check_finite(self, values: np.ndarray, method: str, labels, table: str) -> None:
        """An error naming the rows where the policy's answer is NaN or inf."""
        bad = ~np.isfinite(values)
        if bad.any():
            raise RowError(
                f"policy {_name(self.policy)!r}", f"{method}() gave NaN or inf", labels[bad], table
            )

    def probabilities(self) -> np.ndarray:
        """Target probability of each logged row's (item, position)."""
        return self.memo(_probabilities, False)

    def candidate_probabilities(self) -> np.ndarray:
        """Target probability of each row of the log's candidate table."""
        return self.memo(_probabilities, True)

    def slot_expectation(
        self, values: np.ndarray, key: Hashable = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Per log row (slot): sum over its candidates of pi * ``values`` (one number per
        candidate row), and of pi. ``key`` names ``values`` on this chunk: a
        :class:`~offeval.data.policy.DenseTable` policy then reads per-cell sums of ``values``,
        computed once per chunk for every such policy."""
        table, by_cell = getattr(self.policy, "dense", None), None
        if key is not None and isinstance(table, DenseTable):
            by_cell = self.log.memo(_cell_matrices, table, values, key=(table.layout, key))
        if by_cell is not None:
            sums, counts = by_cell
            return sums @ table.probabilities, counts @ table.probabilities
        pi = self.candidate_probabilities()
        k = self.log.regular_slots
        if k is None:
            return slot_sums(self.log, pi * values), slot_sums(self.log, pi)
        by_slot = pi.reshape(-1, k)
        return np.einsum("ij,ij->i", by_slot, values.reshape(-1, k)), np.einsum("ij->i", by_slot)

    def weights(self) -> np.ndarray:
        """Importance weights pi/mu of the logged rows."""
        return self.memo(_weights)

    def scores(self) -> np.ndarray:
        """The policy's score of each logged row's item (a scoring policy's ``scores(rows)``)."""
        return self.memo(PolicyView.ask, "scores")


#: The bits of 1.0 as an unsigned integer: read so, floats in [0, 1] are the integers up to
#: it and every other float (negative, NaN, above 1) lies above, so one maximum checks them.
_ONE_BITS = np.array(1.0).view(np.uint64)


def _probabilities(view: PolicyView, candidates: bool) -> np.ndarray:
    log = view.log
    if candidates:
        rows = log.memo(_candidate_rows)
        labels, table = log.candidate_source_rows, "candidate rows"
    else:
        rows, labels, table = log.frame, log.source_rows, "rows"
    p = view._answer("probabilities", (), rows, labels, table)
    if p.size and p.view(np.uint64).max() <= _ONE_BITS:
        return p
    view._check_finite(p, "probabilities", labels, table)
    bad = (p < 0) | (p > 1)
    if bad.any():
        raise RowError(
            f"policy {_name(view.policy)!r}", "probabilities must lie in [0, 1]", labels[bad], table
        )
    return p


def _candidate_rows(log: InteractionLog) -> pd.DataFrame:
    """The candidate table with each slot's context: what policies are asked, once per chunk."""
    cands = log.require_candidates()
    return cands.assign(context=log.frame["context"].to_numpy()[cands["slot"]])


def _cell_matrices(log: InteractionLog, table: DenseTable, values: np.ndarray):
    """(n_rows, cells) sums of ``values`` and counts of candidates per slot and cell of a
    dense table; None where that does not apply."""
    k, cells = log.regular_slots, table.probabilities.size
    rows = log.memo(_candidate_rows)
    if k is None or cells > k or any(key not in rows for key in table.keys):
        return None  # the matrices would outgrow the candidate column they replace
    keys = [rows[key].to_numpy() for key in table.keys]
    if any(v.dtype.kind not in "iu" for v in keys):
        return None
    cell, inside = table.cells(keys)
    ones = None
    if inside is not None:  # candidates outside the grid have probability 0: left out
        cell, values, ones = np.where(inside, cell, 0), np.where(inside, values, 0.0), inside
    n = log.n_rows
    at = (cell.reshape(n, k) + (np.arange(n) * cells)[:, None]).reshape(-1)
    sums = np.bincount(at, weights=values, minlength=n * cells).reshape(n, cells)
    counts = np.bincount(at, weights=ones, minlength=n * cells).reshape(n, cells)
    return sums, counts.astype(float, copy=False)


def _weights(view: PolicyView) -> np.ndarray:
    return view.probabilities() / view.log.column("propensity")


@dataclass(frozen=True)
class Shared:
    """A column defined by a computation, shared by every estimator that asks for it:
    ``function(view, *args)``, one value per log row, computed once per chunk and policy
    (``policy_free=True``: ``function(log, *args)``, once for all policies)."""

    function: Callable[..., np.ndarray]
    args: tuple = ()
    policy_free: bool = False

    def compute(self, view: PolicyView) -> np.ndarray:
        """The column's values on the view's chunk."""
        if self.policy_free:
            return self.function(view.log, *self.args)
        return view.memo(self.function, *self.args)


@dataclass
class Contribution:
    """The columns an estimator emits for one policy on one log chunk, read back by
    ``combine`` by the same keys: ``columns``, one value per log row (or :class:`Shared`),
    summed over each trajectory; ``unit_columns``, one value per trajectory (a trajectory's
    nDCG, say); ``tally``, mergeable diagnostics; ``excluded``, units left out by reason
    (their columns must be zero)."""

    columns: dict[Hashable, np.ndarray | Shared] = field(default_factory=dict)
    unit_columns: dict[Hashable, np.ndarray] = field(default_factory=dict)
    tally: Tally = field(default_factory=Tally)
    excluded: dict[str, int] = field(default_factory=dict)


class ColumnStats(Protocol):
    """Moments over units of one (policy, estimator)'s columns, as its ``combine`` sees them:
    ``n`` units, ``keys`` each column key's index in the evaluation's column space."""

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

    ``contribute`` turns one log chunk and one policy into columns; ``combine`` maps the
    accumulated moments of those columns to a value and its gradient; ``diagnose`` turns
    the accumulated tally into diagnostics. What it promises (``label``, ``estimand``,
    ``guarantee``, ``requires``, ``tags``, ``interval``, ...) it declares as optional
    attributes (properties when they depend on the parameters), read by
    :func:`~offeval.engine.declaration.declaration_of`: the
    :class:`~offeval.engine.declaration.Declaration` lists them.
    """

    name: str

    def get_params(self) -> dict[str, Any]: ...
    def contribute(self, view: PolicyView) -> Contribution: ...
    def combine(self, stats: ColumnStats) -> Linearisation: ...
    def diagnose(self, tally: Tally) -> dict[str, float]: ...


class BaseEstimator:
    """Convenience base: parameters stored as given, a readable label and repr. Subclasses
    declare ``name`` and keyword ``__init__`` parameters, each with a default, assigned
    unchanged to attributes of the same name (validated there)."""

    name: ClassVar[str] = ""
    tags: ClassVar[dict[str, Any]] = {}
    estimand: str | None = None
    guarantee: str | None = None
    requires: tuple[str, ...] = ()
    expected_failed_checks: dict[str, str] = {}
    higher_is_better: bool = True

    @classmethod
    def param_names(cls) -> list[str]:
        """The names of the constructor's parameters."""
        return list(init_defaults(cls))

    def get_params(self) -> dict[str, Any]:
        """The parameters as given to the constructor."""
        return {p: getattr(self, p) for p in self.param_names()}

    def label_params(self) -> dict[str, Any]:
        """The parameters the label shows: those that differ from their defaults."""
        return self.changed_params()

    def changed_params(self) -> dict[str, Any]:
        """The parameters that differ from their defaults (objects always count as changed)."""
        defaults = init_defaults(type(self))
        plain = (str, int, float, type(None))
        return {
            key: value
            for key, value in self.get_params().items()
            if not (isinstance(value, plain) and value == defaults[key])
        }

    @property
    def label(self) -> str:
        """Short human label: ``my_est`` at the defaults, ``my_est(cap=10)`` otherwise."""
        return _spelled(self.name, self.label_params())

    @property
    def full_label(self) -> str:
        """The label with every parameter, defaults included: ``my_est(cap=100)``."""
        return _spelled(self.name, self.get_params())

    def diagnose(self, tally: Tally) -> dict[str, float]:
        """By default, every tallied count, sum, maximum and minimum."""
        return {**tally.counts, **tally.sums, **tally.maxima, **tally.minima}

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({params})"


@functools.cache
def init_defaults(cls: type) -> dict[str, Any]:
    """A class's named constructor parameters and their defaults (``inspect.Parameter.empty``)."""
    sig = inspect.signature(cls.__init__)
    variadic = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    return {
        name: p.default
        for name, p in sig.parameters.items()
        if name != "self" and p.kind not in variadic
    }


def _spelled(name: str, params: dict[str, Any]) -> str:
    """``name(key=value, ...)``, or the bare name without parameters."""
    shown = ", ".join(f"{k}={_fmt(v)}" for k, v in params.items())
    return f"{name}({shown})" if shown else name


def _fmt(value: Any) -> str:
    if value is not None and not isinstance(value, (str, int, float)):
        return str(getattr(value, "spec", None) or getattr(value, "name", None) or value)
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return f"{value:g}"
    return str(value)
