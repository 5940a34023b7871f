"""Clipped DR, sub-Gaussian DR and the DR ``*Tuning`` estimators against obp 0.5.7's own numbers
(pinned by tests/plugins/rewardmodels/obp_reference/generate.py): the same values to 1e-10, and
the same chosen parameter."""

from __future__ import annotations

import pytest
from obp_cases import number, obd, pinned, synthetic

from offeval import evaluate
from offeval_rewardmodels.estimators import DR, SubGaussianDR
from offeval_rewardmodels.tuning import DROSTuning, DRTuning, SubGaussianDRTuning, SwitchDRTuning

CASES = {"synthetic": synthetic, "obd": obd}
TUNED = {
    "dr_tuning": DRTuning,
    "switch_dr_tuning": SwitchDRTuning,
    "dr_os_tuning": DROSTuning,
    "sg_dr_tuning": SubGaussianDRTuning,
}
TOLERANCE = 1e-10


def tuned(entry: dict):
    return TUNED[entry["key"]](
        lambdas=[number(v) for v in entry["lambdas"]],
        tuning_method=entry["tuning_method"],
        use_bias_upper_bound=entry["use_bias_upper_bound"],
        delta=entry["delta"],
    )


@pytest.fixture(scope="module", params=list(CASES))
def case(request):
    log, policies = CASES[request.param]()
    return request.param, log, policies


def test_clipped_and_subgaussian_dr_equal_obps(case):
    name, log, policies = case
    theirs = pinned()[name]["estimates"]
    first = theirs[policies[0].name]
    estimators = {("dr", k): DR(lambda_=number(k)) for k in first["dr"]}
    estimators |= {("sg_dr", k): SubGaussianDR(lambda_=number(k)) for k in first["sg_dr"]}
    ev = evaluate(log, policies, list(estimators.values()))
    for policy in policies:
        for (kind, k), estimator in estimators.items():
            value = ev.estimate(policy.name, estimator.label).value
            expected = theirs[policy.name][kind][k]
            assert value == pytest.approx(expected, rel=TOLERANCE, abs=1e-15), (
                policy.name,
                kind,
                k,
            )


def test_tuning_chooses_obps_parameter_and_gives_its_value(case):
    name, log, policies = case
    theirs = pinned()[name]["estimates"]
    mine = {
        policy.name: [e for e in theirs[policy.name]["tuning"] if e["key"] in TUNED]
        for policy in policies
    }
    estimators = [tuned(e) for e in mine[policies[0].name]]
    ev = evaluate(log, policies, estimators)
    for policy in policies:
        for entry, estimator in zip(mine[policy.name], estimators, strict=True):
            est = ev.estimate(policy.name, estimator.label)
            where = (policy.name, estimator.label)
            assert est.diagnostics["fitted_lambda_"] == number(entry["best_hyperparam"]), where
            assert est.value == pytest.approx(entry["policy_value"], rel=TOLERANCE, abs=1e-15), (
                where
            )
