"""The reference estimators of the core tests give the brute-force values of their formulas."""

from __future__ import annotations

import numpy as np
import pytest
from oracles import delta_se, unit_sums
from reference_estimators import IS, SNIS

from offeval import evaluate


def test_reference_is_and_snis_give_the_brute_force_values_and_errors(small_bandit):
    log, target, truth = small_bandit
    ev = evaluate(log, [target], [IS(), SNIS()])
    r = log.frame["reward"].to_numpy()
    w = log.frame["target"].to_numpy() / log.frame["propensity"].to_numpy()
    units = np.column_stack([unit_sums(log, r * w), unit_sums(log, np.ones_like(w))])
    value, se = delta_se(lambda m: m[0] / m[1], units)
    is_ = ev.estimate("target", "is")
    assert is_.value == pytest.approx(np.mean(r * w), rel=1e-12) == pytest.approx(value)
    assert is_.se == pytest.approx(se, rel=1e-6)
    assert abs(is_.value - truth) < 4 * is_.se  # unbiased: near the true value
    ratio = np.column_stack([unit_sums(log, r * w), unit_sums(log, w)])
    value, se = delta_se(lambda m: m[0] / m[1], ratio)
    snis = ev.estimate("target", "snis")
    assert snis.value == pytest.approx(np.sum(r * w) / np.sum(w), rel=1e-12)
    assert snis.se == pytest.approx(se, rel=1e-6)


def test_the_reference_plugin_registers_both_under_their_names(reference_registry):
    assert reference_registry.names("estimator") == ["is", "snis"]
    assert isinstance(reference_registry.create_from_spec("estimator", "snis"), SNIS)
