"""Plugin ``slates``: slate and ranking off-policy estimators on rank marginals and prefixes.

IIPS (Li et al. 2018), RIPS (McInerney et al. 2020), the pseudo-inverse
estimator (Swaminathan et al. 2017), each with its self-normalised form
(``self_normalized=True``). See :mod:`offeval_slates.estimators`.
"""

from offeval import hookimpl
from offeval_slates.estimators import IIPS, RIPS, PseudoInverse

ESTIMATORS = (IIPS, RIPS, PseudoInverse)


@hookimpl
def register_estimators(register):
    """Register iips, rips and pi."""
    for cls in ESTIMATORS:
        register(cls.name, cls)


@hookimpl
def register_demo_estimators(register):
    """Each slate estimator plain and self-normalised."""
    for cls in ESTIMATORS:
        register(cls())
        register(cls(self_normalized=True))


__all__ = ["IIPS", "RIPS", "PseudoInverse"]
