"""Progress bars: on by default in a notebook or a terminal, off with ``progress=False``.

Every long step takes ``progress``: True, False, or None (the default: on in a Jupyter
kernel or when standard error is a terminal, for a step of at least :data:`MIN_WORK` units
of work, about a second). ``OFFEVAL_PROGRESS=0`` (or ``1``) turns the default off (or on,
whatever the size) everywhere."""

from __future__ import annotations

import os
import sys

from tqdm import tqdm

from offeval.validation import check_choice

#: The environment variable that overrides the default.
VARIABLE = "OFFEVAL_PROGRESS"
#: Smallest step (rows x policies x estimators, for a pass) that shows a bar by default.
MIN_WORK = 20_000_000


def in_notebook() -> bool:
    """Whether the code runs in a Jupyter kernel (notebook, JupyterLab, VS Code)."""
    shell = sys.modules.get("IPython") and sys.modules["IPython"].get_ipython()
    return type(shell).__name__ == "ZMQInteractiveShell"


def progress_enabled(progress: bool | None, work: float | None = None) -> bool:
    """``progress`` when given; by default, ``OFFEVAL_PROGRESS``, or whether someone watches
    a step of ``work`` units (None: of unknown size, worth a bar)."""
    if progress is not None:
        return bool(progress)
    setting = os.environ.get(VARIABLE, "").strip()
    if setting:
        return check_choice(setting, VARIABLE, ("0", "1"), rule="0 or 1") == "1"
    watched = in_notebook() or bool(sys.stderr and sys.stderr.isatty())
    return watched and (work is None or work >= MIN_WORK)


def progress_bar(progress: bool | None, work: float | None = None, **options) -> tqdm:
    """A tqdm bar (``total``, ``desc``, ``unit`` ... as tqdm takes them), shown per the default."""
    return tqdm(disable=not progress_enabled(progress, work), **options)
