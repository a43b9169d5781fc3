"""What a user would reach for instead, run on the same tree and queries: raw ripgrep,
bm25s (BM25 over the same chunk texts) and brute-force numpy cosine (over the same vectors)."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

from codesift.indexer.search.grep import find_rg
from codesift.indexer.store import Store

from .report import percentiles


def rg_ms(root: Path, pattern: str, *, regex: bool = False) -> float:
    """Milliseconds of a plain ``rg -n PATTERN`` over root, its output read in full."""
    args = [find_rg(), "-n", "--no-config"]
    args += ["--regexp", pattern] if regex else ["--fixed-strings", "--regexp", pattern]
    t = time.perf_counter()
    subprocess.run([*args, "./"], cwd=root, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=False)
    return (time.perf_counter() - t) * 1000


def chunk_texts(store: Store) -> list[str]:
    """The search column of every chunk (raw text + identifier words), as BM25 sees it."""
    tbl = store.table("chunks")
    res = tbl.search().select(["text", "search_text"]).limit(None).to_arrow()
    return [
        f"{t}\n{s}"
        for t, s in zip(res.column("text").to_pylist(), res.column("search_text").to_pylist(), strict=True)
    ]


class Bm25sPeer:
    """bm25s (k1 1.2, b 0.75, no stop words, no stemming: as codesift's FTS is set up)."""

    def __init__(self, texts: Sequence[str]) -> None:
        import bm25s

        self._bm25s = bm25s
        t = time.perf_counter()
        tokens = bm25s.tokenize(list(texts), stopwords=None, show_progress=False)
        self.model = bm25s.BM25(k1=1.2, b=0.75)
        self.model.index(tokens, show_progress=False)
        self.index_seconds = time.perf_counter() - t
        self.vocab = set(self.model.vocab_dict)

    def query_ms(self, queries: Sequence[str], k: int = 60) -> list[float]:
        out = []
        for q in queries:
            t = time.perf_counter()
            toks = self._bm25s.tokenize([q], stopwords=None, show_progress=False, return_ids=False)
            known = [[w for w in toks[0] if w in self.vocab]] if toks else [[]]  # type: ignore[index]
            if known[0]:
                self.model.retrieve(known, k=k, show_progress=False, n_threads=1)
            out.append((time.perf_counter() - t) * 1000)
        return out


def vector_matrix(store: Store) -> npt.NDArray[np.float32]:
    """Every stored chunk vector, one row each (rows without a vector left out)."""
    tbl = store.table("chunks")
    res = tbl.search().where("has_vector = true").select(["vector"]).limit(None).to_arrow()
    col = res.column("vector").combine_chunks()
    dim = col.type.list_size
    return np.asarray(col.flatten().to_numpy(zero_copy_only=False), dtype=np.float32).reshape(-1, dim)


def numpy_cosine_ms(
    matrix: npt.NDArray[np.float32], queries: npt.NDArray[np.float32], k: int = 60
) -> list[float]:
    """Brute force: one matrix-vector product and a partial sort per query (vectors are normalised)."""
    out = []
    for q in queries:
        t = time.perf_counter()
        sims = matrix @ q
        top = np.argpartition(-sims, min(k, len(sims) - 1))[:k]
        top[np.argsort(-sims[top])]
        out.append((time.perf_counter() - t) * 1000)
    return out


def ratio(ours: Sequence[float], theirs: Sequence[float]) -> float:
    """p50 of ours ÷ p50 of theirs."""
    return percentiles(ours)[0] / max(percentiles(theirs)[0], 1e-9)
