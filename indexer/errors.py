"""Errors grouped by what callers catch. Third-party errors are translated once,
at the boundary that calls the library, and chained with ``from exc``."""

from __future__ import annotations


class CodesiftError(Exception):
    """Root of every error the engine raises; ``str()`` is a reason a person can read."""


class ConfigError(CodesiftError):
    """A setting is missing, malformed or out of range."""


class WorkspaceError(CodesiftError):
    """The workspace root is missing, unreadable, or a path lies outside it."""


class ParseError(CodesiftError):
    """A file could not be parsed at all (broken syntax still yields chunks)."""


class EmbedError(CodesiftError):
    """The embedding model is missing, fails to load, or an endpoint fails."""


class StoreError(CodesiftError):
    """The index on disk cannot be opened, read or written."""


class IndexMissingError(StoreError):
    """No index exists yet where one was asked for."""


class IndexBusyError(StoreError):
    """Another writer holds the index lock."""


class QueryError(CodesiftError):
    """A query is malformed: bad regex, bad glob, bad option."""


class DiskFullError(StoreError):
    """The disk holding the index is full."""


def store_write_error(uri: str, what: str, exc: BaseException) -> StoreError:
    """A write to the index failed: the reason a person can act on, a full disk said plainly."""
    if _disk_full(exc):
        return DiskFullError(
            f"the disk holding the index at {uri} is full (No space left on device) while {what}: "
            "free some space, then run `codesift index` again"
        )
    return StoreError(f"{what} at {uri} failed: {exc}")


def _disk_full(exc: BaseException | None) -> bool:
    while exc is not None:
        if isinstance(exc, OSError) and exc.errno == 28:  # ENOSPC
            return True
        text = str(exc)
        if "No space left on device" in text or "os error 28" in text:
            return True
        exc = exc.__cause__ or exc.__context__
    return False
