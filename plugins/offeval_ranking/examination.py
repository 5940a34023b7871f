"""Examination (position-bias) models e(i) = P(examined | rank i), i = 1, 2, ...

Each model is a callable on 1-based ranks with a ``spec`` that rebuilds it
from the registry (``active_registry().resolve("examination", spec)``): the
registry building the component that names the model, else the process-wide
one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from offeval import ConfigurationError, active_registry
from offeval.plugin import check_number, check_whole


def _ranks(ranks) -> np.ndarray:
    r = np.asarray(ranks)
    if r.size and (r.min() < 1):
        raise ConfigurationError("ranks are 1-based: every rank must be >= 1")
    return r


class Logarithmic:
    """e(i) = 1 / log_base(i + 1): the DCG discount."""

    def __init__(self, base: float = 2.0):
        check_number(base, "log base", low=1, low_open=True, finite=False)
        self.base = base

    def __call__(self, ranks) -> np.ndarray:
        return np.log(self.base) / np.log(_ranks(ranks) + 1.0)

    @property
    def spec(self) -> str:
        """Registry spec of this model."""
        return f"logarithmic(base={self.base!r})"

    def __repr__(self) -> str:
        return f"Logarithmic(base={self.base})"


class Exponential:
    """e(i) = gamma^(i - 1): the rank-biased (RBP) discount."""

    def __init__(self, gamma: float = 0.7):
        check_number(gamma, "gamma", low=0, high=1, low_open=True)
        self.gamma = gamma

    def __call__(self, ranks) -> np.ndarray:
        return self.gamma ** (_ranks(ranks) - 1.0)

    @property
    def spec(self) -> str:
        """Registry spec of this model."""
        return f"exponential(gamma={self.gamma!r})"

    def __repr__(self) -> str:
        return f"Exponential(gamma={self.gamma})"


class Reciprocal:
    """e(i) = 1 / i."""

    def __call__(self, ranks) -> np.ndarray:
        return 1.0 / _ranks(ranks)

    spec = "reciprocal"

    def __repr__(self) -> str:
        return "Reciprocal()"


class Table:
    """e(i) = values[i - 1], and 0 beyond the table."""

    def __init__(self, values: Sequence[float] = (1.0,)):
        try:
            v = np.asarray(values, dtype=float)
        except (TypeError, ValueError):
            v = np.full(0, np.nan)
        if (
            isinstance(values, (str, bool))
            or v.ndim != 1
            or v.size == 0
            or not np.all((v >= 0) & (v <= 1))
        ):
            raise ConfigurationError(
                f"table values must be a non-empty list of numbers in [0, 1], got {values!r}"
            )
        self.values = v

    def __call__(self, ranks) -> np.ndarray:
        r = _ranks(ranks)
        padded = np.r_[self.values, 0.0]
        return padded[np.minimum(r, padded.size) - 1]

    @property
    def spec(self) -> str:
        """Registry spec of this model."""
        return f"table(values={self.values.tolist()!r})"

    def __repr__(self) -> str:
        return f"Table(values={self.values.tolist()})"


class CutOff:
    """Any model truncated at n: e(i) = model(i) for i <= n, else 0.

    ``model`` is a registered name (configured by ``params``), a spec string
    such as ``"exponential(gamma=0.5)"``, or a model object.
    """

    def __init__(self, n: int = 10, model: Any = "logarithmic", **params: Any):
        self.n = check_whole(n, "cut-off n", low=1)
        if isinstance(model, str) and params:
            self.model = active_registry().create("examination", model, **params)
        else:
            self.model = examination_model(model)

    def __call__(self, ranks) -> np.ndarray:
        r = _ranks(ranks)
        return np.where(r <= self.n, self.model(r), 0.0)

    @property
    def spec(self) -> str:
        """Registry spec of this model."""
        return f"cutoff(n={self.n},model={self.model.spec})"

    def __repr__(self) -> str:
        return f"CutOff(n={self.n}, model={self.model!r})"


def examination_model(spec_or_model: Any) -> Callable[[np.ndarray], np.ndarray]:
    """An examination model from a registry spec (``"logarithmic(base=10)"``) or as given."""
    model = active_registry().resolve("examination", spec_or_model)
    if not callable(model):
        raise ConfigurationError(f"examination model {spec_or_model!r} is not callable on ranks")
    return model


MODELS = {
    "logarithmic": Logarithmic,
    "exponential": Exponential,
    "reciprocal": Reciprocal,
    "table": Table,
    "cutoff": CutOff,
}
