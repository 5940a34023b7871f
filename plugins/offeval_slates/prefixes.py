"""The target's probabilities of ranking prefixes, P(a_1..a_k | x).

RIPS and Cascade-DR weight the reward at position k by the ratio of the
target's and the logger's probabilities of the whole prefix a_1..a_k. Rank
marginals do not determine them. The target's come from, in this order:

1. a ``prefix_probabilities(rows)`` method: for each row, the probability that
   the policy shows its trajectory's logged items at positions 1..position;
2. Plackett-Luce logits: the simulator's rankers (``logits`` and
   ``candidates`` per context, with their uniformly shuffled share
   ``mix_uniform``; deterministic ones through ``deterministic_ranking()``;
   two-stage ones, whose generator draws ``generator_size`` candidates by
   Plackett-Luce over ``generator_scores`` before the ranker orders them,
   summed exactly over the generator's sets: ``ranking.two_stage_next``),
   or an :class:`offeval.RerankPolicy` at a temperature (Plackett-Luce over
   the trajectory's own items, logits ``scores / temperature``);
3. 0/1 probabilities (a deterministic policy): a prefix is shown surely when
   each of its items is surely at its position, never when one is not.

Anything else is a :class:`offeval.ConfigurationError`. The logger's are in
:mod:`offeval_slates.logger`. Everything is in log space: long prefixes have
tiny probabilities.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from offeval import ColumnError, ConfigurationError, PolicyView, per_trajectory
from offeval_ranking import RerankPolicy, ranking
from offeval_slates.candidates import candidate_rows, first_shown
from offeval_slates.layout import Layout, candidate_index, context_index, layout
from offeval_slates.support import logger_zero


def policy_name(view: PolicyView) -> str:
    """The policy's name for messages."""
    return getattr(view.policy, "name", type(view.policy).__name__)


@dataclass(frozen=True)
class TargetPrefixes:
    """The target's log P(a_1..a_k) per log row, and how to extend a prefix by a candidate."""

    rows: np.ndarray  # per log row
    source: str  # "method", "table", "rerank" or "deterministic"
    state: object = None  # what :func:`target_log_extended` needs of the source


def target_log_prefix(view: PolicyView, estimator: str) -> np.ndarray:
    """log P_target(a_1..a_k) of every logged row, once per chunk and policy."""
    return view.memo(_target, estimator, key=("slates_target",)).rows


def _target(view: PolicyView, estimator: str) -> TargetPrefixes:
    policy = view.policy
    lay = layout(view.log)
    if callable(getattr(policy, "prefix_probabilities", None)):
        p = view.ask("prefix_probabilities")
        bad = (p < 0) | (p > 1)
        if bad.any():
            raise ColumnError(
                "prefix_probabilities",
                f"policy {policy_name(view)!r} gave prefix probabilities outside [0, 1]",
                view.log.source_rows[bad],
            )
        with np.errstate(divide="ignore"):
            return TargetPrefixes(np.log(p), "method")
    if _is_table_ranker(policy):
        return _table_target(view, lay)
    if isinstance(policy, RerankPolicy) and policy.temperature is not None:
        logits = lay.padded(view.scores() / policy.temperature, ranking.NEG_INF)
        prefix, left = ranking.log_prefix(logits, np.full(lay.n_units, ranking.NEG_INF))
        return TargetPrefixes(lay.rows(prefix), "rerank", (logits, prefix, left))
    p = view.probabilities()
    fractional = (p > 0) & (p < 1)
    if fractional.any():
        raise ConfigurationError(
            f"{estimator} needs the target's prefix probabilities P(a_1..a_k): policy "
            f"{policy_name(view)!r} ({type(policy).__name__}) has no prefix_probabilities(rows) "
            "method and no Plackett-Luce logits, and its probabilities are not 0/1 (a "
            f"deterministic ranker's), e.g. {p[fractional][0]:.4g}"
        )
    with np.errstate(divide="ignore"):
        steps = lay.padded(np.log(p), 0.0)
    return TargetPrefixes(lay.rows(np.cumsum(steps, axis=1)), "deterministic", steps)


def _is_table_ranker(policy) -> bool:
    """The simulator's rankers: scores per context's candidates, Plackett-Luce or sorted."""
    return all(hasattr(policy, a) for a in ("candidates", "score_matrix", "deterministic_ranking"))


@dataclass(frozen=True)
class _Table:
    """A table ranker seen on one chunk's trajectories."""

    ctx: np.ndarray  # context of each trajectory
    index: np.ndarray  # (U, L) candidate index of each displayed item, -1 if not a candidate
    base: np.ndarray  # (U, L) log prefix of the ranker itself (before mixing)
    left: np.ndarray | None  # (U, L) log mass left before each draw (Plackett-Luce)
    logits: np.ndarray | None  # (U, K) logits of the context's candidates (Plackett-Luce)
    count: np.ndarray  # (U,) candidates per context
    #: (U, L, K) P(a_1..a_{k-1}, then candidate c at k) of a two-stage ranker (else None)
    following: np.ndarray | None = None


def _table_target(view: PolicyView, lay: Layout) -> TargetPrefixes:
    policy, log = view.policy, view.log
    cands = np.asarray(policy.candidates)
    ctx = per_trajectory(
        log, "context", context_index(log, cands.shape[0], f"policy {policy_name(view)!r}")
    )
    items = log.column("item")
    index = lay.padded(candidate_index(policy, ctx[lay.unit], items), -1, np.int64)
    repeat = first_shown(log) < lay.rank
    if repeat.any():  # an item shown twice: a ranking without repeats never does that
        index[lay.unit[repeat], lay.rank[repeat]] = -1
    length = min(lay.longest, int(policy.n_positions))
    index[:, length:] = -1
    count = np.full(lay.n_units, cands.shape[1], dtype=float)
    if getattr(policy, "two_stage", False):
        table = _two_stage(policy, ctx, index, count)
    elif policy.temperature is None:
        order = np.asarray(policy.deterministic_ranking())[ctx]
        agree = np.zeros(index.shape, dtype=bool)
        agree[:, :length] = index[:, :length] == order[:, :length]
        base = np.where(np.cumprod(agree & (index >= 0), axis=1) > 0, 0.0, ranking.NEG_INF)
        table = _Table(ctx, index, base, None, None, count)
    else:
        logits = np.asarray(policy.logits)[ctx]
        shown = np.where(
            index >= 0, np.take_along_axis(logits, np.maximum(index, 0), 1), ranking.NEG_INF
        )
        hidden_logits = logits.copy()
        rows, cols = np.nonzero(index >= 0)
        hidden_logits[rows, index[rows, cols]] = ranking.NEG_INF
        base, left = ranking.log_prefix(shown, ranking.log_sum_exp(hidden_logits, axis=1))
        table = _Table(ctx, index, base, left, logits, count)
    prefix = _mixed(policy, table.base, lambda: _uniform(table))
    return TargetPrefixes(lay.rows(prefix), "table", table)


def _two_stage(policy, ctx: np.ndarray, index: np.ndarray, count: np.ndarray) -> _Table:
    """A two-stage ranker: prefixes summed exactly over the generator's candidate sets."""
    contexts, which = np.unique(ctx, return_inverse=True)
    members, sets, ranker = ranking.two_stage_parts(policy, contexts)
    ranker = {key: value[which] for key, value in ranker.items()}
    following = ranking.two_stage_next(members, sets[which], index, **ranker)
    logged = np.take_along_axis(following, np.maximum(index, 0)[..., None], axis=2)[..., 0]
    with np.errstate(divide="ignore"):
        base = np.where(index >= 0, np.log(logged), ranking.NEG_INF)
    return _Table(ctx, index, base, None, None, count, following)


def _uniform(table: _Table) -> np.ndarray:
    """(U, L) log prefix of a uniform shuffle of the context's candidates."""
    shown = np.cumprod(table.index >= 0, axis=1) > 0
    return np.where(
        shown, ranking.uniform_log_prefix(table.count, table.index.shape[1]), ranking.NEG_INF
    )


def _mixed(policy, base: np.ndarray, uniform) -> np.ndarray:
    """log of (1 - m) P_ranker + m P_uniform, m the ranker's shuffled share.

    ``uniform`` computes the uniform component's log probabilities (only when m > 0).
    """
    m = float(getattr(policy, "mix_uniform", 0.0) or 0.0)
    if m == 0:
        return base
    with np.errstate(divide="ignore"):
        return np.logaddexp(np.log1p(-m) + base, np.log(m) + uniform())


def target_log_extended(view: PolicyView, estimator: str) -> np.ndarray:
    """log P_target(a_1..a_{k-1}, c) for every candidate row (item c at the slot of rank k).

    The probability that the target shows the logged items above the slot and
    the candidate at it: Cascade-DR's control variate needs the target's
    choice at each slot given the logged prefix above it.
    """
    return view.memo(_extended, estimator, key=("slates_extended",))


def _extended(view: PolicyView, estimator: str) -> np.ndarray:
    log = view.log
    target = view.memo(_target, estimator, key=("slates_target",))
    unit, rank, shown = candidate_rows(log)
    fresh = (shown < 0) | (shown >= rank)  # not displayed above the slot
    if target.source == "method":
        raise ConfigurationError(
            f"{estimator} needs the target's choice at each slot given the logged items above "
            f"it; policy {policy_name(view)!r} gives prefix probabilities of the logged rows "
            "only (prefix_probabilities(rows)): give Plackett-Luce logits or a deterministic policy"
        )
    if target.source == "deterministic":
        above = ranking.shifted(np.cumsum(target.state, axis=1))[unit, rank]
        p = view.candidate_probabilities()
        if ((p > 0) & (p < 1)).any():
            raise ConfigurationError(
                f"policy {policy_name(view)!r}: 0/1 probabilities on the log but not on its "
                "candidate table, so it is not deterministic"
            )
        with np.errstate(divide="ignore"):
            return np.where(fresh, above + np.log(p), ranking.NEG_INF)
    if target.source == "rerank":
        logits, prefix, left = target.state
        own = np.where(shown >= 0, logits[unit, np.maximum(shown, 0)], ranking.NEG_INF)
        return np.where(
            fresh, ranking.shifted(prefix)[unit, rank] + own - left[unit, rank], ranking.NEG_INF
        )
    return _table_extended(view, target.state, unit, rank, fresh)


def _table_extended(view, table: _Table, unit, rank, fresh) -> np.ndarray:
    policy, log = view.policy, view.log
    index = candidate_index(policy, table.ctx[unit], log.candidates["item"].to_numpy())
    ok = fresh & (index >= 0) & (rank < int(policy.n_positions))
    above = ranking.shifted(table.base)[unit, rank]
    if table.following is not None:  # two-stage: summed over the generator's sets already
        with np.errstate(divide="ignore"):
            own = np.log(table.following[unit, rank, np.maximum(index, 0)])
        base = np.where(ok, own, ranking.NEG_INF)
    elif table.left is None:  # deterministic ranker: the candidate must be its next item
        order = np.asarray(policy.deterministic_ranking())[table.ctx[unit]]
        next_item = order[np.arange(len(unit)), np.minimum(rank, order.shape[1] - 1)]
        base = np.where(ok & (next_item == index), above, ranking.NEG_INF)
    else:
        own = table.logits[unit, np.maximum(index, 0)]
        base = np.where(ok, above + own - table.left[unit, rank], ranking.NEG_INF)

    def uniform() -> np.ndarray:
        above_u = ranking.shifted(_uniform(table))[unit, rank]
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(ok, above_u - np.log(table.count[unit] - rank), ranking.NEG_INF)

    return _mixed(policy, base, uniform)


def extension_weights(view: PolicyView, logging, estimator: str) -> np.ndarray:
    """Per candidate row: P_target(a_1..a_k-1, c) / P_logging(a_1..a_k-1) = w_1:k-1 pi(c | above).

    ``logging`` is the logger's :class:`~offeval_slates.logger.LoggingPrefixes`;
    0 on the trajectories it excludes.
    """
    log = view.log
    unit, rank, _ = candidate_rows(log)
    slot = log.candidates["slot"].to_numpy()
    above = np.where(rank > 0, logging.rows[np.maximum(slot - 1, 0)], 0.0)
    choice = np.exp(target_log_extended(view, estimator) - above)
    if logging.included is not None:
        choice = np.where(logging.included[unit], choice, 0.0)
    return choice


def prefix_mass(view: PolicyView, logging, estimator: str) -> np.ndarray | None:
    """Per candidate row: w_1:k-1 pi(c | above) where the logger never shows c at the slot.

    None where support cannot be checked: no candidate table, unknown
    propensities, or a target giving the prefix probabilities of logged rows only.
    """
    zero = logger_zero(view)
    if zero is None:
        return None
    if not zero.any():
        return np.zeros(zero.size)
    if view.memo(_target, estimator, key=("slates_target",)).source == "method":
        return None
    return np.where(zero, extension_weights(view, logging, estimator), 0.0)
