"""A static embedding model: one vector per token, a text's vector their mean.

``all-MiniLM-L6-v2-static`` (``embed.model``) is distilled from the bundled
all-MiniLM-L6-v2 at build time by ``scripts/distill_static.py`` (model2vec's
recipe) and ships inside the wheel. Running it needs numpy and tokenizers only:
tokenize, look the ids up in a float16 table, average, normalise. No transformer
runs, so a chunk costs microseconds instead of milliseconds, and nothing is ever
downloaded.

A folder is a static model when it holds ``embeddings.npy`` (vocabulary ×
dimension) and the ``tokenizer.json`` whose ids index it; ``codesift-model.json``
beside them gives the model id, the dimension and how much text it reads.
"""

from __future__ import annotations

import json
import logging
import re
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from .errors import EmbedError
from .settings import EmbedSettings

if TYPE_CHECKING:
    from tokenizers import Tokenizer

logger = logging.getLogger(__name__)

Vectors = npt.NDArray[np.float32]

STATIC_MODEL = "all-MiniLM-L6-v2-static"
EMBEDDINGS_FILE = "embeddings.npy"
TOKENIZER_FILE = "tokenizer.json"
META_FILE = "codesift-model.json"
# A static model has no position limit; this bounds what a huge chunk costs.
DEFAULT_MAX_TOKENS = 512
STATIC_DIMENSIONS = {STATIC_MODEL: 256}
# ASCII text as a BERT tokenizer reads it: control characters (tab, newline and
# carriage return are white space) dropped, then runs of letters and digits, and each
# punctuation mark alone.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_WORD = re.compile(r"[a-z0-9]+|[!-/:-@\[-`{-~]")
# Distinct words whose ids are kept (a few MB), then forgotten and read again.
WORD_CACHE_MAX = 200_000


def is_static_model_dir(directory: Path) -> bool:
    """Whether ``directory`` holds a static model (token table + tokenizer)."""
    return (directory / EMBEDDINGS_FILE).is_file() and (directory / TOKENIZER_FILE).is_file()


class StaticEmbedder:
    """Mean of token vectors from a table, on numpy; thread-safe, loads on first use.

    Tokens are the model's WordPiece tokens without ``[CLS]``/``[SEP]``; the unknown
    token and tokens without a row (all-zero: special and unused ids) are left out
    of the mean. A text with no known token gets the zero vector (no similarity to
    anything), never NaN. ``embed.max_tokens`` is MiniLM's window and does not
    apply: the static model reads up to its own ``max_tokens`` (512).
    """

    def __init__(self, settings: EmbedSettings, model_dir: Path) -> None:
        """Read the model's meta now; the table and tokenizer load on first use."""
        self._settings = settings
        self.model_dir = model_dir
        meta = _read_meta(model_dir)
        meta_id = meta.get("model_id")
        self._model_id = meta_id if isinstance(meta_id, str) and meta_id else f"static:{settings.model}"
        dim = meta.get("dimension")
        self._dimension: int | None = dim if isinstance(dim, int) and dim > 0 else None
        limit = meta.get("max_tokens")
        self.max_tokens = limit if isinstance(limit, int) and limit > 0 else DEFAULT_MAX_TOKENS
        self._lock = threading.Lock()
        self._table: npt.NDArray[np.float32] | None = None
        self._tokenizer: Tokenizer | None = None
        self._unk_id = -1
        # a word's WordPiece ids (``_ascii_ids``); None: the tokenizer is not BERT's
        self._words: dict[str, list[int]] | None = None
        self._wordpiece: Any = None
        self._word_chars = 100
        self._added: re.Pattern[str] | None = None  # the tokenizer's added tokens

    @property
    def model_id(self) -> str:
        """``static:<model>``, from the model's codesift-model.json when present."""
        return self._model_id

    @property
    def dimension(self) -> int:
        """Vector length (from the meta, else the table's width)."""
        if self._dimension is None:
            self._dimension = int(self._load()[0].shape[1])
        return self._dimension

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        """One normalised float32 row per text, input order."""
        table, tokenizer = self._load()
        out = np.zeros((len(texts), table.shape[1]), dtype=np.float32)
        if not texts:
            return out
        ids_per_text = self._token_ids(tokenizer, texts)
        self._sum_rows(table, ids_per_text, out)
        return _normalise(out)

    def _token_ids(self, tokenizer: Tokenizer, texts: Sequence[str]) -> list[npt.NDArray[np.int64]]:
        """Each text's first ``max_tokens`` token ids: ASCII text word by word through a
        cache of each word's WordPiece ids (the same ids as the tokenizer's: a BERT
        tokenizer lower-cases, drops control characters and splits ASCII text at
        whitespace and at each punctuation mark, then WordPiece reads each word alone),
        any other text by the tokenizer. The tokenizer's own pass cost ~4× as much on
        the kernel's chunks (and the indexer's thread waited on it with both parse
        workers idle)."""
        ids: list[list[int] | None] = [self._ascii_ids(t) for t in texts] if self._words is not None else []
        others = [t for t, got in zip(texts, ids, strict=True) if got is None] if ids else list(texts)
        try:
            encodings = tokenizer.encode_batch(others, add_special_tokens=False) if others else []
        except Exception as exc:
            raise EmbedError(f"cannot tokenize text for embedding: {exc}") from exc
        if not ids:
            return [np.asarray(e.ids, dtype=np.int64) for e in encodings]
        rest = iter(encodings)
        return [np.asarray(got if got is not None else next(rest).ids, dtype=np.int64) for got in ids]

    def _ascii_ids(self, text: str) -> list[int] | None:
        """``text``'s token ids by the word cache, or None when it is not ASCII."""
        words = self._words
        if words is None or not text.isascii() or (self._added is not None and self._added.search(text)):
            return None  # the tokenizer reads an added token ("[SEP]") whole, before words
        limit, out = self.max_tokens, []
        for word in _WORD.findall(_CONTROL.sub("", text).lower()):
            got = words.get(word)
            if got is None:
                got = self._word_ids(word)
            out.extend(got)
            if len(out) >= limit:
                return out[:limit]
        return out

    def _word_ids(self, word: str) -> list[int]:
        words, model = self._words, self._wordpiece
        assert words is not None and model is not None
        if len(words) >= WORD_CACHE_MAX:
            words.clear()
        too_long = len(word) > self._word_chars  # WordPiece reads such a word as unknown
        got = [self._unk_id] if too_long else [token.id for token in model.tokenize(word)]
        words[word] = got
        return got

    def _sum_rows(self, table: Vectors, ids_per_text: list[npt.NDArray[np.int64]], out: Vectors) -> None:
        """Each text's token rows (the unknown token left out) summed into ``out``, a
        gather and a sum per text. One gather for a group and ``np.add.reduceat`` over
        its runs gave the same vectors 16 times slower (reduceat along the rows):
        28% of the text phase's main thread on the kernel tree (DECISIONS.md)."""
        unk = self._unk_id
        for i, ids in enumerate(ids_per_text):
            if unk >= 0:
                ids = ids[ids != unk]
            if len(ids):
                out[i] = table[ids].sum(axis=0)

    def embed_query(self, text: str) -> Vectors:
        """Embed one query; equal to ``embed_documents([text])[0]``."""
        row: Vectors = self.embed_documents([text])[0]
        return row

    def release(self) -> bool:
        """Drop the loaded table (~30 MiB as float32); the next call loads it again."""
        with self._lock:
            loaded = self._table is not None
            self._table = None
            self._tokenizer = None
            self._words = self._wordpiece = None
            return loaded

    def _load(self) -> tuple[npt.NDArray[np.float32], Tokenizer]:
        with self._lock:
            if self._table is not None and self._tokenizer is not None:
                return self._table, self._tokenizer
            started = time.perf_counter()
            try:
                from tokenizers import Tokenizer

                tokenizer = Tokenizer.from_file(str(self.model_dir / TOKENIZER_FILE))
                table = np.load(self.model_dir / EMBEDDINGS_FILE, allow_pickle=False)
            except ImportError as exc:
                raise EmbedError(f"the static embedding model needs tokenizers: {exc}") from exc
            except Exception as exc:
                raise EmbedError(
                    f"cannot load the static embedding model from {self.model_dir}: {exc}"
                ) from exc
            if table.ndim != 2 or table.shape[0] < tokenizer.get_vocab_size(with_added_tokens=True):
                raise EmbedError(
                    f"{self.model_dir / EMBEDDINGS_FILE} has shape {table.shape}: it needs a row for each "
                    f"of the tokenizer's {tokenizer.get_vocab_size(with_added_tokens=True)} tokens"
                )
            if self._dimension is not None and table.shape[1] != self._dimension:
                raise EmbedError(
                    f"{self.model_dir / EMBEDDINGS_FILE} is {table.shape[1]}-dimensional; its "
                    f"{META_FILE} says {self._dimension}"
                )
            tokenizer.no_padding()
            tokenizer.enable_truncation(self.max_tokens)
            model = tokenizer.model
            unk = getattr(model, "unk_token", None)
            found = tokenizer.token_to_id(unk) if isinstance(unk, str) else None
            self._unk_id = found if found is not None else -1
            if _is_bert_wordpiece(tokenizer) and self._unk_id >= 0:
                self._words, self._wordpiece = {}, model
                added = [re.escape(t.content) for t in tokenizer.get_added_tokens_decoder().values()]
                self._added = re.compile("|".join(added)) if added else None
                self._word_chars = int(getattr(model, "max_input_chars_per_word", 100))
            # float32 once: summing float16 rows loses precision and is slower on CPUs.
            self._table = np.ascontiguousarray(table, dtype=np.float32)
            self._tokenizer = tokenizer
            self._dimension = int(table.shape[1])
            logger.info(
                "loaded static embedding model %s from %s (%d × %d) in %.2f s",
                self._model_id,
                self.model_dir,
                table.shape[0],
                table.shape[1],
                time.perf_counter() - started,
            )
            return self._table, self._tokenizer


def _is_bert_wordpiece(tokenizer: Tokenizer) -> bool:
    """Whether ``tokenizer`` reads ASCII text as ``_ascii_ids`` does: BERT's normaliser
    (control characters dropped, lower case), BERT's pre-tokenizer, WordPiece."""
    try:
        spec = json.loads(tokenizer.to_str())
    except (ValueError, TypeError):
        return False
    norm, pre, model = spec.get("normalizer") or {}, spec.get("pre_tokenizer") or {}, spec.get("model") or {}
    return (
        norm.get("type") == "BertNormalizer"
        and norm.get("clean_text") is True
        and norm.get("lowercase") is True
        and pre.get("type") == "BertPreTokenizer"
        and model.get("type") == "WordPiece"
    )


def _normalise(matrix: Vectors) -> Vectors:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    np.divide(matrix, norms, out=matrix, where=norms > 0)
    return matrix


def _read_meta(directory: Path) -> dict[str, object]:
    try:
        data = json.loads((directory / META_FILE).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        logger.warning("ignoring unreadable %s: %s", directory / META_FILE, exc)
        return {}
    return data if isinstance(data, dict) else {}
