"""Which files the walk yields, why some are skipped, and how files are read."""

from __future__ import annotations

import dataclasses
import errno
import os
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from codesift.indexer.errors import WorkspaceError
from codesift.indexer.model import SkipReason, WalkEntry, text_hash
from codesift.indexer.settings import IndexSettings
from codesift.indexer.source import read_source
from codesift.indexer.workspace import IgnoreMatcher, ignore_note, is_indexable, walk

from ..conftest import ran_where_file_modes_hold

SETTINGS = IndexSettings()


def write(root: Path, rel: str, data: bytes | str = "x = 1\n") -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        path.write_text(data, encoding="utf-8")
    else:
        path.write_bytes(data)
    return path


def entries(root: Path, settings: IndexSettings = SETTINGS) -> dict[str, WalkEntry]:
    return {e.path: e for e in walk(root, settings)}


def entry_for(path: Path) -> WalkEntry:
    st = path.stat()
    return WalkEntry(path.name, str(path), st.st_size, st.st_mtime_ns, "")


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


# --- the root ----------------------------------------------------------------------


def test_missing_root_raises_workspace_error_at_call_time(tmp_path: Path) -> None:
    with pytest.raises(WorkspaceError, match="does not exist"):
        walk(tmp_path / "nowhere", SETTINGS)


def test_root_that_is_a_file_raises_workspace_error(tmp_path: Path) -> None:
    write(tmp_path, "file.py")
    with pytest.raises(WorkspaceError, match="not a directory"):
        walk(tmp_path / "file.py", SETTINGS)


def test_unlistable_root_raises_workspace_error(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def denied(path: object) -> Iterator[os.DirEntry[str]]:
        raise PermissionError(errno.EACCES, "Permission denied", str(path))

    monkeypatch.setattr(os, "scandir", denied)
    with pytest.raises(WorkspaceError, match="Permission denied"):
        walk(ws, SETTINGS)


# --- what is walked ----------------------------------------------------------------


def test_walk_yields_files_with_language_size_and_mtime(ws: Path) -> None:
    path = write(ws, "src/app.py", "print('hi')\n")
    write(ws, "README.md", "# hi\n")
    found = entries(ws)
    assert sorted(found) == ["README.md", "src/app.py"]
    app = found["src/app.py"]
    assert app.abs_path == str(path)
    assert app.language == "python"
    assert app.size == len("print('hi')\n")
    assert app.mtime_ns == path.stat().st_mtime_ns
    assert app.skip is None


def test_shebang_gives_the_language_of_a_file_without_extension(ws: Path) -> None:
    write(ws, "bin/tool", "#!/usr/bin/env python3\nprint(1)\n")
    write(ws, "LICENSE", "MIT\n")
    found = entries(ws)
    assert found["bin/tool"].language == "python"
    assert found["LICENSE"].language == ""


def test_dot_directories_are_walked_but_dot_git_never(ws: Path) -> None:
    write(ws, ".github/workflows/ci.yml", "on: push\n")
    write(ws, ".git/config", "[core]\n")
    write(ws, "sub/.git", "gitdir: ../.git/modules/sub\n")
    assert sorted(entries(ws)) == [".github/workflows/ci.yml"]


def test_default_excludes_and_the_index_dir_are_not_walked(ws: Path) -> None:
    write(ws, "node_modules/pkg/index.js")
    write(ws, "app.min.js")
    write(ws, ".codesift/files.lance")
    write(ws, "custom-index/data")
    write(ws, "app.js")
    settings = dataclasses.replace(SETTINGS, index_dir="custom-index")
    assert sorted(entries(ws, settings)) == ["app.js"]
    assert sorted(entries(ws)) == ["app.js", "custom-index/data"]


def test_exclude_globs_prune_directories_and_files(ws: Path) -> None:
    write(ws, "gen/a.py")
    write(ws, "src/gen/b.py")
    write(ws, "src/c_pb2.py")
    write(ws, "src/d.py")
    settings = IndexSettings(exclude=("/gen/", "*_pb2.py"))
    assert sorted(entries(ws, settings)) == ["src/d.py", "src/gen/b.py"]


def test_exclude_negation_reincludes_within_the_exclude_list(ws: Path) -> None:
    write(ws, "a.lock")
    write(ws, "poetry.lock")
    settings = IndexSettings(exclude=("*.lock", "!poetry.lock"))
    assert sorted(entries(ws, settings)) == ["poetry.lock"]


def test_include_globs_keep_only_matching_files_and_still_descend(ws: Path) -> None:
    write(ws, "a.py")
    write(ws, "deep/er/b.py")
    write(ws, "deep/er/c.md")
    write(ws, "docs/guide.md")
    write(ws, "docs/vendor/x.md")
    settings = IndexSettings(include=("*.py", "docs/", "!docs/vendor/"))
    assert sorted(entries(ws, settings)) == ["a.py", "deep/er/b.py", "docs/guide.md"]


def test_unreadable_directory_is_reported_not_raised(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(ws, "ok.py")
    write(ws, "locked/secret.py")
    real_scandir = os.scandir
    locked = str(ws / "locked")

    def scandir(path: str) -> object:
        if str(path) == locked:
            raise PermissionError(errno.EACCES, "Permission denied", path)
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    found = entries(ws)
    assert sorted(found) == ["locked", "ok.py"]
    assert found["locked"].skip == SkipReason.UNREADABLE
    assert "Permission denied" in found["locked"].detail


def test_chmod_000_file_is_reported_unreadable(
    ws: Path, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    if ran_where_file_modes_hold(request, tmp_path):
        return
    path = write(ws, "locked.py")
    path.chmod(0)
    try:
        found = entries(ws)
    finally:
        path.chmod(0o644)
    assert found["locked.py"].skip == SkipReason.UNREADABLE


# --- sizes and special files -------------------------------------------------------


def test_file_over_the_size_limit_is_skipped_with_a_readable_detail(ws: Path) -> None:
    write(ws, "big.json", b"0" * (3 * 1024 * 1024 + 200 * 1024))
    write(ws, "small.json", b"{}")
    found = entries(ws)
    big = found["big.json"]
    assert big.skip == SkipReason.TOO_LARGE
    assert big.detail == "3.2 MB > 1.0 MB limit"
    assert big.size == 3 * 1024 * 1024 + 200 * 1024
    assert found["small.json"].skip is None


def test_fifo_and_socket_are_not_regular(ws: Path) -> None:
    os.mkfifo(ws / "pipe")
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind(str(ws / "sock"))
        found = entries(ws)
    finally:
        sock.close()
    assert found["pipe"].skip == SkipReason.NOT_REGULAR
    assert found["pipe"].detail == "a fifo"
    assert found["sock"].skip == SkipReason.NOT_REGULAR


# --- symlinks ----------------------------------------------------------------------


def test_symlink_to_a_file_inside_is_indexed_under_the_link_path(ws: Path) -> None:
    write(ws, "real/mod.py")
    (ws / "alias.py").symlink_to("real/mod.py")
    found = entries(ws)
    assert found["alias.py"].skip is None
    assert found["alias.py"].language == "python"
    assert found["real/mod.py"].skip is None


def test_symlink_to_a_file_outside_the_root_is_not_followed(ws: Path, tmp_path: Path) -> None:
    outside = write(tmp_path, "outside/secret.py")
    (ws / "leak.py").symlink_to(outside)
    (ws / "leakdir").symlink_to(outside.parent)
    found = entries(ws)
    assert found["leak.py"].skip == SkipReason.SYMLINK_OUTSIDE
    assert found["leakdir"].skip == SkipReason.SYMLINK_OUTSIDE
    assert not any(p.startswith("leakdir/") for p in found)
    assert read_source(found["leak.py"], 1 << 20).skip == SkipReason.SYMLINK_OUTSIDE


def test_symlink_loop_to_an_ancestor_is_reported_once_and_the_walk_ends(ws: Path) -> None:
    write(ws, "a/b/mod.py")
    (ws / "a/b/up").symlink_to("../..", target_is_directory=True)
    found = entries(ws)
    assert sorted(found) == ["a/b/mod.py", "a/b/up"]
    assert found["a/b/up"].skip == SkipReason.SYMLINK_LOOP


def test_symlinked_directory_inside_is_indexed_once_at_its_own_path(ws: Path) -> None:
    write(ws, "lib/util.py")
    (ws / "alias").symlink_to("lib", target_is_directory=True)
    (ws / "zlink").symlink_to("lib", target_is_directory=True)
    found = entries(ws)
    assert found["lib/util.py"].skip is None  # real directories are always walked
    assert not any(p.startswith(("alias/", "zlink/")) for p in found)
    assert found["alias"].skip == found["zlink"].skip == SkipReason.SYMLINK_INSIDE
    assert found["alias"].detail == "indexed at lib"


def test_self_referencing_symlink_is_a_loop(ws: Path) -> None:
    (ws / "me").symlink_to("me")
    assert entries(ws)["me"].skip == SkipReason.SYMLINK_LOOP


def test_symlink_swapped_for_a_file_while_it_is_resolved_is_changed_not_raised(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # realpath lstat()s the link, then readlink()s it: a file swapped in between raises EINVAL.
    write(ws, "real/mod.py")
    write(ws, "keep.py")
    (ws / "flip.py").symlink_to("real/mod.py")
    (ws / "flipdir").symlink_to("real", target_is_directory=True)
    resolve = os.path.realpath

    def swapped(path: str, *args: object, **kwargs: object) -> str:
        if os.path.basename(str(path)) in ("flip.py", "flipdir"):
            raise OSError(errno.EINVAL, "Invalid argument", str(path))
        return resolve(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os.path, "realpath", swapped)
    found = entries(ws)
    assert found["flip.py"].skip is SkipReason.CHANGED
    assert found["flipdir"].skip is SkipReason.CHANGED
    assert found["keep.py"].skip is None and found["real/mod.py"].skip is None


def test_broken_symlink_is_unreadable_with_its_target(ws: Path) -> None:
    (ws / "dangling.py").symlink_to("missing.py")
    found = entries(ws)["dangling.py"]
    assert found.skip == SkipReason.UNREADABLE
    assert found.detail == "broken symlink to missing.py"


# --- reading -----------------------------------------------------------------------


def test_read_source_returns_text_and_its_hash(tmp_path: Path) -> None:
    path = write(tmp_path, "a.py", "héllo = 1\n")
    source = read_source(entry_for(path), 1 << 20)
    assert source.text == "héllo = 1\n"
    assert source.content_hash == text_hash("héllo = 1\n")
    assert source.skip is None and source.note == ""


def test_nul_byte_in_the_first_8_kib_is_binary(tmp_path: Path) -> None:
    path = write(tmp_path, "blob.dat", b"abc\x00def")
    source = read_source(entry_for(path), 1 << 20)
    assert source.skip == SkipReason.BINARY
    assert source.text == ""


def test_nul_byte_after_the_first_8_kib_is_text(tmp_path: Path) -> None:
    path = write(tmp_path, "late.txt", b"a" * 9000 + b"\x00")
    assert read_source(entry_for(path), 1 << 20).skip is None


def test_invalid_utf8_is_replaced_and_noted(tmp_path: Path) -> None:
    path = write(tmp_path, "latin1.py", b"name = '\xe9t\xe9'\n\xff\n")
    source = read_source(entry_for(path), 1 << 20)
    assert source.skip is None
    assert source.text == "name = '\ufffdt\ufffd'\n\ufffd\n"
    assert source.note == "invalid UTF-8: 3 bytes replaced"
    assert source.content_hash == text_hash(source.text)


def test_utf8_bom_is_stripped(tmp_path: Path) -> None:
    path = write(tmp_path, "bom.py", b"\xef\xbb\xbfx = 1\n")
    source = read_source(entry_for(path), 1 << 20)
    assert source.text == "x = 1\n"
    assert source.content_hash == text_hash("x = 1\n")


def test_file_that_grew_past_the_limit_is_too_large_at_read_time(tmp_path: Path) -> None:
    path = write(tmp_path, "grew.py", "x" * 2000)
    source = read_source(entry_for(path), 1000)
    assert source.skip == SkipReason.TOO_LARGE
    assert source.note == "2.0 KB > 1000 B limit"


def test_unreadable_file_is_reported_with_the_errno_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write(tmp_path, "locked.py")
    entry = entry_for(path)

    def denied(*args: object) -> int:
        raise PermissionError(errno.EACCES, "Permission denied")

    monkeypatch.setattr(os, "open", denied)
    source = read_source(entry, 1 << 20)
    assert source.skip == SkipReason.UNREADABLE
    assert source.note == "EACCES: Permission denied"


def test_deleted_file_is_unreadable_not_an_exception(tmp_path: Path) -> None:
    path = write(tmp_path, "gone.py")
    entry = entry_for(path)
    path.unlink()
    assert read_source(entry, 1 << 20).skip == SkipReason.UNREADABLE


def test_path_that_became_a_fifo_does_not_block_the_reader(tmp_path: Path) -> None:
    path = write(tmp_path, "pipe")
    entry = entry_for(path)
    path.unlink()
    os.mkfifo(path)
    assert read_source(entry, 1 << 20).skip == SkipReason.NOT_REGULAR


def test_skip_decided_by_the_walk_is_passed_on(ws: Path) -> None:
    write(ws, "big.txt", b"x" * 2048)
    entry = entries(ws, IndexSettings(max_file_bytes=1024))["big.txt"]
    source = read_source(entry, 1024)
    assert source.skip == SkipReason.TOO_LARGE
    assert source.note == "2.0 KB > 1.0 KB limit"


# --- one path at a time ------------------------------------------------------------


def build_mixed_workspace(ws: Path, tmp_path: Path) -> None:
    write(ws, ".gitignore", "*.log\nbuild/\n!keep.log\n")
    write(ws, "src/app.py")
    write(ws, "src/.gitignore", "generated.py\n")
    write(ws, "src/generated.py")
    write(ws, "src/keep.log")
    write(ws, "debug.log")
    write(ws, "build/out.py")
    write(ws, "node_modules/x/index.js")
    write(ws, "big.bin", b"x" * 4096)
    write(ws, "docs/readme.md")
    (ws / "alias.py").symlink_to("src/app.py")
    (ws / "outside.py").symlink_to(write(tmp_path, "elsewhere.py"))
    (ws / "dangling.py").symlink_to("nope.py")
    (ws / "linked").symlink_to("docs", target_is_directory=True)
    os.mkfifo(ws / "pipe")


@pytest.mark.parametrize(
    "settings",
    [
        IndexSettings(max_file_bytes=1024),
        IndexSettings(max_file_bytes=1024, include=("*.py",)),
        IndexSettings(max_file_bytes=1024, exclude=("docs/",), respect_gitignore=False),
    ],
)
def test_is_indexable_agrees_with_walk(ws: Path, tmp_path: Path, settings: IndexSettings) -> None:
    build_mixed_workspace(ws, tmp_path)
    walked = entries(ws, settings)
    matcher = IgnoreMatcher(ws, settings)
    candidates: set[str] = set(walked)
    for dirpath, dirnames, filenames in os.walk(ws, followlinks=False):
        rel_dir = os.path.relpath(dirpath, ws)
        for name in filenames + dirnames:
            candidates.add(os.path.normpath(os.path.join(rel_dir, name)))
    for rel in sorted(candidates):
        in_walk = rel in walked and walked[rel].skip is None
        assert matcher.is_indexable(rel) == in_walk, rel
        if rel in walked and not (ws / rel).is_dir():
            assert matcher.entry(rel) == walked[rel], rel
    assert is_indexable(ws, "src/app.py", settings) == ("src/app.py" in walked)


def test_is_indexable_rejects_paths_outside_or_inside_dot_git(ws: Path) -> None:
    write(ws, "a.py")
    write(ws, ".git/HEAD")
    assert is_indexable(ws, "a.py", SETTINGS)
    assert not is_indexable(ws, "../a.py", SETTINGS)
    assert not is_indexable(ws, ".git/HEAD", SETTINGS)
    assert not is_indexable(ws, "missing.py", SETTINGS)


def test_ignore_matcher_sees_a_changed_gitignore(ws: Path) -> None:
    write(ws, "a.py")
    matcher = IgnoreMatcher(ws, SETTINGS)
    assert matcher.is_indexable("a.py")
    write(ws, ".gitignore", "a.py\n")
    assert not matcher.is_indexable("a.py")
    assert matcher.ignored("a.py")


# --- saying why there is little or nothing to index -----------------------------------


def _debian_like(root: Path, keep_debian: bool) -> None:
    write(root, ".gitignore", "/*\n" + ("!/debian/\n" if keep_debian else ""))
    for i in range(5):
        write(root, f"kernel/mod_{i}.c", f"int f{i}(void) {{ return {i}; }}\n")
    write(root, "debian/rules.c", "int rules;\n")


def _seen(root: Path, settings: IndexSettings) -> int:
    return sum(1 for _ in walk(root, settings))


def test_ignore_note_says_gitignore_hid_everything_outside_git(tmp_path: Path) -> None:
    _debian_like(tmp_path, keep_debian=False)
    settings = IndexSettings()
    assert _seen(tmp_path, settings) == 0
    note = ignore_note(tmp_path, settings, 0)
    assert "nothing to index: .gitignore rules hide all 7 files" in note
    assert "in no git repository" in note and "index.respect_gitignore = false" in note


def test_ignore_note_says_gitignore_hid_most_files_outside_git(tmp_path: Path) -> None:
    _debian_like(tmp_path, keep_debian=True)
    settings = IndexSettings()
    seen = _seen(tmp_path, settings)
    assert seen == 1  # debian/rules.c
    note = ignore_note(tmp_path, settings, seen)
    assert note.startswith("6 of 7 files under") and "index.respect_gitignore = false" in note


def test_ignore_note_is_quiet_inside_a_git_repository_or_when_little_is_hidden(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    _debian_like(repo, keep_debian=True)
    (repo / ".git").mkdir()
    assert ignore_note(repo, IndexSettings(), _seen(repo, IndexSettings())) == ""
    plain = tmp_path / "plain"
    write(plain, ".gitignore", "build/\n")
    write(plain, "a.py")
    write(plain, "b.py")
    write(plain, "build/out.py")
    assert ignore_note(plain, IndexSettings(), _seen(plain, IndexSettings())) == ""
    empty = tmp_path / "empty"
    empty.mkdir()
    assert ignore_note(empty, IndexSettings(), 0) == ""


def test_ignore_note_blames_include_and_exclude_when_they_leave_nothing(tmp_path: Path) -> None:
    write(tmp_path, "a.py")
    write(tmp_path, "b.py")
    settings = IndexSettings(include=("*.rs",))
    assert ignore_note(tmp_path, settings, _seen(tmp_path, settings)) == (
        f"nothing to index: index.include / index.exclude leave out all 2 files under {tmp_path}"
    )
