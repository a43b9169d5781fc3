"""Indexing end to end: real walk, real tree-sitter, real LanceDB, real model."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import lancedb
import numpy as np
import pytest

from codesift.indexer.settings import load_settings
from codesift.indexer.store import META, Store
from codesift.indexer.sync import index_status, index_uri_for, index_workspace, writer_lock

pytestmark = pytest.mark.slow

CODESIFT = [sys.executable, "-m", "codesift.server.cli"]


def chunk_ids(root: Path) -> set[str]:
    store = Store(index_uri_for(root, load_settings(root)))
    return set(store._table("chunks").to_arrow().column("id").to_pylist())


def run_cli(
    *args: str, env: dict[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CODESIFT, *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        cwd=cwd,
        timeout=300,
    )


def test_index_builds_chunks_symbols_and_vectors(workspace: Path) -> None:
    report = index_workspace(workspace, load_settings(workspace))
    assert report.rebuilt and report.rebuild_reason == "no index yet"
    assert report.files_changed == 5
    st = index_status(workspace, load_settings(workspace))
    assert st.exists and st.files_indexed == 5
    assert st.chunks >= 6 and st.symbols >= 8
    assert st.vectors_pending == 0 and st.vectors_done == st.chunks
    assert st.model == "onnx:all-MiniLM-L6-v2-int8" and st.dimension == 384
    assert st.index_bytes > 0


def test_index_folder_is_git_ignored_by_the_tool(workspace: Path) -> None:
    index_workspace(workspace, load_settings(workspace), embed=False)
    status = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"],
        cwd=workspace,
        capture_output=True,
        text=True,
        check=True,
    )
    assert ".codesift" not in status.stdout
    assert (workspace / ".codesift" / ".gitignore").read_text().strip().endswith("*")


def test_second_index_with_nothing_changed_parses_and_embeds_nothing(workspace: Path) -> None:
    settings = load_settings(workspace)
    index_workspace(workspace, settings)
    again = index_workspace(workspace, settings)
    assert (again.files_changed, again.chunks_written, again.chunks_embedded) == (0, 0, 0)
    assert not again.rebuilt


def test_touching_a_file_without_changing_it_embeds_nothing(workspace: Path) -> None:
    settings = load_settings(workspace)
    index_workspace(workspace, settings)
    os.utime(workspace / "app/auth.py", ns=(1, 1))
    again = index_workspace(workspace, settings)
    assert again.chunks_written == 0 and again.chunks_embedded == 0


def test_editing_one_file_embeds_only_its_changed_chunks(workspace: Path) -> None:
    settings = load_settings(workspace)
    first = index_workspace(workspace, settings)
    path = workspace / "app/upload.py"
    path.write_text(
        path.read_text() + "\n\ndef cancel_upload(client, blob_id):\n    return client.delete(blob_id)\n"
    )
    again = index_workspace(workspace, settings)
    assert again.files_changed == 1
    assert 1 <= again.chunks_embedded < first.chunks_embedded
    assert index_status(workspace, settings).vectors_pending == 0


def test_deleted_and_renamed_files_leave_the_index(workspace: Path) -> None:
    settings = load_settings(workspace)
    index_workspace(workspace, settings)
    (workspace / "app/config.py").unlink()
    (workspace / "web/client.js").rename(workspace / "web/api_client.js")
    report = index_workspace(workspace, settings)
    assert report.files_removed == 2
    store = Store(index_uri_for(workspace, settings))
    paths = set(store._table("chunks").to_arrow().column("path").to_pylist())
    assert "app/config.py" not in paths and "web/client.js" not in paths
    assert "web/api_client.js" in paths
    sym_paths = set(store._table("symbols").to_arrow().column("path").to_pylist())
    assert "app/config.py" not in sym_paths
    # a chunk is embedded with its path (model.embedding_text): the renamed file's
    # chunks are embedded again under their new path, not served the old path's vectors
    assert report.chunks_embedded >= 1


def test_embedding_cache_serves_a_file_back_at_its_path(workspace: Path) -> None:
    """A branch switch or a restore puts the same text back at the same path: its
    vectors come from the embedding cache, nothing is embedded again."""
    settings = load_settings(workspace)
    index_workspace(workspace, settings)
    shutil.move(workspace / "app", workspace.parent / "app-aside")
    gone = index_workspace(workspace, settings)
    assert gone.files_removed == 3
    shutil.move(workspace.parent / "app-aside", workspace / "app")
    report = index_workspace(workspace, settings)
    assert report.files_changed == 3
    assert report.chunks_embedded == 0 and report.chunks_from_cache >= 3


def test_a_chunk_is_embedded_with_its_path(workspace: Path) -> None:
    """The stored vector is the model's vector of the path, a newline and the text,
    so the same text at two paths gets two vectors."""
    from codesift.indexer.embed import make_embedder
    from codesift.indexer.model import embedding_text

    settings = load_settings(workspace)
    shutil.copytree(workspace / "app", workspace / "app_copy")
    index_workspace(workspace, settings)
    store = Store(index_uri_for(workspace, settings))
    rows = store._table("chunks").to_arrow().select(["path", "text", "vector"]).to_pylist()
    first = next(r for r in rows if r["path"].startswith("app/"))
    twin = next(
        r for r in rows if r["path"] == "app_copy/" + first["path"][4:] and r["text"] == first["text"]
    )
    want = make_embedder(settings.embed).embed_documents([embedding_text(first["path"], first["text"])])[0]
    assert float(np.dot(np.asarray(first["vector"]), want)) > 0.999
    assert float(np.dot(np.asarray(first["vector"]), np.asarray(twin["vector"]))) < 0.999


class _FixedEmbeddings(BaseHTTPRequestHandler):
    """An OpenAI-compatible endpoint on loopback: 8-dim vectors from text length."""

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        data = [
            {"index": i, "embedding": [float(len(t) % 7 + 1)] + [1.0] * 7}
            for i, t in enumerate(body["input"])
        ]
        payload = json.dumps({"data": data, "model": body["model"]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args: object) -> None:
        return None


def test_model_change_rebuilds_never_mixes(workspace: Path) -> None:
    index_workspace(workspace, load_settings(workspace))
    server = ThreadingHTTPServer(("127.0.0.1", 0), _FixedEmbeddings)
    server.timeout = 0.1
    stop = threading.Event()

    def serve() -> None:  # not serve_forever: its shutdown() once waited forever in a full run
        while not stop.is_set():
            server.handle_request()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        other = load_settings(
            workspace,
            {
                "embed": {
                    "provider": "openai",
                    "model": "tiny-8",
                    "endpoint": f"http://127.0.0.1:{server.server_port}/v1",
                    "dimension": 8,
                }
            },
        )
        report = index_workspace(workspace, other)
    finally:
        stop.set()
        thread.join(timeout=5)
        server.server_close()
    assert report.rebuilt and "model" in report.rebuild_reason
    st = index_status(workspace, other)
    assert st.dimension == 8 and st.vectors_pending == 0
    table = Store(index_uri_for(workspace, other))._table("chunks").to_arrow()
    assert {len(v) for v in table.column("vector").to_pylist()} == {8}


def test_schema_version_change_rebuilds(workspace: Path) -> None:
    settings = load_settings(workspace)
    index_workspace(workspace, settings)
    db = lancedb.connect(index_uri_for(workspace, settings))
    db.open_table(META).update(where="key = 'schema_version'", values={"value": "0"})
    report = index_workspace(workspace, settings)
    assert report.rebuilt and report.rebuild_reason.startswith("schema version 0")
    assert index_status(workspace, settings).schema_version >= 1


def test_index_and_status_json_carry_the_documented_fields(workspace: Path) -> None:
    res = run_cli("index", str(workspace), "--json")
    assert res.returncode == 0, res.stderr
    report = json.loads(res.stdout)
    assert {"files_changed", "files_removed", "chunks_embedded", "seconds"} <= set(report)
    res = run_cli("status", str(workspace), "--json")
    st = json.loads(res.stdout)
    assert {
        "files_indexed",
        "files_skipped",
        "files_failed",
        "chunks",
        "symbols",
        "vectors_done",
        "vectors_pending",
        "schema_version",
        "model",
        "index_bytes",
        "reader",
    } <= set(st)
    assert st["files_indexed"] == 5 and st["vectors_pending"] == 0
    assert st["reader"] in ("io_uring", "pread")


def test_index_of_a_tree_its_own_gitignore_hides_says_why_it_is_empty(tmp_path: Path) -> None:
    """A Debian-style source tree (``.gitignore`` = ``/*``, no git repository)."""
    root = tmp_path / "linux-source"
    (root / "kernel").mkdir(parents=True)
    (root / ".gitignore").write_text("/*\n", encoding="utf-8")
    (root / "kernel" / "fork.c").write_text("int copy_process(void) { return 0; }\n", encoding="utf-8")
    res = run_cli("index", str(root), "--no-embed")
    assert res.returncode == 0, res.stderr
    text = " ".join(res.stdout.split())
    assert ".gitignore rules hide all 2 files" in text and "index.respect_gitignore = false" in text
    report = json.loads(run_cli("index", str(root), "--no-embed", "--json").stdout)
    assert report["files_seen"] == 0 and "respect_gitignore" in report["note"]


def test_status_of_a_workspace_without_index_says_how_to_build_it(tmp_path: Path) -> None:
    res = run_cli("status", str(tmp_path))
    assert res.returncode == 1
    assert "codesift index" in res.stderr


def test_two_index_runs_at_once_one_waits_and_the_index_stays_whole(workspace: Path) -> None:
    settings = load_settings(workspace)
    uri = index_uri_for(workspace, settings)
    with writer_lock(uri, wait=False):
        busy = run_cli("index", str(workspace), "--no-wait")
        assert busy.returncode == 3
        assert "another codesift process" in busy.stderr and str(os.getpid()) in busy.stderr
        waiting = subprocess.Popen(
            [*CODESIFT, "index", str(workspace), "--json"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert waiting.stderr is not None
        first_line = waiting.stderr.readline()  # blocks until the child says it waits
        assert "waiting" in first_line
        assert waiting.poll() is None  # blocked on the lock, not racing
    stdout, _ = waiting.communicate(timeout=300)
    assert waiting.returncode == 0
    assert json.loads(stdout)["files_changed"] == 5
    assert index_status(workspace, settings).vectors_pending == 0


def test_concurrent_index_runs_both_finish_with_a_whole_index(workspace: Path) -> None:
    procs = [
        subprocess.Popen(
            [*CODESIFT, "index", str(workspace), "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        for _ in range(2)
    ]
    for p in procs:
        p.communicate(timeout=300)
        assert p.returncode == 0
    st = index_status(workspace, load_settings(workspace))
    assert st.files_indexed == 5 and st.vectors_pending == 0
    assert len(chunk_ids(workspace)) == st.chunks


def test_bad_input_is_skipped_with_reasons_and_the_run_completes(workspace: Path) -> None:
    (workspace / "blob.bin").write_bytes(bytes(range(256)) * 64)
    with open(workspace / "huge.txt", "wb") as fh:  # 50 MB, sparse: cheap to make
        fh.truncate(50 * 1024 * 1024)
    (workspace / "latin1.py").write_bytes(b"# caf\xe9\ndef cafe():\n    return 1\n")
    (workspace / "nul.txt").write_bytes(b"text\x00with a nul byte\n")
    (workspace / "broken.py").write_text("def broken(:\n    return [1, 2\n\nclass Fine:\n    pass\n")
    (workspace / "loop").symlink_to(workspace, target_is_directory=True)
    outside = workspace.parent / "outside.py"
    outside.write_text("SECRET = 1\n")
    (workspace / "escape.py").symlink_to(outside)
    os.mkfifo(workspace / "pipe.fifo")
    res = run_cli("index", str(workspace), "--json")
    assert res.returncode == 0, res.stderr
    st = json.loads(run_cli("status", str(workspace), "--json").stdout)
    reasons = {r["path"]: r["reason"] for r in st["skipped"] + st["failed"] + st["notes"]}
    assert reasons["blob.bin"].startswith("binary")
    assert reasons["huge.txt"].startswith("too large")
    assert reasons["nul.txt"].startswith("binary")
    assert "invalid UTF-8" in reasons["latin1.py"]
    assert "syntax errors" in reasons["broken.py"]
    assert reasons["loop"].startswith("symlink loop")
    assert reasons["escape.py"].startswith("symlink leaves the workspace")
    assert reasons["pipe.fifo"].startswith("not a regular file")
    # the broken file and the latin-1 file are still searchable
    ids = Store(index_uri_for(workspace, load_settings(workspace)))._table("chunks").to_arrow()
    paths = set(ids.column("path").to_pylist())
    assert {"broken.py", "latin1.py"} <= paths
    assert "escape.py" not in paths
