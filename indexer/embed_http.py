"""The ``openai`` embedding provider: an OpenAI-compatible HTTP endpoint, over urllib
(out of ``embed``: the bundled model's path never loads it)."""

from __future__ import annotations

import json
import logging
import os
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Sequence

import numpy as np

from .embed import Vectors, normalise_rows
from .errors import EmbedError
from .settings import EmbedSettings

logger = logging.getLogger(__name__)
OPENAI_DEFAULT_ENDPOINT = "https://api.openai.com/v1"


class OpenAIEmbedder:
    """An OpenAI-compatible ``POST {endpoint}/embeddings`` endpoint, over urllib.

    Sends ``{"model": ..., "input": [...]}`` in batches of ``batch_size``; retries
    HTTP 429/502/503/504 a few times (honouring Retry-After); everything else
    becomes an EmbedError naming the status and the endpoint's reason.
    """

    RETRY_STATUSES = frozenset({429, 502, 503, 504})

    def __init__(self, settings: EmbedSettings, *, timeout_s: float = 60.0, retries: int = 2) -> None:
        """Validate the endpoint; read the API key from ``settings.api_key_env``."""
        endpoint = (settings.endpoint or OPENAI_DEFAULT_ENDPOINT).rstrip("/")
        scheme = urllib.parse.urlsplit(endpoint).scheme
        if scheme not in ("http", "https"):
            raise EmbedError(f"embed.endpoint must be an http(s) URL; got {settings.endpoint!r}")
        self.url = f"{endpoint}/embeddings"
        self._settings = settings
        self._model_id = f"openai:{settings.model}"
        self._dimension = settings.dimension or None
        self._timeout_s = timeout_s
        self._retries = max(0, retries)
        self._api_key = os.environ.get(settings.api_key_env, "") if settings.api_key_env else ""

    @property
    def model_id(self) -> str:
        """``openai:<model>``."""
        return self._model_id

    @property
    def dimension(self) -> int:
        """``settings.dimension``, else learnt from the first response (asks once if needed)."""
        if self._dimension is None:
            self.embed_documents(["dimension probe"])
        assert self._dimension is not None
        return self._dimension

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        """Embed texts in batches of ``batch_size``; normalised float32 rows, input order."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        size = max(1, self._settings.batch_size)
        parts = [self._embed_batch(texts[i : i + size]) for i in range(0, len(texts), size)]
        return np.concatenate(parts, axis=0)

    def embed_query(self, text: str) -> Vectors:
        """Embed one query."""
        row: Vectors = self.embed_documents([text])[0]
        return row

    def _embed_batch(self, texts: Sequence[str]) -> Vectors:
        # OpenAI rejects empty strings in `input`; a space embeds as "nothing" just as well.
        inputs = [t if t else " " for t in texts]
        body = json.dumps({"model": self._settings.model, "input": inputs}).encode("utf-8")
        payload = self._post(body)
        data = payload.get("data") if isinstance(payload, dict) else None
        if not isinstance(data, list) or len(data) != len(inputs):
            got = len(data) if isinstance(data, list) else "none"
            raise EmbedError(
                f"embedding endpoint {self.url} returned an unexpected response: "
                f"expected {len(inputs)} embeddings under 'data', got {got}"
            )
        try:
            if all(isinstance(item.get("index"), int) for item in data):
                data = sorted(data, key=lambda item: item["index"])
            matrix = np.asarray([item["embedding"] for item in data], dtype=np.float32)
        except (AttributeError, KeyError, TypeError, ValueError) as exc:
            raise EmbedError(f"embedding endpoint {self.url} returned malformed embeddings: {exc}") from exc
        if matrix.ndim != 2 or matrix.shape[1] == 0:
            raise EmbedError(f"embedding endpoint {self.url} returned embeddings of no length")
        if self._dimension is None:
            self._dimension = int(matrix.shape[1])
        elif matrix.shape[1] != self._dimension:
            raise EmbedError(
                f"embedding endpoint {self.url} returned {matrix.shape[1]}-dimensional vectors; "
                f"expected {self._dimension} (embed.dimension)"
            )
        return normalise_rows(matrix)

    def _post(self, body: bytes) -> object:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        request = urllib.request.Request(self.url, data=body, headers=headers, method="POST")
        for attempt in range(self._retries + 1):
            try:
                with urllib.request.urlopen(request, timeout=self._timeout_s) as response:
                    raw: bytes = response.read()
                break
            except urllib.error.HTTPError as exc:
                if exc.code in self.RETRY_STATUSES and attempt < self._retries:
                    delay = _retry_delay(exc.headers.get("Retry-After"), attempt)
                    logger.info("embedding endpoint busy (HTTP %d); retry in %.1f s", exc.code, delay)
                    time.sleep(delay)
                    continue
                raise EmbedError(
                    f"embedding endpoint {self.url} failed: HTTP {exc.code} {exc.reason}{_error_detail(exc)}"
                ) from exc
            except (urllib.error.URLError, OSError) as exc:
                reason = getattr(exc, "reason", exc)
                raise EmbedError(f"cannot reach embedding endpoint {self.url}: {reason}") from exc
        try:
            return json.loads(raw)
        except ValueError as exc:
            raise EmbedError(f"embedding endpoint {self.url} returned malformed JSON: {exc}") from exc


def _retry_delay(retry_after: str | None, attempt: int) -> float:
    try:
        seconds = float(retry_after) if retry_after is not None else 0.5 * 2**attempt
    except ValueError:
        seconds = 0.5 * 2**attempt
    return min(max(seconds, 0.0), 10.0)


def _error_detail(exc: urllib.error.HTTPError) -> str:
    """': <message>' from an OpenAI-style error body, or a short snippet of the body."""
    try:
        text = exc.read(4096).decode("utf-8", "replace").strip()
    except Exception:
        return ""
    if not text:
        return ""
    try:
        payload = json.loads(text)
    except ValueError:
        return f": {text[:200]}"
    if isinstance(payload, dict):
        error = payload.get("error")
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return f": {error['message']}"
        if isinstance(error, str):
            return f": {error}"
    return f": {text[:200]}"
