"""``workspace/symbol``: names from the symbol table (of the name typed, or of each of a
few words), then — for a sentence, or a query with few name matches — definitions
enclosing hybrid search hits."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from functools import partial
from typing import cast

from lsprotocol import types as lsp

from codesift.indexer.enclosing import enclosing_symbols
from codesift.indexer.errors import CodesiftError, IndexMissingError
from codesift.indexer.model import Symbol
from codesift.indexer.search.hybrid import ranked_chunks
from codesift.indexer.search.results import SearchRequest
from codesift.indexer.search.symbol_words import match_symbols, query_words
from codesift.indexer.search.symbols import SymbolMatch

from .. import convert
from ..lanes import priority_of
from ..lsp import CodesiftProtocol, CodesiftServer, Direct, Part, Serialized
from ..projects import Project

log = logging.getLogger(__name__)

LIMIT = 100
SEARCH_LIMIT = 20
MIN_NAME_MATCHES = 3


def project_symbols(project: Project, query: str) -> list[Symbol]:
    """Name matches first — of the name typed, or of each of a few words (``find_by_words``)
    — then, when none is exact and fewer than ``MIN_NAME_MATCHES`` are strong, the
    definitions around hybrid search hits, while the answer has room for them. A longer
    sentence is the search alone."""
    try:
        store = project.store()
    except IndexMissingError:
        log.info("%s", project.missing_note())
        return []
    words = query_words(query)
    # one answer reads each table's version once: the one its key was read at
    with store.pinned_versions(project.known_versions()):
        if " " in query and not words:
            named = []  # a sentence: the search alone
        else:
            named = match_symbols(
                store, query, limit=LIMIT, index=project.symbol_index(), overlay=project.unsaved_symbols()
            )
        # strong: a name found whole or by its start for words (not a word inside a name),
        # any name but a member brought in by its class for a name typed
        weakest = SymbolMatch.PREFIX if words else SymbolMatch.FUZZY
        strong = [h for h in named if h.match <= weakest]
        exact = any(h.match <= SymbolMatch.QUALIFIED for h in strong)
        out = _unique(h.symbol for h in named)
        if not exact and len(strong) < MIN_NAME_MATCHES and len(out) < LIMIT:
            out = _unique([*out, *_searched(project, query)])
    return out[:LIMIT]


def _unique(symbols: Iterable[Symbol]) -> list[Symbol]:
    seen: set[tuple[str, str, int]] = set()
    unique = []
    for s in symbols:
        key = (s.path, s.qualified_name, s.range.start.line)
        if key not in seen:
            seen.add(key)
            unique.append(s)
    return unique


def _searched(project: Project, query: str) -> list[Symbol]:
    try:
        embedder = project.embedder()
    except CodesiftError as exc:
        log.info("semantic part of symbol search unavailable: %s", exc)
        embedder = None
    try:
        store = project.store()
        # Only where the hits are is used: the search's report (stale checks, highlights,
        # completeness counts) is not built.
        request = SearchRequest(query, limit=SEARCH_LIMIT)
        chunks = ranked_chunks(store, request, project.settings, root=project.root, embedder=embedder)
        return enclosing_symbols(store, chunks, project.symbol_index())
    except CodesiftError as exc:
        log.info("search part of symbol search failed: %s", exc)
        return []


def register(server: CodesiftServer) -> None:
    """Register ``workspace/symbol``: answered directly from its JSON (``answer_directly``),
    and through pygls for params it does not read (its errors are pygls')."""

    @server.feature(lsp.WORKSPACE_SYMBOL)
    async def workspace_symbol(
        ls: CodesiftServer, params: lsp.WorkspaceSymbolParams
    ) -> list[lsp.WorkspaceSymbol]:
        got = [await asyncio.wrap_future(p) if isinstance(p, Future) else p for p in parts(ls, params.query)]
        return cast(list[lsp.WorkspaceSymbol], Serialized.join(got))

    if isinstance(server.protocol, CodesiftProtocol):
        server.protocol.answer_directly(lsp.WORKSPACE_SYMBOL, Direct(_query_of, partial(parts, server)))


_TOKENS = ("workDoneToken", "partialResultToken")


def _query_of(params: object) -> tuple[str] | None:
    """The query of ``workspace/symbol`` params (a progress token or two aside, which this
    server does not use); None for anything else."""
    if type(params) is not dict:
        return None
    query = params.get("query")
    if type(query) is not str:
        return None
    for name, value in params.items():
        if name != "query" and (name not in _TOKENS or type(value) not in (int, str)):
            return None
    return (query,)


def parts(ls: CodesiftServer, query: str) -> list[Part]:
    """Each project's answer to ``query``, in order: remembered, or a future of it.

    A remembered answer is used as it is, on the event loop; only a new question takes
    a worker thread, and a copy of a question being computed shares its future
    (``AnswerCache.share``), so a burst does not queue behind its slow questions. It is
    remembered as the JSON text it is sent as (``Serialized``): a repeat is spliced into
    its response, not converted and serialised again. New questions wait for a worker
    best first (``lanes.py``): a name is never queued behind sentences, each a hybrid
    search."""
    query = query.strip()
    if not query:
        return [Serialized("[]")]
    priority = priority_of(query)

    def submit(fn: Callable[[], object]) -> Future[object]:
        return ls.lanes.submit(priority, fn)

    out: list[Part] = []
    encoding = ls.encoding
    for project in ls.selected():
        key = _key(project, query, encoding)
        known = project.answers.peek(key) if key is not None else None
        if known is not None:
            out.append(cast(Serialized, known))
            continue
        compute = partial(answer, project, query, encoding)
        out.append(submit(compute) if key is None else project.answers.share(key, compute, submit))
    return out


def _key(project: Project, query: str, encoding: str) -> tuple[object, ...] | None:
    try:
        return ("workspace/symbol", query, encoding, project.index_key())
    except IndexMissingError:
        return None  # no index yet: nothing to remember (the answer says why)


def answer(project: Project, query: str, encoding: str) -> Serialized:
    """One project's symbols for a query, as the JSON text they are sent as (remembered
    by the caller under a key of the index and unsaved buffers it was computed on);
    the same text pygls writes for ``convert.workspace_symbol`` of each."""
    found = convert.workspace_symbols_json(
        project.root, project_symbols(project, query), project.lines.reader(), encoding
    )
    return Serialized(json.dumps(found))
