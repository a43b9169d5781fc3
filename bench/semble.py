"""The semble benchmark protocol on codesift: NDCG@10 per mode, category and language.

    python -m bench.semble --build [--repos click,httpx] [--no-vectors]   # indexes, once
    python -m bench.semble [--repos click,httpx] [--modes hybrid,bm25] [--json out.json]

Reads the data folder (``--data``, $CODESIFT_BENCH_DATA, /work/benchdata) filled by
``python -m bench.fetchdata semble``; indexes live in DATA/indexes/<repo> and are
reused, so a run that changes only query-time ranking re-embeds nothing (the
queries alone are embedded). Another checkout's engine is measured by running this
module with that checkout's interpreter from this folder:

    /work/main/.venv/bin/python -m bench.semble --data /work/benchdata

Modes: hybrid, bm25, vector (codesift search, limit 10, the engine's defaults plus
any ``--set section.key=value``); filebm25 (plain BM25 over whole files, the files
codesift indexed); rg (semble's own ripgrep baseline, run exactly as semble does:
its per-repository figures are published, so it checks that the checkouts,
annotations and metric here reproduce semble's numbers).

Only the allowed repositories (bench/benchdata.py) are ever run.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shutil
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from codesift.indexer.embed import Embedder, make_embedder
from codesift.indexer.search.hybrid import search
from codesift.indexer.search.results import SearchMode, SearchRequest
from codesift.indexer.settings import Settings
from codesift.indexer.store import Store
from codesift.indexer.sync import open_store

from .benchdata import SEMBLE_ALLOWED, HeldOutError, check_allowed, data_dir
from .report import Table, percentiles
from .semble_data import (
    ALL_MODES,
    CODESIFT_MODES,
    PUBLISHED,
    TOP_K,
    Bench,
    build,
    index_state,
    open_bench,
    parse_overrides,
    repo_settings,
    write_status,
)
from .semble_protocol import (
    CATEGORIES,
    Location,
    RepoSpec,
    Task,
    file_rank,
    load_tasks,
    mean,
    ndcg_at_k,
    task_ranks,
)

# ----- evaluating ---------------------------------------------------------------------------


@dataclass
class RepoRun:
    repo: str
    language: str
    queries: int
    ndcg10: dict[str, float] = field(default_factory=dict)  # mode → mean over the repo's queries
    by_category: dict[str, dict[str, float]] = field(default_factory=dict)  # mode → category → mean
    p50_ms: dict[str, float] = field(default_factory=dict)
    per_query: list[QueryRow] = field(default_factory=list)


@dataclass
class QueryRow:
    """One query's outcome under every mode: what the lead diffs run against run."""

    query: str
    category: str
    targets: list[str]
    ndcg10: dict[str, float] = field(default_factory=dict)
    ranks: dict[str, list[int]] = field(default_factory=dict)
    top: dict[str, list[str]] = field(default_factory=dict)


def _rg_files(root: Path, spec: RepoSpec, query: str) -> list[str]:
    """semble's ripgrep baseline (benchmarks/baselines/ripgrep.py), paths as its checkout had them."""
    rg = shutil.which("rg")
    try:
        from codesift.indexer.search.grep import find_rg

        rg = find_rg()
    except Exception:
        pass
    if rg is None:
        return []
    cmd = [rg, "--count", "--no-heading", "--ignore-case", "--hidden", "--glob", "!.git", "--fixed-strings"]
    try:
        proc = subprocess.run([*cmd, "--", query, "."], cwd=root, capture_output=True, text=True, timeout=30)
    except subprocess.TimeoutExpired:
        return []
    if proc.returncode not in (0, 1):
        return []
    prefix = f"/semble-bench/{spec.name}/" + (f"{spec.benchmark_root}/" if spec.benchmark_root else "")
    entries: list[tuple[str, int]] = []
    for line in proc.stdout.splitlines():
        *parts, count = line.strip().split(":")
        try:
            n = int(count)
        except ValueError:
            continue
        path = ":".join(parts)
        entries.append((prefix + path.removeprefix("./"), n))
    entries.sort(key=lambda e: -e[1])
    return [p for p, _ in entries[:TOP_K]]


def _file_docs(store: Store | None, root: Path) -> dict[str, str]:
    """The text of every file codesift indexed (the chunks table's paths), read from disk."""
    assert store is not None
    tbl = store.table("chunks")
    paths = sorted(set(tbl.search().select(["path"]).limit(None).to_arrow().column("path").to_pylist()))
    docs: dict[str, str] = {}
    for p in paths:
        try:
            docs[p] = (root / p).read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
    return docs


def evaluate_repo(
    bench: Bench,
    spec: RepoSpec,
    tasks: Sequence[Task],
    modes: Sequence[str],
    embedder: Embedder | None,
    overrides: dict[str, dict[str, object]],
) -> RepoRun:
    """Every task of one repository under every mode."""
    from .filebm25 import FileBM25

    run = RepoRun(spec.name, spec.language, len(tasks))
    root = bench.root(spec.name)
    settings = repo_settings(bench, spec.name, overrides)
    store = None
    if any(m in CODESIFT_MODES or m == "filebm25" for m in modes):
        store = open_store(root, settings)
    file_index = FileBM25(_file_docs(store, root)) if "filebm25" in modes else None
    per_query = [QueryRow(t.query, t.category, [tt.path for tt in t.all_relevant]) for t in tasks]
    for mode in modes:
        times: list[float] = []
        scores: list[float] = []
        for task, row in zip(tasks, per_query, strict=True):
            t0 = time.perf_counter()
            if mode in CODESIFT_MODES:
                smode: SearchMode = "hybrid" if mode == "hybrid" else "bm25" if mode == "bm25" else "vector"
                locs = _codesift_locations(store, root, settings, embedder, task.query, smode)
                times.append((time.perf_counter() - t0) * 1000)
                ranks = task_ranks(task, locs)
                top = [f"{x.path}:{x.start_line}-{x.end_line}" for x in locs]
            else:
                if mode == "filebm25":
                    assert file_index is not None
                    files = file_index.rank(task.query, TOP_K)
                else:
                    files = _rg_files(root, spec, task.query)
                times.append((time.perf_counter() - t0) * 1000)
                ranks = [r for t in task.all_relevant if (r := file_rank(files, t.path)) is not None]
                top = files
            score = ndcg_at_k(ranks, len(task.all_relevant), TOP_K)
            scores.append(score)
            row.ndcg10[mode] = round(score, 4)
            row.ranks[mode] = ranks
            row.top[mode] = top
        run.ndcg10[mode] = mean(scores)
        by_cat: dict[str, list[float]] = defaultdict(list)
        for task, s in zip(tasks, scores, strict=True):
            by_cat[task.category or "unknown"].append(s)
        run.by_category[mode] = {c: mean(v) for c, v in sorted(by_cat.items())}
        run.p50_ms[mode] = percentiles(times)[0]
    run.per_query = per_query
    return run


def _codesift_locations(
    store: Store | None,
    root: Path,
    settings: Settings,
    embedder: Embedder | None,
    query: str,
    mode: SearchMode,
) -> list[Location]:
    assert store is not None
    res = search(
        store,
        SearchRequest(query, mode=mode, limit=TOP_K),
        settings,
        root=root,
        embedder=embedder,
    )
    return [Location(h.chunk.path, h.chunk.start_line, h.chunk.end_line) for h in res.hits[:TOP_K]]


def published(bench: Bench, repos: Sequence[str]) -> dict[str, dict[str, tuple[float, dict[str, float]]]]:
    """label → repo → (NDCG@10, by category) from semble's published results, for ``repos``."""
    out: dict[str, dict[str, tuple[float, dict[str, float]]]] = {}
    for label, (fname, mode) in PUBLISHED.items():
        path = bench.data / "semble" / "results" / fname
        if not path.is_file():
            continue
        rows = json.loads(path.read_text(encoding="utf-8")).get("repos", [])
        got: dict[str, tuple[float, dict[str, float]]] = {}
        for r in rows:
            if r.get("repo") in repos and (mode is None or r.get("mode") == mode):
                got[r["repo"]] = (float(r["ndcg10"]), dict(r.get("by_category", {})))
        out[label] = got
    return out


# ----- aggregating and printing --------------------------------------------------------------


def aggregate(runs: Sequence[RepoRun], columns: Sequence[str]) -> dict[str, dict[str, float]]:
    """row ("overall", a category, "lang:<language>") → column → mean over repositories (semble's way)."""
    table: dict[str, dict[str, float]] = defaultdict(dict)
    for col in columns:
        have = [r for r in runs if col in r.ndcg10]
        if not have:
            continue
        table["overall"][col] = mean([r.ndcg10[col] for r in have])
        for cat in CATEGORIES:
            vals = [r.by_category[col][cat] for r in have if cat in r.by_category.get(col, {})]
            if vals:
                table[cat][col] = mean(vals)
        for lang in sorted({r.language for r in have}):
            table[f"lang:{lang}"][col] = mean([r.ndcg10[col] for r in have if r.language == lang])
    return dict(table)


def with_published(
    runs: Sequence[RepoRun], pub: dict[str, dict[str, tuple[float, dict[str, float]]]]
) -> None:
    """Add semble's published figures to each run as extra columns (repos it published)."""
    for r in runs:
        for label, rows in pub.items():
            if r.repo in rows:
                nd, cats = rows[r.repo]
                r.ndcg10[label] = nd
                r.by_category[label] = cats


def print_matrix(agg: dict[str, dict[str, float]], columns: Sequence[str], counts: dict[str, int]) -> None:
    cols = [c for c in columns if any(c in v for v in agg.values())]
    print(f"\n{'NDCG@10 (mean over repos)':<28}" + "".join(f"{c:>15}" for c in cols))
    order = ["overall", *CATEGORIES, *sorted(k for k in agg if k.startswith("lang:"))]
    for row in order:
        if row not in agg:
            continue
        label = f"{row.removeprefix('lang:')} ({counts.get(row, 0)})" if row.startswith("lang:") else row
        cells = "".join(f"{agg[row][c]:>15.3f}" if c in agg[row] else f"{'—':>15}" for c in cols)
        print(f"{label:<28}{cells}")
    print()


def targets(table: Table, agg: dict[str, dict[str, float]]) -> None:
    """The issue's targets, PASS / MISS."""
    tier = "semble"
    ov = agg.get("overall", {})
    if "hybrid" in ov:
        table.add(tier, "hybrid NDCG@10 overall", ov["hybrid"], "", "≥ 0.88", ov["hybrid"] >= 0.88)
        if "semble" in ov:
            table.add(
                tier,
                "hybrid − semble published (same repos)",
                ov["hybrid"] - ov["semble"],
                "",
                f"> 0 ({ov['semble']:.3f})",
                ov["hybrid"] > ov["semble"],
            )
        sym = agg.get("symbol", {}).get("hybrid")
        if sym is not None:
            table.add(tier, "hybrid NDCG@10 symbol queries", sym, "", "≥ 0.97", sym >= 0.97)
        for cat in ("architecture", "semantic"):
            if "hybrid" in agg.get(cat, {}):
                table.add(tier, f"hybrid NDCG@10 {cat} queries", agg[cat]["hybrid"])
        for row, vals in sorted(agg.items()):
            if row.startswith("lang:") and "hybrid" in vals and "filebm25" in vals:
                lang = row.removeprefix("lang:")
                table.add(
                    tier,
                    f"hybrid {lang} vs whole-file BM25",
                    vals["hybrid"],
                    "",
                    f"≥ {vals['filebm25']:.3f}",
                    vals["hybrid"] >= vals["filebm25"],
                )
    for mode in ("bm25", "vector", "filebm25"):
        if mode in ov:
            table.add(tier, f"{mode} NDCG@10 overall", ov[mode])
    if "rg" in ov and "rg-published" in ov:
        table.add(
            tier,
            "protocol check: rg here − rg published (same repos)",
            ov["rg"] - ov["rg-published"],
            "",
            "|Δ| < 0.01",
            abs(ov["rg"] - ov["rg-published"]) < 0.01,
        )


def compare_with_baseline(bench: Bench, runs: Sequence[RepoRun]) -> None:
    """Each mode against DATA/results/semble-baseline.json on the same repositories: the change
    overall and how many queries rose or fell (by more than 0.01)."""
    path = bench.data / "results" / "semble-baseline.json"
    if not path.is_file() or not runs:
        return
    base = {r["repo"]: r for r in json.loads(path.read_text(encoding="utf-8")).get("by_repo", [])}
    for mode in CODESIFT_MODES:
        now: list[float] = []
        then: list[float] = []
        up = down = 0
        for r in runs:
            b = base.get(r.repo)
            if b is None or mode not in r.ndcg10 or mode not in b["ndcg10"]:
                continue
            now.append(r.ndcg10[mode])
            then.append(b["ndcg10"][mode])
            old = {q["query"]: q["ndcg10"].get(mode, 0.0) for q in b.get("per_query", [])}
            for q in r.per_query:
                delta = q.ndcg10.get(mode, 0.0) - old.get(q.query, 0.0)
                up += delta > 0.01
                down += delta < -0.01
        if now:
            a, b = mean(now), mean(then)
            print(f"vs baseline {mode:<7} {a:.3f} (was {b:.3f}, {a - b:+.3f}) on {len(now)} repos; ", end="")
            print(f"queries up {up}, down {down}")


def run(
    bench: Bench,
    names: Sequence[str],
    modes: Sequence[str],
    overrides: dict[str, dict[str, object]],
    table: Table,
    verbose: bool = False,
) -> dict[str, object]:
    """Evaluate; print per-repository lines, the matrix and the targets; return the JSON."""
    started = time.perf_counter()
    tasks = load_tasks(bench.data / "semble" / "annotations", {n: bench.specs[n] for n in names})
    by_repo: dict[str, list[Task]] = defaultdict(list)
    for t in tasks:
        by_repo[t.repo].append(t)
    embedder = None
    if any(m in ("hybrid", "vector") for m in modes):
        first = repo_settings(bench, names[0], overrides)
        embedder = make_embedder(first.embed)
    pub = published(bench, names)
    runs: list[RepoRun] = []
    missing: list[str] = []
    head = "".join(f"{m:>10}" for m in modes)
    print(f"{'repo':<20}{'language':<12}{'q':>4}{head}{'semble':>10}")
    sizes: dict[str, str] = {}  # repo → "files/chunks" of the index read: a rebuilt index shows here
    for name in names:
        if any(m in CODESIFT_MODES or m == "filebm25" for m in modes):
            state, files, chunks, _ = index_state(bench, name)
            sizes[name] = f"{files}/{chunks}"
            if state != "ready" and not (
                state.startswith("vectors") and "vector" not in modes and "hybrid" not in modes
            ):
                missing.append(f"{name} ({state})")
                continue
        r = evaluate_repo(bench, bench.specs[name], by_repo[name], modes, embedder, overrides)
        runs.append(r)
        semble_pub = pub.get("semble", {}).get(name, (float("nan"), {}))[0]
        cells = "".join(f"{r.ndcg10[m]:>10.3f}" for m in modes)
        print(f"{name:<20}{r.language:<12}{r.queries:>4}{cells}{semble_pub:>10.3f}", flush=True)
        if verbose:
            for q in r.per_query:
                print(f"    {json.dumps(q.ndcg10)} [{q.category}] {q.query}")
    if missing:
        print(f"not evaluated (index not ready: python -m bench.semble --build): {', '.join(missing)}")
    with_published(runs, pub)
    columns = [*modes, *pub]
    agg = aggregate(runs, columns)
    counts = {
        f"lang:{lang}": sum(1 for r in runs if r.language == lang) for lang in {r.language for r in runs}
    }
    print_matrix(agg, columns, counts)
    compare_with_baseline(bench, runs)
    targets(table, agg)
    seconds = time.perf_counter() - started
    print(f"{len(runs)} repositories, {sum(r.queries for r in runs)} queries, {seconds:.0f} s")
    return {
        "when": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "engine": _engine_origin(),
        "indexes": str(bench.index_dir("-").parent),
        "modes": list(modes),
        "overrides": overrides,
        "seconds": round(seconds, 1),
        "repos": [r.repo for r in runs],
        "not_evaluated": missing,
        "skipped": bench.skipped,
        "summary": {row: {c: round(v, 4) for c, v in vals.items()} for row, vals in agg.items()},
        "by_repo": [
            {
                "repo": r.repo,
                "language": r.language,
                "queries": r.queries,
                "index_files_chunks": sizes.get(r.repo, ""),
                "ndcg10": {m: round(v, 4) for m, v in r.ndcg10.items()},
                "by_category": r.by_category,
                "p50_ms": {m: round(v, 2) for m, v in r.p50_ms.items()},
                "per_query": [asdict(q) for q in r.per_query],
            }
            for r in runs
        ],
    }


def _engine_origin() -> str:
    try:
        import codesift.indexer as ix

        return str(Path(ix.__file__).resolve().parent)
    except Exception:
        return "?"


# ----- command line ---------------------------------------------------------------------------


def select(bench: Bench, repos: str | None) -> list[str]:
    if not repos:
        return list(bench.specs)
    names = check_allowed([r.strip() for r in repos.split(",") if r.strip()], SEMBLE_ALLOWED, "semble")
    absent = [n for n in names if n not in bench.specs]
    if absent:
        why = [f"{n} ({bench.skipped.get(n, '?')})" for n in absent]
        raise SystemExit(f"not in the data folder: {', '.join(why)}")
    return names


def add_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--data", type=Path, help="data folder (default $CODESIFT_BENCH_DATA or /work/benchdata)"
    )
    parser.add_argument("--repos", help="comma-separated allowed repositories (default: every exported one)")
    parser.add_argument(
        "--modes", default=",".join(ALL_MODES), help=f"comma-separated of {', '.join(ALL_MODES)}"
    )
    parser.add_argument(
        "--set", action="append", default=[], metavar="SECTION.KEY=VALUE", help="engine setting"
    )
    parser.add_argument("--json", type=Path, help="also write every figure and per-query result here")
    parser.add_argument("--verbose", action="store_true", help="print each query's NDCG@10 per mode")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.semble",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_args(parser)
    parser.add_argument(
        "--build", action="store_true", help="build / bring up to date the indexes, then stop"
    )
    parser.add_argument("--no-vectors", action="store_true", help="with --build: text phase only")
    parser.add_argument("--status", action="store_true", help="rewrite DATA/STATUS.md and stop")
    parser.add_argument(
        "--indexes",
        type=Path,
        help="index folder (default DATA/indexes): an engine that changes what is indexed builds its own"
        " set here with --build instead of rewriting the shared one",
    )
    parser.add_argument(
        "--baseline", action="store_true", help="a full run saved as DATA/results/semble-baseline.json"
    )
    args = parser.parse_args(argv)
    data = data_dir(args.data)
    os.environ.setdefault("XDG_CACHE_HOME", str(data / "cache"))
    try:  # the allow-list first: a held-out name is refused before any data is read
        if args.repos:
            check_allowed([r.strip() for r in args.repos.split(",") if r.strip()], SEMBLE_ALLOWED, "semble")
        bench = open_bench(data, args.indexes)
        names = select(bench, args.repos)
    except HeldOutError as exc:
        raise SystemExit(str(exc)) from exc
    overrides = parse_overrides(args.set)
    if args.status:
        write_status(bench)
        return 0
    if args.build:
        build(bench, names, not args.no_vectors, overrides)
        return 0
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    bad = [m for m in modes if m not in ALL_MODES]
    if bad:
        raise SystemExit(f"unknown mode(s) {', '.join(bad)}: choose from {', '.join(ALL_MODES)}")
    table = Table()
    out = run(bench, names, modes, overrides, table, args.verbose)
    if args.json:
        args.json.write_text(json.dumps(out, indent=1, ensure_ascii=False), encoding="utf-8")
        print(f"wrote {args.json}")
    # A full run is what STATUS.md reports: as the latest, or (--baseline) as the baseline.
    # A private index set (--indexes) never stands for the shared figures.
    shared = args.indexes is None
    if args.baseline or (shared and not args.repos and not args.set and set(modes) >= set(CODESIFT_MODES)):
        name = "semble-baseline.json" if args.baseline else "semble-latest.json"
        (data / "results").mkdir(parents=True, exist_ok=True)
        (data / "results" / name).write_text(json.dumps(out, indent=1), encoding="utf-8")
        write_status(bench)
    return 0


if __name__ == "__main__":
    sys.exit(main())
