"""lionmem: typed, schema-first memory for Python agent frameworks.

``_PUBLIC`` is the one list of public names, each with the module that defines it: ``__all__``
and the lazy imports (PEP 562) follow it, and ``tests/test_public_api.py`` checks that the
imports for type checkers below name the same objects. Lazy imports keep ``import lionmem``
cheap, and the generated models, which import ``lionmem._base``, never meet a half-initialised
package.
"""

from __future__ import annotations

from importlib import import_module
from importlib.util import find_spec
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
    "PostgresMemoryStore": "lionmem.stores.postgres",
    "SQLiteMemoryStore": "lionmem.stores.sqlite",
    "Session": "lionmem.session",
    "UnknownToolError": "lionmem.errors",
    "UnrepresentableValueError": "lionmem.errors",
    "UnsupportedMemoryQuery": "lionmem.errors",
    "schema_path": "lionmem._schemas",
    "schemas": "lionmem._schemas",
}

_EXTRAS: dict[str, str] = {"PostgresMemoryStore": "asyncpg"}
"""The public names that need an optional extra's package, which ``__all__`` lists only when it is
installed: ``from lionmem import *`` then works without the extra, and the name itself still
raises the ImportError that names the extra."""

__all__ = [name for name in _PUBLIC if name not in _EXTRAS or find_spec(_EXTRAS[name]) is not None]

if TYPE_CHECKING:
    from lionmem._schemas import schema_path as schema_path
    from lionmem._schemas import schemas as schemas
    from lionmem.errors import BranchNotFoundError as BranchNotFoundError
    from lionmem.errors import IncompatibleDatabaseError as IncompatibleDatabaseError
    from lionmem.errors import MemoryAdapterError as MemoryAdapterError
    from lionmem.errors import MemoryAdapterUnavailable as MemoryAdapterUnavailable
    from lionmem.errors import UnknownToolError as UnknownToolError
    from lionmem.errors import UnrepresentableValueError as UnrepresentableValueError
    from lionmem.errors import UnsupportedMemoryQuery as UnsupportedMemoryQuery
    from lionmem.pile import Pile as Pile
    from lionmem.protocol import ExternalMemoryStore as ExternalMemoryStore
    from lionmem.protocol import MemoryStore as MemoryStore
    from lionmem.session import Branch as Branch
    from lionmem.session import Session as Session
    from lionmem.stores.memory import InMemoryStore as InMemoryStore
    from lionmem.stores.postgres import PostgresMemoryStore as PostgresMemoryStore
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
