"""The hook this plugin brings: other plugins register examination models through it."""

from __future__ import annotations

from offeval import hookspec
from offeval.plugin import Register


@hookspec
def register_examination_models(register: Register) -> None:
    """Register examination (position-bias) models e(i) = P(examined | rank i).

    ``register(name, factory)``: ``factory(**params)`` returns a callable
    mapping an integer array of 1-based ranks to examination probabilities,
    with a ``spec`` property giving the string that rebuilds it
    (``"mymodel(alpha=0.3)"``).
    """
