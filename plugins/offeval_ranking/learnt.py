"""Position-based examination models learnt from click logs, with their uncertainty.

Two estimators of e(i) relative to rank 1 (the scale of e cancels in every
exposure ratio, so e(1) = 1 by convention):

- :func:`fit_shuffled`: on uniformly shuffled traffic an item's rank is
  independent of its quality, so CTR(i) = e(i) x mean quality and
  e(i) = CTR(i) / CTR(1). Standard errors by the delta method with
  trajectories as clusters.
- :func:`fit_em`: expectation-maximisation for the position-based click model
  P(C = 1 | x, a, i) = theta(i) gamma(x, a) on any log where the same
  (context, item) pair appears at several ranks (stochastic logging).
  Standard errors by a Poisson bootstrap over trajectories.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.stats import norm

from offeval import ColumnError, ConfigurationError, InteractionLog


@dataclass(frozen=True)
class PositionBasedModel:
    """e(i) from a table of learnt values (e(i) = 0 beyond it), with standard errors."""

    values: Sequence[float] = (1.0,)
    se: Sequence[float] | None = None
    method: str = "given"
    n_units: int = 0

    def __post_init__(self):
        try:
            v = np.asarray(self.values, dtype=float)
        except (TypeError, ValueError):
            v = np.full(0, np.nan)
        if (
            isinstance(self.values, str)
            or v.ndim != 1
            or v.size == 0
            or not np.all(np.isfinite(v) & (v >= 0))
        ):
            raise ConfigurationError(
                f"learnt examination values must be a list of finite numbers >= 0, "
                f"got {self.values!r}"
            )

    def __call__(self, ranks) -> np.ndarray:
        """e(i) for 1-based ranks."""
        r = np.asarray(ranks)
        if r.size and r.min() < 1:
            raise ConfigurationError("ranks are 1-based: every rank must be >= 1")
        padded = np.r_[np.asarray(self.values, dtype=float), 0.0]
        return padded[np.minimum(r, padded.size) - 1]

    @property
    def spec(self) -> str:
        """Registry spec of this model (values only)."""
        return f"pbm(values={[round(float(v), 12) for v in self.values]!r})"

    def table(self, level: float = 0.95) -> pd.DataFrame:
        """Rank, value, standard error and normal interval of each e(i)."""
        v = np.asarray(self.values, dtype=float)
        se = np.full(v.size, np.nan) if self.se is None else np.asarray(self.se, dtype=float)
        z = norm.ppf(0.5 + level / 2)
        return pd.DataFrame(
            {
                "rank": np.arange(1, v.size + 1),
                "e": v,
                "se": se,
                "ci_low": v - z * se,
                "ci_high": v + z * se,
            }
        )

    def __repr__(self) -> str:
        vals = ", ".join(f"{v:.3f}" for v in self.values)
        return f"PositionBasedModel([{vals}], method={self.method!r})"


def fit_shuffled(log: InteractionLog, *, shuffled: str = "shuffled") -> PositionBasedModel:
    """e(i) = CTR(i) / CTR(1) on the rows flagged in column ``shuffled``."""
    if shuffled not in log.frame:
        raise ColumnError(shuffled, "fit_shuffled needs a flag of uniformly shuffled traffic")
    flag = log.frame[shuffled].to_numpy().astype(bool)
    if not flag.any():
        raise ColumnError(shuffled, "no row is flagged as shuffled traffic")
    unit = log.unit_index[flag]
    pos = log.column("position")[flag].astype(np.int64)
    click = log.column("reward")[flag]
    _, unit = np.unique(unit, return_inverse=True)
    n, length = unit.max() + 1, int(pos.max())
    clicks = np.zeros((n, length))
    shown = np.zeros((n, length))
    np.add.at(clicks, (unit, pos - 1), click)
    np.add.at(shown, (unit, pos - 1), 1.0)
    ctr = clicks.sum(axis=0) / shown.sum(axis=0)
    if not ctr[0] > 0:
        raise ColumnError("reward", "no click at rank 1 in the shuffled traffic")
    # Influence of each trajectory on each CTR, then on e(i) = CTR(i) / CTR(1).
    influence = (clicks - ctr * shown) / shown.mean(axis=0)
    e = ctr / ctr[0]
    e_influence = (influence - np.outer(influence[:, 0], e)) / ctr[0]
    se = e_influence.std(axis=0, ddof=1) / np.sqrt(n)
    return PositionBasedModel(tuple(e), tuple(se), "shuffled", int(n))


def fit_em(
    log: InteractionLog,
    *,
    pair: Sequence[str] = ("context", "item"),
    iterations: int = 200,
    tol: float = 1e-7,
    bootstrap: int = 30,
    seed: int = 0,
) -> PositionBasedModel:
    """EM for theta(i) gamma(pair), e(i) = theta(i) / theta(1), with bootstrap standard errors.

    ``pair`` names the columns identifying a (context, item) relevance
    parameter. Identifiable only when pairs are seen at several ranks.
    """
    for column in pair:
        if column not in log.frame:
            raise ColumnError(column, "fit_em identifies relevance by this column")
    codes = pd.MultiIndex.from_frame(log.frame[list(pair)]).factorize()[0]
    pos = log.column("position").astype(np.int64) - 1
    click = log.column("reward")
    if np.any((click != 0) & (click != 1)):
        raise ColumnError(
            "reward", "EM needs binary clicks", np.flatnonzero((click != 0) & (click != 1))
        )
    theta = _em(codes, pos, click, np.ones(click.size), iterations, tol)
    rng = np.random.default_rng(seed)
    unit = log.unit_index
    draws = np.array(
        [
            _em(
                codes,
                pos,
                click,
                rng.poisson(1.0, log.n_units)[unit].astype(float),
                iterations,
                tol,
            )
            for _ in range(bootstrap)
        ]
    )
    se = draws.std(axis=0, ddof=1) if bootstrap > 1 else np.full(theta.size, np.nan)
    return PositionBasedModel(tuple(theta), tuple(se), "em", int(log.n_units))


def _em(codes, pos, click, weight, iterations, tol) -> np.ndarray:
    """theta(i) / theta(1) from weighted EM on the position-based click model."""
    n_pairs, length = codes.max() + 1, pos.max() + 1
    theta = np.full(length, 0.5)
    gamma = np.full(n_pairs, 0.5)
    shown = np.bincount(pos, weights=weight, minlength=length)
    seen = np.bincount(codes, weights=weight, minlength=n_pairs)
    seen = np.where(seen > 0, seen, 1.0)
    for _ in range(iterations):
        t, g = theta[pos], gamma[codes]
        miss = 1.0 - t * g
        examined = np.where(click > 0, 1.0, t * (1 - g) / miss)
        relevant = np.where(click > 0, 1.0, (1 - t) * g / miss)
        new_theta = np.bincount(pos, weights=weight * examined, minlength=length) / shown
        gamma = np.clip(
            np.bincount(codes, weights=weight * relevant, minlength=n_pairs) / seen, 1e-9, 1 - 1e-9
        )
        done = np.max(np.abs(new_theta - theta)) < tol
        theta = np.clip(new_theta, 1e-9, 1 - 1e-9)
        if done:
            break
    return theta / theta[0]
