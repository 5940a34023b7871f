"""The statistics engine: mergeable moments, linearised estimates, tests."""

from offeval.stats.compare import (
    PairwiseComparison,
    adjusted_p_values,
    correlation,
    kendall_tau,
    pairwise_grid,
    unpaired_difference,
)
from offeval.stats.inference import Linearisation, interval, ratio_of_means
from offeval.stats.moments import Moments, Tally

__all__ = [
    "Linearisation",
    "Moments",
    "PairwiseComparison",
    "adjusted_p_values",
    "Tally",
    "correlation",
    "interval",
    "kendall_tau",
    "pairwise_grid",
    "ratio_of_means",
    "unpaired_difference",
]
