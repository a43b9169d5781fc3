"""Separate clones of one repository sharing their index (``index.share_clones``, ``indexer/clones.py``).

Real git clones, real LanceDB, the real model: a second ``git clone`` of a repository
starts from the first clone's index (hard links, as a worktree does), a shallow clone
and a folder outside git neither record nor look, and with the setting off nothing is
written to the user's cache folder.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
from pathlib import Path

import pytest

from codesift.indexer.clones import ID_FILE, clone_indexes, register, registry_dir, repository_id
from codesift.indexer.embed import Embedder, make_embedder
from codesift.indexer.locate import git_common_dir
from codesift.indexer.settings import Settings, load_settings
from codesift.indexer.sync import index_uri_for, index_workspace

from .test_worktree_links import disk, git, hits, repository

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    return make_embedder(Settings().embed)


def clone(source: Path, path: Path, *args: str) -> Path:
    subprocess.run(
        ["git", "clone", "-q", *args, source.as_uri() if args else str(source), str(path)],
        check=True,
        capture_output=True,
    )
    return path


def two_clones(tmp_path: Path, embedder: Embedder) -> tuple[Path, Path, Path]:
    """A repository and two clones of it, the first indexed (and so recorded)."""
    origin = repository(tmp_path / "origin")
    first = clone(origin, tmp_path / "first")
    index_workspace(first, load_settings(first), embedder=embedder)
    return origin, first, clone(origin, tmp_path / "second")


def test_a_second_clone_starts_from_the_first_clones_index_by_hard_links(
    tmp_path: Path, embedder: Embedder
) -> None:
    origin, first, second = two_clones(tmp_path, embedder)

    report = index_workspace(second, load_settings(second), embedder=embedder)

    assert report.files_linked == 5 and report.files_changed == 0 and report.chunks_embedded == 0
    assert report.bytes_linked > 0
    a, b = first / ".codesift", second / ".codesift"
    assert disk(a, b) < 0.7 * (disk(a) + disk(b))  # the rows are on the disk once
    assert hits(second, embedder, "retry the upload")[0] == "second:app/upload.py"
    assert hits(first, embedder, "retry the upload")[0] == "first:app/upload.py"
    # both clones are listed now, newest first, for the next one
    assert [p.name for p, _ in clone_indexes(origin, "")] == ["second", "first"]


def test_the_repository_is_known_by_its_first_commits_in_every_clone_and_remembered(tmp_path: Path) -> None:
    origin = repository(tmp_path / "origin")
    first, second = clone(origin, tmp_path / "a"), clone(origin, tmp_path / "b")
    git(second, "commit", "-q", "--allow-empty", "-m", "later work on a branch")
    ident = repository_id(first)
    assert ident is not None and ident == repository_id(second) == repository_id(origin)
    common = git_common_dir(first)
    assert common is not None and (common / ID_FILE).read_text().strip() == ident

    other = repository(tmp_path / "unrelated")
    git(other, "commit", "-q", "--amend", "-m", "another history")  # the same tree, another first commit
    assert repository_id(other) not in (None, ident)

    shallow = clone(origin, tmp_path / "shallow", "--depth", "1")
    assert repository_id(shallow) is None  # its first commit is a graft, not the repository's
    plain = tmp_path / "plain"
    plain.mkdir()
    assert repository_id(plain) is None


def test_the_list_drops_an_index_that_is_gone_and_answers_only_for_the_same_folder(
    tmp_path: Path, embedder: Embedder
) -> None:
    _, first, second = two_clones(tmp_path, embedder)
    # another folder of the same repository is not the same index
    assert clone_indexes(second / "app", index_uri_for(second / "app", load_settings(second))) == []

    subprocess.run(["rm", "-rf", str(first / ".codesift")], check=True)
    assert clone_indexes(second, index_uri_for(second, load_settings(second))) == []
    register(second, index_uri_for(second, load_settings(second)))  # no index there yet: listed anyway
    listed = json.loads(next(registry_dir().glob("*.json")).read_text())["indexes"]
    assert [e["root"] for e in listed] == [str(second.resolve())]  # the gone one dropped on writing


def test_with_share_clones_off_nothing_is_recorded_and_a_clone_indexes_alone(
    tmp_path: Path, embedder: Embedder
) -> None:
    origin = repository(tmp_path / "origin")
    first = clone(origin, tmp_path / "first")
    off = load_settings(first)
    off = dataclasses.replace(off, index=dataclasses.replace(off.index, share_clones=False))
    index_workspace(first, off, embedder=embedder)
    assert not registry_dir().exists() or not any(registry_dir().iterdir())

    index_workspace(first, load_settings(first), embedder=embedder)  # on: recorded
    second = clone(origin, tmp_path / "second")
    alone = load_settings(second)
    alone = dataclasses.replace(alone, index=dataclasses.replace(alone.index, share_clones=False))
    report = index_workspace(second, alone, embedder=embedder)
    assert report.files_linked == 0 and report.files_from_remote == 0 and report.files_changed == 5


def test_a_list_that_cannot_be_written_leaves_the_index_run_as_it_was(
    tmp_path: Path, embedder: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The user's cache folder is not a folder (as unwritable as it gets, root included):
    the run indexes as before, unrecorded."""
    origin = repository(tmp_path / "origin")
    first = clone(origin, tmp_path / "first")
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocked))
    report = index_workspace(first, load_settings(first), embedder=embedder)
    assert report.files_changed == 5 and report.vectors_pending == 0
    assert clone_indexes(origin, "") == []
