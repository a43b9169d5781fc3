"""The search indices over the index's tables: FTS and BTrees, the approximate vector
index of each tier, and when an optimize pays for itself.

Built by the writer (under its lock) through the store's tables; readers only
benefit from them.
"""

from __future__ import annotations

import logging
import os
import time

from .rows import FAST_VECTOR
from .store import CHUNKS, EDGES, EMBEDDED, FAST_EMBEDDED, SYMBOLS, Store

log = logging.getLogger(__name__)

# `index_stats` (`needs_optimize` reads its unindexed-row count) copies each vector
# index's IVF centroids into the statistics unless told otherwise, and Lance 0.40 then
# writes a WARN line about it to stderr: it showed up in the middle of a stdlib
# `codesift index` run's output. Lance's coming default (no centroids) is all we need;
# a value the user set is kept.
CENTROIDS_ENV = "LANCE_INCLUDE_VECTOR_CENTROIDS"
os.environ.setdefault(CENTROIDS_ENV, "false")

# IVF partitions of the approximate vector index: one per this many vectors.
VECTORS_PER_PARTITION = 25_000
# HNSW graph effort of the fast tier's index (lancedb's default, the main index's: 300).
FAST_EF_CONSTRUCTION = 150
# A static model's ids (``StaticEmbedder.model_id``) start so.
STATIC_PREFIX = "static:"


def ensure_indices(store: Store) -> None:
    """Create the FTS and scalar indices if missing (cheap when present)."""
    with store.writing("building the search indices", "index"):
        _ensure_indices(store)


def _ensure_indices(store: Store) -> None:
    from lancedb.index import FTS, BTree

    chunks = store.table(CHUNKS)
    have = {tuple(i.columns) for i in chunks.list_indices()}
    fts = FTS(with_position=True, stem=False, remove_stop_words=False)
    # BM25 reads the split column alone (see search.keyword): an FTS index on the
    # raw text would only cost build time, disk, and an optimize 2.7× as long.
    if ("search_text",) not in have:
        chunks.create_index("search_text", config=fts)
    # id: a vectors batch merges by it, and the ranking stage loads chunks by it
    # (101k chunks: merging 500 vectors 3.6 → 1.2 s, loading 60 chunks 47 → 27 ms).
    for column in ("path", "id"):
        if (column,) not in have:
            chunks.create_index(column, config=BTree())
    for name, columns in {SYMBOLS: ("name_lower", "path"), EDGES: ("path",)}.items():
        tbl = store.table(name)
        have = {tuple(i.columns) for i in tbl.list_indices()}
        for column in columns:
            if (column,) not in have:
                tbl.create_index(column, config=BTree())  # replace, remove and lookup by it
    store.cache.ensure_indices()


def has_vector_index(store: Store, *, fast: bool = False) -> bool:
    """Whether the main model's vectors (``fast``: the fast tier's) have an approximate index."""
    column = FAST_VECTOR if fast else "vector"
    return any(tuple(i.columns) == (column,) for i in store.table(CHUNKS).list_indices())


def ensure_vector_index(store: Store, min_rows: int, *, fast: bool = False) -> bool:
    """Build the approximate vector index once ``min_rows`` chunks have vectors
    (``fast``: over the fast tier's column, once that many have a fast vector).

    Brute force is exact and fast enough below ~50k vectors (65 ms at 100k on
    two cores is not); IVF_HNSW_SQ answers in ~5 ms with recall ~0.9-0.95.
    Built once; rows added later, and rows the other tier's vectors rewrote, are
    searched exactly until ``optimize`` folds them in. Returns whether it built
    one (seconds to minutes: writers only).
    """
    if min_rows <= 0 or (fast and store.fast_dimension() == 0) or has_vector_index(store, fast=fast):
        return False
    column, embedded = (FAST_VECTOR, FAST_EMBEDDED) if fast else ("vector", EMBEDDED)
    rows = store.count(CHUNKS, embedded)
    if rows < min_rows:
        return False
    from lancedb.index import HnswSq

    started = time.perf_counter()
    partitions = max(1, rows // VECTORS_PER_PARTITION)
    # Static vectors (the fast tier's, or a static main model's): half the graph-building
    # effort builds the fast tier's index in 71 s instead of 118 s at 102k static vectors
    # (load ~7), recall@10 0.953 against 0.963 — the fast tier's is built while MiniLM
    # waits to start, a static main model's at the end of a run that is all text speed.
    meta = store.read_meta() if not fast else None
    static = fast or (meta is not None and meta.model_id.startswith(STATIC_PREFIX))
    config = (
        HnswSq(distance_type="cosine", num_partitions=partitions, ef_construction=FAST_EF_CONSTRUCTION)
        if static
        else HnswSq(distance_type="cosine", num_partitions=partitions)
    )
    what = "the fast tier's vector index" if fast else "the vector index"
    with store.writing(f"building {what}", "index"):
        store.table(CHUNKS).create_index(column, config=config)
    log.info(
        "built the %s index over %d vectors (%d partitions) in %.1f s",
        column,
        rows,
        partitions,
        time.perf_counter() - started,
    )
    return True


def needs_optimize(
    store: Store, unindexed_rows: int = 500, versions: int | None = 100, *, searched_only: bool = False
) -> bool:
    """Whether enough has changed since the last optimize to pay for one.

    New rows are searchable before they are folded into the FTS index, only
    slower, and a row whose vector is filled in is a new row too: BM25 scans
    the unindexed ones (~100 ms CPU for 5.6k rows on the stdlib, ~18 ms for the
    whole indexed 100k). An optimize of a 50k-chunk index takes seconds, so small
    runs skip it until 500 rows or 100 versions pile up (``versions`` None: rows
    only; ``searched_only``: rows outside the FTS and vector indices, not the BTrees).
    """
    try:
        chunks = store.table(CHUNKS)
        for idx in chunks.list_indices():
            if searched_only and idx.index_type == "BTree":
                continue
            stats = chunks.index_stats(idx.name)
            if stats is not None and stats.num_unindexed_rows >= unindexed_rows:
                return True
        return versions is not None and len(chunks.list_versions()) >= versions
    except (OSError, RuntimeError, ValueError) as exc:
        log.debug("cannot read index statistics, optimising: %s", exc)
        return True


def fold_new_rows(store: Store) -> bool:
    """Before a vectors phase: fold the rows waiting outside the FTS and vector indices
    into them (an optimize) when enough wait. A run's new rows (files added or changed
    on an existing index) are otherwise scanned by every search until the phase's first
    optimize ``OPTIMIZE_EVERY_VECTORS`` later: on a 102k-chunk index with 51k such rows
    BM25 took ~0.7 s p50, for minutes. A fresh build's indices, made after its rows,
    hold them all: the fast tier's merges leave only the ``id`` BTree behind, which the
    vectors phase's own optimizes fold (an optimize there cost 8–14 s before MiniLM
    for no faster embedding). Returns whether it optimised."""
    if not needs_optimize(store, versions=None, searched_only=True):
        return False
    store.optimize()
    return True
