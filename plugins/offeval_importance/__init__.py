"""Plugin ``importance``: the importance-sampling family of off-policy estimators.

IS, capped IS (CIS), normalised capped IS (NCIS) as in Gruson et al. (WSDM
2019), also under obp's names and parameters (``ipw:lambda_=...``, ``snipw``,
``clipped_ipw``; and ``ips``, ``clipped_ips``, ``snips``), piecewise
and pointwise NCIS (Gilotte et al., WSDM 2018), and IPS with the optimal
additive baseline (beta*-IPS, Jeunen and Gupta, SIGIR 2026); sub-Gaussian IPS
(Metelli et al., NeurIPS 2021; obp's ``sg-ipw``), balanced IPS with a classifier's
weights (Sondhi et al. 2020; obp's ``b-ipw``), and logging propensities estimated
by a classifier (``estimate_propensities``); obp's ``*Tuning`` IPS estimators,
which choose the clip or the sub-Gaussian lambda_ from the log by SLOPE or the
estimated MSE (``ips_tuning``, ``sg_ips_tuning``); Poisson-bootstrap percentile
intervals of any estimators (``bootstrap``).

The family's building blocks are public, for the plugins that declare they build
on it (``REQUIRES = ("importance",)``): importance weights and capping
(:mod:`offeval_importance.weights`: ``capped_weights``, ``capped_weight_column``,
``weight_tally``, ...), the choice of a parameter from the log
(:mod:`offeval_importance.tuning_rules`: SLOPE and the estimated MSE) and
:class:`GridTuned`, what an estimator tuning its parameter shares.
"""

from offeval import hookimpl
from offeval.plugin import Alias, lazy_names

INF = float("inf")
#: obp's names (and this plugin's earlier ones) for its estimators: name -> alias.
OBP_NAMES = {
    "ipw": Alias(
        "cis",
        rename={"lambda_": "cap"},
        defaults={"lambda_": INF},
        source="obp's InverseProbabilityWeighting",
    ),
    "clipped_ipw": Alias(
        "cis", rename={"lambda_": "cap"}, source="obp's InverseProbabilityWeighting(lambda_)"
    ),
    "snipw": Alias("snips", source="obp's SelfNormalizedInverseProbabilityWeighting"),
    "ips": Alias("is", source="Inverse propensity scoring"),
    "clipped_ips": Alias("cis", source="Clipped inverse propensity scoring"),
    "sg_ipw": Alias("sg_ips", source="obp's SubGaussianInverseProbabilityWeighting"),
    "sg-ipw": Alias("sg_ips", source="obp's SubGaussianInverseProbabilityWeighting"),
    "bipw": Alias(
        "balanced_ips",
        rename={"lambda_": "cap"},
        source="obp's BalancedInverseProbabilityWeighting",
    ),
    "b-ipw": Alias(
        "balanced_ips",
        rename={"lambda_": "cap"},
        source="obp's BalancedInverseProbabilityWeighting",
    ),
}


def _estimators() -> tuple:
    """The estimators, in the demo's order (``ESTIMATORS``)."""
    from offeval_importance.estimators import CIS, IS, NCIS, BetaIPS, PiecewiseNCIS, PointwiseNCIS

    return (IS, CIS, NCIS, PiecewiseNCIS, PointwiseNCIS, BetaIPS)


def _aliases() -> tuple:
    """The classes of the same estimators under other names (``ALIASES``): ``snips`` is
    registered as itself, ``ips`` and ``clipped_ips`` as aliases of ``is`` and ``cis``."""
    from offeval_importance.estimators import IPS, SNIPS, ClippedIPS

    return (IPS, SNIPS, ClippedIPS)


@hookimpl
def register_estimators(register):
    """Register the IS family, snips (ncis without a cap), and obp's names as aliases."""
    from offeval_importance.balanced import BalancedIPS
    from offeval_importance.estimators import SNIPS
    from offeval_importance.subgaussian import SubGaussianIPS
    from offeval_importance.tuning import IPSTuning, SubGaussianIPSTuning

    tuned = (IPSTuning, SubGaussianIPSTuning)
    for cls in (*_estimators(), SNIPS, SubGaussianIPS, BalancedIPS, *tuned):
        register(cls.name, cls)
    for name, alias in OBP_NAMES.items():
        register(name, alias)


@hookimpl
def register_demo_estimators(register):
    """Every IS estimator at its defaults, plus low caps to show what capping does."""
    from offeval_importance.estimators import CIS, NCIS

    for cls in _estimators():
        register(cls())
    register(CIS(cap=10))
    register(NCIS(cap=10))


_IS_FAMILY = [
    "CIS",
    "IPS",
    "IS",
    "NCIS",
    "SNIPS",
    "BetaIPS",
    "ClippedIPS",
    "PiecewiseNCIS",
    "PointwiseNCIS",
]
_TUNED = ["IPSTuning", "SubGaussianIPSTuning"]
#: The family's building blocks, for the plugins that declare they build on it (``REQUIRES``):
#: importance weights and capping, their diagnostics, and estimators that tune a parameter.
_BLOCKS = [
    "ROWS",
    "capped_reward_column",
    "capped_rewards",
    "capped_weight_column",
    "capped_weights",
    "check_cap",
    "support",
    "weight_diagnostics",
    "weight_tally",
]
__all__ = [
    *_IS_FAMILY,
    *_TUNED,
    *_BLOCKS,
    "BalancedIPS",
    "GridTuned",
    "SubGaussianIPS",
    "bootstrap",
    "estimate_propensities",
    "tuning_rules",
]

#: The public names, imported on first use (loading the plugin imports no estimator).
__getattr__ = lazy_names(
    __name__,
    {
        "offeval_importance.estimators": _IS_FAMILY,
        "offeval_importance.balanced": ["BalancedIPS"],
        "offeval_importance.subgaussian": ["SubGaussianIPS"],
        "offeval_importance.propensities": ["estimate_propensities"],
        "offeval_importance.poisson_bootstrap": ["bootstrap"],
        "offeval_importance.tuning": _TUNED,
        "offeval_importance.weights": _BLOCKS,
        "offeval_importance.grid_tuned": ["GridTuned"],
    },
    computed={"ESTIMATORS": _estimators, "ALIASES": _aliases},
)
