"""Bad content never stops the vectors phase: real walk, tree-sitter, LanceDB and model."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from codesift.indexer.embed import Embedder, make_embedder
from codesift.indexer.errors import EmbedError
from codesift.indexer.model import FileStatus
from codesift.indexer.rows import Vectors
from codesift.indexer.settings import load_settings
from codesift.indexer.sync import index_status, index_workspace

from ..conftest import write_workspace

pytestmark = pytest.mark.slow


def bad_corpus(root: Path) -> Path:
    write_workspace(root)
    (root / "long.py").write_text('X = "' + "a" * 30_000 + '"\n')
    (root / "deep.c").write_text("void f() {" + "if (x) {" * 10_000 + "}" * 10_000 + "}\n")
    (root / "deep.js").write_text("if (x) {" * 10_000 + "\n")
    return root


def test_a_long_line_of_repeated_text_and_10k_deep_nesting_leave_no_vector_pending(tmp_path: Path) -> None:
    root = bad_corpus(tmp_path / "ws")
    settings = load_settings(root)
    report = index_workspace(root, settings)
    assert report.vectors_pending == 0
    again = index_workspace(root, settings)  # and every rerun is clean too
    assert again.files_changed == 0 and again.vectors_pending == 0
    st = index_status(root, settings)
    assert st.files_failed == 0 and st.vectors_pending == 0 and st.chunks > 20


class RefusingEmbedder:
    """The real model, refusing any text that holds a marker (fault injection for one file)."""

    def __init__(self, inner: Embedder, marker: str) -> None:
        self._inner = inner
        self._marker = marker

    @property
    def model_id(self) -> str:
        return self._inner.model_id

    @property
    def dimension(self) -> int:
        return self._inner.dimension

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        if any(self._marker in t for t in texts):
            raise EmbedError("the embedding model failed on a batch: simulated")
        return self._inner.embed_documents(texts)

    def embed_query(self, text: str) -> Vectors:
        return self._inner.embed_query(text)


def test_a_file_the_model_refuses_is_reported_and_skipped_and_the_others_get_vectors(tmp_path: Path) -> None:
    root = write_workspace(tmp_path / "ws")
    (root / "poison.py").write_text('def poisoned():\n    return "UNEMBEDDABLE"\n')
    settings = load_settings(root)
    embedder = RefusingEmbedder(make_embedder(settings.embed), "UNEMBEDDABLE")
    report = index_workspace(root, settings, embedder=embedder)
    st = index_status(root, settings)
    assert report.vectors_pending == 1 and st.vectors_done == st.chunks - 1  # only the refused chunk
    (note,) = [r for r in st.notes if r.path == "poison.py"]
    assert note.status == FileStatus.INDEXED and "no vectors for 1 chunk" in note.reason
    again = index_workspace(root, settings, embedder=embedder)  # a rerun tries it again, and goes on
    assert again.vectors_pending == 1
    assert index_status(root, settings).notes == st.notes  # the note is not repeated


def test_a_broken_model_still_stops_the_phase_with_its_error(tmp_path: Path) -> None:
    root = write_workspace(tmp_path / "ws")
    settings = load_settings(root)
    broken = RefusingEmbedder(make_embedder(settings.embed), "")  # "" is in every text
    with pytest.raises(EmbedError):
        index_workspace(root, settings, embedder=broken)
    assert index_status(root, settings).vectors_pending > 0
