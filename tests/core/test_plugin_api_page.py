"""The book's plugin API page lists every name of ``offeval.plugin.__all__``, as stored.

The page (book/plugin-api.ipynb) is generated from the module when the
notebook is executed; nbval checks that re-running it gives the stored page.
This test reads the stored page: a name added to the API without
re-executing the page fails here, naming it.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import yaml

import offeval.plugin as api

BOOK = Path(__file__).resolve().parents[2] / "book"


def stored_page() -> str:
    """The reference the page's notebook displayed when it was last executed."""
    notebook = nbformat.read(BOOK / "plugin-api.ipynb", as_version=4)
    shown = [
        output["data"]["text/markdown"]
        for cell in notebook.cells
        if "api-reference" in cell.metadata.get("tags", [])
        for output in cell.outputs
        if "text/markdown" in output.get("data", {})
    ]
    assert len(shown) == 1, "the page displays its reference once (the cell tagged api-reference)"
    return shown[0]


def test_the_page_lists_every_declared_name_once():
    listed = re.findall(r"^- `(\w+)", stored_page(), flags=re.M)
    missing = sorted(set(api.__all__) - set(listed))
    assert not missing, f"re-execute book/plugin-api.ipynb: it does not list {missing}"
    assert sorted(listed) == sorted(api.__all__)


def test_the_groups_are_the_docstrings():
    titles = re.findall(r"^## (.+)$", stored_page(), flags=re.M)
    described = re.findall(r"^- \*\*(.+?)\*\*", api.__doc__, flags=re.M)
    assert titles[: len(described)] == described


def test_in_the_table_of_contents():
    toc = yaml.safe_load((BOOK / "_toc.yml").read_text())
    assert "plugin-api" in [chapter["file"] for chapter in toc["chapters"]]
