"""What a search reads back from the index: whole chunks, read a column at a time,
each table's version checked once per search without ever hiding a commit from the
next search, and no table schema (real LanceDB, real tree-sitter)."""

from __future__ import annotations

from pathlib import Path

import pytest
from lancedb.table import AsyncTable

from codesift.indexer import uring
from codesift.indexer.embed import Embedder, make_embedder
from codesift.indexer.freshen import reindex_paths
from codesift.indexer.model import Chunk, ChunkKind
from codesift.indexer.rows import CHUNK_COLUMNS
from codesift.indexer.search.hybrid import search
from codesift.indexer.search.keyword import bm25
from codesift.indexer.search.results import SearchRequest
from codesift.indexer.settings import Settings, load_settings
from codesift.indexer.store import CHUNKS, FILES, fetch, load_chunks
from codesift.indexer.sync import index_status, index_workspace, open_store

from ..conftest import write_workspace


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    return make_embedder(Settings().embed)


def test_chunks_read_back_by_bm25_and_by_id_equal_the_stored_rows(tmp_path: Path) -> None:
    root = write_workspace(tmp_path / "ws")
    settings = load_settings(root)
    index_workspace(root, settings, embed=False)
    store = open_store(root, settings)
    rows = store.table(CHUNKS).to_arrow().to_pylist()
    stored = {
        r["id"]: Chunk(
            r["id"],
            r["path"],
            r["project"] or "",
            r["language"] or "",
            ChunkKind(r["kind"]),
            r["symbol"] or "",
            r["start_line"],
            r["end_line"],
            r["text"],
            r["content_hash"],
        )
        for r in rows
    }
    assert any(not c.symbol for c in stored.values())  # a block: no enclosing definition
    assert load_chunks(store, list(stored)) == stored
    hits = bm25(store, "retry upload", 50)
    assert hits and all(h.chunk == stored[h.chunk_id] for h in hits)


def test_a_search_checks_each_table_once_and_the_next_search_sees_a_new_commit(
    tmp_path: Path, embedder: Embedder
) -> None:
    root = write_workspace(tmp_path / "ws")
    settings = load_settings(root)
    index_workspace(root, settings, embedder=embedder, embed=False)
    store = open_store(root, settings)  # a long-lived reader, as the language server holds
    before = store.count(CHUNKS)
    upload = root / "app" / "upload.py"
    with store.pinned_versions():
        assert store.count(CHUNKS) == before
        upload.write_text(upload.read_text() + "\n\ndef quokka_marker(x):\n    return x\n")
        reindex_paths(root, settings, ["app/upload.py"], embedder=embedder, embed=False)
        # inside the block the versions read first stand: one search's notes agree
        assert store.count(CHUNKS) == before
    assert store.count(CHUNKS) == before + 1
    assert store.count(FILES) > 0
    result = search(store, SearchRequest("quokka_marker", mode="bm25"), settings, root=root)
    assert result.hits and result.hits[0].chunk.symbol == "quokka_marker"
    assert not result.hits[0].stale  # the files table's new version was read for it


def test_a_search_reads_no_table_schema_and_fetch_reads_lancedbs_own_rows(
    tmp_path: Path, embedder: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = write_workspace(tmp_path / "ws")
    settings = load_settings(root)
    index_workspace(root, settings, embedder=embedder)
    store = open_store(root, settings)
    where = "path = 'app/upload.py'"
    ours = fetch(store.query(CHUNKS).where(where).select(CHUNK_COLUMNS))
    theirs = store.table(CHUNKS).search().where(where).select(CHUNK_COLUMNS).limit(None).to_arrow()
    assert ours.num_rows > 0
    assert ours.schema == theirs.schema
    assert ours.sort_by("id").equals(theirs.sort_by("id"))
    search(store, SearchRequest("retry failed uploads"), settings, root=root, embedder=embedder)  # warm
    reads: list[str] = []
    schema = AsyncTable.schema

    async def counted(self: AsyncTable) -> object:
        reads.append(self.name)
        return await schema(self)

    monkeypatch.setattr(AsyncTable, "schema", counted)
    for mode in ("hybrid", "bm25", "vector"):
        result = search(
            store, SearchRequest("retry failed uploads", mode=mode), settings, root=root, embedder=embedder
        )
        assert result.hits
    assert reads == []


def test_an_index_read_through_io_uring_answers_as_one_read_the_plain_way(
    tmp_path: Path, embedder: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = write_workspace(tmp_path / "ws")
    settings = load_settings(root)
    index_workspace(root, settings, embedder=embedder)
    monkeypatch.delenv(uring.ENV, raising=False)  # on by default where the kernel allows it
    uring.available.cache_clear()
    through = open_store(root, settings)
    assert through.reader == ("io_uring" if uring.available() else "pread")
    assert index_status(root, settings).reader == through.reader
    monkeypatch.setenv(uring.ENV, "0")
    uring.available.cache_clear()
    plain = open_store(root, settings)
    uring.available.cache_clear()
    assert plain._read_uri is None and plain.reader == "pread"
    for mode in ("hybrid", "bm25", "vector"):
        request = SearchRequest("retry failed uploads", mode=mode)
        a = search(through, request, settings, root=root, embedder=embedder)
        b = search(plain, request, settings, root=root, embedder=embedder)
        assert a.hits and [(h.chunk, h.score) for h in a.hits] == [(h.chunk, h.score) for h in b.hits]


def _tree(top: Path) -> set[str]:
    return {str(p.relative_to(top)) for p in top.rglob("*") if ".codesift" not in p.parts}


@pytest.mark.parametrize("name", ["ws", "a b#c%20d"])
def test_reading_through_io_uring_creates_nothing_in_the_working_directory_or_workspace(
    tmp_path: Path, embedder: Embedder, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    """A language server's working directory is its workspace: a folder made there (as
    connecting to ``file+uring:///abs`` made ``file+uring:/abs/…``) is a change its
    watcher re-indexes. A folder name Lance would decode as another path reads its own."""
    root = write_workspace(tmp_path / name)
    settings = load_settings(root)
    index_workspace(root, settings, embedder=embedder)
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    monkeypatch.delenv(uring.ENV, raising=False)
    uring.available.cache_clear()
    before = _tree(tmp_path)
    for cwd in (root, elsewhere):
        monkeypatch.chdir(cwd)
        store = open_store(root, settings)
        for mode in ("hybrid", "bm25", "vector"):
            request = SearchRequest("retry failed uploads", mode=mode)
            assert search(store, request, settings, root=root, embedder=embedder).hits
        assert store.reader == ("io_uring" if uring.available() else "pread")
        assert index_status(root, settings).exists
    assert _tree(tmp_path) == before


def test_searches_read_the_plain_way_when_the_io_uring_connection_fails(tmp_path: Path) -> None:
    root = write_workspace(tmp_path / "ws")
    settings = load_settings(root)
    index_workspace(root, settings, embed=False)
    store = open_store(root, settings)
    store._read_uri = uring.SCHEME + str(tmp_path / "nowhere")  # as a refused ring would fail
    result = search(store, SearchRequest("retry upload", mode="bm25"), settings, root=root)
    assert result.hits and result.hits[0].chunk.symbol == "retry_upload"
    assert store._read_uri is None


def test_a_hybrid_search_reads_each_tables_version_once_across_its_threads(
    tmp_path: Path, embedder: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sources and lookups run on worker threads; they read versions with the
    searching thread (``pinned_versions(share=…)``), the three the search needs first
    at once (``pin_versions``)."""
    root = write_workspace(tmp_path / "ws")
    settings = load_settings(root)
    index_workspace(root, settings, embedder=embedder)
    store = open_store(root, settings)
    request = SearchRequest("retry failed uploads", mode="hybrid")
    before = search(store, request, settings, root=root, embedder=embedder)  # warm
    reads: list[str] = []
    version = AsyncTable.version

    async def counted(self: AsyncTable) -> int:
        reads.append(self.name)
        return await version(self)

    monkeypatch.setattr(AsyncTable, "version", counted)
    for _ in range(3):
        reads.clear()
        result = search(store, request, settings, root=root, embedder=embedder)
        assert [(h.chunk, h.score, h.sources) for h in result.hits] == [
            (h.chunk, h.score, h.sources) for h in before.hits
        ]
        assert sorted(reads) == sorted(set(reads)) and set(reads) <= {CHUNKS, FILES, "meta"}


def test_an_error_of_the_exact_source_reaches_the_caller_as_before(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Hybrid's exact source runs on BM25's worker now; what it raises is raised by the
    search, not taken for a failed BM25 source."""
    from codesift.indexer.errors import QueryError
    from codesift.indexer.search import exact

    root = write_workspace(tmp_path / "ws")
    settings = load_settings(root)
    index_workspace(root, settings, embed=False)
    store = open_store(root, settings)

    def refuse(*args: object, **kwargs: object) -> list[str]:
        raise QueryError("pattern refused")

    monkeypatch.setattr(exact, "exact_chunks", refuse)
    with pytest.raises(QueryError, match="pattern refused"):
        search(store, SearchRequest("retry upload", mode="hybrid"), settings, root=root)
