"""docs/mcp.md: its JSON snippets parse and its numbers are the code's (tests/docs runs its examples)."""

from __future__ import annotations

import json
import re

from lionmem.mcp import DEFAULT_MAX_BYTES, DEFAULT_MAX_LIMIT, DEFAULT_MAX_REQUEST_BYTES
from lionmem.mcp._bounds import (
    ENVELOPE,
    MAX_NESTING,
    MIN_REQUEST_BYTES,
    OMITTED_ENTRY,
    RETRIEVE_NESTING,
    SEARCH_FRAME,
    SEARCH_NESTING,
)
from lionmem.mcp._http import STOP_GRACE
from lionmem.mcp._ids import ODD_ID
from lionmem.mcp._stdio import DISCARD_CHUNK, HEAD_BYTES, TAIL_BYTES, request_too_large
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


def test_the_request_cap_on_the_page_is_the_code_s() -> None:
    """The request cap's default and floor, the chunk and tail sizes and the answer shown."""
    assert f"(default {DEFAULT_MAX_REQUEST_BYTES}, 4 MiB; at least {MIN_REQUEST_BYTES})" in PAGE
    assert DEFAULT_MAX_REQUEST_BYTES == 4 * 2**20
    assert f"A cap under {MIN_REQUEST_BYTES} bytes is" in PAGE
    assert f"in {DISCARD_CHUNK // 1024} KiB chunks" in PAGE
    assert f"and its last {TAIL_BYTES}," in PAGE
    assert f"in the first {HEAD_BYTES // 1024} KiB (where" in PAGE
    answer, _ = re.findall(r"^  ```text\n  (.*?)\n  ```$", PAGE, flags=re.MULTILINE)
    expected = request_too_large(
        DEFAULT_MAX_REQUEST_BYTES, b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{'
    )
    assert answer == expected.model_dump_json(by_alias=True, exclude_unset=True)


def test_the_answer_to_an_odd_id_on_the_page_is_the_code_s() -> None:
    _, answer = re.findall(r"^  ```text\n  (.*?)\n  ```$", PAGE, flags=re.MULTILINE)
    assert answer == ODD_ID.model_dump_json(by_alias=True, exclude_unset=True)


def test_the_nesting_limit_on_the_page_is_the_code_s() -> None:
    """The deepest item memory_store takes, the parser's depth and the levels around an item."""
    assert f"more than {MAX_NESTING - SEARCH_NESTING}\nlevels deep" in PAGE
    assert f"reads {MAX_NESTING} levels of arrays and objects around a value" in PAGE
    assert SEARCH_NESTING == 4
    assert "puts an item\nfour levels down" in PAGE
    assert f"so {MAX_NESTING - RETRIEVE_NESTING}\nlevels at most" in PAGE


def test_the_stop_grace_on_the_page_is_the_code_s() -> None:
    assert f"Requests still running {STOP_GRACE} seconds after the signal" in PAGE


def test_the_thread_and_error_bounds_on_the_page_are_the_code_s() -> None:
    """The arguments checked off the loop, how many at once, and the length of a problem shown."""
    from lionmem.mcp._tools import _CHECK_SLOTS, _INLINE_VALUES, _PROBLEM_CHARS

    assert f"Arguments holding more than {_INLINE_VALUES} values are\nchecked" in PAGE
    assert f"most {_CHECK_SLOTS} such checks run at once" in PAGE
    assert f"each problem shows its first {_PROBLEM_CHARS} characters" in PAGE
