"""The background server the CLI starts for an index and leaves running for a while.

``codesift search / grep / symbols`` answer from a running server in tens of
milliseconds and pay 1–4 s of imports and loading without one. When no server
listens for the index (no editor has it open), the CLI answers the first call
itself, as before, and then starts ``codesift serve --background ROOT``: a
detached process (its own session, no terminal, no inherited pipes) that

- claims the root's CLI socket (``endpoint.Endpoint.claim``: one owner per root
  by ``flock``; a second starter — an editor's language server, another
  background server — loses cleanly and exits or stays off the socket),
- reads the index and never writes it: it opens no writer lock, builds nothing,
  creates no folder; ``codesift index`` runs beside it, and its commits are seen
  by the next answer (a rebuild reopens the tables),
- answers only for ROOT, with the settings read from ROOT's files per request,
  exactly as the in-process CLI would (same payload, same bytes printed),
- exits after ``cli.server_idle_s`` seconds without a CLI command (default 600),
  on ``codesift stop``, on SIGTERM / SIGINT, and when the code on disk changed
  under it (an upgrade: it says so to the CLI that asked and goes);
  after kill -9 its socket is left behind, refuses connections, and the next
  server replaces it.

Off when ``cli.background_server`` is false, when ``CODESIFT_BACKGROUND=0``,
when ``CODESIFT_NO_SERVER`` is set, and under CI (``CI`` set) unless
``CODESIFT_BACKGROUND=1``. Only a root that has an index gets one.

This module's top level is the standard library and ``endpoint``: the CLI imports
it on its fast path. The engine is imported by the server process, after it has
claimed its socket.
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from .endpoint import BACKGROUND, NO_SERVER_ENV, Endpoint, log_path

if TYPE_CHECKING:
    from types import FrameType

log = logging.getLogger(__name__)

BACKGROUND_ENV = "CODESIFT_BACKGROUND"  # 0: never start one; 1: start one even under CI
CLAIM_WAIT_S = 5.0  # how long a new server waits for one that is on its way out
_TICK_S = 1.0  # how often an idle server looks at its clock (at most)
_ON = ("1", "true", "yes", "on")
_OFF = ("0", "false", "no", "off")


def wanted(enabled: bool) -> bool:
    """Whether the CLI may start a background server: the setting ``cli.background_server``
    (``enabled``), then the environment (``CODESIFT_BACKGROUND``, ``CODESIFT_NO_SERVER``, ``CI``)."""
    if not enabled or os.environ.get(NO_SERVER_ENV, "") not in ("", "0"):
        return False
    choice = os.environ.get(BACKGROUND_ENV, "").strip().lower()
    if choice in _OFF:
        return False
    if choice in _ON:
        return True
    return os.environ.get("CI", "").strip().lower() in ("", *_OFF)


def start(root: Path, idle_s: float, warm: str = "") -> int | None:
    """Start a detached background server for ``root``; its pid (None when it could not
    be started: logged). It may still lose to another server and exit at once."""
    command = [sys.executable, "-m", "codesift.server.cli", "serve", "--background", str(root)]
    command += ["--idle", f"{idle_s:g}"]
    if warm:
        command += ["--warm", warm]
    try:
        proc = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,  # it logs to its own file once it owns the socket
            cwd="/",  # holds no folder of the user's
            start_new_session=True,  # no terminal: a Ctrl-C in the shell does not reach it
            close_fds=True,  # no inherited pipe keeps a caller waiting for EOF
        )
    except OSError as exc:
        log.info("could not start a background server for %s: %s", root, exc)
        return None
    log.debug("started a background server for %s (pid %d)", root, proc.pid)
    return proc.pid


def serve(root: Path, idle_s: float, warm: str = "", wait_s: float = CLAIM_WAIT_S) -> int:
    """Run the background server for ``root`` in this process until it is idle for
    ``idle_s`` seconds (0: until stopped), stopped, or signalled. Exit code 0, also when
    another server already answers for ``root`` (this one then does nothing)."""
    stop = threading.Event()
    endpoint = Endpoint(root, kind=BACKGROUND, idle_timeout_s=idle_s, on_stop=stop.set)
    if not endpoint.claim(wait_s=wait_s):
        return 0

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, on_signal)
    try:
        _log_to_file(root)
        from .cli_endpoint import HeldIndex  # the engine: after the socket is ours

        held = HeldIndex(root)
        endpoint.serve(held.answer)
        if warm:
            threading.Thread(target=held.warm, args=(warm,), name="codesift-warm", daemon=True).start()
        tick = _TICK_S if idle_s <= 0 else min(_TICK_S, idle_s / 4)
        while not stop.wait(tick):
            if idle_s > 0 and endpoint.idle_s() >= idle_s:
                log.info("no CLI command for %g s: exiting", idle_s)
                break
    finally:
        endpoint.close()
    return 0


def _log_to_file(root: Path) -> None:
    handler = logging.FileHandler(log_path(root), mode="w", encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.setLevel(logging.INFO)
    top = logging.getLogger()
    top.addHandler(handler)
    top.setLevel(min(top.level or logging.WARNING, logging.INFO))
    logging.getLogger("codesift").setLevel(logging.INFO)
    log.info("background server for %s, pid %d", root, os.getpid())
