"""The graph's edges as columns: numpy int arrays and sorted string tables, ``Edge``
objects made only for the rows a question reads.

719k stdlib edges as ``Edge`` objects took ~88 MiB and the dicts of lists over them
~60 MiB more; as columns (ten 4-byte ids or numbers a row, the distinct strings once)
they take ~30 MiB. A lookup is a binary search in a sorted key array (``Groups``).
"""

from __future__ import annotations

import bisect
import sys
from collections.abc import Iterable, Sequence

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from ..model import Edge, EdgeKind

Rows = npt.NDArray[np.int32]

#: the ``edges`` table's columns the graph reads (never ``id``: ~30 MiB of strings on the stdlib)
EDGE_COLUMNS = (
    "path",
    "from_symbol",
    "to_name",
    "kind",
    "module",
    "alias",
    "line",
    "col",
    "end_line",
    "end_col",
    "args",
)
_STRINGS = ("path", "from_symbol", "to_name", "module", "alias")
_KINDS: tuple[EdgeKind, ...] = tuple(EdgeKind)
KIND_CODE = {k: i for i, k in enumerate(_KINDS)}
_NO_ROWS: Rows = np.zeros(0, np.int32)


class Strings:
    """One string column: an id per row into a sorted table of its distinct values."""

    __slots__ = ("ids", "values")

    def __init__(self, column: pa.ChunkedArray) -> None:
        encoded = column.unify_dictionaries().combine_chunks() if column.num_chunks else None
        if encoded is None or not len(encoded):
            self.ids: Rows = np.zeros(0, np.int32)
            self.values: list[str] = []
            return
        # only the values some row holds (a rebuild's dictionaries keep dropped files' values)
        used, inverse = np.unique(encoded.indices.to_numpy(zero_copy_only=False), return_inverse=True)
        raw = [sys.intern(str(v)) for v in encoded.dictionary.take(pa.array(used)).to_pylist()]
        order = sorted(range(len(raw)), key=raw.__getitem__)  # Python's order: bisect agrees
        rank = np.empty(len(raw), np.int32)
        rank[np.asarray(order, np.int64)] = np.arange(len(raw), dtype=np.int32)
        self.ids = rank[inverse.reshape(-1)]
        self.values = [raw[i] for i in order]

    def id(self, value: str) -> int:
        """The id of ``value``; -1 when no row holds it."""
        i = bisect.bisect_left(self.values, value)
        return i if i < len(self.values) and self.values[i] == value else -1

    def encoded(self, rows: Rows) -> pa.DictionaryArray:
        """These rows, dictionary-encoded as ``encode`` makes them."""
        return pa.DictionaryArray.from_arrays(
            pa.array(self.ids[rows], pa.int32()), pa.array(self.values, pa.string())
        )


class Groups:
    """Rows grouped by an integer key in ``[0, size)``: the rows sorted by key (a stable
    sort, so each group keeps the rows' order) and where each key's rows start."""

    __slots__ = ("rows", "starts")

    def __init__(self, keys: npt.NDArray[np.integer], rows: Rows, size: int) -> None:
        order = np.argsort(keys, kind="stable")
        self.rows: Rows = rows[order].astype(np.int32)
        self.starts = np.searchsorted(keys[order], np.arange(size + 1)).astype(np.int32)

    def get(self, key: int) -> Rows:
        if not 0 <= key < len(self.starts) - 1:
            return _NO_ROWS
        return self.rows[self.starts[key] : self.starts[key + 1]]


# the columns of ``EdgeColumns.cells``: what ``Edge(...)`` takes, in its order
_PATH, _FROM, _TO, _KIND, _LINE, _COL, _END_LINE, _END_COL, _MODULE, _ALIAS, _ARGS = range(11)


class EdgeColumns:
    """Every edge of a snapshot, one row each, grouped by file in the snapshot's order:
    one int32 matrix (string ids, kind, position), so a row is one numpy read."""

    def __init__(self, table: pa.Table) -> None:
        self.size = table.num_rows
        s = {name: Strings(table.column(name)) for name in _STRINGS}
        kinds = Strings(table.column("kind"))
        codes = np.array([KIND_CODE[EdgeKind(k)] for k in kinds.values] or [0], np.int32)
        self.cells = np.zeros((self.size, 11), np.int32)
        for j, name in ((_PATH, "path"), (_FROM, "from_symbol"), (_TO, "to_name")):
            self.cells[:, j] = s[name].ids
        self.cells[:, _MODULE] = s["module"].ids
        self.cells[:, _ALIAS] = s["alias"].ids
        if self.size:
            self.cells[:, _KIND] = codes[kinds.ids]
        numbers = (
            (_LINE, "line"),
            (_COL, "col"),
            (_END_LINE, "end_line"),
            (_END_COL, "end_col"),
            (_ARGS, "args"),
        )
        for j, name in numbers:
            self.cells[:, j] = table.column(name).to_numpy()
        # each table's ids are views of its column: held once
        self.path, self.from_symbol, self.to_name = s["path"], s["from_symbol"], s["to_name"]
        self.module, self.alias = s["module"], s["alias"]
        for j, st in ((_PATH, self.path), (_FROM, self.from_symbol), (_TO, self.to_name)):
            st.ids = self.cells[:, j]
        self.module.ids, self.alias.ids = self.cells[:, _MODULE], self.cells[:, _ALIAS]
        self.kind = self.cells[:, _KIND]
        self.line = self.cells[:, _LINE]
        # ``Edge.last_name`` of each row, as an id into its own sorted table
        lasts = [t.rsplit(".", 1)[-1] for t in self.to_name.values]
        self.last_names: list[str] = sorted(set(lasts))
        last_id = np.array([bisect.bisect_left(self.last_names, n) for n in lasts] or [0], np.int32)
        self.last_name: Rows = last_id[self.to_name.ids] if self.size else np.zeros(0, np.int32)

    @classmethod
    def empty(cls) -> EdgeColumns:
        return cls(encode(edges_arrow(()).to_batches()))

    def arrow(self, rows: Rows) -> pa.Table:
        """These rows as a table of ``EDGE_COLUMNS`` (to be put together with new ones)."""
        strings = {name: getattr(self, name).encoded(rows) for name in _STRINGS}
        kinds = pa.array([str(k) for k in _KINDS], pa.string())
        cells = self.cells[rows]
        return pa.table(
            {
                **strings,
                "kind": pa.DictionaryArray.from_arrays(pa.array(cells[:, _KIND]), kinds),
                "line": pa.array(cells[:, _LINE]),
                "col": pa.array(cells[:, _COL]),
                "end_line": pa.array(cells[:, _END_LINE]),
                "end_col": pa.array(cells[:, _END_COL]),
                "args": pa.array(cells[:, _ARGS]),
            }
        ).select(list(EDGE_COLUMNS))

    def edges(self, rows: Rows | Sequence[int]) -> list[Edge]:
        """The ``Edge`` objects of these rows, in their order."""
        if len(rows) == 0:
            return []
        pv, fv, tv = self.path.values, self.from_symbol.values, self.to_name.values
        mv, av, kinds = self.module.values, self.alias.values, _KINDS
        return [
            Edge(pv[p], fv[f], tv[t], kinds[k], ln, co, el, ec, mv[m], av[a], args=n)
            for p, f, t, k, ln, co, el, ec, m, a, n in self.cells[rows].tolist()
        ]

    def places(self, rows: Rows) -> list[tuple[str, str, str]]:
        """(path, from_symbol, alias) of these rows, without making ``Edge`` objects."""
        pv, fv, av = self.path.values, self.from_symbol.values, self.alias.values
        return [(pv[p], fv[f], av[a]) for p, f, a in self.cells[rows][:, [_PATH, _FROM, _ALIAS]].tolist()]

    def nbytes(self) -> int:
        return int(self.cells.nbytes + self.last_name.nbytes)


def edges_arrow(edges: Iterable[Edge]) -> pa.Table:
    """Edges (a test's or a tool's, not read from a store) as a table of ``EDGE_COLUMNS``."""
    es = list(edges)
    return pa.table(
        {
            "path": pa.array([e.path for e in es], pa.string()),
            "from_symbol": pa.array([e.from_symbol for e in es], pa.string()),
            "to_name": pa.array([e.to_name for e in es], pa.string()),
            "kind": pa.array([str(e.kind) for e in es], pa.string()),
            "module": pa.array([e.module for e in es], pa.string()),
            "alias": pa.array([e.alias for e in es], pa.string()),
            "line": pa.array([e.line for e in es], pa.int32()),
            "col": pa.array([e.column for e in es], pa.int32()),
            "end_line": pa.array([e.end_line for e in es], pa.int32()),
            "end_col": pa.array([e.end_column for e in es], pa.int32()),
            "args": pa.array([e.args for e in es], pa.int32()),
        }
    )


def encode(batches: Iterable[pa.RecordBatch]) -> pa.Table:
    """Batches of ``EDGE_COLUMNS`` with the string columns dictionary-encoded batch by
    batch (null as ""): what ``EdgeColumns`` reads. A full read of the stdlib's edges
    then holds ids and distinct strings, never 720k rows of strings at once."""
    names = list(EDGE_COLUMNS)
    schema = pa.schema(
        [pa.field(n, pa.dictionary(pa.int32(), pa.string()) if n in _ENCODED else pa.int32()) for n in names]
    )
    out = []
    for batch in batches:
        cols = []
        for n in names:
            # `args` is missing from an index of schema 4: not known
            col = batch.column(n) if n in batch.schema.names else pa.nulls(batch.num_rows, pa.int32())
            if n in _ENCODED:
                col = pc.dictionary_encode(pc.fill_null(col.cast(pa.string()), ""))
                col = col.cast(pa.dictionary(pa.int32(), pa.string()))
            else:
                col = pc.fill_null(col.cast(pa.int32()), -1 if n == "args" else 0)
            cols.append(col)
        out.append(pa.RecordBatch.from_arrays(cols, schema=schema))
    return pa.Table.from_batches(out, schema=schema)


_ENCODED = frozenset({*_STRINGS, "kind"})
