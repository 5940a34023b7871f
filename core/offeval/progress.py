"""Progress bars: on by default in a notebook or a terminal, off with ``progress=False``.

Every long step (``evaluate``, ``bootstrap``, the decision plugin's sweeps
and studies) takes ``progress``: True or False, or None (the default) for
"on when someone is watching": in a Jupyter kernel, or when standard error is
a terminal. The environment variable ``OFFEVAL_PROGRESS=0`` (or ``1``) turns
the default off (or on) everywhere, for logs of batch jobs say.
"""

from __future__ import annotations

import os
import sys

from tqdm import tqdm

from offeval.errors import ConfigurationError

#: The environment variable that overrides the default.
VARIABLE = "OFFEVAL_PROGRESS"


def in_notebook() -> bool:
    """Whether the code runs in a Jupyter kernel (notebook, JupyterLab, VS Code)."""
    shell = sys.modules.get("IPython") and sys.modules["IPython"].get_ipython()
    return type(shell).__name__ == "ZMQInteractiveShell"


def progress_enabled(progress: bool | None) -> bool:
    """``progress`` when given; by default, ``OFFEVAL_PROGRESS`` or whether someone watches."""
    if progress is not None:
        return bool(progress)
    setting = os.environ.get(VARIABLE, "").strip()
    if setting:
        if setting not in {"0", "1"}:
            raise ConfigurationError(f"{VARIABLE} must be 0 or 1, got {setting!r}")
        return setting == "1"
    return in_notebook() or bool(sys.stderr and sys.stderr.isatty())


def progress_bar(progress: bool | None, **options) -> tqdm:
    """A tqdm bar (``total``, ``desc``, ``unit`` ... as tqdm takes them), shown per the default."""
    return tqdm(disable=not progress_enabled(progress), **options)
