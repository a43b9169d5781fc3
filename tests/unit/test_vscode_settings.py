"""The VS Code extension's settings are the server's settings (one source of truth).

``contributes.configuration`` in vscode-extension/package.json is generated from
``describe_settings()``; regenerate it after changing the settings tree with

    .venv/bin/python -m tests.unit.test_vscode_settings --write
"""

from __future__ import annotations

import json
import sys
import typing
from pathlib import Path

from codesift.indexer.settings import Settings, describe_settings
from codesift.server.convert import camel, snake

PACKAGE_JSON = Path(__file__).resolve().parents[2] / "vscode-extension" / "package.json"

# Settings of the extension itself (how to start the server, tracing): never sent to the server.
CLIENT_ONLY: dict[str, dict[str, object]] = {
    "codesift.server.command": {
        "type": "array",
        "items": {"type": "string"},
        "default": [],
        "markdownDescription": (
            "The command that starts the codesift language server, e.g. "
            '`["/path/to/.venv/bin/codesift", "serve"]`. Empty: the workspace\'s `.venv/bin/codesift`, '
            "then `codesift` on PATH, then `python -m codesift.server.cli serve` with the Python "
            "extension's interpreter or `python3` on PATH."
        ),
        "scope": "machine-overridable",
    },
    "codesift.trace.server": {
        "type": "string",
        "enum": ["off", "messages", "verbose"],
        "default": "off",
        "description": "Log the JSON-RPC traffic with the server to the codesift output channel.",
        "scope": "window",
    },
}

# Sections of the command line's own (its background server): an editor has no use for them.
CLI_ONLY_SECTIONS = ("cli",)

_JSON_TYPES = {"int": "integer", "float": "number", "bool": "boolean", "str": "string"}


def _choices(key: str) -> list[object]:
    section, name = key.split(".")
    hint = typing.get_type_hints(type(getattr(Settings(), section)))[name]
    return list(typing.get_args(hint))


def server_properties() -> dict[str, dict[str, object]]:
    """``contributes.configuration.properties`` for every server setting, camelCase by section."""
    out: dict[str, dict[str, object]] = {}
    for s in describe_settings():
        section, name = s.key.split(".")
        if section in CLI_ONLY_SECTIONS:
            continue
        prop: dict[str, object]
        if s.type == "enum":
            prop = {"type": "string", "enum": _choices(s.key)}
        elif s.type == "array":
            prop = {"type": "array", "items": {"type": "string"}}
        elif s.default is None:  # optional: unset by default
            prop = {"type": [_JSON_TYPES[s.type], "null"]}
        else:
            prop = {"type": _JSON_TYPES[s.type]}
        default = s.default
        prop["default"] = list(default) if isinstance(default, tuple) else default
        prop["description"] = s.doc
        prop["scope"] = "resource"
        out[f"codesift.{section}.{camel(name)}"] = prop
    return out


def expected_configuration() -> dict[str, object]:
    return {
        "title": "codesift",
        "properties": {**CLIENT_ONLY, **server_properties()},
    }


def test_vscode_configuration_equals_the_server_settings() -> None:
    package = json.loads(PACKAGE_JSON.read_text(encoding="utf-8"))
    got = package["contributes"]["configuration"]
    assert got == expected_configuration(), (
        "vscode-extension/package.json is out of date: run "
        "`.venv/bin/python -m tests.unit.test_vscode_settings --write`"
    )


def test_every_vscode_setting_round_trips_to_a_server_key() -> None:
    # initializationOptions carry camelCase keys; the server snake_cases them back.
    keys = {s.key for s in describe_settings()}
    for key in server_properties():
        _, section, name = key.split(".")
        assert f"{section}.{snake(name)}" in keys


def test_client_only_settings_do_not_collide_with_server_sections() -> None:
    sections = {s.key.split(".")[0] for s in describe_settings()}
    assert not {key.split(".")[1] for key in CLIENT_ONLY} & sections


def write() -> None:
    package = json.loads(PACKAGE_JSON.read_text(encoding="utf-8"))
    package.setdefault("contributes", {})["configuration"] = expected_configuration()
    PACKAGE_JSON.write_text(json.dumps(package, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    if "--write" in sys.argv:
        write()
    else:
        print(json.dumps(expected_configuration(), indent=2, ensure_ascii=False))
