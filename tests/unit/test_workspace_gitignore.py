"""walk() against git itself: the files it yields are the files git lists.

These tests run the real ``git`` (the one place the unit suite starts a process):
the reference for ignore rules is git's behaviour, not our reading of its manual.
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
from pathlib import Path

import pytest

from codesift.indexer.settings import IndexSettings
from codesift.indexer.workspace import IgnoreMatcher, walk

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

NO_EXTRA_RULES = IndexSettings(exclude=(), index_dir="")


@pytest.fixture(autouse=True)
def _git_sees_no_user_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    config = tmp_path / "xdg-config"
    home.mkdir()
    config.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.delenv("GIT_CONFIG_GLOBAL", raising=False)
    monkeypatch.delenv("GIT_DIR", raising=False)
    return config


def git(repo: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, check=False)


def git_files(repo: Path) -> set[str]:
    done = git(repo, "ls-files", "-z", "--others", "--cached", "--exclude-standard")
    assert done.returncode == 0, done.stderr
    return {p.decode("utf-8", "surrogateescape") for p in done.stdout.split(b"\0") if p}


def git_ignored(repo: Path, paths: list[str]) -> set[str]:
    """Paths ``git check-ignore --no-index`` calls ignored."""
    done = subprocess.run(
        ["git", "check-ignore", "--no-index", "-z", "--stdin"],
        cwd=repo,
        input=b"".join(p.encode("utf-8", "surrogateescape") + b"\0" for p in paths),
        capture_output=True,
        check=False,
    )
    assert done.returncode in (0, 1), done.stderr
    return {p.decode("utf-8", "surrogateescape") for p in done.stdout.split(b"\0") if p}


def walked(root: Path, settings: IndexSettings = NO_EXTRA_RULES) -> set[str]:
    return {e.path for e in walk(root, settings)}


def all_files(root: Path) -> list[str]:
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != ".git"]
        for name in filenames:
            out.append(os.path.relpath(os.path.join(dirpath, name), root).replace(os.sep, "/"))
    return sorted(out)


def write(root: Path, rel: str, text: str = "x\n") -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


ROOT_GITIGNORE = "\n".join(
    [
        "# a comment line",
        "*.log",
        "!important.log",
        "build/",
        "/root-only.txt",
        "docs/**/generated",
        "cache/**",
        "!cache/keep.txt",
        "secret/",
        "!secret/allowed.txt",
        "[abc]x.tmp",
        "[!x]y.dat",
        "[[:digit:]]*.num",
        "\\#hash.txt",
        "\\!bang.txt",
        "trailing.txt   ",
        "space\\ ",
        "*.o",
        "**/deep/target",
        "out/**/*.bin",
        "f?le.c",
        "caf?.txt",
        "dironly/",
        "a/**/b.txt",
        "vendor/*",
        "!vendor/keep/",
        "",
    ]
)

TRICKY_FILES = [
    "main.py",
    "debug.log",
    "important.log",
    "nested/dir/trace.log",
    "nested/dir/important.log",
    "build/out.js",
    "src/build/gen.py",
    "src/build.py",
    "root-only.txt",
    "src/root-only.txt",
    "docs/generated",
    "docs/a/b/generated",
    "docs/generated.md",
    "cache/keep.txt",
    "cache/drop.txt",
    "cache/sub/keep.txt",
    "secret/allowed.txt",
    "secret/other.txt",
    "ax.tmp",
    "dx.tmp",
    "ay.dat",
    "xy.dat",
    "1st.num",
    "first.num",
    "#hash.txt",
    "!bang.txt",
    "trailing.txt",
    "space ",
    "space",
    "lib.o",
    "x/deep/target",
    "deep/target",
    "deep/target.c",
    "out/one/two/blob.bin",
    "out/blob.bin",
    "out/blob.txt",
    "file.c",
    "fle.c",
    "café.txt",
    "cafe.txt",
    "dironly",
    "x/dironly/f.txt",
    "a/b.txt",
    "a/x/y/b.txt",
    "a/x/c.txt",
    "vendor/lib.js",
    "vendor/keep/kept.js",
    "vendor/drop/dropped.js",
    "sub/x.log",
    "sub/local.txt",
    "sub/anchored.txt",
    "sub/deeper/anchored.txt",
    "sub/inner/local.txt",
    "sub/inner/y.log",
    "from-info-exclude.txt",
    "global-ignored.txt",
    ".github/workflows/ci.yml",
    ".hidden",
    ".config/tool.toml",
    "unicodé/ñame.py",
    "with space/file name.txt",
    "日本語/コード.py",
]


def make_tricky_repo(root: Path, global_config: Path) -> Path:
    root.mkdir()
    assert git(root, "init", "-q").returncode == 0
    write(root, ".gitignore", ROOT_GITIGNORE)
    write(root, "sub/.gitignore", "!*.log\nlocal.txt\n/anchored.txt\n")
    write(root, "sub/inner/.gitignore", "!local.txt\n")
    write(root, ".git/info/exclude", "from-info-exclude.txt\n")
    write(global_config, "git/ignore", "global-ignored.txt\n")
    for rel in TRICKY_FILES:
        write(root, rel)
    return root


def test_walk_lists_exactly_the_files_git_lists(tmp_path: Path, _git_sees_no_user_config: Path) -> None:
    repo = make_tricky_repo(tmp_path / "repo", _git_sees_no_user_config)
    expected = git_files(repo)
    assert walked(repo) == expected
    # The scenarios the patterns were written for, spelled out.
    assert "important.log" in expected and "debug.log" not in expected
    assert "secret/allowed.txt" not in expected  # no re-include inside an excluded dir
    assert "cache/keep.txt" in expected  # cache/** leaves cache/ itself walkable
    assert "vendor/keep/kept.js" in expected
    assert "sub/x.log" in expected  # the deeper .gitignore wins
    assert "sub/inner/local.txt" in expected
    assert "sub/deeper/anchored.txt" in expected and "sub/anchored.txt" not in expected
    assert "space " not in expected and "space" in expected
    assert "#hash.txt" not in expected and "!bang.txt" not in expected
    assert "from-info-exclude.txt" not in expected
    assert "global-ignored.txt" not in expected
    assert ".github/workflows/ci.yml" in expected
    assert "unicodé/ñame.py" in expected and "with space/file name.txt" in expected


def test_walk_is_sorted_by_path(tmp_path: Path, _git_sees_no_user_config: Path) -> None:
    repo = make_tricky_repo(tmp_path / "repo", _git_sees_no_user_config)
    write(repo, "a-b.txt")
    write(repo, "a0.txt")
    paths = [e.path for e in walk(repo, NO_EXTRA_RULES)]
    assert paths == sorted(paths)


def test_ignore_matcher_agrees_with_git_check_ignore(tmp_path: Path, _git_sees_no_user_config: Path) -> None:
    repo = make_tricky_repo(tmp_path / "repo", _git_sees_no_user_config)
    matcher = IgnoreMatcher(repo, NO_EXTRA_RULES)
    files = all_files(repo)
    listed = git_files(repo)
    # check-ignore judges a path by the patterns alone; a file git hides because its
    # directory is excluded is still "not ignored" to it when a negation matches.
    ignored_by_git = git_ignored(repo, files)
    for rel in files:
        assert matcher.ignored(rel) == (rel not in listed), rel
        if rel in ignored_by_git:
            assert matcher.ignored(rel), rel
    for directory in ("build", "secret", "src/build", "x/dironly", "vendor/drop"):
        assert matcher.ignored(directory, is_dir=True), directory
        assert git_ignored(repo, [directory]) == {directory}
    for directory in ("cache", "vendor/keep", "sub", "docs"):
        assert not matcher.ignored(directory, is_dir=True), directory


def test_workspace_inside_a_repository_uses_the_gitignores_above_it(
    tmp_path: Path, _git_sees_no_user_config: Path
) -> None:
    repo = make_tricky_repo(tmp_path / "repo", _git_sees_no_user_config)
    expected = {p[len("sub/") :] for p in git_files(repo) if p.startswith("sub/")}
    assert walked(repo / "sub") == expected
    assert "x.log" in expected and "inner/y.log" in expected


def test_gitignore_applies_in_a_directory_that_is_not_a_git_repository(tmp_path: Path) -> None:
    root = tmp_path / "plain"
    write(root, ".gitignore", "*.log\nbuild/\n")
    write(root, "a.py")
    write(root, "a.log")
    write(root, "build/x.py")
    assert walked(root) == {".gitignore", "a.py"}


def test_respect_gitignore_off_walks_ignored_files_but_never_dot_git(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    write(root, ".gitignore", "*.log\n")
    write(root, "a.log")
    settings = IndexSettings(exclude=(), index_dir="", respect_gitignore=False)
    assert walked(root, settings) == {".gitignore", "a.log"}


def test_core_excludes_file_from_git_config_is_honoured(
    tmp_path: Path, _git_sees_no_user_config: Path
) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    excludes = tmp_path / "my-excludes"
    excludes.write_text("*.bak\n", encoding="utf-8")
    git(root, "config", "core.excludesFile", str(excludes))
    write(root, "a.bak")
    write(root, "a.py")
    assert walked(root) == git_files(root) == {"a.py"}


def test_crlf_and_bom_in_gitignore_are_read_as_git_reads_them(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    (root / ".gitignore").write_bytes(b"\xef\xbb\xbf*.log\r\n!keep.log\r\n")
    for name in ("a.log", "keep.log", "a.py"):
        write(root, name)
    assert walked(root) == git_files(root) == {".gitignore", "keep.log", "a.py"}


# --- randomized: seeded random rule sets against git -----------------------------

_PATTERN_POOL = [
    "*.log",
    "!*.log",
    "a",
    "a/",
    "!a/",
    "/a",
    "b/",
    "!b",
    "a/b",
    "a/**",
    "!a/keep.log",
    "**/b",
    "**/b/",
    "a/**/c.txt",
    "*/c.txt",
    "[ab]",
    "[!a]/",
    "c.*",
    "!c.txt",
    "?.txt",
    "*",
    "!*/",
    "d[a-c]",
    "/b/*.log",
    "**",
    "!**/keep.log",
    "*.txt ",
    "a/b/",
    "!a/b/c.txt",
    "e",
    "!e",
    "/e",
    "a/e",
]
_TREE = [
    f"{d}{name}"
    for d in ("", "a/", "b/", "a/b/", "b/a/", "a/b/c/", "da/", "db/", "dz/")
    for name in ("c.txt", "x.log", "keep.log", "a.txt", "e")
]


@pytest.mark.parametrize("seed", range(40))
def test_random_rule_sets_agree_with_git(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    for rel in _TREE:
        write(root, rel)
    for directory in ("", "a/", "b/", "a/b/"):
        if (root / directory).is_dir() and rng.random() < (0.9 if not directory else 0.4):
            lines = rng.sample(_PATTERN_POOL, rng.randint(1, 6))
            write(root, f"{directory}.gitignore", "\n".join(lines) + "\n")
    expected = git_files(root)
    assert walked(root) == expected, (seed, {p.read_text() for p in root.rglob(".gitignore")})
    matcher = IgnoreMatcher(root, NO_EXTRA_RULES)
    for rel in all_files(root):
        assert matcher.ignored(rel) == (rel not in expected), (seed, rel)
