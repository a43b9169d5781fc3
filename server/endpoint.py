"""A running server answers the CLI: one local socket per workspace index.

``codesift search`` / ``grep`` / ``symbols`` in a fresh process pay 1–5 s of
imports and model loading before the engine starts; a language server that
already holds the index answers the same question in tens of milliseconds. So
each project of a running ``codesift serve`` listens on a Unix socket, and the
CLI asks there first; with no server (or one it cannot trust) it answers
in-process as before. Both paths produce the same JSON payload and the CLI
prints that, so the output is the same.

Where the socket lives: ``<runtime dir>/codesift-<uid>/<sha256 of the root>.sock``
(``$XDG_RUNTIME_DIR`` when set, else ``$TMPDIR`` or ``/tmp``). Not under the
workspace's ``.codesift/``: a Unix socket path is limited to 107 bytes (deep
workspaces exceed it), the index may be configured elsewhere or on ``s3://``,
and the workspace may be readable by others. The folder is ``0700`` and must be
ours; the socket is ``0600``; each side checks the other's uid (``SO_PEERCRED``).

One request per connection: the CLI writes one JSON object and shuts its side;
the server writes one JSON object and closes. A request names the protocol and
a fingerprint of codesift's code (``version``); a server running other code
refuses and the CLI answers in-process. A socket left by a dead server refuses connections: the CLI answers
in-process, and the next server for that root replaces the file.

One owner per root: beside the socket, ``<hash>.lock`` is held with ``flock`` by
the process that serves it, for as long as it does (the kernel lets go when the
process dies, even by kill -9). A second server (an editor's language server, a
background one, a second background one started at the same moment) fails to
take the lock and does not publish: it loses cleanly, never unlinking a live
socket. The lock is the socket's, not the index's: ``codesift index`` never waits
for it.

Besides the CLI's commands, a server answers two of its own whatever its code
version: ``info`` (pid, kind, idle timeout) for ``codesift status`` and ``stop``
(a background server exits; an editor's language server refuses).

The client half (``ask``) imports only the standard library's light modules: it
runs on the CLI's fast path, where every import counts.
"""

from __future__ import annotations

import atexit
import contextlib
import errno
import hashlib
import json
import os
import socket
import stat
import struct
import sys
import time
from collections.abc import Callable
from pathlib import Path

TYPE_CHECKING = False  # typing itself costs the CLI's thin path a few ms
if TYPE_CHECKING:
    from typing import Any


class _Log:
    """This module's logger, made on first use. The CLI's thin path (``thin``) imports
    neither logging nor threading (~10 ms); until something has imported logging, no
    handler exists and a debug or info record would go nowhere, so those are dropped
    without importing it."""

    def __getattr__(self, level: str) -> Callable[..., None]:
        if level in ("debug", "info") and "logging" not in sys.modules:
            return _nowhere
        import logging

        method: Callable[..., None] = getattr(logging.getLogger(__name__), level)
        return method


def _nowhere(*args: object, **kwargs: object) -> None:
    pass


log = _Log()

PROTOCOL = 1
CONNECT_TIMEOUT_S = 1.0
ANSWER_TIMEOUT_S = 600.0  # a grep of a huge tree may take this long; the server's own bounds apply
MAX_REQUEST_BYTES = 1 << 20
MAX_CONNECTIONS = 8  # CLI calls answered at once; more wait for a turn
NO_SERVER_ENV = "CODESIFT_NO_SERVER"  # set (to anything but "" or "0") to always answer in-process
META_COMMANDS = ("info", "stop")  # answered by the endpoint itself, whatever the code version
LANGUAGE_SERVER = "language server"
BACKGROUND = "background"

Reply = dict[str, "Any"]
Handler = Callable[[str, dict[str, "Any"]], Reply]


def version() -> str:
    """What both sides must share: the protocol and the code that computes and prints an
    answer. The size and mtime of every file of the ``codesift.server`` and
    ``codesift.indexer`` packages (an upgrade or an edit changes them), hashed: ~1 ms,
    where ``importlib.metadata`` costs 50–180 ms of the CLI's start. A server takes
    its own when it starts, so one running code older than the files on disk refuses."""
    digest = hashlib.sha256(str(PROTOCOL).encode())
    here = Path(__file__).resolve().parent
    for package in (here, here.parent / "indexer"):
        for folder, dirs, files in os.walk(package):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for name in sorted(files):
                if name.endswith(".py"):
                    st = os.stat(os.path.join(folder, name))
                    digest.update(f"{folder}/{name}:{st.st_size}:{st.st_mtime_ns};".encode())
    return digest.hexdigest()[:16]


def runtime_dir() -> Path:
    """The per-user folder holding the sockets."""
    base = os.environ.get("XDG_RUNTIME_DIR") or os.environ.get("TMPDIR") or "/tmp"
    return Path(base) / f"codesift-{os.getuid()}"


def address(root: Path) -> Path:
    """The socket of the server for the workspace at ``root`` (a resolved path)."""
    digest = hashlib.sha256(os.fsencode(str(root))).hexdigest()[:32]
    return runtime_dir() / f"{digest}.sock"


def lock_path(root: Path) -> Path:
    """The file whose ``flock`` marks the one process serving ``root``'s socket."""
    return address(root).with_suffix(".lock")


def log_path(root: Path) -> Path:
    """Where a background server for ``root`` logs (replaced by each one that starts)."""
    return address(root).with_suffix(".log")


def _private(folder: Path) -> bool:
    """Whether ``folder`` is a real directory of ours that nobody else can enter."""
    try:
        st = os.lstat(folder)
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and not st.st_mode & 0o077


def _peer_uid(sock: socket.socket) -> int:
    creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    return int(struct.unpack("3i", creds)[1])


def _read_all(sock: socket.socket, limit: int | None = None) -> bytes:
    parts: list[bytes] = []
    size = 0
    while chunk := sock.recv(1 << 16):
        parts.append(chunk)
        size += len(chunk)
        if limit is not None and size > limit:
            raise ValueError(f"request larger than {limit} bytes")
    return b"".join(parts)


# ── the CLI's side ───────────────────────────────────────────────────────────


def ask(root: Path, command: str, args: dict[str, Any]) -> Reply | None:
    """The answer of the server running for ``root``, or None when there is none to use
    (no socket, a dead one, another user's, another version, a refusal, a broken reply):
    the caller then answers in-process."""
    return consult(root, command, args)[0]


Outcome = str  # "answered" · "absent" (nobody listens) · "refused" · "unusable"


def consult(root: Path, command: str, args: dict[str, Any]) -> tuple[Reply | None, Outcome]:
    """``ask``, also saying why there is no answer: ``absent`` when no server listens for
    ``root`` (a background one may be started), ``refused`` when one listens but will not
    answer this, ``unusable`` when the CLI must not use one at all (``CODESIFT_NO_SERVER``,
    a folder that is not private, another user's server, a broken answer)."""
    if os.environ.get(NO_SERVER_ENV, "") not in ("", "0"):
        return None, "unusable"
    path = address(root)
    if not _private(path.parent):
        return None, "absent" if not os.path.lexists(path.parent) else "unusable"
    request = {"protocol": PROTOCOL, "version": version(), "root": str(root), "command": command}
    reply, outcome = _exchange(path, {**request, "args": args})
    if reply is None:
        return None, outcome
    if "refused" in reply:
        log.info("the server at %s did not answer: %s", path, reply.get("refused"))
        # A server running code older than the files on disk exits after saying so.
        return None, "absent" if reply.get("exiting") else "refused"
    log.debug("answered by the server at %s", path)
    return reply, "answered"


def request_meta(path: Path, command: str) -> Reply | None:
    """A server's own ``info`` or ``stop`` at the socket ``path`` (any code version);
    None when nothing (usable) listens there."""
    if not _private(path.parent):
        return None
    return _exchange(path, {"protocol": PROTOCOL, "command": command, "args": {}})[0]


def _exchange(path: Path, request: dict[str, Any]) -> tuple[Reply | None, Outcome]:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.settimeout(CONNECT_TIMEOUT_S)
        try:
            sock.connect(str(path))
        except OSError as exc:  # no socket file, or one a dead server left
            log.debug("no server at %s: %s", path, exc)
            gone = exc.errno in (errno.ENOENT, errno.ECONNREFUSED)
            return None, "absent" if gone else "unusable"
        if _peer_uid(sock) != os.getuid():
            log.warning("ignored %s: its server runs as another user", path)
            return None, "unusable"
        sock.sendall(json.dumps(request).encode())
        sock.shutdown(socket.SHUT_WR)
        sock.settimeout(ANSWER_TIMEOUT_S)
        reply = json.loads(_read_all(sock))
    except (OSError, ValueError) as exc:  # a server gone mid-answer, a broken reply
        log.debug("no server answer at %s: %s", path, exc)
        return None, "unusable"
    finally:
        sock.close()
    if not isinstance(reply, dict):
        return None, "unusable"
    return reply, "answered"


# ── the server's side ────────────────────────────────────────────────────────


class Endpoint:
    """Answers CLI requests for one workspace root from a running server.

    ``handler(command, args)`` returns the reply object: ``{"ok": payload}``,
    ``{"error": {"exit": n, "message": …}}``, ``{"usage": …}`` or ``{"refused": …}``.
    ``kind`` is what ``info`` reports (an editor's language server or a background
    server); ``on_stop``, when set, is called for a ``stop`` request (else it is
    refused) and when a request shows the code on disk changed since this server
    started (it can no longer answer that CLI: better gone than refusing).
    """

    def __init__(
        self,
        root: Path,
        handler: Handler | None = None,
        *,
        kind: str = LANGUAGE_SERVER,
        idle_timeout_s: float | None = None,
        on_stop: Callable[[], None] | None = None,
    ) -> None:
        self.root = root
        self.path = address(root)
        self.kind = kind
        self.idle_timeout_s = idle_timeout_s
        self.on_stop = on_stop
        self._handler = handler
        self._version = version()
        import threading  # the server's side only: the CLI's thin path does without

        self._slots = threading.BoundedSemaphore(MAX_CONNECTIONS)
        self._sock: socket.socket | None = None
        self._inode: int | None = None
        self._lock_fd: int | None = None
        self._closed = threading.Event()
        self._started = time.time()
        self._last = time.monotonic()  # the last CLI command answered (or started)
        self._active = 0
        self._answered = 0
        self._count_lock = threading.Lock()

    def open(self) -> bool:
        """Publish the socket and answer on it; False (logged) when another live server
        holds it or the folder is not safe to use."""
        if not self.claim():
            return False
        assert self._handler is not None
        self.serve(self._handler)
        return True

    def claim(self, wait_s: float = 0.0) -> bool:
        """Become the one server of this root: take its lock (waiting up to ``wait_s`` for a
        server on its way out), replace a dead server's socket, bind and listen. Connections
        wait in the backlog until ``serve``. Standard library only: a background server
        claims its socket before it loads the engine, so CLI calls meanwhile queue for it
        instead of starting another one."""
        folder = self.path.parent
        with contextlib.suppress(FileExistsError):
            folder.mkdir(mode=0o700, parents=True)
        if not _private(folder):
            log.warning("the CLI cannot reach this server: %s is not a private folder of this user", folder)
            return False
        if not self._lock(wait_s):
            log.info("another codesift server answers the CLI for %s; this one does not", self.root)
            return False
        if self._alive():  # a server of a codesift that held no lock yet
            log.info("another codesift server answers the CLI for %s; this one does not", self.root)
            self._unlock()
            return False
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()  # a dead server's socket
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old = os.umask(0o177)  # the socket file is 0600 from the start
        try:
            sock.bind(str(self.path))
        except OSError as exc:
            sock.close()
            self._unlock()
            log.info("the CLI socket for %s is taken: %s", self.root, exc)
            return False
        finally:
            os.umask(old)
        sock.listen(64)
        self._sock = sock
        self._inode = os.stat(self.path).st_ino
        atexit.register(self.close)  # an exit without shutdown; after kill -9 the next server cleans up
        return True

    def serve(self, handler: Handler) -> None:
        """Start answering on the claimed socket."""
        import threading

        self._handler = handler
        self._last = time.monotonic()
        threading.Thread(target=self._accept, name="codesift-cli-endpoint", daemon=True).start()
        log.info("answering the CLI for %s at %s (%s)", self.root, self.path, self.kind)

    def close(self) -> None:
        """Stop answering, remove the socket file if it is still ours, then let go of the lock."""
        self._closed.set()
        if self._sock is not None:
            with contextlib.suppress(OSError):
                self._sock.shutdown(socket.SHUT_RDWR)
            self._sock.close()
            self._sock = None
        with contextlib.suppress(OSError):
            if self._inode is not None and os.stat(self.path).st_ino == self._inode:
                self.path.unlink()
        self._inode = None
        self._unlock()

    def idle_s(self) -> float:
        """Seconds since the last CLI command was answered; 0 while one is being answered."""
        with self._count_lock:
            return 0.0 if self._active else time.monotonic() - self._last

    def info(self) -> dict[str, object]:
        """What ``codesift status`` shows about this server."""
        return {
            "pid": os.getpid(),
            "kind": self.kind,
            "root": str(self.root),
            "version": self._version,
            "idle_timeout_s": self.idle_timeout_s,
            "idle_s": round(self.idle_s(), 1),
            "started": self._started,
            "answered": self._answered,
        }

    def _lock(self, wait_s: float) -> bool:
        from codesift.indexer.locks import try_flock  # the server's side: not on the CLI's thin path

        fd = os.open(lock_path(self.root), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        deadline = time.monotonic() + wait_s
        while not try_flock(fd):
            if time.monotonic() >= deadline:
                os.close(fd)
                return False
            time.sleep(0.05)
        self._lock_fd = fd
        return True

    def _unlock(self) -> None:
        if self._lock_fd is not None:
            os.close(self._lock_fd)  # closing releases the flock
            self._lock_fd = None

    def _alive(self) -> bool:
        """Whether a server already listens on the socket file."""
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        probe.settimeout(CONNECT_TIMEOUT_S)
        try:
            probe.connect(str(self.path))
        except OSError:
            return False
        else:
            return True
        finally:
            probe.close()

    def _accept(self) -> None:
        import threading

        sock = self._sock
        while sock is not None and not self._closed.is_set():
            try:
                conn, _ = sock.accept()
            except OSError:
                return  # closed
            self._slots.acquire()
            name = "codesift-cli-request"
            threading.Thread(target=self._serve, args=(conn,), name=name, daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        reply: Reply | None = None
        try:
            with conn:
                if _peer_uid(conn) != os.getuid():
                    log.warning("refused a CLI connection from another user")
                    return
                conn.settimeout(30.0)
                reply = self._answer(_read_all(conn, MAX_REQUEST_BYTES))
                conn.settimeout(ANSWER_TIMEOUT_S)
                conn.sendall(json.dumps(reply, ensure_ascii=False).encode())
        except (OSError, ValueError) as exc:
            log.info("a CLI request failed: %s", exc)
        finally:
            self._slots.release()
        if reply is not None and (reply.get("stopping") or reply.get("exiting")) and self.on_stop is not None:
            self.on_stop()  # after the reply is sent

    def _answer(self, data: bytes) -> Reply:
        try:
            request = json.loads(data)
        except ValueError:
            return {"refused": "not JSON"}
        if not isinstance(request, dict) or not isinstance(request.get("args"), dict):
            return {"refused": "not a request"}
        command = str(request.get("command"))
        if request.get("protocol") == PROTOCOL and command in META_COMMANDS:
            return self._meta(command)
        if request.get("protocol") != PROTOCOL or request.get("version") != self._version:
            refused: Reply = {
                "refused": f"this server is codesift {self._version} (protocol {PROTOCOL}); "
                f"the CLI is {request.get('version')} (protocol {request.get('protocol')})"
            }
            if self.on_stop is not None and version() != self._version:
                log.info("the code on disk changed since this server started: it stops")
                refused["exiting"] = True
            return refused
        if request.get("root") != str(self.root):
            return {"refused": f"this server answers for {self.root}"}
        assert self._handler is not None
        with self._count_lock:
            self._active += 1
        try:
            return self._handler(command, request["args"])
        except Exception as exc:  # the server keeps serving; the CLI answers in-process
            log.exception("a CLI request failed")
            return {"refused": f"the server failed: {exc}"}
        finally:
            with self._count_lock:
                self._active -= 1
                self._answered += 1
                self._last = time.monotonic()

    def _meta(self, command: str) -> Reply:
        if command == "info":
            return {"ok": self.info()}
        if self.on_stop is None:
            return {"refused": f"this is an editor's {self.kind}: it stops with the editor"}
        return {"ok": self.info(), "stopping": True}
