"""Reward-model fitters for ``offeval evaluate --fit-reward-model``: scikit-learn models,
cross-fitted by trajectory (:func:`offeval_rewardmodels.fit_reward_model`).

Each is registered as a ``reward_model`` component and built from a spec::

    --fit-reward-model logistic:features=[age,hour],categorical=[item,position],folds=5

``features`` are numeric columns, ``categorical`` columns one-hot encoded
(an item id, a position), both named as in the log once mapped (a mapped
column by its role: ``item``, ``position``, ``context``); a column absent
from the candidate file is read from the slot's log row (a feature of the
user or the session). A list is written ``[a,b]`` or ``a+b``.
"""

from __future__ import annotations

from collections.abc import Sequence

from offeval import ColumnError, ConfigurationError, InteractionLog
from offeval.plugin import check_number, check_whole, hint
from offeval_rewardmodels import rewardmodel
from offeval_rewardmodels.fitting import _sklearn, fit_reward_model


def _columns(value, name: str) -> tuple[str, ...]:
    """Column names from a spec's value: a list, ``[a,b]``, ``a+b`` or one name."""
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("[") and text.endswith("]"):
            text = text[1:-1].replace(",", "+")
        value = [part.strip().strip("'\"") for part in text.split("+") if part.strip()]
    if (
        isinstance(value, (str, bytes))
        or not isinstance(value, Sequence)
        or not all(isinstance(v, str) and v for v in value)
    ):
        raise ConfigurationError(f"{name} must list column names, as [a,b] or a+b, got {value!r}")
    return tuple(value)


class _Fitter:
    """A scikit-learn model cross-fitted by trajectory; subclasses say which (``model``)."""

    name = ""

    def __init__(self, features=(), categorical=(), folds: int = 5, seed: int = 0):
        _sklearn()  # said when built: before the log is read
        self.features = _columns(features, "features")
        self.categorical = _columns(categorical, "categorical")
        if not (self.features or self.categorical):
            raise ConfigurationError(
                f"{self.name} needs features=[...] or categorical=[...]: the columns it "
                "predicts the reward from"
            )
        self.folds = check_whole(folds, "folds", low=2)
        self.seed = check_whole(seed, "seed", low=0)

    @property
    def columns(self) -> tuple[str, ...]:
        """The log columns it reads."""
        return (*self.features, *self.categorical)

    def model(self):
        """A fresh scikit-learn estimator."""
        raise NotImplementedError

    def fit(self, log: InteractionLog) -> rewardmodel.RewardPredictions:
        """Out-of-fold predictions of the log's rows and candidate rows."""
        return fit_reward_model(
            log,
            self.model(),
            self.features,
            categorical=self.categorical,
            folds=self.folds,
            seed=self.seed,
        )


def _ridge() -> str:
    """What to fit instead of a classifier when the rewards are not clicks, said in the
    reader's words (a class to build, or an option)."""
    return hint(
        "for other rewards use the ridge fitter (or fit_reward_model with a regressor)",
        "for other rewards use --fit-reward-model ridge:...",
    )


class Logistic(_Fitter):
    """Logistic regression of a 0/1 reward (scikit-learn's LogisticRegression), cross-fitted.

    The rewards must be 0 or 1, both present (``ridge`` fits other rewards);
    ``C`` > 0 is the inverse of the regularisation strength.
    """

    name = "logistic"

    def __init__(self, features=(), categorical=(), folds=5, seed=0, C: float = 1.0):
        super().__init__(features, categorical, folds, seed)
        self.C = check_number(C, "C", low=0, low_open=True)

    def model(self):
        """LogisticRegression(C, max_iter=1000)."""
        from sklearn.linear_model import LogisticRegression

        return LogisticRegression(C=self.C, max_iter=1000)

    def fit(self, log: InteractionLog) -> rewardmodel.RewardPredictions:
        """Out-of-fold predictions, once the rewards are seen to be clicks: 0 or 1, both."""
        reward = log.column("reward")
        other = (reward != 0) & (reward != 1)
        if other.any():
            raise ColumnError(
                "reward",
                f"logistic needs rewards of 0 or 1 (a classifier of clicks); {_ridge()}",
                log.source_rows[other],
            )
        if (reward == reward[0]).all():
            raise ColumnError(
                "reward",
                f"logistic needs both rewards, 0 and 1, to learn from, but every reward is "
                f"{reward[0]:g}; {_ridge()}",
            )
        return super().fit(log)


class Ridge(_Fitter):
    """Ridge regression of the reward (scikit-learn's Ridge), cross-fitted by trajectory.

    ``alpha`` >= 0 is the regularisation strength (0: least squares).
    """

    name = "ridge"

    def __init__(self, features=(), categorical=(), folds=5, seed=0, alpha: float = 1.0):
        super().__init__(features, categorical, folds, seed)
        self.alpha = check_number(alpha, "alpha", low=0)

    def model(self):
        """Ridge(alpha)."""
        from sklearn.linear_model import Ridge as SkRidge

        return SkRidge(alpha=self.alpha)


class Forest(_Fitter):
    """Random forest regression of the reward (scikit-learn's), cross-fitted by trajectory."""

    name = "forest"

    def __init__(
        self,
        features=(),
        categorical=(),
        folds=5,
        seed=0,
        n_estimators: int = 100,
        min_samples_leaf: int = 20,
    ):
        super().__init__(features, categorical, folds, seed)
        self.n_estimators = check_whole(n_estimators, "n_estimators", low=1)
        self.min_samples_leaf = check_whole(min_samples_leaf, "min_samples_leaf", low=1)

    def model(self):
        """RandomForestRegressor(n_estimators, min_samples_leaf, random_state=seed)."""
        from sklearn.ensemble import RandomForestRegressor

        return RandomForestRegressor(
            n_estimators=self.n_estimators,
            min_samples_leaf=self.min_samples_leaf,
            random_state=self.seed,
        )


#: The fitters, registered under their names.
FITTERS = (Logistic, Ridge, Forest)
