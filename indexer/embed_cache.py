"""The embedding cache: vectors keyed by (model key, content hash).

One LanceDB table per model key (``emb_<sha1 of the key>``): a vector computed
once for a text is never computed again, whichever file, branch or rebuild asks
for it. The key (``Settings.vector_cache_key``) names the model and what changes
its vectors for the same text; the content hash is the hash of the embedded text
itself, so any index may read any entry.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
from collections.abc import Iterable, Iterator, Sequence
from datetime import timedelta

import lancedb
import pyarrow as pa

from .errors import StoreError, store_write_error
from .faults import fail_point
from .rows import Vectors, arrow_to_matrix, cache_schema, in_filters, vectors_to_arrow

log = logging.getLogger(__name__)

CACHE_PREFIX = "emb_"


def cache_table_name(key: str) -> str:
    """The table holding one model key's vectors."""
    return CACHE_PREFIX + hashlib.sha1(key.encode()).hexdigest()[:16]


class EmbedCache:
    """The cache tables of one LanceDB database (an index's own, by default)."""

    def __init__(self, db: lancedb.DBConnection, uri: str) -> None:
        self.uri = uri
        self._db = db
        self._tables: dict[str, lancedb.table.Table] = {}

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

    def _table(self, key: str, dim: int) -> lancedb.table.Table:
        name = cache_table_name(key)
        if name not in self._tables:
            if name in self.table_names():
                self._tables[name] = self._db.open_table(name)
            else:
                from lancedb.index import BTree

                tbl = self._db.create_table(name, schema=cache_schema(dim))
                tbl.create_index("content_hash", config=BTree())
                self._tables[name] = tbl
        return self._tables[name]

    def lookup(self, key: str, dim: int, hashes: Iterable[str]) -> dict[str, Vectors]:
        """Vectors already computed under this model key for these content hashes."""
        wanted = sorted(set(hashes))
        if not wanted:
            return {}
        tbl = self._table(key, dim)
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

    def put(self, key: str, dim: int, hashes: Sequence[str], vectors: Vectors) -> None:
        """Remember vectors by content hash (hashes already present keep their vector)."""
        if not hashes:
            return
        data = pa.table(
            {"content_hash": pa.array(hashes, pa.string()), "vector": vectors_to_arrow(vectors, dim)},
            schema=cache_schema(dim),
        )
        with self._writing(f"caching {len(hashes)} vectors", "cache"):
            tbl = self._table(key, dim)
            tbl.merge_insert("content_hash").when_not_matched_insert_all().execute(data)

    def ensure_indices(self) -> None:
        """The BTree on ``content_hash`` of every cache table (lookups and merges go by it)."""
        from lancedb.index import BTree

        for name in self.table_names():
            tbl = self._tables.get(name) or self._db.open_table(name)
            if ("content_hash",) not in {tuple(i.columns) for i in tbl.list_indices()}:
                tbl.create_index("content_hash", config=BTree())

    def optimize(self, keep_versions_for: timedelta) -> None:
        """Compact the cache tables and prune their old versions (best effort)."""
        for name in self.table_names():
            try:
                (self._tables.get(name) or self._db.open_table(name)).optimize(
                    cleanup_older_than=keep_versions_for
                )
            except Exception as exc:  # optimisation is best effort: the data is whole
                log.warning("optimising %s failed: %s", name, exc)

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
