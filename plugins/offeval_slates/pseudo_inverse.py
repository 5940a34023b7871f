"""The exact pseudo-inverse weight q_pi' Gamma_mu^+ 1_s from a logging ranker.

Swaminathan et al. (2017): with 1_s the slot-item indicator of a slate s
(cell (a, j) is 1 when item a is at position j), Gamma_mu(x) = E_mu[1_s 1_s']
and q_pi(x) = E_pi[1_s], the weight of a logged slate is q_pi' Gamma_mu^+ 1_s.
Gamma's diagonal holds the rank marginals; its off-diagonal blocks the pairwise
marginals P(a at j, b at k), which the log does not hold. They come here from
the logging ranker itself, by enumerating its ordered prefixes per context:
the simulator's rankers (``candidates`` and ``n_positions``; Plackett-Luce
``logits`` or ``deterministic_ranking()``; a uniformly shuffled share
``mix_uniform``; a two-stage ranker's generator, ``generator_scores`` and
``generator_size``, whose candidate sets each slate probability sums over
exactly: ``ranking.two_stage_slates``).
"""

from __future__ import annotations

import weakref
from itertools import permutations

import numpy as np
from scipy import sparse

from offeval import ColumnError, ConfigurationError, InteractionLog, per_trajectory
from offeval_ranking import ranking
from offeval_slates.layout import candidate_index, context_index, layout

#: Largest number of ordered prefixes enumerated per context.
MAX_PREFIXES = 50_000
#: Contexts whose prefix probabilities are held at once.
BLOCK = 256
#: Gamma^+ per context, per logging ranker (dropped with the ranker).
_CACHE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def check_logging_ranker(logging) -> None:
    """The logging ranker must expose what the enumeration reads."""
    need = ("candidates", "n_positions", "score_matrix", "temperature", "deterministic_ranking")
    missing = [a for a in need if not hasattr(logging, a)]
    if missing:
        raise ConfigurationError(
            f"logging must be None or a ranking policy with {', '.join(need)} (the simulator's "
            f"rankers); {logging!r} has no {', '.join(missing)}"
        )
    if getattr(logging, "two_stage", False):
        stage = [a for a in ("generator_scores", "generator_size") if not hasattr(logging, a)]
        if stage:
            raise ConfigurationError(
                f"logging: a two-stage ranker needs generator_scores and generator_size; "
                f"{logging!r} has no {', '.join(stage)}"
            )


def _table(k: int, length: int) -> np.ndarray:
    count = np.prod(np.arange(k - length + 1, k + 1), dtype=float)
    if count > MAX_PREFIXES:
        raise ConfigurationError(
            f"pi with a logging ranker enumerates {int(count)} ordered slates of {length} out of "
            f"{k} candidates per context (limit {MAX_PREFIXES})"
        )
    return np.array(list(permutations(range(k), length)), dtype=np.int64).reshape(-1, length)


def _slate_probabilities(logging, ctx: np.ndarray, table: np.ndarray) -> np.ndarray:
    """(contexts, slates) probability that the ranker shows each enumerated slate."""
    n, length = len(table), table.shape[1]
    k = np.asarray(logging.candidates).shape[1]
    if getattr(logging, "two_stage", False):
        members, sets, ranker = ranking.two_stage_parts(logging, ctx)
        base = ranking.two_stage_slates(members, sets, table, **ranker)
    elif logging.temperature is None:
        order = np.asarray(logging.deterministic_ranking())[ctx][:, :length]
        base = (table[None, :, :] == order[:, None, :]).all(axis=2).astype(float)
    else:
        logits = np.asarray(logging.logits)[ctx]  # (C, K)
        shown = logits[:, table]  # (C, N, L)
        outside = np.ones((n, k))
        outside[np.arange(n)[:, None], table] = 0.0
        top = logits.max(axis=1, keepdims=True)
        with np.errstate(divide="ignore"):
            hidden = np.log(np.exp(logits - top) @ outside.T) + top  # (C, N)
        prefix = ranking.log_prefix(shown.reshape(-1, length), hidden.reshape(-1))[0]
        base = np.exp(prefix[:, -1]).reshape(len(ctx), n)
    m = float(getattr(logging, "mix_uniform", 0.0) or 0.0)
    return (1 - m) * base + m / n


def gamma_pinv(logging, contexts: np.ndarray) -> np.ndarray:
    """(contexts, K L, K L) pseudo-inverse of Gamma_mu(x) for each given context.

    Each context's is computed once per logging ranker (kept while the ranker lives).
    """
    known = _CACHE.setdefault(logging, {})
    missing = np.array([c for c in contexts.tolist() if c not in known], dtype=np.int64)
    if missing.size:
        known.update(zip(missing.tolist(), _gamma_pinv(logging, missing), strict=True))
    return np.stack([known[c] for c in contexts.tolist()])


def _gamma_pinv(logging, contexts: np.ndarray) -> np.ndarray:
    cands = np.asarray(logging.candidates)
    k, length = cands.shape[1], int(logging.n_positions)
    table = _table(k, length)
    width = k * length
    cells = table * length + np.arange(length)  # (N, L) cell of each slot
    pairs = (cells[:, :, None] * width + cells[:, None, :]).reshape(len(table), -1)
    slates = np.repeat(np.arange(len(table)), pairs.shape[1])
    indicator = sparse.csr_matrix(
        (np.ones(pairs.size), (slates, pairs.ravel())), shape=(len(table), width * width)
    )  # row s: the cells of 1_s 1_s'
    out = np.empty((len(contexts), width, width))
    for lo in range(0, len(contexts), BLOCK):
        p = _slate_probabilities(logging, contexts[lo : lo + BLOCK], table)  # (C, N)
        gamma = np.asarray((indicator.T @ p.T).T).reshape(-1, width, width)
        out[lo : lo + BLOCK] = np.linalg.pinv(gamma)  # by SVD: faster than eigh here
    return out


def exact_weights(log: InteractionLog, logging, target: np.ndarray) -> np.ndarray:
    """Each trajectory's PI weight q_pi' Gamma^+ 1_s.

    ``target`` is the target's probability of each candidate-table row (its
    item at its slot's position): q_pi, cell by cell. Gamma^+ is computed
    once per chunk for every target.
    """
    rows, cell, keep = log.memo(_logging_side, logging, key=("slates_pi", id(logging)))
    lay = layout(log)
    slot = log.candidates["slot"].to_numpy()[keep]
    q = np.zeros(rows.shape)
    q[lay.unit[slot], cell[keep]] = target[keep]
    return np.bincount(lay.unit, weights=np.einsum("rc,rc->r", rows, q[lay.unit]))


def _logging_side(log: InteractionLog, logging) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rows of Gamma^+ at each logged cell, each candidate row's cell, and which count."""
    lay = layout(log)
    cands = np.asarray(logging.candidates)
    length = int(logging.n_positions)
    ctx = context_index(log, cands.shape[0], "the logging ranker")
    contexts, which = np.unique(per_trajectory(log, "context", ctx), return_inverse=True)
    pinv = gamma_pinv(logging, contexts)
    logged = candidate_index(logging, ctx, log.column("item"))
    bad = (logged < 0) | (lay.rank >= length)
    if bad.any():
        raise ColumnError(
            "item",
            "pi: the logging ranker cannot show this item at this position (not one of its "
            "candidates for the context, or below its last position)",
            log.source_rows[bad],
        )
    table = log.require_candidates()
    slot = table["slot"].to_numpy()
    index = candidate_index(logging, ctx[slot], table["item"].to_numpy())
    keep = (index >= 0) & (lay.rank[slot] < length)
    cell = index * length + lay.rank[slot]
    return pinv[which[lay.unit], logged * length + lay.rank], cell, keep
