"""generated/typescript/: what it holds, how its version lines up, and the drift check covering it.

The drift tests run ``tools/generate.py --check`` in a temporary copy of the generator's inputs
(pyproject.toml, tools/, schema/, generated/, the npm lock and a link to node_modules/), change one
thing there and read which generated files the check reports.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path

import pytest

import lionmem

ROOT = Path(__file__).resolve().parents[2]
TYPESCRIPT = ROOT / "generated" / "typescript"
SCHEMA_NAMES = sorted(path.stem for path in (ROOT / "schema").glob("*.json"))
COPIED = ["pyproject.toml", "package.json", "package-lock.json", "tools", "schema", "generated"]
REPORTED = re.compile(
    r"^(?:--- |stale file, not produced from schema/: |missing file: )generated/(\S+)"
)


def _files(folder: Path) -> set[str]:
    return {path.relative_to(folder).as_posix() for path in folder.rglob("*") if path.is_file()}


def test_versions_line_up() -> None:
    """The TypeScript package's version is the Python package's (pyproject, metadata, __version__)."""
    typescript = json.loads((TYPESCRIPT / "package.json").read_text(encoding="utf-8"))["version"]
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert {typescript, project["version"], metadata.version("lionmem"), lionmem.__version__} == {
        typescript
    }


def test_typescript_folder_holds_types_and_schemas_of_every_schema() -> None:
    """One .d.ts and one schema copy per schema, plus the index module, its types and package.json."""
    expected = {f"{name}.d.ts" for name in SCHEMA_NAMES} | {
        f"schema/{name}.json" for name in SCHEMA_NAMES
    }
    assert _files(TYPESCRIPT) == expected | {"index.d.ts", "index.js", "package.json"}


def test_schema_copies_are_byte_identical() -> None:
    """generated/typescript/schema/ holds the files of schema/ unchanged."""
    copies = {name: (TYPESCRIPT / "schema" / f"{name}.json").read_bytes() for name in SCHEMA_NAMES}
    assert copies == {
        name: (ROOT / "schema" / f"{name}.json").read_bytes() for name in SCHEMA_NAMES
    }


def test_memory_item_is_declared_as_element_and_its_own_properties() -> None:
    """MemoryItem is ``Element & {...}``, importing Element from its file (tsc checks closedness)."""
    text = (TYPESCRIPT / "memory_item.d.ts").read_text(encoding="utf-8")
    assert (
        'import type {Element} from "./element.js";' in text,
        "export type MemoryItem = Element & {" in text,
    ) == (True, True)


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    """A copy of the generator's inputs and outputs, with node_modules/ linked, not copied."""
    for name in COPIED:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(source, tmp_path / name)
    (tmp_path / "node_modules").symlink_to(ROOT / "node_modules", target_is_directory=True)
    return tmp_path


def check(root: Path, env: dict[str, str] | None = None) -> tuple[int, set[str], str]:
    """Run ``tools/generate.py --check`` in ``root``: exit status, reported files, all output."""
    completed = subprocess.run(
        [sys.executable, str(root / "tools" / "generate.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
        env=env,
    )
    reported = {
        match.group(1)
        for line in completed.stdout.splitlines()
        if (match := REPORTED.match(line)) is not None
    }
    return completed.returncode, reported, completed.stdout + completed.stderr


def test_check_passes_on_an_unchanged_copy(copy: Path) -> None:
    """The copy itself is up to date, so every failure below comes from the one change made."""
    assert check(copy)[:2] == (0, set())


def test_schema_edit_without_regenerating_fails_for_models_and_types(copy: Path) -> None:
    """A changed description in schema/ makes --check report the Python model and the TS files."""
    path = copy / "schema" / "memory_query.json"
    schema = json.loads(path.read_text(encoding="utf-8"))
    schema["properties"]["limit"]["description"] = "Changed without regenerating."
    path.write_text(json.dumps(schema, indent=2) + "\n", encoding="utf-8")
    assert check(copy)[:2] == (
        1,
        {
            "lionmem_models/memory_query.py",
            "typescript/memory_query.d.ts",
            "typescript/index.js",
            "typescript/schema/memory_query.json",
        },
    )


def test_hand_edited_declaration_fails(copy: Path) -> None:
    """An edit by hand to a generated .d.ts is reported as drift."""
    path = copy / "generated" / "typescript" / "memory_item.d.ts"
    path.write_text(path.read_text(encoding="utf-8").replace("tags?: string[]", "tags?: any"))
    assert check(copy)[:2] == (1, {"typescript/memory_item.d.ts"})


def test_stale_declaration_file_fails(copy: Path) -> None:
    """A .d.ts that no schema produces any more is reported as a stale file."""
    (copy / "generated" / "typescript" / "memory.d.ts").write_text("export type Old = {};\n")
    assert check(copy)[:2] == (1, {"typescript/memory.d.ts"})


def test_version_bump_without_regenerating_fails(copy: Path) -> None:
    """A new version in pyproject.toml makes --check report the TypeScript package's version."""
    path = copy / "pyproject.toml"
    text = path.read_text(encoding="utf-8")
    version = tomllib.loads(text)["project"]["version"]
    path.write_text(text.replace(f'version = "{version}"', 'version = "99.0.0"', 1))
    assert check(copy)[:2] == (1, {"typescript/package.json", "typescript/index.js"})


def test_missing_node_modules_fails_with_a_readable_message(copy: Path) -> None:
    """Without node_modules/ the check exits 1 telling to run npm ci, with no traceback."""
    (copy / "node_modules").unlink()
    status, _, output = check(copy)
    assert (status, "Run `make install` (or `npm ci`)" in output, "Traceback" in output) == (
        1,
        True,
        False,
    )


def test_missing_node_fails_with_a_readable_message(copy: Path) -> None:
    """Without node on PATH the check exits 1 naming Node.js, with no traceback."""
    env = {**os.environ, "PATH": str(Path(sys.executable).parent)}
    status, _, output = check(copy, env)
    assert (status, "`node` was not found on PATH" in output, "Traceback" in output) == (
        1,
        True,
        False,
    )
