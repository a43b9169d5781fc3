"""How many other files name what a file defines: the ranking stage's file-reference prior.

A file that many other files use (``connect.c``, ``StringUtils.java``, ``mux.go``) is
more often the answer than a sibling that only mentions the same words. The count is
whole-index evidence the sources cannot see, so it is counted once per version of the
``files`` table (the commit marker every write of symbols and edges ends with) and
remembered for the store: a save's next search counts again, while the sources run
(see docs/DECISIONS.md, "the file-reference prior").
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from ..model import EdgeKind
from ..store import EDGES, FILES, SYMBOLS, Store, fetch

# A name defined in more files than this (``get``, ``run``, ``__init__``) says nothing
# about which of them another file uses.
MAX_DEFINERS = 3


def file_references(store: Store) -> Mapping[str, int]:
    """Each file's count of other files whose edges name a symbol it defines (names
    defined in at most ``MAX_DEFINERS`` files); files no other file names are absent.
    Remembered by the store until the ``files`` table's next commit."""
    return store.derived("file_references", FILES, lambda: _count(store))


def _count(store: Store) -> dict[str, int]:
    symbols = fetch(store.query(SYMBOLS).select(["name", "path"]))
    edges = named_edges(fetch(store.query(EDGES).select(["path", "last_name", "to_name", "kind"])))
    return count_references(
        symbols.column("name"), symbols.column("path"), edges.column("path"), edges.column("last_name")
    )


def named_edges(edges: pa.Table) -> pa.Table:
    """The edges that name a definition by its own name: imports, supertypes, type
    references and bare calls — not a call through a receiver or qualifier
    (``x.lower()``, ``self.error()``), which as written (unresolved) names a method of
    any type: counted, they gave every file defining a ``lower`` or an ``error`` the
    calls of the standard library's (docs/DECISIONS.md)."""
    through = pc.and_(
        pc.equal(edges.column("kind"), str(EdgeKind.CALL)), pc.match_substring(edges.column("to_name"), ".")
    )
    return edges.filter(pc.invert(pc.fill_null(through, False)))


def count_references(
    names: pa.ChunkedArray | pa.Array,
    def_paths: pa.ChunkedArray | pa.Array,
    edge_paths: pa.ChunkedArray | pa.Array,
    edge_names: pa.ChunkedArray | pa.Array,
) -> dict[str, int]:
    """``file_references`` over columns: symbols (name, path) and edges (path, the
    name they reach, ``last_name``). Distinct (defining file, naming file) pairs,
    counted per defining file, in numpy over dictionary ids."""
    vocab = pc.unique(names.drop_null())
    paths = pc.unique(pa.chunked_array([*_chunks(def_paths), *_chunks(edge_paths)], pa.string()).drop_null())
    n_paths = len(paths)
    if not len(vocab) or not n_paths:
        return {}
    # distinct definitions (name, file), sorted by name
    name, where = _ids(names, vocab), _ids(def_paths, paths)
    known = (name >= 0) & (where >= 0)
    defs = np.unique(name[known] * n_paths + where[known])
    def_name, def_file = defs // n_paths, defs % n_paths
    definers = np.bincount(def_name, minlength=len(vocab))
    first_def = np.searchsorted(def_name, np.arange(len(vocab)))
    # distinct uses (name, file) of a name defined in few files
    used = _ids(edge_names, vocab)
    by = _ids(edge_paths, paths)
    keep = (used >= 0) & (by >= 0)
    used, by = used[keep], by[keep]
    keep = definers[used] <= MAX_DEFINERS
    uses = np.unique(used[keep] * n_paths + by[keep])
    use_name, use_file = uses // n_paths, uses % n_paths
    # each use paired with every definition of its name: (defining file, naming file)
    per_use = definers[use_name]
    total = int(per_use.sum())
    group_start = np.cumsum(per_use) - per_use
    slot = np.repeat(first_def[use_name] - group_start, per_use) + np.arange(total)
    defining = def_file[slot]
    naming = np.repeat(use_file, per_use)
    other = defining != naming
    pairs = np.unique(defining[other] * n_paths + naming[other])
    counts = np.bincount(pairs // n_paths, minlength=n_paths)
    files = paths.to_pylist()
    return {files[i]: int(counts[i]) for i in np.flatnonzero(counts)}


def _chunks(column: pa.ChunkedArray | pa.Array) -> list[pa.Array]:
    return list(column.chunks) if isinstance(column, pa.ChunkedArray) else [column]


def _ids(column: pa.ChunkedArray | pa.Array, values: pa.Array) -> npt.NDArray[np.int64]:
    """Each value's index in ``values`` (−1 for a null or a value not there)."""
    found = pc.index_in(column, value_set=values).fill_null(-1)
    return np.asarray(found.to_numpy(zero_copy_only=False), dtype=np.int64)
