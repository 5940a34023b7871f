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
import math
import re
from collections.abc import Callable
from dataclasses import dataclass

from offeval import ConfigurationError

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
class Measure:
    """One measure: an offeval metric at a cut-off, under some convention switches.

    ``name`` is the user's string without surrounding blanks (the column label
    in outputs); for a trec_eval list such as ``ndcg_cut.10,20`` it is the
    label trec_eval prints for each cut-off (``ndcg_cut_10``). ``overrides``
    and ``params`` are sorted by name.

    ``metric`` is a name :func:`offeval_ir.metrics.compute` takes; trec_eval's
    own measures carry their parameter after a colon (``iprec_at_recall:0.1``,
    ``utility:2,-1,0,0``, ``trec_ndcg:1=3,2=9``; see
    :mod:`offeval_ir.trec_measures`).

    ``aggregate`` says how the per-user values aggregate into the reported
    value (see :data:`offeval_ir.metrics.AGGREGATIONS`): ``mean`` for most
    measures; ``sum`` for trec_eval's counts (``num_ret``, ``num_rel``, ...),
    whose ``all`` line sums them; ``geometric`` for trec_eval's ``gm_map`` and
    ``gm_bpref`` (exp(mean(log(max(v, 1e-5))))); ``ratio`` for ``pnDCG@k``
    (post-normalised nDCG, Jeunen et al., KDD 2024: the mean over users of
    DCG@k over the mean of the ideal DCG@k), whose per-user value is the
    user's nDCG@k and whose numerator (``dcg``) and denominator (``idcg``)
    come per user in :attr:`MetricResult.parts
    <offeval_ir.metrics.MetricResult.parts>` from ``compute_measures``.
    """

    metric: str
    k: int | None
    overrides: tuple[tuple[str, object], ...]
    name: str
    params: tuple[tuple[str, object], ...] = ()
    aggregate: str = "mean"

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class Param:
    """A parameter a measure string may state (``rel=2``), as ir-measures names it.

    A number (``kind`` float: positive, below ``high`` when given) sets the convention
    ``switch`` when stated; with ``recorded`` it is a parameter of the measure, kept in
    :attr:`Measure.params` at ``default`` unless
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
    - ``tie_last``: it reads only the ranks' relevance, gain and judged marks, summed
      with a weight of the rank or cumulated, so ``ties='last'`` (every item of a tie
      group at the group's last rank) is defined for it.
    - ``param_doc`` and ``read``: a trec_eval parameter after the colon, said in words,
      and read from its text (``read(text, label)``; None: the measure takes none).
    - ``needs_cutoff``: its k is part of its definition (trec_eval's ``unj``): NaN
      without one.

    A declaration is the component ``offeval plugins`` lists under the kind ``measure``
    (hook ``register_measures``): its first docstring line says what it is and how the
    toolkits spell it, its signature gives what a measure string may state, and calling
    it builds that :class:`Measure` (``k=10, dcg="exp-log2"``).
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
    tie_last: bool = False
    param_doc: str | None = None
    read: Callable[[str, str], object] | None = None
    needs_cutoff: bool = False

    def __post_init__(self) -> None:
        """Its own docstring and signature (what a component's listing reads)."""
        object.__setattr__(self, "__doc__", self.described)
        object.__setattr__(self, "__signature__", self.signature)

    def __call__(self, k: int | None = None, **params: object) -> Measure:
        """The :class:`Measure` at cut-off ``k`` with ``params`` stated, as a measure string
        states them (``ndcg(dcg=exp-log2)@10``; trec_eval's text ``param`` after a colon:
        ``utility:2,-1,0,0``)."""
        name = self.name
        if self.read is not None:
            param = params.get("param")
            metric = name if param is None else f"{name}:{param}"
            label, params = metric, {}
            try:
                if self.needs_cutoff:
                    raise ConfigurationError(f"{name} needs a cut-off k")
                self.read("" if param is None else str(param), name)
            except ConfigurationError as error:
                raise ConfigurationError(f"{label!r}: {error}") from None
        else:
            written = ",".join(f"{param}={value}" for param, value in params.items())
            metric, label = name, f"{name}({written})" if written else name
        label += "" if k is None else f"@{k}"
        cut = None if k is None else cutoff(str(k), label)
        texts = {param: str(value) for param, value in params.items()}
        return measure_with(metric, cut, {p.name: p for p in self.params}, texts, label)

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


#: A number as a parameter is written (no sign but +, no quotes).
_NUMBER = re.compile(r"\+?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


def measure_with(
    metric: str, k: int | None, declared: dict[str, Param], texts: dict, label: str, how="mean"
) -> Measure:
    """The measure ``metric`` at cut-off ``k`` with the parameters ``texts`` states (name ->
    text) of those ``declared``, labelled ``label`` and aggregated ``how``."""
    overrides: dict[str, object] = {}
    params = {p.name: p.default for p in declared.values() if p.recorded}
    for name, text in texts.items():
        _stated(declared[name], text, label, overrides, params)
    overrides_, params_ = tuple(sorted(overrides.items())), tuple(sorted(params.items()))
    return Measure(metric, k, overrides_, label, params_, how)


def _stated(param: Param, text: str, label: str, overrides: dict, params: dict) -> None:
    """A parameter's value as the string states it, into the convention ``overrides`` or the
    measure's ``params`` (see :class:`Param`)."""
    # imported here: offeval.plugin's checks import numpy, which reading declarations needs not
    from offeval.plugin import check_choice, check_number  # noqa: PLC0415

    if param.choices is not None:
        value = check_choice(_unquote(text), f"{label!r}: {param.name}", sorted(param.choices))
        overrides.update(param.choices[value])
        return
    value = _number(text, param.name, label)
    if param.high is not None:
        value = check_number(
            value,
            f"{label!r}: {param.doc} {param.name}",
            high=param.high,
            high_open=True,
            rule=f"in (0, {param.high:g})",
        )
    if param.recorded:
        params[param.name] = value
    else:
        overrides[param.switch] = value


def cutoff(text: str, label: str) -> int:
    """The cut-off ``text`` writes, a whole number >= 1 (an error naming ``label``)."""
    value = text.strip()
    if not re.fullmatch(r"\d+", value) or int(value) < 1:
        raise ConfigurationError(
            f"the cut-off of {label!r} must be a whole number >= 1, got {value!r}"
        )
    return int(value)


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def _number(value: str, param: str, label: str) -> float:
    """A positive finite number written without quotes."""
    written = _NUMBER.fullmatch(value)
    number = float(value) if written else math.nan
    if not (math.isfinite(number) and number > 0):
        raise ConfigurationError(f"{label!r}: {param} must be a positive number, got {value!r}")
    return number
