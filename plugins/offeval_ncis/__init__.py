"""Plugin ``ncis``: the importance-sampling family of off-policy estimators.

IS, capped IS (CIS), normalised capped IS (NCIS) as in Gruson et al. (WSDM
2019), piecewise and pointwise NCIS (Gilotte et al., WSDM 2018), and IPS with
the optimal additive baseline (beta*-IPS, Jeunen and Gupta, SIGIR 2026).
"""

from offeval import hookimpl
from offeval_ncis.estimators import (
    CIS,
    IS,
    NCIS,
    BetaIPS,
    PiecewiseNCIS,
    PointwiseNCIS,
)

ESTIMATORS = (IS, CIS, NCIS, PiecewiseNCIS, PointwiseNCIS, BetaIPS)


@hookimpl
def register_estimators(register):
    """Register the IS family."""
    for cls in ESTIMATORS:
        register(cls.name, cls)


@hookimpl
def register_demo_estimators(register):
    """Every IS estimator at its defaults, plus low caps to show what capping does."""
    for cls in ESTIMATORS:
        register(cls())
    register(CIS(cap=10))
    register(NCIS(cap=10))


__all__ = ["CIS", "IS", "NCIS", "BetaIPS", "PiecewiseNCIS", "PointwiseNCIS"]
