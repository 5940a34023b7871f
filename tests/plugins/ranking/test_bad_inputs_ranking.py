"""Bad input at the ranking plugin's ways in from obp's logs (issue 19): a log without ``pi_b``
(the candidates' propensities unknown) leaves out the support check, not reports it as 0;
nDCG and pnDCG refuse negative rewards, which have no ideal DCG (issue 28)."""

from __future__ import annotations

import numpy as np
import pytest
from bad_input_logs import MAP, build, cases, fails, frame, late
from cli_checks import one_line_error
from obp_inputs import feedback

from offeval import (
    ColumnError,
    ColumnPolicy,
    ConfigurationError,
    OffevalError,
    evaluate,
    get_registry,
)
from offeval_obp import from_obp
from offeval_ranking import DCG, NDCG, PNDCG, RerankPolicy


def test_without_pi_b_dcg_leaves_out_the_candidate_support_check():
    values = {}
    for with_pi_b in (True, False):
        log, _ = from_obp(feedback(with_pi_b), with_candidates=True)
        dcg = DCG(logging=RerankPolicy("x1"))  # a logging policy: the candidates are checked
        values[with_pi_b] = evaluate(log, [RerankPolicy("x0")], [dcg]).estimate("x0", "dcg")
    assert values[True].diagnostics["unsupported_exposure"] == 0.0
    assert "unsupported_exposure" not in values[False].diagnostics  # formerly 0: unknown
    assert values[False].value == pytest.approx(values[True].value, rel=1e-12)


# -- from the bad-input battery of the core (logs, policies, estimator parameters) --------
POLICY_CASES = {
    "NaN score in a later chunk": (
        lambda: evaluate(late("score", np.nan), [RerankPolicy("score")], [DCG()], chunk_rows=100),
        ColumnError,
        "'score'",
        r"rows \['r701'\]",
    ),
    "score column absent": (
        lambda: evaluate(build(), [RerankPolicy("nope")], [DCG()]),
        ColumnError,
        "'nope'",
    ),
    "ranking estimator with a probability policy": (
        lambda: evaluate(build(), [ColumnPolicy("pi")], [DCG()]),
        ConfigurationError,
        r"no exposure\(\) method",
    ),
}


@cases(POLICY_CASES)
def test_bad_policies(case):
    fails(*case)


ESTIMATOR_CASES = {
    "DCG cap below one": (lambda: DCG(cap=0.5), "cap m"),
    "DCG labels": (lambda: DCG(labels="clicks"), "labels"),
    "DCG per": (lambda: DCG(per="session"), "per"),
    "DCG support": (lambda: DCG(support="ignore"), "support"),
    "DCG cutoff zero": (lambda: DCG(cutoff=0), "cutoff"),
    "DCG cutoff fraction": (lambda: DCG(cutoff=2.5), "cutoff"),
    "DCG unknown model": (lambda: DCG(examination="nosuch"), "no examination named 'nosuch'"),
    "DCG logging": (lambda: DCG(logging="guess"), "logging"),
    "nDCG zero ideal": (lambda: NDCG(zero_ideal="nan"), "zero_ideal"),
    "nDCG ideal cutoff": (lambda: NDCG(ideal_cutoff=0), "ideal_cutoff"),
    "pnDCG ideal cutoff": (lambda: PNDCG(ideal_cutoff="all"), "ideal_cutoff"),
    "unbalanced spec": (
        lambda: get_registry().create_from_spec("estimator", "dcg:examination=exponential("),
        "unbalanced",
    ),
}


@cases(ESTIMATOR_CASES, error=OffevalError)
def test_bad_estimator_parameters(case):
    fails(*case)


REVIEW_CASES = {
    "text scores": (
        lambda: evaluate(late("score", "high"), [RerankPolicy("score")], [DCG()], chunk_rows=100),
        ColumnError,
        "'score'",
        r"rows \['r701'\]",
    ),
    "cut-off given as text": (lambda: DCG(examination="cutoff(n=x)"), ConfigurationError, "n"),
    "cut-off given as a boolean": (lambda: DCG(examination="cutoff(n=true)"), ConfigurationError),
    "gamma given as a boolean": (
        lambda: DCG(examination="exponential(gamma=true)"),
        ConfigurationError,
        "gamma",
    ),
    "table of text": (lambda: DCG(examination="table(values=x)"), ConfigurationError, "table"),
    "learnt values of text": (lambda: DCG(examination="pbm(values=x)"), ConfigurationError),
    "misnamed rank probability column": (
        lambda: evaluate(
            build(frame(rank_probability_x=0.5)),
            [RerankPolicy("score")],
            [DCG(logging="rank_probabilities")],
        ),
        ColumnError,
        "'rank_probability_x'",
    ),
    "NaN rank probability": (
        lambda: evaluate(
            build(frame(rank_probability_1=[0.5, np.nan, 0.5, 0.5, 0.5, 0.5])),
            [RerankPolicy("score")],
            [DCG(logging="rank_probabilities")],
        ),
        ColumnError,
        r"rows \['s2'\]",
    ),
}


@cases(REVIEW_CASES)
def test_review_findings(case):
    fails(*case)


def test_rank_probability_columns_are_read_by_their_rank_number():
    probs = {"rank_probability_1": 0.6, "rank_probability_3": 0.4}
    by_columns = build(frame(**probs))
    exposure = 0.6 / np.log2(2) + 0.4 / np.log2(4)
    by_exposure = build(frame(exposure=exposure))
    policy = [RerankPolicy("score")]
    a = evaluate(by_columns, policy, [DCG(logging="rank_probabilities")]).estimate("score")
    b = evaluate(by_exposure, policy, [DCG(logging="exposure")]).estimate("score")
    assert a.value == pytest.approx(b.value, rel=1e-12)


# -- issue 28: nDCG and pnDCG on negative rewards -----------------------------------------
#: The second row of the first trajectory is a negative reward (the -0.5 of the issue).
NEGATIVE = {"click": [1.0, -0.5, 0.0, 0.0, 1.0, 0.0]}
NEGATIVE_CASES = {
    "nDCG": (lambda: evaluate(build(frame(**NEGATIVE)), [RerankPolicy("score")], [NDCG()]),),
    "pnDCG": (lambda: evaluate(build(frame(**NEGATIVE)), [RerankPolicy("score")], [PNDCG()]),),
    "nDCG, raw labels, later chunk": (
        lambda: evaluate(
            late("click", -1.0), [RerankPolicy("score")], [NDCG(labels="raw")], chunk_rows=100
        ),
        r"rows \['r701'\]",
    ),
}


@cases(NEGATIVE_CASES)
def test_normalised_dcg_refuses_negative_rewards_naming_the_rows(case):
    call, *rows = case
    fails(
        call,
        ColumnError,
        r"^column 'reward': nDCG and pnDCG need rewards >= 0 \(the ideal DCG of negative gains "
        r"is not defined\); use dcg",
        *(rows or [r"\(rows \['s2'\]\)$"]),
    )


def test_dcg_itself_takes_negative_rewards():
    # DCG is linear in the rewards: negating them negates it (and is not refused)
    clicks = np.array(frame()["click"])
    policy = [RerankPolicy("score")]
    plus = evaluate(build(frame(click=clicks)), policy, [DCG()]).estimate("score")
    minus = evaluate(build(frame(click=-clicks)), policy, [DCG()]).estimate("score")
    assert minus.value == pytest.approx(-plus.value, rel=1e-12) and plus.value > 0


def test_the_command_line_names_the_users_reward_column_and_lines(tmp_path, capsys):
    path = tmp_path / "log.csv"
    frame(**NEGATIVE).to_csv(path, index=False)
    maps = [a for role, col in MAP.items() for a in ("--map", f"{role}={col}")]
    for name in ("ndcg", "pndcg"):
        argv = ["evaluate", path, *maps, "--rerank", "s=score", "--estimator", name, "--quiet"]
        one_line_error(
            capsys,
            argv,
            r"column 'click' \(role reward\): nDCG and pnDCG need rewards >= 0",
            r"\(log\.csv, lines \[3\]\)$",
        )
