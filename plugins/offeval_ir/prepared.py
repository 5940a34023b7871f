"""Qrels prepared once, to judge many runs at the speed of numpy.

Judging a run against qrels checks the labels, numbers their users and
items, sorts each user's grades (for the ideal ranking) and builds a lookup
from (user, item) to grade. None of that depends on the run, so
:func:`prepare_qrels` does it once and :class:`PreparedQrels` then judges any
number of runs: per run only the run's own rows are checked and ordered, and
its items looked up (a gather from a users x items table of grades when that
fits in memory, a binary search in the sorted (user, item) keys otherwise).
The per-user values are those of :func:`~offeval_ir.runs.compute_measures`
to the last bit: the same :func:`~offeval_ir.metrics.compute` reads the same
:class:`~offeval_ir.judgements.Judgements`, users in the same order (the
run's users in order of first appearance, then the users only the qrels
have).

Top-n matrices (users x n item indices, rank order, as recommender toolkits
produce them; see :mod:`offeval_ir.topn`) are judged with
:meth:`PreparedQrels.topn_judgements` without any frame at all.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from offeval import ColumnError, ConfigurationError
from offeval.plugin import check_choice
from offeval_ir.conventions import PRESETS, Conventions
from offeval_ir.judgements import (
    DENSE_CELLS,
    NEGATIVE_GRADES,
    Judgements,
    Ranking,
    check_duplicates,
    check_id_kinds,
    checked_grades,
    id_array,
    id_kind,
    item_order,
    judge_ranked,
    role_columns,
    role_names,
    sorted_labels,
    table_name,
)
from offeval_ir.measures import Measure, parse_measures
from offeval_ir.metrics import EXCLUSION_REASONS, MetricResult, compute

#: Measure parameters that are convention switches.
PARAM_SWITCHES = {"p": "rbp_persistence"}


def _switches(measure: Measure) -> tuple[tuple[str, object], ...]:
    """Every convention switch a measure sets (its overrides and its parameters)."""
    params = ((PARAM_SWITCHES[name], value) for name, value in measure.params)
    return tuple(sorted((*measure.overrides, *params)))


def _column(measure: Measure) -> str:
    return measure.metric if measure.k is None else f"{measure.metric}@{measure.k}"


def measure_groups(
    measures: Sequence[str | Measure], conventions: Conventions
) -> tuple[list[str], list[tuple[Conventions, list[Measure]]]]:
    """The measures' names, and the measures grouped by the conventions they are
    computed under (what a measure string states overrides ``conventions``)."""
    if isinstance(measures, str):
        raise ConfigurationError(f"measures is a list of measure strings, got {measures!r}")
    try:
        parsed = list(_parsed_all(tuple(measures)))  # parsed once per list (many runs)
    except TypeError:  # not hashable: parsed here, and the parser names what is wrong
        parsed = [m for item in measures for m in _parsed(item)]
    names = [m.name for m in parsed]
    if not parsed or len(set(names)) != len(names):
        raise ConfigurationError(f"give distinct measures, got {names}")
    groups: dict[tuple, list[Measure]] = {}
    for measure in parsed:
        groups.setdefault(_switches(measure), []).append(measure)
    out = []
    for switches, group in groups.items():
        conv = (
            conventions.with_(**dict(switches), name=conventions.name) if switches else conventions
        )
        out.append((conv, group))
    return names, out


def _parsed(item: str | Measure) -> list[Measure]:
    return [item] if isinstance(item, Measure) else parse_measures([item])


@functools.lru_cache(maxsize=64)
def _parsed_all(measures: tuple) -> tuple[Measure, ...]:
    return tuple(m for item in measures for m in _parsed(item))


def measures_of(
    names: list[str],
    groups: list[tuple[Conventions, list[Measure]]],
    conventions: Conventions,
    result_of,
) -> MetricResult:
    """One :class:`MetricResult` with a column per measure: ``result_of(metrics, ks,
    conv)`` computes each group's metrics, ``ks`` mapping each metric to the cut-offs
    the group asks of it (as :func:`~offeval_ir.metrics.compute` takes them)."""
    values: dict[str, np.ndarray] = {}
    codes: dict[str, np.ndarray] = {}
    counted: list[pd.DataFrame] = []
    ratio_parts: dict[str, pd.DataFrame] = {}
    index = None
    for conv, group in groups:
        ks: dict[str, list[int | None]] = {}  # each metric at the cut-offs asked of it only
        for m in group:
            ks.setdefault(m.metric, [])
            if m.aggregate == "ratio":  # pnDCG: dcg over idcg, per user
                for part in ("dcg", "idcg"):
                    ks.setdefault(part, []).append(m.k)
        for m in group:
            ks[m.metric].append(m.k)
        ks = {metric: list(dict.fromkeys(cuts)) for metric, cuts in ks.items()}
        result = result_of(list(ks), ks, conv)
        index = result.per_user.index if index is None else index  # the same users
        columns = [_column(m) for m in group]
        rows = result.counts.index.get_indexer(columns)  # a frame from an array: no .loc
        counted.append(
            pd.DataFrame(
                result.counts.to_numpy()[rows],
                index=[m.name for m in group],
                columns=result.counts.columns,
            )
        )
        for m, column in zip(group, columns, strict=True):
            values[m.name] = result.per_user[column].to_numpy()
            codes[m.name] = result.reasons[column].to_numpy()
            if m.aggregate == "ratio":
                suffix = "" if m.k is None else f"@{m.k}"
                ratio_parts[m.name] = pd.DataFrame(
                    {
                        "numerator": result.per_user[f"dcg{suffix}"],
                        "denominator": result.per_user[f"idcg{suffix}"],
                    }
                )
    per_user = pd.DataFrame({n: values[n] for n in names}, index=index)
    counts = counted[0] if len(counted) == 1 else pd.concat(counted).loc[names]
    reasons = pd.DataFrame({n: codes[n] for n in names}, index=index)
    aggregation = {
        m.name: m.aggregate for _, group in groups for m in group if m.aggregate != "mean"
    }
    return MetricResult(per_user, conventions, counts, reasons, aggregation, ratio_parts)


@dataclass(frozen=True)
class _Items:
    """How item ids become codes: integer ids shifted by ``low`` (``index`` None), or
    positions in ``index``; ``count`` codes in all. ``matrix``: the qrels are a users x
    items matrix, whose items are exactly the ids 0 ... count - 1. ``kind``: the ids'
    kind and dtype (:func:`~offeval_ir.judgements.id_kind`). ``labels``: the labels'
    item codes (integer ids only), to look up ids held as Python objects."""

    low: int
    count: int
    index: pd.Index | None
    matrix: bool = False
    kind: tuple[str | None, str] = ("numbers", "int64")
    labels: np.ndarray | None = field(default=None, repr=False, compare=False)

    @property
    def integer(self) -> bool:
        """Whether the qrels' item ids are integers (a users x items matrix's included)."""
        return self.index is None or self.index.dtype.kind in "iu"

    def codes(self, ids) -> np.ndarray:
        """Codes of ``ids``; -1 for an id the qrels never name (for matrix qrels, also an
        id that cannot be an item: :meth:`PreparedQrels.topn_judgements` refuses those)
        and for NaN (padding). Ids of mixed kinds (an object column of numbers and text)
        are compared as ids, each with the qrels' ids, as
        :meth:`~offeval_ir.judgements.Judgements.from_frames` compares them."""
        ids = id_array(ids)
        if ids.dtype.kind == "f":
            missing = np.isnan(ids)
            if missing.any():  # NaN pads a float top-n matrix: no item
                codes = np.full(len(ids), -1, np.int64)
                codes[~missing] = self.codes(ids[~missing])
                return codes
            whole = np.isfinite(ids) & (ids == np.round(ids))
            if whole.all():
                ids = ids.astype(np.int64)  # whole numbers held as floats
            elif self.index is None:  # integer ids: 2.5 names none of them
                codes = np.full(len(ids), -1, np.int64)
                codes[whole] = self.codes(ids[whole].astype(np.int64))
                return codes
        if self.index is None:
            if ids.dtype.kind not in "iu":
                return self._codes_of_objects(ids)
            codes = ids.astype(np.int64)
            if self.low:
                codes -= self.low
            if codes.size and (codes.min() < 0 or codes.max() >= self.count):
                codes[(codes < 0) | (codes >= self.count)] = -1
            return codes
        return self.index.get_indexer(pd.Index(ids)).astype(np.int64)

    def _codes_of_objects(self, ids) -> np.ndarray:
        """Codes of ids that are not an integer array (Python objects, of mixed kinds),
        against integer item ids: each looked up among the labelled ids (a hash table),
        so 3 (or 3.0) finds item 3 and "a" finds none."""
        if self.labels is None or not len(ids):
            return np.full(len(ids), -1, np.int64)
        known = np.unique(self.labels)
        at = pd.Index(known + self.low).get_indexer(pd.Index(ids, dtype=object))
        return np.where(at >= 0, known[at], -1).astype(np.int64)


class PreparedQrels:
    """Qrels checked, numbered and sorted once; judges runs and top-n matrices.

    Build with :func:`prepare_qrels`. ``users`` are the qrels' users in order
    of first appearance; ``label_grades`` their grades sorted in decreasing
    order (one row per user) and ``n_judged`` their number of labels;
    ``names`` the qrels' column of each role (errors name them).
    """

    def __init__(
        self,
        users: pd.Index,
        label_users: np.ndarray,
        label_items: np.ndarray,
        grades: np.ndarray,
        items: _Items,
        negative_grades: str,
        order_by: str,
        name: str = "",
        *,
        names: Mapping[str, str] | None = None,
    ):
        self.users = users
        self.names = dict(names or role_names(None))  # the qrels' column of each role
        self._user_kind = id_kind(users)  # numbers or text: a run's must be the same
        self.items = items
        self.negative_grades = negative_grades
        self.order_by = order_by
        self.name = name
        self.n_labels = len(grades)
        self.label_grades = sorted_labels(label_users, grades, len(users))
        self.n_judged = np.bincount(label_users, minlength=len(users))
        # found grades look up as >= 1, so that 0 means "no label"
        self._shift = 1.0 - min(grades.min(initial=0.0), 0.0)
        shifted = grades + self._shift
        # a users x items table of shifted grades when it fits, with a last row and
        # column of zeros that users and items the qrels do not name point to
        self._dense = None
        if (len(users) + 1) * (items.count + 1) <= DENSE_CELLS:
            table = np.zeros((len(users) + 1, items.count + 1), dtype=np.float32)
            table[label_users, label_items] = shifted
            if np.array_equal(table[label_users, label_items], shifted):
                self._dense = table.reshape(-1)
        if self._dense is None:
            key = label_users.astype(np.int64) * items.count + label_items
            order = np.argsort(key)
            self._keys, self._shifted = key[order], shifted[order]
        self._positions: np.ndarray | None = None

    @property
    def n_users(self) -> int:
        """Number of users (queries) the qrels judge."""
        return len(self.users)

    def _lookup(self, qu: np.ndarray, qi: np.ndarray) -> np.ndarray:
        """Shifted grade of each (qrels user code, item code); 0 when not labelled or
        either code is -1 (arrays broadcast)."""
        if self._dense is not None:
            return self._dense_lookup(self._row_offsets(qu), qi)
        known = (qu >= 0) & (qi >= 0)
        if not self._keys.size:
            return np.zeros(len(qu))
        query = qu.astype(np.int64) * self.items.count + qi
        at = np.minimum(np.searchsorted(self._keys, query), len(self._keys) - 1)
        found = known & (self._keys[at] == query)
        return np.where(found, self._shifted[at], 0.0)

    def _row_offsets(self, qu: np.ndarray) -> np.ndarray:
        """Where the rows of qrels user codes ``qu`` start in the dense table (flat; -1,
        no user of the qrels, is its last row of zeros)."""
        return np.where(qu < 0, self.n_users, qu) * (self.items.count + 1)

    def _dense_lookup(self, rows: np.ndarray, qi: np.ndarray) -> np.ndarray:
        """:meth:`_lookup` in the dense table, users given by their :meth:`_row_offsets`:
        one flat gather (-1 item codes land on the last column of zeros)."""
        if np.size(qi) and np.min(qi) < 0:
            qi = np.where(qi < 0, self.items.count, qi)
        return self._dense.take(rows + qi)

    def _not_in(self, codes: np.ndarray) -> np.ndarray:
        """The qrels' user codes not among ``codes``, in order."""
        present = np.zeros(self.n_users + 1, dtype=bool)
        present[codes] = True  # -1 marks the spare last cell
        return np.flatnonzero(~present[:-1])

    def _labels_of(self, q_of_row: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Sorted label grades and label counts for rows given as qrels user codes (-1: a
        user the qrels do not judge, with no labels)."""
        if (q_of_row >= 0).all():
            if q_of_row.size == self.n_users and (q_of_row == np.arange(self.n_users)).all():
                return self.label_grades, self.n_judged
            return self.label_grades[q_of_row], self.n_judged[q_of_row]
        padded = np.vstack([self.label_grades, np.zeros((1, self.label_grades.shape[1]))])
        counts = np.r_[self.n_judged, 0]
        return padded[q_of_row], counts[q_of_row]

    def judgements(
        self,
        run: pd.DataFrame,
        *,
        columns: Mapping[str, str] | None = None,
        order_by: str | None = None,
    ) -> Judgements:
        """The :class:`Judgements` of a run frame (user, item, rank or score) against
        these qrels: those of ``Judgements.from_frames(run, qrels)``, built without
        touching the qrels again. Users: the run's in order of first appearance, then
        the qrels' users the run does not rank."""
        order_by = order_by or self.order_by
        names = role_names(columns)
        pred = role_columns(run, names, ("user", "item"), "predictions")
        ranking = Ranking.of(pred, names, run, order_by)
        pu, run_users = _run_users(pred["user"])
        check_id_kinds(id_kind(run_users), self._user_kind, names["user"])
        q_of_run = self.users.get_indexer(run_users)
        only_qrels = self._not_in(q_of_run)
        check_id_kinds(id_kind(pred["item"]), self.items.kind, names["item"])
        qi = self.items.codes(pred["item"])
        own, item_order = _own_item_codes(pred["item"])

        def looked_up(order: np.ndarray | None) -> np.ndarray:
            ranked_u, ranked_i = (pu, qi) if order is None else (pu[order], qi[order])
            return self._lookup(q_of_run[ranked_u], ranked_i)

        label_grades, n_judged = self._labels_of(np.r_[q_of_run, only_qrels])
        return judge_ranked(
            run_users.append(self.users[only_qrels]),
            pu,
            own,
            item_order,
            ranking,
            looked_up,
            self._shift,
            label_grades,
            n_judged,
        )

    def topn_judgements(
        self, topn: np.ndarray, users: Sequence | None = None, *, check: bool = True
    ) -> Judgements:
        """The :class:`Judgements` of a (users x n) top-n matrix: row r ranks the items
        ``topn[r]`` (ids as the qrels name them, best first; -1, or NaN, pads a short list
        at its end) for user ``users[r]`` (default: r, the row's index, as in a users x items
        score matrix; against a qrels matrix, the two must then have as many rows). With
        ``check`` a row naming an item twice, or padding before an
        item, is an error (:func:`~offeval_ir.topn.top_n`'s output needs no check).
        Ids (and the rows' users) of another kind than the qrels' (numbers against
        text), and fractional ids against integer ones, are errors naming them.
        Users: the matrix's rows, then the qrels' users it has no row for."""
        topn = topn_matrix(topn)
        if users is None:
            if self.items.matrix and topn.shape[0] != self.n_users:
                raise ConfigurationError(
                    f"topn has {topn.shape[0]} rows (users) and the qrels matrix "
                    f"{self.n_users} rows: row r of each is user r; name the rows' users "
                    "with users= when they are others"
                )
            row_users = pd.RangeIndex(topn.shape[0])
            if self._user_kind[0] == "text":
                raise ColumnError(
                    self.names["user"],
                    f"the top-n matrix's rows are users 0 ... {topn.shape[0] - 1} (numbers) "
                    f"unless users= names them, and the qrels' users are text "
                    f"({self._user_kind[1]}): name the rows' users with users=",
                )
        else:
            row_users = users if isinstance(users, pd.Index) else pd.Index(list(users))
            if len(row_users) != topn.shape[0]:
                raise ConfigurationError(
                    f"users has {len(row_users)} entries and topn {topn.shape[0]} rows"
                )
            if not row_users.is_unique:
                twice = row_users[row_users.duplicated()].unique()[:5].tolist()
                raise ConfigurationError(f"users lists a user twice: {twice}")
            check_id_kinds(id_kind(row_users), self._user_kind, self.names["user"])
        q_of_row = self.users.get_indexer(row_users).astype(np.int64)
        n_rows, width = topn.shape
        pad = padding(topn)
        lengths = width - pad.sum(axis=1)
        if check:
            _check_topn(topn, pad, lengths, row_users)
        if self.items.matrix:
            _check_matrix_items(topn, pad, self.items.count, row_users)
        else:  # ids that are numbers never match text ids, nor 2.5 an integer one
            check_id_kinds(id_kind(topn[~pad]), self.items.kind, self.names["item"])
            if self.items.integer:
                _check_whole_items(topn, pad, row_users)
        qi = self.items.codes(topn.reshape(-1)).reshape(topn.shape)
        if lengths.min(initial=width) < width:
            qi[pad] = -1
        looked_up = self._lookup(q_of_row[:, None], qi)
        judged = looked_up > 0
        if self._shift == 1.0:  # no negative grade: found cells hold grade + 1 >= 1
            grades = np.maximum(looked_up.astype(float) - 1.0, 0.0)
        else:
            grades = np.where(judged, looked_up - self._shift, 0.0)
        only_qrels = self._not_in(q_of_row)
        all_users = row_users.append(self.users[only_qrels]) if only_qrels.size else row_users
        if only_qrels.size:
            extra = np.zeros((only_qrels.size, width))
            grades = np.vstack([grades, extra])
            judged = np.vstack([judged, extra.astype(bool)])
            lengths = np.r_[lengths, np.zeros(only_qrels.size, lengths.dtype)]
        label_grades, n_judged = self._labels_of(np.r_[q_of_row, only_qrels].astype(np.int64))
        return Judgements(all_users, grades, lengths, label_grades, judged, n_judged)

    def measures(
        self,
        run: pd.DataFrame | np.ndarray,
        measures: Sequence[str | Measure],
        conventions: Conventions | None = None,
        *,
        columns: Mapping[str, str] | None = None,
        users: Sequence | None = None,
    ) -> MetricResult:
        """Each user's value of ``measures`` for one run: a frame (as
        :func:`~offeval_ir.runs.compute_measures`) or a top-n matrix (as
        :meth:`topn_judgements`, ``users`` naming its rows)."""
        conv = conventions or PRESETS["trec_eval"]()
        names, groups = measure_groups(measures, conv)
        built: dict[tuple[str, str], Judgements] = {}

        def result_of(metrics, ks, group_conv):
            at = (group_conv.order_by,)
            if at not in built:
                if isinstance(run, pd.DataFrame):
                    built[at] = self.judgements(run, columns=columns, order_by=at[0])
                else:
                    built[at] = self.topn_judgements(run, users)
            return compute(built[at], metrics, ks, group_conv)

        return measures_of(names, groups, conv, result_of)

    def stacked_judgements(
        self,
        runs: Sequence[pd.DataFrame],
        *,
        columns: Mapping[str, str] | None = None,
        order_by: str | None = None,
    ) -> tuple[Judgements, list[pd.Index]] | None:
        """The :class:`Judgements` of several run frames in one, and each run's users: the
        users, numbered 0, 1, ..., are run after run each run's :meth:`judgements` users,
        whose values they hold. The rows of all runs are checked, ordered and looked up
        together; per run, only its columns are read and its users numbered. None when the
        runs do not stack (their role columns, the columns' dtypes or the item ids' kinds
        differ, or a run names no query of the qrels): :meth:`judgements` then judges each,
        and says what is wrong."""
        order_by = order_by or self.order_by
        names = role_names(columns)
        preds = [role_columns(run, names, ("user", "item"), "predictions") for run in runs]
        first = preds[0]
        dtypes = {k: v.dtype for k, v in first.items()}
        if any({k: v.dtype for k, v in p.items()} != dtypes for p in preds):
            return None
        users, codes, qrels_rows = [], [], []
        item_kind, base = id_kind(first["item"])[0], 0
        for pred in preds:  # per run: its users numbered, its ids' kinds checked
            pu, run_users = _run_users(pred["user"])
            check_id_kinds(id_kind(run_users), self._user_kind, names["user"])
            kind = id_kind(pred["item"])
            check_id_kinds(kind, self.items.kind, names["item"])
            q_of_run = self.users.get_indexer(run_users)
            if kind[0] != item_kind or (len(q_of_run) and (q_of_run < 0).all()):
                return None
            only_qrels = self._not_in(q_of_run)
            if base + len(q_of_run) + len(only_qrels) >= 2**31:
                return None  # more users than int32 codes number
            codes.append(pu + base)
            users.append(run_users.append(self.users[only_qrels]))
            qrels_rows.append(np.r_[q_of_run, only_qrels])
            base += len(users[-1])
        pred = {k: _joined([p[k] for p in preds]) for k in first if k != "user"}  # numbered
        rows = pd.DataFrame(index=pd.RangeIndex(len(pred["item"])))  # the stack's rows
        ranking = Ranking.of(pred, names, rows, order_by)
        pu, q_of_user = np.concatenate(codes), np.concatenate(qrels_rows).astype(np.int64)
        qi = self.items.codes(pred["item"])
        own, item_order = _own_item_codes(pred["item"])
        offsets = None if self._dense is None else self._row_offsets(q_of_user)  # per user

        def looked_up(order: np.ndarray | None) -> np.ndarray:
            ranked_u, ranked_i = (pu, qi) if order is None else (pu[order], qi[order])
            if offsets is None:
                return self._lookup(q_of_user[ranked_u], ranked_i)
            return self._dense_lookup(offsets[ranked_u], ranked_i)

        label_grades, n_judged = self._labels_of(q_of_user)
        judgements = judge_ranked(
            pd.RangeIndex(base),
            pu,
            own,
            item_order,
            ranking,
            looked_up,
            self._shift,
            label_grades,
            n_judged,
        )
        return judgements, users

    def runs_measures(
        self,
        runs: Mapping[str, pd.DataFrame],
        measures: Sequence[str | Measure],
        conventions: Conventions | None = None,
        *,
        columns: Mapping[str, str] | None = None,
        chunk_rows: int = 2_000_000,
    ) -> dict[str, MetricResult] | None:
        """Each run frame's :meth:`measures`, judged a block of runs at a time (runs of
        about ``chunk_rows`` rows and users in all, stacked by :meth:`stacked_judgements`),
        so each measure is computed once per block, not once per run; the same values.
        None when the runs of a block do not stack (see there)."""
        conv = conventions or PRESETS["trec_eval"]()
        names, groups = measure_groups(measures, conv)
        out: dict[str, MetricResult] = {}
        for block in _blocks(runs, chunk_rows, self.n_users):
            built = {}  # the block's judgements, per column ordering the lists
            for order_by in dict.fromkeys(group_conv.order_by for group_conv, _ in groups):
                built[order_by] = self.stacked_judgements(
                    list(block.values()), columns=columns, order_by=order_by
                )
                if built[order_by] is None:
                    return None

            def result_of(metrics, ks, group_conv, built=built):
                return compute(built[group_conv.order_by][0], metrics, ks, group_conv)

            result = measures_of(names, groups, conv, result_of)
            users = next(iter(built.values()))[1]
            out.update(zip(block, _split(result, users), strict=True))
        return out


def prepare_qrels(
    qrels: pd.DataFrame | np.ndarray,
    conventions: Conventions | None = None,
    *,
    columns: Mapping[str, str] | None = None,
    name: str = "",
) -> PreparedQrels:
    """Qrels checked, numbered and sorted once, to judge many runs (see the module
    docstring).

    ``qrels`` is a long frame (user, item, relevance; column names as
    :meth:`Judgements.from_frames`, ``columns`` maps them) or a users x items
    relevance matrix (numpy, or scipy.sparse): row r holds user r's grades,
    column i item i's; a non-zero cell is a label (explicit zeros of a sparse
    matrix are judged non-relevant labels), a NaN cell is none (as the
    missing cells of a pivoted frame). ``conventions`` (default: the
    ``trec_eval`` preset) says how negative grades read and which column
    orders run lists; ``name`` names the qrels in errors.
    """
    conv = conventions or PRESETS["trec_eval"]()
    check_choice(conv.negative_grades, "negative_grades", NEGATIVE_GRADES)
    if isinstance(qrels, PreparedQrels):
        return qrels
    if not isinstance(qrels, pd.DataFrame):
        return _from_matrix(qrels, conv, name)
    names = role_names(columns)
    lab = role_columns(qrels, names, ("user", "item", "relevance"), "labels")
    grade = checked_grades(lab, names["relevance"], qrels, conv.negative_grades == "error")
    lu, users = pd.factorize(lab["user"])
    lu = lu.astype(np.int64)
    li, items = _label_items(lab["item"], len(users))
    check_duplicates(lu, li, "labels", qrels.index.to_numpy(), table_name(qrels))
    return PreparedQrels(
        pd.Index(users),
        lu,
        li,
        grade,
        items,
        conv.negative_grades,
        conv.order_by,
        name,
        names=names,
    )


def _label_items(ids, n_users: int) -> tuple[np.ndarray, _Items]:
    """Item codes of the labels: integer ids shifted to start at 0 when users x ids fits a
    62-bit key, else positions among the distinct ids."""
    ids = id_array(ids)
    kind = id_kind(ids)
    if ids.dtype.kind in "iu" and ids.size:
        low, high = int(ids.min()), int(ids.max())
        if -(2**62) < low and high < 2**62 and (high - low + 1) * max(n_users, 1) < 2**62:
            codes = ids.astype(np.int64) - low
            return codes, _Items(low, high - low + 1, None, kind=kind, labels=codes)
    codes, uniques = pd.factorize(ids)
    return codes.astype(np.int64), _Items(0, len(uniques), pd.Index(uniques), kind=kind)


def _from_matrix(matrix, conv: Conventions, name: str) -> PreparedQrels:
    """Prepared qrels from a users x items relevance matrix (numpy or scipy.sparse)."""
    if hasattr(matrix, "tocoo"):
        coo = matrix.tocoo()
        lu, li, grade = coo.row.astype(np.int64), coo.col.astype(np.int64), coo.data
        shape = coo.shape
        if len(lu) and len(np.unique(lu * shape[1] + li)) != len(lu):
            coo.sum_duplicates()  # a COO matrix may repeat a cell: scipy adds them
            lu, li, grade = coo.row.astype(np.int64), coo.col.astype(np.int64), coo.data
    else:
        dense = _matrix(matrix, "qrels", numeric=True)
        shape = dense.shape
        lu, li = np.nonzero(dense)
        grade = dense[lu, li]
    grade = np.asarray(grade, dtype=float)
    labelled = ~np.isnan(grade)  # NaN: no label (a pivot's missing cells)
    if not labelled.all():
        lu, li, grade = lu[labelled], li[labelled], grade[labelled]
    if not np.isfinite(grade).all():
        raise ConfigurationError("qrels: relevance grades must be finite numbers or NaN")
    if conv.negative_grades == "error" and (grade < 0).any():
        raise ConfigurationError(
            "qrels: relevance grades must not be negative under negative_grades='error'"
        )
    users = pd.RangeIndex(shape[0], name="user")
    return PreparedQrels(
        users,
        lu,
        li,
        grade,
        _Items(0, shape[1], None, matrix=True, labels=li),
        conv.negative_grades,
        conv.order_by,
        name,
    )


def _matrix(values, what: str, numeric: bool = False) -> np.ndarray:
    """``values`` as a two-dimensional numpy array (an error naming ``what`` otherwise)."""
    if hasattr(values, "toarray") and not numeric:
        raise ConfigurationError(f"{what} must be a dense matrix (numpy), got a sparse one")
    array = np.asarray(values)
    if array.ndim != 2:
        raise ConfigurationError(
            f"{what} must be a two-dimensional matrix (users x ...), got shape {array.shape}"
        )
    if numeric and array.dtype.kind not in "iufb":
        raise ConfigurationError(f"{what} must hold numbers, got dtype {array.dtype}")
    return array


def topn_matrix(topn) -> np.ndarray:
    """A top-n matrix as numpy. A list of lists of different lengths is taken as
    variable-length lists (as ml_metrics' and recmetrics' ``mapk`` take them): its
    shorter rows are padded at their end (-1 for numbers, None for other ids). An id
    that is itself a list (or any collection) is an error naming its rows."""
    if not isinstance(topn, list | tuple) or not topn:
        return _scalar_ids(_matrix(topn, "topn"))
    rows = [isinstance(row, list | tuple | np.ndarray) for row in topn]
    if not all(rows):
        raise ConfigurationError(
            f"topn: row {rows.index(False)} is not a list of item ids, got "
            f"{topn[rows.index(False)]!r}"
        )
    lengths = np.fromiter(map(len, topn), np.int64, len(topn))
    if (lengths == lengths[0]).all():
        try:
            return _scalar_ids(_matrix(topn, "topn"))
        except ValueError as error:  # numpy's inhomogeneous shape: a list inside a list
            if isinstance(error, ConfigurationError):
                raise
    flat = np.empty(int(lengths.sum()), object)
    flat[:] = list(itertools.chain.from_iterable(topn))  # a list id stays one cell
    _scalar_ids(flat, np.repeat(np.arange(len(topn)), lengths))
    flat = pd.Series(flat.tolist()).to_numpy()  # numbers to a numeric dtype
    numeric = flat.dtype.kind in "iuf"
    out = np.full((len(topn), lengths.max()), -1 if numeric else None, flat.dtype)
    out[np.arange(out.shape[1]) < lengths[:, None]] = flat
    return out


def topn_rows(topn, users: Sequence | None = None) -> tuple[np.ndarray, Sequence | None]:
    """A top-n input as its matrix (:func:`topn_matrix`) and the users of its rows: a
    frame of item ids (row per user, column per rank) or a Series of lists is indexed by
    its users, a dict maps users to their lists; ``users`` names the rows otherwise (None:
    row r is user r). Users named both ways, and differently, are an error; so is a long
    frame (user, item, rank), which :func:`~offeval_ir.runs.compute_measures` judges."""
    own = None
    if isinstance(topn, pd.DataFrame):
        if {"user", "item"} <= set(topn.columns):
            raise ConfigurationError(
                "topn: a long frame of (user, item, rank or score) rows is a run: judge it "
                "with compute_measures or evaluate_runs; topn is a wide frame, a row of item "
                "ids per user (index: the users), best first"
            )
        own, topn = topn.index, topn.to_numpy()
    elif isinstance(topn, pd.Series):
        own, topn = topn.index, topn.tolist()
    elif isinstance(topn, Mapping):
        own, topn = pd.Index(list(topn)), list(topn.values())
    matrix = topn_matrix(topn)
    if own is None or (isinstance(own, pd.RangeIndex) and own.equals(pd.RangeIndex(len(own)))):
        return matrix, users  # no ids of its own: its rows are positions
    if users is not None and not pd.Index(list(users)).equals(own):
        raise ConfigurationError(
            "topn names its users (its index or keys) and users= names others: give them "
            f"once (topn's first users {list(own[:5])}, users= {list(users)[:5]})"
        )
    return matrix, own


#: What :func:`pandas.api.types.infer_dtype` calls cells that hold no collection.
_SCALAR_KINDS = {"string", "integer", "floating", "mixed-integer-float", "decimal", "empty"}


def _scalar_ids(topn: np.ndarray, row_of: np.ndarray | None = None) -> np.ndarray:
    """``topn`` itself when each cell is one id; an error naming the rows (``row_of``:
    each cell's row, default the matrix's rows) of ids that are lists, tuples, sets,
    dicts or arrays (a list inside a row of item ids)."""
    if topn.dtype.kind != "O" or pd.api.types.infer_dtype(topn, skipna=True) in _SCALAR_KINDS:
        return topn
    cells = topn.reshape(-1)
    nested = pd.Series(cells).map(pd.api.types.is_list_like).to_numpy(dtype=bool)
    if nested.any():
        rows = np.arange(len(topn)).repeat(topn.shape[1]) if row_of is None else row_of
        bad = [cells[j] for j in np.flatnonzero(nested)[:5]]
        raise ConfigurationError(
            f"topn: an item id is one value (a number or a text), got {bad} in rows "
            f"{np.unique(rows[nested])[:5].tolist()}; give each row as a flat list of ids"
        )
    return topn


def _run_users(users) -> tuple[np.ndarray, pd.Index]:
    """Per row, the code of its user (int32, as :meth:`Judgements.from_frames` numbers
    them); the users in order of first appearance."""
    users = id_array(users)
    starts = np.flatnonzero(np.r_[True, users[1:] != users[:-1]]) if len(users) else np.arange(0)
    runs = pd.Index(users[starts])
    if runs.is_unique:
        lengths = np.diff(np.r_[starts, len(users)])
        return np.repeat(np.arange(len(runs), dtype=np.int32), lengths), runs
    codes, uniques = pd.factorize(users)
    return codes.astype(np.int32), pd.Index(uniques)


def _own_item_codes(ids):
    """The run's own item codes (for duplicates and tie order), and codes to item order."""
    ids = id_array(ids)
    if ids.dtype.kind in "iu" and ids.size:
        low, high = int(ids.min()), int(ids.max())
        codes = ids - low if low else ids
        return codes.astype(np.int32 if high - low < 2**31 else np.int64), lambda c: c
    codes, uniques = pd.factorize(ids)
    return codes.astype(np.int64), item_order(uniques)


def padding(topn: np.ndarray) -> np.ndarray:
    """Where a top-n matrix pads its rows: negative ids (-1, or -1.0 in a float matrix,
    as a model's float output holds its ids) and, for other kinds, missing values."""
    if topn.dtype.kind in "iu":
        return topn < 0
    if topn.dtype.kind == "f":
        with np.errstate(invalid="ignore"):
            return np.isnan(topn) | ((topn < 0) & (topn == np.round(topn)))
    return pd.isna(topn)


def _check_matrix_items(topn: np.ndarray, pad: np.ndarray, count: int, users: pd.Index) -> None:
    """Against a users x items qrels matrix, every id of a top-n matrix (padding aside) is
    a whole number in [0, count): an error naming the users whose rows hold another."""
    if topn.dtype.kind in "iuf":
        with np.errstate(invalid="ignore"):
            item = (topn >= 0) & (topn < count)
            if topn.dtype.kind == "f":
                item &= topn == np.round(topn)
    else:
        item = np.zeros(topn.shape, bool)
    _refuse_items(
        topn,
        ~item & ~pad,
        users,
        f"whole numbers in [0, {count}) (the qrels matrix's {count} columns; pad with -1)",
    )


def _check_whole_items(topn: np.ndarray, pad: np.ndarray, users: pd.Index) -> None:
    """Against qrels whose item ids are integers, a top-n matrix of numbers (padding
    aside) holds whole numbers: an error naming the users whose rows hold another (2.5
    names no item; ids of mixed kinds are compared as ids, see :class:`_Items`)."""
    if topn.dtype.kind == "O" and id_kind(topn[~pad])[0] == "numbers":
        values = np.full(topn.shape, -1.0)
        values[~pad] = topn[~pad].astype(float)
    elif topn.dtype.kind == "f":
        values = topn
    else:
        return
    with np.errstate(invalid="ignore"):
        wrong = ~pad & ~(np.isfinite(values) & (values == np.round(values)))
    _refuse_items(
        topn, wrong, users, "whole numbers (the qrels' item ids are integers; pad with -1)"
    )


def _refuse_items(topn: np.ndarray, wrong: np.ndarray, users: pd.Index, rule: str) -> None:
    """An error naming the first ``wrong`` ids of a top-n matrix and the users whose rows
    hold them, when there are any: item ids must be ``rule``."""
    if wrong.any():
        rows = np.flatnonzero(wrong.any(axis=1))
        ids = list(dict.fromkeys(topn[wrong][:5].tolist()))
        raise ConfigurationError(
            f"topn: item ids must be {rule}, got {ids} in the rows of users "
            f"{users[rows[:5]].tolist()}"
        )


def _check_topn(topn: np.ndarray, pad: np.ndarray, lengths: np.ndarray, users: pd.Index):
    """A top-n matrix pads only at the end of a row and names no item twice in a row."""
    width = topn.shape[1]
    late = pad[:, :-1] & ~pad[:, 1:]
    if late.any():
        rows = np.flatnonzero(late.any(axis=1))
        raise ConfigurationError(
            f"topn: padding (-1) before an item in the rows of users {users[rows[:5]].tolist()}; "
            "pad short lists at their end"
        )
    if width < 2:
        return
    if topn.dtype.kind not in "iu":  # ids: their codes (padding -1)
        topn = pd.factorize(topn.reshape(-1), use_na_sentinel=True)[0].reshape(topn.shape)
    ranked = np.sort(np.where(pad, -1 - np.arange(width), topn) if pad.any() else topn, axis=1)
    same = (ranked[:, 1:] == ranked[:, :-1]).any(axis=1)
    if same.any():
        rows = np.flatnonzero(same)
        raise ConfigurationError(
            f"topn: an item appears twice in the list of users {users[rows[:5]].tolist()}"
        )


def _joined(arrays: list) -> np.ndarray | pd.api.extensions.ExtensionArray:
    """Arrays of one dtype (numpy, or pandas' text arrays) end to end."""
    if isinstance(arrays[0], np.ndarray):
        return np.concatenate(arrays)
    return pd.concat([pd.Series(a, copy=False) for a in arrays], ignore_index=True).array


def _blocks(
    runs: Mapping[str, pd.DataFrame], rows: int, users: int
) -> Iterator[dict[str, pd.DataFrame]]:
    """The runs in order, in blocks of about ``rows`` rows and users (each run brings its
    rows and at most ``users`` users its rows do not name: the qrels'; a larger run is a
    block of its own)."""
    block: dict[str, pd.DataFrame] = {}
    size = 0
    for name, frame in runs.items():
        if block and size + len(frame) + users > rows:
            yield block
            block, size = {}, 0
        block[name] = frame
        size += len(frame) + users
    if block:
        yield block


def _split(result: MetricResult, users: list[pd.Index]) -> Iterator[MetricResult]:
    """The results of stacked runs, run by run (``users``: each run's, in the stack's
    order), with each run's counts of users averaged and left out (from its users'
    reasons, as :func:`~offeval_ir.metrics.compute` counts them)."""
    values, reasons = result.per_user.to_numpy(), result.reasons.to_numpy()
    columns, counted = result.per_user.columns, result.counts.columns
    code = [
        0 if c == "users" else EXCLUSION_REASONS.index(c.removeprefix("excluded_")) for c in counted
    ]
    start = 0
    for run_users in users:
        rows = slice(start, start + len(run_users))
        start = rows.stop
        index = run_users.rename("user")
        own = reasons[rows]
        counts = np.stack([(own == c).sum(axis=0) for c in code], axis=1)
        parts = {
            m: pd.DataFrame(frame.to_numpy()[rows], index=index, columns=frame.columns)
            for m, frame in result.parts.items()
        }
        yield MetricResult(
            pd.DataFrame(values[rows], index=index, columns=columns),
            result.conventions,
            pd.DataFrame(counts, index=result.counts.index, columns=counted),
            pd.DataFrame(own, index=index, columns=columns),
            dict(result.aggregation),
            parts,
        )
