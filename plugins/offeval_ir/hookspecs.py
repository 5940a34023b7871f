"""The hooks this plugin brings: other plugins register convention presets and measures
through them."""

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


@hookspec
def register_measures(register: Register) -> None:
    """Register IR measures: ``register(name, declaration)``, ``declaration`` an
    :class:`offeval_ir.measure.declaration.Declaration` named ``name`` whose kernel
    ``kernel(lists, k)`` computes it with offeval's conventions (provider ``offeval``);
    :func:`offeval_ir.metrics.compute` then takes ``name``, and measure strings its
    spellings (``name@5``, its ``aliases`` and ``ir_measures``: :mod:`offeval_ir.measures`;
    trec_eval's spellings and parameter text, ``read``, are trec_eval's own measures').
    A name is unique across plugins (a built-in measure's cannot be taken), and a
    spelling a built-in measure has, in any case, stays the built-in's."""
