"""Reading a walked file safely: opened without following a link the walk did not
check, sniffed for binary content, decoded as UTF-8 (invalid bytes replaced and
counted), and every failure turned into a skip reason instead of an exception. The
file-system helpers the walk shares (sizes, kinds, errno text, link resolution) live
here too."""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass

from .model import SkipReason, WalkEntry, text_hash
from .paths import os_path

BINARY_SNIFF_BYTES = 8192
_BOM = b"\xef\xbb\xbf"


def is_inside(real: str, root_real: str) -> bool:
    return real == root_real or real.startswith(root_real.rstrip(os.sep) + os.sep)


def human_size(n: int) -> str:
    if n < 1024:
        return f"{n} B"
    size = float(n)
    for unit in ("KB", "MB", "GB", "TB"):
        size /= 1024
        if size < 1024 or unit == "TB":
            break
    return f"{size:.1f} {unit}"


def kind_of(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a fifo"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    return "not a regular file"


def errno_text(exc: OSError) -> str:
    name = errno.errorcode.get(exc.errno or 0, "")
    reason = exc.strerror or str(exc)
    return f"{name}: {reason}" if name else reason


def real_path(path: str) -> str | None:
    """``os.path.realpath``, or None when a link on the path is swapped while it is resolved.

    realpath lstat()s a component and then readlink()s it; a link replaced by a file in
    between raises EINVAL (or ENOENT) instead of answering.
    """
    try:
        return os.path.realpath(path)
    except OSError:
        return None


@dataclass(frozen=True, slots=True)
class SourceText:
    """A file's text as the index sees it.

    ``content_hash`` is ``model.text_hash`` of ``text`` (the decoded text, BOM
    stripped), so an editor buffer's text hashes the same as the saved file.
    ``skip`` is set when the file is not indexed (then ``text`` and
    ``content_hash`` are empty); ``note`` explains a skip, or a caveat of an
    indexed file ("invalid UTF-8: 3 bytes replaced").
    """

    text: str
    content_hash: str
    skip: SkipReason | None = None
    note: str = ""


def read_source(entry: WalkEntry, max_bytes: int) -> SourceText:
    """Read and decode one walked file; never raises for a bad file.

    * A skip the walk already decided is passed on.
    * Larger than ``max_bytes`` now (the file grew since the walk): TOO_LARGE.
    * A NUL byte in the first 8 KiB: BINARY (UTF-16 files land here too).
    * A UTF-8 BOM is stripped.
    * Invalid UTF-8 is decoded with U+FFFD replacement characters and indexed:
      ``skip`` stays None and ``note`` says "invalid UTF-8: N bytes replaced".
    * Not a regular file any more: NOT_REGULAR; a symlink now where the walk saw
      none, or one that leads outside the root now: CHANGED (never read: see
      ``_open_walked``); any OSError: UNREADABLE with the errno text.
    """
    if entry.skip is not None:
        return SourceText("", "", entry.skip, entry.detail)
    try:
        fd = _open_walked(entry)
    except _Changed as exc:
        return SourceText("", "", SkipReason.CHANGED, str(exc))
    except OSError as exc:
        return SourceText("", "", SkipReason.UNREADABLE, errno_text(exc))
    try:
        with os.fdopen(fd, "rb") as f:
            st = os.fstat(f.fileno())
            if not stat.S_ISREG(st.st_mode):
                return SourceText("", "", SkipReason.NOT_REGULAR, kind_of(st.st_mode))
            if st.st_size > max_bytes:
                return _too_large(st.st_size, max_bytes)
            data = f.read(max_bytes + 1)
    except OSError as exc:
        return SourceText("", "", SkipReason.UNREADABLE, errno_text(exc))
    if len(data) > max_bytes:
        return _too_large(len(data), max_bytes)
    if b"\0" in data[:BINARY_SNIFF_BYTES]:
        return SourceText("", "", SkipReason.BINARY, "NUL byte in the first 8 KiB")
    if data.startswith(_BOM):
        data = data[len(_BOM) :]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = data.decode("utf-8", "replace")
        bad = len(data) - len(data.decode("utf-8", "ignore").encode("utf-8"))
        note = f"{SkipReason.INVALID_UTF8}: {bad} byte{'s' if bad != 1 else ''} replaced"
        return SourceText(text, text_hash(text), None, note)
    return SourceText(text, text_hash(text))


class _Changed(Exception):
    """The path is not what the walk saw any more (a link now, or one leading outside)."""


# O_NONBLOCK: a path that turned into a fifo must not hang the reader.
_READ_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC


def _open_walked(entry: WalkEntry) -> int:
    """Open a walked file for reading without following a link the walk did not check.

    The walk's checks and the read are apart in time: a file swapped for a symlink
    to a file outside the workspace in between must not be read. Each component
    under the root is opened with ``O_NOFOLLOW``; only when that meets a link is
    the path resolved, and then it is read only if the walk saw a link there (a
    file that became one is ``_Changed``) and it still resolves inside the root,
    again opened component by component, so a link swapped in meanwhile fails.
    """
    if not entry.root:
        return os.open(entry.abs_path, _READ_FLAGS | (0 if entry.link else os.O_NOFOLLOW))
    try:
        return _open_beneath(entry.root, os_path(entry.path))
    except OSError as exc:
        if exc.errno not in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
            raise
    if not entry.link and os.path.islink(entry.abs_path):
        raise _Changed("became a symlink after the workspace walk")
    real = real_path(entry.abs_path)
    if real is None:
        raise _Changed("its path changed while it was read")
    if not is_inside(real, entry.root) or real == entry.root:
        raise _Changed(f"now leads outside the workspace, to {real}")
    try:
        return _open_beneath(entry.root, os.path.relpath(real, entry.root))
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
            raise _Changed("a symlink appeared on its path while it was read") from exc
        raise


def _open_beneath(root: str, rel: str) -> int:
    """Open ``root/rel`` with no symlink followed below ``root`` (ELOOP/ENOTDIR if one is met)."""
    parts = rel.split("/")
    dir_fd = os.open(root, _DIR_FLAGS)
    try:
        for part in parts[:-1]:
            inner = os.open(part, _DIR_FLAGS | os.O_NOFOLLOW, dir_fd=dir_fd)
            os.close(dir_fd)
            dir_fd = inner
        return os.open(parts[-1], _READ_FLAGS | os.O_NOFOLLOW, dir_fd=dir_fd)
    finally:
        os.close(dir_fd)


def _too_large(size: int, max_bytes: int) -> SourceText:
    detail = f"{human_size(size)} > {human_size(max_bytes)} limit"
    if size == max_bytes + 1:
        detail = f"more than {human_size(max_bytes)} (limit)"
    return SourceText("", "", SkipReason.TOO_LARGE, detail)
