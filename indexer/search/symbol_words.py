"""A few words typed into a symbol box, matched against names: ``json loads`` is
``loads`` in ``json/__init__.py``, ``read config file`` is ``RawConfigParser.read_file``
in ``configparser.py``.

An editor's symbol box shows a symbol's name with its container and file beside it,
and VS Code keeps a result when each word of the query matches one of those. So a
symbol matches when every word is in its name, its container or its path (any case),
and at least one word is in the name itself. Each word is looked up as a name through
``find_symbols`` (exact, prefix, camel-hump, substring; never fuzzy, never a member
brought in by its class), then the other words are checked against the rest.
Ordered: by how well the best word matched the name (exact, prefix, camel-hump,
substring), then most words in the name, then shorter names.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..model import Symbol
from ..store import Store
from . import bounds
from .bounds import check_int, check_query
from .names import NameTable, SymbolHit, SymbolMatch
from .symbols import SymbolIndex, find_symbols, one_shot_symbols

# More words than this read as a sentence, for the search part alone.
MAX_WORDS = 3
# Name matches asked for per word before the other words filter them.
PER_WORD = 2_000


def query_words(query: str) -> list[str]:
    """The words of a short worded query (2 to ``MAX_WORDS``), lower-case; [] otherwise."""
    words = list(dict.fromkeys(query.lower().split()))
    return words if 2 <= len(words) <= MAX_WORDS else []


def match_symbols(
    store: Store,
    query: str,
    *,
    limit: int,
    index: SymbolIndex | None = None,
    overlay: Mapping[str, Sequence[Symbol]] | None = None,
) -> list[SymbolHit]:
    """Symbols for what a person typed: ``find_by_words`` for a few words, else
    ``find_symbols`` (a name, a prefix, camel humps; a class brings its members)."""
    words = query_words(query)
    if words:
        check_query("query", query)
        check_int("limit", limit, 0, bounds.MAX_LIMIT)
        return find_by_words(store, words, limit=limit, index=index, overlay=overlay)
    return find_symbols(store, query, limit=limit, index=index, overlay=overlay)


def find_by_words(
    store: Store,
    words: Sequence[str],
    *,
    limit: int,
    index: SymbolIndex | None = None,
    overlay: Mapping[str, Sequence[Symbol]] | None = None,
) -> list[SymbolHit]:
    """Symbols whose name, container or path hold every one of ``words`` (lower-case), at
    least one in the name; best first (see the module's docstring)."""
    if index is None:  # one shot (the CLI without a server): one read of the table for every word
        index = _Fixed(NameTable(one_shot_symbols(store, *words)))
    best: dict[tuple[str, str, int], tuple[int, SymbolMatch, SymbolHit]] = {}
    for word in words:
        found = find_symbols(
            store, word, limit=PER_WORD, index=index, with_members=False, overlay=overlay, every_word=words
        )
        for hit in found:
            if hit.match in (SymbolMatch.FUZZY, SymbolMatch.MEMBER):
                continue
            sym = hit.symbol
            key = (sym.path, sym.qualified_name, sym.range.start.line)
            known = best.get(key)
            if known is None or hit.match < known[1]:
                name = sym.name.lower()
                best[key] = (sum(1 for w in words if w in name), hit.match, hit)
    ranked = sorted(best.values(), key=_order)
    return [hit for _, _, hit in ranked[:limit]]


def _order(v: tuple[int, SymbolMatch, SymbolHit]) -> tuple[int, int, int, str, int]:
    in_name, match, hit = v
    sym = hit.symbol
    return (match, -in_name, len(sym.name), sym.path, sym.range.start.line)


class _Fixed(SymbolIndex):
    """One table of the symbols a one-shot lookup read, answered as a ``SymbolIndex``."""

    def __init__(self, table: NameTable) -> None:  # no store: nothing is read again
        self._fixed = table

    def tables(self) -> list[tuple[NameTable, frozenset[str]]]:
        return [(self._fixed, frozenset())]
