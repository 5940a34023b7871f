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
the marker file :data:`MARKER`, which lists the files it wrote) or an empty
folder is replaced, and one line on stderr says so; any other non-empty folder
is refused unless ``force``, since replacing it would delete files that are
not ours. The line names (up to :data:`SHOWN_DELETED`, then counts) the
deleted files that offeval did not write: those of a folder replaced with
``force``, or added to an offeval folder since. A single file
(:class:`OutputFile`) that existed is replaced, and a line says so too. A destination that
holds one of the command's inputs is always refused.

The old folder is renamed aside, the new one renamed into place, then the
old one deleted: each rename is atomic, and between the two (microseconds)
the destination does not exist; an exception or Ctrl-C there puts the old
folder back, and should the process be killed there, the old content is
still beside it, in ``.NAME.old-*``. Two runs committing the same
folder at once both succeed: the last to commit wins, whole, and nothing is
left aside.

A symbolic link is written through: the folder (or file) it points to is
replaced, beside itself, and the link kept. A relative path is taken from
the current folder when the destination is checked. Windows is not handled
(a folder in use there cannot be renamed).
"""

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
    here, cwd = target_of(path), target_of(Path.cwd())
    if here == cwd or here in cwd.parents:
        raise OffevalError(
            f"{option} {path}: the current folder (or one above it) cannot be replaced: "
            "name a folder for the output"
        )
    if path.exists() and not path.is_dir():
        raise OffevalError(f"{option} {path}: exists and is not a folder")
    base = nearest_existing(here.parent)  # where the temporary folder goes
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
        if not force and _foreign(path):
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


class _Staged:
    """Written into a temporary place beside the destination, moved into place whole.

    ``with staged as tmp:`` yields the temporary place; when the block ends
    without an exception it is committed to the destination, else (or when
    the commit fails) it is discarded. Subclasses say how to make, commit
    and discard it.
    """

    option: str
    path: Path
    _target: Path
    _tmp: Path | None = None

    def __enter__(self) -> Path:
        """Check the destination again, then make and return the temporary place."""
        self._recheck()
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
        self._committed()

    def _recheck(self) -> None:
        """Check the destination again just before writing (nothing by default)."""

    def _committed(self) -> None:
        """Say what the commit did (nothing by default)."""

    def _make(self, parent: Path, prefix: str) -> Path:
        raise NotImplementedError

    def _commit(self, tmp: Path) -> None:
        raise NotImplementedError

    def _discard(self, tmp: Path) -> None:
        raise NotImplementedError


class OutputFolder(_Staged):
    """A destination folder written whole or not at all (see the module's docstring).

    Built before the work, it checks the destination (:func:`check_destination`);
    ``with folder as tmp:`` yields an empty temporary folder beside it, which
    replaces the destination when the block ends without an exception, and
    is deleted otherwise. ``replaced`` then says whether earlier files were
    replaced (a line on stderr says it too, unless ``quiet``). Files that name what
    they hold (one per estimator, say) take their names from :meth:`file_name`,
    which never gives a name twice.
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
        """Check the destination again, then make and return the temporary folder (no file
        named in it yet)."""
        self._names, self.numbered = set(), []
        return super().__enter__()

    def file_name(self, *parts: str, suffix: str = ".csv") -> str:
        """A name for a file of the folder being written: ``parts`` joined by ``_``, every
        character but letters and digits as ``_`` (``pairs``, ``dm(reward_model=q.hat)``:
        ``pairs_dm_reward_model_q_hat_.csv``), then ``_2``, ``_3``, ... when an earlier call
        gave that name (``dm(reward_model=q_hat)`` reads the same), listed in :attr:`numbered`.
        """
        stem = "_".join("".join(c if c.isalnum() else "_" for c in part) for part in parts)
        name, n = stem + suffix, 1
        while name in self._names:
            n += 1
            name = f"{stem}_{n}{suffix}"
        if n > 1:
            self.numbered.append(name)
        self._names.add(name)
        return name

    def _recheck(self) -> None:
        check_destination(self._target, option=self.option, force=self.force, inputs=self.inputs)

    def _make(self, parent: Path, prefix: str) -> Path:
        return Path(tempfile.mkdtemp(dir=parent, prefix=prefix))

    def _discard(self, tmp: Path) -> None:
        shutil.rmtree(tmp, ignore_errors=True)

    def _committed(self) -> None:
        if self.replaced and not self.quiet:
            foreign = ""
            if self.deleted:
                shown = ", ".join(self.deleted[:SHOWN_DELETED])
                more = len(self.deleted) - SHOWN_DELETED
                foreign = f"; deleted files offeval did not write: {shown}" + (
                    f" and {more} more" if more > 0 else ""
                )
            print(f"replaced the earlier files in {self.path}{os.sep}{foreign}", file=sys.stderr)

    def _commit(self, tmp: Path) -> None:
        """Mark ``tmp`` as ours, give it the usual permissions, put it in the destination.

        Whatever is there is renamed aside first; should another process put
        its folder there in between, that one is renamed aside in turn. A
        failure (or Ctrl-C) before ``tmp`` is in place puts the earlier folder back.
        """
        (tmp / MARKER).write_text(MARKER_TEXT + "".join(f"{name}\n" for name in _files(tmp)))
        tmp.chmod(0o777 & ~_umask())
        aside = Path(tempfile.mkdtemp(dir=tmp.parent, prefix=f".{self._target.name}.old-"))
        try:
            self._swap(tmp, aside)
        except BaseException:
            _put_back(aside, self._target)
            raise
        shutil.rmtree(aside, ignore_errors=True)

    def _swap(self, tmp: Path, aside: Path) -> None:
        """Rename the destination into ``aside`` (as 0, 1, ...) and ``tmp`` into its place."""
        target = self._target
        for attempt in range(ATTEMPTS):
            if target.is_dir():
                self._check_ours(target, first=attempt == 0)
                try:
                    os.replace(target, aside / str(attempt))
                except FileNotFoundError:  # another process moved it aside just now
                    pass
                else:
                    self.replaced |= _holds_files(aside / str(attempt))
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

    def _check_ours(self, target: Path, first: bool) -> None:
        """A folder that appeared since the check is replaced only if offeval wrote it."""
        if not first and not self.force and _foreign(target):
            raise OffevalError(
                f"{self.option} {self.path}: a folder that offeval did not write appeared "
                "there while it ran: choose another folder, or add --force"
            )


def _put_back(aside: Path, target: Path) -> None:
    """After a failed swap: the last folder renamed aside back in place, if the place is
    empty; ``aside`` deleted if nothing of it is needed (else left, as the module says)."""
    moved = sorted(aside.iterdir(), key=lambda p: int(p.name))
    try:
        if moved and not target.exists():
            os.replace(moved[-1], target)
    except OSError:
        return
    shutil.rmtree(aside, ignore_errors=True)


def _names(folder: Path) -> list[str]:
    """The names in ``folder``, read at once (none if it is gone: another run may be
    renaming its folder there)."""
    try:
        return os.listdir(folder)
    except FileNotFoundError:
        return []


def _holds_files(folder: Path) -> bool:
    """Whether ``folder`` holds anything besides offeval's marker."""
    return any(name != MARKER for name in _names(folder))


def _files(folder: Path) -> list[str]:
    """The files under ``folder`` (in its sub-folders too), as sorted relative paths."""
    return sorted(
        path.relative_to(folder).as_posix()
        for path in folder.rglob("*")
        if not path.is_dir() and path.name != MARKER
    )


def _not_written(folder: Path) -> list[str]:
    """The files in ``folder`` that offeval did not write: all of them without its marker,
    else those its marker does not list (none for a marker that lists no files: one
    written before markers listed them)."""
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
    """Whether ``folder`` holds files and not offeval's marker (one listing: the marker
    and the files are seen in the same folder)."""
    names = _names(folder)
    return bool(names) and MARKER not in names


def _umask() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return umask


class OutputFile(_Staged):
    """A destination file written whole or not at all, checked before the work that fills it.

    Built before the work: refused if the path is a folder, lies under a
    file, cannot be written, or is one of ``inputs``. ``with file as tmp:``
    yields a temporary path beside the destination, which replaces it when
    the block ends without an exception and is deleted otherwise, so a
    failure or Ctrl-C half way never leaves a truncated file. ``replaced``
    then says whether a file was there (a line on stderr says it too, unless
    ``quiet``).
    """

    def __init__(
        self,
        path: str | Path,
        *,
        option: str = "--out",
        inputs: Sequence = (),
        quiet: bool = False,
    ):
        self.path, self.option, self.quiet = Path(path), option, quiet
        self._target = target_of(self.path)
        self.replaced = False
        if self.path.is_dir():
            raise OffevalError(f"{option} {self.path}: is a folder; name a file")
        if any(self._target == target_of(p) for p in inputs):
            raise OffevalError(f"{option} {self.path}: is one of the inputs; name another file")
        base = nearest_existing(self._target.parent)
        if not base.is_dir():
            raise OffevalError(f"{option} {self.path}: {base} is a file, not a folder")
        if not os.access(base, os.W_OK | os.X_OK) or not _can_create_in(base):
            raise OffevalError(f"{option} {self.path}: cannot write in {base} (permission denied)")
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

    def _committed(self) -> None:
        if self.replaced and not self.quiet:
            print(f"replaced the earlier {self.path}", file=sys.stderr)
