"""The drift check: ``tools/generate.py --check`` passes on a clean tree and catches every drift.

Each test runs the generator on its own temporary copy of the inputs it reads (``schema/``,
``tools/``, ``generated/``, ``pyproject.toml`` and the npm lock and manifest; ``node_modules`` is
linked, not copied), so the real tree is never touched. The script finds its root from its own
path, so the copy is checked against itself.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.schema_support import REPO

COPIED_DIRS = ("schema", "tools", "generated")
COPIED_FILES = ("pyproject.toml", "package.json", "package-lock.json")
UP_TO_DATE = "generated/ is up to date with schema/.\n"


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """Return a fresh copy of the generator's inputs and committed output."""
    for name in COPIED_DIRS:
        shutil.copytree(
            REPO / name,
            tmp_path / name,
            ignore=shutil.ignore_patterns("__pycache__", "node_modules", "bench-results"),
        )
    for name in COPIED_FILES:
        shutil.copy2(REPO / name, tmp_path / name)
    (tmp_path / "node_modules").symlink_to(REPO / "node_modules", target_is_directory=True)
    return tmp_path


def generate(tree: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run the copy's tools/generate.py with this environment's python (the pinned tools)."""
    return subprocess.run(
        [sys.executable, str(tree / "tools" / "generate.py"), *args],
        capture_output=True,
        text=True,
        check=False,
        cwd=tree,
    )


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, f"{old!r} is not in {path} exactly once"
    path.write_text(text.replace(old, new), encoding="utf-8")


def test_check_passes_on_a_clean_copy(tree: Path) -> None:
    """On an unchanged copy of the repository, --check exits 0 and says it is up to date."""
    result = generate(tree, "--check")
    assert (result.returncode, result.stdout) == (0, UP_TO_DATE), result.stderr


def test_check_fails_after_a_schema_description_edit(tree: Path) -> None:
    """Editing a schema description without regenerating fails with a diff naming the module."""
    _edit(tree / "schema" / "element.json", "Identity of the element:", "Identity (edited):")
    result = generate(tree, "--check")
    assert result.returncode == 1, result.stderr
    assert "+++ generated/lionmem_models/element.py (from schema/)" in result.stdout
    assert '+        description="Identity (edited): a UUID' in result.stdout


def test_check_fails_after_a_hand_edit_under_generated(tree: Path) -> None:
    """A hand edit of a generated module fails with a diff that removes the edit again."""
    module = tree / "generated" / "lionmem_models" / "memory_query.py"
    module.write_text(module.read_text(encoding="utf-8") + "# hand edit\n", encoding="utf-8")
    result = generate(tree, "--check")
    assert (result.returncode, "-# hand edit\n" in result.stdout) == (1, True), result.stderr
    assert "--- generated/lionmem_models/memory_query.py (committed)" in result.stdout


@pytest.mark.parametrize(
    ("before", "after"), [(b"\n", b"\r\n"), (b"\n", b"\r"), (b"Identity", b"\xffdentity")]
)
def test_check_fails_on_line_endings_or_bytes_changed_by_hand(
    tree: Path, before: bytes, after: bytes
) -> None:
    """Line endings turned into CRLF or CR, or a byte that is not UTF-8, in a generated file
    fail the check with a diff (a byte that is not UTF-8 shown as an escape)."""
    module = tree / "generated" / "lionmem_models" / "element.py"
    module.write_bytes(module.read_bytes().replace(before, after))
    result = generate(tree, "--check")
    assert result.returncode == 1, result.stderr
    assert "--- generated/lionmem_models/element.py (committed)" in result.stdout
    assert result.stderr == ""


def test_check_fails_on_a_byte_that_reads_as_the_generator_s_escape(tree: Path) -> None:
    """A byte that is not UTF-8 put in place of the text ``\\xff`` the generator wrote (both
    read as that escape) fails the check, naming the file."""
    _edit(tree / "schema" / "element.json", "Identity of the element:", "Identity (\\\\xff):")
    assert generate(tree).returncode == 0
    types = tree / "generated" / "typescript" / "element.d.ts"
    written = types.read_bytes()
    assert written.count(b"\\xff") == 1
    types.write_bytes(written.replace(b"\\xff", b"\xff"))
    result = generate(tree, "--check")
    assert (result.returncode, result.stdout) == (
        1,
        "generated/typescript/element.d.ts: bytes differ from the generator's output\n"
        "\ngenerated/ is stale: run `python tools/generate.py` and commit the result.\n",
    )


@pytest.mark.parametrize("folder", ["node_modules", ".mypy_cache", "cache"])
def test_check_fails_on_a_file_in_any_extra_folder(tree: Path, folder: str) -> None:
    """A file in a folder under generated/ that no schema produces fails the check, whatever
    the folder's name (only Python's __pycache__ is no output)."""
    extra = tree / "generated" / "lionmem_models" / folder / "evil.py"
    extra.parent.mkdir()
    extra.write_text("x = 1\n", encoding="utf-8")
    (tree / "generated" / "lionmem_models" / "__pycache__").mkdir(exist_ok=True)
    (tree / "generated" / "lionmem_models" / "__pycache__" / "element.cpython-311.pyc").write_bytes(
        b"cache"
    )
    result = generate(tree, "--check")
    assert result.returncode == 1, result.stderr
    assert result.stdout.startswith(
        f"stale file, not produced from schema/: generated/lionmem_models/{folder}/evil.py\n"
    )
    assert "__pycache__" not in result.stdout


def test_check_fails_on_a_stale_extra_file(tree: Path) -> None:
    """A file under generated/ that no schema produces fails the check and is named."""
    (tree / "generated" / "lionmem_models" / "old_model.py").write_text("x = 1\n", encoding="utf-8")
    result = generate(tree, "--check")
    assert result.returncode == 1, result.stderr
    assert (
        "stale file, not produced from schema/: generated/lionmem_models/old_model.py"
        in result.stdout
    )


def test_check_fails_on_a_missing_file(tree: Path) -> None:
    """A generated module deleted by hand fails the check and is named."""
    (tree / "generated" / "lionmem_models" / "memory_item.py").unlink()
    result = generate(tree, "--check")
    assert result.returncode == 1, result.stderr
    assert "missing file: generated/lionmem_models/memory_item.py" in result.stdout


def test_regenerating_repairs_every_drift(tree: Path) -> None:
    """Plain regeneration takes the schema edit, removes stale files, and --check then passes."""
    _edit(tree / "schema" / "element.json", "Identity of the element:", "Identity (edited):")
    stale = tree / "generated" / "lionmem_models" / "old_model.py"
    stale.write_text("x = 1\n", encoding="utf-8")
    regenerated = generate(tree)
    checked = generate(tree, "--check")
    element = (tree / "generated" / "lionmem_models" / "element.py").read_text(encoding="utf-8")
    assert (regenerated.returncode, checked.returncode, checked.stdout) == (0, 0, UP_TO_DATE)
    assert (stale.exists(), "Identity (edited): a UUID" in element) == (False, True)


def test_a_pinned_tool_that_is_missing_is_named(tree: Path) -> None:
    """A codegen pin with nothing installed is reported as pinned but not installed."""
    _edit(
        tree / "pyproject.toml",
        '    "ruff==0.17.6",\n',
        '    "ruff==0.17.6",\n    "lionmem-absent-tool==1.0",\n',
    )
    result = generate(tree, "--check")
    assert result.returncode == 1
    assert result.stderr.startswith(
        "tools/generate.py: lionmem-absent-tool==1.0 is pinned but not installed. Run `make install`"
    )


def test_a_pinned_tool_of_another_version_is_named_with_both(tree: Path) -> None:
    """A codegen pin other than the installed version names the pin and what is installed."""
    _edit(tree / "pyproject.toml", '"ruff==0.17.6"', '"ruff==0.0.1"')
    result = generate(tree, "--check")
    assert result.returncode == 1
    assert "ruff==0.0.1 is pinned but ruff 0.17.6 is installed. Run `make install`" in result.stderr


@pytest.mark.parametrize(
    "loose", ['"ruff>=0.17"', '"ruff"', "\"ruff==0.17.6; python_version < '3.12'\""]
)
def test_a_codegen_tool_not_pinned_exactly_is_refused(tree: Path, loose: str) -> None:
    """A codegen requirement that is not ``name==version`` is refused by name: the version
    check would otherwise check nothing for it."""
    _edit(tree / "pyproject.toml", '"ruff==0.17.6"', loose)
    result = generate(tree, "--check")
    assert result.returncode == 1
    assert result.stderr == (
        "tools/generate.py: the codegen dependency group must pin each tool exactly "
        f"(name==version), since the output depends on it: {loose[1:-1]!r}\n"
    )


def test_missing_node_tooling_is_named(tree: Path) -> None:
    """Without the locked npm packages in node_modules/, the check says which are missing."""
    (tree / "node_modules").unlink()
    (tree / "node_modules").mkdir()
    result = generate(tree, "--check")
    assert result.returncode == 1
    assert "json-schema-to-typescript@" in result.stderr
    assert "is locked but not in node_modules/; prettier@" in result.stderr
    assert result.stderr.rstrip().endswith(
        "Run `make install` (or `npm ci`) in the repository root."
    )
