"""The public surface of ``lionmem``: exactly these names, imported lazily."""

from __future__ import annotations

import subprocess
import sys
from importlib import import_module

import pytest

import lionmem

# Sorted as ruff sorts __all__; a later issue that adds a public name adds it here too.
PUBLIC = [
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

SEAM = {
    "Element": "lionmem_models.element",
    "MemoryItem": "lionmem_models.memory_item",
    "MemoryQuery": "lionmem_models.memory_query",
    "MemoryStore": "lionmem.protocol",
    "InMemoryStore": "lionmem.stores.memory",
    "Pile": "lionmem.pile",
    "Branch": "lionmem.session",
    "Session": "lionmem.session",
}


def test_all_is_pinned() -> None:
    """lionmem.__all__ is exactly the pinned list, in that order."""
    assert lionmem.__all__ == PUBLIC


@pytest.mark.parametrize("name", PUBLIC)
def test_every_public_name_resolves(name: str) -> None:
    """Each name in __all__ is an attribute of lionmem."""
    assert getattr(lionmem, name) is not None


@pytest.mark.parametrize(("name", "module"), sorted(SEAM.items()))
def test_seam_names_are_the_defining_objects(name: str, module: str) -> None:
    """The memory-seam names are the very objects their modules define."""
    assert getattr(lionmem, name) is getattr(import_module(module), name)


def test_star_import_gives_every_public_name() -> None:
    """from lionmem import * binds every name of __all__."""
    namespace: dict[str, object] = {}
    exec("from lionmem import *", namespace)
    assert set(PUBLIC) <= set(namespace)


def test_dir_lists_every_public_name() -> None:
    """dir(lionmem) includes every public name, resolved or not."""
    assert set(PUBLIC) <= set(dir(lionmem))


def test_unknown_name_raises_attribute_error() -> None:
    """An unknown attribute raises AttributeError naming it."""
    with pytest.raises(AttributeError, match="module 'lionmem' has no attribute 'Nope'"):
        _ = lionmem.Nope


def test_import_is_lazy() -> None:
    """Importing lionmem loads neither the models, the store nor the session modules."""
    probe = (
        "import sys, lionmem; "
        "print(sorted(m for m in ('lionmem_models.memory_item', 'lionmem.session', "
        "'lionmem.stores.memory', 'lionmem.pile', 'pydantic') if m in sys.modules))"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    )
    assert result.stdout.strip() == "[]"
