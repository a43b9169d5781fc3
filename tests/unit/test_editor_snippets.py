"""The editor snippets in editors/ agree with the server: the commands they call exist,
the settings they send are real settings, the Helix TOML has the keys Helix reads."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from codesift.indexer.settings import describe_settings
from codesift.server import convert
from codesift.server.features import commands

EDITORS = Path(__file__).resolve().parents[2] / "editors"
SERVER_COMMANDS = {
    commands.SEARCH,
    commands.GREP,
    commands.SYMBOLS,
    commands.RESEARCH,
    commands.REINDEX,
    commands.STATUS,
}
SETTING_KEYS = {d.key for d in describe_settings()}


def _command_names(path: Path) -> set[str]:
    # Quoted "codesift.x" strings, except Lua module names in require('codesift.x').
    text = path.read_text(encoding="utf-8")
    return set(re.findall(r"""(?<!require\()["'](codesift\.[a-z]+)["']""", text))


def test_neovim_and_emacs_snippets_call_only_commands_the_server_registers() -> None:
    lua = {n for f in (EDITORS / "neovim").rglob("*.lua") for n in _command_names(f)}
    elisp = _command_names(EDITORS / "emacs" / "codesift.el")
    assert {
        "codesift.search",
        "codesift.grep",
        "codesift.research",
        "codesift.reindex",
        "codesift.status",
    } <= lua
    assert {"codesift.search", "codesift.grep", "codesift.reindex", "codesift.status"} <= elisp
    assert lua | elisp <= SERVER_COMMANDS


def test_helix_languages_toml_parses_and_names_codesift_serve_for_each_language() -> None:
    doc = tomllib.loads((EDITORS / "helix" / "languages.toml").read_text(encoding="utf-8"))
    server = doc["language-server"]["codesift"]
    assert server["command"] == "codesift" and server["args"] == ["serve"]
    languages = doc["language"]
    assert {lang["name"] for lang in languages} >= {"python", "javascript", "typescript", "go", "rust"}
    for lang in languages:
        servers = lang["language-servers"]
        assert servers[-1] == "codesift" and len(servers) == len(set(servers)), lang


def test_helix_config_is_camelcase_settings_the_server_knows() -> None:
    config = tomllib.loads((EDITORS / "helix" / "languages.toml").read_text(encoding="utf-8"))[
        "language-server"
    ]["codesift"]["config"]
    overrides = convert.settings_overrides(config)
    keys = {
        f"{section}.{name}"
        for section, values in overrides.items()
        if isinstance(values, dict)
        for name in values
    }
    assert keys and keys <= SETTING_KEYS, keys - SETTING_KEYS
    assert all(name == convert.camel(convert.snake(name)) for values in config.values() for name in values)
