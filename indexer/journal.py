"""Which files' rows a writer is replacing: how a reader tells a half-written index.

A file's rows are replaced by deleting its ``files`` row (the commit marker), its
chunks, symbols and edges, then appending the new ones. If a write fails part-way
(a full disk) and the old rows cannot be restored, those files are simply absent
from the index until the next run redoes them — a search must not answer from
the rest as if nothing were missing. So before the first delete of a batch, its
paths are written to ``<index>/writing.json``; after the batch commits (or is
rolled back) they leave it. A path listed there without a ``files`` row is a file
the index has lost for now, and every search says how many.

The record is written before anything is deleted: on a disk already full the
write fails and nothing is lost. Local indexes only (an object store does not fill up).
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Collection

NAME = "writing.json"


def _path(uri: str) -> str | None:
    return None if "://" in uri else os.path.join(uri, NAME)


def listed(uri: str) -> set[str]:
    """The paths a writer started replacing and has not finished (empty: none)."""
    path = _path(uri)
    if path is None:
        return set()
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except FileNotFoundError:
        return set()
    except (OSError, ValueError):
        return set()  # unreadable: the next writer rewrites it
    return {p for p in data if isinstance(p, str)} if isinstance(data, list) else set()


def mark(uri: str, paths: Collection[str]) -> None:
    """Record ``paths`` as being replaced (added to what is listed). Raises OSError."""
    path = _path(uri)
    if path is None or not paths:
        return
    _write(path, listed(uri) | set(paths))


def settle(uri: str, paths: Collection[str]) -> None:
    """``paths`` are whole again (written, rolled back or removed). Best effort."""
    path = _path(uri)
    if path is None:
        return
    have = listed(uri)
    left = have - set(paths)
    if left == have:
        return
    with contextlib.suppress(OSError):
        if left:
            _write(path, left)
        else:
            os.unlink(path)


def clear(uri: str) -> None:
    """Every walked file was written and every removed one removed: nothing is missing."""
    path = _path(uri)
    if path is not None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)


def _write(path: str, paths: set[str]) -> None:
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(sorted(paths), f)
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
