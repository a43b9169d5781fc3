"""One writer at a time for an index on an object store: a renewed lease.

An object store has no flock. What it has, and what Lance's commits already use,
is a conditional put: writing version 1 of a new table fails if another writer
wrote it first. The lease is built on that alone, so it works wherever Lance
commits safely (S3 with conditional writes, GCS, Azure, ``s3+ddb``) and needs no
other client or credentials.

The lease is a chain of tables ``writer_lease_<generation>``. Taking it means
creating the next generation's table; of several racers, the author of its
version 1 holds it (``_holder``: Lance retries a create that lost the race as an
overwrite at version 2, so "my create returned" is not enough). The highest
generation is the holder. Its rows are written by the holder alone:
a renewal every quarter of the lease appends one with a later expiry, and
releasing appends one marked released. A holder killed hard stops renewing and
the lease expires (``lease_s`` later by the holder's clock: machines whose clocks
differ by more than that must not publish to one URI). A taker never deletes or
rewrites the expired holder's table — it creates the next generation — so two
takers cannot both win, and a holder that wakes up late finds a higher
generation and stops before its manifest (``Lease.check``).
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import lancedb
import pyarrow as pa

from .errors import IndexBusyError, StoreError
from .objectstore import explain, storage_options

log = logging.getLogger(__name__)

LEASE_PREFIX = "writer_lease_"
DEFAULT_LEASE_S = 120.0
# A generation's table that cannot be read yet is being created (or its creator
# died mid-create); it counts as held until it has been unreadable this long.
UNREADABLE_GRACE_S = 60.0


class LeaseLostError(StoreError):
    """The writer's lease on an object-store index expired or was taken over."""


def _schema() -> pa.Schema:
    return pa.schema(
        [
            pa.field("owner", pa.string(), nullable=False),
            pa.field("written_at", pa.float64(), nullable=False),
            pa.field("expires_at", pa.float64(), nullable=False),
            pa.field("released", pa.bool_(), nullable=False),
        ]
    )


def lease_table(generation: int) -> str:
    return f"{LEASE_PREFIX}{generation:012d}"


def is_lease_table(name: str) -> bool:
    return name.startswith(LEASE_PREFIX) and name[len(LEASE_PREFIX) :].isdigit()


@dataclass(frozen=True, slots=True)
class Holder:
    """The newest row of a generation's lease table."""

    owner: str
    expires_at: float
    released: bool

    def live(self, now: float) -> bool:
        return not self.released and self.expires_at > now


def _generations(db: lancedb.DBConnection) -> list[int]:
    names = db.list_tables(limit=10_000).tables
    return sorted(int(n[len(LEASE_PREFIX) :]) for n in names if is_lease_table(n))


def _holder(db: lancedb.DBConnection, generation: int) -> Holder | None:
    """Who holds a generation, as its newest row by that owner; None when it cannot be read (yet).

    The owner is the author of the table's version 1: that version's manifest is
    written by one conditional put, so it has exactly one author. A racer that lost
    the create can still land later versions (Lance retries a create that lost as an
    overwrite on top): its rows are ignored.
    """
    try:
        rows = db.open_table(lease_table(generation)).to_arrow().to_pylist()
        tbl = db.open_table(lease_table(generation))
        tbl.checkout(1)
        first = tbl.to_arrow().to_pylist()
    except Exception:
        return None
    if not first:
        return None
    owner = str(first[0]["owner"])
    r = max((*first, *(r for r in rows if r["owner"] == owner)), key=lambda row: float(row["written_at"]))
    return Holder(owner, float(r["expires_at"]), bool(r["released"]))


def _row(owner: str, expires_at: float, released: bool = False) -> pa.Table:
    row = {"owner": owner, "written_at": time.time(), "expires_at": expires_at, "released": released}
    return pa.Table.from_pylist([row], schema=_schema())


def _when(t: float) -> str:
    return time.strftime("%H:%M:%S UTC", time.gmtime(t))


class Lease:
    """A held lease: renewed in the background until released; ``check`` before a final write."""

    def __init__(
        self,
        db: lancedb.DBConnection,
        uri: str,
        generation: int,
        owner: str,
        lease_s: float,
        expires_at: float,
        lost: threading.Event | None,
    ) -> None:
        self.uri = uri
        self.generation = generation
        self.owner = owner
        self._db = db
        self._lease_s = lease_s
        self._expires_at = expires_at
        self._lost_reason = ""
        self._on_lost = lost
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._renew_loop, name="codesift-lease", daemon=True)
        self._thread.start()

    def _lose(self, reason: str) -> None:
        with self._lock:
            if not self._lost_reason:
                self._lost_reason = reason
                log.error("%s", reason)
        if self._on_lost is not None:
            self._on_lost.set()  # the writer stops at its next batch

    def _taken_over(self) -> bool:
        return max(_generations(self._db), default=0) > self.generation

    def _renew_loop(self) -> None:
        while not self._stop.wait(self._lease_s / 4):
            try:
                if self._taken_over():
                    self._lose(f"another writer took over the lock on {self.uri}")
                    return
                expires = time.time() + self._lease_s
                self._db.open_table(lease_table(self.generation)).add(_row(self.owner, expires))
                with self._lock:
                    self._expires_at = expires
            except Exception as exc:
                if time.time() >= self._expires_at:
                    self._lose(f"could not renew the lock on {self.uri} before it expired: {explain(exc)}")
                    return
                log.warning("renewing the lock on %s failed (will retry): %s", self.uri, explain(exc))

    def check(self) -> None:
        """Raise LeaseLostError unless this lease is still the holder, with time to spare."""
        with self._lock:
            reason, expires = self._lost_reason, self._expires_at
        if not reason and time.time() > expires - min(5.0, self._lease_s / 4):
            reason = f"the lock on {self.uri} expired (not renewed since {_when(expires - self._lease_s)})"
        if not reason:
            try:
                if self._taken_over():
                    reason = f"another writer took over the lock on {self.uri}"
            except Exception as exc:
                reason = f"cannot confirm the lock on {self.uri}: {explain(exc)}"
        if reason:
            self._lose(reason)
            raise LeaseLostError(reason)

    def release(self) -> None:
        """Stop renewing and mark the lease released (best effort: otherwise it expires)."""
        self._stop.set()
        self._thread.join(timeout=max(1.0, self._lease_s))
        with self._lock:
            lost = bool(self._lost_reason)
        if lost:
            return
        try:
            self._db.open_table(lease_table(self.generation)).add(_row(self.owner, time.time(), True))
        except Exception as exc:
            log.warning("releasing the lock on %s failed; it expires by itself: %s", self.uri, explain(exc))


def _owner() -> str:
    return f"{socket.gethostname()} pid {os.getpid()} ({uuid.uuid4().hex[:8]})"


def acquire(
    uri: str,
    timeout_s: float,
    *,
    lease_s: float = DEFAULT_LEASE_S,
    wait: bool = True,
    on_wait: Callable[[str], None] | None = None,
    lost: threading.Event | None = None,
    poll_s: float | None = None,
) -> Lease:
    """Take the writer lease on the object-store index at ``uri``.

    With ``wait`` this blocks until the holder releases it or its lease expires
    (``on_wait`` is told once); without it IndexBusyError names the holder.
    ``lost`` is set if the lease is later lost, so the writer stops.
    """
    try:
        db = lancedb.connect(uri, storage_options=storage_options(uri, timeout_s))
    except Exception as exc:
        raise StoreError(f"cannot reach {uri}: {explain(exc)}") from exc
    owner = _owner()
    poll = poll_s if poll_s is not None else min(5.0, max(0.2, lease_s / 8))
    told = False
    unreadable_since: dict[int, float] = {}
    while True:
        try:
            top = max(_generations(db), default=0)
            holder = _holder(db, top) if top else None
        except Exception as exc:
            raise StoreError(f"cannot read the lock on {uri}: {explain(exc)}") from exc
        now = time.time()
        busy = ""
        if top and holder is None:
            first = unreadable_since.setdefault(top, time.monotonic())
            if time.monotonic() - first < UNREADABLE_GRACE_S:
                busy = "another writer is taking the lock"
        elif holder is not None and holder.live(now):
            busy = f"another writer ({holder.owner}) holds the lock until {_when(holder.expires_at)}"
        if busy:
            message = f"{busy} on {uri}"
            if not wait:
                raise IndexBusyError(f"{message}: this run wrote nothing; try again when it finishes")
            if on_wait is not None and not told:
                on_wait(f"{message}; waiting for it to finish…")
                told = True
            time.sleep(poll)
            continue
        expires = time.time() + lease_s
        try:
            db.create_table(lease_table(top + 1), _row(owner, expires), mode="create")
        except Exception as exc:
            with contextlib.suppress(Exception):
                if top + 1 in _generations(db):
                    continue  # another writer created this generation first: look again
            raise StoreError(f"cannot take the lock on {uri}: {explain(exc)}") from exc
        won = _holder(db, top + 1)
        if won is None or won.owner != owner:
            continue  # our create landed on top of the winner's (a retried overwrite): not ours
        log.info("took the writer lock on %s (generation %d)", uri, top + 1)
        with contextlib.suppress(Exception):  # best effort: the highest generation alone decides
            for old in _generations(db):
                if old <= top:
                    db.drop_table(lease_table(old))
        return Lease(db, uri, top + 1, owner, lease_s, expires, lost)


@contextlib.contextmanager
def held(
    uri: str,
    timeout_s: float,
    *,
    lease_s: float = DEFAULT_LEASE_S,
    wait: bool = True,
    on_wait: Callable[[str], None] | None = None,
    lost: threading.Event | None = None,
) -> Iterator[Lease]:
    """The writer lease on ``uri`` for the duration of the block (see ``acquire``)."""
    lease = acquire(uri, timeout_s, lease_s=lease_s, wait=wait, on_wait=on_wait, lost=lost)
    try:
        yield lease
    finally:
        lease.release()
