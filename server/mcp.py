"""codesift for AI agents: the search tools over the Model Context Protocol (stdio).

Each tool translates its arguments into one engine call and the result into
plain text sized for an agent's context: a first line saying what came back
(characters, and unique files or chunks), results citing real paths with line
ranges, a character budget, and a last line saying how many more results there
are and how to get them. Failures are ``[ERROR: CODE] reason`` answers (MCP
``isError``), never an empty one.

The server only reads the index, so it runs safely beside the language server
(LanceDB readers never see half a commit). The reference-graph tools
(``find_callers``, ``find_implementations``, ``code_research`` and
``hybrid_search(hops=…)``) share one :class:`Graph` per root, kept beside the
cached store; it refreshes itself from the index before each question.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import logging
import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Literal, ParamSpec

from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field

from codesift.indexer.embed import Embedder, make_embedder
from codesift.indexer.errors import (
    CodesiftError,
    ConfigError,
    EmbedError,
    IndexMissingError,
    QueryError,
    StoreError,
)
from codesift.indexer.files import FileAccessError
from codesift.indexer.files import read_file as read_text_file
from codesift.indexer.graph import CallSite, Graph, Implementation, callers, implementations
from codesift.indexer.languages import language_for_path
from codesift.indexer.model import ChunkKind, Symbol, SymbolKind
from codesift.indexer.research import code_research as run_research
from codesift.indexer.research import render_markdown
from codesift.indexer.search.filters import path_allowed
from codesift.indexer.search.grep import Passage
from codesift.indexer.search.grep import grep as grep_files
from codesift.indexer.search.hybrid import search as run_search
from codesift.indexer.search.results import Filters, SearchHit, SearchMode, SearchRequest, SearchResult
from codesift.indexer.search.symbols import SymbolHit, SymbolIndex, find_symbols
from codesift.indexer.settings import EmbedSettings, Settings, load_settings
from codesift.indexer.store import Store
from codesift.indexer.sync import index_status, open_store

from .mcp_answer import (
    Block,
    Page,
    caller_block,
    hit_block,
    implementation_block,
    page_answer,
    passage_block,
    plural,
    symbol_block,
    text_answer,
)

log = logging.getLogger(__name__)

DEFAULT_BUDGET = 20_000
MIN_BUDGET = 2_000
MAX_LIMIT = 100
MAX_OFFSET = 1_000
MAX_HOPS = 3
MAX_CALLER_DEPTH = 5
MAX_GRAPH_RESULTS = 1_000  # callers / implementations gathered before paging

# The tools this server registers, in the order clients list them.
TOOL_NAMES: tuple[str, ...] = (
    "hybrid_search",
    "grep_search",
    "vector_search",
    "symbol_search",
    "find_callers",
    "find_implementations",
    "code_research",
    "read_file",
    "index_status",
)

ChunkKindName = Literal["function", "method", "class", "block", "window"]
CaseName = Literal["smart", "sensitive", "insensitive"]

Include = Annotated[
    list[str] | None,
    Field(description="Only paths matching one of these gitignore-style globs, e.g. 'src/auth/**', '*.py'."),
]
Exclude = Annotated[
    list[str] | None, Field(description="Never paths matching these globs, e.g. '**/tests/**'.")
]
Languages = Annotated[
    list[str] | None, Field(description="Only these languages, e.g. ['python', 'typescript', 'go'].")
]
Kinds = Annotated[
    list[ChunkKindName] | None,
    Field(description="Only chunks of these kinds (function, method, class, block, window)."),
]
Limit = Annotated[
    int | None,
    Field(description=f"Results per answer, 1-{MAX_LIMIT} (default: the search.agent_limit setting, 10)."),
]
Offset = Annotated[int, Field(description=f"Skip this many results, to page on (0-{MAX_OFFSET}; default 0).")]

P = ParamSpec("P")


@dataclass(frozen=True, slots=True)
class McpConfig:
    """What ``codesift mcp`` was started with."""

    roots: tuple[Path, ...]  # workspace roots: searched, and readable by read_file
    allow_roots: tuple[Path, ...] = ()  # further folders read_file may read
    budget: int = DEFAULT_BUDGET  # most characters in one answer

    def __post_init__(self) -> None:
        if not self.roots:
            raise ConfigError("the MCP server needs at least one workspace root")
        if self.budget < MIN_BUDGET:
            raise ConfigError(f"the answer budget must be at least {MIN_BUDGET} characters")


class DefinitionNotFound(QueryError):
    """No definition has the name a graph tool was asked about."""


def error_line(exc: CodesiftError) -> str:
    """The one place engine errors become ``[ERROR: CODE] reason``."""
    if isinstance(exc, FileAccessError):
        code = exc.code.value
    elif isinstance(exc, DefinitionNotFound):
        code = "NOT_FOUND"
    elif isinstance(exc, IndexMissingError):
        code = "INDEX_MISSING"
    elif isinstance(exc, QueryError):
        code = "INVALID_ARGUMENT"
    elif isinstance(exc, ConfigError):
        code = "CONFIG"
    elif isinstance(exc, EmbedError):
        code = "EMBEDDING_UNAVAILABLE"
    elif isinstance(exc, StoreError):
        code = "INDEX_UNREADABLE"
    else:
        code = "ENGINE"
    return f"[ERROR: {code}] {exc}"


def _answer(fn: Callable[P, str]) -> Callable[P, CallToolResult]:
    """Run a tool body; its text becomes the answer, an error an ``[ERROR: …]`` answer."""

    @functools.wraps(fn)
    def run(*args: P.args, **kwargs: P.kwargs) -> CallToolResult:
        try:
            text = fn(*args, **kwargs)
        except CodesiftError as exc:
            text = error_line(exc)
        except Exception as exc:  # a bug must still answer, not hang the agent
            log.exception("tool %s failed", fn.__name__)
            text = f"[ERROR: INTERNAL] {type(exc).__name__}: {exc}"
        return CallToolResult(
            content=[TextContent(type="text", text=text)], is_error=text.startswith("[ERROR:")
        )

    return run


def _check_page(limit: int, offset: int) -> None:
    if not 1 <= limit <= MAX_LIMIT:
        raise QueryError(f"limit must be between 1 and {MAX_LIMIT}; got {limit}")
    if not 0 <= offset <= MAX_OFFSET:
        raise QueryError(f"offset must be between 0 and {MAX_OFFSET}; got {offset}")


def _filters(
    include: Sequence[str] | None,
    exclude: Sequence[str] | None,
    languages: Sequence[str] | None,
    kinds: Sequence[str] | None = None,
) -> Filters:
    try:
        chunk_kinds = tuple(ChunkKind(k) for k in kinds or ())
    except ValueError as exc:
        raise QueryError(f"{exc}; kinds are {', '.join(k.value for k in ChunkKind)}") from exc
    return Filters(
        include=tuple(include or ()),
        exclude=tuple(exclude or ()),
        languages=tuple(languages or ()),
        kinds=chunk_kinds,
    )


@dataclass
class _Workspaces:
    """Settings, stores and embedders of the workspace roots, opened on first use."""

    roots: tuple[Path, ...]
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _stores: dict[Path, tuple[Store, SymbolIndex]] = field(default_factory=dict)
    _graphs: dict[Path, tuple[Store, Graph, threading.Lock]] = field(default_factory=dict)
    _embedders: dict[EmbedSettings, Embedder] = field(default_factory=dict)

    def settings(self, root: Path) -> Settings:
        return load_settings(root)

    def store(self, root: Path, settings: Settings) -> tuple[Store, SymbolIndex]:
        """The root's index; IndexMissingError (saying how to build it) when there is none."""
        with self._lock:
            cached = self._stores.get(root)
        if cached is not None and cached[0].read_meta() is not None:
            return cached
        store = open_store(root, settings)
        opened = (store, SymbolIndex(store))
        with self._lock:
            self._stores[root] = opened
        return opened

    def graph(self, root: Path, store: Store) -> tuple[Graph, threading.Lock]:
        """The root's reference graph (one per store; it follows the index) and the lock its users hold."""
        with self._lock:
            held = self._graphs.get(root)
            if held is None or held[0] is not store:
                held = self._graphs[root] = (store, Graph(store), threading.Lock())
            return held[1], held[2]

    def embedder(self, settings: Settings) -> Embedder:
        with self._lock:
            found = self._embedders.get(settings.embed)
            if found is None:
                found = self._embedders[settings.embed] = make_embedder(settings.embed)
            return found


class AgentTools:
    """The MCP tools: each translates arguments, calls the engine, and sizes the answer."""

    def __init__(self, config: McpConfig) -> None:
        self.config = config
        self.roots = tuple(Path(os.path.realpath(r)) for r in config.roots)
        self.readable = (*self.roots, *(Path(os.path.realpath(r)) for r in config.allow_roots))
        self.workspaces = _Workspaces(self.roots)
        self.budget = config.budget

    # ----- helpers ------------------------------------------------------------------

    def cite(self, root: Path, rel: str) -> str:
        """How answers name a file: relative to the root when there is one root, else absolute."""
        return rel if len(self.roots) == 1 else str(root / rel)

    def agent_limit(self) -> int:
        return int(self.workspaces.settings(self.roots[0]).search.agent_limit)

    def _search(self, request: SearchRequest, want: int) -> tuple[list[tuple[Path, SearchHit]], list[str]]:
        """Hits of every root (best first) and the notes; raises when no root could answer."""
        hits: list[tuple[Path, SearchHit]] = []
        notes: list[str] = []
        failures: list[CodesiftError] = []
        for root in self.roots:
            settings = self.workspaces.settings(root)
            try:
                store, _ = self.workspaces.store(root, settings)
                embedder = self._embedder_for(request.mode, settings, notes)
                ask = dataclasses.replace(request, limit=want)
                if request.hops > 0:
                    graph, lock = self.workspaces.graph(root, store)
                    with lock:
                        result: SearchResult = run_search(
                            store, ask, settings, root=root, embedder=embedder, graph=graph
                        )
                else:
                    result = run_search(store, ask, settings, root=root, embedder=embedder)
            except (IndexMissingError, StoreError) as exc:
                failures.append(exc)
                continue
            hits += [(root, h) for h in result.hits]
            prefix = "" if len(self.roots) == 1 else f"{root}: "
            notes += [prefix + n for n in result.report.notes]
        if len(failures) == len(self.roots):
            raise failures[0]
        notes += [error_line(f) for f in failures]
        hits.sort(key=lambda rh: -rh[1].score)
        return hits, notes

    def _embedder_for(self, mode: SearchMode, settings: Settings, notes: list[str]) -> Embedder | None:
        if mode not in ("hybrid", "vector"):
            return None
        try:
            return self.workspaces.embedder(settings)
        except EmbedError as exc:
            if mode == "vector":
                raise
            notes.append(f"semantic search unavailable, BM25 and grep answered alone: {exc}")
            return None

    def _chunk_answer(self, tool: str, request: SearchRequest, limit: int | None, offset: int) -> str:
        limit = self.agent_limit() if limit is None else limit
        _check_page(limit, offset)
        hits, notes = self._search(request, offset + 2 * limit)  # one page ahead: "how many more"
        if request.mode == "vector" and not hits:
            failed = [n for n in notes if "semantic search" in n]
            if failed:
                raise EmbedError("; ".join(failed))
        page = hits[offset : offset + limit]
        blocks = [
            hit_block(offset + i + 1, self.cite(root, hit.chunk.path), hit)
            for i, (root, hit) in enumerate(page)
        ]
        beyond = max(0, len(hits) - offset - limit)
        return page_answer(
            tool,
            Page(blocks, offset, limit, beyond, more_is_floor=beyond >= limit),
            notes,
            budget=self.budget,
            unit="chunks",
            hint="or narrow it with include / exclude / languages / kinds",
        )

    def _graphs(self) -> tuple[list[tuple[Path, Settings, Store, SymbolIndex]], list[str]]:
        """The indexed roots (with their settings and stores) and notes for the others."""
        found: list[tuple[Path, Settings, Store, SymbolIndex]] = []
        failures: list[CodesiftError] = []
        for root in self.roots:
            settings = self.workspaces.settings(root)
            try:
                store, index = self.workspaces.store(root, settings)
            except (IndexMissingError, StoreError) as exc:
                failures.append(exc)
                continue
            found.append((root, settings, store, index))
        if not found:
            raise failures[0]
        return found, [error_line(f) for f in failures]

    def _definitions(self, name: str) -> tuple[list[tuple[Path, Graph, threading.Lock, Symbol]], list[str]]:
        """The definitions ``name`` means in every indexed root; DefinitionNotFound (with the
        nearest names symbol search knows) when there is none."""
        if not name.strip():
            raise QueryError("name must not be empty")
        roots, notes = self._graphs()
        found: list[tuple[Path, Graph, threading.Lock, Symbol]] = []
        for root, _, store, _ in roots:
            graph, lock = self.workspaces.graph(root, store)
            with lock:
                found += [(root, graph, lock, s) for s in graph.find(name)]
        if not found:
            near: list[str] = []
            for root, _, store, index in roots:
                for h in find_symbols(store, name, limit=5, index=index):
                    s = h.symbol
                    near.append(f"{s.qualified_name} ({self.cite(root, s.path)}:{s.range.start.line})")
            hint = f"; nearest names: {', '.join(near[:5])}" if near else ""
            raise DefinitionNotFound(
                f"no definition named {name!r} in the index{hint}; symbol_search finds definitions "
                "by partial name"
            )
        if len(found) > 1 or notes:
            defs = "; ".join(
                f"{self.cite(root, s.path)}:{s.range.start.line} {s.kind.name.lower()} {s.qualified_name}"
                for root, _, _, s in found[:8]
            )
            more = f" and {len(found) - 8} more" if len(found) > 8 else ""
            notes.insert(0, f"{name!r} names {plural(len(found), 'definitions')}: {defs}{more}")
        return found, notes

    def _source(self, root: Path, rel: str) -> Callable[[int], str | None]:
        """A file's line by number (1-based), from disk; None when unreadable."""
        lines: list[str] | None = None

        def line(n: int) -> str | None:
            nonlocal lines
            if lines is None:
                try:
                    lines = (root / rel).read_text(encoding="utf-8", errors="replace").split("\n")
                except OSError:
                    lines = []
            return lines[n - 1] if 0 < n <= len(lines) else None

        return line

    def _graph_page(
        self,
        tool: str,
        blocks: list[Block],
        total: int,
        notes: list[str],
        page: tuple[int, int],
        unit: str,
        hint: str,
    ) -> str:
        """One page (``limit``, ``offset``) of ``total`` results as an answer."""
        limit, offset = page
        return page_answer(
            tool,
            Page(blocks, offset, limit, max(0, total - offset - limit), total=total),
            notes,
            budget=self.budget,
            unit=unit,
            hint=hint,
        )

    # ----- tools ----------------------------------------------------------------------

    @_answer
    def hybrid_search(
        self,
        semantic_query: Annotated[
            str, Field(description="What the code does, in words: 'where are expired tokens refreshed'.")
        ],
        exact_keywords: Annotated[
            str | None,
            Field(
                description="Identifiers or strings that must appear, for BM25 and grep: 'refresh_token "
                "TokenStore' (default: taken from semantic_query)."
            ),
        ] = None,
        limit: Limit = None,
        offset: Offset = 0,
        include: Include = None,
        exclude: Exclude = None,
        languages: Languages = None,
        kinds: Kinds = None,
        semantic_weight: Annotated[
            float | None,
            Field(description="RRF weight of vector search, 0-1 (default 0.7; BM25 gets 1 - it)."),
        ] = None,
        hops: Annotated[
            int,
            Field(
                description=f"Follow the reference graph from the hits this many times, 0-{MAX_HOPS} "
                "(default 0): the definitions they call, extend or use join the results, cited "
                "'via' the symbols that led there."
            ),
        ] = 0,
    ) -> str:
        """Best first: exact grep + BM25 + vector search fused by weighted Reciprocal Rank Fusion.

        Start here to find code. Returns the top chunks (10 by default) with their
        text, path and line range; the first line says how many chunks from how
        many files and characters came back, the last how many more results there
        are (page on with offset)."""
        request = SearchRequest(
            query=semantic_query,
            mode="hybrid",
            semantic_query=semantic_query,
            exact_keywords=exact_keywords,
            filters=_filters(include, exclude, languages, kinds),
            semantic_weight=semantic_weight,
            hops=hops,
        )
        if not 0 <= hops <= MAX_HOPS:
            raise QueryError(f"hops must be between 0 and {MAX_HOPS}; got {hops}")
        return self._chunk_answer("hybrid_search", request, limit, offset)

    @_answer
    def vector_search(
        self,
        query: Annotated[str, Field(description="Natural-language description of the code to find.")],
        limit: Limit = None,
        offset: Offset = 0,
        include: Include = None,
        exclude: Exclude = None,
        languages: Languages = None,
        kinds: Kinds = None,
        min_similarity: Annotated[
            float | None,
            Field(description="Drop results whose cosine similarity is below this, 0-1 (default 0.0)."),
        ] = None,
    ) -> str:
        """Semantic search only: chunks whose embedding is nearest to the query (cosine).

        Use when the words in the code are unknown. Results below the
        search.vector_score_threshold (cosine distance 0.5) are dropped and counted."""
        request = SearchRequest(
            query=query,
            mode="vector",
            filters=_filters(include, exclude, languages, kinds),
            min_similarity=min_similarity,
        )
        return self._chunk_answer("vector_search", request, limit, offset)

    @_answer
    def grep_search(
        self,
        pattern: Annotated[str, Field(description="Text to find; a regular expression when regex is true.")],
        regex: Annotated[
            bool, Field(description="Treat pattern as a regex (default false: literal).")
        ] = False,
        case: Annotated[
            CaseName,
            Field(
                description="smart (default: insensitive unless the pattern has a capital), "
                "sensitive, insensitive."
            ),
        ] = "smart",
        include: Include = None,
        exclude: Exclude = None,
        languages: Languages = None,
        context: Annotated[
            int | None, Field(description="Lines of context around each match, 0-50 (default 10).")
        ] = None,
        limit: Annotated[
            int | None,
            Field(description=f"Passages per answer, 1-{MAX_LIMIT} (default: as many as fit the budget)."),
        ] = None,
        offset: Annotated[int, Field(description="Skip this many passages, to page on (default 0).")] = 0,
    ) -> str:
        """Exact search with ripgrep over the files on disk (no index needed): every match, never ranked away.

        Answers passages of ±10 lines around matches (match lines marked ':'),
        in file then line order; the first line gives characters and unique
        files, the last how many passages are left and the offset to get them."""
        root_settings = [(root, self.workspaces.settings(root)) for root in self.roots]
        s = root_settings[0][1].search
        ctx = s.grep_context if context is None else context
        if not 0 <= ctx <= 50:
            raise QueryError(f"context must be between 0 and 50 lines; got {ctx}")
        _check_page(1 if limit is None else limit, offset)
        passages: list[tuple[Path, Passage]] = []
        notes: list[str] = []
        for root, settings in root_settings:
            result = grep_files(
                root,
                pattern,
                regex=regex,
                case=case,
                context=ctx,
                index_settings=settings.index,
                include=tuple(include or ()),
                exclude=tuple(exclude or ()),
                timeout_s=settings.search.grep_timeout_s,
            )
            langs = set(languages or ())
            passages += [
                (root, p) for p in result.passages if not langs or language_for_path(p.path) in langs
            ]
            if result.truncated:
                notes.append(f"grep stopped early, results are partial: {result.reason}")
        total_files = len({(root, p.path) for root, p in passages})
        page_all = passages[offset:]
        page = page_all if limit is None else page_all[:limit]
        blocks = [
            passage_block(offset + i + 1, self.cite(root, p.path), p) for i, (root, p) in enumerate(page)
        ]
        if not passages:
            how = "regex" if regex else "literal"
            notes.append(
                f"no match for {pattern!r} ({how}, {case} case) in {', '.join(map(str, self.roots))}"
            )
        if len(page) < len(passages):
            notes.append(f"{plural(len(passages), 'passages')} in {plural(total_files, 'files')} in all")
        return page_answer(
            "grep_search",
            Page(blocks, offset, len(page), max(0, len(page_all) - len(page)), total=len(passages)),
            notes,
            budget=self.budget,
            unit="passages",
            hint="or narrow it with include / exclude / languages",
        )

    @_answer
    def symbol_search(
        self,
        name: Annotated[
            str, Field(description="A symbol name or dotted qualified name: 'AuthService', 'Auth.login'.")
        ],
        limit: Annotated[
            int | None, Field(description=f"Symbols per answer, 1-{MAX_LIMIT} (default 20).")
        ] = None,
        offset: Offset = 0,
        kinds: Annotated[
            list[str] | None,
            Field(description="Only these symbol kinds: class, function, method, interface, struct, enum…"),
        ] = None,
        include: Include = None,
        exclude: Exclude = None,
        languages: Languages = None,
    ) -> str:
        """Definitions by name: exact first, then prefix, camel-hump, substring and fuzzy; a class brings its
        members.

        Each line cites path:start-end, the kind and the qualified name; read_file
        the range for the code."""
        limit = 20 if limit is None else limit
        _check_page(limit, offset)
        wanted = _symbol_kinds(kinds)
        path_filters = _filters(include, exclude, None)
        langs = set(languages or ())
        filtered = bool(wanted or langs or not path_filters.is_empty())
        fetch = (offset + 2 * limit) * (5 if filtered else 1)
        found: list[tuple[Path, SymbolHit]] = []
        for root in self.roots:
            store, index = self.workspaces.store(root, self.workspaces.settings(root))
            for h in find_symbols(store, name, limit=fetch, index=index):
                s = h.symbol
                if wanted and s.kind not in wanted:
                    continue
                if (langs and s.language not in langs) or not path_allowed(s.path, path_filters):
                    continue
                found.append((root, h))
        found.sort(key=lambda rh: -rh[1].score)
        page = found[offset : offset + limit]
        blocks = [symbol_block(self.cite(root, h.symbol.path), h) for root, h in page]
        beyond = max(0, len(found) - offset - limit)
        notes = [] if found else [f"no symbol matches {name!r}" + (" with these filters" if filtered else "")]
        return page_answer(
            "symbol_search",
            Page(blocks, offset, limit, beyond, more_is_floor=beyond >= limit),
            notes,
            budget=self.budget,
            unit="symbols",
            hint="or narrow it with kinds / include / languages",
        )

    @_answer
    def find_callers(
        self,
        name: Annotated[
            str,
            Field(
                description="The called definition: a name or qualified name ('validate', "
                "'AuthService.login', 'json.loads')."
            ),
        ],
        depth: Annotated[
            int,
            Field(
                description=f"Follow callers of callers this many levels, 1-{MAX_CALLER_DEPTH} (default 1: "
                "direct callers only)."
            ),
        ] = 1,
        include_unresolved: Annotated[
            bool,
            Field(
                description="Also list possible callers whose call could not be resolved but may be to "
                "it, marked UNRESOLVED (default false)."
            ),
        ] = False,
        limit: Annotated[
            int | None, Field(description=f"Callers per answer, 1-{MAX_LIMIT} (default 20).")
        ] = None,
        offset: Offset = 0,
    ) -> str:
        """Who calls a definition: each calling function or method (or a file's top-level code) with
        path:start-end and its call sites quoted by line.

        Calls are resolved through imports, classes and receivers; a call whose
        target could not be resolved is only listed with include_unresolved and
        then marked UNRESOLVED (a possible caller, not a certain one). With
        depth > 1 the callers of the callers follow, each definition once."""
        limit = 20 if limit is None else limit
        _check_page(limit, offset)
        if not 1 <= depth <= MAX_CALLER_DEPTH:
            raise QueryError(f"depth must be between 1 and {MAX_CALLER_DEPTH}; got {depth}")
        targets, notes = self._definitions(name)
        found: list[tuple[Path, CallSite, str, int]] = []
        hidden = 0
        for root, graph, lock, target in targets:
            with lock:
                seen: set[Symbol] = {t for r, _, _, t in targets if r == root}
                listed: set[tuple[str, str, str]] = set()
                frontier = [target]
                for level in range(1, depth + 1):
                    following: list[Symbol] = []
                    for callee in frontier:
                        for site in callers(graph, callee, include_unresolved=True):
                            if not site.resolved and not include_unresolved:
                                hidden += 1
                                continue
                            if site.caller is not None and site.caller in seen and site.resolved:
                                continue
                            key = (
                                site.path,
                                site.caller.qualified_name if site.caller else "",
                                callee.qualified_name,
                            )
                            if key in listed:
                                continue
                            listed.add(key)
                            found.append((root, site, callee.qualified_name, level))
                            if site.caller is not None and site.resolved:
                                seen.add(site.caller)
                                following.append(site.caller)
                    frontier = following[:MAX_GRAPH_RESULTS]
                    if not frontier or len(found) >= MAX_GRAPH_RESULTS:
                        break
        found.sort(key=lambda f: (not f[1].resolved, f[3]))  # certain first, then by depth
        if hidden:
            notes.append(
                f"{plural(hidden, 'possible callers')} whose calls could not be resolved not shown: "
                "include_unresolved=true lists them (marked UNRESOLVED)"
            )
        if any(not site.resolved for _, site, _, _ in found):
            notes.append(
                "entries marked UNRESOLVED are possible callers only: the name matches, "
                "the target is uncertain"
            )
        if not found:
            certain = "resolved " if hidden else ""
            notes.append(f"no {certain}calls to {name!r} found in the index")
        blocks = [
            caller_block(
                offset + i + 1,
                self.cite(root, site.path),
                site,
                callee,
                level,
                self._source(root, site.path),
            )
            for i, (root, site, callee, level) in enumerate(found[offset : offset + limit])
        ]
        return self._graph_page(
            "find_callers",
            blocks,
            len(found),
            notes,
            (limit, offset),
            "callers",
            "or name a qualified definition (Class.method) to narrow it",
        )

    @_answer
    def find_implementations(
        self,
        name: Annotated[
            str,
            Field(
                description="A class, interface, protocol or trait ('Shape', 'io.Reader'), or a method "
                "('Shape.area') for its overrides."
            ),
        ],
        limit: Annotated[
            int | None, Field(description=f"Implementations per answer, 1-{MAX_LIMIT} (default 20).")
        ] = None,
        offset: Offset = 0,
    ) -> str:
        """What implements a type: subclasses and implementers (transitively), Swift extensions and Rust
        impls adding a conformance, Python Protocol and Go interface structural implementers; for a method,
        its overrides.

        Each result cites path:start-end, how it implements (subclass, extension, override,
        structural, method-set), the supertype it implements and its declaration line."""
        limit = 20 if limit is None else limit
        _check_page(limit, offset)
        targets, notes = self._definitions(name)
        found: list[tuple[Path, Implementation]] = []
        seen: set[tuple[Path, str, int]] = set()
        for root, graph, lock, target in targets:
            with lock:
                impls = implementations(graph, target)
            for impl in impls:
                key = (root, impl.location.path, impl.location.span.start.line)
                if key not in seen:
                    seen.add(key)
                    found.append((root, impl))
        if not found:
            kinds = ", ".join(sorted({t.kind.name.lower() for _, _, _, t in targets}))
            notes.append(f"nothing in the index implements, extends or overrides {name!r} ({kinds})")
        blocks = [
            implementation_block(
                offset + i + 1,
                self.cite(root, impl.location.path),
                impl,
                self._source(root, impl.location.path),
            )
            for i, (root, impl) in enumerate(found[offset : offset + limit])
        ]
        return self._graph_page(
            "find_implementations",
            blocks,
            len(found),
            notes,
            (limit, offset),
            "implementations",
            "or ask about a more specific type",
        )

    @_answer
    def code_research(
        self,
        question: Annotated[
            str,
            Field(
                description="'implementations of X', 'what calls X' / 'callers of X', 'related to X', "
                "'dependencies of module M'; anything else is read as 'related to <question>'."
            ),
        ],
        depth: Annotated[
            int,
            Field(description=f"How far caller chains are followed, 1-{MAX_CALLER_DEPTH} (default 3)."),
        ] = 3,
    ) -> str:
        """Answers a structural question by composing the reference graph and search (no LLM):
        implementations, caller chains, related components, module dependencies.

        The answer is markdown: the subject's definitions, then findings with
        path:line (callers indented by depth). Use find_callers or
        find_implementations to page through long lists."""
        if not question.strip():
            raise QueryError("question must not be empty")
        if not 1 <= depth <= MAX_CALLER_DEPTH:
            raise QueryError(f"depth must be between 1 and {MAX_CALLER_DEPTH}; got {depth}")
        roots, notes = self._graphs()
        items: list[str] = []
        findings = 0
        files: set[tuple[Path, str]] = set()
        for root, settings, store, _ in roots:
            embedder = self._embedder_for("hybrid", settings, notes)
            graph, lock = self.workspaces.graph(root, store)
            with lock:
                result = run_research(
                    store, question, settings, root=root, embedder=embedder, graph=graph, depth=depth
                )
            findings += len(result.findings)
            files |= {(root, f.path) for f in result.findings}
            if result.dependencies is not None:
                deps = result.dependencies
                findings += len(deps.imports) + len(deps.imported_by)
                files |= {(root, loc.path) for d in (*deps.imports, *deps.imported_by) for loc in d.locations}
            text = render_markdown(result)
            if len(self.roots) > 1:
                text = f"## root {root}\n\n{text}\n"
            items += [line + "\n" for line in text.rstrip("\n").split("\n")]
        total = len(items)

        def summary(chars: int, shown: int) -> str:
            span = "" if shown == total else f"; {shown:,} of {total:,} lines shown"
            return (
                f"[code_research] {plural(findings, 'findings')} from {plural(len(files), 'unique files')}, "
                f"{plural(chars, 'characters')} (budget {self.budget:,}){span}"
            )

        return text_answer(
            summary,
            notes,
            items,
            budget=self.budget,
            unit="lines",
            hint="ask a narrower question, or page with find_callers / find_implementations (offset)",
        )

    @_answer
    def read_file(
        self,
        path: Annotated[
            str,
            Field(description="Path relative to a workspace root (as search results cite it), or absolute."),
        ],
        start_line: Annotated[int | None, Field(description="First line, 1-based (default 1).")] = None,
        end_line: Annotated[
            int | None, Field(description="Last line, inclusive (default: the end of the file).")
        ] = None,
    ) -> str:
        """The UTF-8 text of a file under the workspace roots or the allowed roots, optionally a line range.

        The first line names the file and the lines returned; the text follows
        exactly as on disk. Answers past the character budget stop at a whole
        line and say how to read on. Paths outside the allowed roots, binary and
        over-large files get an [ERROR: …] answer."""
        settings = self.workspaces.settings(self.roots[0])
        reserve = 600  # the header and the "read on" line
        got = read_text_file(
            path,
            self.readable,
            max_bytes=settings.index.max_file_bytes,
            start_line=start_line,
            end_line=end_line,
            max_chars=self.budget - reserve,
        )
        root = Path(got.root)
        shown = self.cite(root, got.relative_path) if root in self.roots else got.path
        note = f"; {got.note}" if got.note else ""
        head = (
            f"[read_file] {shown}: lines {got.start_line}-{got.end_line} of {got.total_lines}, "
            f"{len(got.text):,} characters{note}\n"
        )
        tail = ""
        asked_end = min(end_line or got.total_lines, got.total_lines)
        if got.truncated:
            nxt = got.end_line + 1
            tail = (
                f"\n[MORE] lines {nxt}-{asked_end} not shown (character budget {self.budget:,}): "
                f'call read_file(path="{shown}", start_line={nxt})'
            )
        return f"{head}{got.text}{tail}"

    @_answer
    def index_status(self) -> str:
        """What each workspace root's index holds: files, chunks, symbols, vectors (pending = incomplete).

        Says how to build a missing index and lists the roots read_file may read."""
        parts: list[str] = []
        missing = 0
        for root in self.roots:
            st = index_status(root, self.workspaces.settings(root))
            if not st.exists:
                missing += 1
                parts.append(
                    f"[ERROR: INDEX_MISSING] no codesift index for {root} yet: "
                    f"run `codesift index {root}` to build it (grep_search and read_file work without it)"
                )
                continue
            vectors = (
                f"{st.vectors_done:,} done, {st.vectors_pending:,} pending — index incomplete: semantic "
                f"results are partial until `codesift index {root}` (or the language server) finishes"
                if st.vectors_pending
                else f"{st.vectors_done:,} (complete)"
            )
            lines = [
                f"root {root}: index at {st.index_path}",
                f"  files: {st.files_indexed:,} indexed, {st.files_skipped:,} skipped, "
                f"{st.files_failed:,} failed; chunks {st.chunks:,}; symbols {st.symbols:,}",
                f"  vectors: {vectors}",
                f"  model {st.model} ({st.dimension} dims), schema {st.schema_version}, "
                f"{st.index_bytes / 1e6:,.1f} MB on disk",
            ]
            lines += [f"  skipped {r.path}: {r.reason}" for r in st.skipped[:10]]
            lines += [f"  failed {r.path}: {r.reason}" for r in st.failed[:10]]
            parts.append("\n".join(lines))
        if missing == len(self.roots) == 1:
            return parts[0]
        head = f"[index_status] {len(self.roots)} workspace roots, {len(self.roots) - missing} indexed"
        readable = ", ".join(map(str, self.readable))
        return "\n".join([head, *parts, f"read_file may read under: {readable}"])


def _symbol_kinds(kinds: Sequence[str] | None) -> set[SymbolKind]:
    out: set[SymbolKind] = set()
    for k in kinds or ():
        try:
            out.add(SymbolKind[k.strip().upper().replace(" ", "_")])
        except KeyError as exc:
            names = ", ".join(m.name.lower() for m in SymbolKind)
            raise QueryError(f"unknown symbol kind {k!r}; kinds are {names}") from exc
    return out


INSTRUCTIONS = """\
codesift searches the code of {roots}.
Start with hybrid_search(semantic_query=..., exact_keywords=...); use grep_search for exact text,
symbol_search for definitions by name, find_callers / find_implementations / code_research for
how code connects, read_file for a cited path and line range.
Every answer starts with what it holds and ends with how to get more; [ERROR: CODE] answers say why."""


def create_server(config: McpConfig) -> MCPServer:
    """An MCP server exposing :data:`TOOL_NAMES` over one :class:`AgentTools`."""
    tools = AgentTools(config)
    server = MCPServer(
        "codesift",
        instructions=INSTRUCTIONS.format(roots=", ".join(map(str, tools.roots))),
        log_level="WARNING",
    )
    budget_note = f"\n\nAnswers fit in {config.budget:,} characters."
    for name in TOOL_NAMES:
        fn = getattr(tools, name)
        server.add_tool(
            fn,
            name=name,
            description=inspect.cleandoc(fn.__doc__ or "") + budget_note,
            annotations=ToolAnnotations(read_only_hint=True, open_world_hint=False),
            structured_output=False,
        )
    return server
