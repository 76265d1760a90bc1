"""The test cluster's binaries: found on the PATH or in Debian's directory, a clear error else."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests import postgres_support


def test_missing_postgresql_is_an_error_not_a_skip(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Without initdb anywhere, find_bindir raises (so every server test fails) and says why."""
    monkeypatch.setattr(shutil, "which", lambda _name: None)
    monkeypatch.setattr(postgres_support, "DEBIAN_ROOT", tmp_path)
    with pytest.raises(RuntimeError, match=r"PostgreSQL is not installed .* \.ci/run"):
        postgres_support.find_bindir()


def test_debian_directory_is_searched_newest_first(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Without initdb on the PATH, the newest /usr/lib/postgresql/N/bin holding it is used."""
    for version in ("13", "15"):
        (tmp_path / version / "bin").mkdir(parents=True)
        (tmp_path / version / "bin" / "initdb").touch()
    monkeypatch.setattr(shutil, "which", lambda _name: None)
    monkeypatch.setattr(postgres_support, "DEBIAN_ROOT", tmp_path)
    assert postgres_support.find_bindir() == tmp_path / "15" / "bin"
