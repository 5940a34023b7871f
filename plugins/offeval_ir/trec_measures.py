"""trec_eval's text value ``relstring``, per user; its measures are the trec_eval provider's
(:mod:`offeval_ir.measure.trec_eval`)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from offeval_ir.conventions import PRESETS
from offeval_ir.judgements import Judgements, in_tie_order


def relstrings(j: Judgements, conventions=None, length: int = 10) -> pd.Series:
    """trec_eval's ``relstring`` per user (m_relstring.c): the first ``length`` ranks of
    the list as characters, the grade (``>`` above 9), ``-`` not in the pool and ``.``
    in the pool but not judged (a negative grade); in the conventions' order (default
    the ``trec_eval`` preset's: score, ties by docno descending). trec_eval prints it
    quoted, labelled ``relstring`` (``relstring_<length>`` when given a length)."""
    conv = conventions or PRESETS["trec_eval"]()
    ordered = in_tie_order(j, conv)
    width = min(int(length), ordered.max_length)
    grades = ordered.grades[:, :width]
    judged = ordered.judged[:, :width]
    digits = (ord("0") + np.clip(grades, 0, 9)).astype(np.uint8)
    chars = np.where(grades > 9, ord(">"), digits)
    chars = np.where(judged & (grades < 0), ord("."), chars)
    chars = np.where(judged, chars, ord("-"))
    chars = np.where(np.arange(width) < ordered.lengths[:, None], chars, 0).astype(np.uint8)
    if width == 0:
        return pd.Series("", index=ordered.users, name="relstring")
    rows = np.ascontiguousarray(chars).view(f"S{width}").ravel()  # trailing NULs dropped
    return pd.Series(np.char.decode(rows, "ascii"), index=ordered.users, name="relstring")
