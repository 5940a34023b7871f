"""Output folders and files written whole or not at all, checked before the work that fills
them: written beside the destination, then renamed into place (symbolic links written
through; not on Windows, where a folder in use cannot be renamed)."""

from __future__ import annotations

import errno
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
#: The marker's first line; the files offeval wrote follow, one a line.
MARKER_TEXT = "written by offeval; the next run replaces this folder; its files:\n"
#: How many deleted files that offeval did not write the replacement line names.
SHOWN_DELETED = 10
#: How often a commit retries when another process commits the same folder at once.
ATTEMPTS = 10


def target_of(path: str | Path) -> Path:
    """The absolute path that writing ``path`` replaces: symbolic links followed."""
    return Path(os.path.realpath(path))


def check_destination(
    path: str | Path, *, option: str = "--out", force: bool = False, inputs: Sequence = ()
) -> Path:
    """The destination folder, checked before any work: an OffevalError if it is a file, cannot
    be created, holds an input or the current folder, or is foreign (unless ``force``)."""
    path = Path(path)
    here, cwd = target_of(path), target_of(Path.cwd())
    if here == cwd or here in cwd.parents:
        raise OffevalError(
            f"{option} {path}: the current folder (or one above it) cannot be replaced: "
            "name a folder for the output"
        )
    if path.exists() and not path.is_dir():
        raise OffevalError(f"{option} {path}: exists and is not a folder")
    _check_parent(path, here, option)
    if path.is_dir():
        for given in inputs:
            if path.resolve() in Path(given).resolve().parents:
                raise OffevalError(
                    f"{option} {path}: holds the input {given}, which replacing the folder "
                    "would delete: choose another folder"
                )
        if not force and _foreign(path):
            raise OffevalError(
                f"{option} {path}: a non-empty folder that offeval did not write: its files "
                "would be replaced; choose another folder, or add --force"
            )
    return path


def _check_parent(path: Path, target: Path, option: str) -> None:
    """An OffevalError unless a temporary place can be made in ``target``'s closest existing
    ancestor (read-only mounts pass os.access: a folder is created there and removed)."""
    base = Path(os.path.abspath(target.parent))
    while not base.exists() and base != base.parent:
        base = base.parent
    if not base.is_dir():
        raise OffevalError(f"{option} {path}: {base} is a file, not a folder")
    try:
        if not os.access(base, os.W_OK | os.X_OK):
            raise OSError
        os.rmdir(tempfile.mkdtemp(dir=base, prefix=".offeval-probe-"))
    except OSError:
        raise OffevalError(f"{option} {path}: cannot write in {base} (permission denied)") from None


class _Staged:
    """Written into a temporary place beside the destination, moved into place whole:
    ``with staged as tmp:`` commits ``tmp`` when the block succeeds, else discards it
    (subclasses define ``_make``, ``_commit`` saying what it replaced, and ``_discard``)."""

    option: str
    path: Path
    _target: Path
    _tmp: Path | None = None

    def __enter__(self) -> Path:
        """Make and return the temporary place."""
        parent = self._target.parent
        try:
            parent.mkdir(parents=True, exist_ok=True)
            self._tmp = self._make(parent, f".{self._target.name}.tmp-")
        except OSError as exc:
            raise OffevalError(f"{self.option} {self.path}: cannot write ({exc})") from None
        return self._tmp

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        """Commit the temporary place to the destination, or discard it if the block failed."""
        tmp, self._tmp = self._tmp, None
        if tmp is None:
            return
        if kind is not None:
            self._discard(tmp)
            return
        try:
            self._commit(tmp)
        except BaseException:
            self._discard(tmp)
            raise


class OutputFolder(_Staged):
    """A destination folder written whole or not at all::

        folder = OutputFolder(args.out, option="--out", force=args.force)  # checked now
        ...  # the long computation
        with folder as tmp:  # an empty folder, which replaces args.out if the block succeeds
            table.to_csv(tmp / "estimates.csv")

    A folder that offeval wrote (it holds :data:`MARKER`) or an empty one is replaced
    (``replaced``; on stderr unless ``quiet``, naming deleted files offeval did not write);
    any other is refused unless ``force``, and one holding an input always.
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
        self._target = target_of(self.path)
        self.replaced = False
        #: Files the commit deleted that offeval did not write (relative paths).
        self.deleted: list[str] = []
        self._names: set[str] = set()
        #: The names :meth:`file_name` numbered, another file having taken the name before.
        self.numbered: list[str] = []

    def __enter__(self) -> Path:
        """Check the destination again; make and return the temporary folder (no file named)."""
        self._names, self.numbered = set(), []
        check_destination(self._target, option=self.option, force=self.force, inputs=self.inputs)
        return super().__enter__()

    def file_name(self, *parts: str, suffix: str = ".csv") -> str:
        """``parts`` joined by ``_``, other characters than letters and digits as ``_``
        (``pairs``, ``dm(q.hat)``: ``pairs_dm_q_hat_.csv``), then ``_2``, ``_3``, ... when an
        earlier call gave that name (listed in :attr:`numbered`)."""
        stem = "_".join("".join(c if c.isalnum() else "_" for c in part) for part in parts)
        name, n = stem + suffix, 1
        while name in self._names:
            n += 1
            name = f"{stem}_{n}{suffix}"
        if n > 1:
            self.numbered.append(name)
        self._names.add(name)
        return name

    def _make(self, parent: Path, prefix: str) -> Path:
        return Path(tempfile.mkdtemp(dir=parent, prefix=prefix))

    def _discard(self, tmp: Path) -> None:
        shutil.rmtree(tmp, ignore_errors=True)

    def _commit(self, tmp: Path) -> None:
        """Mark ``tmp`` as ours, give it the usual permissions, rename it into the destination
        (what is there renamed aside, and put back on a failure or Ctrl-C before); say so."""
        (tmp / MARKER).write_text(MARKER_TEXT + "".join(f"{name}\n" for name in _files(tmp)))
        tmp.chmod(0o777 & ~_umask())
        aside = Path(tempfile.mkdtemp(dir=tmp.parent, prefix=f".{self._target.name}.old-"))
        try:
            self._swap(tmp, aside)
        except BaseException:
            _put_back(aside, self._target)
            raise
        shutil.rmtree(aside, ignore_errors=True)
        if self.replaced and not self.quiet:
            foreign = ""
            if self.deleted:
                shown = ", ".join(self.deleted[:SHOWN_DELETED])
                more = len(self.deleted) - SHOWN_DELETED
                foreign = f"; deleted files offeval did not write: {shown}" + (
                    f" and {more} more" if more > 0 else ""
                )
            print(f"replaced the earlier files in {self.path}{os.sep}{foreign}", file=sys.stderr)

    def _swap(self, tmp: Path, aside: Path) -> None:
        """Rename the destination into ``aside`` (as 0, 1, ...) and ``tmp`` into its place."""
        target = self._target
        for attempt in range(ATTEMPTS):
            if target.is_dir():
                if attempt and not self.force and _foreign(target):  # appeared since the check
                    raise OffevalError(
                        f"{self.option} {self.path}: a folder that offeval did not write appeared "
                        "there while it ran: choose another folder, or add --force"
                    )
                try:
                    os.replace(target, aside / str(attempt))
                except FileNotFoundError:  # another process moved it aside just now
                    pass
                else:
                    self.replaced |= any(n != MARKER for n in _names(aside / str(attempt)))
                    self.deleted += _not_written(aside / str(attempt))
            try:
                os.replace(tmp, target)
                return
            except OSError as exc:  # another process put its folder there just now
                if exc.errno not in (errno.ENOTEMPTY, errno.EEXIST):
                    raise
        raise OffevalError(
            f"{self.option} {self.path}: other processes keep writing this folder; "
            "give each run its own folder"
        )


def _put_back(aside: Path, target: Path) -> None:
    """After a failed swap: the last folder renamed aside back if its place is empty."""
    moved = sorted(aside.iterdir(), key=lambda p: int(p.name))
    try:
        if moved and not target.exists():
            os.replace(moved[-1], target)
    except OSError:
        return
    shutil.rmtree(aside, ignore_errors=True)


def _names(folder: Path) -> list[str]:
    """The names in ``folder``, read at once (none if another run renamed it away)."""
    try:
        return os.listdir(folder)
    except FileNotFoundError:
        return []


def _files(folder: Path) -> list[str]:
    """The files under ``folder`` (in its sub-folders too), as sorted relative paths."""
    return sorted(
        path.relative_to(folder).as_posix()
        for path in folder.rglob("*")
        if not path.is_dir() and path.name != MARKER
    )


def _not_written(folder: Path) -> list[str]:
    """The files in ``folder`` that offeval did not write (by its marker; none for an old one)."""
    files = _files(folder)
    try:
        lines = (folder / MARKER).read_text().splitlines()
    except FileNotFoundError:
        return files
    except (OSError, UnicodeDecodeError):
        return []
    if lines[:1] != [MARKER_TEXT.strip()]:
        return []
    written = set(lines[1:])
    return [name for name in files if name not in written]


def _foreign(folder: Path) -> bool:
    """Whether ``folder`` holds files and not offeval's marker (seen in one listing)."""
    names = _names(folder)
    return bool(names) and MARKER not in names


def _umask() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return umask


class OutputFile(_Staged):
    """A destination file written whole or not at all, checked before the work that fills it.

    Refused if the path is a folder, cannot be written, or is one of ``inputs``. ``with file as
    tmp:`` as for :class:`OutputFolder`; ``replaced`` (on stderr unless ``quiet``).
    """

    def __init__(
        self, path: str | Path, *, option: str = "--out", inputs: Sequence = (), quiet: bool = False
    ):
        self.path, self.option, self.quiet = Path(path), option, quiet
        self._target = target_of(self.path)
        self.replaced = False
        if self.path.is_dir():
            raise OffevalError(f"{option} {self.path}: is a folder; name a file")
        if any(self._target == target_of(p) for p in inputs):
            raise OffevalError(f"{option} {self.path}: is one of the inputs; name another file")
        _check_parent(self.path, self._target, option)
        if self.path.exists() and not os.access(self.path, os.W_OK):
            raise OffevalError(f"{option} {self.path}: the file is read-only")

    def _make(self, parent: Path, prefix: str) -> Path:
        handle, name = tempfile.mkstemp(dir=parent, prefix=prefix)
        os.close(handle)
        return Path(name)

    def _discard(self, tmp: Path) -> None:
        tmp.unlink(missing_ok=True)

    def _commit(self, tmp: Path) -> None:
        tmp.chmod(0o666 & ~_umask())
        self.replaced = self._target.exists()
        os.replace(tmp, self._target)
        if self.replaced and not self.quiet:
            print(f"replaced the earlier {self.path}", file=sys.stderr)
