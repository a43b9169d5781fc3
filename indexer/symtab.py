"""Symbols as columns: numpy arrays of ids and numbers, each distinct name, path,
language and container once, qualified names and chunk ids packed in one buffer each.
A ``Symbol`` object is made only for a row an answer or a lookup reads (and then kept,
so a row is always the same object).

The stdlib's 129k symbols as objects (``Symbol``, two ``Span``s, their ``Position``s and
the qualified names and chunk ids as separate strings) took ~48 MiB, and the symbol
index's and the graph's lookups over them (dicts of tuples and lists) ~45 MiB more; as
columns they take ~12 MiB, shared by the symbol index and the graph (``Store.all_symbols``).
"""

from __future__ import annotations

import bisect
import sys
from collections.abc import Iterable, Iterator, Sequence
from typing import overload

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from .model import Position, Span, Symbol, SymbolKind
from .rows import SYMBOL_COLUMNS, present

Rows = npt.NDArray[np.int32]

_POSITIONS = SYMBOL_COLUMNS[5:13]
# Rows kept as made ``Symbol``s (each with its two spans, ~600 bytes): the graph's answers
# and the symbol index's re-read the same few hundred; the stdlib's memory probe made
# ~7,500 (was: half the rows, 32k on the stdlib, ~19 MiB in a long session)
KEEP_MADE = 4_096
_KINDS: dict[int, SymbolKind] = {int(k): k for k in SymbolKind}


def _strings(column: pa.ChunkedArray | pa.Array, null: str) -> pa.Array:
    """A string column as UTF-8 bytes (``surrogatepass``: a symbol of an unsaved buffer
    whose path did not decode keeps its surrogates), nulls as ``null``."""
    col = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    return pc.fill_null(col.cast(pa.large_binary()), pa.scalar(null.encode(), pa.large_binary()))


def _utf8(values: Iterable[str]) -> pa.Array:
    return pa.array([v.encode("utf-8", "surrogatepass") for v in values], pa.large_binary())


class Distinct:
    """One string column with few distinct values: an id per row into the sorted values
    (2 bytes when every id fits, ``narrowest``)."""

    __slots__ = ("ids", "values")

    def __init__(self, ids: Rows, values: list[str]) -> None:
        self.ids = ids
        self.values = values

    @classmethod
    def of(cls, column: pa.Array) -> Distinct:
        if not len(column):
            return cls(np.zeros(0, np.int32), [])
        encoded = pc.dictionary_encode(column)
        raw = [sys.intern(v.decode("utf-8", "surrogatepass")) for v in encoded.dictionary.to_pylist()]
        order = sorted(range(len(raw)), key=raw.__getitem__)
        rank = np.empty(len(raw), np.int32)
        rank[np.asarray(order, np.int64)] = np.arange(len(raw), dtype=np.int32)
        ids = rank[encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)]
        return cls(ids.astype(narrowest([ids])), [raw[i] for i in order])

    def id(self, value: str) -> int:
        """The id of ``value``; -1 when no row holds it."""
        i = bisect.bisect_left(self.values, value)
        return i if i < len(self.values) and self.values[i] == value else -1

    def __getitem__(self, row: int) -> str:
        return self.values[int(self.ids[row])]


class Packed:
    """One string column of mostly distinct values: UTF-8 bytes in one buffer, offsets."""

    __slots__ = ("data", "offsets")

    def __init__(self, column: pa.Array) -> None:
        arr = column.cast(pa.large_binary())
        if arr.offset or not len(arr):
            arr = pa.concat_arrays([arr])  # a slice: offsets from 0
        bufs = arr.buffers()
        offsets = np.frombuffer(bufs[1], np.int64, len(arr) + 1) if len(arr) else np.zeros(1, np.int64)
        self.offsets = offsets.copy()
        end = int(self.offsets[-1])
        self.data = bytes(bufs[2])[int(self.offsets[0]) : end] if bufs[2] is not None else b""
        self.offsets -= self.offsets[0]

    def __getitem__(self, row: int) -> str:
        return self.raw(row).decode("utf-8", "surrogatepass")

    def raw(self, row: int) -> bytes:
        """Row ``row``'s UTF-8 bytes."""
        offsets = self.offsets
        return self.data[offsets[row] : offsets[row + 1]]

    def arrow(self) -> pa.Array:
        buffers = [None, pa.py_buffer(self.offsets.tobytes()), pa.py_buffer(self.data)]
        return pa.Array.from_buffers(pa.large_binary(), len(self.offsets) - 1, buffers)

    def nbytes(self) -> int:
        return len(self.data) + int(self.offsets.nbytes)


_HEX_DIGITS = np.frombuffer(b"0123456789abcdef", np.uint8)


class HexIds:
    """A column of fixed-width lower-case hex ids (``model.chunk_id``: 24 digits) as their
    bytes, 12 a row instead of 24 and an offset (the stdlib's 64k chunk ids: 2.0 → 0.74 MiB)."""

    __slots__ = ("data", "width")

    def __init__(self, data: bytes, width: int) -> None:
        self.data = data
        self.width = width

    @classmethod
    def of(cls, column: pa.Array) -> HexIds | Packed:
        """The column as ``HexIds`` when every value is hex of one even length, else ``Packed``."""
        values: list[bytes] = column.to_pylist()
        width = len(values[0]) if values else 0
        joined = b"".join(values)
        if width and width % 2 == 0 and len(joined) == width * len(values):
            try:
                data = bytes.fromhex(joined.decode("ascii"))
            except ValueError:
                data = b""
            if data and data.hex().encode("ascii") == joined:  # lower-case, no spaces
                return cls(data, width // 2)
        return Packed(column)

    def __getitem__(self, row: int) -> str:
        w = self.width
        return self.data[row * w : (row + 1) * w].hex()

    def arrow(self) -> pa.Array:
        raw = np.frombuffer(self.data, np.uint8)
        text = np.empty(2 * len(raw), np.uint8)
        text[0::2], text[1::2] = _HEX_DIGITS[raw >> 4], _HEX_DIGITS[raw & 15]
        offsets = np.arange(0, len(text) + 1, 2 * self.width, dtype=np.int64)
        buffers = [None, pa.py_buffer(offsets.tobytes()), pa.py_buffer(text.tobytes())]
        return pa.Array.from_buffers(pa.large_binary(), len(offsets) - 1, buffers)

    def nbytes(self) -> int:
        return len(self.data)


class Sparse:
    """A string column empty in most rows (Java's parameter and argument types, ""
    elsewhere): the rows that hold a value, sorted, each with an id into the distinct
    values — nothing a row for the rest (a workspace without Java holds none)."""

    __slots__ = ("ids", "rows", "values")

    def __init__(self, column: pa.ChunkedArray | pa.Array | None, size: int) -> None:
        self.values: list[str] = []
        self.rows: Rows = np.zeros(0, np.int32)
        self.ids: npt.NDArray[np.integer] = np.zeros(0, np.uint16)
        if column is None or not size:
            return
        if isinstance(column, pa.ChunkedArray):
            column = column.combine_chunks()
        if pa.types.is_dictionary(column.type):
            column = column.cast(column.type.value_type)
        filled = pc.fill_null(column.cast(pa.string()), "")
        held = np.flatnonzero(pc.not_equal(filled, "").to_numpy(zero_copy_only=False))
        if not len(held):
            return
        taken = filled.take(pa.array(held)).to_pylist()
        self.values = sorted(set(taken))
        index = {v: i for i, v in enumerate(self.values)}
        ids = np.array([index[v] for v in taken], np.int64)
        self.rows = held.astype(np.int32)
        self.ids = ids.astype(narrowest([ids]))

    def get(self, row: int) -> str:
        rows = self.rows
        if not len(rows):
            return ""
        i = int(np.searchsorted(rows, row))
        return self.values[int(self.ids[i])] if i < len(rows) and rows[i] == row else ""

    def take(self, rows: npt.NDArray[np.integer]) -> list[str]:
        """The values of these rows, in their order."""
        if not len(self.rows):
            return [""] * len(rows)
        at = np.searchsorted(self.rows, rows)
        at = np.minimum(at, len(self.rows) - 1)
        hit = self.rows[at] == rows
        values = self.values
        return [values[i] if h else "" for i, h in zip(self.ids[at].tolist(), hit.tolist(), strict=True)]

    def nbytes(self) -> int:
        return int(self.rows.nbytes + self.ids.nbytes) + sum(len(v) for v in self.values)


class SymbolColumns:
    """Symbols of a ``symbols`` table slice (``SYMBOL_COLUMNS``), one row each, in its order."""

    def __init__(self, table: pa.Table) -> None:
        self.size = int(table.num_rows)
        self.name = Distinct.of(_strings(table.column("name"), "None"))
        self.path = Distinct.of(_strings(table.column("path"), "None"))
        self.language = Distinct.of(_strings(table.column("language"), "None"))
        self.container = Distinct.of(_strings(table.column("container"), ""))
        self.qualified = Packed(_strings(table.column("qualified_name"), "None"))
        self.chunk_id = HexIds.of(_strings(table.column("chunk_id"), "None"))
        kinds = table.column("kind").combine_chunks()
        self.kind = np.asarray(
            pc.fill_null(kinds.cast(pa.int32()), 0).to_numpy(zero_copy_only=False), np.int8
        )
        positions = [
            pc.fill_null(table.column(name).combine_chunks().cast(pa.int32()), 0).to_numpy(
                zero_copy_only=False
            )
            for name in _POSITIONS
        ]
        # 2 bytes a number when every line and column fits
        self.pos = np.zeros((self.size, 8), narrowest(positions))
        for j, col in enumerate(positions):
            self.pos[:, j] = col
        del positions
        # an index of schema 4 has neither: any argument count, no partial type
        # (``model.arity`` fits 2 bytes: at most 254 + 256 × 255)
        self.arity = np.zeros(self.size, np.uint16)
        self.partial = np.zeros(self.size, np.bool_)
        if "arity" in table.column_names:
            arities = table.column("arity").combine_chunks().cast(pa.int32())
            self.arity[:] = pc.fill_null(arities, 0).to_numpy(zero_copy_only=False)
        if "partial" in table.column_names:
            parts = table.column("partial").combine_chunks().cast(pa.bool_())
            self.partial[:] = pc.fill_null(parts, False).to_numpy(zero_copy_only=False)
        # Java's parameter types (an index of schema 5 has none: not known)
        self.params = Sparse(table.column("params") if "params" in table.column_names else None, self.size)
        self._made: dict[int, Symbol] = {}
        # Symbols kept once made: at most KEEP_MADE (then forgotten and made again as read),
        # so a long session's questions never bring back every row as an object
        self._keep = KEEP_MADE

    @classmethod
    def of(cls, symbols: Iterable[Symbol]) -> SymbolColumns:
        """Columns of given symbols (a file's, a test's), in their order."""
        return cls(symbols_arrow(symbols))

    @classmethod
    def read(cls, batches: Iterable[pa.RecordBatch]) -> SymbolColumns:
        """Columns of batches of ``SYMBOL_COLUMNS`` (a store read), put together once."""
        parts = [pa.Table.from_batches([b]) for b in batches]
        table = pa.concat_tables(parts) if parts else symbols_arrow(())
        return cls(table.select(present(SYMBOL_COLUMNS, table.schema)))

    def __len__(self) -> int:
        return self.size

    @property
    def made(self) -> int:
        """How many rows have their ``Symbol`` made."""
        return len(self._made)

    def symbol(self, row: int) -> Symbol:
        """The ``Symbol`` of a row: made on first use, the same object after (while at
        most half the rows are kept as objects)."""
        row = int(row)
        found = self._made.get(row)
        if found is None:
            if len(self._made) >= self._keep:
                self._made.clear()
            sl, sc, el, ec, ssl, ssc, sel, sec = self.pos[row].tolist()
            found = Symbol(
                name=self.name[row],
                qualified_name=self.qualified[row],
                kind=_KINDS.get(int(self.kind[row])) or SymbolKind(int(self.kind[row])),
                path=self.path[row],
                language=self.language[row],
                range=Span(Position(sl, sc), Position(el, ec)),
                selection_range=Span(Position(ssl, ssc), Position(sel, sec)),
                container=self.container[row],
                chunk_id=self.chunk_id[row],
                arity=int(self.arity[row]),
                partial=bool(self.partial[row]),
                params=self.params.get(row),
            )
            found = self._made.setdefault(row, found)
        return found

    def symbols(self, rows: Iterable[int] | Rows) -> list[Symbol]:
        """The ``Symbol``s of these rows, in their order (the rows not made yet are made
        together: one numpy read per column, not one per row)."""
        wanted: list[int] = rows.tolist() if isinstance(rows, np.ndarray) else [int(r) for r in rows]
        made = self._made
        new = [r for r in wanted if r not in made]
        if new and len(made) + len(new) > self._keep:
            made.clear()
            new = list(dict.fromkeys(wanted))
        if len(new) > 1:
            at = np.asarray(new, np.int64)
            names, paths = self.name.values, self.path.values
            langs, conts = self.language.values, self.container.values
            quals, cids = self.qualified, self.chunk_id
            for r, (sl, sc, el, ec, ssl, ssc, sel, sec), k, n, p, lg, c, ar, part, pt in zip(
                new,
                self.pos[at].tolist(),
                self.kind[at].tolist(),
                self.name.ids[at].tolist(),
                self.path.ids[at].tolist(),
                self.language.ids[at].tolist(),
                self.container.ids[at].tolist(),
                self.arity[at].tolist(),
                self.partial[at].tolist(),
                self.params.take(at),
                strict=True,
            ):
                sym = Symbol(
                    name=names[n],
                    qualified_name=quals[r],
                    kind=_KINDS.get(k) or SymbolKind(k),
                    path=paths[p],
                    language=langs[lg],
                    range=Span(Position(sl, sc), Position(el, ec)),
                    selection_range=Span(Position(ssl, ssc), Position(sel, sec)),
                    container=conts[c],
                    chunk_id=cids[r],
                    arity=ar,
                    partial=part,
                    params=pt,
                )
                made.setdefault(r, sym)
        make = self.symbol
        out = [made.get(r) or make(r) for r in wanted]
        if len(made) > self._keep:  # more rows than kept at once: none stays made
            made.clear()
        return out

    def arrow(self, rows: Rows | None = None) -> pa.Table:
        """These rows (all by default) as a table of ``SYMBOL_COLUMNS``."""
        take = np.arange(self.size, dtype=np.int64) if rows is None else np.asarray(rows, np.int64)

        def strings(d: Distinct) -> pa.Array:
            return _utf8(d.values[i] for i in d.ids[take].tolist())

        qual = self.qualified.arrow().take(pa.array(take))
        cids = self.chunk_id.arrow().take(pa.array(take))
        cols: dict[str, pa.Array] = {
            "name": strings(self.name),
            "qualified_name": qual,
            "kind": pa.array(self.kind[take].astype(np.int32)),
            "path": strings(self.path),
            "language": strings(self.language),
        }
        for j, name in enumerate(_POSITIONS):
            cols[name] = pa.array(self.pos[take, j].astype(np.int32))
        cols["container"] = strings(self.container)
        cols["chunk_id"] = cids
        cols["arity"] = pa.array(self.arity[take].astype(np.int32))
        cols["partial"] = pa.array(self.partial[take])
        cols["params"] = pa.array(self.params.take(take), pa.string())
        return pa.table(cols)

    def nbytes(self) -> int:
        return int(
            self.pos.nbytes
            + self.kind.nbytes
            + self.arity.nbytes
            + self.partial.nbytes
            + self.params.nbytes()
            + sum(d.ids.nbytes for d in (self.name, self.path, self.language, self.container))
            + self.qualified.nbytes()
            + self.chunk_id.nbytes()
        )


class SymbolRows(Sequence[Symbol]):
    """Some rows of a ``SymbolColumns`` as a sequence of ``Symbol``s, made as read."""

    __slots__ = ("columns", "rows")

    def __init__(self, columns: SymbolColumns, rows: Rows) -> None:
        self.columns = columns
        self.rows = rows

    def __len__(self) -> int:
        return len(self.rows)

    @overload
    def __getitem__(self, i: int) -> Symbol: ...
    @overload
    def __getitem__(self, i: slice) -> list[Symbol]: ...
    def __getitem__(self, i: int | slice) -> Symbol | list[Symbol]:
        if isinstance(i, slice):
            return self.columns.symbols(self.rows[i])
        return self.columns.symbol(self.rows[i])

    def __iter__(self) -> Iterator[Symbol]:
        make = self.columns.symbol
        for r in self.rows.tolist():
            yield make(r)


def symbols_arrow(symbols: Iterable[Symbol]) -> pa.Table:
    """Symbols (a test's, a file's, an unsaved buffer's) as a table of ``SYMBOL_COLUMNS``."""
    ss = list(symbols)

    def ints(get: object) -> pa.Array:
        return pa.array([get(s) for s in ss], pa.int32())  # type: ignore[operator]

    return pa.table(
        {
            "name": _utf8(s.name for s in ss),
            "qualified_name": _utf8(s.qualified_name for s in ss),
            "kind": pa.array([int(s.kind) for s in ss], pa.int32()),
            "path": _utf8(s.path for s in ss),
            "language": _utf8(s.language for s in ss),
            "start_line": ints(lambda s: s.range.start.line),
            "start_col": ints(lambda s: s.range.start.column),
            "end_line": ints(lambda s: s.range.end.line),
            "end_col": ints(lambda s: s.range.end.column),
            "sel_start_line": ints(lambda s: s.selection_range.start.line),
            "sel_start_col": ints(lambda s: s.selection_range.start.column),
            "sel_end_line": ints(lambda s: s.selection_range.end.line),
            "sel_end_col": ints(lambda s: s.selection_range.end.column),
            "container": _utf8(s.container for s in ss),
            "chunk_id": _utf8(s.chunk_id for s in ss),
            "arity": ints(lambda s: s.arity),
            "partial": pa.array([s.partial for s in ss], pa.bool_()),
            "params": pa.array([s.params for s in ss], pa.string()),
        }
    )


def concat(parts: Sequence[tuple[SymbolColumns, Rows]]) -> SymbolColumns:
    """The given rows of each part, one after another, as new columns."""
    tables = [cols.arrow(rows) for cols, rows in parts if len(rows)]
    return SymbolColumns(pa.concat_tables(tables) if tables else symbols_arrow(()))


def narrowest(columns: Sequence[npt.NDArray[np.integer]]) -> type[np.integer]:
    """uint16 when every value of these columns is in [0, 65535] (ids and positions of
    all but the largest repositories), else int32."""
    lo = min((int(c.min()) for c in columns if len(c)), default=0)
    hi = max((int(c.max()) for c in columns if len(c)), default=0)
    return np.uint16 if lo >= 0 and hi <= np.iinfo(np.uint16).max else np.int32


class HashIndex:
    """Rows by a hashed key (Python's ``hash`` of a str or tuple, stable within the
    process): the hashes sorted, rows in their order among equal hashes. Callers check
    each found row's real key (two keys may share a hash)."""

    __slots__ = ("hashes", "rows")

    def __init__(self, hashes: npt.NDArray[np.int64], rows: Rows) -> None:
        order = np.argsort(hashes, kind="stable")
        self.hashes = hashes[order]
        self.rows: Rows = rows[order].astype(np.int32)

    def get(self, key: object) -> Rows:
        h = hash(key)
        hashes = self.hashes
        lo = int(hashes.searchsorted(h))
        if lo == len(hashes) or hashes[lo] != h:
            return self.rows[0:0]
        hi = lo + 1  # most keys have one row: a second search only when the next is equal
        if hi < len(hashes) and hashes[hi] == h:
            hi = int(hashes.searchsorted(h, "right"))
        return self.rows[lo:hi]


def pair_slot(keys: npt.NDArray[np.int64], a: int, b: int, width: int) -> int:
    """Where the pair of ids ``(a, b)`` is in ``keys``, the sorted distinct ``a * width + b``
    of some rows (``width``: how many ids ``b`` can take, at least 1); -1 when it is not
    there or either id is unknown (negative)."""
    if a < 0 or b < 0:
        return -1
    key = a * max(width, 1) + b
    k = int(np.searchsorted(keys, key))
    return k if k < len(keys) and keys[k] == key else -1


def group_starts(keys: npt.NDArray[np.integer], size: int) -> tuple[Rows, Rows]:
    """(rows sorted by key, stably; where each key in ``[0, size)`` starts)."""
    order = np.argsort(keys, kind="stable").astype(np.int32)
    starts = np.searchsorted(keys[order], np.arange(size + 1)).astype(np.int32)
    return order, starts
