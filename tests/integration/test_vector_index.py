"""Vector index policy: brute force below ``index.vector_index_rows`` vectors, an
approximate IVF_HNSW_SQ index at or above it, and the same answers either way."""

from __future__ import annotations

from pathlib import Path

import pytest

from codesift.indexer.embed import Embedder, make_embedder
from codesift.indexer.freshen import reindex_paths
from codesift.indexer.search.hybrid import search
from codesift.indexer.search.results import SearchRequest, Source
from codesift.indexer.settings import Settings, load_settings
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
    assert not open_store(brute_root, brute).has_vector_index()  # 50,000 by default
    assert open_store(ann_root, ann).has_vector_index()
    for query in ("check a user's password against the stored hash", "retry a failed upload"):
        assert (
            top_paths(ann_root, ann, embedder, query)[0] == top_paths(brute_root, brute, embedder, query)[0]
        )


def test_rows_added_after_the_vector_index_are_found(tmp_path: Path, embedder: Embedder) -> None:
    root = write_workspace(tmp_path / "ws")
    settings = load_settings(root, {"index": {"vector_index_rows": 4}})
    index_workspace(root, settings, embedder=embedder)
    assert open_store(root, settings).has_vector_index()
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
    assert not open_store(root, settings).has_vector_index()


def test_hybrid_without_any_vector_says_the_index_is_incomplete(tmp_path: Path, embedder: Embedder) -> None:
    root = write_workspace(tmp_path / "ws")
    settings = load_settings(root)
    index_workspace(root, settings, embedder=embedder, embed=False)
    res = search(
        open_store(root, settings), SearchRequest("password hash"), settings, root=root, embedder=embedder
    )
    assert res.hits and res.report.per_source[Source.SEMANTIC] == 0
    assert any(n.startswith("index incomplete:") for n in res.report.notes)
