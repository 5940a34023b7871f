"""What decisions need from an evaluation, saved so that they can be revisited without the log.
``offeval evaluate --out`` writes every estimator's :class:`EstimatorSummary` to
``summaries.json``; :func:`load_summaries` reads it back (the schema: :func:`read_fields`)."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import numpy as np

from offeval.engine.intervals import interval_names
from offeval.errors import OffevalError
from offeval.stats.inference import covariance_problem
from offeval.validation import check_number, check_whole

#: Format version of the saved file.
VERSION = 1


@dataclass(frozen=True)
class EstimatorSummary:
    """One estimator's values for every policy, and their covariance (already divided by n).

    ``baseline`` names the policy the values are relative to (None: absolute); ``params``
    are the estimator's plain parameters (to tell a family of settings apart);
    ``interval_method`` computed the estimates' intervals (the covariance is the delta
    method's whatever it is).
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
    interval_method: str = "normal"

    def __post_init__(self):
        if isinstance(self.policies, (str, bytes)):
            raise OffevalError(
                f"summary of {self.estimator!r}: policies must be a list of names, "
                f"not one string {self.policies!r}"
            )
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
            **{f.name: getattr(self, f.name) for f in fields(self)},
            "policies": list(self.policies),
            "values": [_number(v) for v in self.values],
            "covariance": [[_number(v) for v in row] for row in self.covariance],
            "n_units": int(self.n_units),
            "level": float(self.level),
            "higher_is_better": bool(self.higher_is_better),
            "params": {k: _number(v) for k, v in self.params.items() if _plain(v)},
        }

    @classmethod
    def from_dict(cls, data: Any, source: str = "summary") -> EstimatorSummary:
        """The inverse of :meth:`to_dict`, read against the schema (:func:`read_fields`); a
        mistake is an OffevalError ``<source>, field '<field>': <problem>``."""
        if not isinstance(data, dict):
            raise OffevalError(f"{source} must be an object of fields, got {type(data).__name__}")
        try:
            return cls(**read_fields(data))
        except FieldError as exc:
            raise OffevalError(f"{source}, field {exc.field!r}: {exc.problem}") from None


_SPECIAL = {"inf": float("inf"), "-inf": float("-inf"), "nan": float("nan")}


def _plain(value) -> bool:
    return value is None or isinstance(value, (str, bool, int, float))


def _number(value):
    if isinstance(value, float) and not np.isfinite(value):
        return str(value)
    if isinstance(value, (np.floating, np.integer)):
        return _number(value.item())
    return value


class FieldError(OffevalError):
    """One field of a saved summary breaks the schema (:func:`read_fields`)."""

    def __init__(self, field: str, problem: str):
        self.field, self.problem = field, problem
        super().__init__(f"field {field!r}: {problem}")


def _float(name: str, value: Any) -> float:
    """A number, or one of the texts to_dict writes for non-finite numbers."""
    if isinstance(value, str) and value in _SPECIAL:
        return _SPECIAL[value]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise FieldError(name, f"{value!r} is not a number")
    try:
        return float(value)
    except OverflowError:
        raise FieldError(name, f"{value!r} is too large for a number") from None


def _field(name: str):
    """A check's error as the :class:`FieldError` of field ``name`` (``field 'n': must be ...``)."""
    return lambda message: FieldError(name, message.removeprefix(f"{name} "))


#: The fields of a saved summary, and the defaults of the optional ones.
REQUIRED = ("estimator", "name", "policies", "values", "covariance", "n_units", "level")
OPTIONAL = {
    "baseline": None,
    "higher_is_better": True,
    "params": {},
    "interval_method": "normal",
}


def read_fields(data: Any) -> dict[str, Any]:
    """The schema of one saved summary: its fields, read and checked (a FieldError if not).

    estimator, name: non-empty text; policies: unique names; values: one number per
    policy; covariance: a symmetric positive semi-definite matrix over the policies
    ("nan", "inf", "-inf" allowed in symmetric places); n_units: a whole number >= 1;
    level: in (0, 1); optional: baseline (null or a policy), higher_is_better (true),
    params (plain values by name), interval_method ("normal"). Any other field is an error.
    """
    unknown = sorted(set(data) - {*REQUIRED, *OPTIONAL}, key=str)
    if unknown:
        raise FieldError(unknown[0], f"unknown field; the fields are {[*REQUIRED, *OPTIONAL]}")
    missing = [name for name in REQUIRED if name not in data]
    if missing:
        raise FieldError(missing[0], "missing")
    data = {**OPTIONAL, **data}
    policies = data["policies"]
    if isinstance(policies, str):
        raise FieldError("policies", f"must be a list of policy names, got the text {policies!r}")
    if not isinstance(policies, list) or not policies:
        raise FieldError(
            "policies", f"must be a list of at least one policy name, got {policies!r}"
        )
    odd = [name for name in policies if not isinstance(name, str)]
    if odd:
        raise FieldError("policies", f"names must be text, got {odd[:10]!r}")
    repeated = sorted(name for name, count in Counter(policies).items() if count > 1)
    if repeated:
        raise FieldError("policies", f"names must be unique; these repeat: {repeated[:10]!r}")
    for name in ("estimator", "name"):
        if not isinstance(data[name], str) or not data[name]:
            raise FieldError(name, f"must be non-empty text, got {data[name]!r}")
    k, values, rows = len(policies), data["values"], data["covariance"]
    if not isinstance(values, list) or len(values) != k:
        got = f"{len(values)}" if isinstance(values, list) else repr(values)
        raise FieldError("values", f"must be a list of one number per policy ({k}), got {got}")
    values = np.array([_float("values", v) for v in values])
    if not (
        isinstance(rows, list)
        and len(rows) == k
        and all(isinstance(row, list) and len(row) == k for row in rows)
    ):
        raise FieldError(
            "covariance", f"must be a {k}x{k} matrix (a list of {k} rows of {k} numbers)"
        )
    covariance = np.array([[_float("covariance", v) for v in row] for row in rows]).reshape(k, k)
    problem = covariance_problem(covariance, policies)
    if problem:
        raise FieldError("covariance", problem)
    n_units = check_whole(data["n_units"], "n_units", low=1, floats=True, error=_field("n_units"))
    level = check_number(
        data["level"], "level", low=0, high=1, low_open=True, high_open=True, error=_field("level")
    )
    if data["baseline"] is not None and data["baseline"] not in policies:
        raise FieldError("baseline", f"{data['baseline']!r} is not one of the policies, nor null")
    if not isinstance(data["higher_is_better"], bool):
        raise FieldError(
            "higher_is_better", f"must be true or false, got {data['higher_is_better']!r}"
        )
    params = data["params"]
    if not isinstance(params, dict):
        raise FieldError("params", f"must be an object of parameter values, got {params!r}")
    odd = [name for name, v in params.items() if not _plain(v)]
    if odd:
        raise FieldError("params", f"{odd[0]!r} must be text, a number, true, false or null")
    known = interval_names()
    if not isinstance(data["interval_method"], str) or data["interval_method"] not in known:
        raise FieldError(
            "interval_method", f"must be one of {list(known)}, got {data['interval_method']!r}"
        )
    return {
        **data,
        "values": values,
        "covariance": covariance,
        "n_units": n_units,
        "level": level,
        "params": {
            key: _SPECIAL.get(v, v) if isinstance(v, str) else v for key, v in params.items()
        },
    }


def save_summaries(path: str | Path, summaries: list[EstimatorSummary]) -> Path:
    """Write summaries to a JSON file."""
    path = Path(path)
    payload = {"summaries_version": VERSION, "summaries": [s.to_dict() for s in summaries]}
    path.write_text(json.dumps(payload))
    return path


def load_summaries(path: str | Path) -> dict[str, EstimatorSummary]:
    """Read summaries written by :func:`save_summaries`, by estimator label.

    A mistake is one OffevalError naming the file, the summary (its label, or its place
    from 1) and the field; two summaries with one label are an error.
    """
    path = Path(path)
    if path.is_dir():
        path = path / "summaries.json"
    if not path.exists():
        raise OffevalError(f"{path}: no such file (offeval evaluate --out writes summaries.json)")
    try:
        payload = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise OffevalError(f"{path}: not a summaries file ({exc})") from None
    except RecursionError:
        raise OffevalError(
            f"{path}: not a summaries file (nested too deeply: arrays or objects within each "
            "other beyond what can be read)"
        ) from None
    version = payload.get("summaries_version") if isinstance(payload, dict) else None
    if type(version) is not int or version != VERSION:  # true is not 1
        raise OffevalError(f"{path}: not an offeval summaries file of version {VERSION}")
    unknown = sorted(set(payload) - {"summaries_version", "summaries"}, key=str)
    if unknown:
        raise OffevalError(f"{path}: unknown key {unknown[0]!r} (summaries_version, summaries)")
    entries = payload.get("summaries")
    if not isinstance(entries, list):
        raise OffevalError(f"{path}: 'summaries' must be a list of summaries")
    summaries, place = {}, {}
    for i, data in enumerate(entries, 1):
        label = data.get("estimator") if isinstance(data, dict) else None
        named = isinstance(label, str) and label
        summary = EstimatorSummary.from_dict(
            data, f"{path}: summary {label!r}" if named else f"{path}: summary #{i}"
        )
        if summary.estimator in place:
            raise OffevalError(
                f"{path}: summaries #{place[summary.estimator]} and #{i} are both labelled "
                f"{summary.estimator!r}; a label names one summary"
            )
        summaries[summary.estimator], place[summary.estimator] = summary, i
    return summaries
