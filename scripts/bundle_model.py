"""Copy the exported int8 model into the package (indexer/models/), so the wheel carries it.

python scripts/bundle_model.py [--from DIR]

DIR defaults to the export's int8 folder (scripts/export_onnx.py writes it under
``<sys.prefix>/share/codesift/models/``). The copy is checked against the sha256
in its codesift-model.json, and ``SHA256SUMS`` (``sha256sum -c`` format) is
written beside it. Skips quickly when the bundled copy is already current.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from export_onnx import INT8_NAME, META_FILE, default_model_dir, int8_dir_for, sha256_of

ROOT = Path(__file__).resolve().parent.parent
TARGET = ROOT / "indexer" / "models" / INT8_NAME
FILES = ("model.onnx", "tokenizer.json", META_FILE)
SUMS = "SHA256SUMS"


def sums_of(folder: Path) -> str:
    """``sha256sum`` lines for the model's files in ``folder``."""
    return "".join(f"{sha256_of(folder / name)}  {name}\n" for name in FILES)


def current(folder: Path) -> bool:
    """Whether ``folder`` holds all files and a SHA256SUMS that matches them."""
    sums = folder / SUMS
    return (
        all((folder / n).is_file() for n in FILES) and sums.is_file() and sums.read_text() == sums_of(folder)
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--from", dest="source", type=Path, default=int8_dir_for(default_model_dir()))
    args = parser.parse_args(argv)
    source: Path = args.source
    meta = json.loads((source / META_FILE).read_text(encoding="utf-8"))
    if meta.get("sha256") != sha256_of(source / "model.onnx"):
        raise SystemExit(f"{source / 'model.onnx'} does not match the sha256 in its {META_FILE}")
    if current(TARGET) and (TARGET / META_FILE).read_bytes() == (source / META_FILE).read_bytes():
        print(f"codesift model already bundled: {TARGET}")
        return 0
    TARGET.mkdir(parents=True, exist_ok=True)
    (TARGET / SUMS).unlink(missing_ok=True)  # written last: marks a complete copy
    for name in FILES:
        shutil.copyfile(source / name, TARGET / name)
    (TARGET / SUMS).write_text(sums_of(TARGET))
    size = sum((TARGET / n).stat().st_size for n in FILES) / 1e6
    print(f"codesift model bundled: {TARGET} ({size:.1f} MB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
