"""The Linux tier: Debian's linux-source-6.1. grep over the whole tree against raw
ripgrep; grep + BM25 + symbols indexed over core directories (~100k chunks)."""

from __future__ import annotations

import time
from pathlib import Path

from codesift.indexer.embed import Embedder
from codesift.indexer.search.grep import grep
from codesift.indexer.settings import load_settings
from codesift.indexer.sync import index_status, open_store

from . import corpora, peers, probes, queries
from .report import Table, percentiles

# Common words in C code as well as rare names: grep cost is walking 78k files plus
# reading what matched, so both ends matter.
FIXED_PATTERNS = ("spin_lock_irqsave", "EXPORT_SYMBOL_GPL", "kmalloc(", "TODO", "struct file_operations")


def linux(table: Table, embedder: Embedder, work: Path, vectors: bool) -> None:
    tier = "linux"
    tree = corpora.linux_tree()
    if tree is None:
        return
    root = corpora.linux_subset(tree, work / "linux")
    run = probes.index_in_child(root, "--no-embed")
    table.add(tier, f"cold index, text ({'+'.join(corpora.LINUX_INDEXED)})", run.seconds, "s")
    table.add(tier, "peak RSS while indexing (text)", run.peak_rss_mib / 1024, "GiB")
    settings = load_settings(root)
    st = index_status(root, settings)
    table.add(tier, "files indexed / skipped", st.files_indexed, f"/ {st.files_skipped}")
    table.add(tier, "chunks", st.chunks)
    table.add(tier, "symbols", st.symbols)
    table.add(
        tier,
        "index size ÷ source size (no vectors)",
        st.index_bytes / max(corpora.source_bytes(root), 1),
        "×",
    )
    store = open_store(root, settings)
    names = queries.symbol_names(store, 60)
    words = [queries.words_of(n) for n in names]
    bm25 = probes.mode_latency(store, settings, root, embedder, "bm25", words)
    table.latency(tier, f"BM25 ({st.chunks} chunks)", bm25, p50_limit=20)
    peer = peers.Bm25sPeer(peers.chunk_texts(store))
    theirs = peer.query_ms(words)
    table.latency(tier, "peer bm25s", theirs)
    table.add(tier, "BM25 p50 ÷ bm25s p50", peers.ratio(bm25, theirs), "×")
    del peer
    table.latency(tier, "workspace/symbol", probes.symbol_latency(store, names), p50_limit=10)
    grep_vs_rg(table, tier, tree, [*FIXED_PATTERNS, *names[:20]])
    if vectors:  # vectors on a subset: kernel/ alone, as its own workspace
        sub = work / "linux-kernel"
        corpora.link_tree(tree / "kernel", sub / "kernel")
        probes.index_in_child(sub, "--no-embed")
        vec = probes.index_in_child(sub)
        embedded = int(vec.report.get("chunks_embedded", 0) or 0)
        table.add(tier, f"vectors for kernel/ ({embedded} chunks)", vec.seconds / 60, "min")
        table.add(tier, "  embedding throughput", embedded / max(vec.seconds, 1e-9), "chunks/s")


def grep_vs_rg(table: Table, tier: str, tree: Path, patterns: list[str]) -> None:
    """codesift grep (passages ±10 lines) against ``rg -n``, same pattern, same whole tree.

    Debian's linux-source tree carries a .gitignore that ignores ``/*`` but
    ``debian/`` (for its packaging repository). codesift applies .gitignore files
    outside git repositories too, plain rg does not: so this comparison turns
    ``index.respect_gitignore`` off, and both search the same files.
    """
    settings = load_settings(tree, {"index": {"respect_gitignore": False}})
    ours: list[float] = []
    theirs: list[float] = []
    peers.rg_ms(tree, patterns[0])  # the page cache warm for both
    for p in patterns:
        theirs.append(peers.rg_ms(tree, p))
        t = time.perf_counter()
        grep(tree, p, index_settings=settings.index, timeout_s=120)
        ours.append((time.perf_counter() - t) * 1000)
    table.latency(tier, f"codesift grep, whole tree ({len(patterns)} patterns)", ours)
    table.latency(tier, "raw rg -n, whole tree", theirs)
    ratios = sorted(o / max(r, 1e-9) for o, r in zip(ours, theirs, strict=True))
    table.add(
        tier,
        "grep ÷ rg, p50 of per-pattern ratios",
        percentiles(ratios)[0],
        "×",
        "≤ 1.2",
        percentiles(ratios)[0] <= 1.2,
    )
    table.add(tier, "grep ÷ rg, worst pattern", ratios[-1], "×")
