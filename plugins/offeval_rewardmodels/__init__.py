"""Plugin ``rewardmodels``: direct-method and doubly robust off-policy estimators."""

from offeval import hookimpl


@hookimpl
def register_estimators(register):
    """Register the reward-model estimators (none yet)."""
