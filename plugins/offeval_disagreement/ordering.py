"""The logging policy's ordering distribution given the displayed set, per banner.

Counterfactual disagreement needs q[b, r, p] = P(P_r = p | D) for each banner
b it counts, and only for those. Where it comes from (``logging``):

- ``"plackett_luce"``: Plackett-Luce over the ``logging_score`` column, with
  the rest mass of the candidates not displayed read from a column (``pool``,
  default ``logging_pool``, one value per banner). ``score_scale`` says what
  both hold: ``"logit"``, logits and the log of the rest mass (-inf: none),
  as the simulator writes them; ``"linear"``, weights exp(logit) > 0 and the
  rest mass itself (0: none). Unstated, they are read as logits, and the
  estimator warns when every banner's columns could be weights as well
  (scores > 0, rest mass >= 0): a score <= 0 leaves logits the only reading.
  Scores read as logits that all lie in (0, 1] and sum to at most 1 per
  banner look like probabilities: the estimator warns. Without
  the pool column the pool is assumed to be the displayed set itself (rest
  mass 0): counted in the diagnostics (``pool_assumed``) and warned about.
  Banners flagged true in the ``deterministic`` column (default
  ``logging_deterministic``) were ordered by a deterministic ranker: given
  their set, the displayed order is the only one, so every re-drawn ordering
  puts the clicked product back at its rank and CD rejects every sample. They
  are excluded and counted (``deterministic_logging``), nothing computed;
- ``"uniform"``: every ordering equally likely (q = 1/n);
- ``"columns"``: explicit probabilities, row p's column ``<prefix>r`` holding
  P(P_r = p | D), checked to be a doubly stochastic matrix per banner;
- ``"auto"``: uniform for banners flagged ``shuffled``, as ``"plackett_luce"``
  for the others.

Per-banner columns (``shuffled``, the pool, the deterministic flag) must hold
one value per banner: a banner whose rows differ is an error naming it.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from offeval import ColumnError, InteractionLog, per_trajectory, trajectory_flags
from offeval.plugin import hash_ids
from offeval_disagreement.banners import Group, clicked, shuffled_units
from offeval_disagreement.given_set import (
    MAX_EXACT,
    exact_limit,
    forward_backward,
    monte_carlo,
    rank_rows,
)

LOGGING = ("auto", "plackett_luce", "uniform", "columns")
#: What ``logging_score`` and the pool column hold, per ``score_scale`` (None: not stated,
#: read as logits).
SCALES = {
    "logit": {
        "score": "Plackett-Luce logits (log-weights)",
        "pool": "the log of the mass of the candidates not displayed (-inf: none)",
    },
    "linear": {
        "score": "Plackett-Luce weights (exp of the logits), each > 0",
        "pool": "the mass of the candidates not displayed, >= 0 (0: none)",
    },
}
SCALES[None] = SCALES["logit"]
#: Largest gap between a banner's probabilities summing to one and one.
TOLERANCE = 1e-6
#: Scores read as logits look like probabilities when a banner's are all in (0, 1] and sum to
#: at most this (counted banners have two products or more: a click and a product unclicked).
PROBABILITY_SUM = 1.0 + 1e-6


def fixed(log: InteractionLog, settings) -> np.ndarray:
    """Banners whose logging policy fixes the order given the displayed set (deterministic)."""
    if settings.logging not in ("auto", "plackett_luce") or settings.deterministic not in log.frame:
        return np.zeros(log.n_units, dtype=bool)
    flag = trajectory_flags(log, settings.deterministic)
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
        settings.score_scale,
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
    scores = log.column("logging_score")[group.rows]
    logits = _log_weights(log, "logging_score", scores, group.rows, settings)
    counts = {
        "placed": len(group.units),
        "like_probabilities": _like_probabilities(logits, settings),
    }
    if settings.pool in log.frame:
        rest = _rest(log, group, settings)
    else:
        rest = None
        counts["pool_assumed"] = len(group.units)
    if settings.score_scale is None:
        counts["either_scale"] = _either_scale(scores)
    if settings.method == "exact":
        exact_limit(group.n, "method='exact'")
    if group.n <= MAX_EXACT and settings.method != "monte_carlo":
        return _exact(logits, rest, clicked(log)[group.rows]), counts
    keys = hash_ids(log.unit_ids[group.units])  # one stream per banner, whatever the chunking
    q = monte_carlo(logits, rest, samples=settings.samples, seed=settings.seed, keys=keys)[0]
    return q, {**counts, "monte_carlo_banners": len(keys)}


def _rest(log: InteractionLog, group: Group, settings) -> np.ndarray:
    """Each banner's log rest mass, from the pool column (one number per banner)."""
    column, rows = settings.pool, group.rows
    pool = pd.to_numeric(log.frame[column], errors="coerce").to_numpy(dtype=float)
    missing = np.isnan(pool[rows]) | (pool[rows] == np.inf)
    if missing.any():
        raise ColumnError(
            column,
            f"must hold {SCALES[settings.score_scale]['pool']}, one number per banner",
            log.source_rows[rows[missing]],
        )
    units = np.zeros(log.n_units, dtype=bool)
    units[group.units] = True
    per_trajectory(log, column, pool, units)
    return _log_weights(log, column, pool[rows[:, 0]], rows, settings, rest=True)


def _log_weights(log, column: str, values, rows, settings, rest: bool = False) -> np.ndarray:
    """Logits (or log rest masses) from the column's values, on the stated scale.

    On the linear scale the values are Plackett-Luce weights (w = exp(logit)),
    each > 0; a rest mass may be 0 (no candidate left out).
    """
    if settings.score_scale != "linear":
        return values
    bad = values < 0 if rest else values <= 0
    if bad.any():
        raise ColumnError(
            column,
            f"with score_scale='linear' it holds {SCALES['linear']['pool' if rest else 'score']}, "
            f"but some are {'< 0' if rest else '<= 0'} (logits? say score_scale='logit')",
            log.source_rows[rows[bad].ravel()],
        )
    with np.errstate(divide="ignore"):
        return np.log(values)


def _either_scale(scores: np.ndarray) -> int:
    """Banners whose scores read as weights too: every score > 0.

    A score <= 0 is no weight: logits are then the only reading, and an unstated scale
    changes nothing. The pool is not looked at: weights may sit beside a pool written as a
    log (< 0, or -inf), and reading them as logits moves CD.
    """
    return int((scores > 0).all(axis=1).sum())


def _like_probabilities(logits: np.ndarray, settings) -> int:
    """Banners whose scores, read as logits, look like probabilities (see PROBABILITY_SUM)."""
    if settings.score_scale == "linear":
        return 0
    unit = (logits > 0).all(axis=1) & (logits <= 1).all(axis=1)
    return int((unit & (logits.sum(axis=1) <= PROBABILITY_SUM)).sum())


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
