"""The semble tier's data folder: which allowed repositories it holds, their indexes
(built once, reused by every run) and DATA/STATUS.md, which tells what is ready."""

from __future__ import annotations

import datetime as dt
import json
import time
import tomllib
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from codesift.indexer.settings import Settings, load_settings

from .benchdata import SEMBLE_ALLOWED, fill_hint
from .semble_protocol import CATEGORIES, RepoSpec, load_repo_specs

CODESIFT_MODES = ("hybrid", "bm25", "vector")
ALL_MODES = (*CODESIFT_MODES, "filebm25", "rg")
TOP_K = 10
# semble's published figures (bench.fetchdata copies them): label → (file, mode or None).
PUBLISHED: dict[str, tuple[str, str | None]] = {
    "semble": ("semble-hybrid-0332378809c5.json", None),
    "semble-bm25raw": ("semble-ablations-1ea77add4c1b.json", "bm25"),
    "CRE-hybrid": ("coderankembed-0332378809c5.json", "hybrid"),
    "rg-published": ("ripgrep-fixed-strings-0332378809c5.json", None),
}


# ----- the data folder ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Bench:
    data: Path
    specs: dict[str, RepoSpec]  # allowed and exported
    skipped: dict[str, str]  # allowed, not exported: why
    indexes: Path | None = None  # where the indexes live (default DATA/indexes)

    def root(self, name: str) -> Path:
        return self.data / "repos" / name

    def index_dir(self, name: str) -> Path:
        return (self.indexes or self.data / "indexes") / name


def open_bench(data: Path, indexes: Path | None = None) -> Bench:
    """The allowed repositories of the data folder; SystemExit saying how to fill it when empty."""
    repos_json = data / "semble" / "repos.json"
    if not repos_json.is_file():
        raise SystemExit(fill_hint(data, "semble/repos.json"))
    all_specs = load_repo_specs(repos_json)
    reasons: dict[str, str] = {}
    skipped_txt = data / "repos" / "SKIPPED.txt"
    if skipped_txt.is_file():
        for line in skipped_txt.read_text(encoding="utf-8").splitlines():
            name, _, why = line.partition(": ")
            reasons[name] = why
    specs: dict[str, RepoSpec] = {}
    skipped: dict[str, str] = {}
    for name in SEMBLE_ALLOWED:
        spec = all_specs.get(name)
        marker = data / "repos" / f"{name}.rev"
        if spec is None:
            skipped[name] = "not in repos.json"
        elif marker.is_file() and marker.read_text().strip() == spec.revision:
            specs[name] = spec
        else:
            skipped[name] = reasons.get(name, "not exported (python -m bench.fetchdata semble)")
    if not specs:
        raise SystemExit(fill_hint(data, "every repository"))
    return Bench(data, specs, skipped, indexes)


def parse_overrides(items: Sequence[str]) -> dict[str, dict[str, object]]:
    """``section.key=value`` (value in TOML, else a string) → load_settings overrides."""
    out: dict[str, dict[str, object]] = defaultdict(dict)
    for item in items:
        key, _, raw = item.partition("=")
        section, _, name = key.partition(".")
        if not name:
            raise SystemExit(f"--set {item}: expected section.key=value")
        try:
            value: object = tomllib.loads(f"v = {raw}")["v"]
        except tomllib.TOMLDecodeError:
            value = raw
        out[section][name] = value
    return dict(out)


def repo_settings(bench: Bench, name: str, overrides: dict[str, dict[str, object]]) -> Settings:
    layer: dict[str, dict[str, object]] = {k: dict(v) for k, v in overrides.items()}
    layer.setdefault("index", {})["index_dir"] = str(bench.index_dir(name))
    return load_settings(bench.root(name), overrides=layer)


def source_bytes(root: Path) -> int:
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file() and not p.is_symlink())


# ----- building the indexes -------------------------------------------------------------


def build(bench: Bench, names: Sequence[str], vectors: bool, overrides: dict[str, dict[str, object]]) -> None:
    """Index each repository (smallest first) into DATA/indexes/<name>; STATUS.md after each."""
    from codesift.indexer.embed import make_embedder
    from codesift.indexer.sync import index_workspace

    order = sorted(names, key=lambda n: source_bytes(bench.root(n)))
    embedder = None
    for name in order:
        settings = repo_settings(bench, name, overrides)
        if embedder is None:
            embedder = make_embedder(settings.embed)
        t = time.perf_counter()
        print(f"{_now()} indexing {name} ({source_bytes(bench.root(name)) // 1024} KiB)…", flush=True)
        try:
            rep = index_workspace(bench.root(name), settings, embedder=embedder, embed=vectors)
        except Exception as exc:  # one repository's failure (an engine bug) must not stop the others
            print(f"{_now()} {name}: FAILED {type(exc).__name__}: {exc}", flush=True)
            continue
        print(
            f"{_now()} {name}: {rep.chunks_written} chunks written, {rep.chunks_embedded} embedded, "
            f"{rep.vectors_pending} pending, {time.perf_counter() - t:.0f} s",
            flush=True,
        )
        if bench.indexes is None:  # STATUS.md describes the shared set only
            write_status(bench)


def _now() -> str:
    return dt.datetime.now(dt.UTC).strftime("%H:%M:%S")


def index_state(bench: Bench, name: str) -> tuple[str, int, int, int]:
    """(state, files, chunks, vectors done) of a repository's index."""
    from codesift.indexer.sync import index_status

    settings = repo_settings(bench, name, {})
    if not bench.index_dir(name).is_dir():
        return "none", 0, 0, 0
    try:
        st = index_status(bench.root(name), settings)
    except Exception as exc:  # a half-written index while the builder works
        return f"busy ({type(exc).__name__})", 0, 0, 0
    if not st.exists:
        return "none", 0, 0, 0
    state = "ready" if st.vectors_pending == 0 and st.chunks else f"vectors {st.vectors_done}/{st.chunks}"
    return state, st.files_indexed, st.chunks, st.vectors_done


# ----- STATUS.md ------------------------------------------------------------------------------


def write_status(bench: Bench) -> None:
    """DATA/STATUS.md: which indexes are ready, the command to evaluate, the latest figures."""
    lines = [
        "# codesift quality bench: data status",
        "",
        f"Updated {dt.datetime.now(dt.UTC).strftime('%Y-%m-%d %H:%M UTC')} by `python -m bench.semble`"
        " (branch `qbench`, /work/wt-qbench).",
        "",
        "## Evaluate a changed engine (indexes are reused; nothing is re-embedded)",
        "",
        "```",
        "cd /work/wt-qbench && /work/main/.venv/bin/python -m bench.semble --data " + str(bench.data),
        "#   --repos click,requests   --modes hybrid,bm25   --json /tmp/out.json   --verbose",
        "#   --set search.vector_score_threshold=1.0   (any engine setting, section.key=value)",
        "```",
        "",
        "Repositories not yet `ready` are left out of a run (and named). Evaluating only reads the indexes."
        " They are shared: do not `--build` (or `codesift index`) into DATA/indexes with an engine that"
        " changes what is indexed (walk, chunking, schema) — that rewrites the baseline's indexes; build"
        " your own set with `--build --indexes DIR` and evaluate with `--indexes DIR`. Each result file"
        " records files/chunks per index read (`by_repo[].index_files_chunks`).",
        "",
        "## semble repositories",
        "",
        "| repo | language | index | files | chunks | vectors |",
        "|---|---|---|---:|---:|---:|",
    ]
    for name, spec in bench.specs.items():
        state, files, chunks, vecs = index_state(bench, name)
        lines.append(f"| {name} | {spec.language} | {state} | {files} | {chunks} | {vecs} |")
    if bench.skipped:
        lines += ["", "Skipped (pinned revision not obtainable here):", ""]
        lines += [f"- {n}: {why}" for n, why in bench.skipped.items()]
    for fname, title in (
        ("semble-baseline.json", "Baseline (engine before the ranking stage, `--baseline` run)"),
        ("semble-latest.json", "Latest full run"),
    ):
        path = bench.data / "results" / fname
        if path.is_file():
            lines += _figures(json.loads(path.read_text(encoding="utf-8")), title)
    for fname, title in (("swebench-baseline.json", "baseline"), ("swebench-latest.json", "latest run")):
        sw = bench.data / "results" / fname
        if sw.is_file():
            lines += _swebench_figures(json.loads(sw.read_text(encoding="utf-8")), title, bench.data)
    extra = bench.data / "STATUS-extra.md"
    if extra.is_file():
        lines += ["", extra.read_text(encoding="utf-8").rstrip()]
    tmp = bench.data / "STATUS.md.tmp"
    tmp.write_text("\n".join(lines) + "\n", encoding="utf-8")
    tmp.replace(bench.data / "STATUS.md")


def _figures(res: dict[str, object], title: str) -> list[str]:
    """A results file's summary as a Markdown table."""
    summary = res.get("summary", {})
    assert isinstance(summary, dict)
    repos = res.get("repos", [])
    assert isinstance(repos, list)
    cols = [c for c in [*ALL_MODES, *PUBLISHED] if any(c in v for v in summary.values())]
    lines = [
        "",
        f"## {title}: {res.get('when', '?')}, engine {res.get('engine', '?')}, "
        f"indexes {res.get('indexes', '?')}, "
        f"{len(repos)} repos, {res.get('seconds', '?')} s, settings {res.get('overrides') or 'default'}",
        "",
        "NDCG@10, mean over repositories (semble's aggregation). filebm25 = plain BM25 over whole files;"
        " rg = semble's ripgrep baseline run here, rg-published = its published figure (protocol check).",
        "",
        "| | " + " | ".join(cols) + " |",
        "|---|" + "---:|" * len(cols),
    ]
    for row in ["overall", *CATEGORIES, *sorted(k for k in summary if k.startswith("lang:"))]:
        if row in summary:
            cells = " | ".join(f"{summary[row][c]:.3f}" if c in summary[row] else "—" for c in cols)
            lines.append(f"| {row} | {cells} |")
    lines += ["", "Repos in that run: " + ", ".join(str(r) for r in repos)]
    return lines


def _swebench_figures(res: dict[str, Any], title: str, data: Path) -> list[str]:
    lines = [
        "",
        f"## SWE-bench file localisation, {title}: {res.get('when', '?')}, {res.get('seconds', '?')} s, "
        f"limit {res.get('limit')}, grouped by file: {res.get('grouped_by_file')}, "
        f"settings {res.get('overrides') or 'default'}, vectors done/chunks {res.get('vectors', '?')}",
        "",
        "```",
        f"cd /work/wt-qbench && /work/main/.venv/bin/python -m bench.swebench --data {data}",
        "```",
        "",
        "| mode | Acc@1 | Acc@5 | Acc@10 | MRR |",
        "|---|---:|---:|---:|---:|",
    ]
    for mode, v in res.get("summary", {}).items():
        lines.append(f"| {mode} | {v['acc1']:.3f} | {v['acc5']:.3f} | {v['acc10']:.3f} | {v['mrr']:.3f} |")
    per = [
        f"{repo}: "
        + ", ".join(f"{m} {x['acc5']:.2f}" for m, x in ms.items())
        + f" ({next(iter(ms.values()))['n']})"
        for repo, ms in res.get("by_repo", {}).items()
    ]
    return [*lines, "", "Acc@5 per repository (instances): " + "; ".join(per)]
