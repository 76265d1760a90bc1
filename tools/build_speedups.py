"""Hatchling build hook: compile ``lionmem/_speedups.c``, lionmem's C speedups.

setuptools' ``build_ext`` does the compiling (it knows each platform's compiler and flags). An
editable install builds the module in place, next to its source; a wheel gets it under
``lionmem/`` and becomes a platform wheel. Where it cannot be built (no C compiler), the package
is still complete: ``InMemoryStore`` then runs the same text walk in Python
(``memory._walk_cached``) and construction the same pre-check (``_base._fast_init``), with the
same results, more slowly. ``LIONMEM_REQUIRE_SPEEDUPS=1`` makes a failed build an error instead
(``make install`` sets it).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from hatchling.builders.config import BuilderConfig
from hatchling.builders.hooks.plugin.interface import BuildHookInterface

MODULE = "lionmem._speedups"
SOURCE = "lionmem/_speedups.c"
REQUIRE = "LIONMEM_REQUIRE_SPEEDUPS"


def compile_extension(root: Path, build_dir: Path | None) -> Path:
    """Compile the module; in place under ``root`` when ``build_dir`` is None. Returns its path."""
    from setuptools import Distribution, Extension
    from setuptools.command.build_ext import build_ext

    digest = hashlib.sha256((root / SOURCE).read_bytes()).hexdigest()
    # The compiler flags are Python's own (sysconfig), as for any extension.
    extension = Extension(
        MODULE, [SOURCE], define_macros=[("SPEEDUPS_SOURCE_SHA256", f'"{digest}"')]
    )
    # setuptools resolves the source and the in-place target from the current directory.
    with tempfile.TemporaryDirectory() as scratch, contextlib.chdir(root):
        command = build_ext(Distribution({"name": "lionmem", "ext_modules": [extension]}))
        command.force = True  # never keep a module built from another version of the source
        command.inplace = build_dir is None
        if build_dir is not None:
            command.build_lib = str(build_dir)
        command.build_temp = scratch  # the object files
        command.ensure_finalized()
        command.run()
        built: str = command.get_ext_fullpath(MODULE)
        return (root / built).resolve()


class SpeedupsBuildHook(BuildHookInterface[BuilderConfig]):
    """Adds the compiled ``_speedups`` to the wheel (or builds it in place for an editable one)."""

    PLUGIN_NAME = "custom"
    _build_dir: Path | None = None

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        root = Path(self.root)
        self._build_dir = None if version == "editable" else Path(tempfile.mkdtemp())
        try:
            built = compile_extension(root, self._build_dir)
        except Exception as error:  # any toolchain failure: a compiler missing, headers missing
            if self._build_dir is None:
                # An editable install imports from the source tree: a module left there by an
                # earlier build would be used in place of the Python code the warning promises.
                for stale in (root / SOURCE).parent.glob("_speedups.*"):
                    if stale.suffix in {".so", ".pyd"}:
                        stale.unlink()
            if os.environ.get(REQUIRE) == "1":
                raise
            self.app.display_warning(
                f"lionmem: the C speedups were not built ({error}); "
                "their Python stand-ins run instead, with the same results, more slowly"
            )
            return
        build_data["pure_python"] = False
        build_data["infer_tag"] = True
        if self._build_dir is not None:
            build_data["force_include"][str(built)] = f"lionmem/{built.name}"

    def finalize(self, version: str, build_data: dict[str, Any], artifact_path: str) -> None:
        if self._build_dir is not None:
            shutil.rmtree(self._build_dir, ignore_errors=True)
