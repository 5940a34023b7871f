"""Plackett-Luce rank probabilities given the displayed set: P(P_r = p | D).

A banner shows the n products of D, drawn (set and order) by Plackett-Luce
sampling without replacement from a candidate pool C with weights
w = exp(logit). The ordering distribution given D depends on the candidates
left out only through their total weight, the *rest mass*
R = sum_{c in C \\ D} w_c: each draw's normaliser is R plus the weight of the
displayed products not yet placed. R = 0 means the pool is D itself (the
ordering is then Plackett-Luce over D).

Three exact algorithms over the 2^n subsets of D, all vectorised over banners
of the same size:

- :func:`forward_backward`: every rank at once in O(n 2^n). The forward pass
  gives F(S) = P(the first |S| draws are S) (the seed's Lemma 1), the
  backward pass B(S) = P(the draws after S are exactly D \\ S), and
  P(P_r = p, D) = sum over |S| = r - 1, p not in S, of
  F(S) * w_p / (R + w(D \\ S)) * B(S + p). Each level is rescaled per banner
  (its log scale kept); banners whose weights span too many magnitudes for
  that (:data:`LINEAR_BUDGET`) are computed in log space throughout. Masses
  left to draw are summed directly, never as a total minus what was placed
  (which cancels badly when weights differ by many orders of magnitude).
- :func:`subset_dp`: the seed's Appendix A (Lemmas 1 and 2), O(n^2 2^n) per
  rank, kept as the reference.
- :func:`monte_carlo`: beyond the exact limit, sampled orderings. With no
  rest mass, exact Plackett-Luce sampling over D (Gumbel top-n); with one,
  sequential importance sampling that builds each ordering from the last
  rank up, matching the target's factors step by step (far better than
  Plackett-Luce over D as a proposal, whose weights degenerate when R is
  large). Self-normalised, with a standard error on every probability
  (binomial at the effective sample size of the weights) that shrinks as
  1 / sqrt(samples).

All return (banners, n, n) arrays indexed [banner, rank - 1, product].
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from scipy.special import logsumexp

from offeval import ConfigurationError

#: Largest banner the exact algorithms take (2^MAX_EXACT subsets per banner).
MAX_EXACT = 20
#: Subset-by-banner cells held at once: bounds the memory of the exact methods, and is
#: small enough for a level's arrays to stay in cache (measured fastest on one core).
BLOCK_CELLS = 1 << 18
METHODS = ("auto", "exact", "monte_carlo")


def _check(logits: np.ndarray, rest) -> tuple[np.ndarray, np.ndarray]:
    """Logits as (banners, n) floats and the log rest mass as (banners,), both checked."""
    logits = np.asarray(logits, dtype=float)
    if logits.ndim != 2 or logits.shape[1] < 1:
        raise ConfigurationError(f"logits must be a (banners, n) array, got shape {logits.shape}")
    if not np.all(np.isfinite(logits)):
        raise ConfigurationError("logits must be finite")
    log_rest = np.full(len(logits), -np.inf) if rest is None else np.asarray(rest, dtype=float)
    log_rest = np.broadcast_to(log_rest, (len(logits),)).astype(float)
    if np.any(np.isnan(log_rest)) or np.any(log_rest == np.inf):
        raise ConfigurationError("the log rest mass must be a number or -inf (no rest)")
    return logits, log_rest


def _weights(logits: np.ndarray, log_rest: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Weights and rest mass scaled so that the largest of them is 1 per banner."""
    top = np.maximum(logits.max(axis=1), log_rest)
    return np.exp(logits - top[:, None]), np.exp(log_rest - top)


@lru_cache(maxsize=32)
def _lattice(n: int):
    """Subsets of n items level by level, and the moves between levels.

    Returns (bits, edges, up, down): ``bits[k]`` the (sets, n) membership
    matrix of the sets of size k; ``edges[k][p]`` the pair (rows at level k
    without p, rows at level k + 1 of the same set plus p); ``up[k]`` the
    pairs (parent row at level k, item added) that make each set of level
    k + 1, one pair per member; ``down[k]`` the pairs (child row at level
    k + 1, item added) of each set of level k, one pair per item it lacks.
    """
    masks = np.arange(1 << n)
    sizes = np.array([int(m).bit_count() for m in range(1 << n)])
    levels = [masks[sizes == k] for k in range(n + 1)]
    index = np.zeros(1 << n, dtype=np.int64)
    for level in levels:
        index[level] = np.arange(level.size)
    bits = [((level[:, None] >> np.arange(n)) & 1).astype(float) for level in levels]
    edges, up, down = [], [], []
    for k in range(n):
        per_item = []
        for p in range(n):
            free = np.flatnonzero((levels[k] >> p) & 1 == 0)
            per_item.append((free, index[levels[k][free] | (1 << p)]))
        edges.append(per_item)
        members = np.argsort(-bits[k + 1], axis=1, kind="stable")[:, : k + 1]  # (sets, k + 1)
        up.append(
            [(index[levels[k + 1] & ~(1 << members[:, j])], members[:, j]) for j in range(k + 1)]
        )
        absent = np.argsort(bits[k], axis=1, kind="stable")[:, : n - k]  # (sets, n - k)
        down.append([(index[levels[k] | (1 << absent[:, j])], absent[:, j]) for j in range(n - k)])
    return bits, edges, up, down


def _blocks(banners: int, n: int):
    width = max(16, BLOCK_CELLS // (1 << n))  # at least 16: fewer, larger calls for large n
    for lo in range(0, banners, width):
        yield slice(lo, min(lo + width, banners))


#: Banners with n * (logit spread + log n) below this take the linear-space path: every
#: path probability then stays above exp(-LINEAR_BUDGET), so nothing underflows. Wider
#: banners are computed in log space throughout.
LINEAR_BUDGET = 650.0


def forward_backward(logits: np.ndarray, rest=None) -> np.ndarray:
    """Exact P(P_r = p | D) for every rank r and product p, in O(n 2^n) per banner.

    ``logits`` (banners, n) are the displayed products' Plackett-Luce logits;
    ``rest`` is the log of the rest mass R (None or -inf: the pool is D).
    """
    logits, log_rest = _check(logits, rest)
    banners, n = logits.shape
    if n > MAX_EXACT:
        raise ConfigurationError(f"exact rank probabilities stop at n = {MAX_EXACT}, got {n}")
    lattice = _lattice(n)
    spread = np.maximum(logits.max(axis=1), log_rest) - logits.min(axis=1)
    wide = n * (spread + np.log(n)) > LINEAR_BUDGET
    out = np.empty((banners, n, n))
    for block in _blocks(banners, n):
        for subset, method in ((~wide[block], _linear_block), (wide[block], _log_block)):
            if subset.any():
                rows = np.flatnonzero(subset) + block.start
                out[rows] = method(logits[rows], log_rest[rows], *lattice)
    return out


def _linear_block(logits, log_rest, bits, edges, up, down) -> np.ndarray:
    """Forward and backward passes in linear space, each level rescaled per banner.

    Each level is a sum of gathers (no scatter): F(S + p) sums over the
    members p of the set, B(S) over the items S lacks.
    """
    w, r = _weights(logits, log_rest)
    b, n = w.shape
    w_rows = np.ascontiguousarray(w.T)  # (n, b): the weight of an item, row by row
    # the chance of drawing p next from placed set S is w_p / (R + w(D \\ S)), per level
    inverse = [1.0 / (r[None, :] + (1.0 - level) @ w.T) for level in bits[:-1]]  # (sets, b)
    forward, f_scale, placed = [np.ones((1, b))], [np.zeros(b)], []
    for k in range(n):
        placed.append(forward[k] * inverse[k])  # F(S) / (R + w(D \\ S))
        nxt = sum(placed[k][parent] * w_rows[item] for parent, item in up[k])
        top = nxt.max(axis=0)
        forward.append(nxt / top)
        f_scale.append(f_scale[k] + np.log(top))
    backward, b_scale = [None] * (n + 1), [None] * (n + 1)
    backward[n], b_scale[n] = np.ones((1, b)), np.zeros(b)
    for k in range(n - 1, -1, -1):
        prev = inverse[k] * sum(backward[k + 1][child] * w_rows[item] for child, item in down[k])
        top = prev.max(axis=0)
        backward[k] = prev / top
        b_scale[k] = b_scale[k + 1] + np.log(top)
    out = np.empty((b, n, n))
    log_total = f_scale[n] + np.log(forward[n][0])
    for k in range(n):
        shift = np.exp(f_scale[k] + b_scale[k + 1] - log_total)
        for p, (rows, children) in enumerate(edges[k]):
            joint = np.einsum("sb,sb->b", placed[k][rows], backward[k + 1][children])
            out[:, k, p] = joint * w[:, p] * shift
    return out


def rank_rows(logits: np.ndarray, rest, ranks: np.ndarray) -> np.ndarray:
    """P(P_r = p | D) for one rank per banner: (banners, n), row ``ranks[b]`` of banner b.

    One pass instead of two: the forward pass up to rank r - 1 and the
    backward pass down to rank r meet at the rank asked for, and the row is
    normalised by its own sum (it sums to P(D)). Counterfactual disagreement
    needs only the clicked rank's row.
    """
    logits, log_rest = _check(logits, rest)
    banners, n = logits.shape
    ranks = np.asarray(ranks, dtype=np.int64)
    if ranks.shape != (banners,) or np.any((ranks < 1) | (ranks > n)):
        raise ConfigurationError(f"ranks must be one rank in 1..{n} per banner")
    if n > MAX_EXACT:
        raise ConfigurationError(f"exact rank probabilities stop at n = {MAX_EXACT}, got {n}")
    lattice = _lattice(n)
    spread = np.maximum(logits.max(axis=1), log_rest) - logits.min(axis=1)
    wide = n * (spread + np.log(n)) > LINEAR_BUDGET
    out = np.empty((banners, n))
    if wide.any():  # the log-space path computes every rank; take the row asked for
        rows = np.flatnonzero(wide)
        full = forward_backward(logits[rows], log_rest[rows])
        out[rows] = full[np.arange(rows.size), ranks[rows] - 1]
    for r in np.unique(ranks[~wide]):
        at = np.flatnonzero(~wide & (ranks == r))
        for block in _blocks(at.size, n):
            rows = at[block]
            out[rows] = _linear_row(logits[rows], log_rest[rows], int(r), *lattice)
    return out


def _linear_row(logits, log_rest, rank: int, bits, edges, up, down) -> np.ndarray:
    """Row ``rank`` of the linear-space passes, each level rescaled per banner."""
    w, r = _weights(logits, log_rest)
    b, n = w.shape
    w_rows = np.ascontiguousarray(w.T)
    k = rank - 1
    forward = np.ones((1, b))
    for level in range(k):
        placed = forward / (r[None, :] + (1.0 - bits[level]) @ w.T)
        forward = sum(placed[parent] * w_rows[item] for parent, item in up[level])
        forward /= forward.max(axis=0)
    backward = np.ones((1, b))
    for level in range(n - 1, k, -1):
        inverse = 1.0 / (r[None, :] + (1.0 - bits[level]) @ w.T)
        backward = inverse * sum(backward[child] * w_rows[item] for child, item in down[level])
        backward /= backward.max(axis=0)
    placed = forward / (r[None, :] + (1.0 - bits[k]) @ w.T)
    row = np.empty((b, n))
    for p, (rows, children) in enumerate(edges[k]):
        row[:, p] = np.einsum("sb,sb->b", placed[rows], backward[children]) * w[:, p]
    return row / row.sum(axis=1, keepdims=True)


def _log_block(logits, log_rest, bits, edges, up, down) -> np.ndarray:
    """The same passes in log space, for banners whose weights span too many magnitudes."""
    b, n = logits.shape
    log_left = []  # log(R + w(D \\ S)) per level, by a log-sum-exp over what is left
    for level in bits[:-1]:
        left = np.where(level[:, None, :] == 0, logits[None, :, :], -np.inf)  # (sets, b, n)
        rest = np.broadcast_to(log_rest[None, :, None], left.shape[:2] + (1,))
        log_left.append(logsumexp(np.concatenate([left, rest], axis=2), axis=2))
    forward = [np.zeros((1, b))]
    for k in range(n):
        nxt = np.full((bits[k + 1].shape[0], b), -np.inf)
        for p, (rows, children) in enumerate(edges[k]):
            step = forward[k][rows] + logits[:, p] - log_left[k][rows]
            nxt[children] = np.logaddexp(nxt[children], step)
        forward.append(nxt)
    backward = [None] * n + [np.zeros((1, b))]
    for k in range(n - 1, -1, -1):
        prev = np.full((bits[k].shape[0], b), -np.inf)
        for p, (rows, children) in enumerate(edges[k]):
            step = backward[k + 1][children] + logits[:, p] - log_left[k][rows]
            prev[rows] = np.logaddexp(prev[rows], step)
        backward[k] = prev
    out = np.empty((b, n, n))
    for k in range(n):
        for p, (rows, children) in enumerate(edges[k]):
            terms = forward[k][rows] + logits[:, p] - log_left[k][rows] + backward[k + 1][children]
            out[:, k, p] = np.exp(logsumexp(terms, axis=0) - forward[n][0])
    return out


def subset_dp(logits: np.ndarray, rest=None) -> np.ndarray:
    """The seed's Appendix A: Lemma 1 for P(D_k = S), Lemma 2 for P(D_k = S, P_r = p0).

    O(n^2 2^n) per rank (O(n^3 2^n) for all ranks): the reference the faster
    :func:`forward_backward` is checked against. Linear space, no rescaling.
    """
    logits, log_rest = _check(logits, rest)
    banners, n = logits.shape
    if n > MAX_EXACT:
        raise ConfigurationError(f"exact rank probabilities stop at n = {MAX_EXACT}, got {n}")
    w, r = _weights(logits, log_rest)
    full = (1 << n) - 1
    weight_of = (((np.arange(1 << n)[:, None] >> np.arange(n)) & 1) @ w.T).T  # (b, 2^n)

    def left(placed: int) -> np.ndarray:
        """scores_C - scores_S of the seed, summed over what is left (no cancellation)."""
        return r + weight_of[:, full ^ placed]

    sets = {0: np.ones(banners)}  # Lemma 1: P(D_|S| = S)
    for mask in sorted(range(1, 1 << n), key=lambda m: m.bit_count()):
        sets[mask] = sum(
            sets[mask & ~(1 << p)] * w[:, p] / left(mask & ~(1 << p))
            for p in range(n)
            if mask >> p & 1
        )
    out = np.empty((banners, n, n))
    for rank in range(1, n + 1):
        for p0 in range(n):
            joint = {}  # Lemma 2: P(D_|S| = S, P_rank = p0), for |S| >= rank
            for mask in sorted(range(1, 1 << n), key=lambda m: m.bit_count()):
                size = mask.bit_count()
                if size < rank or not mask >> p0 & 1:
                    continue
                if size == rank:
                    before = mask & ~(1 << p0)
                    joint[mask] = sets[before] * w[:, p0] / left(before)
                else:
                    joint[mask] = sum(
                        joint[mask & ~(1 << p)] * w[:, p] / left(mask & ~(1 << p))
                        for p in range(n)
                        if mask >> p & 1 and p != p0
                    )
            out[:, rank - 1, p0] = joint[full] / sets[full]
    return out


def monte_carlo(
    logits: np.ndarray, rest=None, *, samples: int = 10_000, seed=0
) -> tuple[np.ndarray, np.ndarray]:
    """P(P_r = p | D) by sampling orderings, and its standard error.

    Without a rest mass the ordering given D is Plackett-Luce over D, sampled
    exactly (Gumbel top-n). With one, orderings are built from the last rank
    to the first: the target's probability of an ordering is proportional to
    prod_i 1 / (R + W_i), W_i the weight of the products at ranks i and
    below, so each step draws the product for the next rank up with
    probability proportional to 1 / (R + W_below + w_p), and the ordering's
    importance weight is the product of the steps' normalisers
    (self-normalised). Returns the probabilities and their standard errors
    (binomial at the weights' effective sample size), both (banners, n, n).
    """
    logits, log_rest = _check(logits, rest)
    if isinstance(samples, bool) or not isinstance(samples, (int, np.integer)) or samples < 2:
        raise ConfigurationError(f"samples must be a whole number >= 2, got {samples!r}")
    banners, n = logits.shape
    rng = np.random.default_rng(seed)
    probs, ses = np.empty((banners, n, n)), np.empty((banners, n, n))
    width = max(1, BLOCK_CELLS // (samples * n))
    for lo in range(0, banners, width):
        block = slice(lo, min(lo + width, banners))
        w, r = _weights(logits[block], log_rest[block])
        order, log_weight = _sample_orderings(w, r, samples, rng)
        weight = np.exp(log_weight - log_weight.max(axis=1, keepdims=True))
        weight /= weight.sum(axis=1, keepdims=True)
        hits = np.zeros((w.shape[0], samples, n, n))  # [banner, sample, rank, product]
        np.put_along_axis(hits, order[:, :, :, None], 1.0, axis=3)
        prob = np.einsum("bs,bsrp->brp", weight, hits)
        # binomial error at the effective sample size of the weights; the estimate is shrunk
        # half a sample towards 1/2 so that an entry no sample hit still states its error
        ess = 1.0 / (weight**2).sum(axis=1)[:, None, None]
        shrunk = (prob * ess + 0.5) / (ess + 1.0)
        probs[block], ses[block] = prob, np.sqrt(shrunk * (1.0 - shrunk) / ess)
    return probs, ses


def _sample_orderings(w, r, samples: int, rng) -> tuple[np.ndarray, np.ndarray]:
    """(b, S, n) orderings (product at each rank) and their log importance weights."""
    b, n = w.shape
    if not r.any():  # Plackett-Luce over D: exact sampling, equal weights
        keys = np.log(w)[:, None, :] + rng.gumbel(size=(b, samples, n))
        return np.argsort(-keys, axis=2), np.zeros((b, samples))
    order = np.empty((b, samples, n), dtype=np.int64)
    below, log_weight = np.zeros((b, samples)), np.zeros((b, samples))
    free = np.ones((b, samples, n), dtype=bool)
    for rank in range(n - 1, -1, -1):
        score = -np.log(r[:, None, None] + below[:, :, None] + w[:, None, :])
        score = np.where(free, score, -np.inf)
        log_weight += logsumexp(score, axis=2)
        pick = np.argmax(score + rng.gumbel(size=score.shape), axis=2)
        order[:, :, rank] = pick
        np.put_along_axis(free, pick[:, :, None], False, axis=2)
        below += w[np.arange(b)[:, None], pick]
    return order, log_weight


def rank_probabilities(
    logits: np.ndarray,
    rest=None,
    *,
    method: str = "auto",
    samples: int = 10_000,
    seed: int = 0,
) -> tuple[np.ndarray, np.ndarray | None]:
    """P(P_r = p | D): exact up to :data:`MAX_EXACT` products, Monte Carlo beyond.

    Returns the (banners, n, n) probabilities and, for Monte Carlo, their
    standard errors (None when exact).
    """
    if method not in METHODS:
        raise ConfigurationError(f"method must be one of {METHODS}, got {method!r}")
    n = np.shape(logits)[1] if np.ndim(logits) == 2 else 0
    if method == "exact" or (method == "auto" and n <= MAX_EXACT):
        return forward_backward(logits, rest), None
    return monte_carlo(logits, rest, samples=samples, seed=seed)
