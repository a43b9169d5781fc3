"""BM25 over LanceDB's native full-text index.

One column is indexed and queried: ``search_text``, each identifier split, lower
case (``validateCredentials`` → "validate credentials"), a one-part identifier
kept whole, and a run with non-ASCII letters kept whole as well (``Größe``,
``naïve``). Query terms are split the same way, so ``validateCredentials`` and
"validate credentials" both find it. CJK text without spaces stays one token
per run (the tokenizer has no word breaker for it); grep finds those.

Querying this column alone costs half of querying it and the raw text (101k
chunks: p50 9.8 vs 21.6 ms) and scored a little higher on the quality harness
(500 queries, BM25 MRR@10 0.281 → 0.287, hybrid 0.346 → 0.349), so the raw text
has no FTS index at all (an optimize at 101k chunks: 6.5 → 2.4 s). LanceDB
scores with k1 = 1.2, b = 0.75 over the statistics of the whole index; a
pre-filter narrows the candidates, never the statistics.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from lancedb.query import MatchQuery

from ..model import Chunk
from ..rows import CHUNK_COLUMNS, chunks_from_table
from ..store import CHUNKS, Store, fetch
from ..text import split_identifier

_TOKEN = re.compile(r"[^\W\d]\w*|\d+")  # words and identifiers, any script
# Identifiers worth an exact grep: snake_case, camelCase, dotted or called.
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")

# English function words: what BM25 leaves out of a words query. Their posting lists
# are the longest: with them BM25 took 51 ms p50 at 101k chunks (16 ms without), for
# 0.006 NDCG@10 on the semble tier. Narrower than the keyword extractor's STOP_WORDS,
# which also drops code words ("file", "list", "get", "class").
FUNCTION_WORDS = frozenset(
    (
        "a",
        "an",
        "the",
        "and",
        "or",
        "but",
        "of",
        "to",
        "in",
        "on",
        "at",
        "by",
        "for",
        "from",
        "with",
        "into",
        "onto",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "it",
        "its",
        "this",
        "that",
        "these",
        "those",
        "there",
        "here",
        "how",
        "what",
        "where",
        "when",
        "which",
        "who",
        "whom",
        "whose",
        "why",
        "do",
        "does",
        "did",
        "can",
        "could",
        "should",
        "would",
        "will",
        "shall",
        "may",
        "might",
        "must",
        "we",
        "our",
        "you",
        "your",
        "they",
        "their",
        "them",
        "i",
        "me",
        "my",
    )
)
# …and words too common in questions about code to search for exactly.
STOP_WORDS = FUNCTION_WORDS | frozenset(
    (
        "if",
        "then",
        "else",
        "without",
        "over",
        "under",
        "doing",
        "done",
        "have",
        "has",
        "had",
        "having",
        "he",
        "she",
        "his",
        "her",
        "find",
        "show",
        "get",
        "give",
        "list",
        "all",
        "any",
        "some",
        "code",
        "function",
        "functions",
        "method",
        "methods",
        "class",
        "classes",
        "file",
        "files",
        "use",
        "used",
        "using",
        "uses",
        "where's",
        "not",
        "no",
        "yes",
    )
)


@dataclass(frozen=True, slots=True)
class KeywordHit:
    chunk: Chunk
    score: float  # raw BM25

    @property
    def chunk_id(self) -> str:
        return self.chunk.id


def sanitize(query: str) -> str:
    """The query's words, with FTS syntax (quotes, parens, operators) removed."""
    return " ".join(m.group(0) for m in _TOKEN.finditer(query))


def query_terms(query: str) -> list[str]:
    """Lower-case terms a query contributes: words and the parts of its identifiers."""
    terms: list[str] = []
    for m in _TOKEN.finditer(query):
        word = m.group(0)
        parts = split_identifier(word)
        for t in [word.lower(), *parts] if len(parts) > 1 else parts:
            if t not in terms:
                terms.append(t)
    return terms


def extract_keywords(query: str) -> str:
    """Keywords for BM25 and grep when none were given: identifiers, then content words.

    "where do we retry failed uploads" → "retry failed uploads";
    "what calls validateCredentials()" → "validateCredentials".
    """
    idents = [
        m.group(0)
        for m in _IDENT.finditer(query)
        if "_" in m.group(0) or "." in m.group(0) or len(split_identifier(m.group(0))) > 1
    ]
    if idents:
        return " ".join(dict.fromkeys(idents))
    words = [w for w in sanitize(query).split() if w.lower() not in STOP_WORDS]
    return " ".join(dict.fromkeys(words)) or sanitize(query)


def bm25(store: Store, query: str, limit: int, where: str | None = None) -> list[KeywordHit]:
    """Chunks ranked by BM25 for the query's words; ``[]`` for an empty or all-syntax query."""
    raw = sanitize(query)
    if not raw:
        return []
    split = " ".join(query_terms(query))
    fts = MatchQuery(split, "search_text")  # type: ignore[call-arg]
    search = store.query(CHUNKS).nearest_to_text(fts)
    if where:
        search = search.where(where)  # a pre-filter: statistics stay the whole index's
    rows = fetch(search.select([*CHUNK_COLUMNS, "_score"]).limit(limit))
    scores = rows.column("_score").to_pylist()
    return [KeywordHit(c, float(s)) for c, s in zip(chunks_from_table(rows), scores, strict=True)]
