"""The statistics engine: mergeable moments, linearised estimates, tests.

Users and plugins import from here (``from offeval.stats import pairwise_grid``), never
from its modules; the names are imported on first use.
"""

from __future__ import annotations

from offeval.lazy import lazy_names

#: Each module of the package and the public names it defines.
_WHERE = {
    "offeval.stats.compare": (
        "PairwiseComparison",
        "adjusted_p_values",
        "correlation",
        "kendall_tau",
        "pairwise_grid",
        "unpaired_difference",
    ),
    "offeval.stats.corrections": ("CORRECTIONS",),
    "offeval.stats.inference": (
        "PSD_TOLERANCE",
        "SYMMETRY_TOLERANCE",
        "Linearisation",
        "interval",
        "ratio_of_means",
    ),
    "offeval.stats.moments": ("Moments", "Tally"),
    "offeval.stats.ties": (
        "RTOL",
        "first_maximum",
        "first_minimum",
        "tie_groups",
        "tied",
        "tolerant_order",
        "tolerant_sign",
    ),
}

__all__ = sorted(name for names in _WHERE.values() for name in names)


__getattr__ = lazy_names(__name__, _WHERE)
