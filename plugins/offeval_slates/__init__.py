"""Plugin ``slates``: slate and ranking off-policy estimators on rank marginals and prefixes.

IIPS (Li et al. 2018), RIPS (McInerney et al. 2020), the pseudo-inverse
estimator (Swaminathan et al. 2017) and Cascade-DR (Kiyohara et al. 2022),
each with its self-normalised form (``self_normalized=True``), for
Plackett-Luce, deterministic and two-stage rankers, with a support check
(:mod:`offeval_slates.support`). See :mod:`offeval_slates.estimators`.
"""

from offeval import hookimpl
from offeval.plugin import lazy_names

#: The plugins this one builds on: the ranking family's rankings and exposures, the
#: model-based family's reward-model columns (Cascade-DR), the simulator, in which rips,
#: pi and cascade_dr take the conformance kit (their ``kit_environment``), and the betting
#: interval, rips's own.
REQUIRES = ("betting", "ranking", "rewardmodels", "simulation")


def _estimators() -> tuple:
    """iips, rips, pi and cascade_dr (``ESTIMATORS``)."""
    from offeval_slates.cascade_dr import CascadeDR
    from offeval_slates.estimators import IIPS, RIPS, PseudoInverse

    return (IIPS, RIPS, PseudoInverse, CascadeDR)


@hookimpl
def register_estimators(register):
    """Register iips, rips, pi and cascade_dr."""
    for cls in _estimators():
        register(cls.name, cls)


@hookimpl
def register_demo_estimators(register):
    """rips, pi and self-normalised iips (plain iips is ``is`` on a ranking log; cascade_dr
    needs a reward model's columns, which the demo's log does not have)."""
    from offeval_slates.estimators import IIPS, RIPS, PseudoInverse

    register(IIPS(self_normalized=True))
    register(RIPS())
    register(PseudoInverse())


__all__ = ["IIPS", "RIPS", "CascadeDR", "PseudoInverse"]

#: The public names, imported on first use (loading the plugin imports no estimator).
__getattr__ = lazy_names(
    __name__,
    {
        "offeval_slates.cascade_dr": ("CascadeDR",),
        "offeval_slates.estimators": ("IIPS", "RIPS", "PseudoInverse"),
    },
    computed={"ESTIMATORS": _estimators},
)
