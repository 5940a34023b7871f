"""How to set a convention switch, in the words of whoever will read the message.

Hints come from :func:`offeval.errors.hint`: a command-line option while an
``offeval`` command runs, a Python call elsewhere.
"""

from __future__ import annotations

from offeval.plugin import hint


def switch(name: str, value: object) -> str:
    """How to set a convention switch: ``--set name=value`` or ``Conventions(name=value)``."""
    return hint(f"Conventions({name}={value!r})", f"--set {name}={value}")
