"""Balanced IPS (Sondhi, Arbour and Dimmery 2020): importance weights learnt by a classifier
that tells the logged (x, a) from (x, a ~ target), so the logging propensities are not needed."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from offeval import (
    BaseEstimator,
    ColumnError,
    ConfigurationError,
    Contribution,
    OffevalWarning,
    PolicyView,
    RowError,
)
from offeval.plugin import check_whole
from offeval.stats import Linearisation, Tally, ratio_of_means
from offeval_importance.classifiers import (
    DENSE_CELLS,
    canonical_order,
    check_calibration,
    check_classifier,
    check_features,
    feature_matrix,
    hashed_folds,
    hashed_uniforms,
    new_classifier,
    position_folds,
    sklearn,
)
from offeval_importance.weights import check_cap, weight_diagnostics

INF = float("inf")
#: What ``weights`` replaces by the target policy's name.
POLICY = "{policy}"


class BalancedIPS(BaseEstimator):
    """Balanced IPS: sum r w / sum w, weights w learnt by a classifier, no propensities needed.
    w = min(cap, p / (1 - p)), p a classifier's probability that (x, a) comes from the
    target rather than the logger (Sondhi et al. 2020; obp's b-ipw, whose lambda_ is cap,
    default inf as obp's). Unlike obp it fits the classifier itself (obp takes the weights
    of its ImportanceWeightEstimator), on 5 folds of trajectories (obp: none, or KFold over
    rounds) without calibration (obp: calibration_cv=2); ``weights=COLUMN`` takes given
    weights, as obp does.

    For each slot of the log, the classifier is shown the logged item (label 0)
    and one item drawn from the target's probabilities over the slot's
    candidates (label 1), with the log columns ``features`` (``"x0+x1"``, or
    a list; ``""``: none) and the item (one-hot); one model per position,
    as obp fits. Folds and draws are functions of each trajectory's id and
    ``seed``. The model is fitted within each chunk the engine reads (whole
    trajectories; the first chunk of a log has 20,000 rows): estimates
    depend on the chunking. ``classifier`` is ``"logistic"`` (scikit-learn's
    ``LogisticRegression(max_iter=1000)``) or a scikit-learn classifier
    (``calibration_cv`` > 1 wraps it in ``CalibratedClassifierCV``). The
    standard error treats the weights as known: it ignores the classifier's
    error. The estimator is consistent only where the classifier is well
    specified, so it promises nothing.

    ``weights`` names a log column of weights already estimated (obp's
    ``estimated_importance_weights``); ``{policy}`` in it stands for the
    target's name (``weights="w_{policy}"`` reads ``w_new`` for policy
    ``new``). Then nothing is fitted, and neither candidates nor
    scikit-learn are needed.
    """

    name = "balanced_ips"
    estimand = "reward_per_impression"
    tags = {"linear_in_reward": True}

    def __init__(
        self,
        features: str | Sequence[str] = "",
        classifier: Any = "logistic",
        folds: int = 5,
        seed: int = 0,
        cap: float = INF,
        calibration_cv: int = 1,
        weights: str | None = None,
    ):
        check_features(features)
        check_classifier(classifier)
        check_whole(folds, "folds", low=2)
        check_whole(seed, "seed", low=0)
        check_cap(cap)
        check_calibration(calibration_cv)
        if weights is not None and (not isinstance(weights, str) or not weights):
            raise ConfigurationError(f"weights must name a column of the log, got {weights!r}")
        self.features = features
        self.classifier = classifier
        self.folds = folds
        self.seed = seed
        self.cap = cap
        self.calibration_cv = calibration_cv
        self.weights = weights

    @property
    def requires(self) -> tuple[str, ...]:
        """The candidate table and the feature columns; or the weights' column, when given
        (with ``{policy}`` in it: the columns starting with what precedes it)."""
        if self.weights is not None:
            if POLICY not in self.weights:
                return (self.weights,)
            prefix = self.weights.split(POLICY)[0]
            return (f"{prefix}*",) if prefix else ()
        return ("candidates", *check_features(self.features))

    @property
    def expected_failed_checks(self) -> dict[str, str]:
        """Fitted per chunk, the weights depend on the chunking (not when given)."""
        if self.weights is not None:
            return {}
        return {
            "check_chunking_invariance": "the classifier is cross-fitted within each chunk of "
            "the log, so other chunks give other weights",
            "check_unit_order_invariance": "the classifier is cross-fitted within each chunk, "
            "and the order of the trajectories decides which share the first chunk (20,000 "
            "rows); within a chunk their order does not matter",
        }

    def contribute(self, view: PolicyView) -> Contribution:
        """Columns: r * w and w (w the capped estimated weights); weight tallies."""
        if self.weights is not None:
            raw = self._given(view)
            tally = _tally(view, raw, float(self.cap))
        else:
            raw, without = self._fitted(view)
            tally = _tally(view, raw, float(self.cap))
            tally.count("slots_without_target_mass", without)
        capped = np.minimum(raw, float(self.cap))
        columns = {"rw": view.log.column("reward") * capped, "w": capped}
        return Contribution(columns, tally=tally)

    def combine(self, stats) -> Linearisation:
        """Ratio of the two column means (delta-method standard error, weights held fixed)."""
        return ratio_of_means(stats, "rw", "w")

    def diagnose(self, tally: Tally) -> dict[str, float]:
        """ESS, mean and largest estimated weight, share clipped.

        The mean of estimated odds need not be 1 (the estimate is self-normalised):
        it is reported, without the warning a mean far from 1 gives for propensities.
        """
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", OffevalWarning)
            return weight_diagnostics(tally)

    def _given(self, view: PolicyView) -> np.ndarray:
        name = getattr(view.policy, "name", type(view.policy).__name__)
        column = self.weights.replace(POLICY, str(name))
        values = pd.to_numeric(pd.Series(view.log.column(column)), errors="coerce").to_numpy(float)
        bad = ~(np.isfinite(values) & (values >= 0))
        if bad.any():
            raise ColumnError(
                column, "estimated weights must be finite numbers >= 0", view.log.source_rows[bad]
            )
        return values

    def _fitted(self, view: PolicyView) -> tuple[np.ndarray, int]:
        """Cross-fitted weights of the chunk's rows, and how many slots drew no candidate."""
        sklearn(f"{self.name} (without weights=COLUMN)")
        log = view.log
        cands = log.require_candidates()
        frame = log.frame
        trajectory, position = frame["trajectory"].to_numpy(), frame["position"].to_numpy()
        drawn = _draws(view, hashed_uniforms(trajectory, position, self.seed))
        codes, uniques = pd.factorize(np.concatenate([frame["item"], cands["item"]]))
        logged, candidate = codes[: log.n_rows], codes[log.n_rows :]
        sampled = np.where(drawn >= 0, candidate[np.maximum(drawn, 0)], -1)
        # the fit sees the rows in an order that does not depend on the trajectories' order
        order = canonical_order(trajectory, position)
        x = feature_matrix(frame, check_features(self.features), log.source_rows)[order]
        logged, sampled, position = logged[order], sampled[order], position[order]
        trajectory = trajectory[order]
        fold = hashed_folds(trajectory, self.folds, self.seed)
        out = np.empty(log.n_rows)
        splits = position_folds(
            position,
            fold,
            self.folds,
            lambda held: log.source_rows[np.sort(order[held])],
            f"{self.name}'s weights",
            " in this chunk",  # weights are fitted chunk by chunk
        )
        for held, train in splits:
            drew = train & (sampled >= 0)
            design = _design(
                np.concatenate([x[train], x[drew]]),
                np.concatenate([logged[train], sampled[drew]]),
                len(uniques),
            )
            y = np.r_[np.zeros(train.sum()), np.ones(drew.sum())]
            model = new_classifier(self.classifier, self.calibration_cv, self.name)
            model.fit(design, y)
            p = model.predict_proba(_design(x[held], logged[held], len(uniques)))
            p = p[:, np.flatnonzero(model.classes_ == 1)[0]]
            with np.errstate(divide="ignore"):
                out[held] = p / (1 - p)
        weights = np.empty(log.n_rows)
        weights[order] = out
        if self.cap == INF and not np.isfinite(weights).all():
            raise RowError(
                f"{self.name}",
                "the classifier is certain these rows come from the target (infinite weight): "
                "give a cap, or regularise the classifier",
                log.source_rows[~np.isfinite(weights)],
            )
        return weights, int(np.count_nonzero(drawn < 0))


def _draws(view: PolicyView, uniforms: np.ndarray) -> np.ndarray:
    """For each slot, the candidate row drawn from the target's probabilities over the slot's
    candidates (inverse CDF at the slot's uniform); -1 where they have no mass."""
    cands = view.log.candidates
    slot = cands["slot"].to_numpy()
    n = view.log.n_rows
    pi = view.candidate_probabilities()
    cum = np.cumsum(pi)
    total = np.bincount(slot, weights=pi, minlength=n)
    first = np.searchsorted(slot, np.arange(n))
    last = np.searchsorted(slot, np.arange(n), side="right") - 1
    before = np.where(first > 0, cum[np.maximum(first - 1, 0)], 0.0)
    drawn = np.searchsorted(cum, before + uniforms * total, side="right")
    drawn = np.minimum(drawn, last)  # rounding at the slot's end
    return np.where(total > 0, drawn, -1)


def _design(x: np.ndarray, items: np.ndarray, n_items: int):
    """Features followed by the items' one-hot columns (sparse when large)."""
    if len(x) * n_items <= DENSE_CELLS:
        onehot = np.zeros((len(x), n_items))
        onehot[np.arange(len(x)), items] = 1.0
        return np.hstack([x, onehot])
    from scipy import sparse

    onehot = sparse.csr_matrix(
        (np.ones(len(x)), (np.arange(len(x)), items)), shape=(len(x), n_items)
    )
    return sparse.hstack([sparse.csr_matrix(x), onehot], format="csr")


def _tally(view: PolicyView, raw: np.ndarray, cap: float) -> Tally:
    """The weight tally :func:`weight_diagnostics` reads, of the estimated weights."""
    log = view.log
    tally = Tally()
    tally.add("rows", raw.size)
    tally.add("sum_w", raw.sum())
    tally.add("sum_w2", raw @ raw)
    tally.count("clipped", np.count_nonzero(raw > cap))
    tally.maximum("max_weight", raw.max(initial=0.0))
    per_unit = np.add.reduceat(raw, log.unit_starts)
    rows = np.diff(np.r_[log.unit_starts, log.n_rows]).astype(float)
    tally.add("sum_W2", per_unit @ per_unit)
    tally.add("sum_WN", per_unit @ rows)
    tally.add("sum_N2", rows @ rows)
    tally.add("weight_units", log.n_units)
    return tally
