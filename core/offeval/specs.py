"""The spec grammar: ``name:key=value`` and ``name(key=value)`` strings, ``key=value`` pairs,
and which estimator label a user's words name. Values are parsed as Python literals,
never evaluated; anything else is kept as text.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence
from itertools import accumulate, pairwise
from math import inf
from typing import Any

from offeval.errors import OffevalError, RegistryError, did_you_mean

#: How each bracket changes the depth of nesting.
_DEPTH = {"(": 1, "[": 1, "{": 1, ")": -1, "]": -1, "}": -1}
#: The words read as values, whatever their case (other values are Python literals or text).
_WORDS = {"inf": inf, "infinity": inf, "true": True, "false": False, "none": None, "null": None}


def parse_pairs(items: Sequence[str], *, typed: bool = True, what: str = "parameter") -> dict:
    """Parse ``key=value`` strings; values typed (numbers, inf, booleans, None) or left as text.
    A key given twice is an error."""
    params: dict[str, Any] = {}
    for item in items:
        key, eq, raw = item.partition("=")
        if not eq or not key.strip() or not raw.strip():
            raise RegistryError(f"{what} {item!r} is not key=value")
        if key.strip() in params:
            raise RegistryError(f"{what}: {key.strip()!r} is given twice")
        params[key.strip()] = _literal(raw.strip()) if typed else raw.strip()
    return params


def parse_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """Split ``"name:key=value,key=value"`` or ``"name(key=value, ...)"`` into name and params.

    A value may itself be a spec in the parenthesised form, kept as text:
    ``"name:model=exponential(gamma=0.7),cap=10"``."""
    if not isinstance(spec, str) or not spec.strip():
        raise RegistryError(
            f"a spec must be a non-empty string such as 'name:key=value', got {spec!r}"
        )
    spec = spec.strip()
    depths = list(accumulate(_DEPTH.get(char, 0) for char in spec))
    if min(depths) < 0 or depths[-1] != 0:
        raise RegistryError(f"unbalanced brackets in spec {spec!r}")
    if spec.endswith(")") and "(" in spec and ":" not in spec.partition("(")[0]:
        name, _, rest = spec[:-1].partition("(")
    else:
        name, _, rest = spec.partition(":")
    level = list(accumulate(_DEPTH.get(char, 0) for char in rest))
    cuts = [-1, *(i for i, char in enumerate(rest) if char == "," and level[i] == 0), len(rest)]
    parts = [rest[a + 1 : b].strip() for a, b in pairwise(cuts)]  # top-level commas
    return name.strip(), parse_pairs([p for p in parts if p], what=f"parameter in {spec!r}")


def find_label(requested: str, known: Mapping[str, tuple[str, dict[str, Any]]]) -> str:
    """The label among ``known`` (label -> (registered name, parameters)) that ``requested`` names.

    ``requested`` is a label, or a registered name or spec whose given parameters match
    (``name``, ``name(cap=100)``); it must name exactly one, else an OffevalError.
    """
    if requested in known:
        return requested
    try:
        name, params = parse_spec(str(requested))
    except OffevalError:
        name, params = None, {}
    matches = [
        label
        for label, (their_name, theirs) in known.items()
        if their_name == name and all(theirs.get(k, object()) == v for k, v in params.items())
    ]
    if len(matches) == 1:
        return matches[0]
    if matches:
        raise OffevalError(f"estimator {requested!r} is ambiguous: it matches {matches}")
    close = did_you_mean(requested, known) or did_you_mean(name, {n for n, _ in known.values()})
    raise OffevalError(f"unknown estimator {requested!r}{close}: one of {list(known)}")


def _literal(raw: str) -> Any:
    if raw.lower() in _WORDS:
        return _WORDS[raw.lower()]
    try:
        return ast.literal_eval(raw)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return raw
