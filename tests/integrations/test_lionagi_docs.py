"""docs/lionagi.md: its python blocks run in order, in one namespace, in a fresh directory."""

from __future__ import annotations

import ast
import asyncio
import inspect
import re
from pathlib import Path
from typing import Any

import pytest

PAGE = Path(__file__).resolve().parents[2] / "docs" / "lionagi.md"


def test_the_examples_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every example of the page runs, top-level await included, and the refusals print their fields."""
    blocks = re.findall(r"^```python\n(.*?)^```", PAGE.read_text(), flags=re.DOTALL | re.MULTILINE)
    assert len(blocks) == 5
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, Any] = {"__name__": "lionagi_docs"}

    async def run() -> None:
        for block in blocks:
            code = compile(block, str(PAGE), "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
            result = eval(code, namespace)  # the page's own examples
            if inspect.iscoroutine(result):
                await result

    asyncio.run(run())
    assert capsys.readouterr().out.splitlines() == ["__class__", "created_at", "content"]
    assert [block.rstrip().splitlines()[-3:] for block in blocks[-1:]] == [
        ["# __class__", "# created_at", "# content"]  # the page shows what the block prints
    ]
    assert sorted(path.name for path in tmp_path.glob("*.db")) == [
        "memory.db",
        "notes.db",
        "team.db",
    ]
