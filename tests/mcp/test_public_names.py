"""The public names of ``lionmem.mcp``: one table, imported lazily, seen alike by type checkers."""

from __future__ import annotations

import ast
import inspect
from importlib import import_module

import pytest

import lionmem.mcp


def type_checking_imports() -> dict[str, str]:
    """Each name imported under ``if TYPE_CHECKING:`` in lionmem/mcp/__init__.py, with its module."""
    tree = ast.parse(inspect.getsource(lionmem.mcp))
    (block,) = [
        node
        for node in tree.body
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"
    ]
    found: dict[str, str] = {}
    for node in block.body:
        assert isinstance(node, ast.ImportFrom)
        for alias in node.names:
            assert alias.asname == alias.name, ast.unparse(node)
            found[alias.name] = str(node.module)
    return found


def test_all_is_the_table() -> None:
    """__all__ lists the table's names in its order, sorted as ruff sorts them."""
    assert lionmem.mcp.__all__ == list(lionmem.mcp._PUBLIC)
    assert lionmem.mcp.__all__ == sorted(
        lionmem.mcp.__all__, key=lambda name: (not name.isupper(), name[0].islower(), name)
    )


def test_type_checkers_see_the_same_names_from_the_same_modules() -> None:
    """The TYPE_CHECKING imports name exactly the table's names, each from the table's module."""
    assert type_checking_imports() == lionmem.mcp._PUBLIC


@pytest.mark.parametrize("name", sorted(lionmem.mcp._PUBLIC))
def test_every_public_name_is_its_modules_object(name: str) -> None:
    """Each public name is the object its module defines."""
    assert getattr(lionmem.mcp, name) is getattr(import_module(lionmem.mcp._PUBLIC[name]), name)


def test_an_unknown_name_is_an_attribute_error() -> None:
    """A name outside the table raises AttributeError naming it."""
    with pytest.raises(AttributeError, match=r"^module 'lionmem\.mcp' has no attribute 'serve'$"):
        _ = lionmem.mcp.serve
