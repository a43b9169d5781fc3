"""The team-index figures: publish to S3 on loopback, a laptop's overlay vs indexing alone.

    .venv/bin/python -m bench.remote [--packages email json http ...] [--work DIR] [--worktrees-only]

Copies a part of this interpreter's standard library (all of it without
``--packages``: an hour of embedding on two busy cores), then measures

* indexing alone (what a laptop does without a remote: parse + embed),
* publishing the same tree to ``s3://`` on a moto server on 127.0.0.1 (time, bytes),
* a second checkout with one file edited, overlaying that remote: time to vectors done,
* hybrid search p50 on the overlaid index vs the index built alone,
* 5 worktrees of one repository: each one's time to ready, and the disk their
  indexes (hard-linked files counted once) and the repository's shared embedding
  cache take vs 5 separate indexes, then a branch switch in one worktree: what it
  re-indexes and how much disk it still shares before and after the next optimize,
  then saves past an optimize in another: what it shares before and after that
  optimize, its time, and hybrid p50 on its shared fragments as they are vs the
  whole table compacted (``--worktrees-only``: this alone, without the S3 server;
  ``--no-keep-links``: LanceDB's own optimize on linked tables, as before pylance).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

from codesift.indexer import compaction
from codesift.indexer.embed import Embedder, make_embedder
from codesift.indexer.freshen import reindex_paths
from codesift.indexer.publish import publish
from codesift.indexer.search.hybrid import search
from codesift.indexer.search.results import SearchRequest
from codesift.indexer.settings import Settings, load_settings
from codesift.indexer.store import Store
from codesift.indexer.sync import index_uri_for, index_workspace, open_store
from codesift.indexer.worktrees import shared_cache_dir

from . import corpora

QUERIES = (
    "parse an email address into name and address",
    "retry a failed http request",
    "decode json with a custom object hook",
    "read a configuration file",
    "encode base64 data",
    "split a header value into parameters",
    "send a request over a socket",
    "format a date as a string",
)


def _hybrid_p50s(roots: list[Path]) -> list[float]:
    """Hybrid p50 (ms) of each index, the queries interleaved across them so load swings hit all alike."""
    setups = []
    for root in roots:
        settings = load_settings(root)
        setups.append((root, settings, open_store(root, settings)))
    embedder = make_embedder(Settings().embed)
    times: list[list[float]] = [[] for _ in roots]
    for rnd in range(4):
        for q in QUERIES:
            for k, (root, settings, store) in enumerate(setups):
                t = time.perf_counter()
                search(store, SearchRequest(query=q), settings, root=root, embedder=embedder)
                if rnd:  # the first round warms caches
                    times[k].append(time.perf_counter() - t)
    return [statistics.median(t) * 1000 for t in times]


def _bytes(*folders: Path) -> int:
    """Bytes of the files under ``folders``, a file hard-linked under several names counted once
    (as one ``du`` over them all counts it)."""
    seen: dict[tuple[int, int], int] = {}
    for folder in folders:
        for f in folder.rglob("*"):
            st = f.lstat()
            if f.is_file() and not f.is_symlink():
                seen[(st.st_dev, st.st_ino)] = st.st_size
    return sum(seen.values())


def _shared(a: Path, b: Path) -> int:
    """Bytes ``a`` and ``b`` hold in the same files (hard links)."""
    return _bytes(a) + _bytes(b) - _bytes(a, b)


def _switch_branch(main: Path, tree: Path, changed: int, embedder: Embedder, embed: bool = True) -> None:
    """A branch that changes ``changed`` files, checked out in ``tree``: the re-index time, and
    how much of ``tree``'s index still shares files with ``main``'s, before and after the next
    optimize (a compaction rewrites fragments)."""
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b"}
    env.update(GIT_COMMITTER_NAME="b", GIT_COMMITTER_EMAIL="b@b")
    subprocess.run(["git", "-C", str(tree), "checkout", "-q", "-b", f"switch-{changed}"], check=True, env=env)
    for i, path in enumerate(sorted(tree.rglob("*.py"))[:changed]):
        path.write_text(path.read_text() + f"\n\ndef bench_switch_{i}():\n    return {i}\n")
    subprocess.run(["git", "-C", str(tree), "commit", "-qam", "switch"], check=True, env=env)
    t = time.perf_counter()
    report = index_workspace(tree, load_settings(tree), embedder=embedder, embed=embed)
    took = time.perf_counter() - t
    mine, theirs = tree / ".codesift", main / ".codesift"
    before = _shared(mine, theirs)
    Store(index_uri_for(tree, load_settings(tree))).optimize(timedelta(milliseconds=1))
    after = _shared(mine, theirs)
    print(
        f"  branch switch changing {changed} files: re-indexed {report.files_changed} files in {took:.1f} s; "
        f"shared with the sibling's index {before / 1e6:.1f} MB of {_bytes(mine) / 1e6:.1f} MB, "
        f"after the next optimize {after / 1e6:.1f} MB of {_bytes(mine) / 1e6:.1f} MB"
    )


def _fragments(root: Path, settings: Settings) -> int:
    stats = Store(index_uri_for(root, settings)).table("chunks").stats()
    return int(stats["fragment_stats"]["num_fragments"])


def _saves(
    main: Path, tree: Path, saves: int, embedder: Embedder, embed: bool = True, spread: int = 3
) -> None:
    """Two rounds of ``saves`` single-file saves in ``tree`` through the editor's path
    (``spread`` files in turn, as an editing session goes), each followed by an optimize:
    shared disk before and after each, its time, and hybrid p50 on the linked worktree as the
    optimizes leave it vs a copy LanceDB's optimize compacts whole. (One round is not enough:
    LanceDB's optimize leaves a lone shared fragment alone while the new rows are outside the
    indices, and merges it with them once the indices hold both.)"""
    settings = load_settings(tree)
    files = sorted(p.relative_to(tree).as_posix() for p in tree.rglob("*.py") if ".codesift" not in p.parts)
    mine, theirs = tree / ".codesift", main / ".codesift"
    for rnd in range(2):
        t = time.perf_counter()
        for i in range(rnd * saves, (rnd + 1) * saves):
            rel = files[(7 * (i % spread)) % len(files)]
            (tree / rel).write_text(
                (tree / rel).read_text() + f"\n\ndef bench_saved_{i}():\n    return {i}\n"
            )
            reindex_paths(tree, settings, [rel], embedder=embedder, embed=embed)
        took = time.perf_counter() - t
        before, size = _shared(mine, theirs), _bytes(mine)
        if rnd == 0:
            (p50_saved,) = _hybrid_p50s([tree])
        time.sleep(0.01)
        t = time.perf_counter()
        Store(index_uri_for(tree, settings)).optimize(timedelta(milliseconds=1))
        took_opt = time.perf_counter() - t
        after = _shared(mine, theirs)
        print(
            f"  round {rnd + 1}: {saves} saves of {spread} files in {tree.name} "
            f"({took / saves * 1000:.0f} ms each): shared with the sibling {before / 1e6:.2f} MB "
            f"of {size / 1e6:.2f} MB; the optimize "
            f"({took_opt:.2f} s) leaves {after / 1e6:.2f} MB of {_bytes(mine) / 1e6:.2f} MB shared"
        )
    # The same index copied (no links) and compacted whole by LanceDB's optimize, searched
    # interleaved with the linked one: what keeping the sibling's fragments costs a search.
    whole = shutil.copytree(tree, tree.with_name(f"{tree.name}-whole"), ignore=shutil.ignore_patterns(".git"))
    keep = compaction.pylance_installed
    compaction.pylance_installed = lambda: False  # type: ignore[assignment]
    try:
        Store(index_uri_for(whole, settings)).optimize(timedelta(milliseconds=1))
    finally:
        compaction.pylance_installed = keep  # type: ignore[assignment]
    p50_kept, p50_whole = _hybrid_p50s([tree, whole])
    frags = [_fragments(root, settings) for root in (tree, whole)]
    print(
        f"  hybrid p50 in {tree.name}: {p50_saved:.1f} ms after the first saves; then, interleaved, "
        f"{p50_kept:.1f} ms as the optimizes left it ({frags[0]} chunk fragments) vs {p50_whole:.1f} ms "
        f"for a copy LanceDB's optimize compacted whole ({frags[1]})"
    )


def _committed_copy(alone: Path, dest: Path, embed: bool) -> tuple[Path, Embedder]:
    """``alone`` (its index along) copied to ``dest``, made a git repository with one
    commit, and indexed there; the embedder, for the runs after it."""
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b"}
    env.update(GIT_COMMITTER_NAME="b", GIT_COMMITTER_EMAIL="b@b")
    root = shutil.copytree(alone, dest, symlinks=True)
    for cmd in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "bench"]):
        subprocess.run(["git", "-C", str(root), *cmd], check=True, env=env, capture_output=True)
    embedder = make_embedder(Settings().embed)
    index_workspace(root, load_settings(root), embedder=embedder, embed=embed)
    return root, embedder


def _worktrees(
    alone: Path, work: Path, n: int, changed: int = 0, embed: bool = True, saves: int = 0, spread: int = 3
) -> None:
    """The tree built alone, committed, then ``n - 1`` more worktrees of it indexed in turn;
    then (``changed``) a branch switch in the second, (``saves``) saves in the third."""
    main, embedder = _committed_copy(alone, work / "wt0", embed)  # its cache moves over
    seconds: list[float] = []
    linked: list[int] = []
    for i in range(1, n):
        tree = work / f"wt{i}"
        subprocess.run(
            ["git", "-C", str(main), "worktree", "add", "-q", str(tree)], check=True, capture_output=True
        )
        t = time.perf_counter()
        report = index_workspace(tree, load_settings(tree), embedder=embedder, embed=embed)
        seconds.append(time.perf_counter() - t)
        linked.append(report.files_linked)
    trees = [work / f"wt{i}" for i in range(n)]
    cache = shared_cache_dir(main, load_settings(main))
    shared = _bytes(cache) if cache is not None and cache.is_dir() else 0
    print(
        f"{n} worktrees: each new one ready in {min(seconds):.2f}-{max(seconds):.2f} s "
        f"({', '.join(f'{s:.2f}' for s in seconds)}; files kept by links {linked}); shared embedding "
        f"cache {shared / 1e6:.1f} MB ({cache if shared else 'none: each index has its own'})"
    )
    settled = "settled (each index optimized once more, versions older than 1 ms pruned: its next optimize)"
    for when in ("just built", settled):
        if when != "just built":
            time.sleep(0.01)
            for root in [alone, *trees]:  # what the next optimize after 5 minutes leaves
                Store(index_uri_for(root, load_settings(root))).optimize(timedelta(milliseconds=1))
        indexes = _bytes(*(t / ".codesift" for t in trees))  # a file linked into several: once
        apart = sum(_bytes(t / ".codesift") for t in trees)
        one = _bytes(alone / ".codesift")  # a separate index: its own cache inside
        print(
            f"  {when}: {(indexes + shared) / 1e6:.1f} MB ({indexes / 1e6:.1f} MB of indexes, "
            f"{apart / 1e6:.1f} MB counting links apart, + {shared / 1e6:.1f} MB shared cache) "
            f"vs {n * one / 1e6:.1f} MB for {n} separate indexes"
        )
    if changed:
        _switch_branch(main, trees[1], changed, embedder, embed)
    if saves:
        _saves(main, trees[2 % n], saves, embedder, embed, spread)


def _clones(alone: Path, work: Path, n: int, alone_s: float, embed: bool = True) -> None:
    """The tree built alone and committed, then ``n - 1`` separate ``git clone``s of it
    indexed in turn (``index.share_clones``): ready time and disk against separate indexes."""
    first, embedder = _committed_copy(alone, work / "clone0", embed)  # recorded for the clones
    seconds: list[float] = []
    linked: list[int] = []
    for i in range(1, n):
        tree = work / f"clone{i}"
        subprocess.run(["git", "clone", "-q", str(first), str(tree)], check=True, capture_output=True)
        t = time.perf_counter()
        report = index_workspace(tree, load_settings(tree), embedder=embedder, embed=embed)
        seconds.append(time.perf_counter() - t)
        linked.append(report.files_linked)
    indexes = [work / f"clone{i}" / ".codesift" for i in range(n)]
    print(
        f"{n} clones: each new one ready in {min(seconds):.2f}-{max(seconds):.2f} s "
        f"(files kept by links {linked}; the tree indexed alone: {alone_s:.1f} s); "
        f"{_bytes(*indexes) / 1e6:.1f} MB of indexes vs {n * _bytes(alone / '.codesift') / 1e6:.1f} MB "
        f"for {n} separate indexes"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--packages", nargs="*", default=["email", "json", "http", "urllib", "xml"], help="none: all"
    )
    ap.add_argument("--work", type=Path, default=None)
    ap.add_argument("--worktrees", type=int, default=5, help="worktrees in the sharing figure (0: none)")
    ap.add_argument("--no-embed", action="store_true", help="text phase only (the copy's cost at scale)")
    ap.add_argument("--worktrees-only", action="store_true", help="index alone, then the worktrees; no S3")
    ap.add_argument("--clones", type=int, default=0, help="with --worktrees-only: clones too (0: none)")
    ap.add_argument(
        "--switch-files", type=int, default=5, help="files a branch switch changes in a worktree (0: none)"
    )
    ap.add_argument("--saves", type=int, default=30, help="single-file saves in a worktree (0: none)")
    ap.add_argument("--save-files", type=int, default=3, help="files those saves go round")
    ap.add_argument(
        "--no-keep-links",
        action="store_true",
        help="LanceDB's own optimize on linked tables (rewrites the shared files; to compare)",
    )
    ap.add_argument(
        "--no-links",
        action="store_true",
        help="a new worktree copies its sibling's rows instead of linking its files (as before; to compare)",
    )
    ap.add_argument(
        "--no-shared-cache",
        action="store_true",
        help="each index keeps its own cache (as before; to compare)",
    )
    args = ap.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="bench-remote-"))
    src = work / "ci"
    if args.packages:
        src.mkdir(parents=True, exist_ok=True)
        for name in args.packages:
            shutil.copytree(corpora.STDLIB / name, src / name, ignore=shutil.ignore_patterns("__pycache__"))
    else:
        corpora.copy_stdlib(src)

    if args.no_shared_cache:
        from codesift.indexer import freshen, sync

        sync.shared_cache_dir = freshen.shared_cache_dir = lambda root, settings: None  # type: ignore[assignment]
    if args.no_links:
        from codesift.indexer import sync

        sync.clone_sibling = lambda *a, **k: None  # type: ignore[assignment]
    if args.no_keep_links:
        compaction.pylance_installed = lambda: False  # type: ignore[assignment]
    if args.worktrees_only:
        alone = shutil.copytree(src, work / "alone")
        t = time.perf_counter()
        embedder = make_embedder(Settings().embed)
        built = index_workspace(alone, load_settings(alone), embedder=embedder, embed=not args.no_embed)
        alone_s = time.perf_counter() - t
        print(f"tree: {built.files_seen} files, {built.chunks_written} chunks; alone {alone_s:.1f} s")
        _worktrees(
            alone,
            work,
            max(args.worktrees, 2),
            args.switch_files,
            not args.no_embed,
            args.saves,
            args.save_files,
        )
        if args.clones:
            _clones(alone, work, max(args.clones, 2), alone_s, not args.no_embed)
        return
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from tests.integration.test_remote_s3 import _start_server  # the same server the tests start

    server = _start_server()
    os.environ.update(
        AWS_ACCESS_KEY_ID="test",
        AWS_SECRET_ACCESS_KEY="test",
        AWS_REGION="us-east-1",
        AWS_ENDPOINT_URL=server.endpoint,
    )
    try:
        embedder = make_embedder(Settings().embed)
        alone = shutil.copytree(src, work / "alone")
        t = time.perf_counter()
        embed = not args.no_embed
        built = index_workspace(alone, load_settings(alone), embedder=embedder, embed=embed)
        t_alone = time.perf_counter() - t

        bucket = server.bucket()
        uri = f"s3://{bucket}/team"
        t = time.perf_counter()
        pub = publish(src, uri, load_settings(src), embedder=embedder, embed=embed)
        t_publish = time.perf_counter() - t
        import boto3

        s3 = boto3.client("s3", endpoint_url=server.endpoint, region_name="us-east-1")
        size = sum(
            o["Size"]
            for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket)
            for o in page.get("Contents", [])
        )

        laptop = shutil.copytree(src, work / "laptop")
        (laptop / ".codesift.toml").write_text(f'[index]\nremote = "{uri}"\n')
        edited = next(p for p in sorted(laptop.rglob("*.py")) if p.stat().st_size > 2000)
        edited.write_text(edited.read_text() + "\n\ndef bench_overlay_probe():\n    return 42\n")
        t = time.perf_counter()
        over = index_workspace(laptop, load_settings(laptop), embedder=embedder, embed=embed)
        t_overlay = time.perf_counter() - t

        p50_alone, p50_overlay = _hybrid_p50s([alone, laptop])
    finally:
        server.stop()
    print(
        f"tree: {built.files_seen} files, {built.chunks_written} chunks "
        f"({' '.join(args.packages) or 'stdlib'})"
    )
    print(f"indexing alone (parse + embed): {t_alone:.1f} s ({built.chunks_embedded} embedded)")
    print(
        f"publish to S3 on loopback: {t_publish:.1f} s, {size / 1e6:.1f} MB in the bucket, "
        f"commit {pub.commit!r}"
    )
    print(
        f"overlay first ready (vectors done): {t_overlay:.1f} s — {over.files_from_remote} files copied, "
        f"{over.files_changed} parsed, {over.chunks_embedded} chunks embedded "
        f"({t_alone / max(t_overlay, 1e-9):.1f}× faster than alone)"
    )
    print(f"phases of the overlay run: { ({k: round(v, 2) for k, v in over.phase_seconds.items()}) }")
    print(f"hybrid p50: alone {p50_alone:.1f} ms, overlaid {p50_overlay:.1f} ms")
    if args.worktrees > 1:
        _worktrees(alone, work, args.worktrees, args.switch_files, embed, args.saves, args.save_files)


if __name__ == "__main__":
    main()
