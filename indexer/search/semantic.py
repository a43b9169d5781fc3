"""Vector search: cosine over the chunks' embeddings.

``vector_score_threshold`` is a cosine *distance* (1 − cos): results at or
beyond it are dropped, and counted, so a thin answer is never silent.

An index may hold two tiers of vectors (``embed.fast_tier``): the main model's and
a static model's, written right after the text phase. One search reads one tier
(``choose_tier``), never both: the main model's once every chunk in the search's
scope has its vector, the fast tier's until then.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from ..embed import Embedder
from ..model import Chunk
from ..rows import CHUNK_COLUMNS, FAST_VECTOR, chunks_from_table, in_filters
from ..store import CHUNKS, EMBEDDED, FAST_EMBEDDED, PENDING, Store, fetch

# The kb-agent spec's cut-off for its vector_search tool (a cosine distance). Only
# there: inside hybrid it removed every vector hit from 77 of 419 benchmark queries.
AGENT_VECTOR_THRESHOLD = 0.5


@dataclass(frozen=True, slots=True)
class VectorTier:
    """The vectors one search reads: a model and the column holding its vectors."""

    embedder: Embedder
    column: str  # "vector" (the main model) or FAST_VECTOR
    embedded: str  # the filter of chunks holding a vector in ``column``

    @property
    def model_id(self) -> str:
        return self.embedder.model_id

    @property
    def is_fast(self) -> bool:
        return self.column == FAST_VECTOR


def main_tier(embedder: Embedder) -> VectorTier:
    return VectorTier(embedder, "vector", EMBEDDED)


def fast_tier(embedder: Embedder) -> VectorTier:
    return VectorTier(embedder, FAST_VECTOR, FAST_EMBEDDED)


def choose_tier(
    store: Store, main: Embedder | None, fast: Embedder | None, where: str | None = None
) -> VectorTier | None:
    """Which vectors answer a search under ``where``: the main model's when every chunk
    in scope has one; else the fast tier's (when the index has any); else the main
    model's partial set; None when neither has a vector. ``main`` / ``fast`` are None
    when the index holds no usable vectors of that kind (another model, no tier)."""
    main_any = main is not None and store.count(CHUNKS, EMBEDDED) > 0
    if main is not None and main_any:
        scope = f"({where}) AND {PENDING}" if where else PENDING
        if fast is None or store.count(CHUNKS, scope) == 0:
            return main_tier(main)
    if fast is not None and store.count(CHUNKS, FAST_EMBEDDED) > 0:
        return fast_tier(fast)
    return main_tier(main) if main is not None and main_any else None


@dataclass(frozen=True, slots=True)
class VectorHit:
    chunk: Chunk
    similarity: float  # cosine, in [-1, 1]

    @property
    def chunk_id(self) -> str:
        return self.chunk.id


@dataclass(frozen=True, slots=True)
class VectorResult:
    hits: list[VectorHit]
    dropped: int  # by the distance threshold or min_similarity


def query_array(vector: npt.NDArray[np.floating]) -> pa.Array:
    """The query vector as a float32 Arrow array over its own buffer. LanceDB would call
    ``pa.array`` on a numpy array, which imports ``numpy.ma`` (20-35 ms of a cold CLI
    search, on the vector thread while it holds the GIL) to check for a masked array."""
    values = np.ascontiguousarray(vector, dtype=np.float32)
    return pa.Array.from_buffers(pa.float32(), len(values), [None, pa.py_buffer(values)])


def vector_search(
    store: Store,
    query_vector: npt.NDArray[np.float32],
    limit: int,
    *,
    threshold: float | None,
    min_similarity: float,
    where: str | None = None,
    column: str = "vector",
) -> VectorResult:
    """The ``limit`` nearest chunks by cosine in ``column`` (a tier's vectors), minus
    those the thresholds drop (``threshold`` None: no distance cut-off)."""
    # With the approximate index: ef widens the HNSW graph search (recall ~0.9 at
    # the default), and refine_factor(1) re-scores the candidates with the stored
    # vectors, so scores and the distance threshold see exact cosines, not 8-bit
    # quantised ones (on a small index those were off by up to 0.5). Brute force
    # ignores both. A ``where`` is a pre-filter.
    search = (
        store.query(CHUNKS)
        .nearest_to(query_array(query_vector))
        .column(column)
        .distance_type("cosine")
        .limit(limit)
        .ef(max(100, 2 * limit))
        .refine_factor(1)
    )
    if where:
        search = search.where(where)
    rows = fetch(search.select([*CHUNK_COLUMNS, "_distance"]))
    hits: list[VectorHit] = []
    dropped = 0
    for chunk, d in zip(chunks_from_table(rows), rows.column("_distance").to_pylist(), strict=True):
        dist = float(d)
        similarity = 1.0 - dist
        if (threshold is not None and dist >= threshold) or similarity < min_similarity:
            dropped += 1
            continue
        hits.append(VectorHit(chunk, similarity))
    return VectorResult(hits, dropped)


def chunk_similarities(
    store: Store, query_vector: npt.NDArray[np.float32], ids: Sequence[str], tier: VectorTier | None = None
) -> dict[str, float]:
    """Cosine of each chunk's stored vector (``tier``'s; default the main model's) to the
    query (chunks without one are absent)."""
    column, embedded = (tier.column, tier.embedded) if tier is not None else ("vector", EMBEDDED)
    q = query_vector.astype(np.float32)
    q = q / (float(np.linalg.norm(q)) or 1.0)
    out: dict[str, float] = {}
    for flt in in_filters("id", list(dict.fromkeys(ids))):
        rows = (
            store.table(CHUNKS).search().where(f"({flt}) AND {embedded}").select(["id", column]).limit(None)
        ).to_arrow()
        for r in rows.to_pylist():
            v = np.asarray(r[column], dtype=np.float32)
            out[str(r["id"])] = float(v @ q) / (float(np.linalg.norm(v)) or 1.0)
    return out
