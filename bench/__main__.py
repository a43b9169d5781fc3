"""``make bench``: speed, memory and retrieval quality on real corpora; prints a table
(each figure with its target and PASS / MISS) and writes bench/results/latest.json.

    python -m bench                    # every tier
    python -m bench --quick            # the small, generated tier only
    python -m bench --only stdlib 100k # some tiers (100k builds on stdlib)
    python -m bench --no-vectors       # skip embedding (text phase, BM25, grep, symbols, graph)
    python -m bench --only semble swebench --data /work/benchdata   # the outside-data quality tiers

Tiers: small (generated); static (click and the standard library indexed with the
static model: seconds to vectors done, chunks/s, query embedding); twotier (click and
the standard library with the default settings, MiniLM plus the static fast tier: seconds
from `codesift index` to the first search answered by the static model, to the first
answered by MiniLM, to the end); stdlib (this
interpreter's standard library); 100k (the stdlib twice under distinct paths: vectors
from the cache); linux (Debian's linux-source-6.1: grep over the whole tree, the index
over core folders); kernel (the same tree whole, every file, text and static vectors, with
peak RSS, index size, search latency, MiniLM's projected time and the language server's
RSS on it); graph (callers against jedi); quality (CodeSearchNet protocol on a
docstring-stripped stdlib subset); semble (the semble benchmark's NDCG@10 on its
allowed repositories); swebench (SWE-bench file localisation). The last two read a
data folder filled once by ``python -m bench.fetchdata`` (``--data``,
$CODESIFT_BENCH_DATA, /work/benchdata) and
skip, saying how to fill it, when it is missing.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from codesift.indexer.embed import Embedder, make_embedder
from codesift.indexer.settings import Settings, load_settings
from codesift.indexer.sync import index_workspace, open_store

from . import (
    corpora,
    graph_accuracy,
    probes,
    quality,
    questions,
    semble_data,
    tier_kernel,
    tier_linux,
    tier_static,
    tier_stdlib,
    tier_two,
)
from . import semble as semble_tier
from . import swebench as swebench_tier
from .benchdata import SWEBENCH_ALLOWED, data_dir, fill_hint
from .report import Table, header

RESULTS = Path(__file__).resolve().parent / "results"
TIERS = (
    "small",
    "static",
    "twotier",
    "stdlib",
    "100k",
    "linux",
    "kernel",
    "graph",
    "quality",
    "semble",
    "swebench",
)


def tier_small(table: Table, embedder: Embedder, work: Path) -> None:
    root = corpora.small_workspace(work / "small")
    settings = load_settings(root)
    report = index_workspace(root, settings, embedder=embedder)
    table.add("small", "cold index incl. vectors", report.seconds, "s")
    table.add("small", "chunks", report.chunks_written)
    embed_s = report.phase_seconds.get("embed", 0.0)
    table.add("small", "embedding throughput", report.chunks_embedded / max(embed_s, 1e-9), "chunks/s")
    again = index_workspace(root, settings, embedder=embedder)
    table.below("small", "no-change re-index", again.seconds, "s", 3)
    store = open_store(root, settings)
    saves = probes.save_to_searchable(store, settings, root, embedder, "pkg0/mod_0.py", 10)
    table.latency("small", "one file saved → searchable in every mode", saves, noun="saves")
    words = ["retry", "parse", "validate", "render", "fetch", "encode", "merge", "load", "save", "upload"]
    things = ["upload token", "config value", "session header", "payload cache", "record index"]
    nl = [f"{w} {t}" for w in words for t in things]
    for mode in ("grep", "bm25", "vector", "hybrid"):
        table.latency(
            "small", f"{mode} query", probes.mode_latency(store, settings, root, embedder, mode, nl)
        )
    names = [f"{w}_" for w in words] + [f"{w}_config" for w in words]
    table.latency("small", "workspace/symbol", probes.symbol_latency(store, names * 3), p50_limit=10)


def tier_graph(table: Table, data: Path, work: Path) -> None:
    """Incoming calls against jedi and pyright (stdlib json+email, click), the share of
    edges resolved per language on a real repository each, Swift parse failures."""
    acc = graph_accuracy.accuracy(["json", "email"], 50, 0, False)
    table.add(
        "graph",
        "incoming calls precision vs jedi (json+email, 50 fns)",
        acc["precision vs jedi"],
        "",
        "1.00",
        acc["precision vs jedi"] >= 1.0,
    )
    table.add("graph", "incoming calls recall vs jedi (json+email)", acc["recall vs jedi"])
    if "recall vs pyright" in acc:
        # pyright reads `email.*` from its typeshed stubs, not the copied package: the
        # stdlib precision against it counts those (true) call sites as codesift-only
        table.add(
            "graph",
            "incoming calls precision / recall vs pyright (json+email)",
            acc["precision vs pyright"],
            f"recall {acc['recall vs pyright']:.3f}",
        )
    repos = data / "repos"
    if (repos / "click").is_dir():
        click = graph_accuracy.accuracy([], 50, 0, False, {"click": repos / "click"})
        for who in ("jedi", "pyright"):
            if f"recall vs {who}" in click:
                table.add(
                    "graph",
                    f"incoming calls precision / recall vs {who} (click, 50 fns)",
                    click[f"precision vs {who}"],
                    f"recall {click[f'recall vs {who}']:.3f}",
                    "≥ 0.95 recall",
                    click[f"recall vs {who}"] >= 0.95,
                )
    for label, row in graph_accuracy.resolved_share(repos, work).items():
        table.add(
            "graph",
            f"edges resolved, {label}",
            row["resolved"],
            f"{row['unresolved (candidates)']:.3f} with candidates",
        )
    # Issue 15 names three Swift trees: vapor (the semble checkout) and DATA/swift/<name>
    # (Alamofire, swift-argument-parser: `git archive` of a fetched repository).
    swift_trees = [repos / "vapor"] if (repos / "vapor").is_dir() else []
    swift_trees += sorted(p for p in (data / "swift").glob("*") if p.is_dir())
    for tree in swift_trees:
        fails = graph_accuracy.parse_failures(tree, "swift", ".swift")
        table.add(
            "graph",
            f"Swift files losing a declaration to a parse error ({tree.name}, {fails['files']} files)",
            fails["losing a declaration"],
            f"{fails['with parse errors']} with any error",
            "0",
            fails["losing a declaration"] == 0,
        )
    if not (data / "swift").is_dir():
        print(
            f"Swift parse failures: only vapor's checkout; put other trees under {data}/swift/<name>, e.g.\n"
            f"  mkdir -p {data}/swift/Alamofire && git --git-dir=MIRROR/Alamofire+Alamofire/repo "
            f"archive HEAD | tar -x -C {data}/swift/Alamofire"
        )


def tier_quality(table: Table, embedder: Embedder, work: Path, n: int) -> None:
    root = work / "quality"
    cases = quality.build_corpus(root)
    settings = load_settings(root)
    report = index_workspace(root, settings, embedder=embedder)
    table.add("quality", "corpus chunks (docstrings stripped)", report.chunks_written)
    chosen = quality.sample(cases, n)
    store = open_store(root, settings)
    scores = quality.evaluate(store, root, settings, embedder, chosen)
    for s in scores:
        table.add("quality", f"{s.mode} MRR@10 ({s.queries} queries)", s.mrr10)
        table.add("quality", f"{s.mode} Recall@1 / @5 / @10", s.recall1, f"{s.recall5:.2f}/{s.recall10:.2f}")
        table.add("quality", f"{s.mode} latency p50 / p95", s.p50_ms, f"{s.p95_ms:.0f}ms")
    by = {s.mode: s.mrr10 for s in scores}
    best = max(by.get("bm25", 0.0), by.get("vector", 0.0))
    table.add(
        "quality",
        "hybrid MRR@10 − best single source",
        by.get("hybrid", 0.0) - best,
        "",
        "> 0",
        by.get("hybrid", 0.0) > best,
    )


def tier_semble(table: Table, data: Path) -> None:
    """NDCG@10 of codesift (hybrid / bm25 / vector) and whole-file BM25 on the prebuilt indexes."""
    if not (data / "semble" / "repos.json").is_file():
        print(f"semble tier skipped: {data} holds no semble benchmark data. Fill it once:")
        print("\n".join(fill_hint(data, "it").splitlines()[2:5]))
        return
    bench = semble_data.open_bench(data)
    out = semble_tier.run(bench, list(bench.specs), list(semble_data.ALL_MODES), {}, table)
    (data / "results").mkdir(parents=True, exist_ok=True)
    (data / "results" / "semble-latest.json").write_text(json.dumps(out, indent=1), encoding="utf-8")
    semble_data.write_status(bench)
    questions.check_click(table, data)
    questions.check_demo(table)


def tier_swebench(table: Table, data: Path) -> None:
    """File Acc@1/5/10 and MRR of codesift against whole-file BM25 on SWE-bench issues."""
    sel = data / "swebench" / "selection.json"
    if not sel.is_file():
        print(f"swebench tier skipped: {sel} is missing (python -m bench.fetchdata swebench --help)")
        return
    repos = [r for r in json.loads(sel.read_text(encoding="utf-8")) if r in SWEBENCH_ALLOWED]
    swebench_tier.evaluate(data, repos, ["hybrid", "bm25", "filebm25"], 100, {}, table)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="the small tier only")
    parser.add_argument("--only", nargs="+", choices=TIERS, help="run these tiers")
    parser.add_argument("--no-vectors", action="store_true", help="no embedding in stdlib / 100k / linux")
    parser.add_argument("--linux-vectors", action="store_true", help="also embed the kernel/ folder")
    parser.add_argument("--queries", type=int, default=500, help="quality queries (≥ 500 for the figure)")
    parser.add_argument("--keep", type=Path, help="work in this folder and keep it")
    parser.add_argument(
        "--data",
        type=Path,
        help="semble / swebench data folder (default $CODESIFT_BENCH_DATA or /work/benchdata)",
    )
    args = parser.parse_args(argv)
    os.environ.setdefault("XDG_CACHE_HOME", tempfile.mkdtemp(prefix="codesift-bench-cache-"))
    tiers = ["small"] if args.quick else list(args.only or TIERS)
    vectors = not args.no_vectors
    embedder = make_embedder(Settings().embed)
    table = Table()
    started = time.perf_counter()
    print(f"load {Path('/proc/loadavg').read_text().split()[:3]} · tiers {' '.join(tiers)}")
    header()
    with tempfile.TemporaryDirectory(prefix="codesift-bench-") as tmp:
        work = args.keep or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        stdlib_root: Path | None = None
        for tier in tiers:
            if tier == "small":
                tier_small(table, embedder, work)
            elif tier == "static":
                tier_static.static(table, work, data_dir(args.data))
            elif tier == "twotier":
                tier_two.two_tier(table, work, data_dir(args.data))
            elif tier == "stdlib":
                stdlib_root = tier_stdlib.stdlib(table, embedder, work, vectors)
            elif tier == "100k":
                if stdlib_root is None and (work / "stdlib" / ".codesift").is_dir():
                    stdlib_root = work / "stdlib"  # --keep: the stdlib tier's index, reused
                if stdlib_root is None:
                    stdlib_root = tier_stdlib.stdlib(table, embedder, work, vectors)
                tier_stdlib.hundred_k(table, embedder, stdlib_root, vectors)
            elif tier == "linux":
                tier_linux.linux(table, embedder, work, args.linux_vectors)
            elif tier == "kernel":
                tier_kernel.kernel(table, embedder, work)
            elif tier == "graph":
                tier_graph(table, data_dir(args.data), work)
            elif tier == "semble":
                tier_semble(table, data_dir(args.data))
            elif tier == "swebench":
                tier_swebench(table, data_dir(args.data))
            else:
                tier_quality(table, embedder, work, args.queries)
    table.add(
        "all",
        "peak RSS of the bench process",
        resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "MiB",
    )
    RESULTS.mkdir(exist_ok=True)
    seconds = round(time.perf_counter() - started, 1)
    out = {"seconds": seconds, "python": sys.version.split()[0], "tiers": tiers, "rows": table.rows}
    (RESULTS / "latest.json").write_text(json.dumps(out, indent=2, ensure_ascii=False), encoding="utf-8")
    missed = table.missed()
    print(f"{len(table.rows)} figures in {seconds:.0f} s; {len(missed)} missed their target")
    for r in missed:
        print(f"  MISS {r['tier']}: {r['figure']} = {r['value']} {r['unit']} (target {r['target']})")
    print(f"wrote {RESULTS / 'latest.json'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
