"""Fixtures of the command-line tests: a working directory and a store holding the sample."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.cli.support import LIONMEM, lionmem

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "examples" / "notes.jsonl"
MIXED = REPO / "examples" / "mixed.jsonl"


@pytest.fixture(scope="session", autouse=True)
def _console_script() -> None:
    if not LIONMEM.exists():
        pytest.fail(f"the console script {LIONMEM} is missing: run make install")


@pytest.fixture(scope="module")
def sample_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A SQLite file holding every item of examples/notes.jsonl (shared: copy it to change it)."""
    folder = tmp_path_factory.mktemp("sample")
    done = lionmem("import", SAMPLE, "--db", "sample.db", cwd=folder)
    assert done.status == 0, done
    return folder / "sample.db"


@pytest.fixture
def sample_copy(sample_db: Path, tmp_path: Path) -> Path:
    """A private copy of ``sample_db`` in ``tmp_path``."""
    target = tmp_path / "copy.db"
    shutil.copyfile(sample_db, target)
    return target
