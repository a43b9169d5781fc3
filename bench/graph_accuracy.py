"""Reference-graph accuracy and speed: codesift's incoming calls against jedi's.

    python -m bench.graph_accuracy                  # json + email from the stdlib, 50 functions
    python -m bench.graph_accuracy --n 50 --seed 0 --packages json email
    python -m bench.graph_accuracy --stats DIR      # edge counts / unresolved share per language
    python -m bench.graph_accuracy --latency DIR    # callers / impls / multi-hop p50 on DIR

Unit of comparison: a call site (path, line, column of the called name). jedi
(``Script.get_references`` over the same copied packages, keeping references
followed by ``(``) is the reference; precision = codesift ∩ jedi / codesift,
recall = codesift ∩ jedi / jedi, micro-averaged over the sampled functions.
Needs jedi (``pip install jedi``; in the ``bench`` extra).
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import sys
import sysconfig
import tempfile
import time
from collections import Counter
from pathlib import Path

from codesift.indexer.graph import Graph, callers, implementations
from codesift.indexer.graph.snapshot import CALLABLE_KINDS, TYPE_KINDS
from codesift.indexer.model import EdgeKind, Symbol
from codesift.indexer.search.hybrid import search
from codesift.indexer.search.results import SearchRequest
from codesift.indexer.settings import load_settings
from codesift.indexer.sync import index_workspace, open_store

STDLIB = Path(sysconfig.get_paths()["stdlib"])
Site = tuple[str, int, int]


def build(root: Path) -> Graph:
    settings = load_settings(root)
    index_workspace(root, settings, embed=False)
    return Graph(open_store(root, settings))


def sample_functions(graph: Graph, n: int, seed: int) -> list[Symbol]:
    graph.refresh()
    pool = [
        s
        for fg in sorted(graph.snapshot.files.values(), key=lambda f: f.path)
        for s in fg.symbols
        if s.kind in CALLABLE_KINDS and not s.name.startswith("__") and fg.language == "python"
    ]
    return random.Random(seed).sample(pool, min(n, len(pool)))


def jedi_call_sites(root: Path, sym: Symbol) -> set[Site]:
    import jedi

    project = jedi.Project(str(root))
    script = jedi.Script(path=str(root / sym.path), project=project)
    line, col = sym.selection_range.start.line, sym.selection_range.start.column
    out: set[Site] = set()
    texts: dict[Path, list[str]] = {}
    for ref in script.get_references(line, col, include_builtins=False):
        if ref.module_path is None or ref.line is None or ref.column is None:
            continue
        path = Path(ref.module_path)
        if ref.is_definition() or not path.is_relative_to(root):
            continue  # typeshed stubs, the real stdlib: outside the compared workspace
        if (ref.line, ref.column) == (line, col) and path == root / sym.path:
            continue  # the definition itself
        lines = texts.setdefault(path, path.read_text(encoding="utf-8", errors="replace").split("\n"))
        rest = lines[ref.line - 1][ref.column + len(ref.name) :].lstrip()
        if rest.startswith("("):
            out.add((path.relative_to(root).as_posix(), ref.line, ref.column))
    return out


def codesift_call_sites(graph: Graph, sym: Symbol) -> set[Site]:
    return {(c.path, r.start.line, r.start.column) for c in callers(graph, sym) for r in c.from_ranges}


def accuracy(packages: list[str], n: int, seed: int, verbose: bool) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "ws"
        root.mkdir()
        for pkg in packages:
            shutil.copytree(STDLIB / pkg, root / pkg, ignore=shutil.ignore_patterns("__pycache__", "test*"))
        graph = build(root)
        chosen = sample_functions(graph, n, seed)
        tp = fp = fn = 0
        with_callers = 0
        for sym in chosen:
            ours, ref = codesift_call_sites(graph, sym), jedi_call_sites(root, sym)
            with_callers += bool(ref)
            tp += len(ours & ref)
            fp += len(ours - ref)
            fn += len(ref - ours)
            if verbose and (ours - ref or ref - ours):
                print(f"{sym.path}:{sym.qualified_name}", file=sys.stderr)
                for site in sorted(ours - ref):
                    print(f"   codesift only {site}", file=sys.stderr)
                for site in sorted(ref - ours):
                    print(f"   jedi only     {site}", file=sys.stderr)
        precision = tp / (tp + fp) if tp + fp else 1.0
        recall = tp / (tp + fn) if tp + fn else 1.0
        return {
            "functions": len(chosen),
            "functions with callers (jedi)": with_callers,
            "call sites codesift": tp + fp,
            "call sites jedi": tp + fn,
            "agreed": tp,
            "precision": round(precision, 3),
            "recall": round(recall, 3),
        }


def edge_stats(graph: Graph) -> dict[str, dict[str, float]]:
    """Per language: edges, and among non-import edges the share resolved, unresolved with
    candidates in the index, and unresolved with none (builtins, external packages)."""
    graph.refresh()
    counts: dict[str, Counter[str]] = {}
    for fg in graph.snapshot.files.values():
        c = counts.setdefault(fg.language, Counter())
        for e in fg.edges:
            c["edges"] += 1
            if e.kind is EdgeKind.IMPORT:
                continue
            r = graph.resolver.resolve(e)
            c["resolved" if r.resolved else "candidates" if r.candidates else "external"] += 1
    out: dict[str, dict[str, float]] = {}
    for lang, c in sorted(counts.items()):
        refs = c["resolved"] + c["candidates"] + c["external"]
        if not c["edges"]:
            continue
        out[lang] = {
            "edges": c["edges"],
            "resolved": round(c["resolved"] / max(refs, 1), 3),
            "unresolved (candidates)": round(c["candidates"] / max(refs, 1), 3),
            "unresolved (no candidate)": round(c["external"] / max(refs, 1), 3),
        }
    return out


def latency(root: Path, samples: int = 200) -> dict[str, float]:
    settings = load_settings(root)
    store = open_store(root, settings)
    graph = Graph(store)
    t = time.perf_counter()
    graph.refresh()
    load = time.perf_counter() - t
    rng = random.Random(1)
    syms = [s for fg in graph.snapshot.files.values() for s in fg.symbols]
    funcs = rng.sample([s for s in syms if s.kind in CALLABLE_KINDS], samples)
    types = rng.sample([s for s in syms if s.kind in TYPE_KINDS], samples)

    def p50(fn, items) -> float:  # type: ignore[no-untyped-def]
        times = []
        for x in items:
            t = time.perf_counter()
            fn(x)
            times.append((time.perf_counter() - t) * 1000)
        return round(statistics.median(times), 2)

    words = ["decode", "encoder", "socket timeout", "parse header", "thread pool", "json", "mime", "cookie"]
    return {
        "graph load (s)": round(load, 2),
        "callers p50 cold (ms)": p50(lambda s: callers(graph, s), funcs),
        "callers p50 warm (ms)": p50(lambda s: callers(graph, s), funcs),
        "implementations p50 (ms)": p50(lambda s: implementations(graph, s), types),
        "multi-hop depth 2 p50 (ms)": p50(
            lambda q: search(store, SearchRequest(q, mode="bm25", hops=2), settings, root=root, graph=graph),
            words * 3,
        ),
        "bm25 without hops p50 (ms)": p50(
            lambda q: search(store, SearchRequest(q, mode="bm25"), settings, root=root, graph=graph),
            words * 3,
        ),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--packages", nargs="+", default=["json", "email"])
    ap.add_argument("--n", type=int, default=50)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--stats", type=Path, help="an indexed workspace: edge statistics per language")
    ap.add_argument("--latency", type=Path, help="an indexed workspace: graph query latency")
    ap.add_argument("-v", "--verbose", action="store_true", help="list every disagreement")
    args = ap.parse_args(argv)
    if args.stats:
        for lang, row in edge_stats(Graph(open_store(args.stats, load_settings(args.stats)))).items():
            print(lang, row)
        return 0
    if args.latency:
        for k, v in latency(args.latency).items():
            print(f"{k:<32} {v}")
        return 0
    result = accuracy(args.packages, args.n, args.seed, args.verbose)
    for k, v in result.items():
        print(f"{k:<32} {v}")
    ok = result["precision"] >= 0.95
    print("precision target ≥ 0.95:", "PASS" if ok else "MISS")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
