"""The ``codesift`` command line: translate flags, call the engine, print.

Every command has ``--json``. Errors from the engine print their reason on
stderr and exit 2 (1 is kept for "ran, found nothing" where it applies).
"""

from __future__ import annotations

import dataclasses
import json
import logging
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from enum import Enum
from pathlib import Path
from typing import cast

import click
from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table
from rich.text import Text

from codesift.indexer.embed import make_embedder
from codesift.indexer.errors import CodesiftError, IndexBusyError
from codesift.indexer.graph import Graph, implementations
from codesift.indexer.graph import callees as graph_callees
from codesift.indexer.graph import callers as graph_callers
from codesift.indexer.model import ChunkKind, Symbol
from codesift.indexer.research import ResearchKind, code_research, parse_question, render_markdown
from codesift.indexer.search.grep import CaseMode
from codesift.indexer.search.grep import grep as grep_files
from codesift.indexer.search.hybrid import search as run_search
from codesift.indexer.search.results import Filters, SearchMode, SearchReport, SearchRequest, SearchResult
from codesift.indexer.search.symbols import SymbolMatch, find_symbols
from codesift.indexer.settings import load_settings
from codesift.indexer.sync import Progress as IndexProgress
from codesift.indexer.sync import index_status, index_workspace, open_store

err = Console(stderr=True)
out = Console()

EXIT_ERROR = 2
EXIT_BUSY = 3


def to_jsonable(value: object) -> object:
    """Dataclasses, enums and tuples → plain JSON values."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_jsonable(v) for v in value]
    return value


def print_json(value: object) -> None:
    click.echo(json.dumps(to_jsonable(value), indent=2, ensure_ascii=False))


@contextmanager
def engine_errors() -> Iterator[None]:
    """Map engine errors to a readable line on stderr and an exit code, in one place."""
    try:
        yield
    except IndexBusyError as exc:
        click.echo(f"codesift: {exc}", err=True)
        sys.exit(EXIT_BUSY)
    except CodesiftError as exc:
        click.echo(f"codesift: {exc}", err=True)
        sys.exit(EXIT_ERROR)


@click.group()
@click.version_option(package_name="codesift", prog_name="codesift", message="%(prog)s %(version)s")
@click.option("-v", "--verbose", count=True, help="More logging on stderr (-vv for debug).")
def main(verbose: int) -> None:
    """codesift: hybrid code search — grep, BM25, vectors, symbols — over a local index."""
    level = logging.WARNING - 10 * min(verbose, 2)
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    # The language server raises codesift's loggers to INFO for window/logMessage;
    # stderr keeps to the level asked for here (a client shows both streams).
    for handler in logging.getLogger().handlers:
        handler.setLevel(level)


class _Bar:
    """A rich progress bar fed by the engine's progress callback: one line per phase."""

    def __init__(self, progress: Progress) -> None:
        self.progress = progress
        self.tasks: dict[str, TaskID] = {}
        self.started: dict[str, float] = {}
        self.current = ""

    def _finish(self, phase: str) -> None:
        task = self.tasks[phase]
        total = self.progress.tasks[task].total or self.progress.tasks[task].completed or 1
        self.progress.update(task, completed=total, total=total)

    def __call__(self, p: IndexProgress) -> None:
        if p.phase != self.current and self.current in self.tasks:
            self._finish(self.current)
        if p.phase == "done":
            return
        self.current = p.phase
        if p.phase not in self.tasks:
            self.tasks[p.phase] = self.progress.add_task(p.phase, total=p.total or None, rate="")
            self.started[p.phase] = time.perf_counter()
        elapsed = max(time.perf_counter() - self.started[p.phase], 1e-6)
        rate = ""
        if p.phase == "parse":
            rate = f"{p.done / elapsed:,.0f} files/s, {p.chunks / elapsed:,.0f} chunks/s"
        elif p.phase == "embed":
            rate = f"{p.done / elapsed:,.1f} chunks/s"
        self.progress.update(self.tasks[p.phase], completed=p.done, total=p.total or None, rate=rate)


@main.command()
@click.argument("root", type=click.Path(file_okay=False, path_type=Path), default=".")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.option("--no-embed", is_flag=True, help="Text phase only (grep, BM25, symbols); vectors stay pending.")
@click.option("--rebuild", is_flag=True, help="Throw the index away and build it again.")
@click.option(
    "--no-wait", is_flag=True, help="Exit (code 3) instead of waiting when another index run holds the lock."
)
@click.option("--include", multiple=True, help="Only index paths matching this glob (repeatable).")
@click.option("--exclude", multiple=True, help="Also exclude paths matching this glob (repeatable).")
@click.option("--max-file-bytes", type=int, default=None, help="Skip files larger than this.")
def index(
    root: Path,
    as_json: bool,
    no_embed: bool,
    rebuild: bool,
    no_wait: bool,
    include: tuple[str, ...],
    exclude: tuple[str, ...],
    max_file_bytes: int | None,
) -> None:
    """Build or refresh the index of ROOT (default: the current directory)."""
    with engine_errors():
        settings = load_settings(root)
        idx: dict[str, object] = {}
        if include:
            idx["include"] = list(include)
        if exclude:
            idx["exclude"] = [*settings.index.exclude, *exclude]
        if max_file_bytes is not None:
            idx["max_file_bytes"] = max_file_bytes
        if idx:
            settings = load_settings(root, {"index": idx})
        quiet = as_json or not err.is_terminal

        def on_wait(message: str) -> None:
            click.echo(f"codesift: {message}", err=True)

        if quiet:
            report = index_workspace(
                root, settings, embed=not no_embed, wait=not no_wait, rebuild=rebuild, on_wait=on_wait
            )
        else:
            columns = (
                TextColumn("{task.description:>8}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[rate]}"),
                TimeElapsedColumn(),
                TextColumn("ETA"),
                TimeRemainingColumn(),
            )
            with Progress(*columns, console=err, transient=False) as bar:
                report = index_workspace(
                    root,
                    settings,
                    embed=not no_embed,
                    wait=not no_wait,
                    rebuild=rebuild,
                    progress=_Bar(bar),
                    on_wait=on_wait,
                )
    if as_json:
        print_json(report)
        return
    phases = ", ".join(f"{k} {v:.1f}s" for k, v in report.phase_seconds.items())
    if report.rebuilt:
        out.print(f"built from scratch ({report.rebuild_reason})")
    out.print(
        f"{report.files_seen} files seen: {report.files_changed} changed, {report.files_removed} removed, "
        f"{report.files_skipped} skipped, {report.files_failed} failed; "
        f"{report.chunks_written} chunks written, {report.chunks_embedded} embedded "
        f"({report.chunks_from_cache} from cache) in {report.seconds:.1f}s [{phases}]"
    )
    if report.vectors_pending:
        out.print(
            f"[yellow]{report.vectors_pending} chunks still wait for vectors[/] (run `codesift index` again)"
        )
    if report.note:
        out.print(f"[yellow]{escape(report.note)}[/]")


@main.command()
@click.argument("root", type=click.Path(file_okay=False, path_type=Path), default=".")
@click.option("--json", "as_json", is_flag=True, help="Print the status as JSON.")
@click.option("--all", "show_all", is_flag=True, help="List every skipped or failed file with its reason.")
def status(root: Path, as_json: bool, show_all: bool) -> None:
    """What the index of ROOT holds: files, chunks, symbols, vectors, skipped files and why."""
    with engine_errors():
        st = index_status(root, load_settings(root))
    if as_json:
        print_json(st)
        return
    if not st.exists:
        out.print(f"no index for {st.root} yet: run `codesift index {root}` to build it")
        sys.exit(1)
    table = Table(title=f"codesift index of {st.root}", show_header=False)
    rows = [
        ("index", st.index_path),
        ("files indexed", f"{st.files_indexed:,}"),
        ("files skipped", f"{st.files_skipped:,}"),
        ("files failed", f"{st.files_failed:,}"),
        ("chunks", f"{st.chunks:,}"),
        ("symbols", f"{st.symbols:,}"),
        ("vectors", f"{st.vectors_done:,} done, {st.vectors_pending:,} pending"),
        ("model", f"{st.model} ({st.dimension} dims)"),
        ("schema", str(st.schema_version)),
        ("size on disk", f"{st.index_bytes / 1e6:,.1f} MB"),
    ]
    for k, v in rows:
        table.add_row(k, v)
    out.print(table)
    limit = None if show_all else 10
    for title, records in (("skipped", st.skipped), ("failed", st.failed), ("notes", st.notes)):
        if records:
            out.print(f"[bold]{title}[/] ({len(records)}):")
            for r in records[:limit]:
                out.print(f"  {r.path}: {r.reason}")
            if limit and len(records) > limit:
                out.print(f"  … and {len(records) - limit} more (--all lists them)")


def find_root(start: Path) -> Path:
    """The nearest ancestor of ``start`` holding a ``.codesift`` index, else ``start``."""
    start = start.resolve()
    for d in (start, *start.parents):
        if (d / ".codesift").is_dir():
            return d
    return start


_root_option = click.option(
    "--root",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Workspace root (default: the nearest folder above holding .codesift/).",
)


def _filters(
    include: tuple[str, ...],
    exclude: tuple[str, ...],
    lang: tuple[str, ...],
    kind: tuple[str, ...],
    project: tuple[str, ...],
) -> Filters:
    try:
        kinds = tuple(ChunkKind(k) for k in kind)
    except ValueError as exc:
        raise click.BadParameter(f"{exc}; kinds are {', '.join(k.value for k in ChunkKind)}") from exc
    return Filters(include=include, exclude=exclude, languages=lang, kinds=kinds, projects=project)


def _print_hit_text(text: str, start_line: int, spans: Sequence[tuple[int, int]], max_lines: int) -> None:
    body = Text(text)
    for a, b in spans:
        body.stylize("bold yellow", a, b)
    lines = body.split("\n")
    for i, line in enumerate(lines[:max_lines]):
        out.print(Text(f"{start_line + i:>6} │ ", style="dim") + line, soft_wrap=True)
    if len(lines) > max_lines:
        out.print(Text(f"       … {len(lines) - max_lines} more lines", style="dim"))


@main.command()
@click.argument("query")
@_root_option
@click.option(
    "--mode", type=click.Choice(["hybrid", "bm25", "vector", "grep"]), default="hybrid", show_default=True
)
@click.option(
    "--keywords", default=None, help="Exact keywords for BM25 and grep (default: taken from the query)."
)
@click.option("--limit", type=int, default=None, help="Number of results (default: search.limit, 20).")
@click.option("--include", multiple=True, help="Only paths matching this glob, e.g. 'src/**' or '*.py'.")
@click.option("--exclude", multiple=True, help="Never paths matching this glob, e.g. '**/tests/**'.")
@click.option("--lang", multiple=True, help="Only this language (python, go, …).")
@click.option("--kind", multiple=True, help="Only this chunk kind (function, method, class, block, window).")
@click.option("--project", multiple=True, help="Only this project (workspace folder name).")
@click.option("--semantic-weight", type=float, default=None, help="RRF weight of vector search (0.7).")
@click.option("--keyword-weight", type=float, default=None, help="RRF weight of BM25 (0.3).")
@click.option("--grep-weight", type=float, default=None, help="RRF weight of exact grep.")
@click.option("--min-similarity", type=float, default=None, help="Drop vector hits below this cosine.")
@click.option(
    "--threshold", type=float, default=None, help="Drop vector hits at or beyond this cosine distance."
)
@click.option(
    "--hops",
    type=int,
    default=0,
    show_default=True,
    help="Multi-hop: follow references from the hits N times.",
)
@click.option("--json", "as_json", is_flag=True, help="Print hits and report as JSON.")
def search(
    query: str,
    root: Path | None,
    mode: str,
    keywords: str | None,
    limit: int | None,
    include: tuple[str, ...],
    exclude: tuple[str, ...],
    lang: tuple[str, ...],
    kind: tuple[str, ...],
    project: tuple[str, ...],
    semantic_weight: float | None,
    keyword_weight: float | None,
    grep_weight: float | None,
    min_similarity: float | None,
    threshold: float | None,
    hops: int,
    as_json: bool,
) -> None:
    """Hybrid search (grep + BM25 + vectors) for QUERY."""
    root = find_root(root or Path.cwd())
    request = SearchRequest(
        query=query,
        mode=cast(SearchMode, mode),
        exact_keywords=keywords,
        limit=limit,
        filters=_filters(include, exclude, lang, kind, project),
        semantic_weight=semantic_weight,
        keyword_weight=keyword_weight,
        grep_weight=grep_weight,
        min_similarity=min_similarity,
        vector_score_threshold=threshold,
        hops=hops,
    )
    with engine_errors():
        settings = load_settings(root)
        store = open_store(root, settings)
        embedder = make_embedder(settings.embed) if mode in ("hybrid", "vector") else None
        result = run_search(store, request, settings, root=root, embedder=embedder)
    if as_json:
        print_json(search_json(result))
        return
    for hit in result.hits:
        c = hit.chunk
        stale = " [red](changed since indexed)[/]" if hit.stale else ""
        what = f" {c.kind} {c.symbol}" if c.symbol else f" {c.kind}"
        if hit.via:
            what += f" [dim](via {' → '.join(hit.via)})[/]"
        out.print(
            f"[bold cyan]{c.path}[/]:{c.start_line}-{c.end_line}  [green]{hit.score:.3f}[/] "
            f"[dim]{'+'.join(hit.sources)}[/]{what}{stale}"
        )
        _print_hit_text(c.text, c.start_line, hit.highlights, 8)
    _print_report(result.report)
    if not result.hits:
        sys.exit(1)


def search_json(result: SearchResult) -> dict[str, object]:
    """The documented ``--json`` shape of a search."""
    hits = [
        {
            "id": h.chunk.id,
            "path": h.chunk.path,
            "project": h.chunk.project,
            "start_line": h.chunk.start_line,
            "end_line": h.chunk.end_line,
            "score": h.score,
            "match_type": h.match_type.value,
            "sources": [s.value for s in h.sources],
            "symbol": h.chunk.symbol,
            "kind": h.chunk.kind.value,
            "language": h.chunk.language,
            "text": h.chunk.text,
            "content_hash": h.chunk.content_hash,
            "highlights": [list(s) for s in h.highlights],
            "stale": h.stale,
            "via": list(h.via),
        }
        for h in result.hits
    ]
    return {"hits": hits, "report": cast(dict[str, object], to_jsonable(result.report))}


def _print_report(report: SearchReport) -> None:
    per = ", ".join(f"{k} {v}" for k, v in report.per_source.items())
    err.print(
        f"[dim]{report.chunks} chunks from {report.unique_files} files, {report.chars:,} characters; "
        f"{per}; {report.millis.get('total', 0):.0f} ms[/]"
    )
    for note in report.notes:
        err.print(f"[yellow]note:[/] {note}")


@main.command()
@click.argument("pattern")
@_root_option
@click.option("--regex", "-e", is_flag=True, help="PATTERN is a regular expression (default: literal).")
@click.option("--ignore-case", "-i", "case", flag_value="insensitive", help="Case-insensitive.")
@click.option("--case-sensitive", "-s", "case", flag_value="sensitive", help="Case-sensitive.")
@click.option(
    "--smart-case",
    "-S",
    "case",
    flag_value="smart",
    default=True,
    help="Insensitive unless PATTERN has a capital (default).",
)
@click.option("--context", "-C", type=int, default=None, help="Lines of context (default 10).")
@click.option("--include", multiple=True, help="Only paths matching this glob.")
@click.option("--exclude", multiple=True, help="Never paths matching this glob.")
@click.option("--max-matches", type=int, default=10000, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print passages as JSON.")
def grep(
    pattern: str,
    root: Path | None,
    regex: bool,
    case: str,
    context: int | None,
    include: tuple[str, ...],
    exclude: tuple[str, ...],
    max_matches: int,
    as_json: bool,
) -> None:
    """Exact search with ripgrep; passages of ±10 lines around each match."""
    root = find_root(root or Path.cwd())
    with engine_errors():
        settings = load_settings(root)
        result = grep_files(
            root,
            pattern,
            regex=regex,
            case=cast(CaseMode, case),
            context=settings.search.grep_context if context is None else context,
            index_settings=settings.index,
            include=include,
            exclude=exclude,
            max_matches=max_matches,
            timeout_s=settings.search.grep_timeout_s,
        )
    if as_json:
        print_json(result)
        return
    for p in result.passages:
        out.print(f"[bold cyan]{p.path}[/]")
        body = Text(p.text)
        for a, b in p.highlights:
            body.stylize("bold yellow", a, b)
        for i, line in enumerate(body.split("\n")):
            n = p.start_line + i
            mark = ":" if n in p.match_lines else "-"
            out.print(Text(f"{n:>6}{mark} ", style="green" if mark == ":" else "dim") + line, soft_wrap=True)
        out.print()
    err.print(
        f"[dim]{result.matches} matching lines in {result.files} files, "
        f"{sum(len(p.text) for p in result.passages):,} characters; {result.millis:.0f} ms[/]"
    )
    if result.truncated:
        err.print(f"[yellow]note:[/] stopped early: {result.reason}")
    if not result.passages:
        err.print(f"no match for {pattern!r}")
        sys.exit(1)


@main.command()
@click.argument("name")
@_root_option
@click.option("--limit", type=int, default=50, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print symbols as JSON.")
def symbols(name: str, root: Path | None, limit: int, as_json: bool) -> None:
    """Definitions named NAME: exact first, then prefix and fuzzy; a class brings its methods."""
    root = find_root(root or Path.cwd())
    with engine_errors():
        store = open_store(root, load_settings(root))
        hits = find_symbols(store, name, limit=limit)
    if as_json:
        print_json(hits)
        return
    for h in hits:
        s = h.symbol
        indent = "    " if h.match is SymbolMatch.MEMBER else ""
        out.print(
            f"{indent}[bold]{s.qualified_name}[/] [dim]{s.kind.name.lower()}[/] "
            f"[cyan]{s.path}[/]:{s.selection_range.start.line}"
        )
    if not hits:
        err.print(f"no symbol matches {name!r}")
        sys.exit(1)


@main.command()
@click.option("--stdio", is_flag=True, help="Talk over stdin/stdout (the default).")
@click.option("--tcp", "tcp", default=None, metavar="HOST:PORT", help="Listen on a TCP socket instead.")
def serve(stdio: bool, tcp: str | None) -> None:
    """Run the language server (stdio by default; --tcp HOST:PORT to listen on a socket)."""
    from codesift.server.lsp import create_server

    server = create_server()
    if tcp is None:
        server.start_io()
        return
    host, _, port = tcp.rpartition(":")
    if not port.isdigit():
        raise click.BadParameter(f"expected HOST:PORT, got {tcp!r}", param_hint="--tcp")
    server.start_tcp(host or "127.0.0.1", int(port))


@main.command("mcp")
@click.option(
    "--root",
    "roots",
    multiple=True,
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="Workspace root to search (repeatable; default: the nearest folder above holding .codesift/).",
)
@click.option(
    "--allow-root",
    "allow_roots",
    multiple=True,
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="A further folder read_file may read (repeatable); workspace roots always are.",
)
@click.option(
    "--budget",
    type=click.IntRange(min=2_000),
    default=None,
    help="Most characters in one tool answer (default: search.agent_budget_chars, 20000).",
)
def mcp_command(roots: tuple[Path, ...], allow_roots: tuple[Path, ...], budget: int | None) -> None:
    """Run the MCP server for AI agents over stdio: hybrid/grep/vector/symbol search, read_file, status."""
    from codesift.server.mcp import create_server
    from codesift.server.mcp_base import McpConfig

    with engine_errors():
        resolved = tuple(r.resolve() for r in roots) or (find_root(Path.cwd()),)
        settings = load_settings(resolved[0])
        extra = tuple((resolved[0] / r).resolve() for r in settings.search.agent_allowed_roots)
        config = McpConfig(
            roots=resolved,
            allow_roots=tuple(r.resolve() for r in allow_roots) + extra,
            budget=budget or settings.search.agent_budget_chars,
        )
    create_server(config).run("stdio")


def _graph_targets(root: Path, name: str) -> tuple[Graph, list[Symbol]]:
    """The graph of the workspace and the definitions NAME means; exit 1 when none."""
    graph = Graph(open_store(root, load_settings(root)))
    targets = graph.find(name)
    if not targets:
        err.print(f"no definition named {name!r} in the index")
        sys.exit(1)
    return graph, targets


def _where(sym: Symbol | None, path: str = "") -> str:
    if sym is None:
        return f"[cyan]{path}[/] (top level)"
    return f"[bold]{sym.qualified_name}[/] [cyan]{sym.path}[/]:{sym.selection_range.start.line}"


@main.command()
@click.argument("name")
@_root_option
@click.option(
    "--unresolved", is_flag=True, help="Also unresolved calls that list NAME among their candidates."
)
@click.option("--json", "as_json", is_flag=True, help="Print callers as JSON.")
def callers(name: str, root: Path | None, unresolved: bool, as_json: bool) -> None:
    """Who calls NAME (``loads``, ``json.loads``, ``JSONDecoder.decode``): callers with call sites."""
    root = find_root(root or Path.cwd())
    with engine_errors():
        graph, targets = _graph_targets(root, name)
        found = [(t, graph_callers(graph, t, include_unresolved=unresolved)) for t in targets]
    if as_json:
        print_json([{"symbol": t, "callers": sites} for t, sites in found])
        return
    for target, sites in found:
        out.print(f"{_where(target)} [dim]— {len(sites)} callers[/]")
        for site in sites:
            lines = ", ".join(str(r.start.line) for r in site.from_ranges)
            mark = "" if site.resolved else " [yellow](unresolved: a candidate)[/]"
            out.print(f"  ← {_where(site.caller, site.path)} [dim]line {lines}[/]{mark}")
    if not any(sites for _, sites in found):
        sys.exit(1)


@main.command()
@click.argument("name")
@_root_option
@click.option("--json", "as_json", is_flag=True, help="Print callees as JSON.")
def callees(name: str, root: Path | None, as_json: bool) -> None:
    """What NAME calls: resolved targets, and unresolved calls with their candidates."""
    root = find_root(root or Path.cwd())
    with engine_errors():
        graph, targets = _graph_targets(root, name)
        found = [(t, graph_callees(graph, t)) for t in targets]
    if as_json:
        print_json([{"symbol": t, "callees": calls} for t, calls in found])
        return
    for target, calls in found:
        out.print(f"{_where(target)} [dim]— {len(calls)} callees[/]")
        for c in calls:
            lines = ", ".join(str(r.start.line) for r in c.from_ranges)
            if c.callee is not None:
                out.print(f"  → {_where(c.callee)} [dim]line {lines}[/]")
            else:
                hint = f"{len(c.candidates)} candidates" if c.candidates else "outside the index"
                out.print(f"  → {c.name} [yellow](unresolved, {hint})[/] [dim]line {lines}[/]")
    if not any(calls for _, calls in found):
        sys.exit(1)


@main.command()
@click.argument("name")
@_root_option
@click.option("--json", "as_json", is_flag=True, help="Print implementations as JSON.")
def impls(name: str, root: Path | None, as_json: bool) -> None:
    """Implementations of NAME: subclasses, implementers, extensions (transitive); overrides of a method."""
    root = find_root(root or Path.cwd())
    with engine_errors():
        graph, targets = _graph_targets(root, name)
        found = [(t, implementations(graph, t)) for t in targets]
    if as_json:
        print_json([{"symbol": t, "implementations": found_impls} for t, found_impls in found])
        return
    for target, found_impls in found:
        out.print(f"{_where(target)} [dim]— {len(found_impls)} implementations[/]")
        for impl in found_impls:
            loc = impl.location
            what = impl.symbol.qualified_name if impl.symbol is not None else "(extension)"
            out.print(
                f"  {impl.how.value:<10} [bold]{what}[/] [cyan]{loc.path}[/]:{loc.span.start.line} "
                f"[dim](of {impl.of})[/]"
            )
    if not any(found_impls for _, found_impls in found):
        sys.exit(1)


@main.command()
@click.argument("question")
@_root_option
@click.option("--depth", type=int, default=3, show_default=True, help="How far caller chains are traced.")
@click.option("--limit", type=int, default=50, show_default=True)
@click.option("--no-semantic", is_flag=True, help="Related: search with BM25 only (no model load).")
@click.option("--json", "as_json", is_flag=True, help="Print the structured result as JSON.")
def research(
    question: str, root: Path | None, depth: int, limit: int, no_semantic: bool, as_json: bool
) -> None:
    """Answer "implementations of X", "what calls X", "related to X", "dependencies of module M"."""
    root = find_root(root or Path.cwd())
    with engine_errors():
        settings = load_settings(root)
        store = open_store(root, settings)
        kind, _ = parse_question(question)
        wants_model = kind is ResearchKind.RELATED and not no_semantic
        embedder = make_embedder(settings.embed) if wants_model else None
        result = code_research(
            store, question, settings, root=root, embedder=embedder, depth=depth, limit=limit
        )
    if as_json:
        print_json(result)
        return
    click.echo(render_markdown(result), nl=False)
    if not result.findings and result.dependencies is None:
        sys.exit(1)


if __name__ == "__main__":  # pragma: no cover
    main()
