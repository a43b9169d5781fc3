"""language_for_path: file names, then extensions, then a ``#!`` line."""

from __future__ import annotations

import pytest

from codesift.indexer.languages import language_for_path


@pytest.mark.parametrize(
    ("path", "language"),
    [
        ("Makefile", "make"),
        ("sub/dir/Dockerfile", "dockerfile"),
        ("CMakeLists.txt", "cmake"),
        ("a/.gitignore", "gitignore"),
        ("BUILD.bazel", "starlark"),
        ("makefile.py", "python"),  # a known name only counts whole
    ],
)
def test_language_for_path_knows_file_names(path: str, language: str) -> None:
    assert language_for_path(path) == language


@pytest.mark.parametrize(
    ("path", "language"),
    [
        ("src/main.py", "python"),
        ("lib/x.tar.ts", "typescript"),  # only the last suffix counts
        ("App.TSX", "tsx"),  # case falls back to lower
        ("Main.JAVA", "java"),
        ("analysis.R", "r"),
        ("analysis.r", "r"),
        ("dir.rs/readme", ""),  # a dot in a directory is not a suffix
        (".py", ""),  # a leading dot is a hidden name, not a suffix
        ("notes.", ""),
        ("notes.unknown", ""),
        ("", ""),
    ],
)
def test_language_for_path_uses_the_last_suffix_any_case(path: str, language: str) -> None:
    assert language_for_path(path) == language


@pytest.mark.parametrize(
    ("first_line", "language"),
    [
        ("#!/usr/bin/env python3", "python"),
        ("#!/usr/bin/python3.12 -u", "python"),
        ("#!/bin/sh", "bash"),
        ("#!/usr/bin/env node", "javascript"),
        ("#!/usr/bin/env -S ruby -w", "ruby"),
        ("#!/usr/bin/awk -f", ""),
        ("# not a shebang python", ""),
    ],
)
def test_language_for_path_reads_shebangs_of_extensionless_files(first_line: str, language: str) -> None:
    assert language_for_path("bin/tool", first_line) == language


def test_language_for_path_prefers_name_and_extension_over_shebang() -> None:
    assert language_for_path("run.rb", "#!/usr/bin/env python") == "ruby"
    assert language_for_path("Rakefile", "#!/bin/sh") == "ruby"
