"""Which tables of an index share files with another index, and what status says of them."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

from codesift.indexer.compaction import EXTRA, LINKS_HINT, is_linked, linked_bytes, linked_tables
from codesift.indexer.model import IndexStatus
from codesift.server.cli import _linked_rows


def table(index: Path, name: str, data: bytes = b"rows") -> Path:
    folder = index / f"{name}.lance" / "data"
    folder.mkdir(parents=True)
    (folder / "a.lance").write_bytes(data)
    return folder / "a.lance"


def test_a_table_is_linked_while_one_of_its_data_files_has_another_name(tmp_path: Path) -> None:
    mine, theirs = tmp_path / "mine", tmp_path / "theirs"
    shared = table(theirs, "chunks", b"x" * 1000)
    (mine / "chunks.lance" / "data").mkdir(parents=True)
    os.link(shared, mine / "chunks.lance" / "data" / "a.lance")
    table(mine, "symbols")
    assert linked_tables(str(mine), ["chunks", "symbols", "edges"]) == ["chunks"]
    assert linked_bytes(str(mine)) == 1000
    shared.unlink()  # the sibling let go of it: the file is this index's alone
    assert not is_linked(mine / "chunks.lance")
    assert linked_bytes(str(mine)) == 0


def test_an_object_store_index_is_never_linked(tmp_path: Path) -> None:
    assert linked_tables("s3://bucket/index", ["chunks"]) == []
    assert linked_bytes("s3://bucket/index") == 0


def test_status_says_whether_the_next_optimize_keeps_the_shared_files() -> None:
    st = IndexStatus(root="/r", index_path="/r/.codesift", exists=True, linked_bytes=6_700_000)
    ((_, kept),) = _linked_rows(st)
    assert kept == "6.7 MB by hard links, kept through optimizes"
    ((_, decays),) = _linked_rows(replace(st, links_kept=False))
    assert "the next optimize rewrites them" in decays and EXTRA in LINKS_HINT
    assert "\\[worktrees]" in decays  # rich markup would eat the extra's brackets
    assert _linked_rows(IndexStatus(root="/r", index_path="/r/.codesift", exists=True)) == []
