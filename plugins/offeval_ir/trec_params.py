"""Readers of trec_eval's measure parameters (the text after ``:``), importing nothing numerical.

Each trec_eval measure of :mod:`offeval_ir.measure.trec_eval` declares how its
parameter reads (its declaration's ``read``) with these; the parser and the trec_eval
provider check a metric through :func:`offeval_ir.measure.registry.checked_param`.

trec_eval itself checks none of the values below: it reads ``rbp.p=2``,
``iprec_at_recall.1.5`` or ``Rprec_mult.-1`` and prints a meaningless number
(``rbp_p=2`` gives -1.8e+151 on its test collection, the other two 0.0000);
offeval refuses them, saying so.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from offeval import ConfigurationError

#: What trec_eval does with a value these checks refuse (said in the messages).
_TREC_ACCEPTS = "trec_eval accepts it and prints a meaningless value"


def reader(
    expected: str, parse: Callable[[str, str], object], *, required: bool = False
) -> Callable[[str, str], object]:
    """A declaration's ``read(text, label)``: ``parse(text, label)``, None for no text
    (an error when ``required``), and an error saying ``expected`` when ``parse`` raises
    ValueError."""

    def read(text: str, label: str) -> object:
        if not text:
            if required:
                raise ConfigurationError(f"{label} needs {expected} after ':'")
            return None
        try:
            return parse(text, label)
        except ConfigurationError:  # a value out of range, said by ``parse``
            raise
        except ValueError:
            raise ConfigurationError(
                f"{label}: bad parameter {text!r} (expected {expected})"
            ) from None

    return read


def recall_level(text: str, label: str) -> float:
    """A recall level in [0, 1]."""
    return _level(finite(text), label)


def recall_levels(text: str, label: str) -> tuple[float, ...]:
    """Recall levels in [0, 1], comma-separated."""
    return tuple(_level(v, label) for v in [finite(x) for x in text.split(",")])


def _level(level: float, label: str) -> float:
    if not 0 <= level <= 1:
        raise ConfigurationError(
            f"{label}: a recall level must be in [0, 1], got {level!r} ({_TREC_ACCEPTS})"
        )
    return level


def multiple(text: str, label: str) -> float:
    """A multiple of R, > 0."""
    value = finite(text)
    if not value > 0:
        raise ConfigurationError(
            f"{label}: the multiple of R must be > 0, got {value!r} ({_TREC_ACCEPTS})"
        )
    return value


def weight(text: str, label: str) -> float:
    """set_F's x, the weight of recall against precision: one number >= 0 (trec_eval's
    beta squared: x = 0 is precision, a large x tends to recall)."""
    value = finite(text)
    if value < 0:
        raise ConfigurationError(
            f"{label}: the weight x of (x + 1) P R / (x P + R) must be >= 0, got {value!r} "
            f"({_TREC_ACCEPTS})"
        )
    return value


def coefficients(text: str, label: str) -> tuple[float, ...]:
    """Four numbers, comma-separated."""
    value = tuple(finite(x) for x in text.split(","))
    if len(value) != 4:
        raise ValueError
    return value


def gains(text: str, label: str) -> dict[str, float]:
    """``1=3,2=9``: the gain of each grade."""
    pairs = gain_pairs(text)
    if any(not n.lstrip("+-").isdigit() for n in pairs):
        raise ValueError
    return pairs


def persistence_and_gains(text: str, label: str) -> dict[str, float]:
    """``p=0.8,1=3``: RBP's persistence p in (0, 1) and the gain of each grade."""
    pairs = gain_pairs(text)
    if any(not (n.lstrip("+-").isdigit() or n == "p") for n in pairs):
        raise ValueError
    if "p" in pairs and not 0 < pairs["p"] < 1:
        raise ConfigurationError(
            f"{label}: RBP's persistence p must be in (0, 1), got {pairs['p']!r} ({_TREC_ACCEPTS})"
        )
    return pairs


def gain_pairs(param: str) -> dict[str, float]:
    """``1=3,2=9,p=0.8`` -> {'1': 3.0, '2': 9.0, 'p': 0.8}."""
    pairs = {}
    for part in param.split(","):
        name, equals, value = part.partition("=")
        if not equals or not name.strip():
            raise ValueError
        pairs[name.strip()] = finite(value)
    return pairs


def finite(text: str) -> float:
    """A number as float() reads it, refusing NaN and infinities (ValueError)."""
    value = float(text)
    if not math.isfinite(value):
        raise ValueError
    return value
