"""Arrow schemas of the index tables and the conversions between engine types and rows.

The store writes with these; readers (search, graph) rebuild engine types with them.
"""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Iterator, Sequence

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from .model import Chunk, ChunkKind, Edge, EdgeKind, FileRecord, Position, Span, Symbol, SymbolKind

Vectors = npt.NDArray[np.float32]

IN_BATCH = 500  # values per SQL IN (...) list


def sql_str(value: str) -> str:
    """A string literal for a LanceDB filter."""
    return "'" + value.replace("'", "''") + "'"


def in_filters(column: str, values: Sequence[str]) -> Iterator[str]:
    """``column IN (...)`` filters covering ``values``, a bounded number of values each."""
    for i in range(0, len(values), IN_BATCH):
        part = values[i : i + IN_BATCH]
        yield f"{column} IN ({', '.join(sql_str(v) for v in part)})"


def vector_type(dim: int) -> pa.DataType:
    return pa.list_(pa.float32(), dim)


def files_schema() -> pa.Schema:
    return pa.schema(
        [
            pa.field("path", pa.string(), nullable=False),
            pa.field("language", pa.string()),
            pa.field("size", pa.int64()),
            pa.field("mtime_ns", pa.int64()),
            pa.field("content_hash", pa.string()),
            pa.field("status", pa.string()),
            pa.field("reason", pa.string()),
        ]
    )


# The fast tier's columns (a static model's vectors beside the main model's; see
# DECISIONS.md, "The two-tier index"): present only in an index built with the tier.
FAST_VECTOR = "fast_vector"
HAS_FAST_VECTOR = "has_fast_vector"


def chunks_schema(dim: int, fast_dim: int = 0) -> pa.Schema:
    """The chunks table; ``fast_dim`` > 0 adds the fast tier's vector column and flag."""
    fast = (
        [
            pa.field(FAST_VECTOR, vector_type(fast_dim), nullable=True),
            pa.field(HAS_FAST_VECTOR, pa.bool_(), nullable=False),
        ]
        if fast_dim > 0
        else []
    )
    return pa.schema(
        [
            pa.field("id", pa.string(), nullable=False),
            pa.field("path", pa.string(), nullable=False),
            pa.field("project", pa.string()),
            pa.field("language", pa.string()),
            pa.field("kind", pa.string()),
            pa.field("symbol", pa.string()),
            pa.field("start_line", pa.int32()),
            pa.field("end_line", pa.int32()),
            pa.field("text", pa.string()),
            pa.field("search_text", pa.string()),
            pa.field("content_hash", pa.string()),
            pa.field("vector", vector_type(dim), nullable=True),
            pa.field("has_vector", pa.bool_(), nullable=False),
            *fast,
        ]
    )


def symbols_schema() -> pa.Schema:
    return pa.schema(
        [
            pa.field("id", pa.string(), nullable=False),
            pa.field("name", pa.string()),
            pa.field("name_lower", pa.string()),
            pa.field("qualified_name", pa.string()),
            pa.field("kind", pa.int32()),
            pa.field("path", pa.string(), nullable=False),
            pa.field("language", pa.string()),
            pa.field("start_line", pa.int32()),
            pa.field("start_col", pa.int32()),
            pa.field("end_line", pa.int32()),
            pa.field("end_col", pa.int32()),
            pa.field("sel_start_line", pa.int32()),
            pa.field("sel_start_col", pa.int32()),
            pa.field("sel_end_line", pa.int32()),
            pa.field("sel_end_col", pa.int32()),
            pa.field("container", pa.string()),
            pa.field("chunk_id", pa.string()),
            pa.field("arity", pa.int32()),
            pa.field("partial", pa.bool_()),
            pa.field("params", pa.string()),
        ]
    )


def edges_schema() -> pa.Schema:
    return pa.schema(
        [
            pa.field("id", pa.string(), nullable=False),
            pa.field("path", pa.string(), nullable=False),
            pa.field("from_symbol", pa.string()),
            pa.field("to_name", pa.string()),
            pa.field("last_name", pa.string()),
            pa.field("kind", pa.string()),
            pa.field("module", pa.string()),
            pa.field("alias", pa.string()),
            pa.field("line", pa.int32()),
            pa.field("col", pa.int32()),
            pa.field("end_line", pa.int32()),
            pa.field("end_col", pa.int32()),
            pa.field("args", pa.int32()),
            pa.field("arg_types", pa.string()),
        ]
    )


def meta_schema() -> pa.Schema:
    return pa.schema([pa.field("key", pa.string(), nullable=False), pa.field("value", pa.string())])


def cache_schema(dim: int) -> pa.Schema:
    return pa.schema(
        [
            pa.field("content_hash", pa.string(), nullable=False),
            pa.field("vector", vector_type(dim), nullable=False),
        ]
    )


def symbol_row_id(sym: Symbol) -> str:
    key = f"{sym.path}\0{sym.qualified_name}\0{sym.range.start.line}\0{sym.range.start.column}"
    return hashlib.sha1(key.encode("utf-8", "surrogatepass")).hexdigest()[:24]


# ----- arrow conversion ---------------------------------------------------------


def vectors_to_arrow(vectors: Vectors, dim: int) -> pa.Array:
    flat = pa.array(np.ascontiguousarray(vectors, dtype=np.float32).reshape(-1))
    return pa.FixedSizeListArray.from_arrays(flat, dim)


def arrow_to_matrix(column: pa.ChunkedArray, dim: int) -> Vectors:
    arr = column.combine_chunks()
    values = arr.flatten().to_numpy(zero_copy_only=False)
    return np.asarray(values, dtype=np.float32).reshape(-1, dim)


def _vector_column(chunks: Sequence[Chunk], dim: int, vectors: dict[str, Vectors]) -> pa.Array:
    """Each chunk's vector by its content hash, null where there is none (or it is not
    finite), built from one float32 buffer: a Python list per vector cost ~2% of the
    kernel tree's text phase."""
    flat = np.zeros((len(chunks), dim), dtype=np.float32)
    missing = np.ones(len(chunks), dtype=bool)
    for i, c in enumerate(chunks):
        v = vectors.get(c.content_hash)
        if v is not None and np.isfinite(v).all():
            flat[i] = v
            missing[i] = False
    return pa.FixedSizeListArray.from_arrays(
        pa.array(flat.reshape(-1)), type=vector_type(dim), mask=pa.array(missing)
    )


def chunks_table(
    chunks: Sequence[Chunk],
    dim: int,
    vectors: dict[str, Vectors],
    fast_dim: int = 0,
    fast_vectors: dict[str, Vectors] | None = None,
) -> pa.Table:
    """Chunk rows; ``vectors`` / ``fast_vectors`` map content hash → vector where known."""
    schema = chunks_schema(dim, fast_dim)
    vector = _vector_column(chunks, dim, vectors)
    columns: dict[str, object] = {
        "id": [c.id for c in chunks],
        "path": [c.path for c in chunks],
        "project": [c.project for c in chunks],
        "language": [c.language for c in chunks],
        "kind": [str(c.kind) for c in chunks],
        "symbol": [c.symbol for c in chunks],
        "start_line": [c.start_line for c in chunks],
        "end_line": [c.end_line for c in chunks],
        "text": [c.text for c in chunks],
        "search_text": [c.search_text for c in chunks],
        "content_hash": [c.content_hash for c in chunks],
        "vector": vector,
        "has_vector": vector.is_valid(),
    }
    if fast_dim > 0:
        fast = _vector_column(chunks, fast_dim, fast_vectors or {})
        columns[FAST_VECTOR] = fast
        columns[HAS_FAST_VECTOR] = fast.is_valid()
    return pa.table(columns, schema=schema)


def symbols_table(symbols: Sequence[Symbol]) -> pa.Table:
    # Column lists, not a list of row dicts: from_pylist costs twice as much here.
    names = [s.name for s in symbols]
    ranges = [s.range for s in symbols]
    selections = [s.selection_range for s in symbols]
    i32 = pa.int32()
    return pa.table(
        {
            "id": [symbol_row_id(s) for s in symbols],
            "name": names,
            "name_lower": [n.lower() for n in names],
            "qualified_name": [s.qualified_name for s in symbols],
            "kind": pa.array([int(s.kind) for s in symbols], i32),
            "path": [s.path for s in symbols],
            "language": [s.language for s in symbols],
            "start_line": pa.array([r.start.line for r in ranges], i32),
            "start_col": pa.array([r.start.column for r in ranges], i32),
            "end_line": pa.array([r.end.line for r in ranges], i32),
            "end_col": pa.array([r.end.column for r in ranges], i32),
            "sel_start_line": pa.array([r.start.line for r in selections], i32),
            "sel_start_col": pa.array([r.start.column for r in selections], i32),
            "sel_end_line": pa.array([r.end.line for r in selections], i32),
            "sel_end_col": pa.array([r.end.column for r in selections], i32),
            "container": [s.container for s in symbols],
            "chunk_id": [s.chunk_id for s in symbols],
            "arity": pa.array([s.arity for s in symbols], i32),
            "partial": pa.array([s.partial for s in symbols], pa.bool_()),
            "params": [s.params for s in symbols],
        },
        schema=symbols_schema(),
    )


def edge_row_id(edge: Edge, ordinal: int) -> str:
    key = f"{edge.path}\0{ordinal}\0{edge.kind}\0{edge.to_name}\0{edge.line}\0{edge.column}"
    return hashlib.sha1(key.encode("utf-8", "surrogatepass")).hexdigest()[:24]


def edges_table(edges: Sequence[Edge]) -> pa.Table:
    return pa.table(
        {
            "id": [edge_row_id(e, i) for i, e in enumerate(edges)],
            "path": [e.path for e in edges],
            "from_symbol": [e.from_symbol for e in edges],
            "to_name": [e.to_name for e in edges],
            "last_name": [e.last_name for e in edges],
            "kind": [str(e.kind) for e in edges],
            "module": [e.module for e in edges],
            "alias": [e.alias for e in edges],
            "line": pa.array([e.line for e in edges], pa.int32()),
            "col": pa.array([e.column for e in edges], pa.int32()),
            "end_line": pa.array([e.end_line for e in edges], pa.int32()),
            "end_col": pa.array([e.end_column for e in edges], pa.int32()),
            "args": pa.array([e.args for e in edges], pa.int32()),
            "arg_types": [e.arg_types for e in edges],
        },
        schema=edges_schema(),
    )


def edges_from_table(data: pa.Table) -> list[Edge]:
    """Edges of an ``edges`` table slice, as the parser made them (unresolved)."""
    cols = {name: data.column(name).to_pylist() for name in data.column_names}
    # Paths, enclosing names and referenced names repeat across rows; Arrow makes a new
    # str for each. Interned, 359k stdlib edges take ~40 MiB less in the graph's memory.
    intern = sys.intern
    return [
        Edge(
            path=intern(p),
            from_symbol=intern(f or ""),
            to_name=intern(t or ""),
            kind=EdgeKind(k),
            line=ln or 0,
            column=c or 0,
            end_line=el or 0,
            end_column=ec or 0,
            module=intern(m or ""),
            alias=intern(a or ""),
            args=-1 if n is None else n,
            arg_types=intern(ts or ""),
        )
        for p, f, t, k, ln, c, el, ec, m, a, n, ts in zip(
            cols["path"],
            cols["from_symbol"],
            cols["to_name"],
            cols["kind"],
            cols["line"],
            cols["col"],
            cols["end_line"],
            cols["end_col"],
            cols["module"],
            cols["alias"],
            cols.get("args") or [None] * len(cols["path"]),
            cols.get("arg_types") or [None] * len(cols["path"]),
            strict=True,
        )
    ]


def files_table(records: Sequence[FileRecord]) -> pa.Table:
    return pa.Table.from_pylist(
        [
            {
                "path": r.path,
                "language": r.language,
                "size": r.size,
                "mtime_ns": r.mtime_ns,
                "content_hash": r.content_hash,
                "status": str(r.status),
                "reason": r.reason,
            }
            for r in records
        ],
        schema=files_schema(),
    )


CHUNK_COLUMNS = [
    "id",
    "path",
    "project",
    "language",
    "kind",
    "symbol",
    "start_line",
    "end_line",
    "text",
    "content_hash",
]


def chunks_from_table(tbl: pa.Table) -> list[Chunk]:
    """The Chunks of a ``chunks`` result selected with CHUNK_COLUMNS, read a column at a
    time (a row-wise ``to_pylist`` built a dict per row: ~7 ms of CPU per 240 BM25 rows).
    The BM25 column ``search_text`` is not read back: ``Chunk.search_text`` stays empty."""
    if tbl.num_rows == 0:
        return []

    def col(name: str) -> list[object]:
        values: list[object] = tbl.column(name).to_pylist()
        return values

    kinds = _CHUNK_KINDS  # ChunkKind(value) is an Enum call per row (~1 µs): a dict hit
    return [
        Chunk(
            id=str(cid),
            path=str(path),
            project=str(project or ""),
            language=str(language or ""),
            kind=kinds.get(kind) or ChunkKind(str(kind)),
            symbol=str(symbol or ""),
            start_line=start if isinstance(start, int) else 0,
            end_line=end if isinstance(end, int) else 0,
            text=str(text),
            content_hash=str(content_hash),
        )
        for cid, path, project, language, kind, symbol, start, end, text, content_hash in zip(
            *(col(c) for c in CHUNK_COLUMNS), strict=True
        )
    ]


_CHUNK_KINDS: dict[object, ChunkKind] = {k.value: k for k in ChunkKind}


#: the ``symbols`` table's columns a ``Symbol`` is made of
SYMBOL_COLUMNS = (
    "name",
    "qualified_name",
    "kind",
    "path",
    "language",
    "start_line",
    "start_col",
    "end_line",
    "end_col",
    "sel_start_line",
    "sel_start_col",
    "sel_end_line",
    "sel_end_col",
    "container",
    "chunk_id",
    "arity",
    "partial",
    "params",
)


def present(columns: Sequence[str], schema: pa.Schema) -> list[str]:
    """Those of ``columns`` a table has: an index of an older schema lacks the newest
    (``symbols.params``, ``edges.arg_types``), which its readers take as their defaults until the
    next ``codesift index`` rebuilds it."""
    return [c for c in columns if c in schema.names]


def symbols_from_table(
    data: pa.Table, positions: dict[tuple[int, int], Position] | None = None
) -> list[Symbol]:
    """Symbols of a ``symbols`` table slice, built column by column: ``to_pylist()``'s one
    dict per row (~640 bytes each) left ~35 MiB of the stdlib's 64k rows as fragmented
    heap in a long-lived server after the dicts were freed. Equal positions are one
    ``Position`` object (they are immutable; ``positions`` carries them across slices):
    the stdlib's 129k symbols hold 516k positions, far fewer of them distinct."""
    cols = {name: data.column(name).to_pylist() for name in data.column_names}
    intern = sys.intern
    seen: dict[tuple[int, int], Position] = {} if positions is None else positions

    def at(line: int | None, column: int | None) -> Position:
        key = (line or 0, column or 0)
        found = seen.get(key)
        if found is None:
            found = seen[key] = Position(*key)
        return found

    out: list[Symbol] = []
    for name, qual, kind, path, lang, sl, sc, el, ec, ssl, ssc, sel, sec, cont, cid, ar, part, pt in zip(
        cols["name"],
        cols["qualified_name"],
        cols["kind"],
        cols["path"],
        cols["language"],
        cols["start_line"],
        cols["start_col"],
        cols["end_line"],
        cols["end_col"],
        cols["sel_start_line"],
        cols["sel_start_col"],
        cols["sel_end_line"],
        cols["sel_end_col"],
        cols["container"],
        cols["chunk_id"],
        cols.get("arity") or [0] * len(cols["name"]),
        cols.get("partial") or [False] * len(cols["name"]),
        cols.get("params") or [None] * len(cols["name"]),
        strict=True,
    ):
        out.append(
            Symbol(
                name=intern(str(name)),
                qualified_name=str(qual),
                kind=SymbolKind(int(kind or 0)),
                path=intern(str(path)),
                language=intern(str(lang)),
                range=Span(at(sl, sc), at(el, ec)),
                selection_range=Span(at(ssl, ssc), at(sel, sec)),
                container=intern(str(cont or "")),
                chunk_id=intern(str(cid)),
                arity=int(ar or 0),
                partial=bool(part),
                params=intern(str(pt or "")),
            )
        )
    return out


def symbol_from_row(row: dict[str, object]) -> Symbol:
    """Rebuild a Symbol from a ``symbols`` row (used by search)."""

    def i(key: str) -> int:
        v = row[key]
        return int(v) if isinstance(v, int) else 0

    # Names, paths, languages, containers and chunk ids repeat across rows: interned,
    # the symbol index and the graph each hold one copy of each (see DECISIONS, memory).
    intern = sys.intern
    return Symbol(
        name=intern(str(row["name"])),
        qualified_name=str(row["qualified_name"]),
        kind=SymbolKind(i("kind")),
        path=intern(str(row["path"])),
        language=intern(str(row["language"])),
        range=Span(Position(i("start_line"), i("start_col")), Position(i("end_line"), i("end_col"))),
        selection_range=Span(
            Position(i("sel_start_line"), i("sel_start_col")),
            Position(i("sel_end_line"), i("sel_end_col")),
        ),
        container=intern(str(row["container"] or "")),
        chunk_id=intern(str(row["chunk_id"])),
        arity=i("arity") if "arity" in row else 0,
        partial=bool(row.get("partial")),
        params=str(row.get("params") or ""),
    )
