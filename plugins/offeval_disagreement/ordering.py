"""The logging policy's ordering distribution given the displayed set, per banner.

Counterfactual disagreement needs q[b, r, p] = P(P_r = p | D) for each banner
b it counts, and only for those. Where it comes from (``logging``):

- ``"plackett_luce"``: Plackett-Luce over the ``logging_score`` column (the
  logits), with the rest mass of the candidates not displayed read from a
  column holding its log (``pool``, default ``logging_pool``). Without that
  column the pool is assumed to be the displayed set itself (rest mass 0) and
  the assumption is counted in the diagnostics (``pool_assumed``). Banners
  flagged true in the ``deterministic`` column (default
  ``logging_deterministic``) were ordered by a deterministic ranker: given
  their set, the displayed order is the only one, so every re-drawn ordering
  puts the clicked product back at its rank and CD rejects every sample. They
  are excluded and counted (``deterministic_logging``), nothing computed;
- ``"uniform"``: every ordering equally likely (q = 1/n);
- ``"columns"``: explicit probabilities, row p's column ``<prefix>r`` holding
  P(P_r = p | D), checked to be a doubly stochastic matrix per banner;
- ``"auto"``: uniform for banners flagged ``shuffled``, as ``"plackett_luce"``
  for the others.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from offeval import ColumnError, InteractionLog
from offeval.units import hash_ids
from offeval_disagreement.banners import Group, clicked, flagged, shuffled_units
from offeval_disagreement.given_set import (
    MAX_EXACT,
    exact_limit,
    forward_backward,
    monte_carlo,
    rank_rows,
)

LOGGING = ("auto", "plackett_luce", "uniform", "columns")
#: Largest gap between a banner's probabilities summing to one and one.
TOLERANCE = 1e-6


def fixed(log: InteractionLog, settings) -> np.ndarray:
    """Banners whose logging policy fixes the order given the displayed set (deterministic)."""
    if settings.logging not in ("auto", "plackett_luce") or settings.deterministic not in log.frame:
        return np.zeros(log.n_units, dtype=bool)
    flag = flagged(log, settings.deterministic)
    return flag & ~shuffled_units(log) if settings.logging == "auto" else flag


def ordering(log: InteractionLog, group: Group, settings) -> tuple[np.ndarray, dict[str, int]]:
    """q for the banners of ``group`` (those the estimator counts), in group order.

    From exact Plackett-Luce computations only the clicked ranks' rows are
    filled. Returns q and counts for the diagnostics (about these banners
    only); computed once per chunk, banners and setting, whatever the number
    of policies evaluated.
    """
    key = (
        group.n,
        group.units.tobytes(),
        settings.logging,
        settings.pool,
        settings.prefix,
        settings.method,
        settings.samples,
        settings.seed,
    )
    return log.memo(_ordering, group, settings, key=key)


def _ordering(log: InteractionLog, group: Group, settings) -> tuple[np.ndarray, dict[str, int]]:
    n, banners = group.n, group.units.size
    if settings.logging == "uniform":
        return np.full((banners, n, n), 1.0 / n), {}
    if settings.logging == "columns":
        return _columns(log, group, settings.prefix), {}
    uniform = np.zeros(banners, dtype=bool)
    if settings.logging == "auto":
        uniform = shuffled_units(log)[group.units]
    q = np.full((banners, n, n), 1.0 / n)
    placed = ~uniform
    counts: dict[str, int] = {}
    if placed.any():
        subset = Group(n, group.units[placed], group.rows[placed])
        q[placed], counts = _plackett_luce(log, subset, settings)
    return q, counts


def _plackett_luce(log: InteractionLog, group: Group, settings):
    logits = log.column("logging_score")[group.rows]
    counts = {}
    if settings.pool in log.frame:
        pool = pd.to_numeric(log.frame[settings.pool], errors="coerce").to_numpy(dtype=float)
        rest = pool[group.rows]
        bad = (
            np.isnan(rest).any(axis=1) | (rest != rest[:, :1]).any(axis=1) | (rest == np.inf).any(1)
        )
        if bad.any():
            raise ColumnError(
                settings.pool,
                "the log rest mass of the pool must be one number (or -inf) per banner",
                log.source_rows[group.rows[bad][:, 0]],
            )
        rest = rest[:, 0]
    else:
        rest = None
        counts["pool_assumed"] = len(group.units)
    if settings.method == "exact":
        exact_limit(group.n, "method='exact'")
    if group.n <= MAX_EXACT and settings.method != "monte_carlo":
        return _exact(logits, rest, clicked(log)[group.rows]), counts
    keys = hash_ids(
        log.unit_ids[group.units]
    )  # one stream per banner: the same whatever the chunking
    q = monte_carlo(logits, rest, samples=settings.samples, seed=settings.seed, keys=keys)[0]
    return q, {**counts, "monte_carlo_banners": len(keys)}


def _exact(logits, rest, click: np.ndarray) -> np.ndarray:
    """q with the rows the clicks need: one pass for single-click banners, all rows otherwise."""
    banners, n = logits.shape
    q = np.zeros((banners, n, n))
    single = click.sum(axis=1) == 1
    if single.any():
        rank = np.argmax(click[single], axis=1)
        q[np.flatnonzero(single), rank] = rank_rows(logits[single], _take(rest, single), rank + 1)
    if (~single).any():
        q[~single] = forward_backward(logits[~single], _take(rest, ~single))
    return q


def _take(rest, which):
    return None if rest is None else rest[which]


def _columns(log: InteractionLog, group: Group, prefix: str) -> np.ndarray:
    columns = [f"{prefix}{r}" for r in range(1, group.n + 1)]
    missing = [c for c in columns if c not in log.frame]
    if missing:
        raise ColumnError(missing[0], f"logging='columns' needs {prefix}1..{prefix}{group.n}")
    values = np.stack(
        [pd.to_numeric(log.frame[c], errors="coerce").to_numpy(dtype=float) for c in columns],
        axis=1,
    )[group.rows]  # (banners, product, rank)
    q = np.transpose(values, (0, 2, 1))  # (banners, rank, product)
    bad = (
        ~np.all((q >= 0) & (q <= 1), axis=(1, 2))
        | (np.abs(q.sum(axis=1) - 1) > TOLERANCE).any(axis=1)
        | (np.abs(q.sum(axis=2) - 1) > TOLERANCE).any(axis=1)
    )
    if bad.any():
        raise ColumnError(
            f"{prefix}*",
            "each banner's rank probabilities must lie in [0, 1], each product's summing to 1 "
            "over ranks and each rank's to 1 over products",
            log.source_rows[group.rows[bad][:, 0]],
        )
    return q
