"""The MCP tool documents generated from schema/, as shipped with the package.

``tools/generate.py`` writes one document per tool to ``generated/mcp/``: the tool as MCP lists it
(name, title, description, annotations, and input and output schemas with every reference
bundled under ``$defs``) and the store method it needs, if any. A wheel carries them at
``lionmem/mcp/tools/``; a source checkout or an editable install reads them from the repository.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

__all__ = ["ToolDocument", "tool_documents"]


@dataclass(frozen=True)
class ToolDocument:
    """One generated tool: its MCP definition and the store method it needs (``None``: none)."""

    tool: dict[str, Any]
    requires: str | None

    @property
    def name(self) -> str:
        return str(self.tool["name"])

    @property
    def input_schema(self) -> dict[str, Any]:
        schema: dict[str, Any] = self.tool["inputSchema"]
        return schema

    @property
    def output_schema(self) -> dict[str, Any]:
        schema: dict[str, Any] = self.tool["outputSchema"]
        return schema


def _folder() -> Traversable:
    shipped = files("lionmem.mcp").joinpath("tools")
    if shipped.is_dir():
        return shipped
    return Path(__file__).resolve().parents[2] / "generated" / "mcp"


@cache
def tool_documents() -> tuple[ToolDocument, ...]:
    """Return every generated tool document, in the order the server lists them."""
    folder = _folder()
    index = json.loads(folder.joinpath("index.json").read_text(encoding="utf-8"))
    documents = []
    for name in index["tools"]:
        raw = json.loads(folder.joinpath(f"{name}.json").read_text(encoding="utf-8"))
        documents.append(ToolDocument(tool=raw["tool"], requires=raw["requires"]))
    return tuple(documents)
