"""What an estimator promises, declared once as attributes and read, checked and completed by
:func:`declaration_of`: the rest of offeval reads it only as a :class:`Declaration`."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from offeval.engine.intervals import DEFAULT, interval_method, interval_names, offered
from offeval.errors import ConfigurationError
from offeval.validation import check_choice, check_flag, check_number

#: What an estimator can declare it estimates (its ``estimand``), with the meaning.
ESTIMANDS: dict[str, str] = {
    "reward_per_impression": "expected reward per logged row (slot) under the target policy",
    "reward_per_trajectory": "expected total reward of a trajectory under the target policy",
}
#: What an estimator can promise about its estimand (its ``guarantee``).
GUARANTEES = ("unbiased", "consistent", None)
#: The tags an estimator may set: the kit's linearity check, what its ESS counts.
TAGS = ("linear_in_reward", "ess_unit")
#: What an effective sample size counts unless the tag ``ess_unit`` says otherwise.
ESS_UNIT = "rows"
#: Diagnostics of importance weights that reports show in their weight table, when an
#: estimator reports them (its ``weight_diagnostics``, unless it declares others).
WEIGHT_DIAGNOSTICS = (
    "ess",
    "mean_weight",
    "mean_weight_z",
    "max_weight",
    "clipped_share",
    "support_violations",
    "unsupported_mass_per_slot",
)


@dataclass(frozen=True)
class Declaration:
    """What one estimator promises, checked, every default filled.

    Each field is the estimator's attribute of the same name unless said otherwise:

    - ``label`` (parameters at their defaults omitted: ``my_est(cap=10)``) and
      ``full_label``; ``description``: the first paragraph of its class's docstring;
    - ``higher_is_better``: False where lower is better (decisions rank by the negation);
    - ``estimand`` (a key of :data:`ESTIMANDS`; None: not an estimate of online reward)
      and ``guarantee`` (one of :data:`GUARANTEES`, None: biased; it needs an estimand);
    - ``requires``: what it needs beyond trajectory, context, item, position and reward:
      log roles or columns (``"prefix_*"``), ``"candidates"`` or policy methods
      (``"exposure()"``);
    - ``assumptions``: environment parameters under which its guarantee holds;
    - ``linear_in_reward`` (the kit's linearity check) and ``ess_unit`` (what its
      effective sample size counts), from its ``tags``;
    - ``weight_diagnostics``: its diagnostics of importance weights (reports' tables);
    - ``interval``: its default interval method; ``intervals``: the methods it offers,
      each with what that method's ``reads`` took of the estimator;
    - ``reward_range``: the rewards' bounds it assumes (a click model's ``(0, 1)``), read
      by a method that needs reward bounds when the user declares none; ``value_range``:
      bounds the estimated quantity cannot leave, to which intervals are clipped;
    - ``expected_failed_checks``: kit checks known to fail, with the reasons;
    - ``prepare_kit_log``: ``log -> log``, adding the columns its users compute before
      evaluating (a reward model's predictions) to the kit's logs;
    - ``kit_environment``: the registered environment the kit checks it in (None: the
      kit's own world);
    - ``fitted``: ``stats -> dict`` of parameters it fits from the log, shown in its
      diagnostics as ``fitted_<name>``.
    """

    name: str
    label: str
    full_label: str
    description: str = ""
    higher_is_better: bool = True
    estimand: str | None = None
    guarantee: str | None = None
    requires: tuple[str, ...] = ()
    assumptions: Mapping[str, Any] = field(default_factory=dict)
    linear_in_reward: bool = False
    ess_unit: str = ESS_UNIT
    weight_diagnostics: tuple[str, ...] = WEIGHT_DIAGNOSTICS
    interval: str = DEFAULT
    intervals: Mapping[str, Any] = field(default_factory=lambda: {DEFAULT: {}})
    reward_range: tuple[float, float] | None = None
    value_range: tuple[float, float] | None = None
    expected_failed_checks: Mapping[str, str] = field(default_factory=dict)
    prepare_kit_log: Callable[[Any], Any] | None = None
    kit_environment: str | None = None
    fitted: Callable[[Any], dict[str, float]] | None = None


def declaration_of(estimator: Any) -> Declaration:
    """The estimator's declaration: its attributes, checked, defaults filled (a wrong value
    raises a :class:`~offeval.errors.ConfigurationError` naming estimator and attribute)."""
    name = getattr(estimator, "name", None)
    if not isinstance(name, str) or not name:
        raise ConfigurationError(
            f"estimator {type(estimator).__name__}: name must be a non-empty string, got {name!r}"
        )
    owner = f"estimator {name!r} ({type(estimator).__name__})"

    def refuse(message: str) -> ConfigurationError:
        return ConfigurationError(f"{owner}: {message}")

    label = _nonempty(getattr(estimator, "label", name), "label", refuse)
    estimand = check_choice(
        getattr(estimator, "estimand", None), "estimand", (*ESTIMANDS, None), error=refuse
    )
    guarantee = check_choice(
        getattr(estimator, "guarantee", None), "guarantee", GUARANTEES, error=refuse
    )
    if guarantee is not None and estimand is None:
        raise refuse(f"guarantee {guarantee!r} needs an estimand, and estimand is None")
    tags = _mapping(estimator, "tags", refuse)
    unknown = sorted(set(tags) - set(TAGS))
    if unknown:
        raise refuse(f"tags {unknown} are unknown: the tags are {list(TAGS)}")
    interval = check_choice(
        getattr(estimator, "interval", DEFAULT), "interval", interval_names(), error=refuse
    )
    intervals = offered(estimator, refuse)
    kit = getattr(estimator, "kit_environment", None)
    if interval not in intervals:
        raise refuse(f"interval {interval!r} needs {interval_method(interval).needs}")
    return Declaration(
        name=name,
        label=label,
        full_label=_nonempty(getattr(estimator, "full_label", label), "full_label", refuse),
        description=" ".join((type(estimator).__doc__ or "").strip().split("\n\n")[0].split()),
        higher_is_better=check_flag(
            getattr(estimator, "higher_is_better", True), "higher_is_better", error=refuse
        ),
        estimand=estimand,
        guarantee=guarantee,
        requires=_strings(estimator, "requires", (), refuse),
        assumptions=_mapping(estimator, "assumptions", refuse),
        linear_in_reward=check_flag(
            tags.get("linear_in_reward", False), "tags['linear_in_reward']", error=refuse
        ),
        ess_unit=_nonempty(tags.get("ess_unit", ESS_UNIT), "tags['ess_unit']", refuse),
        weight_diagnostics=_strings(estimator, "weight_diagnostics", WEIGHT_DIAGNOSTICS, refuse),
        interval=interval,
        intervals=intervals,
        reward_range=_range(estimator, "reward_range", refuse),
        value_range=_range(estimator, "value_range", refuse),
        expected_failed_checks=_known_failures(estimator, refuse),
        prepare_kit_log=_callable(estimator, "prepare_kit_log", refuse),
        kit_environment=None if kit is None else _nonempty(kit, "kit_environment", refuse),
        fitted=_callable(estimator, "fitted", refuse),
    )


def _nonempty(value: Any, attribute: str, refuse: Callable) -> str:
    if not isinstance(value, str) or not value:
        raise refuse(f"{attribute} must be a non-empty string, got {value!r}")
    return value


def _strings(estimator: Any, attribute: str, default: tuple, refuse: Callable) -> tuple[str, ...]:
    value = getattr(estimator, attribute, default)
    if not isinstance(value, tuple) or not all(isinstance(v, str) for v in value):
        raise refuse(f"{attribute} must be a tuple of strings, got {value!r}")
    return value


def _mapping(estimator: Any, attribute: str, refuse: Callable) -> dict:
    """A dict attribute with text keys (None: empty)."""
    value = getattr(estimator, attribute, None)
    if value is None:
        return {}
    if not isinstance(value, Mapping) or not all(isinstance(k, str) for k in value):
        raise refuse(f"{attribute} must be a dict with text keys, got {value!r}")
    return dict(value)


def _range(estimator: Any, attribute: str, refuse: Callable) -> tuple[float, float] | None:
    """The bounds the estimator declares under ``attribute`` (None: none)."""
    value = getattr(estimator, attribute, None)
    if value is None:
        return None
    try:
        return check_reward_range(value, attribute)
    except ConfigurationError as error:
        raise refuse(str(error)) from None


def check_reward_range(value: Any, name: str = "reward_range") -> tuple[float, float]:
    """Known bounds of the rewards as ``(low, high)``: finite numbers, ``low < high``, from a
    pair of numbers or their text ``"LOW,HIGH"`` (``"0,1"``)."""
    if isinstance(value, str):
        value = [p.strip() for p in value.split(",")]
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence) or len(value) != 2:
        raise ConfigurationError(
            f"{name} must be two numbers, the lowest and highest reward possible (e.g. 0,1); "
            f"got {value!r}"
        )
    low, high = (
        _number(v, f"{name}'s {end}") for v, end in zip(value, ("low", "high"), strict=True)
    )
    if not low < high:
        raise ConfigurationError(
            f"{name} must have its low end below its high end, got {low:g},{high:g}"
        )
    return low, high


def _number(value: Any, name: str) -> float:
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            raise ConfigurationError(f"{name} must be a number, got {value!r}") from None
    return float(check_number(value, name))


def _known_failures(estimator: Any, refuse: Callable) -> dict[str, str]:
    known = _mapping(estimator, "expected_failed_checks", refuse)
    for check, reason in known.items():
        if not isinstance(reason, str):
            raise refuse(f"expected_failed_checks[{check!r}] must be a reason, got {reason!r}")
    return known


def _callable(estimator: Any, attribute: str, refuse: Callable) -> Callable | None:
    value = getattr(estimator, attribute, None)
    if value is not None and not callable(value):
        raise refuse(f"{attribute} must be a method, got {value!r}")
    return value
