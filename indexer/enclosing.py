"""From search hits to the definitions that enclose them (hybrid search in a symbol list)."""

from __future__ import annotations

from collections.abc import Sequence

from .model import Chunk, Symbol
from .rows import symbol_from_row
from .search.symbols import SymbolIndex
from .store import SYMBOLS, Store


def _q(value: str) -> str:
    return value.replace("'", "''")


def enclosing_symbols(
    store: Store, chunks: Sequence[Chunk], index: SymbolIndex | None = None
) -> list[Symbol]:
    """The symbol each chunk (a search hit's) belongs to, in their order, each once.

    Hits of blocks and line windows (no enclosing definition) are left out. When
    one file defines a qualified name twice, the definition overlapping the
    chunk wins. With the in-memory ``index`` no table is read (a query of the
    symbols table was ~40% of a worded ``workspace/symbol`` on the stdlib).
    """
    keys = list(dict.fromkeys((c.path, c.symbol) for c in chunks if c.symbol))
    if not keys:
        return []
    found = _from_index(index, keys) if index is not None else _from_table(store, keys)
    out: dict[tuple[str, str, int], Symbol] = {}
    for c in chunks:
        candidates = found.get((c.path, c.symbol), [])
        if not candidates:
            continue
        best = min(
            candidates,
            key=lambda s: (
                s.range.end.line < c.start_line or s.range.start.line > c.end_line,
                s.range.start.line,
            ),
        )
        out.setdefault((best.path, best.qualified_name, best.range.start.line), best)
    return list(out.values())


def _from_table(store: Store, keys: list[tuple[str, str]]) -> dict[tuple[str, str], list[Symbol]]:
    where = " OR ".join(f"(path = '{_q(p)}' AND qualified_name = '{_q(q)}')" for p, q in keys)
    rows = store.table(SYMBOLS).search().where(where).limit(None).to_arrow().to_pylist()
    found: dict[tuple[str, str], list[Symbol]] = {}
    for row in rows:
        sym = symbol_from_row(row)
        found.setdefault((sym.path, sym.qualified_name), []).append(sym)
    return found


def _from_index(index: SymbolIndex, keys: list[tuple[str, str]]) -> dict[tuple[str, str], list[Symbol]]:
    found: dict[tuple[str, str], list[Symbol]] = {}
    for table, skip in index.tables():
        for path, qualified in keys:
            if path in skip:
                continue
            for i in table.qualified(qualified):
                sym = table.symbols[i]
                if sym.path == path:
                    found.setdefault((path, qualified), []).append(sym)
    return found
