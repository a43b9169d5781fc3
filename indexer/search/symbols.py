"""Symbol search over the symbol table: exact name, then prefix, then camel-hump
and fuzzy; a class brings its methods."""

from __future__ import annotations

import bisect
import re
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from enum import IntEnum

from ..model import Symbol, SymbolKind
from ..store import SYMBOLS, Store, symbol_from_row

_CONTAINER_KINDS = frozenset(
    {SymbolKind.CLASS, SymbolKind.INTERFACE, SymbolKind.STRUCT, SymbolKind.ENUM, SymbolKind.MODULE}
)


_FEW = 10  # below this many matches, the slower camel-hump and fuzzy scans run


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
    """Every symbol of the index held in memory: names for matching, rows for answers.

    Reloaded when the symbols table gets a new version (one read of the table,
    ~0.3 s for 60k symbols); between commits a lookup touches no storage, which
    keeps ``workspace/symbol`` within a few milliseconds.
    """

    def __init__(self, store: Store) -> None:
        self._store = store
        self._version = -1
        self._symbols: list[Symbol] = []
        self._lower: list[str] = []
        self._by_name: dict[str, list[int]] = {}
        self._by_qualified: dict[str, list[int]] = {}
        self._sorted: list[tuple[str, int]] = []  # (lower name, index), for prefix ranges
        self._members: dict[tuple[str, str], list[int]] = {}
        self._joined = ""
        self._joined_lower = ""
        self._offsets: list[int] = []
        self._offsets_set: set[int] = set()
        self._lock = threading.Lock()

    def _refresh(self) -> None:
        tbl = self._store.table(SYMBOLS)
        version = tbl.version
        if version == self._version:
            return
        with self._lock:
            if version == self._version:
                return
            symbols = [symbol_from_row(r) for r in tbl.to_arrow().to_pylist()]
            symbols.sort(key=lambda s: (s.path, s.range.start.line, s.range.start.column))
            by_name: dict[str, list[int]] = {}
            by_qualified: dict[str, list[int]] = {}
            members: dict[tuple[str, str], list[int]] = {}
            for i, sym in enumerate(symbols):
                by_name.setdefault(sym.name, []).append(i)
                by_qualified.setdefault(sym.qualified_name, []).append(i)
                if sym.container:
                    members.setdefault((sym.path, sym.container), []).append(i)
            lower = [sym.name.lower() for sym in symbols]
            self._symbols, self._lower = symbols, lower
            self._by_name, self._by_qualified, self._members = by_name, by_qualified, members
            self._sorted = sorted((name, i) for i, name in enumerate(lower))
            self._joined = "\n".join(sym.name.replace("\n", " ") for sym in symbols)
            self._joined_lower = self._joined.lower()
            offsets, pos = [], 0
            for sym in symbols:
                offsets.append(pos)
                pos += len(sym.name) + 1
            self._offsets = offsets
            self._offsets_set = set(offsets)
            self._version = version

    def _lines(self, positions: Iterable[int]) -> list[int]:
        """Indices of the names holding these offsets of the joined text, each once."""
        return list(dict.fromkeys(bisect.bisect_right(self._offsets, p) - 1 for p in positions))

    def _find_all(self, needle: str) -> list[int]:
        positions = []
        at = self._joined_lower.find(needle)
        while at != -1:
            positions.append(at)
            at = self._joined_lower.find(needle, at + 1)
        return self._lines(positions)

    def symbols(self) -> list[Symbol]:
        self._refresh()
        return self._symbols

    def qualified(self, name: str) -> list[int]:
        self._refresh()
        return self._by_qualified.get(name, [])

    def members(self, sym: Symbol) -> list[Symbol]:
        self._refresh()
        return [self._symbols[i] for i in self._members.get((sym.path, sym.qualified_name), [])]

    def candidates(self, query: str, limit: int) -> list[tuple[int, SymbolMatch]]:
        """Indices of matching symbols, best kind of match first."""
        self._refresh()
        q = query.lower()
        out: list[tuple[int, SymbolMatch]] = []
        seen: set[int] = set()

        def add(i: int, m: SymbolMatch) -> bool:
            if i not in seen:
                seen.add(i)
                out.append((i, m))
            return len(out) >= limit

        for i in self._by_name.get(query, []):
            if add(i, SymbolMatch.EXACT):
                return out
        lo = bisect.bisect_left(self._sorted, (q, -1))
        prefix: list[int] = []
        for name, i in self._sorted[lo:]:
            if not name.startswith(q):
                break
            if name == q:
                if add(i, SymbolMatch.EXACT_CASE_INSENSITIVE):
                    return out
            else:
                prefix.append(i)
        # shorter names first: `load` before `loads_with_hooks` for "lo"
        for i in sorted(prefix, key=lambda i: (len(self._lower[i]), i)):
            if add(i, SymbolMatch.PREFIX):
                return out
        # The rest scans every name, as one joined string (a line per name) so the
        # loop runs in C. Camel-hump and fuzzy only while few names matched so far.
        later: dict[SymbolMatch, list[int]] = {SymbolMatch.SUBSTRING: self._find_all(q)}
        few = len(out) + len(later[SymbolMatch.SUBSTRING]) < _FEW
        hump = _hump_regex(query)
        if hump is not None and (few or any(c.isupper() for c in query[1:])):
            starts = self._offsets_set
            later[SymbolMatch.CAMEL_HUMP] = self._lines(
                m.start() for m in hump.finditer(self._joined) if m.start() in starts
            )
        if few and len(q) >= 3:
            fuzzy = re.compile("[^\n]*?".join(re.escape(c) for c in q))
            later[SymbolMatch.FUZZY] = self._lines(m.start() for m in fuzzy.finditer(self._joined_lower))
        later = dict(sorted(later.items()))
        for match, found in later.items():
            for i in sorted(found, key=lambda i: (len(self._lower[i]), i)):
                if i not in seen and add(i, match):
                    return out
        return out


def _hump_regex(query: str) -> re.Pattern[str] | None:
    """``gUS`` / ``getUS`` match ``getUserSettings`` and ``get_user_settings``: after the
    first, each part must start a hump (a capital, or a letter after ``_``)."""
    parts = [p.lower() for p in re.findall(r"[A-Z][a-z0-9]*|[a-z0-9]+", query)]
    if len(parts) < 2:
        return None
    first = "".join(f"[{c.upper()}{c}]" if c.isalpha() else re.escape(c) for c in parts[0])
    body = first + "[a-z0-9]*"
    for part in parts[1:]:
        head, tail = part[0], re.escape(part[1:])
        body += f"(?:{re.escape(head.upper())}|_{re.escape(head)}){tail}[a-z0-9]*"
    return re.compile(body)


def find_symbols(
    store: Store, query: str, *, limit: int = 50, index: SymbolIndex | None = None, with_members: bool = True
) -> list[SymbolHit]:
    """Symbols matching ``query``: exact name first, then prefix, camel-hump, substring,
    fuzzy; a class, interface or struct brings its members right after it.

    A dotted query (``Outer.method``) matches qualified names exactly first. Pass a
    long-lived ``index`` to answer from memory.
    """
    query = query.strip()
    if not query or limit <= 0:
        return []
    index = index or SymbolIndex(store)
    found: list[tuple[int, SymbolMatch]] = []
    if "." in query:
        found += [(i, SymbolMatch.QUALIFIED) for i in index.qualified(query)]
        query = query.rsplit(".", 1)[-1]
    found += index.candidates(query, limit)
    symbols = index.symbols()
    hits: list[SymbolHit] = []
    seen: set[tuple[str, str, int]] = set()
    for i, m in found:
        sym = symbols[i]
        key = (sym.path, sym.qualified_name, sym.range.start.line)
        if key in seen:
            continue
        seen.add(key)
        hits.append(SymbolHit(sym, m, _score(m)))
        if with_members and sym.kind in _CONTAINER_KINDS and m <= SymbolMatch.PREFIX:
            for member in index.members(sym):
                mkey = (member.path, member.qualified_name, member.range.start.line)
                if mkey not in seen:
                    seen.add(mkey)
                    hits.append(SymbolHit(member, SymbolMatch.MEMBER, _score(m) * 0.9))
        if len(hits) >= limit:
            break
    return hits[:limit]


def _score(m: SymbolMatch) -> float:
    return round(1.0 - int(m) / (len(SymbolMatch) + 1), 4)
