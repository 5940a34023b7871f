"""Plugin ``scaffold``: ``offeval new-plugin NAME`` writes a new estimator plugin package."""

from offeval import hookimpl
from offeval.plugin import Deferred

#: No public names: the plugin is its command.
__all__: list[str] = []


@hookimpl
def register_commands(register):
    """Register ``offeval new-plugin`` (imported when it runs)."""
    register(
        "new-plugin",
        Deferred(
            "offeval_scaffold.scaffold:NewPluginCommand",
            help="write a new estimator plugin package (estimator, entry point, kit test, chapter)",
        ),
    )
