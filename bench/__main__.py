"""``make bench``: speed, memory and retrieval quality on real corpora; prints a table
and writes bench/results/latest.json.

    python -m bench            # small + stdlib tiers + quality
    python -m bench --quick    # small tier only
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from codesift.indexer.embed import Embedder, make_embedder
from codesift.indexer.search.grep import grep
from codesift.indexer.search.hybrid import search
from codesift.indexer.search.results import SearchMode, SearchRequest
from codesift.indexer.search.symbols import SymbolIndex, find_symbols
from codesift.indexer.settings import Settings, load_settings
from codesift.indexer.store import Store
from codesift.indexer.sync import index_status, index_workspace, open_store

from . import graph_accuracy, quality

RESULTS = Path(__file__).resolve().parent / "results"
Row = dict[str, object]


def percentiles(samples: Sequence[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    if not ordered:
        return 0.0, 0.0
    return statistics.median(ordered), ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))]


def timed(fn: Callable[[], object]) -> float:
    t = time.perf_counter()
    fn()
    return (time.perf_counter() - t) * 1000


def row(
    rows: list[Row], tier: str, figure: str, value: float, unit: str, target: str = "", ok: bool | None = None
) -> None:
    rows.append(
        {"tier": tier, "figure": figure, "value": round(value, 3), "unit": unit, "target": target, "pass": ok}
    )
    mark = "" if ok is None else ("PASS" if ok else "MISS")
    print(f"{tier:<8} {figure:<52} {value:>12,.2f} {unit:<8} {target:<12} {mark}", flush=True)


def small_workspace(root: Path, n: int = 150) -> Path:
    rng = random.Random(5)
    verbs = ["parse", "load", "save", "retry", "upload", "validate", "render", "fetch", "encode", "merge"]
    nouns = ["config", "user", "token", "session", "blob", "record", "header", "payload", "cache", "index"]
    for i in range(n):
        v, o = rng.choice(verbs), rng.choice(nouns)
        body = "\n".join(
            f'def {v}_{o}_{i}_{j}(value):\n    """{v.title()} the {o} number {j}."""\n'
            f"    result = [{j}, value]\n    return result\n"
            for j in range(6)
        )
        path = root / f"pkg{i % 10}" / f"mod_{i}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body, encoding="utf-8")
    return root


def query_times(
    store: Store,
    settings: Settings,
    root: Path,
    embedder: Embedder | None,
    mode: SearchMode,
    queries: Sequence[str],
) -> list[float]:
    """Milliseconds of each query, run one after another."""
    out = []
    for q in queries:
        t = time.perf_counter()
        search(store, SearchRequest(q, mode=mode), settings, root=root, embedder=embedder)
        out.append((time.perf_counter() - t) * 1000)
    return out


def latency_rows(
    rows: list[Row],
    tier: str,
    root: Path,
    settings: Settings,
    embedder: Embedder | None,
    queries: Sequence[str],
    modes: Sequence[SearchMode],
) -> None:
    store = open_store(root, settings)
    for mode in modes:
        samples = query_times(store, settings, root, embedder, mode, queries)
        p50, p95 = percentiles(samples)
        row(rows, tier, f"{mode} query p50 ({len(queries)} queries)", p50, "ms")
        row(rows, tier, f"{mode} query p95", p95, "ms")
    idx = SymbolIndex(store)
    names = [q.split()[0] for q in queries]
    find_symbols(store, names[0], index=idx)
    samples = [timed(lambda n=n: find_symbols(store, n, index=idx)) for n in names]
    p50, p95 = percentiles(samples)
    row(rows, tier, "symbols p50", p50, "ms", "< 10 ms", p50 < 10)
    row(rows, tier, "symbols p95", p95, "ms")


def tier_small(rows: list[Row], embedder: Embedder, workdir: Path) -> None:
    root = small_workspace(workdir / "small")
    settings = load_settings(root)
    report = index_workspace(root, settings, embedder=embedder)
    row(rows, "small", "cold index incl. vectors", report.seconds, "s")
    row(rows, "small", "chunks", report.chunks_written, "")
    row(
        rows,
        "small",
        "embedding throughput",
        report.chunks_embedded / max(report.phase_seconds.get("embed", 1e-9), 1e-9),
        "chunks/s",
    )
    again = index_workspace(root, settings, embedder=embedder)
    row(rows, "small", "no-change re-index", again.seconds, "s")
    queries = [
        "retry upload token",
        "parse config value",
        "validate session header",
        "render payload cache",
    ] * 13
    latency_rows(rows, "small", root, settings, embedder, queries, ("grep", "bm25", "vector", "hybrid"))


def tier_stdlib(rows: list[Row], embedder: Embedder, workdir: Path) -> Path:
    root = workdir / "stdlib"
    shutil.copytree(quality.STDLIB, root, ignore=shutil.ignore_patterns("site-packages", "__pycache__"))
    settings = load_settings(root)
    report = index_workspace(root, settings, embedder=embedder, embed=False)
    text_ready = report.phase_seconds["walk"] + report.phase_seconds["parse"]
    row(rows, "stdlib", "cold index: grep + BM25 + symbols ready", text_ready, "s", "< 30 s", text_ready < 30)
    row(rows, "stdlib", "  of which walk", report.phase_seconds["walk"], "s")
    row(rows, "stdlib", "  of which parse + store", report.phase_seconds["parse"], "s")
    row(rows, "stdlib", "  optimize (compaction, FTS fold-in)", report.phase_seconds["optimize"], "s")
    st = index_status(root, settings)
    row(rows, "stdlib", "files indexed", st.files_indexed, "")
    row(rows, "stdlib", "chunks", st.chunks, "")
    row(rows, "stdlib", "symbols", st.symbols, "")
    again = index_workspace(root, settings, embedder=embedder, embed=False)
    row(rows, "stdlib", "no-change re-index (engine)", again.seconds, "s", "< 3 s", again.seconds < 3)
    target = root / "json" / "decoder.py"
    target.write_text(target.read_text() + "\n\ndef bench_marker_function(x):\n    return x\n")
    t = time.perf_counter()
    index_workspace(root, settings, embedder=embedder, embed=False)
    row(rows, "stdlib", "one-file change re-index (text)", time.perf_counter() - t, "s")
    source_bytes = sum(
        p.stat().st_size for p in root.rglob("*") if p.is_file() and ".codesift" not in p.parts
    )
    st = index_status(root, settings)
    row(rows, "stdlib", "index size ÷ source size (no vectors)", st.index_bytes / max(source_bytes, 1), "×")
    store = open_store(root, settings)
    words = [
        "decode",
        "encoder",
        "socket timeout",
        "parse header",
        "thread pool",
        "retry",
        "lock acquire",
        "json",
        "utf-8 bom",
        "tempfile",
    ]
    queries = (words * 5)[:50]
    for mode in ("grep", "bm25"):
        samples = query_times(store, settings, root, None, mode, queries)
        p50, p95 = percentiles(samples)
        row(rows, "stdlib", f"{mode} query p50 / {st.chunks} chunks", p50, "ms")
        row(rows, "stdlib", f"{mode} query p95", p95, "ms")
    samples = [timed(lambda q=q: grep(root, q, index_settings=settings.index)) for q in queries]
    row(rows, "stdlib", "raw grep() p50 (passages ±10)", percentiles(samples)[0], "ms")
    idx = SymbolIndex(store)
    find_symbols(store, "JSONDecoder", index=idx)
    names = [
        "JSONDecoder",
        "loads",
        "parseaddr",
        "Thread",
        "urlopen",
        "TarFile",
        "getLogger",
        "Path",
        "dumps",
        "OrderedDict",
    ] * 5
    samples = [timed(lambda n=n: find_symbols(store, n, index=idx)) for n in names]
    p50, p95 = percentiles(samples)
    row(rows, "stdlib", "symbols p50", p50, "ms", "< 10 ms", p50 < 10)
    row(rows, "stdlib", "symbols p95", p95, "ms")


def tier_graph(rows: list[Row], stdlib_root: Path | None) -> None:
    acc = graph_accuracy.accuracy(["json", "email"], 50, 0, False)
    row(
        rows,
        "graph",
        "incoming calls precision vs jedi (json+email, 50 fns)",
        acc["precision"],
        "",
        "≥ 0.95",
        acc["precision"] >= 0.95,
    )
    row(rows, "graph", "incoming calls recall vs jedi", acc["recall"], "")
    if stdlib_root is not None:
        for figure, value in graph_accuracy.latency(stdlib_root).items():
            target = "< 10 ms" if "callers" in figure or "implementations" in figure else ""
            target = "< 200 ms" if "multi-hop" in figure else target
            limit = 10.0 if target == "< 10 ms" else 200.0
            row(rows, "graph", figure, value, "", target, value < limit if target else None)


def tier_quality(rows: list[Row], embedder: Embedder, workdir: Path, n: int) -> None:
    root = workdir / "quality"
    cases = quality.build_corpus(root)
    settings = load_settings(root)
    report = index_workspace(root, settings, embedder=embedder)
    row(rows, "quality", "corpus chunks (docstrings stripped)", report.chunks_written, "")
    row(
        rows,
        "quality",
        "embedding throughput",
        report.chunks_embedded / max(report.phase_seconds.get("embed", 1e-9), 1e-9),
        "chunks/s",
    )
    chosen = quality.sample(cases, n)
    store = open_store(root, settings)
    scores = quality.evaluate(store, root, settings, embedder, chosen)
    for s in scores:
        row(rows, "quality", f"{s.mode} MRR@10 ({s.queries} queries)", s.mrr10, "")
        row(rows, "quality", f"{s.mode} Recall@1 / @5 / @10", s.recall1, f"{s.recall5:.2f}/{s.recall10:.2f}")
        row(rows, "quality", f"{s.mode} p50 / p95 latency", s.p50_ms, f"{s.p95_ms:.0f}ms")
    by = {s.mode: s.mrr10 for s in scores}
    best_single = max(by.get("bm25", 0.0), by.get("vector", 0.0))
    row(
        rows,
        "quality",
        "hybrid MRR@10 − best single source",
        by.get("hybrid", 0.0) - best_single,
        "",
        "> 0",
        by.get("hybrid", 0.0) > best_single,
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench")
    parser.add_argument("--quick", action="store_true", help="small tier only")
    parser.add_argument("--queries", type=int, default=200, help="quality queries")
    parser.add_argument("--only", choices=["small", "stdlib", "graph", "quality"], default=None)
    args = parser.parse_args(argv)
    os.environ.setdefault("XDG_CACHE_HOME", tempfile.mkdtemp(prefix="codesift-bench-cache-"))
    embedder = make_embedder(Settings().embed)
    rows: list[Row] = []
    started = time.perf_counter()
    print(f"{'tier':<8} {'figure':<52} {'value':>12} {'unit':<8} {'target':<12}")
    with tempfile.TemporaryDirectory(prefix="codesift-bench-") as tmp:
        work = Path(tmp)
        tiers = ["small"] if args.quick else ["small", "stdlib", "graph", "quality"]
        if args.only:
            tiers = [args.only]
        stdlib_root: Path | None = None
        for tier in tiers:
            if tier == "small":
                tier_small(rows, embedder, work)
            elif tier == "stdlib":
                stdlib_root = tier_stdlib(rows, embedder, work)
            elif tier == "graph":
                tier_graph(rows, stdlib_root)
            else:
                tier_quality(rows, embedder, work, args.queries)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    row(rows, "all", "peak RSS of the bench process", peak, "MiB")
    RESULTS.mkdir(exist_ok=True)
    out = {"seconds": round(time.perf_counter() - started, 1), "python": sys.version.split()[0], "rows": rows}
    (RESULTS / "latest.json").write_text(json.dumps(out, indent=2), encoding="utf-8")
    print(f"wrote {RESULTS / 'latest.json'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
