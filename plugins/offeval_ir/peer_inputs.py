"""Runs, qrels and measures as ranx, pytrec_eval and ir-measures users hold them.

:func:`evaluate_runs`, :func:`compute_measures` and :func:`compare_systems`
(:mod:`offeval_ir.runs`) pass their inputs through these functions first, so
each also takes:

- **dict-of-dict** runs ``{qid: {docid: score}}`` and qrels ``{qid: {docid:
  grade}}``, as pytrec_eval and ranx take them;
- **ranx** ``Run`` and ``Qrels`` objects (read through their ``to_dict``;
  ranx is never imported: an object is recognised by its type's module);
- **ir-measures** inputs: iterables of ``ScoredDoc`` / ``Qrel`` named tuples
  (fields ``query_id``, ``doc_id``, ``score`` / ``relevance``, as
  ``ir_measures.read_trec_run`` yields them) and frames with those columns
  (ranx's ``to_dataframe`` columns ``q_id``, ``doc_id``, ``score`` too, and the
  recommender toolkits' ``user_id``, ``item_id``);
- **held-out interactions** without grades (implicit feedback), a frame
  without a grade column or ``{user: [item, ...]}``: qrels whose every row is
  relevant, of grade 1 (said once, in a warning);
- ir-measures **measure objects** (``ir_measures.nDCG@10``, ``P(rel=2)@5``),
  labelled as ir-measures prints them;
- for :func:`compare_systems`, per-query values computed elsewhere: a frame
  (queries x measures), pytrec_eval's ``evaluate`` output ``{qid: {measure:
  value}}``, or a ranx ``Run`` that ranx has evaluated (its ``scores``,
  ``{measure: {qid: value}}``).

Everything becomes offeval's long frames (columns ``user``, ``item``,
``score`` / ``relevance``); ids are kept as given (pytrec_eval and ranx take
text ids, as offeval's file readers make them). Frames in offeval's own
layout, and anything not recognised, pass through unchanged.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Iterator, Mapping
from itertools import chain

import numpy as np
import pandas as pd

from offeval import ColumnError, ConfigurationError, OffevalWarning
from offeval.plugin import hint
from offeval_ir.conventions import Conventions
from offeval_ir.judgements import PEER_COLUMNS, ROLE_ALIASES, role_names
from offeval_ir.metrics import MetricResult

#: At most how many entries an error hands over (more than its message shows: it then
#: ends in an ellipsis).
_NAMED = 100


def _is_ranx(obj: object, kind: str) -> bool:
    """Whether ``obj`` is a ranx ``Run`` or ``Qrels`` (``kind``), without importing ranx."""
    cls = type(obj)
    return cls.__module__.split(".")[0] == "ranx" and cls.__name__ == kind


def _is_ir_measures(obj: object) -> bool:
    return type(obj).__module__.split(".")[0] == "ir_measures"


def _nested(obj: object) -> bool:
    """A mapping whose values are mappings (a dict-of-dict), judged by its first value."""
    if not isinstance(obj, Mapping) or not obj:
        return False
    return isinstance(next(iter(obj.values())), Mapping)


def dict_frame(data: Mapping, value: str, what: str) -> pd.DataFrame:
    """``{qid: {docid: value}}`` as a long frame (user, item, ``value``), in one pass over
    the inner dicts (the frame is then numpy's). Values must be numbers; ``what`` names
    the input in errors."""
    inner = list(data.values())
    for qid, docs in zip(data, inner, strict=True):
        if not isinstance(docs, Mapping):
            raise ConfigurationError(
                f"{what}: a dict-of-dict maps each query to {{docid: {value}}}; query "
                f"{qid!r} maps to {type(docs).__name__} {docs!r:.60}"
            )
    sizes = np.fromiter((len(d) for d in inner), dtype=np.int64, count=len(inner))
    users = np.repeat(np.array(list(data), dtype=object), sizes)
    items = [doc for docs in inner for doc in docs]
    raw = [v for docs in inner for v in docs.values()]
    try:
        values = np.asarray(raw, dtype=float)
    except (TypeError, ValueError):
        bad = next(i for i, v in enumerate(raw) if not _is_number(v))
        raise ConfigurationError(
            f"{what}: the {value} of query {users[bad]!r}, document {items[bad]!r} is "
            f"{raw[bad]!r}, not a number"
        ) from None
    _check_values(values, value, users, items, what)
    if value == "relevance" and np.all(values == np.round(values)):
        values = values.astype(np.int64)
    return pd.DataFrame({"user": users, "item": np.array(items, dtype=object), value: values})


def _held_out_frame(data: Mapping) -> pd.DataFrame:
    """Held-out items by user, ``{user: [item, ...]}`` (lists, tuples or sets), as a long
    frame (user, item) without grades (:func:`implicit_grades` reads them)."""
    items = [list(held) for held in data.values()]
    sizes = np.fromiter(map(len, items), np.int64, len(items))
    users = np.repeat(np.array(list(data), dtype=object), sizes)
    return pd.DataFrame({"user": users, "item": list(chain.from_iterable(items))})


def _check_values(values: np.ndarray, value: str, users, items: list, what: str) -> None:
    """NaN scores, and grades that are not finite, are errors naming the queries and the
    documents (as the frames' checks name rows; infinite scores rank as in frames)."""
    bad = np.isnan(values) if value == "score" else ~np.isfinite(values)
    if bad.any():
        at = np.flatnonzero(bad)[:_NAMED]
        problem = (
            "score must be a number" if value == "score" else f"{value} must be a finite number"
        )
        raise ColumnError(
            value,
            problem,
            [(users[i], items[i]) for i in at],
            table=f"{what}: query, document",
        )


def _is_number(value: object) -> bool:
    try:
        float(value)
    except (TypeError, ValueError):
        return False
    return True


def _tuples_frame(rows: Iterable, value: str, what: str) -> pd.DataFrame | None:
    """ir-measures' named tuples (query_id, doc_id, ``value``) as a long frame; None when
    ``rows`` is not such an iterable."""
    if isinstance(rows, str | bytes | Mapping | pd.DataFrame) or not isinstance(rows, Iterable):
        return None
    if isinstance(rows, np.ndarray):
        return None
    rows = list(rows)
    if not rows:
        raise ConfigurationError(f"{what} is empty")
    fields = getattr(rows[0], "_fields", None)
    if not fields or not {"query_id", "doc_id", value} <= set(fields):
        return None
    frame = pd.DataFrame.from_records(rows, columns=fields)
    return frame.rename(columns={"query_id": "user", "doc_id": "item"})[["user", "item", value]]


def _peer_frame(frame: pd.DataFrame, value: str) -> pd.DataFrame:
    """A frame with the peers' column names (:data:`PEER_COLUMNS`), renamed to offeval's
    roles (only when it has neither ``user`` nor ``item``; a run's needs its ``value``,
    qrels' may be held-out interactions without one)."""
    if "user" in frame or "item" in frame:
        return frame
    renamed = {}
    for role, names in PEER_COLUMNS.items():
        found = [n for n in names if n in frame]
        if found:
            renamed[found[0]] = role
    if len(renamed) < 2 or (value == "score" and value not in frame):
        return frame
    return frame.rename(columns=renamed)


#: Columns that hold grades under another name (ranx's ``rel``, PyTerrier's ``label``,
#: MovieLens' ``rating``): qrels with one are never read as implicit feedback.
GRADE_NAMES = ("rel", "label", "grade", "rating")


def implicit_grades(qrels: object, columns: Mapping | None, stacklevel: int = 2) -> object:
    """Held-out interactions without a grade column (implicit feedback) as qrels of
    relevance 1, said once in an :class:`~offeval.OffevalWarning`; any other input
    unchanged (a frame with a rank or score column is a run, one with a column named
    like grades, :data:`GRADE_NAMES`, has them: the checks then ask to name it)."""
    names = role_names(columns)
    named = {ROLE_ALIASES.get(key, key) for key in columns or {}}
    if not hasattr(qrels, "columns") or "relevance" in named:
        return qrels
    held = set(qrels.columns)
    other = {names["rank"], names["score"], names["relevance"], *GRADE_NAMES} & held
    if other or not {names["user"], names["item"]} <= held:
        return qrels
    how = hint("columns={'relevance': ...}", "--column relevance=NAME")
    warnings.warn(
        OffevalWarning(
            f"the qrels have no {names['relevance']!r} column: each held-out interaction "
            f"is relevant, of grade 1 (implicit feedback); if a column holds grades, name "
            f"it with {how}"
        ),
        stacklevel=stacklevel + 1,
    )
    return qrels.assign(**{names["relevance"]: 1})


def as_run(run: object, what: str = "the run", columns: Mapping | None = None) -> object:
    """``run`` as offeval's predictions frame (user, item, score) when it is a ranx ``Run``,
    a dict-of-dict ``{qid: {docid: score}}``, ir-measures' ``ScoredDoc`` tuples or a
    frame with their columns; anything else unchanged (``columns`` given: frames too)."""
    return _as(run, "Run", "score", what, columns)


def as_qrels(
    qrels: object, what: str = "the qrels", columns: Mapping | None = None, *, stacklevel: int = 2
) -> object:
    """``qrels`` as offeval's labels frame (user, item, relevance): from ranx ``Qrels``, a
    dict-of-dict ``{qid: {docid: grade}}``, ir-measures' ``Qrel`` tuples or their frames;
    held-out interactions without grades (also ``{user: [item, ...]}``) are relevance 1
    (:func:`implicit_grades`; its warning names the line ``stacklevel`` frames up from the
    function calling this one)."""
    frame = _as(qrels, "Qrels", "relevance", what, columns)
    return implicit_grades(frame, columns, stacklevel + 1)


def _as(data: object, kind: str, value: str, what: str, columns: Mapping | None) -> object:
    if isinstance(data, pd.DataFrame):
        return data if columns else _peer_frame(data, value)
    if _is_ranx(data, kind):
        data = data.to_dict()
        if not data:
            raise ConfigurationError(f"{what}: the ranx {kind} is empty")
        return dict_frame(data, value, what)
    if _is_ranx(data, "Qrels" if kind == "Run" else "Run"):
        other = "Qrels" if kind == "Run" else "Run"
        raise ConfigurationError(f"{what} is a ranx {other}, where a ranx {kind} was expected")
    if isinstance(data, Mapping):
        if not data:
            raise ConfigurationError(f"{what} is an empty dict")
        if kind == "Qrels" and isinstance(next(iter(data.values())), list | tuple | set):
            return _held_out_frame(data)
        return dict_frame(data, value, what)
    if isinstance(data, Iterator) and not _is_dask(data):
        data = list(data)  # read once: a generator of tuples, as ir_measures.read_trec_run
    frame = _tuples_frame(data, value, what) if not _is_dask(data) else None
    return data if frame is None else frame


def _is_dask(obj: object) -> bool:
    return type(obj).__module__.split(".")[0].startswith("dask")


def _named_ranx_runs(runs: object) -> object:
    """A list of ranx ``Run`` objects as ``{run.name: run}`` (``run_1``, ``run_2``, ... for
    unnamed ones, as ranx's ``compare`` names them); anything else unchanged."""
    if isinstance(runs, list | tuple) and runs and all(_is_ranx(r, "Run") for r in runs):
        names = [r.name if r.name is not None else f"run_{i + 1}" for i, r in enumerate(runs)]
        if len(set(names)) != len(names):
            raise ConfigurationError(f"the ranx runs need distinct names, got {names}")
        return dict(zip(names, runs, strict=True))
    return runs


def as_runs(runs: object, columns: Mapping | None = None) -> object:
    """The ``runs`` of :func:`~offeval_ir.runs.evaluate_runs` with each run converted by
    :func:`as_run`; a list of ranx ``Run`` objects becomes ``{run.name: run}`` (``run_1``,
    ``run_2``, ... for unnamed ones, as ranx's ``compare`` names them). A single run given
    where the mapping of named runs belongs is an error saying so."""
    runs = _named_ranx_runs(runs)
    if _is_ranx(runs, "Run"):
        raise ConfigurationError(
            f"runs maps run names to runs, got a single ranx Run: give {{{runs.name or 'name'!r}: "
            "run}, or a list of ranx runs"
        )
    if not isinstance(runs, Mapping):
        return runs
    first = next(iter(runs.values()), None)
    if isinstance(first, Mapping) and first and not _nested(first):
        if all(_is_number(v) for v in first.values()):
            raise ConfigurationError(
                "runs maps run names to runs, and this looks like one run {qid: {docid: "
                "score}}: give {'name': run}"
            )
    return {name: as_run(run, f"run {name!r}", columns) for name, run in runs.items()}


def measure_names(measures: object) -> object:
    """Measure strings for ir-measures' measure objects (as ir-measures prints them, which
    offeval parses, after checking the offeval provider supports them: see
    :func:`offeval_ir.provider_measures.offeval_measure`); strings and offeval measures
    unchanged."""
    if isinstance(measures, str) or not isinstance(measures, Iterable):
        return measures
    listed = list(measures)
    if not any(_is_ir_measures(m) for m in listed):
        return listed
    # imported here: ir-measures is optional, and it is there (it made these objects)
    from offeval_ir.provider_measures import offeval_measure  # noqa: PLC0415

    return [offeval_measure(m) if _is_ir_measures(m) else m for m in listed]


def per_query_values(values: object, what: str) -> pd.DataFrame | None:
    """Per-query values of one system computed elsewhere, as a frame (queries x measures):
    a ranx ``Run`` ranx has evaluated (``scores``), pytrec_eval's ``{qid: {measure:
    value}}``, or a frame; None for anything else."""
    if _is_ranx(values, "Run"):
        scores = {m: dict(v) for m, v in values.scores.items()}
        if not scores:
            raise ConfigurationError(
                f"{what}: the ranx Run holds no per-query scores: evaluate it with ranx first "
                "(ranx.evaluate(qrels, run, metrics)), or evaluate it here with evaluate_runs"
            )
        return pd.DataFrame(scores)
    if isinstance(values, pd.DataFrame):
        return values
    if _nested(values):
        frame = pd.DataFrame.from_dict(values, orient="index")
        if not all(pd.api.types.is_numeric_dtype(frame[c]) for c in frame):
            raise ConfigurationError(
                f"{what}: per-query values are {{qid: {{measure: number}}}} (pytrec_eval's "
                "evaluate output)"
            )
        return frame
    return None


def as_results(results: object) -> object:
    """The ``results`` of :func:`~offeval_ir.runs.compare_systems` with per-query values
    computed elsewhere (see :func:`per_query_values`) as :class:`MetricResult` (a NaN is
    a query left out); a list of evaluated ranx runs becomes ``{run.name: run}``."""
    results = _named_ranx_runs(results)
    if not isinstance(results, Mapping):
        return results
    out = {}
    for name, value in results.items():
        frame = None if isinstance(value, MetricResult) else per_query_values(value, repr(name))
        if frame is None:
            out[name] = value
            continue
        numbers = frame.apply(pd.to_numeric, errors="coerce").astype(float)
        bad = frame.notna() & numbers.isna()
        if bad.any().any():
            column = bad.any()[lambda s: s].index[0]
            query = bad.index[bad[column]][0]
            raise ConfigurationError(
                f"system {name!r}: the value of {column!r} for query {query!r} is "
                f"{frame.loc[query, column]!r}, not a number"
            )
        out[name] = MetricResult(numbers, Conventions(name="given"))
    return out
