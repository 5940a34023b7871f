"""The hook this plugin brings: other plugins register convention presets through it."""

from __future__ import annotations

from offeval import hookspec
from offeval.plugin import Register


@hookspec
def register_metric_conventions(register: Register) -> None:
    """Register named convention presets for top-n IR metrics.

    ``register(name, factory)``: ``factory(**overrides)`` returns an
    :class:`offeval_ir.Conventions` that fixes every switch at once,
    documented with the source it follows.
    """
