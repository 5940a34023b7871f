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
"""

from __future__ import annotations

import argparse
import bz2
import gzip
import lzma
import math
import re
import sys
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from offeval.plugin import (
    ConfigurationError,
    OffevalError,
    OffevalWarning,
    command_line,
    did_you_mean,
)
from offeval_ir.blocks import user_blocks
from offeval_ir.conventions import PRESETS, Conventions
from offeval_ir.files import detect_format, read_qrels, read_run
from offeval_ir.judgements import Judgements
from offeval_ir.measures import Measure, trec_eval_measures
from offeval_ir.metrics import compute, in_tie_order
from offeval_ir.prepared import measure_groups, measures_of
from offeval_ir.trec_measures import relstrings

#: The trec_eval release whose command line and output this reproduces.
TREC_EVAL_VERSION = "10.0"
#: Width the measure name is padded to (trec_eval's ``%-22s``).
WIDTH = 22
#: Run lines judged at once (whole queries): bounds the memory of the per-query matrices.
CHUNK_ROWS = 2_000_000
#: trec_eval's floor of a value before its logarithm in a geometric mean.
MIN_GEO_MEAN = 0.00001

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
#: trec_eval's aggregations under offeval's names (:attr:`Measure.aggregate`).
_AGGREGATES = {"mean": "mean", "sum": "sum", "geometric": "gm"}


@dataclass(frozen=True)
class Requested:
    """One line label of the output: a measure at one cut-off, or with its parameters.

    ``label`` is the name trec_eval prints (``P_5``, ``iprec_at_recall_0.10``,
    ``utility_2,-1,0,0``); ``cutoff`` the cut-off of a cut-off measure;
    ``params`` the parameters as written after the dot (None: the default);
    ``group`` the group that brought the measure in (None: named itself);
    ``offeval`` the offeval measure computing the per-query value (None for the
    measures this command computes itself and for those offeval does not
    compute: :attr:`supported` tells them apart).
    """

    measure: TrecMeasure
    label: str
    cutoff: float | int | None = None
    params: str | None = None
    group: str | None = None
    offeval: Measure | None = None

    @property
    def supported(self) -> bool:
        """Whether offeval prints this line."""
        return self.offeval is not None or self.measure.name in OWN


def offeval_measures(name: str, params: str | None) -> dict[str, Measure]:
    """The offeval measures of one trec_eval measure with its parameters (None: its
    defaults), by the label trec_eval prints; empty when offeval does not compute it.
    Raises the parameter check's :class:`~offeval.ConfigurationError` for parameters
    a measure offeval computes does not take (``ndcg.1=x``, ``utility.1,2``,
    ``rbp.p=2``).

    The one place that decides which trec_eval measures offeval computes:
    :func:`offeval_ir.measures.trec_eval_measures` reads trec_eval's names.
    """
    if name in OWN:
        return {}
    try:
        found = trec_eval_measures([name if params is None else f"{name}.{params}"])
    except ConfigurationError:
        if params is not None and offeval_measures(name, None):
            raise  # offeval computes the measure: its parameters are wrong, as the error says
        return {}  # a measure offeval does not compute
    return {m.name: m for m in found}


def expand(arguments: Sequence[str]) -> list[Requested]:
    """The lines the ``-m`` arguments ask for, in trec_eval's order (its own order of
    measures, then each measure's cut-offs sorted), as trec_eval 10.0 expands them.

    An argument is a measure or a group, with parameters after the first dot; a
    measure's parameters come from the first argument naming it with some, as
    in trec_eval. Raises :class:`offeval.OffevalError` for an unknown name, empty
    or malformed parameters, and negative or repeated cut-offs.
    """
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
    lines = []
    for measure in CATALOGUE.values():
        if measure.name in marked:
            lines.extend(_lines(measure, params.get(measure.name), marked[measure.name]))
    return lines


def _lines(measure: TrecMeasure, given: str | None, group: str | None) -> list[Requested]:
    """The lines of one measure: one per cut-off, or one labelled by its parameters."""
    option = f"-m {measure.name}.{given}" if given else f"-m {measure.name}"
    if given is not None and measure.params == NONE:
        given = None  # trec_eval ignores parameters of a measure that takes none
    if measure.params in (CUT_LONG, CUT_DOUBLE):
        texts = (given or measure.default).split(",")
        if measure.params == CUT_LONG:
            cuts = sorted(math.trunc(_number(text, option)) for text in texts)  # C's atol
            if cuts[0] <= 0:
                raise OffevalError(f"{option}: cut-offs must be positive, got {cuts[0]}")
            labels = [f"{measure.name}_{cut}" for cut in cuts]
        else:
            cuts = sorted(_number(text, option) for text in texts)
            labels = [f"{measure.name}_{cut:3.2f}" for cut in cuts]
        if len(set(cuts)) != len(cuts):
            raise OffevalError(f"{option}: a cut-off is given twice")
        computed = offeval_measures(measure.name, given)
        return [
            Requested(measure, label, cut, given, group, computed.get(label))
            for cut, label in zip(cuts, labels, strict=True)
        ]
    if given is not None and measure.params == DOUBLES:
        for text in given.split(","):
            _number(text, option)
    if given is not None and measure.params == PAIRS:
        pair = r"[^=,]+=[^=,]+"
        if not re.fullmatch(rf"{pair}(,{pair})*", given):
            raise OffevalError(f"{option}: parameters are written level=gain, as in ndcg.1=3,2=9")
    label = f"{measure.name}_{given}" if given is not None else measure.name
    computed = offeval_measures(measure.name, given).get(label)
    return [Requested(measure, label, None, given, group, computed)]


_NUMBER = re.compile(r"\s*[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?\s*")


def _number(text: str, option: str) -> float:
    """A parameter as a number; an error naming the option when it is none."""
    if not _NUMBER.fullmatch(text):
        raise OffevalError(f"{option}: {text!r} is not a number")
    return float(text)


def _whole(text: str | None, option: str, least: int) -> int | None:
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
            f"does not compute, with a warning); measures {', '.join(supported_measures())}",
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
            sys.stdout.write("".join(trec_eval_lines(args)))
        return 0


def trec_eval_lines(args: argparse.Namespace) -> list[str]:
    """The output lines (each ending in a newline) for parsed trec_eval arguments."""
    level = _whole(args.level_for_rel, "-l", 1)
    depth = _whole(args.Max_retrieved_per_topic, "-M", 1)
    requested = expand(args.measure or ["official"])
    _refuse_named(requested)
    for role, path in (("qrels", args.qrels), ("run", args.run)):
        if path == "-":
            raise OffevalError(f"{role} '-': reading stdin is not supported; give a file")
        if not Path(path).is_file():
            what = "is a directory" if Path(path).is_dir() else "no such file"
            raise OffevalError(f"{role} file {path}: {what}")
    qrels = read_qrels(args.qrels)
    run = read_run(args.run)
    queries = sorted(pd.unique(qrels["user"]))  # trec_eval's order: qids compared as text
    if not args.complete_rel_info_wanted:
        in_run = set(pd.unique(run["user"]))
        queries = [q for q in queries if q in in_run]
    if not queries:
        raise OffevalError(
            f"no query has both results ({args.run}) and relevance information ({args.qrels})"
        )
    _warn_left_out(requested)
    printed = [r for r in requested if r.supported]
    kept = run["user"].isin(set(queries)).to_numpy()
    if not kept.all():  # run queries without qrels are ignored
        run = run[kept]
    if depth is not None:
        run = _ranked(run, depth)
    overrides = {"no_predictions": "zero" if args.complete_rel_info_wanted else "nan"}
    if level is not None:
        overrides["relevance_threshold"] = float(level)
    values = _values(run, qrels, queries, printed, PRESETS["trec_eval"](**overrides))
    out: list[str] = []
    if args.query_eval_wanted:  # query by query, each query's measures in order
        out.extend(_per_query_lines([r for r in printed if r.measure.per_query], queries, values))
    if not args.nosummary:
        for r in printed:
            if r.measure.name == "runid":
                out.append(f"{'runid':<{WIDTH}}\tall\t{_run_tag(args.run)}\n")
            elif r.measure.summary:
                out.append(_line(r, "all", _aggregate(r, values[r.label], qrels, args)))
    return out


def _values(
    run: pd.DataFrame, qrels: pd.DataFrame, queries: list, printed: list[Requested], conventions
) -> dict[str, np.ndarray | list[str]]:
    """Per printed label, its per-query values in the order of ``queries`` (strings for
    relstring; the number of queries for num_q).

    The values are :func:`~offeval_ir.runs.compute_measures`' (the same groups of
    measures through :func:`~offeval_ir.metrics.compute`), computed a block of
    queries at a time (:func:`~offeval_ir.blocks.user_blocks`); each block is judged
    once for every measure and the relstrings."""
    measures = [r.offeval for r in printed if r.offeval is not None]
    names, groups = measure_groups(measures, conventions) if measures else ([], [])
    lengths = {
        r.label: int(_number(r.params or "10", ""))
        for r in printed
        if r.measure.name == "relstring"
    }
    tables: list[pd.DataFrame] = []
    strings: dict[str, list[pd.Series]] = {label: [] for label in lengths}
    for block, block_qrels in user_blocks(run, qrels, CHUNK_ROWS):
        table, found = _block_values(block, block_qrels, names, groups, conventions, lengths)
        tables.append(table)
        for label, series in found.items():
            strings[label].append(series)
    table = pd.concat(tables).reindex(queries) if len(tables) > 1 else tables[0].reindex(queries)
    if names and table[names].isna().any().any():  # every query printed has a value
        missing = table.index[table[names].isna().any(axis=1)][:5].tolist()
        raise OffevalError(f"offeval gave no value for queries {missing} (a bug)")
    values: dict[str, np.ndarray | list[str]] = {}
    for r in printed:
        if r.offeval is not None:
            values[r.label] = table[r.label].to_numpy(float)
        elif r.measure.name == "relstring":
            found = pd.concat(strings[r.label])
            values[r.label] = found.reindex(queries, fill_value="").tolist()
        elif r.measure.name == "num_q":
            values[r.label] = np.ones(len(queries))
    return values


def _block_values(
    run: pd.DataFrame,
    qrels: pd.DataFrame,
    names: list[str],
    groups: list[tuple[Conventions, list[Measure]]],
    conventions: Conventions,
    lengths: dict[str, int],
) -> tuple[pd.DataFrame, dict[str, pd.Series]]:
    """One block's per-query values of the measures (a column per name) and relstrings
    (by label: the relstring's length), from one judgement of the block per ordering."""
    built: dict[tuple[str, str, str], Judgements] = {}

    def judged(conv: Conventions) -> Judgements:  # ties put in order once, too
        key = (conv.order_by, conv.negative_grades, conv.ties)
        if key not in built:
            judgements = Judgements.from_frames(
                run, qrels, order_by=conv.order_by, negative_grades=conv.negative_grades
            )
            built[key] = in_tie_order(judgements, conv)
        return built[key]

    def result_of(metrics, ks, conv):
        return compute(judged(conv), metrics, ks, conv)

    table = (
        measures_of(names, groups, conventions, result_of).per_user
        if names
        else pd.DataFrame(index=judged(conventions).users)
    )
    found = {label: relstrings(judged(conventions), conventions, n) for label, n in lengths.items()}
    return table, found


def _refuse_named(requested: list[Requested]) -> None:
    """An error for a measure named by ``-m`` that offeval does not compute."""
    named = list(dict.fromkeys(r.label for r in requested if not r.supported and not r.group))
    if named:
        raise OffevalError(
            f"offeval does not compute trec_eval's {', '.join(named)}; it computes "
            f"{', '.join(supported_measures())}"
        )


def _warn_left_out(requested: list[Requested]) -> None:
    """One warning per group listing the measures it brings in that offeval does not
    compute (left out of the output)."""
    skipped: dict[str, list[str]] = {}
    for r in requested:
        if not r.supported:
            skipped.setdefault(r.group, [])
            if r.measure.name not in skipped[r.group]:
                skipped[r.group].append(r.measure.name)
    for group, names in skipped.items():
        warnings.warn(
            f"-m {group}: left out {len(names)} measures offeval does not compute: "
            f"{', '.join(names)}",
            OffevalWarning,
            stacklevel=2,
        )


def supported_measures() -> list[str]:
    """The trec_eval measures offeval prints (under their default parameters)."""
    return [
        name for name in CATALOGUE if all(r.supported for r in _lines(CATALOGUE[name], None, None))
    ]


def _ranked(run: pd.DataFrame, depth: int | None) -> pd.DataFrame:
    """The run in trec_eval's order (per query: score descending, ties by document id
    descending; by rank when there is no score), cut to its first ``depth`` per query."""
    items = pd.factorize(run["item"], sort=True)[0]  # codes in the order of the ids as text
    users = pd.factorize(run["user"])[0]
    if "score" in run:
        order = np.lexsort((-items, -run["score"].to_numpy(float), users))
    else:
        order = np.lexsort((-items, run["rank"].to_numpy(float), users))
    ordered = run.iloc[order]
    if depth is not None:
        ordered = ordered[ordered.groupby("user", sort=False).cumcount().to_numpy() < depth]
    return ordered


def _aggregate(r: Requested, values: np.ndarray, qrels: pd.DataFrame, args) -> float:
    """The ``all`` value of a measure from its per-query values, summed in query order as
    trec_eval sums them (meas_avg.c)."""
    if r.measure.name == "num_rel" and args.complete_rel_info_wanted:
        return float((qrels["relevance"].to_numpy(float) > 0).sum())  # m_num_rel.c, with -c
    how = _AGGREGATES[r.offeval.aggregate] if r.offeval is not None else r.measure.aggregate
    if how == "gm":
        logs = np.log(np.maximum(values, MIN_GEO_MEAN))
        return float(np.exp(np.cumsum(logs)[-1] / len(values)))
    total = float(np.cumsum(values)[-1])
    return total if how == "sum" else total / len(values)


def _per_query_lines(printed: list[Requested], queries: list, values) -> list[str]:
    """The per-query lines, query by query, each query's measures in the order given."""
    if not printed:
        return []
    lines = np.empty((len(queries), len(printed)), dtype=object)
    tabbed = np.array([f"\t{query}\t" for query in queries], dtype=object)
    for column, r in enumerate(printed):
        lines[:, column] = f"{r.label:<{WIDTH}}" + tabbed + _texts(r, values[r.label])
    return lines.ravel().tolist()


def _texts(r: Requested, values) -> np.ndarray:
    """Each value as trec_eval prints it, newline included (an object array); each
    distinct value (bit for bit) is formatted once."""
    if r.measure.name == "relstring":
        return np.array([f"'{value}'\n" for value in values], dtype=object)
    values = np.ascontiguousarray(values, dtype=float)
    bits, at = np.unique(values.view(np.int64), return_inverse=True)
    distinct = bits.view(np.float64).tolist()
    if r.measure.value == "long":
        texts = [f"{math.trunc(v)}\n" for v in distinct]
    else:
        texts = [f"{v:6.4f}\n" for v in distinct]
    return np.array(texts, dtype=object)[at]


def _line(r: Requested, query: str, value) -> str:
    """One output line, the value formatted as trec_eval prints this measure."""
    if r.measure.name == "relstring":
        return f"{r.label:<{WIDTH}}\t{query}\t'{value}'\n"
    if r.measure.value == "long":
        return f"{r.label:<{WIDTH}}\t{query}\t{math.trunc(value)}\n"
    return f"{r.label:<{WIDTH}}\t{query}\t{value:6.4f}\n"


_OPENERS = {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}


def _run_tag(path: str) -> str:
    """trec_eval's runid: the run tag (sixth field) of the run file's last line that is
    neither blank nor a ``#`` comment; a run that is not a TREC file is named by its file."""
    if detect_format(path, "run") != "trec":
        return Path(path).name
    opener = _OPENERS.get(Path(path).suffix.lower())
    if opener is None:
        last = _last_content_line(path)
    else:
        last = b""
        with opener(path, "rb") as handle:
            for line in handle:
                if line.strip() and not line.lstrip().startswith(b"#"):
                    last = line
    fields = last.split()
    return fields[5].decode(errors="replace") if len(fields) > 5 else Path(path).name


def _last_content_line(path: str, block: int = 1 << 16) -> bytes:
    """The last line of an uncompressed file that is neither blank nor a comment, read
    from the end in growing blocks."""
    size = Path(path).stat().st_size
    with open(path, "rb") as handle:
        while True:
            start = max(0, size - block)
            handle.seek(start)
            lines = handle.read().split(b"\n")
            if start > 0:
                lines = lines[1:]  # the first may be cut
            for line in reversed(lines):
                if line.strip() and not line.lstrip().startswith(b"#"):
                    return line
            if start == 0:
                return b""
            block *= 4
