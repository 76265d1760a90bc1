"""The examples of docs/sqlite-operations.md run, in order, and print what the page says."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

PAGE = Path(__file__).resolve().parents[3] / "docs" / "sqlite-operations.md"
BLOCK = re.compile(r"^```python\n(.*?)^```", re.DOTALL | re.MULTILINE)


def _expected_output(block: str) -> str:
    """The trailing ``# ...`` lines of a block: what it prints."""
    lines = block.rstrip("\n").splitlines()
    printed: list[str] = []
    while lines and lines[-1].startswith("# "):
        printed.insert(0, lines.pop()[2:])
    return "".join(line + "\n" for line in printed)


def test_every_example_prints_what_the_page_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each python block runs in one namespace, in a fresh directory, with the page's output."""
    blocks = BLOCK.findall(PAGE.read_text(encoding="utf-8"))
    assert len(blocks) >= 2
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {"__name__": "__main__"}
    for block in blocks:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(block, str(PAGE), "exec"), namespace)
        assert out.getvalue() == _expected_output(block)
