"""Measure strings as IR users type them, parsed to offeval metrics, cut-offs and conventions.

Three spellings are understood, and may be mixed in one list; each measure's
declaration (:mod:`offeval_ir.measure`) gives its spellings, and ``offeval plugins
measure`` lists them:

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
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass

from offeval import ConfigurationError
from offeval.plugin import check_choice, check_number, hint
from offeval_ir.measure.declaration import Declaration, Param
from offeval_ir.measure.registry import DECLARATIONS, checked_param
from offeval_ir.trec_catalogue import CATALOGUE, GROUPS, SUPPORTED

#: Per offeval metric: whether it takes a cut-off, the parameters it accepts besides
#: ``cutoff`` (as ir-measures names them), and its name in hints.
_METRICS: dict[str, tuple[bool, dict[str, Param], str]] = {
    d.name: (d.cutoff != "none", {p.name: p for p in d.params}, d.hint)
    for d in DECLARATIONS.values()
    if d.cutoff is not None
}


def _spelled(table: str, forms: tuple[str, ...] = ()) -> dict[str, tuple[str, str]]:
    """{spelling: (metric, cut-off rule)} of the declarations' ``table`` spellings (trec_eval's
    of the given forms)."""
    return {
        s.text: (d.name, s.cutoff)
        for d in DECLARATIONS.values()
        for s in getattr(d, table)
        if not forms or s.form in forms
    }


def _trec(form: str) -> dict[str, tuple[str, tuple]]:
    """{trec_eval spelling: (metric, its default parameters)} of one form."""
    return {
        s.text: (d.name, s.defaults)
        for d in DECLARATIONS.values()
        for s in d.trec_eval
        if s.form == form
    }


# Cut-off rules of a spelling: "optional" (no cut-off: the whole list), "required", "none".
_OWN = {m: (m, "optional" if cut else "none") for m, (cut, _, _) in _METRICS.items()}
_IR_MEASURES = _spelled("ir_measures")
_TREC_EVAL = _spelled("trec_eval", ("name",))
#: trec_eval measures whose cut-offs follow the name: ``P_5``, ``ndcg_cut.10,20``.
_TREC_CUTS = {name: metric for name, (metric, _) in _trec("cut").items()}
#: trec_eval's default cut-offs (m_P.c and the others; success and unj their own).
_TREC_CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
_TREC_DEFAULT_CUTS = {name: cuts for name, (_, cuts) in _trec("cut").items() if cuts}
#: trec_eval measures at levels written as decimals: ``iprec_at_recall_0.10``.
_TREC_LEVELS = {name: metric for name, (metric, _) in _trec("level").items()}
_TREC_DEFAULT_LEVELS = {name: levels for name, (_, levels) in _trec("level").items()}
#: trec_eval measures with one free parameter string, labelled ``name_<string>``.
_TREC_FREE = {name: metric for name, (metric, _) in _trec("free").items()}
_TREC_PARAMETERISED = {**_TREC_CUTS, **_TREC_LEVELS, **_TREC_FREE}
#: trec_eval's names of measures without parameters, with how their per-user values
#: aggregate (its counts are summed, gm_* geometric means). ``rbp`` alone is trec_eval's
#: RBP (graded gains, p = 0.9); ``RBP``, ``rbp@k`` and ``RBP(p=...)`` are offeval's
#: (binary relevance at the threshold, p = 0.8 unless given).
_TREC_PLAIN = {
    s.text: (d.name, s.aggregate)
    for d in DECLARATIONS.values()
    for s in d.trec_eval
    if s.form == "plain"
}
#: offeval's other names: the ideal DCG and post-normalised nDCG.
_EXTRA = {s.text: (d.name, s.cutoff) for d in DECLARATIONS.values() for s in d.aliases}
#: Spellings (lower case) whose per-user values aggregate otherwise than by their mean.
_AGGREGATES = {
    s.text.lower(): s.aggregate
    for d in DECLARATIONS.values()
    for s in (*d.aliases, *d.ir_measures)
    if s.aggregate != "mean"
}
_SPELLINGS = {**_TREC_EVAL, **_IR_MEASURES, **_EXTRA, **_OWN}
_ANY_CASE: dict[str, tuple[str, str]] = {}
for _table in (_OWN, _IR_MEASURES, _EXTRA, _TREC_EVAL):  # offeval's own spelling wins a case clash
    for _name, _entry in _table.items():
        if len(_name) > 1:
            _ANY_CASE.setdefault(_name.lower(), _entry)
del _table, _name, _entry


def _known() -> str:
    """The accepted names, by toolkit."""

    def cut(text: str, rule: str) -> str:
        return {"optional": f"{text}[@k]", "required": f"{text}@k", "none": text}[rule]

    ir_names = ", ".join(cut(n, rule) for n, (_, rule) in _IR_MEASURES.items())
    trec_names = [f"{n}_k" for n in _TREC_CUTS] + [f"{n}_x" for n in _TREC_LEVELS]
    trec_names += [n for n in {**_TREC_EVAL, **_TREC_PLAIN} if n not in _TREC_CUTS]
    own = [cut(n, rule) for n, (_, rule) in {**_OWN, **_EXTRA}.items()]
    return (
        f"ir-measures: {ir_names}, with parameters as in P(rel=2)@5; trec_eval: "
        f"{', '.join(dict.fromkeys(trec_names))} (k may be a list: ndcg_cut.10,20); "
        f"offeval: {', '.join(own)}"
    )


KNOWN = _known()
"""The accepted names, as error messages list them."""

_IR_FORM = re.compile(r"(?P<name>[^\W\d]\w*)\s*(?:\((?P<params>.*)\))?\s*(?:@(?P<cut>.*))?", re.S)
_NUMBER = re.compile(r"\+?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_GLUED = re.compile(r"(?P<base>[^\W\d]\w*?)[^\w@]*(?P<cut>\d+)\W*")
_SUFFIXED = re.compile(r"(?P<base>[^\W\d]\w*?)[._](?P<cut>\d[\d.,]*)")


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


def value_range(label: str) -> tuple[float, float] | None:
    """The range of the measure ``label`` names where it is a mean or ratio of per-user
    values its declaration bounds (``value_range``); None for the others, and for a label
    that names no measure."""
    try:
        measure = parse_measure(label)
    except ConfigurationError:
        return None
    bounds = DECLARATIONS[measure.metric.partition(":")[0]].value_range
    return bounds if measure.aggregate in ("mean", "ratio") else None


def parse_measure(text: str) -> Measure:
    """The measure ``text`` names (see the module docstring for the syntaxes).

    Raises :class:`offeval.ConfigurationError` for an unknown name, a bad or
    missing cut-off, a cut-off on a measure that takes none, an unknown
    parameter or value, and for a trec_eval list of cut-offs (several
    measures: use :func:`parse_measures`).
    """
    found = _parse(text)
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
        for measure in _parse(text):
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


def _lookup(name: str) -> tuple[str, str] | None:
    """(metric, cut-off rule) of a spelling, exact first, then in any case (2+ letters)."""
    if name in _SPELLINGS:
        return _SPELLINGS[name]
    return _ANY_CASE.get(name.lower()) if len(name) > 1 else None


def _parse(text: str, *, suggest: bool = True) -> list[Measure]:
    """The measures of ``text``; ``suggest=False`` (the suggestions' own check) raises
    without looking for close names, so a suggestion never re-enters the search."""
    if not isinstance(text, str):
        raise ConfigurationError(f"a measure is a string such as 'nDCG@10', got {text!r}")
    label = text.strip()
    if not label:
        raise ConfigurationError(f"empty measure name; known: {KNOWN}")
    trec = _trec_cuts(label)
    if trec is not None:
        return trec
    form = _IR_FORM.fullmatch(label)
    if form and form["name"] in _TREC_ONLY_CUTS and form["cut"] is not None:
        return _trec_at(form, label)
    entry = _lookup(form["name"]) if form else None
    if entry is None:
        raise ConfigurationError(_unknown(label) if suggest else label)
    metric, rule = entry
    spelling = form["name"]
    raw = _split_params(form["params"], label) if form["params"] is not None else {}
    declared = _METRICS[metric][1]
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
            raise ConfigurationError(_no_cutoff(label, spelling, metric))
        k = _cutoff(form["cut"], label)
    if "cutoff" in raw:
        if k is not None:
            raise ConfigurationError(f"{label!r} gives the cut-off twice (cutoff= and @)")
        k = _cutoff(raw["cutoff"], label)
    if k is None and rule == "required":
        joint = "_" if spelling.lower() in map(str.lower, _TREC_EVAL) else "@"
        raise ConfigurationError(
            f"{label!r} needs a cut-off: write {spelling}{joint}k (as in {spelling}{joint}10)"
        )
    texts = {name: text for name, text in raw.items() if name != "cutoff"}
    aggregate = _AGGREGATES.get(spelling.lower(), "mean")
    return [_with_params(metric, k, declared, texts, label, aggregate)]


#: trec_eval's cut-off measures that no other table spells: ``unj@3`` is ``unj_3``.
_TREC_ONLY_CUTS = tuple(
    name for name, metric in _TREC_CUTS.items() if DECLARATIONS[metric].provider == "trec_eval"
)


def _stated(param: Param, text: str, label: str, overrides: dict, params: dict) -> None:
    """A parameter's value as the string states it, into the convention ``overrides`` or the
    measure's ``params`` (see :class:`~offeval_ir.measure.declaration.Param`)."""
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


def stated(declared: Declaration, k: int | None, given: dict[str, object]) -> Measure:
    """The measure ``declared`` at cut-off ``k`` with the parameters ``given`` stated, as
    its own name with them would (``ndcg(dcg=exp-log2)@10``; trec_eval's text ``param``
    after a colon: ``utility:2,-1,0,0``)."""
    name = declared.name
    if declared.read is not None:
        metric = name if given.get("param") is None else f"{name}:{given['param']}"
        label, given = metric, {}
        _check_trec(metric, name, metric)
    else:
        written = ",".join(f"{param}={value}" for param, value in given.items())
        metric, label = name, f"{name}({written})" if written else name
    label += "" if k is None else f"@{k}"
    cut = None if k is None else _cutoff(str(k), label)
    texts = {param: str(value) for param, value in given.items()}
    return _with_params(metric, cut, {p.name: p for p in declared.params}, texts, label)


def _with_params(
    metric: str, k: int | None, declared: dict[str, Param], texts: dict, label: str, how="mean"
) -> Measure:
    """The measure with the parameters ``texts`` states (name -> text), aggregated ``how``."""
    overrides: dict[str, object] = {}
    params = {p.name: p.default for p in declared.values() if p.recorded}
    for name, text in texts.items():
        _stated(declared[name], text, label, overrides, params)
    overrides_, params_ = tuple(sorted(overrides.items())), tuple(sorted(params.items()))
    return Measure(metric, k, overrides_, label, params_, how)


def _trec_at(form: re.Match, label: str) -> list[Measure]:
    """``unj@k`` / ``relative_P@k``: trec_eval's measure at cut-off k, labelled as written
    (as ``map_cut@5`` is)."""
    name = form["name"]
    if form["params"] is not None:
        raise ConfigurationError(f"{label!r}: {name} takes no parameter (write {name}@k)")
    (measure,) = _trec_parameterised(name, name, form["cut"], label, strict=True)
    return [Measure(measure.metric, measure.k, (), label)]


def _trec_cuts(label: str) -> list[Measure] | None:
    """trec_eval's parameterised names (``P_5``, ``ndcg_cut.10,20``, ``iprec_at_recall_0.10``,
    ``utility.2,-1,0,0``) and its names of measures only it has (``num_ret``, ``binG``,
    bare ``rbp``, ...): their measures, labelled as trec_eval prints them; None when
    ``label`` is not of this form."""
    if label in (*_TREC_ONLY_CUTS, *_TREC_LEVELS):
        example = "5" if label in _TREC_CUTS else "0.10"
        raise ConfigurationError(
            f"{label!r} needs a {'cut-off' if label in _TREC_CUTS else 'level'}: write "
            f"{label}_{example} (or a list, {label}.{example},...); trec_eval's bare "
            f"{label}, all its default ones, is trec_eval_measures([{label!r}])"
        )
    plain = _TREC_PLAIN.get(label)
    if plain is not None:
        metric, aggregate = plain
        return [Measure(metric, None, (), label, aggregate=aggregate)]
    for base in sorted(_TREC_PARAMETERISED, key=len, reverse=True):
        head = label[: len(base) + 1]
        if len(head) <= len(base) or head[-1] not in "._":
            continue
        if head[:-1] != base and (len(base) == 1 or head[:-1].lower() != base.lower()):
            continue
        typed, rest = head[:-1], label[len(base) + 1 :]
        if (
            head[-1] == "_"
            and base in _TREC_FREE
            and not ("=" in rest or base in ("utility", "11pt_avg"))
        ):
            continue  # ndcg_10 is not ndcg with gains: an unknown name, with a hint
        return _trec_parameterised(base, typed, rest, label, strict=True)
    return None


def _trec_parameterised(
    base: str, typed: str, rest: str | None, label: str, *, strict: bool
) -> list[Measure]:
    """The measures of trec_eval's ``base`` with the parameter text ``rest`` (None:
    trec_eval's defaults), labelled ``typed_...`` as trec_eval prints them.

    ``strict`` refuses what trec_eval's atol/atof would read loosely (a cut-off of
    ``23.4`` is 23 to trec_eval); trec_eval's own -m arguments read them as it does.
    """
    metric = _TREC_PARAMETERISED[base]
    if base in _TREC_CUTS:
        if rest is None:
            ks = list(_TREC_DEFAULT_CUTS.get(base, _TREC_CUTOFFS))
        else:
            ks = [_cutoff(cut, label) if strict else _atol(cut, label) for cut in rest.split(",")]
            _no_duplicate([f"{typed}_{k}" for k in ks], label)
            ks = ks if strict else sorted(ks)  # trec_eval prints its cut-offs sorted
        return [Measure(metric, k, (), f"{typed}_{k}") for k in ks]
    if base in _TREC_LEVELS:
        if rest is None:
            levels = list(_TREC_DEFAULT_LEVELS[base])
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
    full = f"{metric}:{_trec_param_text(base, rest, label)}"
    _check_trec(full, base, label)
    return [Measure(full, None, (), f"{typed}_{rest}")]


def _check_trec(metric: str, base: str, label: str) -> None:
    """The registry's check of ``metric`` with its parameter, its error naming ``label``."""
    try:
        checked_param(metric, None, base)
    except ConfigurationError as error:
        raise ConfigurationError(f"{label!r}: {error}") from None


def _trec_param_text(base: str, rest: str, label: str) -> str:
    """A parameter string as the metric reads it (11pt_avg's levels in order)."""
    if base == "11pt_avg":
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
    chosen = _trec_eval_chosen(arguments)
    measures: list[Measure] = []
    for name in TREC_EVAL_ORDER:
        if name not in chosen or name in TREC_EVAL_TEXT:
            continue
        rest = chosen[name]
        label = name if rest is None else f"{name}.{rest}"
        if name in _TREC_PARAMETERISED:
            measures.extend(_trec_parameterised(name, name, rest, label, strict=False))
        elif rest:
            raise ConfigurationError(f"trec_eval's {name} takes no parameters, got {label!r}")
        elif name in _TREC_PLAIN:
            metric, aggregate = _TREC_PLAIN[name]
            measures.append(Measure(metric, None, (), name, aggregate=aggregate))
        else:
            measures.extend(_parse(name))
    return measures


def _unknown(label: str) -> str:
    """The message for a name not understood, with a hint when it is nearly right."""
    suffixed = _SUFFIXED.fullmatch(label)
    entry = _lookup(suffixed["base"]) if suffixed else None
    if entry is not None:
        base, (metric, rule) = suffixed["base"], entry
        if rule == "none" or not _METRICS[metric][0]:
            return _no_cutoff(label, base, metric)
        return f"unknown measure {label!r}: write the cut-off as {base}@{suffixed['cut']}"
    form = _IR_FORM.fullmatch(label)
    if form and form["name"] in ("p", "r"):
        right = form["name"].upper() + label[1:]
        return (
            f"unknown measure {label!r}: the single-letter names P and R are case-sensitive "
            f"(write {right}); known: {KNOWN}"
        )
    names = [form["name"] if form else label] + ([suffixed["base"]] if suffixed else [])
    close = _close_names(label, names)
    glued = _GLUED.fullmatch(label)  # nDCG10, nDCG[10], P-5: the cut-off without its @
    if glued:
        written = f"{glued['base']}@{glued['cut']}"
        respelled = [_trec_style(m) for m in _close_names(written, [glued["base"]])]
        both = [*close, *respelled] if suffixed else [*respelled, *close]
        close = list(dict.fromkeys(both))[:3]
    if close:
        others = f" (or {', '.join(close[1:])})" if len(close) > 1 else ""
        return f"unknown measure {label!r}: did you mean {close[0]}?{others} Known: {KNOWN}"
    return f"unknown measure {label!r}; known: {KNOWN}"


#: Every spelling, one per lower-case form (ir-measures' first, then trec_eval's, then own).
_SUGGESTED: dict[str, str] = {}
for _table in (_IR_MEASURES, _TREC_EVAL, _TREC_CUTS, _EXTRA, _OWN):
    for _name in _table:
        _SUGGESTED.setdefault(_name.lower(), _name)
del _table, _name


def _trec_style(measure: str) -> str:
    """A trec_eval name with its cut-off after ``_`` (``ndcg_cut_10``, not ``ndcg_cut@10``)."""
    name, _, cut = measure.partition("@")
    return f"{name}_{cut}" if len(name) > 1 and name in _TREC_CUTS and cut.isdigit() else measure


def _close_names(label: str, names: Iterable[str]) -> list[str]:
    """Up to three measures like ``label`` with one of ``names`` (its name as written)
    respelled as a known name (difflib), closest first; only those that parse."""
    close: list[str] = []
    for name in names:
        for match in difflib.get_close_matches(name.lower(), list(_SUGGESTED), n=5, cutoff=0.6):
            candidate = label.replace(name, _SUGGESTED[match], 1)
            try:
                _parse(candidate, suggest=False)
            except ConfigurationError:
                continue
            if candidate not in close:
                close.append(candidate)
    return close[:3]


def _no_cutoff(label: str, spelling: str, metric: str) -> str:
    if not _METRICS[metric][0]:
        return f"{label!r}: {spelling} takes no cut-off"
    canonical = _METRICS[metric][2]
    return (
        f"{label!r}: {spelling} is computed on the whole list and takes no cut-off "
        f"(for a cut-off write {canonical}@k)"
    )


def _cutoff(text: str, label: str) -> int:
    value = text.strip()
    if not re.fullmatch(r"\d+", value) or int(value) < 1:
        raise ConfigurationError(
            f"the cut-off of {label!r} must be a whole number >= 1, got {value!r}"
        )
    return int(value)


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
