"""The command as a whole: one parser, ``--help`` everywhere, ``python -m lionmem``, the demo, the sample."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from lionmem import __version__, schema_path, schemas
from lionmem.cli import build_parser, main
from tests.cli.conftest import REPO
from tests.cli.support import LIONMEM, clean_env, lionmem, on_terminal

COMMANDS = [
    "add", "get", "search", "count", "delete", "import", "export", "validate", "schema", "conformance",
    "mcp",
]  # fmt: skip


def test_the_parser_has_exactly_the_documented_commands() -> None:
    """``lionmem --help`` lists these commands, in this order."""
    (action,) = [a for a in build_parser()._actions if a.dest == "command"]
    assert list(action.choices or {}) == COMMANDS


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_has_help(tmp_path: Path, command: str) -> None:
    """``lionmem COMMAND --help`` prints that command's usage and exits 0."""
    result = lionmem(command, "--help", cwd=tmp_path)
    assert (result.status, result.stderr) == (0, "")
    assert result.stdout.startswith(f"usage: lionmem {command} ")


@pytest.mark.parametrize("command", ["add", "get", "search", "count", "delete", "import", "export"])
def test_every_store_command_takes_db_and_namespace(command: str) -> None:
    """The store commands share ``--db`` and ``--namespace``."""
    assert {"--db", "--namespace"} <= set(main_help(command).split())


def main_help(command: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "lionmem", command, "--help"],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.replace("[", " ").replace("]", " ")


def test_python_m_lionmem_is_the_same_command(tmp_path: Path) -> None:
    """``python -m lionmem`` runs the console script's main: same output, same status."""
    module = subprocess.run(
        [sys.executable, "-m", "lionmem", "count", "--db", "nope.db"],
        capture_output=True, text=True, cwd=tmp_path, env=clean_env(), check=False,
    )  # fmt: skip
    script = lionmem("count", "--db", "nope.db", cwd=tmp_path)
    assert (module.returncode, module.stdout, module.stderr) == (
        script.status,
        script.stdout,
        script.stderr,
    )
    assert script.status == 2


# What the console script runs, in a process where the import of one module (argv[1]) is
# interrupted as a Ctrl-C then would interrupt it.
INTERRUPTED_WHILE_LOADING = """
import sys

class Interrupt:
    def find_spec(self, name, path=None, target=None):
        if name == sys.argv[1]:
            raise KeyboardInterrupt
        return None

sys.meta_path.insert(0, Interrupt())
from lionmem.cli import main
sys.exit(main(["count", "--db", "nope.db"]))
"""


@pytest.mark.parametrize("module", ["lionmem_models.memory_item", "lionmem.cli._mcp"])
def test_ctrl_c_while_the_command_loads_exits_130_without_a_traceback(
    tmp_path: Path, module: str
) -> None:
    """Ctrl-C before the command started (while the models or the commands' modules load) is
    one line on stderr and exit 130, as during the command."""
    done = subprocess.run(
        [sys.executable, "-c", INTERRUPTED_WHILE_LOADING, module],
        capture_output=True, text=True, cwd=tmp_path, env=clean_env(), check=False,
    )  # fmt: skip
    assert (done.returncode, done.stdout, done.stderr) == (130, "", "lionmem: interrupted\n")
    assert not (tmp_path / "nope.db").exists()


def test_version_and_no_command(capsys: pytest.CaptureFixture[str]) -> None:
    """``--version`` prints the version and exits 0; no command at all is a usage error, 2."""
    assert main(["--version"]) == 0
    assert capsys.readouterr().out == f"lionmem {__version__}\n"
    assert main([]) == 2
    assert "the following arguments are required: COMMAND" in capsys.readouterr().err


def test_the_shipped_sample_is_what_its_generator_writes() -> None:
    """examples/ is exactly what tools/make_sample.py writes (a deterministic generator)."""
    done = subprocess.run(
        [sys.executable, "tools/make_sample.py", "--check"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    assert (done.returncode, done.stderr) == (0, "")


@pytest.mark.slow
def test_make_demo_does_the_main_job(tmp_path: Path) -> None:
    """tools/demo.py runs every step, checks each, and says the exports equal the sample."""
    done = subprocess.run(
        [sys.executable, str(REPO / "tools" / "demo.py"), "--out", str(tmp_path / "out")],
        cwd=tmp_path, env=clean_env(), capture_output=True, text=True, check=False, timeout=300,
    )  # fmt: skip
    assert (done.returncode, done.stderr.count("Traceback")) == (0, 0), done.stderr
    assert "imported 3000 items from" in done.stdout
    assert "the two exports and the sample are the same 680,258 bytes" in done.stdout
    assert "imported 6 items from" in done.stdout
    assert done.stdout.rstrip().endswith(f"{LIONMEM} search --db out/notes.db --text paris")
    assert sorted(p.name for p in (tmp_path / "out").glob("*.jsonl")) == [
        "copy-export.jsonl",
        "export.jsonl",
    ]


def test_add_on_a_terminal_prints_the_id(tmp_path: Path) -> None:
    """On a terminal ``add`` prints just the new id too."""
    result = on_terminal("add", "from a terminal", "--tag", "t", cwd=tmp_path)
    assert result.status == 0
    item_id = result.stdout.strip()
    assert lionmem("get", item_id, cwd=tmp_path).stdout.startswith(f'{{"id":"{item_id}"')


@pytest.mark.parametrize("terminal", [False, True], ids=["piped", "terminal"])
def test_schema_through_the_console_script(tmp_path: Path, terminal: bool) -> None:
    """``lionmem schema`` lists the names and ``schema MemoryQuery`` prints the file, either way."""
    run = on_terminal if terminal else lionmem
    names = run("schema", cwd=tmp_path)
    one = run("schema", "MemoryQuery", cwd=tmp_path)
    assert (names.status, names.stdout) == (0, "".join(f"{name}\n" for name in sorted(schemas())))
    shipped = schema_path("memory_query").read_text(encoding="utf-8")
    assert one.stdout == (shipped.replace("\r\n", "\n") if terminal else shipped)


@pytest.mark.parametrize("terminal", [False, True], ids=["piped", "terminal"])
def test_conformance_through_the_console_script(tmp_path: Path, terminal: bool) -> None:
    """``lionmem conformance`` passes the honest fake and exits 1 for a fake that lies."""
    run = on_terminal if terminal else lionmem
    (tmp_path / "liar.py").write_text(
        "from lionmem.conformance.fake import FakeBehaviour, FakeHarness, declared_manifest\n"
        "def make():\n"
        "    return FakeHarness(FakeBehaviour(tagless_search_hits=True), manifest=declared_manifest())\n"
    )
    honest = run(
        "conformance", "lionmem.conformance.fake:FakeHarness", "--case", "protocols", cwd=tmp_path
    )
    lying = run("conformance", "liar:make", "--case", "search_hit_tags", cwd=tmp_path)
    assert (honest.status, lying.status) == (0, 1)
    assert "1 passed, 0 failed" in honest.stdout
    assert "0 passed, 1 failed" in lying.stdout
