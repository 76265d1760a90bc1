"""lionmem: typed, schema-first memory for Python agent frameworks.

``_PUBLIC`` is the one list of public names, each with the module that defines it: ``__all__``
and the lazy imports (PEP 562) follow it, and ``tests/test_public_api.py`` checks that the
imports for type checkers below name the same objects. Lazy imports keep ``import lionmem``
cheap, and the generated models, which import ``lionmem._base``, never meet a half-initialised
package.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

_PUBLIC: dict[str, str] = {
    "Branch": "lionmem.session",
    "BranchNotFoundError": "lionmem.errors",
    "Element": "lionmem_models.element",
    "ExternalMemoryStore": "lionmem.protocol",
    "InMemoryStore": "lionmem.stores.memory",
    "IncompatibleDatabaseError": "lionmem.errors",
    "MemoryAdapterError": "lionmem.errors",
    "MemoryAdapterManifest": "lionmem_models.memory_adapter_manifest",
    "MemoryAdapterUnavailable": "lionmem.errors",
    "MemoryItem": "lionmem_models.memory_item",
    "MemoryQuery": "lionmem_models.memory_query",
    "MemoryStore": "lionmem.protocol",
    "Pile": "lionmem.pile",
    "SQLiteMemoryStore": "lionmem.stores.sqlite",
    "Session": "lionmem.session",
    "UnrepresentableValueError": "lionmem.errors",
    "UnsupportedMemoryQuery": "lionmem.errors",
    "schema_path": "lionmem._schemas",
    "schemas": "lionmem._schemas",
}

__all__ = list(_PUBLIC)

if TYPE_CHECKING:
    from lionmem._schemas import schema_path as schema_path
    from lionmem._schemas import schemas as schemas
    from lionmem.errors import BranchNotFoundError as BranchNotFoundError
    from lionmem.errors import IncompatibleDatabaseError as IncompatibleDatabaseError
    from lionmem.errors import MemoryAdapterError as MemoryAdapterError
    from lionmem.errors import MemoryAdapterUnavailable as MemoryAdapterUnavailable
    from lionmem.errors import UnrepresentableValueError as UnrepresentableValueError
    from lionmem.errors import UnsupportedMemoryQuery as UnsupportedMemoryQuery
    from lionmem.pile import Pile as Pile
    from lionmem.protocol import ExternalMemoryStore as ExternalMemoryStore
    from lionmem.protocol import MemoryStore as MemoryStore
    from lionmem.session import Branch as Branch
    from lionmem.session import Session as Session
    from lionmem.stores.memory import InMemoryStore as InMemoryStore
    from lionmem.stores.sqlite import SQLiteMemoryStore as SQLiteMemoryStore
    from lionmem_models.element import Element as Element
    from lionmem_models.memory_adapter_manifest import (
        MemoryAdapterManifest as MemoryAdapterManifest,
    )
    from lionmem_models.memory_item import MemoryItem as MemoryItem
    from lionmem_models.memory_query import MemoryQuery as MemoryQuery

    __version__: str


def __getattr__(name: str) -> Any:
    if name == "__version__":
        from importlib.metadata import version

        value: Any = version("lionmem")
    elif name in _PUBLIC:
        value = getattr(import_module(_PUBLIC[name]), name)
    else:
        msg = f"module 'lionmem' has no attribute {name!r}"
        raise AttributeError(msg)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__, "__version__"})
