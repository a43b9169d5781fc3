"""read_file under allowed roots: text, ranges, and every way out refused."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from codesift.indexer.files import FileAccessError, FileErrorCode, read_file

MAX = 1024 * 1024


@pytest.fixture
def roots(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A workspace, a second allowed root, and an outside folder with a secret."""
    ws = tmp_path / "ws"
    (ws / "app").mkdir(parents=True)
    (ws / "app" / "auth.py").write_text("line 1\nline 2\nline 3\n", encoding="utf-8")
    extra = tmp_path / "extra"
    extra.mkdir()
    (extra / "notes.md").write_text("# notes\n", encoding="utf-8")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret\n", encoding="utf-8")
    return ws, extra, outside


def code_of(exc: pytest.ExceptionInfo[FileAccessError]) -> FileErrorCode:
    return exc.value.code


def test_read_file_returns_the_text_of_a_relative_path(roots: tuple[Path, Path, Path]) -> None:
    ws, _, _ = roots
    got = read_file("app/auth.py", [ws], max_bytes=MAX)
    assert got.text == "line 1\nline 2\nline 3\n"
    assert (got.start_line, got.end_line, got.total_lines) == (1, 3, 3)
    assert got.relative_path == "app/auth.py" and got.root == os.path.realpath(ws)
    assert not got.truncated


def test_read_file_accepts_absolute_paths_and_file_uris_inside_a_root(roots: tuple[Path, Path, Path]) -> None:
    ws, extra, _ = roots
    assert read_file(str(ws / "app" / "auth.py"), [ws], max_bytes=MAX).total_lines == 3
    assert read_file((ws / "app" / "auth.py").as_uri(), [ws], max_bytes=MAX).total_lines == 3
    assert read_file("notes.md", [ws, extra], max_bytes=MAX).text == "# notes\n"


def test_read_file_line_range_and_char_budget(roots: tuple[Path, Path, Path]) -> None:
    ws, _, _ = roots
    got = read_file("app/auth.py", [ws], max_bytes=MAX, start_line=2, end_line=9)
    assert got.text == "line 2\nline 3\n" and (got.start_line, got.end_line) == (2, 3)
    cut = read_file("app/auth.py", [ws], max_bytes=MAX, max_chars=10)
    assert cut.text == "line 1\n" and cut.end_line == 1 and cut.truncated
    with pytest.raises(FileAccessError) as exc:
        read_file("app/auth.py", [ws], max_bytes=MAX, start_line=7)
    assert code_of(exc) is FileErrorCode.INVALID_RANGE
    with pytest.raises(FileAccessError) as exc:
        read_file("app/auth.py", [ws], max_bytes=MAX, start_line=3, end_line=2)
    assert code_of(exc) is FileErrorCode.INVALID_RANGE


def test_read_file_not_found_for_a_missing_file(roots: tuple[Path, Path, Path]) -> None:
    ws, _, _ = roots
    with pytest.raises(FileAccessError) as exc:
        read_file("app/missing.py", [ws], max_bytes=MAX)
    assert code_of(exc) is FileErrorCode.NOT_FOUND


@pytest.mark.parametrize(
    "name",
    [
        "../outside/secret.txt",
        "app/../../outside/secret.txt",
        "%2e%2e/outside/secret.txt",
        "%252e%252e/outside/secret.txt",
        "..%2Foutside%2Fsecret.txt",
        "file:///etc/passwd",
        "file://evil.example/etc/passwd",
        "http://example.com/x",
        "/etc/passwd",
        "../outside/missing.txt",
    ],
)
def test_read_file_access_denied_outside_the_roots(roots: tuple[Path, Path, Path], name: str) -> None:
    ws, _, _ = roots
    with pytest.raises(FileAccessError) as exc:
        read_file(name, [ws], max_bytes=MAX)
    assert code_of(exc) is FileErrorCode.ACCESS_DENIED
    assert os.path.realpath(ws) in str(exc.value)  # the message lists the allowed roots


def test_read_file_absolute_path_outside_is_denied(roots: tuple[Path, Path, Path]) -> None:
    ws, _, outside = roots
    with pytest.raises(FileAccessError) as exc:
        read_file(str(outside / "secret.txt"), [ws], max_bytes=MAX)
    assert code_of(exc) is FileErrorCode.ACCESS_DENIED
    with pytest.raises(FileAccessError) as exc:
        read_file((outside / "secret.txt").as_uri(), [ws], max_bytes=MAX)
    assert code_of(exc) is FileErrorCode.ACCESS_DENIED


def test_read_file_symlinks_never_escape(roots: tuple[Path, Path, Path]) -> None:
    ws, _, outside = roots
    (ws / "link.txt").symlink_to(outside / "secret.txt")
    (ws / "linkdir").symlink_to(outside)
    (ws / "inside.py").symlink_to(ws / "app" / "auth.py")
    for name in ("link.txt", "linkdir/secret.txt", str(ws / "linkdir" / "secret.txt")):
        with pytest.raises(FileAccessError) as exc:
            read_file(name, [ws], max_bytes=MAX)
        assert code_of(exc) is FileErrorCode.ACCESS_DENIED, name
    assert read_file("inside.py", [ws], max_bytes=MAX).relative_path == "app/auth.py"


def test_read_file_refuses_binary_huge_and_directories(roots: tuple[Path, Path, Path]) -> None:
    ws, _, _ = roots
    (ws / "blob.bin").write_bytes(b"PK\x03\x04\x00\x00binary")
    (ws / "big.txt").write_text("x" * 2000, encoding="utf-8")
    cases = {
        "blob.bin": FileErrorCode.BINARY,
        "big.txt": FileErrorCode.TOO_LARGE,
        "app": FileErrorCode.NOT_A_FILE,
        "": FileErrorCode.INVALID_PATH,
    }
    for name, code in cases.items():
        with pytest.raises(FileAccessError) as exc:
            read_file(name, [ws], max_bytes=1000)
        assert code_of(exc) is code, name
    os.mkfifo(ws / "pipe")
    with pytest.raises(FileAccessError) as exc:
        read_file("pipe", [ws], max_bytes=1000)
    assert code_of(exc) is FileErrorCode.NOT_A_FILE


def test_read_file_invalid_utf8_is_replaced_and_noted(roots: tuple[Path, Path, Path]) -> None:
    ws, _, _ = roots
    (ws / "latin1.txt").write_bytes("café\n".encode("latin-1"))
    got = read_file("latin1.txt", [ws], max_bytes=MAX)
    assert got.text == "caf\ufffd\n" and "invalid UTF-8" in got.note


def test_read_file_literal_percent_names_still_read(roots: tuple[Path, Path, Path]) -> None:
    ws, _, _ = roots
    (ws / "100%25.txt").write_text("percent\n", encoding="utf-8")
    assert read_file("100%25.txt", [ws], max_bytes=MAX).text == "percent\n"
