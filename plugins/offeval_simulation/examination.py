"""Examination (position-bias) models e(i) = P(examined | rank i), i = 1, 2, ..."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from offeval import ConfigurationError


def _ranks(ranks) -> np.ndarray:
    r = np.asarray(ranks)
    if r.size and (r.min() < 1):
        raise ConfigurationError("ranks are 1-based: every rank must be >= 1")
    return r


class Logarithmic:
    """e(i) = 1 / log_base(i + 1): the DCG discount."""

    def __init__(self, base: float = 2.0):
        if not base > 1:
            raise ConfigurationError(f"log base must exceed 1, got {base}")
        self.base = base

    def __call__(self, ranks) -> np.ndarray:
        return np.log(self.base) / np.log(_ranks(ranks) + 1.0)

    def __repr__(self) -> str:
        return f"Logarithmic(base={self.base})"


class Exponential:
    """e(i) = gamma^(i - 1): the rank-biased (RBP) discount."""

    def __init__(self, gamma: float = 0.7):
        if not 0 < gamma <= 1:
            raise ConfigurationError(f"gamma must lie in (0, 1], got {gamma}")
        self.gamma = gamma

    def __call__(self, ranks) -> np.ndarray:
        return self.gamma ** (_ranks(ranks) - 1.0)

    def __repr__(self) -> str:
        return f"Exponential(gamma={self.gamma})"


class Reciprocal:
    """e(i) = 1 / i."""

    def __call__(self, ranks) -> np.ndarray:
        return 1.0 / _ranks(ranks)

    def __repr__(self) -> str:
        return "Reciprocal()"


class Table:
    """e(i) = values[i - 1], and 0 beyond the table."""

    def __init__(self, values: Sequence[float] = (1.0,)):
        v = np.asarray(values, dtype=float)
        if v.ndim != 1 or v.size == 0 or np.any((v < 0) | (v > 1)):
            raise ConfigurationError("table values must be a non-empty list in [0, 1]")
        self.values = v

    def __call__(self, ranks) -> np.ndarray:
        r = _ranks(ranks)
        padded = np.r_[self.values, 0.0]
        return padded[np.minimum(r, padded.size) - 1]

    def __repr__(self) -> str:
        return f"Table(values={self.values.tolist()})"


class CutOff:
    """Another model truncated at n: e(i) = model(i) for i <= n, else 0."""

    def __init__(self, n: int = 10, model: str = "logarithmic", **params):
        if int(n) != n or n < 1:
            raise ConfigurationError(f"cut-off n must be a whole number >= 1, got {n}")
        if model not in MODELS or model == "cutoff":
            raise ConfigurationError(f"unknown examination model {model!r}")
        self.n = int(n)
        self.model = MODELS[model](**params)

    def __call__(self, ranks) -> np.ndarray:
        r = _ranks(ranks)
        return np.where(r <= self.n, self.model(r), 0.0)

    def __repr__(self) -> str:
        return f"CutOff(n={self.n}, model={self.model!r})"


MODELS = {
    "logarithmic": Logarithmic,
    "exponential": Exponential,
    "reciprocal": Reciprocal,
    "table": Table,
    "cutoff": CutOff,
}
