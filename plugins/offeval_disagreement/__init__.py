"""Plugin ``disagreement``: ranking metrics on non-shuffled traffic (seed 001, Gilotte 2019).

Pairwise disagreement (``pd``) and counterfactual disagreement (``cd``) as
exact per-banner expectations, the seed's variant 5.1 re-drawing the whole
banner (``cd_banner``), their sampling algorithms as written in the seed
(``pd_sampled``, ``cd_sampled``), and Plackett-Luce rank probabilities given
the displayed set (:mod:`offeval_disagreement.given_set`).
"""

from offeval import hookimpl
from offeval_disagreement.estimators import (
    CounterfactualDisagreement,
    PairwiseDisagreement,
    ResampledBannerDisagreement,
    SampledCounterfactualDisagreement,
    SampledPairwiseDisagreement,
)
from offeval_disagreement.given_set import (
    MAX_EXACT,
    forward_backward,
    monte_carlo,
    rank_probabilities,
    subset_dp,
)

ESTIMATORS = (
    PairwiseDisagreement,
    CounterfactualDisagreement,
    ResampledBannerDisagreement,
    SampledPairwiseDisagreement,
    SampledCounterfactualDisagreement,
)


@hookimpl
def register_estimators(register):
    """Register pd, cd, cd_banner and the sampling versions."""
    for cls in ESTIMATORS:
        register(cls.name, cls)


@hookimpl
def register_demo_estimators(register):
    """PD on all banners (position-biased), PD on shuffled banners only, and CD."""
    register(PairwiseDisagreement())
    register(PairwiseDisagreement(banners="shuffled"))
    register(CounterfactualDisagreement())


__all__ = [
    "MAX_EXACT",
    "CounterfactualDisagreement",
    "PairwiseDisagreement",
    "ResampledBannerDisagreement",
    "SampledCounterfactualDisagreement",
    "SampledPairwiseDisagreement",
    "forward_backward",
    "monte_carlo",
    "rank_probabilities",
    "subset_dp",
]
