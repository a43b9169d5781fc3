"""Which file events reach a project's writer (LSP didChangeWatchedFiles and our own watcher)."""

from __future__ import annotations

from pathlib import Path

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
