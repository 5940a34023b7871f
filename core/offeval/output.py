"""Output folders written whole or not at all, checked before the work that fills them.

A command that writes a folder of files (``offeval evaluate --out`` and
``--report``, ``offeval demo --out``, the plugins' commands) writes them into
a temporary folder beside the destination and moves it into place only when
every file is written: a rerun leaves no file of the earlier run behind (no
stale ``pairs_*.csv`` beside the new ones), and a failure or Ctrl-C half way
leaves the earlier folder as it was and no temporary folder behind::

    folder = OutputFolder(args.out, option="--out", force=args.force)  # checked now
    ...  # the long computation
    with folder as tmp:
        table.to_csv(tmp / "estimates.csv")
    # folder.path now holds exactly what was written into tmp

The rule for an existing destination: a folder that offeval wrote (it holds
the marker file :data:`MARKER`) or an empty folder is replaced, and one line
on stderr says so; any other non-empty folder is refused unless ``force``,
since replacing it would delete files that are not ours. A destination that
holds one of the command's inputs is always refused.

The old folder is renamed aside, the new one renamed into place, then the
old one deleted: each rename is atomic, and between the two (microseconds)
the destination does not exist; should the process die there, the old
content is still beside it, in ``.NAME.old-*``.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType

from offeval.errors import OffevalError

#: The file that marks a folder as written by offeval (safe to replace).
MARKER = ".offeval"


def nearest_existing(path: Path) -> Path:
    """``path`` or its closest ancestor that exists."""
    path = Path(os.path.abspath(path))
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def check_destination(
    path: str | Path, *, option: str = "--out", force: bool = False, inputs: Sequence = ()
) -> Path:
    """The destination folder, checked before any work: an OffevalError if it cannot be written.

    Refused: a path that exists and is not a folder, or under a file; a
    place where this process cannot create a folder; a non-empty folder
    without offeval's marker (unless ``force``); a folder that holds one of
    ``inputs`` (the command's input files, which replacing it would delete)
    or the current folder.
    """
    path = Path(path)
    here = Path(os.path.abspath(path))
    if here == Path.cwd() or here in Path.cwd().parents:
        raise OffevalError(
            f"{option} {path}: the current folder (or one above it) cannot be replaced: "
            "name a folder for the output"
        )
    if path.exists() and not path.is_dir():
        raise OffevalError(f"{option} {path}: exists and is not a folder")
    base = nearest_existing(path.parent)
    if not base.is_dir():
        raise OffevalError(f"{option} {path}: {base} is a file, not a folder")
    if not os.access(base, os.W_OK | os.X_OK) or not _can_create_in(base):
        raise OffevalError(f"{option} {path}: cannot write in {base} (permission denied)")
    if path.is_dir():
        for given in inputs:
            if path.resolve() in Path(given).resolve().parents:
                raise OffevalError(
                    f"{option} {path}: holds the input {given}, which replacing the folder "
                    "would delete: choose another folder"
                )
        if not force and any(path.iterdir()) and not (path / MARKER).is_file():
            raise OffevalError(
                f"{option} {path}: a non-empty folder that offeval did not write: its files "
                "would be replaced; choose another folder, or add --force"
            )
    return path


def _can_create_in(folder: Path) -> bool:
    """Whether a folder can be created in ``folder`` (read-only mounts pass os.access)."""
    try:
        os.rmdir(tempfile.mkdtemp(dir=folder, prefix=".offeval-probe-"))
    except OSError:
        return False
    return True


class OutputFolder:
    """A destination folder written whole or not at all (see the module's docstring).

    Built before the work, it checks the destination (:func:`check_destination`);
    ``with folder as tmp:`` yields an empty temporary folder beside it, which
    replaces the destination when the block ends without an exception, and
    is deleted otherwise. ``replaced`` then says whether earlier files were
    replaced (a line on stderr says it too, unless ``quiet``).
    """

    def __init__(
        self,
        path: str | Path,
        *,
        option: str = "--out",
        force: bool = False,
        inputs: Sequence = (),
        quiet: bool = False,
    ):
        self.option, self.force, self.inputs, self.quiet = option, force, tuple(inputs), quiet
        self.path = check_destination(path, option=option, force=force, inputs=inputs)
        self.replaced = False
        self._tmp: Path | None = None

    def __enter__(self) -> Path:
        """Check the destination again, then make and return the temporary folder."""
        check_destination(self.path, option=self.option, force=self.force, inputs=self.inputs)
        parent = Path(os.path.abspath(self.path)).parent
        try:
            parent.mkdir(parents=True, exist_ok=True)
            self._tmp = Path(tempfile.mkdtemp(dir=parent, prefix=f".{self.path.name}.tmp-"))
        except OSError as exc:
            raise OffevalError(f"{self.option} {self.path}: cannot write ({exc})") from None
        return self._tmp

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        """Move the temporary folder into place, or delete it if the block failed."""
        tmp, self._tmp = self._tmp, None
        if tmp is None:
            return
        if kind is not None:
            shutil.rmtree(tmp, ignore_errors=True)
            return
        try:
            self._commit(tmp)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        if self.replaced and not self.quiet:
            print(f"replaced the earlier files in {self.path}{os.sep}", file=sys.stderr)

    def _commit(self, tmp: Path) -> None:
        """Mark ``tmp`` as ours, give it the usual permissions, put it in the destination."""
        (tmp / MARKER).write_text("written by offeval; the next run replaces this folder\n")
        umask = os.umask(0)
        os.umask(umask)
        tmp.chmod(0o777 & ~umask)
        old = None
        if self.path.is_dir():
            self.replaced = any(p.name != MARKER for p in self.path.iterdir())
            old = Path(tempfile.mkdtemp(dir=tmp.parent, prefix=f".{self.path.name}.old-"))
            os.replace(self.path, old / "previous")
        os.replace(tmp, self.path)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)


class OutputFile:
    """A destination file written whole or not at all, checked before the work that fills it.

    Built before the work: refused if the path is a folder, lies under a
    file, cannot be written, or is one of ``inputs``. ``with file as tmp:``
    yields a temporary path beside the destination, which replaces it when
    the block ends without an exception and is deleted otherwise, so a
    failure or Ctrl-C half way never leaves a truncated file.
    """

    def __init__(self, path: str | Path, *, option: str = "--out", inputs: Sequence = ()):
        self.path, self.option = Path(path), option
        if self.path.is_dir():
            raise OffevalError(f"{option} {self.path}: is a folder; name a file")
        if any(Path(os.path.abspath(self.path)) == Path(os.path.abspath(p)) for p in inputs):
            raise OffevalError(f"{option} {self.path}: is one of the inputs; name another file")
        base = nearest_existing(self.path.parent)
        if not base.is_dir():
            raise OffevalError(f"{option} {self.path}: {base} is a file, not a folder")
        if not os.access(base, os.W_OK | os.X_OK) or not _can_create_in(base):
            raise OffevalError(f"{option} {self.path}: cannot write in {base} (permission denied)")
        if self.path.exists() and not os.access(self.path, os.W_OK):
            raise OffevalError(f"{option} {self.path}: the file is read-only")
        self._tmp: Path | None = None

    def __enter__(self) -> Path:
        """Make and return the temporary file's path, in the destination's folder."""
        parent = Path(os.path.abspath(self.path)).parent
        try:
            parent.mkdir(parents=True, exist_ok=True)
            handle, name = tempfile.mkstemp(dir=parent, prefix=f".{self.path.name}.tmp-")
        except OSError as exc:
            raise OffevalError(f"{self.option} {self.path}: cannot write ({exc})") from None
        os.close(handle)
        self._tmp = Path(name)
        return self._tmp

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        """Move the temporary file into place, or delete it if the block failed."""
        tmp, self._tmp = self._tmp, None
        if tmp is None:
            return
        if kind is not None:
            tmp.unlink(missing_ok=True)
            return
        umask = os.umask(0)
        os.umask(umask)
        tmp.chmod(0o666 & ~umask)
        os.replace(tmp, self.path)
