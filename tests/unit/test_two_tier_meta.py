"""The fast tier in the index meta: where its model lives, and the rebuild reasons."""

from __future__ import annotations

from codesift.indexer.store import FAST_DIMENSION_KEY, FAST_MODEL_KEY, SCHEMA_VERSION, IndexMeta
from codesift.indexer.sync import rebuild_reason

MINILM = "onnx:all-MiniLM-L6-v2-int8"
STATIC = "static:all-MiniLM-L6-v2-static"
SETTINGS = {"chunking": "a", "parser": "5", "max_tokens": "128"}


def meta(fast: str = "", fast_dim: int = 0, schema: int = SCHEMA_VERSION) -> IndexMeta:
    fingerprint = dict(SETTINGS)
    if fast:
        fingerprint |= {FAST_MODEL_KEY: fast, FAST_DIMENSION_KEY: str(fast_dim)}
    return IndexMeta(schema, MINILM, 384, fingerprint)


def test_the_fast_tier_model_is_read_from_the_fingerprint_and_absent_means_one_tier() -> None:
    two = meta(STATIC, 256)
    assert (two.fast_model_id, two.fast_dimension) == (STATIC, 256)
    one = meta()
    assert (one.fast_model_id, one.fast_dimension) == ("", 0)
    broken = IndexMeta(SCHEMA_VERSION, MINILM, 384, {FAST_MODEL_KEY: STATIC, FAST_DIMENSION_KEY: "x"})
    assert broken.fast_dimension == 0


def test_a_change_of_tier_rebuilds_with_a_reason_naming_each_tier() -> None:
    assert rebuild_reason(meta(STATIC, 256), meta(STATIC, 256)) == ""
    assert rebuild_reason(meta(), meta(STATIC, 256)) == f"fast tier none → {STATIC} (256)"
    assert rebuild_reason(meta(STATIC, 256), meta()) == f"fast tier {STATIC} (256) → none"
    assert (
        rebuild_reason(meta(STATIC, 256), meta(STATIC, 384)) == f"fast tier {STATIC} (256) → {STATIC} (384)"
    )


def test_an_index_from_before_the_tiers_rebuilds_for_its_schema_first() -> None:
    assert SCHEMA_VERSION == 6
    assert rebuild_reason(meta(schema=3), meta(STATIC, 256)) == "schema version 3 → 6"
    assert rebuild_reason(meta(schema=4), meta(STATIC, 256)) == "schema version 4 → 6"
    assert rebuild_reason(meta(schema=5), meta(STATIC, 256)) == "schema version 5 → 6"
