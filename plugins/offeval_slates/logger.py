"""The logger's probabilities of ranking prefixes, P_logging(a_1..a_k), from the log.

Either a column of prefix propensities (obp's ``pscore_cascade``), or the
Plackett-Luce logging columns the simulator writes: ``logging_score`` (the
logit of each displayed item), ``logging_pool`` (log of the mass of the
candidates the ranker did not display) and ``shuffled``. In log space.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from offeval import ColumnError, InteractionLog, per_trajectory, trajectory_flags
from offeval.plugin import hint
from offeval_ranking import ranking
from offeval_slates.layout import Layout, layout

#: What the logging prefix probabilities are read from by default.
PL_COLUMNS = ("logging_score", "logging_pool", "shuffled")
#: The optional flag of banners a deterministic logging ranker ordered.
DETERMINISTIC = "logging_deterministic"
#: The optional flag of trajectories a two-stage logger served (its ranker's columns are
#: probabilities given the generator's draw).
TWO_STAGE = "logging_two_stage"
#: Relative slack when checking that prefix probabilities do not grow down a trajectory.
SLACK = 1e-9


@dataclass(frozen=True)
class LoggingPrefixes:
    """The logger's log P(a_1..a_k) per row, and which trajectories can be used."""

    rows: np.ndarray  # per log row (0 on excluded trajectories)
    included: np.ndarray | None  # per trajectory; None when all are
    excluded: dict[str, int]


def logging_log_prefix(log: InteractionLog, column: str | None) -> LoggingPrefixes:
    """The logger's prefix probabilities, once per chunk.

    ``column`` names a column of P_logging(a_1..a_k) per row (obp's
    ``pscore_cascade``), each in (0, 1] and not growing down a trajectory.
    ``None`` reads the Plackett-Luce logging columns: ``logging_score`` (the
    logit of each displayed item), ``logging_pool`` (log of the Plackett-Luce
    mass of the candidates the ranker did not display, ``-inf`` when none)
    and ``shuffled``. Shuffled trajectories were drawn by another component
    (a uniform shuffle), and banners a deterministic ranker ordered (column
    ``logging_deterministic``, when the log has it) explore nothing: both are
    excluded and counted. Conditioning on the component keeps the ratio
    unbiased, because which component served a trajectory does not depend on
    its context. Trajectories flagged ``logging_two_stage`` are refused: a
    two-stage logger's ranker columns condition on the generator's draw,
    which the target does not share. ``shuffled``, ``logging_deterministic`` and (where read)
    ``logging_pool`` hold one value per trajectory: a trajectory whose rows
    differ is an error naming it and those rows.
    """
    return log.memo(_logging, column)


def _logging(log: InteractionLog, column: str | None) -> LoggingPrefixes:
    lay = layout(log)
    if column is not None:
        return LoggingPrefixes(_prefix_column(log, lay, column), None, {})
    for name in PL_COLUMNS:
        if name not in log.frame:
            raise ColumnError(
                name,
                "the logger's prefix probabilities come from its Plackett-Luce columns "
                f"{list(PL_COLUMNS)} (shuffled: false everywhere if it never shuffles), or give "
                "a column of prefix propensities with "
                + hint("logging_prefix=COLUMN", "--estimator NAME:logging_prefix=COLUMN"),
            )
    if TWO_STAGE in log.frame:
        two_stage = trajectory_flags(log, TWO_STAGE)
        if two_stage.any():
            raise ColumnError(
                TWO_STAGE,
                "these trajectories come from a two-stage logger: logging_score and "
                "logging_pool give its ranker's probabilities given the generator's draw, not "
                "P(a_1..a_k); give the logger's prefix probabilities with "
                + hint("logging_prefix=COLUMN", "--estimator NAME:logging_prefix=COLUMN")
                + " (the simulator writes them in 'logging_prefix')",
                log.source_rows[two_stage[lay.unit]],
            )
    shuffled = trajectory_flags(log, "shuffled")
    fixed = (
        trajectory_flags(log, DETERMINISTIC)
        if DETERMINISTIC in log.frame
        else np.zeros_like(shuffled)
    )
    included = ~shuffled & ~fixed
    use = included[lay.unit]
    pool = pd.to_numeric(log.frame["logging_pool"], errors="coerce").to_numpy(dtype=float)
    bad = use & (np.isnan(pool) | (pool == np.inf))
    if bad.any():
        raise ColumnError(
            "logging_pool",
            "must hold one number (or -inf) per trajectory the Plackett-Luce ranker ordered: "
            f"the log of its mass over the candidates it did not display (flag banners a "
            f"deterministic ranker ordered in {DETERMINISTIC!r})",
            log.source_rows[bad],
        )
    pool = per_trajectory(log, "logging_pool", pool, included)
    scores = np.where(use, log.column("logging_score"), 0.0)
    hidden = np.where(included, pool, ranking.NEG_INF)
    prefix = lay.rows(ranking.log_prefix(lay.padded(scores, ranking.NEG_INF), hidden)[0])
    excluded = {
        "shuffled": int(shuffled.sum()),
        "deterministic_logging": int((fixed & ~shuffled).sum()),
    }
    return LoggingPrefixes(
        np.where(use, prefix, 0.0),
        None if included.all() else included,
        {k: v for k, v in excluded.items() if v},
    )


def _prefix_column(log: InteractionLog, lay: Layout, column: str) -> np.ndarray:
    if column not in log.frame:
        raise ColumnError(
            column,
            "the log has no such column: it should hold the logger's probability of each "
            "trajectory's items at positions 1..position (prefix propensities)",
        )
    p = pd.to_numeric(log.frame[column], errors="coerce").to_numpy(dtype=float)
    bad = ~((p > 0) & (p <= 1))
    if bad.any():
        raise ColumnError(column, "prefix propensities must lie in (0, 1]", log.source_rows[bad])
    above = np.r_[np.inf, p[:-1]]
    grows = (lay.rank > 0) & (p > above * (1 + SLACK))
    if grows.any():
        raise ColumnError(
            column,
            "prefix propensities P(a_1..a_k) cannot grow down a trajectory (marginal "
            "propensities given by mistake?)",
            log.source_rows[grows],
        )
    return np.log(p)
