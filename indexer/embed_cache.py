"""The embedding cache: vectors keyed by (model key, content hash).

One LanceDB table per model key (``emb_<sha1 of the key>``): a vector computed
once for a text is never computed again, whichever file, branch or rebuild asks
for it. The key (``Settings.vector_cache_key``) names the model and what changes
its vectors for the same text; the content hash is the hash of the embedded text
itself, so any index may read any entry.

By default the cache is a few tables of the index's own database. With
``index.share_worktrees`` in a git repository it is one database per repository
(``shared_cache``) in git's common directory, which every worktree's index reads
and writes: a worktree then holds no copy of the vectors it shares. Its writes (a
table's creation, merges, compaction) are serialised across processes by an flock
on ``<cache>/.lock``: without it, three processes writing one new cache at once
failed 2 runs of 3 — a writer found no table while another created it, two merges
of the same hashes both inserted them (1,015 rows for 975 hashes), a merge read a
data file a compaction had just pruned. Reads take no lock (a Lance read sees one
committed version; a shared cache keeps old versions ``SHARED_KEEP``). The index's
own cache tables, from before sharing, are read for what the shared one lacks
until an index run moves them over (``absorb_own``).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import logging
import os
from collections.abc import Iterable, Iterator, Sequence
from datetime import timedelta
from pathlib import Path

import lancedb
import pyarrow as pa

from .errors import StoreError, store_write_error
from .faults import fail_point
from .locks import try_flock
from .rows import Vectors, arrow_to_matrix, cache_schema, in_filters, vectors_to_arrow

log = logging.getLogger(__name__)

CACHE_PREFIX = "emb_"
_LOCK = ".lock"
# Old versions of a shared cache's tables outlive any read of them by this much.
SHARED_KEEP = timedelta(minutes=5)
_ABSORB_BATCH = 8_192  # cache rows read at a time when moving an index's own cache over


def cache_table_name(key: str) -> str:
    """The table holding one model key's vectors."""
    return CACHE_PREFIX + hashlib.sha1(key.encode()).hexdigest()[:16]


class EmbedCache:
    """The cache tables of one LanceDB database (an index's own, by default).

    ``lock``: the file whose flock serialises writers (a shared cache's); ``own``:
    the index's own cache, read for what this one lacks (a shared cache's).
    """

    def __init__(
        self, db: lancedb.DBConnection, uri: str, *, lock: str = "", own: EmbedCache | None = None
    ) -> None:
        self.uri = uri
        self._db = db
        self._lock = lock
        self._own = own
        self._tables: dict[str, lancedb.table.Table] = {}

    @property
    def shared(self) -> bool:
        """Whether this is a repository's cache, shared by its worktrees' indexes."""
        return self._own is not None

    def table_names(self) -> list[str]:
        """The cache tables, one per model key that ever embedded here."""
        try:
            names = self._db.list_tables(limit=10_000).tables
        except Exception as exc:
            raise StoreError(f"cannot list the tables of {self.uri}: {exc}") from exc
        return sorted(n for n in names if n.startswith(CACHE_PREFIX))

    def forget(self) -> None:
        """Drop the open table handles (the database was deleted or rebuilt)."""
        self._tables.clear()

    def _existing(self, name: str) -> lancedb.table.Table | None:
        """A cache table if it exists (never created: a reader takes no lock)."""
        if name not in self._tables:
            if name not in self.table_names():
                return None
            self._tables[name] = self._db.open_table(name)
        return self._tables[name]

    def _table(self, name: str, schema: pa.Schema) -> lancedb.table.Table:
        """A cache table, created if missing; callers hold the lock."""
        tbl = self._existing(name)
        if tbl is None:
            from lancedb.index import BTree

            tbl = self._db.create_table(name, schema=schema)
            tbl.create_index("content_hash", config=BTree())
            self._tables[name] = tbl
        return tbl

    def lookup(self, key: str, dim: int, hashes: Iterable[str]) -> dict[str, Vectors]:
        """Vectors already computed under this model key for these content hashes."""
        wanted = sorted(set(hashes))
        if not wanted:
            return {}
        out = self._lookup(cache_table_name(key), dim, wanted)
        if self._own is not None and len(out) < len(wanted):
            out.update(self._own.lookup(key, dim, [h for h in wanted if h not in out]))
        return out

    def _lookup(self, name: str, dim: int, wanted: Sequence[str]) -> dict[str, Vectors]:
        tbl = self._existing(name)
        if tbl is None or tbl.count_rows() == 0:
            return {}
        out: dict[str, Vectors] = {}
        for flt in in_filters("content_hash", wanted):
            res = tbl.search().where(flt).select(["content_hash", "vector"]).limit(None).to_arrow()
            if res.num_rows == 0:
                continue
            vecs = arrow_to_matrix(res.column("vector"), dim)
            for h, v in zip(res.column("content_hash").to_pylist(), vecs, strict=True):
                out[h] = v
        return out

    def put(self, key: str, dim: int, hashes: Sequence[str], vectors: Vectors) -> None:
        """Remember vectors by content hash (hashes already present keep their vector)."""
        name = cache_table_name(key)
        if self.shared and hashes:
            # What another worktree cached already (a copy from its index brings
            # nothing else) costs no lock and no commit.
            have = self._present(name, hashes)
            keep = [i for i, h in enumerate(hashes) if h not in have]
            hashes, vectors = [hashes[i] for i in keep], vectors[keep]
        if not hashes:
            return
        data = pa.table(
            {"content_hash": pa.array(hashes, pa.string()), "vector": vectors_to_arrow(vectors, dim)},
            schema=cache_schema(dim),
        )
        with self._writing(f"caching {len(hashes)} vectors", "cache"):
            self._merge(name, data)

    def _present(self, name: str, hashes: Sequence[str]) -> set[str]:
        tbl = self._existing(name)
        if tbl is None:
            return set()
        out: set[str] = set()
        for flt in in_filters("content_hash", list(hashes)):
            res = tbl.search().where(flt).select(["content_hash"]).limit(None).to_arrow()
            out.update(res.column("content_hash").to_pylist())
        return out

    def _merge(self, name: str, data: pa.Table) -> None:
        """Add rows of hashes the table lacks; callers hold the lock."""
        tbl = self._table(name, data.schema)
        tbl.merge_insert("content_hash").when_not_matched_insert_all().execute(data)

    def ensure_indices(self) -> None:
        """The BTree on ``content_hash`` of every cache table (lookups and merges go by it)."""
        from lancedb.index import BTree

        with self._locked():
            for name in self.table_names():
                tbl = self._tables.get(name) or self._db.open_table(name)
                if ("content_hash",) not in {tuple(i.columns) for i in tbl.list_indices()}:
                    tbl.create_index("content_hash", config=BTree())

    def optimize(self, keep_versions_for: timedelta) -> None:
        """Compact the cache tables and prune their old versions (best effort). A shared
        cache keeps them at least ``SHARED_KEEP``: other worktrees read it without a lock."""
        if self.shared:
            keep_versions_for = max(keep_versions_for, SHARED_KEEP)
        with self._locked():
            for name in self.table_names():
                try:
                    (self._tables.get(name) or self._db.open_table(name)).optimize(
                        cleanup_older_than=keep_versions_for
                    )
                except Exception as exc:  # optimisation is best effort: the data is whole
                    log.warning("optimising %s failed: %s", name, exc)

    def absorb_own(self) -> int:
        """Move the index's own cache tables (from before sharing) into this shared cache,
        then drop them: their vectors stay cached, once. Returns the rows moved. A crash
        between the two leaves them to be moved again (hashes already here are skipped)."""
        if self._own is None:
            return 0
        moved = 0
        for name in self._own.table_names():
            source = self._own._db.open_table(name)
            schema = cache_schema(source.schema.field("vector").type.list_size)
            rows = source.search().select(["content_hash", "vector"]).limit(None)
            with self._writing(f"moving the cache table {name} to {self.uri}", "cache"):
                for batch in rows.to_batches(_ABSORB_BATCH):
                    self._merge(name, pa.Table.from_batches([batch]).cast(schema))
                    moved += batch.num_rows
            self._own.drop(name)
        if moved:
            log.info("moved %d cached vectors of the index into the shared cache at %s", moved, self.uri)
        return moved

    def drop(self, name: str) -> None:
        """Drop one cache table."""
        self._tables.pop(name, None)
        with self._writing(f"dropping the cache table {name}", "cache"):
            self._db.drop_table(name)

    def disk_bytes(self) -> int:
        """Bytes the cache's own database holds on disk (0 for the index's own: counted with it)."""
        if not self.shared:
            return 0
        return sum(f.stat().st_size for f in Path(self.uri).rglob("*") if f.is_file())

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        """Hold the cache's writer lock (none for an index's own cache: the index's
        writer lock covers it)."""
        if not self._lock:
            yield
            return
        fd = os.open(self._lock, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            if not try_flock(fd):
                log.debug("waiting for the shared embedding cache's lock at %s", self._lock)
                fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # closing releases the flock

    @contextlib.contextmanager
    def _writing(self, what: str, point: str) -> Iterator[None]:
        """Hold the lock; translate a failed write (a full disk above all) into a StoreError, once."""
        try:
            fail_point(point)
            with self._locked():
                yield
        except StoreError:
            raise
        except (OSError, RuntimeError, ValueError) as exc:
            raise store_write_error(self.uri, what, exc) from exc


def shared_cache(folder: Path, own: EmbedCache) -> EmbedCache | None:
    """The repository's shared cache in ``folder`` (created if missing), reading ``own``
    for what it lacks; None when it cannot be opened there (the index keeps its own)."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        lock = folder / _LOCK
        lock.touch(exist_ok=True)
        # Strong consistency: another worktree's commits are seen by the next read.
        db = lancedb.connect(str(folder), read_consistency_interval=timedelta(0))
    except Exception as exc:
        log.warning("no shared embedding cache at %s, the index keeps its own: %s", folder, exc)
        return None
    return EmbedCache(db, str(folder), lock=str(lock), own=own)
