"""What a measure is, declared once: its name, parameters, spellings, aggregation and kernel.

A measure module of :mod:`offeval_ir.measure` declares each of its measures with a
:class:`Declaration` in its tuple ``MEASURES`` (as ir-measures declares one measure per
module: a ``NAME``, typed parameters with defaults and choices, aliases). Beside it sits
the measure's kernel: ``kernel(lists, k)`` for offeval's measures (``lists`` a
:class:`~offeval_ir.measure.ranked.Ranked`), ``kernel(lists, param, k)`` for trec_eval's
(``lists`` a :class:`~offeval_ir.measure.trec_eval.lists.Lists`), the per-user values as
an array, its formula in its docstring. A kernel computes with the array namespace its
lists carry (``xp = lists.xp``: numpy, as the Array API standard's namespaces are
passed), so a measure module imports nothing numerical and the registry
(:mod:`offeval_ir.measure.registry`) reads every declaration without numpy.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

#: How a spelling takes a cut-off: ``optional`` (none: the whole list), ``required``,
#: ``none``.
CUTOFF_RULES = ("optional", "required", "none")
#: The forms of a trec_eval spelling: ``name`` (``map``, ``ndcg_cut@10``: a name of the
#: ir-measures form), ``plain`` (a measure without parameters: ``num_ret``, ``gm_map``),
#: ``cut`` (cut-offs after ``_`` or ``.``: ``P_5``, ``ndcg_cut.10,20``), ``level``
#: (decimal levels: ``iprec_at_recall_0.10``), ``free`` (one parameter string:
#: ``utility.2,-1,0,0``, ``ndcg.1=3,2=9``).
TREC_FORMS = ("name", "plain", "cut", "level", "free")


@dataclass(frozen=True)
class Param:
    """A parameter a measure string may state (``rel=2``), as ir-measures names it.

    A number (``kind`` float: positive, below ``high`` when given) sets the convention
    ``switch`` when stated; with ``recorded`` it is a parameter of the measure, kept in
    :attr:`Measure.params <offeval_ir.measures.Measure.params>` at ``default`` unless
    stated. A word (``kind`` str) is one of ``choices``, each naming the switches it
    sets.
    """

    name: str
    kind: type
    default: object
    doc: str
    switch: str = ""
    high: float | None = None
    recorded: bool = False
    choices: dict[str, tuple[tuple[str, object], ...]] | None = None


#: ir-measures' ``rel``: the relevance threshold.
REL = Param("rel", float, 1.0, "the least grade that is relevant", "relevance_threshold")


@dataclass(frozen=True)
class Spelling:
    """One way a toolkit writes a measure: the text, its cut-off rule (see
    :data:`CUTOFF_RULES`) and how its per-user values aggregate (``mean``, ``ratio``,
    ``sum``, ``geometric``)."""

    text: str
    cutoff: str = "optional"
    aggregate: str = "mean"


@dataclass(frozen=True)
class TrecSpelling:
    """A trec_eval spelling: ``form`` one of :data:`TREC_FORMS`; ``cutoff`` the rule of
    a ``name`` form; ``defaults`` the cut-offs or levels trec_eval's bare name means
    (``cut`` and ``level`` forms; empty: trec_eval's nine cut-offs 5 ... 1000)."""

    text: str
    form: str
    cutoff: str = "optional"
    aggregate: str = "mean"
    defaults: tuple = ()


@dataclass(frozen=True)
class Declaration:
    """One measure: everything the parser, the catalogues and the kernels read of it.

    - ``name``: offeval's metric name (what :func:`offeval_ir.metrics.compute` takes;
      a trec_eval measure's parameter follows a colon: ``utility:2,-1,0,0``).
    - ``kernel``: the function computing it (see the module docstring).
    - ``provider``: ``offeval`` (the measures every library shares, on offeval's
      conventions) or ``trec_eval`` (trec_eval's own, as its C sources define them).
    - ``params``: what a measure string may state (ir-measures' ``rel``, ``dcg``, ``p``).
    - ``cutoff``: the rule of offeval's own name (``name@k``); None: no own spelling.
    - ``aliases``: offeval's other spellings (``iDCG``, ``pnDCG``).
    - ``ir_measures``, ``trec_eval``, ``ranx``: how those toolkits write it.
    - ``value_range``: the range of a user's value under every convention (None: none).
    - ``tie_linear``: its expected value over a random order of tied items is the value
      on the tie groups' mean relevance (so ``ties='expected'`` computes it).
    - ``param_doc`` and ``read``: a trec_eval parameter after the colon, said in words,
      and read from its text (``read(text, label)``; None: the measure takes none).
    - ``needs_cutoff``: its k is part of its definition (trec_eval's ``unj``): NaN
      without one.
    """

    name: str
    kernel: Callable
    summary: str
    provider: str = "offeval"
    params: tuple[Param, ...] = ()
    cutoff: str | None = "optional"
    aliases: tuple[Spelling, ...] = ()
    ir_measures: tuple[Spelling, ...] = ()
    trec_eval: tuple[TrecSpelling, ...] = ()
    ranx: str | None = None
    value_range: tuple[float, float] | None = (0.0, 1.0)
    tie_linear: bool = False
    param_doc: str | None = None
    read: Callable[[str, str], object] | None = None
    needs_cutoff: bool = False

    @property
    def hint(self) -> str:
        """The name hints write for it with a cut-off: ir-measures' (``P``) where it
        takes one, else offeval's first alias, else its name."""
        cut = [s.text for s in self.ir_measures if s.cutoff != "none"]
        return (cut or [a.text for a in self.aliases] or [self.name])[0]
