"""How likely each system is to rank 1st, 2nd, 3rd, ... when the offline evaluation is re-drawn.

Gruson et al. (WSDM 2019, section 3.3): one log evaluates every candidate, so
the estimates are strongly correlated. Draw r ~ N(mu, Sigma) many times from
the evaluation's values and their covariance (already divided by n), rank
each draw, and count. Singular covariances work (a baseline fixed at 1 has
zero variance): draws use an eigen factorisation. Twins (systems whose values
are always equal: same value, zero variance of their difference) are drawn
once and share their ranks equally. Only the top ranks asked for are sorted
in each draw (a partial sort), so 1,000 systems x 100,000 draws take
seconds, in batches whose memory does not grow with the number of draws.
Expected ranks are exact: E[rank_i] = 1 + sum_j P(X_j > X_i), each term a
normal probability of a paired difference.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.sparse.csgraph import connected_components
from scipy.stats import norm

from offeval import ConfigurationError, EstimatorSummary, Evaluation, OffevalError
from offeval.plugin import check_whole
from offeval.stats import PSD_TOLERANCE, SYMMETRY_TOLERANCE

#: Draw-by-system cells held at once.
BATCH_CELLS = 4_000_000
#: Twins: equal values, and a variance of their difference at most this share of the sum of
#: their variances (the rounding of a covariance computed in double precision). Treating a
#: pair this close as twins moves no probability: equal values and a difference a million
#: times narrower than either system make them swap only with each other, half the time each.
TIE_TOLERANCE = 1e-12
#: The draws' product is taken in single precision when its rounding (about sqrt(k) x 6e-8 of
#: the systems' noise, for k systems) stays this many times below the noise of every pair's
#: difference: then it moves no probability by more than about 1e-4.
SINGLE_PRECISION_MARGIN = 1_000


@dataclass(frozen=True)
class RankDistribution:
    """P(rank r) for the top ``depth`` ranks of every system, with expected ranks.

    ``probabilities`` is (systems, depth): column r - 1 is P(ranked r-th);
    ``expected_rank`` is exact (not simulated). Every probability's Monte
    Carlo standard error is sqrt(p (1 - p) / draws). ``mean`` and
    ``covariance`` are the values drawn from (oriented so that higher is
    better); ranks beyond ``depth`` are tabulated from the same draws on demand.
    """

    names: list[str]
    probabilities: np.ndarray
    expected_rank: np.ndarray
    draws: int
    seed: int
    mean: np.ndarray
    covariance: np.ndarray

    @property
    def depth(self) -> int:
        """How many top ranks were tabulated."""
        return self.probabilities.shape[1]

    def deeper(self, depth: int) -> RankDistribution:
        """The same draws (same seed and number) tabulated to ``depth`` ranks."""
        return _draw(self.names, self.mean, self.covariance, self.draws, self.seed, depth)

    def _first(self, count: int, what: str) -> np.ndarray:
        """The first ``count`` columns of P(rank), drawn deeper when ``count`` exceeds the depth."""
        count = check_whole(count, what, low=1, high=len(self.names))
        table = self.probabilities if count <= self.depth else self.deeper(count).probabilities
        return table[:, :count]

    def p_rank(self, rank: int) -> pd.Series:
        """P(ranked ``rank``-th) of every system (from deeper draws beyond ``depth``)."""
        p = self._first(rank, "rank")[:, -1]
        return pd.Series(p, index=self.names, name=f"p_rank_{rank}")

    @property
    def best(self) -> pd.Series:
        """P(ranked first) of every system."""
        return self.p_rank(1)

    def top(self, m: int) -> pd.Series:
        """P(among the top m) of every system (from deeper draws when m exceeds ``depth``)."""
        p = self._first(m, "m").sum(axis=1)
        return pd.Series(p, index=self.names, name=f"p_top_{m}")

    def se(self, probability) -> np.ndarray:
        """Monte Carlo standard error of probabilities estimated from these draws."""
        p = np.asarray(probability, dtype=float)
        return np.sqrt(p * (1 - p) / self.draws)

    def to_frame(self) -> pd.DataFrame:
        """One row per system: P(rank r) and its standard error for each rank, expected rank."""
        frame = pd.DataFrame(index=pd.Index(self.names, name="policy"))
        for r in range(self.depth):
            frame[f"p_rank_{r + 1}"] = self.probabilities[:, r]
            frame[f"se_rank_{r + 1}"] = self.se(self.probabilities[:, r])
        frame["expected_rank"] = self.expected_rank
        return frame


def not_finite(summary: EstimatorSummary) -> list[str]:
    """The policies whose value or covariance row is not finite: no rank can be drawn for them."""
    bad = ~(np.isfinite(summary.values) & np.isfinite(summary.covariance).all(axis=1))
    return [name for name, flag in zip(summary.policies, bad, strict=True) if flag]


def _array(name: str, value, ndim: int) -> np.ndarray:
    """``value`` as a float array of ``ndim`` dimensions, or an OffevalError naming ``name``."""
    what = "vector" if ndim == 1 else "matrix"
    try:
        array = np.asarray(value, dtype=float)
    except (TypeError, ValueError) as exc:
        raise OffevalError(f"{name} must be a {what} of numbers: {exc}") from None
    if array.ndim != ndim:
        raise OffevalError(f"{name} must be a {what} of numbers, got {array.ndim} dimensions")
    return array


def _inputs(source, estimator, baseline, names, covariance):
    """(names, values oriented so that higher is better, covariance) from any accepted source."""
    if isinstance(source, Evaluation):
        source = source.summary(estimator, baseline)
    elif estimator is not None or baseline is not None:
        raise ConfigurationError("estimator= and baseline= apply to an Evaluation only")
    if isinstance(source, EstimatorSummary):
        if names is not None or covariance is not None:
            raise ConfigurationError("names= and covariance= apply to a vector of values only")
        sign = 1.0 if source.higher_is_better else -1.0
        names, source, covariance = source.policies, sign * source.values, source.covariance
    elif names is None or covariance is None:
        raise OffevalError(
            "give an Evaluation, an EstimatorSummary, or values with names= and covariance="
        )
    elif isinstance(names, (str, bytes)):
        raise ConfigurationError(f"names must be a sequence of names, not one string {names!r}")
    names = list(names)
    index = pd.Index(names)
    if index.has_duplicates:
        raise OffevalError(
            f"names must be unique: {list(index[index.duplicated()].unique())} repeat"
        )
    mean, cov = _array("values", source, 1), _array("covariance", covariance, 2)
    k = len(names)
    if mean.shape != (k,) or cov.shape != (k, k):
        raise OffevalError(
            f"{k} names need {k} values and a {k}x{k} covariance, got {mean.shape} and {cov.shape}"
        )
    if np.abs(cov - cov.T).max(initial=0) > SYMMETRY_TOLERANCE * np.abs(cov).max(initial=0):
        raise OffevalError("covariance must be symmetric")
    return names, mean, cov


def rank_distribution(
    source,
    estimator: str | None = None,
    *,
    baseline: str | None = None,
    names: Sequence[str] | None = None,
    covariance=None,
    draws: int = 100_000,
    seed: int = 0,
    depth: int | None = None,
) -> RankDistribution:
    """Simulate the offline evaluation ``draws`` times and tabulate each system's rank.

    ``source`` is an :class:`offeval.Evaluation` (with ``estimator`` and an
    optional ``baseline``), an :class:`offeval.engine.summary.EstimatorSummary` (for
    instance loaded from ``summaries.json``), or a vector of values with
    (unique) ``names`` and their ``covariance``. Lower-is-better metrics are
    ranked by their negation. ``depth`` top ranks are tabulated (all of them
    up to 20 systems, else 3). Reproducible for a given ``seed``, whatever the
    batching.
    """
    names, mean, cov = _inputs(source, estimator, baseline, names, covariance)
    k = len(names)
    if not np.all(np.isfinite(mean)):
        raise OffevalError("values must be finite")
    if not np.all(np.isfinite(cov)):
        raise OffevalError("covariance must be finite")
    draws, seed = check_whole(draws, "draws", low=1), check_whole(seed, "seed", low=0)
    return _draw(names, mean, cov, draws, seed, (k if k <= 20 else 3) if depth is None else depth)


def _draw(
    names: list[str], mean: np.ndarray, cov: np.ndarray, draws: int, seed: int, depth: int
) -> RankDistribution:
    """Draw one representative of each class of twins; spread each class over its ranks."""
    depth = check_whole(depth, "depth", low=1, high=len(names))
    label, first, size = _twins(mean, cov)
    drawn = cov if len(first) == len(names) else cov[np.ix_(first, first)]
    values, vectors = np.linalg.eigh((drawn + drawn.T) / 2)
    if values.min() < -PSD_TOLERANCE * max(values.max(), 1e-300):
        raise OffevalError("the covariance is not positive semi-definite")
    # standard normals drawn in single precision (exact numbers, from a faster generator) times
    # the factor scaled to unit size (no overflow beyond 1e38, no underflow below 1e-38); the
    # product in single precision where its rounding is far below every pair's difference,
    # else in double (two nearly identical systems: a variance of their difference 1e-12 of
    # theirs); scaled back and added to the values in double
    root = vectors * np.sqrt(np.clip(values, 0, None))
    scale = float(np.abs(root).max()) or 1.0
    single = single_precision_suffices(drawn)
    factor = (root / scale).astype(np.float32 if single else np.float64).T
    classes, center = len(first), mean[first]
    rng = np.random.default_rng(seed)
    counts = np.zeros(classes * depth, dtype=np.int64)
    batch = max(1, BATCH_CELLS // classes)
    done = 0
    while done < draws:
        m = min(batch, draws - done)
        noise = rng.standard_normal((m, classes), dtype=np.float32)
        product = noise @ factor if single else noise.astype(np.float64) @ factor
        sample = center + scale * product.astype(np.float64, copy=False)
        top = _top(sample, min(depth, classes))
        if classes < len(names):
            top = _spread(top, size, depth)
        counts += np.bincount(
            top.ravel() * depth + np.tile(np.arange(depth), m), minlength=classes * depth
        )
        done += m
    probabilities = (counts.reshape(classes, depth) / size[:, None])[label] / draws
    return RankDistribution(names, probabilities, expected_ranks(mean, cov), draws, seed, mean, cov)


def single_precision_suffices(cov: np.ndarray) -> bool:
    """Whether a single-precision product of the draws keeps every pair's difference exact
    enough (see :data:`SINGLE_PRECISION_MARGIN`): sd(X_i - X_j) against sd(X_i) + sd(X_j)."""
    sd = np.sqrt(np.clip(np.diag(cov), 0, None))
    spread = np.sqrt(np.clip(sd[:, None] ** 2 + sd[None, :] ** 2 - 2 * cov, 0, None))
    both = sd[:, None] + sd[None, :]
    np.fill_diagonal(both, 0.0)  # a system against itself
    rounding = SINGLE_PRECISION_MARGIN * np.sqrt(len(sd)) * np.finfo(np.float32).eps
    return bool(np.all(spread >= rounding * both))


def _twins(mean: np.ndarray, cov: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Classes of systems whose values are always equal: (class of each, first member, size).

    Only systems sharing their value with another can be twins, so the pairwise
    test runs on those alone (none, usually).
    """
    k = len(mean)
    _, group, count = np.unique(mean, return_inverse=True, return_counts=True)
    shared = np.flatnonzero(count[group] > 1)
    var = np.diag(cov)[shared]
    scale = var[:, None] + var[None, :]
    tied = (group[shared, None] == group[None, shared]) & (
        np.abs(scale - 2 * cov[np.ix_(shared, shared)]) <= TIE_TOLERANCE * scale
    )
    classes, component = connected_components(tied, directed=False)
    lowest = np.full(classes, k)
    np.minimum.at(lowest, component, shared)
    label = np.arange(k)
    label[shared] = lowest[component]  # a class is named by its first member
    first, label = np.unique(label, return_inverse=True)
    return label, first, np.bincount(label)


def _top(sample: np.ndarray, depth: int) -> np.ndarray:
    """(draws, depth) indices of the highest values of each draw, best first."""
    k = sample.shape[1]
    if depth < k:
        part = np.argpartition(-sample, depth - 1, axis=1)[:, :depth]
    else:
        part = np.broadcast_to(np.arange(k), sample.shape)
    order = np.argsort(-np.take_along_axis(sample, part, axis=1), axis=1, kind="stable")
    return np.take_along_axis(part, order, axis=1)


def _spread(top: np.ndarray, size: np.ndarray, depth: int) -> np.ndarray:
    """(draws, depth): the class holding each of the top ``depth`` system ranks.

    ``top`` lists each draw's best classes, best first; a class of ``size``
    twins holds that many consecutive ranks.
    """
    draws = len(top)
    ends = np.cumsum(size[top], axis=1)  # the last rank (from 1) each class holds
    offset = np.arange(draws)[:, None] * (int(size.sum()) + 1)  # rows never overlap
    rank = np.searchsorted((ends + offset).ravel(), (np.arange(depth) + offset).ravel(), "right")
    return top.ravel()[rank].reshape(draws, depth)


def expected_ranks(mean: np.ndarray, covariance: np.ndarray) -> np.ndarray:
    """Exact E[rank] = 1 + sum over others of P(the other is higher); ties count a half."""
    diff = mean[None, :] - mean[:, None]  # [i, j]: mu_j - mu_i
    var = np.diag(covariance)[:, None] + np.diag(covariance)[None, :] - 2 * covariance
    sd = np.sqrt(np.maximum(var, 0.0))
    with np.errstate(divide="ignore", invalid="ignore"):
        higher = np.where(
            sd > 0, norm.cdf(diff / sd), np.where(diff > 0, 1.0, np.where(diff == 0, 0.5, 0.0))
        )
    np.fill_diagonal(higher, 0.0)
    return 1.0 + higher.sum(axis=1)
