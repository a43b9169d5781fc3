"""MCP tool calls with an unknown, ill-typed or missing argument get INVALID_ARGUMENT naming it."""

from __future__ import annotations

import asyncio
from pathlib import Path

from mcp.types import CallToolResult, TextContent

from codesift.server.mcp import create_server
from codesift.server.mcp_base import McpConfig


def call(root: Path, tool: str, arguments: dict[str, object]) -> tuple[str, bool]:
    server = create_server(McpConfig(roots=(root,)))
    result = asyncio.run(server.call_tool(tool, arguments))
    assert isinstance(result, CallToolResult)
    first = result.content[0]
    assert isinstance(first, TextContent)
    return first.text, bool(result.is_error)


def test_an_unknown_argument_is_named_with_the_ones_the_tool_takes(tmp_path: Path) -> None:
    text, error = call(tmp_path, "hybrid_search", {"semantic_query": "login", "limitt": 3})
    assert error
    assert text.startswith(
        "[ERROR: INVALID_ARGUMENT] hybrid_search has no argument 'limitt'; its arguments are"
    )
    assert "limit" in text and "semantic_query" in text


def test_an_ill_typed_argument_is_named_without_pydantic_noise(tmp_path: Path) -> None:
    text, error = call(tmp_path, "grep_search", {"pattern": "x", "context": "ten"})
    assert error
    assert text.startswith("[ERROR: INVALID_ARGUMENT] argument 'context' of grep_search:"), text
    assert "pydantic" not in text and "Error executing tool" not in text


def test_a_missing_argument_is_named(tmp_path: Path) -> None:
    text, error = call(tmp_path, "symbol_search", {"limit": 3})
    assert error and text.startswith("[ERROR: INVALID_ARGUMENT] argument 'name' of symbol_search:"), text


def test_good_arguments_reach_the_tool(tmp_path: Path) -> None:
    text, _ = call(tmp_path, "grep_search", {"pattern": "nothing-here"})
    assert "INVALID_ARGUMENT" not in text
