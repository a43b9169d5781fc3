"""The two-tier index (issue 17): with the default settings (MiniLM, ``embed.fast_tier``
on), how soon after ``codesift index`` starts a search is answered by meaning, and how
soon MiniLM takes over.

``codesift index`` runs in a child process on a fresh copy; this process searches the
index as a reader (a new ``Store`` per look, as a CLI search or the language server
opening it) every ``POLL_S`` and notes the first search whose vector source read the
static model, and the first that read MiniLM. The searches cost CPU beside the child
(one vector-mode search every half second): the figures are upper bounds.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from codesift.indexer.embed import Embedder, fast_tier_embedder, make_embedder
from codesift.indexer.errors import CodesiftError
from codesift.indexer.locate import index_exists_at
from codesift.indexer.search.hybrid import search
from codesift.indexer.search.results import SearchRequest
from codesift.indexer.settings import Settings, load_settings
from codesift.indexer.store import Store, index_uri_for

from . import corpora, probes
from .report import Table

POLL_S = 0.5
QUERY = "parse the command line options and report a usage error"


@dataclass(frozen=True, slots=True)
class TwoTierRun:
    first_static_s: float | None  # the first search answered by the static tier
    first_minilm_s: float | None  # the first answered by MiniLM (every chunk embedded)
    exit_s: float  # `codesift index` finished (vectors done, index optimised)
    peak_rss_mib: float
    chunks: int
    load: str  # /proc/loadavg at the start and the end
    phases: dict[str, float]  # the engine's seconds per phase (parse: text + static vectors)


def _loadavg() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def _look(root: Path, settings: Settings, embedder: Embedder) -> str:
    """The model whose vectors a vector search read now ("" before the index answers)."""
    uri = index_uri_for(root, settings)
    if not index_exists_at(uri):
        return ""
    try:
        store = Store(uri)
        if store.read_meta() is None:
            return ""
        result = search(store, SearchRequest(QUERY, mode="vector"), settings, root=root, embedder=embedder)
    except (CodesiftError, OSError, RuntimeError, ValueError):
        return ""  # a table being created or dropped: look again
    return result.report.vector_model if result.hits else ""


def time_to_answers(root: Path) -> TwoTierRun:
    """Run ``codesift index`` on ``root`` in a child and watch a reader's searches."""
    settings = load_settings(root)
    embedder = make_embedder(settings.embed)
    embedder.embed_query("load the model outside the timing")
    fast = fast_tier_embedder(settings.embed, embedder.model_id)
    if fast is not None:
        fast.embed_query("load the table outside the timing")
    with tempfile.NamedTemporaryFile(prefix="codesift-peak-", delete=False) as f:
        peak_file = Path(f.name)
    load = _loadavg()
    cmd = [sys.executable, "-c", probes._CHILD, str(peak_file), "index", str(root), "--json"]
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    first: dict[str, float] = {}
    try:
        while proc.poll() is None:
            model = _look(root, settings, embedder)
            if model and model not in first:
                first[model] = time.perf_counter() - started
                print(f"two-tier: first answer by {model} at {first[model]:.1f} s", flush=True)
            time.sleep(POLL_S)
        exit_s = time.perf_counter() - started
        out, _ = proc.communicate()
        if proc.returncode != 0:
            raise RuntimeError(f"codesift index {root} exited {proc.returncode}")
        model = _look(root, settings, embedder)
        if model and model not in first:
            first[model] = time.perf_counter() - started
        peak_kib = int(peak_file.read_text() or 0)
    finally:
        if proc.poll() is None:
            proc.kill()
        peak_file.unlink(missing_ok=True)
    report = json.loads(out.decode("utf-8"))
    return TwoTierRun(
        first_static_s=first.get(fast.model_id) if fast is not None else None,
        first_minilm_s=first.get(embedder.model_id),
        exit_s=exit_s,
        peak_rss_mib=peak_kib / 1024,
        chunks=int(report.get("chunks_written", 0)),
        phases={str(k): float(v) for k, v in dict(report.get("phase_seconds", {})).items()},
        load=f"{load} → {_loadavg()}",
    )


def _row(table: Table, what: str, run: TwoTierRun) -> None:
    phases = ", ".join(f"{k} {v:.1f}s" for k, v in run.phases.items())
    print(f"two-tier {what}: {run.chunks} chunks; load {run.load}; engine phases {phases}")
    if run.first_static_s is not None:
        table.add("twotier", f"{what}: `codesift index` to the first static answer", run.first_static_s, "s")
    else:
        table.add("twotier", f"{what}: no search was answered by the static tier", 0, "", ok=False)
    if run.first_minilm_s is not None:
        table.add("twotier", f"{what}: `codesift index` to the first MiniLM answer", run.first_minilm_s, "s")
    table.add("twotier", f"{what}: `codesift index` to exit (vectors done)", run.exit_s, "s")
    table.add("twotier", f"{what}: peak RSS while indexing", run.peak_rss_mib, "MiB")


def two_tier(table: Table, work: Path, data: Path, *, stdlib: bool = True) -> None:
    """click and the standard library, indexed with the default settings, watched by a reader."""
    click = data / "repos" / "click"
    if click.is_dir():
        root = work / "twotier-click"
        shutil.rmtree(root, ignore_errors=True)
        shutil.copytree(click, root, ignore=shutil.ignore_patterns(".codesift", ".git"), symlinks=True)
        _row(table, "click", time_to_answers(root))
    else:
        print(f"two-tier: {click} is missing (python -m bench.fetchdata semble); click skipped")
    if stdlib:
        root = work / "twotier-stdlib"
        shutil.rmtree(root, ignore_errors=True)
        _row(table, "stdlib", time_to_answers(corpora.copy_stdlib(root)))
