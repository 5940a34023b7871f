"""Plugin ``slates``: slate and ranking off-policy estimators."""

from offeval import hookimpl


@hookimpl
def register_estimators(register):
    """Register the slate estimators (none yet)."""
