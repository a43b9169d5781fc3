"""Which URI a local index's searches read it at: through io_uring when this process may
use it, never for an object store."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from codesift.indexer import uring


@pytest.fixture(autouse=True)
def fresh_probe(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv(uring.ENV, "1")  # off by default: these tests ask for it
    uring.available.cache_clear()
    yield
    uring.available.cache_clear()


def test_io_uring_reads_are_off_unless_asked_for(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv(uring.ENV)
    uring.available.cache_clear()
    assert not uring.available() and uring.read_uri(str(tmp_path)) is None


def test_object_stores_are_read_as_given() -> None:
    assert uring.read_uri("s3://bucket/index") is None
    assert uring.read_uri("file+uring:///tmp/x") is None


def test_a_local_index_is_read_through_io_uring_when_the_process_may(tmp_path: Path) -> None:
    local = str(tmp_path / "idx")
    if uring.available():
        assert uring.read_uri(local) == uring.SCHEME + local
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
    assert uring.read_uri("idx") == uring.SCHEME + str(tmp_path / "idx")
