"""Every shell example of docs/cli.md runs and prints what the page shows.

A ```console block holds ``$ command`` lines, each followed by its output (stdout and stderr
together, as a terminal shows them). The blocks run in order in one bash process, in an empty
directory holding a copy of examples/, with the console script first on the PATH and no
``LIONMEM_DB``. In the shown output, a line ``...`` stands for any lines and ``...`` inside a
line for any text (a new id, a time).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.cli.conftest import REPO
from tests.cli.support import LIONMEM, clean_env

PAGE = REPO / "docs" / "cli.md"
BLOCK = re.compile(r"^```console\n(.*?)^```$", re.DOTALL | re.MULTILINE)
MARK = "@@lionmem-docs-command-done@@"


def examples() -> list[tuple[str, str]]:
    """Return every ``(command, shown output)`` of the page, in order."""
    found = []
    for block in BLOCK.findall(PAGE.read_text(encoding="utf-8")):
        for chunk in ("\n" + block).split("\n$ ")[1:]:
            command, _, output = chunk.partition("\n")
            found.append((command, output))
    return found


def _pattern(shown: str) -> re.Pattern[str]:
    parts = []
    for line in shown.splitlines():
        if line == "...":
            parts.append(r"(?:[^\n]*\n)*?")
        else:
            parts.append(".*?".join(re.escape(piece) for piece in line.split("...")) + r"\n")
    return re.compile("".join(parts), re.DOTALL)


def test_every_fenced_block_of_the_page_is_run() -> None:
    """Every fenced block is a console block, so none escapes this test."""
    text = PAGE.read_text(encoding="utf-8")
    openings = re.findall(r"^```(\S*)$", text, re.MULTILINE)[::2]
    assert openings == ["console"] * len(BLOCK.findall(text))
    assert len(openings) >= 6


def test_the_page_has_examples_of_every_command() -> None:
    """The page shows each command at least once."""
    used = {command.split()[1] for command, _ in examples() if command.startswith("lionmem ")}
    assert used >= {
        "add",
        "get",
        "search",
        "count",
        "import",
        "export",
        "validate",
        "schema",
        "conformance",
    }


def test_every_example_prints_what_the_page_shows(tmp_path: Path) -> None:
    """Run the page's commands in order; each one's output matches the shown output."""
    shutil.copytree(REPO / "examples", tmp_path / "examples")
    found = examples()
    script = "".join(
        f"{command}\n__status=$?; echo {MARK}; (exit $__status)\n" for command, _ in found
    )
    env = clean_env(PATH=f"{LIONMEM.parent}{os.pathsep}{os.environ['PATH']}")
    done = subprocess.run(
        ["bash", "-c", script],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=300,
        check=False,
    )
    outputs = done.stdout.split(MARK + "\n")
    assert len(outputs) == len(found) + 1, done.stdout
    for (command, shown), output in zip(found, outputs, strict=False):
        assert _pattern(shown).fullmatch(output), (
            f"$ {command}\nshown:\n{shown}\nprinted:\n{output}"
        )


@pytest.mark.parametrize(
    ("shown", "printed", "matches"),
    [
        ("a\n...\nb\n", "a\nx\ny\nb\n", True),
        ("a\n...\nb\n", "a\nb\n", True),
        ('{"id":"...","n":1}\n', '{"id":"12-34","n":1}\n', True),
        ('{"id":"...","n":1}\n', '{"id":"12-34","n":2}\n', False),
        ("a\n", "a\nb\n", False),
    ],
)
def test_the_wildcards_match_what_they_should(shown: str, printed: str, matches: bool) -> None:
    """``...`` alone spans lines, inside a line it spans text, and nothing else is loose."""
    assert bool(_pattern(shown).fullmatch(printed)) is matches
