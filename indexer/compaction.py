"""Optimising a table that shares data files with a sibling worktree's index by hard links
(``indexer/clone.py``), without rewriting the shared files.

LanceDB 0.40's ``Table.optimize`` compacts with Lance's default options: every
fragment below a million rows is a candidate and neighbours covered by the same
indices are merged, so a linked index's first optimize rewrote every shared
fragment into files of its own (6.7 of 8.4 MB shared before, 0 after). LanceDB
takes no compaction options and ignores ``lance.compaction.*`` in the manifest;
Lance's own Python package (``pylance``, the ``codesift[worktrees]`` extra) takes
them. Here, per table, through pylance:

* compaction of the table's own fragments only: a fragment with any data file
  linked elsewhere (``st_nlink`` > 1) is excluded, and an excluded fragment is a
  boundary, so own fragments merge only with own neighbours. Deletions in a shared
  fragment stay in its deletion file until the sibling lets go of the fragment
  (from then on its link count is 1 and it compacts as any other), or until more
  than ``DEAD_SHARE`` of its rows are deleted here: then it is compacted too, a
  copy of its live rows costing less disk than the dead ones cost every search;
* the indices fold the new rows in: an index whose first segments are shared
  (BTree, FTS or vector: Lance 13 keeps segments for each) keeps them and merges
  only its own later segments with the new rows, where LanceDB's optimize merges
  every segment into one new one;
* old versions are pruned, as ``Table.optimize`` prunes them.

Each step is one Lance commit, so a crash between two leaves a whole table. The
steps run in a child process (``python -m codesift.indexer.compaction``): pylance
is a second copy of Lance, ~70 MB of memory once used, and the language server
lives near its memory budget; its child exits when done.
"""

from __future__ import annotations

import importlib.metadata
import json
import logging
import os
import subprocess
import sys
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

from .faults import crash_point

log = logging.getLogger(__name__)

# The pip extra that brings pylance; named in logs and in `codesift status`.
EXTRA = "codesift[worktrees]"
LINKS_HINT = f"pip install '{EXTRA}' keeps them shared"
# The Lance inside lancedb 0.40 (read from its binary): pylance must be the same.
PYLANCE_VERSION = "13.0."
CHILD_TIMEOUT_S = 1800.0
# A shared fragment with more than this share of its rows deleted here is compacted
# anyway (its live rows copied): the dead ones are read and dropped by every scan.
DEAD_SHARE = 0.5


@dataclass(frozen=True, slots=True)
class TableCompaction:
    """What one table's optimize did (the child's report, one JSON line a table)."""

    table: str
    shared_fragments: int
    fragments_removed: int
    fragments_added: int
    seconds: float


def pylance_installed() -> bool:
    """Whether Lance's Python package is installed in the version LanceDB's Lance is
    (read from its metadata, not imported): another may write what LanceDB cannot read."""
    try:
        return importlib.metadata.version("pylance").startswith(PYLANCE_VERSION)
    except importlib.metadata.PackageNotFoundError:
        return False


def is_linked(table_dir: Path) -> bool:
    """Whether any data file of the table is also another index's (a hard link)."""
    try:
        with os.scandir(table_dir / "data") as files:
            return any(f.is_file(follow_symlinks=False) and f.stat().st_nlink > 1 for f in files)
    except OSError:
        return False


def linked_tables(uri: str, names: Iterable[str]) -> list[str]:
    """Those of the index's tables that share data files with another index (local only)."""
    if "://" in uri:
        return []
    return [name for name in names if is_linked(Path(uri) / f"{name}.lance")]


def linked_bytes(uri: str) -> int:
    """Bytes of the index at ``uri`` held in files another index holds too (hard links)."""
    if "://" in uri:
        return 0
    total = 0
    for dirpath, _dirs, files in os.walk(uri):
        for name in files:
            try:
                st = os.lstat(os.path.join(dirpath, name))
            except OSError:
                continue
            if st.st_nlink > 1:
                total += st.st_size
    return total


def optimize_keeping_links(uri: str, names: Sequence[str], keep_versions_for: timedelta) -> set[str]:
    """Those of the index's tables that share files with another index, optimised here
    keeping them shared (``optimize_linked``); the caller optimises the rest its own way.
    Empty without pylance (LanceDB's optimize then rewrites the shared files, as logged)
    or with nothing linked. A child that fails is logged, and its tables are still returned:
    LanceDB's optimize would undo the sharing, the next optimize tries again."""
    linked = linked_tables(uri, names)
    if not linked:
        return set()
    if not pylance_installed():
        log.info(
            "optimising %s rewrites the files it shares with another worktree's index "
            "(install %s to keep them shared)",
            uri,
            EXTRA,
        )
        return set()
    try:
        done = optimize_linked(uri, linked, keep_versions_for)
        log.info(
            "optimised %s keeping the files it shares with another worktree's index: %s",
            uri,
            ", ".join(f"{d.table} {d.shared_fragments} shared fragments kept" for d in done),
        )
    except (OSError, RuntimeError, subprocess.SubprocessError) as exc:  # best effort, as the store's
        log.warning("optimising the linked tables of %s failed: %s", uri, exc)
    return set(linked)


def optimize_linked(uri: str, tables: Sequence[str], keep_versions_for: timedelta) -> list[TableCompaction]:
    """Optimise these linked tables of the index at ``uri`` in a child process, keeping
    their shared files. The caller holds the index's writer lock. Raises OSError or
    RuntimeError when the child fails (it changed nothing, or committed whole steps)."""
    args = [sys.executable, "-m", "codesift.indexer.compaction", uri, str(keep_versions_for.total_seconds())]
    done = subprocess.run([*args, *tables], capture_output=True, text=True, timeout=CHILD_TIMEOUT_S)
    if done.returncode != 0:
        tail = done.stderr.strip().splitlines()[-1:] or [f"exit {done.returncode}"]
        raise RuntimeError(f"optimising the linked tables failed: {tail[0]}")
    return [TableCompaction(**json.loads(line)) for line in done.stdout.splitlines() if line.startswith("{")]


def compact_table(table_dir: Path, keep_versions_for: timedelta) -> TableCompaction:
    """Compact the table's own fragments, fold new rows into its indices, prune old
    versions; every fragment that shares a data file is left as it is (the child's work)."""
    import lance  # pylance: only in the child process

    started = time.perf_counter()
    ds = lance.dataset(str(table_dir))
    shared = [
        f.fragment_id
        for f in ds.get_fragments()
        if _shares_files(table_dir, f.metadata.files) and f.count_rows() >= (1 - DEAD_SHARE) * f.physical_rows
    ]
    metrics = ds.optimize.compact_files(excluded_fragment_ids=shared)
    crash_point("compact")
    ds = lance.dataset(str(table_dir))
    for description in ds.describe_indices():
        ds.optimize.optimize_indices(index_names=[description.name], **_merge_options(table_dir, description))
    crash_point("compact-indices")
    ds.cleanup_old_versions(older_than=keep_versions_for)
    return TableCompaction(
        table_dir.name.removesuffix(".lance"),
        len(shared),
        int(metrics.fragments_removed),
        int(metrics.fragments_added),
        time.perf_counter() - started,
    )


def _shares_files(table_dir: Path, files: Iterable[Any]) -> bool:
    for data_file in files:
        try:
            if os.stat(table_dir / "data" / str(data_file.path)).st_nlink > 1:
                return True
        except OSError:
            continue
    return False


def _merge_options(table_dir: Path, description: Any) -> dict[str, int]:
    """An index keeps its shared segments: only its own segments after them are merged
    with the new rows (none: a new segment). Lance 13 keeps segments for scalar indices
    (BTree, FTS) as for vector ones; with no shared segment, its default (merge all)."""
    for own, segment in enumerate(reversed(list(description.segments))):
        if _index_shared(table_dir / "_indices" / str(segment.uuid)):
            return {"num_indices_to_merge": own}
    return {}


def _index_shared(folder: Path) -> bool:
    try:
        return any(f.stat().st_nlink > 1 for f in folder.rglob("*") if f.is_file())
    except OSError:
        return False


def main(argv: Sequence[str] | None = None) -> None:
    import argparse

    ap = argparse.ArgumentParser(description="Optimise an index's linked tables (codesift's own child).")
    ap.add_argument("uri")
    ap.add_argument("keep_seconds", type=float)
    ap.add_argument("tables", nargs="+")
    args = ap.parse_args(argv)
    keep = timedelta(seconds=args.keep_seconds)
    for name in args.tables:
        done = compact_table(Path(args.uri) / f"{name}.lance", keep)
        print(
            json.dumps(
                {
                    "table": name,
                    "shared_fragments": done.shared_fragments,
                    "fragments_removed": done.fragments_removed,
                    "fragments_added": done.fragments_added,
                    "seconds": round(done.seconds, 3),
                }
            ),
            flush=True,
        )


if __name__ == "__main__":
    main()
