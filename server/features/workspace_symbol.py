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
from codesift.indexer.search.names import SymbolMatch
from codesift.indexer.search.results import SearchRequest
from codesift.indexer.search.symbol_words import match_symbols, query_words

from .. import convert
from ..lanes import SEARCH, priority_of
from ..lsp import CodesiftServer
from ..projects import Project
from ..protocol import CodesiftProtocol, Direct, Part, Serialized

log = logging.getLogger(__name__)

LIMIT = 100
SEARCH_LIMIT = 20
MIN_NAME_MATCHES = 3


def project_symbols(project: Project, query: str) -> list[Symbol]:
    """Name matches first — of the name typed, or of each of a few words (``find_by_words``)
    — then, when none is exact and fewer than ``MIN_NAME_MATCHES`` are strong, the
    definitions around hybrid search hits, while the answer has room for them. A longer
    sentence is the search alone."""
    named, rest = _named(project, query)
    return named if rest is None else rest()


def _named(project: Project, query: str) -> tuple[list[Symbol], Callable[[], list[Symbol]] | None]:
    """The name matches of ``project_symbols`` and, when its answer needs the search part
    too, what makes the whole answer (the names, then the search's definitions)."""
    try:
        store = project.store()
    except IndexMissingError:
        log.info("%s", project.missing_note())
        return [], None
    words = query_words(query)
    # one answer reads each table's version once: the one its key was read at
    versions = project.known_versions()
    with store.pinned_versions(versions):
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
    if exact or len(strong) >= MIN_NAME_MATCHES or len(out) >= LIMIT:
        return out[:LIMIT], None

    def rest() -> list[Symbol]:
        with store.pinned_versions(versions):
            return _unique([*out, *_searched(project, query)])[:LIMIT]

    return out, rest


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
    best first (``lanes.py``): names, then a few words, then the searches — a question
    that needs one finds its names in its own lane and runs its search last."""
    query = query.strip()
    if not query:
        return [Serialized("[]")]
    priority = priority_of(query)
    lanes = ls.lanes

    def submit(fn: Callable[[], object]) -> Future[object]:
        return lanes.submit(priority, fn)

    def later(fn: Callable[[], Serialized]) -> Future[Serialized]:
        return lanes.submit(SEARCH, fn)

    out: list[Part] = []
    encoding = ls.encoding
    for project in ls.selected():
        key = _key(project, query, encoding)
        if key is None:  # no index: an answer saying so, nothing to remember
            out.append(submit(partial(answer, project, query, encoding)))
            continue
        known = project.answers.peek(key)
        if known is not None:
            out.append(cast(Serialized, known))
            continue
        compute = partial(_answer_in_turn, project, query, encoding, later)
        out.append(project.answers.share(key, compute, submit))
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
    return _sent(project, project_symbols(project, query), encoding)


def _answer_in_turn(
    project: Project,
    query: str,
    encoding: str,
    later: Callable[[Callable[[], Serialized]], Future[Serialized]],
) -> Serialized | Future[Serialized]:
    """``answer``, with its search part (when it has one) handed to ``later``: a job that
    waits for every name and worded question of a burst. A search's CPU (its Python, the
    model, LanceDB's threads) slowed the worded questions running beside it 3-5x."""
    named, rest = _named(project, query)
    if rest is None:
        return _sent(project, named, encoding)
    return later(lambda: _sent(project, rest(), encoding))


def _sent(project: Project, symbols: list[Symbol], encoding: str) -> Serialized:
    found = convert.workspace_symbols_json(project.root, symbols, project.lines.reader(), encoding)
    return Serialized(json.dumps(found))
