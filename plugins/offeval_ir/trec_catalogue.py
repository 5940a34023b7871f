"""trec_eval 10.0's measure catalogue as its command line knows it, and the checks of
``offeval trec_eval``'s ``-m``, ``-l`` and ``-M`` arguments, importing nothing numerical:
:mod:`offeval_ir.trec_command` checks the arguments with them before any number is
computed, and :mod:`offeval_ir.trec_command_run` expands and prints the measures by them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from offeval import OffevalError
from offeval.plugin import did_you_mean
from offeval_ir.measure.registry import DECLARATIONS

# How a measure takes parameters (trec_eval's init procedures, meas_init.c).
NONE = "none"  # no parameters
CUT_LONG = "cut_long"  # whole-number cut-offs, sorted, one value each: P_5, P_10
CUT_DOUBLE = "cut_double"  # decimal cut-offs, sorted, one value each: iprec_at_recall_0.10
DOUBLES = "doubles"  # one value; its label carries the parameters as written: utility_2,-1
PAIRS = "pairs"  # one value; name=value parameters as written: ndcg_1=3,2=9


@dataclass(frozen=True)
class TrecMeasure:
    """One trec_eval measure as its command line and its printer know it.

    ``default`` is the parameter list used when no ``-m`` gives one (labels of
    :data:`CUT_LONG` and :data:`CUT_DOUBLE` measures come from it); ``value`` is
    how a value is printed (``double``: ``%6.4f``; ``long``: a whole number;
    ``string``); ``per_query`` and ``summary`` say whether it has per-query and
    ``all`` lines; ``aggregate`` how the ``all`` value comes from the per-query
    ones (``mean``, ``sum``, ``gm``: geometric mean, ``none``).
    """

    name: str
    params: str = NONE
    default: str = ""
    value: str = "double"
    per_query: bool = True
    summary: bool = True
    aggregate: str = "mean"


_CUTS = "5,10,15,20,30,100,200,500,1000"
_RECALLS = "0.0,0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9,1.0"


def _count(name: str, per_query: bool = True) -> TrecMeasure:
    return TrecMeasure(name, value="long", aggregate="sum", per_query=per_query)


#: Every measure of trec_eval 10.0, in the order it prints them (measures.c).
CATALOGUE: dict[str, TrecMeasure] = {
    m.name: m
    for m in (
        TrecMeasure("runid", value="string", per_query=False, aggregate="none"),
        _count("num_q", per_query=False),
        _count("num_ret"),
        _count("num_rel"),
        _count("num_rel_ret"),
        TrecMeasure("map"),
        TrecMeasure("gm_map", per_query=False, aggregate="gm"),
        TrecMeasure("Rprec"),
        TrecMeasure("bpref"),
        TrecMeasure("recip_rank"),
        TrecMeasure("iprec_at_recall", CUT_DOUBLE, _RECALLS),
        TrecMeasure("P", CUT_LONG, _CUTS),
        TrecMeasure("relstring", DOUBLES, "10", "string", summary=False, aggregate="none"),
        TrecMeasure("recall", CUT_LONG, _CUTS),
        TrecMeasure("infAP"),
        TrecMeasure("gm_bpref", per_query=False, aggregate="gm"),
        TrecMeasure("Rprec_mult", CUT_DOUBLE, "0.2,0.4,0.6,0.8,1.0,1.2,1.4,1.6,1.8,2.0"),
        TrecMeasure("utility", DOUBLES, "1.0,-1.0,0.0,0.0"),
        TrecMeasure("11pt_avg", DOUBLES, _RECALLS),
        TrecMeasure("binG"),
        TrecMeasure("G", PAIRS),
        TrecMeasure("dcg", PAIRS),
        TrecMeasure("ideal_dcg", PAIRS),
        TrecMeasure("ndcg", PAIRS),
        TrecMeasure("ndcg_rel", PAIRS),
        TrecMeasure("Rndcg", PAIRS),
        TrecMeasure("ndcg_cut", CUT_LONG, _CUTS),
        TrecMeasure("map_cut", CUT_LONG, _CUTS),
        TrecMeasure("relative_P", CUT_LONG, _CUTS),
        TrecMeasure("success", CUT_LONG, "1,5,10"),
        TrecMeasure("set_P"),
        TrecMeasure("set_relative_P"),
        TrecMeasure("set_recall"),
        TrecMeasure("set_map"),
        TrecMeasure("set_F", DOUBLES, "1.0"),
        _count("num_nonrel_judged_ret"),
        *(
            TrecMeasure(f"prefs_{name}")
            for name in (
                "num_prefs_poss",
                "num_prefs_ful",
                "num_prefs_ful_ret",
                "simp",
                "pair",
                "avgjg",
                "avgjg_Rnonrel",
                "simp_ret",
                "pair_ret",
                "avgjg_ret",
                "avgjg_Rnonrel_ret",
                "simp_imp",
                "pair_imp",
                "avgjg_imp",
            )
        ),
        TrecMeasure("map_avgjg"),
        TrecMeasure("P_avgjg", CUT_LONG, _CUTS),
        TrecMeasure("Rprec_mult_avgjg", CUT_DOUBLE, "0.2,0.4,0.6,0.8,1.0,1.2,1.4,1.6,1.8,2.0"),
        TrecMeasure("yaap"),
        TrecMeasure("rbp", PAIRS),
        TrecMeasure("rbp_resid", PAIRS),
        TrecMeasure("unj", CUT_LONG, "5,10,20"),
    )
}

_OFFICIAL = (
    "runid num_q num_ret num_rel num_rel_ret map gm_map Rprec bpref recip_rank iprec_at_recall P"
)
#: trec_eval's measure groups (its nicknames, measures.c).
GROUPS: dict[str, tuple[str, ...]] = {
    "official": tuple(_OFFICIAL.split()),
    "set": tuple(
        "runid num_q num_ret num_rel num_rel_ret utility set_P set_recall set_relative_P "
        "set_map set_F".split()
    ),
    "all_trec": tuple(
        f"{_OFFICIAL} relstring recall unj rbp rbp_resid infAP gm_bpref utility 11pt_avg ndcg "
        "relative_P Rprec_mult success map_cut ndcg_cut ndcg_rel Rndcg binG G set_P set_recall "
        "set_relative_P set_map set_F num_nonrel_judged_ret".split()
    ),
    "all_prefs": (
        "runid",
        "num_q",
        *(m for m in CATALOGUE if m.startswith("prefs_")),
    ),
    "prefs": (
        "runid",
        "num_q",
        *(f"prefs_{m}" for m in ("num_prefs_poss", "num_prefs_ful", "num_prefs_ful_ret")),
        *(f"prefs_{m}" for m in ("simp", "pair", "avgjg")),
    ),
    "qrels_jg": ("runid", "num_q", "map_avgjg", "P_avgjg", "Rprec_mult_avgjg"),
}
#: Measures this command computes itself (the run tag, the query count, the grades).
OWN = ("runid", "num_q", "relstring")


def _supported() -> tuple[str, ...]:
    spelled = {s.text for d in DECLARATIONS.values() for s in d.trec_eval}
    return tuple(name for name in CATALOGUE if name in OWN or name in spelled)


#: The trec_eval measures offeval prints (under their default parameters), in trec_eval's
#: order: those the measure declarations spell (:mod:`offeval_ir.measure.registry`, read
#: without numpy) and :data:`OWN`; the help of ``-m`` names them without computing.
SUPPORTED = _supported()


def marked_measures(arguments: Sequence[str]) -> tuple[dict[str, str | None], dict[str, str]]:
    """The measures the ``-m`` arguments name ({measure: the group that marked it, None when
    named itself}) and their parameters as written ({measure: the first ones given}).
    Raises :class:`offeval.OffevalError` for an unknown name and for a dot with nothing
    after it; checks nothing that needs the measures computed (see
    :func:`offeval_ir.trec_command_run.expand`)."""
    marked: dict[str, str | None] = {}  # measure -> the group that marked it (None: itself)
    params: dict[str, str] = {}
    for argument in arguments:
        name, dot, given = argument.partition(".")
        if dot and not given:
            raise OffevalError(f"-m {argument}: no parameters after the dot")
        if dot:
            params.setdefault(name, given)
        if name in GROUPS:
            for member in GROUPS[name]:
                marked.setdefault(member, name)
        elif name in CATALOGUE:
            marked[name] = None
        else:
            known = [*GROUPS, *CATALOGUE]
            raise OffevalError(
                f"-m {argument}: trec_eval has no measure {name!r}{did_you_mean(name, known)}; "
                f"groups: {', '.join(GROUPS)}"
            )
    return marked, params


_NUMBER = re.compile(r"\s*[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?\s*")


def parameter_number(text: str, option: str) -> float:
    """A parameter as a number; an error naming the option when it is none."""
    if not _NUMBER.fullmatch(text):
        raise OffevalError(f"{option}: {text!r} is not a number")
    return float(text)


def whole_option(text: str | None, option: str, least: int) -> int | None:
    """An option's whole-number value (at least ``least``); None when not given."""
    if text is None:
        return None
    if not re.fullmatch(r"\s*[+-]?\d+\s*", text):
        raise OffevalError(f"{option} takes a whole number, got {text!r}")
    value = int(text)
    if value < least:
        raise OffevalError(f"{option} must be at least {least}, got {value}")
    return value
