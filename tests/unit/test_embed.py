"""Embedding providers without a model: the OpenAI client against a real local HTTP
server, provider choice, and how a missing model is reported."""

from __future__ import annotations

import dataclasses
import json
import socket
import sys
import threading
import types
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import pytest

from codesift.indexer import embed as embed_module
from codesift.indexer.embed import (
    MODEL_DIR_ENV,
    OnnxEmbedder,
    SentenceTransformerEmbedder,
    make_embedder,
    normalise_rows,
    resolve_model_dir,
)
from codesift.indexer.embed_http import OpenAIEmbedder
from codesift.indexer.errors import EmbedError
from codesift.indexer.settings import EmbedSettings


@pytest.fixture(autouse=True)
def _quiet_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv(MODEL_DIR_ENV, raising=False)


# --- a tiny OpenAI-compatible server -------------------------------------------------


@dataclass
class Reply:
    status: int = 200
    body: bytes | None = None  # None: answer with vectors for the request's inputs
    headers: dict[str, str] = field(default_factory=dict)
    reverse: bool = False  # list the data items in reverse, relying on their "index"


@dataclass
class FakeEndpoint:
    url: str
    requests: list[dict[str, object]] = field(default_factory=list)
    replies: list[Reply] = field(default_factory=list)

    def bodies(self) -> list[dict[str, object]]:
        return [r["body"] for r in self.requests]  # type: ignore[misc]


def vector_for(text: str) -> list[float]:
    """A fixed, unnormalised 4-d vector that encodes the text's length."""
    return [float(len(text)), 3.0, 0.0, 4.0]


@pytest.fixture
def endpoint() -> Iterator[FakeEndpoint]:
    state = FakeEndpoint(url="")

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            raw = self.rfile.read(length)
            body = json.loads(raw)
            state.requests.append({"path": self.path, "headers": dict(self.headers.items()), "body": body})
            reply = state.replies.pop(0) if state.replies else Reply()
            payload = reply.body
            if payload is None:
                items = [
                    {"object": "embedding", "index": i, "embedding": vector_for(t)}
                    for i, t in enumerate(body["input"])
                ]
                if reply.reverse:
                    items.reverse()
                payload = json.dumps({"object": "list", "data": items}).encode()
            self.send_response(reply.status)
            self.send_header("Content-Type", "application/json")
            for key, value in reply.headers.items():
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def openai_settings(url: str, **changes: object) -> EmbedSettings:
    base = EmbedSettings(
        provider="openai",
        model="text-embedding-3-small",
        endpoint=url,
        api_key_env="CODESIFT_TEST_KEY",
        batch_size=32,
    )
    return dataclasses.replace(base, **changes)


# --- OpenAIEmbedder ------------------------------------------------------------------


def test_openai_embedder_posts_model_and_inputs_as_json_to_embeddings_path(
    endpoint: FakeEndpoint, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CODESIFT_TEST_KEY", "sk-test-123")
    embedder = OpenAIEmbedder(openai_settings(endpoint.url + "/"))

    embedder.embed_documents(["def f(): pass", "class A: ..."])

    (request,) = endpoint.requests
    assert request["path"] == "/v1/embeddings"
    assert request["body"] == {
        "model": "text-embedding-3-small",
        "input": ["def f(): pass", "class A: ..."],
    }
    headers = request["headers"]
    assert isinstance(headers, dict)
    assert headers["Authorization"] == "Bearer sk-test-123"
    assert headers["Content-Type"] == "application/json"


def test_openai_embedder_sends_no_authorization_when_the_key_variable_is_unset(
    endpoint: FakeEndpoint, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CODESIFT_TEST_KEY", raising=False)
    OpenAIEmbedder(openai_settings(endpoint.url)).embed_documents(["x"])
    headers = endpoint.requests[0]["headers"]
    assert isinstance(headers, dict)
    assert "Authorization" not in headers


def test_openai_embedder_splits_texts_into_batches_of_batch_size_and_keeps_order(
    endpoint: FakeEndpoint,
) -> None:
    texts = ["a", "bb", "ccc", "dddd", "eeeee"]
    embedder = OpenAIEmbedder(openai_settings(endpoint.url, batch_size=2))

    vectors = embedder.embed_documents(texts)

    assert [b["input"] for b in endpoint.bodies()] == [["a", "bb"], ["ccc", "dddd"], ["eeeee"]]
    assert vectors.shape == (5, 4)
    expected = normalise_rows(np.array([vector_for(t) for t in texts]))
    np.testing.assert_allclose(vectors, expected, rtol=1e-6)


def test_openai_embedder_returns_l2_normalised_float32_rows(endpoint: FakeEndpoint) -> None:
    vectors = OpenAIEmbedder(openai_settings(endpoint.url)).embed_documents(["abc", "a" * 40])
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-6)
    # [3, 3, 0, 4] / sqrt(34)
    np.testing.assert_allclose(vectors[0], np.array([3, 3, 0, 4]) / np.sqrt(34), rtol=1e-6)


def test_openai_embedder_orders_rows_by_the_index_field_not_by_position(
    endpoint: FakeEndpoint,
) -> None:
    endpoint.replies.append(Reply(reverse=True))
    vectors = OpenAIEmbedder(openai_settings(endpoint.url)).embed_documents(["a", "bbbbbbbb"])
    np.testing.assert_allclose(vectors, normalise_rows([vector_for("a"), vector_for("bbbbbbbb")]))


def test_openai_embedder_embed_query_returns_one_vector(endpoint: FakeEndpoint) -> None:
    vector = OpenAIEmbedder(openai_settings(endpoint.url)).embed_query("find the parser")
    assert vector.shape == (4,)
    assert endpoint.bodies()[0]["input"] == ["find the parser"]


def test_openai_embedder_learns_dimension_from_the_first_response(
    endpoint: FakeEndpoint,
) -> None:
    embedder = OpenAIEmbedder(openai_settings(endpoint.url))
    assert embedder.dimension == 4
    assert len(endpoint.requests) == 1
    assert embedder.dimension == 4
    assert len(endpoint.requests) == 1


def test_openai_embedder_with_configured_dimension_makes_no_request_for_empty_input(
    endpoint: FakeEndpoint,
) -> None:
    embedder = OpenAIEmbedder(openai_settings(endpoint.url, dimension=4))
    vectors = embedder.embed_documents([])
    assert vectors.shape == (0, 4)
    assert vectors.dtype == np.float32
    assert embedder.dimension == 4
    assert endpoint.requests == []


def test_openai_embedder_rejects_vectors_of_another_dimension_than_configured(
    endpoint: FakeEndpoint,
) -> None:
    embedder = OpenAIEmbedder(openai_settings(endpoint.url, dimension=1536))
    with pytest.raises(EmbedError, match=r"4-dimensional.*expected 1536"):
        embedder.embed_documents(["x"])


def test_openai_embedder_sends_empty_text_as_a_space(endpoint: FakeEndpoint) -> None:
    vectors = OpenAIEmbedder(openai_settings(endpoint.url)).embed_documents(["", "x"])
    assert endpoint.bodies()[0]["input"] == [" ", "x"]
    assert vectors.shape == (2, 4)


def test_openai_embedder_http_500_raises_embed_error_with_status_and_reason(
    endpoint: FakeEndpoint,
) -> None:
    error = {"error": {"message": "The server had an error", "type": "server_error"}}
    endpoint.replies.append(Reply(status=500, body=json.dumps(error).encode()))
    embedder = OpenAIEmbedder(openai_settings(endpoint.url))

    with pytest.raises(EmbedError) as caught:
        embedder.embed_documents(["x"])

    message = str(caught.value)
    assert "HTTP 500" in message
    assert "The server had an error" in message
    assert endpoint.url in message
    assert caught.value.__cause__ is not None
    assert len(endpoint.requests) == 1  # 500 is not retried


def test_openai_embedder_http_401_does_not_leak_the_api_key(
    endpoint: FakeEndpoint, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CODESIFT_TEST_KEY", "sk-secret-value")
    endpoint.replies.append(Reply(status=401, body=b"Unauthorized"))
    with pytest.raises(EmbedError, match="HTTP 401") as caught:
        OpenAIEmbedder(openai_settings(endpoint.url)).embed_documents(["x"])
    assert "sk-secret-value" not in str(caught.value)


def test_openai_embedder_malformed_json_raises_embed_error(endpoint: FakeEndpoint) -> None:
    endpoint.replies.append(Reply(body=b'{"data": [ {"embedding": [1, 2'))
    with pytest.raises(EmbedError, match="malformed JSON") as caught:
        OpenAIEmbedder(openai_settings(endpoint.url)).embed_documents(["x"])
    assert isinstance(caught.value.__cause__, ValueError)


def test_openai_embedder_response_without_data_raises_embed_error(
    endpoint: FakeEndpoint,
) -> None:
    endpoint.replies.append(Reply(body=b'{"object": "list"}'))
    with pytest.raises(EmbedError, match="expected 1 embeddings"):
        OpenAIEmbedder(openai_settings(endpoint.url)).embed_documents(["x"])


def test_openai_embedder_ragged_embeddings_raise_embed_error(endpoint: FakeEndpoint) -> None:
    body = {"data": [{"index": 0, "embedding": [1, 2]}, {"index": 1, "embedding": [1]}]}
    endpoint.replies.append(Reply(body=json.dumps(body).encode()))
    with pytest.raises(EmbedError, match="malformed embeddings"):
        OpenAIEmbedder(openai_settings(endpoint.url)).embed_documents(["x", "y"])


def test_openai_embedder_retries_429_after_retry_after_then_succeeds(
    endpoint: FakeEndpoint,
) -> None:
    endpoint.replies.append(Reply(status=429, body=b"{}", headers={"Retry-After": "0"}))
    vectors = OpenAIEmbedder(openai_settings(endpoint.url)).embed_documents(["x"])
    assert vectors.shape == (1, 4)
    assert len(endpoint.requests) == 2


def test_openai_embedder_gives_up_after_repeated_503(endpoint: FakeEndpoint) -> None:
    endpoint.replies.extend(Reply(status=503, body=b"busy", headers={"Retry-After": "0"}) for _ in range(5))
    with pytest.raises(EmbedError, match="HTTP 503"):
        OpenAIEmbedder(openai_settings(endpoint.url), retries=2).embed_documents(["x"])
    assert len(endpoint.requests) == 3


def test_openai_embedder_unreachable_endpoint_raises_embed_error() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    embedder = OpenAIEmbedder(openai_settings(f"http://127.0.0.1:{port}/v1"), timeout_s=5)
    with pytest.raises(EmbedError, match="cannot reach embedding endpoint"):
        embedder.embed_documents(["x"])


def test_openai_embedder_rejects_a_non_http_endpoint() -> None:
    with pytest.raises(EmbedError, match="http"):
        OpenAIEmbedder(openai_settings("file:///etc"))


# --- provider choice -----------------------------------------------------------------


def fake_model_dir(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "model.onnx").write_bytes(b"not really a model")
    (root / "tokenizer.json").write_text("{}")
    return root


def test_make_embedder_picks_onnx_by_default_without_loading_the_model(tmp_path: Path) -> None:
    directory = fake_model_dir(tmp_path / "m")
    embedder = make_embedder(EmbedSettings(model_path=str(directory)))
    assert isinstance(embedder, OnnxEmbedder)
    assert embedder.model_id == "onnx:all-MiniLM-L6-v2-int8"
    assert embedder.model_dir == directory


def test_make_embedder_picks_openai(endpoint: FakeEndpoint) -> None:
    embedder = make_embedder(openai_settings(endpoint.url))
    assert isinstance(embedder, OpenAIEmbedder)
    assert embedder.model_id == "openai:text-embedding-3-small"


def test_make_embedder_sentence_transformers_not_installed_says_how_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    with pytest.raises(EmbedError, match=r"pip install 'codesift\[st\]'") as caught:
        make_embedder(EmbedSettings(provider="sentence-transformers"))
    assert isinstance(caught.value.__cause__, ImportError)


def test_make_embedder_sentence_transformers_uses_bundled_weights_and_normalises(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    loaded: list[str] = []

    class FakeSentenceTransformer:
        max_seq_length = 128

        def __init__(self, source: str, device: str) -> None:
            loaded.append(source)

        def get_sentence_embedding_dimension(self) -> int:
            return 2

        def encode(self, texts: list[str], **options: object) -> np.ndarray:
            assert options["normalize_embeddings"] is True
            return np.array([[3.0, 4.0]] * len(texts))

    module = types.ModuleType("sentence_transformers")
    module.SentenceTransformer = FakeSentenceTransformer  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "sentence_transformers", module)

    embedder = make_embedder(EmbedSettings(provider="sentence-transformers", max_tokens=200))
    assert isinstance(embedder, SentenceTransformerEmbedder)
    assert embedder.model_id == "sentence-transformers:all-MiniLM-L6-v2"
    assert loaded == []  # loads lazily
    vectors = embedder.embed_documents(["a", "b"])
    np.testing.assert_allclose(vectors, [[0.6, 0.8], [0.6, 0.8]], rtol=1e-6)
    assert embedder.embed_documents([]).shape == (0, 2)
    (source,) = loaded
    assert not source.startswith("all-MiniLM")  # a local directory, not a hub name
    assert embedder._load().max_seq_length == 200


# --- finding the ONNX model ----------------------------------------------------------


def isolate_default_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    prefix, data_home = tmp_path / "prefix", tmp_path / "data"
    monkeypatch.setattr(embed_module, "bundled_model_dir", lambda model: tmp_path / "package" / model)
    monkeypatch.setattr(sys, "prefix", str(prefix))
    monkeypatch.setenv("XDG_DATA_HOME", str(data_home))
    return (
        prefix / "share" / "codesift" / "models" / "all-MiniLM-L6-v2-int8",
        data_home / "codesift" / "models" / "all-MiniLM-L6-v2-int8",
    )


def test_missing_model_raises_embed_error_that_names_the_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    in_prefix, in_home = isolate_default_dirs(tmp_path, monkeypatch)
    with pytest.raises(EmbedError) as caught:
        make_embedder(EmbedSettings())
    message = str(caught.value)
    assert "make setup" in message
    assert "scripts/export_onnx.py" in message
    assert "torch==2.13.0" in message
    assert str(in_prefix) in message
    assert str(in_home) in message


def test_missing_model_at_configured_model_path_is_an_error_not_a_fallback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    in_prefix, _ = isolate_default_dirs(tmp_path, monkeypatch)
    fake_model_dir(in_prefix)
    with pytest.raises(EmbedError, match=r"embed\.model_path.*make setup"):
        OnnxEmbedder(EmbedSettings(model_path=str(tmp_path / "typo")))


def test_model_dir_with_model_but_no_tokenizer_says_tokenizer_is_missing(
    tmp_path: Path,
) -> None:
    directory = tmp_path / "half"
    directory.mkdir()
    (directory / "model.onnx").write_bytes(b"x")
    with pytest.raises(EmbedError, match=r"no tokenizer\.json"):
        resolve_model_dir(EmbedSettings(model_path=str(directory)))


def test_model_dir_resolution_order_setting_then_env_then_package_then_prefix_then_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    in_prefix, in_home = isolate_default_dirs(tmp_path, monkeypatch)
    configured = fake_model_dir(tmp_path / "configured")
    from_env = fake_model_dir(tmp_path / "env")

    fake_model_dir(in_home)
    assert resolve_model_dir(EmbedSettings(), environ={}) == in_home
    fake_model_dir(in_prefix)
    assert resolve_model_dir(EmbedSettings(), environ={}) == in_prefix
    in_package = fake_model_dir(tmp_path / "package" / "all-MiniLM-L6-v2-int8")
    assert resolve_model_dir(EmbedSettings(), environ={}) == in_package
    env = {MODEL_DIR_ENV: str(from_env)}
    assert resolve_model_dir(EmbedSettings(), environ=env) == from_env
    assert resolve_model_dir(EmbedSettings(model_path=str(configured)), environ=env) == configured


def test_model_dir_from_environment_variable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    directory = fake_model_dir(tmp_path / "env-model")
    monkeypatch.setenv(MODEL_DIR_ENV, str(directory))
    assert OnnxEmbedder(EmbedSettings()).model_dir == directory


def test_corrupt_model_files_raise_embed_error_on_first_use(tmp_path: Path) -> None:
    embedder = OnnxEmbedder(EmbedSettings(model_path=str(fake_model_dir(tmp_path / "bad"))))
    with pytest.raises(EmbedError, match="cannot load the embedding model") as caught:
        embedder.embed_documents(["x"])
    assert caught.value.__cause__ is not None


def test_onnx_embedder_reads_model_id_and_dimension_from_export_meta(tmp_path: Path) -> None:
    directory = fake_model_dir(tmp_path / "m")
    meta = {"model_id": "onnx:all-MiniLM-L6-v2-int8", "dimension": 384, "max_tokens": 512}
    (directory / "codesift-model.json").write_text(json.dumps(meta))
    embedder = OnnxEmbedder(EmbedSettings(model_path=str(directory), max_tokens=4096))
    assert embedder.model_id == "onnx:all-MiniLM-L6-v2-int8"
    assert embedder.dimension == 384
    assert embedder.max_tokens == 512  # clamped to what the model's positions allow
    assert embedder.embed_documents([]).shape == (0, 384)


def test_normalise_rows_leaves_zero_rows_at_zero() -> None:
    out = normalise_rows([[0.0, 0.0], [3.0, 4.0]])
    np.testing.assert_allclose(out, [[0.0, 0.0], [0.6, 0.8]])
    assert out.dtype == np.float32


def test_a_missing_bundled_model_indexes_text_with_the_models_id_and_dimension(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    isolate_default_dirs(tmp_path, monkeypatch)
    stand_in = embed_module.embedder_for_indexing(EmbedSettings())
    assert isinstance(stand_in, embed_module.MissingModel)
    assert (stand_in.model_id, stand_in.dimension) == ("onnx:all-MiniLM-L6-v2-int8", 384)
    with pytest.raises(EmbedError, match="is missing"):
        stand_in.embed_query("x")
    with pytest.raises(EmbedError):  # a model named by a setting that is not there stays an error
        embed_module.embedder_for_indexing(EmbedSettings(model_path=str(tmp_path / "typo")))
