"""Index URIs: local paths, ``file://`` and object stores (``s3://``, ``gs://``, ``az://``).

Credentials come the standard way for each store: LanceDB's object-store client
reads the environment (``AWS_ACCESS_KEY_ID`` / ``AWS_SECRET_ACCESS_KEY`` /
``AWS_SESSION_TOKEN``, ``AWS_REGION``, ``AWS_ENDPOINT_URL``, ``AWS_ALLOW_HTTP``,
``GOOGLE_APPLICATION_CREDENTIALS``, ``AZURE_STORAGE_ACCOUNT_NAME``…) and, running
inside the cloud, the instance or CI role. What codesift adds is a bound on
waiting: the client's default retries a dead endpoint for three minutes, which
an editor must never wait on.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar
from urllib.parse import unquote, urlparse

from .errors import StoreError

T = TypeVar("T")

OBJECT_SCHEMES = ("s3", "s3+ddb", "gs", "az", "abfs", "memory")


def is_object_store(uri: str) -> bool:
    """Whether ``uri`` names an object store rather than a local folder."""
    scheme = urlparse(uri).scheme if "://" in uri else ""
    return scheme in OBJECT_SCHEMES


def normalise_uri(uri: str, *, base: Path | None = None) -> str:
    """A local folder as an absolute path (``file://`` URIs too), an object-store URI unchanged.

    Raises StoreError for a scheme LanceDB cannot open.
    """
    uri = uri.strip()
    if not uri:
        raise StoreError("an empty index URI")
    if "://" not in uri:
        p = Path(uri).expanduser()
        return str(p if p.is_absolute() else (base or Path.cwd()) / p)
    parsed = urlparse(uri)
    if parsed.scheme == "file":
        if parsed.netloc not in ("", "localhost"):
            raise StoreError(f"{uri}: a file:// URI names a folder on this machine (file:///path)")
        return unquote(parsed.path)
    if parsed.scheme not in OBJECT_SCHEMES:
        raise StoreError(
            f"{uri}: unknown storage scheme {parsed.scheme!r}; use a path, file://, s3://, gs:// or az://"
        )
    if not parsed.netloc:
        raise StoreError(f"{uri}: no bucket named (e.g. s3://bucket/prefix)")
    return uri


def storage_options(uri: str, timeout_s: float, *, quick: bool = False) -> dict[str, str] | None:
    """LanceDB storage options for ``uri``: time bounds for object stores, None for paths.

    ``quick`` is for small reads that decide whether to go on without the store
    (the manifest, a probe): each request and all its retries within ``timeout_s``.
    Otherwise one request may take 30 s (a big fragment on a slow link).
    ``AWS_ENDPOINT_URL`` with an ``http://`` endpoint (MinIO, moto, a proxy on the
    same host) allows plain HTTP unless ``AWS_ALLOW_HTTP`` says otherwise.
    """
    if not is_object_store(uri):
        return None
    seconds = max(1, round(timeout_s))
    opts = {
        "connect_timeout": f"{seconds}s",
        "timeout": f"{seconds if quick else max(seconds, 30)}s",
        "client_max_retries": "1" if quick else "2",
        "client_retry_timeout": str(seconds if quick else seconds * 3),
    }
    endpoint = os.environ.get("AWS_ENDPOINT_URL") or os.environ.get("AWS_ENDPOINT") or ""
    if endpoint.startswith("http://") and "AWS_ALLOW_HTTP" not in os.environ:
        opts["allow_http"] = "true"
    return opts


# (pattern in the object-store client's error, what a person can act on)
_REASONS: tuple[tuple[str, str], ...] = (
    (r"NoSuchBucket|status: 404", "the bucket does not exist"),
    (
        r"AccessDenied|InvalidAccessKeyId|SignatureDoesNotMatch|ExpiredToken|status: 403|status: 401",
        "access denied: check the credentials the store reads (AWS_ACCESS_KEY_ID / "
        "AWS_SECRET_ACCESS_KEY, GOOGLE_APPLICATION_CREDENTIALS, AZURE_STORAGE_*)",
    ),
    (r"[Cc]redential", "no credentials found (environment, profile or instance role)"),
    (r"ConnectionRefused|Connection refused", "connection refused: the store's endpoint is not answering"),
    (
        r"dns error|failed to lookup address|Name or service not known",
        "the store's host name does not resolve",
    ),
    (r"[Tt]imed? ?out|elapsed", "the store did not answer in time (network, endpoint)"),
)


def within(timeout_s: float, what: str, ask: Callable[[], T]) -> T:
    """``ask()``, but never waiting longer than ``timeout_s``: past it, StoreError says
    ``what`` did not answer and ``ask`` is left to finish (or time out) on its own thread.

    The object-store client bounds each request, but not what comes before one
    (credential look-ups from an instance role, DNS); an editor must not wait on them.
    """
    result: list[T] = []
    failure: list[BaseException] = []

    def run() -> None:
        try:
            result.append(ask())
        except BaseException as exc:  # handed to the caller below
            failure.append(exc)

    worker = threading.Thread(target=run, name="codesift-store-probe", daemon=True)
    worker.start()
    worker.join(max(0.1, timeout_s))
    if failure:
        raise failure[0]
    if not result:
        raise StoreError(f"{what} did not answer within {timeout_s:g} s")
    return result[0]


def explain(exc: BaseException) -> str:
    """A reason a person can act on, from an object-store or LanceDB error (often a page of
    Rust debug output): the known cases named, else the error's first 300 characters."""
    text = str(exc)
    for pattern, reason in _REASONS:
        if re.search(pattern, text):
            return reason
    first = text.strip().splitlines()[0] if text.strip() else type(exc).__name__
    return first if len(first) <= 300 else first[:300] + "…"
