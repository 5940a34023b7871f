"""Plugin ``disagreement``: ranking metrics on non-shuffled traffic (Gilotte et al., 2019).

Pairwise disagreement (``pd``) and counterfactual disagreement (``cd``) as
exact per-banner expectations, the paper's variant 5.1 re-drawing the whole
banner (``cd_banner``), their sampling algorithms as the paper writes them
(``pd_sampled``, ``cd_sampled``), Plackett-Luce rank probabilities given the
displayed set (:func:`forward_backward`, :func:`rank_rows`,
:func:`subset_dp`, :func:`monte_carlo`), and the paper's Figure 3 on the
simulator (:func:`figure3`).
"""

from offeval import hookimpl
from offeval.plugin import lazy_names

#: The plugins this one builds on, by registry name: its figure 3 runs in the simulator's
#: world (environment ``default``).
REQUIRES = ("simulation",)


def _estimators() -> tuple:
    """pd, cd, cd_banner and the sampling versions (``ESTIMATORS``)."""
    from offeval_disagreement.estimators import (
        CounterfactualDisagreement,
        PairwiseDisagreement,
        ResampledBannerDisagreement,
        SampledCounterfactualDisagreement,
        SampledPairwiseDisagreement,
    )

    return (
        PairwiseDisagreement,
        CounterfactualDisagreement,
        ResampledBannerDisagreement,
        SampledPairwiseDisagreement,
        SampledCounterfactualDisagreement,
    )


@hookimpl
def register_estimators(register):
    """Register pd, cd, cd_banner and the sampling versions."""
    for cls in _estimators():
        register(cls.name, cls)


@hookimpl
def register_demo_estimators(register):
    """PD on all banners (position-biased), PD on shuffled banners only, and CD."""
    from offeval_disagreement.estimators import CounterfactualDisagreement, PairwiseDisagreement

    register(PairwiseDisagreement())
    register(PairwiseDisagreement(banners="shuffled"))
    register(CounterfactualDisagreement(score_scale="logit"))


__all__ = [
    "MAX_EXACT",
    "CounterfactualDisagreement",
    "PairwiseDisagreement",
    "ResampledBannerDisagreement",
    "SampledCounterfactualDisagreement",
    "SampledPairwiseDisagreement",
    "close_models",
    "figure3",
    "forward_backward",
    "monte_carlo",
    "plot_figure3",
    "rank_probabilities",
    "rank_rows",
    "subset_dp",
    "world",
]

#: The public names, imported on first use (loading the plugin imports no estimator).
__getattr__ = lazy_names(
    __name__,
    {
        "offeval_disagreement.analyses": ("close_models", "figure3", "plot_figure3", "world"),
        "offeval_disagreement.estimators": (
            "CounterfactualDisagreement",
            "PairwiseDisagreement",
            "ResampledBannerDisagreement",
            "SampledCounterfactualDisagreement",
            "SampledPairwiseDisagreement",
        ),
        "offeval_disagreement.given_set": (
            "MAX_EXACT",
            "forward_backward",
            "monte_carlo",
            "rank_probabilities",
            "rank_rows",
            "subset_dp",
        ),
    },
    computed={"ESTIMATORS": _estimators},
)
