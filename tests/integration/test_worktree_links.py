"""Worktrees sharing one copy of their index files by hard links (``indexer/clone.py``).

Real git worktrees, real LanceDB, the real model: a new worktree's index starts as
hard links to a sibling's, answers for its own project name, survives whatever the
sibling deletes, compacts and prunes, and a kill -9 mid-clone leaves no index or a
whole one.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

import lancedb
import pytest

from codesift.indexer.compaction import EXTRA, pylance_installed
from codesift.indexer.embed import Embedder, make_embedder
from codesift.indexer.freshen import reindex_paths
from codesift.indexer.model import IndexReport
from codesift.indexer.search.hybrid import search
from codesift.indexer.search.results import Filters, SearchRequest
from codesift.indexer.settings import Settings, load_settings
from codesift.indexer.store import CHUNKS, FILES, Store
from codesift.indexer.sync import index_uri_for, index_workspace, open_store

from ..conftest import write_workspace
from .test_crash import index as index_run

pytestmark = pytest.mark.slow

CODESIFT = [sys.executable, "-m", "codesift.server.cli"]
GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@t",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@t",
}


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    return make_embedder(Settings().embed)


def git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-C", str(root), *args], check=True, capture_output=True, env={**os.environ, **GIT_ENV}
    )


def repository(path: Path) -> Path:
    main = write_workspace(path)
    git(main, "add", "-A")
    git(main, "commit", "-qm", "x")
    return main


def worktree(main: Path, path: Path) -> Path:
    git(main, "worktree", "add", "-q", str(path))
    return path


def linked_worktree(
    tmp_path: Path, embedder: Embedder, name: str = "feature"
) -> tuple[Path, Path, IndexReport]:
    """A repository indexed, then a worktree of it indexed after it (linked): both, and
    the worktree's report."""
    main = repository(tmp_path / "main")
    index_workspace(main, load_settings(main), embedder=embedder)
    tree = worktree(main, tmp_path / name)
    return main, tree, index_workspace(tree, load_settings(tree), embedder=embedder)


def disk(*folders: Path) -> int:
    """Bytes under ``folders``, a file linked under several names counted once (as ``du``)."""
    seen = {}
    for folder in folders:
        for f in folder.rglob("*"):
            if f.is_file():
                st = f.lstat()
                seen[(st.st_dev, st.st_ino)] = st.st_size
    return sum(seen.values())


def files_state(folder: Path) -> dict[str, tuple[int, int, str]]:
    """Every file of an index: (inode, mtime, content digest); the writer lock left out."""
    return {
        str(f.relative_to(folder)): (
            f.stat().st_ino,
            f.stat().st_mtime_ns,
            hashlib.sha1(f.read_bytes()).hexdigest(),
        )
        for f in folder.rglob("*")
        if f.is_file() and f.name != ".lock"
    }


def hits(
    root: Path, embedder: Embedder, query: str, mode: str = "hybrid", projects: tuple[str, ...] = ()
) -> list[str]:
    settings = load_settings(root)
    request = SearchRequest(query, mode=mode, filters=Filters(projects=projects))  # type: ignore[arg-type]
    found = search(open_store(root, settings), request, settings, root=root, embedder=embedder)
    return [f"{h.chunk.project}:{h.chunk.path}" for h in found.hits]


def test_five_worktrees_share_one_copy_of_their_index_and_a_branch_switch_reindexes_what_differs(
    tmp_path: Path, embedder: Embedder
) -> None:
    main = repository(tmp_path / "wt0")
    index_workspace(main, load_settings(main), embedder=embedder)
    trees = [main]
    for i in range(1, 5):
        tree = worktree(main, tmp_path / f"wt{i}")
        t = time.perf_counter()
        report = index_workspace(tree, load_settings(tree), embedder=embedder)
        took = time.perf_counter() - t
        assert report.files_linked == 5 and report.files_changed == 0 and report.chunks_embedded == 0
        assert report.bytes_linked > 0 and not report.rebuilt
        assert took < 30  # seconds of copying, never minutes of embedding (a loaded machine: wide)
        trees.append(tree)
    indexes = [t / ".codesift" for t in trees]
    # The rows are on the disk once: each clone adds only its manifests, its own project
    # column and its files rows with this checkout's mtimes (~17 KB each here, beside
    # ~85 KB of linked files; the rest of the sibling's 108 KB is its old versions).
    for index in indexes[1:]:
        own = sum(f.stat().st_size for f in index.rglob("*") if f.is_file() and f.stat().st_nlink == 1)
        assert own < 0.3 * disk(index)
    assert disk(*indexes) < 0.5 * sum(disk(i) for i in indexes)
    for tree in trees:
        found = hits(tree, embedder, "retry the upload")
        assert found and found[0] == f"{tree.name}:app/upload.py"

    # A branch switch in one worktree: only the files that differ are parsed and embedded.
    feature = trees[2]
    git(feature, "checkout", "-q", "-b", "topic")
    (feature / "app/upload.py").write_text("def retry_upload(client, blob):\n    return client.send(blob)\n")
    (feature / "app/ledger.py").write_text("def settle_ledger(ledger):\n    return sum(ledger)\n")
    git(feature, "add", "-A")
    git(feature, "commit", "-qm", "topic")
    report = index_workspace(feature, load_settings(feature), embedder=embedder)
    assert report.files_changed == 2 and report.chunks_embedded <= 2
    assert hits(feature, embedder, "settle the ledger")[0] == "wt2:app/ledger.py"
    assert "wt0:app/ledger.py" not in hits(main, embedder, "settle the ledger")  # the sibling's own rows
    assert disk(*indexes) < 0.5 * sum(disk(i) for i in indexes)


def test_a_linked_worktree_answers_a_project_filter_for_its_own_name(
    tmp_path: Path, embedder: Embedder
) -> None:
    main, feature, report = linked_worktree(tmp_path, embedder)
    assert report.files_linked == 5

    # the column the project filter reads says this worktree's name on every row
    chunks = lancedb.connect(index_uri_for(feature, load_settings(feature))).open_table(CHUNKS).to_arrow()
    assert set(chunks.column("project").to_pylist()) == {"feature"}
    for mode in ("hybrid", "bm25", "vector"):
        own = hits(feature, embedder, "retry the upload", mode, projects=("feature",))
        assert own and all(h.startswith("feature:") for h in own), mode
        assert hits(feature, embedder, "retry the upload", mode, projects=("main",)) == [], mode
        assert hits(main, embedder, "retry the upload", mode, projects=("main",)), mode
        assert hits(main, embedder, "retry the upload", mode, projects=("feature",)) == [], mode

    cli = subprocess.run(
        [*CODESIFT, "search", "retry the upload", "--root", str(feature), "--project", "feature", "--json"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    answer = json.loads(cli.stdout)
    assert answer["hits"] and {h["project"] for h in answer["hits"]} == {"feature"}


def test_a_linked_index_survives_what_its_sibling_deletes_compacts_and_prunes(
    tmp_path: Path, embedder: Embedder
) -> None:
    main = repository(tmp_path / "main")
    index_workspace(main, load_settings(main), embedder=embedder)
    # history before the clone: deletion files, a second fragment, index deltas, old versions
    (main / "app/auth.py").write_text("def check_credentials(user, password):\n    return bool(password)\n")
    git(main, "commit", "-qam", "edit")
    index_workspace(main, load_settings(main), embedder=embedder)
    feature = worktree(main, tmp_path / "feature")
    assert index_workspace(feature, load_settings(feature), embedder=embedder).files_linked == 5
    mine, theirs = (
        Path(index_uri_for(feature, load_settings(feature))),
        Path(index_uri_for(main, load_settings(main))),
    )
    assert disk(mine) + disk(theirs) - disk(mine, theirs) > 0  # files shared by links
    before = files_state(mine)
    expect = hits(feature, embedder, "retry the upload")

    # The sibling deletes files, rewrites one, compacts and prunes every old version...
    (main / "app/upload.py").unlink()
    (main / "app/config.py").write_text("def read_settings(path):\n    return open(path).read()\n")
    index_workspace(main, load_settings(main), embedder=embedder)
    time.sleep(0.01)
    Store(str(theirs)).optimize(timedelta(milliseconds=1))
    assert "main:app/upload.py" not in hits(main, embedder, "retry the upload")
    # ...then is dropped altogether (`codesift index --rebuild` removes the folder first).
    Store(str(theirs)).drop_everything()
    assert not theirs.exists()

    assert files_state(mine) == before  # not one of this index's files changed or went away
    assert hits(feature, embedder, "retry the upload") == expect
    for mode in ("vector", "bm25"):
        assert hits(feature, embedder, "retry the upload", mode)[0] == "feature:app/upload.py"
    assert hits(feature, embedder, "check the credentials")[0] == "feature:app/auth.py"
    store = open_store(feature, load_settings(feature))
    assert store.count(FILES) == 5 and store.count(CHUNKS) == store.count(CHUNKS, "has_vector = true") > 0
    for name in (FILES, CHUNKS, "symbols", "edges"):  # every row of every table reads whole
        assert store.table(name).to_arrow().num_rows == store.count(name)


def test_the_clones_own_writes_never_touch_the_siblings_files(tmp_path: Path, embedder: Embedder) -> None:
    main = repository(tmp_path / "main")
    index_workspace(main, load_settings(main), embedder=embedder)
    theirs = Path(index_uri_for(main, load_settings(main)))
    before = files_state(theirs)
    feature = worktree(main, tmp_path / "feature")
    index_workspace(feature, load_settings(feature), embedder=embedder)
    # adds, deletes, vectors merged in, indices folded, compaction, pruning: all in the clone
    (feature / "app/ledger.py").write_text("def settle_ledger(ledger):\n    return sum(ledger)\n")
    (feature / "app/auth.py").unlink()
    (feature / "app/config.py").write_text("def read_settings(path):\n    return open(path).read()\n")
    index_workspace(feature, load_settings(feature), embedder=embedder)
    time.sleep(0.01)
    Store(index_uri_for(feature, load_settings(feature))).optimize(timedelta(milliseconds=1))
    assert files_state(theirs) == before
    assert hits(main, embedder, "check the credentials")[0] == "main:app/auth.py"


@pytest.mark.parametrize("point", ["clone:1", "clone:3", "clone-meta", "parse"])
def test_a_clone_killed_half_way_leaves_no_index_or_a_whole_one(tmp_path: Path, point: str) -> None:
    main = repository(tmp_path / "main")
    assert index_run(main).returncode == 0
    feature = worktree(main, tmp_path / "feature")
    (feature / "app/ledger.py").write_text("def settle_ledger(ledger):\n    return sum(ledger)\n")

    killed = index_run(feature, point)
    assert killed.returncode == -9, killed.stderr
    uri = index_uri_for(feature, load_settings(feature))
    store = Store(uri)
    if point.startswith("clone"):
        assert store.read_meta() is None  # no index: the next run starts over
        with pytest.raises(Exception, match="codesift index"):
            open_store(feature, load_settings(feature))
    else:  # killed after the clone: a whole index, the sibling's rows, this worktree's name
        assert store.read_meta() is not None and store.count(FILES) == 5
        assert set(store.table(CHUNKS).to_arrow().column("project").to_pylist()) == {"feature"}

    done = index_run(feature)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["files_linked"] == 5 or (point == "parse" and report["files_changed"] == 1)
    assert not list(Path(uri).glob(".clone-*"))  # no staging folder left behind
    settings = load_settings(feature)
    store = open_store(feature, settings)
    assert store.count(FILES) == 6 and store.count(CHUNKS, "has_vector = false") == 0
    assert set(store.table(CHUNKS).to_arrow().column("project").to_pylist()) == {"feature"}


def test_an_index_due_for_a_rebuild_takes_a_siblings_built_as_wanted(
    tmp_path: Path, embedder: Embedder
) -> None:
    main = repository(tmp_path / "main")
    index_workspace(main, load_settings(main), embedder=embedder)
    feature = worktree(main, tmp_path / "feature")
    (feature / ".codesift.toml").write_text("[chunk]\nmax_lines = 40\n")  # built otherwise: its own index
    alone = index_workspace(feature, load_settings(feature), embedder=embedder)
    assert alone.files_linked == 0 and alone.rebuilt

    (feature / ".codesift.toml").unlink()  # now built as the sibling is: linked, not rebuilt
    report = index_workspace(feature, load_settings(feature), embedder=embedder)
    assert report.files_linked == 5 and report.files_changed == 0 and report.chunks_embedded == 0
    assert hits(feature, embedder, "retry the upload")[0] == "feature:app/upload.py"


def test_a_clone_of_a_clone_holds_every_file_its_rows_need(tmp_path: Path, embedder: Embedder) -> None:
    """A linked index's fragments have several data files (its own project column, vectors
    merged in later): a clone of it must link every one, whoever drops what afterwards."""
    main, first, report = linked_worktree(tmp_path, embedder, "first")
    assert report.files_linked == 5
    (first / "app/ledger.py").write_text("def settle_ledger(ledger):\n    return sum(ledger)\n")
    index_workspace(first, load_settings(first), embedder=embedder)  # rows added, vectors merged
    Store(
        index_uri_for(main, load_settings(main))
    ).drop_everything()  # main's index gone: first is the sibling

    second = worktree(main, tmp_path / "second")
    (second / "app/ledger.py").write_text("def settle_ledger(ledger):\n    return sum(ledger)\n")
    report = index_workspace(second, load_settings(second), embedder=embedder)
    assert report.files_linked == 6 and report.files_changed == 0 and report.chunks_embedded == 0
    Store(index_uri_for(first, load_settings(first))).drop_everything()

    store = open_store(second, load_settings(second))
    for name in (FILES, CHUNKS, "symbols", "edges", "meta"):  # every column of every row reads
        assert store.table(name).to_arrow().num_rows == store.count(name) > 0
    assert set(store.table(CHUNKS).to_arrow().column("project").to_pylist()) == {"second"}
    assert hits(second, embedder, "settle the ledger")[0] == "second:app/ledger.py"


def shared_data_files(mine: Path, theirs: Path) -> set[str]:
    """Data files of ``mine`` that are the same inode as one of ``theirs`` (a hard link)."""
    inodes = {f.stat().st_ino for f in theirs.rglob("data/*.lance")}
    return {str(f.relative_to(mine)) for f in mine.rglob("data/*.lance") if f.stat().st_ino in inodes}


def save(root: Path, embedder: Embedder, rel: str, text: str) -> None:
    """A save through the editor's path (``freshen.reindex_paths``)."""
    (root / rel).write_text(text)
    reindex_paths(root, load_settings(root), [rel], embedder=embedder)


CONFIG = "def read_settings(path):\n    return open(path).read()  # {}\n"
QUERIES = ("retry the upload", "check the credentials", "settle the ledger", "read the settings file")


@pytest.mark.skipif(
    not pylance_installed(), reason=f"needs {EXTRA}: LanceDB's optimize rewrites shared files"
)
def test_a_linked_worktree_keeps_sharing_its_siblings_files_through_saves_and_an_optimize(
    tmp_path: Path, embedder: Embedder
) -> None:
    main, feature, report = linked_worktree(tmp_path, embedder)
    assert report.files_linked == 5
    theirs = Path(index_uri_for(main, load_settings(main)))
    mine = Path(index_uri_for(feature, load_settings(feature)))
    linked = {f: (mine / f).stat().st_size for f in shared_data_files(mine, theirs)}
    assert linked and all((mine / f).stat().st_nlink > 1 for f in linked)
    sibling = files_state(theirs)

    # saves of every kind: a file edited many times, a new file, a file removed
    for i in range(12):
        save(feature, embedder, "app/config.py", CONFIG.format(i))
    save(feature, embedder, "app/ledger.py", "def settle_ledger(ledger):\n    return sum(ledger)\n")
    (feature / "README.md").unlink()
    reindex_paths(feature, load_settings(feature), ["README.md"], embedder=embedder)
    time.sleep(0.01)
    Store(str(mine)).optimize(timedelta(milliseconds=1))  # compaction, index folds, pruning

    # The sibling's data files are still the same inodes: those of chunks, symbols and edges
    # all (their rows of unchanged files); the files table's went, with its rows (every
    # files row is this checkout's own: its mtimes).
    still = shared_data_files(mine, theirs)
    assert {f for f in linked if not f.startswith(FILES)} <= still <= set(linked)
    assert sum(linked[f] for f in still) > 0.8 * sum(linked.values())
    store = open_store(feature, load_settings(feature))
    for name in (FILES, CHUNKS, "symbols", "edges"):  # every row of every table reads whole
        assert store.table(name).to_arrow().num_rows == store.count(name)
    assert files_state(theirs) == sibling  # the sibling untouched

    # the answers are a fresh index's of the same files
    fresh = tmp_path / "fresh" / "feature"
    shutil.copytree(feature, fresh, ignore=shutil.ignore_patterns(".codesift", ".git"))
    index_workspace(fresh, load_settings(fresh), embedder=embedder)
    for mode in ("hybrid", "bm25", "vector"):
        for query in QUERIES:
            assert hits(feature, embedder, query, mode) == hits(fresh, embedder, query, mode), (mode, query)
    assert store.count(CHUNKS, "has_vector = false") == 0


@pytest.mark.skipif(not pylance_installed(), reason=f"needs {EXTRA}")
@pytest.mark.parametrize("point", ["compact", "compact-indices"])
def test_a_linked_optimize_killed_half_way_leaves_a_whole_index(
    tmp_path: Path,
    embedder: Embedder,
    point: str,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    main, feature, _ = linked_worktree(tmp_path, embedder)
    for i in range(3):
        save(feature, embedder, "app/config.py", CONFIG.format(i))
    expect = {q: hits(feature, embedder, q) for q in QUERIES}
    mine = Path(index_uri_for(feature, load_settings(feature)))

    monkeypatch.setenv("CODESIFT_KILL_AT", point)  # the optimize's child kills itself there
    time.sleep(0.01)
    Store(str(mine)).optimize(timedelta(milliseconds=1))  # logged, never raised: best effort
    monkeypatch.delenv("CODESIFT_KILL_AT")
    assert "optimising the linked tables" in caplog.text  # the child died at the point
    store = open_store(feature, load_settings(feature))
    for name in (FILES, CHUNKS, "symbols", "edges"):
        assert store.table(name).to_arrow().num_rows == store.count(name)
    assert {q: hits(feature, embedder, q) for q in QUERIES} == expect

    Store(str(mine)).optimize(timedelta(milliseconds=1))  # the next one finishes the work
    assert shared_data_files(mine, Path(index_uri_for(main, load_settings(main))))
    assert {q: hits(feature, embedder, q) for q in QUERIES} == expect


@pytest.mark.skipif(not pylance_installed(), reason=f"needs {EXTRA}")
def test_a_shared_fragment_mostly_deleted_here_is_compacted_into_the_worktrees_own(
    tmp_path: Path, embedder: Embedder
) -> None:
    main, feature, _ = linked_worktree(tmp_path, embedder)
    mine, theirs = (Path(index_uri_for(t, load_settings(t))) for t in (feature, main))
    assert any(f.startswith(CHUNKS) for f in shared_data_files(mine, theirs))
    gone = ["app/auth.py", "app/config.py", "web/client.js", "README.md"]
    for rel in gone:  # every file but one: most rows of the shared fragment are dead here
        (feature / rel).unlink()
    reindex_paths(feature, load_settings(feature), gone, embedder=embedder)
    time.sleep(0.01)
    Store(str(mine)).optimize(timedelta(milliseconds=1))

    assert not any(f.startswith(CHUNKS) for f in shared_data_files(mine, theirs))  # its live rows copied
    store = open_store(feature, load_settings(feature))
    assert store.count(FILES) == 1 and store.table(CHUNKS).to_arrow().num_rows == store.count(CHUNKS) > 0
    assert hits(feature, embedder, "retry the upload")[0] == "feature:app/upload.py"
    assert hits(main, embedder, "retry the upload")[0] == "main:app/upload.py"  # the sibling's rows whole


def vector_segments(index: Path) -> list[str]:
    """The uuids of the chunks' vector index segments (read with pylance)."""
    import lance

    found = lance.dataset(str(index / f"{CHUNKS}.lance")).describe_indices()
    return [str(seg.uuid) for d in found if d.field_names == ["vector"] for seg in d.segments]


@pytest.mark.skipif(not pylance_installed(), reason=f"needs {EXTRA}")
def test_a_linked_worktree_keeps_its_siblings_vector_index_and_adds_its_own_rows_beside_it(
    tmp_path: Path, embedder: Embedder
) -> None:
    ann = {"index": {"vector_index_rows": 4}}  # an approximate vector index even on 5 files
    main = repository(tmp_path / "main")
    index_workspace(main, load_settings(main, ann), embedder=embedder)
    feature = worktree(main, tmp_path / "feature")
    index_workspace(feature, load_settings(feature, ann), embedder=embedder)
    mine = Path(index_uri_for(feature, load_settings(feature)))
    shared = vector_segments(mine)
    assert shared == vector_segments(Path(index_uri_for(main, load_settings(main))))

    for i in range(4):
        (feature / "app/config.py").write_text(CONFIG.format(i))
        reindex_paths(feature, load_settings(feature, ann), ["app/config.py"], embedder=embedder)
    time.sleep(0.01)
    Store(str(mine)).optimize(timedelta(milliseconds=1))

    # the sibling's segment is still this index's, the same files; the new rows in one beside it
    after = vector_segments(mine)
    assert after[: len(shared)] == shared and len(after) == len(shared) + 1
    for uuid in shared:
        files = [p for p in (mine / f"{CHUNKS}.lance" / "_indices" / uuid).rglob("*") if p.is_file()]
        assert files and all(p.stat().st_nlink > 1 for p in files), uuid
    fresh = tmp_path / "fresh" / "feature"
    shutil.copytree(feature, fresh, ignore=shutil.ignore_patterns(".codesift", ".git"))
    index_workspace(fresh, load_settings(fresh, ann), embedder=embedder)
    for query in QUERIES:
        assert hits(feature, embedder, query, "vector")[:3] == hits(fresh, embedder, query, "vector")[:3], (
            query
        )
    assert hits(feature, embedder, "read the settings file", "vector")[0] == "feature:app/config.py"
