"""The build hook that compiles the C speedups (tools/build_speedups.py), run on a copy of their source.

A wheel built with and without a compiler is checked in ``test_packaging``; here, the editable
build, which puts the module next to its source, where the package imports it from.
"""

from __future__ import annotations

import hashlib
import importlib.util
import shutil
import sysconfig
from pathlib import Path
from typing import Any

import pytest
from hatchling.builders.config import BuilderConfig
from setuptools.errors import CompileError

from tests.schema_support import REPO
from tools.build_speedups import REQUIRE, SOURCE, SpeedupsBuildHook

SUFFIX = sysconfig.get_config_var("EXT_SUFFIX")


def hook(root: Path) -> SpeedupsBuildHook:
    """The hook as hatchling makes it, for a project at ``root``."""
    return SpeedupsBuildHook(str(root), {}, BuilderConfig, None, str(root / "dist"), "wheel")  # type: ignore[arg-type]  # the config objects the hook never reads


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project tree holding only the C source."""
    (tmp_path / SOURCE).parent.mkdir(parents=True)
    shutil.copy(REPO / SOURCE, tmp_path / SOURCE)
    return tmp_path


def test_an_editable_build_puts_the_module_next_to_its_source(project: Path) -> None:
    build_data: dict[str, Any] = {"force_include": {}}
    hook(project).initialize("editable", build_data)
    built = project / f"lionmem/_speedups{SUFFIX}"
    assert built.is_file()
    assert build_data == {"force_include": {}, "pure_python": False, "infer_tag": True}
    spec = importlib.util.spec_from_file_location("lionmem._speedups", built)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert hashlib.sha256((REPO / SOURCE).read_bytes()).hexdigest() == module.SOURCE_SHA256


def test_a_failed_editable_build_removes_a_module_left_from_before(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Otherwise the old module would be imported, not the Python walk the warning promises."""
    stale = project / f"lionmem/_speedups{SUFFIX}"
    stale.write_bytes(b"an old build")
    monkeypatch.setenv("CC", "false")
    monkeypatch.setenv(REQUIRE, "0")
    build_data: dict[str, Any] = {"force_include": {}}
    hook(project).initialize("editable", build_data)
    assert not stale.exists()
    assert (project / SOURCE).is_file()
    assert build_data == {"force_include": {}}  # a pure-Python wheel


def test_a_required_build_raises_without_a_compiler(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CC", "false")
    monkeypatch.setenv(REQUIRE, "1")
    with pytest.raises(CompileError, match="false"):
        hook(project).initialize("editable", {"force_include": {}})
