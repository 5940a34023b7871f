"""Judgement data: per user a ranked list of predictions and a set of graded labels.

Everything is held as dense per-user matrices so that metrics are computed
for all users at once: ``grades[u, j]`` is the label grade of the item user
``u`` got at rank ``j + 1`` (0 when unlabelled or past the list's end) and
``label_grades[u]`` lists the user's label grades sorted in decreasing order.

A negative grade (trec_eval's qrels use -1) is kept as it is: it is an item
in the pool but not judged (see :class:`Judgements`), and the conventions'
``negative_grades`` says whether metrics read it or refuse it.

Besides :class:`Judgements`, the checks and building blocks its constructor
uses are public, for :mod:`offeval_ir.prepared` (qrels prepared once, runs
judged against them) and :mod:`offeval_ir.blocks`, so each lives here only:
reading the role columns (:func:`role_columns`, :func:`checked_grades`,
:func:`number_column`), naming rows in errors (:func:`table_name`), refusing
an item listed twice (:func:`check_duplicates`, :func:`check_list_duplicates`),
ordering each user's rows (:func:`ranking_order`), placing rows in the dense
matrices (:class:`Cells`, :func:`sorted_labels`) and :data:`DENSE_CELLS`; and
:func:`in_tie_order`, the lists reordered within ties as the conventions say, for
:mod:`offeval_ir.metrics` and :mod:`offeval_ir.trec_measures` alike.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt
import pandas as pd

from offeval import ColumnError, ConfigurationError, OffevalError
from offeval.plugin import check_choice, hint
from offeval_ir.hints import switch

if TYPE_CHECKING:
    from offeval_ir.conventions import Conventions

#: The columns that can order a prediction list (scores: highest first).
ORDER_COLUMNS = ("rank", "score")
#: What a negative label grade means: an error, or trec_eval's reading (see Conventions).
NEGATIVE_GRADES = ("error", "zero")
#: Index name of frames read from files, whose labels are line numbers.
LINE = "line"


@dataclass(frozen=True)
class Judgements:
    """Dense judgement matrices for U users (see the module docstring).

    Judgements hold data, not conventions: tied predictions (equal scores, or
    equal ranks) are stored in input order with ``tie_group`` (cells sharing a
    score share a group id; -1 past a list's end) and ``tie_item`` (each
    cell's item code, in item order), so that the conventions' tie policy
    decides their order when metrics are computed. Both are None when no
    list has a tie. ``judged`` marks cells whose item has a label (of any
    grade: 0 and negative included) and ``n_judged`` counts each user's labels.
    ``positive`` (score input only) marks ranks whose score is above 0.
    ``order_column`` is the column that ordered the lists, and
    ``both_orders`` says whether the input also had the other one.

    **Negative grades: in the pool, not judged.** trec_eval reads a label of
    negative grade (qrels lines with ``-1``) as an item in the pool that was
    not judged (form_res_rels.c's ``RELVALUE_UNJUDGED``; infAP samples the
    pool so). Judgements keep such a grade as it is (-1 stays -1, any
    negative value is the same state), so a cell of a prediction list is in
    one of four states, told apart by ``judged`` and ``grades`` together
    (trec_eval's relevance value of the rank in brackets):

    - judged relevant: ``judged``, grade >= the relevance threshold (rel >= level);
    - judged non-relevant: ``judged``, 0 <= grade < threshold (0 <= rel < level);
    - in the pool, not judged: ``judged``, grade < 0 (``RELVALUE_UNJUDGED``, -2);
    - not in the pool (no label): not ``judged``, grade 0 (``RELVALUE_NONPOOL``, -1).

    :attr:`unjudged_in_pool` is the mask of the third state; the counts per
    user are :attr:`n_judged` (every label), :attr:`n_unjudged_in_pool`
    (negative labels) and :attr:`n_graded` (labels of grade >= 0: judged
    relevant or non-relevant, trec_eval's judged documents, as bpref and
    num_nonrel_judged_ret count them). ``label_grades[u]`` holds the negative
    grades at the end of its row (after the padding zeros), so
    :meth:`n_relevant` and :meth:`has_labels` never count them. Under
    ``negative_grades='zero'`` (the trec_eval preset) the metrics read such
    an item as trec_eval does: gain 0 and never relevant (DCG, ERR, the
    ideal ranking, hits), not a judged non-relevant item for bpref; its
    label still puts the query among the judged (``empty_labels='judged'``)
    and counts as judged for Judged@k and RBP's residual, as ir-measures
    does. Under ``negative_grades='error'`` (the default, and the presets of
    libraries without this reading) metrics refuse such judgements, and
    :meth:`from_frames` refuses negative grades unless asked to keep them.
    """

    users: pd.Index
    grades: np.ndarray
    lengths: np.ndarray
    label_grades: np.ndarray
    judged: np.ndarray
    n_judged: np.ndarray
    tie_group: np.ndarray | None = None
    tie_item: np.ndarray | None = None
    positive: np.ndarray | None = None
    order_column: str = "rank"
    both_orders: bool = False

    @property
    def n_users(self) -> int:
        """Number of users."""
        return len(self.users)

    @property
    def max_length(self) -> int:
        """Longest prediction list."""
        return self.grades.shape[1]

    @property
    def unjudged_in_pool(self) -> np.ndarray:
        """(U, max_length) mask of the ranks whose item is in the pool, not judged: a
        label of negative grade (trec_eval's ``RELVALUE_UNJUDGED``)."""
        return self.judged & (self.grades < 0)

    @property
    def n_unjudged_in_pool(self) -> np.ndarray:
        """Number of labels of negative grade (in the pool, not judged), per user."""
        return (self.label_grades < 0).sum(axis=1)

    @property
    def n_graded(self) -> np.ndarray:
        """Number of labels of grade >= 0 (judged relevant or non-relevant), per user."""
        return self.n_judged - self.n_unjudged_in_pool

    def n_relevant(self, threshold: float) -> np.ndarray:
        """Number of labels with grade >= threshold, per user."""
        return (self.label_grades >= threshold).sum(axis=1)

    def has_labels(self) -> np.ndarray:
        """Users with at least one label (of any positive grade)."""
        return (self.label_grades > 0).any(axis=1)

    @classmethod
    def from_lists(
        cls,
        predictions: Mapping[object, Sequence],
        labels: Mapping[object, Sequence | Mapping[object, float]],
        users: Sequence | None = None,
    ) -> Judgements:
        """From per-user lists: ranked ``predictions[u]``; ``labels[u]`` items or {item: grade}.

        Users absent from one mapping have an empty list there; ``users`` may
        add users absent from both (a user with nothing at all).
        """
        pred_rows = [
            (u, item, rank)
            for u, items in predictions.items()
            for rank, item in enumerate(items, start=1)
        ]
        label_rows = []
        for u, items in labels.items():
            graded = items.items() if isinstance(items, Mapping) else ((i, 1.0) for i in items)
            label_rows.extend((u, item, grade) for item, grade in graded)
        pred = pd.DataFrame(pred_rows, columns=["user", "item", "rank"])
        lab = pd.DataFrame(label_rows, columns=["user", "item", "relevance"])
        every = list(dict.fromkeys([*(users or []), *predictions, *labels]))
        return cls.from_frames(pred, lab, users=every)

    @classmethod
    def from_frames(
        cls,
        predictions: pd.DataFrame,
        labels: pd.DataFrame,
        *,
        users: Sequence | None = None,
        strict_users: bool = False,
        order_by: str = "rank",
        columns: Mapping[str, str] | None = None,
        negative_grades: str = "error",
    ) -> Judgements:
        """From long frames: predictions (user, item, rank or score), labels (user, item, grade).

        Lists are ordered by ``rank`` (ascending) or by ``score`` (highest
        first); ``order_by`` says which when the predictions have both. Tied
        items keep their input order here; the conventions' ``ties`` decides
        their order when metrics are computed. Users are the union of both
        frames and ``users``; with ``strict_users`` they must be the same in
        both frames. Column names default to the roles (aliases ``query`` for
        user, ``doc`` for item are accepted in ``columns``). Negative label
        grades are an error unless ``negative_grades`` is ``"zero"`` (kept
        as they are; the conventions read them, see
        :class:`~offeval_ir.conventions.Conventions`). User (or item) ids that
        are numbers in one frame and text in the other never match: an error
        (:func:`check_id_kinds`). Errors name rows by
        the frames' index labels (``lines`` when the index is named ``line``,
        as the file readers name it).
        """
        check_choice(order_by, "order_by", ORDER_COLUMNS)
        check_choice(negative_grades, "negative_grades", NEGATIVE_GRADES)
        names = role_names(columns)
        _check_swapped(predictions, labels, names)
        pred = role_columns(predictions, names, ("user", "item"), "predictions")
        lab = role_columns(labels, names, ("user", "item", "relevance"), "labels")
        grade = checked_grades(lab, names["relevance"], labels, negative_grades == "error")
        check_id_kinds(id_kind(pred["user"]), id_kind(lab["user"]), names["user"])
        if strict_users:
            check_same_users(pred["user"], lab["user"])
        check_id_kinds(id_kind(pred["item"]), id_kind(lab["item"]), names["item"])
        pu, lu, all_users = _user_codes(pred["user"], lab["user"], users)
        pi, li, n_items, item_order = _item_codes(pred["item"], lab["item"], len(all_users))
        check_duplicates(lu, li, "labels", labels.index.to_numpy(), table_name(labels))
        ranking = Ranking.of(pred, names, predictions, order_by)
        shift = 1.0 - min(grade.min(initial=0.0), 0.0)  # found grades look up as >= 1
        shifted = grade + shift

        def looked_up(order: np.ndarray | None) -> np.ndarray:
            ranked_u, ranked_i = (pu, pi) if order is None else (pu[order], pi[order])
            return _lookup(ranked_u, ranked_i, lu, li, shifted, len(all_users), n_items)

        return judge_ranked(
            all_users,
            pu,
            pi,
            item_order,
            ranking,
            looked_up,
            shift,
            sorted_labels(lu, grade, len(all_users)),
            np.bincount(lu, minlength=len(all_users)),
        )


def in_tie_order(j: Judgements, conv: Conventions) -> Judgements:
    """The judgements with tied predictions ordered as ``conv.ties`` says.

    Item ties reorder the cells of each tie group by item code; ``input_order``
    keeps the stored order; ``expected`` keeps the groups for averaging. A
    list ordered by one column when the conventions order by the other (both
    present) is an error, never a silent choice.
    """
    if j.both_orders and j.order_column != conv.order_by:
        raise ConfigurationError(
            f"the judgements were ordered by {j.order_column} but the conventions order by "
            f"{conv.order_by}: build them with Judgements.from_frames(..., "
            f"order_by={conv.order_by!r}) or use compute_frames"
        )
    if j.tie_group is None or conv.ties in ("expected", "last"):
        return j
    if conv.ties == "input_order":
        return replace(j, tie_group=None, tie_item=None)
    group = j.tie_group
    rows = np.flatnonzero(((group[:, 1:] == group[:, :-1]) & (group[:, 1:] >= 0)).any(axis=1))
    item = j.tie_item[rows]
    second = item if conv.ties == "item_asc" else -item
    first = np.where(group[rows] < 0, np.iinfo(np.int64).max, group[rows])
    perm = np.lexsort((second, first), axis=1)

    def reordered(matrix: np.ndarray | None) -> np.ndarray | None:
        if matrix is None:
            return None
        out = matrix.copy()
        out[rows] = np.take_along_axis(matrix[rows], perm, axis=1)
        return out

    return replace(
        j,
        grades=reordered(j.grades),
        judged=reordered(j.judged),
        positive=reordered(j.positive),
        tie_group=None,
        tie_item=None,
    )


@dataclass(frozen=True)
class Ranking:
    """What orders a run's lists: the ``column`` used (``rank`` or ``score``), its sort
    ``key`` (rank, or minus the score), the ``score`` (None without one), whether the
    run has ``both`` columns, and the run's row ``index`` (its labels, made an array
    only for an error) and ``table`` name for errors."""

    column: str
    key: np.ndarray
    score: np.ndarray | None
    both: bool
    index: pd.Index
    table: str

    @classmethod
    def of(cls, pred: dict, names: dict[str, str], run: pd.DataFrame, order_by: str) -> Ranking:
        """The ranking of a run's role columns ``pred``: by rank (ascending) or score
        (highest first), ``order_by`` choosing when the run has both; a ColumnError when
        it has neither."""
        index, table = run.index, table_name(run)
        score = (
            number_column(pred, "score", names, index, table, finite=False)
            if "score" in pred
            else None
        )
        column = "rank" if "rank" in pred and (order_by == "rank" or score is None) else "score"
        if column == "score" and score is None:
            how = hint("columns={'score': ...}", "--column score=NAME (or rank=NAME)")
            raise ColumnError(
                names["rank"],
                f"the predictions need a rank or a score column; if another column holds one, "
                f"name it with {how} (columns: {', '.join(map(str, run.columns[:10]))})",
            )
        key = number_column(pred, "rank", names, index, table) if column == "rank" else -score
        return cls(column, key, score, "rank" in pred and score is not None, index, table)


def judge_ranked(
    users: pd.Index,
    pu: np.ndarray,
    items: np.ndarray,
    item_order: Callable[[np.ndarray], np.ndarray],
    ranking: Ranking,
    looked_up: Callable[[np.ndarray | None], np.ndarray],
    shift: float,
    label_grades: np.ndarray,
    n_judged: np.ndarray,
) -> Judgements:
    """The :class:`Judgements` of a run's rows: ``pu`` their user codes (into ``users``),
    ``items`` their item codes (a duplicate in a list is an error; ``item_order`` maps
    codes to the items' order, for ties), ranked by ``ranking``. ``looked_up(order)``
    gives each row's label grade plus ``shift`` (so >= 1), 0 for a row without a label,
    in ranked order (``order``: the rows' ranked order, None when already ranked), as a
    new array (the grades are written into it).
    ``label_grades`` and ``n_judged``: the users' sorted label grades and label counts.
    :meth:`Judgements.from_frames` and
    :meth:`PreparedQrels.judgements <offeval_ir.prepared.PreparedQrels.judgements>`
    both judge through this."""
    order, tied = ranking_order(pu, ranking.key)
    shifted = looked_up(order)
    if order is not None:
        pu, items = pu[order], items[order]
    found = shifted > 0
    np.subtract(shifted, shift, out=shifted, where=found)  # the rows without a label: 0
    cells = Cells.of(pu, len(users))
    grades = cells.place(shifted)
    judged = cells.place(found, fill=False, dtype=bool)
    index = ranking.index.to_numpy
    check_list_duplicates(
        cells, pu, items, lambda: index() if order is None else index()[order], ranking.table
    )
    tie_group = tie_item = None
    if tied:
        key = ranking.key if order is None else ranking.key[order]
        new = np.r_[True, (pu[1:] != pu[:-1]) | (key[1:] != key[:-1])]
        tie_group = cells.place(np.cumsum(new[: len(pu)]) - 1, fill=-1, dtype=np.int64)
        tie_item = cells.place(item_order(items), fill=-1, dtype=np.int64)
    positive = None
    if ranking.score is not None:
        ordered_score = ranking.score if order is None else ranking.score[order]
        positive = cells.place(ordered_score > 0, fill=False, dtype=bool)
    return Judgements(
        users,
        grades,
        cells.lengths,
        label_grades,
        judged,
        n_judged,
        tie_group,
        tie_item,
        positive,
        ranking.column,
        ranking.both,
    )


ROLES = ("user", "item", "rank", "score", "relevance")
#: Other names of roles, as TREC and ir-measures users call them.
ROLE_ALIASES = {"query": "user", "qid": "user", "doc": "item", "docid": "item", "rel": "relevance"}
#: Column names of the peers' long frames, by role: ir-measures', ranx's and the
#: recommender toolkits' (``user_id``, ``item_id``); the file readers read them as ids.
PEER_COLUMNS = {
    "user": ("query_id", "q_id", "user_id"),
    "item": ("doc_id", "item_id"),
}


def role_names(columns: Mapping[str, str] | None) -> dict[str, str]:
    """Column name of each role (the role's own name unless ``columns`` says otherwise).

    A role may be named by an alias (``query=qid`` maps the user role); naming
    one role twice, or an unknown role, is an error.
    """
    names = {role: role for role in ROLES}
    given: dict[str, str] = {}
    for key, column in (columns or {}).items():
        role = ROLE_ALIASES.get(key, key)
        if role not in ROLES:
            known = [*ROLES, *ROLE_ALIASES]
            raise ConfigurationError(f"unknown column role {key!r}; roles: {known}")
        if role in given:
            raise ConfigurationError(f"column role {role!r} given twice ({given[role]}, {key})")
        given[role] = key
        names[role] = column
    return names


def swap_hint(python: str) -> str:
    """What to do when a run is given where qrels are expected, or qrels where a run is:
    ``python`` in Python, the order of ``offeval metrics``' files on the command line."""
    return hint(
        python,
        "are the run and the qrels swapped? offeval metrics takes RUN QRELS "
        "(offeval compare and trec_eval take QRELS RUN...)",
    )


def _check_swapped(predictions: object, labels: object, names: dict[str, str]) -> None:
    """Predictions with a grade column and no rank or score, labels with a rank or score
    and no grade: the run and the qrels were given in each other's place."""
    if not (isinstance(predictions, pd.DataFrame) and isinstance(labels, pd.DataFrame)):
        return
    order, grade = [names["rank"], names["score"]], names["relevance"]
    in_labels = [c for c in order if c in labels]
    swapped = grade in predictions and not any(c in predictions for c in order)
    if swapped and in_labels and grade not in labels:
        how = swap_hint("were they swapped? the predictions (the run) come first")
        raise ColumnError(
            grade,
            f"the predictions have the qrels' column ({grade}) and no {' or '.join(order)}, "
            f"the labels a run's ({', '.join(in_labels)}) and no {grade}: {how}",
        )


def table_name(frame: pd.DataFrame) -> str:
    """What a frame's index labels are, as errors name them (``ColumnError``'s ``table``):
    ``rows``, or lines of the file the readers name in ``attrs["file"]`` (``run.csv,
    lines``)."""
    if frame.index.name != LINE:
        return "rows"
    return f"{frame.attrs['file']}, lines" if "file" in frame.attrs else "lines"


def missing_column(frame: pd.DataFrame, column: str, role: str, what: str) -> ColumnError:
    """The error for a role's column missing from ``frame``: how to name another one."""
    how = hint(f"columns={{{role!r}: ...}}", f"--column {role}=NAME")
    return ColumnError(
        column,
        f"the {what} need this column (role {role!r}); if another column holds it, name it "
        f"with {how} (columns: {', '.join(map(str, frame.columns[:10]))})",
    )


def id_array(ids: npt.ArrayLike) -> np.ndarray | pd.arrays.ArrowStringArray:
    """Ids as an array to number: text pyarrow holds stays there (making Python strings of
    ten million ids takes longer than numbering them), anything else as numpy."""
    array = ids.array if isinstance(ids, pd.Series) else ids
    return array if isinstance(array, pd.arrays.ArrowStringArray) else np.asarray(ids)


def role_columns(frame: pd.DataFrame, names, required, what: str) -> dict[str, np.ndarray]:
    """The role columns of ``frame`` as arrays, by role (no copy for numeric columns; ids
    as :func:`id_array`): ``names`` maps roles to columns (:func:`role_names`), the
    ``required`` roles must be there, and a missing user or item is an error naming the
    rows; ``what`` names the frame in errors (``predictions``, ``labels``)."""
    if not isinstance(frame, pd.DataFrame):
        raise OffevalError(f"{what} must be a pandas DataFrame, got {type(frame).__name__}")
    for role in required:
        if names[role] not in frame:
            raise missing_column(frame, names[role], role, what)
    series = {k: frame[v] for k, v in names.items() if v in frame}
    out = {k: id_array(c) if k in ("user", "item") else c.to_numpy() for k, c in series.items()}
    for role in ("user", "item"):
        column = series[role]
        if isinstance(column.dtype, np.dtype) and column.dtype.kind in "iub":
            continue  # numpy integers: nothing is missing
        missing = column.isna().to_numpy()  # text columns: their null mask
        if missing.any():
            raise ColumnError(
                names[role],
                f"missing values in the {what}",
                frame.index.to_numpy()[missing],
                table=table_name(frame),
            )
    return out


#: What :func:`pandas.api.types.infer_dtype` calls ids that are all numbers, or all text.
_INFERRED = {
    "integer": "numbers",
    "floating": "numbers",
    "mixed-integer-float": "numbers",
    "decimal": "numbers",
    "string": "text",
}


def id_kind(ids) -> tuple[str | None, str]:
    """What the ids are: ``"numbers"`` or ``"text"`` when every one is (missing values
    aside; an object column is read through), None when there are none or they mix
    both; and their dtype's name."""
    dtype = ids.dtype
    name = str(dtype)
    if not len(ids):
        return None, name
    if isinstance(dtype, np.dtype) and dtype.kind in "iuf":
        return "numbers", name
    if isinstance(dtype, np.dtype) and dtype.kind == "O":
        return _INFERRED.get(pd.api.types.infer_dtype(ids, skipna=True)), name
    return ("text" if pd.api.types.is_string_dtype(dtype) else None), name


def check_id_kinds(run: tuple[str | None, str], qrels: tuple[str | None, str], column: str) -> None:
    """Run ids that are numbers against qrels ids that are text (or the other way) never
    match: an error naming both kinds (``run`` and ``qrels`` as :func:`id_kind` gives)."""
    if run[0] is not None and qrels[0] is not None and run[0] != qrels[0]:
        raise ColumnError(
            column,
            f"the run's ids are {run[0]} ({run[1]}) and the qrels' {qrels[0]} ({qrels[1]}): "
            "no id of one can match the other; make both sides text (the file readers do)",
        )


def _item_codes(
    pred_items, label_items, n_users: int
) -> tuple[np.ndarray, np.ndarray, int, Callable[[np.ndarray], np.ndarray]]:
    """Item codes of both frames, their number, and codes to item order (ties read it).

    Integer ids are their own codes (shifted to start at 0, already in item
    order) when users x ids fits a 62-bit key; other ids are factorised, and
    put in item order only when asked (sorting the distinct ids of a large
    run costs as much as numbering them).
    """
    both = (id_array(pred_items), id_array(label_items))
    present = [a for a in both if a.size]
    if present and all(a.dtype.kind in "iu" for a in both):
        low, high = min(int(a.min()) for a in present), max(int(a.max()) for a in present)
        if -(2**62) < low and high < 2**62 and (high - low + 1) * max(n_users, 1) < 2**62:
            codes = both[0].astype(np.int64) - low, both[1].astype(np.int64) - low
            return *codes, high - low + 1, lambda c: c
    codes, uniques = pd.factorize(
        pd.concat([pd.Series(both[0]), pd.Series(both[1])], ignore_index=True)
    )
    codes = codes.astype(np.int64)
    return codes[: len(both[0])], codes[len(both[0]) :], len(uniques), item_order(uniques)


def item_order(uniques) -> Callable[[np.ndarray], np.ndarray]:
    """Codes numbering the distinct ids ``uniques`` to codes in item order (the ids'
    sorted order), sorting the ids only when called."""

    def in_item_order(c: np.ndarray) -> np.ndarray:
        rank = np.empty(len(uniques), np.int64)
        rank[np.argsort(uniques, kind="stable")] = np.arange(len(uniques))
        return rank[c]

    return in_item_order


def _user_codes(pred_users: np.ndarray, label_users: np.ndarray, users: Sequence | None):
    """Integer codes of the users of both frames, and the user index (given users first).

    Users are numbered in order of first appearance: the given ``users``,
    then the predictions' users, then users only the labels have. When the
    predictions are grouped by user (each user's rows together, the usual
    layout of a run file) their codes come from the runs, without hashing
    every row.
    """
    if users is None:
        pred_users, label_users = id_array(pred_users), id_array(label_users)
        starts = np.flatnonzero(np.r_[True, pred_users[1:] != pred_users[:-1]])
        runs = pd.Index(pred_users[starts[starts < len(pred_users)]])
        if runs.is_unique:
            lengths = np.diff(np.r_[starts, len(pred_users)])[: len(runs)]
            pu = np.repeat(np.arange(len(runs), dtype=np.int32), lengths)
            lu = runs.get_indexer(pd.Index(label_users)).astype(np.int32)
            only = lu < 0
            extra, extra_users = pd.factorize(label_users[only])
            lu[only] = len(runs) + extra
            return pu, lu, runs.append(pd.Index(extra_users))
    parts = [pd.Series(pred_users), pd.Series(label_users)]
    given = 0
    if users is not None:
        given = len(users)
        parts.insert(0, pd.Series(list(users)))
    codes, uniques = pd.factorize(pd.concat(parts, ignore_index=True))
    codes = codes.astype(np.int32)
    if users is not None and codes[given:].max(initial=-1) >= given:
        unknown = uniques[given:]
        raise ColumnError("user", f"users not in the given user list: {list(unknown[:10])}")
    pu = codes[given : given + len(pred_users)]
    return pu, codes[given + len(pred_users) :], pd.Index(uniques)


def checked_grades(
    lab: dict, column: str, labels: pd.DataFrame, refuse_negative: bool
) -> np.ndarray:
    """The label grades of ``lab`` (:func:`role_columns` of ``labels``) as floats: finite,
    and not negative when ``refuse_negative``; errors name ``column`` and the rows."""
    grade = pd.to_numeric(pd.Series(lab["relevance"]), errors="coerce").to_numpy(dtype=float)
    index, table = labels.index.to_numpy(), table_name(labels)
    bad = ~np.isfinite(grade)
    if bad.any():
        raise ColumnError(column, "relevance must be a finite number", index[bad], table=table)
    if refuse_negative and (grade < 0).any():
        raise ColumnError(
            column,
            "relevance grades must not be negative under negative_grades='error'; "
            f"{switch('negative_grades', 'zero')} reads them as trec_eval does (gain 0, "
            "not relevant, not judged for bpref)",
            index[grade < 0],
            table=table,
        )
    return grade


def check_same_users(pred_users, label_users) -> None:
    """The predictions and the labels must have the same users (``strict_users``)."""
    a, b = set(pred_users), set(label_users)
    if a != b:
        only_p, only_l = sorted(map(str, a - b))[:10], sorted(map(str, b - a))[:10]
        raise ColumnError(
            "user", f"users differ: only in predictions {only_p}, only in labels {only_l}"
        )


def check_duplicates(
    users: np.ndarray, items: np.ndarray, what: str, index: np.ndarray, table: str
) -> None:
    """An item listed twice for one user (integer codes of both) is an error naming the
    second row by ``index`` (the frame's labels) and ``table`` (:func:`table_name`);
    ``what`` names the frame."""
    if len(users) < 2:
        return
    key = users.astype(np.int64) * (int(items.max(initial=0)) + 1) + items
    order = np.argsort(key)
    same = key[order][1:] == key[order][:-1]
    if same.any():
        raise ColumnError(
            "item",
            f"an item appears twice for the same user in the {what}",
            np.sort(index[order[1:][same]]),
            table=table,
        )


def check_list_duplicates(
    cells: Cells, users: np.ndarray, items: np.ndarray, index, table: str
) -> None:
    """Duplicate items within each user's list, found by sorting the rows of the item
    matrix (rows placed by ``cells``); only when there is one are the rows' labels asked
    for (``index()``, in the rows' order) and :func:`check_duplicates` names them."""
    width = cells.shape[1]
    if width < 2:
        return
    if cells.flat is None:
        ranked = items.reshape(cells.shape).copy()  # sorted in place below
    else:
        padding = -1 - np.arange(width, dtype=items.dtype)  # distinct, below every item code
        ranked = np.broadcast_to(padding, cells.shape).copy()
        ranked.reshape(-1)[cells.flat] = items
    ranked.sort(axis=1)
    if (ranked[:, 1:] == ranked[:, :-1]).any():
        check_duplicates(users, items, "predictions", index(), table)


def number_column(pred, role: str, names, index, table: str, finite: bool = True) -> np.ndarray:
    """The ``role`` column (rank or score) of ``pred`` (:func:`role_columns`) as floats;
    NaN (and with ``finite`` infinity) is an error naming the rows by ``index`` (a
    pd.Index) and ``table``. A numpy column of numbers is cast (no copy when float64),
    not parsed."""
    column = pred[role]
    if isinstance(column, np.ndarray) and column.dtype.kind in "biuf":
        values = np.asarray(column, dtype=float)
    else:
        values = pd.to_numeric(pd.Series(column), errors="coerce").to_numpy(dtype=float)
    bad = ~np.isfinite(values) if finite else np.isnan(values)
    if bad.any():
        rows = index.to_numpy()[bad]
        raise ColumnError(names[role], f"{role} must be a number", rows, table=table)
    return values


def ranking_order(users: np.ndarray, key: np.ndarray) -> tuple[np.ndarray | None, bool]:
    """Row order by user code, then ``key`` ascending (a rank, or a negated score; no
    NaN), ties in input order (None: already so), and whether any user has two rows with
    the same key. Rows already grouped by user are ordered within each user's rows only."""
    if len(users) < 2:
        return None, False
    du = np.diff(users)
    if du.min() < 0:  # not grouped by user
        order = np.lexsort((key, users))
    else:
        same = du == 0  # each row after the first of its user
        back = key[1:] < key[:-1]  # compared, not subtracted: inf after inf is in order
        back &= same
        if not back.any():
            tied = key[1:] == key[:-1]
            tied &= same
            return None, bool(tied.any())
        order = _order_in_runs(du, key)
    ordered_users, ordered_key = users[order], key[order]
    same = (ordered_users[1:] == ordered_users[:-1]) & (ordered_key[1:] == ordered_key[:-1])
    return order, bool(same.any())


def _order_in_runs(du: np.ndarray, key: np.ndarray) -> np.ndarray:
    """Row order by key ascending (ties in input order) within each run of rows of one
    user, the runs in place (``du``: the steps of the users' codes, none negative): one
    stable sort per row of a runs x longest-run matrix, not a sort of all rows."""
    starts = np.flatnonzero(np.r_[True, du != 0])
    lengths = np.diff(np.r_[starts, len(key)])
    width = int(lengths.max())
    if len(key) == len(starts) * width:  # runs of one length: the rows themselves
        perm = np.argsort(key.reshape(len(starts), width), axis=1, kind="stable")
        return (perm + starts[:, None]).reshape(-1)
    inside = np.arange(width) < lengths[:, None]
    matrix = np.full((len(starts), width), np.inf)  # padding sorts after every key (stable)
    matrix[inside] = key
    perm = np.argsort(matrix, axis=1, kind="stable")
    return (perm + starts[:, None])[inside]


#: Largest users x items table used for the dense grade lookup (float32 cells), here and
#: in :class:`offeval_ir.prepared.PreparedQrels`.
DENSE_CELLS = 20_000_000


def _lookup(pu, pi, lu, li, grade, n_users, n_items) -> np.ndarray:
    """Grade of each (user, item) prediction, 0 when the item is not labelled."""
    if len(lu) == 0:
        return np.zeros(len(pu))
    if n_users * n_items <= DENSE_CELLS:
        table = np.zeros((n_users, n_items), dtype=np.float32)
        table[lu, li] = grade
        exact = np.array_equal(table[lu, li], grade)
        if exact:
            return table[pu, pi].astype(float)
    label_key = lu.astype(np.int64) * n_items + li  # distinct (duplicates are refused)
    at = pd.Index(label_key).get_indexer(pu.astype(np.int64) * n_items + pi)  # a hash table
    return np.where(at >= 0, grade[at], 0.0)


@dataclass(frozen=True)
class Cells:
    """Where rows land in a (n_users, width) matrix, one row per user and one column per
    rank: build with :meth:`of` from the rows' user codes (sorted, each user's rows in
    rank order), then :meth:`place` puts any per-row values there. ``lengths`` holds each
    user's number of rows; ``flat`` each row's flat cell (None when every user has
    ``width`` rows, and row j is cell j)."""

    shape: tuple[int, int]
    lengths: np.ndarray
    flat: np.ndarray | None  # flat cell of each row; None when row j is cell j (equal lengths)

    @classmethod
    def of(cls, users: np.ndarray, n_users: int) -> Cells:
        """The cells of rows whose user codes ``users`` are sorted."""
        lengths = np.bincount(users, minlength=n_users)
        width = int(lengths.max(initial=0))
        if len(users) == n_users * width:
            return cls((n_users, width), lengths, None)
        starts = np.cumsum(lengths) - lengths
        flat = np.arange(len(users), dtype=np.int64)
        flat += users.astype(np.int64) * width - starts[users]
        return cls((n_users, width), lengths, flat)

    def place(self, values: np.ndarray, fill=0, dtype=float) -> np.ndarray:
        """The matrix with ``values`` in the rows' cells and ``fill`` elsewhere."""
        if self.flat is None:
            return np.asarray(values, dtype=dtype).reshape(self.shape)
        out = np.full(self.shape, fill, dtype=dtype)
        out.reshape(-1)[self.flat] = values
        return out


def sorted_labels(users: np.ndarray, grade: np.ndarray, n_users: int) -> np.ndarray:
    """(n_users, most labels) label grades (``users``: each label's user code), each row
    sorted in decreasing order: the padding zeros after the positive grades, the
    negative grades after them (see :class:`Judgements`)."""
    order = np.argsort(users, kind="stable")  # linear when already grouped by user
    matrix = Cells.of(users[order], n_users).place(grade[order])
    matrix.sort(axis=1)  # padding is 0: after the positive grades, reversed (before negatives)
    return matrix[:, ::-1]
