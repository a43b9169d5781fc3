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

The client half (``ask``) imports only the standard library's light modules: it
runs on the CLI's fast path, where every import counts.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import json
import logging
import os
import socket
import stat
import struct
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

PROTOCOL = 1
CONNECT_TIMEOUT_S = 1.0
ANSWER_TIMEOUT_S = 600.0  # a grep of a huge tree may take this long; the server's own bounds apply
MAX_REQUEST_BYTES = 1 << 20
MAX_CONNECTIONS = 8  # CLI calls answered at once; more wait for a turn
NO_SERVER_ENV = "CODESIFT_NO_SERVER"  # set (to anything but "" or "0") to always answer in-process

Reply = dict[str, Any]
Handler = Callable[[str, dict[str, Any]], Reply]


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
    if os.environ.get(NO_SERVER_ENV, "") not in ("", "0"):
        return None
    path = address(root)
    if not _private(path.parent):
        return None
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.settimeout(CONNECT_TIMEOUT_S)
        sock.connect(str(path))
        if _peer_uid(sock) != os.getuid():
            log.warning("ignored %s: its server runs as another user", path)
            return None
        request = {"protocol": PROTOCOL, "version": version(), "root": str(root), "command": command}
        sock.sendall(json.dumps({**request, "args": args}).encode())
        sock.shutdown(socket.SHUT_WR)
        sock.settimeout(ANSWER_TIMEOUT_S)
        reply = json.loads(_read_all(sock))
    except (OSError, ValueError) as exc:  # no server, a stale socket, a server gone mid-answer
        log.debug("no server answer at %s: %s", path, exc)
        return None
    finally:
        sock.close()
    if not isinstance(reply, dict) or "refused" in reply:
        log.info("the server at %s did not answer: %s", path, reply.get("refused") if reply else reply)
        return None
    log.debug("answered by the server at %s", path)
    return reply


# ── the server's side ────────────────────────────────────────────────────────


class Endpoint:
    """Answers CLI requests for one workspace root from a running server.

    ``handler(command, args)`` returns the reply object: ``{"ok": payload}``,
    ``{"error": {"exit": n, "message": …}}``, ``{"usage": …}`` or ``{"refused": …}``.
    """

    def __init__(self, root: Path, handler: Handler) -> None:
        self.root = root
        self.path = address(root)
        self._handler = handler
        self._version = version()
        self._slots = threading.BoundedSemaphore(MAX_CONNECTIONS)
        self._sock: socket.socket | None = None
        self._inode: int | None = None
        self._closed = threading.Event()

    def open(self) -> bool:
        """Publish the socket; False (logged) when another live server holds it or the
        folder is not safe to use."""
        folder = self.path.parent
        with contextlib.suppress(FileExistsError):
            folder.mkdir(mode=0o700, parents=True)
        if not _private(folder):
            log.warning("the CLI cannot reach this server: %s is not a private folder of this user", folder)
            return False
        if self._alive():
            log.info("another codesift server answers the CLI for %s; this one does not", self.root)
            return False
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()  # a dead server's socket
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old = os.umask(0o177)  # the socket file is 0600 from the start
        try:
            sock.bind(str(self.path))
        except OSError as exc:  # another server bound it first
            sock.close()
            log.info("the CLI socket for %s is taken: %s", self.root, exc)
            return False
        finally:
            os.umask(old)
        sock.listen(64)
        self._sock = sock
        self._inode = os.stat(self.path).st_ino
        threading.Thread(target=self._accept, name="codesift-cli-endpoint", daemon=True).start()
        atexit.register(self.close)  # an exit without shutdown; after kill -9 the next server cleans up
        log.info("answering the CLI for %s at %s", self.root, self.path)
        return True

    def close(self) -> None:
        """Stop answering and remove the socket file if it is still ours."""
        self._closed.set()
        if self._sock is not None:
            with contextlib.suppress(OSError):
                self._sock.shutdown(socket.SHUT_RDWR)
            self._sock.close()
            self._sock = None
        with contextlib.suppress(OSError):
            if os.stat(self.path).st_ino == self._inode:
                self.path.unlink()

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

    def _answer(self, data: bytes) -> Reply:
        try:
            request = json.loads(data)
        except ValueError:
            return {"refused": "not JSON"}
        if not isinstance(request, dict) or not isinstance(request.get("args"), dict):
            return {"refused": "not a request"}
        if request.get("protocol") != PROTOCOL or request.get("version") != self._version:
            return {
                "refused": f"this server is codesift {self._version} (protocol {PROTOCOL}); "
                f"the CLI is {request.get('version')} (protocol {request.get('protocol')})"
            }
        if request.get("root") != str(self.root):
            return {"refused": f"this server answers for {self.root}"}
        try:
            return self._handler(str(request.get("command")), request["args"])
        except Exception as exc:  # the server keeps serving; the CLI answers in-process
            log.exception("a CLI request failed")
            return {"refused": f"the server failed: {exc}"}
