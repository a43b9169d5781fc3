"""Definitions enclosing search hits: from the in-memory symbol index, as from the table."""

from __future__ import annotations

from pathlib import Path

import pytest

from codesift.indexer.enclosing import enclosing_symbols
from codesift.indexer.search.hybrid import ranked_chunks, search
from codesift.indexer.search.results import SearchRequest
from codesift.indexer.search.symbols import SymbolIndex
from codesift.indexer.settings import load_settings
from codesift.indexer.sync import index_workspace, open_store

pytestmark = pytest.mark.slow


def test_enclosing_symbols_from_the_symbol_index_equal_those_from_the_table(workspace: Path) -> None:
    settings = load_settings(workspace)
    index_workspace(workspace, settings, embed=False)
    store = open_store(workspace, settings)
    index = SymbolIndex(store)
    seen = 0
    for query in ("password hash", "retry upload", "config file", "login"):
        hits = search(store, SearchRequest(query, mode="bm25", limit=20), settings, root=workspace).hits
        chunks = [h.chunk for h in hits]
        from_table = enclosing_symbols(store, chunks)
        assert enclosing_symbols(store, chunks, index) == from_table, query
        seen += len(from_table)
    assert seen >= 4  # the comparison covered real definitions


def test_ranked_chunks_are_the_chunks_of_the_hits_search_returns(workspace: Path) -> None:
    settings = load_settings(workspace)
    index_workspace(workspace, settings, embed=False)
    store = open_store(workspace, settings)
    compared = 0
    for query in ("password hash", "retry upload", "config file", "login", "   "):
        for mode in ("hybrid", "bm25"):
            request = SearchRequest(query, mode=mode, limit=5)
            hits = search(store, request, settings, root=workspace).hits
            assert ranked_chunks(store, request, settings, root=workspace) == [h.chunk for h in hits]
            compared += len(hits)
    assert compared >= 4  # the comparison covered real hits
