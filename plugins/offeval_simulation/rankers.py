"""Ranking policies over per-context candidate sets, with exact rank marginals.

A policy holds scores for each context's K candidates. Stochastic policies are
Plackett-Luce (softmax sampling without replacement) at a temperature;
deterministic ones sort by score; two-stage ones first draw a candidate set
from the K by Plackett-Luce over generator scores, then rank it. Rank marginals
come from :mod:`offeval.data.ranking` (exact). The cascade ground truth needs the
probability of every ordered prefix, enumerated here (for a two-stage policy,
summed over the generator's candidate sets).
"""

from __future__ import annotations

from functools import cached_property
from itertools import permutations

import numpy as np
import pandas as pd

from offeval import ColumnError, ConfigurationError
from offeval.plugin import check_number
from offeval_ranking import ranking

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


def two_stage_slates(policy: RankingPolicy, contexts, table: np.ndarray) -> np.ndarray:
    """(n, P) probabilities that a two-stage policy's ranking starts with each prefix row.

    Exact: summed over the generator's candidate sets (before any uniform mixing).
    """
    members, sets, ranker = ranking.two_stage_parts(policy, contexts)
    return ranking.two_stage_slates(members, sets, table, **ranker)


def two_stage_prefixes(policy: RankingPolicy, contexts, shown: np.ndarray) -> np.ndarray:
    """(n, L) probability that a two-stage policy's ranking starts with ``shown[:, :k]``.

    ``shown`` holds candidate indices; exact, summed over the generator's
    candidate sets (before any uniform mixing).
    """
    members, sets, ranker = ranking.two_stage_parts(policy, contexts)
    following = ranking.two_stage_next(members, sets, shown, **ranker)
    return np.take_along_axis(following, shown[..., None], axis=2)[..., 0]


class RankingPolicy:
    """Ranks each context's candidates by score: Plackett-Luce or deterministic.

    ``scores`` is (n_contexts, K) aligned with the environment's candidate
    sets; ``temperature=None`` means deterministic (sort by score, ties by
    candidate order). ``mix_uniform`` mixes in a share of uniformly shuffled
    rankings (the logging policy's exploration traffic). With
    ``generator_scores`` and ``generator_size`` the policy is two-stage: a
    Plackett-Luce candidate generator draws ``generator_size`` of the K
    candidates, and the ranker orders only those.
    """

    def __init__(
        self,
        name: str,
        scores: np.ndarray,
        candidates: np.ndarray,
        n_positions: int,
        temperature: float | None = 1.0,
        mix_uniform: float = 0.0,
        generator_scores: np.ndarray | None = None,
        generator_size: int | None = None,
    ):
        self.temperature = check_number(
            temperature, "temperature", low=0, low_open=True, finite=False, optional=True
        )
        self.mix_uniform = check_number(mix_uniform, "mix_uniform", low=0, high=1)
        self.name = name
        self.score_matrix = np.asarray(scores, dtype=float)
        self.candidates = candidates
        self.n_positions = n_positions
        if (generator_scores is None) != (generator_size is None):
            raise ConfigurationError("a two-stage policy needs generator_scores and generator_size")
        self.generator_scores = generator_scores
        self.generator_size = generator_size

    @property
    def two_stage(self) -> bool:
        """True when a stochastic candidate generator precedes the ranker."""
        return self.generator_size is not None

    @property
    def deterministic(self) -> bool:
        """True when the policy always shows the same ranking for a context."""
        return self.temperature is None and self.mix_uniform == 0 and not self.two_stage

    @cached_property
    def marginals(self) -> np.ndarray:
        """(n_contexts, K, L): probability that candidate k is shown at position i."""
        k = self.score_matrix.shape[1]
        if self.two_stage:
            out = ranking.two_stage(
                self.generator_scores,
                self.generator_size,
                self.score_matrix,
                self.n_positions,
                ranker_temperature=self.temperature,
                method="exact",
            ).values
        elif self.temperature is None:
            out = ranking.deterministic(self.score_matrix, self.n_positions).values
        else:
            out = ranking.plackett_luce(
                self.score_matrix / self.temperature, self.n_positions, method="exact"
            ).values
        if self.mix_uniform:
            out = (1 - self.mix_uniform) * out + self.mix_uniform / k
        return out

    def deterministic_ranking(self) -> np.ndarray:
        """(n_contexts, L) candidate indices sorted by score, ties by index."""
        return np.argsort(-self.score_matrix, axis=1, kind="stable")[:, : self.n_positions]

    def sample(
        self, contexts: np.ndarray, rng: np.random.Generator
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Rankings (n, L) of candidate indices for ``contexts``, a shuffled flag, and the pool.

        The pool (n, K) marks the candidates the ranker ordered: all K, or
        for a two-stage policy the generator's draw.
        """
        n, k = len(contexts), self.score_matrix.shape[1]
        keys = self.score_matrix[contexts]
        if self.temperature is not None:
            keys = keys / self.temperature + rng.gumbel(size=(n, k))
        in_set = np.ones((n, k), dtype=bool)
        if self.two_stage:
            drawn = self.generator_scores[contexts] + rng.gumbel(size=(n, k))
            chosen = np.argsort(-drawn, axis=1)[:, : self.generator_size]
            in_set[:] = False
            np.put_along_axis(in_set, chosen, True, axis=1)
            keys = np.where(in_set, keys, -np.inf)
        order = np.argsort(-keys, axis=1, kind="stable")[:, : self.n_positions]
        shuffled = rng.random(n) < self.mix_uniform
        if shuffled.any():
            random_order = np.argsort(rng.random((int(shuffled.sum()), k)), axis=1)
            order[shuffled] = random_order[:, : self.n_positions]
        return order, shuffled, in_set

    def _locate(self, rows: pd.DataFrame, columns: tuple[str, ...]) -> tuple:
        """Each row's candidate cell and whether the item is a candidate of its context.

        The cell is context x K + the item's index among the context's K
        candidates (0 where not found).
        """
        for column in columns:
            if column not in rows:
                raise ColumnError(column, f"policy {self.name!r} needs this column")
        n_contexts, k = self.candidates.shape
        ctx = rows["context"].to_numpy()
        if ctx.dtype.kind not in "iu":
            ctx = ctx.astype(np.int64)
        if ctx.size and (ctx.min() < 0 or ctx.max() >= n_contexts):
            bad = (ctx < 0) | (ctx >= n_contexts)
            raise ColumnError(
                "context", "unknown context for this environment", positions=np.flatnonzero(bad)
            )
        item = rows["item"].to_numpy()
        if item.dtype.kind not in "iu" and self.candidates.dtype.kind in "iuf":
            item = pd.to_numeric(rows["item"], errors="coerce").to_numpy(dtype=float)
        table = self._slots
        if table is None:  # item ids too spread for a table: compare with every candidate
            match = self.candidates[ctx] == item[:, None]
            found = match.any(axis=1)
            return np.where(found, ctx * k + match.argmax(axis=1), 0), found
        span = table.shape[1]
        if item.dtype.kind in "iu" and (not item.size or (item.min() >= 0 and item.max() < span)):
            slot = table.reshape(-1)[ctx.astype(np.int64) * span + item]
        else:  # ids outside the table, or not whole numbers: not candidates
            slot = np.full(len(item), -1, dtype=np.int32)
            known = (item >= 0) & (item < span) & (item == np.floor(item))
            slot[known] = table[ctx[known], item[known].astype(np.int64)]
        found = slot >= 0
        cell = ctx.astype(np.int64) * k + slot
        if not found.all():
            cell[~found] = 0
        return cell, found

    @property
    def _slots(self) -> np.ndarray | None:
        """(contexts, items) table: each item's index among its context's candidates, or -1.

        Shared by every policy over the same candidate array; None when the
        ids are not small whole numbers or the table would be too large.
        """
        return ranking.candidate_lookup(self.candidates)

    def probabilities(self, rows: pd.DataFrame) -> np.ndarray:
        """P(item at position | context) for each row; 0 for non-candidates."""
        cell, found = self._locate(rows, ("context", "item", "position"))
        pos = rows["position"].to_numpy()
        if pos.dtype.kind not in "iu":
            pos = pos.astype(np.int64)
        ok = found & (pos >= 1) & (pos <= self.n_positions)
        flat = cell * self.n_positions + (pos - 1)
        table = self.marginals.reshape(-1)
        if ok.all():
            return table[flat]
        out = np.zeros(len(rows))
        out[ok] = table[flat[ok]]
        return out

    def scores(self, rows: pd.DataFrame) -> np.ndarray:
        """The policy's score of each row's item (for estimators comparing scores)."""
        cell, found = self._locate(rows, ("context", "item"))
        if not found.all():
            raise ColumnError(
                "item",
                f"not a candidate of its context for policy {self.name!r}",
                positions=np.flatnonzero(~found),
            )
        return self.score_matrix.reshape(-1)[cell]

    @property
    def logits(self) -> np.ndarray:
        """(n_contexts, K) Plackett-Luce logits of the ranker: scores / temperature.

        A deterministic ranker (``temperature=None``) has none: its order given
        the candidates is fixed, which no finite logits express.
        """
        if self.temperature is None:
            raise ConfigurationError(
                f"policy {self.name!r} ranks deterministically (temperature=None): "
                "it has no Plackett-Luce logits"
            )
        return self.score_matrix / self.temperature

    def exposure(self, rows: pd.DataFrame, examination) -> np.ndarray:
        """Expected examination sum_i e(i) P(item at rank i | context) of each row's item."""
        cell, found = self._locate(rows, ("context", "item"))
        e = np.asarray(examination(np.arange(1, self.n_positions + 1)), dtype=float)
        per_candidate = (self.marginals @ e).reshape(-1)
        return np.where(found, per_candidate[cell], 0.0)

    def __repr__(self) -> str:
        kind = "deterministic" if self.temperature is None else f"PL(T={self.temperature:g})"
        mix = f", {self.mix_uniform:.0%} shuffled" if self.mix_uniform else ""
        stage = f", two-stage top {self.generator_size}" if self.two_stage else ""
        return f"RankingPolicy({self.name!r}, {kind}{mix}{stage})"
