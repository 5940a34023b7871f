"""The betting interval (plugin ``betting``): against a brute-force root search, its coverage
on heavy-tailed weights, and how evaluations choose, run, check and report it."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from interval_logs import clicks_and_propensities

from offeval import (
    BaseEstimator,
    ColumnPolicy,
    ConfigurationError,
    Contribution,
    InteractionLog,
    OffevalError,
    evaluate,
)
from offeval.engine.accumulator import Accumulator
from offeval.engine.declaration import declaration_of
from offeval.engine.summary import EstimatorSummary
from offeval.errors import OffevalWarning, command_line
from offeval.kitworld import KitIS
from offeval.stats import ratio_of_means
from offeval_betting import MAX_BET, betting_interval


class BettingIS(KitIS):
    """IS declaring its betting columns: r w, w and 1 per row."""

    name = "betting_is"
    interval = "betting"
    betting_columns = {"rewards": "rw", "weights": "w", "rows": "rows", "divisor": "rows"}
    reward_range = (0.0, 1.0)  # the bandit's rewards are clicks

    def contribute(self, view):
        w = view.weights()
        return Contribution({"rw": view.log.column("reward") * w, "w": w, "rows": view.log.ones})


class SNIS(BaseEstimator):
    """Self-normalised importance sampling: sum r * pi/mu / sum pi/mu (no betting columns)."""

    name = "snis"
    estimand = "reward_per_impression"
    guarantee = "consistent"
    requires = ("propensity",)

    def contribute(self, view):
        weights = view.weights()
        return Contribution({"rw": view.log.column("reward") * weights, "w": weights})

    def combine(self, stats):
        return ratio_of_means(stats, "rw", "w")


def _log_capital(x: list[float], alpha: float) -> float:
    """Largest log capital of the predictable plug-in bets, one unit at a time."""
    n, total, squares, best, log_k = len(x), 0.0, 0.25, 0.0, 0.0
    spread = 0.25
    for t, value in enumerate(x, 1):
        bet = min(MAX_BET, math.sqrt(2 * math.log(2 / alpha) / (n * spread)))
        log_k += math.log(1 + bet * value)
        best = max(best, log_k)
        total += value
        mean = total / (t + 1)
        squares += (value - mean) ** 2
        spread = squares / (t + 1)
    return best


def _brute_force(y, w, m, d, low, high, level, grid=2001):
    """The bounds by scanning candidate values v (the grid's inner points): the smallest and
    largest not rejected, each unit's null share of a = y - low w being v d - low m, of
    b = high w - y being high m - v d."""
    alpha = 1 - level
    keep = d > 0
    y, w, m, d = y[keep], w[keep], m[keep], d[keep]
    ratio = m.sum() / d.sum()
    threshold = math.log(2 / alpha)
    values = np.linspace(low * ratio, high * ratio, grid)[1:-1]

    def rejected(part, share):
        top = max(share)
        return _log_capital([(p - s) / top for p, s in zip(part, share, strict=True)], alpha) >= (
            threshold
        )

    accepted = [
        v
        for v in values
        if not rejected(y - low * w, v * d - low * m)
        and not rejected(high * w - y, high * m - v * d)
    ]
    return min(accepted), max(accepted), values[1] - values[0]


def _heavy_units(rng, units: int, reward_high: float = 1.0):
    """Trajectories of two rows: a rare item (propensity 0.01, target 0.5) pays often."""
    rare = rng.random((units, 2)) < 0.01
    w = np.where(rare, 0.5 / 0.01, 0.5 / 0.99)
    r = np.where(rare, rng.random((units, 2)) < 0.9, rng.random((units, 2)) < 0.1)
    r = r * reward_high
    return (w * r).sum(axis=1), w.sum(axis=1), np.full(units, 2.0), np.full(units, 2.0)


@pytest.mark.parametrize(
    ("seed", "units", "level", "per_trajectory"),
    [(0, 40, 0.95, False), (1, 120, 0.9, False), (2, 80, 0.8, True), (5, 200, 0.95, True)],
)
def test_betting_interval_equals_a_brute_force_scan(seed, units, level, per_trajectory):
    rng = np.random.default_rng(seed)
    y, w, m, d = _heavy_units(rng, units)
    left_out = rng.random(units) < 0.1  # units the estimator left out count for nothing
    y, w, m, d = (np.where(left_out, 0.0, x) for x in (y, w, m, d))
    if per_trajectory:
        d = np.where(left_out, 0.0, 1.0)
    low, high = betting_interval(y, w, m, d, 0.0, 1.0, level)
    expected_low, expected_high, step = _brute_force(y, w, m, d, 0.0, 1.0, level)
    assert abs(low - expected_low) <= step and abs(high - expected_high) <= step


def test_betting_interval_is_affine_in_the_rewards_and_respects_their_range():
    rng = np.random.default_rng(3)
    y, w, m, d = _heavy_units(rng, 300)
    low, high = betting_interval(y, w, m, d, 0.0, 1.0)
    # rewards 2 + 3 r: the same bets, bounds 2 + 3 x
    shifted = betting_interval(3 * y + 2 * w, w, m, d, 2.0, 5.0)
    np.testing.assert_allclose(shifted, (2 + 3 * low, 2 + 3 * high), rtol=1e-6)
    assert 0 <= low < high <= 1
    # per trajectory (two rows each): twice the reward per row
    per_trajectory = betting_interval(y, w, m, np.ones_like(d), 0.0, 1.0)
    np.testing.assert_allclose(per_trajectory, (2 * low, 2 * high), rtol=1e-6)
    narrow = betting_interval(y, w, m, d, 0.0, 1.0, level=0.5)
    assert low < narrow[0] < narrow[1] < high


def test_betting_interval_refuses_what_breaks_its_assumptions():
    y, one = np.array([1.0, 2.0]), np.ones(2)
    with pytest.raises(OffevalError, match=r"rewards within \[0, 1\]"):
        betting_interval(y, one, one, one, 0.0, 1.0)  # r = 2 on the second unit
    with pytest.raises(OffevalError, match="non-negative weights"):
        betting_interval(np.zeros(1), -np.ones(1), np.ones(1), np.ones(1), 0.0, 1.0)
    assert np.isnan(betting_interval(y, one, one, np.zeros(2), 0.0, 2.0)).all()


def test_betting_intervals_cover_where_normal_ones_do_not():
    """400 logs of 200 trajectories whose weights are 50 with probability 1%: the truth is
    0.5 * 0.9 + 0.5 * 0.1 = 0.5 per row. Normal intervals miss whenever the sample holds
    no rare row or only a few; betting ones cover at least 95% of the time, less three
    binomial standard errors."""
    rng = np.random.default_rng(4)
    replications, units, truth = 400, 200, 0.5
    z = 1.959963984540054
    betting, normal = [], []
    for _ in range(replications):
        y, w, m, d = _heavy_units(rng, units)
        low, high = betting_interval(y, w, m, d, 0.0, 1.0)
        betting.append(low <= truth <= high)
        x = y / 2  # per-row mean of each trajectory
        se = x.std(ddof=1) / math.sqrt(units)
        normal.append(abs(x.mean() - truth) <= z * se)
    se95 = math.sqrt(0.95 * 0.05 / replications)
    assert np.mean(betting) >= 0.95 - 3 * se95
    assert np.mean(normal) <= 0.95 - 3 * se95  # the case is one where normal intervals fail


def test_evaluate_gives_the_betting_interval_of_the_unit_sums(bandit):
    log, target, _ = bandit
    ev = evaluate(log, [target], [BettingIS(), SNIS()], reward_range=(0, 1))
    est = ev.estimate("target", "betting_is")
    assert est.interval_method == "betting" and est.to_dict()["interval_method"] == "betting"
    assert ev.estimate("target", "snis").interval_method == "normal"
    # the same interval computed here from the rows, units in the order of their hashed ids
    acc = Accumulator([target], [BettingIS()])
    acc.add(log)
    w = target.probabilities(log.frame) / log.column("propensity")
    sums = [
        np.bincount(log.unit_index, v) for v in (log.column("reward") * w, w, log.ones, log.ones)
    ]
    order = np.argsort(acc.state.intervals["betting"].ids[0])
    expected = betting_interval(*(s[order] for s in sums), 0.0, 1.0)
    np.testing.assert_allclose(est.interval, expected, rtol=1e-9)
    assert est.ci_low <= est.value <= est.ci_high
    normal = evaluate(log, [target], [BettingIS()], interval="normal").estimate("target")
    assert normal.interval_method == "normal" and normal.value == est.value


def test_betting_intervals_do_not_depend_on_chunks_streams_workers_or_unit_order(bandit):
    log, target, _ = bandit
    known = {"reward_range": (0, 1)}
    whole = evaluate(log, [target], [BettingIS()], chunk_rows=log.n_rows, **known)
    whole = whole.estimate("target")
    others = [
        evaluate(log, [target], [BettingIS()], chunk_rows=777, **known),
        evaluate(list(log.chunks(1_234)), [target], [BettingIS()], **known),
        evaluate(list(log.chunks(1_234))[::-1], [target], [BettingIS()], **known),
        evaluate(log, [target], [BettingIS()], workers=2, **known),
    ]
    for other in others:
        np.testing.assert_allclose(other.estimate("target").interval, whole.interval, rtol=1e-9)


def test_interval_chosen_by_estimator_label_or_name(bandit):
    log, target, _ = bandit
    ev = evaluate(log, [target], [BettingIS(), SNIS()], interval={"betting_is": "normal"})
    assert ev.estimate("target", "betting_is").interval_method == "normal"
    assert ev.intervals == ["normal", "normal"]
    summary = ev.summary("betting_is")
    assert summary.interval_method == "normal"
    default = evaluate(log, [target], [BettingIS()], reward_range=(0, 1)).summary()
    again = EstimatorSummary.from_dict(default.to_dict())
    assert again.interval_method == "betting"


@pytest.mark.parametrize(
    ("interval", "message"),
    [
        ("bca", r"^interval must be one of \('normal', 'betting'\), got 'bca'$"),
        (3, r"^interval must be one of .* or None \(each estimator's own\), got 3$"),
        ({"ips": "betting"}, r"^interval names 'ips', which is none of the estimators"),
        ({"snis": "t"}, r"^interval\['snis'\] must be one of \('normal', 'betting'\), got 't'"),
        ("betting", r"declares its betting_columns; \['snis'\] do not: choose interval='normal'"),
    ],
)
def test_bad_interval_values_are_one_line(bandit, interval, message):
    log, target, _ = bandit
    with pytest.raises(OffevalError, match=message) as caught:
        evaluate(log, [target], [BettingIS(), SNIS()], interval=interval)
    assert "\n" not in str(caught.value)


def test_betting_declarations_are_checked():
    wrong = BettingIS()
    wrong.betting_columns = None
    with pytest.raises(ConfigurationError, match=r"interval 'betting' needs betting_columns"):
        declaration_of(wrong)
    wrong = BettingIS()
    wrong.betting_columns = {"rewards": "rw", "weights": "w"}
    with pytest.raises(ConfigurationError, match=r"betting_columns must map each of"):
        declaration_of(wrong)


def test_a_betting_column_never_emitted_is_named(bandit):
    log, target, _ = bandit
    wrong = BettingIS()
    wrong.betting_columns = {
        "rewards": "rw",
        "weights": "weights",
        "rows": "rows",
        "divisor": "rows",
    }
    with pytest.raises(OffevalError, match=r"declares betting columns \['weights'\] it never"):
        evaluate(log, [target], [wrong])


class UnboundedIS(BettingIS):
    """BettingIS declaring no bounds of the rewards."""

    name = "unbounded_is"
    reward_range = None


def test_betting_needs_bounds_known_before_the_data():
    """20 impressions without a click: bounds read off the sample gave [0, 0]; with the
    known bounds [0, 1] the upper end is that of a click rate never seen in 20 tries (about
    0.3 at 95%: even exact binomial's is 0.17)."""
    log, target = clicks_and_propensities([0] * 20)
    with pytest.raises(OffevalError, match=r"need the rewards' known bounds.*reward_range="):
        evaluate(log, [target], [UnboundedIS()])
    with command_line(), pytest.raises(OffevalError, match=r"add --reward-range LOW,HIGH"):
        evaluate(log, [target], [UnboundedIS()])
    est = evaluate(log, [target], [UnboundedIS()], reward_range=(0, 1)).estimate("target")
    assert est.value == 0.0 and est.ci_low == 0.0
    assert 0.17 < est.ci_high < 0.5
    declared = evaluate(log, [target], [BettingIS()]).estimate("target")
    assert declared.interval == est.interval  # the estimator's own declaration, the same bounds


def test_a_reward_outside_the_known_bounds_is_refused():
    log, target = clicks_and_propensities([0, 2, 1, 0])
    with pytest.raises(OffevalError, match=r"assumes rewards in \[0, 1\], and the log has rewards"):
        evaluate(log, [target], [BettingIS()])
    wide = evaluate(log, [target], [BettingIS()], reward_range="0,2").estimate("target")
    assert wide.interval_method == "betting" and 0 <= wide.ci_low <= wide.ci_high <= 2


def test_a_betting_interval_stays_in_the_rewards_range_where_the_estimate_leaves_it():
    """A click seen at weight 10 gives IS = 10/4 > 1; the true click rate is at most 1, and
    so is the interval's upper end (it was widened to hold the estimate)."""
    frame = pd.DataFrame(
        {
            "trajectory": np.arange(4),
            "item": np.zeros(4, dtype=int),
            "reward": [1.0, 0.0, 0.0, 0.0],
            "propensity": [0.1, 0.9, 0.9, 0.9],
            "target": [1.0, 0.0, 0.0, 0.0],
        }
    )
    log, target = InteractionLog.from_frame(frame), ColumnPolicy("target", name="target")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OffevalWarning)
        est = evaluate(log, [target], [BettingIS()]).estimate("target")
    assert est.value == pytest.approx(2.5)
    assert 0.0 <= est.ci_low <= est.ci_high <= 1.0


def test_an_empty_betting_interval_is_flagged_and_warned():
    """Every weight 3 (the target shows the item with probability 1, the log says 1/3): the
    weights' mean is not one, the bets reject every value, and the interval comes out empty
    (its low end above its high end). It is reported as is, flagged and warned."""
    log, target = clicks_and_propensities([1, 0] * 100, propensity=1 / 3)
    log = log.with_columns(target=np.ones(log.n_rows))
    with pytest.warns(OffevalWarning, match=r"\(target: an empty betting interval: the log"):
        est = evaluate(log, [target], [BettingIS()]).estimate("target")
    assert est.ci_low > est.ci_high
    assert est.diagnostics["interval_unreadable"] == 1
