"""Symbol search over the symbol table: exact name, then prefix, then camel-hump
and fuzzy; a class brings its methods."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import IntEnum

from ..model import Symbol, SymbolKind
from ..store import SYMBOLS, Store, in_filters, symbol_from_row
from ..text import split_identifier

_CONTAINER_KINDS = frozenset(
    {SymbolKind.CLASS, SymbolKind.INTERFACE, SymbolKind.STRUCT, SymbolKind.ENUM, SymbolKind.MODULE}
)


class SymbolMatch(IntEnum):
    """How a symbol matched; lower is better."""

    EXACT = 0
    EXACT_CASE_INSENSITIVE = 1
    QUALIFIED = 2
    PREFIX = 3
    CAMEL_HUMP = 4
    SUBSTRING = 5
    FUZZY = 6
    MEMBER = 7  # brought in by its container


@dataclass(frozen=True, slots=True)
class SymbolHit:
    symbol: Symbol
    match: SymbolMatch
    score: float  # in [0, 1]


class SymbolIndex:
    """The names of every symbol, held in memory for fuzzy matching.

    Reloaded when the table's version changes; a workspace of 100k symbols
    costs a few MB.
    """

    def __init__(self, store: Store) -> None:
        self._store = store
        self._version = -1
        self._names: list[str] = []
        self._lower: list[str] = []
        self._ids: list[str] = []

    def _refresh(self) -> None:
        tbl = self._store.table(SYMBOLS)
        version = tbl.version
        if version == self._version:
            return
        data = tbl.to_arrow().select(["id", "name"])
        self._ids = [str(x) for x in data.column("id").to_pylist()]
        self._names = [str(x) for x in data.column("name").to_pylist()]
        self._lower = [n.lower() for n in self._names]
        self._version = version

    def candidates(self, query: str, limit: int) -> list[tuple[str, SymbolMatch]]:
        """Row ids of matching symbols, best kind of match first."""
        self._refresh()
        q = query.lower()
        hump = _hump_regex(query)
        fuzzy = _fuzzy_regex(q)
        buckets: dict[SymbolMatch, list[str]] = {m: [] for m in SymbolMatch}
        for rid, name, lower in zip(self._ids, self._names, self._lower, strict=True):
            if name == query:
                buckets[SymbolMatch.EXACT].append(rid)
            elif lower == q:
                buckets[SymbolMatch.EXACT_CASE_INSENSITIVE].append(rid)
            elif lower.startswith(q):
                buckets[SymbolMatch.PREFIX].append(rid)
            elif hump is not None and hump.match(name):
                buckets[SymbolMatch.CAMEL_HUMP].append(rid)
            elif q in lower:
                buckets[SymbolMatch.SUBSTRING].append(rid)
            elif len(q) >= 3 and fuzzy.search(lower):
                buckets[SymbolMatch.FUZZY].append(rid)
        out: list[tuple[str, SymbolMatch]] = []
        for match, rids in buckets.items():
            for rid in rids:
                out.append((rid, match))
                if len(out) >= limit:
                    return out
        return out


def _hump_regex(query: str) -> re.Pattern[str] | None:
    """``gUS`` / ``getUS`` match ``getUserSettings``: each capital or part starts a hump."""
    parts = split_identifier(query)
    if len(parts) < 2 and not (len(query) >= 2 and query.isupper()):
        return None
    if query.isupper() and len(parts) < 2:
        parts = list(query.lower())
    body = "".join(re.escape(p) + r"[a-z0-9]*_?" for p in parts)
    return re.compile(body, re.IGNORECASE)


def _fuzzy_regex(q: str) -> re.Pattern[str]:
    return re.compile(".*?".join(re.escape(c) for c in q))


def find_symbols(
    store: Store, query: str, *, limit: int = 50, index: SymbolIndex | None = None, with_members: bool = True
) -> list[SymbolHit]:
    """Symbols matching ``query``: exact name first, then prefix, camel-hump, substring,
    fuzzy; a class, interface or struct brings its members right after it.

    A dotted query (``Outer.method``) matches qualified names exactly first.
    """
    query = query.strip()
    if not query:
        return []
    index = index or SymbolIndex(store)
    found: list[tuple[str, SymbolMatch]] = []
    if "." in query:
        rows = _rows(store, [f"qualified_name = '{_q(query)}'"])
        found += [(str(r["id"]), SymbolMatch.QUALIFIED) for r in rows]
        query = query.rsplit(".", 1)[-1]
    found += index.candidates(query, limit)
    order = list(dict.fromkeys(rid for rid, _ in found))[:limit]
    match_of: dict[str, SymbolMatch] = {}
    for rid, m in found:
        match_of.setdefault(rid, m)
    rows_by_id = {str(r["id"]): r for flt in in_filters("id", order) for r in _rows(store, [flt])}
    hits: list[SymbolHit] = []
    seen: set[str] = set()
    for rid in order:
        row = rows_by_id.get(rid)
        if row is None or rid in seen:
            continue
        seen.add(rid)
        sym = symbol_from_row(row)
        m = match_of[rid]
        hits.append(SymbolHit(sym, m, _score(m)))
        if with_members and sym.kind in _CONTAINER_KINDS and m <= SymbolMatch.PREFIX:
            for member in _members(store, sym):
                mid = str(member["id"])
                if mid not in seen:
                    seen.add(mid)
                    hits.append(SymbolHit(symbol_from_row(member), SymbolMatch.MEMBER, _score(m) * 0.9))
        if len(hits) >= limit:
            break
    return hits[:limit]


def _score(m: SymbolMatch) -> float:
    return round(1.0 - int(m) / (len(SymbolMatch) + 1), 4)


def _q(value: str) -> str:
    return value.replace("'", "''")


def _rows(store: Store, where: Sequence[str]) -> list[dict[str, object]]:
    flt = " AND ".join(f"({w})" for w in where)
    return list(store.table(SYMBOLS).search().where(flt).limit(None).to_arrow().to_pylist())


def _members(store: Store, container: Symbol) -> list[dict[str, object]]:
    rows = _rows(store, [f"container = '{_q(container.qualified_name)}'", f"path = '{_q(container.path)}'"])
    rows.sort(key=lambda r: int(r["start_line"]) if isinstance(r["start_line"], int) else 0)
    return rows
