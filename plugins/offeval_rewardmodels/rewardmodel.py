"""The reward model as columns of the log, and out-of-fold predictions to fill them.

A reward model q̂(x, a) enters as data, whatever produced it:

- a column of the log (default ``reward_model``): q̂ of the logged item at
  its slot, q̂(x_i, a_i) (:func:`logged_predictions`);
- a column of the same name in the candidate table: q̂ of every candidate of
  every slot (the slot's position included, so position-aware models work;
  :func:`candidate_predictions`).

Both are checked once per chunk (finite numbers; a logged item's prediction
the same in both tables). :class:`RewardPredictions` holds out-of-fold
predictions, split by trajectory (:func:`trajectory_folds`) so that no row's
prediction comes from a model that saw its own trajectory, and writes them
into a log; :func:`item_position_means` is a reward model without
scikit-learn, the conformance kit's (:func:`attach_kit_model`). The
``rewardmodels`` plugin's estimators and the ``slates`` plugin's Cascade-DR
read these columns (through :mod:`offeval.plugin`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from offeval import ColumnError, ConfigurationError, InteractionLog, OffevalError
from offeval.plugin import check_number, check_whole, hint

#: Default name of the reward-model column (log and candidate table).
DEFAULT_COLUMN = "reward_model"
#: Largest relative difference allowed between a logged row's q̂ and its candidate's.
AGREEMENT = 1e-9


def check_column(column: str) -> str:
    """A reward-model column name: a non-empty string that is not one of the log's roles."""
    if not isinstance(column, str) or not column:
        raise ConfigurationError(f"reward_model must name a column, got {column!r}")
    if column in InteractionLog.ROLES or column == "slot":
        raise ConfigurationError(
            f"reward_model={column!r} names a column the log reserves for its role: "
            "give the column of the model's predicted rewards"
        )
    return column


def _numbers(values: pd.Series, column: str, labels: np.ndarray, table: str) -> np.ndarray:
    """Finite floats; anything else is an error naming the column and rows."""
    if values.dtype.kind in "biuf":
        out = values.to_numpy(dtype=float)
    else:
        out = pd.to_numeric(values, errors="coerce").to_numpy(dtype=float)
    if np.isfinite(out.sum()):  # one reduction; a mask only to name the bad rows
        return out
    bad = ~np.isfinite(out)
    if bad.any():
        raise ColumnError(
            column, "predicted rewards must be finite numbers", labels[bad], table=table
        )
    return out


def logged_predictions(log: InteractionLog, column: str) -> np.ndarray:
    """q̂(x_i, a_i) of every log row, checked once per chunk."""
    return log.memo(_logged_predictions, column)


def _logged_predictions(log: InteractionLog, column: str) -> np.ndarray:
    if column not in log.frame:
        raise ColumnError(
            column,
            "the log needs the reward model's prediction for each logged item in this column "
            + hint(
                "(attach a fitted reward model's predictions with RewardPredictions.attach)",
                "(a column of the log file; --reward-model COLUMN names another, "
                "--fit-reward-model SPEC fits one)",
            ),
        )
    return _numbers(log.frame[column], column, log.source_rows, "rows")


def candidate_predictions(log: InteractionLog, column: str, estimator: str) -> np.ndarray:
    """q̂(x, a) of every candidate-table row, checked once per chunk.

    Where the log also has the column, each logged item's candidate must
    carry the same prediction as its log row.
    """
    if not log.has_candidates:
        build = hint(
            "build the log with InteractionLog.from_frame(..., candidates=table), or "
            "from_obp(..., with_candidates=True) for obp's bandit_feedback",
            "give the candidate table with --candidates FILE (its columns mapped with "
            "--candidates-map ROLE=COLUMN), with the predictions in that column of both files "
            "(--reward-model COLUMN names another; --fit-reward-model SPEC fits one)",
        )
        raise ConfigurationError(
            f"{estimator} needs the log's candidate table with a {column!r} column (the reward "
            "model's prediction for every candidate of every slot), to sum the target's "
            f"probabilities times the predictions over each slot: {build}"
        )
    return log.memo(_candidate_predictions, column)


def _candidate_predictions(log: InteractionLog, column: str) -> np.ndarray:
    cands = log.candidates
    labels = log.candidate_source_rows
    if column not in cands:
        raise ColumnError(
            column,
            "the candidate table needs the reward model's prediction for every candidate in "
            "this column (the log has a candidate table without it)",
        )
    q = _numbers(cands[column], column, labels, "candidate rows")
    if column in log.frame:
        rows, slots = logged_candidates(log)
        q_log = logged_predictions(log, column)[slots]
        off = np.abs(q[rows] - q_log) > AGREEMENT * np.maximum(1.0, np.abs(q_log))
        if off.any():
            raise ColumnError(
                column,
                "the logged item's prediction differs from its candidate's in the candidate "
                "table (the two columns must come from the same model)",
                labels[rows[off]],
                table="candidate rows",
            )
    return q


def residuals(log: InteractionLog, column: str) -> np.ndarray:
    """r_i - q̂(x_i, a_i) per log row, once per chunk (the same for every policy)."""
    return log.memo(_residuals, column)


def _residuals(log: InteractionLog, column: str) -> np.ndarray:
    return log.column("reward") - logged_predictions(log, column)


@dataclass(frozen=True)
class RewardPredictions:
    """Out-of-fold predicted rewards.

    ``rows``: one per row of the data (a log's rows in the log's order, a
    frame's rows in the frame's order); ``candidates``: one per candidate row
    (the log's candidate table in its order, or the frame given), or None;
    ``folds``: the fold of each row (trajectories never straddle folds), or
    None for predictions made elsewhere.
    """

    rows: np.ndarray
    candidates: np.ndarray | None
    folds: np.ndarray | None = None

    def attach(self, log: InteractionLog, column: str = DEFAULT_COLUMN) -> InteractionLog:
        """The log with the predictions as ``column`` in its rows and its candidate table."""
        check_column(column)
        if not isinstance(log, InteractionLog):
            raise OffevalError(f"attach needs an InteractionLog, got {type(log).__name__}")
        for what, values in (("rows", self.rows), ("candidates", self.candidates)):
            if values is not None and np.ndim(values) != 1:
                raise OffevalError(
                    f"RewardPredictions.{what} must hold one prediction per {what[:-1]} (a 1-D "
                    f"array), got shape {np.shape(values)}"
                )
        if len(self.rows) != log.n_rows:
            raise OffevalError(
                f"{len(self.rows)} row predictions for a log of {log.n_rows} rows: attach them "
                "to the log they were fitted on"
            )
        frame = log.frame.assign(**{column: self.rows})
        cands = log.candidates
        if cands is not None:
            if self.candidates is None or len(self.candidates) != len(cands):
                given = "none" if self.candidates is None else len(self.candidates)
                raise OffevalError(
                    f"the log's candidate table has {len(cands)} rows but the predictions have "
                    f"{given} for candidates: fit the model on this log"
                )
            cands = cands.assign(**{column: self.candidates})
        return InteractionLog(
            frame, log.source_rows, log.unit_starts, cands, log.candidate_source_rows
        )


def check_folds(folds: int, n_trajectories: int) -> int:
    """Folds: a whole number from 2 to the number of trajectories."""
    folds = check_whole(folds, "folds", low=2)
    if folds > n_trajectories:
        raise ConfigurationError(
            f"folds={folds} is more than the {n_trajectories} trajectories of the data"
        )
    return folds


def trajectory_folds(
    trajectories: np.ndarray, folds: int, seed: int, candidates: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray | None]:
    """A fold for each row, the same for every row of a trajectory (balanced, seeded).

    With ``candidates`` (their trajectory ids), also the fold of each
    candidate row; -1 where the trajectory is not among the rows'.
    """
    check_whole(seed, "seed", low=0)
    codes, uniques = pd.factorize(trajectories)
    check_folds(folds, len(uniques))
    of_unique = np.empty(len(uniques), dtype=np.int64)
    of_unique[np.random.default_rng(seed).permutation(len(uniques))] = (
        np.arange(len(uniques)) % folds
    )
    if candidates is None:
        return of_unique[codes], None
    where = pd.Index(uniques).get_indexer(candidates)
    return of_unique[codes], np.where(where >= 0, of_unique[where], -1)


def item_position_means(
    log: InteractionLog, *, folds: int = 2, prior: float = 20.0, seed: int = 0
) -> RewardPredictions:
    """A reward model without scikit-learn: each (item, position)'s mean reward, cross-fitted.

    On the other folds' rows, q̂(a, k) = (sum of rewards of item a at position
    k + prior * m_k) / (count + prior), where m_k is position k's mean reward:
    items seen rarely are shrunk towards their position's mean. It ignores the
    context, so it is a deliberately rough model (the conformance kit's).
    """
    prior = check_number(prior, "prior", low=0, low_open=True, finite=False)
    check_whole(seed, "seed", low=0)
    if not isinstance(log, InteractionLog):
        raise OffevalError(f"item_position_means needs an InteractionLog, got {type(log).__name__}")
    frame = log.frame
    n = log.n_rows
    cands = log.candidates
    items = frame["item"].to_numpy()
    positions = frame["position"].to_numpy()
    if cands is not None:
        items = np.concatenate([items, cands["item"].to_numpy()])
        positions = np.concatenate([positions, cands["position"].to_numpy()])
    item_code, item_values = pd.factorize(items)
    pos_code, pos_values = pd.factorize(positions)
    n_pos = len(pos_values)
    key = item_code.astype(np.int64) * n_pos + pos_code
    fold, _ = trajectory_folds(frame["trajectory"].to_numpy(), folds, seed)
    row_fold = fold
    if cands is not None:
        row_fold = np.concatenate([fold, fold[cands["slot"].to_numpy()]])
    reward = log.column("reward")
    predictions = np.empty(len(key))
    for k in range(folds):
        train = np.flatnonzero(fold != k)
        pos_sum = np.bincount(pos_code[train], reward[train], minlength=n_pos)
        pos_count = np.bincount(pos_code[train], minlength=n_pos)
        overall = reward[train].mean()
        with np.errstate(invalid="ignore", divide="ignore"):
            pos_mean = np.where(pos_count > 0, pos_sum / pos_count, overall)
        cells = len(item_values) * n_pos
        sums = np.bincount(key[train], reward[train], minlength=cells)
        counts = np.bincount(key[train], minlength=cells)
        held = row_fold == k
        pk = pos_mean[pos_code[held]]
        predictions[held] = (sums[key[held]] + prior * pk) / (counts[key[held]] + prior)
    return RewardPredictions(predictions[:n], None if cands is None else predictions[n:], fold)


def attach_kit_model(log: InteractionLog, column: str) -> InteractionLog:
    """The conformance kit's reward model (:func:`item_position_means`) attached as ``column``."""
    return item_position_means(log).attach(log, column)


def logged_candidates(log: InteractionLog) -> tuple[np.ndarray, np.ndarray]:
    """The candidate rows that list their slot's logged item, and those slots; once per chunk."""
    return log.memo(_logged_candidates)


def _logged_candidates(log: InteractionLog) -> tuple[np.ndarray, np.ndarray]:
    cands = log.require_candidates()
    items, logged = cands["item"].to_numpy(), log.frame["item"].to_numpy()
    k = log.regular_slots
    if k is not None:  # a broadcast comparison instead of gathering each row's logged item
        rows = np.flatnonzero(items.reshape(-1, k) == logged[:, None])
        return rows, rows // k
    slot = cands["slot"].to_numpy()
    rows = np.flatnonzero(items == logged[slot])
    return rows, slot[rows]
