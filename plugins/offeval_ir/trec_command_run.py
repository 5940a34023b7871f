"""The work of ``offeval trec_eval`` (:mod:`offeval_ir.trec_command` declares the
command and its arguments, and imports this module when it runs): ``-m``'s measures
expanded into trec_eval's lines, the files read, offeval's per-query values, and
trec_eval's output lines.
"""

from __future__ import annotations

import argparse
import bz2
import gzip
import lzma
import math
import re
import sys
import tempfile
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from offeval import ConfigurationError, OffevalError, OffevalWarning
from offeval_ir.blocks import user_blocks
from offeval_ir.conventions import PRESETS, Conventions
from offeval_ir.files import detect_format, read_qrels, read_run
from offeval_ir.judgements import Judgements, in_tie_order
from offeval_ir.measures import Measure, trec_eval_measures
from offeval_ir.metrics import compute
from offeval_ir.prepared import measure_groups, measures_of
from offeval_ir.trec_catalogue import (
    CATALOGUE,
    CUT_DOUBLE,
    CUT_LONG,
    DOUBLES,
    NONE,
    OWN,
    PAIRS,
    TrecMeasure,
    marked_measures,
    parameter_number,
)
from offeval_ir.trec_measures import relstrings

#: Width the measure name is padded to (trec_eval's ``%-22s``).
WIDTH = 22
#: Run lines judged at once (whole queries): bounds the memory of the per-query matrices.
CHUNK_ROWS = 2_000_000
#: trec_eval's floor of a value before its logarithm in a geometric mean.
MIN_GEO_MEAN = 0.00001
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
    marked, params = marked_measures(arguments)
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
            cuts = sorted(math.trunc(parameter_number(text, option)) for text in texts)  # C's atol
            if cuts[0] <= 0:
                raise OffevalError(f"{option}: cut-offs must be positive, got {cuts[0]}")
            labels = [f"{measure.name}_{cut}" for cut in cuts]
        else:
            cuts = sorted(parameter_number(text, option) for text in texts)
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
            parameter_number(text, option)
    if measure.name == "relstring":
        relstring_length(given, option)
    if given is not None and measure.params == PAIRS:
        pair = r"[^=,]+=[^=,]+"
        if not re.fullmatch(rf"{pair}(,{pair})*", given):
            raise OffevalError(f"{option}: parameters are written level=gain, as in ndcg.1=3,2=9")
    label = f"{measure.name}_{given}" if given is not None else measure.name
    computed = offeval_measures(measure.name, given).get(label)
    return [Requested(measure, label, None, given, group, computed)]


def relstring_length(given: str | None, option: str) -> int:
    """relstring's length: the number after its dot (default 10), read as C's atol
    reads it (2.5 is 2); an error naming ``option`` unless it is one number >= 0."""
    if given is None:
        return 10
    if "," in given:
        raise OffevalError(f"{option}: relstring's length is one whole number, got {given!r}")
    length = math.trunc(parameter_number(given, option))
    if length < 0:
        raise OffevalError(f"{option}: relstring's length must be >= 0, got {length}")
    return length


def trec_eval_lines(args: argparse.Namespace) -> list[str]:
    """The output lines (each ending in a newline) for trec_eval's arguments, their
    numbers read (:func:`offeval_ir.trec_command.checked`)."""
    requested = expand(args.measure or ["official"])
    _refuse_named(requested)
    if args.qrels == "-":
        raise OffevalError("qrels '-': trec_eval reads only the run from standard input")
    with _run_file(args.run) as run_path:
        for role, path in (("qrels", args.qrels), ("run", run_path)):
            if not Path(path).is_file():
                what = "is a directory" if Path(path).is_dir() else "no such file"
                raise OffevalError(f"{role} file {path}: {what}")
        qrels = _whole_grades(read_qrels(args.qrels))
        run = read_run(run_path)
        tag = _run_tag(run_path)
    if args.debug_level > 0:
        warnings.warn(
            f"-D {args.debug_level}: offeval prints no debug lines",
            OffevalWarning,
            stacklevel=2,
        )
    queries = sorted(pd.unique(qrels["user"]))  # trec_eval's order: qids compared as text
    if not args.complete_rel_info_wanted:
        in_run = set(pd.unique(run["user"]))
        queries = [q for q in queries if q in in_run]
    if args.debug_query is not None:  # -D N.QID: that query only
        queries = [q for q in queries if q == args.debug_query]
    if not queries:
        raise OffevalError(
            f"no query has both results ({args.run}) and relevance information ({args.qrels})"
        )
    _warn_left_out(requested)
    printed = [r for r in requested if r.supported]
    kept = run["user"].isin(set(queries)).to_numpy()
    if not kept.all():  # run queries without qrels are ignored
        run = run[kept]
    if args.depth is not None:
        run = _ranked(run, args.depth)
    if args.Judged_docs_only:
        run = _judged_only(run, qrels)
    emptied = args.depth == 0 or args.Judged_docs_only  # a list of the run may be empty
    zero = args.complete_rel_info_wanted or emptied
    overrides = {"no_predictions": "zero" if zero else "nan"}
    if args.level:  # -l 0 is -l 1 on raised grades (_level_0_values)
        overrides["relevance_threshold"] = float(args.level)
    conventions = PRESETS["trec_eval"](**overrides)
    if args.level == 0:
        values = _level_0_values(run, qrels, queries, printed, conventions)
    else:
        values = _values(run, qrels, queries, printed, conventions)
    listless = ~pd.Index(queries).isin(pd.unique(run["user"]))  # missing (-c) or emptied
    _without_a_list(values, printed, args.collection or 0, listless, emptied)
    out: list[str] = []
    if args.query_eval_wanted:  # query by query, each query's measures in order
        out.extend(_per_query_lines([r for r in printed if r.measure.per_query], queries, values))
    if not args.nosummary:
        for r in printed:
            if r.measure.name == "runid":
                out.append(f"{'runid':<{WIDTH}}\tall\t{tag}\n")
            elif r.measure.summary:
                out.append(_line(r, "all", _aggregate(r, values[r.label], qrels, args)))
    return out


def _whole_grades(qrels: pd.DataFrame) -> pd.DataFrame:
    """The qrels with each grade read as trec_eval reads it, by C's ``atol``: truncated
    toward 0 (get_qrels.c; 0.5 is 0, 2.7 is 2)."""
    grades = qrels["relevance"].to_numpy(float)
    whole = np.trunc(grades)
    return qrels if (whole == grades).all() else qrels.assign(relevance=whole)


@contextmanager
def _run_file(path: str) -> Iterator[str]:
    """The run's path; for ``-``, standard input written to a temporary file named
    ``stdin`` (trec_eval reads a run of ``-`` from standard input)."""
    if path != "-":
        yield path
        return
    with tempfile.TemporaryDirectory() as folder:
        written = Path(folder, "stdin")
        written.write_bytes(sys.stdin.buffer.read())
        yield str(written)


def _judged_only(run: pd.DataFrame, qrels: pd.DataFrame) -> pd.DataFrame:
    """``-J``: the run's documents judged for their query (a qrels grade of 0 or more;
    form_res_rels.c), in the run's order."""
    judged = qrels[qrels["relevance"].to_numpy(float) >= 0]
    pairs = pd.MultiIndex.from_frame(judged[["user", "item"]])
    return run[pd.MultiIndex.from_frame(run[["user", "item"]]).isin(pairs)]


def _without_a_list(
    values, printed: list[Requested], size: int, listless: np.ndarray, emptied: bool
) -> None:
    """The values of ``utility.a,b,c,d``, ``rbp_resid.params`` and ``relstring.length`` as
    trec_eval computes them, from offeval's, which have N = 0 and see an empty list for a
    query without one (``listless``, per query) whether the run misses it (under -c) or
    ``-M 0`` or ``-J`` emptied it (``emptied``).

    trec_eval evaluates a query missing from the run on a list of one document not in
    the pool (trec_eval.c's bogus ranking; ``-M 0`` cuts it and ``-J`` drops it, so that
    its list is empty too), then zeroes the values labelled num_ret, utility, unj_* and
    rbp_resid and empties the one labelled relstring, and no other: rbp_resid with
    parameters is p + (1 - p) = 1 there (m_rbp_resid.c), relstring with a length ``-``
    (one document not in the pool), utility with coefficients b + c R - d (1 + R),
    offeval's value.
    On an empty list utility.a,b,c,d is c R - d R (m_utility.c: a rel_ret + b (ret -
    rel_ret) + c (rel - rel_ret) + d (N + rel_ret - ret - rel)), b - d less; ``-N size``
    adds d N to every query. Bare utility has d = 0 and is 0 on both."""
    for r in printed:
        if r.params is None:
            continue
        if r.measure.name == "utility":
            _, b, _, d = (parameter_number(x, f"-m {r.label}") for x in r.params.split(","))
            value = values[r.label] + d * size if size else values[r.label]
            values[r.label] = np.where(listless, value - b + d, value) if emptied else value
        elif r.measure.name == "rbp_resid" and not emptied:
            values[r.label] = np.where(listless, 1.0, values[r.label])
        elif r.measure.name == "relstring" and not emptied:
            bogus = "-"[: relstring_length(r.params, f"-m {r.label}")]
            values[r.label] = [
                bogus if no else text for no, text in zip(listless, values[r.label], strict=True)
            ]


#: trec_eval's measures that read the grades as gains and no relevance level (gain_init.c,
#: m_rbp_resid.c and m_relstring.c read none either).
_GAIN_MEASURES = (
    "relstring", "G", "dcg", "ideal_dcg", "ndcg", "ndcg_rel", "Rndcg", "ndcg_cut", "rbp",
    "rbp_resid",
)  # fmt: skip


def _level_0_values(
    run: pd.DataFrame, qrels: pd.DataFrame, queries: list, printed: list[Requested], conventions
) -> dict[str, np.ndarray | list[str]]:
    """:func:`_values` under trec_eval's ``-l 0``: every judged document relevant (grade 0
    or more; form_res_rels.c counts rel >= the level, where a -1 grade is in the pool
    but not judged). The measures reading relevance are computed at ``-l 1`` on the
    grades of 0 or more raised by 1, which makes the same documents relevant, judged
    and in the pool; the gain measures, which read the grades and no level, on the
    grades as given. One difference is left: m_Rndcg.c is 0 for a query with no
    relevant document, so a query judged only 0 (and -1) is 0 here, where trec_eval
    divides 0 by 0 (-nan) at its default gains and computes a value when grade 0 is
    given a gain (``Rndcg.0=1``)."""
    gains = [r for r in printed if r.measure.name in _GAIN_MEASURES]
    rest = [r for r in printed if r.measure.name not in _GAIN_MEASURES]
    grades = qrels["relevance"].to_numpy(float)
    raised = qrels.assign(relevance=np.where(grades >= 0, grades + 1, grades))
    values = _values(run, raised, queries, rest, conventions) if rest else {}
    if gains:
        values.update(_values(run, qrels, queries, gains, conventions))
    return values


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
        r.label: relstring_length(r.params, f"-m relstring.{r.params}")
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
