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

import contextlib
import hashlib
import json
import logging
import os
import shutil
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING

import lancedb
import pyarrow as pa
from lancedb.background_loop import LOOP
from lancedb.query import AsyncQuery, AsyncQueryBase
from lancedb.table import AsyncTable, LanceTable

from . import journal
from .errors import IndexMissingError, StoreError, store_write_error
from .faults import crash_point, fail_point
from .heap import arrow_on_system_pool
from .lease import is_lease_table
from .locate import index_exists_at, index_uri
from .model import Chunk, FileRecord, FileStatus, FileWrite, Position, Symbol
from .objectstore import storage_options as default_storage_options
from .rows import (
    CHUNK_COLUMNS,
    FAST_VECTOR,
    HAS_FAST_VECTOR,
    SYMBOL_COLUMNS,
    Vectors,
    arrow_to_matrix,
    cache_schema,
    chunks_from_table,
    chunks_schema,
    chunks_table,
    edges_schema,
    edges_table,
    files_schema,
    files_table,
    meta_schema,
    symbol_from_row,
    symbols_from_table,
    symbols_schema,
    symbols_table,
    vectors_to_arrow,
)

if TYPE_CHECKING:
    from .settings import Settings

log = logging.getLogger(__name__)

# 2: the edges table (reference graph)
# 3: chunks.has_vector (counting pending vectors read the whole vector column: ~80 ms
#    at 100k chunks, on every save and search; the flag reads in ~2 ms)
# 4: the fast tier (chunks.fast_vector / has_fast_vector: a static model's vectors
#    beside the main model's, written right after the text phase)
SCHEMA_VERSION = 4

FILES = "files"
CHUNKS = "chunks"
SYMBOLS = "symbols"
EDGES = "edges"
META = "meta"
PUBLISHED = "published"  # the publish manifest (indexer.remote)
_IN_BATCH = 500  # values per SQL IN (...) list
_SYMBOL_BATCH = 32_768  # symbol rows read at a time
_CACHE_PREFIX = "emb_"
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


def _sql_str(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def in_filters(column: str, values: Sequence[str]) -> Iterator[str]:
    for i in range(0, len(values), _IN_BATCH):
        part = values[i : i + _IN_BATCH]
        yield f"{column} IN ({', '.join(_sql_str(v) for v in part)})"


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


# Seconds an object store may take to connect before a read or write gives up.
STORE_TIMEOUT_S = 10.0

# IVF partitions of the approximate vector index: one per this many vectors.
VECTORS_PER_PARTITION = 25_000
# HNSW graph effort of the fast tier's index (lancedb's default, the main index's: 300).
FAST_EF_CONSTRUCTION = 150


class Store:
    """An index directory (or s3:// URI) holding one workspace's tables."""

    def __init__(
        self,
        uri: str,
        *,
        storage_options: dict[str, str] | None = None,
        keep_versions_for: timedelta = timedelta(minutes=5),
    ) -> None:
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
        self._counts: dict[tuple[str, str | None], tuple[int, int]] = {}
        self._meta: tuple[int, IndexMeta | None] | None = None
        self._file_stats: tuple[int, dict[str, tuple[int, int]]] | None = None
        self._all_symbols: tuple[int, list[Symbol]] | None = None
        self._all_symbols_lock = threading.Lock()
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
        with ``fetch``. The table is the same object (and caches) ``table`` reads."""
        tbl = self._table(name)
        if not isinstance(tbl, LanceTable):  # a local or s3:// index is always one
            raise StoreError(f"table {name!r} of {self.uri} cannot be queried asynchronously")
        inner: AsyncTable = tbl._table
        return inner.query()

    def create_table(self, name: str, data: pa.Table) -> None:
        """A new table of the index's own (beside the data tables), e.g. the publish manifest."""
        with self._writing(f"creating table {name}", "create"):
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

    def all_symbols(self) -> list[Symbol]:
        """Every stored symbol, the same objects for every caller until the symbols table's
        next commit: the symbol index and the graph share one copy (~65 MiB of the stdlib's
        129k symbols) instead of building one each. Callers must not mutate the list."""
        with self._all_symbols_lock:
            tbl = self._table(SYMBOLS)
            version = tbl.version
            if self._all_symbols is not None and self._all_symbols[0] == version:
                return self._all_symbols[1]
            # only the columns a Symbol holds, a batch at a time (never `id` / `name_lower`:
            # ~20 MiB of strings on the stdlib that the Arrow read left behind)
            reader = tbl.search().select(list(SYMBOL_COLUMNS)).limit(None).to_batches(_SYMBOL_BATCH)
            with arrow_on_system_pool():
                positions: dict[tuple[int, int], Position] = {}
                symbols = [
                    s for b in reader for s in symbols_from_table(pa.Table.from_batches([b]), positions)
                ]
                del positions
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
                flts.append(f"starts_with(path, {_sql_str(under.rstrip('/') + '/')})")
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
    def pinned_versions(self) -> Iterator[None]:
        """Inside (on this thread), each table's version is read once: one search's
        counts, meta and file stats check the tables once instead of ~9 times. Every
        read is a round trip to lancedb's event-loop thread that lists the table's
        versions on disk (0.4-1 ms each on a loaded machine). Queries themselves still
        see the latest commit."""
        outer = getattr(self._pins, "versions", None)
        if outer is None:
            self._pins.versions = {}
        try:
            yield
        finally:
            if outer is None:
                self._pins.versions = None

    def _version(self, name: str) -> int:
        """The table's current version (read once per ``pinned_versions`` block)."""
        pins: dict[str, int] | None = getattr(self._pins, "versions", None)
        if pins is None:
            return int(self._table(name).version)
        version = pins.get(name)
        if version is None:
            version = pins[name] = int(self._table(name).version)
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
            flt = next(in_filters("path", list(paths)[:_IN_BATCH]))
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

    # ----- the embedding cache ---------------------------------------------------

    @staticmethod
    def cache_table_name(model_id: str) -> str:
        return _CACHE_PREFIX + hashlib.sha1(model_id.encode()).hexdigest()[:16]

    def _cache_names(self) -> list[str]:
        """The embedding cache tables, one per model that ever embedded here."""
        return sorted(n for n in self.table_names() if n.startswith(_CACHE_PREFIX))

    def _cache(self, model_id: str, dim: int) -> lancedb.table.Table:
        name = self.cache_table_name(model_id)
        if name not in self._tables:
            if name in self.table_names():
                self._tables[name] = self._db.open_table(name)
            else:
                from lancedb.index import BTree

                tbl = self._db.create_table(name, schema=cache_schema(dim))
                tbl.create_index("content_hash", config=BTree())
                self._tables[name] = tbl
        return self._tables[name]

    def cache_lookup(self, model_id: str, dim: int, hashes: Iterable[str]) -> dict[str, Vectors]:
        """Vectors already computed by this model for these content hashes."""
        wanted = sorted(set(hashes))
        if not wanted:
            return {}
        tbl = self._cache(model_id, dim)
        if tbl.count_rows() == 0:
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

    def cache_put(self, model_id: str, dim: int, hashes: Sequence[str], vectors: Vectors) -> None:
        if not hashes:
            return
        data = pa.table(
            {"content_hash": pa.array(hashes, pa.string()), "vector": vectors_to_arrow(vectors, dim)},
            schema=cache_schema(dim),
        )
        with self._writing(f"caching {len(hashes)} vectors", "cache"):
            tbl = self._cache(model_id, dim)
            tbl.merge_insert("content_hash").when_not_matched_insert_all().execute(data)

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
        with self._writing(what, "journal"):
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
    def _writing(self, what: str, point: str) -> Iterator[None]:
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
            with self._writing(f"updating {len(records)} files rows", "touch"):
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
        with self._writing(f"storing {len(ids)} vectors", "vectors"):
            self._table(CHUNKS).merge_insert("id").when_matched_update_all().execute(data)

    def ensure_indices(self) -> None:
        """Create the FTS and scalar indices if missing (cheap when present)."""
        with self._writing("building the search indices", "index"):
            self._ensure_indices()

    def _ensure_indices(self) -> None:
        from lancedb.index import FTS, BTree

        chunks = self._table(CHUNKS)
        have = {tuple(i.columns) for i in chunks.list_indices()}
        fts = FTS(with_position=True, stem=False, remove_stop_words=False)
        # BM25 reads the split column alone (see search.keyword): an FTS index on the
        # raw text would only cost build time, disk, and an optimize 2.7× as long.
        if ("search_text",) not in have:
            chunks.create_index("search_text", config=fts)
        # id: a vectors batch merges by it, and the ranking stage loads chunks by it
        # (101k chunks: merging 500 vectors 3.6 → 1.2 s, loading 60 chunks 47 → 27 ms).
        for column in ("path", "id"):
            if (column,) not in have:
                chunks.create_index(column, config=BTree())
        want = {SYMBOLS: ("name_lower", "path"), EDGES: ("path",)}
        want.update({name: ("content_hash",) for name in self._cache_names()})
        for name, columns in want.items():
            tbl = self._table(name)
            have = {tuple(i.columns) for i in tbl.list_indices()}
            for column in columns:
                if (column,) not in have:
                    tbl.create_index(column, config=BTree())  # replace, remove and lookup by it

    def has_vector_index(self, *, fast: bool = False) -> bool:
        """Whether the main model's vectors (``fast``: the fast tier's) have an approximate index."""
        column = FAST_VECTOR if fast else "vector"
        return any(tuple(i.columns) == (column,) for i in self._table(CHUNKS).list_indices())

    def ensure_vector_index(self, min_rows: int, *, fast: bool = False) -> bool:
        """Build the approximate vector index once ``min_rows`` chunks have vectors
        (``fast``: over the fast tier's column, once that many have a fast vector).

        Brute force is exact and fast enough below ~50k vectors (65 ms at 100k on
        two cores is not); IVF_HNSW_SQ answers in ~5 ms with recall ~0.9-0.95.
        Built once; rows added later, and rows the other tier's vectors rewrote, are
        searched exactly until ``optimize`` folds them in. Returns whether it built
        one (seconds to minutes: writers only).
        """
        if min_rows <= 0 or (fast and self.fast_dimension() == 0) or self.has_vector_index(fast=fast):
            return False
        column, embedded = (FAST_VECTOR, FAST_EMBEDDED) if fast else ("vector", EMBEDDED)
        rows = self.count(CHUNKS, embedded)
        if rows < min_rows:
            return False
        from lancedb.index import HnswSq

        started = time.perf_counter()
        partitions = max(1, rows // VECTORS_PER_PARTITION)
        # The fast tier's index is built while MiniLM waits to start (and saves for the
        # writer): half the graph-building effort builds it in 71 s instead of 118 s at
        # 102k static vectors (load ~7), recall@10 0.953 against 0.963.
        config = (
            HnswSq(distance_type="cosine", num_partitions=partitions, ef_construction=FAST_EF_CONSTRUCTION)
            if fast
            else HnswSq(distance_type="cosine", num_partitions=partitions)
        )
        what = "the fast tier's vector index" if fast else "the vector index"
        with self._writing(f"building {what}", "index"):
            self._table(CHUNKS).create_index(column, config=config)
        log.info(
            "built the %s index over %d vectors (%d partitions) in %.1f s",
            column,
            rows,
            partitions,
            time.perf_counter() - started,
        )
        return True

    def needs_optimize(self, unindexed_rows: int = 500, versions: int = 100) -> bool:
        """Whether enough has changed since the last optimize to pay for one.

        New rows are searchable before they are folded into the FTS index, only
        slower, and a row whose vector is filled in is a new row too: BM25 scans
        the unindexed ones (~100 ms CPU for 5.6k rows on the stdlib, ~18 ms for the
        whole indexed 100k). An optimize of a 50k-chunk index takes seconds, so small
        runs skip it until 500 rows or 100 versions pile up.
        """
        try:
            chunks = self._table(CHUNKS)
            for idx in chunks.list_indices():
                stats = chunks.index_stats(idx.name)
                if stats is not None and stats.num_unindexed_rows >= unindexed_rows:
                    return True
            return len(chunks.list_versions()) >= versions
        except (OSError, RuntimeError, ValueError) as exc:
            log.debug("cannot read index statistics, optimising: %s", exc)
            return True

    def optimize(self, keep_versions_for: timedelta | None = None) -> None:
        """Compact, fold new rows into the indices, prune old versions (older than ``keep_versions_for``)."""
        keep_versions_for = keep_versions_for or self.keep_versions_for
        for name in (CHUNKS, SYMBOLS, EDGES, FILES, *self._cache_names()):
            try:
                self._table(name).optimize(cleanup_older_than=keep_versions_for)
            except Exception as exc:  # optimisation is best effort: the data is whole
                log.warning("optimising %s failed: %s", name, exc)

    def drop_everything(self) -> None:
        """Delete the whole index directory (local) — used by `codesift index --rebuild`."""
        self._tables.clear()
        if self.is_local:
            shutil.rmtree(self.uri, ignore_errors=True)
        else:
            for name in self.table_names():
                if not is_lease_table(name):  # the writer's own lock
                    self._db.drop_table(name)


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


def default_index_uri(root: Path, index_dir: str) -> str:
    """Where a workspace's index lives: ``index_dir`` relative to the root, or a URI."""
    return index_uri(root, index_dir)


def index_uri_for(root: Path, settings: Settings) -> str:
    return default_index_uri(root, settings.index.index_dir)


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
