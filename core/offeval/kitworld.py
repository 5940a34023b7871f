"""The conformance kit's own world: small, seeded, its exact values computed, not simulated.

Each of ``n_contexts`` users (uniformly drawn) has ``n_candidates`` items (K), ranked
into ``n_positions`` (L). Users are position-based: the item at rank l is clicked with
probability e(l) q(x, a), the attraction q(x, a) = sigmoid(-1 + affinity(x, a)) of a
low-rank affinity and e the ``examination`` (a callable on 1-based ranks; 1 / rank by
default). Policies are Plackett-Luce over scores (or sort by them); the K! / (K - L)!
ordered slates are enumerated, so a policy is its exact distribution over slates, from
which its rank marginals, exposures and exact value follow.
"""

from __future__ import annotations

from itertools import permutations

import numpy as np
import pandas as pd
from scipy.special import expit, logsumexp

from offeval.data.log import InteractionLog
from offeval.engine.declaration import ESTIMANDS
from offeval.engine.estimator import BaseEstimator, Contribution, PolicyView
from offeval.errors import ColumnError, ConfigurationError
from offeval.stats.inference import Linearisation, ratio_of_means
from offeval.validation import check_choice


class KitPolicy:
    """A ranking policy of the kit's world: its scores and exact distribution over slates."""

    def __init__(self, name: str, world: KitWorld, scores, temperature=None, shuffled=0.0):
        self.name, self.world, self.score_matrix = name, world, scores
        self.temperature, self.shuffled = temperature, shuffled
        table = world.slates
        if temperature is None:  # sort by score: the top-L slate, with probability 1
            top = np.argsort(-scores, axis=1, kind="stable")[:, : table.shape[1]]
            ranked = (top[:, None, :] == table[None]).all(axis=2).astype(float)
        else:  # Plackett-Luce: each rank's item in proportion to exp(logit) among those left
            self.logits = scores / temperature
            weights = np.exp(self.logits - self.logits.max(axis=1, keepdims=True))
            chosen = weights[:, table]  # (C, S, L)
            left = weights.sum(axis=1)[:, None, None] - (np.cumsum(chosen, axis=2) - chosen)
            ranked = np.prod(chosen / left, axis=2)
        #: (contexts, slates): the ranker's slate probabilities, and mixed with the shuffled share.
        self.ranked, self.slates = ranked, (1 - shuffled) * ranked + shuffled / len(table)
        #: (contexts, K, L): probability that candidate k is shown at rank l.
        self.marginals = np.einsum("cs,slk->ckl", self.slates, world.onehot)

    def _cells(self, rows: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
        """Each row's (context, candidate index); the index is -1 for a non-candidate."""
        for column in ("context", "item"):
            if column not in rows:
                raise ColumnError(column, f"policy {self.name!r} needs this column")
        ctx = rows["context"].to_numpy().astype(np.int64)
        item = rows["item"].to_numpy().astype(np.int64)
        known = (item >= 0) & (item < self.world.n_items)
        return ctx, np.where(known, self.world.lookup[ctx, np.where(known, item, 0)], -1)

    def probabilities(self, rows: pd.DataFrame) -> np.ndarray:
        """P(item at position | context) of each row (0 for a non-candidate)."""
        ctx, k = self._cells(rows)
        pos = rows["position"].to_numpy().astype(np.int64) - 1
        ok = (k >= 0) & (pos >= 0) & (pos < self.marginals.shape[2])
        return np.where(ok, self.marginals[ctx, k * ok, pos * ok], 0.0)

    def exposure(self, rows: pd.DataFrame, examination) -> np.ndarray:
        """Expected examination sum_l e(l) P(item at rank l | context) of each row's item."""
        ctx, k = self._cells(rows)
        e = np.asarray(examination(np.arange(1, self.marginals.shape[2] + 1)), dtype=float)
        return np.where(k >= 0, (self.marginals @ e)[ctx, k], 0.0)

    def scores(self, rows: pd.DataFrame) -> np.ndarray:
        """The policy's score of each row's item."""
        ctx, k = self._cells(rows)
        if (k < 0).any():
            raise ColumnError("item", "not a candidate of its context", np.flatnonzero(k < 0))
        return self.score_matrix[ctx, k]

    def __repr__(self) -> str:
        kind = "sorted" if self.temperature is None else f"Plackett-Luce(T={self.temperature:g})"
        return f"KitPolicy({self.name!r}, {kind})"


class KitWorld:
    """The kit's seeded world with exact truth (see the module docstring)."""

    def __init__(
        self,
        *,
        seed: int = 0,
        n_contexts: int = 40,
        n_items: int = 20,
        n_candidates: int = 5,
        n_positions: int = 3,
        examination=None,
        user_model: str = "position_based",
    ):
        check_choice(user_model, "user_model", ("position_based",), error=ConfigurationError)
        self.seed, self.n_items, self.n_positions = seed, n_items, n_positions
        self.examination = examination or (lambda ranks: 1.0 / np.asarray(ranks))
        rng = np.random.default_rng(seed)
        self.candidates = np.argsort(rng.random((n_contexts, n_items)), axis=1)[:, :n_candidates]
        self.lookup = np.full((n_contexts, n_items), -1)
        np.put_along_axis(self.lookup, self.candidates, np.arange(n_candidates)[None], axis=1)
        users, items = rng.normal(0, 0.7, (n_contexts, 4)), rng.normal(0, 1, (n_items, 4))
        self.affinity = np.einsum("cd,ckd->ck", users, items[self.candidates])
        self.quality = expit(-1 + self.affinity)
        self.groups = rng.integers(0, 3, n_contexts)
        #: Every ordered slate of L of the K candidates (S x L), and as one-hot (S, L, K).
        self.slates = np.array(list(permutations(range(n_candidates), n_positions)))
        self.onehot = self.slates[..., None] == np.arange(n_candidates)

    def policy(self, name: str, skill: float, noise: float, temperature, seed: int, shuffled=0.0):
        """Scores ``skill * affinity + noise * N(0, 1)``, Plackett-Luce at ``temperature``
        (None: sorted), with a ``shuffled`` share of uniformly random slates."""
        rng = np.random.default_rng([self.seed, seed])
        scores = skill * self.affinity + noise * rng.standard_normal(self.affinity.shape)
        return KitPolicy(name, self, scores, temperature, shuffled)

    def logging_policy(self) -> KitPolicy:
        """Plackett-Luce (temperature 0.5) over noisy scores, 5% of slates shuffled."""
        return self.policy("logging", 1.0, 1.0, 0.5, 10_000, shuffled=0.05)

    def candidate_policies(self, n: int = 4) -> list[KitPolicy]:
        """``n`` target policies, better with the index; even-numbered ones sort by score."""
        return [
            self.policy(f"p{j + 1:02d}", 1 + j / n, 0.9 - 0.6 * j / n, (0.5, None)[j % 2], j + 1)
            for j in range(n)
        ]

    def true_value(self, policy: KitPolicy, estimand: str) -> float:
        """Exact value of an estimand of :data:`offeval.ESTIMANDS` if ``policy`` served everyone
        (a reward per trajectory is L rewards per impression)."""
        check_choice(estimand, "estimand", tuple(ESTIMANDS), error=ConfigurationError)
        e = self.examination(np.arange(1, self.n_positions + 1))
        per_impression = np.einsum("ckl,ck,l->", policy.marginals, self.quality, e)
        per_impression /= self.n_positions * len(self.quality)
        per_trajectory = estimand == "reward_per_trajectory"
        return float(per_impression * (self.n_positions if per_trajectory else 1))

    def simulate(
        self, policy: KitPolicy, n_trajectories: int, *, seed: int = 0, with_candidates=False
    ) -> InteractionLog:
        """A log of ``policy``'s slates with clicks, ``rank_probability_i`` (the item's
        marginal at rank i) and, for a Plackett-Luce policy, logging_score (its logit) and
        logging_pool (the log of the logits' mass not shown); with ``with_candidates``, every
        candidate of every slot with its propensity."""
        rng = np.random.default_rng([self.seed, seed, 1])
        n, length, k = n_trajectories, self.n_positions, self.candidates.shape[1]
        ctx = rng.integers(0, len(self.candidates), n)
        cdf = np.cumsum(policy.ranked[ctx], axis=1)
        drawn = (rng.random(n)[:, None] * cdf[:, -1:] > cdf).sum(axis=1)
        shuffled = rng.random(n) < policy.shuffled
        drawn[shuffled] = rng.integers(0, len(self.slates), int(shuffled.sum()))
        shown = self.slates[np.minimum(drawn, len(self.slates) - 1)]  # (n, L)
        e = self.examination(np.arange(1, length + 1))
        clicks = rng.random((n, length)) < e * self.quality[ctx[:, None], shown]
        rows = np.repeat(ctx, length), shown.ravel()
        marginals = policy.marginals[rows]  # (n L, L)
        columns = {
            "trajectory": np.repeat(np.arange(n), length),
            "context": rows[0],
            "item": self.candidates[rows],
            "position": np.tile(np.arange(1, length + 1), n),
            "reward": clicks.ravel().astype(float),
            "propensity": marginals[np.arange(n * length), np.tile(np.arange(length), n)],
            **{f"rank_probability_{i + 1}": marginals[:, i] for i in range(length)},
            "group": self.groups[rows[0]],
        }
        if policy.temperature is not None:
            logits = policy.logits[ctx]
            hidden = np.ones((n, k), dtype=bool)
            np.put_along_axis(hidden, shown, False, axis=1)
            pool = logsumexp(np.where(hidden, logits, -np.inf), axis=1)
            columns["logging_score"] = np.take_along_axis(logits, shown, axis=1).ravel()
            columns["logging_pool"] = np.repeat(pool, length)
        columns["shuffled"] = np.repeat(shuffled, length)
        candidates = None
        if with_candidates:
            slot = np.repeat(np.arange(n * length), k)
            cand = np.tile(np.arange(k), n * length)
            candidates = pd.DataFrame(
                {
                    "trajectory": columns["trajectory"][slot],
                    "position": columns["position"][slot],
                    "item": self.candidates[rows[0][slot], cand],
                    "propensity": policy.marginals[rows[0][slot], cand, slot % length],
                }
            )
        return InteractionLog.from_frame(pd.DataFrame(columns), candidates=candidates)

    def __repr__(self) -> str:
        c, k = self.candidates.shape
        return f"KitWorld(seed={self.seed}, {c} contexts, {k} candidates, {self.n_positions} ranks)"


class KitIS(BaseEstimator):
    """The kit's own estimator, on which it checks an interval method: importance sampling,
    the per-row mean of r * pi/mu (unbiased); it declares ``betting_columns`` (weights of mean
    one) and the kit's clicks in [0, 1], for a method that reads them."""

    name = "kit_is"
    estimand = "reward_per_impression"
    guarantee = "unbiased"
    requires = ("propensity",)
    reward_range = (0.0, 1.0)
    betting_columns = {"rewards": "rw", "weights": "w", "rows": "rows", "divisor": "rows"}

    def contribute(self, view: PolicyView) -> Contribution:
        """Columns: r * pi/mu, pi/mu and 1 per row."""
        weights = view.weights()
        columns = {"rw": view.log.column("reward") * weights, "w": weights, "rows": view.log.ones}
        return Contribution(columns)

    def combine(self, stats) -> Linearisation:
        """Mean of r * pi/mu per row."""
        return ratio_of_means(stats, "rw", "rows")
