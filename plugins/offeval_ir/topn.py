"""Recommender top-n lists: from a score matrix to judged runs, many models at once.

Recommender toolkits hand over a (users x items) score matrix, or the top-n
lists already cut from it, and evaluate them against held-out interactions.
:func:`top_n` cuts the lists from scores with the training items excluded
and ties broken by a stated rule; :func:`compute_topn` and
:func:`evaluate_topn` judge one top-n matrix (or the lists of users named
by their own ids: a frame indexed by user, a Series of lists, a dict), or a
dict of them (many models), against qrels given as a long frame (held-out
interactions without grades are relevance 1), ``{user: [held-out item, ...]}``
or a users x items relevance matrix, with measure strings, and give the same
:class:`~offeval_ir.metrics.MetricResult` and
:class:`~offeval_ir.run_statistics.RunEvaluation` (intervals, paired comparisons) as
:func:`~offeval_ir.runs.evaluate_runs` gives for run frames. The qrels are
prepared once (:func:`~offeval_ir.prepared.prepare_qrels`) and every model
costs one gather of its items' grades and the metrics' sums.

**Ties.** Two items with the same score need an order, and toolkits differ:
RecBole's full-sort evaluation sets the training items' scores to -inf and
calls ``torch.topk``, whose order among equal scores torch leaves
unspecified (so an excluded item can even fill a list whose user has fewer
than n candidates); implicit's ``recommend`` (``filter_already_liked_items``)
and the usual numpy idiom (``argpartition``, then ``argsort`` of the
selection) leave it unspecified too, so results can change with the
library's version or the hardware. Here it is stated: ``ties="index"`` puts
the lower item index first (deterministic; what a stable sort of
``-scores`` gives), ``ties="random"`` orders tied items uniformly at random
from ``seed`` (the same seed, the same lists). Excluded items never enter a
list: a user with fewer than n candidates gets a shorter list, padded with
-1 at its end.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from offeval import ColumnError, ConfigurationError, OffevalWarning
from offeval.plugin import check_choice, check_whole
from offeval_ir.conventions import PRESETS, Conventions
from offeval_ir.judgements import role_names
from offeval_ir.measures import Measure
from offeval_ir.metrics import MetricResult
from offeval_ir.peer_inputs import as_qrels
from offeval_ir.prepared import (
    PreparedQrels,
    measure_groups,
    padding,
    prepare_qrels,
    topn_rows,
)
from offeval_ir.run_statistics import RunEvaluation, evaluate_results

#: How :func:`top_n` orders items of equal score (see the module docstring).
TIES = ("index", "random")
#: Score cells handled at once by :func:`top_n` (a block of users).
BLOCK_CELLS = 4_000_000


def top_n(
    scores,
    n: int,
    *,
    exclude=None,
    ties: str = "index",
    seed: int = 0,
    columns: Mapping[str, str] | None = None,
) -> np.ndarray:
    """The (users x n) matrix of each user's n best items, best first.

    ``scores`` is a (users x items) matrix: numpy (every cell a candidate; NaN
    is an error) or scipy.sparse (the stored cells are the candidates; a
    cell not stored is never recommended). ``exclude`` marks the training
    items that must not be recommended: a users x items matrix (scipy.sparse:
    its stored cells; numpy: its non-zero cells) or a frame of (user, item)
    pairs, row and column indices into ``scores`` (column names as
    ``columns`` maps the roles ``user`` and ``item``). Integer scores are
    compared exactly (never as float64, which merges 2**53 and 2**53 + 1).
    ``ties`` orders equal scores, at the n-th place too (``index``: lower
    item index first; ``random``: uniformly at random from ``seed``).
    Entries are item indices (columns of ``scores``); a user with fewer
    than n candidates has -1 after the last one.
    """
    n = check_whole(n, "n", low=1)
    check_choice(ties, "ties", TIES)
    sparse = hasattr(scores, "tocsr")
    if sparse:
        scores = scores.tocsr()
        shape = scores.shape
    else:
        scores = np.asarray(scores)
        if scores.ndim != 2 or scores.dtype.kind not in "iufb":
            raise ConfigurationError(
                "scores must be a two-dimensional numeric matrix (users x items), got "
                f"shape {scores.shape}, dtype {scores.dtype}"
            )
        shape = scores.shape
    excluded = _exclusion(exclude, shape, columns)
    rng = np.random.default_rng(seed) if ties == "random" else None
    if sparse:
        return _top_n_sparse(scores, n, excluded, rng)
    out = np.full((shape[0], min(n, shape[1]) if shape[1] else 0), -1, dtype=np.int64)
    if not shape[1]:
        return np.full((shape[0], n), -1, dtype=np.int64)
    step = max(1, BLOCK_CELLS // shape[1])
    for lo in range(0, shape[0], step):
        hi = min(lo + step, shape[0])
        block = _exact(scores[lo:hi])
        if block.dtype.kind == "f" and np.isnan(block).any():
            rows = lo + np.flatnonzero(np.isnan(block).any(axis=1))
            raise ConfigurationError(
                f"scores hold NaN in the rows of users {rows[:5].tolist()}: give every "
                "candidate a number, or use a scipy.sparse matrix of the scored cells only"
            )
        ex = excluded[lo:hi].toarray() if excluded is not None else None
        if ex is not None:  # the lowest score: after every candidate (ties: ex sorts last)
            block = block.copy()
            block[ex] = -np.inf if block.dtype.kind == "f" else np.iinfo(block.dtype).min
        out[lo:hi] = _top_of_block(block, ex, out.shape[1], rng)
    if out.shape[1] < n:
        out = np.hstack([out, np.full((shape[0], n - out.shape[1]), -1, dtype=np.int64)])
    return out


def _top_of_block(block: np.ndarray, ex: np.ndarray | None, n: int, rng) -> np.ndarray:
    """Top n of each row of a dense block: the rows' n-th largest score found by a
    partition, then the cells at or above it sorted (score down, excluded last, the
    tie rule)."""
    rows, width = block.shape
    kth = np.partition(block, width - n, axis=1)[:, width - n]
    r, c = np.nonzero(block >= kth[:, None])  # every tie at the boundary included
    return _first_n(r, c, block[r, c], None if ex is None else ex[r, c], rows, n, rng)


def _first_n(r, c, score, ex, rows: int, n: int, rng) -> np.ndarray:
    """The first n candidates of each row ordered by score (down), not excluded first,
    then the tie rule (item index, or random keys); -1 where a row has fewer."""
    tie = c if rng is None else rng.random(len(c))
    down = -score if score.dtype.kind == "f" else ~score  # ~: decreasing, no overflow
    keys = [tie, down, r] if ex is None else [tie, ex, down, r]
    order = np.lexsort(keys)
    r, c = r[order], c[order]
    if ex is not None:
        c = np.where(ex[order], -1, c)
    starts = np.searchsorted(r, np.arange(rows))
    position = np.arange(len(r)) - starts[r]
    keep = position < n
    out = np.full((rows, n), -1, dtype=np.int64)
    out[r[keep], position[keep]] = c[keep]
    return out


def _exact(scores: np.ndarray) -> np.ndarray:
    """Scores in a dtype that orders them exactly: integers stay integers (float64 would
    merge 2**53 and 2**53 + 1), booleans become int8."""
    return scores.astype(np.int8) if scores.dtype.kind == "b" else scores


def _top_n_sparse(scores, n: int, excluded, rng) -> np.ndarray:
    """Top n of the stored cells of a CSR score matrix."""
    coo = scores.tocoo()
    r, c, s = coo.row.astype(np.int64), coo.col.astype(np.int64), _exact(coo.data)
    if s.dtype.kind == "f" and np.isnan(s).any():
        rows = np.unique(r[np.isnan(s)])
        raise ConfigurationError(f"scores hold NaN in the rows of users {rows[:5].tolist()}")
    keep = np.ones(len(r), dtype=bool)
    if excluded is not None:
        ex = excluded.tocoo()
        keys = ex.row.astype(np.int64) * scores.shape[1] + ex.col
        keep = ~np.isin(r * scores.shape[1] + c, keys)
    return _first_n(r[keep], c[keep], s[keep], None, scores.shape[0], n, rng)


def _exclusion(exclude, shape: tuple[int, int], columns):
    """The excluded cells as a scipy CSR boolean matrix of ``shape`` (None: none)."""
    if exclude is None:
        return None
    from scipy import sparse

    if isinstance(exclude, pd.DataFrame):
        names = role_names(columns)
        for role in ("user", "item"):
            if names[role] not in exclude:
                raise ColumnError(
                    names[role],
                    f"exclude needs the column (role {role!r}: row or column indices into "
                    f"scores; columns: {', '.join(map(str, exclude.columns[:10]))})",
                )
        cells = []
        for role, size in (("user", shape[0]), ("item", shape[1])):
            values = exclude[names[role]].to_numpy()
            whole = values.dtype.kind in "iu"
            bad = ~((values >= 0) & (values < size)) if whole else np.ones(len(values), bool)
            if bad.any():
                raise ColumnError(
                    names[role],
                    f"exclude: must be a whole number in [0, {size}) (a {role} index of scores)",
                    exclude.index.to_numpy()[bad],
                )
            cells.append(values.astype(np.int64))
        data = np.ones(len(exclude), dtype=bool)
        return sparse.csr_matrix((data, tuple(cells)), shape=shape, dtype=bool)
    if hasattr(exclude, "tocsr"):
        matrix = exclude.tocsr()
        if matrix.shape != shape:
            raise ConfigurationError(f"exclude has shape {matrix.shape}, scores {shape}")
        matrix = matrix.copy()
        matrix.data = np.ones(len(matrix.data), dtype=bool)  # stored cells: excluded
        return matrix.astype(bool)
    dense = np.asarray(exclude)
    if dense.shape != shape:
        raise ConfigurationError(f"exclude has shape {dense.shape}, scores {shape}")
    return sparse.csr_matrix(dense != 0)


def _prepared(qrels, conventions: Conventions, columns) -> PreparedQrels:
    """The qrels prepared (peers' inputs and held-out interactions read as
    :func:`~offeval_ir.peer_inputs.as_qrels` reads them; a matrix as it is)."""
    if hasattr(qrels, "ndim") and not isinstance(qrels, pd.DataFrame):  # a matrix
        return prepare_qrels(qrels, conventions, columns=columns)
    qrels = as_qrels(qrels, columns=columns, stacklevel=3)
    return prepare_qrels(qrels, conventions, columns=columns)


def compute_topn(
    topn,
    qrels,
    measures: Sequence[str | Measure],
    conventions: Conventions | None = None,
    *,
    users: Sequence | None = None,
    columns: Mapping[str, str] | None = None,
) -> MetricResult:
    """Each user's value of ``measures`` for one top-n matrix.

    ``topn`` is (users x n), row r the items recommended to user ``users[r]``
    (default r) best first, -1 (or NaN, in a float matrix) padding a short
    list (see :func:`top_n`); a list of lists of different lengths is taken
    as variable-length lists (row r: user r's items, best first). A frame
    of item ids (a row per user), a Series of lists and a dict
    ``{user: [item, ...]}`` name their own users (the index, the keys): the
    result is indexed by them, and ``users`` is then not needed.
    ``qrels``: a long frame (user, item, relevance), a users x items
    relevance matrix (numpy or scipy.sparse; non-zero cells are labels, NaN
    cells are not), or
    :func:`~offeval_ir.prepared.prepare_qrels`' result (prepare once when
    judging many models). Users are the rows, then the qrels' users without
    a row; against a qrels matrix without ``users``, row r of both is user
    r, and the two must have as many rows. ``conventions`` default to the
    ``trec_eval`` preset. A cut-off k beyond every list's length is an
    :class:`~offeval.OffevalWarning` (once per call). Against a long frame,
    item ids that are numbers where the qrels' are text (or the other way),
    fractional ids where the qrels' are integers, and rows' users of another
    kind than the qrels' users (rows are users 0, 1, ... unless ``users``
    names them) are errors, as is an id that is itself a list; ids of mixed
    kinds are compared as ids.
    """
    conv = conventions or PRESETS["trec_eval"]()
    prepared = _prepared(qrels, conv, columns)
    topn, users = topn_rows(topn, users)
    _warn_beyond_lists(measures, conv, [topn])
    return prepared.measures(topn, measures, conv, users=users)


def evaluate_topn(
    topn,
    qrels,
    measures: Sequence[str | Measure],
    conventions: Conventions | None = None,
    *,
    users: Sequence | None = None,
    columns: Mapping[str, str] | None = None,
    level: float = 0.95,
) -> RunEvaluation:
    """Means of ``measures`` with intervals for one top-n matrix or a dict of them
    ({model name: top-n matrix}), through the engine, as
    :func:`~offeval_ir.runs.evaluate_runs` (paired comparisons with
    :meth:`~offeval_ir.run_statistics.RunEvaluation.compare`). Arguments as
    :func:`compute_topn` (a dict of flat lists is one model's ``{user: [item,
    ...]}``); the qrels are prepared once for all models.
    """
    conv = conventions or PRESETS["trec_eval"]()
    runs = topn if isinstance(topn, Mapping) and not _user_lists(topn) else {"run": topn}
    if not runs:
        raise ConfigurationError("give at least one top-n matrix, as {name: matrix}")
    prepared = _prepared(qrels, conv, columns)
    runs = {name: topn_rows(matrix, users) for name, matrix in runs.items()}
    _warn_beyond_lists(measures, conv, [matrix for matrix, _ in runs.values()])
    results = {
        name: prepared.measures(matrix, measures, conv, users=rows)
        for name, (matrix, rows) in runs.items()
    }
    return evaluate_results(results, level=level)


def _user_lists(topn: Mapping) -> bool:
    """Whether a mapping is one model's lists ({user: [item, ...]}), not {model: top-n}:
    its first value a flat sequence of ids (the others are checked as rows)."""
    first = next(iter(topn.values()), None)
    return (
        isinstance(first, list | tuple | np.ndarray)
        and np.ndim(first) == 1
        and not any(pd.api.types.is_list_like(item) for item in first)
    )


def _warn_beyond_lists(
    measures: Sequence[str | Measure], conventions: Conventions, matrices: Iterable[np.ndarray]
) -> None:
    """One warning naming the measures whose cut-off k exceeds every list's length (of
    every matrix): nDCG@50 of top-5 lists is rarely what was meant."""
    longest = max(
        (int((m.shape[1] - padding(m).sum(axis=1)).max(initial=0)) for m in matrices),
        default=0,
    )
    _, groups = measure_groups(measures, conventions)
    beyond = [m.name for _, group in groups for m in group if m.k is not None and m.k > longest]
    if beyond:
        warnings.warn(
            OffevalWarning(
                f"{', '.join(beyond)}: k exceeds the length of every top-n list (the longest "
                f"holds {longest} items); make longer lists (top_n's n) or ask a smaller k"
            ),
            stacklevel=3,
        )
