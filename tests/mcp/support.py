"""Shared helpers of the MCP server tests: the server command, clients, and result checks."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import mcp_types as types
from mcp.client.stdio import StdioServerParameters

from lionmem.mcp._documents import ToolDocument, tool_documents

__all__ = [
    "REPO",
    "documents",
    "error_text",
    "http_server",
    "server_command",
    "stdio_parameters",
    "structured",
]

REPO = Path(__file__).resolve().parents[2]


def server_command(*arguments: str) -> list[str]:
    """The command line of ``lionmem mcp`` with ``arguments``, run by this test's Python."""
    return [sys.executable, "-m", "lionmem", "mcp", *arguments]


def stdio_parameters(db: Path, *arguments: str) -> StdioServerParameters:
    """How the SDK's stdio client starts ``lionmem mcp --db db`` with ``arguments``."""
    command = server_command("--db", str(db), *arguments)
    return StdioServerParameters(command=command[0], args=command[1:], cwd=db.parent)


def documents() -> dict[str, ToolDocument]:
    """The generated tool documents by tool name."""
    return {document.name: document for document in tool_documents()}


def structured(result: types.CallToolResult) -> Any:
    """The structured content of a successful result, checked against its text block."""
    assert result.is_error is False, result.content
    assert len(result.content) == 1
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    assert json.loads(block.text) == result.structured_content
    return result.structured_content


def error_text(result: types.CallToolResult) -> str:
    """The message of an error result, which carries no structured content."""
    assert result.is_error is True, result
    assert result.structured_content is None
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


@contextmanager
def http_server(db: Path, *arguments: str) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """Run ``lionmem mcp --http 127.0.0.1:0`` (or the address in ``arguments``); yield its URL.

    The URL comes from the line the server writes to stderr once it listens. The process is
    terminated (SIGTERM) at the end unless the test stopped it already.
    """
    if "--http" not in arguments:
        arguments = ("--http", "127.0.0.1:0", *arguments)
    process = subprocess.Popen(
        server_command("--db", str(db), *arguments),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        cwd=db.parent,
    )
    try:
        assert process.stderr is not None
        line = process.stderr.readline()
        assert " at http://" in line, line + process.stderr.read()
        yield line.rsplit(" at ", 1)[1].strip(), process
    finally:
        if process.poll() is None:
            process.terminate()
            process.wait(timeout=30)
        if process.stderr is not None:
            process.stderr.close()
