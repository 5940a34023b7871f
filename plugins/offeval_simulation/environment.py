"""A seeded ranking environment with known ground truth.

Contexts (users) each have K candidate items; the true click probability of
an examined item is Q(x, a) = sigmoid(offset + scale * affinity(x, a)) with a
low-rank affinity. Users follow the position-based model (click = examined
and attracted, examination from any registered model, by name, spec or object) or the cascade model
(scan down, stop at the first click), which breaks the item-position
assumption of the IS family on purpose.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy.special import expit, logsumexp

from offeval import ESTIMANDS, ConfigurationError, InteractionLog, OffevalError, active_registry
from offeval.plugin import check_choice, check_whole
from offeval_simulation.rankers import (
    CONTEXT_BLOCK,
    RankingPolicy,
    pl_prefix_probabilities,
    prefixes,
    two_stage_prefixes,
    two_stage_slates,
)

USER_MODELS = ("position_based", "cascade")


@dataclass(frozen=True)
class ABResult:
    """Per-impression reward of one online A/B cell."""

    policy: str
    mean: float
    se: float
    n: int


class Environment:
    """Seeded synthetic recommendation environment (see module docstring).

    All randomness of the world (users, items, qualities, candidate sets) comes
    from ``seed``; logs and A/B cells take their own seeds.
    """

    def __init__(
        self,
        *,
        seed: int = 0,
        n_contexts: int = 2_000,
        n_items: int = 300,
        n_candidates: int = 8,
        n_positions: int = 4,
        dim: int = 8,
        n_groups: int = 4,
        n_days: int = 7,
        click_offset: float = -2.0,
        click_scale: float = 1.2,
        user_model: str = "position_based",
        examination: Any = "exponential",
        examination_params: dict | None = None,
    ):
        check_choice(user_model, "user_model", USER_MODELS)
        n_items = check_whole(n_items, "n_items", low=1)
        n_candidates = check_whole(n_candidates, "n_candidates", low=1, high=n_items)
        n_positions = check_whole(n_positions, "n_positions", low=1, high=n_candidates)
        self.seed = seed
        self.n_positions = n_positions
        self.n_groups = n_groups
        self.n_days = n_days
        self.user_model = user_model
        registry = active_registry()
        if "examination" not in registry.kinds:
            raise ConfigurationError(
                "the simulator's users need the examination models of the ranking plugin, "
                "which is not loaded (add ranking to OFFEVAL_PLUGINS)"
            )
        self.examination = (
            registry.create("examination", examination, **examination_params)
            if examination_params
            else registry.resolve("examination", examination)
        )
        rng = np.random.default_rng(seed)
        users = rng.normal(0, 1 / np.sqrt(dim), (n_contexts, dim))
        items = rng.normal(0, 1, (n_items, dim))
        item_bias = rng.normal(0, 0.5, n_items)
        self.candidates = np.argsort(rng.random((n_contexts, n_items)), axis=1)[:, :n_candidates]
        affinity = np.einsum("cd,ckd->ck", users, items[self.candidates])
        self.affinity = affinity + item_bias[self.candidates]
        self.quality = expit(click_offset + click_scale * self.affinity)
        self.groups = rng.integers(0, n_groups, n_contexts)

    @property
    def n_contexts(self) -> int:
        """Number of contexts (users)."""
        return len(self.candidates)

    # -- policies -----------------------------------------------------------
    def policy(
        self,
        name: str,
        *,
        skill: float = 1.0,
        noise: float = 0.0,
        temperature: float | None = 1.0,
        mix_uniform: float = 0.0,
        seed: int = 0,
        generator_size: int | None = None,
        generator_noise: float = 1.0,
    ) -> RankingPolicy:
        """A ranker scoring candidates by ``skill * affinity + noise * N(0, 1)``.

        With ``generator_size`` it is two-stage: a Plackett-Luce generator over
        ``affinity + generator_noise * N(0, 1)`` first draws that many candidates.
        """
        rng = np.random.default_rng([self.seed, seed])
        scores = skill * self.affinity + noise * rng.standard_normal(self.affinity.shape)
        generator = None
        if generator_size is not None:
            generator = self.affinity + generator_noise * rng.standard_normal(self.affinity.shape)
        return RankingPolicy(
            name,
            scores,
            self.candidates,
            self.n_positions,
            temperature,
            mix_uniform,
            generator_scores=generator,
            generator_size=generator_size,
        )

    def logging_policy(self, shuffled_share: float = 0.05) -> RankingPolicy:
        """Plackett-Luce (temperature 0.5) over noisy scores, plus a shuffled share."""
        return self.policy(
            "logging",
            skill=1.0,
            noise=1.0,
            temperature=0.5,
            mix_uniform=shuffled_share,
            seed=10_000,
        )

    def candidate_policies(self, n: int = 12) -> list[RankingPolicy]:
        """A family of ``n`` target policies of graded, close quality.

        Skill rises from 1.0 to 1.4 and score noise falls from 0.9 to 0.6 with
        the index, so higher-numbered policies are better on average (the
        exact order is :meth:`online_value`'s). Odd-numbered policies are
        Plackett-Luce at temperature 0.5, even-numbered ones deterministic.
        """
        out = []
        for j in range(n):
            t = j / max(n - 1, 1)
            out.append(
                self.policy(
                    f"p{j + 1:02d}",
                    skill=1.0 + 0.4 * t,
                    noise=0.9 - 0.3 * t,
                    temperature=0.5 if j % 2 == 0 else None,
                    seed=j + 1,
                )
            )
        return out

    # -- ground truth ---------------------------------------------------------
    def online_value(self, policy: RankingPolicy) -> float:
        """Exact expected reward per impression if ``policy`` served every context."""
        return float(self.context_values(policy).mean())

    def true_value(self, policy: RankingPolicy, estimand: str) -> float:
        """Exact value of an estimand of :data:`offeval.ESTIMANDS` if ``policy`` served everyone.

        Every trajectory shows ``n_positions`` items, so reward per trajectory
        is ``n_positions`` times reward per impression.
        """
        check_choice(estimand, "estimand", tuple(ESTIMANDS), error=OffevalError)
        value = self.online_value(policy)
        return value * self.n_positions if estimand == "reward_per_trajectory" else value

    def context_values(self, policy: RankingPolicy) -> np.ndarray:
        """Exact expected reward per impression for each context."""
        e = self.examination(np.arange(1, self.n_positions + 1))
        if self.user_model == "position_based":
            expected = np.einsum("ckl,ck,l->c", policy.marginals, self.quality, e)
            return expected / self.n_positions
        return self._cascade_values(policy) / self.n_positions

    def _cascade_values(self, policy: RankingPolicy) -> np.ndarray:
        """Expected clicks per context under the cascade model, exactly.

        A two-stage policy's slate probabilities sum over its generator's
        candidate sets (``ranking.two_stage_slates``: exact, and refused when
        the sets are too many to enumerate).
        """
        n, k = self.quality.shape
        rows = np.arange(n)
        if policy.temperature is None and not policy.two_stage:
            ranked = _cascade_clicks(self.quality[rows[:, None], policy.deterministic_ranking()])
        else:
            ranked = np.empty(n)
        uniform = np.zeros(n) if policy.mix_uniform else None
        table = prefixes(k, self.n_positions)
        for lo in range(0, n, CONTEXT_BLOCK):
            block = slice(lo, lo + CONTEXT_BLOCK)
            clicks = _cascade_clicks(self.quality[block][:, table])  # (b, P)
            if policy.two_stage:
                ranked[block] = (two_stage_slates(policy, block, table) * clicks).sum(axis=1)
            elif policy.temperature is not None:
                prob = pl_prefix_probabilities(policy.logits[block], table)
                ranked[block] = (prob * clicks).sum(axis=1)
            if uniform is not None:
                uniform[block] = clicks.mean(axis=1)
        if uniform is None:
            return ranked
        return (1 - policy.mix_uniform) * ranked + policy.mix_uniform * uniform

    # -- data -------------------------------------------------------------
    def simulate(
        self,
        policy: RankingPolicy,
        n_trajectories: int,
        *,
        seed: int = 0,
        with_candidates: bool = False,
    ) -> InteractionLog:
        """A log of ``n_trajectories`` rankings served by ``policy``, with clicks.

        Columns: trajectory, context, item, position, reward, propensity (the
        exact marginal of the item at its position), ``rank_probability_i``
        for every rank i (the logged item's marginal at rank i, from which any
        examination model gives the logging exposure), logging_score (the
        ranker's Plackett-Luce logit), logging_pool (the log of the
        Plackett-Luce mass of the candidates the ranker ordered but did not
        display: the context's other candidates, or for a two-stage policy the
        generator's other draws), shuffled, day, group. A deterministic ranker
        has no logits: logging_score is its score, logging_pool is NaN, and
        the column logging_deterministic is true on the banners it ordered
        (false on shuffled ones). A two-stage policy's log also has
        ``logging_prefix``, its exact probability P(a_1..a_k) of each
        trajectory's items down to the row (summed over the generator's
        draws, mixing in the shuffled share), and ``logging_two_stage``
        (true), since its ranker's columns hold probabilities given the
        generator's draw. With ``with_candidates`` the log also lists
        every candidate of every slot with its propensity.
        """
        rng, contexts, (ranking, shuffled, pool), clicks = self._serve(policy, n_trajectories, seed)
        n, length = ranking.shape
        ctx = np.repeat(contexts, length)
        cand_index = ranking.ravel()
        pos = np.tile(np.arange(1, length + 1), n)
        frame = pd.DataFrame(
            {
                "trajectory": np.repeat(np.arange(n), length),
                "context": ctx,
                "item": self.candidates[ctx, cand_index],
                "position": pos,
                "reward": clicks.ravel().astype(float),
                "propensity": policy.marginals[ctx, cand_index, pos - 1],
                **{
                    f"rank_probability_{i + 1}": policy.marginals[ctx, cand_index, i]
                    for i in range(length)
                },
                **_logging_columns(policy, contexts, ranking, pool, shuffled),
                "shuffled": np.repeat(shuffled, length),
                "day": np.repeat(rng.integers(0, self.n_days, n), length),
                "group": self.groups[ctx],
            }
        )
        candidates = self._candidate_table(policy, contexts) if with_candidates else None
        return InteractionLog.from_frame(frame, candidates=candidates)

    def _serve(self, policy: RankingPolicy, n_trajectories: int, seed: int) -> tuple:
        """Users, what the policy showed them (ranking, shuffled, pool) and their clicks.

        Returns the random generator too, positioned after the clicks.
        """
        rng = np.random.default_rng([self.seed, seed, 1])
        contexts = rng.integers(0, self.n_contexts, n_trajectories)
        shown = policy.sample(contexts, rng)
        return rng, contexts, shown, self._clicks(contexts, shown[0], rng)

    def _clicks(self, contexts, ranking, rng) -> np.ndarray:
        q = self.quality[contexts[:, None], ranking]
        attracted = rng.random(q.shape) < q
        if self.user_model == "position_based":
            examined = rng.random(q.shape) < self.examination(np.arange(1, ranking.shape[1] + 1))
            return examined & attracted
        first = np.cumsum(attracted, axis=1) == 1
        return attracted & first

    def _candidate_table(self, policy: RankingPolicy, contexts: np.ndarray) -> pd.DataFrame:
        """Every slot's candidates with their propensities, slots in the log's order."""
        n, k, length = len(contexts), self.candidates.shape[1], self.n_positions
        index = np.int32 if n * length * k < 2**31 else np.int64
        traj = np.repeat(np.arange(n, dtype=index), length * k)
        pos = np.tile(np.repeat(np.arange(1, length + 1, dtype=index), k), n)
        cand = np.tile(np.arange(k, dtype=index), n * length)
        ctx = contexts.astype(index)[traj]
        columns = {
            "trajectory": traj,
            "position": pos,
            "item": self.candidates[ctx, cand],
            "propensity": policy.marginals[ctx, cand, pos - 1],
        }
        return pd.DataFrame(columns, copy=False)

    def ab_test(
        self, policies: list[RankingPolicy], n_per_cell: int, *, seed: int = 0
    ) -> list[ABResult]:
        """Online A/B cells: each policy serves its own random users."""
        out = []
        for j, policy in enumerate(policies):
            clicks = self._serve(policy, n_per_cell, 10_000 + 100 * seed + j)[3]
            per_traj = clicks.sum(axis=1) / self.n_positions  # the cell's log, without the log
            out.append(
                ABResult(
                    policy.name,
                    float(per_traj.mean()),
                    float(per_traj.std(ddof=1) / np.sqrt(len(per_traj))),
                    len(per_traj),
                )
            )
        return out

    def __repr__(self) -> str:
        k = self.candidates.shape[1]
        return (
            f"Environment(seed={self.seed}, {self.n_contexts} contexts, {k} candidates, "
            f"{self.n_positions} positions, {self.user_model}, {self.examination!r})"
        )


def _logging_columns(
    policy: RankingPolicy,
    contexts: np.ndarray,
    ranking: np.ndarray,
    pool: np.ndarray,
    shuffled: np.ndarray,
) -> dict[str, np.ndarray]:
    """What the log knows of the logging ranker: logits and pool mass, or that it was fixed."""
    length = ranking.shape[1]
    stage = _two_stage_columns(policy, contexts, ranking) if policy.two_stage else {}
    if policy.temperature is None:
        return {
            "logging_score": policy.score_matrix[contexts[:, None], ranking].ravel(),
            "logging_pool": np.full(ranking.size, np.nan),
            "logging_deterministic": np.repeat(~shuffled, length),
            **stage,
        }
    logits = policy.logits[contexts]
    return {
        "logging_score": np.take_along_axis(logits, ranking, axis=1).ravel(),
        "logging_pool": np.repeat(_log_rest(logits, ranking, pool), length),
        **stage,
    }


def _two_stage_columns(policy: RankingPolicy, contexts, ranking) -> dict[str, np.ndarray]:
    """A two-stage logger's exact prefix probabilities P(a_1..a_k), and its flag.

    Its ranker's columns (``logging_score``, ``logging_pool``) describe the
    ordering given the generator's draw; P(a_1..a_k) sums over the draws
    (and mixes in the uniformly shuffled share).
    """
    base = two_stage_prefixes(policy, contexts, ranking)
    k = policy.score_matrix.shape[1]
    uniform = np.cumprod(1.0 / (k - np.arange(ranking.shape[1])))
    mixed = (1 - policy.mix_uniform) * base + policy.mix_uniform * uniform
    return {
        "logging_prefix": mixed.ravel(),
        "logging_two_stage": np.ones(ranking.size, dtype=bool),
    }


def _log_rest(logits: np.ndarray, ranking: np.ndarray, pool: np.ndarray) -> np.ndarray:
    """Log of the Plackett-Luce mass of each trajectory's pool not displayed (-inf if none)."""
    hidden = pool.copy()
    np.put_along_axis(hidden, ranking, False, axis=1)
    with np.errstate(divide="ignore"):
        return logsumexp(np.where(hidden, logits, -np.inf), axis=1)


def _cascade_clicks(quality_in_order: np.ndarray) -> np.ndarray:
    """Expected clicks of a cascade user scanning items in order (last axis)."""
    survive = np.cumprod(1 - quality_in_order, axis=-1)
    before = np.concatenate([np.ones_like(survive[..., :1]), survive[..., :-1]], axis=-1)
    return (before * quality_in_order).sum(axis=-1)
