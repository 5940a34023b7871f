"""Measure strings as IR users type them, parsed to offeval metrics, cut-offs and conventions.

Three spellings are understood, and may be mixed in one list; each measure's
declaration (:mod:`offeval_ir.measure`) gives its spellings, and ``offeval plugins
measure`` lists them. A measure another plugin registers (hook ``register_measures``)
is spelled as its declaration says too (its name, aliases and ir-measures spellings),
in the registry it is registered in (the active one, :func:`offeval.active_registry`):
``misses@5``; a spelling a built-in measure has, in any case, stays the built-in's. The
tables are read off the declarations when first needed: the built-in measures' once, a
registry's when a string is none of theirs (again when its measures change).

- **ir-measures** (https://ir-measur.es): ``Name[(param=value, ...)][@k]``:
  ``nDCG@10``, ``P(rel=2)@5``, ``RBP(rel=2,p=0.9)``, ``nDCG(dcg='exp-log2')@10``
  (the value may be left unquoted, ``nDCG(dcg=exp-log2)@10``, which ir-measures
  itself rejects), or the cut-off as a parameter, ``P(cutoff=5)``.
- **trec_eval**: ``P_5``, ``map``, ``ndcg_cut_10``, ``recip_rank``, and trec_eval's
  own measures (:mod:`offeval_ir.measure.trec_eval`): ``num_ret`` (its counts
  summed, not averaged), ``gm_map`` (geometric means), ``iprec_at_recall_0.10``,
  ``utility`` and more.
  Parameters may follow a dot, as trec_eval's ``-m`` takes them: a list of
  cut-offs or levels names one measure per value, labelled as trec_eval
  prints it (``ndcg_cut.10,20`` is ``ndcg_cut_10`` and ``ndcg_cut_20``,
  ``ndcg_cut.10`` is ``ndcg_cut_10``, ``iprec_at_recall..10,.20`` is
  ``iprec_at_recall_0.10`` and ``_0.20``); a parameter string is part of the
  label (``utility.2,-1,0,0`` is ``utility_2,-1,0,0``, ``ndcg.1=3,2=9``, the
  gains of grades 1 and 2, is ``ndcg_1=3,2=9``). Bare ``rbp`` is trec_eval's
  RBP (graded gains over the query's highest grade, p = 0.9, whatever the
  relevance threshold); ir-measures' ``RBP``, ``RBP(p=..)`` and offeval's
  ``rbp@k`` are offeval's (relevant at the threshold, p = 0.8 unless given).
  :func:`trec_eval_measures` expands trec_eval's ``-m`` arguments as trec_eval
  does (groups such as ``all_trec``, bare names at trec_eval's default
  parameters: ``P`` is P_5 ... P_1000), in trec_eval's printing order.
- **offeval's own metric names** with an optional ``@k`` (no cut-off: the whole
  list): ``precision@5``, ``hit_rate@10``, ``ap@100``, ``ndcg@10``, ``f1@5``,
  ``rr``, and the same parameters as above (``precision(rel=2)@5``); also
  ``iDCG@k`` (``idcg@k``: the ideal DCG that nDCG@k divides by) and
  ``pnDCG@k`` (post-normalised nDCG: mean DCG@k over mean iDCG@k, see
  :attr:`Measure.aggregate`).

Names are matched exactly first; a name of two letters or more also matches
whatever its case (``ndcg@10``, ``Map_Cut_100``, ``DCG@10``), resolving to
offeval's own name when one is spelled that way (``SUCCESS`` is ``success``).
The single letters ``P`` and ``R`` are case-sensitive, as in ir-measures:
``p`` is RBP's persistence parameter, and ``r@5`` is too easily read as
R-precision.

A measure string only sets the conventions it states, as its declaration's
parameters say (``rel=N`` the relevance threshold, ``dcg=exp-log2`` the gain
2^rel - 1 with a log2 discount; RBP's persistence ``p``, not a convention, goes
in ``params``). Everything else (``nDCG@10``'s default formulation, the ideal
ranking, AP's denominator, ...) comes from the Conventions preset the measures
are computed under: the ``trec_eval`` preset reproduces what ir-measures and
trec_eval do by default.

``P``, ``R`` and ``Success`` without a cut-off are errors (ir-measures requires
one, and trec_eval's bare ``P`` means nine cut-offs at once); the same goes for
``map_cut`` and ``ndcg_cut``. offeval's ``precision``, ``recall`` and ``success``
without a cut-off are whole-list values (trec_eval's bare ``recall`` and
``success`` expand to its default cut-offs in :func:`trec_eval_measures` only).
:func:`parse_measures` keeps a cut-off list in the order written and refuses
a cut-off that is not a whole number; :func:`trec_eval_measures` sorts them and
reads ``23.4`` as 23, as trec_eval does.
"""

from __future__ import annotations

import difflib
import re
import weakref
from collections.abc import Iterable
from functools import cache, cached_property
from typing import TYPE_CHECKING

from offeval import ConfigurationError
from offeval.plugin import hint
from offeval_ir.measure.declaration import Declaration, Measure, Param, cutoff, measure_with
from offeval_ir.measure.registry import DECLARATIONS, checked_param, declaration, plugged
from offeval_ir.trec_catalogue import CATALOGUE, GROUPS, SUPPORTED

if TYPE_CHECKING:
    from offeval import Registry

#: trec_eval's default cut-offs (m_P.c and the others; success and unj their own).
_TREC_CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)


class _Tables:
    """The spelling tables of one registry's measures, read off their declarations
    (``tables``: :func:`_read`'s, by attribute), and those derived from them.

    A spelling maps to (metric, cut-off rule: ``optional``, no cut-off the whole list;
    ``required``; ``none``), a trec_eval name with parameters to its metric.
    """

    def __init__(
        self,
        declarations: dict[str, Declaration],
        tables: dict[str, dict],
        plugged: tuple[Declaration, ...] = (),
    ):
        #: The registry's declarations: the built-in ones, then those other plugins register.
        self.declarations = declarations
        #: Per offeval metric: whether it takes a cut-off, the parameters it accepts besides
        #: ``cutoff`` (as ir-measures names them), and its name in hints.
        self.metrics: dict[str, tuple[bool, dict[str, Param], str]] = tables["metrics"]
        self.own: dict[str, tuple[str, str]] = tables["own"]
        self.ir_measures: dict[str, tuple[str, str]] = tables["ir_measures"]
        self.trec_eval: dict[str, tuple[str, str]] = tables["trec_eval"]
        #: trec_eval measures whose cut-offs follow the name: ``P_5``, ``ndcg_cut.10,20``,
        #: with the cut-offs trec_eval's bare name means (none: :data:`_TREC_CUTOFFS`).
        self.trec_cuts: dict[str, str] = tables["trec_cuts"]
        self.trec_default_cuts: dict[str, tuple] = tables["trec_default_cuts"]
        #: trec_eval measures at levels written as decimals: ``iprec_at_recall_0.10``.
        self.trec_levels: dict[str, str] = tables["trec_levels"]
        self.trec_default_levels: dict[str, tuple] = tables["trec_default_levels"]
        #: trec_eval measures with one free parameter string, labelled ``name_<string>``;
        #: those whose string may follow ``_`` without an ``=``, and those whose string is
        #: levels trec_eval reads sorted (:class:`~offeval_ir.measure.declaration.TrecSpelling`).
        self.trec_free: dict[str, str] = tables["trec_free"]
        self.trec_underscore: dict[str, str] = tables["trec_underscore"]
        self.trec_sorted_levels: dict[str, str] = tables["trec_sorted_levels"]
        #: trec_eval's names of measures without parameters, with how their per-user values
        #: aggregate (its counts are summed, gm_* geometric means). ``rbp`` alone is
        #: trec_eval's RBP (graded gains, p = 0.9); ``RBP``, ``rbp@k`` and ``RBP(p=...)``
        #: are offeval's (binary relevance at the threshold, p = 0.8 unless given).
        self.trec_plain: dict[str, tuple[str, str]] = tables["trec_plain"]
        #: offeval's other names: the ideal DCG and post-normalised nDCG.
        self.extra: dict[str, tuple[str, str]] = tables["extra"]
        #: Spellings (lower case) whose per-user values aggregate otherwise than by their
        #: mean.
        self.aggregates: dict[str, str] = tables["aggregates"]
        #: The other plugins' declarations these tables read (what :func:`_tables` compares).
        self.plugged = plugged

    @cached_property
    def trec_parameterised(self) -> dict[str, str]:
        """trec_eval's names that take parameters: cut-offs, levels or a free string."""
        return {**self.trec_cuts, **self.trec_levels, **self.trec_free}

    @cached_property
    def spellings(self) -> dict[str, tuple[str, str]]:
        """Every spelling of the ir-measures form, offeval's own winning a clash."""
        return {**self.trec_eval, **self.ir_measures, **self.extra, **self.own}

    @cached_property
    def any_case(self) -> dict[str, tuple[str, str]]:
        """{lower-case spelling of 2+ letters: its entry}, offeval's own winning a clash."""
        found: dict[str, tuple[str, str]] = {}
        for table in (self.own, self.ir_measures, self.extra, self.trec_eval):
            for name, entry in table.items():
                if len(name) > 1:
                    found.setdefault(name.lower(), entry)
        return found

    @cached_property
    def trec_only_cuts(self) -> tuple[str, ...]:
        """trec_eval's cut-off measures that no other table spells: ``unj@3`` is ``unj_3``."""
        return tuple(
            name
            for name, metric in self.trec_cuts.items()
            if self.declarations[metric].provider == "trec_eval"
        )

    @cached_property
    def suggested(self) -> dict[str, str]:
        """Every spelling, one per lower-case form (ir-measures' first, then trec_eval's,
        then offeval's own)."""
        found: dict[str, str] = {}
        for table in (self.ir_measures, self.trec_eval, self.trec_cuts, self.extra, self.own):
            for name in table:
                found.setdefault(name.lower(), name)
        return found

    @cached_property
    def known(self) -> str:
        """The accepted names, by toolkit."""

        def cut(text: str, rule: str) -> str:
            return {"optional": f"{text}[@k]", "required": f"{text}@k", "none": text}[rule]

        ir_names = ", ".join(cut(n, rule) for n, (_, rule) in self.ir_measures.items())
        trec_names = [f"{n}_k" for n in self.trec_cuts] + [f"{n}_x" for n in self.trec_levels]
        trec_names += [n for n in {**self.trec_eval, **self.trec_plain} if n not in self.trec_cuts]
        own = [cut(n, rule) for n, (_, rule) in {**self.own, **self.extra}.items()]
        return (
            f"ir-measures: {ir_names}, with parameters as in P(rel=2)@5; trec_eval: "
            f"{', '.join(dict.fromkeys(trec_names))} (k may be a list: ndcg_cut.10,20); "
            f"offeval: {', '.join(own)}"
        )


#: The tables that hold spellings (the others are keyed by metric or lower-case spelling).
_SPELLING_TABLES = (
    "own",
    "ir_measures",
    "trec_eval",
    "trec_cuts",
    "trec_levels",
    "trec_free",
    "trec_plain",
    "extra",
)


def _read(declarations: Iterable[Declaration]) -> dict[str, dict]:
    """The tables of :class:`_Tables` read off ``declarations``, by attribute name."""
    listed = list(declarations)

    def spelled(table: str, forms: tuple[str, ...] = ()) -> dict[str, tuple[str, str]]:
        return {
            s.text: (d.name, s.cutoff)
            for d in listed
            for s in getattr(d, table)
            if not forms or s.form in forms
        }

    def trec(form: str) -> dict[str, tuple[str, tuple]]:
        return {s.text: (d.name, s.defaults) for d in listed for s in d.trec_eval if s.form == form}

    def free(rule: str) -> dict[str, str]:
        return {
            s.text: d.name
            for d in listed
            for s in d.trec_eval
            if s.form == "free" and getattr(s, rule)
        }

    metrics = {
        d.name: (d.cutoff != "none", {p.name: p for p in d.params}, d.hint)
        for d in listed
        if d.cutoff is not None
    }
    cuts, levels = trec("cut"), trec("level")
    return {
        "metrics": metrics,
        "own": {m: (m, "optional" if cut else "none") for m, (cut, _, _) in metrics.items()},
        "ir_measures": spelled("ir_measures"),
        "trec_eval": spelled("trec_eval", ("name",)),
        "trec_cuts": {name: metric for name, (metric, _) in cuts.items()},
        "trec_default_cuts": {name: cut for name, (_, cut) in cuts.items() if cut},
        "trec_levels": {name: metric for name, (metric, _) in levels.items()},
        "trec_default_levels": {name: level for name, (_, level) in levels.items()},
        "trec_free": {name: metric for name, (metric, _) in trec("free").items()},
        "trec_underscore": free("underscore"),
        "trec_sorted_levels": free("sorted_levels"),
        "trec_plain": {
            s.text: (d.name, s.aggregate) for d in listed for s in d.trec_eval if s.form == "plain"
        },
        "extra": {s.text: (d.name, s.cutoff) for d in listed for s in d.aliases},
        "aggregates": {
            s.text.lower(): s.aggregate
            for d in listed
            for s in (*d.aliases, *d.ir_measures)
            if s.aggregate != "mean"
        },
    }


@cache
def _builtin_tables() -> _Tables:
    """The tables of this package's measures (:data:`DECLARATIONS`)."""
    return _Tables(dict(DECLARATIONS), _read(DECLARATIONS.values()))


def _with(plugged: tuple[Declaration, ...]) -> _Tables:
    """The built-in tables, then the spellings of the measures other plugins register
    that no built-in measure has in any case (a built-in keeps every name it has)."""
    builtin = _builtin_tables()
    if not plugged:
        return builtin
    theirs = _read(plugged)
    taken = {name.lower() for name in builtin.declarations}
    taken.update(name.lower() for table in _SPELLING_TABLES for name in getattr(builtin, table))
    tables = {
        name: {
            **getattr(builtin, name),
            **{key: value for key, value in table.items() if key.lower() not in taken},
        }
        for name, table in theirs.items()
    }
    tables["metrics"] = {**builtin.metrics, **theirs["metrics"]}  # by metric: names unique
    declared = {**builtin.declarations, **{d.name: d for d in plugged}}
    return _Tables(declared, tables, plugged)


#: Per registry, the tables of its measures (built when first read, again when they change).
_BUILT: weakref.WeakKeyDictionary[Registry, _Tables] = weakref.WeakKeyDictionary()


def _tables() -> _Tables:
    """The spelling tables of the active registry's measures: the built-in ones and those
    other plugins register (``register_measures``), built when first asked for."""
    from offeval import active_registry  # the registry's machinery, imported when parsing

    registry = active_registry()
    theirs = plugged(registry)
    built = _BUILT.get(registry)
    if built is None or [*map(id, built.plugged)] != [*map(id, theirs)]:  # built holds its own
        built = _BUILT[registry] = _with(theirs)
    return built


def __getattr__(name: str) -> object:
    """``KNOWN`` (the accepted names, as error messages list them) and ``_SUGGESTED`` (every
    spelling, one per lower-case form) of the active registry's measures."""
    if name == "KNOWN":
        return _tables().known
    if name == "_SUGGESTED":
        return _tables().suggested
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


_IR_FORM = re.compile(r"(?P<name>[^\W\d]\w*)\s*(?:\((?P<params>.*)\))?\s*(?:@(?P<cut>.*))?", re.S)
_GLUED = re.compile(r"(?P<base>[^\W\d]\w*?)[^\w@]*(?P<cut>\d+)\W*")
_SUFFIXED = re.compile(r"(?P<base>[^\W\d]\w*?)[._](?P<cut>\d[\d.,]*)")


def value_range(label: str) -> tuple[float, float] | None:
    """The range of the measure ``label`` names where it is a mean or ratio of per-user
    values its declaration bounds (``value_range``); None for the others, and for a label
    that names no measure."""
    try:
        measure = parse_measure(label)
    except ConfigurationError:
        return None
    bounds = declaration(measure.metric).value_range
    return bounds if measure.aggregate in ("mean", "ratio") else None


def parse_measure(text: str) -> Measure:
    """The measure ``text`` names (see the module docstring for the syntaxes).

    Raises :class:`offeval.ConfigurationError` for an unknown name, a bad or
    missing cut-off, a cut-off on a measure that takes none, an unknown
    parameter or value, and for a trec_eval list of cut-offs (several
    measures: use :func:`parse_measures`).
    """
    found = _parsed(text)
    if len(found) > 1:
        names = ", ".join(m.name for m in found)
        raise ConfigurationError(
            f"{text.strip()!r} names {len(found)} measures ({names}): use parse_measures"
        )
    return found[0]


def parse_measures(texts: Iterable[str]) -> list[Measure]:
    """The measures the strings name, in order (a trec_eval cut-off list gives several).

    Two spellings of one measure under one label (``ndcg_cut_10`` next to
    ``ndcg_cut.10`` or ``ndcg_cut.10,20``) are one measure, kept where it first
    appears; the same string given twice (``nDCG@10`` twice), or one label for
    two different measures, is an error.
    """
    if isinstance(texts, str):
        raise ConfigurationError(
            f"parse_measures takes a list of measure strings, got the string {texts!r}"
        )
    measures: list[Measure] = []
    sources: dict[str, str] = {}
    for text in texts:
        _one_measure(text)
        for measure in _parsed(text):
            if measure.name in sources:
                first, here = sources[measure.name], text.strip()
                if first != here and measure in measures:
                    continue  # ndcg_cut.10 and ndcg_cut_10: one measure, one column
                origin = "" if first == here == measure.name else f" (from {first!r} and {here!r})"
                raise ConfigurationError(f"measure {measure.name!r} is given twice{origin}")
            sources[measure.name] = text.strip()
            measures.append(measure)
    return measures


def _one_measure(text: str) -> None:
    """An error when a comma outside parentheses splits ``text`` into what look like two
    measures (``nDCG@10,P@5``); a trec_eval cut-off list (``ndcg_cut.10,20``) is one."""
    parts = [part.strip() for part in re.split(r",(?![^()]*\))", str(text))]
    if any(re.search(r"[A-Za-z]", part) for part in parts[1:]):
        options = " ".join(f"-m {name}" for name in parts)
        raise ConfigurationError(
            f"{text!r} names several measures {parts}: "
            + hint("give one measure per string", f"give one measure per -m: {options}")
        )


def group_by_conventions(
    measures: Iterable[Measure],
) -> list[tuple[tuple[tuple[str, object], ...], list[Measure]]]:
    """The measures grouped by the convention switches they set, in first-appearance order.

    Each group can be computed under one Conventions (the preset ``.with_()``
    the group's overrides); measures keep their order within a group.
    """
    groups: dict[tuple[tuple[str, object], ...], list[Measure]] = {}
    for measure in measures:
        groups.setdefault(measure.overrides, []).append(measure)
    return list(groups.items())


def _lookup(tables: _Tables, name: str) -> tuple[str, str] | None:
    """(metric, cut-off rule) of a spelling, exact first, then in any case (2+ letters)."""
    if name in tables.spellings:
        return tables.spellings[name]
    return tables.any_case.get(name.lower()) if len(name) > 1 else None


def _parsed(text: str) -> list[Measure]:
    """The measures of ``text``, read with the built-in measures' tables, else with the
    active registry's: a string a built-in measure spells means the same in every
    registry (another plugin's spellings never take one of theirs), so parsing it loads no
    plugin."""
    try:
        return _parse(_builtin_tables(), text, suggest=False)
    except ConfigurationError:
        return _parse(_tables(), text)


def _parse(tables: _Tables, text: str, *, suggest: bool = True) -> list[Measure]:
    """The measures of ``text``; ``suggest=False`` (the suggestions' own check) raises
    without looking for close names, so a suggestion never re-enters the search."""
    if not isinstance(text, str):
        raise ConfigurationError(f"a measure is a string such as 'nDCG@10', got {text!r}")
    label = text.strip()
    if not label:
        raise ConfigurationError(f"empty measure name; known: {tables.known}")
    trec = _trec_cuts(tables, label)
    if trec is not None:
        return trec
    form = _IR_FORM.fullmatch(label)
    if form and form["name"] in tables.trec_only_cuts and form["cut"] is not None:
        return _trec_at(tables, form, label)
    entry = _lookup(tables, form["name"]) if form else None
    if entry is None:
        if suggest and form:
            declaration(form["name"])  # another plugin's measure it refuses: an error saying why
        raise ConfigurationError(_unknown(tables, label) if suggest else label)
    metric, rule = entry
    spelling = form["name"]
    raw = _split_params(form["params"], label) if form["params"] is not None else {}
    declared = tables.metrics[metric][1]
    accepted = (*declared, *(("cutoff",) if rule != "none" else ()))
    for param in raw:
        if param not in accepted:
            allowed = ", ".join(sorted(accepted)) or "none"
            raise ConfigurationError(
                f"{label!r}: {spelling} takes no parameter {param!r} (accepted: {allowed})"
            )
    k = None
    if form["cut"] is not None:
        if rule == "none":
            raise ConfigurationError(_nocutoff(tables, label, spelling, metric))
        k = cutoff(form["cut"], label)
    if "cutoff" in raw:
        if k is not None:
            raise ConfigurationError(f"{label!r} gives the cut-off twice (cutoff= and @)")
        k = cutoff(raw["cutoff"], label)
    if k is None and rule == "required":
        joint = "_" if spelling.lower() in map(str.lower, tables.trec_eval) else "@"
        raise ConfigurationError(
            f"{label!r} needs a cut-off: write {spelling}{joint}k (as in {spelling}{joint}10)"
        )
    texts = {name: text for name, text in raw.items() if name != "cutoff"}
    aggregate = tables.aggregates.get(spelling.lower(), "mean")
    return [measure_with(metric, k, declared, texts, label, aggregate)]


def _trec_at(tables: _Tables, form: re.Match, label: str) -> list[Measure]:
    """``unj@k`` / ``relative_P@k``: trec_eval's measure at cut-off k, labelled as written
    (as ``map_cut@5`` is)."""
    name = form["name"]
    if form["params"] is not None:
        raise ConfigurationError(f"{label!r}: {name} takes no parameter (write {name}@k)")
    (measure,) = _trec_parameterised(tables, name, name, form["cut"], label, strict=True)
    return [Measure(measure.metric, measure.k, (), label)]


def _trec_cuts(tables: _Tables, label: str) -> list[Measure] | None:
    """trec_eval's parameterised names (``P_5``, ``ndcg_cut.10,20``, ``iprec_at_recall_0.10``,
    ``utility.2,-1,0,0``) and its names of measures only it has (``num_ret``, ``binG``,
    bare ``rbp``, ...): their measures, labelled as trec_eval prints them; None when
    ``label`` is not of this form."""
    if label in (*tables.trec_only_cuts, *tables.trec_levels):
        example = "5" if label in tables.trec_cuts else "0.10"
        raise ConfigurationError(
            f"{label!r} needs a {'cut-off' if label in tables.trec_cuts else 'level'}: write "
            f"{label}_{example} (or a list, {label}.{example},...); trec_eval's bare "
            f"{label}, all its default ones, is trec_eval_measures([{label!r}])"
        )
    plain = tables.trec_plain.get(label)
    if plain is not None:
        metric, aggregate = plain
        return [Measure(metric, None, (), label, aggregate=aggregate)]
    for base in sorted(tables.trec_parameterised, key=len, reverse=True):
        head = label[: len(base) + 1]
        if len(head) <= len(base) or head[-1] not in "._":
            continue
        if head[:-1] != base and (len(base) == 1 or head[:-1].lower() != base.lower()):
            continue
        typed, rest = head[:-1], label[len(base) + 1 :]
        if (
            head[-1] == "_"
            and base in tables.trec_free
            and not ("=" in rest or base in tables.trec_underscore)
        ):
            continue  # ndcg_10 is not ndcg with gains: an unknown name, with a hint
        return _trec_parameterised(tables, base, typed, rest, label, strict=True)
    return None


def _trec_parameterised(
    tables: _Tables, base: str, typed: str, rest: str | None, label: str, *, strict: bool
) -> list[Measure]:
    """The measures of trec_eval's ``base`` with the parameter text ``rest`` (None:
    trec_eval's defaults), labelled ``typed_...`` as trec_eval prints them.

    ``strict`` refuses what trec_eval's atol/atof would read loosely (a cut-off of
    ``23.4`` is 23 to trec_eval); trec_eval's own -m arguments read them as it does.
    """
    metric = tables.trec_parameterised[base]
    if base in tables.trec_cuts:
        if rest is None:
            ks = list(tables.trec_default_cuts.get(base, _TREC_CUTOFFS))
        else:
            ks = [cutoff(cut, label) if strict else _atol(cut, label) for cut in rest.split(",")]
            _no_duplicate([f"{typed}_{k}" for k in ks], label)
            ks = ks if strict else sorted(ks)  # trec_eval prints its cut-offs sorted
        return [Measure(metric, k, (), f"{typed}_{k}") for k in ks]
    if base in tables.trec_levels:
        if rest is None:
            levels = list(tables.trec_default_levels[base])
        else:
            levels = [_atof(value, label) for value in rest.split(",")]
            _no_duplicate([f"{typed}_{level:3.2f}" for level in levels], label)
            levels = levels if strict else sorted(levels)
        for level in levels:  # a recall level in [0, 1], a multiple of R > 0
            _check_trec(f"{metric}:{level!r}", base, label)
        return [
            Measure(f"{metric}:{level!r}", None, (), f"{typed}_{level:3.2f}") for level in levels
        ]
    # trec_eval's measures with one parameter string, printed as given
    if rest is None or rest == "":
        return [Measure(metric, None, (), typed)]
    full = f"{metric}:{_trec_param_text(tables, base, rest, label)}"
    _check_trec(full, base, label)
    return [Measure(full, None, (), f"{typed}_{rest}")]


def _check_trec(metric: str, base: str, label: str) -> None:
    """The registry's check of ``metric`` with its parameter, its error naming ``label``."""
    try:
        checked_param(metric, None, base)
    except ConfigurationError as error:
        raise ConfigurationError(f"{label!r}: {error}") from None


def _trec_param_text(tables: _Tables, base: str, rest: str, label: str) -> str:
    """A parameter string as the metric reads it (levels in order for a spelling that
    declares ``sorted_levels``: 11pt_avg's)."""
    if base in tables.trec_sorted_levels:
        levels = sorted(_atof(value, label) for value in rest.split(","))
        _no_duplicate(levels, label)  # trec_eval averages over its levels sorted
        return ",".join(repr(level) for level in levels)
    return rest


def _no_duplicate(values: list, label: str) -> None:
    """An error naming the first value ``label`` gives twice (trec_eval refuses it too)."""
    seen = set()
    for value in values:
        if value in seen:
            raise ConfigurationError(
                f"measure {value!r} is given twice (in {label!r}; trec_eval refuses a "
                "duplicate cut-off too)"
            )
        seen.add(value)


def _atol(text: str, label: str) -> int:
    """A cut-off as trec_eval's atol reads it: its leading digits (``23.4`` is 23), >= 1."""
    digits = re.match(r"\s*\+?(\d+)", text)
    if not digits or int(digits[1]) < 1:
        raise ConfigurationError(
            f"the cut-off of {label!r} must be a whole number >= 1, got {text.strip()!r}"
        )
    return int(digits[1])


def _atof(text: str, label: str) -> float:
    value = text.strip()
    if not re.fullmatch(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?", value):
        raise ConfigurationError(f"{label!r}: {value!r} is not a number")
    return float(value)


#: trec_eval's measures offeval has, in the order trec_eval computes and prints them.
TREC_EVAL_ORDER = SUPPORTED
#: trec_eval's measure groups (its nicknames, measures.c) offeval computes.
TREC_EVAL_GROUPS = {g: members for g, members in GROUPS.items() if set(members) <= set(SUPPORTED)}
#: trec_eval's measures and groups offeval does not have (other qrels formats).
_TREC_EVAL_ELSEWHERE = tuple(
    n for n in (*CATALOGUE, *GROUPS) if n not in (*SUPPORTED, *TREC_EVAL_GROUPS)
)
#: trec_eval's values that are not measures: the caller prints them (runid, relstring).
TREC_EVAL_TEXT = ("runid", "relstring")


def _trec_eval_chosen(arguments: Iterable[str]) -> dict[str, str | None]:
    """trec_eval's measures the ``-m`` arguments name, each with its parameter text
    (None: the defaults), the first parameters given winning."""
    if isinstance(arguments, str):
        arguments = [arguments]
    chosen: dict[str, str | None] = {}
    for argument in arguments:
        text = str(argument).strip()
        name, dot, rest = text.partition(".")
        if name in TREC_EVAL_GROUPS and not dot:
            for member in TREC_EVAL_GROUPS[name]:
                chosen.setdefault(member, None)
            continue
        if name in _TREC_EVAL_ELSEWHERE or name.startswith("prefs_"):
            raise ConfigurationError(
                f"offeval does not compute trec_eval's {name!r}: the preference and "
                "judgement-group measures (prefs_*, *_avgjg, yaap; groups all_prefs, prefs, "
                "qrels_jg) read other qrels formats"
            )
        if name not in TREC_EVAL_ORDER:
            groups = ", ".join(TREC_EVAL_GROUPS)
            close = difflib.get_close_matches(name, [*TREC_EVAL_ORDER, *TREC_EVAL_GROUPS], n=1)
            guess = f" (did you mean {close[0]}?)" if close else ""
            raise ConfigurationError(
                f"trec_eval has no measure {text!r}{guess}: give a measure name (as "
                f"'trec_eval -h -m all_trec' lists them) or a group ({groups})"
            )
        if chosen.get(name) is None:
            chosen[name] = rest if dot else None
    return chosen


def trec_eval_texts(arguments: Iterable[str]) -> list[tuple[str, int | None]]:
    """trec_eval's text values the ``-m`` arguments ask for, as (label, parameter):
    ``("runid", None)`` (printed first, in the ``all`` line only) and
    ``("relstring", 10)`` or ``("relstring_20", 20)`` (per query only, printed after
    the P measures: see :data:`TREC_EVAL_ORDER`; values from
    :func:`offeval_ir.trec_measures.relstrings`)."""
    chosen = _trec_eval_chosen(arguments)
    out: list[tuple[str, int | None]] = []
    if "runid" in chosen:
        out.append(("runid", None))
    if "relstring" in chosen:
        rest = chosen["relstring"]
        length = 10 if rest is None else _atol(rest, f"relstring.{rest}")
        out.append(("relstring" if rest is None else f"relstring_{length}", length))
    return out


def trec_eval_measures(arguments: Iterable[str]) -> list[Measure]:
    """The measures trec_eval's ``-m`` arguments name, in trec_eval's printing order.

    Each argument is what follows one ``-m``: a group (``official``, ``set``,
    ``all_trec``, as trec_eval's measures.c lists them), a measure name alone
    (trec_eval's default parameters: ``P`` is P_5 ... P_1000, ``success`` is
    success_1, _5, _10, ``iprec_at_recall`` the 11 recall levels, ``Rprec_mult``
    0.2 ... 2.0, ``unj`` 5, 10, 20, ``utility`` 1,-1,0,0), or a name with its
    parameters after a dot, as trec_eval reads them: ``P.5,7,3`` (sorted: P_3,
    P_5, P_7), ``ndcg_cut.10,20,23.4`` (23.4 is 23, as trec_eval's atol reads
    it), ``iprec_at_recall..10,.20`` (labelled ``iprec_at_recall_0.10``),
    ``Rprec_mult.5.0,0.2``, ``utility.2,-1,0,0``, ``11pt_avg..25,.5,.75``,
    ``ndcg.1=3,2=9,4=4.5`` (gains per grade; labelled as given, ``ndcg_1=3,...``).
    As trec_eval, the first parameters given to a measure win (``-m P.5 -m P.10``
    is P_5; a group or the bare name does not undo ``-m P.7``); every measure is
    printed once, in the order of trec_eval's measures.c whatever the order of
    the arguments. ``runid`` and ``relstring`` (text, not numbers) and the
    measures offeval does not have (prefs, jg) are left out:
    :func:`trec_eval_texts` says whether the arguments ask for the first two.

    Raises :class:`offeval.ConfigurationError` for a name trec_eval does not know
    (as trec_eval's "illegal measure"), a duplicate cut-off, or a bad parameter.
    """
    chosen, tables = _trec_eval_chosen(arguments), _builtin_tables()  # trec_eval's only
    measures: list[Measure] = []
    for name in TREC_EVAL_ORDER:
        if name not in chosen or name in TREC_EVAL_TEXT:
            continue
        rest = chosen[name]
        label = name if rest is None else f"{name}.{rest}"
        if name in tables.trec_parameterised:
            measures.extend(_trec_parameterised(tables, name, name, rest, label, strict=False))
        elif rest:
            raise ConfigurationError(f"trec_eval's {name} takes no parameters, got {label!r}")
        elif name in tables.trec_plain:
            metric, aggregate = tables.trec_plain[name]
            measures.append(Measure(metric, None, (), name, aggregate=aggregate))
        else:
            measures.extend(_parse(tables, name))
    return measures


def _unknown(tables: _Tables, label: str) -> str:
    """The message for a name not understood, with a hint when it is nearly right."""
    known, suffixed = tables.known, _SUFFIXED.fullmatch(label)
    entry = _lookup(tables, suffixed["base"]) if suffixed else None
    if entry is not None:
        base, (metric, rule) = suffixed["base"], entry
        if rule == "none" or not tables.metrics[metric][0]:
            return _nocutoff(tables, label, base, metric)
        return f"unknown measure {label!r}: write the cut-off as {base}@{suffixed['cut']}"
    form = _IR_FORM.fullmatch(label)
    if form and form["name"] in ("p", "r"):
        right = form["name"].upper() + label[1:]
        return (
            f"unknown measure {label!r}: the single-letter names P and R are case-sensitive "
            f"(write {right}); known: {known}"
        )
    names = [form["name"] if form else label] + ([suffixed["base"]] if suffixed else [])
    close = _close_names(tables, label, names)
    glued = _GLUED.fullmatch(label)  # nDCG10, nDCG[10], P-5: the cut-off without its @
    if glued:
        written = f"{glued['base']}@{glued['cut']}"
        respelled = [_trec_style(tables, m) for m in _close_names(tables, written, [glued["base"]])]
        both = [*close, *respelled] if suffixed else [*respelled, *close]
        close = list(dict.fromkeys(both))[:3]
    if close:
        others = f" (or {', '.join(close[1:])})" if len(close) > 1 else ""
        return f"unknown measure {label!r}: did you mean {close[0]}?{others} Known: {known}"
    return f"unknown measure {label!r}; known: {known}"


def _trec_style(tables: _Tables, measure: str) -> str:
    """A trec_eval name with its cut-off after ``_`` (``ndcg_cut_10``, not ``ndcg_cut@10``)."""
    name, _, cut = measure.partition("@")
    trec = len(name) > 1 and name in tables.trec_cuts and cut.isdigit()
    return f"{name}_{cut}" if trec else measure


def _close_names(tables: _Tables, label: str, names: Iterable[str]) -> list[str]:
    """Up to three measures like ``label`` with one of ``names`` (its name as written)
    respelled as a known name (difflib), closest first; only those that parse."""
    close, suggested = [], tables.suggested
    for name in names:
        for match in difflib.get_close_matches(name.lower(), list(suggested), n=5, cutoff=0.6):
            candidate = label.replace(name, suggested[match], 1)
            try:
                _parse(tables, candidate, suggest=False)
            except ConfigurationError:
                continue
            if candidate not in close:
                close.append(candidate)
    return close[:3]


def _nocutoff(tables: _Tables, label: str, spelling: str, metric: str) -> str:
    cut, _, canonical = tables.metrics[metric]
    if not cut:
        return f"{label!r}: {spelling} takes no cut-off"
    return (
        f"{label!r}: {spelling} is computed on the whole list and takes no cut-off "
        f"(for a cut-off write {canonical}@k)"
    )


def _split_params(text: str, label: str) -> dict[str, str]:
    """``rel=2, p='0.5'`` -> {'rel': '2', 'p': "'0.5'"} (commas inside quotes or braces kept)."""
    parts, depth, quote, start = [], 0, "", 0
    for i, char in enumerate(text):
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char in "{[(":
            depth += 1
        elif char in "}])":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    if len(parts) == 1 and not parts[0].strip():
        return {}
    found: dict[str, str] = {}
    for part in parts:
        name, equals, value = part.partition("=")
        name = name.strip()
        if not equals or not re.fullmatch(r"[^\W\d]\w*", name) or not value.strip():
            raise ConfigurationError(
                f"{label!r}: parameters are written name=value, as in P(rel=2)@5; "
                f"got {part.strip()!r}"
            )
        if name in found:
            raise ConfigurationError(f"{label!r} gives the parameter {name!r} twice")
        found[name] = value.strip()
    return found
