"""The wheel declares the ``lionmem`` console script and the ``cli`` extra, and the script runs installed.

The wheel is built offline with the pinned build backend and installed with ``--target`` into a
fresh virtual environment, whose only other path is this environment's site-packages (for
pydantic, rich and jsonschema; its ``.pth`` files, the editable install among them, are not
processed). The installed script is run by that environment's python, outside the checkout.
"""

from __future__ import annotations

import email
import json
import os
import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

import pytest

from tests.cli.conftest import REPO, SAMPLE

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Build the wheel from the repository, offline, and return its path."""
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [
            sys.executable, "-m", "pip", "wheel", "--quiet", "--disable-pip-version-check",
            "--no-deps", "--no-build-isolation", "--no-index", "--wheel-dir", str(out), str(REPO),
        ],
        check=True, capture_output=True, cwd=out,
    )  # fmt: skip
    (path,) = out.glob("lionmem-*.whl")
    return path


@pytest.fixture(scope="module")
def installed(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Install the wheel into a fresh venv; return its python and the installed script."""
    env_dir = tmp_path_factory.mktemp("venv")
    venv.EnvBuilder(with_pip=False).create(env_dir)
    python = env_dir / "bin" / "python"
    target = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            check=True, capture_output=True, text=True,
        ).stdout.strip()
    )  # fmt: skip
    subprocess.run(
        [
            sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
            "--no-deps", "--no-index", "--target", str(target), str(wheel),
        ],
        check=True, capture_output=True,
    )  # fmt: skip
    (target / "zz_test_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return python, target / "bin" / "lionmem"


def _metadata(wheel: Path) -> tuple[email.message.Message, str]:
    with zipfile.ZipFile(wheel) as archive:
        info = next(name for name in archive.namelist() if name.endswith(".dist-info/METADATA"))
        points = next(n for n in archive.namelist() if n.endswith(".dist-info/entry_points.txt"))
        return email.message_from_bytes(archive.read(info)), archive.read(points).decode()


def test_the_wheel_declares_the_console_script(wheel: Path) -> None:
    """entry_points.txt maps ``lionmem`` to ``lionmem.cli:script``."""
    _, points = _metadata(wheel)
    section = points.split("[console_scripts]\n", 1)[1].split("\n\n", 1)[0]
    assert section.strip() == "lionmem = lionmem.cli:script"


def test_the_cli_extra_pins_rich_and_jsonschema(wheel: Path) -> None:
    """``lionmem[cli]`` adds exactly rich and jsonschema, pinned; the core needs only pydantic."""
    metadata, _ = _metadata(wheel)
    requires = metadata.get_all("Requires-Dist") or []
    assert "cli" in (metadata.get_all("Provides-Extra") or [])
    assert sorted(r for r in requires if "extra == 'cli'" in r) == [
        "jsonschema==4.26.0; extra == 'cli'",
        "rich==15.0.0; extra == 'cli'",
    ]
    assert [r for r in requires if "extra ==" not in r] == ["pydantic<3,>=2.14"]


def _run(installed: tuple[Path, Path], cwd: Path, *args: str, stdin: str = "") -> str:
    python, script = installed
    env = {
        k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "PYTHONHOME", "LIONMEM_DB"}
    }
    env["PYTHONNOUSERSITE"] = "1"
    done = subprocess.run(
        [str(python), str(script), *args],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_installed_script_imports_exports_and_validates(
    installed: tuple[Path, Path], tmp_path: Path
) -> None:
    """The installed script runs the installed package: import, count, export, validate."""
    lines = SAMPLE.read_text("utf-8").splitlines()[:50]
    text = "\n".join(lines) + "\n"
    assert (
        _run(installed, tmp_path, "import", "-", stdin=text)
        == "imported 50 items from standard input\n"
    )
    assert _run(installed, tmp_path, "count") == "50\n"
    assert _run(installed, tmp_path, "export") == text
    (tmp_path / "a.jsonl").write_text(text)
    assert (
        _run(installed, tmp_path, "validate", "a.jsonl")
        == "a.jsonl: 50 documents, 0 invalid (memory_item)\n"
    )
    python, _ = installed
    where = subprocess.run(
        [str(python), "-c", "import json, lionmem.cli; print(json.dumps(lionmem.cli.__file__))"],
        capture_output=True, text=True, cwd=tmp_path, check=True,
    )  # fmt: skip
    assert Path(json.loads(where.stdout)).is_relative_to(python.parent.parent)
