"""Where the model's optimised copy lives (indexer/onnx_cache.py): one per model file,
runtime and machine, under the user's cache, or nowhere when turned off."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from codesift.indexer import onnx_cache


def test_a_copy_is_kept_per_model_file_and_runtime_version_under_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(onnx_cache.CACHE_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    model = tmp_path / "m" / "model.onnx"
    model.parent.mkdir()
    model.write_bytes(b"graph")
    (tmp_path / "m" / "model.onnx.data").write_bytes(b"weights")
    first = onnx_cache.optimized_dir(model, "1.24.1")
    assert first is not None and first.parent == tmp_path / "xdg" / "codesift" / "onnx"
    assert onnx_cache.optimized_dir(model, "1.24.1") == first
    assert onnx_cache.optimized_dir(model, "1.25.0") != first
    (tmp_path / "m" / "model.onnx.data").write_bytes(b"other weights")  # a new export
    assert onnx_cache.optimized_dir(model, "1.24.1") != first


def test_the_copy_is_turned_off_or_moved_by_its_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = tmp_path / "model.onnx"
    model.write_bytes(b"graph")
    monkeypatch.setenv(onnx_cache.CACHE_ENV, "0")
    assert onnx_cache.optimized_dir(model, "1") is None
    monkeypatch.setenv(onnx_cache.CACHE_ENV, str(tmp_path / "elsewhere"))
    found = onnx_cache.optimized_dir(model, "1")
    assert found is not None and found.parent == tmp_path / "elsewhere"


def test_a_staged_copy_is_published_once_and_a_late_one_is_dropped(tmp_path: Path) -> None:
    target = tmp_path / "cache" / "key"
    staging = onnx_cache.staging_dir(target)
    assert staging is not None and staging.parent == target.parent and staging.name.startswith(".")
    late = onnx_cache.staging_dir(target)
    assert late is not None and late != staging
    empty = onnx_cache.staging_dir(target)
    assert empty is not None
    assert not onnx_cache.publish(empty, target, "model.onnx")  # onnxruntime wrote nothing
    for folder in (staging, late):
        (folder / "model.onnx").write_bytes(b"optimised")
    assert onnx_cache.publish(staging, target, "model.onnx")
    assert not onnx_cache.publish(late, target, "model.onnx")
    assert os.listdir(target.parent) == ["key"] and (target / "model.onnx").read_bytes() == b"optimised"
