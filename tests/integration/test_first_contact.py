"""A new user's first commands: any file name, the index asked for, hostile input."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from codesift.indexer.settings import load_settings
from codesift.indexer.store import Store
from codesift.indexer.sync import index_status, index_uri_for, index_workspace

from ..conftest import write_workspace

pytestmark = pytest.mark.slow

CODESIFT = [sys.executable, "-m", "codesift.server.cli"]


def run_cli(
    *args: str, cwd: Path | None = None, timeout: float = 120, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CODESIFT, *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=timeout,
        env={**os.environ, **(env or {})},
    )


# ----- any file name ---------------------------------------------------------------------


def _latin1_workspace(tmp_path: Path) -> Path:
    root = write_workspace(tmp_path / "ws", {"good.py": "def good_one():\n    return 1\n"})
    bad = os.path.join(os.fsencode(root), b"latin1_\xff.py")
    with open(bad, "wb") as fh:
        fh.write(b"def latin_named_function():\n    return 'caf\xe9'\n")
    return root


def test_a_file_name_that_is_not_utf8_is_indexed_under_its_quoted_form(tmp_path: Path) -> None:
    root = _latin1_workspace(tmp_path)
    report = index_workspace(root, load_settings(root), embed=False)
    assert report.files_changed == 2 and report.files_failed == 0
    store = Store(index_uri_for(root, load_settings(root)))
    assert set(store.file_records()) == {"good.py", '"latin1_\\377.py"'}
    st = index_status(root, load_settings(root))
    assert st.files_indexed == 2 and st.chunks >= 2


def test_cli_index_grep_and_symbols_take_a_file_name_that_is_not_utf8(tmp_path: Path) -> None:
    root = _latin1_workspace(tmp_path)
    done = run_cli("index", str(root), "--no-embed")
    assert done.returncode == 0, done.stderr
    grep = run_cli("grep", "latin_named_function", "--root", str(root), "--json")
    assert grep.returncode == 0, grep.stderr
    assert [p["path"] for p in json.loads(grep.stdout)["passages"]] == ['"latin1_\\377.py"']
    syms = run_cli("symbols", "latin_named_function", "--root", str(root), "--json")
    assert syms.returncode == 0, syms.stderr
    assert json.loads(syms.stdout)["symbols"][0]["symbol"]["path"] == '"latin1_\\377.py"'


# ----- the index you asked for -----------------------------------------------------------


READ_ONLY = (
    ("search", "help text"),
    ("search", "help text", "--mode", "bm25"),
    ("symbols", "good_one"),
    ("callers", "good_one"),
    ("callees", "good_one"),
    ("impls", "good_one"),
    ("research", "what calls good_one"),
)


@pytest.mark.parametrize("args", READ_ONLY, ids=lambda a: " ".join(a))
def test_read_only_commands_without_an_index_write_nothing_and_exit_1(
    tmp_path: Path, args: tuple[str]
) -> None:
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    (scratch / "a.py").write_text("def good_one():\n    return 1\n")
    res = run_cli(*args, cwd=scratch)
    assert res.returncode == 1, res.stderr
    assert "no codesift index" in res.stderr
    assert sorted(p.name for p in scratch.iterdir()) == ["a.py"]


def test_status_and_grep_without_an_index_write_nothing(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    status = run_cli("status", str(tmp_path))
    assert status.returncode == 1 and "no index" in status.stderr
    grep = run_cli("grep", "x", "--root", str(tmp_path))
    assert grep.returncode == 0, grep.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.py"]


@pytest.fixture(scope="module")
def scratch_with_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An indexed scratch folder holding an unindexed git checkout and an unindexed plain folder."""
    scratch = write_workspace(
        tmp_path_factory.mktemp("first") / "scratch",
        {"scratch_only.py": "def help_text():\n    pass\n"},
        git=False,
    )
    index_workspace(scratch, load_settings(scratch), embed=False)
    write_workspace(scratch / "checkout", {"mine.py": "def help_text_mine():\n    pass\n"})
    write_workspace(scratch / "plain" / "sub", {"p.py": "def help_text_plain():\n    pass\n"}, git=False)
    return scratch


def test_root_means_that_folders_index_and_no_other(scratch_with_index: Path) -> None:
    checkout = scratch_with_index / "checkout"
    for args in (("search", "help_text", "--mode", "bm25"), ("symbols", "help_text")):
        res = run_cli(*args, "--root", str(checkout), cwd=checkout)
        assert res.returncode == 1, res.stdout
        assert f"no codesift index for {checkout}" in res.stderr
    assert not (checkout / ".codesift").exists()


def test_an_index_above_another_repository_never_answers_for_it(scratch_with_index: Path) -> None:
    checkout = scratch_with_index / "checkout"
    res = run_cli("symbols", "help_text", "--json", cwd=checkout)
    assert res.returncode == 1 and "scratch_only.py" not in res.stdout
    grep = run_cli("grep", "help_text", "--json", cwd=checkout)
    data = json.loads(grep.stdout)
    assert data["index_root"] == str(checkout)
    assert [p["path"] for p in data["passages"]] == ["mine.py"]


def test_the_nearest_index_of_the_same_repository_answers_and_is_named(scratch_with_index: Path) -> None:
    below = scratch_with_index / "plain" / "sub"
    res = run_cli("symbols", "help_text", "--json", cwd=below)
    assert res.returncode == 0, res.stderr
    data = json.loads(res.stdout)
    assert data["index_root"] == str(scratch_with_index)
    assert data["symbols"][0]["symbol"]["path"] == "scratch_only.py"
    text = run_cli("search", "help_text", "--mode", "bm25", cwd=below)
    assert text.returncode == 0, text.stderr
    assert f"index: {scratch_with_index}" in text.stderr
    as_json = json.loads(run_cli("search", "help_text", "--mode", "bm25", "--json", cwd=below).stdout)
    assert as_json["index_root"] == str(scratch_with_index)
    status = run_cli("status", "--json", cwd=below)
    assert status.returncode == 0 and json.loads(status.stdout)["index_root"] == str(scratch_with_index)
    named = run_cli("status", str(below), cwd=below)  # a folder named is that folder's index only
    assert named.returncode == 1 and "no index for" in named.stderr
    missing = run_cli("symbols", "x", "--root", str(below / "nowhere"))
    assert missing.returncode == 2 and "no such folder" in missing.stderr


# ----- hostile numbers and globs ---------------------------------------------------------


HOSTILE = (
    ("search", "good", "--mode", "bm25", "--limit", "1000000000"),
    ("search", "good", "--mode", "bm25", "--hops", "1000000000"),
    ("search", "good", "--mode", "bm25", "--semantic-weight", "nan"),
    ("search", "good", "--mode", "bm25", "--include", "a" * 100_000),
    ("grep", "good", "--context", "1000000000"),
    ("grep", "good", "--max-matches", "-5"),
    ("grep", "good", "--include", "a" * 100_000),
    ("symbols", "good", "--limit", "1000000000"),
    ("research", "what calls good_one", "--depth", "1000000000"),
)


@pytest.mark.parametrize("args", HOSTILE, ids=lambda a: " ".join(x[:20] for x in a))
def test_hostile_numbers_and_globs_get_a_clear_error_and_exit_2_fast(
    scratch_with_index: Path, args: tuple[str, ...]
) -> None:
    started = time.monotonic()
    res = run_cli(*args, "--root", str(scratch_with_index), timeout=60)
    assert res.returncode == 2, (res.stdout[-500:], res.stderr[-500:])
    assert res.stderr.startswith("codesift: ") and "Traceback" not in res.stderr
    assert len(res.stderr) < 500
    assert time.monotonic() - started < 20


def test_an_empty_or_whitespace_query_returns_no_hits_and_no_error(scratch_with_index: Path) -> None:
    from codesift.indexer.search.hybrid import search
    from codesift.indexer.search.results import SearchRequest
    from codesift.indexer.sync import open_store

    settings = load_settings(scratch_with_index)
    store = open_store(scratch_with_index, settings)
    for query in ("", "   ", "\t\n"):
        result = search(store, SearchRequest(query=query, mode="bm25"), settings, root=scratch_with_index)
        assert result.hits == () and "empty query" in result.report.notes[0]
    res = run_cli("search", "  ", "--mode", "bm25", "--json", "--root", str(scratch_with_index))
    assert res.returncode == 0 and json.loads(res.stdout)["hits"] == [], res.stderr


# ----- without a model -------------------------------------------------------------------


def test_without_the_model_text_search_indexes_and_answers_and_vectors_follow_later(tmp_path: Path) -> None:
    root = write_workspace(tmp_path / "ws")
    no_model = {"CODESIFT_MODEL_DIR": str(tmp_path / "nowhere")}
    done = run_cli("index", str(root), "--json", env=no_model)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["files_changed"] == 5 and report["chunks_embedded"] == 0 and report["vectors_pending"] > 0
    assert "semantic search is off" in report["note"] and "model" in report["note"]
    assert run_cli("index", str(root), "--no-embed", env=no_model).returncode == 0

    found = run_cli("search", "parse_config", "--json", "--root", str(root), env=no_model)
    assert found.returncode == 0, found.stderr
    data = json.loads(found.stdout)
    assert data["hits"][0]["path"] == "app/config.py"
    # The fast tier needs no transformer: the static model answers the vector source,
    # and the report says why MiniLM did not.
    assert data["report"]["vector_model"].startswith("static:")
    assert any("the main model is not loaded" in n and "model" in n for n in data["report"]["notes"])
    syms = run_cli("symbols", "parse_config", "--root", str(root), env=no_model)
    assert syms.returncode == 0 and "app/config.py" in syms.stdout

    # The model is back: the same index gets its vectors, no rebuild.
    again = json.loads(run_cli("index", str(root), "--json").stdout)
    assert not again["rebuilt"] and again["chunks_embedded"] > 0 and again["vectors_pending"] == 0


# ----- output for pipes ------------------------------------------------------------------


def test_output_to_a_pipe_is_unwrapped_with_phase_times_and_singular_counts(tmp_path: Path) -> None:
    long_name = "a_function_name_long_enough_to_pass_eighty_columns_when_printed_with_its_line_number"
    text = (
        f"def {long_name}(argument_one, argument_two):\n    return argument_one\n\n\n"
        f"def user():\n    return {long_name}(1, 2)\n"
    )
    root = write_workspace(tmp_path / "ws", {"long.py": text})
    done = run_cli("index", str(root), "--no-embed")
    assert done.returncode == 0, done.stderr
    assert "[walk " in done.stdout and "parse " in done.stdout
    grep = run_cli("grep", long_name, "--root", str(root))
    assert f"     1: def {long_name}(argument_one, argument_two):" in grep.stdout.splitlines()
    callers = run_cli("callers", long_name, "--root", str(root))
    assert "— 1 caller" in callers.stdout and "1 callers" not in callers.stdout
