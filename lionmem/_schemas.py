"""The JSON schemas lionmem was generated from, as shipped inside the installed package."""

from __future__ import annotations

import json
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

__all__ = ["schema_path", "schemas"]


def _schema_dir() -> Traversable:
    # A wheel carries the schemas at lionmem/schema (hatchling force-include); a source checkout
    # or an editable install has them at the repository root, beside the package.
    shipped = files("lionmem").joinpath("schema")
    if shipped.is_dir():
        return shipped
    return Path(__file__).resolve().parent.parent / "schema"


def _names() -> list[str]:
    return sorted(
        entry.name.removesuffix(".json")
        for entry in _schema_dir().iterdir()
        if entry.name.endswith(".json")
    )


def schema_path(name: str) -> Traversable:
    """Return the shipped schema file called ``name`` (``"memory_item"`` or ``"memory_item.json"``).

    Raises ``LookupError`` naming the available schemas when there is no such file.
    """
    stem = name.removesuffix(".json")
    if stem not in _names():
        msg = f"no lionmem schema named {name!r}; available: {', '.join(_names())}"
        raise LookupError(msg)
    return _schema_dir().joinpath(f"{stem}.json")


def schemas() -> dict[str, dict[str, Any]]:
    """Return every shipped schema, parsed, keyed by its name without ``.json``."""
    return {name: json.loads(schema_path(name).read_text(encoding="utf-8")) for name in _names()}
