"""Shared helpers of the MCP server tests: the server command, clients, and result checks."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import mcp_types as types
from mcp.client.stdio import StdioServerParameters

from lionmem.mcp._documents import ToolDocument, tool_documents

__all__ = [
    "REPO",
    "RawServer",
    "call_request",
    "documents",
    "error_text",
    "http_server",
    "initialize_request",
    "port_of",
    "post_head",
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
def http_server(
    db: Path, *arguments: str, limits: dict[str, float] | None = None, held: Path | None = None
) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """Run ``lionmem mcp --http 127.0.0.1:0`` (or the address in ``arguments``); yield its URL.

    ``limits``: HTTP limits of ``lionmem.mcp._http`` (``HEAD_SECONDS``...) set in the server, in
    place of its own. ``held``: the gate directory of ``tests.mcp.held_writes``, whose every
    write waits there. The URL comes from the line the server writes to stderr once it listens.
    The process is terminated (SIGTERM) at the end unless the test stopped it already.
    """
    if "--http" not in arguments:
        arguments = ("--http", "127.0.0.1:0", *arguments)
    command = server_command("--db", str(db), *arguments)
    environment = None
    if limits is not None or held is not None:
        settings = [f"{name}={value}" for name, value in (limits or {}).items()]
        launcher = (
            ["tests.mcp.short_deadlines"] if held is None else ["tests.mcp.held_writes", str(held)]
        )
        command = [sys.executable, "-m", *launcher, *settings, "--", "--db", str(db), *arguments]
        environment = {**os.environ, "PYTHONPATH": str(REPO)}
    process = subprocess.Popen(
        command,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        cwd=db.parent,
        env=environment,
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


def port_of(url: str) -> int:
    """The port of ``http://HOST:PORT/mcp`` (or of a line ending in that URL)."""
    return int(url.rsplit(":", 1)[1].split("/", maxsplit=1)[0])


def post_head(length: int, headers: dict[str, str]) -> bytes:
    """The head of a JSON POST to /mcp on the loopback host declaring ``length`` bytes of
    body, with ``headers`` added."""
    lines = [
        "POST /mcp HTTP/1.1",
        "Host: 127.0.0.1",
        "Content-Type: application/json",
        "Accept: application/json, text/event-stream",
        f"Content-Length: {length}",
        *(f"{name}: {value}" for name, value in headers.items()),
    ]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def initialize_request(request_id: int) -> dict[str, Any]:
    """An ``initialize`` request, as a JSON object."""
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "raw-stdio-test", "version": "1"},
        },
    }


def call_request(request_id: int | str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """A ``tools/call`` request, as a JSON object."""
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }


class RawServer:
    """``lionmem mcp`` over pipes, written and read one JSON line at a time."""

    def __init__(
        self,
        db: Path,
        *arguments: str,
        initialize: bool = True,
        launcher: Sequence[str] = (),
    ) -> None:
        """Start the server (through ``launcher``, a command that runs the rest of its
        arguments, when given); ``initialize`` it unless told not to."""
        self.process = subprocess.Popen(
            [*launcher, *server_command("--db", str(db), *arguments)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=db.parent,
        )
        assert self.process.stdin is not None
        assert self.process.stdout is not None
        self.stdin = self.process.stdin
        self.stdout = self.process.stdout
        if not initialize:
            return
        self.send(json.dumps(initialize_request(1)).encode())
        assert self.receive()["id"] == 1
        self.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')

    def send(self, line: bytes, newline: bool = True) -> None:
        self.stdin.write(line + (b"\n" if newline else b""))
        self.stdin.flush()

    def receive(self) -> dict[str, Any]:
        line = self.stdout.readline()
        assert line.endswith(b"\n"), line
        message: dict[str, Any] = json.loads(line)
        return message

    def call(self, request_id: int, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        self.send(json.dumps(call_request(request_id, name, arguments)).encode())
        answer = self.receive()
        assert answer["id"] == request_id, answer
        result: dict[str, Any] = answer["result"]
        return result

    def finish(self) -> tuple[int, bytes, bytes]:
        """Close stdin; the exit status, the rest of stdout and stderr (``TimeoutExpired``
        if the server has not exited 30 s later)."""
        rest, errors = self.process.communicate(timeout=30)
        return self.process.returncode, rest, errors

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=30)
        for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()
