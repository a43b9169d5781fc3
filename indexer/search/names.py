"""The name table: every symbol's name held in memory and matched — exact, qualified,
prefix, camel-hump, substring, fuzzy — the part of symbol search that needs no store
(:mod:`.symbols` loads the table and answers with it)."""

from __future__ import annotations

import bisect
import re
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from enum import IntEnum

import numpy as np
import numpy.typing as npt
import re2

from ..model import Symbol, SymbolKind
from ..symtab import HashIndex, SymbolColumns, SymbolRows, group_starts, narrowest, pair_slot

_KIND_OF = {int(k): k for k in SymbolKind}
CONTAINER_KINDS = frozenset(
    {SymbolKind.CLASS, SymbolKind.INTERFACE, SymbolKind.STRUCT, SymbolKind.ENUM, SymbolKind.MODULE}
)


# A long fuzzy query's automaton outgrows RE2's default 8 MB DFA budget and falls
# back to the slower NFA (seen on the stdlib's names): give the scans more room.
SCAN_OPTIONS = re2.Options()
SCAN_OPTIONS.max_mem = 64 << 20
SCAN_OPTIONS.log_errors = False

FEW = 10  # below this many matches, the slower camel-hump and fuzzy scans run


class SymbolMatch(IntEnum):
    """How a symbol matched; lower is better."""

    EXACT = 0
    EXACT_CASE_INSENSITIVE = 1
    QUALIFIED = 2
    PREFIX = 3
    CAMEL_HUMP = 4
    SUBSTRING = 5
    FUZZY = 6
    MEMBER = 7  # brought in by its container


@dataclass(frozen=True, slots=True)
class SymbolHit:
    symbol: Symbol
    match: SymbolMatch
    score: float  # in [0, 1]


class NameTable:
    """Symbols held in memory and matched by name: sorted keys for exact and prefix
    matches, one joined string (a line per name) for the scans, so loops run in C.
    The camel-hump and fuzzy scans use RE2: its linear-time automaton scans the 1 MB
    of stdlib names in a few ms where ``re`` backtracks through every line (0.2-1 s
    for a long fuzzy query).

    The symbols are columns (``SymbolColumns``, shared with the graph when they are
    ``Store.all_symbols``): an index here is a row of ``order``, and ``symbols[i]`` makes
    the ``Symbol`` only when an answer reads it."""

    def __init__(self, symbols: SymbolColumns | Iterable[Symbol]) -> None:
        cols = symbols if isinstance(symbols, SymbolColumns) else SymbolColumns.of(symbols)
        self.columns = cols
        pos = cols.pos
        # by (path, start line, start column), ties in the table's order (a stable sort)
        order = np.lexsort((pos[:, 1], pos[:, 0], cols.path.ids)).astype(np.int32)
        self._order = order
        self.symbols = SymbolRows(cols, order)
        n = len(order)
        name_ids = cols.name.ids[order]
        self._name_ids = name_ids
        self._path_ids = cols.path.ids[order]
        self._cont_ids = cols.container.ids[order]
        # lower-case names: one id per distinct one, in sorted order; most names are
        # lower-case already: then the name's own object (not ``sys.intern``, whose
        # process-wide table grew ~4 MiB with the stdlib's and never shrinks)
        same = {v: v for v in cols.name.values}
        lowers = [same.setdefault(low, low) for low in (n_.lower() for n_ in cols.name.values)]
        del same
        self._lower_values: list[str] = sorted(set(lowers))
        rank = {v: i for i, v in enumerate(self._lower_values)}
        lower_of_name = np.array([rank[v] for v in lowers] or [0], np.int32)
        lower_of_name = lower_of_name.astype(narrowest([lower_of_name]))
        self._lower_ids = lower_of_name[name_ids] if n else np.zeros(0, np.int32)
        self._lower_len = np.array([len(v) for v in self._lower_values] or [0], np.int32)
        # rows by name (exact), by lower-case name (prefix runs): each group's rows ascending
        self._by_name, self._name_starts = group_starts(name_ids, len(cols.name.values))
        self._by_lower, self._lower_starts = group_starts(self._lower_ids, len(self._lower_values))
        quals = [cols.qualified[int(r)] for r in order.tolist()]
        self._by_qualified = HashIndex(
            np.fromiter((hash(q) for q in quals), np.int64, n), np.arange(n, dtype=np.int32)
        )
        # members by (path, container): one key per distinct pair
        has = np.flatnonzero(self._cont_ids != cols.container.id("")).astype(np.int32)
        width = max(len(cols.container.values), 1)
        pair = self._path_ids[has].astype(np.int64) * width + self._cont_ids[has]
        self._member_keys, inverse = np.unique(pair, return_inverse=True)
        self._members, self._member_starts = group_starts(inverse.reshape(-1), len(self._member_keys))
        self._members = has[self._members]
        # members declared away from their type (Swift / Kotlin / C# extensions, Rust impls in
        # another file): by the container's qualified name and language
        self._detached: dict[tuple[str, str], list[int]] = {}
        homed: dict[int, bool] = {}
        for k, key in enumerate(self._member_keys.tolist()):
            p, c = divmod(key, width)
            container = cols.container.values[c]
            homed[k] = any(int(self._path_ids[j]) == p for j in self.qualified(container))
        for k, at in enumerate(inverse.reshape(-1).tolist()):
            if not homed[at]:
                i = int(has[k])
                row = int(order[i])
                key2 = (cols.container[row], cols.language[row])
                self._detached.setdefault(key2, []).append(i)
        del quals
        # The scans run on UTF-8 bytes: RE2 reports byte offsets, and converting each
        # back to a character offset costs more than the scan itself.
        names = [cols.name.values[i].replace("\n", " ") for i in name_ids.tolist()]
        self._joined = "\n".join(names).encode("utf-8")
        self._ascii = self._joined.isascii()  # the camel-hump scan can use ASCII classes
        self._joined_lower = "\n".join(n_.lower() for n_ in names).encode("utf-8")
        self._offsets = np.array(_line_offsets(names), np.int64)
        self._offsets_lower = np.array(_line_offsets(n_.lower() for n_ in names), np.int64)
        # the substring scan's index: which distinct lower-case names hold each 3 bytes
        self._grams = (
            _Trigrams([v.replace("\n", " ") for v in self._lower_values])
            if len(self._lower_values) >= _TRIGRAM_MIN
            else None
        )

    def __len__(self) -> int:
        return len(self._order)

    def path(self, i: int) -> str:
        """The path of entry ``i`` (no ``Symbol`` made)."""
        return self.columns.path.values[int(self._path_ids[i])]

    def hold_every_word(self, rows: Sequence[int], words: Sequence[str]) -> list[bool]:
        """For each of ``rows``: does its name, container or path (any case) hold every one
        of ``words`` (lower-case, no spaces)? Each word is looked for once per distinct name,
        container and path of the rows, not once per row (a worded question checks ~4,000
        rows)."""
        at = np.asarray(rows, np.int64)
        lower, conts, paths = self._lower_ids[at], self._cont_ids[at], self._path_ids[at]
        names = [(k, self._lower_values[k]) for k in _distinct(lower)]
        cont_values, path_values = self.columns.container.values, self.columns.path.values
        cont_lower = [(c, cont_values[c].lower()) for c in _distinct(conts)]
        path_lower = [(p, path_values[p].lower()) for p in _distinct(paths)]
        ok = np.ones(len(at), bool)
        for w in words:
            in_name = _marked([k for k, v in names if w in v], len(self._lower_values))
            in_cont = _marked([c for c, v in cont_lower if w in v], len(cont_values))
            in_path = _marked([p for p, v in path_lower if w in v], len(path_values))
            ok &= in_name[lower] | in_cont[conts] | in_path[paths]
        held: list[bool] = ok.tolist()
        return held

    def _by_rank(self, found: list[int]) -> list[int]:
        """``found`` with shorter names first, then in the table's order."""
        if len(found) < 2:
            return found
        at = np.asarray(found, np.int64)
        ranked: list[int] = at[np.lexsort((at, self._lower_len[self._lower_ids[at]]))].tolist()
        return ranked

    def named(self, name: str) -> list[int]:
        k = self.columns.name.id(name)
        if k < 0:
            return []
        found: list[int] = self._by_name[self._name_starts[k] : self._name_starts[k + 1]].tolist()
        return found

    def qualified(self, name: str) -> list[int]:
        quals, order = self.columns.qualified, self._order
        return [i for i in self._by_qualified.get(name).tolist() if quals[int(order[i])] == name]

    def _member_rows(self, path: str, container: str) -> list[int]:
        cols = self.columns
        k = pair_slot(
            self._member_keys, cols.path.id(path), cols.container.id(container), len(cols.container.values)
        )
        if k < 0:
            return []
        found: list[int] = self._members[self._member_starts[k] : self._member_starts[k + 1]].tolist()
        return found

    def members(self, sym: Symbol) -> list[Symbol]:
        """Members in the type's own file, then those its extensions declare elsewhere, when
        no other type of that language has the same qualified name."""
        own = [self.symbols[i] for i in self._member_rows(sym.path, sym.qualified_name)]
        away = self._detached.get((sym.qualified_name, sym.language), [])
        if away:
            cols, order = self.columns, self._order
            namesakes = [
                j
                for j in self.qualified(sym.qualified_name)
                if cols.language[int(order[j])] == sym.language
                and _KIND_OF.get(int(cols.kind[order[j]])) in CONTAINER_KINDS
            ]
            if len(namesakes) == 1:
                own += [self.symbols[i] for i in away]
        return own

    @staticmethod
    def _lines(offsets: npt.NDArray[np.int64], positions: Iterable[int]) -> list[int]:
        """Indices of the names holding these byte offsets of a joined text, each once."""
        at = np.fromiter(positions, np.int64)
        return list(dict.fromkeys((np.searchsorted(offsets, at, "right") - 1).tolist()))

    @staticmethod
    def _line_starts(offsets: npt.NDArray[np.int64], positions: Iterable[int]) -> list[int]:
        """The positions that start a name, in their order."""
        at = np.fromiter(positions, np.int64)
        k = np.minimum(np.searchsorted(offsets, at), max(len(offsets) - 1, 0))
        return at[offsets[k] == at].tolist() if len(offsets) else []

    def _rows_named(self, lower_ids: list[int]) -> npt.NDArray[np.int32]:
        """The rows whose lower-case name is one of ``lower_ids``, ascending."""
        groups = np.asarray(lower_ids, np.int64)
        lo, sizes = self._lower_starts[groups], np.diff(self._lower_starts)[groups]
        # each group's rows (lo, lo + 1, ...) for every group, as one array
        firsts = np.repeat(lo - np.cumsum(sizes) + sizes, sizes) + np.arange(sizes.sum())
        rows: npt.NDArray[np.int32] = np.sort(self._by_lower[firsts])
        return rows

    def _hump_rows(self, query: str, hump: re2._Regexp) -> list[int]:
        """The rows whose name ``hump`` matches from its start, ascending. Over ASCII names
        a match holds each hump's lower-case tail as it is (``onnection`` of
        ``HTTPConnection``), so with a tail of 3 letters or more only the names holding
        it are tried (through the trigram index), not a scan of every name (1-5 ms)."""
        tail = max((p[1:] for p in hump_parts(query)[1:]), key=len, default="")
        holding = self._grams.holding(tail) if self._grams is not None and self._ascii else None
        if holding is None:  # a scan: the matches that start a name
            starts = self._line_starts(self._offsets, (m.start() for m in hump.finditer(self._joined)))
            return self._lines(self._offsets, starts)
        rows = self._rows_named(holding)
        name_ids = self._name_ids[rows]
        values = self.columns.name.values
        matched = _marked(
            [k for k in _distinct(name_ids) if hump.match(values[k].replace("\n", " ").encode("utf-8"))],
            len(values),
        )
        found: list[int] = rows[matched[name_ids]].tolist()
        return found

    def _find_all(self, needle: str) -> list[int]:
        """The names holding ``needle`` (lower-case), in the table's order."""
        if not needle:  # every name (``Outer.`` asks for the name ""); none of an empty table
            return list(range(len(self)))
        if self._grams is not None and "\n" not in needle:
            holding = self._grams.holding(needle)
            if holding is not None:  # rows of those lower-case names
                if not holding:
                    return []
                found: list[int] = self._rows_named(holding).tolist()
                return found
        positions = []
        raw = needle.encode("utf-8")
        at = self._joined_lower.find(raw)
        while at != -1:
            positions.append(at)
            at = self._joined_lower.find(raw, at + 1)
        return self._lines(self._offsets_lower, positions)

    def candidates(
        self, query: str, limit: int, skip_paths: Collection[str] = ()
    ) -> list[tuple[int, SymbolMatch]]:
        """Indices of matching symbols, best kind of match first."""
        q = query.lower()
        out: list[tuple[int, SymbolMatch]] = []
        seen: set[int] = set()
        skip = [k for k in (self.columns.path.id(p) for p in skip_paths) if k >= 0]

        def add(rows: list[int], m: SymbolMatch) -> bool:
            """Add ``rows`` not added yet, in order, until ``limit`` (a list at a time: a
            worded question adds ~4,000 rows); True once full."""
            if skip and rows:
                away = np.isin(self._path_ids[np.asarray(rows, np.int64)], skip).tolist()
                rows = [i for i, a in zip(rows, away, strict=True) if not a]
            fresh = [i for i in dict.fromkeys(rows) if i not in seen][: limit - len(out)]
            seen.update(fresh)
            out.extend((i, m) for i in fresh)
            return len(out) >= limit

        if add(self.named(query), SymbolMatch.EXACT):
            return out
        prefix: list[int] = []
        values, bounds_, rows = self._lower_values, self._lower_starts, self._by_lower
        for k in range(bisect.bisect_left(values, q), len(values)):
            name = values[k]
            if not name.startswith(q):
                break
            group: list[int] = rows[bounds_[k] : bounds_[k + 1]].tolist()
            if name == q:
                if add(group, SymbolMatch.EXACT_CASE_INSENSITIVE):
                    return out
            else:
                prefix.extend(group)
        # shorter names first: `load` before `loads_with_hooks` for "lo"
        if add(self._by_rank(prefix), SymbolMatch.PREFIX):
            return out
        # Camel-hump always when the query has humps; fuzzy only while few matched. A
        # name typed exactly needs neither scan (each costs ~5-10 ms on 60k+ names):
        # camel-hump then runs only when the query asks for humps with capitals.
        later: dict[SymbolMatch, list[int]] = {SymbolMatch.SUBSTRING: self._find_all(q)}
        exact = any(m <= SymbolMatch.EXACT_CASE_INSENSITIVE for _, m in out)
        few = not exact and len(out) + len(later[SymbolMatch.SUBSTRING]) < FEW
        hump = hump_regex(query, ascii_names=self._ascii)
        if hump is not None and (few or any(c.isupper() for c in query[1:])):
            later[SymbolMatch.CAMEL_HUMP] = self._hump_rows(query, hump)
        if few and len(q) >= 3:
            fuzzy = re2.compile("[^\n]*?".join(re.escape(c) for c in q).encode("utf-8"), SCAN_OPTIONS)
            later[SymbolMatch.FUZZY] = self._lines(
                self._offsets_lower, (m.start() for m in fuzzy.finditer(self._joined_lower))
            )
        for match, found in sorted(later.items()):
            if add(self._by_rank(found), match):
                return out
        return out


_TRIGRAM_MIN = 4_096  # distinct lower-case names: below, scanning them all is as quick


class _Trigrams:
    """Which of ``lines`` hold each three bytes of their UTF-8 (a posting list per
    trigram), so a substring is looked for in the names holding all of its trigrams, not
    in all the names: a scan of the stdlib's ~1 MB of lower-case names cost ~0.5-1.4 ms
    of CPU per query, most of a name lookup."""

    __slots__ = ("codes", "lines", "rows", "starts")

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        data = np.frombuffer("\n".join(lines).encode("utf-8"), np.uint8)
        if len(data) < 3:
            self.codes = self.rows = self.starts = np.zeros(0, np.int64)
            return
        newline = data == 10
        wide = data.astype(np.int64)
        code = (wide[:-2] << 16) | (wide[1:-1] << 8) | wide[2:]
        line = np.cumsum(newline)[:-2]  # the line of each position (a newline's own is masked)
        inside = ~(newline[:-2] | newline[1:-1] | newline[2:])
        # each (trigram, line) once, sorted (np.sort and a mask: np.unique took 80x as long)
        pairs = np.sort((code[inside] << 32) | line[inside])
        pairs = pairs[np.concatenate(([True], pairs[1:] != pairs[:-1]))]
        codes = pairs >> 32
        self.rows = (pairs & 0xFFFFFFFF).astype(np.int32)  # lines, by trigram then line
        first = np.flatnonzero(np.concatenate(([True], codes[1:] != codes[:-1])))
        self.codes = codes[first]
        self.starts = np.append(first, len(codes)).astype(np.int64)

    def holding(self, needle: str) -> list[int] | None:
        """The lines holding ``needle``, ascending; None when it is shorter than a trigram."""
        raw = needle.encode("utf-8")
        if len(raw) < 3:
            return None
        wide = np.frombuffer(raw, np.uint8).astype(np.int64)
        wanted = np.unique((wide[:-2] << 16) | (wide[1:-1] << 8) | wide[2:])
        k = np.searchsorted(self.codes, wanted)
        if (k >= len(self.codes)).any() or (self.codes[np.minimum(k, len(self.codes) - 1)] != wanted).any():
            return []  # a trigram no line holds
        spans = sorted(
            zip(self.starts[k].tolist(), self.starts[k + 1].tolist(), strict=True), key=lambda s: s[1] - s[0]
        )
        lines = self.rows[spans[0][0] : spans[0][1]]
        for a, b in spans[1:]:
            if len(lines) < 8:  # the check below is quicker than another intersection
                break
            lines = np.intersect1d(lines, self.rows[a:b], assume_unique=True)
        text = self.lines
        return [k_ for k_ in lines.tolist() if needle in text[k_]]


def _distinct(ids: npt.NDArray[np.integer]) -> list[int]:
    """The distinct values of ``ids``, ascending (np.unique hashes: slower on small arrays)."""
    if not len(ids):
        return []
    s = np.sort(ids)
    out: list[int] = s[np.concatenate(([True], s[1:] != s[:-1]))].tolist()
    return out


def _marked(ids: list[int], size: int) -> npt.NDArray[np.bool_]:
    """A mask of ``size`` ids, True at ``ids`` (indexed by ids: quicker than ``np.isin``)."""
    mask = np.zeros(max(size, 1), bool)
    mask[ids] = True
    return mask


def hump_parts(query: str) -> list[str]:
    """``getUS`` → get, u, s; ``größeBer`` → größe, ber: a capital starts a part, so do
    ``_`` and other separators (Unicode-aware, unlike ``[A-Z][a-z0-9]*``)."""
    parts: list[str] = []
    cur = ""
    for ch in query:
        if not ch.isalnum():
            if cur:
                parts.append(cur)
            cur = ""
        elif ch.isupper() and cur:
            parts.append(cur)
            cur = ch
        else:
            cur += ch
    if cur:
        parts.append(cur)
    return [p.lower() for p in parts]


_HUMP_TAIL = r"[\p{Ll}\p{Lo}\p{Nd}]*"  # the rest of a hump: lower-case letters, digits


# The same class where every name is ASCII: there \p{Ll} is a-z, \p{Nd} 0-9 and \p{Lo}
# matches nothing. The Unicode classes made each new hump query cost 4-10 ms to compile
# and 5-13 ms for its first scan of the stdlib's 2 MB of names (RE2 builds its automaton
# as it scans); this one ~0.2 and 1-5 ms, for the same matches.
_ASCII_HUMP_TAIL = "[a-z0-9]*"


def hump_regex(query: str, ascii_names: bool = False) -> re2._Regexp | None:
    """``gUS`` / ``getUS`` match ``getUserSettings`` and ``get_user_settings``: after the
    first, each part must start a hump (a capital, or a letter after ``_``). With
    ``ascii_names`` the regex is only ever run on ASCII text."""
    parts = hump_parts(query)
    if len(parts) < 2:
        return None
    rest = _ASCII_HUMP_TAIL if ascii_names else _HUMP_TAIL
    first = "".join(f"[{c.upper()}{c}]" if c.isalpha() else re.escape(c) for c in parts[0])
    body = first + rest
    for part in parts[1:]:
        head, tail = part[0], re.escape(part[1:])
        body += f"(?:{re.escape(head.upper())}|_{re.escape(head)}){tail}{rest}"
    return re2.compile(body.encode("utf-8"), SCAN_OPTIONS)


def matching_lines(scan: re2._Regexp, lines: list[str]) -> set[int]:
    """Indices of the ``lines`` (no newline in any) where ``scan`` matches."""
    offsets = _line_offsets(lines)
    text = "\n".join(lines).encode("utf-8")
    return {bisect.bisect_right(offsets, m.start()) - 1 for m in scan.finditer(text)}


def _line_offsets(names: Iterable[str]) -> list[int]:
    """Byte offset of each name in the names joined by newlines (UTF-8)."""
    out: list[int] = []
    pos = 0
    for name in names:
        out.append(pos)
        pos += len(name.encode("utf-8")) + 1
    return out


# A hit's score by how it matched (``len(SymbolMatch)`` walks the enum's members on
# every call: 150 ms for a worded query's 3,800 hits).
_SCORES = {m: round(1.0 - int(m) / (len(SymbolMatch) + 1), 4) for m in SymbolMatch}


def score_of(m: SymbolMatch) -> float:
    return _SCORES[m]
