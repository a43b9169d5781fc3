"""Per-language knowledge: which grammar a path uses, and the tree-sitter queries."""

from __future__ import annotations

# Extension → tree-sitter-language-pack name. Names not listed fall back to
# line windows (language ""), still indexed and searchable.
_EXTENSIONS: dict[str, str] = {
    ".py": "python",
    ".pyi": "python",
    ".pyw": "python",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascript",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "tsx",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
    ".c": "c",
    ".h": "c",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".cxx": "cpp",
    ".hpp": "cpp",
    ".hh": "cpp",
    ".hxx": "cpp",
    ".ipp": "cpp",
    ".inl": "cpp",
    ".cs": "csharp",
    ".swift": "swift",
    ".kt": "kotlin",
    ".kts": "kotlin",
    ".rb": "ruby",
    ".rake": "ruby",
    ".gemspec": "ruby",
    ".php": "php",
    ".scala": "scala",
    ".sc": "scala",
    ".lua": "lua",
    ".sh": "bash",
    ".bash": "bash",
    ".zsh": "bash",
    ".fish": "fish",
    ".pl": "perl",
    ".pm": "perl",
    ".r": "r",
    ".R": "r",
    ".jl": "julia",
    ".ex": "elixir",
    ".exs": "elixir",
    ".erl": "erlang",
    ".hrl": "erlang",
    ".hs": "haskell",
    ".ml": "ocaml",
    ".mli": "ocaml_interface",
    ".clj": "clojure",
    ".cljs": "clojure",
    ".cljc": "clojure",
    ".el": "elisp",
    ".dart": "dart",
    ".zig": "zig",
    ".nim": "nim",
    ".v": "v",
    ".sql": "sql",
    ".html": "html",
    ".htm": "html",
    ".css": "css",
    ".scss": "scss",
    ".vue": "vue",
    ".svelte": "svelte",
    ".astro": "astro",
    ".json": "json",
    ".yaml": "yaml",
    ".yml": "yaml",
    ".toml": "toml",
    ".xml": "xml",
    ".md": "markdown",
    ".markdown": "markdown",
    ".rst": "rst",
    ".tex": "latex",
    ".proto": "proto",
    ".graphql": "graphql",
    ".gql": "graphql",
    ".tf": "terraform",
    ".hcl": "hcl",
    ".nix": "nix",
    ".cmake": "cmake",
    ".m": "objc",
    ".mm": "objc",
    ".cu": "cuda",
    ".cuh": "cuda",
    ".f90": "fortran",
    ".f95": "fortran",
    ".f": "fortran",
    ".groovy": "groovy",
    ".gradle": "groovy",
    ".hx": "haxe",
    ".sol": "solidity",
    ".vim": "vim",
    ".ps1": "powershell",
    ".gleam": "gleam",
    ".odin": "odin",
    ".fs": "fsharp",
    ".fsi": "fsharp_signature",
    ".ini": "ini",
    ".cfg": "ini",
    ".mk": "make",
    ".rkt": "racket",
    ".scm": "scheme",
    ".d": "d",
    ".wgsl": "wgsl",
    ".glsl": "glsl",
    ".hlsl": "hlsl",
    ".bib": "bibtex",
    ".typ": "typst",
}

_FILENAMES: dict[str, str] = {
    "Makefile": "make",
    "makefile": "make",
    "GNUmakefile": "make",
    "Dockerfile": "dockerfile",
    "CMakeLists.txt": "cmake",
    "Rakefile": "ruby",
    "Gemfile": "ruby",
    "Kconfig": "kconfig",
    "meson.build": "meson",
    "BUILD": "starlark",
    "BUILD.bazel": "starlark",
    "WORKSPACE": "starlark",
    "go.mod": "gomod",
    ".gitignore": "gitignore",
}

_SHEBANGS: dict[str, str] = {
    "python": "python",
    "python3": "python",
    "node": "javascript",
    "bash": "bash",
    "sh": "bash",
    "ruby": "ruby",
    "perl": "perl",
    "zsh": "bash",
}


def language_for_path(path: str, first_line: str = "") -> str:
    """The tree-sitter-language-pack name for a file, or "" when none applies.

    Decided by file name, then extension, then a ``#!`` line.
    """
    # String operations rather than PurePosixPath: the walk asks once per file.
    name = path.rsplit("/", 1)[-1]
    by_name = _FILENAMES.get(name)
    if by_name is not None:
        return by_name
    dot = name.rfind(".")
    if 0 < dot < len(name) - 1:  # PurePosixPath.suffix: no leading or trailing dot
        suffix = name[dot:]
        lang = _EXTENSIONS.get(suffix) or _EXTENSIONS.get(suffix.lower())
        if lang:
            return lang
    if first_line.startswith("#!"):
        words = first_line[2:].replace("/", " ").split()
        for word in reversed(words):
            if word in _SHEBANGS:
                return _SHEBANGS[word]
            if word.startswith("python"):
                return "python"
    return ""
