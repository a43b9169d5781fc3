"""The graph's compact columns: packed string tables, 2-byte ids and positions where
they fit, hex chunk ids as bytes — each must read back exactly what it was made of."""

from __future__ import annotations

import hashlib

import numpy as np
import pyarrow as pa

from codesift.indexer.graph.columns import EdgeColumns, PackedStrings, bisect_id, edges_arrow, encode
from codesift.indexer.model import Edge, EdgeKind, Position, Span, Symbol, SymbolKind
from codesift.indexer.symtab import HexIds, Packed, SymbolColumns


def test_packed_strings_read_as_the_sorted_list_they_were_made_of_and_keep_few_decoded() -> None:
    values = sorted(
        {"", "a", "größe", "Größe.berechnen", "площадь", "x" * 300, *(f"m{i}" for i in range(9000))}
    )
    packed = PackedStrings(values)
    assert len(packed) == len(values) and list(packed) == values
    assert [packed[i] for i in range(len(values))] == values and packed[-1] == values[-1]
    assert packed[2:5] == values[2:5]
    for i, v in enumerate(values):
        assert bisect_id(packed, v) == i
    assert bisect_id(packed, "absent") == -1 and bisect_id(packed, "zzz") == -1
    # every value was read: at most an eighth (4,096 at least) stay decoded
    assert 0 < len(packed.decoded) <= max(4096, len(values) // 8)


def _edges(last_line: int) -> list[Edge]:
    return [
        Edge("a.py", "", "os", EdgeKind.IMPORT, 1, 0, 1, 9, "os", "os"),
        Edge("a.py", "f", "os.path.join", EdgeKind.CALL, 3, 4, 3, 16),
        Edge("b/ü.py", "C.m", "self.g", EdgeKind.CALL, last_line, 8, last_line, 14, "", "x;self.y"),
        Edge("b/ü.py", "C", "Base", EdgeKind.INHERIT, 2, 8, 2, 12),
    ]


def test_edge_columns_take_two_bytes_a_number_when_every_one_fits_and_read_back_the_same_edges() -> None:
    for last_line, dtype in ((40, np.uint16), (70_000, np.int32)):
        edges = _edges(last_line)
        cols = EdgeColumns(encode(edges_arrow(edges).to_batches()))
        assert cols.narrow.dtype == dtype and cols.wide.dtype == np.uint16
        rows = np.arange(cols.size, dtype=np.int32)
        assert sorted(cols.edges(rows), key=repr) == sorted(edges, key=repr)
        assert sorted(cols.edges(rows), key=repr) == sorted(cols.edges(rows), key=repr)  # decoded once, kept
        assert [cols.last_names[int(i)] for i in cols.last_name_ids(rows)] == [
            e.last_name for e in cols.edges(rows)
        ]
        # a refresh puts the kept rows back together through Arrow: the same edges
        again = EdgeColumns(encode(cols.arrow(rows).to_batches()))
        assert sorted(again.edges(rows), key=repr) == sorted(edges, key=repr)


def _sym(i: int, chunk_id: str) -> Symbol:
    span = Span(Position(i, 0), Position(i, 3))
    return Symbol(f"f{i}", f"f{i}", SymbolKind.FUNCTION, "m.py", "python", span, span, "", chunk_id)


def test_hex_chunk_ids_are_held_as_their_bytes_and_any_other_form_as_text() -> None:
    hexes = [hashlib.sha1(str(i).encode()).hexdigest()[:24] for i in range(5)]
    cols = SymbolColumns.of([_sym(i, c) for i, c in enumerate(hexes, 1)])
    assert isinstance(cols.chunk_id, HexIds) and cols.chunk_id.nbytes() == 12 * len(hexes)
    assert [s.chunk_id for s in cols.symbols(range(len(hexes)))] == hexes
    assert cols.chunk_id.arrow().to_pylist() == [h.encode() for h in hexes]
    for odd in (["None", *hexes], [h.upper() for h in hexes], [*hexes[:-1], hexes[-1][:22]]):
        mixed = SymbolColumns.of([_sym(i, c) for i, c in enumerate(odd, 1)])
        assert isinstance(mixed.chunk_id, Packed)
        assert [s.chunk_id for s in mixed.symbols(range(len(odd)))] == odd
    assert isinstance(HexIds.of(pa.array([], pa.large_binary())), Packed)


def test_symbol_positions_take_two_bytes_when_they_fit_and_read_back_the_same() -> None:
    for line, dtype in ((12, np.uint16), (90_000, np.int32)):
        symbols = [_sym(1, "c1"), _sym(line, "c2")]
        cols = SymbolColumns.of(symbols)
        assert cols.pos.dtype == dtype
        assert list(cols.symbols(range(2))) == symbols
        assert list(SymbolColumns(cols.arrow()).symbols(range(2))) == symbols
