"""SIGKILL at the worst moments; the index stays searchable and the next run repairs it."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import lancedb
import pytest

from codesift.indexer.settings import load_settings
from codesift.indexer.sync import index_status, index_uri_for

from ..conftest import write_workspace

pytestmark = pytest.mark.slow

CODESIFT = [sys.executable, "-m", "codesift.server.cli"]


def many_files(n: int) -> dict[str, str]:
    files = {
        f"pkg/mod_{i:03d}.py": f'''
            def handler_{i}(request):
                """Handle request number {i} and answer it."""
                value = request.get("value_{i}")
                return value * {i}


            class Model{i}:
                def save(self):
                    return "saved {i}"
            '''
        for i in range(n)
    }
    files[".codesift.toml"] = "[index]\nwrite_batch_files = 5\n\n[embed]\nbatch_size = 4\ncommit_chunks = 8\n"
    return files


def index(root: Path, kill_at: str | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env.pop("CODESIFT_KILL_AT", None)
    if kill_at:
        env["CODESIFT_KILL_AT"] = kill_at
    return subprocess.run(
        [*CODESIFT, "index", str(root), "--json"], capture_output=True, text=True, env=env, timeout=300
    )


def assert_searchable(root: Path) -> None:
    """A reader opening the index now sees whole tables and can run BM25 and vector queries."""
    db = lancedb.connect(index_uri_for(root, load_settings(root)))
    if "chunks" not in db.list_tables().tables:
        return  # killed before the first table existed: nothing to read yet, nothing half-written
    chunks = db.open_table("chunks")
    ids = chunks.to_arrow().column("id").to_pylist()
    assert len(ids) == len(set(ids)), "a chunk is stored twice"
    if chunks.count_rows() and chunks.list_indices():
        chunks.search("handler request", query_type="fts", fts_columns="search_text").limit(5).to_list()
    with_vectors = chunks.count_rows("has_vector = true")
    if with_vectors:
        probe = chunks.search().where("has_vector = true").select(["vector"]).limit(1).to_list()[0]["vector"]
        assert chunks.search(probe).distance_type("cosine").limit(3).to_list()


def fingerprint(root: Path) -> tuple[set[str], int, int]:
    db = lancedb.connect(index_uri_for(root, load_settings(root)))
    chunks = db.open_table("chunks").to_arrow()
    return set(chunks.column("id").to_pylist()), db.open_table("symbols").count_rows(), chunks.num_rows


@pytest.mark.parametrize("point", ["parse:3", "write:2", "write-files:2", "embed:2"])
def test_sigkill_during_index_leaves_index_searchable_and_next_run_repairs(
    tmp_path: Path, point: str
) -> None:
    root = write_workspace(tmp_path / "ws", many_files(24))
    killed = index(root, kill_at=point)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert_searchable(root)
    repaired = index(root)
    assert repaired.returncode == 0, repaired.stderr
    st = index_status(root, load_settings(root))
    assert st.files_indexed == 25 and st.vectors_pending == 0
    after_repair = fingerprint(root)
    rebuilt = subprocess.run(
        [*CODESIFT, "index", str(root), "--rebuild", "--json"], capture_output=True, text=True
    )
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert fingerprint(root) == after_repair, "the repaired index differs from a clean rebuild"


@pytest.mark.parametrize("point", ["replace:1", "replace:2", "write:2", "write-files:1"])
def test_sigkill_while_replacing_a_saved_file_then_saving_it_back_repairs(tmp_path: Path, point: str) -> None:
    """The files row goes first: a file killed mid-replace and then saved back to the
    content the index had before is still re-done, not taken as unchanged."""
    root = write_workspace(tmp_path / "ws", many_files(6))
    assert index(root).returncode == 0
    target = root / "pkg/mod_002.py"
    original = target.read_text()
    target.write_text(original + "\n\ndef replaced_mid_crash():\n    return 'new'\n")
    killed = index(root, kill_at=point)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert_searchable(root)
    target.write_text(original)
    assert index(root).returncode == 0
    repaired = fingerprint(root)
    rebuilt = subprocess.run(
        [*CODESIFT, "index", str(root), "--rebuild", "--json"], capture_output=True, text=True
    )
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert fingerprint(root) == repaired, "the repaired index differs from a clean rebuild"


def test_sigkill_during_removal_leaves_no_orphan_rows(tmp_path: Path) -> None:
    root = write_workspace(tmp_path / "ws", many_files(12))
    assert index(root).returncode == 0
    for i in range(4):
        (root / f"pkg/mod_{i:03d}.py").unlink()
    killed = index(root, kill_at="remove")
    assert killed.returncode == -signal.SIGKILL
    assert_searchable(root)
    assert index(root).returncode == 0
    db = lancedb.connect(index_uri_for(root, load_settings(root)))
    paths = set(db.open_table("chunks").to_arrow().column("path").to_pylist())
    assert not any(p.startswith("pkg/mod_00") and p < "pkg/mod_004" for p in paths)
    assert index_status(root, load_settings(root)).files_indexed == 9


def test_sigkill_at_random_moments_never_needs_a_manual_wipe(tmp_path: Path) -> None:
    root = write_workspace(tmp_path / "ws", many_files(30))
    rng = random.Random(7)
    for _ in range(4):
        proc = subprocess.Popen(
            [*CODESIFT, "index", str(root)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        time.sleep(rng.uniform(1.0, 4.0))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        assert_searchable(root)
    final = index(root)
    assert final.returncode == 0, final.stderr
    st = index_status(root, load_settings(root))
    assert st.files_indexed == 31 and st.vectors_pending == 0
