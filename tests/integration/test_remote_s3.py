"""Publish and overlay against a real S3 API on 127.0.0.1 (moto's server, per DESIGN.md).

Credentials and endpoint reach LanceDB the standard way, through the AWS_*
environment, exactly as a CI job or a laptop would set them.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
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

from codesift.indexer import lease
from codesift.indexer.embed import Embedder, make_embedder
from codesift.indexer.errors import IndexBusyError, StoreError
from codesift.indexer.progress import Progress
from codesift.indexer.publish import publish
from codesift.indexer.remote import Manifest, RemoteIndex
from codesift.indexer.settings import Settings, load_settings
from codesift.indexer.store import CHUNKS, Store
from codesift.indexer.sync import index_status, index_uri_for, index_workspace

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


class Link:
    """A TCP hop between codesift and the S3 server that a test cuts and mends: ``up``
    forwards, ``down`` refuses connections (the store went away), ``silent`` accepts them
    and never answers (a dead network, a hung proxy). moto keeps its buckets meanwhile."""

    def __init__(self, target: str) -> None:
        self.target = ("127.0.0.1", int(target.rsplit(":", 1)[1]))
        self.mode = "up"
        self._conns: list[socket.socket] = []
        self._lock = threading.Lock()
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self._listener: socket.socket | None = None
        self._listen()

    def _listen(self) -> None:
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", self.port))
        sock.listen(64)
        self._listener = sock
        threading.Thread(target=self._accept, args=(sock,), daemon=True).start()

    def _accept(self, sock: socket.socket) -> None:
        while True:
            try:
                conn, _ = sock.accept()
            except OSError:
                return
            with self._lock:
                self._conns.append(conn)
                mode = self.mode
            if mode == "up":
                try:
                    upstream = socket.create_connection(self.target)
                except OSError:
                    conn.close()
                    continue
                with self._lock:
                    self._conns.append(upstream)
                for a, b in ((conn, upstream), (upstream, conn)):
                    threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    @staticmethod
    def _pump(src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (src, dst):
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)

    def _drop_connections(self) -> None:
        with self._lock:
            conns, self._conns = self._conns, []
        for c in conns:
            with contextlib.suppress(OSError):
                c.shutdown(socket.SHUT_RDWR)
            c.close()

    def set(self, mode: str) -> None:
        self._drop_connections()  # pooled keep-alive connections die with the network
        self.mode = mode
        if mode == "down" and self._listener is not None:
            self._listener.close()
            self._listener = None
        elif mode != "down" and self._listener is None:
            self._listen()


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


@pytest.mark.parametrize("point", ["parse:2", "embed", "manifest"])
def test_a_publish_killed_half_way_publishes_nothing_and_the_next_one_repairs(
    tmp_path: Path, s3: S3Server, embedder: Embedder, point: str
) -> None:
    ci = write_workspace(tmp_path / "ci")
    commit_all(ci)
    uri = f"s3://{s3.bucket()}/team"
    killed = subprocess.run(
        [*CODESIFT, "index", str(ci), "--to", uri, "--lease", "3"],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "CODESIFT_KILL_AT": point},
    )
    assert killed.returncode == -signal.SIGKILL
    assert RemoteIndex(uri, 5).manifest() is None  # rows may be there, but nothing is published

    laptop = laptop_copy(ci, tmp_path / "laptop", uri)
    report = index_workspace(laptop, load_settings(laptop), embedder=embedder)
    assert report.files_from_remote == 0 and "nothing is published" in report.note

    waited: list[str] = []  # the killed publisher's lock lasts until its lease runs out
    again = publish(ci, uri, load_settings(ci), embedder=embedder, on_wait=waited.append)
    assert again.published and waited and "holds the lock" in waited[0]
    if point != "parse:2":
        assert again.index.files_changed == 0  # the rows were whole: only vectors (or the manifest) left
    index_workspace(laptop, load_settings(laptop), embedder=embedder)
    st = index_status(laptop, load_settings(laptop))  # its own rows equal the remote's: no overlay
    assert st.remote is not None and st.remote.commit == again.commit and st.remote.overlay_files == 1


@pytest.fixture
def link(s3: S3Server, monkeypatch: pytest.MonkeyPatch) -> Iterator[Link]:
    """This process reaches the store through a link the test cuts; moto stays up behind it."""
    hop = Link(s3.endpoint)
    monkeypatch.setenv("AWS_ENDPOINT_URL", hop.endpoint)
    yield hop
    hop.set("down")


def _overlay_with_timeout(ci: Path, dest: Path, uri: str, seconds: int) -> Path:
    laptop = laptop_copy(ci, dest, uri)
    (laptop / ".codesift.toml").write_text(f'[index]\nremote = "{uri}"\nremote_timeout_s = {seconds}\n')
    return laptop


def test_a_remote_unreachable_at_open_indexes_alone_then_copies_once_it_answers(
    tmp_path: Path, s3: S3Server, link: Link, embedder: Embedder
) -> None:
    ci = write_workspace(tmp_path / "ci")
    head = commit_all(ci)
    uri = f"s3://{s3.bucket()}/team"
    publish(ci, uri, load_settings(ci), embedder=embedder)
    laptop = _overlay_with_timeout(ci, tmp_path / "laptop", uri, 2)

    link.set("down")
    report = index_workspace(laptop, load_settings(laptop), embed=False)
    assert report.files_from_remote == 0 and report.files_changed == 6
    assert "answering from the local index" in report.note
    st = index_status(laptop, load_settings(laptop))
    assert st.files_indexed == 6 and st.remote is not None and not st.remote.reachable
    assert st.remote.state == "unreachable, answering from the local index alone (nothing copied yet)"

    link.set("up")
    again = index_workspace(laptop, load_settings(laptop), embed=False)
    assert not again.note and again.files_changed == 0  # its own rows are the remote's content
    st = index_status(laptop, load_settings(laptop))
    assert st.remote is not None and st.remote.state == "reachable" and st.remote.commit == head
    assert st.remote.overlay_files == 1  # .codesift.toml


def test_a_silent_remote_holds_an_index_run_and_status_no_longer_than_the_timeout(
    tmp_path: Path, s3: S3Server, link: Link, embedder: Embedder
) -> None:
    ci = write_workspace(tmp_path / "ci")
    head = commit_all(ci)
    uri = f"s3://{s3.bucket()}/team"
    publish(ci, uri, load_settings(ci), embedder=embedder)
    laptop = _overlay_with_timeout(ci, tmp_path / "laptop", uri, 2)
    index_workspace(laptop, load_settings(laptop), embedder=embedder)

    link.set("silent")  # connections are accepted, nothing ever answers
    (laptop / "app/ledger.py").write_text("def settle_ledger(ledger):\n    return sum(ledger)\n")
    report = index_workspace(laptop, load_settings(laptop), embedder=embedder)
    assert report.files_changed == 1 and "did not answer" in report.note
    assert report.phase_seconds["remote"] < 4  # 2 s, and slack for a loaded machine
    started = time.monotonic()
    st = index_status(laptop, load_settings(laptop))
    assert time.monotonic() - started < 4
    assert (
        st.remote is not None and st.remote.state == f"unreachable, answering from the local copy of {head}"
    )
    hits = json.loads(cli("search", "settle the ledger", "--json", "--root", str(laptop)).stdout)
    assert hits["hits"][0]["path"] == "app/ledger.py"


def test_the_store_going_away_mid_session_and_coming_back_with_a_newer_publish(
    tmp_path: Path, s3: S3Server, link: Link, embedder: Embedder
) -> None:
    ci = write_workspace(tmp_path / "ci")
    head = commit_all(ci)
    uri = f"s3://{s3.bucket()}/team"
    publish(ci, uri, load_settings(ci), embedder=embedder)
    laptop = _overlay_with_timeout(ci, tmp_path / "laptop", uri, 2)
    index_workspace(laptop, load_settings(laptop), embedder=embedder)

    link.set("down")
    (laptop / "app/ledger.py").write_text("def settle_ledger(ledger):\n    return sum(ledger)\n")
    started = time.monotonic()
    report = index_workspace(laptop, load_settings(laptop), embedder=embedder)
    assert time.monotonic() - started < 60
    assert report.files_changed == 1 and "answering from the local index" in report.note
    assert head in report.note  # the local copy is as of the published commit
    hits = json.loads(cli("search", "check a password", "--json", "--root", str(laptop)).stdout)
    assert hits["hits"] and hits["hits"][0]["path"] == "app/auth.py"
    shown = cli("status", str(laptop)).stdout
    assert f"unreachable, answering from the local copy of {head}" in " ".join(shown.split())
    with pytest.raises(StoreError, match="cannot reach"):
        RemoteIndex(uri, 2).manifest()

    # CI publishes a newer commit while this laptop is offline; the laptop pulls it.
    (ci / "app/upload.py").write_text("def upload_in_parts(blob):\n    return [blob]\n")
    newer = commit_all(ci)
    direct = {**os.environ, "AWS_ENDPOINT_URL": s3.endpoint}
    done = subprocess.run(
        [*CODESIFT, "index", str(ci), "--to", uri], capture_output=True, text=True, env=direct
    )
    assert done.returncode == 0, done.stderr
    shutil.copy(ci / "app/upload.py", laptop / "app/upload.py")

    link.set("up")
    back = index_workspace(laptop, load_settings(laptop), embedder=embedder)
    assert not back.note and back.files_from_remote == 1 and back.chunks_embedded == 0
    st = index_status(laptop, load_settings(laptop))
    assert st.remote is not None and st.remote.state == "reachable" and st.remote.commit == newer


@pytest.mark.parametrize("round", range(4))
def test_only_one_of_racing_writers_takes_the_lock(s3: S3Server, round: int) -> None:
    # Several rounds: a lost create can land as an overwrite on top of the winner's
    # (seen once in a dozen rounds before the lock read the owner from version 1).
    uri = f"s3://{s3.bucket()}/team"
    start = threading.Barrier(6)
    got: list[lease.Lease] = []
    busy: list[str] = []
    failed: list[BaseException] = []

    def take() -> None:
        start.wait()
        try:
            got.append(lease.acquire(uri, 5, lease_s=30, wait=False))
        except IndexBusyError as exc:
            busy.append(str(exc))
        except BaseException as exc:
            failed.append(exc)

    racers = [threading.Thread(target=take) for _ in range(6)]
    for t in racers:
        t.start()
    for t in racers:
        t.join()
    assert not failed and len(got) == 1 and len(busy) == 5, (failed, busy)
    assert all("this run wrote nothing" in b for b in busy)
    got[0].check()
    got[0].release()
    after = lease.acquire(uri, 5, lease_s=30, wait=False)  # released: free at once
    assert after.generation == got[0].generation + 1
    after.release()


def test_an_expired_lock_is_taken_over_and_the_old_holder_cannot_publish(s3: S3Server) -> None:
    uri = f"s3://{s3.bucket()}/team"
    first = lease.acquire(uri, 5, lease_s=3, wait=False)
    first._stop.set()  # the holder hangs (a paused VM, a cut network): no more renewals
    waited: list[str] = []
    second = lease.acquire(uri, 5, lease_s=30, on_wait=waited.append)
    assert waited and "holds the lock" in waited[0]
    assert second.generation == first.generation + 1
    with pytest.raises(lease.LeaseLostError):
        first.check()  # what a publish runs just before its manifest
    second.check()
    second.release()


def _files_of(uri: str, manifest: Manifest) -> list[str]:
    return RemoteIndex(uri, 5).pinned("files", manifest).to_arrow().column("path").to_pylist()


def test_two_concurrent_publishes_serialise_and_readers_see_one_whole_index(
    tmp_path: Path, s3: S3Server, embedder: Embedder
) -> None:
    jobs = [write_workspace(tmp_path / f"ci{i}") for i in range(2)]
    uri = f"s3://{s3.bucket()}/team"
    commit_all(jobs[0])
    publish(jobs[0], uri, load_settings(jobs[0]), embedder=embedder)
    before = RemoteIndex(uri, 5).manifest()
    assert before is not None
    commits = []
    for i, job in enumerate(jobs):  # both jobs rewrite the same files, differently
        (job / "app/auth.py").write_text(f"def login_of_job_{i}(user):\n    return user\n")
        (job / "app/ledger.py").write_text(f"def settle_ledger_of_job_{i}(ledger):\n    return sum(ledger)\n")
        commits.append(commit_all(job))
    procs = [
        subprocess.Popen(
            [*CODESIFT, "index", str(job), "--to", uri],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for job in jobs
    ]
    seen: dict[str, list[str]] = {before.key: []}  # every publish a reader could see meanwhile: its files
    while any(p.poll() is None for p in procs):
        m = RemoteIndex(uri, 5).manifest()
        if m is not None and m.key not in seen:
            seen[m.key] = _files_of(uri, m)
        time.sleep(0.3)
    outs = [p.communicate() for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    assert sum("waiting for it to finish" in err for _, err in outs) == 1  # they ran one after the other
    last = RemoteIndex(uri, 5).manifest()
    assert last is not None and last.commit in commits
    seen[last.key] = _files_of(uri, last)
    del seen[before.key]
    for files in seen.values():  # each publish whole: every file once
        assert sorted(files) == sorted(set(files)) and len(files) == 6

    winner = jobs[commits.index(last.commit)]
    laptop = laptop_copy(winner, tmp_path / "laptop", uri)
    report = index_workspace(laptop, load_settings(laptop), embedder=embedder)
    assert report.files_from_remote == 6 and report.chunks_embedded <= 1  # .codesift.toml
    texts = " ".join(
        Store(index_uri_for(laptop, load_settings(laptop))).table(CHUNKS).to_arrow()["text"].to_pylist()
    )
    job = commits.index(last.commit)
    assert f"login_of_job_{job}" in texts and f"settle_ledger_of_job_{job}" in texts
    assert f"login_of_job_{1 - job}" not in texts and f"settle_ledger_of_job_{1 - job}" not in texts


def test_a_publish_with_no_wait_while_another_runs_exits_3_and_publishes_nothing(
    tmp_path: Path, s3: S3Server, embedder: Embedder
) -> None:
    ci = write_workspace(tmp_path / "ci")
    commit_all(ci)
    other = write_workspace(tmp_path / "other")
    (other / "app/auth.py").write_text("def login_of_the_other_job(user):\n    return user\n")
    commit_all(other)
    uri = f"s3://{s3.bucket()}/team"
    second: list[subprocess.CompletedProcess[str]] = []

    def start_the_other_job(p: Progress) -> None:
        if p.phase == "embed" and not second:  # the first job holds the lock, rows half-published
            second.append(cli("index", str(other), "--to", uri, "--no-wait"))

    first = publish(ci, uri, load_settings(ci), embedder=embedder, progress=start_the_other_job)
    assert second[0].returncode == 3, second[0].stderr
    assert "holds the lock" in second[0].stderr and "this run wrote nothing" in second[0].stderr
    manifest = RemoteIndex(uri, 5).manifest()
    assert first.published and manifest is not None and manifest.commit == first.commit
    files = _files_of(uri, manifest)
    assert len(files) == len(set(files)) == 5
