"""Plugin ``simulation``: seeded environments with exact ground truth."""

from offeval import hookimpl
from offeval_simulation.environment import ABResult, Environment
from offeval_simulation.examination import MODELS
from offeval_simulation.rankers import RankingPolicy


@hookimpl
def register_examination_models(register):
    """Register the standard examination models."""
    for name, factory in MODELS.items():
        register(name, factory)


@hookimpl
def register_environments(register):
    """Register the reference ranking environment as ``default``."""
    register("default", Environment)


__all__ = ["ABResult", "Environment", "MODELS", "RankingPolicy"]
