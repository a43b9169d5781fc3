"""The search every face calls: grep + BM25 + vector in parallel, fused by weighted RRF.

Single modes (``bm25``, ``vector``, ``grep``) go through the same function so
they share filters, hit building and the report.
"""

from __future__ import annotations

import logging
import os
import re
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar

from ..embed import Embedder
from ..errors import CodesiftError, QueryError
from ..graph import Graph
from ..model import Chunk, FileStatus
from ..settings import Settings
from ..store import CHUNKS, EMBEDDED, FILES, PENDING, Store, in_filters, load_chunks
from . import exact
from . import grep as grep_mod
from .filters import filters_sql, path_allowed
from .fusion import rrf
from .keyword import STOP_WORDS, KeywordHit, bm25, extract_keywords, query_terms, sanitize
from .multihop import multihop_result
from .results import MatchType, SearchHit, SearchReport, SearchRequest, SearchResult, Source
from .semantic import vector_search

log = logging.getLogger(__name__)

# Beyond these a request is a mistake, not a wish: each source over-fetches 3× the
# limit and every hop multiplies the chunks read (a limit of 10⁹ failed inside Lance).
MAX_LIMIT = 10_000
MAX_HOPS = 10

T = TypeVar("T")
_POOL = ThreadPoolExecutor(max_workers=3, thread_name_prefix="codesift-search")


def _keywords(request: SearchRequest) -> str:
    given = (request.exact_keywords or "").strip()
    if not given or given == request.query.strip():
        return extract_keywords(request.query)
    return given


def _weights(request: SearchRequest, settings: Settings) -> dict[Source, float]:
    s = settings.search
    semantic = s.semantic_weight if request.semantic_weight is None else request.semantic_weight
    if request.keyword_weight is not None:
        keyword = request.keyword_weight
    elif request.semantic_weight is not None and request.semantic_weight <= 1.0:
        keyword = 1.0 - request.semantic_weight  # raising one lowers the other
    else:
        keyword = s.keyword_weight
    grep_w = s.grep_weight if request.grep_weight is None else request.grep_weight
    if min(semantic, keyword, grep_w) < 0:
        raise QueryError("search weights must not be negative")
    return {Source.SEMANTIC: semantic, Source.BM25: keyword, Source.GREP: grep_w}


def grep_pattern(keywords: str) -> str:
    """An alternation of the keywords, escaped: what hybrid greps for.

    Words shorter than three characters and stop words are left to BM25: as
    grep patterns they match nearly every line.
    """
    words = []
    for raw in keywords.split():
        w = raw.strip("()[]{}\"'`,;:")
        if len(w) >= 3 and sanitize(w) and w.lower() not in STOP_WORDS:
            words.append(w)
    return "|".join(re.escape(w) for w in dict.fromkeys(words))


def _timed(fn: Callable[[], T], millis: dict[str, float], name: str) -> T:
    t = time.perf_counter()
    try:
        return fn()
    finally:
        millis[name] = round((time.perf_counter() - t) * 1000, 2)


def check_request(request: SearchRequest, limit: int | None = None) -> None:
    """Raise QueryError for an option out of range (``limit`` defaults to the request's)."""
    limit = request.limit if limit is None else limit
    if limit is not None and not 0 < limit <= MAX_LIMIT:
        raise QueryError(f"limit must be between 1 and {MAX_LIMIT}; got {limit}")
    if not 0 <= request.hops <= MAX_HOPS:
        raise QueryError(f"hops must be between 0 and {MAX_HOPS}; got {request.hops}")


def search(
    store: Store,
    request: SearchRequest,
    settings: Settings,
    *,
    root: Path,
    embedder: Embedder | None = None,
    overlay: Mapping[str, str] | None = None,
    graph: Graph | None = None,
) -> SearchResult:
    """Run one search and return hits (best first, score in [0, 1]) plus a report.

    With ``request.hops > 0`` the hits are widened over the reference graph
    (``multihop``); pass a long-lived ``graph`` to skip loading it per search.

    The report says which sources answered, how many results each gave, what a
    threshold dropped and whether the index was incomplete — an empty answer
    always carries its reason.
    """
    started = time.perf_counter()
    s = settings.search
    limit = request.limit or s.limit
    check_request(request, limit)
    fetch = limit * max(1, s.overfetch)
    where = filters_sql(request.filters)
    keywords = _keywords(request)
    semantic_query = (request.semantic_query or request.query).strip()
    notes: list[str] = []
    millis: dict[str, float] = {}
    mode = request.mode
    want_bm25 = mode in ("hybrid", "bm25")
    want_vec = mode in ("hybrid", "vector")
    if not (keywords.strip() or semantic_query):
        raise QueryError("empty query")

    threshold = (
        s.vector_score_threshold if request.vector_score_threshold is None else request.vector_score_threshold
    )
    min_sim = s.min_similarity if request.min_similarity is None else request.min_similarity
    futures: dict[Source, Future[list[str]]] = {}
    known: dict[str, Chunk] = {}  # chunks the sources returned whole
    dropped = [0]
    if want_vec and embedder is not None:
        meta = store.current_meta()
        if meta is not None and meta.model_id != embedder.model_id:
            notes.append(
                f"semantic search skipped: the index holds {meta.model_id} vectors but the settings "
                f"ask for {embedder.model_id} (run `codesift index` to rebuild)"
            )
            embedder = None
    # No vector yet (embedding follows the text index): nothing to search, and the
    # completeness note says why semantic found nothing.
    no_vectors = want_vec and embedder is not None and store.count(CHUNKS, EMBEDDED) == 0
    sims: dict[str, float] = {}
    if want_vec:
        if embedder is None:
            if not notes:
                notes.append("semantic search unavailable: no embedding model loaded")
        elif not no_vectors:
            emb = embedder

            def run_vec() -> list[str]:
                qv = emb.embed_query(semantic_query)
                res = vector_search(
                    store, qv, fetch, threshold=threshold, min_similarity=min_sim, where=where
                )
                dropped[0] = res.dropped
                sims.update({h.chunk_id: h.similarity for h in res.hits})
                known.update({h.chunk_id: h.chunk for h in res.hits})
                return [h.chunk_id for h in res.hits]

            futures[Source.SEMANTIC] = _POOL.submit(_timed, run_vec, millis, "semantic")
    bm25_scores: dict[str, float] = {}
    pool: list[KeywordHit] = []  # hybrid: the BM25 candidates the exact source matches
    if want_bm25:
        depth = fetch * exact.POOL if mode == "hybrid" else fetch

        def run_bm25() -> list[str]:
            hits = bm25(store, keywords, depth, where)
            pool.extend(hits)
            bm25_scores.update({h.chunk_id: h.score for h in hits})
            known.update({h.chunk_id: h.chunk for h in hits})
            return [h.chunk_id for h in hits[:fetch]]

        futures[Source.BM25] = _POOL.submit(_timed, run_bm25, millis, "bm25")
    if mode == "grep":
        futures[Source.GREP] = _POOL.submit(
            _timed,
            lambda: _grep_chunks(store, root, keywords, request, settings, overlay, fetch, where),
            millis,
            "grep",
        )

    rankings: dict[Source, list[str]] = {Source.SEMANTIC: []} if no_vectors else {}
    for source, fut in futures.items():
        try:
            rankings[source] = fut.result()
        except QueryError:
            raise
        except CodesiftError as exc:
            notes.append(f"{source} search failed: {exc}")
            rankings[source] = []
    if mode == "hybrid":
        # Exact keyword matches among the BM25 candidates, in BM25 order (whole-index
        # statistics), plus unsaved buffers: no disk walk per query (see exact.py).
        t = time.perf_counter()
        rankings[Source.GREP] = exact.exact_chunks(
            grep_pattern(keywords),
            pool,
            store=store,
            root=root,
            filters=request.filters,
            where=where,
            index_settings=settings.index,
            overlay=overlay,
            timeout_s=settings.search.grep_timeout_s,
        )[:fetch]
        millis["grep"] = round((time.perf_counter() - t) * 1000, 2)
    if want_bm25 and not sanitize(keywords):
        notes.append("the query has no searchable words for BM25 (only syntax characters)")

    weights = _weights(request, settings)
    if mode == "hybrid":
        fused = rrf(rankings, weights, s.rrf_k)
        ranked = [(f.key, f.score, f.sources) for f in fused[:limit]]
    else:
        only = {"bm25": Source.BM25, "vector": Source.SEMANTIC, "grep": Source.GREP}[mode]
        keys = rankings.get(only, [])[:limit]
        if only is Source.SEMANTIC:
            ranked = [(k, max(0.0, min(1.0, sims.get(k, 0.0))), (only,)) for k in keys]
        elif only is Source.BM25 and keys:
            top = max(bm25_scores.values()) or 1.0
            ranked = [(k, bm25_scores[k] / top, (only,)) for k in keys]
        else:
            n = len(keys)
            ranked = [(k, 1.0 - i / max(n, 1) * 0.5, (only,)) for i, k in enumerate(keys)]

    missing = [k for k, _, _ in ranked if k not in known]
    chunks = {**known, **load_chunks(store, missing)} if missing else known
    stale = _stale_paths(store, root, {c.path for c in chunks.values()})
    terms = _highlight_terms(keywords, semantic_query)
    match_type = {
        "hybrid": MatchType.HYBRID,
        "bm25": MatchType.BM25,
        "vector": MatchType.SEMANTIC,
        "grep": MatchType.GREP,
    }[mode]
    hits = tuple(
        SearchHit(
            chunk=chunks[k],
            score=round(score, 6),
            match_type=match_type,
            sources=tuple(sorted(srcs, key=list(Source).index)),
            highlights=highlight_spans(chunks[k].text, terms),
            stale=chunks[k].path in stale,
        )
        for k, score, srcs in ranked
        if k in chunks
    )
    notes.extend(_completeness_notes(store, want_vec))
    if dropped[0]:
        notes.append(
            f"{dropped[0]} vector results dropped by the thresholds (cosine distance ≥ "
            f"{threshold} or similarity < {min_sim})"
        )
    if not hits:
        notes.append(_why_empty(request, rankings, keywords))
    millis["total"] = round((time.perf_counter() - started) * 1000, 2)
    report = SearchReport(
        chars=sum(len(h.chunk.text) for h in hits),
        unique_files=len({h.chunk.path for h in hits}),
        chunks=len(hits),
        per_source={str(src): len(keys) for src, keys in rankings.items()},
        millis=millis,
        notes=tuple(notes),
        dropped_by_threshold=dropped[0],
        keywords=keywords,
    )
    result = SearchResult(hits, report)
    if request.hops > 0 and hits:
        result = multihop_result(
            graph or Graph(store), result, request.hops, lambda ids: load_chunks(store, ids), limit
        )
    return result


def _grep_chunks(
    store: Store,
    root: Path,
    keywords: str,
    request: SearchRequest,
    settings: Settings,
    overlay: Mapping[str, str] | None,
    limit: int,
    where: str | None,
) -> list[str]:
    """grep mode: chunks holding exact keyword matches on disk (ripgrep) or in unsaved
    buffers, ranked by BM25 (whole-index statistics) restricted to them first, then
    file and line order. No match is dropped for want of a BM25 score."""
    pattern = grep_pattern(keywords)
    if not pattern:
        return []
    result = grep_mod.grep(
        root,
        pattern,
        regex=True,
        case="smart",
        context=0,
        index_settings=settings.index,
        overlay=overlay,
        include=request.filters.include,
        exclude=request.filters.exclude,
        max_matches=2000,
        timeout_s=settings.search.grep_timeout_s,
    )
    lines: dict[str, set[int]] = {}
    for p in result.passages:
        if path_allowed(p.path, request.filters):
            lines.setdefault(p.path, set()).update(p.match_lines)
    ordered = exact.chunks_at_lines(store, lines, where)
    if len(ordered) > 1:
        id_filter = next(in_filters("id", ordered[:500]))
        ranked = [h.chunk_id for h in bm25(store, keywords, len(ordered), id_filter)]
        ordered = list(dict.fromkeys([*ranked, *ordered]))
    return ordered[:limit]


def _stale_paths(store: Store, root: Path, paths: set[str]) -> set[str]:
    """Paths whose file on disk differs (size or mtime) from what was indexed."""
    if not paths:
        return set()
    known = store.file_stats()
    stale: set[str] = set()
    for p in paths:
        try:
            st = os.stat(root / p)
        except OSError:
            stale.add(p)
            continue
        if known.get(p) != (st.st_size, st.st_mtime_ns):
            stale.add(p)
    return stale


def _highlight_terms(keywords: str, semantic_query: str) -> list[str]:
    terms = [t for t in query_terms(keywords) if len(t) > 1]
    terms += [t for t in query_terms(semantic_query) if len(t) > 2 and t not in STOP_WORDS]
    return sorted(dict.fromkeys(terms), key=len, reverse=True)


def highlight_spans(text: str, terms: Sequence[str]) -> tuple[tuple[int, int], ...]:
    """Character offsets of each term's occurrences in text (case-insensitive, merged)."""
    if not terms:
        return ()
    rx = re.compile("|".join(re.escape(t) for t in terms), re.IGNORECASE)
    spans: list[tuple[int, int]] = []
    for m in rx.finditer(text):
        if spans and m.start() <= spans[-1][1]:
            spans[-1] = (spans[-1][0], max(spans[-1][1], m.end()))
        else:
            spans.append((m.start(), m.end()))
    return tuple(spans)


def _completeness_notes(store: Store, want_vec: bool) -> list[str]:
    notes: list[str] = []
    if want_vec:
        pending = store.count(CHUNKS, PENDING)
        if pending:
            total = store.count(CHUNKS)
            notes.append(
                f"index incomplete: {pending} of {total} chunks have no vector yet, "
                "so semantic results are partial (run `codesift index` to finish)"
            )
    skipped = store.count(FILES, f"status = '{FileStatus.SKIPPED}'")
    if skipped:
        notes.append(f"{skipped} files are not indexed (see `codesift status` for each reason)")
    failed = store.count(FILES, f"status = '{FileStatus.FAILED}'")
    if failed:
        notes.append(f"index incomplete: {failed} files failed to index (see `codesift status`)")
    notes.extend(incomplete_notes(store))
    return notes


def incomplete_notes(store: Store) -> list[str]:
    """A note when a failed write (a full disk) left files out of the index, naming how many."""
    lost = store.incomplete_files()
    if not lost:
        return []
    return [
        f"index incomplete: {len(lost)} files are missing after a write to the index failed "
        f"(e.g. {lost[0]}); run `codesift index` to repair"
    ]


def _why_empty(request: SearchRequest, rankings: Mapping[Source, list[str]], keywords: str) -> str:
    asked = ", ".join(f"{src}: {len(keys)}" for src, keys in rankings.items()) or "no source ran"
    filt = "" if request.filters.is_empty() else " with the given filters"
    return f"no results for {request.query!r}{filt} (keywords {keywords!r}; {asked})"
