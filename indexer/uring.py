"""Reading a local index through io_uring (Lance's ``file+uring://`` object store).

Lance reads a local file one ``pread`` at a time, each on a thread of tokio's blocking
pool: a search's row reads are hundreds of small reads (240 BM25 rows of 10 columns:
~330), each a hand-off to another thread and back. On the stdlib twice (102k chunks,
load ~6 on 2 cores) that was ~350 context switches and ~40% of the CPU in the kernel
per BM25 query. ``file+uring://`` is the same local store read through io_uring
rings instead (lance-format/lance#5777; the spawn_blocking cost: lance#7551): the same
bytes, so the same rows.

A local index's searches read its tables through io_uring (``Store.query``) unless
``CODESIFT_IO_URING=0`` says not to, when this process may use io_uring: the kernel has
it and no seccomp filter (Docker's default, gVisor) or ``kernel.io_uring_disabled``
refuses it — one ``io_uring_setup`` call, made once per process, says; a refusal past
that probe (the first row read fails) falls back to the plain reads too.

Each table is opened at its ``file+uring://`` location on the index's own connection
(``table_location``), never by connecting to a ``file+uring://`` URI: lancedb's connect
(0.40) makes the connection's directory with ``create_dir_all`` on the URI's text when
the store is local, and ``file+uring:///abs`` is not stripped as ``file:///abs`` is (its
``storage_base_uri`` cannot turn a ``file+uring`` URL into a ``file`` one: the url crate
refuses to change a scheme to a special one), so it made the folders
``file+uring:/abs/…`` under the process's working directory — the language server's is
the workspace, whose watcher then queued a re-index.
"""

from __future__ import annotations

import ctypes
import functools
import os
import platform
import urllib.parse

ENV = "CODESIFT_IO_URING"
SCHEME = "file+uring://"
TABLE_SUFFIX = ".lance"  # lancedb's folder of a table: <index>/<name>.lance
# io_uring_setup's number in the generic syscall table (x86_64, aarch64 and the others
# that share it since Linux 5.1).
_IO_URING_SETUP = 425
_PARAMS_BYTES = 120  # sizeof(struct io_uring_params)


@functools.cache
def available() -> bool:
    """Whether this process may read through io_uring: not turned off
    (``CODESIFT_IO_URING=0``) and one ``io_uring_setup`` succeeds."""
    if os.environ.get(ENV, "").strip().lower() in ("0", "false", "no", "off"):
        return False
    if platform.system() != "Linux" or platform.machine() not in ("x86_64", "AMD64", "aarch64", "arm64"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        params = ctypes.create_string_buffer(_PARAMS_BYTES)
        fd = int(libc.syscall(_IO_URING_SETUP, 1, params))
    except (OSError, AttributeError):
        return False
    if fd < 0:
        return False
    os.close(fd)
    return True


def read_uri(uri: str) -> str | None:
    """The URI of a local index's folder as its searches read it through io_uring; None
    for an object store, or when this process may not use io_uring.

    Reading only: Lance commits to a ``file+uring://`` table with its unsafe commit
    handler (it warns that concurrent writes may lose data), so writes keep the plain
    path and its rename-based commits. The path is percent-encoded: Lance decodes it (a
    folder named ``p%20q``, ``a#b`` or ``q?x`` is otherwise another path, or none)."""
    if "://" in uri or not available():
        return None
    return SCHEME + urllib.parse.quote(os.path.abspath(uri), safe="/")


def table_location(read_uri: str, name: str) -> str:
    """Where table ``name`` of the index at ``read_uri`` (``read_uri``'s answer) is read:
    the location lancedb derives from a connection to that URI, given to ``open_table``
    on the plain connection instead."""
    return f"{read_uri.rstrip('/')}/{name}{TABLE_SUFFIX}"
