"""Plain Okapi BM25 over whole files: the baseline a user gets without codesift.

Self-contained (numpy only) so the quality tiers run with any checkout's venv.
Tokens: runs of letters, digits and ``_``, lower-cased, plus the parts of
identifiers (``validateCredentials`` → ``validate``, ``credentials``; ``max_len``
→ ``max``, ``len``). k1 = 1.2, b = 0.75, Lucene's idf ``ln(1 + (N − df + ½)/(df + ½))``;
each distinct query token counted once.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterator, Mapping

import numpy as np
import numpy.typing as npt

_WORD = re.compile(r"[A-Za-z0-9_]+")
_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z]|[0-9]|\b)|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")


def tokens(text: str) -> Iterator[str]:
    """The words of ``text`` and the parts of its identifiers, lower-cased."""
    for m in _WORD.finditer(text):
        word = m.group(0)
        yield word.lower()
        parts = [p for piece in word.split("_") for p in _PART.findall(piece)]
        if len(parts) > 1:
            for p in parts:
                yield p.lower()


class FileBM25:
    """An in-memory BM25 index of whole documents keyed by path."""

    def __init__(self, docs: Mapping[str, str], k1: float = 1.2, b: float = 0.75) -> None:
        self.paths = list(docs)
        self.k1, self.b = k1, b
        lengths: list[int] = []
        postings: dict[str, tuple[list[int], list[int]]] = {}
        for i, path in enumerate(self.paths):
            counts = Counter(tokens(docs[path]))
            lengths.append(sum(counts.values()))
            for term, tf in counts.items():
                ids, tfs = postings.setdefault(term, ([], []))
                ids.append(i)
                tfs.append(tf)
        self.doc_len = np.asarray(lengths, dtype=np.float64)
        self.avg_len = float(self.doc_len.mean()) if lengths else 0.0
        n = len(self.paths)
        self._post: dict[str, tuple[npt.NDArray[np.int64], npt.NDArray[np.float64], float]] = {}
        for term, (ids, tfs) in postings.items():
            df = len(ids)
            idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
            self._post[term] = (np.asarray(ids, dtype=np.int64), np.asarray(tfs, dtype=np.float64), idf)

    def scores(self, query: str) -> npt.NDArray[np.float64]:
        out = np.zeros(len(self.paths), dtype=np.float64)
        norm = self.k1 * (1 - self.b + self.b * self.doc_len / max(self.avg_len, 1e-9))
        for term in dict.fromkeys(tokens(query)):
            hit = self._post.get(term)
            if hit is None:
                continue
            ids, tf, idf = hit
            out[ids] += idf * tf * (self.k1 + 1) / (tf + norm[ids])
        return out

    def rank(self, query: str, k: int) -> list[str]:
        """The ``k`` best paths (score > 0), best first; ties in path order."""
        s = self.scores(query)
        order = np.argsort(-s, kind="stable")[:k]
        return [self.paths[i] for i in order if s[i] > 0]
