"""The static tier: how fast a repository is fully searchable with the static model
(``embed.model = all-MiniLM-L6-v2-static``), the issue "Vectors at the speed of text".

- click (pallets/click from the semble data folder): ``codesift index`` in a child
  process on a fresh copy, from start-up to every vector stored (target < 5 s);
- the standard library: the same, text and vectors (target < 60 s), and the
  embedding throughput of its vectors phase (chunks/s);
- one query's embedding, p50 and p95 (target < 1 ms p50).
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

from codesift.indexer.embed import make_embedder
from codesift.indexer.settings import load_settings
from codesift.indexer.static_embed import STATIC_MODEL
from codesift.indexer.store import CHUNKS
from codesift.indexer.sync import open_store

from . import corpora, probes, queries
from .report import Table

SETTINGS_FILE = f'[embed]\nmodel = "{STATIC_MODEL}"\n'


def _with_static_model(root: Path) -> Path:
    (root / ".codesift.toml").write_text(SETTINGS_FILE, encoding="utf-8")
    return root


def _cold(table: Table, root: Path, what: str, limit_s: float) -> None:
    run = probes.index_in_child(root)
    report = run.report
    embedded = int(str(report.get("chunks_embedded", 0)))
    engine_s = float(str(report.get("seconds", 0.0)))
    table.below("static", f"{what}: `codesift index` to vectors done", run.seconds, "s", limit_s)
    chunks = float(str(report.get("chunks_written", 0)))
    table.add("static", f"{what}: chunks / vectors", chunks, f"/ {embedded}")
    if engine_s:
        # The static model embeds inside the text phase: one rate for both.
        table.add("static", f"{what}: chunks/s, text + vectors (engine)", embedded / engine_s, "chunks/s")
    table.add("static", f"{what}: peak RSS while indexing", run.peak_rss_mib, "MiB")


def _embedding_rate(table: Table, root: Path) -> None:
    """The static model alone on the index's own chunk texts: chunks per second."""
    settings = load_settings(root)
    texts = [str(t) for t in open_store(root, settings).table(CHUNKS).to_arrow().column("text").to_pylist()]
    embedder = make_embedder(settings.embed)
    embedder.embed_query("load the table outside the timing")
    t = time.perf_counter()
    for start in range(0, len(texts), 2048):
        embedder.embed_documents(texts[start : start + 2048])
    seconds = time.perf_counter() - t
    table.add("static", f"stdlib: embedding alone ({len(texts)} chunks)", len(texts) / seconds, "chunks/s")


def static(table: Table, work: Path, data: Path) -> None:
    """Cold index of click and the standard library with the static model; query embedding."""
    click = data / "repos" / "click"
    if click.is_dir():
        root = work / "static-click"
        shutil.rmtree(root, ignore_errors=True)
        shutil.copytree(click, root, ignore=shutil.ignore_patterns(".codesift", ".git"), symlinks=True)
        _cold(table, _with_static_model(root), "click", 5)
    else:
        print(f"static tier: {click} is missing (python -m bench.fetchdata semble); click skipped")
    stdlib = _with_static_model(corpora.copy_stdlib(work / "static-stdlib"))
    _cold(table, stdlib, "stdlib", 60)
    _embedding_rate(table, stdlib)
    settings = load_settings(stdlib)
    embedder = make_embedder(settings.embed)
    texts = queries.docstring_queries(stdlib, 200)
    embedder.embed_query(texts[0])  # load the table outside the timing
    samples = []
    for text in texts:
        t = time.perf_counter()
        embedder.embed_query(text)
        samples.append((time.perf_counter() - t) * 1000)
    table.latency("static", "query embedding", samples, p50_limit=1)
