"""Symbol search over the symbol table: exact name, then prefix, then camel-hump
and fuzzy; a class brings its methods."""

from __future__ import annotations

import re
import threading
from collections.abc import Collection, Mapping, Sequence
from functools import lru_cache

import re2

from ..errors import QueryError
from ..heap import keep_long_lived, release_memory
from ..model import Symbol
from ..rows import symbol_from_row, symbols_from_table
from ..settings import ChunkSettings
from ..store import FILES, SYMBOLS, Store, fetch
from . import bounds
from .bounds import check_int, check_query
from .names import (
    CONTAINER_KINDS,
    SCAN_OPTIONS,
    NameTable,
    SymbolHit,
    SymbolMatch,
    hump_regex,
    matching_lines,
    score_of,
)

MAX_LIMIT = 10_000  # names per answer: beyond it a request is a mistake


# Changed files kept in the small table before the base is read again in full.
DELTA_FILES_MAX = 200


class SymbolIndex:
    """Every symbol of the index held in memory: a base NameTable plus a small one for
    the files changed since the base was read.

    Keyed on the ``files`` table, the commit marker written last: when it moves, the
    files whose content hash changed (or that came or went) have their symbols read
    again into the small table, and the base skips them. A full reload (~1 s for the
    stdlib's 63k symbols) happens only when many files changed, so a saved file's
    symbols are found in milliseconds, not after a reload.
    """

    def __init__(self, store: Store) -> None:
        self._store = store
        self._version = -1
        self._base = NameTable(())
        self._base_hashes: dict[str, str] = {}
        self._delta = NameTable(())
        self._delta_paths: frozenset[str] = frozenset()
        self._lock = threading.Lock()

    @property
    def loaded(self) -> bool:
        """Whether the symbols were read (the first question reads them)."""
        return self._version >= 0

    def tables(self) -> list[tuple[NameTable, frozenset[str]]]:
        """(table, paths it must skip): the base, then the changed files' table. Inside
        ``Store.pinned_versions`` the ``files`` version is read once per block."""
        version = self._store.table_version(FILES)
        if version != self._version:
            with self._lock:
                if version != self._version:
                    self._refresh(version)
        return [(self._base, self._delta_paths), (self._delta, frozenset())]

    def table(self) -> NameTable:
        """The base table alone (callers that need every symbol use ``tables``)."""
        return self.tables()[0][0]

    def _refresh(self, version: int) -> None:
        hashes = self._store.file_hashes()
        changed = {
            p for p in hashes.keys() | self._base_hashes.keys() if hashes.get(p) != self._base_hashes.get(p)
        }
        if self._version < 0 or len(changed) > DELTA_FILES_MAX:
            self._base = NameTable(self._store.all_symbols())
            self._base_hashes = hashes
            self._delta, self._delta_paths = NameTable(()), frozenset()
            release_memory(collect=False)  # the Arrow columns' lists: ~40 MiB on the stdlib
            keep_long_lived()
        else:
            self._delta = NameTable(self._store.symbols_of(sorted(changed)))
            self._delta_paths = frozenset(changed)
        self._version = version


def one_shot_symbols(store: Store, *queries: str) -> list[Symbol]:
    """The symbols a one-shot ``find_symbols(query)`` (no long-lived index: the CLI without
    a server) can return or consult, read without building all of them.

    Holding every symbol as an object (``SymbolIndex``) costs ~1.5-2.5 s on the stdlib's
    64k: right for a server that answers many questions, most of a CLI call's time. A
    ``NameTable`` of a subset gives the same answer as one of every symbol when the subset
    holds every name that can match (a superset is found with RE2 scans: the query's
    letters in order, or as a substring when it is short, and its camel humps), every
    qualified-name match of a dotted query, and, for each of those, the symbols with the
    same qualified name (``members`` checks namesakes) and those it contains (its members,
    in its file or declared elsewhere); the order of the rows, and so of the table, is kept.
    Several queries (a few words, each looked up as a name) share one read of the table.
    """
    data = store.table(SYMBOLS).to_arrow()
    names = [str(n).replace("\n", " ") for n in data.column("name").to_pylist()]
    quals = [str(q) for q in data.column("qualified_name").to_pylist()]
    keep: set[int] = set()
    lower: list[str] | None = None
    for query in queries:
        name = query.rsplit(".", 1)[-1]
        q = name.lower()
        # the fuzzy scan (letters in order) runs for 3 letters or more; else a substring holds the rest
        letters = "[^\n]*?".join(re.escape(c) for c in q) if len(q) >= 3 else re.escape(q)
        if letters:
            lower = lower if lower is not None else [n.lower() for n in names]
            scan = re2.compile(letters.encode("utf-8"), SCAN_OPTIONS)
            keep.update(matching_lines(scan, lower))
            hump = hump_regex(name, ascii_names=all(n.isascii() for n in names))
            if hump is not None:
                keep.update(matching_lines(hump, names))
        else:
            keep.update(range(len(names)))
        keep.update(i for i, qualified in enumerate(quals) if qualified == query)
    wanted = {quals[i] for i in keep}
    conts = data.column("container").to_pylist()
    rows = [i for i in range(len(quals)) if i in keep or quals[i] in wanted or conts[i] in wanted]
    return symbols_from_table(data.take(rows)) if rows else []


def find_symbols(
    store: Store,
    query: str,
    *,
    limit: int = 50,
    index: SymbolIndex | None = None,
    with_members: bool = True,
    overlay: Mapping[str, Sequence[Symbol]] | None = None,
    every_word: Sequence[str] = (),
) -> list[SymbolHit]:
    """Symbols matching ``query``: exact name first, then prefix, camel-hump, substring,
    fuzzy; a class, interface or struct brings its members right after it.

    A dotted query (``Outer.method``) matches qualified names exactly first. Pass a
    long-lived ``index`` to answer from memory. ``overlay`` maps paths with unsaved
    edits to their symbols (``overlay_symbols``): they replace the indexed ones.
    ``every_word`` (lower-case words without spaces) keeps only the matches holding each
    of them in their name, container or path (any case), checked before a ``Symbol`` or
    hit is made of them.
    """
    check_int("limit", limit, 0, bounds.MAX_LIMIT)
    check_query("query", query)
    query = query.strip()
    if limit > MAX_LIMIT:
        raise QueryError(f"limit must be at most {MAX_LIMIT}; got {limit}")
    if not query or limit <= 0:
        return []
    unsaved = set(overlay or ())
    tables: list[NameTable] = []
    skips: list[Collection[str]] = []
    if index is not None:
        pairs = index.tables()
    else:
        pairs = [(NameTable(one_shot_symbols(store, query)), frozenset())]
    for table, skip in pairs:
        tables.append(table)
        skips.append(skip | unsaved)
    if overlay:
        tables.append(NameTable(s for syms in overlay.values() for s in syms))
        skips.append(())
    found: list[tuple[SymbolMatch, int, int]] = []  # (match, table, index)
    name = query.rsplit(".", 1)[-1]
    for t, (table, skipped) in enumerate(zip(tables, skips, strict=True)):
        matched: list[tuple[int, SymbolMatch]] = []
        if "." in query:
            matched += [
                (i, SymbolMatch.QUALIFIED) for i in table.qualified(query) if table.path(i) not in skipped
            ]
        matched += table.candidates(name, limit, skipped)
        if every_word and matched:
            held = table.hold_every_word([i for i, _ in matched], every_word)
            matched = [im for im, ok in zip(matched, held, strict=True) if ok]
        found += [(m, t, i) for i, m in matched]
    found.sort(key=lambda f: f[0])  # stable: the index before the overlay at equal match
    hits: list[SymbolHit] = []
    seen: set[tuple[str, str, int]] = set()
    for m, t, i in found:
        sym = tables[t].symbols[i]
        key = (sym.path, sym.qualified_name, sym.range.start.line)
        if key in seen:
            continue
        seen.add(key)
        hits.append(SymbolHit(sym, m, score_of(m)))
        if with_members and sym.kind in CONTAINER_KINDS and m <= SymbolMatch.PREFIX:
            for member in tables[t].members(sym):
                mkey = (member.path, member.qualified_name, member.range.start.line)
                if mkey not in seen:
                    seen.add(mkey)
                    hits.append(SymbolHit(member, SymbolMatch.MEMBER, score_of(m) * 0.9))
        if len(hits) >= limit:
            break
    return hits[:limit]


def overlay_symbols(
    overlay: Mapping[str, str], *, project: str, settings: ChunkSettings
) -> dict[str, tuple[Symbol, ...]]:
    """The symbols of unsaved buffers (path → text), parsed as the indexer would."""
    return {path: _parsed_symbols(path, text, project, settings) for path, text in overlay.items()}


@lru_cache(maxsize=64)
def _parsed_symbols(path: str, text: str, project: str, settings: ChunkSettings) -> tuple[Symbol, ...]:
    from ..languages import language_for_path  # tree-sitter: only an editor's unsaved buffers need it
    from ..parse import parse_file

    first_line = text.split("\n", 1)[0]
    return parse_file(
        path, text, language_for_path(path, first_line), project=project, settings=settings
    ).symbols


# Rows read when the ranking stage asks for the definitions of a few names.
_DEFINITIONS_MAX_ROWS = 400


def definitions_named(store: Store, names: Sequence[str]) -> list[Symbol]:
    """Symbols whose name is one of ``names`` in any case (the ranking stage's definition
    lookup: a BTree on ``name_lower`` answers it in a few ms)."""
    wanted = sorted({n.lower() for n in names if n})
    if not wanted:
        return []
    values = ", ".join("'" + n.replace("'", "''") + "'" for n in wanted)
    query = store.query(SYMBOLS).where(f"name_lower IN ({values})").limit(_DEFINITIONS_MAX_ROWS)
    rows = fetch(query).to_pylist()
    return [symbol_from_row(r) for r in rows]
