"""``workspace/executeCommand``: codesift.search / grep / symbols / research / reindex / status.

Each command takes one camelCase argument object (or none where every option
has a default) and answers JSON with LSP locations plus text and scores.
"""

from __future__ import annotations

import contextlib
import functools
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from codesift.indexer.errors import CodesiftError, IndexMissingError
from codesift.indexer.research import code_research, render_markdown
from codesift.indexer.search.grep import grep
from codesift.indexer.search.hybrid import check_request, search
from codesift.indexer.search.names import SymbolHit
from codesift.indexer.search.passages import CaseMode, GrepResult
from codesift.indexer.search.report import incomplete_notes
from codesift.indexer.search.results import SearchRequest, SearchResult
from codesift.indexer.search.symbol_words import match_symbols
from codesift.indexer.sync import index_status

from .. import convert
from ..lsp import CodesiftServer
from ..projects import Project

log = logging.getLogger(__name__)

T = TypeVar("T")

SEARCH = "codesift.search"
GREP = "codesift.grep"
SYMBOLS = "codesift.symbols"
RESEARCH = "codesift.research"
REINDEX = "codesift.reindex"
STATUS = "codesift.status"


@dataclass(frozen=True, slots=True)
class GrepArgs:
    pattern: str
    regex: bool = False
    case: CaseMode = "smart"
    context: int | None = None
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    max_matches: int = 10000
    projects: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class SymbolArgs:
    query: str
    limit: int = 50
    projects: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ResearchArgs:
    question: str
    depth: int = 3  # "what calls X": how far up the chain
    limit: int = 50
    projects: tuple[str, ...] = ()
    # Locations in the markdown as links to the files' absolute paths with a #L<line>
    # fragment (VS Code's Markdown preview opens those at the line); plain ``path:line`` otherwise.
    links: bool = False


@dataclass(frozen=True, slots=True)
class ReindexArgs:
    projects: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()  # workspace-relative: re-index only these files


@dataclass(frozen=True, slots=True)
class StatusArgs:
    projects: tuple[str, ...] = ()


def one_argument(cls: type[T], args: tuple[Any, ...], command: str) -> T:
    """The command's single argument object (none: every option at its default)."""
    if len(args) > 1:
        raise convert.invalid(f"{command} takes one argument object; got {len(args)} arguments")
    return convert.structure(cls, args[0] if args else {}, command)


def _stores(ls: CodesiftServer, names: tuple[str, ...], notes: list[str]) -> list[Project]:
    """Projects that can answer now; a note for each that cannot yet."""
    ready: list[Project] = []
    for project in ls.selected(names):
        try:
            project.store()
            ready.append(project)
        except IndexMissingError:
            notes.append(project.missing_note())
            continue
        busy = project.busy_note()
        if busy:
            notes.append(busy)
    if not ls.selected(names):
        notes.append(f"no workspace folder named {', '.join(names)}" if names else "no workspace folder open")
    return ready


def run_search(ls: CodesiftServer, request: SearchRequest) -> object:
    """One search over the selected projects, merged best first."""
    notes: list[str] = []
    found: list[tuple[Path, SearchResult]] = []
    with convert.engine_errors():
        check_request(request)  # bad options are refused even before any index is ready
    ready = _stores(ls, request.filters.projects, notes)
    for p in ready:
        embedder = None
        if request.mode in ("hybrid", "vector"):
            try:
                embedder = p.embedder()
            except CodesiftError as exc:
                notes.append(f"semantic search unavailable: {exc}")
        with convert.engine_errors(), contextlib.ExitStack() as stack:
            graph = stack.enter_context(p.graph()) if request.hops > 0 else None
            result = search(
                p.store(),
                request,
                p.settings,
                root=p.root,
                embedder=embedder,
                overlay=dict(p.overlay),
                graph=graph,
            )
        found.append((p.root, result))
    limit = request.limit or max((p.settings.search.limit for p in ready), default=20)
    return convert.search_json(found, limit, notes)


def run_grep(ls: CodesiftServer, a: GrepArgs) -> object:
    """Grep every selected project's files, unsaved buffers included."""
    found: list[tuple[Path, GrepResult]] = []
    for p in ls.selected(a.projects):
        with convert.engine_errors():
            result = grep(
                p.root,
                a.pattern,
                regex=a.regex,
                case=a.case,
                context=p.settings.search.grep_context if a.context is None else a.context,
                index_settings=p.settings.index,
                overlay=dict(p.overlay),
                include=a.include,
                exclude=a.exclude,
                max_matches=a.max_matches,
                timeout_s=p.settings.search.grep_timeout_s,
            )
        found.append((p.root, result))
    return convert.grep_json(found, ls.encoding)


def run_symbols(ls: CodesiftServer, a: SymbolArgs) -> object:
    """Symbols by name in every selected project."""
    notes: list[str] = []
    found: list[tuple[Path, list[SymbolHit]]] = []
    by_root = {p.root: p for p in ls.selected(a.projects)}
    for p in _stores(ls, a.projects, notes):
        with convert.engine_errors():
            notes.extend(incomplete_notes(p.store()))
            hits = match_symbols(
                p.store(), a.query, limit=a.limit, index=p.symbol_index(), overlay=p.unsaved_symbols()
            )
            found.append((p.root, hits))
    return convert.symbols_json(found, lambda root: by_root[root].lines.line, ls.encoding, notes)


def run_research(ls: CodesiftServer, a: ResearchArgs) -> object:
    """One research question over each selected project: structured findings plus markdown."""
    notes: list[str] = []
    answers: list[dict[str, object]] = []
    for p in _stores(ls, a.projects, notes):
        try:
            embedder = p.embedder()
        except CodesiftError as exc:
            notes.append(f"search part of research unavailable: {exc}")
            embedder = None
        with convert.engine_errors(), p.graph() as graph:
            result = code_research(
                p.store(),
                a.question,
                p.settings,
                root=p.root,
                embedder=embedder,
                graph=graph,
                depth=a.depth,
                limit=a.limit,
            )
        link = functools.partial(convert.line_link, p.root) if a.links else None
        markdown = render_markdown(result, link)
        answers.append(convert.research_json(p.root, p.name, result, markdown, p.lines.line, ls.encoding))
    markdown = "\n".join(str(r["markdown"]) for r in answers)
    return {"results": answers, "markdown": markdown, "notes": notes}


def run_reindex(ls: CodesiftServer, a: ReindexArgs) -> object:
    """Queue a full index run, or a re-index of some paths, for the selected projects."""
    projects = ls.selected(a.projects)
    for p in projects:
        if a.paths:
            p.writer.changed(a.paths)
        else:
            ls.spawn(functools.partial(ls.start_indexing, p))
    return {"queued": [p.name for p in projects], "paths": list(a.paths)}


def run_status(ls: CodesiftServer, a: StatusArgs) -> object:
    """What each selected project's index holds and what its writer is doing."""
    with convert.engine_errors():
        return convert.status_json(
            [
                (p.with_reader(index_status(p.root, p.settings, probe_remote=False)), p.doing())
                for p in ls.selected(a.projects)
            ]
        )


def register(server: CodesiftServer) -> None:
    """Register the codesift.* commands (listed in executeCommandProvider)."""

    @server.command(SEARCH)
    @server.thread()
    def codesift_search(ls: CodesiftServer, *args: Any) -> object:
        return run_search(ls, one_argument(SearchRequest, args, SEARCH))

    @server.command(GREP)
    @server.thread()
    def codesift_grep(ls: CodesiftServer, *args: Any) -> object:
        return run_grep(ls, one_argument(GrepArgs, args, GREP))

    @server.command(SYMBOLS)
    @server.thread()
    def codesift_symbols(ls: CodesiftServer, *args: Any) -> object:
        return run_symbols(ls, one_argument(SymbolArgs, args, SYMBOLS))

    @server.command(RESEARCH)
    @server.thread()
    def codesift_research(ls: CodesiftServer, *args: Any) -> object:
        return run_research(ls, one_argument(ResearchArgs, args, RESEARCH))

    @server.command(REINDEX)
    @server.thread()
    def codesift_reindex(ls: CodesiftServer, *args: Any) -> object:
        return run_reindex(ls, one_argument(ReindexArgs, args, REINDEX))

    @server.command(STATUS)
    @server.thread()
    def codesift_status(ls: CodesiftServer, *args: Any) -> object:
        return run_status(ls, one_argument(StatusArgs, args, STATUS))
