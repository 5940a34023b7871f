"""A scikit-learn reward model cross-fitted by trajectory, as columns for the estimators.

:func:`fit_reward_model` cross-fits any scikit-learn regressor (or
classifier: its expected reward is used). It splits the data by trajectory
(the plugin API's ``rewardmodel.trajectory_folds``), so no row's prediction
comes from a model that saw its own trajectory, and returns
``RewardPredictions``, whose ``attach`` writes them into a log (and its
candidate table) under the column the estimators read; the plugin API's
``rewardmodel.item_position_means`` is the scikit-learn-free baseline.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

from offeval import ColumnError, ConfigurationError, InteractionLog, OffevalError, RowError
from offeval.plugin import check_whole
from offeval_rewardmodels import rewardmodel

#: Features: column names (of the rows and of the candidate rows) or a function of a table.
Features = Sequence[str] | Callable[[pd.DataFrame], np.ndarray]


def _sklearn():
    try:
        import sklearn.base
    except ImportError:  # pragma: no cover - scikit-learn is installed in the test environment
        raise OffevalError(
            "fit_reward_model needs scikit-learn: pip install offeval[sklearn] "
            "(or compute the predictions yourself and add them as columns)"
        ) from None
    return sklearn.base


def _tables(
    data, candidates, slot_columns: Sequence[str] = ()
) -> tuple[pd.DataFrame, np.ndarray, pd.DataFrame | None, np.ndarray]:
    """Rows and their labels; candidate rows and their labels. A log's candidate rows get
    the context and each of ``slot_columns`` they lack from their slot's log row."""
    if isinstance(data, InteractionLog):
        if candidates is not None:
            raise OffevalError(
                "candidates= is for a frame; a log's candidates come from its candidate table"
            )
        cands = data.candidates
        if cands is not None:
            slot = cands["slot"].to_numpy()
            lacking = [c for c in ("context", *slot_columns) if c not in cands and c in data.frame]
            cands = cands.assign(**{c: data.frame[c].to_numpy()[slot] for c in lacking})
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


def _one_hot(columns: Sequence[str], tables: list[pd.DataFrame | None]) -> list:
    """Sparse one-hot matrices of the ``columns`` of each table, their categories (the
    values of every table) shared; None for a table that is None."""
    from scipy import sparse

    given = [t for t in tables if t is not None]
    sizes = np.cumsum([0, *(len(t) for t in given)])
    blocks = []
    for column in columns:
        for t, name in zip(given, ("rows", "candidate rows"), strict=False):
            if column not in t:
                raise ColumnError(column, f"a categorical feature, absent from the {name}")
        codes, uniques = pd.factorize(pd.concat([t[column] for t in given], ignore_index=True))
        if (codes < 0).any():
            raise ColumnError(column, "a categorical feature must not be missing")
        n = len(codes)
        blocks.append(sparse.csr_matrix((np.ones(n), (np.arange(n), codes)), (n, len(uniques))))
    both = sparse.hstack(blocks, format="csr")
    out = iter([both[a:b] for a, b in zip(sizes[:-1], sizes[1:], strict=True)])
    return [None if t is None else next(out) for t in tables]


def _design(features: Features, categorical: Sequence[str], rows, cands, labels, cand_labels):
    """The feature matrices of the rows and the candidate rows (None without candidates):
    the numeric ``features`` beside the one-hot ``categorical`` columns (sparse, then)."""
    x = None if _empty(features) else _matrix(features, rows, labels, "rows")
    x_cands = None
    if cands is not None and x is not None:
        x_cands = _matrix(features, cands, cand_labels, "candidate rows")
    if not categorical:
        return x, x_cands
    from scipy import sparse

    hot, hot_cands = _one_hot(categorical, [rows, cands])
    x = hot if x is None else sparse.hstack([x, hot], format="csr")
    if hot_cands is not None:
        x_cands = hot_cands if x_cands is None else sparse.hstack([x_cands, hot_cands], "csr")
    return x, x_cands


def _empty(features: Features) -> bool:
    return not callable(features) and len(features) == 0


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


def _check_features(features: Features, categorical: Sequence[str]) -> None:
    if not _names(categorical):
        raise ConfigurationError(f"categorical must be a list of column names, got {categorical!r}")
    if callable(features):
        return
    if not _names(features) or not (features or categorical):
        raise ConfigurationError(
            "features must be a list of column names (or categorical ones given) or a "
            f"function of a table, got {features!r}"
        )
    both = sorted(set(features) & set(categorical))
    if both:
        raise ConfigurationError(f"columns {both} are given both as features and as categorical")


def _names(columns) -> bool:
    """Whether ``columns`` is a list of column names (strings)."""
    return (
        not isinstance(columns, (str, bytes))
        and isinstance(columns, Sequence)
        and all(isinstance(f, str) for f in columns)
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


def _check_classes(reward: np.ndarray, fold: np.ndarray, folds: int, labels: np.ndarray) -> None:
    """Every fold's training rows (the other folds') hold two reward values or more, as a
    classifier needs; else a :class:`ColumnError` naming the rows of the fold whose values
    its training rows lack."""
    codes, values = pd.factorize(reward)
    counts = np.bincount(fold * len(values) + codes, minlength=folds * len(values))
    counts = counts.reshape(folds, len(values))
    training = counts.sum(axis=0) - counts  # (fold, value): its count outside the fold
    single = np.flatnonzero((training > 0).sum(axis=1) < 2)
    if not single.size:
        return
    k = single[0]
    seen = training[k] > 0
    shown = ", ".join(f"{v:g}" for v in values[seen])
    raise ColumnError(
        "reward",
        f"a classifier needs two reward values to learn from, but with folds={folds} the "
        f"training rows of one fold (the trajectories outside it) hold {shown} only: use fewer "
        "folds, or a regressor",
        labels[(fold == k) & ~seen[codes]],
    )


def fit_reward_model(
    data: InteractionLog | pd.DataFrame,
    regressor,
    features: Features,
    *,
    candidates: pd.DataFrame | None = None,
    folds: int = 5,
    seed: int = 0,
    categorical: Sequence[str] = (),
) -> rewardmodel.RewardPredictions:
    """Cross-fit a scikit-learn regressor of the reward by trajectory: out-of-fold predictions.

    ``data`` is an :class:`offeval.InteractionLog` or a DataFrame with
    ``trajectory`` and ``reward`` columns. Trajectories are split into
    ``folds`` folds at random (``seed``); a copy of ``regressor`` (sklearn's
    ``clone``) is fitted on all folds but one and predicts that fold's rows
    and the candidates of its trajectories. A classifier's prediction is its
    expected reward, ``predict_proba @ classes_`` (P(click) for 0/1 rewards);
    each fold's training rows must then hold two reward values or more.

    ``features`` are column names, read from the rows and from the candidate
    rows, or a function ``features(table) -> (n, d) array`` called on both;
    ``categorical`` columns (an item id, say) enter one-hot encoded, their
    categories the values of both tables (the matrices are then sparse).
    Candidate rows are the log's candidate table (trajectory, position, item,
    propensity, slot, any columns it was built with, and the slot's
    ``context``; a named feature it lacks is read from its slot's log row: a
    feature of the user or the session), or the frame ``candidates=`` when
    ``data`` is a frame. A candidate must get the same features as the log
    row of the same item at the same slot, so that both get the same
    prediction (the estimators check).

    Attach the result with ``fit_reward_model(...).attach(log)``.
    """
    base = _sklearn()
    if not (
        callable(getattr(regressor, "fit", None)) and callable(getattr(regressor, "predict", None))
    ):
        raise ConfigurationError(f"regressor must have fit() and predict(), got {regressor!r}")
    _check_features(features, categorical)
    check_whole(seed, "seed", low=0)
    named = [] if callable(features) else list(features)
    rows, labels, cands, cand_labels = _tables(data, candidates, [*named, *categorical])
    reward = pd.to_numeric(rows["reward"], errors="coerce").to_numpy(dtype=float)
    if not np.isfinite(reward).all():
        raise ColumnError("reward", "must be finite numbers", labels[~np.isfinite(reward)])
    x, x_cands = _design(features, categorical, rows, cands, labels, cand_labels)
    fold, cand_fold = rewardmodel.trajectory_folds(
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
    if _is_classifier(base, regressor):
        _check_classes(reward, fold, folds, labels)
    out = np.empty(len(rows))
    cand_out = None if cands is None else np.empty(len(cands))
    for k in range(folds):
        model = base.clone(regressor, safe=False)
        held = fold == k
        model.fit(x[~held], reward[~held])
        out[held] = _predict(base, model, x[held])
        if cand_out is not None and (cand_fold == k).any():
            cand_out[cand_fold == k] = _predict(base, model, x_cands[cand_fold == k])
    return rewardmodel.RewardPredictions(out, cand_out, fold)
