"""``offeval trec_eval``: trec_eval's command line and output, computed by offeval.

``offeval trec_eval [-q] [-c] [-n] [-l N] [-M N] [-m measure]... QRELS RUN`` takes
trec_eval's arguments in trec_eval's order and prints what trec_eval 10.0 prints,
byte for byte: one line ``measure<TAB>qid<TAB>value`` per measure, the name
padded to 22 characters, the value as trec_eval formats it (``%6.4f``, whole
numbers for the ``num_*`` counts, the run tag for ``runid``, a quoted string for
``relstring``), per-query lines (``-q``) in trec_eval's order (queries sorted as
text, measures in trec_eval's own order, whatever the order of ``-m``) and then
the summary lines labelled ``all``. A script that runs ``trec_eval`` and parses
its output runs ``offeval trec_eval`` unchanged.

What the options mean, as in trec_eval (trec_eval.c):

- ``-q``: per-query lines before the summary.
- ``-c``: average over every query of the qrels; a query missing from the run
  scores 0 (offeval's ``no_predictions='zero'``). Without ``-c``, the queries
  of both the qrels and the run are averaged (trec_eval's help text; trec_eval
  10.0 itself stops with "result qid ... not found" when a judged query is
  missing from the run).
- ``-n``: no summary lines (with ``-q``, only the per-query lines; without it,
  nothing).
- ``-l N``: a grade of N or more is relevant (offeval's ``relevance_threshold``).
- ``-M N``: only the first N documents of each query count, in trec_eval's
  order (score descending, ties by document id descending).
- ``-m measure``: repeatable; trec_eval's names and groups (``official``, the
  default; ``all_trec``; ``set``), with parameters after a dot (``P.5,10``,
  ``ndcg_cut.10``, ``iprec_at_recall.0.1,0.5``, ``ndcg.1=3,2=9``); a measure's
  parameters come from its first ``-m``, as in trec_eval.

Options may be glued to their values as getopt allows (``-M100``, ``-l2``,
``-mndcg_cut.10``) and flags combined (``-qc``). trec_eval's other options
(``-D -J -N -R -T -o -Z``) are refused, in one line naming the option. A measure
offeval does not compute is an error when named, and is left out, with one
warning line on stderr listing them, when a group (``all_trec``) brings it in.

The per-query values are offeval's (:func:`~offeval_ir.runs.compute_measures`
under the ``trec_eval`` preset); the summary is computed here, as trec_eval
computes it: the mean over the queries (summed in query order, as trec_eval
sums), the sum for the ``num_*`` counts, the geometric mean for ``gm_map`` and
``gm_bpref`` (each value floored at 0.00001).

This module declares the command, its arguments and trec_eval's measure catalogue,
importing nothing numerical, so an argument mistake is answered at once; the work is
:mod:`offeval_ir.trec_command_run`'s (imported by ``run``).
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass

from offeval.plugin import OffevalError, command_line, did_you_mean

#: The trec_eval release whose command line and output this reproduces.
TREC_EVAL_VERSION = "10.0"

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
#: The trec_eval measures offeval prints (under their default parameters), in trec_eval's
#: order: :func:`offeval_ir.trec_command_run.supported_measures` computes them (a test
#: checks this list against it); the help of ``-m`` names them without computing.
SUPPORTED = (
    "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
    "recip_rank", "iprec_at_recall", "P", "relstring", "recall", "infAP", "gm_bpref",
    "Rprec_mult", "utility", "11pt_avg", "binG", "G", "dcg", "ideal_dcg", "ndcg", "ndcg_rel",
    "Rndcg", "ndcg_cut", "map_cut", "relative_P", "success", "set_P", "set_relative_P",
    "set_recall", "set_map", "set_F", "num_nonrel_judged_ret", "rbp", "rbp_resid", "unj",
)  # fmt: skip


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


class _Refused(argparse.Action):
    """A trec_eval option offeval does not support: one line naming it."""

    def __call__(self, parser, namespace, values, option_string=None):
        raise OffevalError(
            f"{option_string}: trec_eval's option {'/'.join(self.option_strings)} is not "
            "supported by offeval trec_eval"
        )


class _Version(argparse.Action):
    """``-v``: which trec_eval this reproduces, on stderr as trec_eval prints its version."""

    def __call__(self, parser, namespace, values, option_string=None):
        from importlib.metadata import version

        print(
            f"offeval trec_eval {version('offeval')}: trec_eval version {TREC_EVAL_VERSION}'s "
            "command line and output",
            file=sys.stderr,
        )
        raise SystemExit(0)


#: trec_eval options offeval refuses: (short, long, takes a value).
_REFUSED = (
    ("-D", "--Debug_level", True),
    ("-J", "--Judged_docs_only", False),
    ("-N", "--Number_docs_in_coll", True),
    ("-R", "--Rel_info_format", True),
    ("-T", "--Results_format", True),
    ("-o", "--Output_old_results_format", False),
    ("-Z", "--Zscore", True),
)


class TrecEvalCommand:
    """trec_eval's command line: its arguments, its output byte for byte, offeval's numbers."""

    help = (
        "trec_eval's command line and output (trec_eval [-q] [-c] [-n] [-l N] [-M N] "
        "[-m measure] QRELS RUN), computed by offeval"
    )

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        """Declare trec_eval's arguments (and refuse the ones offeval does not support)."""
        parser.add_argument("qrels", help="qrels: qid iter docno rel (trec_eval's rel_info_file)")
        parser.add_argument("run", help="run: qid Q0 docno rank sim run_id (results_file)")
        parser.add_argument(
            "-q",
            "--query_eval_wanted",
            action="count",
            default=0,
            help="per-query lines too, before the summary",
        )
        parser.add_argument(
            "-m",
            "--measure",
            action="append",
            metavar="MEASURE",
            help="a trec_eval measure or group, parameters after a dot (P.5,10, ndcg_cut.10; "
            "repeatable): groups official (the default), all_trec, set (leaving out what offeval "
            f"does not compute, with a warning); measures {', '.join(SUPPORTED)}",
        )
        parser.add_argument(
            "-c",
            "--complete_rel_info_wanted",
            action="store_true",
            help="average over every query of the qrels, a query missing from the run scoring 0",
        )
        parser.add_argument(
            "-l",
            "--level_for_rel",
            metavar="N",
            help="a grade of N or more is relevant (default 1)",
        )
        parser.add_argument("-n", "--nosummary", action="store_true", help="no summary (all) lines")
        parser.add_argument(
            "-M",
            "--Max_retrieved_per_topic",
            metavar="N",
            help="only the first N documents of each query count",
        )
        parser.add_argument(
            "-v", "--version", action=_Version, nargs=0, help="which trec_eval this reproduces"
        )
        for short, long, valued in _REFUSED:
            parser.add_argument(
                short,
                long,
                action=_Refused,
                nargs="?" if valued else 0,
                help=argparse.SUPPRESS,
            )

    def run(self, args: argparse.Namespace) -> int:
        """Print trec_eval's output for the arguments."""
        with command_line():
            whole_option(args.level_for_rel, "-l", 1)  # the argument mistakes, before any numbers
            whole_option(args.Max_retrieved_per_topic, "-M", 1)
            marked_measures(args.measure or ["official"])
            from offeval_ir.trec_command_run import trec_eval_lines  # noqa: PLC0415 (pandas)

            sys.stdout.write("".join(trec_eval_lines(args)))
        return 0
