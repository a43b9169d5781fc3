"""One frozen settings tree.

Layers, later wins: defaults (here, once) ← ``[tool.codesift]`` in the
workspace's pyproject.toml ← ``.codesift.toml`` ← overrides (LSP
initializationOptions, CLI flags). Keys are snake_case here; the LSP face
converts camelCase. Every field carries a description: the README's settings
table and the VS Code schema are generated from this tree.
"""

from __future__ import annotations

import dataclasses
import tomllib
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from .errors import ConfigError
from .model import EMBED_TEXT_FORM

EmbedProvider = Literal["onnx", "sentence-transformers", "openai"]
RankMode = Literal["full", "rrf"]

DEFAULT_EXCLUDE: tuple[str, ...] = (
    "node_modules/",
    ".venv/",
    "venv/",
    "__pycache__/",
    ".tox/",
    ".nox/",
    ".mypy_cache/",
    ".ruff_cache/",
    ".pytest_cache/",
    ".codesift/",
    "*.min.js",
    "*.lock",
    "package-lock.json",
)


def _doc(text: str) -> dict[str, str]:
    return {"doc": text}


@dataclass(frozen=True, slots=True)
class IndexSettings:
    index_dir: str = field(
        default=".codesift",
        metadata=_doc("Where the index lives: a path relative to the workspace root, or s3:// URI."),
    )
    include: tuple[str, ...] = field(
        default=(),
        metadata=_doc("Only index files matching one of these gitignore-style globs (empty: all)."),
    )
    exclude: tuple[str, ...] = field(
        default=DEFAULT_EXCLUDE,
        metadata=_doc(
            "Never index files matching these gitignore-style globs (on top of .gitignore); "
            "a folder named venv or .venv only when it holds a virtualenv (pyvenv.cfg, conda-meta)."
        ),
    )
    max_file_bytes: int = field(
        default=1024 * 1024,
        metadata=_doc("Files larger than this are skipped with the reason 'too large'."),
    )
    respect_gitignore: bool = field(
        default=True,
        metadata=_doc("Honour .gitignore files, .git/info/exclude and core.excludesFile."),
    )
    write_batch_files: int = field(
        default=200,
        metadata=_doc("Files parsed per store commit while indexing."),
    )
    parse_workers: int = field(
        default=0,
        metadata=_doc(
            "Processes that read and parse files while the indexer embeds and writes what they "
            "parsed (0: one per core when there are two or more; 1: the indexing process alone). "
            "Runs of fewer than 256 changed files are parsed by the indexing process."
        ),
    )
    remote: str = field(
        default="",
        metadata=_doc(
            "A team index published with `codesift index --to URI` (s3://, gs://, az://, file:// or a "
            "path): the local index becomes its overlay — files whose content matches are copied from "
            "it, rows and vectors, and only the others are parsed and embedded here. Empty: no remote."
        ),
    )
    remote_timeout_s: float = field(
        default=10.0,
        metadata=_doc("Seconds to wait for the remote index before going on with the local copy of it."),
    )
    share_worktrees: bool = field(
        default=True,
        metadata=_doc(
            "Worktrees of one git repository share one embedding cache (in git's common directory, "
            "never in a work tree), and without index.remote a new worktree's first index starts from "
            "another worktree's index: its files hard-linked (the rows stay on the disk once), or, where "
            "links cannot be made, its rows and vectors copied; then only files whose content differs are "
            "parsed. Off: each index keeps its own cache and copies nothing."
        ),
    )
    share_clones: bool = field(
        default=True,
        metadata=_doc(
            "Separate clones of one git repository on this machine start from each other's index as "
            "worktrees do (index.share_worktrees: hard links, or rows and vectors copied): each index run "
            "records its folder and index, per repository (known by its first commits), in "
            "$XDG_CACHE_HOME/codesift/clones. Off: nothing is recorded there or read from it."
        ),
    )
    embed_cache: str = field(
        default="",
        metadata=_doc(
            "An absolute folder (~ allowed) for an embedding cache shared by every index that names "
            "it, e.g. ~/.cache/codesift/embed-cache: separate clones of a repository, or any "
            "repositories on this machine, then embed a text once. Empty: the repository's cache "
            "(index.share_worktrees) or the index's own."
        ),
    )
    vector_index_rows: int = field(
        default=50_000,
        metadata=_doc(
            "Chunks with vectors at which an approximate vector index (IVF_HNSW_SQ) is built, one per"
            " tier (MiniLM's, the fast tier's); below it vector search is exact (brute force). 0: never."
        ),
    )


@dataclass(frozen=True, slots=True)
class ChunkSettings:
    max_lines: int = field(
        default=80,
        metadata=_doc("A definition longer than this is split on inner boundaries."),
    )
    min_lines: int = field(
        default=5,
        metadata=_doc("Neighbouring chunks shorter than this are merged."),
    )
    max_chars: int = field(
        default=6000,
        metadata=_doc("Hard cap on one chunk's text; longer pieces are split by lines."),
    )
    window_lines: int = field(
        default=50,
        metadata=_doc("Line-window size for files with no grammar."),
    )


@dataclass(frozen=True, slots=True)
class EmbedSettings:
    provider: EmbedProvider = field(
        default="onnx",
        metadata=_doc(
            "Embedding provider: onnx (the bundled models: MiniLM, its static distillation), "
            "sentence-transformers, openai."
        ),
    )
    model: str = field(
        default="all-MiniLM-L6-v2-int8",
        metadata=_doc(
            "Model name (for sentence-transformers / openai) or id of the bundled model: "
            "all-MiniLM-L6-v2-int8 (weights quantised per channel: ~2× faster, same "
            "retrieval quality), all-MiniLM-L6-v2 (float32) or all-MiniLM-L6-v2-static "
            "(static token vectors distilled from MiniLM, on numpy: ~100× faster)."
        ),
    )
    model_path: str = field(
        default="",
        metadata=_doc("Directory holding model.onnx + tokenizer.json (empty: the bundled export)."),
    )
    max_tokens: int = field(
        default=128,
        metadata=_doc(
            "Tokens per chunk fed to MiniLM; longer text is truncated (128: what MiniLM "
            "was trained on; better retrieval than 256 here, and 1.5× faster). The static "
            "model reads up to 512 tokens whatever this says."
        ),
    )
    batch_size: int = field(
        default=1,
        metadata=_doc(
            "Chunks per model run (1: no padding, and a vector never depends on its batch "
            "neighbours, which int8's per-batch activation scale would otherwise allow)."
        ),
    )
    commit_chunks: int = field(
        default=2048,
        metadata=_doc(
            "Chunks whose vectors are stored per commit while indexing (each commit rewrites "
            "the vector column's fragments: ~0.7 s on a 50k-chunk index)."
        ),
    )
    threads: int = field(
        default=0,
        metadata=_doc("Model runs at once, one core each (0: one per core)."),
    )
    endpoint: str = field(
        default="",
        metadata=_doc("Base URL of an OpenAI-compatible embeddings endpoint (provider openai)."),
    )
    api_key_env: str = field(
        default="OPENAI_API_KEY",
        metadata=_doc("Environment variable holding the endpoint's API key."),
    )
    dimension: int = field(
        default=0,
        metadata=_doc("Vector dimension for the openai provider (0: ask the endpoint)."),
    )
    fast_tier: bool = field(
        default=True,
        metadata=_doc(
            "Also store the bundled static model's vectors, written right after the text phase, so "
            "a workspace is searchable by meaning at once while the model's own vectors fill "
            "in; each search uses one model: this one once every chunk it searches has its "
            "vector, the static one until then. Off, or with a static embed.model: one tier."
        ),
    )


@dataclass(frozen=True, slots=True)
class SearchSettings:
    limit: int = field(default=20, metadata=_doc("Default number of results."))
    agent_limit: int = field(default=10, metadata=_doc("Default number of results for agent tools."))
    semantic_weight: float = field(default=0.7, metadata=_doc("RRF weight of vector search."))
    keyword_weight: float = field(default=0.3, metadata=_doc("RRF weight of BM25 search."))
    grep_weight: float = field(default=0.3, metadata=_doc("RRF weight of exact grep in hybrid."))
    rrf_k: int = field(default=60, metadata=_doc("RRF constant k."))
    overfetch: int = field(default=3, metadata=_doc("Each source fetches limit × this."))
    vector_score_threshold: float | None = field(
        default=None,
        metadata=_doc(
            "Cosine distance at or beyond which vector results are dropped. Unset: no cut-off in "
            "hybrid, the CLI and the editors; 0.5 for the agent tool vector_search."
        ),
    )
    rank: RankMode = field(
        default="full",
        metadata=_doc(
            "full: the ranking stage after fusion (definitions, paths, file roles, diversity); "
            "rrf: the bare weighted RRF fusion."
        ),
    )
    min_similarity: float = field(
        default=0.0,
        metadata=_doc("Vector results with cosine similarity below this are dropped."),
    )
    agent_budget_chars: int = field(
        default=20_000,
        metadata=_doc("Most characters in one MCP tool answer (at least 2000)."),
    )
    agent_allowed_roots: tuple[str, ...] = field(
        default=(),
        metadata=_doc("Folders besides the workspace roots that the MCP read_file may read."),
    )
    grep_context: int = field(default=10, metadata=_doc("Lines of context around grep matches."))
    grep_timeout_s: float = field(default=10.0, metadata=_doc("Seconds before grep gives up."))


@dataclass(frozen=True, slots=True)
class CliSettings:
    """The command line's own: the background server it starts for an index (server/background.py)."""

    background_server: bool = field(
        default=True,
        metadata=_doc(
            "Let `codesift search / grep / symbols` start a background server for the index when none "
            "runs, so the next calls answer in milliseconds (also off with CODESIFT_BACKGROUND=0, "
            "and under CI unless CODESIFT_BACKGROUND=1)."
        ),
    )
    server_idle_s: float = field(
        default=600.0,
        metadata=_doc(
            "Seconds without a CLI command after which the background server exits "
            "(0: it runs until `codesift stop`)."
        ),
    )


@dataclass(frozen=True, slots=True)
class Settings:
    index: IndexSettings = field(default_factory=IndexSettings)
    chunk: ChunkSettings = field(default_factory=ChunkSettings)
    embed: EmbedSettings = field(default_factory=EmbedSettings)
    search: SearchSettings = field(default_factory=SearchSettings)
    cli: CliSettings = field(default_factory=CliSettings)

    def index_fingerprint(self) -> dict[str, str]:
        """Settings that change what is stored: a change rebuilds the index."""
        c = self.chunk
        return {
            "chunking": f"{c.max_lines}/{c.min_lines}/{c.max_chars}/{c.window_lines}",
            # Bumped when the parser cuts unchanged files differently (2: definitions
            # inside Python's module-level if / try / with / for blocks; 3: typed bindings marked
            # on Python edges, `X | None` annotations as references; 4: Go and Rust typed bindings,
            # their field / var / let / result types as references; 5: C# and Kotlin typed
            # bindings and declared types as references, C# call chains `a.B().C`, Rust
            # `-> Self`, Python `if not isinstance(x, C): x = C(x)` and module-level aliases
            # `X = m.C` as references, Swift return types; 6: Kotlin extension functions as
            # members of the extended type, no edges to generic parameters, Python copies
            # `self.x = x` and loop variables typed, `cabc.Iterator[X]` parts as references;
            # 7: a function's variables shadow namesakes (`?.m`), Python `return` statements,
            # `isinstance` blocks and tuple items typed, C# file-scoped namespaces, Swift
            # `subscript`; 8: Python names holding a class (`type[X]`, a class body's
            # `maker = X`), `enumerate`, `except X as e`, `list[X] | None`); 9: Python parameter
            # defaults typed, a function's returns of several classes (`return|`); 10: Python
            # `return self` marked, so `with Foo() as x` holds a Foo; string annotations
            # `-> "Context"` as references; go.mod's module path as a symbol, Go imports
            # named by their package (`chi/v5` → chi), Go function literals' parameters
            # narrowed to the literal; `export * as ns from` binds one name; C# definitions
            # inside `#if` blocks); 11: Java, C# and Kotlin calls on a function's untyped
            # locals written `?.m` (they never name a definition outside it), C#'s `x => …`
            # parameter a local; C / C++ lines holding only a macro name blanked for the
            # parse (`ABSL_NAMESPACE_BEGIN` / `class Notification`); Haskell and Elixir
            # definitions; Rust items inside `cfg_rt! { … }`; TypeScript overload signatures
            # folded into the implementation); 12: Ruby `class << self` bodies are scopes of
            # their class, and a comment opening a Ruby body stays with the member below
            # it; a `.h` the C++ grammar reads with fewer errors than C's is C++; attribute
            # macros in a C++ class head blanked; a JS/TS const holding a function given to
            # a call, Lua functions and tables of functions assigned to names, chunked as
            # definitions; Elixir / Haskell further clauses in their function's chunk; a bare
            # call of a function's parameter (Go, Rust, TypeScript, C#; Kotlin's of a
            # function type) written `?.name`; Python `x = mod.var` in a function a reference
            # edge typed by the module's variable, `return self.x` / `return C.x` typed by
            # the class's attribute, a copy of a copy of an attribute marked in the scope
            # that binds it, `assert isinstance(x, C)` narrowing; 13: the same, merged —
            # indexes built at 12 held only some of them; 14: Python chained assignments
            # type every target, a parameter's `None` default replaced by `if x is None: x =
            # value` (or `if not x:`) is typed as that value, a reference edge at such a
            # guard's name; 15: Swift `#warning` / `#error` / `#sourceLocation` lines blanked for the parse,
            # Python `x = x or value` / `self.a = x or value` of a parameter `x=None` typed as
            # `value`, a Swift implicit member `.name(…)` a member of the type its context
            # states, else of an unknown receiver; 16: Python: a declared name keeps its type
            # over plain reassignments, `isinstance` narrowing up to a rebinding and through
            # copies, a reference edge at `for p in cmd.params`'s attribute; Swift `$0` of an SDK
            # closure (`Mutex<Foo>.withLock`, languages/swift_sdk.py) written through its
            # receiver, a reference edge at the type argument; 17: Python: what a caller passes
            # an unannotated parameter types nothing and stops no stated value of the name, a
            # file's inherit edges record what its classes bind, a reference edge at `self.x =
            # mod.C.attr`), so old indexes rebuild.
            "parser": "17",
            "max_tokens": str(self.embed.max_tokens),
            # What a chunk is embedded as (``model.embedding_text``): "path" = its path,
            # then its text. Vectors of another form are not comparable: rebuild.
            "embed_text": EMBED_TEXT_FORM,
        }

    def vector_cache_key(self, model_id: str) -> str:
        """The embedding cache's key: the model and what changes its vectors for the same text."""
        return f"{model_id}@{self.embed.max_tokens}+{EMBED_TEXT_FORM}"


_SECTIONS: dict[str, type[object]] = {
    "index": IndexSettings,
    "chunk": ChunkSettings,
    "embed": EmbedSettings,
    "search": SearchSettings,
    "cli": CliSettings,
}


# Settings naming a folder outside any workspace.
_ABSOLUTE_FOLDERS = frozenset({"index.embed_cache"})


def _coerce(section: str, f: dataclasses.Field[object], value: object) -> object:
    name = f"{section}.{f.name}"
    hint = typing.get_type_hints(_SECTIONS[section])[f.name]
    origin = typing.get_origin(hint)
    if origin is Literal:
        allowed = typing.get_args(hint)
        if value not in allowed:
            raise ConfigError(f"{name} must be one of {', '.join(map(str, allowed))}; got {value!r}")
        return value
    if hint is bool:
        if not isinstance(value, bool):
            raise ConfigError(f"{name} must be true or false; got {value!r}")
        return value
    if hint is int:
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ConfigError(f"{name} must be a non-negative integer; got {value!r}")
        return value
    if hint == float | None:
        if value is None:
            return None  # unset (an editor sends null for a cleared setting)
        hint = float
    if hint is float:
        if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
            raise ConfigError(f"{name} must be a non-negative number; got {value!r}")
        return float(value)
    if hint is str:
        if not isinstance(value, str):
            raise ConfigError(f"{name} must be a string; got {value!r}")
        if name in _ABSOLUTE_FOLDERS and value and not Path(value).expanduser().is_absolute():
            # A relative folder would sit in some workspace, walked and indexed there.
            raise ConfigError(f"{name} must be an absolute folder (or start with ~); got {value!r}")
        return value
    if origin is tuple or isinstance(hint, types.GenericAlias):
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
            raise ConfigError(f"{name} must be a list of strings; got {value!r}")
        return tuple(value)
    raise ConfigError(f"{name}: unsupported setting type")  # pragma: no cover


def _apply(settings: Settings, layer: Mapping[str, object], origin: str) -> Settings:
    sections: dict[str, object] = {}
    for section, values in layer.items():
        if section not in _SECTIONS:
            raise ConfigError(f"{origin}: unknown settings section {section!r}")
        if not isinstance(values, Mapping):
            raise ConfigError(f"{origin}: [{section}] must be a table")
        current = getattr(settings, section)
        fields = {f.name: f for f in dataclasses.fields(current)}
        changes: dict[str, object] = {}
        for key, value in values.items():
            if key not in fields:
                raise ConfigError(f"{origin}: unknown setting {section}.{key}")
            changes[key] = _coerce(section, fields[key], value)
        sections[section] = dataclasses.replace(current, **changes)
    return dataclasses.replace(settings, **sections)  # type: ignore[arg-type]


def load_settings(root: Path | None = None, overrides: Mapping[str, object] | None = None) -> Settings:
    """Build the settings for a workspace: defaults ← pyproject ← .codesift.toml ← overrides.

    Raises ConfigError with a readable reason for unknown keys or bad values.
    """
    settings = Settings()
    if root is not None:
        pyproject = root / "pyproject.toml"
        if pyproject.is_file():
            try:
                data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
                raise ConfigError(f"{pyproject}: {exc}") from exc
            layer = data.get("tool", {}).get("codesift", {})
            if layer:
                settings = _apply(settings, layer, str(pyproject))
        own = root / ".codesift.toml"
        if own.is_file():
            try:
                layer = tomllib.loads(own.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
                raise ConfigError(f"{own}: {exc}") from exc
            settings = _apply(settings, layer, str(own))
    if overrides:
        settings = _apply(settings, overrides, "settings")
    return settings


@dataclass(frozen=True, slots=True)
class SettingDoc:
    key: str  # section.name
    type: str
    default: object
    doc: str


def describe_settings() -> list[SettingDoc]:
    """Every setting with its type, default and description (README table, VS Code schema)."""
    out: list[SettingDoc] = []
    for section, cls in _SECTIONS.items():
        hints = typing.get_type_hints(cls)
        for f in dataclasses.fields(cls):  # type: ignore[arg-type]
            default = f.default if f.default is not dataclasses.MISSING else None
            hint = hints[f.name]
            if typing.get_origin(hint) is Literal:
                type_name = "enum"
            elif typing.get_origin(hint) is tuple:
                type_name = "array"
            elif hint == float | None:
                type_name = "float"
            else:
                type_name = getattr(hint, "__name__", str(hint))
            out.append(SettingDoc(f"{section}.{f.name}", type_name, default, f.metadata["doc"]))
    return out
