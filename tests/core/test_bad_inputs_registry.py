"""Bad estimator specs, refused by the registry without any plugin: unbalanced brackets,
parameters given twice, unknown names, empty specs."""

from __future__ import annotations

from bad_input_logs import cases, fails

from offeval import OffevalError, RegistryError, get_registry

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


@cases(ESTIMATOR_CASES, error=OffevalError)
def test_bad_estimator_parameters(case):
    fails(*case)


REVIEW_CASES = {
    "spec with an open bracket": (
        lambda: get_registry().create_from_spec("estimator", "ncis(cap=3"),
        RegistryError,
        "unbalanced",
    ),
}


@cases(REVIEW_CASES)
def test_review_findings(case):
    fails(*case)
