"""Copy the exported int8 model into the package (indexer/models/), so the wheel carries it.

python scripts/bundle_model.py [--from DIR]

DIR defaults to the export's int8 folder (scripts/export_onnx.py writes it under
``<sys.prefix>/share/codesift/models/``). The export is checked against the sha256
in its codesift-model.json, then written here as two files: ``model.onnx`` (the graph,
~0.35 MB) and ``model.onnx.data`` (its weights, as ONNX external data). onnxruntime
memory-maps an external data file instead of copying each weight out of the graph's
protobuf, so the 47 MB float word-embedding table (the int8 file keeps it) costs a
process only the pages of the tokens it has seen: a loaded session +24 MiB instead of
+82, and half the CPU to load (docs/DECISIONS.md). Same weights, same graph: the
vectors are the single file's. ``codesift-model.json`` gets the two files' sha256 (and
the export's as ``export_sha256``); ``SHA256SUMS`` (``sha256sum -c`` format) is
written last. Skips quickly when the bundled copy is already current.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from export_onnx import (
    INT8_NAME,
    META_FILE,
    SUMS,
    complete_meta,
    default_model_dir,
    int8_dir_for,
    sha256_of,
    sums_of,
)

ROOT = Path(__file__).resolve().parent.parent
TARGET = ROOT / "indexer" / "models" / INT8_NAME
MODEL_FILE = "model.onnx"
DATA_FILE = "model.onnx.data"
FILES = (MODEL_FILE, DATA_FILE, "tokenizer.json", META_FILE)
# Weights smaller than this stay inside the graph (onnx's default).
EXTERNAL_MIN_BYTES = 1024


def current(folder: Path, export_sha256: object) -> bool:
    """Whether ``folder`` holds all files, a SHA256SUMS that matches them, and was made
    from the export whose sha256 is ``export_sha256``."""
    meta = complete_meta(folder, FILES)
    return meta is not None and meta.get("export_sha256") == export_sha256


def split_weights(source: Path, folder: Path) -> None:
    """Write the single-file model ``source`` into ``folder`` as ``model.onnx`` (the graph)
    and ``model.onnx.data`` (every weight of ``EXTERNAL_MIN_BYTES`` or more; the first,
    the word-embedding table, at offset 0, so page-aligned for mmap). Deterministic:
    the same source gives the same bytes."""
    import onnx  # build-time only (the `export` extra); the wheel needs onnxruntime alone

    model = onnx.load(str(source))
    with tempfile.TemporaryDirectory(dir=folder) as tmp:
        # onnx appends to an existing data file: write into an empty folder, then move.
        onnx.save_model(
            model,
            str(Path(tmp) / MODEL_FILE),
            save_as_external_data=True,
            all_tensors_to_one_file=True,
            location=DATA_FILE,
            size_threshold=EXTERNAL_MIN_BYTES,
        )
        for name in (MODEL_FILE, DATA_FILE):
            os.chmod(Path(tmp) / name, 0o644)  # onnx makes the data file 0600
            os.replace(Path(tmp) / name, folder / name)


def bundled_meta(export_meta: dict[str, object], folder: Path) -> dict[str, object]:
    """The export's meta, with the sha256 of the bundled graph and data file."""
    return {
        **export_meta,
        "sha256": sha256_of(folder / MODEL_FILE),
        "data_file": DATA_FILE,
        "data_sha256": sha256_of(folder / DATA_FILE),
        "export_sha256": export_meta.get("sha256"),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--from", dest="source", type=Path, default=int8_dir_for(default_model_dir()))
    parser.add_argument("--to", dest="target", type=Path, default=TARGET)
    args = parser.parse_args(argv)
    source: Path = args.source
    target: Path = args.target
    meta = json.loads((source / META_FILE).read_text(encoding="utf-8"))
    if meta.get("sha256") != sha256_of(source / MODEL_FILE):
        raise SystemExit(f"{source / MODEL_FILE} does not match the sha256 in its {META_FILE}")
    if current(target, meta.get("sha256")):
        print(f"codesift model already bundled: {target}")
        return 0
    target.mkdir(parents=True, exist_ok=True)
    (target / SUMS).unlink(missing_ok=True)  # written last: marks a complete copy
    split_weights(source / MODEL_FILE, target)
    shutil.copyfile(source / "tokenizer.json", target / "tokenizer.json")
    text = json.dumps(bundled_meta(meta, target), indent=2) + "\n"
    (target / META_FILE).write_text(text, encoding="utf-8")
    (target / SUMS).write_text(sums_of(target, FILES))
    size = sum((target / n).stat().st_size for n in FILES) / 1e6
    print(f"codesift model bundled: {target} ({size:.1f} MB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
