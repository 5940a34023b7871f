"""Metrics straight from long frames, a block of users at a time.

:func:`compute_frames` gives the same :class:`~offeval_ir.metrics.MetricResult`
as ``compute(Judgements.from_frames(...))`` while holding the dense per-user
matrices of one block of users only, so memory beyond the input is bounded
by ``chunk_rows`` rather than by the number of users. Prediction rows grouped
by user (each user's rows together, as run files are written) are sliced
without a copy; otherwise they are put in user order once (one stable sort of
integer codes).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

import numpy as np
import pandas as pd

from offeval import OffevalError
from offeval.plugin import check_whole
from offeval_ir.conventions import Conventions
from offeval_ir.judgements import (
    Judgements,
    check_id_kinds,
    check_same_users,
    id_array,
    id_kind,
    missing_column,
    role_names,
)
from offeval_ir.metrics import METRICS, MetricResult, compute


def compute_frames(
    predictions: pd.DataFrame,
    labels: pd.DataFrame,
    metrics: Sequence[str] = METRICS,
    ks: Sequence[int | None] | Mapping[str, Sequence[int | None]] = (1, 3, 5, 10),
    conventions: Conventions | None = None,
    *,
    users: Sequence | None = None,
    strict_users: bool = False,
    columns: Mapping[str, str] | None = None,
    chunk_rows: int = 2_000_000,
) -> MetricResult:
    """``metrics`` at every cut-off for every user, from long frames, block by block.

    Arguments as :meth:`Judgements.from_frames` and :func:`compute`; ties in
    scores follow ``conventions.ties``. Blocks hold about ``chunk_rows``
    prediction rows (whole users). Per-user values come in the order of
    :meth:`Judgements.from_frames`: given ``users``, then users in order of
    first appearance in the predictions, then users only the labels have.
    User ids that are numbers in one frame and text in the other are an error
    (they never match), as are item ids.
    """
    conv = conventions or Conventions()
    chunk_rows = check_whole(chunk_rows, "chunk_rows", low=1)
    names = role_names(columns)
    pred_users, label_users = (
        _users(predictions, names, "predictions"),
        _users(labels, names, "labels"),
    )
    if users is not None or len(pred_users) <= chunk_rows:
        judgements = Judgements.from_frames(
            predictions,
            labels,
            users=users,
            strict_users=strict_users,
            order_by=conv.order_by,
            columns=columns,
            negative_grades=conv.negative_grades,
        )
        return compute(judgements, metrics, ks, conv)
    # a block's users are of the kinds of the whole frames': checked here, where every
    # label is seen (a block whose users have no label would not tell)
    check_id_kinds(id_kind(pred_users), id_kind(label_users), names["user"])
    if strict_users:
        check_same_users(pd.unique(pred_users), pd.unique(label_users))
    parts = [
        compute(
            Judgements.from_frames(
                block,
                block_labels,
                order_by=conv.order_by,
                columns=columns,
                negative_grades=conv.negative_grades,
            ),
            metrics,
            ks,
            conv,
        )
        for block, block_labels in user_blocks(predictions, labels, chunk_rows, columns=columns)
    ]
    counts = parts[0].counts.copy()
    for part in parts[1:]:
        counts += part.counts
    return MetricResult(
        pd.concat([part.per_user for part in parts]),
        conv,
        counts,
        pd.concat([part.reasons for part in parts]),
    )


def user_blocks(
    predictions: pd.DataFrame,
    labels: pd.DataFrame,
    chunk_rows: int = 2_000_000,
    *,
    columns: Mapping[str, str] | None = None,
) -> Iterator[tuple[pd.DataFrame, pd.DataFrame]]:
    """The frames in blocks of whole users: each block's prediction rows (about
    ``chunk_rows``; the frames themselves when they hold no more) with its users'
    labels, then the labels of the users without predictions (when there are any).

    Users come in order of first appearance in the predictions, each user's rows
    in their order, so judging the blocks in turn gives
    :meth:`Judgements.from_frames`' users and lists.
    """
    names = role_names(columns)
    pred_users = _users(predictions, names, "predictions")
    label_users = _users(labels, names, "labels")
    if len(pred_users) <= chunk_rows:
        yield predictions, labels
        return
    order, runs, starts = _user_runs(pred_users)
    label_run = runs.get_indexer(label_users)
    edges = _block_edges(starts, chunk_rows)
    block_of_run = np.repeat(np.arange(edges.size - 1), np.diff(edges))
    label_block = np.where(label_run >= 0, block_of_run[label_run], edges.size - 1)
    label_order = np.argsort(label_block, kind="stable")
    label_edges = np.searchsorted(label_block[label_order], np.arange(edges.size + 1))
    for b in range(edges.size):
        lo, hi = (starts[edges[b]], starts[edges[b + 1]]) if b + 1 < edges.size else (0, 0)
        rows = slice(lo, hi) if order is None else order[lo:hi]
        block_labels = labels.iloc[label_order[label_edges[b] : label_edges[b + 1]]]
        if b + 1 == edges.size and block_labels.empty:
            return
        yield predictions.iloc[rows], block_labels


def _users(frame: pd.DataFrame, names: dict[str, str], what: str) -> np.ndarray:
    if not isinstance(frame, pd.DataFrame):
        raise OffevalError(f"{what} must be a pandas DataFrame, got {type(frame).__name__}")
    if names["user"] not in frame:
        raise missing_column(frame, names["user"], "user", what)
    return id_array(frame[names["user"]])


def _user_runs(users: np.ndarray) -> tuple[np.ndarray | None, pd.Index, np.ndarray]:
    """Row order putting each user's rows together (None: already so), users, run starts.

    ``starts`` has one entry per user plus the end, in the ordered rows.
    """
    starts = np.flatnonzero(np.r_[True, users[1:] != users[:-1]])
    runs = pd.Index(users[starts])
    if runs.is_unique:
        return None, runs, np.r_[starts, users.size]
    codes, uniques = pd.factorize(users)
    order = np.argsort(codes, kind="stable")
    return order, pd.Index(uniques), np.r_[0, np.cumsum(np.bincount(codes))]


def _block_edges(starts: np.ndarray, chunk_rows: int) -> np.ndarray:
    """First user of each block of about ``chunk_rows`` rows, and the number of users."""
    n_users = starts.size - 1
    cuts = np.searchsorted(starts[:-1], np.arange(0, starts[-1], chunk_rows), side="right") - 1
    return np.unique(np.r_[cuts, n_users])
