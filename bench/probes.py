"""Measurements shared by the tiers: index runs in a child process (so its peak RSS is
its own), query latency per mode, and "a saved file is searchable in every mode"."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from codesift.indexer.embed import Embedder
from codesift.indexer.freshen import reindex_paths
from codesift.indexer.graph import Graph
from codesift.indexer.search.hybrid import search
from codesift.indexer.search.results import SearchMode, SearchRequest
from codesift.indexer.search.symbols import SymbolIndex, find_symbols
from codesift.indexer.settings import Settings
from codesift.indexer.store import Store


@dataclass(frozen=True, slots=True)
class ChildRun:
    """One ``codesift index`` in a child process."""

    seconds: float
    peak_rss_mib: float
    report: dict[str, object]


# The child runs the CLI in-process and writes its own VmHWM (the peak RSS of its
# address space since exec) at exit. wait4's ru_maxrss would not do: it carries the
# RSS of the forked bench process over the exec (2.2 GiB reported for a 0.4 GiB run).
_CHILD = (
    "import atexit, sys\n"
    "def _peak(out=sys.argv.pop(1)):\n"
    "    with open('/proc/self/status') as f:\n"
    "        kb = next(line.split()[1] for line in f if line.startswith('VmHWM:'))\n"
    "    with open(out, 'w') as f:\n"
    "        f.write(kb)\n"
    "atexit.register(_peak)\n"
    "from codesift.server.cli import main\n"
    "main()\n"
)


def index_in_child(root: Path, *flags: str) -> ChildRun:
    """``codesift index ROOT --json FLAGS`` in a child; its wall time, peak RSS and JSON
    report. The peak is the child's own, or — when it parses in worker processes — the
    most its process tree held at once (sampled every 0.25 s), whichever is larger."""
    with tempfile.NamedTemporaryFile(prefix="codesift-peak-", delete=False) as f:
        peak_file = Path(f.name)
    cmd = [sys.executable, "-c", _CHILD, str(peak_file), "index", str(root), "--json", *flags]
    t = time.perf_counter()
    try:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        tree_peak = [0.0]
        sampler = threading.Thread(target=_sample_tree, args=(proc, tree_peak), daemon=True)
        sampler.start()
        out, _ = proc.communicate()
        seconds = time.perf_counter() - t
        sampler.join()
        if proc.returncode != 0:
            raise RuntimeError(f"codesift index {root} {' '.join(flags)} exited {proc.returncode}")
        peak_kib = int(peak_file.read_text() or 0)
    finally:
        peak_file.unlink(missing_ok=True)
    report = json.loads(out.decode("utf-8"))
    return ChildRun(seconds, max(peak_kib / 1024, tree_peak[0]), report if isinstance(report, dict) else {})


def _sample_tree(proc: subprocess.Popen[bytes], peak: list[float]) -> None:
    """The largest RSS sum (MiB) of ``proc`` and its descendants while it runs."""
    while proc.poll() is None:
        peak[0] = max(peak[0], sum(_rss_kib(pid) for pid in _tree(proc.pid)) / 1024)
        time.sleep(0.25)


def _tree(pid: int) -> list[int]:
    found, todo = [], [pid]
    while todo:
        p = todo.pop()
        found.append(p)
        for task in Path(f"/proc/{p}/task").glob("*/children"):
            try:
                todo.extend(int(c) for c in task.read_text().split())
            except OSError:
                continue
    return found


def _rss_kib(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def mode_latency(
    store: Store,
    settings: Settings,
    root: Path,
    embedder: Embedder | None,
    mode: SearchMode,
    queries: Sequence[str],
    hops: int = 0,
    graph: Graph | None = None,
) -> list[float]:
    """Milliseconds of each query in one mode, one after another (one warm-up first).
    Multi-hop gets one long-lived ``graph``, as the language server keeps one."""
    if hops and graph is None:
        graph = Graph(store)
    run = {"settings": settings, "root": root, "embedder": embedder, "graph": graph}
    if queries:
        search(store, SearchRequest(queries[0], mode=mode, hops=hops), **run)  # type: ignore[arg-type]
    out = []
    for q in queries:
        t = time.perf_counter()
        search(store, SearchRequest(q, mode=mode, hops=hops), **run)  # type: ignore[arg-type]
        out.append((time.perf_counter() - t) * 1000)
    return out


@dataclass(frozen=True, slots=True)
class ModeProfile:
    """One mode's queries timed: wall and CPU milliseconds of each search, and each of
    its steps' milliseconds as the search's report times them (``bm25``, ``semantic``,
    ``grep`` — hybrid's exact source —, ``rank``, ``total``)."""

    wall: list[float]
    cpu: list[float]  # the process's CPU (every thread: LanceDB's own too)
    steps: dict[str, list[float]]


def mode_profile(
    store: Store,
    settings: Settings,
    root: Path,
    embedder: Embedder | None,
    mode: SearchMode,
    queries: Sequence[str],
) -> ModeProfile:
    """``mode_latency`` with the CPU each search took and its steps' times: where a
    search's milliseconds go (one warm-up first)."""
    run = {"settings": settings, "root": root, "embedder": embedder}
    if queries:
        search(store, SearchRequest(queries[0], mode=mode), **run)  # type: ignore[arg-type]
    wall: list[float] = []
    cpu: list[float] = []
    steps: dict[str, list[float]] = {}
    for q in queries:
        t, c = time.perf_counter(), time.process_time()
        result = search(store, SearchRequest(q, mode=mode), **run)  # type: ignore[arg-type]
        cpu.append((time.process_time() - c) * 1000)
        wall.append((time.perf_counter() - t) * 1000)
        for step, ms in result.report.millis.items():
            steps.setdefault(step, []).append(float(ms))
    return ModeProfile(wall, cpu, steps)


def symbol_latency(store: Store, names: Sequence[str]) -> list[float]:
    """Milliseconds of each workspace-symbol lookup (the name table loaded first)."""
    idx = SymbolIndex(store)
    if names:
        find_symbols(store, names[0], index=idx)
    out = []
    for n in names:
        t = time.perf_counter()
        find_symbols(store, n, index=idx)
        out.append((time.perf_counter() - t) * 1000)
    return out


def save_to_searchable(
    store: Store, settings: Settings, root: Path, embedder: Embedder, target: str, rounds: int
) -> list[float]:
    """Milliseconds from writing a new function into ``target`` until grep, BM25, vector
    search and workspace symbols all find it (re-index of that one file, vectors included)."""
    path = root / target
    original = path.read_text(encoding="utf-8")
    idx = SymbolIndex(store)
    idx.tables()  # the server keeps its symbol table loaded between saves
    for mode in ("grep", "bm25", "vector"):  # and its model and indices, from the first search on
        search(store, SearchRequest("warm up", mode=mode, limit=5), settings, root=root, embedder=embedder)
    out = []
    try:
        for i in range(rounds):
            name = f"zebra_marker_{i}_quokka"
            body = (
                f'\n\ndef {name}(payload):\n    """Quokka zebra marker number {i}."""\n    return payload\n'
            )
            t = time.perf_counter()
            path.write_text(original + body, encoding="utf-8")
            reindex_paths(root, settings, [target], embedder=embedder)
            found = {
                mode: any(
                    name in h.chunk.text
                    for h in search(
                        store, SearchRequest(q, mode=mode, limit=5), settings, root=root, embedder=embedder
                    ).hits
                )
                for mode, q in (("grep", name), ("bm25", name), ("vector", f"quokka zebra marker {i}"))
            }
            found["symbols"] = any(h.symbol.name == name for h in find_symbols(store, name, index=idx))
            out.append((time.perf_counter() - t) * 1000)
            missing = [m for m, ok in found.items() if not ok]
            if missing:
                raise RuntimeError(f"saved function not found by {missing}")
    finally:
        path.write_text(original, encoding="utf-8")
        reindex_paths(root, settings, [target], embedder=embedder)
    return out
