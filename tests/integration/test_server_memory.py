"""The language server's memory: one copy of the symbols for the symbol index and the
graph, and both dropped after idling with the same answers once they reload."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

from codesift.indexer.embed import Embedder, make_embedder
from codesift.indexer.freshen import reindex_paths
from codesift.indexer.graph import Graph, callers
from codesift.indexer.graph import snapshot as graph_snapshot
from codesift.indexer.model import Edge, EdgeKind
from codesift.indexer.rows import edges_from_table
from codesift.indexer.search.symbols import SymbolIndex, find_symbols
from codesift.indexer.settings import Settings, load_settings
from codesift.indexer.store import EDGES
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
    # one copy of the columns, and one ``Symbol`` object a row whoever reads it
    assert index.table().columns is graph.snapshot.symtab is store.all_symbols()
    in_index = {id(s) for s in index.table().symbols}
    in_graph = [s for fg in graph.snapshot.files.values() for s in fg.symbols]
    assert len(in_graph) == len(in_index) > 5
    assert {id(s) for s in in_graph} == in_index
    (total,) = graph.find("shop.pricing.total")
    assert names(callers(graph, total)) == {"OrderRepository.place"}


def test_project_drops_idle_symbol_index_graph_and_index_reader_and_answers_the_same(shop: Path) -> None:
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
        reader = project.store()
        assert not project.release_indexes_if_idle(3600)  # used just now: kept
        assert project.symbol_index() is index and project.store() is reader
        assert project.release_indexes_if_idle(0)
        assert not project.release_indexes_if_idle(0)  # nothing left to drop
        assert project._store is None  # the index reader (its LanceDB caches) too
        assert project.lines._files == {}
        assert not project.symbol_index().loaded  # dropped: read again on the next question
        assert project.store() is not reader
        assert answers() == before
        assert project.symbol_index().loaded
    finally:
        project.close()


def _edge_objects() -> int:
    return sum(isinstance(o, Edge) for o in gc.get_objects())


def _graph_view(g: Graph) -> dict[str, object]:
    """Every file's edges (as ``Edge`` objects) with their resolution, and the callers of
    each definition: what a graph answers, to compare two graphs."""
    out: dict[str, object] = {}
    for path in sorted(g.snapshot.files):
        out[path] = [(e, g.resolver.resolve(e)) for e in g.snapshot.edges_of(path)]
        for s in g.snapshot.symbols_of(path):
            out[f"{path}:{s.qualified_name}"] = callers(g, s, include_unresolved=True)
    return out


@pytest.mark.parametrize("full_reload", [300, 0])
def test_graph_holds_edges_and_symbols_as_columns_and_a_reload_of_changed_files_answers_as_a_fresh_read(
    shop: Path, embedder: Embedder, monkeypatch: pytest.MonkeyPatch, full_reload: int
) -> None:
    monkeypatch.setattr(graph_snapshot, "_FULL_RELOAD", full_reload)  # 0: whole tables
    store = open_store(shop, load_settings(shop))
    gc.collect()
    before = _edge_objects()  # other tests' graphs may still hold some
    kept = Graph(store)  # long-lived, as the language server keeps it
    kept.refresh()
    stored = edges_from_table(store.table(EDGES).to_arrow())
    held = [e for p in kept.snapshot.files for e in kept.snapshot.edges_of(p)]
    assert sorted(held, key=repr) == sorted(stored, key=repr) and len(held) >= 10
    # the snapshot makes no Edge object, the import edges' included: every edge is a row
    del stored, held
    gc.collect()
    assert _edge_objects() <= before
    snap = kept.snapshot
    binding = [e for p in snap.files for e in snap.edges_of(p, [EdgeKind.IMPORT]) if e.alias not in ("", "*")]
    assert binding and all(e in snap.imports_binding(e.path, e.alias) for e in binding)
    del binding, snap
    # the symbols are columns too: building the lookups makes no Symbol object
    assert len(kept.snapshot.symtab) >= 5 and kept.snapshot.symtab.made == 0
    assert kept.snapshot.symbols_named("total") and kept.snapshot.symtab.made == 1
    # one file edited, one added, one removed: the kept graph re-reads those and keeps the rest
    (shop / "shop" / "totals.py").write_text("def total(lines):\n    return 0\n")
    (shop / "shop" / "pricing.py").write_text(
        "from .totals import total\n\ndef other():\n    return total([])\n"
    )
    (shop / "web" / "app.py").unlink()
    settings = load_settings(shop)
    reindex_paths(
        shop, settings, ["shop/totals.py", "shop/pricing.py", "web/app.py"], embedder=embedder, embed=False
    )
    kept.refresh()
    fresh = Graph(open_store(shop, settings))
    fresh.refresh()
    assert _graph_view(kept) == _graph_view(fresh)
    assert "web/app.py" not in kept.snapshot.files and kept.snapshot.edges_of("web/app.py") == []
    (total,) = kept.find("shop.pricing.total")
    assert total.path == "shop/totals.py"
    assert names(callers(kept, total)) == {"OrderRepository.place", "other"}
