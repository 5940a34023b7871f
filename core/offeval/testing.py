"""Conformance kit: checks any estimator against the protocol and basic statistics.

In the spirit of scikit-learn's ``check_estimator``::

    from offeval.testing import check_estimator
    check_estimator(MyEstimator())            # raises AssertionError on failure

    @parametrize_with_checks([MyEstimator(), MyEstimator(cap=10)])
    def test_conformance(estimator, check):   # one pytest case per check
        check(estimator)

The checks run on :func:`synthetic_log`, a small slate log with known truth,
candidate sets, and a ``group`` column. Estimator ``tags`` opt in to stronger
checks: ``unbiased`` (estimate within 4 standard errors of the truth) and
``linear_in_reward`` (scaling rewards scales the estimate); the tag
``policy="ranking"`` runs the checks with a ranking policy (exposures).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

from offeval.errors import OffevalError
from offeval.estimator import Estimator
from offeval.evaluation import evaluate
from offeval.log import InteractionLog
from offeval.policy import ColumnPolicy, RerankPolicy

Check = Callable[[Estimator], None]


def synthetic_log(n: int = 20_000, seed: int = 0) -> tuple[InteractionLog, ColumnPolicy, float]:
    """A two-position log over four items with a known target value.

    Each trajectory fills positions 1 and 2, each slot drawing an item from
    its own logging distribution; clicks are Bernoulli with a slot-specific
    rate. Returns the log, the target policy (column ``target``, also in the
    candidate table) and the target's true reward per impression. Column
    ``target_score`` lets a ranking policy re-rank each trajectory's items
    (estimators tagged ``policy="ranking"`` are checked with it).
    """
    rng = np.random.default_rng(seed)
    mu = np.array([[0.4, 0.3, 0.2, 0.1], [0.25, 0.25, 0.25, 0.25]])
    pi = np.array([[0.1, 0.2, 0.3, 0.4], [0.7, 0.1, 0.1, 0.1]])
    q = np.array([[0.10, 0.20, 0.30, 0.50], [0.05, 0.10, 0.20, 0.30]])
    truth = float((pi * q).sum(axis=1).mean())
    slots = np.repeat([[0, 1]], n, axis=0).ravel()
    u = rng.random(slots.size)[:, None]
    items = (u > np.cumsum(mu, axis=1)[slots]).sum(axis=1)
    frame = pd.DataFrame(
        {
            "trajectory": np.repeat(np.arange(n), 2),
            "item": items,
            "position": slots + 1,
            "reward": (rng.random(slots.size) < q[slots, items]).astype(float),
            "propensity": mu[slots, items],
            "target": pi[slots, items],
            "target_score": pi[slots, items] * q[slots, items],
            "group": np.repeat(rng.integers(0, 2, n), 2),
        }
    )
    cand_slot = np.repeat(np.arange(slots.size), 4)
    cand_item = np.tile(np.arange(4), slots.size)
    candidates = pd.DataFrame(
        {
            "trajectory": np.repeat(frame["trajectory"].to_numpy(), 4),
            "position": np.repeat(frame["position"].to_numpy(), 4),
            "item": cand_item,
            "propensity": mu[slots[cand_slot], cand_item],
            "target": pi[slots[cand_slot], cand_item],
        }
    )
    return InteractionLog.from_frame(frame, candidates=candidates), ColumnPolicy("target"), truth


def _estimate(estimator: Estimator, log: InteractionLog, policy, **kw):
    if (getattr(estimator, "tags", {}) or {}).get("policy") == "ranking":
        policy = RerankPolicy("target_score", name=policy.name)
    return evaluate(log, [policy], [estimator], **kw).estimate(policy.name)


def check_protocol(estimator: Estimator) -> None:
    """The estimator follows the Estimator protocol and has a name."""
    assert isinstance(estimator, Estimator), "does not follow offeval.Estimator"
    assert isinstance(estimator.name, str) and estimator.name, "needs a non-empty name"
    assert isinstance(estimator.get_params(), dict), "get_params() must return a dict"


def check_params_roundtrip(estimator: Estimator) -> None:
    """Rebuilding from get_params() gives the same parameters and estimate."""
    clone = type(estimator)(**estimator.get_params())
    assert clone.get_params() == estimator.get_params(), "parameters not stored as given"
    log, policy, _ = synthetic_log(4_000)
    a, b = _estimate(estimator, log, policy), _estimate(clone, log, policy)
    assert np.isclose(a.value, b.value, rtol=1e-12, equal_nan=True), "clone estimates differently"


def check_estimate_fields(estimator: Estimator) -> None:
    """Finite value, non-negative standard error, interval around the value."""
    log, policy, _ = synthetic_log()
    est = _estimate(estimator, log, policy)
    assert np.isfinite(est.value), f"value is {est.value}"
    assert np.isfinite(est.se) and est.se >= 0, f"standard error is {est.se}"
    assert est.ci_low <= est.value <= est.ci_high, "interval does not contain the value"
    assert est.n_units == log.n_units, "n_units must count the trajectories used"
    narrow = _estimate(estimator, log, policy, level=0.80)
    assert narrow.ci_high - narrow.ci_low < est.ci_high - est.ci_low or est.se == 0, (
        "an 80% interval must be narrower than a 95% one"
    )


def check_chunking_invariance(estimator: Estimator) -> None:
    """Chunked evaluation gives the same numbers as one pass over the whole log."""
    log, policy, _ = synthetic_log(6_000)
    whole = _estimate(estimator, log, policy, chunk_rows=log.n_rows)
    chunked = _estimate(estimator, log, policy, chunk_rows=997)
    assert np.isclose(whole.value, chunked.value, rtol=1e-9, atol=1e-12), "value depends on chunks"
    assert np.isclose(whole.se, chunked.se, rtol=1e-9, atol=1e-12), "se depends on chunks"


def check_unit_order_invariance(estimator: Estimator) -> None:
    """Shuffling the order of trajectories does not change the estimate."""
    log, policy, _ = synthetic_log(6_000)
    rng = np.random.default_rng(1)
    order = rng.permutation(log.n_units)
    frame = log.frame.set_index("trajectory").loc[order].reset_index()
    shuffled = InteractionLog.from_frame(frame, candidates=log.candidates.drop(columns="slot"))
    a, b = _estimate(estimator, log, policy), _estimate(estimator, shuffled, policy)
    assert np.isclose(a.value, b.value, rtol=1e-9), "value depends on row order"
    assert np.isclose(a.se, b.se, rtol=1e-9), "se depends on row order"


def check_errors_are_offeval_errors(estimator: Estimator) -> None:
    """Missing inputs raise an OffevalError (a ValueError), never a KeyError."""
    log, policy, _ = synthetic_log(2_000)
    stripped = InteractionLog.from_frame(log.frame.drop(columns=["propensity", "group"]))
    try:
        _estimate(estimator, stripped, policy)
    except OffevalError:
        pass
    except Exception as exc:  # noqa: BLE001 - the point is to name the wrong type
        raise AssertionError(f"raised {type(exc).__name__} instead of an OffevalError") from exc


def check_linear_in_reward(estimator: Estimator) -> None:
    """Tag ``linear_in_reward``: rewards times 3 give estimate and se times 3."""
    log, policy, _ = synthetic_log(6_000)
    scaled = log.with_columns(reward=3 * log.frame["reward"].to_numpy())
    a, b = _estimate(estimator, log, policy), _estimate(estimator, scaled, policy)
    assert np.isclose(3 * a.value, b.value, rtol=1e-9), "value is not linear in the reward"
    assert np.isclose(3 * a.se, b.se, rtol=1e-9), "se is not linear in the reward"


def check_unbiased(estimator: Estimator) -> None:
    """Tag ``unbiased``: on 100,000 trajectories, within 4 standard errors of the truth."""
    log, policy, truth = synthetic_log(100_000, seed=7)
    est = _estimate(estimator, log, policy)
    z = (est.value - truth) / est.se
    assert abs(z) < 4, f"estimate {est.value:.5f} is {z:.1f} standard errors from {truth:.5f}"


CHECKS: tuple[Check, ...] = (
    check_protocol,
    check_params_roundtrip,
    check_estimate_fields,
    check_chunking_invariance,
    check_unit_order_invariance,
    check_errors_are_offeval_errors,
)
TAGGED: dict[str, Check] = {"linear_in_reward": check_linear_in_reward, "unbiased": check_unbiased}


def checks_for(estimator: Estimator) -> list[Check]:
    """The checks that apply to an estimator, given its tags."""
    tags = getattr(estimator, "tags", {}) or {}
    return list(CHECKS) + [check for tag, check in TAGGED.items() if tags.get(tag)]


def check_estimator(estimator: Estimator) -> None:
    """Run every applicable check; the first failure raises AssertionError."""
    for check in checks_for(estimator):
        try:
            check(estimator)
        except AssertionError as exc:
            raise AssertionError(f"{check.__name__} failed for {estimator!r}: {exc}") from exc


def parametrize_with_checks(estimators: Sequence[Estimator]):
    """A pytest parametrize decorator: one case per (estimator, check)."""
    import pytest

    cases = [(e, c) for e in estimators for c in checks_for(e)]
    ids = [f"{getattr(e, 'label', e.name)}-{c.__name__}" for e, c in cases]
    return pytest.mark.parametrize(("estimator", "check"), cases, ids=ids)
