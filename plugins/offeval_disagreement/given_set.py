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
  gives F(S) = P(the first |S| draws are S) (Lemma 1 of Gilotte et al., 2019), the
  backward pass B(S) = P(the draws after S are exactly D \\ S), and
  P(P_r = p, D) = sum over |S| = r - 1, p not in S, of
  F(S) * w_p / (R + w(D \\ S)) * B(S + p). Each level is rescaled per banner
  (its log scale kept); banners whose weights span too many magnitudes for
  that (:data:`LINEAR_BUDGET`) are computed in log space throughout. Masses
  left to draw are sums of positive terms, built from the full set down
  (R + w(D \\ S) = R + w(D \\ (S + p)) + w_p), never a total minus what was
  placed (which cancels badly when weights differ by many orders of magnitude).
- :func:`subset_dp`: Appendix A of Gilotte et al. (2019) (Lemmas 1 and 2), O(n^2 2^n) per
  rank, kept as the reference.
- :func:`monte_carlo`: beyond the exact limit, sampled orderings. With no
  rest mass, exact Plackett-Luce sampling over D (Gumbel top-n); with one,
  sequential importance sampling that builds each ordering from the last
  rank up, matching the target's factors step by step (far better than
  Plackett-Luce over D as a proposal, whose weights degenerate when R is
  large). Self-normalised, with a standard error on every probability
  (binomial at the effective sample size of the weights) that shrinks as
  1 / sqrt(samples). Each banner draws from its own stream (seed and banner
  key, :mod:`offeval_disagreement.streams`).

All return (banners, n, n) arrays indexed [banner, rank - 1, product].
"""

from __future__ import annotations

from functools import lru_cache, reduce

import numpy as np

from offeval import ConfigurationError
from offeval.plugin import check_choice, check_whole
from offeval_disagreement import streams

#: Largest banner the exact algorithms take (2^MAX_EXACT subsets per banner).
MAX_EXACT = 20
#: Subset-by-banner cells per block of the exact methods: small enough for a level's arrays
#: to stay in cache (measured fastest on one core). Blocks hold at least 16 banners (gathers
#: of shorter rows are slower) while those fit in MAX_BLOCK_CELLS, and one banner past that
#: (as fast per banner there), so each of a block's arrays holds at most
#: max(MAX_BLOCK_CELLS, 2^n) cells: 16 MB.
BLOCK_CELLS = 1 << 18
MAX_BLOCK_CELLS = 1 << 21
#: Sample-by-product cells per block of Monte Carlo banners (at least one banner a block):
#: bounds its memory to a few arrays of 8 MB.
SAMPLE_CELLS = 1 << 20
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


def exact_limit(n: int, parameter: str) -> None:
    """Raise when banners of n products are past the exact algorithms' limit."""
    if n > MAX_EXACT:
        raise ConfigurationError(
            f"{parameter}: the exact algorithms take banners of at most {MAX_EXACT} products "
            f"(2^n subsets each), got {n} products; past {MAX_EXACT}, rank probabilities are "
            "sampled (method='auto' or 'monte_carlo')"
        )


def _weights(logits: np.ndarray, log_rest: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Weights and rest mass scaled so that the largest of them is 1 per banner."""
    top = np.maximum(logits.max(axis=1), log_rest)
    return np.exp(logits - top[:, None]), np.exp(log_rest - top)


@lru_cache(maxsize=MAX_EXACT)
def _lattice(n: int):
    """Subsets of n items level by level, and the moves between levels.

    Returns (edges, up, down), row indices int32 and items int8:
    ``edges[k][p]`` the pair (rows at level k without p, rows at level k + 1
    of the same set plus p); ``up[k]`` the pairs (parent row at level k,
    item added) that make each set of level k + 1, one pair per member;
    ``down[k]`` the pairs (child row at level k + 1, item added) of each set
    of level k, one pair per item it lacks. 18 bytes per (subset, item it
    lacks): 190 MB at n = 20, 9 MB at n = 16.
    """
    masks = np.arange(1 << n, dtype=np.int64)
    sizes = sum((masks >> p) & 1 for p in range(n))
    levels = [masks[sizes == k] for k in range(n + 1)]
    index = np.zeros(1 << n, dtype=np.int32)
    for level in levels:
        index[level] = np.arange(level.size, dtype=np.int32)
    edges, up, down = [], [], []
    for k in range(n):
        level, above = levels[k], levels[k + 1]
        per_item = []
        for p in range(n):
            free = np.flatnonzero((level >> p) & 1 == 0)
            per_item.append((free.astype(np.int32), index[level[free] | (1 << p)]))
        edges.append(per_item)
        members = _ranked(above, n, k + 1)  # (sets, k + 1): each set's items, ascending
        up.append([(index[above & ~(1 << m.astype(np.int64))], m) for m in members.T])
        absent = _ranked(~level & ((1 << n) - 1), n, n - k)  # (sets, n - k): the items it lacks
        down.append([(index[level | (1 << a.astype(np.int64))], a) for a in absent.T])
    return edges, up, down


def _ranked(masks: np.ndarray, n: int, count: int) -> np.ndarray:
    """(sets, count) int8: the items of each mask (all with ``count`` bits), in ascending order."""
    out = np.empty((masks.size, count), dtype=np.int8)
    rank = np.zeros(masks.size, dtype=np.int64)
    for p in range(n):  # over items, every set at once
        has = np.flatnonzero((masks >> p) & 1)
        out[has, rank[has]] = p
        rank[has] += 1
    return out


def _blocks(banners: int, n: int):
    width = max(BLOCK_CELLS >> n, 16) if 16 << n <= MAX_BLOCK_CELLS else 1
    for lo in range(0, banners, width):
        yield slice(lo, min(lo + width, banners))


def _left(w_rows: np.ndarray, r: np.ndarray, down) -> list[np.ndarray]:
    """R + w(D \\ S) for every set S of levels 0..n-1, each (sets, banners), by additions only."""
    n = len(down)
    left, above = [None] * n, r[None, :]
    for k in range(n - 1, -1, -1):
        child, item = down[k][0]
        left[k] = above = above[child] + w_rows[item]
    return left


def _log_left(logit_rows: np.ndarray, log_rest: np.ndarray, down) -> list[np.ndarray]:
    """log(R + w(D \\ S)) for every set S of levels 0..n-1, from the full set down."""
    n = len(down)
    left, above = [None] * n, log_rest[None, :]
    for k in range(n - 1, -1, -1):
        child, item = down[k][0]
        left[k] = above = np.logaddexp(above[child], logit_rows[item])
    return left


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
    exact_limit(n, "logits")
    lattice = _lattice(n)
    wide = _wide(logits, log_rest)
    out = np.empty((banners, n, n))
    for block in _blocks(banners, n):
        for subset, method in ((~wide[block], _linear_block), (wide[block], _log_block)):
            if subset.any():
                rows = np.flatnonzero(subset) + block.start
                out[rows] = method(logits[rows], log_rest[rows], *lattice)
    return out


def _wide(logits: np.ndarray, log_rest: np.ndarray) -> np.ndarray:
    """Banners whose weights span too many magnitudes for the linear-space path."""
    spread = np.maximum(logits.max(axis=1), log_rest) - logits.min(axis=1)
    return logits.shape[1] * (spread + np.log(logits.shape[1])) > LINEAR_BUDGET


def _linear_block(logits, log_rest, edges, up, down) -> np.ndarray:
    """Forward and backward passes in linear space, each level rescaled per banner.

    Each level is a sum of gathers (no scatter): F(S + p) sums over the
    members p of the set, B(S) over the items S lacks.
    """
    w, r = _weights(logits, log_rest)
    b, n = w.shape
    w_rows = np.ascontiguousarray(w.T)  # (n, b): the weight of an item, row by row
    # the chance of drawing p next from placed set S is w_p / (R + w(D \\ S)), per level
    inverse = [1.0 / left for left in _left(w_rows, r, down)]  # (sets, b)
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
    exact_limit(n, "logits")
    lattice = _lattice(n)
    wide = _wide(logits, log_rest)
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


def _linear_row(logits, log_rest, rank: int, edges, up, down) -> np.ndarray:
    """Row ``rank`` of the linear-space passes, each level rescaled per banner."""
    w, r = _weights(logits, log_rest)
    b, n = w.shape
    w_rows = np.ascontiguousarray(w.T)
    inverse = [1.0 / left for left in _left(w_rows, r, down)]
    k = rank - 1
    forward = np.ones((1, b))
    for level in range(k):
        placed = forward * inverse[level]
        forward = sum(placed[parent] * w_rows[item] for parent, item in up[level])
        forward /= forward.max(axis=0)
    backward = np.ones((1, b))
    for level in range(n - 1, k, -1):
        backward = inverse[level] * sum(
            backward[child] * w_rows[item] for child, item in down[level]
        )
        backward /= backward.max(axis=0)
    placed = forward * inverse[k]
    row = np.empty((b, n))
    for p, (rows, children) in enumerate(edges[k]):
        row[:, p] = np.einsum("sb,sb->b", placed[rows], backward[children]) * w[:, p]
    return row / row.sum(axis=1, keepdims=True)


def _log_sum(source: np.ndarray, pairs, logit_rows: np.ndarray) -> np.ndarray:
    """log sum_j exp(source[row_j] + logit[item_j]) per set, shifted by its largest term.

    Two passes over the gathers (largest term, then the sum) instead of
    stacking them: memory stays one level.
    """
    top = reduce(np.maximum, (source[rows] + logit_rows[item] for rows, item in pairs))
    total = sum(np.exp(source[rows] + logit_rows[item] - top) for rows, item in pairs)
    return top + np.log(total)


def _log_block(logits, log_rest, edges, up, down) -> np.ndarray:
    """The same passes in log space, for banners whose weights span too many magnitudes.

    Sums of gathers as in linear space, each shifted by its largest term per
    set and banner: every F(S), B(S) and remaining mass is finite, so no
    term is -inf.
    """
    b, n = logits.shape
    logit_rows = np.ascontiguousarray(logits.T)
    log_left = _log_left(logit_rows, log_rest, down)
    forward, placed = [np.zeros((1, b))], []
    for k in range(n):
        placed.append(forward[k] - log_left[k])  # log F(S) - log(R + w(D \\ S))
        forward.append(_log_sum(placed[k], up[k], logit_rows))
    backward = [None] * n + [np.zeros((1, b))]
    for k in range(n - 1, -1, -1):
        backward[k] = _log_sum(backward[k + 1], down[k], logit_rows) - log_left[k]
    out = np.empty((b, n, n))
    for k in range(n):
        for p, (rows, children) in enumerate(edges[k]):
            terms = placed[k][rows] + backward[k + 1][children]  # (sets, b)
            top = terms.max(axis=0)
            joint = top + np.log(np.exp(terms - top).sum(axis=0))
            out[:, k, p] = np.exp(joint + logits[:, p] - forward[n][0])
    return out


def subset_dp(logits: np.ndarray, rest=None) -> np.ndarray:
    """Gilotte et al. (2019), Appendix A: Lemma 1 for P(D_k = S), Lemma 2 for P(D_k = S, P_r = p0).

    O(n^2 2^n) per rank (O(n^3 2^n) for all ranks): the reference the faster
    :func:`forward_backward` is checked against. Linear space, no rescaling.
    """
    logits, log_rest = _check(logits, rest)
    banners, n = logits.shape
    exact_limit(n, "logits")
    w, r = _weights(logits, log_rest)
    full = (1 << n) - 1
    weight_of = (((np.arange(1 << n)[:, None] >> np.arange(n)) & 1) @ w.T).T  # (b, 2^n)

    def left(placed: int) -> np.ndarray:
        """scores_C - scores_S of the paper, summed over what is left (no cancellation)."""
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
    logits: np.ndarray, rest=None, *, samples: int = 10_000, seed: int = 0, keys=None
) -> tuple[np.ndarray, np.ndarray]:
    """P(P_r = p | D) by sampling orderings, and its standard error.

    Without a rest mass the ordering given D is Plackett-Luce over D, sampled
    exactly (Gumbel top-n). With one, orderings are built from the last rank
    to the first: the target's probability of an ordering is proportional to
    prod_i 1 / (R + W_i), W_i the weight of the products at ranks i and
    below, so each step draws the product for the next rank up with
    probability proportional to 1 / (R + W_below + w_p), and the ordering's
    importance weight is the product of the steps' normalisers
    (self-normalised). A rest mass that underflows next to the largest weight
    (below about e^-745 of it) counts as none. Returns the probabilities and
    their standard errors (binomial at the weights' effective sample size),
    both (banners, n, n).

    Banner b draws from its own stream, from ``seed`` and ``keys[b]`` (one
    whole number per banner; default: a hash of the banner's logits and rest
    mass), so its estimate is the same whatever else is in the call.
    """
    logits, log_rest = _check(logits, rest)
    check_whole(samples, "samples", low=2)
    banners, n = logits.shape
    state = streams.states(_keys(logits, log_rest) if keys is None else _given(keys, banners), seed)
    w, r = _weights(logits, log_rest)
    probs, ses = np.empty((banners, n, n)), np.empty((banners, n, n))
    width = max(1, SAMPLE_CELLS // (samples * n))
    for chosen, sampler in ((r == 0, _gumbel_orderings), (r > 0, _backward_orderings)):
        at = np.flatnonzero(chosen)
        for lo in range(0, at.size, width):
            rows = at[lo : lo + width]
            order, log_weight = sampler(logits[rows], w[rows], r[rows], samples, state[rows])
            probs[rows], ses[rows] = _estimate(order, log_weight)
    return probs, ses


def _keys(logits: np.ndarray, log_rest: np.ndarray) -> np.ndarray:
    """A uint64 hash of each banner's logits and rest mass (its content names its stream)."""
    bits = np.concatenate([logits, log_rest[:, None]], axis=1).view(np.uint64)
    key = np.full(len(bits), logits.shape[1], dtype=np.uint64)
    for column in bits.T:  # over the products, every banner at once
        key = streams.mix(key ^ column)
    return key


def _given(keys, banners: int) -> np.ndarray:
    keys = np.asarray(keys)
    if keys.shape != (banners,) or keys.dtype.kind not in "iu":
        raise ConfigurationError(f"keys must be one whole number per banner ({banners})")
    return keys.astype(np.uint64)


def _gumbel_orderings(logits, w, r, samples: int, state) -> tuple[np.ndarray, np.ndarray]:
    """Plackett-Luce over D, sampled exactly (Gumbel top-n): (b, S, n) orderings, equal weights."""
    b, n = logits.shape
    u = streams.uniforms(state, np.arange(samples * n).reshape(samples, n))  # (b, S, n)
    keys = logits[:, None, :] - np.log(-np.log(u))
    return np.argsort(-keys, axis=2), np.zeros((b, samples))


def _backward_orderings(logits, w, r, samples: int, state) -> tuple[np.ndarray, np.ndarray]:
    """(b, S, n) orderings built from the last rank up, and their log importance weights.

    Each step inverts the cumulative sum of the unplaced products'
    1 / (R + W_below + w_p) at one uniform number per sample; the placed
    product is swapped out of the unplaced ones, so step i works on n - i.
    """
    b, n = w.shape
    order = np.empty((b, samples, n), dtype=np.intp)
    # flat (b * S * n) arrays: the unplaced products of each sample and their weights
    unplaced = np.broadcast_to(np.arange(n), (b, samples, n)).flatten()
    weight = np.broadcast_to(w[:, None, :], (b, samples, n)).flatten()
    rows = np.arange(b * samples).reshape(b, samples) * n  # where each sample's row starts
    base = np.broadcast_to(r[:, None], (b, samples)).copy()  # R + W_below
    log_weight = np.zeros((b, samples))
    counter = np.arange(samples) * n
    for step in range(n):
        m = n - step
        mass = np.reciprocal(base[:, :, None] + weight.reshape(b, samples, n)[:, :, :m])
        np.cumsum(mass, axis=2, out=mass)
        total = mass[:, :, -1]
        log_weight += np.log(total)
        threshold = streams.uniforms(state, counter + step) * total  # (b, S)
        at = rows + (mass < threshold[:, :, None]).sum(axis=2)  # flat index among the first m
        order[:, :, n - 1 - step] = unplaced[at]
        base += weight[at]
        last = rows + m - 1  # the last unplaced product takes the placed one's slot
        unplaced[at], weight[at] = unplaced[last], weight[last]
    return order, log_weight


def _estimate(order: np.ndarray, log_weight: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Self-normalised P(P_r = p) from weighted orderings, and binomial errors at the ESS."""
    b, samples, n = order.shape
    weight = np.exp(log_weight - log_weight.max(axis=1, keepdims=True))
    weight /= weight.sum(axis=1, keepdims=True)
    cell = (np.arange(b)[:, None, None] * n + np.arange(n)) * n + order  # [banner, rank, product]
    spread = np.broadcast_to(weight[:, :, None], order.shape)
    prob = np.bincount(cell.ravel(), spread.ravel(), minlength=b * n * n).reshape(b, n, n)
    # binomial error at the effective sample size of the weights; the estimate is shrunk
    # half a sample towards 1/2 so that an entry no sample hit still states its error
    ess = 1.0 / (weight**2).sum(axis=1)[:, None, None]
    shrunk = (prob * ess + 0.5) / (ess + 1.0)
    return prob, np.sqrt(shrunk * (1.0 - shrunk) / ess)


def rank_probabilities(
    logits: np.ndarray,
    rest=None,
    *,
    method: str = "auto",
    samples: int = 10_000,
    seed: int = 0,
) -> tuple[np.ndarray, np.ndarray | None]:
    """P(P_r = p | D): exact up to :data:`MAX_EXACT` products, Monte Carlo beyond.

    ``method="exact"`` past the limit is an error; ``"auto"`` samples there.
    Returns the (banners, n, n) probabilities and, for Monte Carlo, their
    standard errors (None when exact).
    """
    check_choice(method, "method", METHODS)
    n = np.shape(logits)[1] if np.ndim(logits) == 2 else 0
    if method == "exact":
        exact_limit(n, "method='exact'")
    if method == "exact" or (method == "auto" and n <= MAX_EXACT):
        return forward_backward(logits, rest), None
    return monte_carlo(logits, rest, samples=samples, seed=seed)
