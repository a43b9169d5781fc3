"""What a search is asked and what it answers: requests, hits, reports."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Literal

from ..model import Chunk, ChunkKind

SearchMode = Literal["hybrid", "bm25", "vector", "grep"]
GroupBy = Literal["chunk", "file"]


class Source(StrEnum):
    """A search that can find a chunk."""

    GREP = "grep"
    BM25 = "bm25"
    SEMANTIC = "semantic"
    GRAPH = "graph"
    SYMBOL = "symbol"  # the symbol table: the definition of a name the query asks for


class MatchType(StrEnum):
    GREP = "grep"
    BM25 = "bm25"
    SEMANTIC = "semantic"
    HYBRID = "hybrid"
    MULTI_HOP = "multi-hop"


@dataclass(frozen=True, slots=True)
class Filters:
    """Applied inside each query (pre-filter), never by dropping rows after a limit.

    ``include`` / ``exclude`` are gitignore-style globs on the workspace-relative
    path: ``Sources/Auth/**``, ``*.swift`` (an extension), ``**/Tests/**``.
    """

    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    languages: tuple[str, ...] = ()
    kinds: tuple[ChunkKind, ...] = ()
    projects: tuple[str, ...] = ()

    def is_empty(self) -> bool:
        return not (self.include or self.exclude or self.languages or self.kinds or self.projects)


@dataclass(frozen=True, slots=True)
class SearchRequest:
    """One search. ``None`` means "the setting's default"."""

    query: str
    mode: SearchMode = "hybrid"
    semantic_query: str | None = None
    exact_keywords: str | None = None
    limit: int | None = None
    filters: Filters = field(default_factory=Filters)
    semantic_weight: float | None = None
    keyword_weight: float | None = None
    grep_weight: float | None = None
    min_similarity: float | None = None
    vector_score_threshold: float | None = None
    hops: int = 0  # multi-hop depth: follow the reference graph from the hits this many times
    group_by: GroupBy = "chunk"  # "file": one hit per file (its best chunk), files ranked by evidence


@dataclass(frozen=True, slots=True)
class SearchHit:
    chunk: Chunk
    score: float  # in [0, 1]
    match_type: MatchType
    sources: tuple[Source, ...]
    highlights: tuple[tuple[int, int], ...] = ()  # character offsets in chunk.text
    stale: bool = False  # the file changed on disk after it was indexed
    via: tuple[str, ...] = ()  # multi-hop: the symbols that led here
    vector_model: str = ""  # the model whose vectors ranked this hit ("" when no vector source found it)


@dataclass(frozen=True, slots=True)
class SearchReport:
    """What a search returned and how complete the index was when it answered."""

    chars: int
    unique_files: int
    chunks: int
    per_source: dict[str, int]
    millis: dict[str, float]
    notes: tuple[str, ...] = ()  # why something is missing: pending vectors, skipped files…
    dropped_by_threshold: int = 0
    keywords: str = ""  # the exact keywords the grep source used
    bm25_query: str = ""  # what BM25 searched for (every word of the query, or the given keywords)
    vector_model: str = ""  # the model whose vectors the vector source read ("" when it did not run)


@dataclass(frozen=True, slots=True)
class SearchResult:
    hits: tuple[SearchHit, ...]
    report: SearchReport
