"""The engine's types: what a workspace, a parse, a store and a search speak in.

Conventions, fixed for every module:

* Paths inside the engine are workspace-relative POSIX strings (``src/app.py``).
* Lines are 1-based and inclusive, as grep and humans count them.
* Columns are 0-based offsets in Unicode code points; the LSP face converts
  lines to 0-based and columns to UTF-16 where a client asks for it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import IntEnum, StrEnum


class SymbolKind(IntEnum):
    """LSP ``SymbolKind`` numbering, kept here so the engine needs no lsprotocol."""

    FILE = 1
    MODULE = 2
    NAMESPACE = 3
    PACKAGE = 4
    CLASS = 5
    METHOD = 6
    PROPERTY = 7
    FIELD = 8
    CONSTRUCTOR = 9
    ENUM = 10
    INTERFACE = 11
    FUNCTION = 12
    VARIABLE = 13
    CONSTANT = 14
    STRING = 15
    NUMBER = 16
    BOOLEAN = 17
    ARRAY = 18
    OBJECT = 19
    KEY = 20
    NULL = 21
    ENUM_MEMBER = 22
    STRUCT = 23
    EVENT = 24
    OPERATOR = 25
    TYPE_PARAMETER = 26


class ChunkKind(StrEnum):
    """What a chunk of source is."""

    FUNCTION = "function"
    METHOD = "method"
    CLASS = "class"  # class, struct, interface, trait, enum, protocol, impl…
    BLOCK = "block"  # top-level statements between definitions
    WINDOW = "window"  # a line window, where no grammar applies


class FileStatus(StrEnum):
    INDEXED = "indexed"
    SKIPPED = "skipped"
    FAILED = "failed"


class SkipReason(StrEnum):
    """Why a file the walk saw is not indexed (or indexed with a caveat)."""

    TOO_LARGE = "too large"
    BINARY = "binary"
    INVALID_UTF8 = "invalid UTF-8"  # indexed with replacement characters; kept as a note
    SYMLINK_LOOP = "symlink loop"
    SYMLINK_OUTSIDE = "symlink leaves the workspace"
    SYMLINK_INSIDE = "symlink to a folder inside the workspace"  # indexed at its own path
    UNREADABLE = "unreadable"
    NOT_REGULAR = "not a regular file"
    CHANGED = "changed while being indexed"  # e.g. became a symlink between the walk and the read


@dataclass(frozen=True, slots=True)
class Position:
    line: int  # 1-based
    column: int  # 0-based, code points


@dataclass(frozen=True, slots=True)
class Span:
    start: Position
    end: Position


@dataclass(frozen=True, slots=True)
class Chunk:
    """A syntax-aware piece of one file: the unit of BM25 and vector search."""

    id: str
    path: str
    project: str
    language: str
    kind: ChunkKind
    symbol: str  # qualified name of the enclosing definition, "" for blocks/windows
    start_line: int
    end_line: int
    text: str
    content_hash: str  # of ``embedding_text(path, text)``: the embedding cache key
    # Identifiers split (validateCredentials -> validate credentials): the BM25 column,
    # set by the parser for writing. Chunks read back for a search leave it empty
    # (selecting it cost ~8 ms of a hybrid search at 100k chunks); derive it from
    # ``text`` with ``text.search_text`` where it is needed.
    search_text: str = ""


@dataclass(frozen=True, slots=True)
class Symbol:
    """A definition, as ``workspace/symbol`` and the graph see it."""

    name: str
    qualified_name: str
    kind: SymbolKind
    path: str
    language: str
    range: Span
    selection_range: Span
    container: str  # qualified name of the container, "" at top level
    chunk_id: str
    # How many arguments a call of it takes (``arity``), where the graph tells overloads
    # apart by it (Java, C#, Kotlin); ``ANY_ARITY`` elsewhere
    arity: int = 0
    # one part of a type declared in several (C#'s ``partial class``): the parts are one type
    partial: bool = False
    # its parameters' types, where the graph tells overloads apart by them (Java:
    # ``int,'T[],'T...``, see ``languages.java_types``); "" elsewhere or not known
    params: str = ""


#: ``Symbol.arity`` of a definition whose argument count is not known (any count fits)
ANY_ARITY = 0
_UNBOUNDED = 0


def arity(least: int, most: int | None) -> int:
    """``Symbol.arity`` of a definition taking ``least`` to ``most`` arguments (``None``:
    no upper bound: varargs): ``least + 256 × (most + 1)``, both capped below 255."""
    least = min(least, 254)
    return least + 256 * (_UNBOUNDED if most is None else min(max(most, least), 254) + 1)


def takes(encoded: int, count: int) -> bool:
    """Whether a definition of ``Symbol.arity`` ``encoded`` accepts ``count`` arguments
    (a count below 0 — not known — fits any)."""
    if count < 0:
        return True
    least, most = encoded % 256, encoded // 256 - 1
    return count >= least and (most < 0 or count <= most)


class EdgeKind(StrEnum):
    """What a reference from one symbol to a name is."""

    CALL = "call"
    INHERIT = "inherit"  # a base class / super-interface / Swift or Kotlin supertype
    IMPLEMENT = "implement"  # implements / trait impl / Swift extension conformance
    IMPORT = "import"
    REFERENCE = "reference"  # a type used in an annotation, a decorator


@dataclass(frozen=True, slots=True)
class Edge:
    """A reference found in one file, as written; the graph resolves it.

    ``to_name`` is the referenced name as a dotted path (``self.save``,
    ``json.loads``, ``Base``; ``?.m`` when the receiver is an expression). For
    imports ``module`` is the module as written (``..pkg.mod``, ``./x``,
    ``std.collections``), ``to_name`` the imported name ("" for the module itself,
    ``*`` for everything) and ``alias`` the local name it binds. ``to_symbol`` and
    ``candidates`` are filled in by resolution, never by the parser: resolved to
    exactly one definition, or left "" with every definition it might mean.
    """

    path: str
    from_symbol: str  # qualified name of the enclosing definition, "" at file level
    to_name: str
    kind: EdgeKind
    line: int  # where the name is written: 1-based line, 0-based code-point columns
    column: int
    end_line: int
    end_column: int
    module: str = ""
    alias: str = ""
    to_symbol: str = ""
    candidates: tuple[str, ...] = ()
    args: int = -1  # a call's argument count where overloads need it (Java, C#, Kotlin); -1: not known
    # a call's argument types where the code states them (Java: ``int,boolean[],?``, see
    # ``languages.java_types``); "" when none is known
    arg_types: str = ""

    @property
    def last_name(self) -> str:
        """The last component of ``to_name``: what an index of names keys on."""
        return self.to_name.rsplit(".", 1)[-1]


@dataclass(frozen=True, slots=True)
class ParseResult:
    """Everything the parser learned from one file."""

    language: str
    chunks: tuple[Chunk, ...]
    symbols: tuple[Symbol, ...]
    had_errors: bool = False  # the grammar reported ERROR/MISSING nodes
    edges: tuple[Edge, ...] = ()


@dataclass(frozen=True, slots=True)
class WalkEntry:
    """One path the workspace walk saw: indexable, or skipped with a reason."""

    path: str  # workspace-relative POSIX
    abs_path: str
    size: int
    mtime_ns: int
    language: str  # "" when unknown (still indexed as line windows)
    skip: SkipReason | None = None
    detail: str = ""
    # The real workspace root the file must be read under ("" when unknown: then only
    # the file itself is opened without following a link), and whether the walk saw a
    # symlink here (one it checked stays inside the root, so reading may follow it).
    root: str = ""
    link: bool = False


@dataclass(frozen=True, slots=True)
class FileRecord:
    """A row of the ``files`` table: the per-file commit marker."""

    path: str
    language: str
    size: int
    mtime_ns: int
    content_hash: str
    status: FileStatus
    reason: str = ""


@dataclass(frozen=True, slots=True)
class FileWrite:
    """One file's new state: stored as a unit (chunks, symbols, edges, then its files row)."""

    record: FileRecord
    chunks: Sequence[Chunk]
    symbols: Sequence[Symbol]
    edges: Sequence[Edge] = ()


@dataclass(frozen=True, slots=True)
class RemoteStatus:
    """The team index a local index overlays (``index.remote``), as ``codesift status`` reports it."""

    uri: str
    commit: str  # the source commit of the publish copied from ("" before the first copy)
    published_at: float
    reachable: bool
    checked_at: float
    error: str  # why the last contact failed, or what waits (a newer publish)
    refused: str  # why the remote cannot be mixed with this index (another model or schema)
    remote_files: int
    overlay_files: int  # indexed files whose rows are this machine's own (edited, added, unpublished)
    hidden_files: int  # remote files deleted here

    @property
    def state(self) -> str:
        """Whether the remote answers, and what searches answer from when it does not."""
        if self.reachable:
            return "reachable"
        if self.commit:
            return f"unreachable, answering from the local copy of {self.commit}"
        return "unreachable, answering from the local index alone (nothing copied yet)"


@dataclass(frozen=True, slots=True)
class IndexStatus:
    """What ``codesift status`` reports."""

    root: str
    index_path: str
    exists: bool
    files_indexed: int = 0
    files_skipped: int = 0
    files_failed: int = 0
    chunks: int = 0
    symbols: int = 0
    vectors_done: int = 0
    vectors_pending: int = 0
    schema_version: int = 0
    model: str = ""
    dimension: int = 0
    # The fast tier (a static model's vectors beside ``model``'s; "" when the index has none)
    fast_model: str = ""
    fast_vectors_done: int = 0
    fast_vectors_pending: int = 0
    index_bytes: int = 0
    # The embedding cache: the index's own (inside index_path), or the repository's,
    # shared by its worktrees' indexes (index.share_worktrees) and not in index_bytes.
    cache_path: str = ""
    cache_shared: bool = False
    cache_bytes: int = 0
    # Bytes of the index in files it shares with another worktree's index by hard links
    # (``clone``), and whether an optimize keeps them shared (``compaction``: pylance installed).
    linked_bytes: int = 0
    links_kept: bool = True
    skipped: tuple[FileRecord, ...] = field(default_factory=tuple)
    failed: tuple[FileRecord, ...] = field(default_factory=tuple)
    notes: tuple[FileRecord, ...] = field(default_factory=tuple)  # indexed with a caveat
    remote: RemoteStatus | None = None
    # How searches read the index: "io_uring" or "pread" (``Store.reader``)
    reader: str = ""


@dataclass(frozen=True, slots=True)
class IndexReport:
    """What one ``codesift index`` run did."""

    files_seen: int
    files_changed: int
    files_removed: int
    files_skipped: int
    files_failed: int
    chunks_written: int
    chunks_embedded: int
    chunks_from_cache: int
    seconds: float
    phase_seconds: dict[str, float]
    rebuilt: bool = False
    rebuild_reason: str = ""
    vectors_pending: int = 0
    chunks_embedded_fast: int = 0  # chunks given a fast-tier vector (with the text phase)
    note: str = ""  # why nothing, or little, was there to index (``workspace.ignore_note``)
    files_from_remote: int = 0  # copied, rows and vectors, from ``index.remote``
    chunks_from_remote: int = 0
    # kept from a sibling worktree's index cloned by hard links (``indexer.clone``): its
    # files, and the bytes of its files this index holds by links (no new disk)
    files_linked: int = 0
    bytes_linked: int = 0


# The form ``embedding_text`` gives, in the index fingerprint and the embedding cache's
# key: vectors of texts in another form are not comparable.
EMBED_TEXT_FORM = "path"


def embedding_text(path: str, text: str) -> str:
    """What a chunk is embedded as: its path, then its text. A chunk's words seldom
    say which part of the program it belongs to; its path usually does
    (``src/click/termui.py``), and a question in words often names that part
    ("how is the progress bar rendered"). Vector-only NDCG@10 on the semble tier, 7
    repositories: 0.763 → 0.802 (DECISIONS.md, "the path in the embedded text")."""
    return f"{path}\n{text}"


def text_hash(text: str) -> str:
    """Content hash used for files and chunks (sha256 hex, 32 chars)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def chunk_id(project: str, path: str, start_line: int, end_line: int, content_hash: str) -> str:
    """Stable chunk identity: same place and same text give the same id."""
    key = f"{project}\0{path}\0{start_line}\0{end_line}\0{content_hash}"
    return hashlib.sha1(key.encode("utf-8", "surrogatepass")).hexdigest()[:24]
