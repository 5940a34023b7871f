"""The book builds to HTML without warnings (nbval executes its chapters separately)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

BOOK = Path(__file__).resolve().parents[1] / "book"


def test_every_chapter_is_in_the_table_of_contents():
    toc = yaml.safe_load((BOOK / "_toc.yml").read_text())
    listed = {toc["root"], *(c["file"] for c in toc["chapters"])}
    present = {p.stem for p in BOOK.glob("*.ipynb")} | {p.stem for p in BOOK.glob("*.md")}
    assert listed == present


def test_the_introduction_lists_every_chapter():
    toc = yaml.safe_load((BOOK / "_toc.yml").read_text())
    intro = (BOOK / f"{toc['root']}.md").read_text()
    missing = [c["file"] for c in toc["chapters"] if f"{{doc}}`{c['file']}`" not in intro]
    assert not missing, f"intro.md does not list {missing}"


def test_every_chapter_is_stored_executed():
    import nbformat

    for path in BOOK.glob("*.ipynb"):
        nb = nbformat.read(path, as_version=4)
        code = [c for c in nb.cells if c.cell_type == "code"]
        assert code and all(c.execution_count for c in code), f"{path.name} has unexecuted cells"


def test_every_chapter_runs_the_built_in_plugins_without_progress_bars():
    """A hidden first code cell (tag remove-cell) sets OFFEVAL_PLUGINS and OFFEVAL_PROGRESS=0
    before offeval is used, for nbval and jupyter-book alike; no progress bar is stored."""
    import nbformat

    for path in BOOK.glob("*.ipynb"):
        nb = nbformat.read(path, as_version=4)
        first = next(c for c in nb.cells if c.cell_type == "code")
        assert "remove-cell" in first.metadata.get("tags", []), path.name
        assert 'os.environ["OFFEVAL_PROGRESS"] = "0"' in first.source, path.name
        assert 'os.environ["OFFEVAL_PLUGINS"]' in first.source, path.name
        for cell in nb.cells:
            for output in cell.get("outputs", []):
                text = "".join(output.get("text", ""))
                assert not re.search(r"\d+%\|", text), f"{path.name} stores a progress bar"


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("jupyter-book") is None, reason="jupyter-book not installed")
def test_html_build_has_no_warnings(tmp_path):
    config = yaml.safe_load((BOOK / "_config.yml").read_text())
    assert config["execute"]["allow_errors"] is False  # a real build fails on any cell error
    config["execute"]["execute_notebooks"] = "off"  # stored outputs: nbval has run the cells
    (tmp_path / "_config.yml").write_text(yaml.safe_dump(config))
    done = subprocess.run(
        [
            "jupyter-book",
            "build",
            str(BOOK),
            "--config",
            str(tmp_path / "_config.yml"),
            "--path-output",
            str(tmp_path),
            "-W",
            "-n",
            "--keep-going",
        ],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    site = tmp_path / "_build" / "html"
    html = (site / "ncis.html").read_text()
    assert "0.636" in html and "Kendall" in html
    assert 'src="_static/mathjax/tex-chtml.js"' in html  # math from the build, not a CDN
    assert "_static/offeval.css" in html  # long code lines wrap, wide tables scroll
    for page in site.glob("*.html"):
        text = page.read_text()
        loads = re.findall(
            r"<(?:script|link|img)\b[^>]*?(?:src|href)=\"((?:https?:)?//[^\"]+)", text
        )
        assert not loads, f"{page.name} loads {loads[:3]} from the network"
        for ref in re.findall(r"<(?:script|img)\b[^>]*?src=\"([^\"#?]+)", text):
            assert (page.parent / ref).is_file(), f"{page.name}: missing {ref}"
        assert "output traceback" not in text, f"{page.name} shows a traceback"
        for machine in ("/work/", "/tmp/", "/root/", "/home/", "site-packages"):
            assert machine not in text, f"{page.name} shows a path of the build machine"


#: How the source papers are not to be cited to readers (internal names of the project's files).
INTERNAL_CITATION = re.compile(r"\bthe seed\b|\bseed 0\d\d\b|\bseed's\b|\bseed papers?\b", re.I)


def test_user_facing_text_cites_papers_by_authors_and_year():
    """Book prose, README, CONTRIBUTING and every plugin's and the core's docstrings."""
    import ast
    import json

    root = BOOK.parent
    texts = {}
    for path in [*BOOK.glob("*.md"), root / "README.md", root / "CONTRIBUTING.md"]:
        texts[path.name] = path.read_text()
    for path in BOOK.glob("*.ipynb"):
        cells = json.loads(path.read_text())["cells"]
        texts[path.name] = "\n".join("".join(c["source"]) for c in cells)
    for path in [*(root / "core").rglob("*.py"), *(root / "plugins").rglob("*.py")]:
        tree = ast.parse(path.read_text())
        named = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
        nodes = [tree, *(n for n in ast.walk(tree) if isinstance(n, named))]
        texts[str(path.relative_to(root))] = "\n".join(ast.get_docstring(n) or "" for n in nodes)
    # the paths still hold what is read: the core's layers, a plugin, the book, the guides
    for name in ("core/offeval/plugin.py", "core/offeval/engine/estimator.py", "README.md"):
        assert name in texts, f"{name} was not read: did it move?"
    assert "plugins/offeval_importance/estimators.py" in texts and "CONTRIBUTING.md" in texts
    assert "writing-a-plugin.ipynb" in texts and "intro.md" in texts
    found = {name: INTERNAL_CITATION.findall(text) for name, text in texts.items()}
    assert not {name: hits for name, hits in found.items() if hits}
