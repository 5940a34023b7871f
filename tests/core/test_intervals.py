"""Interval methods in the core: the normal interval clipped to the estimated quantity's
bounds and flagged when unreadable, declared methods and reward bounds checked, and the
method each summary reports (the betting interval's tests are its plugin's)."""

from __future__ import annotations

import math
import warnings

import pytest
from interval_logs import clicks_and_propensities
from reference_estimators import IS

from offeval import OffevalError, evaluate
from offeval.engine.declaration import declaration_of
from offeval.engine.summary import EstimatorSummary
from offeval.errors import ConfigurationError, OffevalWarning


def test_interval_declarations_are_checked():
    wrong = IS()
    wrong.interval = "bootstrap"
    with pytest.raises(ConfigurationError, match=r"interval must be one of"):
        declaration_of(wrong)
    assert declaration_of(IS()).interval == "normal"


def test_saved_summaries_refuse_an_unknown_interval_method(bandit):
    log, target, _ = bandit
    data = evaluate(log, [target], [IS()]).summary().to_dict()
    assert data["interval_method"] == "normal"
    data["interval_method"] = "bca"
    with pytest.raises(OffevalError, match=r"field 'interval_method': must be one of"):
        EstimatorSummary.from_dict(data)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ((1, 0), r"reward_range must have its low end below its high end, got 1,0"),
        ("0;1", r"reward_range must be two numbers"),
        ((0, math.inf), r"reward_range's high must be"),
        (("a", 1), r"reward_range's low must be a number, got 'a'"),
    ],
)
def test_reward_range_mistakes_are_named(bandit, value, message):
    log, target, _ = bandit
    with pytest.raises(ConfigurationError, match=message):
        evaluate(log, [target], [IS()], reward_range=value)


class ClickRate(IS):
    """IS of a click rate declaring that its value lies in [0, 1]."""

    name = "click_rate"
    value_range = (0.0, 1.0)


def test_a_normal_interval_stays_within_the_declared_bounds():
    """One click in 20 at weight 1: the normal interval 0.05 +- 1.96 x 0.0487 has its lower
    end at -0.045; a rate cannot be negative, so it ends at 0 (and says it was clipped)."""
    log, target = clicks_and_propensities([1] + [0] * 19)
    est = evaluate(log, [target], [ClickRate()]).estimate("target")
    se = math.sqrt(0.05 * 0.95 / 19)  # sample variance (n - 1) over n units
    assert est.value == pytest.approx(0.05) and est.se == pytest.approx(se)
    assert est.ci_low == 0.0 and est.ci_high == pytest.approx(0.05 + 1.959964 * se, rel=1e-6)
    assert est.diagnostics["interval_clipped"] is True
    plain = evaluate(log, [target], [IS()]).estimate("target")
    assert plain.ci_low < 0 and "interval_clipped" not in plain.diagnostics
    # a reward per impression with known reward bounds: the true value lies within them
    known = evaluate(log, [target], [IS()], reward_range=(0, 1)).estimate("target")
    assert known.ci_low == 0.0 and known.diagnostics["interval_clipped"] is True


def test_a_zero_width_normal_interval_is_flagged_and_warned():
    """20 impressions without a click: the normal interval is [0, 0], which measures nothing."""
    log, target = clicks_and_propensities([0] * 20)
    with pytest.warns(OffevalWarning, match=r"is's intervals .* \(target: zero width: "):
        est = evaluate(log, [target], [IS()]).estimate("target")
    assert est.interval == (0.0, 0.0)
    assert est.diagnostics["interval_unreadable"] == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # one click among them: a width, and no warning
        log, target = clicks_and_propensities([1] + [0] * 19)
        other = evaluate(log, [target], [IS()])
    assert "interval_unreadable" not in other.estimate("target").diagnostics
