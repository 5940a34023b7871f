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
  is not inverted; a pair the first ties is left out). Two means tied within
  :data:`offeval.stats.ties.RTOL` (relative) are tied, so rounding noise
  never orders or inverts a pair.

With per-user values (two users x models matrices), each statistic also gets
a bootstrap interval over users: a resample draws as many users as there are,
with replacement (resample r draws ``rng.integers(0, users, users)`` from
``numpy.random.default_rng(seed)``, in order), recomputes every model's mean
under both measures on the same users, and recomputes the three statistics.
The resamples are computed as a (resamples x users) count matrix times the
(users x models) value matrices, in blocks of :data:`BLOCK_CELLS`.

The interval is BCa by default (Efron 1987; Efron and Tibshirani 1993, ch. 14),
not the plain percentile interval. These statistics are biased under
resampling when models are near-tied: their differences are then of the size
of the sampling noise, and the noise a resample adds is shared by the two
measures (the same users), which pushes resampled correlations towards +1. On
four random models the percentile interval of Pearson's r was [0.52, 1.00]
around a point of 0.41. BCa shifts the percentiles by the bias correction
``z0 = Phi^-1(share of resamples below the point + half the share equal to
it)`` and the acceleration ``a`` of the jackknife over users (each user left
out in turn, a model's mean is (sum - w_u x_u) / (total weight - w_u), in
closed form): the interval is the resamples' quantiles at
``Phi(z0 + (z0 + z) / (1 - a (z0 + z)))`` for ``z`` the normal quantiles of
the two tails. ``interval="percentile"`` gives the plain percentile interval.

Neither interval can hold the point once the point lies outside the central
``level`` share of the resamples (``|z0|`` at least the normal quantile of
the tail): the bootstrap is then too biased to correct, which happens with
models tied within their noise. The interval is then NaN, and an
:class:`~offeval.errors.OffevalWarning` names the statistic, its bias and
the resamples' central range. Every interval reported contains its point.
:meth:`Agreement.table` gives each statistic's ``bias``: the resamples' mean
minus the point.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import special, stats

from offeval import ConfigurationError, OffevalWarning
from offeval.plugin import check_choice, check_level, check_whole, describe_rows
from offeval.stats import tolerant_sign

#: Resample x user (or resample x model pair) cells held in memory at once.
BLOCK_CELLS = 4_000_000
#: The statistics, in the order of :meth:`Agreement.table`'s rows.
STATISTICS = ("pearson", "kendall", "inverted_share")
#: Resamples drawn when users x models values are given and ``resamples`` is not.
DEFAULT_RESAMPLES = 1_000
#: The bootstrap intervals :func:`agreement` computes (see the module docstring).
INTERVALS = ("bca", "percentile")


@dataclass(frozen=True)
class Agreement:
    """How two measures agree on a set of models, with bootstrap intervals over users.

    ``means`` has one row per model and one column per measure; ``pearson``,
    ``kendall`` (tau-b) and ``inverted_share`` are computed on it, with
    ``ordered_pairs`` the pairs the first measure orders and
    ``inverted_pairs`` those the second orders the other way. ``pearson_p``
    and ``kendall_p`` are scipy's two-sided p-values on the means (they treat
    the models as a sample). ``intervals`` has one row per statistic (``low``,
    ``high``, at ``level``, by the ``interval`` method; NaN where the bootstrap
    is too biased to give one; and ``bias``, the resamples' mean minus the
    point) when per-user values were given, else it is None; ``undefined``
    counts, per statistic, the resamples where it had no value (a constant
    measure over the models), left out of the interval.
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
    interval: str = "bca"
    intervals: pd.DataFrame | None = None
    undefined: dict[str, int] | None = None

    @property
    def models(self) -> list:
        """The models' names, in the order of :attr:`means`."""
        return list(self.means.index)

    def table(self) -> pd.DataFrame:
        """One row per statistic: its value and, when bootstrapped, its interval and the
        bootstrap's bias (resamples' mean minus the value)."""
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
        inverted = tolerant_sign(a[i], a[j]) * tolerant_sign(b[i], b[j]) < 0
        names = np.asarray(self.means.index, dtype=object)
        return pd.DataFrame(
            {
                "model": names[i],
                "other": names[j],
                self.measures[0]: da,
                self.measures[1]: db,
                "inverted": inverted,
            }
        )

    def __repr__(self) -> str:
        def show(name: str) -> str:
            text = f"{name}={getattr(self, name):.3f}"
            if self.intervals is not None:
                low, high = self.intervals.loc[name, ["low", "high"]]
                text += (
                    " [no interval: biased bootstrap]"
                    if np.isnan(low)
                    else f" [{low:.3f}, {high:.3f}]"
                )
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
    sx, sy = tolerant_sign(x[:, i], x[:, j]), tolerant_sign(y[:, i], y[:, j])
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
    interval: str = "bca",
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
    users (default :data:`DEFAULT_RESAMPLES`; 0 for none) give intervals at
    ``level``, BCa (``interval="bca"``, the default) or percentile
    (``"percentile"``); ``seed`` fixes them. A statistic whose point lies
    outside the central ``level`` share of its resamples (near-tied models)
    gets a NaN interval and an :class:`~offeval.errors.OffevalWarning` (see
    the module docstring).
    """
    level = check_level(level, error=ConfigurationError)
    check_choice(interval, "interval", INTERVALS)
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
        left_out = _jackknife(a, b, wa, wb) if interval == "bca" else None
        rows = {}
        undefined = {}
        biased = []
        for name in STATISTICS:
            values = draws[name]
            known = values[~np.isnan(values)]
            undefined[name] = int(values.size - known.size)
            value = float(point[name][0])
            accel = _acceleration(left_out[name]) if left_out is not None else None
            low, high, central = _interval(known, value, accel, level)
            bias = float(known.mean() - value) if known.size else np.nan
            if central is not None:
                biased.append(
                    f"{name} {value:.3g} (bias {bias:+.3g}; central {level:.0%} of the "
                    f"resamples [{central[0]:.3g}, {central[1]:.3g}])"
                )
            rows[name] = [low, high, bias]
        intervals = pd.DataFrame.from_dict(rows, orient="index", columns=["low", "high", "bias"])
        intervals.index.name = "statistic"
        if biased:
            warnings.warn(
                "agreement: no bootstrap interval for " + "; ".join(biased) + ": the point "
                "lies outside the resamples' central share, a bias no bootstrap interval "
                "corrects (models tied within their noise); the interval is NaN",
                OffevalWarning,
                stacklevel=2,
            )
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
        interval=interval,
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
    same_weights = np.array_equal(wa, wb)  # unweighted with the same users: one product
    block = max(1, BLOCK_CELLS // max(n, m * (m - 1) // 2, 1))
    out = {name: np.empty(resamples) for name in STATISTICS}
    for start in range(0, resamples, block):
        size = min(block, resamples - start)
        draws = rng.integers(0, n, size=(size, n))
        offsets = (np.arange(size) * n)[:, None]
        counts = np.bincount((draws + offsets).ravel(), minlength=size * n).reshape(size, n)
        counts = counts.astype(float)
        with np.errstate(invalid="ignore", divide="ignore"):
            total_a = counts @ wa
            total_b = total_a if same_weights else counts @ wb
            means_a = (counts @ filled_a) / total_a
            means_b = (counts @ filled_b) / total_b
        part = pair_statistics(means_a, means_b)
        lost = np.isnan(means_a).any(axis=1) | np.isnan(means_b).any(axis=1)
        for name in STATISTICS:
            out[name][start : start + size] = np.where(lost, np.nan, part[name])
    return out


def _jackknife(
    a: np.ndarray, b: np.ndarray, wa: np.ndarray, wb: np.ndarray
) -> dict[str, np.ndarray]:
    """The three statistics with each user (row) left out in turn: a model's mean is
    (sum(w x) - w_u x_u) / (sum(w) - w_u); NaN where a model has no weight left."""
    n, m = a.shape
    sum_a, sum_b = (wa * a).sum(axis=0), (wb * b).sum(axis=0)
    total_a, total_b = wa.sum(axis=0), wb.sum(axis=0)
    block = max(1, BLOCK_CELLS // max(m, m * (m - 1) // 2, 1))
    out = {name: np.empty(n) for name in STATISTICS}
    for start in range(0, n, block):
        rows = slice(start, start + block)
        with np.errstate(invalid="ignore", divide="ignore"):
            means_a = (sum_a - wa[rows] * a[rows]) / (total_a - wa[rows])
            means_b = (sum_b - wb[rows] * b[rows]) / (total_b - wb[rows])
        part = pair_statistics(means_a, means_b)
        lost = ~(np.isfinite(means_a).all(axis=1) & np.isfinite(means_b).all(axis=1))
        for name in STATISTICS:
            out[name][rows] = np.where(lost, np.nan, part[name])
    return out


def _acceleration(left_out: np.ndarray) -> float:
    """BCa's acceleration from the jackknife values: sum(d^3) / (6 sum(d^2)^1.5), d the
    jackknife mean minus each value (0 when they are all equal)."""
    known = left_out[~np.isnan(left_out)]
    if known.size < 2:
        return 0.0
    d = known.mean() - known
    scale = float((d**2).sum())
    return float((d**3).sum() / (6 * scale**1.5)) if scale > 0 else 0.0


def _interval(
    known: np.ndarray, value: float, accel: float | None, level: float
) -> tuple[float, float, tuple[float, float] | None]:
    """One statistic's interval from its resamples ``known`` (NaN left out): BCa with
    acceleration ``accel``, or the percentile interval when ``accel`` is None.

    Returns (low, high, None); or (NaN, NaN, central) when the point lies outside the
    central ``level`` share of the resamples (``|z0|`` at least the tail's normal
    quantile), where neither interval holds it (``central``: the resamples' quantiles at
    the two tails).
    """
    if not known.size or np.isnan(value):
        return np.nan, np.nan, None
    tail = (1 - level) / 2
    below = (np.count_nonzero(known < value) + np.count_nonzero(known == value) / 2) / known.size
    z0 = special.ndtri(below)
    z = special.ndtri(np.array([tail, 1 - tail]))
    shifted = z0 + z
    if accel is None:
        levels = np.array([tail, 1 - tail])
    else:
        levels = special.ndtr(z0 + shifted / (1 - accel * shifted))
    if not (abs(z0) < z[1] and (accel is None or (1 - accel * shifted > 0).all())):
        central = np.quantile(known, [tail, 1 - tail])
        return np.nan, np.nan, (float(central[0]), float(central[1]))
    low, high = np.quantile(known, levels)
    return float(low), float(high), None
