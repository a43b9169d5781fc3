"""From search hits to the definitions that enclose them (hybrid search in a symbol list)."""

from __future__ import annotations

from collections.abc import Sequence

from .model import Symbol
from .rows import symbol_from_row
from .search.results import SearchHit
from .store import SYMBOLS, Store


def _q(value: str) -> str:
    return value.replace("'", "''")


def enclosing_symbols(store: Store, hits: Sequence[SearchHit]) -> list[Symbol]:
    """The symbol each hit's chunk belongs to, in hit order, each once.

    Hits of blocks and line windows (no enclosing definition) are left out. When
    one file defines a qualified name twice, the definition overlapping the
    chunk wins.
    """
    keys = list(dict.fromkeys((h.chunk.path, h.chunk.symbol) for h in hits if h.chunk.symbol))
    if not keys:
        return []
    where = " OR ".join(f"(path = '{_q(p)}' AND qualified_name = '{_q(q)}')" for p, q in keys)
    rows = store.table(SYMBOLS).search().where(where).limit(None).to_arrow().to_pylist()
    found: dict[tuple[str, str], list[Symbol]] = {}
    for row in rows:
        sym = symbol_from_row(row)
        found.setdefault((sym.path, sym.qualified_name), []).append(sym)
    out: dict[tuple[str, str, int], Symbol] = {}
    for h in hits:
        candidates = found.get((h.chunk.path, h.chunk.symbol), [])
        if not candidates:
            continue
        c = h.chunk
        best = min(
            candidates,
            key=lambda s: (
                s.range.end.line < c.start_line or s.range.start.line > c.end_line,
                s.range.start.line,
            ),
        )
        out.setdefault((best.path, best.qualified_name, best.range.start.line), best)
    return list(out.values())
