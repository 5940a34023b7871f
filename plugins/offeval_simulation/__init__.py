"""Plugin ``simulation``: seeded environments with exact ground truth."""

from offeval.plugin import hookimpl
from offeval_simulation.environment import ABResult, Environment
from offeval_simulation.rankers import RankingPolicy

#: The simulated users examine positions through the dcg plugin's examination models.
REQUIRES = ("dcg",)


@hookimpl
def register_environments(register):
    """Register the reference ranking environment as ``default``."""
    register("default", Environment)


__all__ = ["ABResult", "Environment", "RankingPolicy"]
