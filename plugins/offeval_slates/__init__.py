"""Plugin ``slates``: slate and ranking off-policy estimators on rank marginals and prefixes.

IIPS (Li et al. 2018), RIPS (McInerney et al. 2020), the pseudo-inverse
estimator (Swaminathan et al. 2017), each with its self-normalised form
(``self_normalized=True``), and Cascade-DR (Kiyohara et al. 2022). See
:mod:`offeval_slates.estimators`.
"""

from offeval import hookimpl
from offeval_slates.estimators import IIPS, RIPS, CascadeDR, PseudoInverse

ESTIMATORS = (IIPS, RIPS, PseudoInverse, CascadeDR)


@hookimpl
def register_estimators(register):
    """Register iips, rips, pi and cascade_dr."""
    for cls in ESTIMATORS:
        register(cls.name, cls)


@hookimpl
def register_demo_estimators(register):
    """Each slate estimator, and the self-normalised forms."""
    for cls in ESTIMATORS:
        register(cls())
    for cls in (IIPS, RIPS, PseudoInverse):
        register(cls(self_normalized=True))


__all__ = ["IIPS", "RIPS", "CascadeDR", "PseudoInverse"]
