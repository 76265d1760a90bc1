"""lionagi is an optional extra: ``import lionmem`` never needs it, the integration names the extra."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from importlib.metadata import version
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXTRA = "lionmem.integrations.lionagi needs lionagi: pip install 'lionmem[lionagi]'"


def python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.slow
def test_without_lionagi_the_integration_names_the_extra() -> None:
    """With lionagi not importable, importing the integration raises one line naming lionmem[lionagi]."""
    done = python(
        "import sys\n"
        "sys.modules['lionagi'] = None  # as if it were not installed\n"
        "try:\n"
        "    import lionmem.integrations.lionagi\n"
        "except ModuleNotFoundError as exc:\n"
        "    print(exc.name)\n"
        "    print(exc)\n"
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"lionagi\n{EXTRA}\n"


@pytest.mark.slow
def test_a_broken_lionagi_shows_its_own_error() -> None:
    """A dependency of lionagi that is missing is reported as itself, not as the extra."""
    done = python(
        "import sys\n"
        "sys.modules['anyio'] = None\n"
        "try:\n"
        "    import lionmem.integrations.lionagi\n"
        "except ModuleNotFoundError as exc:\n"
        "    print(exc.name)\n"
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "anyio\n"


@pytest.mark.slow
def test_lionmem_imports_without_lionagi() -> None:
    """Every public name of lionmem, and a star import, work with lionagi not importable."""
    done = python(
        "import sys\n"
        "sys.modules['lionagi'] = None\n"
        "import lionmem\n"
        "names = [getattr(lionmem, name) for name in lionmem.__all__]\n"
        "from lionmem import *\n"
        "import lionmem.integrations\n"
        "print(len(names), 'LionagiMemoryStore' in dir(lionmem))\n"
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[1] == "False"


@pytest.mark.slow
def test_importing_lionmem_does_not_import_lionagi() -> None:
    """With lionagi installed, lionmem and all its public names still leave it unimported."""
    done = python(
        "import sys\n"
        "import lionmem\n"
        "[getattr(lionmem, name) for name in lionmem.__all__]\n"
        "print(sorted(m for m in sys.modules if m.partition('.')[0] == 'lionagi'))\n"
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "[]\n"


def test_the_extra_pins_the_tested_lionagi() -> None:
    """pyproject's lionagi extra admits the lionagi these tests run against, and only its minor version."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["optional-dependencies"]["lionagi"] == ["lionagi>=0.36.0,<0.37"]
    assert "lionagi" not in " ".join(project["dependencies"])
    assert version("lionagi") == "0.36.0"
