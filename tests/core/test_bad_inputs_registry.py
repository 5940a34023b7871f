"""Bad estimator specs, refused by the registry without any plugin: unbalanced brackets,
parameters given twice, unknown names, empty specs.

Each is an offeval error naming the column or parameter and the user's own row labels,
never a crash from pandas, numpy, pyarrow or the OS, and never a silent wrong number.
"""

from __future__ import annotations

import pytest
from bad_input_logs import fails

from offeval import (
    OffevalError,
    RegistryError,
    get_registry,
)

ESTIMATOR_CASES = {
    "parameter given twice": (
        lambda: get_registry().create_from_spec("estimator", "ncis:cap=1,cap=2"),
        "'cap' is given twice",
    ),
    "unknown estimator": (
        lambda: get_registry().create_from_spec("estimator", "snipz"),
        "no estimator named 'snipz'",
    ),
    "empty spec": (lambda: get_registry().create_from_spec("estimator", " "), "spec"),
}


@pytest.mark.parametrize("case", ESTIMATOR_CASES.values(), ids=list(ESTIMATOR_CASES))
def test_bad_estimator_parameters(case):
    call, pattern = case
    fails(call, OffevalError, pattern)


REVIEW_CASES = {
    "spec with an open bracket": (
        lambda: get_registry().create_from_spec("estimator", "ncis(cap=3"),
        RegistryError,
        "unbalanced",
    ),
}


@pytest.mark.parametrize("case", REVIEW_CASES.values(), ids=list(REVIEW_CASES))
def test_review_findings(case):
    call, error, *patterns = case
    fails(call, error, *patterns)
