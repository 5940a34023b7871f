"""Rank marginals P(item k at rank i | context) of ranking policies.

Rankers score each context's K candidates (an (n, K) array). Deterministic
rankers sort by score; Plackett-Luce rankers draw items one at a time with
probability proportional to exp(score) among those not yet placed; two-stage
policies first draw a candidate set from a larger pool (Plackett-Luce without
replacement), then rank it. Marginals are exact where the subsets to sum over
are few enough (dynamic programming over placed sets), otherwise Monte Carlo
with Gumbel top-k sampling at a stated sample count and seed. A score of
``-inf`` marks a padding slot that is never ranked.

For the probability of a whole ranking (or of its first k items) under
Plackett-Luce, :func:`log_prefix` gives log P(a_1..a_k) in log space from
the displayed items' logits and the mass of the items not displayed. For a
two-stage policy the probability of a slate or prefix sums over the
generator's candidate sets: :func:`candidate_sets` enumerates them with
their exact probabilities, :func:`two_stage_slates` gives every slate's
probability and :func:`two_stage_next` the probability of a logged prefix
followed by each candidate (exact; refused beyond :data:`MAX_SETS` sets).
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from itertools import combinations
from math import comb

import numpy as np

from offeval import ConfigurationError
from offeval.plugin import check_choice, check_whole

#: Largest number of placed sets the exact dynamic programme may visit per context.
MAX_SUBSETS = 1 << 16
#: Context-by-subset cells held at once (bounds memory of the exact method).
BLOCK_CELLS = 1 << 22
METHODS = ("auto", "exact", "monte_carlo")


@dataclass(frozen=True)
class RankMarginals:
    """(n, K, L) probabilities that candidate k is shown at rank i, and how they were got.

    ``method`` is ``deterministic``, ``exact`` or ``monte_carlo``; ``samples``
    and ``seed`` are set for Monte Carlo.
    """

    values: np.ndarray
    method: str
    samples: int | None = None
    seed: int | None = None

    def exposure(self, examination: np.ndarray) -> np.ndarray:
        """(n, K) expected examination sum_i e(i) P(rank = i); ``examination`` is e(1..L)."""
        return self.values @ np.asarray(examination, dtype=float)

    def exposure_se(self, examination: np.ndarray) -> np.ndarray:
        """(n, K) Monte Carlo standard error of :meth:`exposure` (zero when exact)."""
        if self.samples is None:
            return np.zeros(self.values.shape[:2])
        e = np.asarray(examination, dtype=float)
        mean = self.values @ e
        variance = np.maximum(self.values @ (e * e) - mean**2, 0.0)
        return np.sqrt(variance / self.samples)


def _check(method: str, length: int, k: int) -> None:
    check_choice(method, "method", METHODS)
    check_whole(length, "ranking length", low=1, high=k)


def placed_sets(k: int, length: int) -> int:
    """Number of sets of fewer than ``length`` items out of ``k``: the exact method's work."""
    return sum(comb(k, s) for s in range(length))


def deterministic(scores: np.ndarray, length: int) -> RankMarginals:
    """Sort by score (ties by candidate order); ``-inf`` slots are never ranked."""
    scores = np.asarray(scores, dtype=float)
    n, k = scores.shape
    _check("auto", length, k)
    order = np.argsort(-scores, axis=1, kind="stable")[:, :length]
    out = np.zeros((n, k, length))
    valid = np.isfinite(np.take_along_axis(scores, order, axis=1))
    rows, ranks = np.nonzero(valid)
    out[rows, order[rows, ranks], ranks] = 1.0
    return RankMarginals(out, "deterministic")


def plackett_luce(
    logits: np.ndarray,
    length: int,
    *,
    method: str = "auto",
    samples: int = 10_000,
    seed: int = 0,
) -> RankMarginals:
    """Plackett-Luce marginals: exact when at most MAX_SUBSETS placed sets, else Monte Carlo."""
    logits = np.asarray(logits, dtype=float)
    n, k = logits.shape
    _check(method, length, k)
    exact = method == "exact" or (method == "auto" and placed_sets(k, length) <= MAX_SUBSETS)
    if not exact:
        return _pl_monte_carlo(logits, length, samples, seed)
    if placed_sets(k, length) > MAX_SUBSETS:
        raise ConfigurationError(
            f"exact Plackett-Luce marginals for {k} items and {length} ranks visit "
            f"{placed_sets(k, length)} sets (limit {MAX_SUBSETS}); use method='monte_carlo'"
        )
    return RankMarginals(_pl_exact(logits, length)[0], "exact")


def _pl_exact(logits: np.ndarray, length: int) -> tuple[np.ndarray, dict[int, np.ndarray]]:
    """Exact marginals, and P(the first s draws are exactly set S) for |S| = length.

    Dynamic programme over placed sets, level by level: a set's probability
    passes to each one-larger set with the chance of drawing the added item.
    Vectorised over contexts; blocks of contexts bound memory.
    """
    n, k = logits.shape
    widest = max(comb(k, s) for s in range(length + 1))
    block = max(1, BLOCK_CELLS // widest)
    marginals = np.empty((n, k, length))
    final: dict[int, np.ndarray] = {}
    levels = [np.array([m for m in range(1 << k) if m.bit_count() == s]) for s in range(length + 1)]
    index = np.zeros(1 << k, dtype=np.int64)
    for masks in levels:
        index[masks] = np.arange(len(masks))
    bits = [((masks[:, None] >> np.arange(k)) & 1).astype(float) for masks in levels]
    parts = []
    for lo in range(0, n, block):
        weights = _weights(logits[lo : lo + block])  # (b, K)
        prob = np.ones((1, len(weights)))
        for s in range(length):
            masks = levels[s]
            # the mass not yet placed, summed directly: total - placed would cancel badly
            remaining = (1.0 - bits[s]) @ weights.T  # (m, b)
            nxt = np.zeros((len(levels[s + 1]), len(weights)))
            for item in range(k):
                free = (masks >> item) & 1 == 0
                with np.errstate(invalid="ignore", divide="ignore"):
                    draw = np.where(remaining[free] > 0, weights[:, item] / remaining[free], 0.0)
                step = prob[free] * draw
                marginals[lo : lo + block, item, s] = step.sum(axis=0)
                nxt[index[masks[free] | (1 << item)]] += step
            prob = nxt
        parts.append(prob)
    final_prob = np.concatenate(parts, axis=1)
    for row, mask in enumerate(levels[length]):
        final[int(mask)] = final_prob[row]
    return marginals, final


def _check_samples(samples) -> int:
    return check_whole(samples, "samples", low=1, floats=True)


def _weights(logits: np.ndarray) -> np.ndarray:
    top = np.max(np.where(np.isfinite(logits), logits, -np.inf), axis=1, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    return np.exp(logits - top)


def _pl_monte_carlo(logits: np.ndarray, length: int, samples: int, seed: int) -> RankMarginals:
    samples = _check_samples(samples)
    rng = np.random.default_rng(seed)
    n, k = logits.shape
    counts = np.zeros((n, k, length))
    block = max(1, BLOCK_CELLS // (samples * k))
    for lo in range(0, n, block):
        keys = logits[lo : lo + block, None, :] + rng.gumbel(
            size=(len(logits[lo : lo + block]), samples, k)
        )
        _count_top(keys, logits[lo : lo + block], length, counts[lo : lo + block])
    return RankMarginals(counts / samples, "monte_carlo", samples, seed)


def _count_top(keys: np.ndarray, logits: np.ndarray, length: int, out: np.ndarray) -> None:
    """Add, per context, how often each item lands at each of the top ``length`` ranks."""
    b, s, k = keys.shape
    top = np.argsort(-keys, axis=2, kind="stable")[:, :, :length]  # (b, S, L)
    valid = np.isfinite(np.take_along_axis(np.broadcast_to(logits[:, None, :], keys.shape), top, 2))
    ctx = np.broadcast_to(np.arange(b)[:, None, None], top.shape)
    rank = np.broadcast_to(np.arange(length), top.shape)
    np.add.at(out, (ctx[valid], top[valid], rank[valid]), 1.0)


def two_stage(
    generator_logits: np.ndarray,
    size: int,
    ranker_scores: np.ndarray,
    length: int,
    *,
    ranker_temperature: float | None = None,
    method: str = "auto",
    samples: int = 10_000,
    seed: int = 0,
) -> RankMarginals:
    """Marginals of a two-stage policy over a pool of N items per context.

    The candidate generator draws ``size`` items from the pool by Plackett-Luce
    without replacement over ``generator_logits``; the ranker orders them by
    ``ranker_scores`` (deterministic) or Plackett-Luce at ``ranker_temperature``.
    Exact by enumerating the C(N, size) candidate sets when they are at most
    MAX_SUBSETS / 64, else Monte Carlo.
    """
    g = np.asarray(generator_logits, dtype=float)
    r = np.asarray(ranker_scores, dtype=float)
    n, pool = g.shape
    if r.shape != g.shape:
        raise ConfigurationError("generator and ranker scores must have the same (n, N) shape")
    if not 1 <= length <= size <= pool:
        raise ConfigurationError(f"need 1 <= length <= size <= pool, got {length}, {size}, {pool}")
    _check(method, length, pool)
    enumerable = (
        comb(pool, size) <= MAX_SUBSETS // 64 and placed_sets(pool, size + 1) <= MAX_SUBSETS
    )
    if method == "monte_carlo" or (method == "auto" and not enumerable):
        return _two_stage_monte_carlo(g, size, r, length, ranker_temperature, samples, seed)
    if not enumerable:
        raise ConfigurationError(
            f"{comb(pool, size)} candidate sets of {size} out of {pool}: too many to enumerate; "
            "use method='monte_carlo'"
        )
    members, set_prob = candidate_sets(g, size)
    out = np.zeros((n, pool, length))
    for s, inside in enumerate(members):
        cols = np.flatnonzero(inside)
        inner = (
            deterministic(r[:, cols], length)
            if ranker_temperature is None
            else plackett_luce(r[:, cols] / ranker_temperature, length, method="exact")
        )
        out[:, cols, :] += set_prob[:, s, None, None] * inner.values
    return RankMarginals(out, "exact")


#: Largest number of candidate sets the exact two-stage computations sum over.
MAX_SETS = MAX_SUBSETS // 64


def candidate_sets(generator_logits: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """Every set a Plackett-Luce candidate generator may draw, and its exact probability.

    The generator draws ``size`` of the N items without replacement,
    proportionally to exp(logit). Returns ``members`` (S, N), one row per set
    of ``size`` items (in :func:`itertools.combinations` order), and
    ``probabilities`` (n, S): P(the first ``size`` draws are exactly that set),
    by the dynamic programme over placed sets. More than :data:`MAX_SETS`
    sets is a :class:`ConfigurationError`.
    """
    g = np.asarray(generator_logits, dtype=float)
    pool = g.shape[1]
    check_whole(size, "generator size", low=1, high=pool)
    if comb(pool, size) > MAX_SETS or placed_sets(pool, size + 1) > MAX_SUBSETS:
        raise ConfigurationError(
            f"{comb(pool, size)} candidate sets of {size} out of {pool}: too many to sum over "
            f"exactly (limit {MAX_SETS} sets)"
        )
    final = _pl_exact(g, size)[1]
    sets = list(combinations(range(pool), size))
    members = np.zeros((len(sets), pool), dtype=bool)
    for s, chosen in enumerate(sets):
        members[s, list(chosen)] = True
    probabilities = np.stack([final[sum(1 << m for m in chosen)] for chosen in sets], axis=1)
    return members, probabilities


def two_stage_parts(ranker, contexts: np.ndarray) -> tuple[np.ndarray, np.ndarray, dict]:
    """The generator's sets and the ranker of a two-stage ranker, for some contexts.

    ``ranker`` holds per-context ``generator_scores`` (the generator's
    Plackett-Luce logits), ``generator_size``, ``score_matrix`` and
    ``temperature`` (None: sorted by score; else Plackett-Luce over
    ``logits``). Returns the sets and their probabilities per context
    (:func:`candidate_sets`), and the ranker's keyword for
    :func:`two_stage_slates` and :func:`two_stage_next` (``logits`` or ``ranks``).
    """
    generator = np.asarray(ranker.generator_scores, dtype=float)[contexts]
    members, sets = candidate_sets(generator, int(ranker.generator_size))
    if ranker.temperature is None:
        return members, sets, {"ranks": order_ranks(np.asarray(ranker.score_matrix)[contexts])}
    return members, sets, {"logits": np.asarray(ranker.logits)[contexts]}


def order_ranks(scores: np.ndarray) -> np.ndarray:
    """Each item's place (0 first) when sorted by score, ties by item order (as rankers sort)."""
    order = np.argsort(-np.asarray(scores, dtype=float), axis=1, kind="stable")
    out = np.empty_like(order)
    np.put_along_axis(out, order, np.arange(order.shape[1])[None, :], axis=1)
    return out


def _next_draw(available: np.ndarray, weights: np.ndarray | None, ranks: np.ndarray | None):
    """P(each item is placed next) given the items still available (..., N).

    Plackett-Luce over ``weights`` (broadcast against ``available``), or the
    available item of smallest rank (deterministic ranker); zero when none is left.
    """
    if weights is not None:
        mass = np.where(available, weights, 0.0)
        left = mass.sum(axis=-1, keepdims=True)  # summed directly: no cancellation
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(left > 0, mass / left, 0.0)
    key = np.where(available, ranks, np.iinfo(np.int64).max)
    best = key.argmin(axis=-1)[..., None]
    hit = np.arange(available.shape[-1]) == best
    left = np.broadcast_to(available, key.shape).any(axis=-1, keepdims=True)
    return (hit & left).astype(float)


def _ranker(logits: np.ndarray | None, ranks: np.ndarray | None):
    """(weights, ranks): exactly one of the ranker's Plackett-Luce logits and its order."""
    if (logits is None) == (ranks is None):
        raise ConfigurationError("give the ranker's logits (Plackett-Luce) or its ranks, not both")
    return (None, np.asarray(ranks)) if logits is None else (_weights(logits), None)


def two_stage_slates(
    members: np.ndarray,
    set_probabilities: np.ndarray,
    slates: np.ndarray,
    *,
    logits: np.ndarray | None = None,
    ranks: np.ndarray | None = None,
) -> np.ndarray:
    """(n, P) probability that a two-stage policy shows each slate (its top L items, in order).

    ``members`` (S, N) and ``set_probabilities`` (n, S) are the generator's
    sets (:func:`candidate_sets`); ``slates`` (P, L) are item indices. The
    ranker orders the drawn set by Plackett-Luce ``logits`` (n, N) or
    deterministically by ``ranks`` (n, N; :func:`order_ranks`). Exact: a sum
    over the sets holding each slate, one vectorised pass per set.
    """
    weights, order = _ranker(logits, ranks)
    n, (count, length) = set_probabilities.shape[0], slates.shape
    out = np.zeros((n, count))
    placed = np.zeros((count, length, members.shape[1]), dtype=bool)  # items above each slot
    for k in range(1, length):
        placed[:, k] = placed[:, k - 1]
        placed[np.arange(count), k, slates[:, k - 1]] = True
    for s, inside in enumerate(members):
        held = inside[slates].all(axis=1)
        if not held.any():
            continue
        free = (inside & ~placed[held])[None]  # (1, P_s, L, N)
        at = slates[held][None, :, :, None]
        block = max(1, BLOCK_CELLS // free.size)
        for lo in range(0, n, block):
            part = slice(lo, lo + block)
            if weights is not None:
                nxt = _next_draw(free, weights[part, None, None, :], None)
            else:
                nxt = _next_draw(free, None, order[part, None, None, :])
            step = np.take_along_axis(nxt, np.broadcast_to(at, (*nxt.shape[:3], 1)), axis=3)
            out[part, held] += set_probabilities[part, s, None] * step[..., 0].prod(axis=2)
    return out


def two_stage_next(
    members: np.ndarray,
    set_probabilities: np.ndarray,
    shown: np.ndarray,
    *,
    logits: np.ndarray | None = None,
    ranks: np.ndarray | None = None,
) -> np.ndarray:
    """(U, L, N): P(a two-stage policy shows a_1..a_{k-1}, then item n at k), for each trajectory.

    ``shown`` (U, L) holds each trajectory's displayed items a_1..a_L as item
    indices (-1 where the policy cannot show the item: nothing at or below it
    is reachable); ``set_probabilities`` (U, S) the generator's probability
    of each set in ``members`` (S, N) for the trajectory's context;
    ``logits`` or ``ranks`` (U, N) the ranker's, as in
    :func:`two_stage_slates`. The probability of the logged prefix a_1..a_k
    is the entry at (k, a_k). Exact, in linear space (sets are few and
    prefixes short), one vectorised pass over the trajectories per set.
    """
    weights, order = _ranker(logits, ranks)
    n_units, length = shown.shape
    out = np.zeros((n_units, length, members.shape[1]))
    block = max(1, BLOCK_CELLS // out[0].size)
    for lo in range(0, n_units, block):
        part = slice(lo, lo + block)
        out[part] = _next_block(
            members,
            set_probabilities[part],
            shown[part],
            None if weights is None else weights[part],
            None if order is None else order[part],
        )
    return out


def _next_block(members, set_probabilities, shown, weights, order) -> np.ndarray:
    n_units, length = shown.shape
    pool = members.shape[1]
    valid = shown >= 0
    hot = np.zeros((n_units, length, pool), dtype=bool)
    rows, cols = np.nonzero(valid)
    hot[rows, cols, shown[rows, cols]] = True
    above = np.cumsum(hot, axis=1) - hot > 0  # items among a_1..a_{k-1}
    at = np.maximum(shown, 0)[..., None]
    out = np.zeros((n_units, length, pool))
    for s, inside in enumerate(members):
        free = inside & ~above
        if weights is not None:
            nxt = _next_draw(free, weights[:, None, :], None)
        else:
            nxt = _next_draw(free, None, order[:, None, :])
        step = np.where(valid, np.take_along_axis(nxt, at, axis=2)[..., 0], 0.0)
        reach = np.cumprod(np.c_[np.ones(n_units), step[:, :-1]], axis=1)  # P(a_1..a_{k-1} | set)
        out += (set_probabilities[:, s, None] * reach)[..., None] * nxt
    return out


def _two_stage_monte_carlo(g, size, r, length, temperature, samples, seed) -> RankMarginals:
    samples = _check_samples(samples)
    rng = np.random.default_rng(seed)
    n, pool = g.shape
    counts = np.zeros((n, pool, length))
    block = max(1, BLOCK_CELLS // (samples * pool))
    for lo in range(0, n, block):
        gb, rb = g[lo : lo + block], r[lo : lo + block]
        shape = (len(gb), samples, pool)
        chosen = np.argsort(-(gb[:, None, :] + rng.gumbel(size=shape)), axis=2)[:, :, :size]
        in_set = np.zeros(shape, dtype=bool)
        np.put_along_axis(in_set, chosen, True, axis=2)
        keys = np.broadcast_to(rb[:, None, :], shape).copy()
        if temperature is not None:
            keys = keys / temperature + rng.gumbel(size=shape)
        keys = np.where(in_set, keys, -np.inf)
        _count_top(keys, np.where(np.isfinite(gb), rb, -np.inf), length, counts[lo : lo + block])
    return RankMarginals(counts / samples, "monte_carlo", samples, seed)


#: Largest (contexts x item ids) table :func:`candidate_lookup` builds.
LOOKUP_CELLS = 20_000_000
#: Lookup tables by the id of the candidate array they index, while that array lives.
_LOOKUPS: dict[int, tuple[weakref.ref, np.ndarray | None]] = {}


def candidate_lookup(candidates: np.ndarray) -> np.ndarray | None:
    """(contexts, item ids) table of each item's index among its context's candidates, -1 if none.

    ``candidates`` is (contexts, K) of small non-negative whole item ids;
    None when they are not, or the table would exceed :data:`LOOKUP_CELLS`.
    The table is built once per candidate array and shared while the array
    lives, so the many policies of one environment hold one table between them.
    """
    entry = _LOOKUPS.get(id(candidates))
    if entry is not None and entry[0]() is candidates:
        return entry[1]
    table = _lookup_table(np.asarray(candidates))
    try:
        key = id(candidates)
        alive = weakref.ref(candidates, lambda _, key=key: _LOOKUPS.pop(key, None))
    except TypeError:  # not weakly referable (a list): build it again next time
        return table
    _LOOKUPS[key] = (alive, table)
    return table


def _lookup_table(cands: np.ndarray) -> np.ndarray | None:
    if cands.ndim != 2 or cands.dtype.kind not in "iu" or cands.size == 0 or cands.min() < 0:
        return None
    span = int(cands.max()) + 1
    if cands.shape[0] * span > LOOKUP_CELLS:
        return None
    table = np.full((cands.shape[0], span), -1, dtype=np.int32)
    table[np.arange(cands.shape[0])[:, None], cands] = np.arange(cands.shape[1], dtype=np.int32)
    return table


#: log 0: a logit or log-probability of an item that is never drawn.
NEG_INF = -np.inf


def log_prefix(logits: np.ndarray, hidden: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """log P(a_1..a_k) and the log mass left before each draw, for displayed logits.

    ``logits`` is (trajectories, longest): the Plackett-Luce logit of the item
    displayed at each position, ``-inf`` where the policy cannot show it (and
    beyond the trajectory); ``hidden`` is the log mass of the pool's items that
    were not displayed (``-inf`` when none). The mass left before the draw at
    position k is that of the items displayed at k or below plus the hidden
    mass, summed in log space (no cancellation, no underflow).
    """
    below = np.logaddexp.accumulate(logits[:, ::-1], axis=1)[:, ::-1]
    left = np.logaddexp(below, hidden[:, None])
    with np.errstate(invalid="ignore"):
        step = logits - left
    step[np.isneginf(logits)] = NEG_INF
    return np.cumsum(step, axis=1), left


def log_sum_exp(values: np.ndarray, axis: int = -1) -> np.ndarray:
    """log sum exp along ``axis``, shifted by the maximum (-inf where every value is -inf)."""
    top = values.max(axis=axis, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(divide="ignore"):
        return np.log(np.exp(values - top).sum(axis=axis)) + np.squeeze(top, axis=axis)


def shifted(prefix: np.ndarray) -> np.ndarray:
    """log P(a_1..a_{k-1}): the prefix above each position (0 above the first)."""
    return np.concatenate([np.zeros((len(prefix), 1)), prefix[:, :-1]], axis=1)


def uniform_log_prefix(count: np.ndarray, longest: int) -> np.ndarray:
    """log P(a_1..a_k) of a uniform shuffle of ``count`` candidates (trajectories, longest)."""
    k = np.arange(longest)
    with np.errstate(divide="ignore", invalid="ignore"):
        left = np.log(count[:, None] - k[None, :].astype(float))
    left[~np.isfinite(left)] = np.inf
    return -np.cumsum(left, axis=1)
