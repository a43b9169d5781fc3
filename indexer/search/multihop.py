"""Multi-hop search: seed hits → the symbols their chunks reference → those symbols' chunks,
to a depth; merged and re-ranked.

* Depth 1 follows only the references written in the seed chunks; depth 2 also
  those in the chunks depth 1 reached, and so on.
* Only resolved references are followed (calls, supertypes, type references):
  an unresolved name has no single chunk to go to.
* A hop from a chunk scored ``s`` contributes ``s × (floor + (1 − floor) × r)`` to the
  chunk it reaches, where ``r`` in [0, 1] is how well that chunk answers the query
  itself (its cosine to the query relative to the best hit's, or the share of the
  query's terms it holds): a neighbour that matches the query joins the page
  beside its seed, one that does not keeps ``floor`` of the seed's score. Without
  a relevance function ``r`` is 0. A chunk is listed once; its score combines
  every path that reached it (``1 − Π(1 − cᵢ)``, so each extra path raises it and
  it stays in [0, 1]).
* A chunk reached only by hops has ``match_type`` ``multi-hop``, source ``graph``
  and ``via``: the qualified names of the symbols on the best path to it. A hit
  the hops reach as well keeps its match type and gains source ``graph`` and the
  ``via`` of the first path that reached it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from ..model import Chunk, EdgeKind
from .results import MatchType, SearchHit, SearchResult, Source

if TYPE_CHECKING:
    from ..graph import Graph

DECAY = 0.5  # what one hop keeps of the score it came from, for a neighbour unrelated to the query
MAX_FANOUT = 12  # references followed per chunk, in the order they are written
_FOLLOWED = frozenset({EdgeKind.CALL, EdgeKind.INHERIT, EdgeKind.IMPLEMENT, EdgeKind.REFERENCE})

ChunkLoader = Callable[[Sequence[str]], dict[str, Chunk]]
# How well each chunk answers the query, in [0, 1], by chunk id.
Relevance = Callable[[Sequence[Chunk]], dict[str, float]]


@dataclass(slots=True)
class _Reached:
    chunk_id: str
    miss: float  # Π(1 − cᵢ) over the paths so far
    best: float  # the best single contribution
    via: tuple[str, ...]
    depth: int


def expand(
    graph: Graph,
    seeds: Sequence[SearchHit],
    depth: int,
    load_chunks: ChunkLoader,
    limit: int,
    relevance: Relevance | None = None,
) -> tuple[list[SearchHit], float]:
    """Seeds plus the chunks reachable in ``depth`` hops, best first, at most ``limit``.

    Returns the hits and the milliseconds the graph part took.
    """
    started = time.perf_counter()
    graph.refresh()
    snap, res = graph.snapshot, graph.resolver
    reached: dict[str, _Reached] = {
        h.chunk.id: _Reached(h.chunk.id, 1.0 - h.score, h.score, (), 0) for h in seeds
    }
    chunks: dict[str, Chunk] = {h.chunk.id: h.chunk for h in seeds}
    frontier: list[tuple[Chunk, float, tuple[str, ...]]] = [(h.chunk, h.score, ()) for h in seeds]
    for level in range(1, depth + 1):
        paths: list[tuple[str, float, tuple[str, ...]]] = []  # (target, seed score, via)
        for chunk, score, via in frontier:
            targets: dict[str, str] = {}
            for e in snap.edges_of(chunk.path, kinds=_FOLLOWED, lines=(chunk.start_line, chunk.end_line)):
                sym = res.resolve(e).symbol
                if sym is None or not sym.chunk_id or sym.chunk_id == chunk.id:
                    continue
                targets.setdefault(sym.chunk_id, sym.qualified_name)
                if len(targets) >= MAX_FANOUT:
                    break
            for cid, name in targets.items():
                paths.append((cid, score, (*via, name)))
        missing = list(dict.fromkeys(cid for cid, _, _ in paths if cid not in chunks))
        chunks.update(load_chunks(missing) if missing else {})
        rel = (
            relevance([chunks[c] for c in dict.fromkeys(p[0] for p in paths) if c in chunks])
            if relevance
            else {}
        )
        contributions = [
            (cid, score * (DECAY + (1.0 - DECAY) * rel.get(cid, 0.0)), via) for cid, score, via in paths
        ]
        next_ids: list[str] = []
        for cid, c, via in contributions:
            r = reached.get(cid)
            if r is None:
                reached[cid] = _Reached(cid, 1.0 - c, c, via, level)
                next_ids.append(cid)
            else:
                r.miss *= 1.0 - c
                if r.depth == 0 and not r.via:  # a seed a hop reaches too: say by which path
                    r.via = via
                elif c > r.best and r.depth > 0:
                    r.best, r.via = c, via
        frontier = [
            (chunks[cid], 1.0 - reached[cid].miss, reached[cid].via) for cid in next_ids if cid in chunks
        ]
        if not frontier:
            break
    seed_hits = {h.chunk.id: h for h in seeds}
    hits: list[SearchHit] = []
    for r in reached.values():
        score = round(1.0 - r.miss, 6)
        seed = seed_hits.get(r.chunk_id)
        if seed is not None and r.via:
            hits.append(replace(seed, score=score, sources=(*seed.sources, Source.GRAPH), via=r.via))
        elif seed is not None:
            hits.append(replace(seed, score=score))
        elif r.chunk_id in chunks:
            hits.append(SearchHit(chunks[r.chunk_id], score, MatchType.MULTI_HOP, (Source.GRAPH,), via=r.via))
    hits.sort(key=lambda h: -h.score)
    return hits[:limit], (time.perf_counter() - started) * 1000


def multihop_result(
    graph: Graph,
    seeds: SearchResult,
    depth: int,
    load_chunks: ChunkLoader,
    limit: int,
    relevance: Relevance | None = None,
) -> SearchResult:
    """A hybrid result widened by ``depth`` hops over the reference graph, report updated."""
    hits, millis = expand(graph, seeds.hits, depth, load_chunks, limit, relevance)
    report = seeds.report
    per_source = dict(report.per_source)
    per_source[str(Source.GRAPH)] = sum(1 for h in hits if h.match_type is MatchType.MULTI_HOP)
    timings = dict(report.millis)
    timings["graph"] = round(millis, 2)
    timings["total"] = round(timings.get("total", 0.0) + millis, 2)
    return SearchResult(
        tuple(hits),
        replace(
            report,
            chars=sum(len(h.chunk.text) for h in hits),
            unique_files=len({h.chunk.path for h in hits}),
            chunks=len(hits),
            per_source=per_source,
            millis=timings,
        ),
    )
