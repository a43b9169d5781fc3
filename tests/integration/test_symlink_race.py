"""Nothing outside the workspace is ever indexed, even when files turn into symlinks mid-run.

Real walk, real tree-sitter, real LanceDB; a separate process flips files between a
regular file and a symlink to a file outside the workspace as fast as it can.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from codesift.indexer.model import SkipReason, WalkEntry
from codesift.indexer.settings import load_settings
from codesift.indexer.source import read_source
from codesift.indexer.store import CHUNKS, Store
from codesift.indexer.sync import index_uri_for, index_workspace
from codesift.indexer.workspace import walk

pytestmark = pytest.mark.slow

SECRET = "SECRET_OUTSIDE"
FILES = 24
RUNS = 20

FLIPPER = """
import os, sys, itertools
root, outside, stop = sys.argv[1], sys.argv[2], sys.argv[3]
names = [os.path.join(root, f"f{{i:02}}.py") for i in range({files})]
for n in itertools.count():
    if os.path.exists(stop):
        break
    for i, path in enumerate(names):
        tmp = path + ".tmp"
        if (n + i) % 2:
            os.symlink(outside, tmp)
        else:
            with open(tmp, "w") as f:
                f.write(f"def inside_{{i}}_{{n}}():\\n    return {{n}}\\n")
        os.replace(tmp, path)
"""


def outside_rows(root: Path) -> int:
    store = Store(index_uri_for(root, load_settings(root)))
    texts = store.table(CHUNKS).to_arrow().column("text").to_pylist()
    return sum(SECRET in t for t in texts)


def test_files_flipping_to_symlinks_outside_during_indexing_never_index_outside_text(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / ".gitignore").write_text("*.tmp\n")
    outside = tmp_path / "outside" / "secret.py"
    outside.parent.mkdir()
    outside.write_text(f'def leaked():\n    return "{SECRET}"\n' * 3)
    for i in range(FILES):
        (root / f"f{i:02}.py").write_text(f"def inside_{i}():\n    return {i}\n")
    stop = tmp_path / "stop"
    flipper = subprocess.Popen(
        [sys.executable, "-c", FLIPPER.format(files=FILES), str(root), str(outside), str(stop)]
    )
    settings = load_settings(root)
    leaked_runs = 0
    try:
        time.sleep(0.3)
        for _ in range(RUNS):
            index_workspace(root, settings, embed=False)
            leaked_runs += outside_rows(root) > 0
    finally:
        stop.touch()
        flipper.wait(timeout=30)
    assert leaked_runs == 0, f"{leaked_runs} of {RUNS} runs stored text from outside the workspace"


def test_a_file_that_became_a_symlink_after_the_walk_is_skipped_with_its_reason(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    outside = tmp_path / "secret.py"
    outside.write_text(f"{SECRET} = 1\n")
    (root / "a.py").write_text("A = 1\n")
    (entry,) = [e for e in walk(root, load_settings(root).index) if e.path == "a.py"]
    (root / "a.py").unlink()
    (root / "a.py").symlink_to(outside)
    source = read_source(entry, 1 << 20)
    assert source.skip == SkipReason.CHANGED and "symlink" in source.note
    assert SECRET not in source.text


def test_a_directory_swapped_for_a_symlink_outside_after_the_walk_is_not_read(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "a.py").write_text("A = 1\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "a.py").write_text(f"{SECRET} = 1\n")
    (entry,) = [e for e in walk(root, load_settings(root).index) if e.path == "pkg/a.py"]
    (root / "pkg").rename(tmp_path / "old-pkg")
    (root / "pkg").symlink_to(elsewhere, target_is_directory=True)
    source = read_source(entry, 1 << 20)
    assert source.skip == SkipReason.CHANGED and "outside" in source.note


def test_links_the_walk_checked_inside_the_workspace_are_still_read(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / "real").mkdir(parents=True)
    (root / "real" / "a.py").write_text("A = 1\n")
    (root / "link.py").symlink_to(root / "real" / "a.py")
    (root / "linked").symlink_to(root / "real", target_is_directory=True)
    entries = {e.path: e for e in walk(root, load_settings(root).index)}
    assert isinstance(entries["link.py"], WalkEntry) and entries["link.py"].link
    for path in ("real/a.py", "link.py"):
        assert read_source(entries[path], 1 << 20).text == "A = 1\n", path
    linked = entries.get("linked/a.py")
    if linked is not None:  # the walk enters a linked directory once per real directory
        assert read_source(linked, 1 << 20).text == "A = 1\n"
