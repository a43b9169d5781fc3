"""The default exclude list drops virtualenvs, not source folders that happen to be named venv."""

from __future__ import annotations

from pathlib import Path

from codesift.indexer.settings import IndexSettings
from codesift.indexer.workspace import walk


def test_a_venv_folder_of_source_is_indexed_and_a_virtualenv_is_not(tmp_path: Path) -> None:
    (tmp_path / "Lib" / "venv").mkdir(parents=True)  # the standard library's own venv package
    (tmp_path / "Lib" / "venv" / "__init__.py").write_text("def create(): pass\n")
    env = tmp_path / ".venv"
    (env / "lib").mkdir(parents=True)
    (env / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (env / "lib" / "site.py").write_text("x = 1\n")
    conda = tmp_path / "venv"
    (conda / "conda-meta").mkdir(parents=True)
    (conda / "pkg.py").write_text("y = 2\n")
    paths = [e.path for e in walk(tmp_path, IndexSettings())]
    assert paths == ["Lib/venv/__init__.py"]
