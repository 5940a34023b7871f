"""What decisions need from an evaluation, saved so that they can be revisited without the log.

An :class:`EstimatorSummary` holds one estimator's values for every policy and
the covariance of those values (paired: one log evaluated them all). Plugins
that decide between policies work from it; ``offeval evaluate --out`` writes
the summaries of every estimator to ``summaries.json``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from offeval.errors import OffevalError

#: Format version of the saved file.
VERSION = 1


@dataclass(frozen=True)
class EstimatorSummary:
    """One estimator's values for every policy, and their covariance (already divided by n).

    ``baseline`` names the policy the values are relative to (None: absolute).
    ``params`` are the estimator's parameters (plain values only), so that a
    family of settings (caps, say) can be told apart and ordered.
    """

    estimator: str
    name: str
    policies: list[str]
    values: np.ndarray
    covariance: np.ndarray
    n_units: int
    level: float = 0.95
    baseline: str | None = None
    higher_is_better: bool = True
    params: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self):
        k = len(self.policies)
        values = np.asarray(self.values, dtype=float)
        covariance = np.asarray(self.covariance, dtype=float)
        if values.shape != (k,) or covariance.shape != (k, k):
            raise OffevalError(
                f"summary of {self.estimator!r}: {k} policies need {k} values and a {k}x{k} "
                f"covariance, got {values.shape} and {covariance.shape}"
            )
        if len(set(self.policies)) != k:
            raise OffevalError(f"summary of {self.estimator!r}: policy names must be unique")
        object.__setattr__(self, "values", values)
        object.__setattr__(self, "covariance", covariance)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dictionary (non-finite numbers as strings)."""
        return {
            "estimator": self.estimator,
            "name": self.name,
            "policies": list(self.policies),
            "values": [_number(v) for v in self.values],
            "covariance": [[_number(v) for v in row] for row in self.covariance],
            "n_units": int(self.n_units),
            "level": float(self.level),
            "baseline": self.baseline,
            "higher_is_better": bool(self.higher_is_better),
            "params": {k: _number(v) for k, v in self.params.items() if _plain(v)},
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> EstimatorSummary:
        """The inverse of :meth:`to_dict`."""
        try:
            return cls(
                data["estimator"],
                data["name"],
                list(data["policies"]),
                np.array([_float(v) for v in data["values"]]),
                np.array([[_float(v) for v in row] for row in data["covariance"]]),
                int(data["n_units"]),
                float(data["level"]),
                data.get("baseline"),
                bool(data.get("higher_is_better", True)),
                {
                    k: _float(v) if isinstance(v, str) and v in _SPECIAL else v
                    for k, v in data.get("params", {}).items()
                },
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise OffevalError(f"not an estimator summary ({type(exc).__name__}: {exc})") from None


_SPECIAL = {"inf": float("inf"), "-inf": float("-inf"), "nan": float("nan")}


def _plain(value) -> bool:
    return value is None or isinstance(value, (str, bool, int, float))


def _number(value):
    if isinstance(value, float) and not np.isfinite(value):
        return str(value)
    if isinstance(value, (np.floating, np.integer)):
        return _number(value.item())
    return value


def _float(value) -> float:
    return _SPECIAL[value] if isinstance(value, str) else float(value)


def save_summaries(path: str | Path, summaries: list[EstimatorSummary]) -> Path:
    """Write summaries to a JSON file."""
    path = Path(path)
    payload = {"summaries_version": VERSION, "summaries": [s.to_dict() for s in summaries]}
    path.write_text(json.dumps(payload))
    return path


def load_summaries(path: str | Path) -> dict[str, EstimatorSummary]:
    """Read summaries written by :func:`save_summaries`, by estimator label."""
    path = Path(path)
    if path.is_dir():
        path = path / "summaries.json"
    if not path.exists():
        raise OffevalError(f"{path}: no such file (offeval evaluate --out writes summaries.json)")
    try:
        payload = json.loads(path.read_text())
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise OffevalError(f"{path}: not a summaries file ({exc})") from None
    if not isinstance(payload, dict) or payload.get("summaries_version") != VERSION:
        raise OffevalError(f"{path}: not an offeval summaries file of version {VERSION}")
    summaries = [EstimatorSummary.from_dict(d) for d in payload.get("summaries", [])]
    return {s.estimator: s for s in summaries}
