"""Publish an index (`codesift index --to`) and overlay it (`index.remote`), on a local path.

Real LanceDB, real model, real git. The object-store variant, against an S3 API
on loopback, is tests/e2e/test_remote_s3.py.
"""

from __future__ import annotations

import dataclasses
import errno
import json
import logging
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from codesift.indexer import clone
from codesift.indexer.embed import Embedder, make_embedder
from codesift.indexer.progress import Progress
from codesift.indexer.publish import publish
from codesift.indexer.remote import RemoteIndex
from codesift.indexer.settings import Settings, load_settings
from codesift.indexer.store import CHUNKS, Store
from codesift.indexer.sync import index_status, index_uri_for, index_workspace, wanted_meta

from ..conftest import write_workspace

pytestmark = pytest.mark.slow

CODESIFT = [sys.executable, "-m", "codesift.server.cli"]


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    return make_embedder(Settings().embed)


def commit_all(root: Path) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t"}
    env["GIT_COMMITTER_EMAIL"] = "t@t"
    subprocess.run(["git", "-C", str(root), "add", "-A"], check=True, env=env)
    subprocess.run(["git", "-C", str(root), "commit", "-qm", "x"], check=True, env=env)
    return subprocess.run(
        ["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()


def laptop_copy(ci: Path, dest: Path, remote: str) -> Path:
    """A second checkout of the same files (no index), configured to overlay ``remote``."""
    shutil.copytree(ci, dest, ignore=shutil.ignore_patterns(".codesift", ".git"))
    (dest / ".codesift.toml").write_text(f'[index]\nremote = "{remote}"\n')
    return dest


def with_remote(settings: Settings, remote: str) -> Settings:
    return dataclasses.replace(settings, index=dataclasses.replace(settings.index, remote=remote))


def cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CODESIFT, *args], capture_output=True, text=True, cwd=cwd, timeout=300)


def test_publish_writes_a_manifest_with_commit_model_and_settings(tmp_path: Path, embedder: Embedder) -> None:
    ci = write_workspace(tmp_path / "ci")
    head = commit_all(ci)
    target = tmp_path / "team-index"
    report = publish(ci, str(target), load_settings(ci), embedder=embedder)
    assert report.published and report.commit == head
    manifest = RemoteIndex(str(target), 5).manifest()
    assert manifest is not None and manifest.commit == head
    assert manifest.files == 5 and manifest.chunks == manifest.vectors > 0
    assert manifest.meta.model_id == embedder.model_id
    # the settings that shape the index, and the fast tier's model beside them
    assert manifest.meta.fingerprint == wanted_meta(load_settings(ci), embedder).fingerprint
    assert manifest.meta.fast_model_id.startswith("static:")
    assert not (ci / ".codesift").exists()  # publishing writes only the target

    again = publish(ci, f"file://{target}", load_settings(ci), embedder=embedder)
    assert again.index.files_changed == 0 and again.index.chunks_embedded == 0  # incremental


def test_overlay_copies_matching_files_and_parses_only_what_differs(
    tmp_path: Path, embedder: Embedder
) -> None:
    ci = write_workspace(tmp_path / "ci")
    commit_all(ci)
    target = tmp_path / "team-index"
    published = publish(ci, str(target), load_settings(ci), embedder=embedder)
    laptop = laptop_copy(ci, tmp_path / "laptop", str(target))
    (laptop / "app/config.py").unlink()  # deleted here: hides the remote's rows
    upload = laptop / "app/upload.py"  # edited here: local rows win
    upload.write_text(
        upload.read_text() + "\n\ndef abandon_upload(client, blob_id):\n    return client.drop(blob_id)\n"
    )
    (laptop / "app/billing.py").write_text("def charge_invoice(invoice):\n    return invoice.total\n")

    report = index_workspace(laptop, load_settings(laptop), embedder=embedder)
    assert report.files_from_remote == 3  # auth.py, client.js, README.md
    assert report.files_changed == 3  # upload.py (edited), billing.py and .codesift.toml (new)
    assert report.files_removed == 0  # config.py was never copied
    assert 0 < report.chunks_embedded < published.index.chunks_embedded  # the edit and the new file only
    assert report.chunks_from_cache >= 1  # upload.py's unchanged chunk: the remote's vector

    store = Store(index_uri_for(laptop, load_settings(laptop)))
    paths = set(store.table(CHUNKS).to_arrow().column("path").to_pylist())
    assert "app/config.py" not in paths and {"app/auth.py", "app/billing.py", "app/upload.py"} <= paths
    assert store.count(CHUNKS, "has_vector = false") == 0

    hits = json.loads(
        cli("search", "abandon_upload", "--mode", "bm25", "--json", "--root", str(laptop)).stdout
    )
    assert hits["hits"][0]["path"] == "app/upload.py"  # the local edit answers
    hits = json.loads(cli("search", "parse_config", "--json", "--root", str(laptop)).stdout)
    assert all(h["path"] != "app/config.py" for h in hits["hits"])  # deleted here: hidden
    hits = json.loads(
        cli(
            "search",
            "check a password against the store",
            "--mode",
            "vector",
            "--json",
            "--root",
            str(laptop),
        ).stdout
    )
    assert hits["hits"][0]["path"] == "app/auth.py"  # the remote's vectors answer
    grep = json.loads(cli("grep", "validateCredentials", "--json", "--root", str(laptop)).stdout)
    assert {p["path"] for p in grep["passages"]} == {"app/auth.py"}
    sym = json.loads(cli("symbols", "AuthService", "--json", "--root", str(laptop)).stdout)
    assert sym["symbols"][0]["symbol"]["path"] == "app/auth.py"
    callers = json.loads(
        cli("callers", "AuthService.validateCredentials", "--json", "--root", str(laptop)).stdout
    )
    assert [c["caller"]["name"] for c in callers["results"][0]["callers"]] == ["login"]

    st = index_status(laptop, load_settings(laptop))
    assert st.remote is not None and st.remote.reachable and not st.remote.refused
    assert st.remote.commit == published.commit
    assert (st.remote.overlay_files, st.remote.hidden_files, st.remote.remote_files) == (3, 1, 5)

    again = index_workspace(laptop, load_settings(laptop), embedder=embedder)
    assert (again.files_from_remote, again.files_changed, again.chunks_embedded) == (0, 0, 0)


def test_a_newer_publish_is_copied_on_the_next_index(tmp_path: Path, embedder: Embedder) -> None:
    ci = write_workspace(tmp_path / "ci")
    commit_all(ci)
    target = tmp_path / "team-index"
    publish(ci, str(target), load_settings(ci), embedder=embedder)
    laptop = laptop_copy(ci, tmp_path / "laptop", str(target))
    index_workspace(laptop, load_settings(laptop), embedder=embedder)

    text = "def settle_ledger(ledger):\n    return sum(ledger)\n"
    for root in (ci, laptop):  # merged upstream, pulled here
        (root / "app/ledger.py").write_text(text)
    head = commit_all(ci)
    publish(ci, str(target), load_settings(ci), embedder=embedder)
    report = index_workspace(laptop, load_settings(laptop), embedder=embedder)
    assert report.files_from_remote == 1 and report.files_changed == 0 and report.chunks_embedded == 0
    st = index_status(laptop, load_settings(laptop))
    assert (
        st.remote is not None and st.remote.commit == head and st.remote.overlay_files == 1
    )  # .codesift.toml


def test_an_interrupted_publish_stays_invisible_to_readers(tmp_path: Path, embedder: Embedder) -> None:
    ci = write_workspace(tmp_path / "ci")
    first = commit_all(ci)
    target = tmp_path / "team-index"
    publish(ci, str(target), load_settings(ci), embedder=embedder)
    before = RemoteIndex(str(target), 5).manifest()

    (ci / "app/auth.py").write_text("def replaced():\n    return 0\n")
    (ci / "app/ledger.py").write_text("def settle_ledger(ledger):\n    return sum(ledger)\n")
    commit_all(ci)
    cancel = threading.Event()

    def stop_in_vectors(p: Progress) -> None:
        if p.phase == "embed":
            cancel.set()  # rows are written at the target, vectors half done

    report = publish(
        ci, str(target), load_settings(ci), embedder=embedder, progress=stop_in_vectors, cancel=cancel
    )
    assert not report.published and "previous publish" in report.note
    after = RemoteIndex(str(target), 5).manifest()
    assert before is not None and after is not None and after.key == before.key and after.commit == first

    # a laptop reading now copies the first publish's rows, not the half-written ones
    laptop = write_workspace(tmp_path / "laptop")  # the first commit's files
    (laptop / ".codesift.toml").write_text(f'[index]\nremote = "{target}"\n')
    report = index_workspace(laptop, load_settings(laptop), embedder=embedder)
    assert report.files_from_remote == 5 and report.files_changed == 1  # .codesift.toml itself
    store = Store(index_uri_for(laptop, load_settings(laptop)))
    texts = store.table(CHUNKS).to_arrow().column("text").to_pylist()
    assert not any("replaced" in t for t in texts) and any("validateCredentials" in t for t in texts)


def test_a_remote_with_other_index_settings_is_refused_with_the_reason(
    tmp_path: Path, embedder: Embedder
) -> None:
    ci = write_workspace(tmp_path / "ci")
    commit_all(ci)
    target = tmp_path / "team-index"
    publish(ci, str(target), load_settings(ci), embedder=embedder)
    laptop = laptop_copy(ci, tmp_path / "laptop", str(target))
    (laptop / ".codesift.toml").write_text(f'[index]\nremote = "{target}"\n[chunk]\nmax_lines = 40\n')
    report = index_workspace(laptop, load_settings(laptop), embedder=embedder)
    assert report.files_from_remote == 0 and report.files_changed == 6
    assert "not used" in report.note and "chunking" in report.note
    st = index_status(laptop, load_settings(laptop))
    assert st.remote is not None and "chunking" in st.remote.refused


def test_an_unreachable_remote_leaves_the_local_index_working(tmp_path: Path, embedder: Embedder) -> None:
    laptop = write_workspace(tmp_path / "laptop")
    settings = with_remote(load_settings(laptop), str(tmp_path / "gone"))
    report = index_workspace(laptop, settings, embedder=embedder)
    assert report.files_changed == 5 and "does not exist" in report.note
    assert not (tmp_path / "gone").exists()  # reading never creates the remote
    st = index_status(laptop, settings)
    assert st.remote is not None and not st.remote.reachable and "does not exist" in st.remote.error
    assert not (tmp_path / "gone").exists()


def test_cli_publishes_and_status_reports_the_remote(tmp_path: Path) -> None:
    ci = write_workspace(tmp_path / "ci")
    head = commit_all(ci)
    target = tmp_path / "team-index"
    done = cli("index", str(ci), "--to", f"file://{target}")
    assert done.returncode == 0, done.stderr
    assert f"published commit {head}" in done.stdout
    laptop = laptop_copy(ci, tmp_path / "laptop", f"file://{target}")
    done = cli("index", str(laptop))
    assert done.returncode == 0 and "5 files" in done.stdout and "copied from the remote index" in done.stdout
    status = cli("status", str(laptop))
    assert head in status.stdout and "reachable" in status.stdout
    st = json.loads(cli("status", str(laptop), "--json").stdout)
    assert st["remote"]["commit"] == head and st["remote"]["overlay_files"] == 1  # .codesift.toml

    bad = cli("index", str(ci), "--to", "ftp://example.com/x")
    assert bad.returncode == 2 and "unknown storage scheme" in bad.stderr


def _cross_device(src: object, dst: object) -> None:
    raise OSError(errno.EXDEV, "Invalid cross-device link")


@pytest.mark.parametrize("links", [True, False], ids=["linked", "links-fail"])
def test_a_second_worktree_copies_the_first_ones_rows_and_vectors(
    tmp_path: Path,
    embedder: Embedder,
    links: bool,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    main = write_workspace(tmp_path / "main")
    commit_all(main)
    first = index_workspace(main, load_settings(main), embedder=embedder)
    subprocess.run(["git", "-C", str(main), "worktree", "add", "-q", str(tmp_path / "feature")], check=True)
    feature = tmp_path / "feature"
    (feature / "app/ledger.py").write_text("def settle_ledger(ledger):\n    return sum(ledger)\n")

    if not links:  # another file system: the clone falls back to copying rows, and says so
        monkeypatch.setattr(clone.os, "link", _cross_device)
    with caplog.at_level(logging.INFO, logger="codesift.indexer.clone"):
        report = index_workspace(feature, load_settings(feature), embedder=embedder)
    kept = report.files_linked if links else report.files_from_remote
    assert kept == 5 and report.files_changed == 1  # only ledger.py is parsed
    assert (report.bytes_linked > 0) == links
    assert links or "copying its rows instead" in caplog.text
    monkeypatch.undo()
    assert report.chunks_embedded == 1 < first.chunks_embedded
    st = index_status(feature, load_settings(feature))
    assert st.remote is not None and st.remote.uri == str(main / ".codesift") and st.remote.overlay_files == 1

    alone = load_settings(feature)
    alone = dataclasses.replace(alone, index=dataclasses.replace(alone.index, share_worktrees=False))
    third = tmp_path / "third"
    subprocess.run(["git", "-C", str(main), "worktree", "add", "-q", str(third)], check=True)
    assert index_workspace(third, alone, embedder=embedder).files_from_remote == 0

    other = tmp_path / "other-settings"  # a sibling built with other chunking: skipped, silently
    subprocess.run(["git", "-C", str(main), "worktree", "add", "-q", str(other)], check=True)
    (other / ".codesift.toml").write_text("[chunk]\nmax_lines = 40\n")
    report = index_workspace(other, load_settings(other), embedder=embedder)
    assert report.files_from_remote == 0 and report.note == ""
