"""The tool documents are covered by ``tools/generate.py --check`` like the rest of generated/."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.mcp.support import REPO


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A copy of the generator's inputs and output (node_modules linked), safe to edit."""
    for name in ("schema", "tools", "generated"):
        shutil.copytree(REPO / name, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "package.json", "package-lock.json"):
        shutil.copy2(REPO / name, tmp_path / name)
    (tmp_path / "node_modules").symlink_to(REPO / "node_modules", target_is_directory=True)
    return tmp_path


def generate(tree: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(tree / "tools" / "generate.py"), *args],
        capture_output=True,
        text=True,
        check=False,
        cwd=tree,
    )


def _replace(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1
    path.write_text(text.replace(old, new), encoding="utf-8")


@pytest.mark.slow
def test_a_tool_description_edit_is_drift(tree: Path) -> None:
    """Editing a description in tools/codegen/mcp_tools.json makes --check fail for that tool."""
    _replace(
        tree / "tools" / "codegen" / "mcp_tools.json",
        "Return the number of stored memory items.",
        "How many items there are.",
    )
    result = generate(tree, "--check")
    assert result.returncode == 1
    assert "generated/mcp/memory_count.json (from schema/)" in result.stdout
    assert "How many items there are." in result.stdout


@pytest.mark.slow
def test_a_schema_edit_reaches_every_tool_that_bundles_it(tree: Path) -> None:
    """Editing element.json changes the bundles of store, retrieve and search, and only those."""
    _replace(
        tree / "schema" / "element.json",
        'it never changes once set.",\n      "type": "string"',
        'it never changes.",\n      "type": "string"',
    )
    result = generate(tree, "--check")
    assert result.returncode == 1
    changed = {
        line.split()[1]
        for line in result.stdout.splitlines()
        if line.startswith("+++ generated/mcp/")
    }
    assert changed == {
        "generated/mcp/memory_store.json",
        "generated/mcp/memory_retrieve.json",
        "generated/mcp/memory_search.json",
    }
    assert generate(tree).returncode == 0
    bundled = json.loads((tree / "generated" / "mcp" / "memory_store.json").read_text("utf-8"))
    element = bundled["tool"]["inputSchema"]["$defs"]["Element"]
    assert element["properties"]["id"]["description"].endswith("it never changes.")
    assert generate(tree, "--check").returncode == 0


@pytest.mark.slow
def test_a_reference_outside_schema_is_refused(tree: Path) -> None:
    """A tool schema that refers to anything but a schema/ document stops the generator."""
    _replace(
        tree / "tools" / "codegen" / "mcp_tools.json",
        '"inputSchema": { "$ref": "https://lionmem.dev/schema/memory_query.json" }',
        '"inputSchema": { "$ref": "https://example.com/other.json" }',
    )
    result = generate(tree)
    assert result.returncode == 1
    assert result.stderr == (
        "tools/generate.py: 'https://example.com/other.json' does not name a document of schema/\n"
    )
