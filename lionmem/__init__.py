"""lionmem: typed, schema-first memory for Python agent frameworks.

The public names are imported lazily (PEP 562), so ``import lionmem`` stays cheap and the
generated models, which import ``lionmem._base``, never meet a half-initialised package.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lionmem._schemas import schema_path, schemas
    from lionmem.errors import MemoryAdapterError, MemoryAdapterUnavailable, UnsupportedMemoryQuery
    from lionmem.pile import Pile
    from lionmem.protocol import ExternalMemoryStore, MemoryStore
    from lionmem.session import Branch, Session
    from lionmem.stores.memory import InMemoryStore
    from lionmem.stores.postgres import PostgresMemoryStore
    from lionmem.stores.sqlite import SQLiteMemoryStore
    from lionmem_models.element import Element
    from lionmem_models.memory_adapter_manifest import MemoryAdapterManifest
    from lionmem_models.memory_item import MemoryItem
    from lionmem_models.memory_query import MemoryQuery

__version__ = "0.1.0"

_LAZY: dict[str, str] = {
    "Element": "lionmem_models.element",
    "ExternalMemoryStore": "lionmem.protocol",
    "MemoryAdapterError": "lionmem.errors",
    "MemoryAdapterManifest": "lionmem_models.memory_adapter_manifest",
    "MemoryAdapterUnavailable": "lionmem.errors",
    "MemoryItem": "lionmem_models.memory_item",
    "MemoryQuery": "lionmem_models.memory_query",
    "MemoryStore": "lionmem.protocol",
    "InMemoryStore": "lionmem.stores.memory",
    "Pile": "lionmem.pile",
    "PostgresMemoryStore": "lionmem.stores.postgres",
    "Branch": "lionmem.session",
    "Session": "lionmem.session",
    "SQLiteMemoryStore": "lionmem.stores.sqlite",
    "UnsupportedMemoryQuery": "lionmem.errors",
    "schema_path": "lionmem._schemas",
    "schemas": "lionmem._schemas",
}

__all__ = [
    "Branch",
    "Element",
    "ExternalMemoryStore",
    "InMemoryStore",
    "MemoryAdapterError",
    "MemoryAdapterManifest",
    "MemoryAdapterUnavailable",
    "MemoryItem",
    "MemoryQuery",
    "MemoryStore",
    "Pile",
    "PostgresMemoryStore",
    "SQLiteMemoryStore",
    "Session",
    "UnsupportedMemoryQuery",
    "schema_path",
    "schemas",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        msg = f"module 'lionmem' has no attribute {name!r}"
        raise AttributeError(msg)
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
