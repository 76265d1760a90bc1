"""docs/mcp.md: its JSON snippets parse and its numbers are the code's (tests/docs runs its examples)."""

from __future__ import annotations

import json
import re

from lionmem.mcp import DEFAULT_MAX_BYTES, DEFAULT_MAX_LIMIT
from lionmem.mcp._bounds import ENVELOPE, OMITTED_ENTRY, SEARCH_FRAME
from tests.mcp.support import REPO

PAGE = (REPO / "docs" / "mcp.md").read_text(encoding="utf-8")


def _blocks(language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```$", PAGE, flags=re.MULTILINE | re.DOTALL)


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
