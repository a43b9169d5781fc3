"""The settings tree: layers, validation, and the README table generated from it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from codesift.indexer.errors import ConfigError
from codesift.indexer.search.semantic import AGENT_VECTOR_THRESHOLD
from codesift.indexer.settings import Settings, describe_settings, load_settings

ROOT = Path(__file__).resolve().parents[2]


def test_defaults_follow_the_spec() -> None:
    s = Settings()
    assert s.index.max_file_bytes == 1024 * 1024
    assert (s.search.semantic_weight, s.search.keyword_weight, s.search.rrf_k) == (0.7, 0.3, 60)
    assert s.search.vector_score_threshold is None  # off in hybrid, the CLI and editors
    assert AGENT_VECTOR_THRESHOLD == 0.5  # the agent tool vector_search's default
    assert (s.search.limit, s.search.agent_limit, s.search.overfetch) == (20, 10, 3)
    assert s.embed.provider == "onnx" and s.embed.model == "all-MiniLM-L6-v2-int8"


def test_layers_pyproject_then_codesift_toml_then_overrides(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.codesift.search]\nlimit = 7\nrrf_k = 10\n[tool.codesift.index]\nexclude = ["a/"]\n'
    )
    (tmp_path / ".codesift.toml").write_text("[search]\nlimit = 9\n")
    s = load_settings(tmp_path, {"search": {"rrf_k": 30}})
    assert (s.search.limit, s.search.rrf_k, s.index.exclude) == (9, 30, ("a/",))


@pytest.mark.parametrize(
    ("layer", "message"),
    [
        ({"search": {"limit": "ten"}}, "search.limit must be a non-negative integer"),
        ({"search": {"nope": 1}}, "unknown setting search.nope"),
        ({"bogus": {}}, "unknown settings section 'bogus'"),
        ({"embed": {"provider": "magic"}}, "embed.provider must be one of"),
        ({"index": {"exclude": [1]}}, "index.exclude must be a list of strings"),
        ({"index": {"respect_gitignore": "yes"}}, "must be true or false"),
        ({"index": {"embed_cache": "cache/emb"}}, "index.embed_cache must be an absolute folder"),
    ],
)
def test_bad_settings_raise_a_readable_config_error(layer: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        load_settings(None, layer)


def test_broken_toml_names_the_file(tmp_path: Path) -> None:
    (tmp_path / ".codesift.toml").write_text("[search\n")
    with pytest.raises(ConfigError, match=r"\.codesift\.toml"):
        load_settings(tmp_path)


def test_every_setting_is_documented() -> None:
    docs = describe_settings()
    assert len(docs) >= 25
    assert all(d.doc for d in docs)


def test_readme_settings_table_is_generated_from_the_tree() -> None:
    table = subprocess.run(
        [sys.executable, str(ROOT / "scripts/settings_table.py")], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert table in (ROOT / "README.md").read_text(encoding="utf-8")
