"""docs/mcp.md: its Python examples run, its JSON snippets parse, its numbers are the code's."""

from __future__ import annotations

import ast
import json
import os
import re
from pathlib import Path
from types import CodeType

import pytest

from lionmem.mcp import DEFAULT_MAX_BYTES, DEFAULT_MAX_LIMIT
from lionmem.mcp._bounds import ENVELOPE, OMITTED_ENTRY, SEARCH_FRAME
from tests.mcp.support import REPO

PAGE = (REPO / "docs" / "mcp.md").read_text(encoding="utf-8")


def _blocks(language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```$", PAGE, flags=re.MULTILINE | re.DOTALL)


async def test_python_examples_run_in_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The page's Python blocks run top to bottom in one namespace and print what they say."""
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {}
    blocks = _blocks("python")
    assert len(blocks) == 2
    for block in blocks:
        code: CodeType = compile(block, "docs/mcp.md", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
        result = eval(code, namespace)
        if result is not None:
            await result
    assert capsys.readouterr().out == (
        "50 True\n['memory_store', 'memory_retrieve', 'memory_search']\nFalse ['id']\n"
    )
    assert os.path.exists(tmp_path / "memory.db")


def test_json_snippets_parse() -> None:
    """Every JSON block of the page is valid JSON with an mcpServers entry."""
    blocks = _blocks("json")
    assert len(blocks) == 2
    for block in blocks:
        assert "lionmem" in json.loads(block)["mcpServers"]


def test_the_numbers_on_the_page_are_the_defaults() -> None:
    """The defaults and the per-hit reserve the page states are the ones the code uses."""
    assert f"(default {DEFAULT_MAX_LIMIT})" in PAGE
    assert f"(default {DEFAULT_MAX_BYTES}, 256 KiB)" in PAGE
    assert DEFAULT_MAX_BYTES == 256 * 1024
    assert (
        f"({OMITTED_ENTRY} bytes per hit of `--max-limit`, plus {ENVELOPE + SEARCH_FRAME:,} bytes)"
        in PAGE
    )
