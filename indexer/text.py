"""Text helpers shared by parse and search: identifier splitting for BM25."""

from __future__ import annotations

import re
from functools import lru_cache

# Runs between ASCII characters other than letters, digits and "_": non-ASCII
# characters belong to runs (the full-text tokenizer splits them further).
_WORD = re.compile(r"[A-Za-z0-9_\x80-\U0010ffff]+")
# Parts of an identifier: lower→Upper, ACRONYMWord, letter↔digit boundaries.
IDENTIFIER_PARTS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")


# ~280 bytes an entry: 65,536 held ~18 MiB in a long-running language server; 16,384
# cost nothing measurable splitting 25k stdlib chunks (1.15 s either way).
@lru_cache(maxsize=16384)
def _split(word: str) -> tuple[str, ...]:
    parts: list[str] = []
    for piece in word.split("_"):
        parts.extend(piece_parts(piece))
    return tuple(parts)


def piece_parts(piece: str) -> list[str]:
    """Terms of one run without "_": its ASCII identifier parts, and, when it holds
    non-ASCII characters, the whole run lower case (``Größe`` → gr, e, größe), which
    the full-text tokenizer cuts into words (``naïve→fast`` → naïve, fast)."""
    parts = [m.group(0).lower() for m in IDENTIFIER_PARTS.finditer(piece)]
    if not piece.isascii():
        parts.append(piece.lower())
    return parts


def split_identifier(word: str) -> list[str]:
    """``validateCredentials`` → [validate, credentials]; ``HTTPServer_v2`` → [http, server, v, 2];
    ``größe_max`` → [gr, e, größe, max]."""
    return list(_split(word))


def search_text(text: str) -> str:
    """The identifier-split companion of a chunk's text, indexed for BM25.

    Every identifier contributes its parts, lower case (a one-part identifier
    itself), so ``validateCredentials`` is found by "validate credentials" while
    the raw text column still finds the whole identifier.
    """
    out: list[str] = []
    for word in _WORD.findall(text):
        out.extend(_split(word))
    return " ".join(out)
