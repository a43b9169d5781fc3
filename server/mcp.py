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
import inspect
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.tools import Tool
from mcp.types import CallToolResult, InputRequiredResult, TextContent, ToolAnnotations
from pydantic import Field, ValidationError

from codesift.indexer.compaction import LINKS_HINT
from codesift.indexer.errors import (
    CodesiftError,
    EmbedError,
    IndexMissingError,
    QueryError,
    StoreError,
)
from codesift.indexer.files import read_file as read_text_file
from codesift.indexer.languages import language_for_path
from codesift.indexer.model import SymbolKind
from codesift.indexer.search.filters import path_allowed
from codesift.indexer.search.grep import grep as grep_files
from codesift.indexer.search.hybrid import search as run_search
from codesift.indexer.search.names import SymbolHit
from codesift.indexer.search.passages import Passage
from codesift.indexer.search.results import SearchHit, SearchRequest, SearchResult
from codesift.indexer.search.semantic import AGENT_VECTOR_THRESHOLD
from codesift.indexer.search.symbol_words import match_symbols
from codesift.indexer.sync import index_status

from .mcp_answer import (
    Page,
    hit_block,
    page_answer,
    passage_block,
    plural,
    symbol_block,
)
from .mcp_base import (
    MAX_HOPS,
    MAX_LIMIT,
    CaseName,
    Exclude,
    Include,
    Kinds,
    Languages,
    Limit,
    McpConfig,
    Offset,
    Projects,
    _answer,
    _check_page,
    _filters,
    error_line,
)
from .mcp_graph import GraphTools

log = logging.getLogger(__name__)

# grep_search keeps this many matching lines, in path order, so every page of an answer
# comes from the same passages (an agent pages with offset; no cap on the offset).
GREP_MAX_MATCHES = 100_000

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


class AgentTools(GraphTools):
    """The MCP tools: each translates arguments, calls the engine, and sizes the answer."""

    def _search(
        self, request: SearchRequest, want: int, roots: tuple[Path, ...]
    ) -> tuple[list[tuple[Path, SearchHit]], list[str]]:
        """Hits of every root asked (best first) and the notes; raises when no root could answer."""
        hits: list[tuple[Path, SearchHit]] = []
        notes: list[str] = []
        failures: list[CodesiftError] = []
        for root in roots:
            settings = self.workspaces.settings(root)
            try:
                store, _ = self.workspaces.store(root, settings)
                embedder = self._embedder_for(request.mode, settings, notes)
                ask = dataclasses.replace(request, limit=want)
                if ask.mode == "vector" and ask.vector_score_threshold is None:
                    # The kb-agent spec puts the cut-off on vector_search: 0.5 unless set.
                    configured = settings.search.vector_score_threshold
                    threshold = AGENT_VECTOR_THRESHOLD if configured is None else configured
                    ask = dataclasses.replace(ask, vector_score_threshold=threshold)
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
        if len(failures) == len(roots):
            raise failures[0]
        notes += [error_line(f) for f in failures]
        hits.sort(key=lambda rh: -rh[1].score)
        return hits, notes

    def _chunk_answer(
        self,
        tool: str,
        request: SearchRequest,
        limit: int | None,
        offset: int,
        projects: Sequence[str] | None,
    ) -> str:
        limit = self.agent_limit() if limit is None else limit
        _check_page(limit, offset)
        roots = self.roots_named(projects)
        hits, notes = self._search(request, offset + 2 * limit, roots)  # one page ahead: "how many more"
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
        files: Annotated[
            bool,
            Field(
                description="One result per file, its best chunk, files ranked by all their chunks' "
                "evidence (default false): for 'which files would I change for this issue'."
            ),
        ] = False,
        projects: Projects = None,
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
            group_by="file" if files else "chunk",
        )
        if not 0 <= hops <= MAX_HOPS:
            raise QueryError(f"hops must be between 0 and {MAX_HOPS}; got {hops}")
        return self._chunk_answer("hybrid_search", request, limit, offset, projects)

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
        projects: Projects = None,
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
        return self._chunk_answer("vector_search", request, limit, offset, projects)

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
        projects: Projects = None,
    ) -> str:
        """Exact search with ripgrep over the files on disk (no index needed): every match, never ranked away.

        Answers passages of ±10 lines around matches (match lines marked ':'),
        in file then line order; the first line gives characters and unique
        files, the last how many passages are left and the offset to get them."""
        roots = self.roots_named(projects)
        root_settings = [(root, self.workspaces.settings(root)) for root in roots]
        s = root_settings[0][1].search
        ctx = s.grep_context if context is None else context
        if not 0 <= ctx <= 50:
            raise QueryError(f"context must be between 0 and 50 lines; got {ctx}")
        _check_page(1 if limit is None else limit, 0)
        if offset < 0:
            raise QueryError(f"offset must be 0 or more; got {offset}")
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
                max_matches=GREP_MAX_MATCHES,
                timeout_s=settings.search.grep_timeout_s,
                sort_paths=True,  # each page re-runs the grep: the same passages every time
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
            notes.append(f"no match for {pattern!r} ({how}, {case} case) in {', '.join(map(str, roots))}")
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
        projects: Projects = None,
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
        for root in self.roots_named(projects):
            store, index = self.workspaces.store(root, self.workspaces.settings(root))
            for h in match_symbols(store, name, limit=fetch, index=index):
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
            st = index_status(root, self.workspaces.settings(root), probe_remote=False)
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
                *(
                    [
                        f"  fast tier {st.fast_model}: {st.fast_vectors_done:,} done, "
                        f"{st.fast_vectors_pending:,} pending (semantic search uses it until "
                        f"{st.model} has every chunk)"
                    ]
                    if st.fast_model
                    else []
                ),
                f"  model {st.model} ({st.dimension} dims), schema {st.schema_version}, "
                f"{st.index_bytes / 1e6:,.1f} MB on disk, read with {st.reader}",
                *(
                    [f"  embedding cache shared by the repository's worktrees: {st.cache_path}"]
                    if st.cache_shared
                    else []
                ),
                *(
                    [
                        f"  {st.linked_bytes / 1e6:,.1f} MB shared with other worktrees' indexes by hard "
                        + ("links" if st.links_kept else f"links until the next optimize ({LINKS_HINT})")
                    ]
                    if st.linked_bytes
                    else []
                ),
            ]
            if st.remote is not None:
                state = "reachable" if st.remote.reachable else "unreachable at the last index run"
                lines.append(
                    f"  remote {st.remote.uri} at commit {st.remote.commit or 'none copied yet'} ({state}); "
                    f"{st.remote.overlay_files:,} files are this machine's own"
                    + (f"; refused: {st.remote.refused}" if st.remote.refused else "")
                )
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


class CodesiftMcpServer(MCPServer):
    """The SDK's server, with arguments checked first: an unknown or ill-typed one is
    answered ``[ERROR: INVALID_ARGUMENT]`` naming it (the SDK ignored unknown ones and
    answered a wrong type with pydantic's raw text)."""

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Any = None
    ) -> CallToolResult | InputRequiredResult:
        tool = self._tool_manager.get_tool(name)
        problem = None if tool is None else argument_problem(name, tool, arguments)
        if problem is not None:
            text = f"[ERROR: INVALID_ARGUMENT] {problem}"
            return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)
        return await super().call_tool(name, arguments, context)


def argument_problem(name: str, tool: Tool, arguments: dict[str, Any]) -> str | None:
    """What is wrong with a tool call's arguments, naming the argument; None when nothing."""
    known = list(tool.parameters.get("properties", {}))
    unknown = sorted(set(arguments) - set(known))
    if unknown:
        return (
            f"{name} has no argument {', '.join(map(repr, unknown))}; "
            f"its arguments are {', '.join(known) or 'none'}"
        )
    try:
        tool.fn_metadata.validate_arguments(arguments)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "arguments"
        more = len(exc.errors()) - 1
        tail = f" (and {more} more)" if more else ""
        return f"argument {where!r} of {name}: {first['msg']}{tail}"
    return None


def create_server(config: McpConfig) -> MCPServer:
    """An MCP server exposing :data:`TOOL_NAMES` over one :class:`AgentTools`."""
    tools = AgentTools(config)
    server = CodesiftMcpServer(
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
