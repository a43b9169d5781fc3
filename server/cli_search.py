"""``codesift search``, ``grep`` and ``symbols``: translate flags, call the engine, print."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, cast

import click

from .cli_common import (
    engine_errors,
    err,
    find_root,
    out,
    print_json,
    root_option,
    say_index,
    to_jsonable,
    with_index,
)

if TYPE_CHECKING:
    from codesift.indexer.search.grep import CaseMode
    from codesift.indexer.search.results import Filters, SearchMode, SearchReport, SearchResult


def _filters(
    include: tuple[str, ...],
    exclude: tuple[str, ...],
    lang: tuple[str, ...],
    kind: tuple[str, ...],
    project: tuple[str, ...],
) -> Filters:
    from codesift.indexer.model import ChunkKind
    from codesift.indexer.search.results import Filters

    try:
        kinds = tuple(ChunkKind(k) for k in kind)
    except ValueError as exc:
        raise click.BadParameter(f"{exc}; kinds are {', '.join(k.value for k in ChunkKind)}") from exc
    return Filters(include=include, exclude=exclude, languages=lang, kinds=kinds, projects=project)


def _print_hit_text(text: str, start_line: int, spans: Sequence[tuple[int, int]], max_lines: int) -> None:
    from rich.text import Text

    body = Text(text)
    for a, b in spans:
        body.stylize("bold yellow", a, b)
    lines = body.split("\n")
    for i, line in enumerate(lines[:max_lines]):
        out.print(Text(f"{start_line + i:>6} │ ", style="dim") + line, soft_wrap=True)
    if len(lines) > max_lines:
        out.print(Text(f"       … {len(lines) - max_lines} more lines", style="dim"))


@click.command()
@click.argument("query")
@root_option
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
@click.option(
    "--files",
    is_flag=True,
    help="One result per file (its best chunk): files ranked by all their chunks' evidence.",
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
    files: bool,
    as_json: bool,
) -> None:
    """Hybrid search (grep + BM25 + vectors) for QUERY."""
    from codesift.indexer.embed import make_embedder
    from codesift.indexer.errors import EmbedError
    from codesift.indexer.search.hybrid import search as run_search
    from codesift.indexer.search.results import SearchRequest
    from codesift.indexer.settings import load_settings
    from codesift.indexer.sync import open_store

    root = find_root(root)
    request = SearchRequest(
        query=query,
        mode=cast("SearchMode", mode),
        exact_keywords=keywords,
        limit=limit,
        filters=_filters(include, exclude, lang, kind, project),
        semantic_weight=semantic_weight,
        keyword_weight=keyword_weight,
        grep_weight=grep_weight,
        min_similarity=min_similarity,
        vector_score_threshold=threshold,
        hops=hops,
        group_by="file" if files else "chunk",
    )
    with engine_errors():
        settings = load_settings(root)
        store = open_store(root, settings)
        embedder, semantic_off = None, ""
        if mode in ("hybrid", "vector"):
            try:
                embedder = make_embedder(settings.embed)
            except EmbedError as exc:  # BM25 and grep still answer; the report says why
                semantic_off = str(exc)
        result = run_search(store, request, settings, root=root, embedder=embedder, semantic_off=semantic_off)
    if as_json:
        print_json(with_index(root, search_json(result)))
        return
    say_index(root)
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
        if not files:
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
    from rich.markup import escape

    per = ", ".join(f"{k} {v}" for k, v in report.per_source.items())
    err.print(
        f"[dim]{report.chunks} chunks from {report.unique_files} files, {report.chars:,} characters; "
        f"{per}; {report.millis.get('total', 0):.0f} ms[/]"
    )
    for note in dict.fromkeys(report.notes):  # each condition once
        err.print(f"[yellow]note:[/] {escape(note)}")


@click.command()
@click.argument("pattern")
@root_option
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
    from codesift.indexer.search.grep import grep as grep_files
    from codesift.indexer.settings import load_settings

    root = find_root(root)
    with engine_errors():
        settings = load_settings(root)
        result = grep_files(
            root,
            pattern,
            regex=regex,
            case=cast("CaseMode", case),
            context=settings.search.grep_context if context is None else context,
            index_settings=settings.index,
            include=include,
            exclude=exclude,
            max_matches=max_matches,
            timeout_s=settings.search.grep_timeout_s,
        )
    if as_json:
        print_json(with_index(root, result))
        return
    from rich.text import Text

    say_index(root)
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


@click.command()
@click.argument("name")
@root_option
@click.option("--limit", type=int, default=50, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print symbols as JSON.")
def symbols(name: str, root: Path | None, limit: int, as_json: bool) -> None:
    """Definitions named NAME: exact first, then prefix and fuzzy; a class brings its methods."""
    from codesift.indexer.search.symbols import SymbolMatch, find_symbols
    from codesift.indexer.settings import load_settings
    from codesift.indexer.sync import open_store

    root = find_root(root)
    with engine_errors():
        store = open_store(root, load_settings(root))
        hits = find_symbols(store, name, limit=limit)
    if as_json:
        print_json({"index_root": str(root), "symbols": to_jsonable(hits)})
        return
    say_index(root)
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
