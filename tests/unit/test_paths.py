"""Stored paths: valid UTF-8 always, and the OS path back without loss."""

from __future__ import annotations

import os

import pytest

from codesift.indexer.paths import index_path, os_path


@pytest.mark.parametrize(
    "rel", ["a/b.py", "ünïcode/ファイル.py", 'with "quotes" inside.py', "back\\slash.py"]
)
def test_plain_paths_are_stored_as_they_are(rel: str) -> None:
    assert index_path(rel) == rel
    assert os_path(rel) == rel


def test_a_name_that_is_not_utf8_is_stored_git_quoted() -> None:
    rel = os.fsdecode(b"dir/latin1_\xff.py")
    stored = index_path(rel)
    assert stored == '"dir/latin1_\\377.py"'
    stored.encode("utf-8")  # no lone surrogate left: Arrow, JSON and terminals take it


@pytest.mark.parametrize(
    "raw",
    [
        b"latin1_\xff.py",
        b'"quoted".py',
        b'"\\377".py',
        b'mixed_\xc3\xa9_\xe9\\"x".py',
        b'"',
        b"\x80\x81/\xfe",
    ],
)
def test_every_name_comes_back_to_the_same_bytes(raw: bytes) -> None:
    rel = os.fsdecode(raw)
    stored = index_path(rel)
    stored.encode("utf-8")
    assert os.fsencode(os_path(stored)) == raw


def test_two_different_names_never_share_a_stored_form() -> None:
    names = [b"x\xff.py", b'"x\\377.py"', b'"x\xff.py"', b"x\\377.py"]
    stored = {index_path(os.fsdecode(n)) for n in names}
    assert len(stored) == len(names)
