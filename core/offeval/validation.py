"""Scalar arguments checked in one place: whole numbers, numbers, choices, flags, levels.

Every check refuses a boolean where a number is meant, takes numpy scalars as the Python
values they stand for, returns a plain ``int``, ``float`` or ``bool``, and raises ``error``
(ConfigurationError unless told otherwise) saying ``"{name} must be {rule}, got {value}"``,
the value shown plainly, the rule in words derived from the bounds (or given as ``rule``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection
from typing import Any, TypeVar

import numpy as np

from offeval.errors import ConfigurationError, OffevalError, did_you_mean, plain

#: What a check raises: an exception class, or any callable, given the whole message.
ErrorFactory = Callable[[str], Exception]
Choice = TypeVar("Choice")


def _refuse(error: ErrorFactory, name: str, rule: str, value: Any) -> Exception:
    """The error saying ``name must be rule, got value`` (the value as a plain value)."""
    return error(f"{name} must be {rule}, got {plain(value)!r}")


def _either(rule: str, extras: list[str]) -> str:
    """``rule`` with the other accepted values: ``a or b``, ``a, b or c``."""
    return ", ".join([rule, *extras[:-1]]) + (f" or {extras[-1]}" if extras else "")


def _bounds(low: Any, high: Any, low_open: bool, high_open: bool) -> str:
    """`` >= 1``, `` < 1``, `` in (0, 1]`` or ``""``."""
    if low is not None and high is not None:
        return f" in {'(' if low_open else '['}{low}, {high}{')' if high_open else ']'}"
    if low is not None:
        return f" {'>' if low_open else '>='} {low}"
    if high is not None:
        return f" {'<' if high_open else '<='} {high}"
    return ""


def _is_real(value: Any) -> bool:
    """Whether ``value`` is a Python or numpy int or float, not a boolean."""
    real = isinstance(value, (int, float, np.integer, np.floating))
    return real and not isinstance(value, (bool, np.bool_))


def check_whole(
    value: Any,
    name: str,
    *,
    low: int | None = None,
    high: int | None = None,
    floats: bool = False,
    optional: bool = False,
    rule: str | None = None,
    error: ErrorFactory = ConfigurationError,
) -> int | None:
    """``value`` as an ``int`` in ``low..high`` (both inclusive, either may be None).

    With ``floats``, a finite float with a whole value is one too (``5.0`` is ``5``); with
    ``optional``, None is accepted and returned."""
    if value is None and optional:
        return None
    whole = isinstance(value, (int, np.integer)) and not isinstance(value, bool)
    if floats and isinstance(value, (float, np.floating)):
        whole = math.isfinite(value) and float(value).is_integer()
    inside = whole and (low is None or value >= low) and (high is None or value <= high)
    if inside:
        return int(value)
    if low is not None and high is not None:
        bounds = f" in {plain(low)}..{plain(high)}"
    else:
        bounds = _bounds(plain(low), plain(high), low_open=False, high_open=False)
    words = _either(f"a whole number{bounds}", ["None"] if optional else [])
    raise _refuse(error, name, rule or words, value)


def check_number(
    value: Any,
    name: str,
    *,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
    high_open: bool = False,
    finite: bool = True,
    optional: bool = False,
    rule: str | None = None,
    error: ErrorFactory = ConfigurationError,
) -> float | None:
    """``value`` as a ``float`` between ``low`` and ``high`` (inclusive unless ``*_open``).

    NaN is always refused, ``inf`` and ``-inf`` when ``finite`` (the default; else they are
    judged by the bounds). With ``optional``, None is accepted and returned."""
    if value is None and optional:
        return None
    number = math.nan
    if _is_real(value):
        try:
            number = float(value)
        except OverflowError:  # an int beyond floats is beyond any finite bound
            number = math.inf if value > 0 else -math.inf
    inside = (
        not math.isnan(number)
        and (math.isfinite(number) or not finite)
        and (low is None or (number > low if low_open else number >= low))
        and (high is None or (number < high if high_open else number <= high))
    )
    if inside:
        return number
    extras = ["inf"] if not finite and high is None and low is not None else []
    extras += ["None"] if optional else []
    if low == 0 and low_open and high is None:
        words = "a finite positive number" if finite else "a positive number"
    else:
        bounded = low is not None and high is not None
        kind = "a finite number" if finite and not bounded else "a number"
        words = kind + _bounds(plain(low), plain(high), low_open, high_open)
    raise _refuse(error, name, rule or _either(words, extras), value)


def check_choice(
    value: Any,
    name: str,
    choices: Collection[Choice],
    *,
    rule: str | None = None,
    error: ErrorFactory = ConfigurationError,
) -> Choice:
    """The one of ``choices`` that ``value`` is (same type and equal; a numpy scalar is the
    Python value it stands for, and a boolean is no whole number). The message lists the
    choices as given and, for text, suggests the closest."""
    scalar = value.item() if isinstance(value, np.generic) else value
    for choice in choices:
        same_type = isinstance(scalar, type(choice)) and not isinstance(scalar, np.ndarray)
        if same_type and isinstance(scalar, bool) == isinstance(choice, bool) and scalar == choice:
            return choice
    shown = choices if isinstance(choices, (tuple, list)) else tuple(choices)
    close = did_you_mean(value, map(str, choices)) if isinstance(value, str) else ""
    raise error(f"{name} must be {rule or f'one of {shown}'}, got {plain(value)!r}{close}")


def check_flag(
    value: Any, name: str, *, rule: str | None = None, error: ErrorFactory = ConfigurationError
) -> bool:
    """``value`` as a ``bool``: ``True``, ``False`` or a numpy boolean (``1`` is not a flag)."""
    if not isinstance(value, (bool, np.bool_)):
        raise _refuse(error, name, rule or "True or False", value)
    return bool(value)


def check_level(level: Any, *, error: ErrorFactory = OffevalError) -> float:
    """A confidence level as a ``float`` strictly between 0 and 1 (0.95, not 95)."""
    if not (_is_real(level) and 0 < level < 1):
        raise error(f"confidence level must lie in (0, 1), e.g. 0.95; got {plain(level)!r}")
    return float(level)
