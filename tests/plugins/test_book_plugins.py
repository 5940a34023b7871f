"""Each book chapter imports only the plugins its hidden setup cell loads.

A chapter's setup cell sets ``OFFEVAL_PLUGINS``: a plugin's chapter to that plugin and what
it builds on (``offeval.testing.declared_plugins``), so that nbval's run of the chapter
finds a registry name its plugin uses without declaring it. An import does not go through
the registry, so this test finds the plugin a chapter imports without loading it.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

BOOK = Path(__file__).resolve().parents[2] / "book"
IMPORT = re.compile(r"^\s*(?:from|import)\s+(offeval_\w+)", re.MULTILINE)


def code_cells(chapter: Path) -> list[str]:
    cells = json.loads(chapter.read_text())["cells"]
    return ["".join(cell["source"]) for cell in cells if cell["cell_type"] == "code"]


def loaded(setup: str, monkeypatch) -> set[str]:
    """The plugins the setup cell's ``OFFEVAL_PLUGINS`` names (the cell run on a copy of the
    environment)."""
    monkeypatch.setattr(os, "environ", dict(os.environ))
    exec(setup, {})
    return set(os.environ["OFFEVAL_PLUGINS"].split(","))


@pytest.mark.parametrize("chapter", sorted(BOOK.glob("*.ipynb")), ids=lambda path: path.stem)
def test_a_chapter_imports_only_plugins_it_loads(chapter, monkeypatch):
    sources = code_cells(chapter)
    setup = next(source for source in sources if "OFFEVAL_PLUGINS" in source)
    rest = [source for source in sources if source is not setup]
    imported = {name.removeprefix("offeval_") for cell in rest for name in IMPORT.findall(cell)}
    assert imported <= loaded(setup, monkeypatch), (
        f"{chapter.name} imports plugins it does not load"
    )
