"""Which URI a local index's searches read it at: through io_uring when this process may
use it, never for an object store."""

from __future__ import annotations

import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import pytest

from codesift.indexer import uring


@pytest.fixture(autouse=True)
def fresh_probe(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv(uring.ENV, "1")
    uring.available.cache_clear()
    yield
    uring.available.cache_clear()


def test_io_uring_reads_are_on_unless_turned_off(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    asked = uring.available()
    monkeypatch.delenv(uring.ENV)
    uring.available.cache_clear()
    assert uring.available() == asked  # where the kernel allows it: the probe decides
    assert (uring.read_uri(str(tmp_path)) is not None) == asked


def test_a_folder_name_lance_would_decode_is_percent_encoded(tmp_path: Path) -> None:
    if not uring.available():
        pytest.skip("io_uring is not available to this process")
    odd = tmp_path / "a b#c%20d?e"
    uri = uring.read_uri(str(odd))
    assert uri == uring.SCHEME + str(tmp_path) + "/a%20b%23c%2520d%3Fe"
    assert uring.table_location(uri, "chunks") == uri + "/chunks.lance"
    assert urllib.parse.unquote(uri.removeprefix(uring.SCHEME)) == str(odd)


def test_object_stores_are_read_as_given() -> None:
    assert uring.read_uri("s3://bucket/index") is None
    assert uring.read_uri("file+uring:///tmp/x") is None


def test_a_local_index_is_read_through_io_uring_when_the_process_may(tmp_path: Path) -> None:
    local = str(tmp_path / "idx")
    if uring.available():
        assert uring.read_uri(local) == uring.SCHEME + urllib.parse.quote(local, safe="/")
    else:
        assert uring.read_uri(local) is None


@pytest.mark.parametrize("off", ["0", "false", "off", "no"])
def test_the_environment_turns_io_uring_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, off: str
) -> None:
    monkeypatch.setenv(uring.ENV, off)
    assert not uring.available()
    assert uring.read_uri(str(tmp_path)) is None


def test_a_relative_local_path_is_made_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    if not uring.available():
        pytest.skip("io_uring is not available to this process")
    assert uring.read_uri("idx") == uring.SCHEME + urllib.parse.quote(str(tmp_path / "idx"), safe="/")
