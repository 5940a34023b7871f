"""Per-user measure values of runs through offeval's statistics engine.

:func:`evaluate_results` takes each run's per-user values (one
:class:`~offeval_ir.metrics.MetricResult` per run, as
:func:`~offeval_ir.runs.compute_measures` gives them) to the engine, as the
off-policy estimators are, with no log: the users are the units of a
:class:`~offeval.UnitTable`, each run a system the engine folds
(:class:`RunValues`) and each measure an estimator (:class:`MeasureMean`)
whose value is the aggregate over the users it averages. So every mean gets a
standard error and interval, and runs are compared pairwise
(:meth:`RunEvaluation.compare`) with the same delta-method grid (and
multiple-testing corrections) as off-policy estimates, on paired users.

Runs judged in memory (:mod:`offeval_ir.runs`) and on Dask
(:mod:`offeval_ir.distributed`) both end here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from offeval import (
    BaseEstimator,
    ConfigurationError,
    Contribution,
    Evaluation,
    OffevalError,
    UnitTable,
    evaluate,
)
from offeval.plugin import check_choice, check_number, check_whole, describe_rows, hint
from offeval.stats import (
    Linearisation,
    PairwiseComparison,
    adjusted_p_values,
    interval,
    pairwise_grid,
    ratio_of_means,
)
from offeval_ir.choices import TESTS
from offeval_ir.conventions import Conventions
from offeval_ir.measures import value_range
from offeval_ir.metrics import EXCLUSION_REASONS, MIN_GEO_MEAN, MetricResult

#: The column of :meth:`RunEvaluation.compare` each test decides ``significant`` by.
TEST_P = {"t": "p_adjusted", "randomization": "p_randomization_adjusted", "tukey": "p_tukey"}


#: Randomisation-test resamples held in memory at once, as resamples x users.
BLOCK_CELLS = 20_000_000


def check_alpha(alpha: float) -> float:
    """The significance level as a float in (0, 1): p < alpha is significant."""
    return check_number(alpha, "alpha", low=0, high=1, low_open=True, high_open=True)


def check_randomization(resamples: int, alpha: float, correction: str | None, pairs: int) -> None:
    """Refuse a randomisation test that cannot find any pair significant.

    Its smallest p-value is 1 / (resamples + 1); corrected over the ``pairs``
    of a measure (Holm over 10 pairs multiplies it by 10) it must be below
    ``alpha``, since significant means p < alpha. The message names the
    least count that can.
    """
    resamples = check_whole(resamples, "resamples", low=1)

    def smallest(count: int) -> float:
        return float(adjusted_p_values(np.full(pairs, 1 / (count + 1)), alpha, correction).min())

    if smallest(resamples) < alpha:
        return
    high = resamples
    while smallest(high) >= alpha:
        high *= 2
    low = high // 2
    while high - low > 1:  # the least count whose smallest corrected p is below alpha
        middle = (low + high) // 2
        low, high = (low, middle) if smallest(middle) < alpha else (middle, high)
    corrected = f", corrected by {correction} over {pairs} pairs," if correction else ""
    option = hint("resamples", "--resamples")
    raise ConfigurationError(
        f"{option} {resamples}: the randomisation test's smallest p-value, "
        f"1/{resamples + 1}{corrected} is {smallest(resamples):.3g}, not below alpha {alpha}, "
        f"so no pair could be significant; give {option} {high} at least"
    )


def randomization_p(diff: np.ndarray, resamples: int, rng: np.random.Generator) -> float:
    """Two-sided Fisher randomisation (sign-flip) test of a zero mean difference."""
    observed = abs(diff.mean())
    extreme = 0
    step = max(1, BLOCK_CELLS // max(diff.size, 1))
    for start in range(0, resamples, step):
        m = min(step, resamples - start)
        signs = rng.integers(0, 2, (m, diff.size), dtype=np.int8) * 2 - 1
        extreme += int((np.abs(signs @ diff) / diff.size >= observed - 1e-12).sum())
    return (extreme + 1) / (resamples + 1)


class RunValues:
    """A run as the engine folds it: a system (the engine's policy role, by name) whose
    estimators read its users' measure values.

    ``values[u, j]`` is user u's value of measure j (NaN when left out) and
    ``reasons[u, j]`` the code of why (see :data:`EXCLUSION_REASONS`);
    ``aggregation`` names the measures not aggregated by a mean, and
    ``parts[measure]`` holds a ratio measure's per-user numerator and
    denominator (see :data:`~offeval_ir.metrics.AGGREGATIONS`).
    """

    def __init__(
        self,
        name: str,
        values: np.ndarray,
        reasons: np.ndarray,
        measures: list[str],
        aggregation: Mapping[str, str] | None = None,
        parts: Mapping[str, tuple[np.ndarray, np.ndarray]] | None = None,
    ):
        self.name = name
        self.values, self.reasons = values, reasons
        self.columns = {m: j for j, m in enumerate(measures)}
        self.aggregation = dict(aggregation or {})
        self.parts = dict(parts or {})

    def aggregate(self, measure: str) -> str:
        """How the measure's per-user values aggregate (``mean`` unless stated)."""
        return self.aggregation.get(measure, "mean")

    def pseudo_values(self, measure: str, used: np.ndarray) -> np.ndarray:
        """Per user in ``used`` (a mask over all users), a value whose mean over them is
        the measure's aggregate and whose deviations are its delta-method influence:
        the values themselves for a mean (and a sum, reported per query); for a ratio
        R = sum num / sum den, R + (num - R den) / mean(den); for a geometric mean
        G = exp(mean log v), G + G (log v - mean log v). Paired tests and covariances
        on common users read these."""
        values, _ = self.measure(slice(None), measure)
        how = self.aggregate(measure)
        if how in ("mean", "sum") or not used.any():
            return values[used]
        if how == "geometric":
            logs = np.log(np.maximum(values[used], MIN_GEO_MEAN))
            g = np.exp(logs.mean())
            return g + g * (logs - logs.mean())
        num, den = (part[used] for part in self.parts[measure])
        mean_den = den.mean()
        if mean_den <= 0:
            return np.zeros(int(used.sum()))
        ratio = num.sum() / den.sum()
        return ratio + (num - ratio * den) / mean_den

    def measure(self, users: np.ndarray, measure: str) -> tuple[np.ndarray, np.ndarray]:
        """Values and exclusion codes of one measure for the given user codes."""
        j = self.columns[measure]
        return self.values[users, j], self.reasons[users, j]

    def answers(self, view, measure: str) -> tuple[np.ndarray, np.ndarray]:
        """Values and exclusion codes of one measure for the users of an engine view (a
        chunk of the :class:`~offeval.UnitTable` of users)."""
        return self.measure(view.log.positions, measure)

    def ratio_parts(self, view, measure: str) -> tuple[np.ndarray, np.ndarray]:
        """A ratio measure's numerator and denominator for the users of an engine view."""
        num, den = self.parts[measure]
        return num[view.log.positions], den[view.log.positions]


class MeasureMean(BaseEstimator):
    """One measure aggregated over the users a run averages, as its ``aggregate`` says.

    ``mean`` (and ``sum``, reported as a mean per query): the sum of the
    values over the number of users averaged, a ratio of unit means;
    ``ratio`` (pnDCG@k): the mean numerator (DCG@k) over the mean
    denominator (iDCG@k) over those users; ``geometric`` (gm_map,
    gm_bpref): exp of the mean of log(max(v, 1e-5)). Each with its
    delta-method standard error, so paired comparisons between runs work
    alike for all four.
    """

    name = "ir_measure"

    def __init__(self, measure: str = "nDCG@10", aggregate: str = "mean"):
        self.measure = measure
        self.aggregate = aggregate

    @property
    def label(self) -> str:
        """The measure as the user wrote it."""
        return self.measure

    @property
    def value_range(self) -> tuple[float, float] | None:
        """[0, 1] for a measure of values in [0, 1]: its normal intervals stay there."""
        return value_range(self.measure)

    def contribute(self, view) -> Contribution:
        """Per user: the value when averaged (else 0), and whether averaged."""
        values, reasons = view.policy.answers(view, self.measure)
        used = reasons == 0
        excluded = {
            EXCLUSION_REASONS[code]: int(count)
            for code, count in enumerate(np.bincount(reasons, minlength=len(EXCLUSION_REASONS)))
            if code and count
        }
        columns = {"users": used.astype(float)}
        if self.aggregate == "ratio":
            num, den = view.policy.ratio_parts(view, self.measure)
            columns.update(num=np.where(used, num, 0.0), den=np.where(used, den, 0.0))
        elif self.aggregate == "geometric":
            logs = np.log(np.maximum(np.where(used, values, 1.0), MIN_GEO_MEAN))
            columns["log"] = np.where(used, logs, 0.0)
        else:
            columns["sum"] = np.where(used, values, 0.0)
        return Contribution(unit_columns=columns, excluded=excluded)

    def combine(self, stats):
        """The aggregate over the averaged users, linearised (see the class docstring)."""
        if self.aggregate == "ratio":
            if stats.mean("users") == 0:  # no user averaged: no value, as metrics.aggregate
                return Linearisation(np.nan, np.array([stats.index("num")]), np.array([np.nan]))
            if stats.mean("den") <= 0:  # no ideal gain at all: 0, as MetricResult.value
                return Linearisation(0.0, np.array([stats.index("num")]), np.array([0.0]))
            return ratio_of_means(stats, "num", "den")
        if self.aggregate == "geometric":
            log_mean = ratio_of_means(stats, "log", "users")
            g = float(np.exp(log_mean.value))
            return Linearisation(g, log_mean.columns, g * log_mean.gradient)
        return ratio_of_means(stats, "sum", "users")


@dataclass
class RunEvaluation:
    """Runs judged by measures: per-user values and the engine's evaluation of their means.

    ``values`` holds each run's values over the users of every run, aligned;
    ``common`` says whether each run was restricted to the users every run
    averages (see :meth:`on_common_queries`), and ``left_out`` counts, per
    measure, the users some run averages that were left out for that;
    ``not_averaged`` counts, per measure and reason, the users of the runs or
    labels no run averages (a query without qrels, say).
    """

    evaluation: Evaluation
    results: dict[str, MetricResult]
    measures: list[str]
    conventions: Conventions
    values: dict[str, RunValues]
    common: bool = False
    left_out: dict[str, int] | None = None
    not_averaged: dict[str, dict[str, int]] | None = None

    def on_common_queries(self) -> RunEvaluation:
        """The runs judged, measure by measure, on the users (queries) every run averages.

        A user one run averages and another does not (a query missing from a
        run under trec_eval's default, say) is left out of every run's mean
        with the reason ``not_in_every_run``, so that means, differences and
        paired tests are over the same users. To count a run's missing
        queries as 0 instead (trec_eval's ``-c``), compute the measures with
        ``no_predictions='zero'``. No user common to every run is an error.
        """
        if self.common:
            return self
        return evaluate_results(self.results, level=self.evaluation.level, common=True)

    def table(self) -> pd.DataFrame:
        """One row per (run, measure): mean, se, interval, users averaged and left out.

        ``mean`` is the measure's aggregate over the users averaged: their mean,
        or, when some measure aggregates otherwise, as the ``aggregate`` column
        then says (``ratio``: pnDCG's mean DCG over mean iDCG; ``geometric``:
        gm_map's exp of the mean log; ``sum``: trec_eval's counts, reported
        here as a mean per query, the sum being that times ``users``).
        """
        rows = []
        aggregation = next(iter(self.values.values())).aggregation
        for run in self.evaluation.policies:
            for measure in self.measures:
                e = self.evaluation.estimate(run, measure)
                how = {"aggregate": aggregation.get(measure, "mean")} if aggregation else {}
                rows.append(
                    {
                        "run": run,
                        "measure": measure,
                        **how,
                        "mean": e.value,
                        "se": e.se,
                        "ci_low": e.ci_low,
                        "ci_high": e.ci_high,
                        "users": e.n_units,
                        **{f"excluded_{r}": n for r, n in e.excluded.items()},
                    }
                )
        table = pd.DataFrame(rows)
        excluded = [c for c in table if c.startswith("excluded_")]
        table[excluded] = table[excluded].fillna(0).astype(int)
        return table

    def grid(
        self, measure: str, correction: str | None = "holm", alpha: float = 0.05
    ) -> PairwiseComparison:
        """Paired t-tests of every pair of runs on one measure (the engine's grid).

        On common queries (:meth:`on_common_queries`, as :meth:`compare` uses)
        this is the textbook paired t-test on the per-user differences of the
        users every run averages, with n - 1 degrees of freedom (scipy's
        ``ttest_rel``, as ranx's ``compare`` runs it): users left out change
        nothing. Otherwise the difference of two runs' means has the
        engine's delta-method standard error over all users.
        """
        alpha = check_alpha(alpha)
        ev = self.evaluation
        values = np.array([ev.estimate(run, measure).value for run in ev.policies])
        users = min(ev.estimate(run, measure).n_units for run in ev.policies)
        covariance = self._common_covariance(measure) if self.common else ev.covariance(measure)
        return pairwise_grid(
            ev.policies, values, covariance, correction=correction, alpha=alpha, df=users - 1
        )

    def _common_covariance(self, measure: str) -> np.ndarray:
        """Covariance of the runs' means over the users every run averages: the sample
        covariance of their values (n - 1) over n; NaN with fewer than two users."""
        runs = self.evaluation.policies
        per_run = [self.values[run].measure(slice(None), measure) for run in runs]
        every = np.logical_and.reduce([reasons == 0 for _, reasons in per_run])
        if every.sum() < 2:
            return np.full((len(runs), len(runs)), np.nan)
        values = np.stack([self.values[run].pseudo_values(measure, every) for run in runs])
        return np.atleast_2d(np.cov(values, ddof=1)) / every.sum()

    def compare(
        self,
        measures: Sequence[str] | None = None,
        *,
        test: str = "t",
        correction: str | None = "holm",
        alpha: float = 0.05,
        resamples: int = 10_000,
        seed: int = 0,
    ) -> pd.DataFrame:
        """Every pair of runs on every measure: difference, interval, t and randomisation tests.

        The comparison is paired on the users every run averages (see
        :meth:`on_common_queries`): ``mean_a`` and ``mean_b`` are over the
        same ``users``, ``left_out`` counts the users some run averages that
        were left out, and ``not_averaged`` the users no run averages (no
        labels, say). ``test`` (``t``, ``randomization`` or ``tukey``) decides
        ``significant``; every p-value is reported, the paired tests' each
        corrected over the pairs of one measure with ``correction`` (a
        statsmodels ``multipletests`` method, None for none). The randomisation
        test flips the signs of the per-user differences (Fisher's sharp
        null). ``wins``, ``ties``, ``losses`` and Tukey's HSD ``p_tukey``
        (family-wise already: ``correction`` does not apply) are as ranx's
        comparison report has them (see :mod:`offeval_ir.comparison`).
        """
        check_choice(test, "test", TESTS)
        alpha = check_alpha(alpha)
        runs = len(self.evaluation.policies)
        if runs < 2:
            raise ConfigurationError("compare at least two runs")
        if test == "randomization":
            check_randomization(resamples, alpha, correction, runs * (runs - 1) // 2)
        common = self.on_common_queries()
        rng = np.random.default_rng(seed)
        level = self.evaluation.level
        frames = []
        for measure in measures or self.measures:
            grid = common.grid(measure, correction, alpha).table
            grid.insert(0, "measure", measure)
            paired = [
                common.differences(a, b, measure) for a, b in zip(grid.a, grid.b, strict=True)
            ]
            estimate = common.evaluation.estimate
            grid.insert(3, "users", [d.size for d in paired])
            grid.insert(4, "left_out", common.left_out[measure])
            grid.insert(5, "not_averaged", sum(common.not_averaged[measure].values()))
            grid.insert(6, "mean_a", [estimate(a, measure).value for a in grid.a])
            grid.insert(7, "mean_b", [estimate(b, measure).value for b in grid.b])
            low, high = interval(grid["difference"], grid["se"], level, df=grid["users"] - 1)
            grid.insert(10, "ci_low", low)
            grid.insert(11, "ci_high", high)
            p = np.array([randomization_p(d, resamples, rng) for d in paired])
            grid["p_randomization"] = p
            grid["p_randomization_adjusted"] = adjusted_p_values(p, alpha, correction)
            extra = common.pair_statistics(measure, grid.a, grid.b)  # win/tie/loss, Tukey
            grid[list(extra)] = extra.to_numpy()
            grid[["wins", "ties", "losses"]] = grid[["wins", "ties", "losses"]].astype(int)
            grid["significant"] = grid[TEST_P[test]] < alpha
            frames.append(grid)
        table = pd.concat(frames, ignore_index=True)
        table.attrs.update(test=test, correction=correction, alpha=alpha)
        return table

    def pair_statistics(self, measure: str, a: Sequence[str], b: Sequence[str]) -> pd.DataFrame:
        """Win/tie/loss counts and Tukey's HSD p-values of the pairs (a[i], b[i]) on the
        users every run averages (see :mod:`offeval_ir.comparison`)."""
        runs = list(self.values)
        every = np.logical_and.reduce(
            [v.measure(slice(None), measure)[1] == 0 for v in self.values.values()]
        )
        values = np.stack([v.measure(slice(None), measure)[0][every] for v in self.values.values()])
        pseudo = np.stack([v.pseudo_values(measure, every) for v in self.values.values()])
        ia, ib = [runs.index(r) for r in a], [runs.index(r) for r in b]
        # imported here: it loads scipy.stats (half a second), which computing needs not
        from offeval_ir.comparison import pair_statistics  # noqa: PLC0415

        counts = pair_statistics(values, ia, ib)
        counts["p_tukey"] = pair_statistics(pseudo, ia, ib)["p_tukey"]
        return counts

    def differences(self, a: str, b: str, measure: str) -> np.ndarray:
        """Run a's value minus run b's, on each user both average (for a measure not
        aggregated by a mean, their delta-method pseudo-values: see
        :meth:`RunValues.pseudo_values`; their mean is the difference of the
        aggregates)."""
        _, ra = self.values[a].measure(slice(None), measure)
        _, rb = self.values[b].measure(slice(None), measure)
        both = (ra == 0) & (rb == 0)
        return self.values[a].pseudo_values(measure, both) - self.values[b].pseudo_values(
            measure, both
        )


def evaluate_results(
    results: Mapping[str, MetricResult], *, level: float = 0.95, common: bool = False
) -> RunEvaluation:
    """Send per-user measure values (one :class:`MetricResult` per run, same columns)
    through the engine: users are units, runs policies, measures estimators. With
    ``common``, each measure is averaged on the users every run averages only (see
    :meth:`RunEvaluation.on_common_queries`)."""
    users, names, aggregation, policies = run_values(results)
    not_averaged = count_not_averaged(policies, names)  # before the restriction marks users
    left_out = _restrict_to_common(policies, names) if common else None
    estimators = [MeasureMean(m, aggregation.get(m, "mean")) for m in names]
    evaluation = evaluate(UnitTable(len(users)), policies, estimators, level=level, progress=False)
    values = {p.name: p for p in policies}
    first = next(iter(results.values()))
    return RunEvaluation(
        evaluation, dict(results), names, first.conventions, values, common, left_out, not_averaged
    )


def run_values(
    results: Mapping[str, MetricResult],
) -> tuple[pd.Index, list[str], dict[str, str], list[RunValues]]:
    """The users of every run (in order of first appearance), the measures, their
    aggregation and each run's :class:`RunValues` over those users (checked: same
    measures, same aggregation, text names)."""
    if not isinstance(results, Mapping) or not results:
        raise ConfigurationError("give at least one run's result, as {name: MetricResult}")
    bad = [name for name in results if not isinstance(name, str)]
    if bad:
        raise ConfigurationError(f"run names must be text, got {bad[0]!r}")
    first = next(iter(results.values()))
    names = list(first.per_user.columns)
    for name, result in results.items():
        if list(result.per_user.columns) != names:
            raise ConfigurationError(
                f"run {name!r} has measures {list(result.per_user.columns)}, the first {names}"
            )
    users = pd.Index([])
    for result in results.values():
        if not result.per_user.index.equals(users):  # runs of the same users: no search
            users = users.append(result.per_user.index[~result.per_user.index.isin(users)])
    unique = users.is_unique

    def aligned(frame: pd.DataFrame) -> pd.DataFrame:
        """``frame`` on the users of every run, in order (as it is, when it is so)."""
        return frame if unique and frame.index.equals(users) else frame.reindex(users)

    no_labels = EXCLUSION_REASONS.index("no_labels")  # a user of another run only
    policies = []
    for name, result in results.items():
        values = aligned(result.per_user).to_numpy(dtype=float)
        if result.reasons.empty:  # built by hand: NaN means left out, reason unknown
            reasons = np.where(np.isnan(values), EXCLUSION_REASONS.index("no_value"), 0)
        else:
            reasons = aligned(result.reasons).fillna(no_labels).to_numpy()
        parts = {
            m: tuple(aligned(frame)[c].to_numpy(dtype=float) for c in ("numerator", "denominator"))
            for m, frame in result.parts.items()
        }
        policies.append(
            RunValues(name, values, reasons.astype(np.int8), names, result.aggregation, parts)
        )
    aggregation = first.aggregation
    for name, result in results.items():
        if result.aggregation != aggregation:
            raise ConfigurationError(
                f"run {name!r} aggregates its measures as {result.aggregation}, the first run "
                f"as {aggregation}"
            )
        missing = [m for m, how in aggregation.items() if how == "ratio" and m not in result.parts]
        if missing:
            raise ConfigurationError(
                f"run {name!r}: the ratio measures {missing} need their numerator and "
                "denominator per user in the result's parts (compute_measures fills them)"
            )
    return users, names, dict(aggregation), policies


def count_not_averaged(policies: list[RunValues], measures: list[str]) -> dict[str, dict[str, int]]:
    """Per measure, the users no run averages, by reason (each user's first reason among
    the runs, in :data:`EXCLUSION_REASONS`' order)."""
    reasons = np.stack([p.reasons for p in policies])  # runs x users x measures
    first = np.where(reasons == 0, len(EXCLUSION_REASONS), reasons).min(axis=0)
    none = (reasons != 0).all(axis=0)
    counts = {}
    for j, measure in enumerate(measures):
        codes = np.bincount(first[none[:, j], j], minlength=len(EXCLUSION_REASONS))
        counts[measure] = {EXCLUSION_REASONS[c]: int(n) for c, n in enumerate(codes) if n}
    return counts


def _restrict_to_common(policies: list[RunValues], measures: list[str]) -> dict[str, int]:
    """Mark users not averaged by every run as ``not_in_every_run`` (in place); the number
    left out per measure. No user common to every run is an error naming the runs."""
    code = EXCLUSION_REASONS.index("not_in_every_run")
    used = np.stack([p.reasons == 0 for p in policies])  # runs x users x measures
    every, some = used.all(axis=0), used.any(axis=0)
    for policy, own in zip(policies, used, strict=True):
        policy.reasons = np.where(own & ~every, code, policy.reasons).astype(np.int8)
    empty = np.flatnonzero(~every.any(axis=0))
    if empty.size:
        counts = ", ".join(
            f"{p.name!r} {int(u.sum())}"
            for p, u in zip(policies, used[:, :, empty[0]], strict=True)
        )
        raise OffevalError(
            f"no query is averaged by every run on {measures[empty[0]]} (queries each run "
            f"averages: {counts}): there is nothing to compare them on; check that the runs "
            "answer the same queries"
        )
    return dict(zip(measures, (some & ~every).sum(axis=0).tolist(), strict=True))


def no_common_queries(
    run_name: str, ours: pd.Index, theirs: pd.Index, qrels_name: str = "", advice: str = ""
) -> OffevalError:
    """The error of a run none of whose queries (``ours``) is in the qrels (``theirs``),
    naming a few of each; ``advice`` (default: whether the ids match as text) ends it."""
    if not advice:
        same_text = ours.astype(str).isin(theirs.astype(str)).any()
        advice = (
            "the ids match as text only: make both sides text (the file readers do)"
            if same_text
            else "are these the qrels of this run's topics?"
        )
    qrels = f"the qrels {qrels_name}" if qrels_name else "the qrels"
    return OffevalError(
        f"{run_name}: no query of the run is in the qrels: queries of the run "
        f"{_few(ours)}, of {qrels} {_few(theirs)}; {advice}"
    )


def _few(ids: pd.Index, shown: int = 5) -> str:
    """The first ``shown`` ids, as ``describe_rows`` writes them."""
    text = describe_rows(ids[:shown].tolist())
    return text[:-1] + ", ...]" if len(ids) > shown else text
