"""One file can never stop an index run: at worst it is listed as failed with its reason."""

from __future__ import annotations

from pathlib import Path

import pytest

from codesift.indexer import filework
from codesift.indexer.model import FileStatus
from codesift.indexer.settings import Settings
from codesift.indexer.workspace import walk


def test_an_unexpected_parser_error_marks_the_file_failed_with_its_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "deep.py").write_text("x = 1\n")

    def explode(*args: object, **kwargs: object) -> None:
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(filework, "parse_file", explode)
    (entry,) = walk(tmp_path, Settings().index)
    write = filework.process_file(entry, "", Settings(), "p")
    assert write is not None and write.record.status is FileStatus.FAILED
    assert write.record.reason == "parser error: RecursionError: maximum recursion depth exceeded"
    assert write.chunks == ()


def test_parse_workers_one_per_core_on_a_large_run_none_on_a_small_one_or_when_set_to_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from codesift.indexer.settings import IndexSettings

    def with_workers(n: int) -> Settings:
        return Settings(index=IndexSettings(parse_workers=n))

    big, small = filework.PARALLEL_MIN_FILES, filework.PARALLEL_MIN_FILES - 1
    monkeypatch.setattr(filework, "cores", lambda: 2)
    assert filework.parse_workers(with_workers(0), big) == 2
    assert filework.parse_workers(with_workers(0), small) == 0
    assert filework.parse_workers(with_workers(1), big) == 0
    assert filework.parse_workers(with_workers(3), big) == 3
    monkeypatch.setattr(filework, "cores", lambda: 1)
    assert filework.parse_workers(with_workers(0), big) == 0
