"""One embedding cache per repository, shared by its worktrees' indexes (issue 16, outcome 4).

Real git worktrees, real LanceDB, the real model; concurrent and killed writers are
real processes.
"""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from codesift.indexer.embed import Embedder, make_embedder
from codesift.indexer.embed_cache import CACHE_PREFIX, EmbedCache, shared_cache
from codesift.indexer.freshen import reindex_paths
from codesift.indexer.locate import git_common_dir
from codesift.indexer.settings import Settings, load_settings
from codesift.indexer.store import Store
from codesift.indexer.sync import index_status, index_uri_for, index_workspace, writer_lock
from codesift.indexer.worktrees import SHARED_CACHE, shared_cache_dir

from ..conftest import write_workspace
from .test_remote import commit_all

pytestmark = pytest.mark.slow

DIM = 8
KEY = "test-model@128+path"


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    return make_embedder(Settings().embed)


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], capture_output=True, text=True, check=True).stdout.strip()


def _own_cache_tables(root: Path) -> list[str]:
    return [n for n in Store(str(root / ".codesift")).table_names() if n.startswith(CACHE_PREFIX)]


def _sharing(settings: Settings, on: bool) -> Settings:
    return dataclasses.replace(settings, index=dataclasses.replace(settings.index, share_worktrees=on))


def _repo_with_worktree(tmp_path: Path) -> tuple[Path, Path]:
    main = write_workspace(tmp_path / "main")
    commit_all(main)
    feature = tmp_path / "feature"
    _git("-C", str(main), "worktree", "add", "-q", str(feature))
    return main, feature


def test_git_common_dir_is_the_one_git_names_for_every_worktree(tmp_path: Path) -> None:
    main, feature = _repo_with_worktree(tmp_path)
    (feature / "app" / "deep").mkdir()
    for folder in (main, feature, feature / "app" / "deep"):
        want = _git("-C", str(folder), "rev-parse", "--path-format=absolute", "--git-common-dir")
        assert git_common_dir(folder) == Path(want).resolve()
    assert git_common_dir(tmp_path) is None  # no repository above
    cache = shared_cache_dir(feature, load_settings(feature))
    assert cache == (main / ".git").resolve() / SHARED_CACHE  # outside both work trees
    off = _sharing(load_settings(feature), False)
    assert shared_cache_dir(feature, off) is None
    absolute = dataclasses.replace(off.index, share_worktrees=True, index_dir=str(tmp_path / "one-index"))
    assert shared_cache_dir(feature, dataclasses.replace(off, index=absolute)) is None


def test_a_second_worktree_takes_its_vectors_from_the_repositorys_cache_without_embedding(
    tmp_path: Path, embedder: Embedder
) -> None:
    main, feature = _repo_with_worktree(tmp_path)
    first = index_workspace(main, load_settings(main), embedder=embedder)
    assert first.chunks_embedded > 0
    cache = (main / ".git").resolve() / SHARED_CACHE
    assert any(p.name.startswith(CACHE_PREFIX) for p in cache.iterdir())
    assert _own_cache_tables(main) == []  # the index holds no copy of the vectors

    # The sibling's index busy: nothing is copied from it, every file is parsed here,
    # and every vector comes from the shared cache.
    with writer_lock(index_uri_for(main, load_settings(main)), wait=False):
        report = index_workspace(feature, load_settings(feature), embedder=embedder)
    assert report.files_from_remote == 0 and report.files_changed == first.files_changed
    assert report.chunks_embedded == 0 and report.chunks_from_cache == first.chunks_embedded
    assert report.vectors_pending == 0 and _own_cache_tables(feature) == []

    st = index_status(feature, load_settings(feature))
    assert st.cache_shared and st.cache_path == str(cache) and st.cache_bytes > 0
    out = subprocess.run(
        [sys.executable, "-m", "codesift.server.cli", "status", str(feature), "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert json.loads(out.stdout)["cache_path"] == str(cache)

    # A save in the worktree (the language server's path) reads and writes the same cache.
    (feature / "app" / "ledger.py").write_text("def settle_ledger(ledger):\n    return sum(ledger)\n")
    saved = reindex_paths(feature, load_settings(feature), ["app/ledger.py"], embedder=embedder)
    assert saved.chunks_embedded == 1
    (main / "app" / "ledger.py").write_text("def settle_ledger(ledger):\n    return sum(ledger)\n")
    again = reindex_paths(main, load_settings(main), ["app/ledger.py"], embedder=embedder)
    assert again.changed == ("app/ledger.py",) and again.chunks_embedded == 0 and again.vectors_pending == 0


def test_clones_naming_one_embed_cache_embed_a_text_once(tmp_path: Path, embedder: Embedder) -> None:
    """``index.embed_cache``: two clones (not worktrees: each its own git directory)
    share one cache folder outside both, so the second embeds nothing."""
    origin = write_workspace(tmp_path / "origin")
    commit_all(origin)
    first, second = tmp_path / "first", tmp_path / "second"
    for clone in (first, second):
        _git("clone", "-q", str(origin), str(clone))
    folder = tmp_path / "home" / "emb-cache"

    def settings(root: Path) -> Settings:  # clones that do not start from each other's index
        return load_settings(root, {"index": {"embed_cache": str(folder), "share_clones": False}})

    assert shared_cache_dir(first, settings(first)) == folder
    one = index_workspace(first, settings(first), embedder=embedder)
    assert one.chunks_embedded > 0
    two = index_workspace(second, settings(second), embedder=embedder)
    assert two.files_from_remote == 0 and two.files_changed == one.files_changed  # parsed here
    assert two.chunks_embedded == 0 and two.chunks_from_cache == one.chunks_embedded
    for clone in (first, second):
        assert _own_cache_tables(clone) == []
        assert not (clone / ".git" / SHARED_CACHE).exists()  # not the repository's cache
        st = index_status(clone, settings(clone))
        assert st.cache_shared and st.cache_path == str(folder)
    # Without the setting each clone has a repository cache of its own: the second embeds again.
    (second / ".codesift").rename(tmp_path / "old-index")
    alone = load_settings(second, {"index": {"share_clones": False}})
    again = index_workspace(second, alone, embedder=embedder)
    assert again.chunks_embedded == one.chunks_embedded


def test_with_share_worktrees_off_the_index_keeps_its_own_cache(tmp_path: Path, embedder: Embedder) -> None:
    main, feature = _repo_with_worktree(tmp_path)
    off = _sharing(load_settings(feature), False)
    report = index_workspace(feature, off, embedder=embedder)
    assert report.chunks_embedded > 0
    assert len(_own_cache_tables(feature)) == 1
    assert not (main / ".git" / SHARED_CACHE).exists()
    st = index_status(feature, off)
    assert not st.cache_shared and st.cache_path == str(feature / ".codesift")


def test_an_index_from_before_the_shared_cache_keeps_its_vectors_and_moves_them_there(
    tmp_path: Path, embedder: Embedder
) -> None:
    main, feature = _repo_with_worktree(tmp_path)
    old = index_workspace(main, _sharing(load_settings(main), False), embedder=embedder)
    [table] = _own_cache_tables(main)
    settings = load_settings(main)
    key = settings.vector_cache_key(embedder.model_id)
    hashes = Store(str(main / ".codesift")).table(table).to_arrow().column("content_hash").to_pylist()

    # Before any index run with sharing on, a save's lookups still find the old vectors.
    store = Store(str(main / ".codesift"), cache_dir=shared_cache_dir(main, settings))
    assert store.cache.shared and len(store.cache.lookup(key, embedder.dimension, hashes)) == len(hashes)

    # The next index run moves them into the repository's cache, and embeds nothing.
    report = index_workspace(main, settings, embedder=embedder)
    assert report.chunks_embedded == 0 and _own_cache_tables(main) == []
    shared = _open_shared(tmp_path, shared_cache_dir(main, settings) or Path())
    assert shared.table_names() == [table]
    assert len(shared.lookup(key, embedder.dimension, hashes)) == len(hashes) == old.chunks_embedded
    with writer_lock(index_uri_for(main, settings), wait=False):  # no copy: the cache alone serves it
        assert index_workspace(feature, load_settings(feature), embedder=embedder).chunks_embedded == 0


# ----- concurrent and killed writers ------------------------------------------------

_WRITER = """
import sys
from pathlib import Path
import lancedb, numpy as np
from codesift.indexer.embed_cache import EmbedCache, shared_cache
folder, name, rounds = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
own = EmbedCache(lancedb.connect(sys.argv[4]), sys.argv[4])
cache = shared_cache(folder, own)
print("ready", flush=True)
go = Path(sys.argv[6])
while not go.exists():  # all start at once: the table's creation is raced too
    pass
for i in range(rounds):
    hashes = [f"{name}-{i}-{k}" for k in range(20)] + [f"common-{i}-{k}" for k in range(5)]
    vectors = np.stack([np.full(8, hash(h) % 1000, np.float32) for h in hashes])
    cache.put(sys.argv[5], 8, hashes, vectors)
    print(i, flush=True)
    if i % 5 == 4:
        cache.optimize(__import__("datetime").timedelta(0))
"""


def _writer(tmp_path: Path, folder: Path, name: str, rounds: int) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    own = tmp_path / f"own-{name}"
    go = tmp_path / "go"
    return subprocess.Popen(
        [sys.executable, "-c", _WRITER, str(folder), name, str(rounds), str(own), KEY, str(go)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def _open_shared(tmp_path: Path, folder: Path) -> EmbedCache:
    import lancedb

    own = tmp_path / "own-reader"
    cache = shared_cache(folder, EmbedCache(lancedb.connect(str(own)), str(own)))
    assert cache is not None
    return cache


def test_two_worktrees_writing_the_shared_cache_at_once_lose_nothing(tmp_path: Path) -> None:
    folder = tmp_path / "common" / SHARED_CACHE
    rounds = 15
    writers = [_writer(tmp_path, folder, name, rounds) for name in ("a", "b", "c")]
    for w in writers:
        assert w.stdout is not None and w.stdout.readline().strip() == "ready"
    (tmp_path / "go").touch()
    for w in writers:
        _out, err = w.communicate(timeout=300)
        assert w.returncode == 0, err
    cache = _open_shared(tmp_path, folder)
    want = {f"{n}-{i}-{k}" for n in "abc" for i in range(rounds) for k in range(20)}
    want |= {f"common-{i}-{k}" for i in range(rounds) for k in range(5)}
    got = cache.lookup(KEY, DIM, want)
    assert set(got) == want
    [name] = cache.table_names()
    assert cache._db.open_table(name).count_rows() == len(want)  # each hash once


def test_a_writer_killed_mid_write_leaves_the_shared_cache_whole(tmp_path: Path) -> None:
    folder = tmp_path / "common" / SHARED_CACHE
    env_hash = {**os.environ, "PYTHONHASHSEED": "0"}
    (tmp_path / "go").touch()
    for attempt in range(3):
        w = _writer(tmp_path, folder, f"k{attempt}", 1000)
        assert w.stdout is not None
        assert w.stdout.readline().strip() == "ready"
        w.stdout.readline()  # one put done
        time.sleep(0.05 + 0.1 * attempt)  # then killed wherever it is: mid-merge, mid-compaction
        w.send_signal(signal.SIGKILL)
        w.wait()
    cache = _open_shared(tmp_path, folder)
    [name] = cache.table_names()
    rows = cache._db.open_table(name).to_arrow()
    hashes = rows.column("content_hash").to_pylist()
    assert len(hashes) == len(set(hashes)) > 0
    got = cache.lookup(KEY, DIM, hashes)
    check = subprocess.run(
        [sys.executable, "-c", "import sys; print([hash(h) % 1000 for h in sys.argv[1:]])", *hashes[:50]],
        capture_output=True,
        text=True,
        env=env_hash,
        check=True,
    )
    for h, value in zip(hashes[:50], json.loads(check.stdout), strict=True):
        assert np.all(got[h] == value)  # every row is a whole one a writer wrote
    # the lock died with its holder: the next writer is not blocked
    cache.put(KEY, DIM, ["after-kill"], np.ones((1, DIM), np.float32))
    assert set(cache.lookup(KEY, DIM, ["after-kill"])) == {"after-kill"}
