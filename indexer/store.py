"""The LanceDB tables, their schema version, and the only code that writes them.

Crash safety rests on two promises:

* Every table write is one Lance commit (atomic): a reader sees a table before
  or after it, never half of it.
* The ``files`` table is the commit marker. A file's ``files`` row goes first
  (replaced or removed files lose it before anything else), its chunks, symbols
  and edges are then replaced (delete by path, then append), and its new
  ``files`` row, with the content hash, is written last. After a crash, a file
  without a row is simply re-done, and rows of paths with no ``files`` row are
  swept; a file saved back to its old content mid-crash is re-done too.

A reader in the few milliseconds of one file's replace may see that file with no
rows (never two versions of it, never a part of one); the next read sees it whole.
Replacing by delete + append costs ~5 ms a table where a ``merge_insert`` joined
the whole table (~120 ms at 100k chunks, more on the edges).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import json
import logging
import os
import shutil
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar, cast

import lancedb
import pyarrow as pa
from lancedb.background_loop import LOOP
from lancedb.query import AsyncQuery, AsyncQueryBase
from lancedb.table import AsyncTable, LanceTable

from . import journal
from .compaction import optimize_keeping_links
from .embed_cache import EmbedCache, shared_cache
from .errors import IndexMissingError, StoreError, store_write_error
from .faults import crash_point, fail_point
from .heap import arrow_on_system_pool
from .lease import is_lease_table
from .locate import index_exists_at, index_uri
from .model import Chunk, FileRecord, FileStatus, FileWrite, Symbol
from .objectstore import storage_options as default_storage_options
from .rows import (
    CHUNK_COLUMNS,
    FAST_VECTOR,
    HAS_FAST_VECTOR,
    IN_BATCH,
    SYMBOL_COLUMNS,
    Vectors,
    chunks_from_table,
    chunks_schema,
    chunks_table,
    edges_schema,
    edges_table,
    files_schema,
    files_table,
    in_filters,
    meta_schema,
    present,
    sql_str,
    symbol_from_row,
    symbols_schema,
    symbols_table,
    vectors_to_arrow,
)
from .symtab import SymbolColumns
from .uring import read_uri, table_location

if TYPE_CHECKING:
    from .settings import Settings

_T = TypeVar("_T")
log = logging.getLogger(__name__)

# 2: the edges table (reference graph)
# 3: chunks.has_vector (counting pending vectors read the whole vector column: ~80 ms
#    at 100k chunks, on every save and search; the flag reads in ~2 ms)
# 4: the fast tier (chunks.fast_vector / has_fast_vector: a static model's vectors
#    beside the main model's, written right after the text phase)
# 5: symbols.arity and edges.args (Java, C# and Kotlin overloads told apart by argument
#    count), symbols.partial (the parts of a C# partial type are one type)
# 6: symbols.params and edges.arg_types (Java overloads of one argument count told apart
#    by the types the code states)
SCHEMA_VERSION = 6

FILES = "files"
CHUNKS = "chunks"
SYMBOLS = "symbols"
EDGES = "edges"
META = "meta"
PUBLISHED = "published"  # the publish manifest (indexer.remote)
_SYMBOL_BATCH = 32_768  # symbol rows read at a time
# Filters on chunks: those still waiting for a vector, and those with one.
PENDING = "has_vector = false"
EMBEDDED = "has_vector = true"
# The same for the fast tier's column.
FAST_PENDING = f"{HAS_FAST_VECTOR} = false"
FAST_EMBEDDED = f"{HAS_FAST_VECTOR} = true"
# Fingerprint keys naming the fast tier's model: in the fingerprint, so a publish's
# manifest and a remote's compatibility check carry them as they carry every setting.
FAST_MODEL_KEY = "fast_model"
FAST_DIMENSION_KEY = "fast_dimension"


@dataclass(frozen=True, slots=True)
class IndexMeta:
    schema_version: int
    model_id: str
    dimension: int
    fingerprint: dict[str, str]

    @property
    def fast_model_id(self) -> str:
        """The fast tier's model id ("" when the index has no fast tier)."""
        return self.fingerprint.get(FAST_MODEL_KEY, "")

    @property
    def fast_dimension(self) -> int:
        """The fast tier's vector length (0 when the index has no fast tier)."""
        try:
            return int(self.fingerprint.get(FAST_DIMENSION_KEY, "0"))
        except ValueError:
            return 0


@dataclass(frozen=True, slots=True)
class PendingChunk:
    id: str
    path: str
    content_hash: str
    text: str


# How long an optimize keeps old table versions (for readers of an older one).
KEEP_VERSIONS_FOR = timedelta(minutes=5)
# Seconds an object store may take to connect before a read or write gives up.
STORE_TIMEOUT_S = 10.0


class Store:
    """An index directory (or s3:// URI) holding one workspace's tables."""

    def __init__(
        self,
        uri: str,
        *,
        storage_options: dict[str, str] | None = None,
        keep_versions_for: timedelta = KEEP_VERSIONS_FOR,
        cache_dir: Path | None = None,
    ) -> None:
        """``cache_dir``: the repository's shared embedding cache (``worktrees.shared_cache_dir``);
        None, or a folder that cannot be opened: the cache is the index's own."""
        self.uri = uri
        if storage_options is None:
            storage_options = default_storage_options(uri, STORE_TIMEOUT_S)
        self._storage_options = storage_options
        self.keep_versions_for = keep_versions_for
        try:
            # Strong consistency: a long-lived reader (the language server) sees
            # every commit, its own writer's and other processes'.
            self._db = lancedb.connect(
                uri, storage_options=storage_options, read_consistency_interval=timedelta(0)
            )
        except Exception as exc:
            raise StoreError(f"cannot open the index at {uri}: {exc}") from exc
        self._tables: dict[str, lancedb.table.Table] = {}
        # The searches' queries (``query``) read a local index through io_uring: each
        # table opened at its ``file+uring://`` location on ``_db`` (``uring``), never
        # written through; None: the plain tables ``table`` reads.
        self._read_uri = read_uri(uri)
        self._read_tables: dict[str, AsyncTable] = {}
        self._reads_lock = threading.Lock()
        self._counts: dict[tuple[str, str | None], tuple[int, int]] = {}
        self._meta: tuple[int, IndexMeta | None] | None = None
        self._file_stats: tuple[int, dict[str, tuple[int, int]]] | None = None
        self._all_symbols: tuple[int, SymbolColumns] | None = None
        self._all_symbols_lock = threading.Lock()
        self._derived: dict[str, tuple[int, object]] = {}
        self._derived_lock = threading.Lock()
        own = EmbedCache(self._db, uri)
        self.cache = (shared_cache(cache_dir, own) if cache_dir else None) or own
        self._pins = threading.local()

    # ----- opening -------------------------------------------------------------

    @property
    def is_local(self) -> bool:
        return "://" not in self.uri

    def table_names(self) -> set[str]:
        try:
            return set(self._db.list_tables(limit=10_000).tables)
        except Exception as exc:
            raise StoreError(f"cannot list the tables of {self.uri}: {exc}") from exc

    def exists(self) -> bool:
        return {FILES, CHUNKS, SYMBOLS, META} <= self.table_names()

    def table(self, name: str) -> lancedb.table.Table:
        """A table for reading (search). Writes go through the Store's methods."""
        return self._table(name)

    def _table(self, name: str) -> lancedb.table.Table:
        tbl = self._tables.get(name)
        if tbl is None:
            try:
                tbl = self._db.open_table(name)
            except Exception as exc:
                raise IndexMissingError(
                    f"no index table {name!r} at {self.uri}: run `codesift index` first"
                ) from exc
            self._tables[name] = tbl
        return tbl

    def query(self, name: str) -> AsyncQuery:
        """A query of a table on lancedb's async API, for the searches' hot paths: run it
        with ``fetch``. The table is ``table``'s, or (read through io_uring) the same
        table opened at its ``file+uring://`` location on the same connection.

        The query is built on the table's native handle without lancedb's table object:
        given one, lancedb's ``to_arrow`` first reads the table's schema (a round trip
        that checks for a newer version, ~0.3 ms a query) to look for blob columns, which
        an index never has; the rows and their schema are the same without it."""
        tbl = self._read_table(name)
        return AsyncQuery(tbl._inner.query())

    @property
    def reader(self) -> str:
        """How the searches read the index: ``io_uring`` (``file+uring://``) or ``pread``
        (the plain way: io_uring turned off, refused, or an object store's own reads).
        Opens the chunks table for reading if no search has yet."""
        if self._read_uri is not None:
            with contextlib.suppress(Exception):  # no chunks table: the plain way said so
                self._read_table(CHUNKS)
        return "io_uring" if self._read_uri is not None else "pread"

    def _read_table(self, name: str) -> AsyncTable:
        """The table ``query`` reads: through io_uring when the index is read that way,
        else the table ``table`` reads. Both see every commit (the connection's strong
        reads)."""
        tbl = self._read_tables.get(name)
        if tbl is not None:
            return tbl
        plain = self._table(name)  # a missing table says so as it always has
        if not isinstance(plain, LanceTable):  # a local or s3:// index is always one
            raise StoreError(f"table {name!r} of {self.uri} cannot be queried asynchronously")
        read_uri = self._read_uri
        if read_uri is None:
            return plain._table
        with self._reads_lock:
            tbl = self._read_tables.get(name)
            if tbl is None:
                try:
                    tbl = _open_at(self._db, name, table_location(read_uri, name))
                except Exception as exc:  # io_uring refused past the probe (limits, filters)
                    log.info("reading %s the plain way: io_uring failed (%s)", self.uri, exc)
                    self._read_uri = None
                    return plain._table
                self._read_tables[name] = tbl
        return tbl

    def warm_vector_index(self, column: str = "vector") -> concurrent.futures.Future[None] | None:
        """Start reading ``column``'s vector index into LanceDB's cache, on LanceDB's own
        threads, and return at once (a future to wait on before exiting; None when it
        cannot start). A cold process's first vector query spends ~170–300 ms on the
        stdlib's 102k chunks loading the whole index (IVF_HNSW_SQ, 61 MB: the same for
        any query vector; the next queries take ~10 ms), so a one-shot search starts it
        while it imports the rest of the engine and loads the model. It runs a nearest
        query for an axis vector, limit 1; a column without an index is left alone (its
        search is a full scan, with nothing to cache)."""
        try:
            return asyncio.run_coroutine_threadsafe(_warm(self._read_table(CHUNKS), column), LOOP.loop)
        except Exception as exc:  # reading ahead is only ever a help
            log.debug("cannot read the %s index ahead: %s", column, exc)
            return None

    def create_table(self, name: str, data: pa.Table) -> None:
        """A new table of the index's own (beside the data tables), e.g. the publish manifest."""
        with self.writing(f"creating table {name}", "create"):
            self._tables[name] = self._db.create_table(name, data=data)

    def read_meta(self) -> IndexMeta | None:
        """The stored meta, or None when there is no complete index."""
        if not self.exists():
            return None
        rows = self._table(META).to_arrow().to_pylist()
        kv = {str(r["key"]): str(r["value"]) for r in rows}
        if "schema_version" not in kv:
            return None
        try:
            return IndexMeta(
                schema_version=int(kv["schema_version"]),
                model_id=kv.get("model_id", ""),
                dimension=int(kv.get("dimension", "0")),
                fingerprint=json.loads(kv.get("fingerprint", "{}")),
            )
        except (ValueError, json.JSONDecodeError):
            return None

    def create(self, meta: IndexMeta) -> None:
        """(Re)create the index tables empty, then write the meta last.

        The embedding caches survive: they are keyed by model and content hash.
        """
        self._tables.clear()
        self._read_tables.clear()
        self._counts.clear()
        self._meta = None
        # meta first goes away, so a crash mid-rebuild is seen as "no index"; a
        # publish manifest too: its versions would name the new tables' half-built states.
        for name in (PUBLISHED, META, FILES, CHUNKS, SYMBOLS, EDGES):
            if name in self.table_names():
                self._db.drop_table(name)
        try:
            self._db.create_table(FILES, schema=files_schema())
            self._db.create_table(CHUNKS, schema=chunks_schema(meta.dimension, meta.fast_dimension))
            self._db.create_table(SYMBOLS, schema=symbols_schema())
            self._db.create_table(EDGES, schema=edges_schema())
            rows = [
                {"key": "schema_version", "value": str(meta.schema_version)},
                {"key": "model_id", "value": meta.model_id},
                {"key": "dimension", "value": str(meta.dimension)},
                {"key": "fingerprint", "value": json.dumps(meta.fingerprint, sort_keys=True)},
            ]
            self._db.create_table(META, data=pa.Table.from_pylist(rows, schema=meta_schema()))
        except Exception as exc:
            raise store_write_error(self.uri, "creating the index", exc) from exc
        if self.is_local:
            # The index is the tool's, not the project's: git (and editors' source
            # control views) should not list it.
            with contextlib.suppress(OSError):
                ignore = Path(self.uri) / ".gitignore"
                if not ignore.exists():
                    ignore.write_text("# written by codesift: the index is not part of the project\n*\n")

    # ----- reading -------------------------------------------------------------

    def file_stats(self) -> dict[str, tuple[int, int]]:
        """(size, mtime_ns) of every indexed file, remembered until the files table's next commit."""
        tbl = self._table(FILES)
        version = self._version(FILES)
        if self._file_stats is None or self._file_stats[0] != version:
            cols = tbl.search().select(["path", "size", "mtime_ns"]).limit(None).to_arrow()
            stats = dict(
                zip(
                    cols.column("path").to_pylist(),
                    zip(cols.column("size").to_pylist(), cols.column("mtime_ns").to_pylist(), strict=True),
                    strict=True,
                )
            )
            self._file_stats = (version, {p: (int(a or 0), int(b or 0)) for p, (a, b) in stats.items()})
        return self._file_stats[1]

    def file_hashes(self) -> dict[str, str]:
        """Content hash of every file with a ``files`` row (indexed, skipped or failed)."""
        cols = self._table(FILES).search().select(["path", "content_hash"]).limit(None).to_arrow()
        return dict(
            zip(cols.column("path").to_pylist(), cols.column("content_hash").to_pylist(), strict=True)
        )

    def all_symbols(self) -> SymbolColumns:
        """Every stored symbol as columns (``Symbol`` objects made per row as read), the same
        object for every caller until the symbols table's next commit: the symbol index and
        the graph share one copy (~12 MiB of the stdlib's 129k symbols; as objects they took
        ~48). Callers must not change it."""
        with self._all_symbols_lock:
            tbl = self._table(SYMBOLS)
            version = tbl.version
            if self._all_symbols is not None and self._all_symbols[0] == version:
                return self._all_symbols[1]
            # only the columns a Symbol holds, a batch at a time (never `id` / `name_lower`:
            # ~20 MiB of strings on the stdlib that the Arrow read left behind)
            wanted = present(SYMBOL_COLUMNS, tbl.schema)
            reader = tbl.search().select(wanted).limit(None).to_batches(_SYMBOL_BATCH)
            with arrow_on_system_pool():
                symbols = SymbolColumns.read(reader)
            # a commit between reading the version and the rows: answer, but do not remember
            self._all_symbols = (version, symbols) if tbl.version == version else None
            return symbols

    def forget_symbols(self) -> None:
        """Stop holding ``all_symbols``'s list (its holders were dropped, e.g. after idling)."""
        with self._all_symbols_lock:
            self._all_symbols = None

    def symbols_of(self, paths: Sequence[str]) -> list[Symbol]:
        """The stored symbols of these files."""
        out: list[Symbol] = []
        for flt in in_filters("path", paths):
            rows = self._table(SYMBOLS).search().where(flt).limit(None).to_arrow().to_pylist()
            out.extend(symbol_from_row(r) for r in rows)
        return out

    def file_records(self, paths: Sequence[str] | None = None, *, under: str = "") -> dict[str, FileRecord]:
        """The ``files`` rows: all of them, or those of ``paths`` and of files ``under`` a folder."""
        tbl = self._table(FILES)
        if paths is None and not under:
            rows = tbl.to_arrow().to_pylist()
        else:
            flts = list(in_filters("path", list(paths or ())))
            if under:
                flts.append(f"starts_with(path, {sql_str(under.rstrip('/') + '/')})")
            rows = [r for flt in flts for r in tbl.search().where(flt).limit(None).to_arrow().to_pylist()]
        out: dict[str, FileRecord] = {}
        for r in rows:
            out[r["path"]] = FileRecord(
                path=r["path"],
                language=r["language"] or "",
                size=int(r["size"] or 0),
                mtime_ns=int(r["mtime_ns"] or 0),
                content_hash=r["content_hash"] or "",
                status=FileStatus(r["status"]),
                reason=r["reason"] or "",
            )
        return out

    def stored_paths(self) -> set[str]:
        """Every path holding rows in chunks, symbols or edges (reads the path columns only)."""
        out: set[str] = set()
        for name in (CHUNKS, SYMBOLS, EDGES):
            col = self._table(name).search().select(["path"]).limit(None).to_arrow().column("path")
            out.update(col.unique().to_pylist())
        return out

    @contextlib.contextmanager
    def pinned_versions(
        self, known: Mapping[str, int] | None = None, *, share: dict[str, int] | None = None
    ) -> Iterator[None]:
        """Inside (on this thread), each table's version is read once: one search's
        counts, meta and file stats check the tables once instead of ~9 times. Every
        read is a round trip to lancedb's event-loop thread that lists the table's
        versions on disk (0.4-1 ms each on a loaded machine). ``known`` gives versions
        the caller read a moment ago (an answer keyed on them), so those are not read
        again; ``share``, another thread's pins (``shared_pins``): a search's workers
        then read each version once with it, and see the same one. Queries themselves
        still see the latest commit."""
        outer = getattr(self._pins, "versions", None)
        if outer is None:
            self._pins.versions = share if share is not None else dict(known or {})
        try:
            yield
        finally:
            if outer is None:
                self._pins.versions = None

    def pin_versions(self, names: Sequence[str]) -> None:
        """Inside ``pinned_versions``: read these tables' versions now, in one round trip
        to lancedb's event-loop thread with the tables' checks run at once, instead of
        one round trip each as the search first needs them (a hybrid search reads three).
        A table that cannot be read is left to be read (and fail) as before."""
        pins: dict[str, int] | None = getattr(self._pins, "versions", None)
        if pins is None:
            return
        wanted = [n for n in dict.fromkeys(names) if n not in pins]
        if not wanted:
            return
        try:
            tables = [self._table(n) for n in wanted]
            if not all(isinstance(t, LanceTable) for t in tables):
                return

            async def versions() -> list[int]:
                return list(await asyncio.gather(*(cast(LanceTable, t)._table.version() for t in tables)))

            read: list[int] = LOOP.run(versions())  # type: ignore[no-untyped-call]
        except Exception as exc:  # read one at a time later, failing as it always has
            log.debug("cannot read the versions of %s at once: %s", wanted, exc)
            return
        for name, version in zip(wanted, read, strict=True):
            pins.setdefault(name, int(version))

    def shared_pins(self) -> dict[str, int] | None:
        """This thread's pinned versions, to hand to ``pinned_versions(share=…)`` on
        another thread; None outside ``pinned_versions``."""
        pins: dict[str, int] | None = getattr(self._pins, "versions", None)
        return pins

    def derived(self, key: str, table: str, compute: Callable[[], _T]) -> _T:
        """``compute()``'s answer under ``key``, remembered until ``table``'s next commit:
        data derived from whole tables (the ranking's file-reference counts) made once
        per version; concurrent callers wait for one computation."""
        with self._derived_lock:
            version = self._version(table)
            held = self._derived.get(key)
            if held is not None and held[0] == version:
                return cast(_T, held[1])
            value = compute()
            self._derived[key] = (version, value)
            return value

    def table_version(self, name: str) -> int:
        """The table's current version; inside ``pinned_versions``, the one read first there."""
        return self._version(name)

    def _version(self, name: str) -> int:
        """The table's current version (read once per ``pinned_versions`` block)."""
        pins: dict[str, int] | None = getattr(self._pins, "versions", None)
        if pins is None:
            return int(self._table(name).version)
        version = pins.get(name)
        if version is None:  # a thread sharing these pins may read it at once: first wins
            version = pins.setdefault(name, int(self._table(name).version))
        return version

    def count(self, table: str, where: str | None = None) -> int:
        """Rows of a table matching ``where``, remembered until the table's next commit."""
        tbl = self._table(table)
        version = self._version(table)
        key = (table, where)
        hit = self._counts.get(key)
        if hit is not None and hit[0] == version:
            return hit[1]
        n = int(tbl.count_rows(where))
        self._counts[key] = (version, n)
        return n

    def current_meta(self) -> IndexMeta | None:
        """``read_meta`` for the hot path: re-read only when the meta table changed."""
        try:
            version = self._version(META)
        except (IndexMissingError, OSError, RuntimeError, ValueError):
            return self.read_meta()
        if self._meta is not None and self._meta[0] == version:
            return self._meta[1]
        meta = self.read_meta()
        self._meta = (version, meta)
        return meta

    def fast_dimension(self) -> int:
        """The fast tier's vector length in the chunks table as it is (0: no fast tier)."""
        schema = self._table(CHUNKS).schema
        if FAST_VECTOR not in schema.names:
            return 0
        return int(schema.field(FAST_VECTOR).type.list_size)

    def pending_vectors(
        self, limit: int, paths: Sequence[str] = (), *, fast: bool = False
    ) -> list[PendingChunk]:
        """Chunks still without a vector (``fast``: without a fast-tier one), optionally of some paths."""
        pending = FAST_PENDING if fast else PENDING
        query = self._table(CHUNKS).search().where(pending)
        if paths:
            flt = next(in_filters("path", list(paths)[:IN_BATCH]))
            query = self._table(CHUNKS).search().where(f"{pending} AND {flt}")
        rows = query.select(["id", "path", "content_hash", "text"]).limit(limit).to_arrow()
        return [PendingChunk(r["id"], r["path"], r["content_hash"], r["text"]) for r in rows.to_pylist()]

    def index_bytes(self) -> int:
        if not self.is_local:
            return 0
        total = 0
        for dirpath, _dirs, files in os.walk(self.uri):
            for f in files:
                with contextlib.suppress(OSError):
                    total += os.lstat(os.path.join(dirpath, f)).st_size
        return total

    # ----- writing -------------------------------------------------------------

    def write_files(
        self,
        writes: Sequence[FileWrite],
        dim: int,
        vectors: dict[str, Vectors],
        *,
        fresh: bool = False,
        fast_vectors: dict[str, Vectors] | None = None,
    ) -> None:
        """Replace the rows of these files: files rows out, chunks, symbols, edges, files rows in.

        ``vectors`` maps content hash → vector for chunks whose embedding is known;
        ``fast_vectors`` the same for the fast tier, when the index has one.
        ``fresh`` says no table holds a row of these paths (the caller swept orphans
        and none has a ``files`` row): nothing needs deleting first.
        """
        if not writes:
            return
        tables = (
            (
                CHUNKS,
                chunks_table(
                    [c for w in writes for c in w.chunks], dim, vectors, self.fast_dimension(), fast_vectors
                ),
            ),
            (SYMBOLS, symbols_table([s for w in writes for s in w.symbols])),
            (EDGES, edges_table([e for w in writes for e in w.edges])),
        )
        self.replace_rows(files_table([w.record for w in writes]), tables, fresh=fresh)

    def replace_rows(
        self, files: pa.Table, tables: Sequence[tuple[str, pa.Table]], *, fresh: bool = False
    ) -> None:
        """Replace the rows of the files in ``files`` (a files table) by ``tables``' rows, as a unit per file.

        The order is the crash-safety protocol: journal, files rows out, each table's
        rows of these paths out and the new ones in, the new files rows in last.
        """
        paths = files.column("path").to_pylist()
        what = f"writing {len(paths)} files"
        with self.writing(what, "journal"):
            journal.mark(self.uri, paths)  # before any delete: a disk already full loses nothing
        versions = {name: self._table(name).version for name in (FILES, CHUNKS, SYMBOLS, EDGES)}
        try:
            if not fresh:
                self._delete_paths(FILES, paths)  # the marker first: from here these files are re-done
            for name, data in tables:
                if not fresh:
                    self._delete_paths(name, paths)
                    crash_point("replace")
                if data.num_rows:
                    fail_point("add")
                    self._table(name).add(data)
                crash_point("write")
            crash_point("write-files")
            fail_point("add")
            self._table(FILES).add(files)
        except (OSError, RuntimeError, ValueError) as exc:
            if self._roll_back(versions):
                journal.settle(self.uri, paths)  # the old rows are back
            raise store_write_error(self.uri, what, exc) from exc
        journal.settle(self.uri, paths)

    def _roll_back(self, versions: dict[str, int]) -> bool:
        """Put tables back at these versions after a failed write (a small commit each: it
        may fail too on a full disk, then the journal tells readers what is missing)."""
        if not self.is_local:
            return False  # no writer lock on object stores: another writer's commits may follow
        try:
            fail_point("restore")
            for name, version in versions.items():
                tbl = self._table(name)
                if tbl.version != version:
                    tbl.restore(version)
        except Exception as exc:
            log.warning("could not restore the rows the failed write removed: %s", exc)
            return False
        log.info("restored the rows of the files whose write failed")
        return True

    @contextlib.contextmanager
    def writing(self, what: str, point: str) -> Iterator[None]:
        """Translate a failed write (a full disk above all) into a StoreError, once."""
        try:
            fail_point(point)
            yield
        except StoreError:
            raise
        except (OSError, RuntimeError, ValueError) as exc:
            raise store_write_error(self.uri, what, exc) from exc

    def incomplete_files(self) -> list[str]:
        """Files a failed write removed and could not restore: absent until the next run."""
        listed = journal.listed(self.uri)
        if not listed:
            return []
        return sorted(listed - set(self.file_records(sorted(listed))))

    def _delete_paths(self, name: str, paths: Sequence[str]) -> None:
        for flt in in_filters("path", list(paths)):
            self._table(name).delete(flt)

    def touch_files(self, records: Sequence[FileRecord]) -> None:
        """Update only the files rows (size, mtime) of files whose content is unchanged."""
        if records:
            with self.writing(f"updating {len(records)} files rows", "touch"):
                self._table(FILES).merge_insert("path").when_matched_update_all().execute(
                    files_table(records)
                )

    def remove_files(self, paths: Sequence[str]) -> None:
        """Forget files: the files rows first (the marker), then their chunks, symbols and edges."""
        if not paths:
            return
        try:
            self._delete_paths(FILES, paths)
            crash_point("remove")
            for name in (CHUNKS, SYMBOLS, EDGES):
                self._delete_paths(name, paths)
        except (OSError, RuntimeError, ValueError) as exc:
            raise store_write_error(self.uri, f"removing {len(paths)} files", exc) from exc
        journal.settle(self.uri, paths)

    def set_vectors(self, ids: Sequence[str], vectors: Vectors, dim: int, *, fast: bool = False) -> None:
        """Fill in vectors of existing chunks (``fast``: the fast tier's column); rows
        replaced meanwhile are left alone."""
        if not ids:
            return
        if len(set(ids)) < len(ids):  # an index from before ids were unique: one source row per id
            first: dict[str, int] = {}
            for k, i in enumerate(ids):
                first.setdefault(i, k)
            keep = sorted(first.values())
            ids, vectors = [ids[k] for k in keep], vectors[keep]
        column, flag = (FAST_VECTOR, HAS_FAST_VECTOR) if fast else ("vector", "has_vector")
        data = pa.table(
            {
                "id": pa.array(ids, pa.string()),
                column: vectors_to_arrow(vectors, dim),
                flag: pa.array([True] * len(ids), pa.bool_()),
            }
        )
        with self.writing(f"storing {len(ids)} vectors", "vectors"):
            self._table(CHUNKS).merge_insert("id").when_matched_update_all().execute(data)

    def optimize(self, keep_versions_for: timedelta | None = None) -> None:
        """Compact, fold new rows into the indices, prune old versions (older than ``keep_versions_for``).

        A table sharing data files with a sibling worktree's index (``clone``) is
        optimised without rewriting them (``compaction``), when pylance is installed;
        without it LanceDB's optimize rewrites them into files of this index's own."""
        keep_versions_for = keep_versions_for or self.keep_versions_for
        names = (CHUNKS, SYMBOLS, EDGES, FILES)
        linked = optimize_keeping_links(self.uri, names, keep_versions_for)
        for name in names:
            if name in linked:
                continue
            try:
                self._table(name).optimize(cleanup_older_than=keep_versions_for)
            except Exception as exc:  # optimisation is best effort: the data is whole
                log.warning("optimising %s failed: %s", name, exc)
        self.cache.optimize(keep_versions_for)

    def drop_everything(self) -> None:
        """Delete the whole index directory (local) — used by `codesift index --rebuild`."""
        self._tables.clear()
        self._read_tables.clear()
        self.cache.forget()
        if self.is_local:
            shutil.rmtree(self.uri, ignore_errors=True)
        else:
            for name in self.table_names():
                if not is_lease_table(name):  # the writer's own lock
                    self._db.drop_table(name)


def _open_at(db: lancedb.DBConnection, name: str, location: str) -> AsyncTable:
    """Table ``name`` opened at ``location`` on ``db``'s own connection (its session and
    strong reads), and one row read through it."""

    async def opened() -> AsyncTable:
        conn = cast("lancedb.AsyncConnection", db._conn)  # type: ignore[attr-defined]
        table = await conn.open_table(name, location=location)
        first = (await table.schema()).names[0]
        await table.query().select([first]).limit(1).to_arrow()  # a row through the ring
        return table

    table: AsyncTable = LOOP.run(opened())  # type: ignore[no-untyped-call]
    return table


async def _warm(table: AsyncTable, column: str) -> None:
    """One nearest query on ``column``'s index (``Store.warm_vector_index``)."""
    if not any(column in index.columns for index in await table.list_indices()):
        return
    kind = (await table.schema()).field(column).type
    if not isinstance(kind, pa.FixedSizeListType) or kind.list_size < 1:
        return  # not a vector column (a scalar index)
    axis = pa.array([1.0] + [0.0] * (kind.list_size - 1), pa.float32())
    query = table.query().nearest_to(axis).column(column).distance_type("cosine").limit(1)
    await query.select(["id", "_distance"]).to_arrow()


def fetch(query: AsyncQueryBase) -> pa.Table:
    """Run a query built on ``Store.query`` in one round trip to lancedb's event-loop
    thread. The sync builder took six per query (two schema reads, the plan, each
    batch), and a hybrid search's sources queued behind each other's on that one
    thread: 102k chunks, hybrid p50 44.8 → 39.2 ms, CPU 59.7 → 51.4 ms per search."""
    table: pa.Table = LOOP.run(query.to_arrow())  # type: ignore[no-untyped-call]
    return table


def load_chunks(store: Store, ids: Sequence[str], *, where: str | None = None) -> dict[str, Chunk]:
    """The chunks with these ids (missing ids, and those ``where`` excludes, are absent)."""
    out: dict[str, Chunk] = {}
    for flt in in_filters("id", list(dict.fromkeys(ids))):
        if where:
            flt = f"({flt}) AND ({where})"
        rows = fetch(store.query(CHUNKS).where(flt).select(CHUNK_COLUMNS))
        for chunk in chunks_from_table(rows):
            out[chunk.id] = chunk
    return out


def index_uri_for(root: Path, settings: Settings) -> str:
    """Where a workspace's index lives: ``index.index_dir`` relative to the root, or a URI."""
    return index_uri(root, settings.index.index_dir)


def open_store(root: Path, settings: Settings) -> Store:
    """The store of a workspace for reading; IndexMissingError says how to build it.
    Here, not in ``sync`` (which re-exports it): a reader (the CLI's ``symbols`` or
    ``search``) then skips ``sync``'s indexing imports (~200 ms)."""
    uri = index_uri_for(root.resolve(), settings)
    # Reading never writes: opening a missing index directory would create it.
    store = Store(uri) if index_exists_at(uri) else None
    if store is None or store.read_meta() is None:
        raise IndexMissingError(f"no codesift index for {root} yet: run `codesift index {root}` to build it")
    return store
