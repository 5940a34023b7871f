"""Bad banners (the disagreement plugin): ranks missing, logging scores absent, a pool mass
that changes within a banner, ordering probabilities that do not sum to one, scores that
are not numbers; explicit ordering probabilities are used."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from bad_input_logs import cases, fails

from offeval import ColumnError, InteractionLog, evaluate
from offeval_ranking import RerankPolicy


# -- banners (the disagreement plugin) ----------------------------------------------------
def banner_frame(**overrides) -> pd.DataFrame:
    data = {
        "trajectory": [1, 1, 1, 2, 2],
        "item": ["a", "b", "c", "a", "d"],
        "position": [1, 2, 3, 1, 2],
        "reward": [0, 1, 0, 1, 0],
        "logging_score": [0.5, 0.1, -0.2, 1.0, 0.0],
        "model": [0.3, 0.2, 0.1, 0.0, 0.4],
    }
    data.update(overrides)
    return pd.DataFrame(data, index=["b1", "b2", "b3", "b4", "b5"])


def disagreement(frame_, estimator):
    from offeval_disagreement import CounterfactualDisagreement, PairwiseDisagreement

    made = {"cd": CounterfactualDisagreement, "pd": PairwiseDisagreement}
    kind, *params = estimator
    return evaluate(
        InteractionLog.from_frame(frame_), [RerankPolicy("model")], [made[kind](*params)]
    )


BANNER_CASES = {
    "a rank missing from a banner": (
        lambda: disagreement(banner_frame(position=[1, 2, 4, 1, 2]), ("pd",)),
        ColumnError,
        "'position'",
        r"rows \['b3'\]",
    ),
    "no logging scores for Plackett-Luce": (
        lambda: disagreement(banner_frame().drop(columns="logging_score"), ("cd",)),
        ColumnError,
        "'logging_score'",
    ),
    "a pool mass that changes within a banner": (
        lambda: disagreement(banner_frame(logging_pool=[0.0, 0.0, 1.0, 0.0, 0.0]), ("cd",)),
        ColumnError,
        "'logging_pool'",
        r"trajectories \[1\].*rows \['b3'\]",
    ),
    "ordering probabilities that do not sum to one": (
        lambda: disagreement(
            banner_frame(
                ordering_probability_1=[0.5, 0.5, 0.5, 0.5, 0.5],
                ordering_probability_2=[0.5, 0.5, 0.5, 0.5, 0.5],
                ordering_probability_3=[0.0, 0.0, 0.0, 0.0, 0.0],
            ),
            ("cd", "all", "columns"),
        ),
        ColumnError,
        "ordering_probability_",
    ),
    "a subset without the shuffled flag": (
        lambda: disagreement(banner_frame(), ("pd", "shuffled")),
        ColumnError,
        "'shuffled'",
    ),
    "a score that is not a number": (
        lambda: disagreement(banner_frame(model=[0.1, "x", 0.2, 0.3, 0.4]), ("pd",)),
        ColumnError,
        "'model'",
        r"rows \['b2'\]",
    ),
}


@cases(BANNER_CASES)
def test_bad_banners(case):
    fails(*case)


def test_explicit_ordering_probabilities_are_used():
    from offeval_disagreement import CounterfactualDisagreement

    q = np.array([[0.2, 0.5, 0.3], [0.3, 0.2, 0.5], [0.5, 0.3, 0.2]])  # [product, rank]
    first = (
        banner_frame()
        .iloc[:3]
        .assign(**{f"ordering_probability_{r + 1}": q[:, r] for r in range(3)})
    )
    est = evaluate(
        InteractionLog.from_frame(first),
        [RerankPolicy("model")],
        [CounterfactualDisagreement(logging="columns")],
    ).estimate("model")
    # clicked b (score 0.2) at rank 2: a (0.3, q = 0.5) is above, c (0.1, q = 0.3) below
    assert est.value == pytest.approx(0.5 / (0.5 + 0.3))
