"""A full disk in any phase: a clear error, exit 2, and never a silent partial index.

Real CLI processes, real LanceDB and model; the full disk is simulated at named
points by ``CODESIFT_FAIL_AT`` (``indexer/faults.py``), where Lance's own write
would fail with ENOSPC.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ..conftest import write_workspace

pytestmark = pytest.mark.slow

CODESIFT = [sys.executable, "-m", "codesift.server.cli"]


def cli(*args: str, fail_at: str = "") -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env.pop("CODESIFT_FAIL_AT", None)
    if fail_at:
        env["CODESIFT_FAIL_AT"] = fail_at
    return subprocess.run([*CODESIFT, *args], capture_output=True, text=True, env=env, timeout=300)


def search(root: Path, query: str) -> dict[str, object]:
    got = cli("search", query, "--root", str(root), "--mode", "bm25", "--json")
    assert got.returncode in (0, 1), got.stderr
    result = json.loads(got.stdout)
    assert isinstance(result, dict)
    return result


def edit_every_file(root: Path) -> int:
    files = [p for p in root.rglob("*.py") if ".codesift" not in p.parts]
    for p in files:
        p.write_text(p.read_text() + "\n\ndef freshly_added():\n    return 'freshly added'\n")
    return len(files)


def assert_disk_full_exit(got: subprocess.CompletedProcess[str]) -> None:
    assert got.returncode == 2, (got.returncode, got.stderr[-2000:])
    assert "Traceback" not in got.stderr
    assert "is full (No space left on device)" in got.stderr


@pytest.mark.parametrize("point", ["journal", "add", "index", "cache", "vectors"])
def test_a_full_disk_in_any_phase_exits_2_with_a_clear_error_and_no_traceback(
    tmp_path: Path, point: str
) -> None:
    root = write_workspace(tmp_path / "ws")
    assert_disk_full_exit(cli("index", str(root), fail_at=point))
    assert cli("index", str(root)).returncode == 0  # with space again, the next run repairs


def test_a_full_disk_mid_write_keeps_the_old_rows_of_the_files_it_was_replacing(tmp_path: Path) -> None:
    root = write_workspace(tmp_path / "ws")
    assert cli("index", str(root), "--no-embed").returncode == 0
    before = search(root, "validateCredentials")
    assert before["hits"]
    edit_every_file(root)
    assert_disk_full_exit(cli("index", str(root), "--no-embed", fail_at="add"))
    after = search(root, "validateCredentials")
    assert [h["path"] for h in after["hits"]] == [h["path"] for h in before["hits"]]  # type: ignore[index]
    assert not any("incomplete" in n for n in after["report"]["notes"])  # type: ignore[index]


def test_when_the_old_rows_cannot_be_restored_every_search_says_how_many_files_are_missing(
    tmp_path: Path,
) -> None:
    root = write_workspace(tmp_path / "ws")
    assert cli("index", str(root), "--no-embed").returncode == 0
    changed = edit_every_file(root)
    assert_disk_full_exit(cli("index", str(root), "--no-embed", fail_at="add,restore"))
    notes = search(root, "validateCredentials")["report"]["notes"]  # type: ignore[index]
    assert any(f"index incomplete: {changed} files are missing" in n for n in notes), notes
    assert cli("index", str(root), "--no-embed").returncode == 0  # space again: the next run repairs
    result = search(root, "validateCredentials")
    assert result["hits"]
    assert not any("incomplete" in n for n in result["report"]["notes"])  # type: ignore[index]
