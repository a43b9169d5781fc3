"""The search every face calls: grep + BM25 + vector in parallel, fused by weighted
RRF, then ranked (``search.ranking``), optionally widened over the reference graph.

Single modes (``bm25``, ``vector``, ``grep``) go through the same function so
they share filters, hit building and the report; they show one source's own
order, so the ranking stage runs for hybrid alone.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from ..embed import Embedder, fast_tier_embedder
from ..errors import CodesiftError, QueryError
from ..model import Chunk, Symbol
from ..rows import in_filters
from ..settings import SearchSettings, Settings
from ..store import CHUNKS, FILES, META, IndexMeta, Store, load_chunks
from ..text import search_text
from . import bounds, exact
from . import grep as grep_mod
from .bounds import check_float, check_int, check_query
from .filters import filters_sql, path_allowed
from .fusion import rrf
from .keyword import STOP_WORDS, bm25, extract_keywords, query_terms, sanitize
from .multihop import Relevance, multihop_result
from .plan import Plan, Retrieved
from .ranking import Candidate, Ranker, asked_roles, definition_lookup, understand
from .ranking.query import bm25_text, semantic_text
from .references import file_references
from .report import empty_report, report
from .results import SearchRequest, SearchResult, Source
from .semantic import choose_tier, chunk_similarities, vector_search
from .symbols import definitions_named

if TYPE_CHECKING:  # the graph loads only for hops: a plain search never imports it
    from ..graph import Graph

log = logging.getLogger(__name__)

T = TypeVar("T")
_POOL = ThreadPoolExecutor(max_workers=4, thread_name_prefix="codesift-search")
_DEFAULT_SEARCH = SearchSettings()
# File-level answers look this many times deeper: a file's evidence is spread over its chunks.
FILE_DEPTH = 3


def _weights(request: SearchRequest, settings: Settings) -> dict[Source, float]:
    s = settings.search
    semantic = s.semantic_weight if request.semantic_weight is None else request.semantic_weight
    if request.keyword_weight is not None:
        keyword = request.keyword_weight
    elif request.semantic_weight is not None and request.semantic_weight <= 1.0:
        keyword = 1.0 - request.semantic_weight  # raising one lowers the other
    elif semantic != _DEFAULT_SEARCH.semantic_weight and s.keyword_weight == _DEFAULT_SEARCH.keyword_weight:
        keyword = max(0.0, 1.0 - semantic)  # a settings file moves it as the flag does
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
    if limit is not None:
        check_int("limit", limit, 1, bounds.MAX_LIMIT)
    check_int("hops", request.hops, 0, bounds.MAX_HOPS)


def _plan(request: SearchRequest, settings: Settings) -> Plan:
    s = settings.search
    limit = request.limit or s.limit
    check_request(request, limit)
    for name, weight in (
        ("semantic_weight", request.semantic_weight),
        ("keyword_weight", request.keyword_weight),
        ("grep_weight", request.grep_weight),
    ):
        check_float(name, weight, 0.0, bounds.MAX_WEIGHT)
    check_float("min_similarity", request.min_similarity, -1.0, 1.0)
    check_float("vector_score_threshold", request.vector_score_threshold, 0.0, 2.0)
    check_query("query", request.query)
    check_query("exact_keywords", request.exact_keywords or "")
    check_query("semantic_query", request.semantic_query or "")
    intent = understand(request.query)
    given = (request.exact_keywords or "").strip()
    own_keywords = bool(given) and given != request.query.strip()
    keywords = given if own_keywords else extract_keywords(request.query)
    plurals = request.mode == "hybrid"
    bm25_query = given if own_keywords else (bm25_text(intent, with_plurals=plurals) or keywords)
    semantic_query = (request.semantic_query or "").strip() or semantic_text(intent)
    # Candidates per source do not grow with a limit below the default: the same
    # query gives the same scores at --limit 3 and --limit 20.
    depth = max(1, s.overfetch) * max(limit, s.limit)
    if request.group_by == "file":
        depth *= FILE_DEPTH
    threshold = (
        s.vector_score_threshold if request.vector_score_threshold is None else request.vector_score_threshold
    )
    return Plan(
        request=request,
        mode=request.mode,
        limit=limit,
        depth=depth,
        where=filters_sql(request.filters),
        intent=intent,
        keywords=keywords,
        bm25_query=bm25_query,
        semantic_query=semantic_query,
        threshold=threshold,
        min_similarity=s.min_similarity if request.min_similarity is None else request.min_similarity,
        weights=_weights(request, settings),
        rank=request.mode == "hybrid" and s.rank == "full",
    )


def search(
    store: Store,
    request: SearchRequest,
    settings: Settings,
    *,
    root: Path,
    embedder: Embedder | None = None,
    overlay: Mapping[str, str] | None = None,
    graph: Graph | None = None,
    semantic_off: str = "",
) -> SearchResult:
    """Run one search and return hits (best first, score in [0, 1]) plus a report.

    A pipeline of named steps: plan (defaults, query understanding) → retrieve
    (the sources in parallel) → fuse (weighted RRF) → rank (the ranking stage,
    ``search.ranking``) → expand (``request.hops`` over the reference graph; pass a
    long-lived ``graph`` to skip loading it per search) → report.

    Without an ``embedder`` the vector source is off; ``semantic_off`` says why (the
    model is missing…) in the report, and BM25 and grep answer alone.

    The report says which sources answered, how many results each gave, what a
    threshold dropped and whether the index was incomplete — an empty answer
    always carries its reason.
    """
    started = time.perf_counter()
    plan = _plan(request, settings)
    if not (plan.keywords.strip() or plan.semantic_query):
        # The specification: an empty or whitespace query returns an empty list, no error.
        return SearchResult((), empty_report(started, "empty query: nothing to search for"))
    with store.pinned_versions():  # the report's counts and stats check each table once
        # the tables every search's report reads, and the vector source's choice of tier
        store.pin_versions((FILES, CHUNKS, META) if request.mode in ("hybrid", "vector") else (FILES,))
        return _run(store, plan, settings, root, embedder, overlay, graph, semantic_off, started)


def _run(
    store: Store,
    plan: Plan,
    settings: Settings,
    root: Path,
    embedder: Embedder | None,
    overlay: Mapping[str, str] | None,
    graph: Graph | None,
    semantic_off: str,
    started: float,
) -> SearchResult:
    """``search``'s steps after the plan: retrieve → fuse → rank → report → expand."""
    request = plan.request
    got, candidates = _ranked(store, plan, settings, root, embedder, overlay, semantic_off)
    result = report(store, root, plan, got, candidates[: plan.limit], started)
    if request.hops > 0 and result.hits:
        from ..graph import Graph

        relevance = _relevance(store, plan, got)
        result = multihop_result(
            graph or Graph(store),
            result,
            request.hops,
            lambda ids: load_chunks(store, ids, where=plan.where),
            plan.limit,
            relevance,
        )
    return result


def _ranked(
    store: Store,
    plan: Plan,
    settings: Settings,
    root: Path,
    embedder: Embedder | None,
    overlay: Mapping[str, str] | None,
    semantic_off: str,
) -> tuple[Retrieved, list[Candidate]]:
    """retrieve → fuse → rank: every candidate, best first (``plan.limit`` not applied)."""
    got = _retrieve(
        store, plan, settings, root=root, embedder=embedder, overlay=overlay, semantic_off=semantic_off
    )
    candidates = _fuse(store, plan, got, settings)
    if plan.rank:
        t = time.perf_counter()
        candidates = _rank(store, plan, candidates, got.definitions, got.references)
        got.millis["rank"] = round((time.perf_counter() - t) * 1000, 2)
    elif plan.request.group_by == "file":
        candidates = _first_per_file(candidates)
    return got, candidates


def ranked_chunks(
    store: Store,
    request: SearchRequest,
    settings: Settings,
    *,
    root: Path,
    embedder: Embedder | None = None,
    overlay: Mapping[str, str] | None = None,
) -> list[Chunk]:
    """The chunks of ``search``'s hits, in their order, without the report: no stale
    checks, highlights or completeness counts (~10% of a hybrid search's CPU). For a
    caller that uses only where the hits are: ``workspace/symbol`` turns them into the
    definitions enclosing them. ``request.hops`` is not followed."""
    plan = _plan(request, settings)
    if not (plan.keywords.strip() or plan.semantic_query):
        return []
    with store.pinned_versions():
        store.pin_versions((FILES, CHUNKS, META))
        _, candidates = _ranked(store, plan, settings, root, embedder, overlay, "")
    return [c.chunk for c in candidates[: plan.limit]]


def _retrieve(
    store: Store,
    plan: Plan,
    settings: Settings,
    *,
    root: Path,
    embedder: Embedder | None,
    overlay: Mapping[str, str] | None,
    semantic_off: str = "",
) -> Retrieved:
    """Run the sources the mode asks for, in parallel; a failing source is a note.

    BM25 starts first, and in hybrid the exact source matches its pool on the same
    worker as soon as it returns: both overlap the vector tier's choice and search
    instead of following them."""
    got = Retrieved()
    mode, depth, where = plan.mode, plan.depth, plan.where
    want_bm25 = mode in ("hybrid", "bm25")
    want_vec = mode in ("hybrid", "vector")
    futures: dict[Source, Future[list[str]]] = {}
    pins = store.shared_pins()  # the workers read each table's version once with this thread
    bm25_future: Future[list[str]] | None = None
    # The exact source's answer, computed after BM25 on its worker (hybrid): its ids,
    # or what it raised (raised again here, where it always was).
    exact_done: list[list[str] | BaseException] = []
    if want_bm25:
        pool = exact.POOL if plan.intent.long else exact.SHORT_POOL
        pool_depth = depth * pool if mode == "hybrid" else depth

        def run_bm25() -> list[str]:
            hits = bm25(store, plan.bm25_query, pool_depth, where)
            got.pool.extend(hits)
            got.bm25_scores.update({h.chunk_id: h.score for h in hits})
            got.known.update({h.chunk_id: h.chunk for h in hits})
            return [h.chunk_id for h in hits[:depth]]

        def run_bm25_then_exact() -> list[str]:
            with store.pinned_versions(share=pins):
                ids = _timed(run_bm25, got.millis, "bm25")
                if mode == "hybrid":
                    try:
                        exact_done.append(
                            _timed(
                                lambda: _exact(store, plan, got, root, settings, overlay), got.millis, "grep"
                            )
                        )
                    except BaseException as exc:  # raised again by the caller, as before
                        exact_done.append(exc)
                return ids

        bm25_future = _POOL.submit(run_bm25_then_exact)
    names = definition_lookup(plan.intent) if plan.rank else []
    if names:
        got.definitions = (names, _POOL.submit(_pinned, store, pins, definitions_named, store, names))
    if plan.rank:
        got.references = _POOL.submit(_pinned, store, pins, _file_references, store)
    meta = store.current_meta() if want_vec else None
    if want_vec and embedder is not None and meta is not None and meta.model_id != embedder.model_id:
        got.notes.append(
            f"semantic search skipped: the index holds {meta.model_id} vectors but the settings "
            f"ask for {embedder.model_id} (run `codesift index` to rebuild)"
        )
        embedder = None
    # One tier per search: the main model's when every chunk in scope has its vector,
    # the fast tier's until then. No vector yet (embedding follows the text index):
    # nothing to search, and the completeness note says why semantic found nothing.
    fast = _fast_embedder(settings, meta) if want_vec and not got.notes else None
    tier = choose_tier(store, embedder, fast, where) if want_vec else None
    no_vectors = want_vec and tier is None and (embedder is not None or fast is not None)
    if want_vec:
        if embedder is None and fast is None:
            if not got.notes:
                why = semantic_off or "no embedding model loaded"
                got.notes.append(f"semantic search is off (BM25 and grep answered): {why}")
        elif tier is not None:
            got.tier = chosen = tier
            if embedder is None and semantic_off:
                got.notes.append(
                    f"the main model is not loaded ({semantic_off}): the fast static model answered"
                )

            def run_vec() -> list[str]:
                qv = chosen.embedder.embed_query(plan.semantic_query)
                got.query_vector = qv
                res = vector_search(
                    store,
                    qv,
                    depth,
                    threshold=plan.threshold,
                    min_similarity=plan.min_similarity,
                    where=where,
                    column=chosen.column,
                )
                got.dropped = res.dropped
                got.similarities.update({h.chunk_id: h.similarity for h in res.hits})
                got.known.update({h.chunk_id: h.chunk for h in res.hits})
                return [h.chunk_id for h in res.hits]

            futures[Source.SEMANTIC] = _POOL.submit(_timed, run_vec, got.millis, "semantic")
    if bm25_future is not None:
        futures[Source.BM25] = bm25_future  # after the vector source: the fusion's order
    if mode == "grep":
        futures[Source.GREP] = _POOL.submit(
            _timed,
            lambda: _grep_chunks(store, root, plan.keywords, plan.request, settings, overlay, depth, where),
            got.millis,
            "grep",
        )

    if no_vectors:
        got.rankings[Source.SEMANTIC] = []
    for source, fut in futures.items():
        try:
            got.rankings[source] = fut.result()
        except QueryError:
            raise
        except CodesiftError as exc:
            got.notes.append(f"{source} search failed: {exc}")
            got.rankings[source] = []
    if mode == "hybrid":
        # Exact keyword matches among the BM25 candidates, in BM25 order (whole-index
        # statistics), plus unsaved buffers: no disk walk per query (see exact.py).
        if exact_done:
            answer = exact_done[0]
            if isinstance(answer, BaseException):
                raise answer
            got.rankings[Source.GREP] = answer
        else:  # BM25 failed: the buffers' matches alone, as before
            got.rankings[Source.GREP] = _timed(
                lambda: _exact(store, plan, got, root, settings, overlay), got.millis, "grep"
            )
    if want_bm25 and not sanitize(plan.bm25_query):
        got.notes.append("the query has no searchable words for BM25 (only syntax characters)")
    return got


def _exact(
    store: Store,
    plan: Plan,
    got: Retrieved,
    root: Path,
    settings: Settings,
    overlay: Mapping[str, str] | None,
) -> list[str]:
    """Hybrid's exact source over BM25's pool (``got.pool``), its first ``plan.depth``."""
    return exact.exact_chunks(
        grep_pattern(plan.keywords),
        got.pool,
        store=store,
        root=root,
        filters=plan.request.filters,
        where=plan.where,
        index_settings=settings.index,
        overlay=overlay,
        timeout_s=settings.search.grep_timeout_s,
    )[: plan.depth]


def _pinned(store: Store, pins: dict[str, int] | None, fn: Callable[..., T], *args: object) -> T:
    """``fn(*args)`` on a worker, reading table versions as the searching thread does."""
    with store.pinned_versions(share=pins):
        return fn(*args)


def _fast_embedder(settings: Settings, meta: IndexMeta | None) -> Embedder | None:
    """The fast tier's model when the index has that tier and this install has its model."""
    if meta is None or not meta.fast_model_id:
        return None
    fast = fast_tier_embedder(settings.embed, meta.model_id)
    if fast is None or fast.model_id != meta.fast_model_id or fast.dimension != meta.fast_dimension:
        return None
    return fast


def _fuse(store: Store, plan: Plan, got: Retrieved, settings: Settings) -> list[Candidate]:
    """Hybrid: weighted RRF over every source. A single mode: that source's own order
    and score (cosine for vectors, BM25 over the best for BM25)."""
    if plan.mode == "hybrid":
        fused = rrf(got.rankings, plan.weights, settings.search.rrf_k)
        ranked = [(f.key, f.score, f.sources, f.ranks) for f in fused]
    else:
        only = {"bm25": Source.BM25, "vector": Source.SEMANTIC, "grep": Source.GREP}[plan.mode]
        keys = got.rankings.get(only, [])
        if only is Source.SEMANTIC:
            sims = got.similarities
            ranked = [(k, max(0.0, min(1.0, sims.get(k, 0.0))), (only,), (i,)) for i, k in enumerate(keys, 1)]
        elif only is Source.BM25 and keys:
            top = max(got.bm25_scores.values()) or 1.0
            ranked = [(k, got.bm25_scores[k] / top, (only,), (i,)) for i, k in enumerate(keys, 1)]
        else:
            n = len(keys)
            ranked = [(k, 1.0 - i / max(n, 1) * 0.5, (only,), (i + 1,)) for i, k in enumerate(keys)]
    missing = [k for k, *_ in ranked if k not in got.known]
    if missing:  # grep's chunks (found by line, not returned whole), unsaved buffers'
        got.known.update(load_chunks(store, missing))
    return [
        Candidate(got.known[k], score, tuple(srcs), tuple(ranks))
        for k, score, srcs, ranks in ranked
        if k in got.known
    ]


def _file_references(store: Store) -> Mapping[str, int]:
    """``file_references``, or none (no prior) when the index cannot answer it."""
    try:
        return file_references(store)
    except CodesiftError as exc:
        log.debug("no file-reference counts: %s", exc)
        return {}


def _rank(
    store: Store,
    plan: Plan,
    candidates: list[Candidate],
    prefetched: tuple[list[str], Future[list[Symbol]]] | None = None,
    references: Future[Mapping[str, int]] | None = None,
) -> list[Candidate]:
    """The ranking stage over the fused candidates, with the symbol table and chunk
    loading it may use (both under the request's filters). ``prefetched``: the
    definitions looked up while the sources ran (names, answer); ``references``: the
    file-reference counts, asked for then too."""

    def lookup(names: Sequence[str]) -> list[Symbol]:
        if prefetched is not None and list(names) == prefetched[0]:
            return prefetched[1].result()
        return definitions_named(store, names)

    ranker = Ranker(
        lookup=lookup,
        load=lambda ids: load_chunks(store, ids, where=plan.where),
        references=references.result if references is not None else None,
    )
    asked = asked_roles(plan.request.filters)
    if plan.request.group_by == "file":
        return ranker.rank_files(candidates, plan.intent, asked)
    return ranker.rank(candidates, plan.intent, asked)


def _first_per_file(candidates: Sequence[Candidate]) -> list[Candidate]:
    seen: set[str] = set()
    out: list[Candidate] = []
    for c in candidates:
        if c.chunk.path not in seen:
            seen.add(c.chunk.path)
            out.append(c)
    return out


def _relevance(store: Store, plan: Plan, got: Retrieved) -> Relevance:
    """How well a chunk reached over the graph answers the query itself: its cosine to
    the query relative to the best hit's, or else the share of query terms it holds."""
    qv = got.query_vector
    best_sim = max(got.similarities.values(), default=0.0)
    terms = {t for t in query_terms(plan.bm25_query) if t not in STOP_WORDS and len(t) > 2}

    def relevance(chunks: Sequence[Chunk]) -> dict[str, float]:
        out: dict[str, float] = {}
        sims = chunk_similarities(store, qv, [c.id for c in chunks], got.tier) if qv is not None else {}
        for c in chunks:
            rel = 0.0
            if c.id in sims and best_sim > 0:
                rel = max(0.0, min(1.0, sims[c.id] / best_sim))
            if terms:
                words = set(search_text(c.text).split())
                rel = max(rel, len(terms & words) / len(terms))
            out[c.id] = rel
        return out

    return relevance


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
