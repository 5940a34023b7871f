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

import inspect
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
    (``cut`` and ``level`` forms; empty: trec_eval's nine cut-offs 5 ... 1000).

    Of a ``free`` form: ``underscore``, its text may follow ``_`` as trec_eval labels it
    (``utility_2,-1,0,0``; otherwise only a text with ``=`` may, ``ndcg_1=3``, so that
    ``ndcg_10`` is not ndcg with gains); ``sorted_levels``, its text is a list of levels
    trec_eval reads sorted (``11pt_avg``: one level given twice is an error)."""

    text: str
    form: str
    cutoff: str = "optional"
    aggregate: str = "mean"
    defaults: tuple = ()
    underscore: bool = False
    sorted_levels: bool = False


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

    A declaration is the component ``offeval plugins`` lists under the kind ``measure``
    (hook ``register_measures``): its first docstring line says what it is and how the
    toolkits spell it, its signature gives what a measure string may state, and calling
    it builds that :class:`~offeval_ir.measures.Measure` (``k=10, dcg="exp-log2"``).
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

    def __post_init__(self) -> None:
        """Its own docstring and signature (what a component's listing reads)."""
        object.__setattr__(self, "__doc__", self.described)
        object.__setattr__(self, "__signature__", self.signature)

    def __call__(self, k: int | None = None, **params: object):
        """The :class:`~offeval_ir.measures.Measure` at cut-off ``k`` with ``params``
        stated, as a measure string states them (``ndcg(dcg=exp-log2)@10``)."""
        from offeval_ir.measures import stated

        return stated(self, k, params)

    @property
    def described(self) -> str:
        """One line: its summary, then its spellings by toolkit (``average precision at k;
        ir-measures AP, MAP; trec_eval map, map_cut_k, gm_map; ranx map``)."""
        words = [self.summary + (f" (parameter: {self.param_doc})" if self.param_doc else "")]
        for toolkit, texts in self.spellings.items():
            words += [f"{toolkit} {', '.join(texts)}"] if texts else []
        return "; ".join(words)

    @property
    def spellings(self) -> dict[str, tuple[str, ...]]:
        """How offeval (its other names), ir-measures, trec_eval (``P_k``: a cut-off after
        ``_``, ``iprec_at_recall_x`` a level, ``utility[.params]`` a parameter string
        after ``.``) and ranx write it."""
        trec = {"cut": "_k", "level": "_x", "free": ".params"}
        written = [
            s.text + trec.get(s.form, "_k" if s.cutoff == "required" else "")
            for s in self.trec_eval
        ]
        trec_eval = [
            f"{t}[.params]" if f"{t}.params" in written else t
            for t in written
            if not (t.endswith(".params") and t.removesuffix(".params") in written)
        ]
        return {
            "offeval alias": tuple(a.text for a in self.aliases),
            "ir-measures": tuple(s.text for s in self.ir_measures),
            "trec_eval": tuple(dict.fromkeys(trec_eval)),
            "ranx": (self.ranx,) if self.ranx else (),
        }

    @property
    def signature(self) -> inspect.Signature:
        """What a measure string may state: its cut-off ``k`` (unless it takes none), its
        parameters at their defaults, or trec_eval's parameter text ``param``."""
        named = [] if self.cutoff == "none" else [("k", None)]
        named += [(p.name, p.default) for p in self.params]
        named += [("param", None)] if self.read is not None else []
        keyword = inspect.Parameter.KEYWORD_ONLY
        return inspect.Signature([inspect.Parameter(n, keyword, default=d) for n, d in named])

    @property
    def hint(self) -> str:
        """The name hints write for it with a cut-off: ir-measures' (``P``) where it
        takes one, else offeval's first alias, else its name."""
        cut = [s.text for s in self.ir_measures if s.cutoff != "none"]
        return (cut or [a.text for a in self.aliases] or [self.name])[0]
