"""Plugin ``ncis``: the importance-sampling family of off-policy estimators.

IS, capped IS (CIS), normalised capped IS (NCIS) as in Gruson et al. (WSDM
2019), also under obp's names (``ips``, ``clipped_ips``, ``snips``), piecewise
and pointwise NCIS (Gilotte et al., WSDM 2018), and IPS with the optimal
additive baseline (beta*-IPS, Jeunen and Gupta, SIGIR 2026).
"""

from offeval.plugin import hookimpl, lazy_names


def _estimators() -> tuple:
    """The estimators, in the demo's order (``ESTIMATORS``)."""
    from offeval_ncis.estimators import CIS, IS, NCIS, BetaIPS, PiecewiseNCIS, PointwiseNCIS

    return (IS, CIS, NCIS, PiecewiseNCIS, PointwiseNCIS, BetaIPS)


def _aliases() -> tuple:
    """The same estimators under the names obp users know, not repeated in the demo
    (``ALIASES``)."""
    from offeval_ncis.estimators import IPS, SNIPS, ClippedIPS

    return (IPS, SNIPS, ClippedIPS)


@hookimpl
def register_estimators(register):
    """Register the IS family, and its obp names (ips, snips, clipped_ips)."""
    for cls in (*_estimators(), *_aliases()):
        register(cls.name, cls)


@hookimpl
def register_demo_estimators(register):
    """Every IS estimator at its defaults, plus low caps to show what capping does."""
    from offeval_ncis.estimators import CIS, NCIS

    for cls in _estimators():
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

#: The public names, imported on first use (loading the plugin imports no estimator).
__getattr__ = lazy_names(
    __name__,
    {"offeval_ncis.estimators": __all__},
    computed={"ESTIMATORS": _estimators, "ALIASES": _aliases},
)
