"""Files from package-index archives: read from a wheel built here, cached, and a clear error
when pip cannot download (no network is used: pip reads a local folder or a dead address)."""

from __future__ import annotations

import hashlib
import io
import os
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from offeval.errors import ConfigurationError, OffevalError
from offeval_ir import public
from offeval_ir.public import DownloadError, data_home, package_file, read_member

MEMBER = "fakedata/examples/ratings.tsv"
CONTENT = b"user\titem\n1\t2\n"


def build_wheel(folder: Path, version: str = "1.0") -> Path:
    """A minimal valid wheel of the package ``fakedata`` holding one data file."""
    path = folder / f"fakedata-{version}-py3-none-any.whl"
    info = f"fakedata-{version}.dist-info"
    files = {
        MEMBER: CONTENT,
        "fakedata/__init__.py": b"",
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: fakedata\nVersion: {version}\n".encode(),
        f"{info}/WHEEL": b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
        b"Tag: py3-none-any\n",
    }
    record = "".join(f"{name},,\n" for name in [*files, f"{info}/RECORD"])
    files[f"{info}/RECORD"] = record.encode()
    with zipfile.ZipFile(path, "w") as wheel:
        for name, data in files.items():
            wheel.writestr(name, data)
    return path


@pytest.fixture
def offline_index(tmp_path, monkeypatch):
    """pip sees only a local folder of archives (no index, no configuration files)."""
    links = tmp_path / "links"
    links.mkdir()
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(links))
    monkeypatch.setenv(public.DATA_ENV, str(tmp_path / "cache"))
    return links


def test_members_are_read_from_wheels_and_source_archives(tmp_path):
    wheel = build_wheel(tmp_path)
    assert read_member(wheel, MEMBER) == CONTENT
    sdist = tmp_path / "fakedata-1.0.tar.gz"
    with tarfile.open(sdist, "w:gz") as tarred:
        entry = tarfile.TarInfo(f"fakedata-1.0/{MEMBER}")
        entry.size = len(CONTENT)
        tarred.addfile(entry, io.BytesIO(CONTENT))
    assert read_member(sdist, MEMBER) == CONTENT
    with pytest.raises(DownloadError, match="fakedata-1.0.tar.gz has no file fakedata/other.tsv"):
        read_member(sdist, "fakedata/other.tsv")
    with pytest.raises(ConfigurationError, match="relative path inside the archive"):
        read_member(wheel, "../etc/passwd")


def test_pip_downloads_the_archive_and_the_member_is_cached(offline_index, tmp_path):
    build_wheel(offline_index)
    digest = hashlib.sha256(CONTENT).hexdigest()
    path = package_file("fakedata", MEMBER, version="1.0", sha256=digest)
    assert path == tmp_path / "cache" / "fakedata-1.0" / MEMBER
    assert path.read_bytes() == CONTENT
    for archive in offline_index.iterdir():
        archive.unlink()  # nothing left to download: the cache answers
    assert package_file("fakedata", MEMBER, version="1.0", sha256=digest) == path
    with pytest.raises(DownloadError, match="expected 00"):
        package_file("fakedata", MEMBER, version="1.0", sha256="00" * 32)
    with pytest.raises(DownloadError, match=r"could not download fakedata==2\.0"):
        package_file("fakedata", MEMBER, version="2.0")


def test_a_member_the_archive_lacks_is_named(offline_index):
    build_wheel(offline_index)
    with pytest.raises(DownloadError, match="fakedata-1.0-py3-none-any.whl has no file x/y.csv"):
        package_file("fakedata", "x/y.csv", version="1.0")


def test_without_network_the_error_is_one_line_naming_the_package_and_the_cache(
    tmp_path, monkeypatch
):
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    monkeypatch.setenv("PIP_INDEX_URL", "http://127.0.0.1:9/simple")  # nothing listens there
    monkeypatch.setenv("PIP_RETRIES", "0")
    monkeypatch.setenv("PIP_TIMEOUT", "5")
    with pytest.raises(DownloadError) as caught:
        package_file("recbole", MEMBER, version="1.2.1", home=tmp_path)
    message = str(caught.value)
    assert isinstance(caught.value, OffevalError) and "\n" not in message
    assert message.startswith("could not download recbole==1.2.1 from the package index (")
    assert message.endswith(str(tmp_path / "recbole-1.2.1" / MEMBER))


def test_the_cache_folder_is_offeval_data_else_the_users_cache(monkeypatch, tmp_path):
    monkeypatch.setenv(public.DATA_ENV, str(tmp_path / "mine"))
    assert data_home() == tmp_path / "mine"
    monkeypatch.delenv(public.DATA_ENV)
    if sys.platform.startswith("linux"):
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
        assert data_home() == tmp_path / "xdg" / "offeval"


def test_bad_arguments_are_configuration_errors(tmp_path):
    with pytest.raises(ConfigurationError, match="kind must be one of"):
        package_file("fakedata", MEMBER, kind="egg", home=tmp_path)
    with pytest.raises(ConfigurationError, match="package must be a package name"):
        package_file("fakedata==1.0", MEMBER, home=tmp_path)
    with pytest.raises(ConfigurationError, match="member must be a relative path"):
        package_file("fakedata", "/abs/file", home=tmp_path)
