"""The static embedder on a tiny model the test writes: a WordPiece tokenizer over a
dozen words and a token table whose rows are known, so every vector can be checked
by hand. How a static model name is found, and how a missing one is reported."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import numpy as np
import pytest
from tokenizers import Tokenizer, models, normalizers, pre_tokenizers

from codesift.indexer import embed as embed_module
from codesift.indexer.embed import MODEL_DIR_ENV, MissingModel, embedder_for_indexing, make_embedder
from codesift.indexer.errors import EmbedError
from codesift.indexer.settings import EmbedSettings
from codesift.indexer.static_embed import STATIC_MODEL, StaticEmbedder, is_static_model_dir

VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "retry", "upload", "cache", "file", "read", "##s", "_", "("]
DIM = 4


def write_model(folder: Path, *, dims: int = DIM, meta: dict[str, object] | None = None) -> np.ndarray:
    """A static model in ``folder``; returns its token table (float32)."""
    folder.mkdir(parents=True, exist_ok=True)
    tok = Tokenizer(models.WordPiece({t: i for i, t in enumerate(VOCAB)}, unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.save(str(folder / "tokenizer.json"))
    rng = np.random.default_rng(7)
    table = rng.normal(size=(len(VOCAB), dims)).astype(np.float16)
    table[:4] = 0  # special tokens have no row, as in the distilled model
    np.save(folder / "embeddings.npy", table)
    data = {"model_id": "static:tiny", "dimension": dims, "max_tokens": 8, **(meta or {})}
    (folder / "codesift-model.json").write_text(json.dumps(data))
    return table.astype(np.float32)


def expected(table: np.ndarray, tokens: list[str]) -> np.ndarray:
    v = table[[VOCAB.index(t) for t in tokens]].sum(axis=0)
    return v / np.linalg.norm(v)


@pytest.fixture(autouse=True)
def _no_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(MODEL_DIR_ENV, raising=False)


@pytest.fixture
def tiny(tmp_path: Path) -> tuple[StaticEmbedder, np.ndarray]:
    table = write_model(tmp_path / "tiny")
    embedder = make_embedder(EmbedSettings(model_path=str(tmp_path / "tiny")))
    assert isinstance(embedder, StaticEmbedder)
    return embedder, table


def test_a_text_vector_is_the_normalised_mean_of_its_token_rows(
    tiny: tuple[StaticEmbedder, np.ndarray],
) -> None:
    embedder, table = tiny
    got = embedder.embed_documents(["Retry uploads", "read file"])
    assert got.dtype == np.float32 and got.shape == (2, DIM)
    np.testing.assert_allclose(got[0], expected(table, ["retry", "upload", "##s"]), atol=1e-6)
    np.testing.assert_allclose(got[1], expected(table, ["read", "file"]), atol=1e-6)


def test_unknown_tokens_are_left_out_and_a_text_of_none_is_the_zero_vector(
    tiny: tuple[StaticEmbedder, np.ndarray],
) -> None:
    embedder, table = tiny
    got = embedder.embed_documents(["zebra cache quokka", "zebra", ""])
    np.testing.assert_allclose(got[0], expected(table, ["cache"]), atol=1e-6)
    assert not got[1].any() and not got[2].any()
    assert not np.isnan(got).any()


def test_reads_at_most_the_models_max_tokens(tiny: tuple[StaticEmbedder, np.ndarray]) -> None:
    embedder, table = tiny
    got = embedder.embed_query("cache " * 8 + "file " * 20)
    np.testing.assert_allclose(got, expected(table, ["cache"]), atol=1e-6)


def test_query_equals_documents_and_batches_do_not_change_vectors(
    tiny: tuple[StaticEmbedder, np.ndarray],
) -> None:
    embedder, _ = tiny
    texts = [f"{'retry ' * (i % 5)} cache read_file({i})" for i in range(300)]
    together = embedder.embed_documents(texts)
    alone = np.stack([embedder.embed_query(t) for t in texts])
    np.testing.assert_allclose(together, alone, atol=1e-6)


def test_empty_list_gives_an_empty_matrix(tiny: tuple[StaticEmbedder, np.ndarray]) -> None:
    embedder, _ = tiny
    assert embedder.embed_documents([]).shape == (0, DIM)


def test_model_id_and_dimension_come_from_the_meta_without_loading(tmp_path: Path) -> None:
    write_model(tmp_path / "m", meta={"model_id": "static:other"})
    embedder = make_embedder(EmbedSettings(model_path=str(tmp_path / "m")))
    assert (embedder.model_id, embedder.dimension) == ("static:other", DIM)
    assert isinstance(embedder, StaticEmbedder) and embedder._table is None


def test_a_table_that_disagrees_with_its_meta_is_an_embed_error(tmp_path: Path) -> None:
    write_model(tmp_path / "m", dims=6, meta={"dimension": DIM})
    embedder = make_embedder(EmbedSettings(model_path=str(tmp_path / "m")))
    with pytest.raises(EmbedError, match="6-dimensional"):
        embedder.embed_query("cache")


def test_a_table_with_fewer_rows_than_the_vocabulary_is_an_embed_error(tmp_path: Path) -> None:
    write_model(tmp_path / "m")
    np.save(tmp_path / "m" / "embeddings.npy", np.zeros((3, DIM), dtype=np.float16))
    with pytest.raises(EmbedError, match="a row for each"):
        make_embedder(EmbedSettings(model_path=str(tmp_path / "m"))).embed_query("cache")


def test_release_drops_the_table_and_the_next_call_loads_it(tiny: tuple[StaticEmbedder, np.ndarray]) -> None:
    embedder, _ = tiny
    first = embedder.embed_query("cache")
    assert embedder.release() and not embedder.release()
    np.testing.assert_array_equal(embedder.embed_query("cache"), first)


def test_threads_embedding_at_once_get_the_serial_answers(tiny: tuple[StaticEmbedder, np.ndarray]) -> None:
    embedder, _ = tiny
    texts = [f"retry upload {i} cache" for i in range(50)]
    serial = embedder.embed_documents(texts)
    results: list[np.ndarray] = []

    def work() -> None:
        results.append(embedder.embed_documents(texts))

    workers = [threading.Thread(target=work) for _ in range(4)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    for got in results:
        np.testing.assert_array_equal(got, serial)


def test_an_onnx_folder_in_model_path_is_not_taken_for_a_static_model(tmp_path: Path) -> None:
    (tmp_path / "onnx").mkdir()
    (tmp_path / "onnx" / "tokenizer.json").write_text("{}")
    assert not is_static_model_dir(tmp_path / "onnx")
    assert embed_module.static_model_dir(EmbedSettings(model_path=str(tmp_path / "onnx"))) is None


def test_the_static_name_is_found_in_the_bundled_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_model(tmp_path / STATIC_MODEL)
    monkeypatch.setattr(embed_module, "bundled_model_dir", lambda model: tmp_path / model)
    # The ONNX model's env var does not redirect a static name.
    monkeypatch.setenv(MODEL_DIR_ENV, str(tmp_path / "elsewhere"))
    embedder = make_embedder(EmbedSettings(model=STATIC_MODEL))
    assert isinstance(embedder, StaticEmbedder) and embedder.model_dir == tmp_path / STATIC_MODEL


def test_a_missing_static_model_says_how_to_make_it_and_indexing_keeps_the_text_phase(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(embed_module, "bundled_model_dir", lambda model: tmp_path / "none" / model)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    settings = EmbedSettings(model=STATIC_MODEL)
    with pytest.raises(EmbedError, match=r"distill_static\.py"):
        make_embedder(settings)
    stand_in = embedder_for_indexing(settings)
    assert isinstance(stand_in, MissingModel)
    assert (stand_in.model_id, stand_in.dimension) == (f"static:{STATIC_MODEL}", 256)
