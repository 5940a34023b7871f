"""Ranking policies over per-context candidate sets, with exact rank marginals.

A policy holds scores for each context's K candidates. Stochastic policies are
Plackett-Luce (softmax sampling without replacement) at a temperature;
deterministic ones sort by score. The probability that candidate k lands at
position i is computed exactly by enumerating the K!/(K-L)! ordered prefixes of
length L (a loop over prefixes, vectorised over contexts).
"""

from __future__ import annotations

from functools import cached_property
from itertools import permutations

import numpy as np
import pandas as pd

from offeval import ColumnError, ConfigurationError

MAX_PREFIXES = 50_000
#: Contexts processed at once when enumerating prefixes (bounds memory).
CONTEXT_BLOCK = 2_048


def prefixes(k: int, length: int) -> np.ndarray:
    """All ordered prefixes of ``length`` distinct indices out of ``k``, as rows."""
    count = np.prod(np.arange(k - length + 1, k + 1), dtype=float)
    if count > MAX_PREFIXES:
        raise ConfigurationError(f"{int(count)} ordered prefixes: too many to enumerate exactly")
    return np.array(list(permutations(range(k), length)), dtype=np.int64).reshape(-1, length)


def pl_prefix_probabilities(logits: np.ndarray, table: np.ndarray) -> np.ndarray:
    """(n, P) probabilities that each context's ranking starts with each prefix row.

    Plackett-Luce with ``logits`` (n, K): the item at each step is drawn with
    probability proportional to exp(logit) among those not yet placed.
    """
    weights = np.exp(logits - logits.max(axis=1, keepdims=True))
    remaining = np.repeat(weights.sum(axis=1, keepdims=True), len(table), axis=1)
    prob = np.ones((len(logits), len(table)))
    for step in range(table.shape[1]):
        chosen = weights[:, table[:, step]]
        prob *= chosen / remaining
        remaining -= chosen
    return prob


def pl_marginals(logits: np.ndarray, length: int) -> np.ndarray:
    """(n, K, length): exact P(candidate k at position i) under Plackett-Luce."""
    n, k = logits.shape
    table = prefixes(k, length)
    onehot = np.eye(k)[table]  # (P, length, K)
    out = np.empty((n, k, length))
    for lo in range(0, n, CONTEXT_BLOCK):
        prob = pl_prefix_probabilities(logits[lo : lo + CONTEXT_BLOCK], table)
        out[lo : lo + CONTEXT_BLOCK] = np.einsum("np,pik->nki", prob, onehot)
    return out


class RankingPolicy:
    """Ranks each context's candidates by score: Plackett-Luce or deterministic.

    ``scores`` is (n_contexts, K) aligned with the environment's candidate
    sets; ``temperature=None`` means deterministic (sort by score, ties by
    candidate order). ``mix_uniform`` mixes in a share of uniformly shuffled
    rankings (the logging policy's exploration traffic).
    """

    def __init__(
        self,
        name: str,
        scores: np.ndarray,
        candidates: np.ndarray,
        n_positions: int,
        temperature: float | None = 1.0,
        mix_uniform: float = 0.0,
    ):
        if temperature is not None and not temperature > 0:
            raise ConfigurationError(f"temperature must be positive or None, got {temperature}")
        if not 0 <= mix_uniform <= 1:
            raise ConfigurationError(f"mix_uniform must lie in [0, 1], got {mix_uniform}")
        self.name = name
        self.scores = np.asarray(scores, dtype=float)
        self.candidates = candidates
        self.n_positions = n_positions
        self.temperature = temperature
        self.mix_uniform = mix_uniform

    @property
    def deterministic(self) -> bool:
        """True when the policy always shows the same ranking for a context."""
        return self.temperature is None and self.mix_uniform == 0

    @cached_property
    def marginals(self) -> np.ndarray:
        """(n_contexts, K, L): probability that candidate k is shown at position i."""
        n, k = self.scores.shape
        out = np.zeros((n, k, self.n_positions))
        if self.temperature is None:
            top = self.deterministic_ranking()
            out[np.arange(n)[:, None], top, np.arange(self.n_positions)] = 1.0
        else:
            out = pl_marginals(self.scores / self.temperature, self.n_positions)
        if self.mix_uniform:
            out = (1 - self.mix_uniform) * out + self.mix_uniform / k
        return out

    def deterministic_ranking(self) -> np.ndarray:
        """(n_contexts, L) candidate indices sorted by score, ties by index."""
        return np.argsort(-self.scores, axis=1, kind="stable")[:, : self.n_positions]

    def sample(
        self, contexts: np.ndarray, rng: np.random.Generator
    ) -> tuple[np.ndarray, np.ndarray]:
        """Rankings (n, L) of candidate indices for ``contexts``, and a shuffled flag."""
        n, k = len(contexts), self.scores.shape[1]
        if self.temperature is None:
            ranking = self.deterministic_ranking()[contexts]
        else:
            keys = self.scores[contexts] / self.temperature + rng.gumbel(size=(n, k))
            ranking = np.argsort(-keys, axis=1)[:, : self.n_positions]
        shuffled = rng.random(n) < self.mix_uniform
        if shuffled.any():
            random_order = np.argsort(rng.random((int(shuffled.sum()), k)), axis=1)
            ranking[shuffled] = random_order[:, : self.n_positions]
        return ranking, shuffled

    def probabilities(self, rows: pd.DataFrame) -> np.ndarray:
        """P(item at position | context) for each row; 0 for non-candidates."""
        for column in ("context", "item", "position"):
            if column not in rows:
                raise ColumnError(column, f"policy {self.name!r} needs this column")
        ctx = rows["context"].to_numpy(dtype=np.int64)
        item = rows["item"].to_numpy()
        pos = rows["position"].to_numpy(dtype=np.int64)
        bad = (ctx < 0) | (ctx >= len(self.candidates))
        if bad.any():
            raise ColumnError(
                "context", "unknown context for this environment", np.flatnonzero(bad)
            )
        match = self.candidates[ctx] == item[:, None]
        k = match.argmax(axis=1)
        ok = match.any(axis=1) & (pos <= self.n_positions)
        out = np.zeros(len(rows))
        out[ok] = self.marginals[ctx[ok], k[ok], pos[ok] - 1]
        return out

    def __repr__(self) -> str:
        kind = "deterministic" if self.temperature is None else f"PL(T={self.temperature:g})"
        mix = f", {self.mix_uniform:.0%} shuffled" if self.mix_uniform else ""
        return f"RankingPolicy({self.name!r}, {kind}{mix})"
