"""The report step of a search: hits with highlights and stale flags, and the report
that says which sources answered, how many results each gave, what a cut-off
dropped and whether the index was incomplete — an empty answer always carries its
reason."""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from ..model import FileStatus
from ..paths import os_path
from ..store import CHUNKS, FAST_PENDING, FILES, PENDING, Store
from .keyword import STOP_WORDS, query_terms
from .plan import Plan, Retrieved
from .ranking import Candidate
from .results import MatchType, SearchHit, SearchReport, SearchRequest, SearchResult, Source
from .semantic import VectorTier


def _dropped_note(dropped: int, threshold: float | None, min_similarity: float) -> str:
    """Which cut-offs dropped vector results: only the ones in force are named."""
    cuts = [f"similarity < {min_similarity}"]
    if threshold is not None:
        cuts.insert(0, f"cosine distance ≥ {threshold}")
    noun = "result" if dropped == 1 else "results"
    return f"{dropped} vector {noun} dropped by the cut-off ({' or '.join(cuts)})"


def report(
    store: Store, root: Path, plan: Plan, got: Retrieved, ranked: Sequence[Candidate], started: float
) -> SearchResult:
    """Hits with highlights and stale flags, and the report: sources, counts, notes."""
    stale = _stale_paths(store, root, {c.chunk.path for c in ranked})
    highlight = highlighter(_highlight_terms(plan.keywords, plan.semantic_query))
    match_type = {
        "hybrid": MatchType.HYBRID,
        "bm25": MatchType.BM25,
        "vector": MatchType.SEMANTIC,
        "grep": MatchType.GREP,
    }[plan.mode]
    vector_model = got.tier.model_id if got.tier is not None else ""
    hits = tuple(
        SearchHit(
            chunk=c.chunk,
            score=round(c.score, 6),
            match_type=match_type,
            sources=tuple(sorted(c.sources, key=list(Source).index)),
            highlights=highlight(c.chunk.text),
            stale=c.chunk.path in stale,
            vector_model=vector_model if Source.SEMANTIC in c.sources else "",
        )
        for c in ranked
    )
    notes = got.notes
    notes.extend(_completeness_notes(store, plan.mode in ("hybrid", "vector"), got.tier))
    if got.dropped:
        notes.append(_dropped_note(got.dropped, plan.threshold, plan.min_similarity))
    if not hits:
        notes.append(_why_empty(plan.request, got.rankings, plan.keywords))
    got.millis["total"] = round((time.perf_counter() - started) * 1000, 2)
    report = SearchReport(
        chars=sum(len(h.chunk.text) for h in hits),
        unique_files=len({h.chunk.path for h in hits}),
        chunks=len(hits),
        per_source={str(src): len(keys) for src, keys in got.rankings.items()},
        millis=got.millis,
        notes=tuple(notes),
        dropped_by_threshold=got.dropped,
        keywords=plan.keywords,
        bm25_query=plan.bm25_query,
        vector_model=vector_model,
    )
    return SearchResult(hits, report)


def empty_report(started: float, note: str) -> SearchReport:
    millis = {"total": (time.perf_counter() - started) * 1000}
    return SearchReport(chars=0, unique_files=0, chunks=0, per_source={}, millis=millis, notes=(note,))


def _stale_paths(store: Store, root: Path, paths: set[str]) -> set[str]:
    """Paths whose file on disk differs (size or mtime) from what was indexed."""
    if not paths:
        return set()
    known = store.file_stats()
    stale: set[str] = set()
    for p in paths:
        try:
            st = os.stat(root / os_path(p))
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
    return highlighter(terms)(text)


def highlighter(terms: Sequence[str]) -> Callable[[str], tuple[tuple[int, int], ...]]:
    """``highlight_spans`` for many texts: the terms' pattern compiled once. An ASCII text
    is matched lower-cased against the lower-cased pattern (the same offsets: lower-casing
    ASCII keeps every character where it is, and over ASCII the case-insensitive match is
    exactly that), ~5× faster than Python's case-insensitive matching; any other text is
    matched case-insensitively as it is."""
    if not terms:
        return lambda text: ()
    pattern = "|".join(re.escape(t) for t in terms)
    folded = re.compile(pattern, re.IGNORECASE)
    lower = re.compile(pattern.lower()) if pattern.isascii() else None

    def spans_of(text: str) -> tuple[tuple[int, int], ...]:
        if lower is not None and text.isascii():
            found = lower.finditer(text.lower())
        else:
            found = folded.finditer(text)
        spans: list[tuple[int, int]] = []
        for m in found:
            if spans and m.start() <= spans[-1][1]:
                spans[-1] = (spans[-1][0], max(spans[-1][1], m.end()))
            else:
                spans.append((m.start(), m.end()))
        return tuple(spans)

    return spans_of


def _completeness_notes(store: Store, want_vec: bool, tier: VectorTier | None = None) -> list[str]:
    notes: list[str] = []
    if want_vec:
        pending = store.count(CHUNKS, FAST_PENDING if tier is not None and tier.is_fast else PENDING)
        main_pending = store.count(CHUNKS, PENDING)
        total = store.count(CHUNKS)
        if tier is not None and tier.is_fast and main_pending:
            notes.append(
                f"semantic results ranked by the fast static model ({tier.model_id}) while the "
                f"main model's vectors fill in ({main_pending} of {total} chunks to go)"
            )
        if pending:
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
