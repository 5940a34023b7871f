"""The IS family's importance weights, capping and weight diagnostics.

They are shared building blocks of the plugin API (:mod:`offeval.engine.weights`,
imported from :mod:`offeval.plugin`), named here as well for readers of this plugin.
"""

from offeval.plugin import (
    ROWS,
    capped_reward_column,
    capped_rewards,
    capped_weight_column,
    capped_weights,
    check_cap,
    weight_diagnostics,
    weight_tally,
)

__all__ = [
    "ROWS",
    "capped_reward_column",
    "capped_rewards",
    "capped_weight_column",
    "capped_weights",
    "check_cap",
    "weight_diagnostics",
    "weight_tally",
]
