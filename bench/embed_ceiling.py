"""The transformer tier's embedding against its physical ceiling (issue 17, outcome 3).

On a fixed sample of the index's own chunk texts: the pipeline as the indexer runs
it (``OnnxEmbedder.embed_documents``, 256 texts a call, its threads at once), and
the ceiling — one single-threaded forward pass per chunk at its real token length,
summed. Both in chunks per CPU-second of this process (``getrusage``), which the
other agents on a shared machine do not move; the wall rate and the load are
printed beside them.
"""

from __future__ import annotations

import os
import random
import resource
import time

from codesift.indexer.embed import OnnxEmbedder

from .report import Table

SAMPLE = 1000


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def embedding_ceiling(table: Table, tier: str, embedder: OnnxEmbedder, texts: list[str]) -> None:
    """Pipeline chunks/s and chunks per CPU-second, and the one-pass-per-chunk ceiling."""
    sample = random.Random(17).sample(texts, min(SAMPLE, len(texts)))
    if not sample:
        return
    embedder.embed_query("load the model outside the timing")
    load = os.getloadavg()[0]
    cpu, wall = _cpu(), time.perf_counter()
    for start in range(0, len(sample), 256):
        embedder.embed_documents(sample[start : start + 256])
    cpu, wall = _cpu() - cpu, time.perf_counter() - wall
    n = len(sample)
    table.add(tier, f"MiniLM pipeline, {n} chunks, {embedder.threads} runs at once", n / wall, "chunks/s")
    table.add(tier, "MiniLM pipeline per CPU-second", n / cpu, "chunks/CPU-s")
    session, tokenizer = embedder._load()
    feeds = [embedder._feeds([e]) for e in tokenizer.encode_batch(sample)]
    output = [embedder._output_name]
    cpu = _cpu()
    for feed in feeds:
        session.run(output, feed)
    cpu = _cpu() - cpu
    table.add(tier, "ceiling: one forward pass per chunk, single thread", n / cpu, "chunks/CPU-s")
    table.add(tier, "load average while measuring (2 cores)", (load + os.getloadavg()[0]) / 2)
