"""``codesift search``, ``grep`` and ``symbols``: translate flags, call the engine, print.

Each command builds its JSON answer (the ``--json`` shape) with a ``*_payload``
function, either here or in a running server for the same index (``endpoint``),
then prints that answer: the output is the same whichever answered.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import click

from .cli_common import (
    Parts,
    answer,
    find_root,
    print_json,
    root_option,
    to_jsonable,
    with_index,
)
from .cli_print import print_grep, print_search, print_symbols

if TYPE_CHECKING:
    from codesift.indexer.search.passages import CaseMode, GrepResult
    from codesift.indexer.search.results import Filters, SearchMode, SearchResult


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
    root = find_root(root)
    args: dict[str, Any] = {
        "query": query,
        "mode": mode,
        "keywords": keywords,
        "limit": limit,
        "include": include,
        "exclude": exclude,
        "lang": lang,
        "kind": kind,
        "project": project,
        "semantic_weight": semantic_weight,
        "keyword_weight": keyword_weight,
        "grep_weight": grep_weight,
        "min_similarity": min_similarity,
        "threshold": threshold,
        "hops": hops,
        "files": files,
    }
    payload = answer(root, "search", args, search_payload)
    if as_json:
        print_json(payload)
        return
    if code := print_search(payload, files):
        sys.exit(code)


def search_payload(
    parts: Parts,
    *,
    query: str,
    mode: str,
    keywords: str | None,
    limit: int | None,
    include: Sequence[str],
    exclude: Sequence[str],
    lang: Sequence[str],
    kind: Sequence[str],
    project: Sequence[str],
    semantic_weight: float | None,
    keyword_weight: float | None,
    grep_weight: float | None,
    min_similarity: float | None,
    threshold: float | None,
    hops: int,
    files: bool,
) -> dict[str, object]:
    """``codesift search``'s JSON answer, computed with ``parts`` (here or in a server)."""
    from codesift.indexer.embed import load_ahead
    from codesift.indexer.errors import EmbedError
    from codesift.indexer.search.results import SearchRequest

    request = SearchRequest(
        query=query,
        mode=cast("SearchMode", mode),
        exact_keywords=keywords,
        limit=limit,
        filters=_filters(tuple(include), tuple(exclude), tuple(lang), tuple(kind), tuple(project)),
        semantic_weight=semantic_weight,
        keyword_weight=keyword_weight,
        grep_weight=grep_weight,
        min_similarity=min_similarity,
        vector_score_threshold=threshold,
        hops=hops,
        group_by="file" if files else "chunk",
    )
    embedder, semantic_off, loading = None, "", None
    if mode in ("hybrid", "vector"):
        try:
            embedder = parts.embedder()
        except EmbedError as exc:  # BM25 and grep still answer; the report says why
            semantic_off = str(exc)
        else:
            loading = load_ahead(embedder)  # the model loads while the engine imports
    warming = None
    try:
        store = parts.store()  # imports lancedb
        if loading is not None:  # a cold process: its first vector query reads the index
            warming = store.warm_vector_index()  # while the engine imports
        from codesift.indexer.search.hybrid import search as run_search

        with parts.graph(hops) as graph:
            result = run_search(
                store,
                request,
                parts.settings,
                root=parts.root,
                embedder=embedder,
                graph=graph,
                semantic_off=semantic_off,
            )
    finally:
        if loading is not None:
            loading.join()  # never leave onnxruntime loading while the interpreter exits
        if warming is not None:
            with contextlib.suppress(Exception):
                warming.result()  # nor a query on LanceDB's threads
    return with_index(parts.root, search_json(result))


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
            "vector_model": h.vector_model,
        }
        for h in result.hits
    ]
    return {"hits": hits, "report": cast(dict[str, object], to_jsonable(result.report))}


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
    root = find_root(root)
    args: dict[str, Any] = {
        "pattern": pattern,
        "regex": regex,
        "case": case,
        "context": context,
        "include": include,
        "exclude": exclude,
        "max_matches": max_matches,
    }
    payload = answer(root, "grep", args, grep_payload)
    if as_json:
        print_json(payload)
        return
    if code := print_grep(payload, pattern):
        sys.exit(code)


def grep_payload(
    parts: Parts,
    *,
    pattern: str,
    regex: bool,
    case: str,
    context: int | None,
    include: Sequence[str],
    exclude: Sequence[str],
    max_matches: int,
) -> dict[str, object]:
    """``codesift grep``'s JSON answer: ripgrep over the files on disk (no index needed)."""
    from codesift.indexer.search.grep import grep as grep_files

    settings = parts.settings
    result = grep_files(
        parts.root,
        pattern,
        regex=regex,
        case=cast("CaseMode", case),
        context=settings.search.grep_context if context is None else context,
        index_settings=settings.index,
        include=tuple(include),
        exclude=tuple(exclude),
        max_matches=max_matches,
        timeout_s=settings.search.grep_timeout_s,
    )
    return {"index_root": str(parts.root), **grep_json(result)}


def grep_json(result: GrepResult) -> dict[str, object]:
    """The documented ``--json`` shape of a grep, built field by field: the generic
    dataclass walk cost ~15 ms on the 2,000 passages of a common word in the stdlib."""
    passages = [
        {
            "path": p.path,
            "start_line": p.start_line,
            "end_line": p.end_line,
            "match_lines": list(p.match_lines),
            "text": p.text,
            "highlights": [list(h) for h in p.highlights],
        }
        for p in result.passages
    ]
    return {
        "passages": passages,
        "files": result.files,
        "matches": result.matches,
        "truncated": result.truncated,
        "reason": result.reason,
        "millis": result.millis,
    }


@click.command()
@click.argument("name")
@root_option
@click.option("--limit", type=int, default=50, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print symbols as JSON.")
def symbols(name: str, root: Path | None, limit: int, as_json: bool) -> None:
    """Definitions named NAME: exact first, then prefix and fuzzy; a class brings its methods."""
    root = find_root(root)
    payload = answer(root, "symbols", {"name": name, "limit": limit}, symbols_payload)
    if as_json:
        print_json(payload)
        return
    if code := print_symbols(payload, name):
        sys.exit(code)


def symbols_payload(parts: Parts, *, name: str, limit: int) -> dict[str, object]:
    """``codesift symbols``' JSON answer."""
    from codesift.indexer.search.symbol_words import match_symbols

    hits = match_symbols(parts.store(), name, limit=limit, index=parts.symbol_index())
    return {"index_root": str(parts.root), "symbols": to_jsonable(hits)}
