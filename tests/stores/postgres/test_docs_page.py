"""docs/postgres.md's Python examples run, in order, in one namespace, against a real server.

The page's examples use a variable ``dsn`` (the address of the reader's database); here it is a
fresh database of the session's cluster. Top-level ``await`` is allowed, as in the docs harness.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[3]
PAGE = ROOT / "docs" / "postgres.md"
BLOCK = re.compile(r"^```python\n(.*?)^```$", re.DOTALL | re.MULTILINE)


def test_page_has_examples() -> None:
    """The page shows at least the quickstart, a pool of one's own, namespaces and the extras."""
    assert len(BLOCK.findall(PAGE.read_text(encoding="utf-8"))) >= 4


async def test_examples_run(postgres_dsn: str) -> None:
    """Every python block of the page runs without error, with ``dsn`` given."""
    namespace: dict[str, Any] = {"dsn": postgres_dsn, "__name__": "docs_postgres"}
    for number, source in enumerate(BLOCK.findall(PAGE.read_text(encoding="utf-8")), 1):
        code = compile(
            source, f"docs/postgres.md block {number}", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
        )
        result = eval(code, namespace)  # the page's own examples, run as documented
        if result is not None:
            await result
