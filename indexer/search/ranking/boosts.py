"""Boosts: evidence after retrieval that a chunk is the answer.

Each rule reads the candidates' scores (``dict`` chunk id → score, the best fused
score being ``top``) and adds to them; a rule may bring in a chunk retrieval
missed (the definition of the symbol a query names). Every weight is a named
constant, set on the quality tier (docs/DECISIONS.md, "Ranking").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping, Sequence
from functools import lru_cache

from ...model import Chunk, ChunkKind, Symbol
from ...text import IDENTIFIER_PARTS, split_identifier
from ..results import Source
from .query import QueryIntent, last_name, name_terms

# A chunk defining the symbol a symbol query names: added × the top score, so the
# definition leads unless retrieval found nothing near it.
DEFINITION_BOOST = 1.1
# The same for an identifier named inside a words query: it may be incidental.
EMBEDDED_DEFINITION_BOOST = 0.4
# The definition sits in a file named after it (TypeAdapter → TypeAdapter.java).
FILE_NAMED_AFTER_SYMBOL = 0.5
# A definition named by the query's name behind a leading ``$`` or ``_`` (``$ZodError`` for
# "ZodError": zod's core type under its public one; ``_OptionParser``), × the exact one's
# boost, as for a name in another case.
SIGIL_MATCH = 0.5
_SIGILS = "$_"
# Definitions of one name brought in from outside the candidates, at most: a name
# defined in more places than this (``get``, ``run``) says little about which.
MAX_DEFINITIONS = 12
# Query words found in the file name or its folder, × the share of words matched, each
# word weighing 1 / (1 + POSITION_DECAY × its place among the query's words): a question
# names its subject first ("Mutex and Semaphore for …" asks for Mutex.kt first).
PATH_MATCH_BOOST = 0.6
POSITION_DECAY = 1.0
# A file whose whole name the query spells: "Request type in Vapor" → Request.swift.
STEM_MATCH_BOOST = 0.25
# Query words in the name of the chunk's definition (and its container), × the share matched.
NAME_MATCH_BOOST = 0.15
# A type's name earns it only when it has this many parts, every one in the query.
CLASS_NAME_PARTS = 2
# Distinct query words a chunk's text holds (identifier parts, stem-matched): its gain is
# this × the share held, squared (breadth of the question answered, which BM25's term
# frequencies and RRF's ranks do not see), for a words query of at least
# ``COVERAGE_MIN_WORDS`` words.
WORD_COVERAGE_BOOST = 0.3
WORD_COVERAGE_POWER = 2.0
COVERAGE_MIN_WORDS = 2
# Two adjacent words of a words query written as one identifier (``ProgressBar``,
# ``progress_bar`` for "progress bar", ``envvar`` for "environment variable": each word cut
# to three letters, ``_pair_forms``): the code names the query's concept. A pair held by
# the chunk (its text, its definition's name or its file name) counts once and in that
# name once more; the gain is this × the count over the query's pairs.
COMPOUND_BOOST = 0.3
# A file other files use: its best chunk gains this × the top score × n / (n + half), n
# being how many other files name what it defines (``search.references.file_references``).
FILE_REFERENCE_BOOST = 0.2
FILE_REFERENCE_HALF = 20
# A path a long query mentions (a traceback's file, "in models/query.py").
PATH_MENTION_BOOST = 0.5
# Several good chunks in one file: its best chunk gains up to this × the top score.
FILE_COHERENCE_BOOST = 0.7
COHERENCE_WINDOW = 40
# Each further chunk counts (its score / the top) ** this: fused RRF scores are flat
# (rank 10 still scores 0.87 of rank 1), so a power makes the evidence mostly the best chunks'.
COHERENCE_SHARPNESS = 2.0
# Coherence stops short of a chunk that leads on its own: this share of the gap stays.
UNANIMOUS_MARGIN = 0.01
# A definition within this share of a top-level block's score carries its file's coherence.
BLOCK_REPRESENTATIVE = 0.9

_PATH_HINT = re.compile(
    r"[\w./-]*\w\.(?:py|pyx|js|jsx|ts|tsx|go|rs|java|kt|rb|php|cs|c|h|cc|cpp|hpp|swift|scala)\b"
)

# What the name rule lifts: the function that does the thing; a class header only when
# the query spells its whole compound name (``_name_gain``).
_CALLABLE = frozenset({ChunkKind.FUNCTION, ChunkKind.METHOD})

SymbolLookup = Callable[[Sequence[str]], list[Symbol]]
ChunkLoader = Callable[[Sequence[str]], dict[str, Chunk]]


def boost_definitions(
    scores: dict[str, float],
    chunks: dict[str, Chunk],
    intent: QueryIntent,
    lookup: SymbolLookup,
    load: ChunkLoader,
    top: float,
    found_by: set[str],
) -> None:
    """Chunks that define a name the query asks for gain a boost; definitions retrieval
    missed are brought in (from the symbol table, never guessed from text). The ids
    boosted or brought in are added to ``found_by``."""
    names = intent.definition_names()
    if not names:
        return
    unit = top * (DEFINITION_BOOST if intent.is_symbol else EMBEDDED_DEFINITION_BOOST)
    wanted = {last_name(n): n for n in names}
    found = [s for s in lookup(definition_lookup(intent)) if s.chunk_id]
    # Another case is a different name when the exact one exists (Ruby's module
    # Helpers and method helpers); it counts only when nothing matches exactly.
    exact = {s.name for s in found if s.name in wanted}
    found = [s for s in found if s.name in exact or s.name.lower() not in {e.lower() for e in exact}]
    gains: dict[str, float] = {}
    per_name: dict[str, int] = {}
    for sym in found:
        per_name[sym.name.lower()] = per_name.get(sym.name.lower(), 0) + 1
    for sym in found:
        full = wanted.get(sym.name) or next(
            (n for k, n in wanted.items() if k.lower() == sym.name.lower()), ""
        )
        strength = _match_strength(sym, full) or _sigil_strength(sym, intent)
        if strength <= 0:
            continue
        if sym.chunk_id not in scores and per_name[sym.name.lower()] > MAX_DEFINITIONS:
            continue
        named_after = _named_after(sym.path, sym.name.lstrip(_SIGILS) or sym.name)
        gain = unit * strength * (1.0 + FILE_NAMED_AFTER_SYMBOL * named_after)
        gains[sym.chunk_id] = max(gains.get(sym.chunk_id, 0.0), gain)
    missing = [cid for cid in gains if cid not in chunks]
    if missing:
        chunks.update(load(missing))
    for cid, gain in gains.items():
        if cid in chunks:  # a loader applies the request's filters: a filtered-out one stays out
            scores[cid] = scores.get(cid, 0.0) + gain
            found_by.add(cid)


def definition_lookup(intent: QueryIntent) -> list[str]:
    """The names ``boost_definitions`` looks up in the symbol table for this query (known
    before retrieval, so a search can ask for them while its sources run): a symbol
    query's name also behind each sigil (``$ZodError``, ``_ZodError``)."""
    names = list({last_name(n): n for n in intent.definition_names()})
    if intent.is_symbol:
        tail = last_name(intent.symbol)
        names += [s + tail for s in _SIGILS if not tail.startswith(s)]
    return names


def _sigil_strength(sym: Symbol, intent: QueryIntent) -> float:
    """``SIGIL_MATCH`` when a symbol query's name is the definition's behind leading ``$``
    or ``_`` (same case): one name under a naming convention, a weaker match than itself."""
    if not intent.is_symbol:
        return 0.0
    tail = last_name(intent.symbol)
    return SIGIL_MATCH if sym.name != tail and sym.name.lstrip(_SIGILS) == tail else 0.0


def _match_strength(sym: Symbol, asked: str) -> float:
    """1 for the exact name (or the qualified name's tail), ½ for the name in another case."""
    if not asked:
        return 0.0
    tail = last_name(asked)
    if sym.name != tail:
        return 0.5 if sym.name.lower() == tail.lower() else 0.0
    if tail == asked:
        return 1.0
    # Store.write_files: the qualified name must end with what was asked, separators aside.
    norm = re.sub(r"::|\\|->|#", ".", asked)
    return 1.0 if sym.qualified_name.endswith(norm) else 0.6


def _named_after(path: str, name: str) -> float:
    """1 when the file's stem is the name (``type_adapter.py`` too), ½ for its plural
    (``TypeAdapters.java`` holds many, ``TypeAdapter.java`` is the one), else 0."""
    stem = path.rsplit("/", 1)[-1].split(".", 1)[0].lower()
    bare = stem.replace("_", "").replace("-", "")
    want = name.lower()
    if want in (stem, bare):
        return 1.0
    return 0.5 if want in (stem.rstrip("s"), bare.rstrip("s")) else 0.0


def boost_path_matches(
    scores: dict[str, float], chunks: Mapping[str, Chunk], intent: QueryIntent, top: float
) -> None:
    """Query words in a candidate's file name or folder (prefix matches allowed, so
    "completion" finds ``shell_completion.py``, "loads" ``loader.lua``); a file whose
    whole name the query spells (``Request.swift`` for "Request type…") gains most.
    A word found in most candidates' paths (the project's own name) tells nothing.
    Paths a long query mentions (a traceback's files) gain too."""
    words = {w for w in intent.words if len(w) > 2}
    for n in intent.names:
        words |= {p for p in name_terms(n) if len(p) > 2}
    if intent.is_symbol:
        words = {p for p in name_terms(intent.symbol) if len(p) > 2}
    hints = [h.lstrip("./") for h in _PATH_HINT.findall(intent.text)] if intent.long else []
    terms = {chunks[cid].path: _path_terms(chunks[cid].path) for cid in scores}
    # Which query words each distinct path part matches, worked out once a part (a
    # part is in many candidates' paths; ``_matches`` per path and word was ~1 ms a search).
    parts = {t for stem, folder in terms.values() for t in stem | folder}
    loose = {t: _words_matching(t, words) for t in parts}
    held = {
        path: frozenset().union(*(loose[t] for t in stem | folder)) for path, (stem, folder) in terms.items()
    }
    if len(terms) >= 4 and not intent.long:
        half = len(terms) / 2
        words = {w for w in words if sum(1 for h in held.values() if w in h) <= half}
    by_part = {t: _words_matching(t, words, strict=True) for t in parts} if intent.is_symbol else loose
    weights = _word_weights(intent, words)
    gains = {
        path: _path_gain(path, stem, folder, weights, hints, intent.long, by_part)
        for path, (stem, folder) in terms.items()
    }
    for cid in scores:
        gain = gains[chunks[cid].path]
        if gain:
            scores[cid] += top * gain


@lru_cache(maxsize=4096)  # ~0.3 KB a path: a few searches' candidates, not the repository
def _path_terms(path: str) -> tuple[frozenset[str], frozenset[str]]:
    """The parts of a file's stem and of its folder's name."""
    parts = path.rsplit("/", 2)
    stem = frozenset(split_identifier(parts[-1].split(".", 1)[0]))
    folder = frozenset(split_identifier(parts[-2])) if len(parts) > 1 else frozenset()
    return stem, folder


def _path_gain(
    path: str,
    stem: frozenset[str],
    folder: frozenset[str],
    words: Mapping[str, float],
    hints: Sequence[str],
    long: bool,
    by_part: Mapping[str, frozenset[str]],
) -> float:
    """What a file's path earns: a path the query mentions, its whole name spelled by
    the query, the weighted share of query words (``words``: each with its weight) in
    its name or folder. ``by_part``: the query words each path part matches (a symbol
    query's whole or plural: ``Vitest`` is not ``vite.ts``; else by stem)."""
    gain = 0.0
    if hints and any(path.endswith(h) for h in hints):
        gain += PATH_MENTION_BOOST
    if words and not long:
        if stem and all(not by_part[t].isdisjoint(words) for t in stem):
            gain += STEM_MATCH_BOOST
        matched = frozenset().union(*(by_part[t] for t in stem | folder)).intersection(words)
        gain += PATH_MATCH_BOOST * sum(words[w] for w in matched) / sum(words.values())
    return gain


def _word_weights(intent: QueryIntent, words: Collection[str]) -> dict[str, float]:
    """Each of ``words`` with its weight by its place in the query (``POSITION_DECAY``);
    an identifier's parts take the identifier's place ("absl::StrSplit and StrJoin")."""
    place = {w: i for i, w in enumerate(intent.words)}
    for n in intent.names:
        at = place.get(last_name(n).lower(), len(intent.words))
        for p in name_terms(n):
            place.setdefault(p, at)
    return {w: 1.0 / (1.0 + POSITION_DECAY * place.get(w, len(intent.words))) for w in words}


def _words_matching(part: str, words: Collection[str], *, strict: bool = False) -> frozenset[str]:
    """The query words a path or name part matches: by stem (``_same_stem``), or for a
    symbol query (``strict``) whole or plural — ``Vitest`` is not ``vite.ts``."""
    if strict:
        return frozenset(w for w in words if w.rstrip("s") == part.rstrip("s"))
    return frozenset(w for w in words if _same_stem(w, part))


@lru_cache(maxsize=4096)  # the language server's memory: 65,536 pairs held ~12 MiB
def _same_stem(word: str, term: str) -> bool:
    if word == term:
        return True
    if len(word) > len(term):
        word, term = term, word
    return len(word) >= 4 and term.startswith(word[: max(4, len(word) - 2)])


def boost_name_matches(
    scores: dict[str, float], chunks: Mapping[str, Chunk], intent: QueryIntent, top: float
) -> None:
    """A words query whose words name the chunk's definition ("how is the progress bar
    rendered" → ``ProgressBar.render_progress``) lifts it by the share of words matched;
    a type only when the query spells its whole compound name (``_name_gain``) and
    none of its members is a candidate (``ProgressBar.render_progress`` answers, not
    the ``ProgressBar`` header)."""
    if intent.is_symbol or intent.long:
        return
    words = {w for w in intent.words if len(w) > 2}
    if not words:
        return
    cache: dict[tuple[str, bool], float] = {}
    by_part: dict[str, frozenset[str]] = {}
    # A type whose members are candidates of their own: its members carry the answer.
    containers = {c.symbol.rsplit(".", 1)[0] for cid in scores if "." in (c := chunks[cid]).symbol}
    for cid in scores:
        symbol, kind = chunks[cid].symbol, chunks[cid].kind
        if not symbol or (kind not in _CALLABLE and (kind is not ChunkKind.CLASS or symbol in containers)):
            continue
        key = (symbol, kind is ChunkKind.CLASS)
        if key not in cache:
            cache[key] = _name_gain(last_name(symbol), words, by_part, whole=kind is ChunkKind.CLASS)
        scores[cid] += top * cache[key]


def _name_gain(name: str, words: set[str], by_part: dict[str, frozenset[str]], *, whole: bool) -> float:
    """The share of query words in a definition's own name (its container's is shared
    by every member). ``whole``: a type counts only when the query spells every part
    of a compound name ("shell completion for bash" → ``BashComplete``, not ``Mutex``
    for any query saying "mutex"). ``by_part``: the words each name part matches, filled
    in as parts come (many names share parts)."""
    terms = frozenset(split_identifier(name))  # split_identifier remembers the split
    if whole and len(terms) < CLASS_NAME_PARTS:
        return 0.0
    matched: set[str] = set()
    for t in terms:
        held = by_part.get(t)
        if held is None:
            held = by_part[t] = _words_matching(t, words)
        if whole and not held:
            return 0.0
        matched |= held
    return NAME_MATCH_BOOST * len(matched) / len(words)


def boost_word_coverage(
    scores: dict[str, float], chunks: Mapping[str, Chunk], intent: QueryIntent, top: float
) -> None:
    """A words query: a chunk whose text holds more of the query's distinct words gains
    by the share it holds, squared ("how are exceptions shown to the user and the exit
    code set": ``ClickException`` — exception, show, user, exit, code — over ``Exit``,
    which holds three of them). Words match identifier parts (``exit_code``), by stem
    as the path rule does ("shown" ~ ``show``)."""
    words = [w for w in intent.words if len(w) > 2]
    if intent.is_symbol or intent.long or len(words) < COVERAGE_MIN_WORDS:
        return
    for cid in scores:
        held = _words_held(chunks[cid].text, words)
        if held:
            scores[cid] += top * WORD_COVERAGE_BOOST * (held / len(words)) ** WORD_COVERAGE_POWER


def boost_compound_names(
    scores: dict[str, float], chunks: Mapping[str, Chunk], intent: QueryIntent, top: float
) -> None:
    """A words query whose adjacent words the chunk writes as one identifier ("how
    replaceReducer swaps the root reducer" → ``replaceReducer``, "window border" →
    ``windowBorder``, "reflection equals builder" → ``ReflectionEqualsBuilder``) gains,
    more when that identifier names its definition or file: word coverage counts the
    words one by one, and BM25 sees the identifier's parts apart."""
    if intent.is_symbol or intent.long:
        return
    adjacent = zip(intent.words, intent.words[1:], strict=False)
    pairs = [_pair_forms(a, b) for a, b in adjacent if len(a) > 2 and len(b) > 2]
    if not pairs:
        return
    for cid in scores:
        c = chunks[cid]
        name = f"{c.symbol} {c.path.rsplit('/', 1)[-1]}".lower()
        text = c.text.lower()
        held = 0
        for forms in pairs:
            if forms[0][:3] not in text and forms[0][:3] not in name:
                continue  # no form can be there
            named = any(f in name for f in forms)
            held += (named or any(f in text for f in forms)) + named
        if held:
            scores[cid] += top * COMPOUND_BOOST * held / len(pairs)


def _pair_forms(a: str, b: str) -> tuple[str, ...]:
    """How code writes two adjacent query words as one identifier: joined, snake case, and
    each cut to its first three letters (``envvar`` / ``env_var`` for "environment
    variable", ``retval``, ``maxlen``). Every form starts with ``a``'s first three letters."""
    forms = (a + b, f"{a}_{b}", a[:3] + b[:3], f"{a[:3]}_{b[:3]}")
    return tuple(dict.fromkeys(forms))


def _words_held(text: str, words: Sequence[str]) -> int:
    """How many of ``words`` the text holds as an identifier part (``exit_code``,
    ``ClickException``), whole or by stem as the path rule compares them."""
    low = text.lower()
    return sum(1 for w in words if _holds(text, low, w))


def _holds(text: str, low: str, word: str) -> bool:
    """An identifier part of ``text`` is ``word`` or shares its stem (``_same_stem``:
    "shown" ~ ``show``, "routing" ~ ``route``). ``low`` is ``text`` lower case. Only the
    places where the word's first four letters start a part are read (a stem match
    needs them), so a chunk is not split into words."""
    head = word[:4]
    i = low.find(head)
    while i >= 0:
        before = text[i - 1] if i else " "
        if not before.isalpha() or (
            text[i].isupper() and (before.islower() or text[i + 1 : i + 2].islower())
        ):
            part = IDENTIFIER_PARTS.match(text, i)
            if part is not None and _same_stem(word, part.group(0).lower()):
                return True
        i = low.find(head, i + 1)
    return False


def boost_file_coherence(
    scores: dict[str, float],
    chunks: Mapping[str, Chunk],
    top: float,
    ranks: Mapping[str, Mapping[Source, int]] | None = None,
    leaders: Collection[str] = (),
) -> None:
    """A file with several good chunks lifts its best one. Only the best
    ``COHERENCE_WINDOW`` candidates count, and the gain saturates: fused RRF scores
    are flat (rank 1 and rank 60 differ by half), so a plain sum would let a file
    of many middling chunks beat the one chunk every source put first.

    The gain never lifts a chunk past one that leads on its own: a chunk of another
    file that every source finding the lifted chunk put first (``ranks``: each
    candidate's rank per source), or one of ``leaders`` (the definitions a symbol
    query names)."""
    window = sorted(scores.items(), key=lambda kv: -kv[1])[:COHERENCE_WINDOW]
    best: dict[str, str] = {}
    extra: dict[str, float] = {}
    for cid, s in window:
        path = chunks[cid].path
        if path not in best:
            best[path] = cid
        else:
            extra[path] = extra.get(path, 0.0) + (s / top) ** COHERENCE_SHARPNESS
    before = dict(scores)
    for path, more in extra.items():
        rep = _representative(best[path], window, chunks)
        gained = scores[rep] + top * FILE_COHERENCE_BOOST * more / (1.0 + more)
        scores[rep] = _held_below_leaders(rep, gained, before, chunks, ranks or {}, leaders)


def _held_below_leaders(
    cid: str,
    gained: float,
    before: Mapping[str, float],
    chunks: Mapping[str, Chunk],
    ranks: Mapping[str, Mapping[Source, int]],
    leaders: Collection[str],
) -> float:
    """``gained``, held just below the best-scored chunk of another file that leads
    ``cid`` on its own (see ``boost_file_coherence``)."""
    start = before[cid]
    own = ranks.get(cid, {})
    cap = gained
    for other in (*leaders, *before):
        s = before.get(other, 0.0)
        if s <= start or s >= cap or other == cid or chunks[other].path == chunks[cid].path:
            continue
        if other in leaders or (own and all(ranks.get(other, {}).get(src) == 1 for src in own)):
            cap = s - UNANIMOUS_MARGIN * (s - start)
    return max(start, cap)


def _representative(best: str, window: Sequence[tuple[str, float]], chunks: Mapping[str, Chunk]) -> str:
    """The chunk that carries a file's coherence: its best, or its best definition when
    the best is a top-level block (imports, a module docstring) scored not much higher."""
    first = chunks[best]
    if first.kind is not ChunkKind.BLOCK:
        return best
    top = next(s for cid, s in window if cid == best)
    for cid, s in window:
        c = chunks[cid]
        if c.path == first.path and c.kind is not ChunkKind.BLOCK and s >= top * BLOCK_REPRESENTATIVE:
            return cid
    return best


def boost_referenced_files(
    scores: dict[str, float], chunks: Mapping[str, Chunk], references: Mapping[str, int]
) -> None:
    """A file that many other files name (by what it defines) is more often the answer
    than a sibling holding the same words: ``StringUtils.java`` over ``Strings.java``,
    ``connect.c`` over ``hostip.h``. The file's best chunk gains, saturating in the
    count, measured against the top score after the other rules and the role priors;
    its other chunks do not, so a much-used file does not fill the page."""
    if not references:
        return
    top = max(scores.values(), default=0.0) or 1.0
    best: dict[str, str] = {}
    for cid, s in scores.items():
        path = chunks[cid].path
        if path not in best or s > scores[best[path]]:
            best[path] = cid
    for path, cid in best.items():
        n = references.get(path, 0)
        if n:
            scores[cid] += top * FILE_REFERENCE_BOOST * n / (n + FILE_REFERENCE_HALF)
