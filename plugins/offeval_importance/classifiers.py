"""What the classifier-based estimators share: scikit-learn classifiers by name or object,
feature matrices from log columns, folds and draws keyed by trajectory id, and the
cross-fitting splits (each position's folds).

Folds and draws are functions of each trajectory's id (and position) and the
seed, never of row order, so shuffling the trajectories of a log changes
neither.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np
import pandas as pd

from offeval import ColumnError, ConfigurationError, OffevalError, RowError
from offeval.plugin import check_choice, check_whole, hint

#: Classifiers offered by name (the command line's ``classifier=NAME``).
CLASSIFIERS = ("logistic",)
#: Most cells of a dense feature matrix; beyond, the items' one-hot columns are sparse.
DENSE_CELLS = 1 << 25

_MIX = np.uint64(0x9E3779B97F4A7C15)


def sklearn(what: str) -> Any:
    """scikit-learn's base module, or a one-line error saying how to install it."""
    try:
        import sklearn.base
    except ImportError:
        raise OffevalError(
            f"{what} fits a scikit-learn classifier: pip install offeval[sklearn]"
        ) from None
    return sklearn.base


def check_classifier(classifier: Any) -> Any:
    """A classifier's name (:data:`CLASSIFIERS`) or an object with fit() and predict_proba()."""
    if isinstance(classifier, str):
        return check_choice(classifier, "classifier", CLASSIFIERS)
    if not (
        callable(getattr(classifier, "fit", None))
        and callable(getattr(classifier, "predict_proba", None))
    ):
        raise ConfigurationError(
            f"classifier must be one of {list(CLASSIFIERS)} or have fit() and predict_proba(), "
            f"got {classifier!r}"
        )
    return classifier


def check_calibration(calibration_cv: int) -> int:
    """Folds of scikit-learn's CalibratedClassifierCV (obp's calibration_cv); <= 1: none."""
    return check_whole(calibration_cv, "calibration_cv", low=0)


def new_classifier(classifier: Any, calibration_cv: int, what: str) -> Any:
    """A fresh, unfitted copy of the classifier (calibrated when ``calibration_cv`` > 1)."""
    base = sklearn(what)
    if isinstance(classifier, str):
        from sklearn.linear_model import LogisticRegression

        model = LogisticRegression(max_iter=1000)
    else:
        model = base.clone(classifier, safe=False)
    if calibration_cv > 1:
        from sklearn.calibration import CalibratedClassifierCV

        model = CalibratedClassifierCV(model, cv=calibration_cv)
    return model


def check_features(features: str | Sequence[str]) -> tuple[str, ...]:
    """Feature columns: ``"x0+x1"`` or ``"[x0,x1]"`` (the command line's forms), a list of
    names, or ``""`` (none)."""
    if isinstance(features, str):
        text = features.strip()
        listed = text.startswith("[") and text.endswith("]")
        text = text[1:-1] if listed else text
        names = tuple(f.strip() for f in text.split("," if listed else "+")) if text else ()
    elif isinstance(features, Sequence) and all(isinstance(f, str) for f in features):
        names = tuple(features)
    else:
        names = None
    if names is None or any(not f for f in names):
        raise ConfigurationError(
            f"features must name columns of the log, as 'x0+x1' or a list of names, "
            f"got {features!r}"
        )
    return names


def feature_matrix(
    frame: pd.DataFrame, features: tuple[str, ...], labels: np.ndarray, table: str = "rows"
) -> np.ndarray:
    """The named columns as floats; a constant column when none is named."""
    if not features:
        return np.ones((len(frame), 1))
    for column in features:
        if column not in frame:
            raise ColumnError(
                column,
                "a feature of the classifier, absent from the log "
                + hint("", "(features=A+B names columns of the log file)"),
            )
    out = np.empty((len(frame), len(features)))
    for j, column in enumerate(features):
        values = pd.to_numeric(frame[column], errors="coerce").to_numpy(dtype=float)
        bad = ~np.isfinite(values)
        if bad.any():
            raise ColumnError(
                column,
                "a feature of the classifier must hold finite numbers",
                labels[bad],
                table=table,
            )
        out[:, j] = values
    return out


def _mix(x: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser: well-spread 64-bit values from any 64-bit keys."""
    with np.errstate(over="ignore"):
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return x ^ (x >> np.uint64(31))


def _keys(trajectories: np.ndarray, seed: int) -> np.ndarray:
    ids = pd.util.hash_array(np.asarray(trajectories).astype(object), categorize=False)
    with np.errstate(over="ignore"):
        return _mix(ids + np.uint64(seed) * _MIX)


def hashed_folds(trajectories: np.ndarray, folds: int, seed: int) -> np.ndarray:
    """A fold in 0..folds-1 for each row, a function of its trajectory id and ``seed``."""
    return (_keys(trajectories, seed) % np.uint64(folds)).astype(np.int64)


def canonical_order(trajectories: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """The rows ordered by a hash of their trajectory id, then position: the same order
    whatever order the trajectories came in (so a fit on them is the same)."""
    return np.lexsort((positions, _keys(trajectories, 0)))


def hashed_uniforms(trajectories: np.ndarray, positions: np.ndarray, seed: int) -> np.ndarray:
    """A uniform draw in [0, 1) for each (trajectory, position), a function of both and ``seed``."""
    with np.errstate(over="ignore"):
        keys = _keys(trajectories, seed) + np.asarray(positions).astype(np.uint64) * _MIX
    return (_mix(_mix(keys)) >> np.uint64(11)).astype(float) / float(1 << 53)


def fold_rows(
    folds: int | Sequence[int], trajectories: np.ndarray, seed: int, labels: np.ndarray
) -> tuple[np.ndarray, int]:
    """Each row's fold and the number of folds: hashed from ``folds`` (a whole number >= 2), or
    given per row (whole numbers, one per trajectory)."""
    if not isinstance(folds, (Sequence, np.ndarray)) or isinstance(folds, str):
        k = check_whole(folds, "folds", low=2)
        return hashed_folds(trajectories, k, seed), k
    given = np.asarray(folds)
    if given.shape != (len(trajectories),) or given.dtype.kind not in "iu":
        raise ConfigurationError(
            f"folds must be a whole number >= 2 or one whole number per log row "
            f"({len(trajectories)}), got an array of shape {given.shape} and type {given.dtype}"
        )
    codes, uniques = pd.factorize(given)
    spread = pd.Series(given).groupby(trajectories).nunique().to_numpy()
    if (spread > 1).any():
        split = pd.Series(given).groupby(trajectories).transform("nunique").to_numpy() > 1
        raise RowError("folds", "the rows of one trajectory must share a fold", labels[split])
    if len(uniques) < 2:
        raise ConfigurationError("folds must name at least two folds")
    return codes.astype(np.int64), len(uniques)


def position_folds(
    positions: np.ndarray,
    fold: np.ndarray,
    folds: int,
    labels: Callable[[np.ndarray], np.ndarray],
    what: str,
    where: str = "",
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """(held, train) row masks for cross-fitting within each position: every fold that has
    rows there is held out in turn and the position's other folds train. A position with
    rows in one fold only (``where``: in this chunk, say) is refused, naming its rows
    (``labels(held)``) and ``what`` the fit would learn."""
    for position in pd.unique(positions):
        at = positions == position
        for f in range(folds):
            held = at & (fold == f)
            if not held.any():
                continue
            train = at & (fold != f)
            if not train.any():
                raise RowError(
                    "folds",
                    f"position {position} has rows in one fold only{where}: no other fold to "
                    f"learn {what} from (use fewer folds)",
                    labels(held),
                )
            yield held, train
