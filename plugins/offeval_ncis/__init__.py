"""Plugin ``ncis``: the importance-sampling family of off-policy estimators.

IS, capped IS (CIS), normalised capped IS (NCIS) as in Gruson et al. (WSDM
2019), also under obp's names (``ips``, ``clipped_ips``, ``snips``), piecewise
and pointwise NCIS (Gilotte et al., WSDM 2018), and IPS with the optimal
additive baseline (beta*-IPS, Jeunen and Gupta, SIGIR 2026).
"""

from offeval.plugin import hookimpl
from offeval_ncis.estimators import (
    CIS,
    IPS,
    IS,
    NCIS,
    SNIPS,
    BetaIPS,
    ClippedIPS,
    PiecewiseNCIS,
    PointwiseNCIS,
)

ESTIMATORS = (IS, CIS, NCIS, PiecewiseNCIS, PointwiseNCIS, BetaIPS)
#: The same estimators under the names obp users know (not repeated in the demo).
ALIASES = (IPS, SNIPS, ClippedIPS)


@hookimpl
def register_estimators(register):
    """Register the IS family, and its obp names (ips, snips, clipped_ips)."""
    for cls in (*ESTIMATORS, *ALIASES):
        register(cls.name, cls)


@hookimpl
def register_demo_estimators(register):
    """Every IS estimator at its defaults, plus low caps to show what capping does."""
    for cls in ESTIMATORS:
        register(cls())
    register(CIS(cap=10))
    register(NCIS(cap=10))


__all__ = [
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
