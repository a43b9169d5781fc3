"""File roles: source code above prose, tests, examples, generated and vendored files.

A question in words is nearly always asked of the code that does the thing; a
test, an example or a page of docs that mentions the same words is the usual
false friend (SWE-bench: examples, docs and tests filled codesift's top 5). Each
role has a prior the fused score is multiplied by. A query or a filter that
names the role (``tests for …``, ``--include 'tests/**'``) turns its prior off.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable
from enum import StrEnum
from functools import lru_cache


class FileRole(StrEnum):
    SOURCE = "source"
    TEST = "test"
    EXAMPLE = "example"
    DOCS = "docs"  # prose: markdown, reStructuredText, plain text
    GENERATED = "generated"
    VENDORED = "vendored"
    MINIFIED = "minified"
    COMPAT = "compat"  # compatibility shims and legacy copies
    DECLARATION = "declaration"  # .d.ts, .pyi: stubs of code defined elsewhere
    REEXPORT = "reexport"  # __init__.py, index.ts, mod.rs-style barrels and package metadata
    UNKNOWN = "unknown"  # no grammar and no known text kind (extension-less files…)


# Multipliers on the fused score. Measured on the quality tier (docs/DECISIONS.md,
# "Ranking"): tests, examples and vendored copies are the strongest false friends.
ROLE_PRIOR: dict[FileRole, float] = {
    FileRole.SOURCE: 1.0,
    FileRole.TEST: 0.35,
    FileRole.EXAMPLE: 0.35,
    FileRole.DOCS: 0.5,
    FileRole.GENERATED: 0.35,
    FileRole.VENDORED: 0.35,
    FileRole.MINIFIED: 0.2,
    FileRole.COMPAT: 0.5,
    FileRole.DECLARATION: 0.7,
    FileRole.REEXPORT: 0.6,
    FileRole.UNKNOWN: 0.5,
}

# Test file names by each language's convention (a bare ``test_`` prefix on any file
# is too wide: bats-core's own ``lib/bats-core/test_functions.bash`` is its source).
_TEST_NAME = re.compile(
    r"^(?:test_\w*\.(?:py|c|cc|cpp|lua|dart)"
    r"|\w*_test\.(?:py|go|rb|c|cc|cpp|lua|dart|exs|zig|rs)"
    r"|\w*_tests\.(?:py|rs)"
    r"|\w*_spec\.(?:rb|lua|exs)"
    r"|\w*Tests?\.(?:java|kt|swift|cs|scala|php|hs|m)"
    r"|\w*Spec\.(?:kt|swift|scala|hs|groovy)"
    r"|\w*Suite\.scala"
    r"|\w*IT\.java"
    r"|[\w.-]*\.(?:test|spec)\.[cm]?[jt]sx?"
    r"|\w*\.bats"
    r"|conftest\.py"
    r"|test_helpers?\.\w+)$"
)
_TEST_DIRS = frozenset(
    {"test", "tests", "__tests__", "spec", "specs", "testing", "testdata", "test_data", "fixtures", "e2e"}
)
_EXAMPLE_DIRS = frozenset(
    {"example", "examples", "_examples", "demo", "demos", "sample", "samples", "docs_src", "tutorial"}
)
_DOC_DIRS = frozenset({"doc", "docs", "documentation", "website", "site"})
_VENDOR_DIRS = frozenset(
    {"vendor", "vendors", "third_party", "thirdparty", "third-party", "external", "extern", "single_include"}
)
_GENERATED_DIRS = frozenset({"generated", "gen", "__generated__", "dist", "build", "target", "out"})
_COMPAT_DIRS = frozenset({"compat", "_compat", "legacy", "deprecated"})
_GENERATED_NAME = re.compile(r"(?:\.pb\.\w+|_pb2\.py|\.generated\.\w+|\.g\.\w+|_generated\.\w+)$")
_MINIFIED_NAME = re.compile(r"\.min\.(?:js|css|mjs)$|-min\.js$|\.bundle\.js$")
_PROSE_EXT = frozenset({".md", ".markdown", ".mdx", ".rst", ".txt", ".adoc", ".asciidoc", ".org", ".rdoc"})
_DECLARATION = re.compile(r"\.d\.[cm]?ts$|\.pyi$")
_REEXPORT_NAMES = frozenset(
    {"__init__.py", "package-info.java", "index.ts", "index.js", "index.mjs", "module-info.java"}
)
_PROSE_LANGUAGES = frozenset({"markdown", "rst", "text", "org", "asciidoc"})


@lru_cache(maxsize=65536)
def file_role(path: str, language: str = "x") -> FileRole:
    """The role of a workspace-relative path (``language`` "" means no grammar applied).

    Path folders are matched whole and case-insensitively; the file name by its
    convention (``test_x.py``, ``x_test.go``, ``XTests.swift``, ``x.spec.ts``)."""
    parts = path.replace("\\", "/").split("/")
    name = parts[-1]
    folders = {p.lower() for p in parts[:-1]}
    ext = name[name.rfind(".") :].lower() if "." in name[1:] else ""
    if _MINIFIED_NAME.search(name):
        return FileRole.MINIFIED
    if folders & _VENDOR_DIRS:
        return FileRole.VENDORED
    if _GENERATED_NAME.search(name) or folders & _GENERATED_DIRS:
        return FileRole.GENERATED
    if _TEST_NAME.search(name) or folders & _TEST_DIRS:
        return FileRole.TEST
    if folders & _EXAMPLE_DIRS:
        return FileRole.EXAMPLE
    if ext in _PROSE_EXT or language in _PROSE_LANGUAGES or (folders & _DOC_DIRS and not language):
        return FileRole.DOCS
    if folders & _COMPAT_DIRS:
        return FileRole.COMPAT
    if _DECLARATION.search(name):
        return FileRole.DECLARATION
    if name in _REEXPORT_NAMES:
        return FileRole.REEXPORT
    if not language:
        return FileRole.UNKNOWN
    return FileRole.SOURCE


_VERSION_DIR = re.compile(r"^v(\d{1,3})$", re.IGNORECASE)


def superseded(paths: Iterable[str], query: str = "") -> set[str]:
    """The paths, of those given, in an older version's folder of a package that also
    holds a newer one: ``src/v3/types.ts`` beside ``src/v4/…`` (zod), ``v1/fields.py``
    beside ``fields.py`` itself (pydantic's ``v1`` is its previous major version kept for
    migration). Only the paths given are compared — the candidates of one search. A
    version the query names ("zod v3 …") is asked for, never superseded."""
    given = set(paths)
    named = {int(m.group(1)) for m in re.finditer(r"\bv(\d{1,3})\b", query, re.IGNORECASE)}
    versioned: list[tuple[str, tuple[str, ...], int, str]] = []
    newest: dict[tuple[str, ...], int] = defaultdict(int)
    for path in given:
        parts = path.split("/")
        for i, part in enumerate(parts[:-1]):
            m = _VERSION_DIR.match(part)
            if m:
                prefix = tuple(parts[:i])
                n = int(m.group(1))
                versioned.append((path, prefix, n, "/".join((*prefix, *parts[i + 1 :]))))
                newest[prefix] = max(newest[prefix], n)
                break
    return {
        path
        for path, prefix, n, unversioned in versioned
        if n not in named and (newest[prefix] > n or unversioned in given)
    }


def role_prior(role: FileRole, asked: frozenset[FileRole]) -> float:
    """The multiplier for a role; 1 when the query or the filters asked for it."""
    return 1.0 if role in asked else ROLE_PRIOR[role]
