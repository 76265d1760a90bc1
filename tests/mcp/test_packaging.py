"""The wheel ships the MCP tool documents and declares the ``mcp`` extra."""

from __future__ import annotations

import json
import subprocess
import zipfile
from pathlib import Path

import pytest

from tests.mcp.support import REPO
from tests.tooling.test_packaging import build_wheel, install

pytestmark = pytest.mark.slow

GENERATED_MCP = REPO / "generated" / "mcp"


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    built = build_wheel(out)
    assert built.returncode == 0, built.stderr
    (path,) = out.glob("lionmem-*.whl")
    return path


def test_wheel_ships_every_tool_document_byte_for_byte(wheel: Path) -> None:
    """generated/mcp/ is in the wheel at lionmem/mcp/tools/, unchanged."""
    with zipfile.ZipFile(wheel) as archive:
        shipped = {
            name.removeprefix("lionmem/mcp/tools/"): archive.read(name)
            for name in archive.namelist()
            if name.startswith("lionmem/mcp/tools/")
        }
    assert shipped == {path.name: path.read_bytes() for path in GENERATED_MCP.glob("*.json")}


def test_wheel_declares_the_mcp_extra(wheel: Path) -> None:
    """The metadata lists the extra and the SDK it brings."""
    with zipfile.ZipFile(wheel) as archive:
        metadata = archive.read("lionmem-0.1.0.dist-info/METADATA").decode("utf-8")
    lines = metadata.splitlines()
    assert "Provides-Extra: mcp" in lines
    assert "Requires-Dist: mcp<3,>=2.3.0; extra == 'mcp'" in lines


def test_installed_server_reads_the_shipped_documents(wheel: Path, tmp_path: Path) -> None:
    """Installed, the tool documents load from inside the package, not from a checkout."""
    python = install(wheel, tmp_path / "venv")
    script = (
        "import json, sys\n"
        "from lionmem.mcp._documents import _folder, tool_documents\n"
        "print(json.dumps([str(_folder()), sys.prefix, [d.name for d in tool_documents()]]))\n"
    )
    result = subprocess.run(
        [str(python), "-c", script], capture_output=True, text=True, check=True, cwd=tmp_path
    )
    folder, prefix, names = json.loads(result.stdout)
    assert folder.startswith(prefix)
    assert folder.endswith("lionmem/mcp/tools")
    assert names == json.loads((GENERATED_MCP / "index.json").read_text("utf-8"))["tools"]
