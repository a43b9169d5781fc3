"""Which file events reach a project's writer (LSP didChangeWatchedFiles and our own watcher)."""

from __future__ import annotations

from pathlib import Path

import pytest

from codesift.indexer.settings import Settings
from codesift.server.projects import Embedders, Project

from ..conftest import write_workspace


def test_file_events_for_the_index_its_git_and_ignored_paths_are_dropped(tmp_path: Path) -> None:
    root = write_workspace(tmp_path / "ws")
    (root / ".gitignore").write_text("build/\n", encoding="utf-8")
    project = Project(root, Settings(), Embedders())
    try:
        assert project.wants_change("app/auth.py")
        assert project.wants_change("app/new_file.py")
        assert project.wants_change(".gitignore")
        # A client watching "**/*" reports the index's own writes: re-checking them would loop.
        assert not project.wants_change(".codesift/.lock")
        assert not project.wants_change(".codesift/chunks.lance/_versions/3.manifest")
        assert not project.wants_change(".git/index")
        assert not project.wants_change("build/out.py")
    finally:
        project.close()


def test_vectors_of_open_then_recently_saved_files_go_first(tmp_path: Path) -> None:
    root = write_workspace(tmp_path / "ws")
    project = Project(root, Settings(), Embedders())
    try:
        project.open_files.update(dict.fromkeys(["app/auth.py", "app/config.py"]))
        project.writer.changed(["app/upload.py", "app/auth.py"])
        project.writer.changed(["lib/old.py", "app/upload.py"])
        # Last opened first, then last saved first; a path is named once.
        assert project.writer.vectors_first() == [
            "app/config.py",
            "app/auth.py",
            "app/upload.py",
            "lib/old.py",
        ]
    finally:
        project.close()


def test_the_recent_paths_are_bounded(tmp_path: Path) -> None:
    from codesift.server.writer import RECENT_PATHS

    project = Project(write_workspace(tmp_path / "ws"), Settings(), Embedders())
    try:
        project.writer.changed(f"gen/m{i}.py" for i in range(RECENT_PATHS + 50))
        first = project.writer.vectors_first()
        assert len(first) == RECENT_PATHS and first[0] == f"gen/m{RECENT_PATHS + 49}.py"
    finally:
        project.close()


def test_the_writers_vectors_job_hands_the_engine_those_paths_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import codesift.server.writer as writer

    seen: list[list[str]] = []
    monkeypatch.setattr(writer, "embed_vectors", lambda *a, **k: seen.append(list(k["first"])) or 0)
    project = Project(write_workspace(tmp_path / "ws"), Settings(), Embedders())
    try:
        project.open_files["app/auth.py"] = None
        project.writer._vectors()
        assert seen == [["app/auth.py"]]
    finally:
        project.close()


def test_status_says_changes_are_queued_until_the_debounced_re_index_has_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import codesift.server.writer as writer

    monkeypatch.setattr(writer, "DEBOUNCE_S", 60.0)  # the saved file waits: nothing runs yet
    project = Project(write_workspace(tmp_path / "ws"), Settings(), Embedders())
    try:
        project.writer.wait_idle(30)
        assert project.doing() == "idle"
        project.writer.changed(["app/auth.py"])
        assert project.activity == "idle"  # no job has started
        assert project.doing() == "changes queued"
    finally:
        project.close()
