"""Reading a local index through io_uring (LanceDB's ``file+uring://`` scheme).

Lance reads a local file one ``pread`` at a time, each on a thread of tokio's blocking
pool: a search's row reads are hundreds of small reads (240 BM25 rows of 10 columns:
~330), each a hand-off to another thread and back. On the stdlib twice (102k chunks,
load ~6 on 2 cores) that was ~350 context switches and ~40% of the CPU in the kernel
per BM25 query. ``file+uring://`` is the same local store read through io_uring
rings instead (lance-format/lance#5777; the spawn_blocking cost: lance#7551): the same
bytes, so the same rows.

A local index's searches read it through a connection of their own opened that way
(``Store.query``) when asked to (``CODESIFT_IO_URING=1``; off by default, see
``available``) and this process may use io_uring: the kernel has it and no seccomp
filter (Docker's default, gVisor) or ``kernel.io_uring_disabled`` refuses it — one
``io_uring_setup`` call, made once per process, says.
"""

from __future__ import annotations

import ctypes
import functools
import os
import platform

ENV = "CODESIFT_IO_URING"
SCHEME = "file+uring://"
# io_uring_setup's number in the generic syscall table (x86_64, aarch64 and the others
# that share it since Linux 5.1).
_IO_URING_SETUP = 425
_PARAMS_BYTES = 120  # sizeof(struct io_uring_params)


@functools.cache
def available() -> bool:
    """Whether this process may read through io_uring: asked for (``CODESIFT_IO_URING=1``)
    and one ``io_uring_setup`` succeeds. Off by default: connecting to ``file+uring:///abs``
    creates the folders ``file+uring:/abs/…`` under the process's working directory (the
    language server's is the workspace: its watcher then queues a re-index)."""
    if os.environ.get(ENV, "").strip().lower() not in ("1", "true", "yes", "on"):
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
    """The URI a local index's searches read it at through io_uring; None for an object
    store, or when this process may not use io_uring.

    Reading only: LanceDB commits to a ``file+uring://`` table with its unsafe commit
    handler (it warns that concurrent writes may lose data), so writes keep the plain
    path and its rename-based commits."""
    if "://" in uri or not available():
        return None
    return SCHEME + os.path.abspath(uri)
