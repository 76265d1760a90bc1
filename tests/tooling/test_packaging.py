"""The wheel built from the repository ships the schemas and works installed on its own.

The wheel is built once per module with the pinned hatchling from the test group, offline
(``--no-build-isolation --no-index``), and installed into a fresh virtual environment whose
only other path is this environment's site-packages (for pydantic; its ``.pth`` files, among
them the editable install of the repository, are not processed). Every import runs in a
subprocess whose working directory is outside the repository, and each test checks that the
code it ran came from that installation, never from the checkout.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import tomllib
import venv
import zipfile
from pathlib import Path
from typing import Any

import pytest

from tests.schema_support import REPO, SCHEMA_DIR, schema_names

pytestmark = pytest.mark.slow

GENERATED = REPO / "generated" / "lionmem_models"


def build_wheel(out: Path) -> subprocess.CompletedProcess[str]:
    """Build the wheel from the repository into ``out``, offline."""
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--quiet",
            "--disable-pip-version-check",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "--wheel-dir",
            str(out),
            str(REPO),
        ],
        check=False,
        capture_output=True,
        text=True,
        cwd=out,
    )


def install(wheel: Path, env_dir: Path) -> Path:
    """Install ``wheel`` into a fresh venv at ``env_dir`` and return that venv's python."""
    venv.EnvBuilder(with_pip=False).create(env_dir)
    python = env_dir / "bin" / "python"
    target = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
    )
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "--no-deps",
            "--no-index",
            "--target",
            str(target),
            str(wheel),
        ],
        check=True,
        capture_output=True,
    )
    # The dependencies (pydantic) come from this environment, appended after the install.
    (target / "zz_test_dependencies.pth").write_text(
        sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8"
    )
    return python


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Build the wheel from the repository, offline, and return its path."""
    out = tmp_path_factory.mktemp("wheel")
    built = build_wheel(out)
    assert built.returncode == 0, built.stderr
    (path,) = out.glob("lionmem-*.whl")
    return path


@pytest.fixture(scope="module")
def names(wheel: Path) -> set[str]:
    """Return every file name inside the wheel."""
    with zipfile.ZipFile(wheel) as archive:
        return set(archive.namelist())


@pytest.fixture(scope="module")
def installed(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Install the wheel into a fresh venv and return that venv's python."""
    return install(wheel, tmp_path_factory.mktemp("venv"))


def run_installed(python: Path, code: str, cwd: Path) -> Any:
    """Run ``code`` with the installed python outside the repository; return its printed JSON."""
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "PYTHONHOME"}}
    env["PYTHONNOUSERSITE"] = "1"
    # The checkout is importable only through the repository root or generated/ on sys.path
    # (that is what the editable install adds); neither may be there.
    checkout = sorted({str(REPO), str(REPO / "generated")})
    prelude = (
        "import json, os, sys\n"
        f"assert not {{os.path.realpath(p or '.') for p in sys.path}} & {{*{checkout!r}}}, sys.path\n"
    )
    result = subprocess.run(
        [str(python), "-c", prelude + code],
        check=False,
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_wheel_ships_every_schema_byte_for_byte(wheel: Path, names: set[str]) -> None:
    """The wheel holds ``lionmem/schema/<name>.json`` for every schema, with the repo's bytes."""
    with zipfile.ZipFile(wheel) as archive:
        shipped = {
            name.removeprefix("lionmem/schema/"): archive.read(name)
            for name in names
            if name.startswith("lionmem/schema/")
        }
    assert shipped == {f"{n}.json": (SCHEMA_DIR / f"{n}.json").read_bytes() for n in schema_names()}


def test_wheel_ships_py_typed(names: set[str]) -> None:
    """The wheel marks lionmem as typed (PEP 561)."""
    assert "lionmem/py.typed" in names


def test_wheel_ships_every_generated_module(names: set[str]) -> None:
    """The wheel holds exactly the generated modules as the top-level package lionmem_models."""
    shipped = {name for name in names if name.startswith("lionmem_models/")}
    assert shipped == {f"lionmem_models/{path.name}" for path in GENERATED.glob("*.py")}


def test_wheel_has_only_the_two_packages(names: set[str]) -> None:
    """Nothing but lionmem, lionmem_models and the dist-info is installed (no generated/, tests/)."""
    assert {name.split("/")[0] for name in names} == {
        "lionmem",
        "lionmem_models",
        "lionmem-0.1.0.dist-info",
    }


def test_wheel_metadata_requires_python_311_and_pydantic(wheel: Path) -> None:
    """The wheel's metadata says Python >= 3.11 and depends on pydantic 2."""
    with zipfile.ZipFile(wheel) as archive:
        metadata = archive.read("lionmem-0.1.0.dist-info/METADATA").decode("utf-8")
    headers = [line for line in metadata.splitlines() if line.startswith("Requires-")]
    assert headers == ["Requires-Python: >=3.11", "Requires-Dist: pydantic<3,>=2.14"]


def test_installed_lionmem_comes_from_the_install(installed: Path, tmp_path: Path) -> None:
    """``import lionmem`` in the fresh venv loads the installed package, not the checkout."""
    found = run_installed(
        installed,
        "import lionmem, lionmem_models\n"
        "print(json.dumps([lionmem.__file__, lionmem_models.__file__, sys.prefix]))",
        tmp_path,
    )
    lionmem_file, models_file, prefix = found
    assert (lionmem_file.startswith(prefix), models_file.startswith(prefix)) == (True, True)


def test_installed_public_models_validate(installed: Path, tmp_path: Path) -> None:
    """``from lionmem import MemoryItem`` works installed and validates and dumps a document."""
    dumped = run_installed(
        installed,
        "from lionmem import Element, MemoryItem, MemoryQuery\n"
        "item = MemoryItem.model_validate_json("
        '\'{"id": "12345678-1234-5678-1234-567812345678", "created_at": 1.5, "tags": ["x"]}\')\n'
        "print(json.dumps([item.model_dump(mode='json'), MemoryQuery().limit,"
        " MemoryItem.__module__, Element.__module__]))",
        tmp_path,
    )
    assert dumped == [
        {
            "id": "12345678-1234-5678-1234-567812345678",
            "created_at": 1.5,
            "metadata": {},
            "content": None,
            "tags": ["x"],
        },
        20,
        "lionmem_models.memory_item",
        "lionmem_models.element",
    ]


def test_installed_generated_module_imports_first(installed: Path, tmp_path: Path) -> None:
    """Importing ``lionmem_models.memory_item`` first in a fresh process works (no import cycle)."""
    same = run_installed(
        installed,
        "import lionmem_models.memory_item as generated\n"
        "from lionmem import MemoryItem\n"
        "print(json.dumps(MemoryItem is generated.MemoryItem))",
        tmp_path,
    )
    assert same is True


def test_installed_schemas_are_the_repository_schemas(installed: Path, tmp_path: Path) -> None:
    """``lionmem.schemas()`` of the installation returns every schema, equal to schema/*.json."""
    shipped = run_installed(
        installed, "import lionmem\nprint(json.dumps(lionmem.schemas()))", tmp_path
    )
    assert shipped == {
        name: json.loads((SCHEMA_DIR / f"{name}.json").read_text(encoding="utf-8"))
        for name in schema_names()
    }


def test_installed_schema_path_points_inside_the_package(installed: Path, tmp_path: Path) -> None:
    """``lionmem.schema_path(name)`` is the file shipped inside the installed lionmem package."""
    found = run_installed(
        installed,
        "import lionmem\n"
        "path = lionmem.schema_path('memory_item.json')\n"
        "print(json.dumps([str(path), path.read_text(encoding='utf-8'), lionmem.__file__]))",
        tmp_path,
    )
    path, text, package_file = found
    assert (path, text) == (
        str(Path(package_file).parent / "schema" / "memory_item.json"),
        (SCHEMA_DIR / "memory_item.json").read_text(encoding="utf-8"),
    )


def test_build_requirement_pins_match_the_test_group() -> None:
    """The hatchling that builds the wheel here is the one [build-system] pins, and nothing else."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    build = [
        requirement
        for requirement in project["dependency-groups"]["test"]
        if isinstance(requirement, str) and requirement.startswith("hatchling")
    ]
    assert build == project["build-system"]["requires"]


def test_wheel_is_pure_python(wheel: Path, names: set[str]) -> None:
    """The wheel is ``py3-none-any``: no compiled module, no C source, nothing platform-specific."""
    with zipfile.ZipFile(wheel) as archive:
        tags = archive.read("lionmem-0.1.0.dist-info/WHEEL").decode("utf-8")
    assert wheel.name == "lionmem-0.1.0-py3-none-any.whl"
    assert "Root-Is-Purelib: true" in tags.splitlines()
    assert [line for line in tags.splitlines() if line.startswith("Tag:")] == ["Tag: py3-none-any"]
    assert {name for name in names if name.endswith((".c", ".so", ".pyd", ".pyi"))} == set()


def test_installed_store_searches(installed: Path, tmp_path: Path) -> None:
    """The installed InMemoryStore stores and searches (case-insensitive text, insertion order)."""
    found = run_installed(
        installed,
        "import asyncio\n"
        "from lionmem import InMemoryStore, MemoryItem, MemoryQuery\n"
        "store = InMemoryStore()\n"
        "for text in ['Harbor one', 'river', 'HARBOR two']:\n"
        "    asyncio.run(store.store(MemoryItem(content=text)))\n"
        "found = asyncio.run(store.search(MemoryQuery(text='harbor')))\n"
        "print(json.dumps([item.content for item in found]))",
        tmp_path,
    )
    assert found == ["Harbor one", "HARBOR two"]
