"""What one search carries between its steps: the plan (a request with every default
resolved) and what the sources retrieved."""

from __future__ import annotations

from collections.abc import Mapping
from concurrent.futures import Future
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from ..model import Chunk, Symbol
from .keyword import KeywordHit
from .ranking import QueryIntent
from .results import SearchMode, SearchRequest, Source
from .semantic import VectorTier


@dataclass(frozen=True, slots=True)
class Plan:
    """A request with every default resolved: what each step needs."""

    request: SearchRequest
    mode: SearchMode
    limit: int
    depth: int  # candidates each source retrieves: a function of the settings, not of limit
    where: str | None
    intent: QueryIntent
    keywords: str  # the exact-match source's words (identifiers, or content words)
    bm25_query: str  # every word of the query (or the caller's keywords)
    semantic_query: str
    threshold: float | None
    min_similarity: float
    weights: dict[Source, float]
    rank: bool  # the ranking stage runs (hybrid with search.rank = "full")


@dataclass(slots=True)
class Retrieved:
    """What the sources answered."""

    rankings: dict[Source, list[str]] = field(default_factory=dict)
    known: dict[str, Chunk] = field(default_factory=dict)  # chunks the sources returned whole
    similarities: dict[str, float] = field(default_factory=dict)
    bm25_scores: dict[str, float] = field(default_factory=dict)
    pool: list[KeywordHit] = field(default_factory=list)  # BM25 candidates the exact source matches
    query_vector: npt.NDArray[np.float32] | None = None
    tier: VectorTier | None = None  # the vectors the vector source read
    dropped: int = 0
    notes: list[str] = field(default_factory=list)
    millis: dict[str, float] = field(default_factory=dict)
    # The ranking stage's symbol-table lookup, asked for while the sources run: the
    # names it needs come from the query alone (``definition_lookup``).
    definitions: tuple[list[str], Future[list[Symbol]]] | None = None
    # How many other files name each file's definitions (``references.file_references``),
    # counted (or read from its memo) while the sources run.
    references: Future[Mapping[str, int]] | None = None
