"""A published index: the manifest that makes a publish visible, and reading one.

A publish (``codesift index --to URI``) writes an ordinary index at URI, then
appends one row to its ``published`` table naming the version of every table it
left behind. That row is written last, in one Lance commit: readers pin each
table at the versions of the newest row, so a publish killed half-way, or one
still running, is invisible to them — they keep reading the previous publish
(the zoekt rule: build aside, then one atomic switch).
"""

from __future__ import annotations

import json
import logging
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import lancedb
import pyarrow as pa

from .embed_cache import cache_table_name
from .errors import StoreError
from .objectstore import explain, storage_options, within
from .store import CHUNKS, EDGES, EMBEDDED, FILES, META, PUBLISHED, SYMBOLS, IndexMeta, Store

log = logging.getLogger(__name__)

# A publish keeps older table versions this long, so a reader pinned to the
# previous manifest can finish copying while the next publish optimises.
PUBLISHED_VERSIONS_KEPT = timedelta(days=1)
DATA_TABLES = (FILES, CHUNKS, SYMBOLS, EDGES, META)


def _published_schema() -> pa.Schema:
    return pa.schema(
        [
            pa.field("published_at", pa.float64(), nullable=False),
            pa.field("commit", pa.string()),
            pa.field("versions", pa.string()),  # JSON: table name → version
            pa.field("schema_version", pa.int32()),
            pa.field("model_id", pa.string()),
            pa.field("dimension", pa.int32()),
            pa.field("fingerprint", pa.string()),  # JSON
            pa.field("cache_key", pa.string()),
            pa.field("files", pa.int64()),
            pa.field("chunks", pa.int64()),
            pa.field("vectors", pa.int64()),
        ]
    )


@dataclass(frozen=True, slots=True)
class Manifest:
    """One complete publish: what readers pin to."""

    published_at: float
    commit: str
    versions: dict[str, int]
    meta: IndexMeta
    cache_key: str
    files: int
    chunks: int
    vectors: int

    @property
    def key(self) -> str:
        """Identifies this publish (the versions change with every publish that wrote anything)."""
        return json.dumps({"at": self.published_at, "v": self.versions}, sort_keys=True)


def source_commit(root: Path) -> str:
    """The git commit of the workspace (with ``+dirty`` when the tree has changes), or ``""``."""
    try:
        head = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10
        )
        if head.returncode != 0:
            return ""
        dirty = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=30,
        )
        return head.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")
    except (OSError, subprocess.SubprocessError):
        return ""


def write_manifest(
    store: Store, commit: str, cache_key: str, *, fence: Callable[[], None] | None = None
) -> Manifest:
    """Make the index at ``store`` visible to readers as it is now: the publish's last write.

    ``fence`` runs just before the write and raises if this writer lost its lock.
    """
    meta = store.read_meta()
    if meta is None:
        raise StoreError(f"nothing to publish at {store.uri}: the index is incomplete")
    versions = {name: store.table(name).version for name in DATA_TABLES}
    cache = cache_table_name(cache_key)
    if cache in store.table_names():
        versions[cache] = store.table(cache).version
    chunks = store.count(CHUNKS)
    manifest = Manifest(
        published_at=time.time(),
        commit=commit,
        versions=versions,
        meta=meta,
        cache_key=cache_key,
        files=store.count(FILES),
        chunks=chunks,
        vectors=store.count(CHUNKS, EMBEDDED),
    )
    row = {
        "published_at": manifest.published_at,
        "commit": commit,
        "versions": json.dumps(versions, sort_keys=True),
        "schema_version": meta.schema_version,
        "model_id": meta.model_id,
        "dimension": meta.dimension,
        "fingerprint": json.dumps(meta.fingerprint, sort_keys=True),
        "cache_key": cache_key,
        "files": manifest.files,
        "chunks": chunks,
        "vectors": manifest.vectors,
    }
    data = pa.Table.from_pylist([row], schema=_published_schema())
    if fence is not None:
        fence()
    try:
        if PUBLISHED in store.table_names():
            store.table(PUBLISHED).add(data)
        else:
            store.create_table(PUBLISHED, data)
    except StoreError:
        raise
    except Exception as exc:
        raise StoreError(f"writing the publish manifest at {store.uri} failed: {exc}") from exc
    return manifest


def newest_manifest(uri: str, timeout_s: float) -> Manifest | None:
    """The newest publish at ``uri`` (None: nothing published), asked within ``timeout_s``
    in all: past it, StoreError says the store did not answer, and the caller goes on
    with its local copy. An editor's index run and ``codesift status`` ask this first."""
    return within(
        timeout_s,
        f"the remote index at {uri}",
        lambda: RemoteIndex(uri, timeout_s, quick=True).manifest(),
    )


def incompatibility(have: IndexMeta, want: IndexMeta) -> str:
    """Why an index built as ``have`` cannot be mixed with one built as ``want`` (``""``: it can)."""
    if have.schema_version != want.schema_version:
        return f"it has schema version {have.schema_version}, this codesift writes {want.schema_version}"
    if have.model_id != want.model_id or have.dimension != want.dimension:
        return (
            f"it was embedded with {have.model_id} ({have.dimension} dims), "
            f"this workspace uses {want.model_id} ({want.dimension} dims)"
        )
    if have.fingerprint != want.fingerprint:
        diff = sorted(
            k
            for k in {*have.fingerprint, *want.fingerprint}
            if have.fingerprint.get(k) != want.fingerprint.get(k)
        )
        return f"it was built with other index settings ({', '.join(diff)})"
    return ""


class RemoteIndex:
    """A published index, read-only: its newest manifest and its tables pinned to it."""

    def __init__(self, uri: str, timeout_s: float, *, quick: bool = False) -> None:
        self.uri = uri
        if "://" not in uri and not Path(uri).is_dir():  # connecting would create the folder
            raise StoreError(f"the remote index {uri} does not exist")
        try:
            self._db = lancedb.connect(uri, storage_options=storage_options(uri, timeout_s, quick=quick))
        except Exception as exc:
            raise StoreError(f"cannot reach the remote index at {uri}: {explain(exc)}") from exc

    def manifest(self) -> Manifest | None:
        """The newest complete publish, or None when nothing was published at this URI."""
        try:
            if PUBLISHED not in set(self._db.list_tables(limit=10_000).tables):
                return None
            rows = self._db.open_table(PUBLISHED).to_arrow().to_pylist()
        except Exception as exc:
            raise StoreError(f"cannot reach the remote index at {self.uri}: {explain(exc)}") from exc
        if not rows:
            return None
        r = max(rows, key=lambda row: float(row["published_at"]))
        return Manifest(
            published_at=float(r["published_at"]),
            commit=str(r["commit"] or ""),
            versions={str(k): int(v) for k, v in json.loads(r["versions"]).items()},
            meta=IndexMeta(
                schema_version=int(r["schema_version"]),
                model_id=str(r["model_id"]),
                dimension=int(r["dimension"]),
                fingerprint=json.loads(r["fingerprint"]),
            ),
            cache_key=str(r["cache_key"] or ""),
            files=int(r["files"] or 0),
            chunks=int(r["chunks"] or 0),
            vectors=int(r["vectors"] or 0),
        )

    def current(self, commit: str) -> Manifest | None:
        """An unpublished index as it is now (a sibling worktree's, read under its writer lock)."""
        try:
            if not set(DATA_TABLES) <= set(self._db.list_tables(limit=10_000).tables):
                return None
            kv = {str(r["key"]): str(r["value"]) for r in self._db.open_table(META).to_arrow().to_pylist()}
            versions = {name: int(self._db.open_table(name).version) for name in DATA_TABLES}
        except Exception as exc:
            raise StoreError(f"cannot read the index at {self.uri}: {explain(exc)}") from exc
        if "schema_version" not in kv:
            return None
        meta = IndexMeta(
            schema_version=int(kv["schema_version"]),
            model_id=kv.get("model_id", ""),
            dimension=int(kv.get("dimension", "0")),
            fingerprint=json.loads(kv.get("fingerprint", "{}")),
        )
        return Manifest(0.0, commit, versions, meta, "", 0, 0, 0)

    def pinned(self, name: str, manifest: Manifest) -> lancedb.table.Table:
        """Table ``name`` as the manifest's publish left it."""
        try:
            tbl = self._db.open_table(name)
            tbl.checkout(manifest.versions[name])
        except Exception as exc:
            raise StoreError(
                f"cannot read {name!r} of the remote index at {self.uri} "
                f"(published {time.strftime('%Y-%m-%d %H:%M', time.gmtime(manifest.published_at))}): "
                f"{explain(exc)}"
            ) from exc
        return tbl
