"""The real static model (distilled by `make setup`) in a real index: vectors of the
right kind, a model switch that rebuilds instead of mixing, and a search that
refuses vectors of another model."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from codesift.indexer.embed import make_embedder
from codesift.indexer.search.hybrid import search
from codesift.indexer.search.results import SearchRequest, Source
from codesift.indexer.settings import load_settings
from codesift.indexer.static_embed import STATIC_MODEL, StaticEmbedder
from codesift.indexer.store import Store
from codesift.indexer.sync import index_status, index_uri_for, index_workspace

pytestmark = pytest.mark.slow

STATIC = {"embed": {"model": STATIC_MODEL}}


def test_the_bundled_static_model_gives_unit_vectors_that_rank_meaning() -> None:
    embedder = make_embedder(load_settings(Path("/nonexistent"), STATIC).embed)
    assert isinstance(embedder, StaticEmbedder)
    assert (embedder.model_id, embedder.dimension) == (f"static:{STATIC_MODEL}", 256)
    docs = embedder.embed_documents(
        [
            "def retry_upload(client, blob, attempts=3):\n    for attempt in range(attempts):\n"
            "        client.put(blob)",
            "def parse_config(path):\n    with open(path) as fh:\n        return json.load(fh)",
        ]
    )
    np.testing.assert_allclose(np.linalg.norm(docs, axis=1), 1.0, atol=1e-5)
    query = embedder.embed_query("read the configuration file")
    assert query @ docs[1] > query @ docs[0]


def test_switching_to_the_static_model_rebuilds_and_every_vector_is_static(workspace: Path) -> None:
    index_workspace(workspace, load_settings(workspace))
    static = load_settings(workspace, STATIC)
    report = index_workspace(workspace, static)
    assert report.rebuilt and f"static:{STATIC_MODEL} (256)" in report.rebuild_reason
    # The static model embeds with the text phase: nothing is left for the vectors phase.
    assert report.chunks_embedded == report.chunks_written > 0
    status = index_status(workspace, static)
    assert status.dimension == 256 and status.vectors_pending == 0
    table = Store(index_uri_for(workspace, static))._table("chunks").to_arrow()
    assert {len(v) for v in table.column("vector").to_pylist()} == {256}


def test_no_embed_with_the_static_model_leaves_vectors_pending_and_the_next_run_fills_them(
    workspace: Path,
) -> None:
    static = load_settings(workspace, STATIC)
    text_only = index_workspace(workspace, static, embed=False)
    assert text_only.chunks_embedded == 0 and text_only.vectors_pending == text_only.chunks_written
    again = index_workspace(workspace, static)
    assert again.chunks_embedded == text_only.chunks_written and again.vectors_pending == 0


def test_a_search_with_the_other_model_skips_vectors_and_says_why(workspace: Path) -> None:
    static = load_settings(workspace, STATIC)
    index_workspace(workspace, static)
    store = Store(index_uri_for(workspace, static))
    mine = search(
        store,
        SearchRequest("read the configuration file", mode="vector"),
        static,
        root=workspace,
        embedder=make_embedder(static.embed),
    )
    assert mine.hits and mine.hits[0].chunk.path == "app/config.py"
    assert all(Source.SEMANTIC in h.sources for h in mine.hits)
    minilm = load_settings(workspace)
    other = search(
        store,
        SearchRequest("read the configuration file"),
        minilm,
        root=workspace,
        embedder=make_embedder(minilm.embed),
    )
    assert not any(Source.SEMANTIC in h.sources for h in other.hits)
    assert any(f"holds static:{STATIC_MODEL} vectors" in n for n in other.report.notes)


def test_the_word_cache_reads_every_text_as_the_tokenizer_does() -> None:
    """The bundled model's ASCII texts go through the word cache: the same ids, hence the
    same vectors, as the tokenizer's own pass, on real code and on the corner cases."""
    import sysconfig

    from codesift.indexer.embed import make_embedder
    from codesift.indexer.settings import EmbedSettings

    embedder = make_embedder(EmbedSettings(model=STATIC_MODEL))
    assert isinstance(embedder, StaticEmbedder)
    embedder.embed_query("load")
    tokenizer = embedder._tokenizer
    assert tokenizer is not None and embedder._words is not None, "the bundled tokenizer is BERT's"
    corner = [
        "",
        "   \t\r\n ",
        "def validateCredentials(self, user):\r\n\treturn x->y != z[0] && a::b || c ^ ~d;",
        "CamelCase snake_case kebab-case SHOUTING_CASE 0x1F 3.14e-10 1_000_000",
        "a\x0cb c\x0bd e\x00f g\x7fh i\x1bj",  # control characters are dropped, not split at
        "x" * 101 + " " + "y" * 100 + " " + "antidisestablishmentarianism",  # WordPiece's word limit
        "literal [SEP] and [MASK] and [UNK] in code",  # added tokens are read whole
        'print("naïve café")',  # not ASCII: the tokenizer's own pass
        "word " * 700,  # past max_tokens
        "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~",
    ]
    lib = Path(sysconfig.get_paths()["stdlib"])
    real = [p.read_text(encoding="utf-8", errors="replace")[:3000] for p in sorted(lib.glob("*.py"))[:150]]
    texts = corner + real
    mine = embedder._token_ids(tokenizer, texts)
    theirs = [e.ids for e in tokenizer.encode_batch(texts, add_special_tokens=False)]
    for text, got, want in zip(texts, mine, theirs, strict=True):
        assert got.tolist() == want, text[:80]
    assert len(mine[8]) == embedder.max_tokens
    assert embedder._ascii_ids(corner[6]) is None and embedder._ascii_ids(corner[7]) is None
    assert embedder._ascii_ids(corner[2]) is not None
