"""Reward models cross-fitted by trajectory, as columns for the reward-model estimators.

:func:`fit_reward_model` cross-fits any scikit-learn regressor (or
classifier: its expected reward is used) and :func:`item_position_means` is a
scikit-learn-free baseline. Both split the data by trajectory, so no row's
prediction comes from a model that saw its own trajectory, and both return
:class:`RewardPredictions`, which :meth:`RewardPredictions.attach` writes into
a log (and its candidate table) under the column the estimators read.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from offeval.plugin import (
    ColumnError,
    ConfigurationError,
    InteractionLog,
    OffevalError,
    RowError,
    plain,
)
from offeval_rewardmodels.columns import DEFAULT_COLUMN, check_column

#: Features: column names (of the rows and of the candidate rows) or a function of a table.
Features = Sequence[str] | Callable[[pd.DataFrame], np.ndarray]


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


def _sklearn():
    try:
        import sklearn.base
    except ImportError:  # pragma: no cover - scikit-learn is installed in the test environment
        raise OffevalError(
            "fit_reward_model needs scikit-learn: pip install offeval[sklearn] "
            "(or compute the predictions yourself and add them as columns)"
        ) from None
    return sklearn.base


def check_folds(folds: int, n_trajectories: int) -> int:
    """Folds: a whole number from 2 to the number of trajectories."""
    if isinstance(folds, bool) or not isinstance(folds, (int, np.integer)) or folds < 2:
        raise ConfigurationError(f"folds must be a whole number >= 2, got {plain(folds)!r}")
    if folds > n_trajectories:
        raise ConfigurationError(
            f"folds={folds} is more than the {n_trajectories} trajectories of the data"
        )
    return int(folds)


def check_seed(seed: int) -> int:
    """A random seed: a whole number >= 0."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ConfigurationError(f"seed must be a whole number >= 0, got {plain(seed)!r}")
    return int(seed)


def trajectory_folds(
    trajectories: np.ndarray, folds: int, seed: int, candidates: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray | None]:
    """A fold for each row, the same for every row of a trajectory (balanced, seeded).

    With ``candidates`` (their trajectory ids), also the fold of each
    candidate row; -1 where the trajectory is not among the rows'.
    """
    check_seed(seed)
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


def _tables(data, candidates) -> tuple[pd.DataFrame, np.ndarray, pd.DataFrame | None, np.ndarray]:
    """Rows and their labels; candidate rows (context added for a log) and their labels."""
    if isinstance(data, InteractionLog):
        if candidates is not None:
            raise OffevalError(
                "candidates= is for a frame; a log's candidates come from its candidate table"
            )
        cands = data.candidates
        if cands is not None:
            cands = cands.assign(context=data.frame["context"].to_numpy()[cands["slot"]])
        return data.frame, data.source_rows, cands, data.candidate_source_rows
    if not isinstance(data, pd.DataFrame):
        raise OffevalError(f"expected an InteractionLog or a DataFrame, got {type(data).__name__}")
    for column in ("trajectory", "reward"):
        if column not in data:
            raise ColumnError(column, "fit_reward_model needs this column in the data")
    missing = data["trajectory"].isna().to_numpy()
    if missing.any():
        raise ColumnError(
            "trajectory", "must not be missing (it decides the folds)", data.index[missing]
        )
    if candidates is not None:
        if not isinstance(candidates, pd.DataFrame):
            raise OffevalError(f"candidates must be a DataFrame, got {type(candidates).__name__}")
        if "trajectory" not in candidates:
            raise ColumnError("trajectory", "the candidate frame needs this column")
        return data, data.index.to_numpy(), candidates, candidates.index.to_numpy()
    return data, data.index.to_numpy(), None, np.empty(0)


def _matrix(features: Features, rows: pd.DataFrame, labels: np.ndarray, table: str) -> np.ndarray:
    """The feature matrix of a table: its named columns, or what the function returns."""
    if callable(features):
        x = np.asarray(features(rows), dtype=float)
        x = x[:, None] if x.ndim == 1 else x
        if x.ndim != 2 or x.shape[0] != len(rows):
            raise OffevalError(
                f"features({table}) returned shape {x.shape} for {len(rows)} {table}: "
                "it must give one row of features per row"
            )
    else:
        for column in features:
            if column not in rows:
                raise ColumnError(column, f"a feature of the reward model, absent from the {table}")
        try:
            x = rows[list(features)].to_numpy(dtype=float)
        except (TypeError, ValueError):
            raise OffevalError(
                f"features {list(features)} must be numeric in the {table}: encode categories, "
                "or give features as a function of the table"
            ) from None
    bad = ~np.isfinite(x).all(axis=1)
    if bad.any():
        raise RowError("features", "must be finite numbers", labels[bad], table)
    return x


def _check_features(features: Features) -> None:
    if callable(features):
        return
    if (
        isinstance(features, (str, bytes))
        or not isinstance(features, Sequence)
        or not features
        or not all(isinstance(f, str) for f in features)
    ):
        raise ConfigurationError(
            f"features must be a list of column names or a function of a table, got {features!r}"
        )


def _is_classifier(base, model) -> bool:
    try:
        return bool(base.is_classifier(model))
    except AttributeError:  # not a scikit-learn estimator: a classifier if it acts like one
        return hasattr(model, "predict_proba") and hasattr(model, "classes_")


def _predict(base, model, x: np.ndarray) -> np.ndarray:
    """Predicted reward: a regressor's prediction, a classifier's expected class value."""
    if _is_classifier(base, model):
        classes = np.asarray(model.classes_, dtype=float)
        return model.predict_proba(x) @ classes
    return np.asarray(model.predict(x), dtype=float).reshape(-1)


def fit_reward_model(
    data: InteractionLog | pd.DataFrame,
    regressor,
    features: Features,
    *,
    candidates: pd.DataFrame | None = None,
    folds: int = 5,
    seed: int = 0,
) -> RewardPredictions:
    """Cross-fit a scikit-learn regressor of the reward by trajectory: out-of-fold predictions.

    ``data`` is an :class:`offeval.InteractionLog` or a DataFrame with
    ``trajectory`` and ``reward`` columns. Trajectories are split into
    ``folds`` folds at random (``seed``); a copy of ``regressor`` (sklearn's
    ``clone``) is fitted on all folds but one and predicts that fold's rows
    and the candidates of its trajectories. A classifier's prediction is its
    expected reward, ``predict_proba @ classes_`` (P(click) for 0/1 rewards).

    ``features`` are column names, read from the rows and from the candidate
    rows, or a function ``features(table) -> (n, d) array`` called on both.
    Candidate rows are the log's candidate table (trajectory, position, item,
    propensity, slot, any columns it was built with, and the slot's
    ``context``), or the frame ``candidates=`` when ``data`` is a frame. A
    candidate must get the same features as the log row of the same item at
    the same slot, so that both get the same prediction (the estimators check).

    Attach the result with ``fit_reward_model(...).attach(log)``.
    """
    base = _sklearn()
    if not (
        callable(getattr(regressor, "fit", None)) and callable(getattr(regressor, "predict", None))
    ):
        raise ConfigurationError(f"regressor must have fit() and predict(), got {regressor!r}")
    _check_features(features)
    check_seed(seed)
    rows, labels, cands, cand_labels = _tables(data, candidates)
    reward = pd.to_numeric(rows["reward"], errors="coerce").to_numpy(dtype=float)
    if not np.isfinite(reward).all():
        raise ColumnError("reward", "must be finite numbers", labels[~np.isfinite(reward)])
    x = _matrix(features, rows, labels, "rows")
    x_cands = None if cands is None else _matrix(features, cands, cand_labels, "candidate rows")
    fold, cand_fold = trajectory_folds(
        rows["trajectory"].to_numpy(),
        folds,
        seed,
        None if cands is None else cands["trajectory"].to_numpy(),
    )
    if cand_fold is not None and (cand_fold < 0).any():
        raise ColumnError(
            "trajectory",
            "candidate rows of trajectories absent from the data",
            cand_labels[cand_fold < 0],
            table="candidate rows",
        )
    out = np.empty(len(rows))
    cand_out = None if cands is None else np.empty(len(cands))
    for k in range(folds):
        model = base.clone(regressor, safe=False)
        held = fold == k
        model.fit(x[~held], reward[~held])
        out[held] = _predict(base, model, x[held])
        if cand_out is not None and (cand_fold == k).any():
            cand_out[cand_fold == k] = _predict(base, model, x_cands[cand_fold == k])
    return RewardPredictions(out, cand_out, fold)


def item_position_means(
    log: InteractionLog, *, folds: int = 2, prior: float = 20.0, seed: int = 0
) -> RewardPredictions:
    """A reward model without scikit-learn: each (item, position)'s mean reward, cross-fitted.

    On the other folds' rows, q̂(a, k) = (sum of rewards of item a at position
    k + prior * m_k) / (count + prior), where m_k is position k's mean reward:
    items seen rarely are shrunk towards their position's mean. It ignores the
    context, so it is a deliberately rough model (the conformance kit's).
    """
    number = (int, float, np.integer, np.floating)
    if isinstance(prior, bool) or not isinstance(prior, number) or not prior > 0:
        raise ConfigurationError(f"prior must be a positive number, got {plain(prior)!r}")
    check_seed(seed)
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
