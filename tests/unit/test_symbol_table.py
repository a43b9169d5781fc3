"""NameTable scans (substring, camel-hump, fuzzy) over names with non-ASCII letters:
RE2 runs on UTF-8 bytes, so every offset must map back to the right name."""

from __future__ import annotations

import numpy as np

from codesift.indexer.model import Position, Span, Symbol, SymbolKind
from codesift.indexer.search.names import NameTable, SymbolMatch
from codesift.indexer.symtab import KEEP_MADE, SymbolColumns, concat


def sym(name: str, line: int) -> Symbol:
    span = Span(Position(line, 0), Position(line, len(name)))
    return Symbol(name, name, SymbolKind.FUNCTION, "m.py", "python", span, span, "", f"c{line}")


TABLE = NameTable(
    sym(n, i)
    for i, n in enumerate(
        ["größeBerechnen", "éclairÉtat", "parseHeader", "parse_header_line", "naïveParser", "zebra"], 1
    )
)


def names(query: str) -> list[tuple[str, SymbolMatch]]:
    return [(TABLE.symbols[i].name, m) for i, m in TABLE.candidates(query, 10)]


def test_substring_after_multibyte_names_maps_to_the_right_name() -> None:
    assert ("naïveParser", SymbolMatch.SUBSTRING) in names("parser")
    assert ("größeBerechnen", SymbolMatch.SUBSTRING) in names("berech")


def test_camel_hump_with_non_ascii_letters() -> None:
    assert ("größeBerechnen", SymbolMatch.CAMEL_HUMP) in names("gB")
    assert ("éclairÉtat", SymbolMatch.CAMEL_HUMP) in names("éÉ")
    hump = names("pH")
    assert ("parseHeader", SymbolMatch.CAMEL_HUMP) in hump
    assert ("parse_header_line", SymbolMatch.CAMEL_HUMP) in hump


def test_fuzzy_over_multibyte_names() -> None:
    assert ("größeBerechnen", SymbolMatch.FUZZY) in names("gßbn")
    assert ("naïveParser", SymbolMatch.FUZZY) in names("nïpr")
    assert "zebra" not in [n for n, _ in names("gßbn")]


def test_exact_prefix_and_qualified_matches_keep_the_tables_order_among_namesakes() -> None:
    def at(name: str, qualified: str, path: str, line: int) -> Symbol:
        span = Span(Position(line, 0), Position(line, 9))
        return Symbol(name, qualified, SymbolKind.METHOD, path, "python", span, span, "", f"{path}{line}")

    table = NameTable(
        [
            at("load", "B.load", "b.py", 3),
            at("Load", "A.Load", "a.py", 9),
            at("load", "A.load", "a.py", 2),
            at("loader", "loader", "a.py", 1),
            at("load", "B.load", "b.py", 1),
        ]
    )
    rows = [
        (table.symbols[i].path, table.symbols[i].range.start.line, m) for i, m in table.candidates("load", 10)
    ]
    assert rows == [
        ("a.py", 2, SymbolMatch.EXACT),
        ("b.py", 1, SymbolMatch.EXACT),
        ("b.py", 3, SymbolMatch.EXACT),
        ("a.py", 9, SymbolMatch.EXACT_CASE_INSENSITIVE),
        ("a.py", 1, SymbolMatch.PREFIX),
    ]
    assert [table.symbols[i].path for i in table.qualified("B.load")] == ["b.py", "b.py"]
    assert table.qualified("B.lo") == [] and table.qualified("") == []
    assert [(table.symbols[i].name, m) for i, m in table.candidates("zz", 10)] == []


def test_camel_humps_over_ascii_names_use_ascii_classes_and_find_the_same_names() -> None:
    import random

    from codesift.indexer.search.names import hump_parts, hump_regex

    rng = random.Random(19)
    words = ["get", "user", "http", "conn", "ssl", "context", "parse", "x2", "v1", "logger", "arg", "set"]

    def ident() -> str:
        parts = rng.sample(words, rng.randint(1, 4))
        style = rng.choice(["camel", "snake", "upper", "pascal"])
        if style == "snake":
            return "_".join(parts)
        if style == "upper":
            return "".join(p.upper() for p in parts[:1]) + "".join(p.title() for p in parts[1:])
        head = parts[0] if style == "camel" else parts[0].title()
        return head + "".join(p.title() for p in parts[1:])

    idents = sorted({ident() for _ in range(400)})
    table = NameTable(sym(n, i) for i, n in enumerate(idents, 1))
    assert table._ascii and not TABLE._ascii  # a table with non-ASCII names keeps Unicode classes
    joined = "\n".join(idents).encode()
    queries = [
        q
        for q in {ident() for _ in range(60)} | {"gU", "hC", "sC", "pA", "gUS", "HTTPConn"}
        if len(hump_parts(q)) > 1
    ]
    assert len(queries) > 20
    found = 0
    for q in queries:
        fast, full = hump_regex(q, ascii_names=True), hump_regex(q)
        assert fast is not None and full is not None
        assert b"\\p{" not in fast.pattern and b"\\p{" in full.pattern
        starts = [m.start() for m in full.finditer(joined)]
        assert [m.start() for m in fast.finditer(joined)] == starts, q
        found += len(starts)
    assert found > 100  # the comparison covered real matches


def test_substrings_looked_up_by_trigram_find_the_names_a_scan_of_every_name_finds() -> None:
    import random

    from codesift.indexer.search import names

    rng = random.Random(5)
    letters = "abcdefghijklmnop_ABCDEFGHIJéÉßïİ0123"
    idents = [
        "".join(rng.choice(letters) for _ in range(rng.randint(1, 14)))
        for _ in range(names._TRIGRAM_MIN + 500)
    ]
    idents += ["two words", "line\nbreak", "getUserName", "get_user_name", "UserName"] * 3  # namesakes
    table = NameTable(sym(n, i) for i, n in enumerate(idents, 1))
    assert table._grams is not None  # big enough for the index
    lowered = [n.replace("\n", " ").lower() for n in idents]
    needles = ["user", "username", "word", "s w", "e b", "é", "ß", "ïi", "İ".lower(), "zzz", "ab", "_"]
    needles += [
        v[a : a + rng.randint(1, 6)] for v in rng.sample(lowered, 300) for a in [rng.randrange(len(v))]
    ]
    hits = 0
    for needle in needles:
        scanned = [i for i in range(len(table)) if needle in table.symbols[i].name.replace("\n", " ").lower()]
        assert table._find_all(needle) == scanned, needle
        hits += len(scanned)
    assert hits > 1000
    # and the substring step answers as the table without the index does
    plain = NameTable(sym(n, i) for i, n in enumerate(idents, 1))
    plain._grams = None
    for query in ["user", "Name", "getU", "abc", "words"]:
        assert table.candidates(query, 500) == plain.candidates(query, 500), query


def test_every_word_is_held_by_a_rows_name_container_or_path_as_one_row_at_a_time_says() -> None:
    import random

    rng = random.Random(7)
    parts = ["read", "Config", "file", "url", "Open", "json", "É", "x"]

    def at(i: int) -> Symbol:
        name = "".join(rng.sample(parts, rng.randint(1, 3)))
        container = rng.choice(["", "RawConfigParser", "URLopener", "Éclair"])
        path = rng.choice(["configparser.py", "urllib/request.py", "json/Decoder.py", "a/File.py"])
        span = Span(Position(i, 0), Position(i, len(name)))
        return Symbol(
            name, f"{container}.{name}", SymbolKind.METHOD, path, "python", span, span, container, f"c{i}"
        )

    table = NameTable(at(i) for i in range(1, 400))
    rows = list(range(len(table)))
    for words in (
        ["read", "config"],
        ["open", "url", "request"],
        ["json", "file"],
        ["é", "x"],
        ["zzz", "read"],
    ):
        expected = []
        for i in rows:
            s = table.symbols[i]
            rest = f"{s.container.lower()} {s.path.lower()}"
            expected.append(all(w in s.name.lower() or w in rest for w in words))
        assert table.hold_every_word(rows, words) == expected, words
        assert 0 < sum(expected) < len(rows) or words[0] == "zzz"


def test_camel_humps_tried_on_the_names_holding_a_tail_find_what_a_scan_of_every_name_finds() -> None:
    import random

    from codesift.indexer.search import names

    rng = random.Random(23)
    words = ["get", "user", "http", "connection", "ssl", "context", "parse", "logger", "arg", "temp", "dir"]

    def ident() -> str:
        parts = [rng.choice(words) for _ in range(rng.randint(1, 4))] + [str(rng.randint(0, 999))]
        if rng.random() < 0.5:
            return "_".join(parts)
        return parts[0] + "".join(p.title() for p in parts[1:])

    idents = list({ident() for _ in range(names._TRIGRAM_MIN * 2)})
    table = NameTable(sym(n, i) for i, n in enumerate(idents, 1))
    assert table._grams is not None and table._ascii

    def scanned(hump: object) -> list[int]:
        starts = table._line_starts(table._offsets, (m.start() for m in hump.finditer(table._joined)))  # type: ignore[attr-defined]
        return table._lines(table._offsets, starts)

    found = 0
    for q in [
        "HTTPConnection",
        "getUser",
        "sslContext",
        "TempDir",
        "gU",
        "parseLogger",
        "ArgParse",
        "get_user",
    ]:
        hump = names.hump_regex(q, ascii_names=True)
        assert hump is not None
        assert table._hump_rows(q, hump) == scanned(hump), q
        found += len(scanned(hump))
    assert found > 200  # the comparison covered real matches


def test_symbol_columns_give_back_the_symbols_they_were_made_of_in_their_order() -> None:
    def at(name: str, qualified: str, path: str, line: int, container: str = "") -> Symbol:
        span = Span(Position(line, 4), Position(line + 2, 70_000))  # a column past 16 bits
        sel = Span(Position(line, 8), Position(line, 8 + len(name)))
        return Symbol(
            name, qualified, SymbolKind.CLASS, path, "python", span, sel, container, f"{path}:{line}"
        )

    given = [
        at("größe", "größe", "b.py", 3),
        at("run", "größe.run", "b.py", 5, "größe"),
        at("x", "x", "a/\udcff.py", 1),  # a path that did not decode: kept as its surrogates
        at("run", "A.run", "a.py", 9, "A"),
    ]
    cols = SymbolColumns.of(given)
    assert cols.symbols(range(len(given))) == given
    assert cols.symbol(1) is cols.symbol(1)  # one object a row, once made
    many = SymbolColumns.of([at("f", f"f{i}", "m.py", i) for i in range(1, 20_000)])
    assert [s.qualified_name for s in many.symbols(range(0, 19_999, 2))][-1] == "f19999"
    assert [s.qualified_name for s in many.symbols(range(1, 19_999, 2))][-1] == "f19998"
    assert many.made <= KEEP_MADE  # at most so many rows kept as objects
    assert len(many.symbols(range(KEEP_MADE))) == KEEP_MADE and many.made == KEEP_MADE
    assert many.symbols([1])[0] is many.symbol(1)  # kept while within the bound
    assert many.symbol(7).qualified_name == "f8" and many.symbols([3, 3])[0].qualified_name == "f4"
    again = concat(
        [(cols, np.array([3, 0], np.int32)), (SymbolColumns.of(given[1:3]), np.array([1], np.int32))]
    )
    assert again.symbols(range(3)) == [given[3], given[0], given[2]]
    table = NameTable(cols)  # by path, then line
    assert [table.symbols[i].qualified_name for i in range(len(table))] == [
        "A.run",
        "x",
        "größe",
        "größe.run",
    ]
    assert [table.symbols[i].name for i in table.qualified("größe.run")] == ["run"]
    assert [m.qualified_name for m in table.members(given[0])] == ["größe.run"]


def test_pair_slot_finds_a_pair_of_ids_in_sorted_keys_and_nothing_else() -> None:
    from codesift.indexer.symtab import pair_slot

    width = 3  # the second id is 0, 1 or 2
    keys = np.array(sorted({a * width + b for a, b in [(0, 2), (1, 0), (4, 1)]}), np.int64)
    assert [pair_slot(keys, a, b, width) for a, b in [(0, 2), (1, 0), (4, 1)]] == [0, 1, 2]
    assert pair_slot(keys, 1, 1, width) == -1 and pair_slot(keys, 9, 0, width) == -1
    assert pair_slot(keys, -1, 0, width) == -1 and pair_slot(keys, 0, -1, width) == -1
    assert pair_slot(np.zeros(0, np.int64), 0, 0, 0) == -1
