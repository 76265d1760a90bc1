"""asyncpg is an optional extra: ``import lionmem`` never needs it; its absence is one clear line."""

from __future__ import annotations

import subprocess
import sys

import lionmem
from lionmem.stores.postgres import PostgresMemoryStore

# Runs in a fresh interpreter where importing asyncpg fails as if it were not installed.
WITHOUT_ASYNCPG = """
import sys
sys.modules["asyncpg"] = None
import lionmem
assert "asyncpg" not in sys.modules or sys.modules["asyncpg"] is None
try:
    lionmem.PostgresMemoryStore
except ImportError as exc:
    print(exc)
else:
    print("imported")
"""

STAR_WITHOUT_ASYNCPG = """
import sys
sys.modules["asyncpg"] = None
import lionmem
namespace = {}
exec("from lionmem import *", namespace)
print(sorted(set(lionmem._PUBLIC) - set(namespace)), "PostgresMemoryStore" in lionmem.__all__)
"""

LAZY = """
import sys
import lionmem
lionmem.MemoryItem(content="x")
lionmem.SQLiteMemoryStore
print(sorted(name for name in sys.modules if name.split(".")[0] == "asyncpg"))
"""


def _run(code: str) -> str:
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    return result.stdout.strip()


def test_missing_asyncpg_names_the_extra() -> None:
    """Without asyncpg, PostgresMemoryStore raises a one-line ImportError naming lionmem[postgres]."""
    message = _run(WITHOUT_ASYNCPG)
    assert message == (
        "PostgresMemoryStore needs asyncpg: install the extra with pip install 'lionmem[postgres]'"
    )


def test_star_import_without_asyncpg_binds_every_other_name() -> None:
    """Without asyncpg, ``from lionmem import *`` works and binds every public name but the store
    that needs it (which ``__all__`` then leaves out)."""
    assert _run(STAR_WITHOUT_ASYNCPG) == "['PostgresMemoryStore'] False"


def test_import_lionmem_does_not_import_asyncpg() -> None:
    """Importing lionmem and using its other stores leaves asyncpg unimported."""
    assert _run(LAZY) == "[]"


def test_exported_from_lionmem() -> None:
    """lionmem.PostgresMemoryStore is the store class (imported lazily)."""
    assert lionmem.PostgresMemoryStore is PostgresMemoryStore
    assert "PostgresMemoryStore" in lionmem.__all__
