"""Plugin ``simulation``: seeded environments with exact ground truth."""

from offeval import hookimpl
from offeval.plugin import lazy_names

#: The simulated users examine positions through the ranking plugin's examination models.
REQUIRES = ("ranking",)


@hookimpl
def register_environments(register):
    """Register the reference ranking environment as ``default``."""
    from offeval_simulation.environment import Environment

    register("default", Environment)


__all__ = ["ABResult", "Environment", "RankingPolicy"]

#: The public names, imported on first use (loading the plugin imports no simulator).
__getattr__ = lazy_names(
    __name__,
    {
        "offeval_simulation.environment": ("ABResult", "Environment"),
        "offeval_simulation.rankers": ("RankingPolicy",),
    },
)
