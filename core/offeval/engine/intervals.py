"""Interval methods, a registered component kind (``interval``): the core's normal, and any a
plugin registers with ``register_intervals``. A method owns what it reads of an estimator, its
fold state and its checks (:class:`IntervalMethod`); the engine knows none by name, and clips
every interval to the bounds the estimated quantity cannot leave."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from offeval.data.log import InteractionLog
from offeval.data.units import hash_ids
from offeval.errors import OffevalError, did_you_mean, hint
from offeval.registry.manager import active_registry
from offeval.stats.inference import two_sided
from offeval.validation import check_choice

#: The interval method every estimator offers, and the first one listed.
DEFAULT = "normal"
#: Below this effective sample size (Kish's, of the importance weights) a normal interval
#: rests on a few heavy weights and should not be read: on an independent simulator normal
#: IS covered the truth about half the time at n = 50 with a largest weight of 1,000.
MIN_ESS = 30


@dataclass(frozen=True)
class IntervalCase:
    """One estimate whose interval a method computes: policy ``p`` by estimator ``e``, the
    ``units`` it used and the rewards' known bounds (the user's, else the estimator's)."""

    p: int
    e: int
    label: str
    value: float
    se: float
    level: float
    units: int
    diagnostics: Mapping[str, Any] = field(default_factory=dict)
    reward_range: tuple[float, float] | None = None
    declaration: Any = None


class IntervalMethod:
    """The defaults of an interval method: offered to every estimator, nothing folded, no
    check; a subclass gives ``bounds``.

    ``needs`` says what an estimator must declare to be offered it (:func:`offering` lists
    the registered estimators that do). A fold state (from ``start``) has ``add(chunk)``
    (a :class:`ChunkSums`) and ``merge(other)``, and pickles.
    """

    needs = "nothing"

    def reads(self, estimator: Any) -> Any:
        """What it reads of the estimator's declaration, checked (a ConfigurationError naming
        the attribute), or None when the estimator does not offer it; here, nothing."""
        return {}

    def unavailable(self, labels: list[str], key: str) -> str:
        """Why estimators ``labels`` cannot have it (``key``: the label or name chosen by)."""
        name = getattr(self, "name", type(self).__name__)
        return hint(
            f"interval {name!r} is not offered by {labels}: choose interval='normal' for them",
            f"--interval {key}={name}: {', '.join(labels)} offers no {name} intervals",
        )

    def check(self, declarations: list, reward_range: tuple[float, float] | None) -> None:
        """The set-up's check of the estimators using it, before any row is read
        (``reward_range``: the user's, checked, or None); here, none."""

    def start(self, uses: Mapping[tuple[int, int], Any]) -> Any:
        """Its empty fold state for the (policy, estimator) pairs using it (``uses[p, e]``: what
        it read of estimator ``e``); here, None: it folds nothing."""
        return None

    def bounds(self, case: IntervalCase, state: Any) -> tuple[float, float]:
        """``(low, high)`` of one estimate, from its method's fold state."""
        raise NotImplementedError

    def unreadable(self, case: IntervalCase, low: float, high: float) -> str | None:
        """Why the interval should not be read (None: it may be)."""
        return None


class Normal(IntervalMethod):
    """The normal interval: value +- z se, the delta method's (it folds nothing)."""

    def bounds(self, case: IntervalCase, state: Any = None) -> tuple[float, float]:
        """``value +- z se``."""
        return two_sided(case.value, case.se, case.level, None)

    def unreadable(self, case: IntervalCase, low: float, high: float) -> str | None:
        """A zero width over two units or more, or a weights' effective sample size below
        :data:`MIN_ESS`."""
        if case.units >= 2 and case.se == 0:
            return (
                "zero width: every unit contributed the same value, which measures no uncertainty"
            )
        ess = case.diagnostics.get("ess")
        if ess is not None and np.isfinite(ess) and 0 < ess < MIN_ESS:
            return (
                f"effective sample size {ess:.3g}, below {MIN_ESS}: a normal interval resting on "
                "a few large weights undercovers"
            )
        return None


def interval_names() -> tuple[str, ...]:
    """The registered interval methods: ``normal`` first, then the others by name."""
    names = active_registry().names("interval")
    return (DEFAULT, *(n for n in names if n != DEFAULT))


def offering(name: str) -> list[str]:
    """The registered estimators that offer interval method ``name`` as their defaults
    configure them (one that cannot be built without parameters is not listed)."""
    registry, method, found = active_registry(), interval_method(name), []
    for estimator in registry.distinct("estimator"):
        try:
            offers = method.reads(registry.create("estimator", estimator)) is not None
        except OffevalError:
            continue
        found += [estimator] if offers else []
    return found


def interval_method(name: str) -> Any:
    """The registered interval method ``name``, built (its ``name`` set) by calling the
    factory as it is (``create`` would inspect its signature: a third of a small pass)."""
    method = active_registry().get("interval", name).factory()
    method.name = name
    return method


def offered(estimator: Any, refuse) -> dict[str, Any]:
    """The interval methods ``estimator`` offers, each with what it reads of it (the
    declaration's ``intervals``); a wrong attribute is refused by ``refuse``."""
    out = {}
    for name in interval_names():
        try:
            read = interval_method(name).reads(estimator)
        except OffevalError as error:
            raise refuse(str(error)) from None
        if read is not None:
            out[name] = read
    return out


def chosen_methods(declarations: list, interval: str | Mapping[str, str] | None) -> list[str]:
    """Each estimator's interval method: ``interval`` for all, or by estimator label or name
    (a mapping; the others keep theirs), or each its declared one (None); mistakes are
    refused in the reader's words (``interval=`` or ``--interval LABEL=METHOD``)."""
    declared = [d.interval for d in declarations]
    methods = interval_names()
    if interval is None:
        return declared
    if isinstance(interval, str):
        chosen = [check_choice(interval, "interval", methods, error=OffevalError)] * len(declared)
    elif isinstance(interval, Mapping):
        names = {d.label for d in declarations} | {d.name for d in declarations}
        unknown = [k for k in interval if k not in names]
        if unknown:
            key, labels = unknown[0], [d.label for d in declarations]
            raise OffevalError(
                hint(
                    f"interval names {key!r}, which is none of the estimators {labels}",
                    f"--interval {key}={interval[key]}: no estimator {key!r} among "
                    + ", ".join(labels),
                )
                + did_you_mean(key, labels)
            )
        chosen = [
            check_choice(
                interval.get(d.label, interval.get(d.name, declared[i])),
                f"interval[{d.label!r}]",
                methods,
                error=OffevalError,
            )
            for i, d in enumerate(declarations)
        ]
    else:
        raise OffevalError(
            f"interval must be one of {methods}, a dict of them by estimator, or None "
            f"(each estimator's own), got {interval!r}"
        )
    for name in dict.fromkeys(chosen):
        unable = [
            d
            for d, m in zip(declarations, chosen, strict=True)
            if m == name and name not in d.intervals
        ]
        if unable:
            labels = [d.label for d in unable]
            key = unable[0].label if unable[0].label in (interval or {}) else unable[0].name
            raise OffevalError(interval_method(name).unavailable(labels, key))
    return chosen


def checked_methods(
    declarations: list, chosen: Sequence[str], reward_range: tuple[float, float] | None
) -> dict[str, Any]:
    """The methods ``chosen`` (one per estimator), built, each having checked the estimators
    that use it (``reward_range``: the user's, checked, or None)."""
    methods = {name: interval_method(name) for name in dict.fromkeys(chosen)}
    for name, method in methods.items():
        using = [d for d, m in zip(declarations, chosen, strict=True) if m == name]
        method.check(using, reward_range)
    return methods


class ChunkSums:
    """One chunk as an interval method's fold state sees it, before the engine centres its
    block of unit sums: the ``log`` chunk, the units' ``order`` and each (policy,
    estimator)'s column keys and per-unit sums."""

    def __init__(self, log: InteractionLog, acc: Any, block: np.ndarray, index: np.ndarray):
        self.log, self._acc, self._block, self._index = log, acc, block, index

    @property
    def order(self) -> np.ndarray:
        """Each unit's place in the order of units, whatever the chunking."""
        ids = self.log.unit_ids
        return _mixed(ids.astype(np.uint64) if ids.dtype.kind in "iu" else hash_ids(ids))

    def label(self, e: int) -> str:
        """Estimator ``e``'s label."""
        return self._acc.declarations[e].label

    def columns(self, p: int, e: int) -> list:
        """The column keys estimator ``e`` emitted on policy ``p`` so far."""
        return list(self._acc.state.local.get((p, e), {}))

    def sums(self, p: int, e: int, key: Any) -> np.ndarray:
        """The per-unit sums of one of the columns of (p, e) on this chunk."""
        state = self._acc.state
        j = self._index[state.where[state.local[p, e][key]]]
        return self._block[:, j].copy() if j >= 0 else np.zeros(self._block.shape[0])


def _mixed(keys: np.ndarray) -> np.ndarray:
    """A bijective mix of 64-bit keys (splitmix64's finaliser): consecutive ids in scattered
    order."""
    with np.errstate(over="ignore"):
        z = keys.astype(np.uint64) + np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))
