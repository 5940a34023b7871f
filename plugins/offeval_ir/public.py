"""Public data sets read from archives on the package index, cached on this machine.

Some public data ship inside Python packages: MovieLens-100k, for one, is in
the ``recbole`` wheel. :func:`package_file` fetches one file (a member) of a
package's wheel or source archive with the package index's ordinary client,
``python -m pip download --no-deps``, without installing the package, and
keeps it in a cache folder: later calls read the cached copy and need no
network. pip's own settings apply (``PIP_INDEX_URL``, ``PIP_FIND_LINKS``,
``PIP_NO_INDEX``, a proxy, ``pip.conf``).

The cache folder is :func:`data_home`: the environment variable
``OFFEVAL_DATA`` when set, else the user's cache folder (``$XDG_CACHE_HOME``
or ``~/.cache`` on Linux, ``~/Library/Caches`` on macOS, ``%LOCALAPPDATA%``
on Windows) with ``offeval`` appended. A file is cached at
``<data_home>/<package>-<version>/<member>``; putting a copy there by hand
works on a machine without network.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path, PurePosixPath

from offeval import ConfigurationError, OffevalError
from offeval.plugin import OutputFile, check_choice

#: The environment variable naming the cache folder of public data.
DATA_ENV = "OFFEVAL_DATA"
#: Archive kinds :func:`package_file` reads: a wheel (a zip) or a source archive.
KINDS = ("wheel", "sdist")
#: Seconds pip may take to download an archive before offeval gives up.
DOWNLOAD_SECONDS = 300


class DownloadError(OffevalError):
    """A public data file could not be fetched (no network, unknown package or member)."""


def data_home() -> Path:
    """The cache folder of public data: ``$OFFEVAL_DATA``, else the user's cache folder
    with ``offeval`` appended (see the module docstring)."""
    given = os.environ.get(DATA_ENV)
    if given:
        return Path(given).expanduser()
    if sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
        return base / "offeval" / "Cache"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches" / "offeval"
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "offeval"


def _safe_member(member: str) -> PurePosixPath:
    path = PurePosixPath(member)
    if not member or path.is_absolute() or ".." in path.parts:
        raise ConfigurationError(
            f"member must be a relative path inside the archive, got {member!r}"
        )
    return path


def package_file(
    package: str,
    member: str,
    *,
    version: str | None = None,
    kind: str = "wheel",
    sha256: str | None = None,
    home: str | os.PathLike | None = None,
) -> Path:
    """The cached copy of file ``member`` of ``package``'s wheel (or source archive).

    ``member`` is the file's path inside the archive (in a source archive,
    after its top folder ``<package>-<version>/``). ``version`` pins the
    release (the newest when None, cached as ``latest``); ``sha256``, when
    given, is checked against the file's contents. ``home`` overrides
    :func:`data_home`. Raises :class:`DownloadError` when the archive cannot
    be downloaded (no network, an unknown package or version), lacks the
    member, or the contents do not match ``sha256``.
    """
    check_choice(kind, "kind", KINDS)
    if not isinstance(package, str) or not package or any(c in package for c in "=<>!~ ;/"):
        raise ConfigurationError(f"package must be a package name, got {package!r}")
    path = _safe_member(member)
    folder = Path(home) if home is not None else data_home()
    cached = folder / f"{package}-{version or 'latest'}" / path
    if cached.is_file():
        _check_hash(cached.read_bytes(), sha256, f"the cached {cached}")
        return cached
    written = OutputFile(cached, option="the data cache", quiet=True)  # checked before pip runs
    data = _download_member(package, version, kind, path, cached)
    _check_hash(data, sha256, f"{member} of {package}")
    with written as tmp:  # the cached file appears whole or not at all
        tmp.write_bytes(data)
    return cached


def _check_hash(data: bytes, sha256: str | None, what: str) -> None:
    if sha256 is not None and hashlib.sha256(data).hexdigest() != sha256.lower():
        raise DownloadError(
            f"{what} has sha256 {hashlib.sha256(data).hexdigest()}, expected {sha256}: "
            "delete it to fetch it again"
        )


def _download_member(
    package: str, version: str | None, kind: str, member: PurePosixPath, cached: Path
) -> bytes:
    """Download the archive into a temporary folder with pip and read ``member`` from it."""
    requirement = f"{package}=={version}" if version else package
    binary = ["--only-binary", ":all:"] if kind == "wheel" else ["--no-binary", ":all:"]
    with tempfile.TemporaryDirectory() as folder:
        command = [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-deps",
            *binary,
            "--disable-pip-version-check",
            "--no-input",
            "--quiet",
            "--dest",
            folder,
            requirement,
        ]
        try:
            done = subprocess.run(
                command, capture_output=True, text=True, timeout=DOWNLOAD_SECONDS, check=False
            )
        except (OSError, subprocess.TimeoutExpired) as error:
            raise DownloadError(f"could not download {requirement} with pip: {error}") from None
        archives = [p for p in Path(folder).iterdir() if p.is_file()]
        if done.returncode != 0 or len(archives) != 1:
            lines = [line.strip() for line in (done.stderr or done.stdout).splitlines()]
            why = next((line for line in reversed(lines) if line.startswith("ERROR")), None)
            why = why or (lines[-1] if lines else f"pip exited with {done.returncode}")
            raise DownloadError(
                f"could not download {requirement} from the package index ({why}); without "
                f"a network, put {member.name} there by hand: {cached}"
            )
        return read_member(archives[0], member)


def read_member(archive: str | os.PathLike, member: str | PurePosixPath) -> bytes:
    """The bytes of ``member`` in a wheel or zip (its path), or a source archive
    (``.tar.gz`` and the like: its path after the archive's top folder)."""
    archive, member = Path(archive), _safe_member(str(member))
    try:
        if zipfile.is_zipfile(archive):
            with zipfile.ZipFile(archive) as zipped:
                names = zipped.namelist()
                name = _find(names, member, archive)
                return zipped.read(name)
        with tarfile.open(archive) as tarred:
            names = [m.name for m in tarred.getmembers() if m.isfile()]
            name = _find(names, member, archive)
            extracted = tarred.extractfile(name)
            assert extracted is not None  # a regular file
            return extracted.read()
    except (OSError, tarfile.TarError, zipfile.BadZipFile) as error:
        raise DownloadError(f"cannot read {archive.name}: {error}") from None


def _find(names: list[str], member: PurePosixPath, archive: Path) -> str:
    """The archive's name of ``member``: itself, or under one top folder (source archives)."""
    wanted = str(member)
    if wanted in names:
        return wanted
    for name in names:
        if name == wanted or (name.count("/") and name.split("/", 1)[1] == wanted):
            return name
    raise DownloadError(f"{archive.name} has no file {wanted}")
