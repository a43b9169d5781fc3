"""The whole-kernel tier (issue 17, outcome 4): every file of Debian's linux-source-6.1,
text and vectors, as a user with a tree that size would index it.

The tree is indexed whole (``index.respect_gitignore = false``: Debian's tree carries a
``.gitignore`` of ``/*``) with the static model as the index's model
(``embed.model = "all-MiniLM-L6-v2-static"``), the setting DECISIONS.md gives for a
tree too large to embed with MiniLM: at MiniLM's rate the same chunks would take hours
on two cores, and that projection is printed beside the figures, from a sample of the
kernel's own chunks embedded here. Then the language server is started on the index
and its RSS read once it is idle and after a few searches.

    python -m bench --only kernel [--keep DIR]
"""

from __future__ import annotations

import asyncio
import random
import resource
import time
from pathlib import Path

from lsprotocol import types as lsp

from codesift.indexer.embed import Embedder, make_embedder
from codesift.indexer.model import embedding_text
from codesift.indexer.search.symbols import definitions_named
from codesift.indexer.settings import load_settings
from codesift.indexer.static_embed import STATIC_MODEL
from codesift.indexer.store import CHUNKS, Store
from codesift.indexer.sync import index_status, open_store

from . import corpora, probes, queries, server_probe
from .report import Table

TIER = "kernel"
SETTINGS_FILE = f'[index]\nrespect_gitignore = false\n\n[embed]\nmodel = "{STATIC_MODEL}"\n'
TEXT_AND_VECTORS_MIN = 15.0  # issue 17's target for the whole tree
PEAK_GIB = 4.0
MINILM_SAMPLE = 512  # chunks embedded with MiniLM for the projection
# Functions every kernel build calls from many places: call hierarchy on each.
HIERARCHY = ("copy_process", "kmem_cache_create", "vfs_read")


def kernel(table: Table, minilm: Embedder, work: Path) -> None:
    """Index the whole tree with static vectors; figures, the MiniLM projection, the server."""
    tree = corpora.linux_tree()
    if tree is None:
        return
    root = work / "linux-whole"
    if not root.is_dir():
        corpora.link_tree(tree, root)
    (root / ".codesift.toml").write_text(SETTINGS_FILE, encoding="utf-8")
    run = probes.index_in_child(root)
    minutes = run.seconds / 60
    table.add(
        TIER,
        "whole tree: codesift index, text + static vectors",
        minutes,
        "min",
        f"< {TEXT_AND_VECTORS_MIN:g}",
        minutes < TEXT_AND_VECTORS_MIN,
    )
    gib = run.peak_rss_mib / 1024
    table.add(TIER, "peak RSS while indexing", gib, "GiB", f"< {PEAK_GIB:g}", gib < PEAK_GIB)
    indexed(table, root, minilm)


def indexed(table: Table, root: Path, minilm: Embedder) -> None:
    """Figures of the whole tree's index: its size, search latency, MiniLM's projected
    time, and a language server on it (RSS; call hierarchy, which reads the graph)."""
    settings = load_settings(root)
    st = index_status(root, settings)
    table.add(TIER, "files indexed / skipped", st.files_indexed, f"/ {st.files_skipped}")
    table.add(TIER, "chunks / with a vector", st.chunks, f"/ {st.vectors_done}")
    table.add(TIER, "symbols", st.symbols)
    table.add(TIER, "index size", st.index_bytes / 2**30, "GiB")
    table.add(TIER, "index size ÷ source size", st.index_bytes / max(corpora.source_bytes(root), 1), "×")
    static = make_embedder(settings.embed)
    store = open_store(root, settings)
    names = queries.symbol_names(store, 40)
    words = [queries.words_of(n) for n in names]
    for mode in ("hybrid", "bm25", "vector"):
        ms = probes.mode_latency(store, settings, root, static, mode, words)  # type: ignore[arg-type]
        table.latency(TIER, f"{mode} ({st.chunks} chunks, static vectors)", ms)
    _minilm_projection(table, store, minilm, st.chunks)
    targets = _definitions(store, HIERARCHY)
    del store
    server = server_probe.probe_server(root, words)
    for figure, value in server.items():
        table.add(TIER, f"language server: {figure}", value)
    for figure, value in asyncio.run(_call_hierarchy(root, targets)).items():
        table.add(TIER, f"language server: {figure}", value)


def _definitions(store: Store, names: tuple[str, ...]) -> list[tuple[str, lsp.Position]]:
    """Where each named function is defined (file URI, the name's position), from the index."""
    out = []
    for name in names:
        found = [s for s in definitions_named(store, [name]) if s.name == name]
        if found:
            start = found[0].selection_range.start
            out.append((found[0].path, lsp.Position(line=start.line - 1, character=start.column)))
    return out


async def _call_hierarchy(root: Path, targets: list[tuple[str, lsp.Position]]) -> dict[str, float]:
    """A real server's first call hierarchy on the whole tree (it reads the reference
    graph then) and the next ones: seconds, callers found, and RSS after."""
    client = await server_probe.started_client(root, idle_s=1800)
    pid = client._server.pid  # type: ignore[attr-defined]
    out: dict[str, float] = {}
    try:
        for i, (rel, pos) in enumerate(targets):
            doc = lsp.TextDocumentIdentifier(uri=(root / rel).as_uri())
            t = time.perf_counter()
            items = await client.text_document_prepare_call_hierarchy_async(
                lsp.CallHierarchyPrepareParams(text_document=doc, position=pos)
            )
            calls = 0
            for it in items or []:
                got = await client.call_hierarchy_incoming_calls_async(
                    lsp.CallHierarchyIncomingCallsParams(item=it)
                )
                calls += len(got or [])
            seconds = time.perf_counter() - t
            which = "first (graph read)" if i == 0 else "next"
            out[f"call hierarchy, {which}: {Path(rel).name} {calls} callers (s)"] = seconds
        out["RSS after call hierarchy (MiB)"] = server_probe.rss_mib(pid)
    finally:
        await client.shutdown_async(None)
        client.exit(None)
        await asyncio.sleep(0.5)
        await client.stop()
    return out


def _minilm_projection(table: Table, store: Store, minilm: Embedder, chunks: int) -> None:
    """MiniLM's rate on a sample of the kernel's own chunk texts, and what the whole
    tree would take at it: why the static model is the setting for a tree this size."""
    # Chunks whose content hash starts "00": a 1-in-256 sample spread over the tree.
    texts = (
        store.table(CHUNKS)
        .search()
        .where("content_hash LIKE '00%'")
        .select(["path", "text"])
        .limit(None)
        .to_arrow()
    )
    rows = random.Random(17).sample(range(texts.num_rows), min(MINILM_SAMPLE, texts.num_rows))
    sample = [embedding_text(texts["path"][i].as_py(), texts["text"][i].as_py()) for i in rows]
    before = resource.getrusage(resource.RUSAGE_SELF)
    t = time.perf_counter()
    minilm.embed_documents(sample)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    rate = len(sample) / max(wall, 1e-9)
    table.add(TIER, f"MiniLM on {len(sample)} kernel chunks (wall)", rate, "chunks/s")
    table.add(TIER, "  per CPU-second", len(sample) / max(cpu, 1e-9), "chunks/s")
    table.add(TIER, "  the whole tree at that rate (projection)", chunks / rate / 3600, "h")
