"""Vector index policy: brute force below ``index.vector_index_rows`` vectors, an
approximate IVF_HNSW_SQ index at or above it, and the same answers either way — for
MiniLM's column and for the fast tier's, whose index is built before MiniLM starts."""

from __future__ import annotations

from pathlib import Path

import pytest

from codesift.indexer.embed import Embedder, make_embedder
from codesift.indexer.freshen import embed_vectors, reindex_paths
from codesift.indexer.indices import has_vector_index
from codesift.indexer.progress import Progress
from codesift.indexer.search.hybrid import search
from codesift.indexer.search.results import SearchRequest, Source
from codesift.indexer.settings import Settings, load_settings
from codesift.indexer.store import Store
from codesift.indexer.sync import index_workspace, open_store

from ..conftest import write_workspace

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    return make_embedder(Settings().embed)


def top_paths(root: Path, settings: Settings, embedder: Embedder, query: str) -> list[str]:
    res = search(
        open_store(root, settings),
        SearchRequest(query, mode="vector", limit=3),
        settings,
        root=root,
        embedder=embedder,
    )
    return [h.chunk.path for h in res.hits]


def test_vector_index_built_at_the_threshold_and_search_answers_the_same(
    tmp_path: Path, embedder: Embedder
) -> None:
    brute_root = write_workspace(tmp_path / "brute")
    ann_root = write_workspace(tmp_path / "ann")
    brute = load_settings(brute_root)
    ann = load_settings(ann_root, {"index": {"vector_index_rows": 4}})
    index_workspace(brute_root, brute, embedder=embedder)
    index_workspace(ann_root, ann, embedder=embedder)
    assert not has_vector_index(open_store(brute_root, brute))  # 50,000 by default
    assert has_vector_index(open_store(ann_root, ann))
    for query in ("check a user's password against the stored hash", "retry a failed upload"):
        assert (
            top_paths(ann_root, ann, embedder, query)[0] == top_paths(brute_root, brute, embedder, query)[0]
        )


def test_rows_added_after_the_vector_index_are_found(tmp_path: Path, embedder: Embedder) -> None:
    root = write_workspace(tmp_path / "ws")
    settings = load_settings(root, {"index": {"vector_index_rows": 4}})
    index_workspace(root, settings, embedder=embedder)
    assert has_vector_index(open_store(root, settings))
    (root / "app" / "zoo.py").write_text(
        "def feed_the_giraffes(keeper):\n"
        '    """Give every giraffe in the zoo its leaves."""\n'
        "    return keeper\n"
    )
    reindex_paths(root, settings, ["app/zoo.py"], embedder=embedder)
    assert top_paths(root, settings, embedder, "feed giraffes at the zoo")[0] == "app/zoo.py"


def test_vector_index_never_built_when_the_setting_is_zero(tmp_path: Path, embedder: Embedder) -> None:
    root = write_workspace(tmp_path / "ws")
    settings = load_settings(root, {"index": {"vector_index_rows": 0}})
    index_workspace(root, settings, embedder=embedder)
    assert not has_vector_index(open_store(root, settings))


def test_hybrid_without_any_vector_says_the_index_is_incomplete(tmp_path: Path, embedder: Embedder) -> None:
    root = write_workspace(tmp_path / "ws")
    settings = load_settings(root)
    index_workspace(root, settings, embedder=embedder, embed=False)
    res = search(
        open_store(root, settings), SearchRequest("password hash"), settings, root=root, embedder=embedder
    )
    assert res.hits and res.report.per_source[Source.SEMANTIC] == 0
    assert any(n.startswith("index incomplete:") for n in res.report.notes)


def _static_top(root: Path, settings: Settings, query: str, k: int = 5) -> list[tuple[str, int]]:
    """The static tier's ``k`` nearest chunks, read from its column whichever tier a
    search would choose."""
    from codesift.indexer.rows import FAST_VECTOR
    from codesift.indexer.search.semantic import vector_search
    from codesift.indexer.sync import fast_tier_for

    fast = fast_tier_for(settings, make_embedder(settings.embed))
    assert fast is not None
    res = vector_search(
        open_store(root, settings),
        fast.embed_query(query),
        k,
        threshold=None,
        min_similarity=-1.0,
        column=FAST_VECTOR,
    )
    return [(h.chunk.path, h.chunk.start_line) for h in res.hits]


def _fast_index_rows(root: Path, settings: Settings) -> tuple[int, int]:
    """(indexed, unindexed) rows of the fast tier's vector index."""
    chunks = open_store(root, settings).table("chunks")
    name = next(i.name for i in chunks.list_indices() if list(i.columns) == ["fast_vector"])
    stats = chunks.index_stats(name)
    assert stats is not None
    return stats.num_indexed_rows, stats.num_unindexed_rows


STATIC_QUERIES = (
    "check a user's password against the stored hash",
    "retry a failed upload",
    "parse the config",
)


def _assert_same_static_tops(ann_root: Path, ann: Settings, brute_root: Path, brute: Settings) -> None:
    """Every static query answers the same top hits through the index as by brute force."""
    for query in STATIC_QUERIES:
        assert _static_top(ann_root, ann, query) == _static_top(brute_root, brute, query)


def test_fast_tier_index_built_before_minilm_and_the_static_tier_answers_the_same(
    tmp_path: Path, embedder: Embedder
) -> None:
    brute_root = write_workspace(tmp_path / "brute")
    ann_root = write_workspace(tmp_path / "ann")
    brute = load_settings(brute_root)
    ann = load_settings(ann_root, {"index": {"vector_index_rows": 4}})
    seen: list[tuple[bool, bool]] = []

    def as_minilm_starts(p: Progress) -> None:
        # The fast tier is filled and MiniLM has not embedded a chunk: the static tier
        # answers searches now, from its own index.
        if p.phase == "embed" and p.done == 0 and not seen:
            store = open_store(ann_root, ann)
            seen.append((has_vector_index(store, fast=True), has_vector_index(store)))
            res = search(
                store, SearchRequest(STATIC_QUERIES[0], mode="vector"), ann, root=ann_root, embedder=embedder
            )
            assert res.report.vector_model.startswith("static:") and res.hits

    index_workspace(brute_root, brute, embedder=embedder)
    index_workspace(ann_root, ann, embedder=embedder, progress=as_minilm_starts)
    assert seen == [(True, False)]
    assert has_vector_index(open_store(ann_root, ann), fast=True)
    assert not has_vector_index(open_store(brute_root, brute), fast=True)  # 50,000 by default
    _assert_same_static_tops(ann_root, ann, brute_root, brute)


def test_fast_tier_index_stays_consistent_as_minilm_fills_in_and_files_change(
    tmp_path: Path, embedder: Embedder
) -> None:
    brute_root = write_workspace(tmp_path / "brute")
    ann_root = write_workspace(tmp_path / "ann")
    brute = load_settings(brute_root)
    ann = load_settings(ann_root, {"index": {"vector_index_rows": 4}})
    for root, settings in ((brute_root, brute), (ann_root, ann)):
        index_workspace(root, settings, embedder=embedder)
    store = open_store(ann_root, ann)
    assert has_vector_index(store, fast=True) and has_vector_index(store)
    # MiniLM rewrote every row after the fast tier's index was built: those rows left it,
    # and an optimize folds them back in.
    assert _fast_index_rows(ann_root, ann) == (0, store.count("chunks"))
    store.optimize()
    assert _fast_index_rows(ann_root, ann) == (store.count("chunks"), 0)
    _assert_same_static_tops(ann_root, ann, brute_root, brute)

    giraffes = (
        "def feed_the_giraffes(keeper):\n"
        "    '''Give every giraffe in the zoo its leaves.'''\n"
        "    return keeper\n"
    )
    gone = sorted(p.relative_to(ann_root).as_posix() for p in ann_root.rglob("*.py"))[0]
    for root, settings in ((brute_root, brute), (ann_root, ann)):
        (root / "app" / "zoo.py").write_text(giraffes)
        (root / gone).unlink()
        reindex_paths(root, settings, ["app/zoo.py", gone], embedder=embedder)
    top = _static_top(ann_root, ann, "feed giraffes at the zoo")
    assert top[0][0] == "app/zoo.py"
    assert top == _static_top(brute_root, brute, "feed giraffes at the zoo")
    assert gone not in {path for path, _ in _static_top(ann_root, ann, "def", k=1000)}
    _assert_same_static_tops(ann_root, ann, brute_root, brute)
    store.optimize()  # the saved file's rows into the index, the deleted file's out of it
    assert _fast_index_rows(ann_root, ann)[1] == 0
    assert _static_top(ann_root, ann, "feed giraffes at the zoo")[0][0] == "app/zoo.py"
    assert gone not in {path for path, _ in _static_top(ann_root, ann, "def", k=1000)}
    _assert_same_static_tops(ann_root, ann, brute_root, brute)


def test_the_servers_vectors_job_builds_the_fast_tier_index_before_minilm(
    tmp_path: Path, embedder: Embedder
) -> None:
    root = write_workspace(tmp_path / "ws")
    settings = load_settings(root, {"index": {"vector_index_rows": 4}})
    index_workspace(root, settings, embedder=embedder, embed=False)  # the server's text phase
    assert not has_vector_index(open_store(root, settings), fast=True)
    seen: list[bool] = []

    def as_minilm_starts(p: Progress) -> None:
        if p.phase == "embed" and p.done == 0 and not seen:
            seen.append(has_vector_index(open_store(root, settings), fast=True))

    embed_vectors(root, settings, embedder=embedder, progress=as_minilm_starts)
    assert seen == [True]
    assert has_vector_index(open_store(root, settings))


def test_reading_a_vector_index_ahead_leaves_every_vector_answer_as_it_was(
    tmp_path: Path, embedder: Embedder
) -> None:
    """``Store.warm_vector_index`` (a cold CLI search reads the index while the engine
    imports) runs one query on LanceDB's threads: it finishes, and every vector and
    hybrid answer after it, in that store's process, is the one a store without it gives;
    a column without an index, or an index with no vector index at all, is left alone."""
    root = write_workspace(tmp_path / "ws")
    settings = load_settings(root, {"index": {"vector_index_rows": 4}})
    index_workspace(root, settings, embedder=embedder)
    queries = ["check a user's password against the stored hash", "retry a failed upload", "parse config"]

    def answers(store: Store) -> list[list[tuple[str, float]]]:
        got = []
        for query in queries:
            for mode in ("vector", "hybrid"):
                res = search(
                    store, SearchRequest(query, mode=mode, limit=5), settings, root=root, embedder=embedder
                )
                got.append([(h.chunk.id, h.score) for h in res.hits])
        return got

    want = answers(open_store(root, settings))
    warmed = open_store(root, settings)
    assert has_vector_index(warmed)
    future = warmed.warm_vector_index()
    assert future is not None and future.result(timeout=60) is None
    assert answers(warmed) == want
    for column in ("no_such_column", "id"):  # not a vector index: nothing to read
        other = warmed.warm_vector_index(column)
        assert other is not None and other.result(timeout=60) is None

    plain_root = write_workspace(tmp_path / "plain")
    plain = load_settings(plain_root)
    index_workspace(plain_root, plain, embedder=embedder)
    store = open_store(plain_root, plain)
    assert not has_vector_index(store)
    future = store.warm_vector_index()
    assert future is not None and future.result(timeout=60) is None


@pytest.mark.parametrize(("model", "effort"), [("all-MiniLM-L6-v2-static", 150), ("", None)])
def test_static_vectors_are_indexed_with_the_fast_tiers_graph_effort(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, model: str, effort: int | None
) -> None:
    """A static main model's approximate index is built with the fast tier's HNSW effort
    (half the default: at the end of a run that is otherwise all text speed); MiniLM's with
    lancedb's default."""
    import lancedb.index

    from codesift.indexer.indices import FAST_EF_CONSTRUCTION

    made: list[int | None] = []
    real = lancedb.index.HnswSq

    def recording(**kwargs: object) -> object:
        made.append(kwargs.get("ef_construction"))  # type: ignore[arg-type]
        return real(**kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(lancedb.index, "HnswSq", recording)
    root = write_workspace(tmp_path / "ws")
    overrides: dict[str, dict[str, object]] = {"index": {"vector_index_rows": 4}}
    if model:
        overrides["embed"] = {"model": model, "fast_tier": False}
    else:
        overrides["embed"] = {"fast_tier": False}
    settings = load_settings(root, overrides)
    index_workspace(root, settings, embedder=make_embedder(settings.embed))
    assert has_vector_index(open_store(root, settings))
    assert made == [effort] and (effort is None or effort == FAST_EF_CONSTRUCTION)
