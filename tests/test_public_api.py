"""The public surface of ``lionmem``: one table of names, imported lazily, seen alike by type checkers.

Nothing here restates the list of names: each check derives its expectations from
``lionmem._PUBLIC`` (the table), from the imports ``lionmem/__init__.py`` gives type checkers, and
from what ``lionmem.errors`` defines.
"""

from __future__ import annotations

import ast
import inspect
import subprocess
import sys
import tomllib
from importlib import import_module, metadata

import pytest

import lionmem
from lionmem import errors
from tests.schema_support import REPO

PUBLIC = sorted(lionmem._PUBLIC)


def type_checking_imports() -> dict[str, str]:
    """Each name imported under ``if TYPE_CHECKING:`` in lionmem/__init__.py, with its module."""
    tree = ast.parse(inspect.getsource(lionmem))
    (block,) = [
        node
        for node in tree.body
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"
    ]
    found: dict[str, str] = {}
    for node in block.body:
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                # "X as X" marks an explicit re-export for type checkers.
                assert alias.asname == alias.name, ast.unparse(node)
                found[alias.name] = str(node.module)
    return found


def test_all_is_the_table_in_sorted_order() -> None:
    """__all__ lists every name of the table once, sorted as ruff sorts it."""
    assert lionmem.__all__ == list(lionmem._PUBLIC)
    assert lionmem.__all__ == sorted(lionmem.__all__, key=lambda name: (name[0].islower(), name))


def test_type_checkers_see_the_same_names_from_the_same_modules() -> None:
    """The TYPE_CHECKING imports name exactly the table's names, each from the table's module."""
    assert type_checking_imports() == lionmem._PUBLIC


@pytest.mark.parametrize("name", PUBLIC)
def test_every_public_name_is_its_defining_modules_object(name: str) -> None:
    """Each public name is the very object the table's module defines (not one it imports)."""
    module = import_module(lionmem._PUBLIC[name])
    value = getattr(lionmem, name)
    assert value is getattr(module, name)
    assert (value.__module__, value.__name__) == (module.__name__, name)


def test_every_error_lionmem_defines_is_public() -> None:
    """Every exception class lionmem.errors defines is exported from lionmem."""
    defined = {
        name
        for name, value in vars(errors).items()
        if isinstance(value, type)
        and issubclass(value, BaseException)
        and value.__module__ == "lionmem.errors"
    }
    assert defined == set(errors.__all__)
    assert defined <= set(lionmem.__all__)
    assert len(defined) >= 6


def test_version_is_the_installed_distributions() -> None:
    """lionmem.__version__ comes from the package metadata, which is pyproject's version."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert lionmem.__version__ == metadata.version("lionmem") == project["version"]


def test_star_import_gives_every_public_name() -> None:
    """from lionmem import * binds every name of __all__."""
    namespace: dict[str, object] = {}
    exec("from lionmem import *", namespace)
    assert set(PUBLIC) <= set(namespace)


def test_dir_lists_every_public_name() -> None:
    """dir(lionmem) includes every public name and __version__, resolved or not."""
    assert {*PUBLIC, "__version__"} <= set(dir(lionmem))


def test_unknown_name_raises_attribute_error() -> None:
    """An unknown attribute raises AttributeError naming it."""
    with pytest.raises(AttributeError, match="module 'lionmem' has no attribute 'Nope'"):
        _ = lionmem.Nope


def test_import_is_lazy() -> None:
    """Importing lionmem loads none of the modules the table names, nor pydantic."""
    modules = sorted({*lionmem._PUBLIC.values(), "pydantic", "importlib.metadata"})
    probe = f"import sys, lionmem; print([m for m in {modules!r} if m in sys.modules])"
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    )
    assert result.stdout.strip() == "[]"
