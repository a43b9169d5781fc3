"""Re-indexing single files (what the server does on save): real LanceDB, real model."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path

import pytest

from codesift.indexer.embed import Embedder, Vectors, make_embedder
from codesift.indexer.errors import IndexMissingError
from codesift.indexer.freshen import embed_vectors, normalise_paths, optimize_index, reindex_paths
from codesift.indexer.search.hybrid import search
from codesift.indexer.search.results import SearchRequest
from codesift.indexer.search.symbols import find_symbols
from codesift.indexer.settings import Settings, load_settings
from codesift.indexer.sync import index_status, index_workspace, open_store

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    return make_embedder(Settings().embed)


def test_normalise_paths_drops_outside_paths_and_duplicates() -> None:
    assert normalise_paths(["a/b.py", "./a/b.py", "../x.py", "/etc/passwd", "c//d.py"]) == [
        "a/b.py",
        "c/d.py",
    ]


def test_reindex_paths_without_an_index_raises_index_missing(workspace: Path, embedder: Embedder) -> None:
    with pytest.raises(IndexMissingError):
        reindex_paths(workspace, load_settings(workspace), ["app/auth.py"], embedder=embedder)


def test_saved_new_function_is_found_by_bm25_symbols_and_vectors(workspace: Path, embedder: Embedder) -> None:
    settings = load_settings(workspace)
    index_workspace(workspace, settings, embedder=embedder)
    (workspace / "app" / "upload.py").write_text(
        "def compress_payload(blob):\n    '''Shrink the upload with zlib.'''\n    return blob\n",
        encoding="utf-8",
    )
    report = reindex_paths(workspace, settings, ["app/upload.py"], embedder=embedder)
    assert report.changed == ("app/upload.py",)
    assert report.vectors_pending == 0 and report.chunks_embedded >= 1
    store = open_store(workspace, settings)
    assert [h.symbol.name for h in find_symbols(store, "compress_payload")] == ["compress_payload"]
    assert find_symbols(store, "retry_upload") == []
    hits = search(store, SearchRequest("compress_payload", mode="bm25"), settings, root=workspace).hits
    assert hits and hits[0].chunk.path == "app/upload.py"
    vec = search(
        store, SearchRequest("shrink upload zlib", mode="vector"), settings, root=workspace, embedder=embedder
    ).hits
    assert vec and vec[0].chunk.path == "app/upload.py"


def test_deleted_and_ignored_paths_lose_their_rows(workspace: Path, embedder: Embedder) -> None:
    settings = load_settings(workspace)
    index_workspace(workspace, settings, embedder=embedder)
    (workspace / "app" / "config.py").unlink()
    (workspace / ".gitignore").write_text("web/\n", encoding="utf-8")
    report = reindex_paths(
        workspace, settings, ["app/config.py", "web/client.js", ".gitignore"], embedder=embedder, embed=False
    )
    assert set(report.removed) == {"app/config.py", "web/client.js"}
    store = open_store(workspace, settings)
    assert find_symbols(store, "parse_config") == [] and find_symbols(store, "ApiClient") == []
    assert index_status(workspace, settings).files_indexed == 4  # auth, upload, README, .gitignore


def test_vanished_directory_takes_its_files_along(workspace: Path, embedder: Embedder) -> None:
    settings = load_settings(workspace)
    index_workspace(workspace, settings, embedder=embedder, embed=False)
    for f in (workspace / "web").iterdir():
        f.unlink()
    (workspace / "web").rmdir()
    report = reindex_paths(workspace, settings, ["web"], embedder=embedder, embed=False)
    assert report.removed == ("web/client.js",)


def test_pending_vector_flag_matches_the_vectors_through_saves_and_embedding(
    workspace: Path, embedder: Embedder
) -> None:
    """``has_vector`` (what pending counts read) says exactly which chunks have a vector."""
    settings = load_settings(workspace)
    index_workspace(workspace, settings, embedder=embedder, embed=False)
    store = open_store(workspace, settings)

    def flags() -> list[tuple[str, bool, bool]]:
        rows = store.table("chunks").search().select(["path", "vector", "has_vector"]).limit(None).to_arrow()
        return [(r["path"], r["vector"] is not None, r["has_vector"]) for r in rows.to_pylist()]

    assert flags() and all(not has and not flag for _, has, flag in flags())
    (workspace / "app" / "upload.py").write_text("def shrink(blob):\n    return blob\n", encoding="utf-8")
    report = reindex_paths(workspace, settings, ["app/upload.py"], embedder=embedder, embed=False)
    assert report.vectors_pending == len(flags())
    reindex_paths(workspace, settings, ["app/auth.py", "app/upload.py"], embedder=embedder, embed=False)
    (workspace / "app" / "upload.py").write_text("def shrink(blob):\n    return blob[:1]\n", encoding="utf-8")
    reindex_paths(workspace, settings, ["app/upload.py"], embedder=embedder, embed=False)
    done = embed_vectors(workspace, settings, embedder=embedder, first=["app/upload.py"])
    assert done == len(flags())
    assert all(has and flag for _, has, flag in flags())
    assert index_status(workspace, settings).vectors_pending == 0


def test_optimize_after_saves_waits_until_enough_rows_piled_up(workspace: Path, embedder: Embedder) -> None:
    """A save's few rows are searched unindexed; the quiet-time optimize (which saves
    wait for) runs once 500 rows sit outside the indices, and folds them in."""
    settings = load_settings(workspace)
    index_workspace(workspace, settings, embedder=embedder, embed=False)
    store = open_store(workspace, settings)
    store.optimize()
    (workspace / "app" / "upload.py").write_text("def shrink(blob):\n    return blob\n", encoding="utf-8")
    reindex_paths(workspace, settings, ["app/upload.py"], embedder=embedder, embed=False)
    assert optimize_index(workspace, settings) is False
    many = "\n\n".join(f"def handler_{i}(x):\n    return x + {i}" for i in range(1200))
    (workspace / "app" / "many.py").write_text(many, encoding="utf-8")
    reindex_paths(workspace, settings, ["app/many.py"], embedder=embedder, embed=False)
    chunks = store.table("chunks")
    assert chunks.index_stats("search_text_idx").num_unindexed_rows >= 500
    assert optimize_index(workspace, settings) is True
    assert chunks.index_stats("search_text_idx").num_unindexed_rows == 0
    hits = search(store, SearchRequest("handler_1199", mode="bm25"), settings, root=workspace).hits
    assert hits and hits[0].chunk.path == "app/many.py"


def test_unchanged_file_is_not_rewritten(workspace: Path, embedder: Embedder) -> None:
    settings = load_settings(workspace)
    index_workspace(workspace, settings, embedder=embedder)
    (workspace / "app" / "auth.py").touch()
    report = reindex_paths(workspace, settings, ["app/auth.py"], embedder=embedder)
    assert report.changed == () and report.unchanged == 1 and report.chunks_written == 0


def test_embed_vectors_stops_when_cancelled_and_resumes(workspace: Path, embedder: Embedder) -> None:
    settings = load_settings(workspace)
    index_workspace(workspace, settings, embedder=embedder, embed=False)
    pending = index_status(workspace, settings).vectors_pending
    assert pending > 0
    stop = threading.Event()
    stop.set()
    assert embed_vectors(workspace, settings, embedder=embedder, cancel=stop) == 0
    assert embed_vectors(workspace, settings, embedder=embedder, first=["app/auth.py"]) == pending
    assert index_status(workspace, settings).vectors_pending == 0


class CancelAfterFirstCall:
    """The real embedder, but the caller's cancel is set once the first slice is embedded."""

    def __init__(self, inner: Embedder, stop: threading.Event) -> None:
        self.inner, self.stop, self.calls = inner, stop, 0

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    @property
    def dimension(self) -> int:
        return self.inner.dimension

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        self.calls += 1
        self.stop.set()
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> Vectors:
        return self.inner.embed_query(text)


def test_embed_vectors_cancelled_mid_pool_stores_the_slices_already_embedded(
    workspace: Path, embedder: Embedder
) -> None:
    settings = load_settings(workspace)
    index_workspace(workspace, settings, embedder=embedder, embed=False)
    pending = index_status(workspace, settings).vectors_pending
    assert pending > 3
    stop = threading.Event()
    cancelling = CancelAfterFirstCall(embedder, stop)
    # One pool (commit_chunks ≥ pending), slices of 2: the cancel lands after the first slice.
    done = embed_vectors(workspace, settings, embedder=cancelling, cancel=stop, step_chunks=2)
    assert cancelling.calls == 1
    assert 2 <= done < pending
    assert index_status(workspace, settings).vectors_pending == pending - done
    assert embed_vectors(workspace, settings, embedder=embedder) == pending - done
    assert index_status(workspace, settings).vectors_pending == 0
