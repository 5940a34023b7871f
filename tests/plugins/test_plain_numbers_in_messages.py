"""Plugin parameters given as numpy scalars (a value read from an array, say): the message
shows the number as the user would type it, never numpy's repr (``np.int64(0)``)."""

from __future__ import annotations

import numpy as np
import pytest

from offeval import ConfigurationError
from offeval.engine.summary import EstimatorSummary
from offeval_decision import ab_sample_size, plan_ab_test, rank_distribution
from offeval_decision.choices import select
from offeval_disagreement import (
    CounterfactualDisagreement,
    SampledPairwiseDisagreement,
    monte_carlo,
)
from offeval_disagreement.streams import states
from offeval_ir.metrics import _checked_cutoffs
from offeval_ir.run_statistics import check_randomization
from offeval_ranking.examination import CutOff

VALUES = np.array([0.1, 0.2])
SPREAD = {"names": ["a", "b"], "covariance": 0.01 * np.eye(2)}
RELATIVE = EstimatorSummary("is", "is", ["a", "b"], VALUES, 0.01 * np.eye(2), 10, baseline="a")


@pytest.mark.parametrize(
    ("call", "shown"),
    [
        (lambda: CutOff(n=np.int64(0)), "got 0"),
        (lambda: ab_sample_size(0.1, 1.0, alpha=np.float64(1.5)), "got 1.5"),
        (lambda: rank_distribution(VALUES, draws=np.int64(0), **SPREAD), "got 0"),
        (lambda: select(rank_distribution(VALUES, draws=10, **SPREAD), np.int64(0)), "got 0"),
        (
            lambda: plan_ab_test(RELATIVE, ["b"], "a", 1.0, baseline_value=np.float64(-1.0)),
            "got -1.0",
        ),
        (lambda: CounterfactualDisagreement(samples=np.int64(1)), "got 1"),
        (lambda: SampledPairwiseDisagreement(draws=np.int64(0)), "got 0"),
        (lambda: monte_carlo(np.zeros((1, 3)), samples=np.int64(1)), "got 1"),
        (lambda: states(np.array([1], dtype=np.uint64), np.int64(-1)), "got -1"),
        (lambda: _checked_cutoffs([np.float64(2.5)]), "got 2.5"),
        (lambda: check_randomization(np.float64(1.5), 0.05, None, 1), "got 1.5"),
    ],
)
def test_messages_show_numpy_scalars_as_plain_numbers(call, shown):
    with pytest.raises(ConfigurationError) as exc:
        call()
    assert "np." not in str(exc.value) and shown in str(exc.value)
