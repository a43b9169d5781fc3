"""The graph's edges as columns: numpy int arrays and sorted string tables, ``Edge``
objects made only for the rows a question reads.

719k stdlib edges as ``Edge`` objects took ~88 MiB and the dicts of lists over them
~60 MiB more; as columns (ten ids or numbers a row, the distinct strings once) they take
~30 MiB. A lookup is a binary search in a sorted key array (``Groups``).

Each row's numbers are 2 bytes when they fit (``narrowest``: the stdlib's largest id is
55,830, its longest file 8,550 lines), the ids of the large string tables (``from_symbol``,
``to_name``, ``alias``) and the rest (path, kind, module, positions) each a matrix that
falls back to 4 bytes on its own: 20 bytes a row instead of 40 (365k stdlib edges:
13.9 → 7.0 MiB). Those tables' distinct
values are one UTF-8 buffer with offsets (``PackedStrings``, 55.8k + 38.9k + 23.6k values
on the stdlib: 10.8 → 3.5 MiB as Python strings); a value is decoded when an ``Edge`` is
made.
"""

from __future__ import annotations

import bisect
from array import array
from collections.abc import Iterable, Iterator, Sequence
from itertools import repeat
from typing import overload

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from ..model import Edge, EdgeKind
from ..symtab import Sparse, narrowest

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
    "arg_types",
)
_STRINGS = ("path", "from_symbol", "to_name", "module", "alias")
_KINDS: tuple[EdgeKind, ...] = tuple(EdgeKind)
KIND_CODE = {k: i for i, k in enumerate(_KINDS)}
_NO_ROWS: Rows = np.zeros(0, np.int32)


class PackedStrings(Sequence[str]):
    """Sorted distinct strings as one UTF-8 buffer with offsets: a sequence (``bisect``
    finds a value in it) that decodes a value when it is read. Decoded values are kept
    (``decoded``, at most an eighth of them, 4,096 at least: then forgotten and decoded
    again), so the rows a question reads again cost a dict lookup, not a decode — a
    warm callers question reads the same few hundred rows each time."""

    __slots__ = ("_keep", "data", "decoded", "offsets")

    def __init__(self, values: Sequence[str]) -> None:
        encoded = [v.encode("utf-8", "surrogatepass") for v in values]
        self.data = b"".join(encoded)
        self.offsets = array("i" if len(self.data) < 2**31 else "q", [0])
        at = 0
        for b in encoded:
            at += len(b)
            self.offsets.append(at)
        self.decoded: dict[int, str] = {}
        self._keep = max(4096, len(encoded) // 8)

    def __len__(self) -> int:
        return len(self.offsets) - 1

    @overload
    def __getitem__(self, i: int) -> str: ...
    @overload
    def __getitem__(self, i: slice) -> list[str]: ...
    def __getitem__(self, i: int | slice) -> str | list[str]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        found = self.decoded.get(i)
        if found is not None:
            return found
        o = self.offsets
        if i < 0:
            i += len(o) - 1
        found = self.data[o[i] : o[i + 1]].decode("utf-8", "surrogatepass")
        if len(self.decoded) >= self._keep:
            self.decoded.clear()
        self.decoded[i] = found
        return found

    def decode(self, i: int) -> str:
        """Value ``i``, decoded and not kept (a build reads every row once)."""
        o = self.offsets
        return self.data[o[i] : o[i + 1]].decode("utf-8", "surrogatepass")

    def __iter__(self) -> Iterator[str]:
        o, data = self.offsets, self.data
        for i in range(len(o) - 1):
            yield data[o[i] : o[i + 1]].decode("utf-8", "surrogatepass")

    def nbytes(self) -> int:
        return len(self.data) + self.offsets.itemsize * len(self.offsets)


class Strings:
    """One string column: an id per row into a sorted table of its distinct values
    (``packed``: the table as ``PackedStrings``, for columns with many distinct values)."""

    __slots__ = ("ids", "values")

    def __init__(self, column: pa.ChunkedArray, packed: bool = False) -> None:
        encoded = column.unify_dictionaries().combine_chunks() if column.num_chunks else None
        self.values: Sequence[str]
        if encoded is None or not len(encoded):
            self.ids: Rows = np.zeros(0, np.int32)
            self.values = PackedStrings([]) if packed else []
            return
        # only the values some row holds (a rebuild's dictionaries keep dropped files' values)
        used, inverse = np.unique(encoded.indices.to_numpy(zero_copy_only=False), return_inverse=True)
        raw = [str(v) for v in encoded.dictionary.take(pa.array(used)).to_pylist()]
        order = sorted(range(len(raw)), key=raw.__getitem__)  # Python's order: bisect agrees
        rank = np.empty(len(raw), np.int32)
        rank[np.asarray(order, np.int64)] = np.arange(len(raw), dtype=np.int32)
        self.ids = rank[inverse.reshape(-1)]
        values = [raw[i] for i in order]
        del raw
        self.values = PackedStrings(values) if packed else values

    def id(self, value: str) -> int:
        """The id of ``value``; -1 when no row holds it."""
        return bisect_id(self.values, value)

    def encoded(self, rows: Rows) -> pa.DictionaryArray:
        """These rows, dictionary-encoded as ``encode`` makes them."""
        return pa.DictionaryArray.from_arrays(
            pa.array(self.ids[rows].astype(np.int32)), pa.array(list(self.values), pa.string())
        )


def bisect_id(values: Sequence[str], value: str) -> int:
    """The index of ``value`` in sorted ``values``; -1 when absent."""
    i = bisect.bisect_left(values, value)
    return i if i < len(values) and values[i] == value else -1


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


# the columns of ``EdgeColumns.narrow`` (path, kind, module, positions, a call's argument
# count + 1: ids and numbers that fit 2 bytes on most repositories) and
# ``EdgeColumns.wide`` (the large tables' ids)
_PATH, _KIND, _LINE, _COL, _END_LINE, _END_COL, _MODULE, _ARGS = range(8)
_FROM, _TO, _ALIAS = range(3)


class EdgeColumns:
    """Every edge of a snapshot, one row each, grouped by file in the snapshot's order:
    two int matrices (string ids, kind, position), so a row is two numpy reads."""

    def __init__(self, table: pa.Table) -> None:
        self.size = table.num_rows
        packed = {"from_symbol", "to_name", "alias"}
        s = {name: Strings(table.column(name), packed=name in packed) for name in _STRINGS}
        kinds = Strings(table.column("kind"))
        codes = np.array([KIND_CODE[EdgeKind(k)] for k in kinds.values] or [0], np.int32)
        numbers = [table.column(n).to_numpy() for n in ("line", "col", "end_line", "end_col")]
        args = table.column("args").to_numpy() + 1  # -1 (not known) stored as 0: no sign needed
        kind_ids = codes[kinds.ids] if self.size else kinds.ids
        narrow = [s["path"].ids, kind_ids, *numbers, s["module"].ids, args]
        self.narrow = np.zeros((self.size, 8), narrowest(narrow))
        for j, col in enumerate(narrow):
            self.narrow[:, j] = col
        wide = [s["from_symbol"].ids, s["to_name"].ids, s["alias"].ids]
        self.wide = np.zeros((self.size, 3), narrowest(wide))
        for j, col in enumerate(wide):
            self.wide[:, j] = col
        del narrow, numbers, wide, args
        # each table's ids are views of its matrix column: held once
        self.path, self.from_symbol, self.to_name = s["path"], s["from_symbol"], s["to_name"]
        self.module, self.alias = s["module"], s["alias"]
        self.path.ids, self.module.ids = self.narrow[:, _PATH], self.narrow[:, _MODULE]
        self.from_symbol.ids, self.to_name.ids = self.wide[:, _FROM], self.wide[:, _TO]
        self.alias.ids = self.wide[:, _ALIAS]
        self.kind = self.narrow[:, _KIND]
        self.line = self.narrow[:, _LINE]
        # Java calls' argument types: a few rows hold one (none outside Java)
        self.arg_types = Sparse(table.column("arg_types"), self.size)
        # ``Edge.last_name`` of each ``to_name`` value, as an id into its own sorted table
        lasts = [t.rsplit(".", 1)[-1] for t in self.to_name.values]
        names = sorted(set(lasts))
        self.last_of_to: Rows = np.array([bisect.bisect_left(names, n) for n in lasts] or [0], np.int32)
        self.last_names = PackedStrings(names)
        del lasts, names

    @classmethod
    def empty(cls) -> EdgeColumns:
        return cls(encode(edges_arrow(()).to_batches()))

    def last_name_ids(self, rows: Rows) -> Rows:
        """The id in ``last_names`` of each row's ``Edge.last_name``."""
        if not self.size:
            return np.zeros(0, np.int32)
        return self.last_of_to[self.to_name.ids[rows]]

    def arrow(self, rows: Rows) -> pa.Table:
        """These rows as a table of ``EDGE_COLUMNS`` (to be put together with new ones)."""
        strings = {name: getattr(self, name).encoded(rows) for name in _STRINGS}
        kinds = pa.array([str(k) for k in _KINDS], pa.string())
        cells = self.narrow[rows].astype(np.int32)
        return pa.table(
            {
                **strings,
                "kind": pa.DictionaryArray.from_arrays(pa.array(cells[:, _KIND]), kinds),
                "line": pa.array(cells[:, _LINE]),
                "col": pa.array(cells[:, _COL]),
                "end_line": pa.array(cells[:, _END_LINE]),
                "end_col": pa.array(cells[:, _END_COL]),
                "args": pa.array(cells[:, _ARGS] - 1),
                "arg_types": pa.array(self.arg_types.take(np.asarray(rows)), pa.string()).dictionary_encode(),
            }
        ).select(list(EDGE_COLUMNS))

    def edges(self, rows: Rows | Sequence[int]) -> list[Edge]:
        """The ``Edge`` objects of these rows, in their order."""
        if len(rows) == 0:
            return []
        pv, fv, tv = self.path.values, self.from_symbol.values, self.to_name.values
        mv, av, kinds = self.module.values, self.alias.values, _KINDS
        # Java calls' argument types ("" in every row of a workspace without Java)
        types: Iterable[str] = (
            self.arg_types.take(np.asarray(rows)) if len(self.arg_types.rows) else repeat("")
        )
        cells = zip(self.narrow[rows].tolist(), self.wide[rows].tolist(), types, strict=False)
        if isinstance(fv, PackedStrings) and isinstance(tv, PackedStrings) and isinstance(av, PackedStrings):
            return _edges_packed(cells, pv, fv, tv, av, mv)
        return [
            Edge(pv[p], fv[f], tv[t], kinds[k], ln, co, el, ec, mv[m], av[a], args=n - 1, arg_types=ts)
            for (p, k, ln, co, el, ec, m, n), (f, t, a), ts in cells
        ]

    def forget_decoded(self) -> None:
        """Forget the packed tables' decoded values (after building: those were not asked)."""
        for table in (self.from_symbol.values, self.to_name.values, self.alias.values, self.last_names):
            if isinstance(table, PackedStrings):
                table.decoded.clear()

    def places(self, rows: Rows) -> list[tuple[str, str, str]]:
        """(path, from_symbol, alias) of these rows, without making ``Edge`` objects (a
        build's read: nothing kept decoded)."""
        pv, fv, av = self.path.values, self.from_symbol.values, self.alias.values
        paths = self.narrow[rows, _PATH].tolist()
        f_of = fv.decode if isinstance(fv, PackedStrings) else fv.__getitem__
        a_of = av.decode if isinstance(av, PackedStrings) else av.__getitem__
        return [
            (pv[p], f_of(f), a_of(a)) for p, (f, _, a) in zip(paths, self.wide[rows].tolist(), strict=True)
        ]

    def nbytes(self) -> int:
        tables = (self.from_symbol.values, self.to_name.values, self.alias.values, self.last_names)
        return int(
            self.narrow.nbytes + self.wide.nbytes + self.last_of_to.nbytes + self.arg_types.nbytes()
        ) + sum(t.nbytes() for t in tables if isinstance(t, PackedStrings))


def _edges_packed(
    cells: Iterable[tuple[list[int], list[int], str]],
    pv: Sequence[str],
    fv: PackedStrings,
    tv: PackedStrings,
    av: PackedStrings,
    mv: Sequence[str],
) -> list[Edge]:
    """``EdgeColumns.edges`` over packed tables: a value already decoded is looked up
    without a method call (the hot path of a warm question)."""
    fget, tget, aget, kinds = fv.decoded.get, tv.decoded.get, av.decoded.get, _KINDS
    out = []
    for (p, k, ln, co, el, ec, m, n), (f, t, a), types in cells:
        fs, to, al = fget(f), tget(t), aget(a)
        if fs is None:
            fs = fv[f]
        if to is None:
            to = tv[t]
        if al is None:
            al = av[a]
        out.append(Edge(pv[p], fs, to, kinds[k], ln, co, el, ec, mv[m], al, args=n - 1, arg_types=types))
    return out


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
            "arg_types": pa.array([e.arg_types for e in es], pa.string()),
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
            # `args` is missing from an index of schema 4, `arg_types` of 5: not known
            missing = pa.nulls(batch.num_rows, pa.string() if n == "arg_types" else pa.int32())
            col = batch.column(n) if n in batch.schema.names else missing
            if n in _ENCODED:
                col = pc.dictionary_encode(pc.fill_null(col.cast(pa.string()), ""))
                col = col.cast(pa.dictionary(pa.int32(), pa.string()))
            else:
                col = pc.fill_null(col.cast(pa.int32()), -1 if n == "args" else 0)
            cols.append(col)
        out.append(pa.RecordBatch.from_arrays(cols, schema=schema))
    return pa.Table.from_batches(out, schema=schema)


_ENCODED = frozenset({*_STRINGS, "kind", "arg_types"})
