"""The ranking stage: turns fused retrieval into an answer.

Retrieval (grep, BM25, vectors) and fusion (weighted RRF) find the right
neighbourhood; this stage orders it, one rule per step, top-down:

1. **definitions** — a chunk that defines the symbol the query names gains, and a
   definition retrieval missed is brought in from the symbol table;
2. **paths and names** — query words in the file name or folder, paths a long
   query mentions, query words in the name of the chunk's definition;
3. **declarations** — ``@overload`` stubs and prototypes fold into their definition;
   **coverage** — a chunk holding more of a words query's distinct words gains, and
   one writing two adjacent query words as one identifier (``ProgressBar``) more;
4. **coherence** — a file with several good chunks lifts its best one;
5. **roles** — source code above tests, examples, prose, generated, vendored and
   minified files (off for a role the query or the filters ask for); **references** —
   a file that many other files name gains;
6. **diversity** — a file's later chunks decay, so one file does not fill the page;
7. **scores** — divided by the best, so they lie in [0, 1].

Every weight is a named constant in its step's module, measured on the quality
tier of ``make bench`` (docs/DECISIONS.md, "Ranking").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from ...model import Chunk
from ..results import Filters, Source
from .boosts import (
    ChunkLoader,
    SymbolLookup,
    boost_compound_names,
    boost_definitions,
    boost_file_coherence,
    boost_name_matches,
    boost_path_matches,
    boost_referenced_files,
    boost_word_coverage,
    definition_lookup,
)
from .query import QueryIntent, understand
from .roles import FileRole, file_role
from .select import apply_role_priors, diversify, fold_declarations, fold_wrappers

__all__ = [
    "Candidate",
    "QueryIntent",
    "Ranker",
    "asked_roles",
    "definition_lookup",
    "rank_files",
    "understand",
]

# File-level answers: a file's score is its best chunk's plus this share of each
# further chunk's (decayed as the page's diversity step does), capped at twice the best.
FILE_EVIDENCE = 0.3


@dataclass(frozen=True, slots=True)
class Candidate:
    """A chunk in the ranking: fused score in, ranked score out."""

    chunk: Chunk
    score: float
    sources: tuple[Source, ...]
    ranks: tuple[int, ...] = ()  # rank (from 1) in each of ``sources``, same order


@dataclass(frozen=True, slots=True)
class Ranker:
    """What the stage needs from the index: the symbol table, chunk loading (the
    loader applies the request's filters, so nothing brought in escapes them) and how
    many other files name each file's definitions (none: no reference prior)."""

    lookup: SymbolLookup
    load: ChunkLoader
    references: Callable[[], Mapping[str, int]] | None = None

    def rank(
        self, candidates: Sequence[Candidate], intent: QueryIntent, asked: frozenset[FileRole]
    ) -> list[Candidate]:
        """The candidates re-ordered best first (scores in [0, 1]), plus any definitions
        brought in."""
        scores, chunks, sources = self._scores(candidates, intent, asked)
        ranked = diversify(scores, chunks)
        return _normalised(ranked, chunks, sources)

    def rank_files(
        self, candidates: Sequence[Candidate], intent: QueryIntent, asked: frozenset[FileRole]
    ) -> list[Candidate]:
        """One candidate per file (its best chunk), files ordered by all their chunks' evidence."""
        scores, chunks, sources = self._scores(candidates, intent, asked)
        return _normalised(rank_files(scores, chunks), chunks, sources)

    def _scores(
        self, candidates: Sequence[Candidate], intent: QueryIntent, asked: frozenset[FileRole]
    ) -> tuple[dict[str, float], dict[str, Chunk], dict[str, tuple[Source, ...]]]:
        scores = {c.chunk.id: c.score for c in candidates}
        chunks = {c.chunk.id: c.chunk for c in candidates}
        sources = {c.chunk.id: c.sources for c in candidates}
        ranks = {c.chunk.id: dict(zip(c.sources, c.ranks, strict=False)) for c in candidates if c.ranks}
        top = max(scores.values(), default=0.0) or 1.0
        defined: set[str] = set()
        if not intent.is_symbol:
            boost_definitions(scores, chunks, intent, self.lookup, self.load, top, defined)
        boost_path_matches(scores, chunks, intent, top)
        boost_name_matches(scores, chunks, intent, top)
        if intent.is_symbol:
            # The definition a symbol query names leads over a file whose name only
            # contains that name (``vitestResolver.ts`` for "Vitest"): its boost is
            # measured against the top after the path and name gains.
            lead = max(scores.values(), default=0.0) or 1.0
            boost_definitions(scores, chunks, intent, self.lookup, self.load, lead, defined)
        for cid in defined:
            sources[cid] = (*sources.get(cid, ()), Source.SYMBOL)
        fold_declarations(scores, chunks)
        fold_wrappers(scores, chunks)
        boost_word_coverage(scores, chunks, intent, top)
        boost_compound_names(scores, chunks, intent, top)
        boost_file_coherence(scores, chunks, top, ranks, defined if intent.is_symbol else ())
        apply_role_priors(scores, chunks, asked | intent.asked_roles, intent.text)
        if self.references is not None:
            boost_referenced_files(scores, chunks, self.references())
        return scores, chunks, sources


def rank_files(scores: Mapping[str, float], chunks: Mapping[str, Chunk]) -> list[tuple[str, float]]:
    """Each file once, as its best chunk, scored by the best plus a share of the rest."""
    per_file: dict[str, list[tuple[float, str]]] = {}
    for cid, s in scores.items():
        per_file.setdefault(chunks[cid].path, []).append((s, cid))
    out: list[tuple[str, float]] = []
    for entries in per_file.values():
        entries.sort(reverse=True)
        best, cid = entries[0]
        rest = sum(s * FILE_EVIDENCE**i for i, (s, _) in enumerate(entries[1:], 1))
        out.append((cid, min(2 * best, best + rest)))
    out.sort(key=lambda kv: -kv[1])
    return out


def asked_roles(filters: Filters) -> frozenset[FileRole]:
    """Roles a filter asks for by name: an include glob under ``tests/`` wants tests."""
    asked: set[FileRole] = set()
    for glob in filters.include:
        probe = glob.replace("**", "x").replace("*", "x").rstrip("/")
        probe = probe if "." in probe.rsplit("/", 1)[-1] else probe + "/x.py"
        role = file_role(probe)
        if role is not FileRole.SOURCE:
            asked.add(role)
    return frozenset(asked)


def _normalised(
    ranked: Sequence[tuple[str, float]],
    chunks: Mapping[str, Chunk],
    sources: Mapping[str, tuple[Source, ...]],
) -> list[Candidate]:
    best = max((s for _, s in ranked), default=1.0)
    if best <= 1.0:
        return [Candidate(chunks[cid], s, sources.get(cid, ())) for cid, s in ranked]
    return [Candidate(chunks[cid], min(1.0, s / best), sources.get(cid, ())) for cid, s in ranked]
