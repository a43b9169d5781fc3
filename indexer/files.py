"""read_file for agents: the text of a file under a set of allowed roots, or a reason.

Every way of naming a file outside the roots is refused the same way: ``..``
segments, absolute paths, symlinks whose target leaves the roots, ``file://``
URIs and percent-encoded forms (``%2e%2e/``). The check runs on the real path
(symlinks resolved) of every reading of the name — literal and percent-decoded
— before anything is opened, so whether a file outside exists never leaks; the
opened descriptor is checked again, so swapping a symlink in between does not
help either.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from urllib.parse import unquote, urlsplit

from .errors import WorkspaceError
from .source import BINARY_SNIFF_BYTES

_BOM = b"\xef\xbb\xbf"
_MAX_DECODE_ROUNDS = 4
_PROC_FD = Path("/proc/self/fd")


class FileErrorCode(StrEnum):
    """Why a file was not read; the MCP face prints it as ``[ERROR: CODE]``."""

    NOT_FOUND = "NOT_FOUND"
    ACCESS_DENIED = "ACCESS_DENIED"
    NOT_A_FILE = "NOT_A_FILE"
    BINARY = "BINARY_FILE"
    TOO_LARGE = "FILE_TOO_LARGE"
    UNREADABLE = "UNREADABLE"
    INVALID_PATH = "INVALID_PATH"
    INVALID_RANGE = "INVALID_RANGE"


class FileAccessError(WorkspaceError):
    """A file was not read; ``code`` says why, ``str()`` says it for a person."""

    def __init__(self, code: FileErrorCode, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True, slots=True)
class FileText:
    """The lines ``start_line``…``end_line`` of a file (1-based, inclusive)."""

    path: str  # the real absolute path that was read
    root: str  # the allowed root it lies under (real path)
    relative_path: str  # POSIX path relative to ``root``
    text: str  # the lines, each with its own line ending as in the file
    start_line: int
    end_line: int  # start_line - 1 when no line was returned (empty file)
    total_lines: int
    size: int  # bytes on disk
    truncated: bool  # stopped before the asked end because of ``max_chars``
    note: str = ""  # e.g. "invalid UTF-8: 3 bytes replaced"


def real_roots(roots: Sequence[Path]) -> list[str]:
    """The allowed roots as real paths (symlinks resolved), duplicates dropped, order kept."""
    return list(dict.fromkeys(os.path.realpath(r) for r in roots))


def _inside(real: str, roots: Sequence[str]) -> str | None:
    """The root holding ``real``, or None."""
    for root in roots:
        if real == root or real.startswith(root.rstrip(os.sep) + os.sep):
            return root
    return None


def _denied(path: str, roots: Sequence[str]) -> FileAccessError:
    return FileAccessError(
        FileErrorCode.ACCESS_DENIED,
        f"{path!r} is outside the allowed roots; allowed roots: {', '.join(roots)}",
    )


def _spellings(path: str, roots: Sequence[str]) -> list[str]:
    """The readings of a name: itself, then each percent-decoding of it, until stable."""
    if "\0" in path:
        raise FileAccessError(FileErrorCode.INVALID_PATH, "a path must not contain NUL characters")
    forms = [path]
    scheme = urlsplit(path).scheme
    if scheme.lower() == "file":
        parts = urlsplit(path)
        if parts.netloc not in ("", "localhost"):
            raise _denied(path, roots)
        forms = [unquote(parts.path)]
    elif len(scheme) > 1 and "://" in path:  # one letter is a Windows drive, not a scheme
        raise _denied(path, roots)
    for _ in range(_MAX_DECODE_ROUNDS):
        decoded = unquote(forms[-1])
        if decoded == forms[-1]:
            break
        forms.append(decoded)
    if any("\0" in f for f in forms):
        raise _denied(path, roots)
    return forms


def resolve_allowed(path: str, roots: Sequence[str]) -> tuple[str, str]:
    """(real path, root) of an existing name under the roots.

    Relative names are tried against each root in order. Raises FileAccessError:
    ACCESS_DENIED when any reading of the name resolves outside every root,
    NOT_FOUND when no reading names an existing file.
    """
    raw = path.strip()
    if not raw:
        raise FileAccessError(FileErrorCode.INVALID_PATH, "the path is empty")
    candidates: list[str] = []
    for form in _spellings(raw, roots):
        bases = [form] if os.path.isabs(form) else [os.path.join(root, form) for root in roots]
        for joined in bases:
            try:
                real = os.path.realpath(joined)
            except OSError as exc:  # a link on the path was swapped while it was resolved
                detail = f"cannot resolve {raw}: {exc.strerror}"
                raise FileAccessError(FileErrorCode.UNREADABLE, detail) from exc
            if _inside(real, roots) is None:
                raise _denied(raw, roots)
            candidates.append(real)
    for real in candidates:
        if os.path.lexists(real):
            root = _inside(real, roots)
            assert root is not None  # checked above
            return real, root
    raise FileAccessError(
        FileErrorCode.NOT_FOUND, f"no file {raw!r} under the allowed roots ({', '.join(roots)})"
    )


def _human(n: int) -> str:
    for unit, size in (("MB", 1 << 20), ("KB", 1 << 10)):
        if n >= size:
            return f"{n / size:,.1f} {unit}"
    return f"{n} bytes"


def _read_bytes(real: str, shown: str, roots: Sequence[str], max_bytes: int) -> tuple[bytes, int]:
    try:
        # O_NONBLOCK: a fifo must not hang the reader; O_NOFOLLOW: the last step
        # must not have turned into a symlink since it was resolved.
        fd = os.open(real, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
    except FileNotFoundError as exc:
        raise FileAccessError(FileErrorCode.NOT_FOUND, f"{shown} no longer exists") from exc
    except OSError as exc:
        raise FileAccessError(FileErrorCode.UNREADABLE, f"cannot open {shown}: {exc.strerror}") from exc
    try:
        opened = _PROC_FD / str(fd)
        if opened.exists() and _inside(os.path.realpath(opened), roots) is None:
            raise _denied(shown, roots)
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise FileAccessError(
                FileErrorCode.NOT_A_FILE, f"{shown} is a directory; read_file reads one file at a time"
            )
        if not stat.S_ISREG(st.st_mode):
            raise FileAccessError(FileErrorCode.NOT_A_FILE, f"{shown} is not a regular file")
        if st.st_size > max_bytes:
            raise FileAccessError(
                FileErrorCode.TOO_LARGE,
                f"{shown} is {_human(st.st_size)}, over the {_human(max_bytes)} limit "
                "(index.max_file_bytes); search it with grep_search instead",
            )
        with os.fdopen(os.dup(fd), "rb") as f:
            data = f.read(max_bytes + 1)
    except OSError as exc:
        raise FileAccessError(FileErrorCode.UNREADABLE, f"cannot read {shown}: {exc.strerror}") from exc
    finally:
        os.close(fd)
    if len(data) > max_bytes:
        raise FileAccessError(
            FileErrorCode.TOO_LARGE, f"{shown} grew past the {_human(max_bytes)} limit while being read"
        )
    return data, st.st_size


def _decode(data: bytes, shown: str) -> tuple[str, str]:
    if b"\0" in data[:BINARY_SNIFF_BYTES]:
        raise FileAccessError(
            FileErrorCode.BINARY, f"{shown} is a binary file (a NUL byte in its first 8 KiB); not shown"
        )
    if data.startswith(_BOM):
        data = data[len(_BOM) :]
    try:
        return data.decode("utf-8"), ""
    except UnicodeDecodeError:
        text = data.decode("utf-8", "replace")
        bad = len(data) - len(data.decode("utf-8", "ignore").encode("utf-8"))
        return text, f"invalid UTF-8: {bad} byte{'s' if bad != 1 else ''} replaced with U+FFFD"


def read_file(
    path: str,
    roots: Sequence[Path],
    *,
    max_bytes: int,
    start_line: int | None = None,
    end_line: int | None = None,
    max_chars: int | None = None,
) -> FileText:
    """Read a UTF-8 text file under ``roots``, optionally lines ``start_line``…``end_line``.

    ``path`` is absolute, relative to one of the roots (tried in order) or a
    ``file://`` URI. At most ``max_chars`` characters of whole lines come back
    (at least one line, cut if it alone is longer); ``truncated`` then says more
    was asked for. Raises FileAccessError with a code and a readable reason:
    ACCESS_DENIED (names the allowed roots), NOT_FOUND, NOT_A_FILE, BINARY,
    TOO_LARGE (over ``max_bytes``), UNREADABLE, INVALID_PATH, INVALID_RANGE.
    """
    allowed = real_roots(roots)
    if not allowed:
        raise FileAccessError(FileErrorCode.ACCESS_DENIED, "no allowed roots are configured")
    if start_line is not None and start_line < 1:
        raise FileAccessError(FileErrorCode.INVALID_RANGE, f"start_line must be ≥ 1; got {start_line}")
    if end_line is not None and end_line < (start_line or 1):
        raise FileAccessError(
            FileErrorCode.INVALID_RANGE, f"end_line ({end_line}) must be ≥ start_line ({start_line or 1})"
        )
    real, root = resolve_allowed(path, allowed)
    rel = Path(os.path.relpath(real, root)).as_posix()
    data, size = _read_bytes(real, rel, allowed, max_bytes)
    text, note = _decode(data, rel)
    lines = text.splitlines(keepends=True)
    total = len(lines)
    first = start_line or 1
    if first > max(total, 1):
        raise FileAccessError(
            FileErrorCode.INVALID_RANGE, f"start_line {first} is past the end of {rel} ({total} lines)"
        )
    last = min(end_line or total, total)
    picked: list[str] = []
    used = 0
    truncated = False
    for line in lines[first - 1 : last]:
        if max_chars is not None and used + len(line) > max_chars:
            truncated = True
            if not picked:  # one very long line: cut it rather than return nothing
                picked.append(line[: max(max_chars, 1)])
            break
        picked.append(line)
        used += len(line)
    return FileText(
        path=real,
        root=root,
        relative_path=rel,
        text="".join(picked),
        start_line=first,
        end_line=first + len(picked) - 1,
        total_lines=total,
        size=size,
        truncated=truncated,
        note=note,
    )
