"""Bad input at the importance plugin's ways in from obp's logs (issue 19): a log without ``pi_b``
is refused by an estimator needing the candidates' propensities; numpy numbers in messages
are shown as plain values."""

from __future__ import annotations

import numpy as np
import pytest
from bad_input_logs import MAP, build, candidates, cases, fails, frame, long_frame
from obp_inputs import dist, feedback, message

from offeval import (
    ColumnError,
    ColumnPolicy,
    ConfigurationError,
    OffevalError,
    evaluate,
    get_registry,
)
from offeval_importance import CIS, IS, NCIS, BetaIPS, PiecewiseNCIS, PointwiseNCIS
from offeval_obp import from_obp


def test_without_pi_b_an_estimator_that_needs_candidate_propensities_says_so():
    log, policies = from_obp(feedback(False), dist(), with_candidates=True)
    with pytest.raises(ConfigurationError, match=r"pointwise_ncis.*unknown.*pi_b"):
        evaluate(log, policies, [PointwiseNCIS(cap=2.0)])  # formerly: an estimate of 0


@pytest.mark.parametrize(
    ("call", "shown"),
    [
        (lambda: PointwiseNCIS(cap=np.float64(-2.0)), "got -2.0"),
    ],
)
def test_messages_show_numbers_as_plain_values(call, shown):
    line = message(call)
    assert "np." not in line and shown in line


# -- from the bad-input battery of the core (logs, policies, estimator parameters) --------
POLICY_CASES = {
    "candidate probabilities outside [0, 1]": (
        lambda: evaluate(
            build(candidates=candidates(pi=[0.5, 0.2, 0.2, 0.2, 3.0, 0.4])),
            [ColumnPolicy("pi")],
            [PointwiseNCIS()],
        ),
        ColumnError,
        r"candidate rows \['c5'\]",
    ),
}


@cases(POLICY_CASES)
def test_bad_policies(case):
    fails(*case)


ESTIMATOR_CASES = {
    "cap zero": (lambda: NCIS(cap=0), "cap"),
    "cap negative": (lambda: CIS(cap=-1), "cap"),
    "cap text": (lambda: NCIS(cap="100"), "cap"),
    "cap boolean": (lambda: NCIS(cap=True), "cap"),
    "cap NaN": (lambda: CIS(cap=float("nan")), "cap"),
    "no groups": (lambda: PiecewiseNCIS(max_groups=0), "max_groups"),
    "empty group column": (lambda: PiecewiseNCIS(by=""), "by"),
    "beta text": (lambda: BetaIPS(beta="x"), "beta"),
    "beta infinite": (lambda: BetaIPS(beta=float("inf")), "beta"),
    "unknown parameter": (
        lambda: get_registry().create("estimator", "ncis", capp=3),
        "no parameter capp",
    ),
    "bad value through a spec": (
        lambda: get_registry().create_from_spec("estimator", "ncis:cap=-5"),
        "cap must be a positive number",
    ),
}


@cases(ESTIMATOR_CASES, error=OffevalError)
def test_bad_estimator_parameters(case):
    fails(*case)


def test_estimator_needs_named_when_missing():
    log = build(frame().drop(columns="mu"), {**MAP, "propensity": "pi"})
    fails(
        lambda: evaluate(log, [ColumnPolicy("pi")], [PiecewiseNCIS()]),
        ColumnError,
        "'group'",
    )
    fails(
        lambda: evaluate(build(), [ColumnPolicy("pi")], [PointwiseNCIS()]),
        ConfigurationError,
        "candidate sets",
    )
    no_mu = build(frame(), {k: v for k, v in MAP.items() if k != "propensity"})
    fails(lambda: evaluate(no_mu, [ColumnPolicy("pi")], [IS()]), ColumnError, "'propensity'")
    many = long_frame().assign(group=np.arange(800))
    fails(
        lambda: evaluate(build(many), [ColumnPolicy("pi")], [PiecewiseNCIS(max_groups=8)]),
        ConfigurationError,
        "'group'",
        "max_groups=8",
    )


def test_an_ambiguous_registered_name_is_refused():
    ev = evaluate(build(), [ColumnPolicy("pi")], [NCIS(cap=10), NCIS(cap=1000)])
    fails(lambda: ev.estimate("pi", "ncis"), OffevalError, "ambiguous", "ncis\\(cap=10\\)")
    assert ev.estimate("pi", "ncis:cap=10").estimator == "ncis(cap=10)"
    single = evaluate(build(), [ColumnPolicy("pi")], [BetaIPS()])
    assert single.estimate("pi", "beta_ips").estimator == "beta_ips"


def test_labels_omit_defaults_and_the_full_spelling_still_finds_them():
    ev = evaluate(build(), [ColumnPolicy("pi")], [NCIS(), NCIS(cap=10)])
    assert ev.estimators == ["ncis", "ncis(cap=10)"]
    assert NCIS().full_label == "ncis(cap=100)"
    assert ev.estimate("pi", "ncis(cap=100)").estimator == "ncis"
    assert ev.estimate("pi", "ncis:cap=100.0").estimator == "ncis"


REVIEW_CASES = {
    "missing group": (
        lambda: evaluate(
            build(frame(group=["a", "a", "a", None, None, None])),
            [ColumnPolicy("pi")],
            [PiecewiseNCIS()],
        ),
        ColumnError,
        "'group'",
        r"rows \['s6', 's5', 's4'\]",
    ),
}


@cases(REVIEW_CASES)
def test_review_findings(case):
    fails(*case)


def test_an_estimator_needing_candidates_names_how_to_give_them():
    fails(
        lambda: evaluate(build(), [ColumnPolicy("pi")], [PointwiseNCIS()]),
        ConfigurationError,
        r"InteractionLog.from_frame\(\.\.\., candidates=table\)",
    )
