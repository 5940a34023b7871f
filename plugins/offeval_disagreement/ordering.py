"""The logging policy's ordering distribution given the displayed set, per banner.

Counterfactual disagreement needs q[b, r, p] = P(P_r = p | D) for each banner
b. Where it comes from (``logging``):

- ``"plackett_luce"``: Plackett-Luce over the ``logging_score`` column (the
  logits), with the rest mass of the candidates not displayed read from a
  column holding its log (``pool``, default ``logging_pool``). Without that
  column the pool is assumed to be the displayed set itself (rest mass 0) and
  the assumption is counted in the diagnostics (``pool_assumed``);
- ``"uniform"``: every ordering equally likely (q = 1/n);
- ``"columns"``: explicit probabilities, row p's column ``<prefix>r`` holding
  P(P_r = p | D), checked to be a doubly stochastic matrix per banner;
- ``"auto"``: uniform for banners flagged ``shuffled``, Plackett-Luce for the
  others.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from offeval import ColumnError, InteractionLog
from offeval.units import hash_ids
from offeval_disagreement.banners import Group, clicked, shuffled_units
from offeval_disagreement.given_set import MAX_EXACT, forward_backward, monte_carlo, rank_rows

LOGGING = ("auto", "plackett_luce", "uniform", "columns")
#: Largest gap between a banner's probabilities summing to one and one.
TOLERANCE = 1e-6


def ordering(log: InteractionLog, group: Group, settings) -> tuple[np.ndarray, dict[str, int]]:
    """q for the banners of one size in a chunk that have a click and an unclicked product.

    Returns q (as many banners as the group has such banners, in group order;
    from exact Plackett-Luce computations, only the clicked ranks' rows are
    filled) and counts for the diagnostics; computed once per chunk and
    setting, whatever the number of policies evaluated.
    """
    key = (
        group.n,
        settings.logging,
        settings.pool,
        settings.prefix,
        settings.method,
        settings.samples,
        settings.seed,
    )
    return log.memo(_ordering, group, settings, key=key)


def useful(log: InteractionLog, group: Group) -> np.ndarray:
    """Which banners of the group have at least one click and one unclicked product."""
    clicks = clicked(log)[group.rows].sum(axis=1)
    return (clicks > 0) & (clicks < group.n)


def _ordering(log: InteractionLog, group: Group, settings) -> tuple[np.ndarray, dict[str, int]]:
    keep = useful(log, group)
    group = Group(group.n, group.units[keep], group.rows[keep])
    n, banners = group.n, group.units.size
    counts: dict[str, int] = {}
    if settings.logging == "uniform":
        return np.full((banners, n, n), 1.0 / n), counts
    if settings.logging == "columns":
        return _columns(log, group, settings.prefix), counts
    uniform = np.zeros(banners, dtype=bool)
    if settings.logging == "auto":
        uniform = shuffled_units(log)[group.units]
    q = np.full((banners, n, n), 1.0 / n)
    placed = ~uniform
    if placed.any():
        q[placed], pl_counts = _plackett_luce(log, group, placed, settings)
        counts.update(pl_counts)
    return q, counts


def _plackett_luce(log: InteractionLog, group: Group, which: np.ndarray, settings):
    logits = log.column("logging_score")[group.rows[which]]
    counts = {}
    if settings.pool in log.frame:
        pool = pd.to_numeric(log.frame[settings.pool], errors="coerce").to_numpy(dtype=float)
        rest = pool[group.rows[which]]
        bad = (
            np.isnan(rest).any(axis=1) | (rest != rest[:, :1]).any(axis=1) | (rest == np.inf).any(1)
        )
        if bad.any():
            rows = group.rows[which][bad][:, 0]
            raise ColumnError(
                settings.pool,
                "the log rest mass of the pool must be one number (or -inf) per banner",
                log.source_rows[rows],
            )
        rest = rest[:, 0]
    else:
        rest = None
        counts["pool_assumed"] = int(which.sum())
    if group.n <= MAX_EXACT and settings.method != "monte_carlo":
        return _exact(logits, rest, clicked(log)[group.rows[which]]), counts
    ids = log.unit_ids[group.units[which]]
    return _sampled(logits, rest, ids, settings), {**counts, "monte_carlo_banners": len(ids)}


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


def _sampled(logits, rest, ids, settings) -> np.ndarray:
    """Monte Carlo q, one seeded stream per banner (the same whatever the chunking)."""
    keys = hash_ids(ids)
    out = np.empty((len(ids), logits.shape[1], logits.shape[1]))
    for b, key in enumerate(keys):  # one stream per banner: only past the exact limit
        r = None if rest is None else rest[b : b + 1]
        seed = [settings.seed, int(key)]
        out[b] = monte_carlo(logits[b : b + 1], r, samples=settings.samples, seed=seed)[0][0]
    return out


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
