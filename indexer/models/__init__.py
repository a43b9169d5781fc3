"""The embedding model that ships inside the wheel, as package data.

``all-MiniLM-L6-v2-int8/`` holds the default model ready to run on onnxruntime:
``model.onnx`` (mean pooling and L2 normalisation in the graph, MatMul weights
int8 per output channel) with its weights in ``model.onnx.data`` (ONNX external
data: onnxruntime memory-maps it rather than copying the 47 MB word-embedding
table into each process), ``tokenizer.json``, ``codesift-model.json`` (id,
dimension, sha256 of both files, how it was made) and ``SHA256SUMS``.
``scripts/export_onnx.py`` makes it from the bundled weights at build time
(``make setup``) and ``scripts/bundle_model.py`` writes it here in two files; it is
not in git. ``NOTICE`` and
``LICENSE-Apache-2.0`` are the model's licence (all-MiniLM-L6-v2 is Apache-2.0).
"""

from __future__ import annotations

from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent


def bundled_model_dir(model: str) -> Path:
    """Where the wheel puts the model named ``model`` (it may not be there)."""
    return PACKAGE_DIR / model
