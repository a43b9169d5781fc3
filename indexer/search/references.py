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

from ..heap import arrow_on_system_pool
from ..model import EdgeKind
from ..store import EDGES, FILES, SYMBOLS, Store, fetch

_EDGE_BATCH = 65_536  # edge rows read at a time
_SHIFT = 32  # (name id, file id) packed in one int64
_MASK = (1 << _SHIFT) - 1
# A name defined in more files than this (``get``, ``run``, ``__init__``) says nothing
# about which of them another file uses.
MAX_DEFINERS = 3


def file_references(store: Store) -> Mapping[str, int]:
    """Each file's count of other files whose edges name a symbol it defines (names
    defined in at most ``MAX_DEFINERS`` files); files no other file names are absent.
    Remembered by the store until the ``files`` table's next commit."""
    return store.derived("file_references", FILES, lambda: _count(store))


def _count(store: Store) -> dict[str, int]:
    """The count over the store: the symbols' names and paths, then the edges a batch at
    a time (the whole table at once held ~165 MiB more at 731k edges), kept as
    distinct (name, file) ids."""
    with arrow_on_system_pool():
        symbols = fetch(store.query(SYMBOLS).select(["name", "path"]))
        vocab = pc.unique(symbols.column("name").drop_null())
        paths = _Paths(pc.unique(symbols.column("path").drop_null()).to_pylist())
        defs = (_ids(symbols.column("name"), vocab), paths.ids(symbols.column("path")))
        del symbols
        uses: list[npt.NDArray[np.int64]] = []
        reader = (
            store.table(EDGES)
            .search()
            .select(["path", "last_name", "to_name", "kind"])
            .limit(None)
            .to_batches(_EDGE_BATCH)
        )
        for batch in reader:
            named = named_edges(pa.Table.from_batches([batch]))
            name = _ids(named.column("last_name"), vocab)
            where = paths.ids(named.column("path"))
            known = name >= 0
            uses.append(np.unique(name[known] << _SHIFT | where[known]))
    use = np.unique(np.concatenate(uses)) if uses else np.zeros(0, np.int64)
    counts = _pair_counts(defs, (use >> _SHIFT, use & _MASK), len(vocab), len(paths.values))
    return {paths.values[i]: int(n) for i, n in counts}


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
    """``file_references`` over columns: symbols (name, path) and the edges that name a
    definition (path, the name they reach, ``last_name``)."""
    vocab = pc.unique(names.drop_null())
    paths = pc.unique(pa.chunked_array([*_chunks(def_paths), *_chunks(edge_paths)], pa.string()).drop_null())
    name, where = _ids(names, vocab), _ids(def_paths, paths)
    used, by = _ids(edge_names, vocab), _ids(edge_paths, paths)
    counts = _pair_counts((name, where), (used, by), len(vocab), len(paths))
    files = paths.to_pylist()
    return {files[i]: int(n) for i, n in counts}


def _pair_counts(
    defs: tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]],
    uses: tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]],
    n_names: int,
    n_paths: int,
) -> list[tuple[int, int]]:
    """(file id, count) for each file other files name: distinct (defining file,
    naming file) pairs over (name id, file id) rows of definitions and uses (−1: none)."""
    if not n_names or not n_paths:
        return []
    name, where = defs
    known = (name >= 0) & (where >= 0)
    keys = np.unique(name[known] * n_paths + where[known])  # sorted by name
    def_name, def_file = keys // n_paths, keys % n_paths
    definers = np.bincount(def_name, minlength=n_names)
    first_def = np.searchsorted(def_name, np.arange(n_names))
    used, by = uses
    keep = (used >= 0) & (by >= 0)
    used, by = used[keep], by[keep]
    keep = definers[used] <= MAX_DEFINERS
    keys = np.unique(used[keep] * n_paths + by[keep])
    use_name, use_file = keys // n_paths, keys % n_paths
    # each use paired with every definition of its name: (defining file, naming file)
    per_use = definers[use_name]
    group_start = np.cumsum(per_use) - per_use
    slot = np.repeat(first_def[use_name] - group_start, per_use) + np.arange(int(per_use.sum()))
    defining, naming = def_file[slot], np.repeat(use_file, per_use)
    other = defining != naming
    pairs = np.unique(defining[other] * n_paths + naming[other])
    counts = np.bincount(pairs // n_paths, minlength=n_paths)
    return [(int(i), int(counts[i])) for i in np.flatnonzero(counts)]


class _Paths:
    """File paths as ids: the symbols' sorted paths first, others added as edges name them."""

    def __init__(self, values: list[str]) -> None:
        self.values = list(values)
        self._id = {p: i for i, p in enumerate(self.values)}

    def ids(self, column: pa.ChunkedArray) -> npt.NDArray[np.int64]:
        encoded = pc.dictionary_encode(column.combine_chunks())
        local = np.array([self._add(p) for p in encoded.dictionary.to_pylist()] or [0], np.int64)
        return local[np.asarray(encoded.indices.to_numpy(zero_copy_only=False), np.int64)]

    def _add(self, path: str) -> int:
        found = self._id.get(path)
        if found is None:
            found = self._id[path] = len(self.values)
            self.values.append(path)
        return found


def _chunks(column: pa.ChunkedArray | pa.Array) -> list[pa.Array]:
    return list(column.chunks) if isinstance(column, pa.ChunkedArray) else [column]


def _ids(column: pa.ChunkedArray | pa.Array, values: pa.Array) -> npt.NDArray[np.int64]:
    """Each value's index in ``values`` (−1 for a null or a value not there)."""
    found = pc.index_in(column, value_set=values).fill_null(-1)
    return np.asarray(found.to_numpy(zero_copy_only=False), dtype=np.int64)
