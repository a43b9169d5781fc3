"""The language server's memory: one copy of the symbols for the symbol index and the
graph, and both dropped after idling with the same answers once they reload."""

from __future__ import annotations

from pathlib import Path

import pytest

from codesift.indexer.embed import Embedder, make_embedder
from codesift.indexer.graph import Graph, callers
from codesift.indexer.graph import snapshot as graph_snapshot
from codesift.indexer.heap import shared_int
from codesift.indexer.search.symbols import SymbolIndex, find_symbols
from codesift.indexer.settings import Settings, load_settings
from codesift.indexer.sync import index_workspace, open_store
from codesift.server.projects import Embedders, Project

from ..conftest import write_workspace
from .test_graph import FILES, names


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    return make_embedder(Settings().embed)


@pytest.fixture
def shop(tmp_path: Path, embedder: Embedder) -> Path:
    root = write_workspace(tmp_path / "ws", FILES)
    index_workspace(root, load_settings(root), embedder=embedder, embed=False)
    return root


def test_symbol_index_and_graph_share_one_copy_of_the_symbols(
    shop: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(graph_snapshot, "_FULL_RELOAD", 0)  # a workspace this small reads by path
    store = open_store(shop, load_settings(shop))
    index = SymbolIndex(store)
    graph = Graph(store)
    graph.refresh()
    in_index = {id(s) for s in index.table().symbols}
    in_graph = [s for fg in graph.snapshot.files.values() for s in fg.symbols]
    assert len(in_graph) == len(in_index) > 5
    assert {id(s) for s in in_graph} == in_index
    (total,) = graph.find("shop.pricing.total")
    assert names(callers(graph, total)) == {"OrderRepository.place"}


def test_line_numbers_share_int_objects_and_keep_their_values() -> None:
    big = 70_000
    assert shared_int(int("1234")) is shared_int(int("1234"))
    assert shared_int(None) == 0 and shared_int(big) == big and shared_int(-3) == -3


def test_project_drops_idle_symbol_index_and_graph_and_answers_the_same(shop: Path) -> None:
    project = Project(shop, load_settings(shop), Embedders())
    try:

        def answers() -> tuple[list[str], set[str]]:
            found = find_symbols(project.store(), "OrderRepository", index=project.symbol_index())
            with project.graph() as g:
                (total,) = g.find("shop.pricing.total")
                return [h.symbol.qualified_name for h in found], names(callers(g, total))

        before = answers()
        project.lines.line("shop/pricing.py", 2)  # read once, remembered (an ASCII file: as such)
        assert project.lines._files
        index = project.symbol_index()
        assert index.loaded
        assert not project.release_indexes_if_idle(3600)  # used just now: kept
        assert project.symbol_index() is index
        assert project.release_indexes_if_idle(0)
        assert not project.symbol_index().loaded  # dropped: read again on the next question
        assert project.lines._files == {}
        assert not project.release_indexes_if_idle(0)  # nothing left to drop
        assert answers() == before
        assert project.symbol_index().loaded
    finally:
        project.close()
