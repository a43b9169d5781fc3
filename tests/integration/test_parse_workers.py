"""Files parsed by worker processes (``index.parse_workers``): the same index as the
indexing process alone makes, a worker killed hard loses no file, and workers end
with an indexer killed hard. Real spawned workers, real tree-sitter and LanceDB."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import lancedb
import pytest

from codesift.indexer.filework import PARALLEL_MIN_FILES
from codesift.indexer.settings import load_settings
from codesift.indexer.static_embed import STATIC_MODEL
from codesift.indexer.sync import index_uri_for

from ..conftest import write_workspace

pytestmark = pytest.mark.slow

CODESIFT = [sys.executable, "-m", "codesift.server.cli"]
FILES = PARALLEL_MIN_FILES + 40  # enough for workers


def tree(workers: int, static: bool = False) -> dict[str, str]:
    files = {
        f"pkg/mod_{i:03d}.py": f'''
            from pkg.mod_{(i + 1) % FILES:03d} import handler_{(i + 1) % FILES}


            def handler_{i}(request):
                """Handle request number {i} and pass it on."""
                return handler_{(i + 1) % FILES}(request) + {i}


            class Model{i}:
                def save(self):
                    return handler_{i}(self)
            '''
        for i in range(FILES)
    }
    files["web/broken.js"] = "function open( {\n  return 1;\n"  # syntax errors: chunked around them
    files["notes.md"] = "# Notes\n\nHow requests are handled.\n"
    files[".codesift.toml"] = f"[index]\nparse_workers = {workers}\nwrite_batch_files = 50\n"
    if static:
        files[".codesift.toml"] += f'\n[embed]\nmodel = "{STATIC_MODEL}"\n'
    return files


def build(
    root: Path, workers: int, env: dict[str, str] | None = None, timeout: float = 600, static: bool = False
) -> subprocess.CompletedProcess[str]:
    write_workspace(root, tree(workers, static))
    (root / "bad.py").write_bytes(b"def caf\xe9():\n    return 1\n")  # invalid UTF-8
    (root / "blob.bin").write_bytes(b"\x00\x01" * 100)  # binary: skipped
    run_env = {k: v for k, v in os.environ.items() if k != "CODESIFT_KILL_AT"} | (env or {})
    return subprocess.run(
        [*CODESIFT, "index", str(root), "--json", *(() if static else ("--no-embed",))],
        capture_output=True,
        text=True,
        env=run_env,
        timeout=timeout,
    )


def rows(root: Path) -> dict[str, list[tuple[object, ...]]]:
    """Every table's rows without the columns a run stamps (times), sorted."""
    db = lancedb.connect(index_uri_for(root, load_settings(root)))
    keep = {
        "files": ("path", "language", "content_hash", "status", "reason"),
        "chunks": ("id", "path", "kind", "symbol", "start_line", "end_line", "text", "search_text"),
        "symbols": ("qualified_name", "kind", "path", "start_line", "chunk_id"),
        "edges": ("path", "kind", "to_name", "line", "column"),
    }
    out = {}
    for name, columns in keep.items():
        table = db.open_table(name).to_arrow()
        present = [c for c in columns if c in table.column_names]
        assert len(present) >= 3, (name, table.column_names)
        cols = [table.column(c).to_pylist() for c in present]
        # the settings file differs between the runs compared (its parse_workers)
        out[name] = sorted((r for r in zip(*cols, strict=True) if ".codesift.toml" not in r), key=repr)
    return out


def test_parse_workers_write_the_same_index_as_the_indexing_process_alone(tmp_path: Path) -> None:
    # one folder name (the project, which chunk ids hold) in two places
    alone = build(tmp_path / "alone" / "ws", workers=1)
    assert alone.returncode == 0, alone.stderr
    two = build(tmp_path / "two" / "ws", workers=2)
    assert two.returncode == 0, two.stderr
    a, b = json.loads(alone.stdout), json.loads(two.stdout)
    assert a["files_changed"] == b["files_changed"] >= FILES
    assert a["chunks_written"] == b["chunks_written"] > FILES
    got_alone, got_two = rows(tmp_path / "alone" / "ws"), rows(tmp_path / "two" / "ws")
    for name in got_alone:
        assert got_two[name] == got_alone[name], name
    files = {r[0]: r for r in got_two["files"]}
    assert files["blob.bin"][3] == "skipped"
    assert "invalid UTF-8" in str(files["bad.py"][4])
    assert "syntax errors" in str(files["web/broken.js"][4])


def test_parse_workers_embed_with_a_static_model_as_the_indexing_process_alone_does(tmp_path: Path) -> None:
    alone = build(tmp_path / "alone" / "ws", workers=1, static=True)
    assert alone.returncode == 0, alone.stderr
    two = build(tmp_path / "two" / "ws", workers=2, static=True)
    assert two.returncode == 0, two.stderr
    assert json.loads(two.stdout)["chunks_embedded"] == json.loads(alone.stdout)["chunks_embedded"] > FILES
    assert json.loads(two.stdout)["vectors_pending"] == 0

    def vectors(root: Path) -> dict[str, list[float]]:
        table = lancedb.connect(index_uri_for(root, load_settings(root))).open_table("chunks").to_arrow()
        rows = zip(*(table.column(c).to_pylist() for c in ("id", "path", "vector")), strict=True)
        return {i: v for i, path, v in rows if path != ".codesift.toml"}  # its parse_workers differ

    got_alone, got_two = vectors(tmp_path / "alone" / "ws"), vectors(tmp_path / "two" / "ws")
    assert got_alone.keys() == got_two.keys()
    assert all(v is not None for v in got_two.values())
    assert got_two == got_alone  # the same floats: the same ids summed in the same order


def test_a_parse_worker_killed_hard_leaves_its_files_to_the_indexing_process(tmp_path: Path) -> None:
    whole = build(tmp_path / "whole" / "ws", workers=2)
    assert whole.returncode == 0, whole.stderr
    # each worker SIGKILLs itself at its third task: the pool breaks, this process parses the rest
    killed = build(tmp_path / "killed" / "ws", workers=2, env={"CODESIFT_KILL_AT": "parse-worker:3"})
    assert killed.returncode == 0, killed.stderr
    assert "parse workers stopped" in killed.stderr
    assert json.loads(killed.stdout)["files_changed"] == json.loads(whole.stdout)["files_changed"]
    assert rows(tmp_path / "killed" / "ws") == rows(tmp_path / "whole" / "ws")


def _processes_marked(mark: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if mark.encode() in (entry / "environ").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


@pytest.mark.parametrize("nth", [1, 100])
def test_parse_workers_end_when_the_indexer_is_killed_hard(tmp_path: Path, nth: int) -> None:
    mark = f"CODESIFT_TEST_MARK={uuid.uuid4().hex}"
    name, _, value = mark.partition("=")
    # the indexer SIGKILLs itself at its nth parsed file: at the 1st, workers may still be
    # starting (one that read its parent's pid only then saw init's); at the 100th they are
    # busy ahead of it (a worker left behind also holds the run's output pipes open: the timeout)
    kill = {"CODESIFT_KILL_AT": f"parse:{nth}", name: value}
    run = build(tmp_path / "ws", workers=2, env=kill, timeout=120)
    assert run.returncode == -9, run.stderr
    deadline = time.monotonic() + 15
    while _processes_marked(mark) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _processes_marked(mark) == []
    again = build(tmp_path / "ws", workers=2)  # the next run repairs the index
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["files_changed"] >= FILES - nth
