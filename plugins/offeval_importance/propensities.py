"""Logging propensities estimated by a classifier, cross-fitted by trajectory (obp's
PropensityScoreEstimator)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from offeval import InteractionLog, OffevalError, RowError
from offeval.plugin import check_whole
from offeval_importance.classifiers import (
    check_calibration,
    check_classifier,
    check_features,
    feature_matrix,
    fold_rows,
    new_classifier,
    position_folds,
)


def estimate_propensities(
    log: InteractionLog,
    classifier: Any = "logistic",
    features: str | Sequence[str] = "",
    *,
    folds: int | Sequence[int] = 5,
    seed: int = 0,
    calibration_cv: int = 1,
) -> InteractionLog:
    """The log with its ``propensity`` column (and its candidate table's) estimated by a classifier.

    At each position, a copy of ``classifier`` learns P(item | features) on
    the trajectories of all folds but one and predicts the held-out fold's:
    a row's propensity is the predicted probability of its logged item, a
    candidate's that of its item (0 for an item the classifier never saw
    there). ``classifier`` is ``"logistic"`` (scikit-learn's
    ``LogisticRegression(max_iter=1000)``) or any scikit-learn classifier;
    ``features`` are numeric columns of the log (``""``: none, so each
    position's item frequencies); ``folds`` is a number of folds (trajectories
    assigned by a hash of their id and ``seed``) or one fold per row (the same
    within a trajectory); ``calibration_cv`` > 1 wraps the classifier in
    ``CalibratedClassifierCV(cv=calibration_cv)``. obp's PropensityScoreEstimator
    calibrates by default (``calibration_cv=2``), splits rows with ``KFold``
    rather than trajectories, and defaults to no cross-fitting (``n_folds=1``).

    Caveat: estimators then treat the estimated propensities as known, so
    their standard errors and intervals ignore the propensity model's error
    (and its bias, where the classifier is misspecified).
    """
    if not isinstance(log, InteractionLog):
        raise OffevalError(f"estimate_propensities needs an InteractionLog, got {log!r}")
    check_classifier(classifier)
    names = check_features(features)
    check_whole(seed, "seed", low=0)
    check_calibration(calibration_cv)
    frame, labels = log.frame, log.source_rows
    fold, k = fold_rows(folds, frame["trajectory"].to_numpy(), seed, labels)
    x = feature_matrix(frame, names, labels)
    items, positions = frame["item"].to_numpy(), frame["position"].to_numpy()
    cands = log.candidates
    slot = None if cands is None else cands["slot"].to_numpy()
    out = np.empty(log.n_rows)
    cand_out = None if cands is None else np.zeros(len(cands))
    for held, train in position_folds(positions, fold, k, labels.__getitem__, "propensities"):
        model = new_classifier(classifier, calibration_cv, "estimate_propensities")
        model.fit(x[train], items[train])
        proba = model.predict_proba(x[held])
        out[held] = _of_items(proba, model.classes_, items[held])
        if cand_out is not None:
            mine = held[slot]
            where = np.cumsum(held) - 1  # each held row's index in proba
            cand_out[mine] = _of_items(
                proba[where[slot[mine]]], model.classes_, cands["item"].to_numpy()[mine]
            )
    unseen = out <= 0
    if unseen.any():
        raise RowError(
            "propensity",
            "the classifier gives the logged item probability 0 (an item never logged at its "
            "position in the other folds): use fewer folds, or more data",
            labels[unseen],
        )
    frame = frame.assign(propensity=out)
    if cands is not None:
        cands = cands.assign(propensity=cand_out)
    return InteractionLog(frame, log.source_rows, log.unit_starts, cands, log.candidate_source_rows)


def _of_items(proba: np.ndarray, classes: np.ndarray, items: np.ndarray) -> np.ndarray:
    """Each row's predicted probability of its item (0 for an item not among the classes)."""
    codes = pd.Index(classes).get_indexer(items)
    known = codes >= 0
    out = np.zeros(len(items))
    out[known] = proba[np.flatnonzero(known), codes[known]]
    return out
