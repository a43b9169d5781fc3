"""The two-tier index with the real models and real LanceDB: the static model's vectors
written with the text phase, MiniLM's filling in behind, each search reading one tier
and saying which, and old or differently-tiered indexes rebuilt with a reason."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from codesift.indexer.embed import fast_tier_embedder, make_embedder
from codesift.indexer.freshen import embed_vectors, reindex_paths
from codesift.indexer.progress import Progress
from codesift.indexer.search.hybrid import search
from codesift.indexer.search.results import Filters, SearchRequest, SearchResult, Source
from codesift.indexer.settings import Settings, load_settings
from codesift.indexer.static_embed import STATIC_MODEL
from codesift.indexer.store import FAST_EMBEDDED, FAST_PENDING, PENDING, IndexMeta, Store
from codesift.indexer.sync import index_status, index_uri_for, index_workspace

pytestmark = pytest.mark.slow

STATIC_ID = f"static:{STATIC_MODEL}"
MINILM_ID = "onnx:all-MiniLM-L6-v2-int8"
QUERY = "read the configuration file"


def _search(workspace: Path, settings: Settings, request: SearchRequest) -> SearchResult:
    store = Store(index_uri_for(workspace, settings))
    return search(store, request, settings, root=workspace, embedder=make_embedder(settings.embed))


def test_a_default_index_holds_both_tiers_and_its_meta_names_both_models(workspace: Path) -> None:
    settings = load_settings(workspace)
    report = index_workspace(workspace, settings)
    # Every chunk got its static vector with the text phase, and its MiniLM vector after.
    assert report.chunks_embedded_fast == report.chunks_written > 0
    assert report.chunks_embedded == report.chunks_written
    store = Store(index_uri_for(workspace, settings))
    meta = store.read_meta()
    assert meta is not None
    assert (meta.model_id, meta.dimension) == (MINILM_ID, 384)
    assert (meta.fast_model_id, meta.fast_dimension) == (STATIC_ID, 256)
    chunks = store.table("chunks").to_arrow()
    assert {len(v) for v in chunks.column("fast_vector").to_pylist()} == {256}
    assert {len(v) for v in chunks.column("vector").to_pylist()} == {384}
    status = index_status(workspace, settings)
    assert status.fast_model == STATIC_ID
    assert (status.fast_vectors_done, status.fast_vectors_pending) == (status.chunks, 0)
    assert (status.vectors_done, status.vectors_pending) == (status.chunks, 0)


def test_a_search_before_minilm_finishes_says_static_scored_it_and_after_says_minilm(
    workspace: Path,
) -> None:
    settings = load_settings(workspace)
    during: list[SearchResult] = []

    def on_progress(p: Progress) -> None:
        # The text phase is over and MiniLM has not embedded a chunk yet: a reader
        # (its own store, as the language server's) searches the index as it stands.
        if p.phase == "embed" and p.done == 0 and not during:
            during.append(_search(workspace, settings, SearchRequest(QUERY)))

    index_workspace(workspace, settings, progress=on_progress)
    assert during, "the vectors phase never started"
    before = during[0]
    assert before.report.vector_model == STATIC_ID
    assert before.hits[0].chunk.path == "app/config.py"
    semantic = [h for h in before.hits if Source.SEMANTIC in h.sources]
    assert semantic and {h.vector_model for h in semantic} == {STATIC_ID}
    assert all(h.vector_model == "" for h in before.hits if Source.SEMANTIC not in h.sources)
    assert any("fast static model" in n for n in before.report.notes)

    after = _search(workspace, settings, SearchRequest(QUERY))
    assert after.report.vector_model == MINILM_ID
    assert after.hits[0].chunk.path == "app/config.py"
    assert {h.vector_model for h in after.hits if Source.SEMANTIC in h.sources} == {MINILM_ID}
    assert not any("fast static model" in n or "incomplete" in n for n in after.report.notes)


def test_a_search_whose_scope_minilm_covers_reads_minilm_while_the_rest_reads_static(
    workspace: Path,
) -> None:
    settings = load_settings(workspace)
    index_workspace(workspace, settings)
    (workspace / "app" / "cache.py").write_text(
        "def load_cached_settings(path):\n    '''Read settings from a cache file.'''\n"
        "    return open(path).read()\n",
        encoding="utf-8",
    )
    # A second run stopped as its vectors phase starts: the new file has its static
    # vectors (written with its rows) and no MiniLM vector yet.
    cancel = threading.Event()

    def on_progress(p: Progress) -> None:
        if p.phase == "embed":
            cancel.set()

    index_workspace(workspace, settings, progress=on_progress, cancel=cancel)
    store = Store(index_uri_for(workspace, settings))
    assert store.count("chunks", PENDING) > 0 and store.count("chunks", FAST_PENDING) == 0

    everywhere = _search(workspace, settings, SearchRequest(QUERY, mode="vector"))
    assert everywhere.report.vector_model == STATIC_ID
    assert "app/cache.py" in {h.chunk.path for h in everywhere.hits}
    scoped = _search(
        workspace, settings, SearchRequest(QUERY, mode="vector", filters=Filters(exclude=("app/cache.py",)))
    )
    assert scoped.report.vector_model == MINILM_ID
    assert scoped.hits and all(h.vector_model == MINILM_ID for h in scoped.hits)

    index_workspace(workspace, settings)  # MiniLM catches up: the whole index reads it again
    assert _search(workspace, settings, SearchRequest(QUERY)).report.vector_model == MINILM_ID


def test_a_saved_file_is_searchable_by_the_static_model_with_its_rows(workspace: Path) -> None:
    settings = load_settings(workspace)
    index_workspace(workspace, settings, embed=False)
    store = Store(index_uri_for(workspace, settings))
    # --no-embed leaves both tiers pending; nothing semantic to read.
    assert store.count("chunks", FAST_EMBEDDED) == 0
    (workspace / "app" / "mail.py").write_text(
        "def send_welcome_mail(user):\n    '''Email a greeting to a new user.'''\n    return user\n",
        encoding="utf-8",
    )
    embedder = make_embedder(settings.embed)
    reindex_paths(workspace, settings, ["app/mail.py"], embedder=embedder, embed=True)
    rows = store.table("chunks").search().where("path = 'app/mail.py'").to_arrow().to_pylist()
    assert rows and all(r["has_fast_vector"] and len(r["fast_vector"]) == 256 for r in rows)
    # The next run fills the fast tier of the rest first, then MiniLM.
    report = index_workspace(workspace, settings)
    assert store.count("chunks", FAST_PENDING) == 0 and store.count("chunks", PENDING) == 0
    assert report.chunks_embedded_fast > 0


def test_an_index_of_the_previous_schema_rebuilds_with_the_reason(workspace: Path) -> None:
    settings = load_settings(workspace)
    store = Store(index_uri_for(workspace, settings))
    store.create(IndexMeta(5, MINILM_ID, 384, settings.index_fingerprint()))
    report = index_workspace(workspace, settings)
    assert report.rebuilt and report.rebuild_reason == "schema version 5 → 6"
    assert _search(workspace, settings, SearchRequest(QUERY)).report.vector_model == MINILM_ID


def test_turning_the_fast_tier_off_rebuilds_naming_the_tier_and_searches_read_minilm(
    workspace: Path,
) -> None:
    index_workspace(workspace, load_settings(workspace))
    one_tier = load_settings(workspace, {"embed": {"fast_tier": False}})
    assert fast_tier_embedder(one_tier.embed, MINILM_ID) is None
    report = index_workspace(workspace, one_tier)
    assert report.rebuilt and report.rebuild_reason == f"fast tier {STATIC_ID} (256) → none"
    assert report.chunks_embedded_fast == 0
    store = Store(index_uri_for(workspace, one_tier))
    assert "fast_vector" not in store.table("chunks").schema.names
    assert index_status(workspace, one_tier).fast_model == ""
    assert _search(workspace, one_tier, SearchRequest(QUERY)).report.vector_model == MINILM_ID


def test_the_static_model_as_the_main_model_has_no_second_tier(workspace: Path) -> None:
    static = load_settings(workspace, {"embed": {"model": STATIC_MODEL}})
    report = index_workspace(workspace, static)
    assert report.chunks_embedded == report.chunks_written and report.chunks_embedded_fast == 0
    meta = Store(index_uri_for(workspace, static)).read_meta()
    assert meta is not None and meta.model_id == STATIC_ID and meta.fast_model_id == ""
    assert _search(workspace, static, SearchRequest(QUERY)).report.vector_model == STATIC_ID


def test_the_language_servers_order_text_then_static_vectors_then_minilm(workspace: Path) -> None:
    # The server's child: a text phase without vectors (grep, BM25, symbols at once),
    # then embed_vectors, which fills the fast tier first and MiniLM behind it.
    settings = load_settings(workspace)
    index_workspace(workspace, settings, embed=False)
    text_only = _search(workspace, settings, SearchRequest(QUERY))
    assert text_only.report.vector_model == "" and text_only.hits
    phases: list[str] = []
    during: list[SearchResult] = []

    def on_progress(p: Progress) -> None:
        phases.append(p.phase)
        if p.phase == "embed" and p.done == 0 and not during:
            during.append(_search(workspace, settings, SearchRequest(QUERY)))

    embed_vectors(workspace, settings, embedder=make_embedder(settings.embed), progress=on_progress)
    assert phases.index("fast vectors") < phases.index("embed")
    assert during and during[0].report.vector_model == STATIC_ID
    assert _search(workspace, settings, SearchRequest(QUERY)).report.vector_model == MINILM_ID


def _many_chunks(root: Path, files: int = 60, functions: int = 30) -> None:
    """``files`` × ``functions`` small functions: over ``needs_optimize``'s 500 rows."""
    for f in range(files):
        body = "".join(
            f"def handler_{f}_{i}(payload):\n    return payload + {i}  # step {i} of module {f}\n\n\n"
            for i in range(functions)
        )
        (root / "many" / f"mod_{f}.py").parent.mkdir(parents=True, exist_ok=True)
        (root / "many" / f"mod_{f}.py").write_text(body)


def _unindexed(settings: Settings, workspace: Path) -> int:
    chunks = Store(index_uri_for(workspace, settings)).table("chunks")
    stats = chunks.index_stats("search_text_idx")
    assert stats is not None
    return int(stats.num_unindexed_rows)


@pytest.mark.parametrize("runner", ["codesift index", "language server"])
def test_rows_a_run_wrote_are_in_the_indices_before_minilm_starts(workspace: Path, runner: str) -> None:
    # The text phase's new rows, and every row the fast tier rewrote, used to wait
    # outside the FTS index for the vectors phase's first optimize, minutes later on a
    # large tree: every search scanned them (BM25 ~0.7 s at 51k such rows).
    settings = load_settings(workspace)
    index_workspace(workspace, settings)
    _many_chunks(workspace)
    seen: list[int] = []
    stop = threading.Event()

    def on_progress(p: Progress) -> None:
        if p.phase == "embed" and not seen:
            seen.append(_unindexed(settings, workspace))
            stop.set()  # answered: MiniLM need not embed every chunk

    if runner == "codesift index":
        index_workspace(workspace, settings, progress=on_progress, cancel=stop)
    else:
        index_workspace(workspace, settings, embed=False)
        embed_vectors(
            workspace, settings, embedder=make_embedder(settings.embed), progress=on_progress, cancel=stop
        )
    assert seen == [0]
