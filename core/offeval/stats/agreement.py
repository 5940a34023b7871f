"""Agreement of two measures over many models: Pearson, Kendall and inverted pairs.

Given each model's value under two measures (say DCG@100 and nDCG@100),
:func:`agreement` answers how far ranking the models by one measure agrees
with ranking them by the other, as Jeunen, Potapov and Ustimenko (2024,
Appendix A) do:

- Pearson's r between the models' means under the two measures;
- Kendall's tau-b between them, scipy's ``kendalltau`` default: concordant
  minus discordant pairs over the square root of (pairs the first measure
  does not tie) x (pairs the second does not tie);
- the share of inverted pairs: of the model pairs the first measure orders,
  the share the second orders the other way (a pair the second measure ties
  is not inverted; a pair the first ties is left out).

With per-user values (two users x models matrices), each statistic also gets
a percentile bootstrap interval over users: a resample draws as many users as
there are, with replacement (resample r draws ``rng.integers(0, users, users)``
from ``numpy.random.default_rng(seed)``, in order), recomputes every model's
mean under both measures on the same users, and recomputes the three
statistics. The resamples are computed as a (resamples x users) count matrix
times the (users x models) value matrices, in blocks of :data:`BLOCK_CELLS`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from offeval.errors import ConfigurationError, describe_rows
from offeval.validation import check_level, check_whole

#: Resample x user (or resample x model pair) cells held in memory at once.
BLOCK_CELLS = 4_000_000
#: The statistics, in the order of :meth:`Agreement.table`'s rows.
STATISTICS = ("pearson", "kendall", "inverted_share")
#: Resamples drawn when users x models values are given and ``resamples`` is not.
DEFAULT_RESAMPLES = 1_000


@dataclass(frozen=True)
class Agreement:
    """How two measures agree on a set of models, with bootstrap intervals over users.

    ``means`` has one row per model and one column per measure; ``pearson``,
    ``kendall`` (tau-b) and ``inverted_share`` are computed on it, with
    ``ordered_pairs`` the pairs the first measure orders and
    ``inverted_pairs`` those the second orders the other way. ``pearson_p``
    and ``kendall_p`` are scipy's two-sided p-values on the means (they treat
    the models as a sample). ``intervals`` has one row per statistic (``low``,
    ``high``, at ``level``) when per-user values were given, else it is None;
    ``undefined`` counts, per statistic, the resamples where it had no value
    (a constant measure over the models), left out of the interval.
    """

    measures: tuple[str, str]
    means: pd.DataFrame
    pearson: float
    kendall: float
    inverted_share: float
    ordered_pairs: int
    inverted_pairs: int
    pearson_p: float
    kendall_p: float
    users: int | None = None
    resamples: int = 0
    level: float = 0.95
    intervals: pd.DataFrame | None = None
    undefined: dict[str, int] | None = None

    @property
    def models(self) -> list:
        """The models' names, in the order of :attr:`means`."""
        return list(self.means.index)

    def table(self) -> pd.DataFrame:
        """One row per statistic: its value and, when bootstrapped, its interval."""
        table = pd.DataFrame(
            {"value": [getattr(self, s) for s in STATISTICS]}, index=pd.Index(STATISTICS)
        )
        table.index.name = "statistic"
        if self.intervals is not None:
            table = table.join(self.intervals)
        return table

    def pairs(self) -> pd.DataFrame:
        """Every model pair: each measure's difference (first model minus second), and
        whether the second measure inverts the first's order."""
        i, j = np.triu_indices(len(self.means), k=1)
        a, b = (self.means[m].to_numpy() for m in self.measures)
        da, db = a[i] - a[j], b[i] - b[j]
        names = np.asarray(self.means.index, dtype=object)
        return pd.DataFrame(
            {
                "model": names[i],
                "other": names[j],
                self.measures[0]: da,
                self.measures[1]: db,
                "inverted": np.sign(da) * np.sign(db) < 0,
            }
        )

    def __repr__(self) -> str:
        def show(name: str) -> str:
            text = f"{name}={getattr(self, name):.3f}"
            if self.intervals is not None:
                low, high = self.intervals.loc[name]
                text += f" [{low:.3f}, {high:.3f}]"
            return text

        first, second = self.measures
        where = (
            f", {self.users} users, {self.resamples} resamples"
            if self.intervals is not None
            else ""
        )
        return (
            f"Agreement({first} vs {second} over {len(self.means)} models{where}: "
            + ", ".join(show(s) for s in STATISTICS)
            + ")"
        )


def pair_statistics(first: np.ndarray, second: np.ndarray) -> dict[str, np.ndarray]:
    """The three statistics for each row of two (rows x models) arrays of means, at once.

    Returns ``pearson``, ``kendall`` (tau-b), ``inverted_share``, and the counts
    ``ordered_pairs`` and ``inverted_pairs``, one value per row; a statistic
    without a value (a row constant under a measure) is NaN.
    """
    x, y = np.atleast_2d(first), np.atleast_2d(second)
    xc = x - x.mean(axis=1, keepdims=True)
    yc = y - y.mean(axis=1, keepdims=True)
    i, j = np.triu_indices(x.shape[1], k=1)
    sx, sy = np.sign(x[:, i] - x[:, j]), np.sign(y[:, i] - y[:, j])
    concordance = sx * sy
    ordered = np.count_nonzero(sx, axis=1)
    inverted = np.count_nonzero(concordance < 0, axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        pearson = (xc * yc).sum(axis=1) / np.sqrt((xc**2).sum(axis=1) * (yc**2).sum(axis=1))
        kendall = concordance.sum(axis=1) / np.sqrt(ordered * np.count_nonzero(sy, axis=1))
        share = inverted / ordered
    return {
        "pearson": np.clip(pearson, -1.0, 1.0),
        "kendall": kendall,
        "inverted_share": np.where(ordered > 0, share, np.nan),
        "ordered_pairs": ordered,
        "inverted_pairs": inverted,
    }


def _matrix(values, name: str) -> tuple[np.ndarray, pd.Index | None, pd.Index | None]:
    """Values as a float array, with the frame's index and columns when it is one."""
    if isinstance(values, pd.Series):
        return values.to_numpy(dtype=float), None, values.index
    if isinstance(values, pd.DataFrame):
        try:
            array = values.to_numpy(dtype=float)
        except (TypeError, ValueError) as error:
            raise ConfigurationError(f"{name}: the values must be numbers ({error})") from None
        return array, values.index, values.columns
    try:
        return np.asarray(values, dtype=float), None, None
    except (TypeError, ValueError) as error:
        raise ConfigurationError(f"{name}: the values must be numbers ({error})") from None


def _aligned(first, second, models):
    """Both inputs as arrays of one shape, the second reordered to the first's labels."""
    a, users_a, models_a = _matrix(first, "first")
    b, users_b, models_b = _matrix(second, "second")
    if a.ndim not in (1, 2) or a.ndim != b.ndim:
        raise ConfigurationError(
            "first and second must both be per-model means (1-D) or both users x models "
            f"values (2-D), got {a.ndim}-D and {b.ndim}-D"
        )
    if models_a is not None and models_b is not None:
        if set(models_a) != set(models_b) or models_a.has_duplicates:
            extra = describe_rows(list(models_a.symmetric_difference(models_b)))
            raise ConfigurationError(
                f"second: its models must be those of first, once each (differing: {extra})"
            )
        b = b[..., models_b.get_indexer(models_a)]
    if a.ndim == 2 and users_a is not None and users_b is not None:
        if set(users_a) != set(users_b) or users_a.has_duplicates:
            extra = describe_rows(list(users_a.symmetric_difference(users_b)))
            raise ConfigurationError(
                f"second: its users (rows) must be those of first, once each (differing: {extra})"
            )
        b = b[users_b.get_indexer(users_a)]
    if a.shape != b.shape:
        raise ConfigurationError(
            f"second: shape {b.shape} differs from first's {a.shape} (users x models, or models)"
        )
    names = models_a if models_a is not None else models_b
    if models is not None:
        names = pd.Index(list(models))
        if len(names) != a.shape[-1]:
            raise ConfigurationError(
                f"models: {len(names)} names for {a.shape[-1]} models (columns of first)"
            )
    elif names is None:
        names = pd.RangeIndex(a.shape[-1])
    if a.shape[-1] < 3:
        raise ConfigurationError(f"agreement needs at least 3 models, got {a.shape[-1]}")
    for array, name in ((a, "first"), (b, "second")):
        bad = np.isinf(array).any(axis=0) if array.ndim == 2 else np.isinf(array)
        if array.ndim == 1:
            bad |= np.isnan(array)
        else:
            bad |= np.isnan(array).all(axis=0)
        if bad.any():
            what = "infinite or missing values" if array.ndim == 1 else "infinite values or no user"
            raise ConfigurationError(
                f"{name}: models {describe_rows(list(names[bad]))} have {what}"
            )
    return a, b, pd.Index(names), (users_a, models_a)


def agreement(
    first,
    second,
    *,
    measures: tuple[str, str] = ("first", "second"),
    models=None,
    weights=None,
    resamples: int | None = None,
    level: float = 0.95,
    seed: int = 0,
) -> Agreement:
    """How two measures agree over models: Pearson, Kendall's tau-b, inverted pairs.

    ``first`` and ``second`` are either each model's mean under the two
    measures (1-D: no interval), or each user's value under them (users x
    models arrays or frames, NaN where a model has no value for a user: a
    model's mean is over the users with a value). Frames are aligned on their
    labels (columns: models, index: users); ``models`` names the models of
    plain arrays. ``weights``, a pair (first's, second's; either None for 1),
    gives each user's weight in a model's mean as users x models values: a
    ratio of sums over users, such as post-normalised nDCG (sum of DCG over sum
    of ideal DCG), is its per-user ratio weighted by the denominator. With
    per-user values, ``resamples`` bootstrap resamples of
    users (default :data:`DEFAULT_RESAMPLES`; 0 for none) give percentile
    intervals at ``level``; ``seed`` fixes them.
    """
    level = check_level(level, error=ConfigurationError)
    seed = check_whole(seed, "seed", low=0)
    if resamples is not None:
        resamples = check_whole(resamples, "resamples", low=0)
    if not (isinstance(measures, tuple | list) and len(measures) == 2):
        raise ConfigurationError(f"measures must be two names, got {measures!r}")
    if measures[0] == measures[1]:
        raise ConfigurationError(f"measures must be two different names, got {measures!r}")
    a, b, names, labels = _aligned(first, second, models)
    if a.ndim == 1:
        if resamples:
            raise ConfigurationError(
                "resamples: per-model means give no interval; give users x models values "
                "to bootstrap over users"
            )
        if weights is not None:
            raise ConfigurationError("weights: per-model means take no weights")
        means_a, means_b, users, resamples = a, b, None, 0
    else:
        wa, wb = _weights(weights, a, b, labels, names)
        a, b = np.where(wa > 0, a, 0.0), np.where(wb > 0, b, 0.0)
        with np.errstate(invalid="ignore", divide="ignore"):
            means_a = (wa * a).sum(axis=0) / wa.sum(axis=0)
            means_b = (wb * b).sum(axis=0) / wb.sum(axis=0)
        for mean, name in ((means_a, "first"), (means_b, "second")):
            if np.isnan(mean).any():
                raise ConfigurationError(
                    f"{name}: models {describe_rows(list(names[np.isnan(mean)]))} have no user "
                    "with a positive weight"
                )
        users = a.shape[0]
        resamples = DEFAULT_RESAMPLES if resamples is None else resamples
    point = pair_statistics(means_a, means_b)
    with np.errstate(invalid="ignore", divide="ignore"):
        pearson_p = (
            stats.pearsonr(means_a, means_b).pvalue
            if np.ptp(means_a) and np.ptp(means_b)
            else np.nan
        )
        kendall_p = stats.kendalltau(means_a, means_b).pvalue
    intervals = undefined = None
    if resamples:
        draws = _bootstrap(a, b, wa, wb, resamples, seed)
        tail = (1 - level) / 2
        rows = {}
        undefined = {}
        for name in STATISTICS:
            values = draws[name]
            known = values[~np.isnan(values)]
            undefined[name] = int(values.size - known.size)
            rows[name] = np.quantile(known, [tail, 1 - tail]) if known.size else [np.nan, np.nan]
        intervals = pd.DataFrame.from_dict(rows, orient="index", columns=["low", "high"])
        intervals.index.name = "statistic"
    return Agreement(
        measures=(str(measures[0]), str(measures[1])),
        means=pd.DataFrame({measures[0]: means_a, measures[1]: means_b}, index=names),
        pearson=float(point["pearson"][0]),
        kendall=float(point["kendall"][0]),
        inverted_share=float(point["inverted_share"][0]),
        ordered_pairs=int(point["ordered_pairs"][0]),
        inverted_pairs=int(point["inverted_pairs"][0]),
        pearson_p=float(pearson_p),
        kendall_p=float(kendall_p),
        users=users,
        resamples=resamples,
        level=level,
        intervals=intervals,
        undefined=undefined,
    )


def _weights(weights, a: np.ndarray, b: np.ndarray, labels, names: pd.Index):
    """Each user's weight in each model's mean under both measures: the given weights
    (aligned like the values), 1 by default, and 0 where the value is NaN."""
    given = (None, None) if weights is None else weights
    if not (isinstance(given, tuple | list) and len(given) == 2):
        raise ConfigurationError("weights must be a pair (first's, second's), each may be None")
    users, models = labels
    out = []
    for w, values, name in zip(given, (a, b), ("first", "second"), strict=True):
        if w is None:
            w = np.ones_like(values)
        elif isinstance(w, pd.DataFrame) and users is not None and models is not None:
            w = w.reindex(index=users, columns=models).to_numpy(dtype=float)
        else:
            w = np.asarray(w, dtype=float)
        if w.shape != values.shape:
            raise ConfigurationError(
                f"weights of {name}: shape {w.shape} differs from the values' {values.shape}"
            )
        known = ~np.isnan(values)
        bad = known & ~(np.isfinite(w) & (w >= 0))
        if bad.any():
            raise ConfigurationError(
                f"weights of {name}: models {describe_rows(list(names[bad.any(axis=0)]))} "
                "have negative, infinite or missing weights for users with a value"
            )
        out.append(np.where(known, w, 0.0))
    return out[0], out[1]


def _bootstrap(
    a: np.ndarray, b: np.ndarray, wa: np.ndarray, wb: np.ndarray, resamples: int, seed: int
) -> dict[str, np.ndarray]:
    """The three statistics on each of ``resamples`` resamples of the users (rows):
    each model's mean is sum(count * weight * value) / sum(count * weight)."""
    n, m = a.shape
    rng = np.random.default_rng(seed)
    filled_a, filled_b = wa * a, wb * b
    weights_a, weights_b = wa, wb
    block = max(1, BLOCK_CELLS // max(n, m * (m - 1) // 2, 1))
    out = {name: np.empty(resamples) for name in STATISTICS}
    for start in range(0, resamples, block):
        size = min(block, resamples - start)
        draws = rng.integers(0, n, size=(size, n))
        offsets = (np.arange(size) * n)[:, None]
        counts = np.bincount((draws + offsets).ravel(), minlength=size * n).reshape(size, n)
        counts = counts.astype(float)
        with np.errstate(invalid="ignore", divide="ignore"):
            means_a = (counts @ filled_a) / (counts @ weights_a)
            means_b = (counts @ filled_b) / (counts @ weights_b)
        part = pair_statistics(means_a, means_b)
        lost = np.isnan(means_a).any(axis=1) | np.isnan(means_b).any(axis=1)
        for name in STATISTICS:
            out[name][start : start + size] = np.where(lost, np.nan, part[name])
    return out
