"""Every registered estimator passes the public conformance kit, and the kit can fail."""

from __future__ import annotations

import numpy as np
import pytest

from offeval import Contribution, get_registry
from offeval.testing import check_estimator, parametrize_with_checks
from offeval_ncis import IS

REGISTERED = [get_registry().create("estimator", n) for n in get_registry().names("estimator")]


@parametrize_with_checks(REGISTERED)
def test_registered_estimators_conform(estimator, check):
    check(estimator)


class ChunkDependent(IS):
    """Normalises by the chunk's own mean weight: depends on the chunking."""

    name = "chunk_dependent"

    def contribute(self, view):
        out = super().contribute(view)
        w = view.weights()
        out.columns[("rw", float("inf"))] = out.columns[("rw", float("inf"))] / w.mean()
        return out


class RaisesKeyError(IS):
    """Reads a column without going through the log's checked accessor."""

    name = "raises_key_error"

    def contribute(self, view):
        r = view.log.frame["reward"].to_numpy()
        return Contribution({"x": r / view.log.frame["propensity"].to_numpy()})

    def combine(self, stats):
        from offeval.stats import Linearisation

        return Linearisation(stats.mean("x"), np.array([stats.index("x")]), np.array([1.0]))


class InflatedIS(IS):
    """Claims unbiasedness but inflates the estimate by 10%."""

    name = "inflated"

    def combine(self, stats):
        lin = super().combine(stats)
        return type(lin)(1.1 * lin.value, lin.columns, 1.1 * lin.gradient)


@pytest.mark.parametrize(
    ("broken", "failing_check"),
    [
        (ChunkDependent(), "check_chunking_invariance"),
        (RaisesKeyError(), "check_errors_are_offeval_errors"),
        (InflatedIS(), "check_unbiased"),
    ],
)
def test_the_kit_catches_broken_estimators(broken, failing_check):
    with pytest.raises(AssertionError, match=failing_check):
        check_estimator(broken)
