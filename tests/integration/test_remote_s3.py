"""Publish and overlay against a real S3 API on 127.0.0.1 (moto's server, per DESIGN.md).

Credentials and endpoint reach LanceDB the standard way, through the AWS_*
environment, exactly as a CI job or a laptop would set them.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from codesift.indexer.embed import Embedder, make_embedder
from codesift.indexer.errors import StoreError
from codesift.indexer.publish import publish
from codesift.indexer.remote import RemoteIndex
from codesift.indexer.settings import Settings, load_settings
from codesift.indexer.store import CHUNKS, Store
from codesift.indexer.sync import Progress, index_status, index_uri_for, index_workspace

from ..conftest import require_tool, write_workspace
from .test_remote import commit_all, laptop_copy

pytestmark = pytest.mark.slow

CODESIFT = [sys.executable, "-m", "codesift.server.cli"]


@dataclass
class S3Server:
    endpoint: str
    process: subprocess.Popen[bytes]

    def bucket(self) -> str:
        import boto3

        name = f"idx-{uuid.uuid4().hex[:12]}"
        boto3.client("s3", endpoint_url=self.endpoint, region_name="us-east-1").create_bucket(Bucket=name)
        return name

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(timeout=10)


def _start_server() -> S3Server:
    try:
        import moto.server  # noqa: F401
    except ImportError:
        require_tool(None, "pip install 'moto[server]' (the test extra)")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 30
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            break
        except OSError:
            if time.monotonic() > deadline or proc.poll() is not None:
                proc.kill()
                pytest.fail("moto's S3 server did not start on 127.0.0.1")
            time.sleep(0.1)
    return S3Server(f"http://127.0.0.1:{port}", proc)


@pytest.fixture(scope="module")
def server() -> Iterator[S3Server]:
    srv = _start_server()
    yield srv
    srv.stop()


def _aws_env(monkeypatch: pytest.MonkeyPatch, endpoint: str) -> None:
    for key, value in {
        "AWS_ACCESS_KEY_ID": "test",
        "AWS_SECRET_ACCESS_KEY": "test",
        "AWS_REGION": "us-east-1",
        "AWS_ENDPOINT_URL": endpoint,
    }.items():
        monkeypatch.setenv(key, value)


@pytest.fixture
def s3(server: S3Server, monkeypatch: pytest.MonkeyPatch) -> S3Server:
    _aws_env(monkeypatch, server.endpoint)
    return server


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    return make_embedder(Settings().embed)


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CODESIFT, *args], capture_output=True, text=True, timeout=300)


def test_publish_and_overlay_through_s3(tmp_path: Path, s3: S3Server, embedder: Embedder) -> None:
    ci = write_workspace(tmp_path / "ci")
    head = commit_all(ci)
    uri = f"s3://{s3.bucket()}/monorepo"
    published = publish(ci, uri, load_settings(ci), embedder=embedder)
    assert published.published and published.commit == head
    manifest = RemoteIndex(uri, 5).manifest()
    assert manifest is not None and manifest.files == 5 and manifest.vectors == manifest.chunks

    laptop = laptop_copy(ci, tmp_path / "laptop", uri)
    (laptop / "app/config.py").unlink()
    report = index_workspace(laptop, load_settings(laptop), embedder=embedder)
    assert report.files_from_remote == 4 and report.files_changed == 1  # .codesift.toml
    assert report.chunks_embedded <= 1  # only .codesift.toml's chunk: CI's vectors are reused

    hits = json.loads(cli("search", "retry failed uploads", "--json", "--root", str(laptop)).stdout)
    assert hits["hits"][0]["path"] == "app/upload.py"
    assert all(h["path"] != "app/config.py" for h in hits["hits"])
    status = json.loads(cli("status", str(laptop), "--json").stdout)
    assert status["remote"]["reachable"] and status["remote"]["commit"] == head


def test_publishing_to_a_missing_bucket_fails_with_the_reason(tmp_path: Path, s3: S3Server) -> None:
    ci = write_workspace(tmp_path / "ci")
    done = cli("index", str(ci), "--to", "s3://no-such-bucket-here/x", "--no-embed")
    assert done.returncode == 2
    assert "cannot reach s3://no-such-bucket-here/x: the bucket does not exist" in done.stderr


def test_a_reader_during_a_publish_sees_the_previous_publish(
    tmp_path: Path, s3: S3Server, embedder: Embedder
) -> None:
    ci = write_workspace(tmp_path / "ci")
    commit_all(ci)
    uri = f"s3://{s3.bucket()}/team"
    publish(ci, uri, load_settings(ci), embedder=embedder)
    first = RemoteIndex(uri, 5).manifest()
    (ci / "app/auth.py").write_text("def replaced_by_the_second_publish():\n    return 0\n")
    commit_all(ci)
    seen: list[tuple[str, int]] = []

    def read_mid_publish(p: Progress) -> None:
        if p.phase == "embed" and not seen:  # the new rows are at the URI, their vectors not yet
            laptop = write_workspace(tmp_path / "reader")
            (laptop / ".codesift.toml").write_text(f'[index]\nremote = "{uri}"\n')
            report = index_workspace(laptop, load_settings(laptop), embed=False)
            manifest = RemoteIndex(uri, 5).manifest()
            seen.append((manifest.key if manifest else "", report.files_from_remote))

    second = publish(ci, uri, load_settings(ci), embedder=embedder, progress=read_mid_publish)
    assert first is not None and seen == [(first.key, 5)]  # all five files, auth.py as first published
    texts = Store(index_uri_for(tmp_path / "reader", Settings())).table(CHUNKS).to_arrow().column("text")
    assert not any("replaced_by" in t for t in texts.to_pylist())
    assert second.published and RemoteIndex(uri, 5).manifest() != first


def test_a_publish_killed_half_way_publishes_nothing_and_the_next_one_repairs(
    tmp_path: Path, s3: S3Server, embedder: Embedder
) -> None:
    ci = write_workspace(tmp_path / "ci")
    commit_all(ci)
    uri = f"s3://{s3.bucket()}/team"
    killed = subprocess.run(
        [*CODESIFT, "index", str(ci), "--to", uri],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "CODESIFT_KILL_AT": "embed"},
    )
    assert killed.returncode == -signal.SIGKILL
    assert RemoteIndex(uri, 5).manifest() is None  # rows are there, but nothing is published

    laptop = laptop_copy(ci, tmp_path / "laptop", uri)
    report = index_workspace(laptop, load_settings(laptop), embedder=embedder)
    assert report.files_from_remote == 0 and "nothing is published" in report.note

    again = publish(ci, uri, load_settings(ci), embedder=embedder)
    assert again.published and again.index.files_changed == 0  # the rows were whole: only vectors left
    index_workspace(laptop, load_settings(laptop), embedder=embedder)
    st = index_status(laptop, load_settings(laptop))  # its own rows equal the remote's: no overlay
    assert st.remote is not None and st.remote.commit == again.commit and st.remote.overlay_files == 1


def test_the_store_going_away_leaves_the_editor_answering(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, embedder: Embedder
) -> None:
    own = _start_server()  # this test stops its server
    try:
        _aws_env(monkeypatch, own.endpoint)
        ci = write_workspace(tmp_path / "ci")
        head = commit_all(ci)
        uri = f"s3://{own.bucket()}/team"
        publish(ci, uri, load_settings(ci), embedder=embedder)
        laptop = laptop_copy(ci, tmp_path / "laptop", uri)
        (laptop / ".codesift.toml").write_text(f'[index]\nremote = "{uri}"\nremote_timeout_s = 2\n')
        index_workspace(laptop, load_settings(laptop), embedder=embedder)
    finally:
        own.stop()

    (laptop / "app/ledger.py").write_text("def settle_ledger(ledger):\n    return sum(ledger)\n")
    started = time.monotonic()
    report = index_workspace(laptop, load_settings(laptop), embedder=embedder)
    assert time.monotonic() - started < 60
    assert report.files_changed == 1 and "answering from the local index" in report.note
    assert head in report.note  # the local copy is as of the published commit
    hits = json.loads(cli("search", "check a password", "--json", "--root", str(laptop)).stdout)
    assert hits["hits"] and hits["hits"][0]["path"] == "app/auth.py"
    st = index_status(laptop, load_settings(laptop))
    assert st.remote is not None and not st.remote.reachable and st.remote.commit == head
    with pytest.raises(StoreError, match="cannot reach"):
        RemoteIndex(uri, 2).manifest()


def test_two_concurrent_publishes_leave_one_whole_index(
    tmp_path: Path, s3: S3Server, embedder: Embedder
) -> None:
    jobs = [write_workspace(tmp_path / f"ci{i}") for i in range(2)]
    for job in jobs:
        commit_all(job)
    uri = f"s3://{s3.bucket()}/team"
    outcomes: list[object] = []

    def run(job: Path) -> None:
        try:
            outcomes.append(publish(job, uri, load_settings(job), embedder=embedder).published)
        except StoreError as exc:
            outcomes.append(exc)

    publish(jobs[0], uri, load_settings(jobs[0]), embedder=embedder)
    for job in jobs:  # both jobs refresh the same files
        (job / "app/auth.py").write_text("def replaced_login(user):\n    return user\n")
        (job / "app/ledger.py").write_text("def settle_ledger(ledger):\n    return sum(ledger)\n")
        commit_all(job)
    threads = [threading.Thread(target=run, args=(job,)) for job in jobs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert True in outcomes, outcomes  # at least one landed; a loser fails with a reason, never silently
    laptop = laptop_copy(jobs[0], tmp_path / "laptop", uri)
    report = index_workspace(laptop, load_settings(laptop), embedder=embedder)
    # Two refreshes of one URI at once are not locked against each other (DECISIONS: a CI
    # concurrency group keeps them apart); both may append a file's rows. Readers copy each once.
    assert report.files_from_remote == 6 and report.files_changed == 1  # .codesift.toml
    store = Store(index_uri_for(laptop, load_settings(laptop)))
    ids = store.table(CHUNKS).to_arrow().column("id").to_pylist()
    assert len(ids) == len(set(ids))
    paths = store.table("files").to_arrow().column("path").to_pylist()
    assert len(paths) == len(set(paths)) == 7
    texts = [t for t in store.table(CHUNKS).to_arrow().column("text").to_pylist() if "replaced_login" in t]
    assert len(texts) == 1
