"""``offeval trec_eval``: trec_eval's command line and output, computed by offeval.

``offeval trec_eval [-q] [-c] [-n] [-J] [-l N] [-M N] [-N N] [-D N[.QID]] [-m measure]...
QRELS RUN`` takes trec_eval's arguments in trec_eval's order and prints what trec_eval
10.0 prints, byte for byte: one line ``measure<TAB>qid<TAB>value`` per measure, the name
padded to 22 characters, the value as trec_eval formats it (``%6.4f``, whole
numbers for the ``num_*`` counts, the run tag for ``runid``, a quoted string for
``relstring``), per-query lines (``-q``) in trec_eval's order (queries sorted as
text, measures in trec_eval's own order, whatever the order of ``-m``) and then
the summary lines labelled ``all``. A script that runs ``trec_eval`` and parses
its output runs ``offeval trec_eval`` unchanged.

What the options mean, as in trec_eval (trec_eval.c):

- ``-q``: per-query lines before the summary.
- ``-c``: average over every query of the qrels; a query missing from the run
  scores 0 (offeval's ``no_predictions='zero'``), except where trec_eval's list of
  one document not in the pool scores otherwise: ``utility.a,b,c,d`` (b + c R - d
  (1 + R)), ``rbp_resid`` with parameters (1), ``relstring`` with a length (``-``),
  and ideal_dcg (the query's own). Without ``-c``, the queries
  of both the qrels and the run are averaged (trec_eval's help text; trec_eval
  10.0 itself stops with "result qid ... not found" when a judged query is
  missing from the run).
- ``-n``: no summary lines (with ``-q``, only the per-query lines; without it,
  nothing).
- ``-l N``: a grade of N or more is relevant (offeval's ``relevance_threshold``);
  ``-l 0`` makes every judged document relevant (grade 0 or more; -1 is in the pool,
  not judged), as trec_eval's form_res_rels.c reads ``rel >= 0``.
- ``-M N``: only the first N documents of each query count, in trec_eval's
  order (score descending, ties by document id descending); ``-M 0`` keeps
  none, and a query of the run still counts, with an empty list.
- ``-J``: only the judged documents of each query's list count (grade 0 or
  more), in their order, after ``-M``.
- ``-N N``: the number of documents in the collection (used by
  ``utility.a,b,c,d``'s last coefficient only: d (N + rel_ret - ret - rel)).
- ``-D N[.QID]``: trec_eval's debug level; with ``.QID``, only that query is
  evaluated. offeval prints no debug lines (a level above 0 is said once on stderr).
- ``-R qrels`` and ``-T trec_results`` name the formats read (the only ones);
  ``-o`` is obsolete in trec_eval and changes nothing.
- ``-m measure``: repeatable; trec_eval's names and groups (``official``, the
  default; ``all_trec``; ``set``), with parameters after a dot (``P.5,10``,
  ``ndcg_cut.10``, ``iprec_at_recall.0.1,0.5``, ``ndcg.1=3,2=9``); a measure's
  parameters come from its first ``-m``, as in trec_eval.

The run may be ``-``: read from standard input, as trec_eval reads it (the qrels
may not). A grade is read as trec_eval reads it, by C's ``atol`` (0.5 is 0, 2.7 is
2). Options may be glued to their values as getopt allows (``-M100``,
``-l2``, ``-mndcg_cut.10``) and flags combined (``-qc``). trec_eval's ``-Z`` is
refused, in one line naming it. A measure offeval does not compute is an error
when named, and is left out, with one warning line on stderr listing them, when
a group (``all_trec``) brings it in.

The per-query values are offeval's (:func:`~offeval_ir.runs.compute_measures`
under the ``trec_eval`` preset); the summary is computed here, as trec_eval
computes it: the mean over the queries (summed in query order, as trec_eval
sums), the sum for the ``num_*`` counts, the geometric mean for ``gm_map`` and
``gm_bpref`` (each value floored at 0.00001).

Where trec_eval 10.0 is wrong, offeval differs on purpose (each checked against
trec_eval's own output in tests/plugins/ir/test_trec_eval_reference.py):

- a first query of the qrels judged only -1: trec_eval stops with "Can't
  calculate measure 'num_ret'" (its table of grade counts has size 0); offeval
  evaluates it, as trec_eval does the same query when another comes first;
- gains less than 1 apart (``ndcg.1=0.5,2=0.3``): trec_eval sorts the gains by
  their difference truncated to a whole number (gain_init.c), so they tie and
  its ideal ranking is wrong; offeval sorts them by value (trec_eval's own
  value with every gain times 10);
- an empty list (``-M 0``, or ``-J`` with nothing judged): trec_eval divides 0
  by 0 and prints ``-nan`` for iprec_at_recall and 11pt_avg at the recall levels
  of 0 relevant documents; offeval prints 0, as for a query missing from the run
  under ``-c``;
- ``rbp`` with grades above 1: trec_eval rescales the gains by a minimum and
  maximum it leaves uninitialised (m_rbp.c), so its value depends on memory;
  offeval starts both at 0;
- a query judged only -1 after another: trec_eval's gain measures read the grade
  counts the query before left (form_res_rels.c resets neither them nor their number),
  so its ideal_dcg is that query's; offeval's is 0 (no judged grade);
- ``-M`` below 0 (trec_eval crashes) is refused.

This module declares the command and its arguments, importing nothing numerical, so an
argument mistake is answered at once (:func:`checked`); trec_eval's measure catalogue
and the checks of ``-m``, ``-l`` and ``-M`` are :mod:`offeval_ir.trec_catalogue`'s (which
imports nothing numerical either), and the work is
:mod:`offeval_ir.trec_command_run`'s (imported by ``run``).
"""

from __future__ import annotations

import argparse
import sys

from offeval import OffevalError
from offeval.plugin import command_line
from offeval_ir.trec_catalogue import SUPPORTED, marked_measures, whole_option

#: The trec_eval release whose command line and output this reproduces.
TREC_EVAL_VERSION = "10.0"


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


#: trec_eval's rel_info formats (formats.c): offeval reads the first, the standard qrels.
REL_INFO_FORMATS = ("qrels", "qrels_jg", "prefs", "qrels_prefs")
#: trec_eval's results formats (formats.c).
RESULTS_FORMATS = ("trec_results",)


def checked(args: argparse.Namespace) -> argparse.Namespace:
    """The arguments with the numbers of the options read: ``level`` (``-l``), ``depth``
    (``-M``), ``collection`` (``-N``), ``debug_level`` and ``debug_query`` (``-D``), None
    where not given; or the :class:`~offeval.OffevalError` of the first mistake:
    trec_eval's own words for a format it does not know (``Illegal rel_format 'x'``),
    a whole number where trec_eval reads one with ``atol``."""
    if args.Rel_info_format not in REL_INFO_FORMATS:
        raise OffevalError(f"-R: trec_eval: Illegal rel_format '{args.Rel_info_format}'")
    if args.Rel_info_format != "qrels":
        raise OffevalError(
            f"-R {args.Rel_info_format}: offeval trec_eval reads the rel_info format qrels "
            f"only (trec_eval's {args.Rel_info_format} feeds measures offeval does not compute)"
        )
    if args.Results_format not in RESULTS_FORMATS:
        raise OffevalError(
            f"-T: trec_eval: Illegal retrieval results format '{args.Results_format}'"
        )
    level = whole_option(args.level_for_rel, "-l", 0)
    debug, _, query = (args.Debug_level or "0").partition(".")
    return argparse.Namespace(
        **vars(args),
        level=level,
        depth=whole_option(args.Max_retrieved_per_topic, "-M", 0),
        collection=whole_option(args.Number_docs_in_coll, "-N", 0),
        debug_level=whole_option(debug, "-D", 0),
        debug_query=query or None,
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
        parser.add_argument(
            "run", help="run: qid Q0 docno rank sim run_id (results_file; - for standard input)"
        )
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
            "-J",
            "--Judged_docs_only",
            action="store_true",
            help="only the judged documents of each list count",
        )
        parser.add_argument(
            "-N",
            "--Number_docs_in_coll",
            metavar="N",
            help="documents in the collection (utility's last coefficient)",
        )
        parser.add_argument(
            "-D",
            "--Debug_level",
            metavar="N[.QID]",
            help="trec_eval's debug level; .QID evaluates that query only (no debug lines)",
        )
        parser.add_argument(
            "-R",
            "--Rel_info_format",
            default="qrels",
            metavar="FORMAT",
            help="the qrels' format: qrels (the only one read)",
        )
        parser.add_argument(
            "-T",
            "--Results_format",
            default="trec_results",
            metavar="FORMAT",
            help="the run's format: trec_results (the only one)",
        )
        parser.add_argument(
            "-o", action="store_true", help="obsolete in trec_eval: changes nothing"
        )
        parser.add_argument(  # trec_eval's long form takes a value (its getopt table)
            "--Output_old_results_format", metavar="VALUE", help=argparse.SUPPRESS
        )
        parser.add_argument(
            "-v", "--version", action=_Version, nargs=0, help="which trec_eval this reproduces"
        )
        parser.add_argument("-Z", "--Zscore", action=_Refused, nargs="?", help=argparse.SUPPRESS)

    def run(self, args: argparse.Namespace) -> int:
        """Print trec_eval's output for the arguments."""
        with command_line():
            read = checked(args)  # the argument mistakes, before any numbers
            marked_measures(args.measure or ["official"])
            from offeval_ir.trec_command_run import trec_eval_lines  # noqa: PLC0415 (pandas)

            sys.stdout.write("".join(trec_eval_lines(read)))
        return 0
