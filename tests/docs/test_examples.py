"""Every example in README.md and docs/*.md runs, and prints what the page says it prints.

One test per page: its ```python blocks run in order in one fresh module namespace, in a fresh
temporary working directory, on one event loop, so a block may use top-level ``await``. A block's
trailing comment lines (``# text``, after its last line of code) are the exact output it prints;
a block without them prints nothing. A page whose examples need something from outside (the
address of a database, say) uses a plain name for it, and ``INJECTED`` maps that name to the
pytest fixture that provides it. ```console blocks of the pages in ``CONSOLE_PAGES`` run too:
each ``$ command`` in a subprocess (``python`` is this interpreter, importing this checkout's
lionmem) must exit 0 and print exactly the lines that follow it. Relative links must resolve.
"""

from __future__ import annotations

import ast
import asyncio
import os
import re
import shlex
import subprocess
import sys
import types
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

# Page -> {name the examples use: the fixture that provides its value}.
INJECTED: dict[str, dict[str, str]] = {"docs/postgres.md": {"dsn": "postgres_dsn"}}

# Pages whose ```console blocks this module runs (other pages' shell examples have their own tests).
CONSOLE_PAGES = ["README.md", "docs/adapters.md", "docs/clients.md"]

# A fenced block, possibly indented (inside a list item): indent, language, body.
FENCE = re.compile(r"^([ \t]*)```(\w*)[^\n]*\n(.*?)^\1```[ \t]*$", re.MULTILINE | re.DOTALL)
LINK = re.compile(r"\]\(([^)\s]+)\)")


@dataclass(frozen=True)
class Block:
    """One fenced block of a page: its language, its text and the page line its text starts on."""

    language: str
    text: str
    line: int


def page_id(page: Path) -> str:
    """The page's path relative to the repository root, as the tables above name it."""
    return page.relative_to(ROOT).as_posix() if page.is_relative_to(ROOT) else page.name


def blocks(page: Path, language: str) -> list[Block]:
    """The page's fenced blocks of ``language``, in order."""
    source = page.read_text(encoding="utf-8")
    return [
        Block(match[2], dedent(match[3], match[1]), source.count("\n", 0, match.start(3)) + 1)
        for match in FENCE.finditer(source)
        if match[2] == language
    ]


def dedent(body: str, indent: str) -> str:
    """``body`` without the fence's ``indent`` at the start of each line."""
    return "".join(line.removeprefix(indent) for line in body.splitlines(keepends=True))


def expected_output(text: str) -> list[str]:
    """The trailing ``# `` comment lines of a block, without the marker: what the block prints."""
    lines = text.rstrip("\n").splitlines()
    shown: list[str] = []
    while lines and (lines[-1].startswith("# ") or lines[-1] == "#"):
        shown.insert(0, lines.pop()[2:])
    return shown


def run_python_blocks(
    page: Path, namespace: dict[str, object], capsys: pytest.CaptureFixture[str]
) -> int:
    """Run the page's python blocks in ``namespace``; return how many ran."""
    examples = blocks(page, "python")
    loop = asyncio.new_event_loop()
    try:
        for block in examples:
            # Leading newlines keep the page's line numbers in tracebacks.
            source = "\n" * (block.line - 1) + block.text
            code = compile(
                source, str(page), "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, dont_inherit=True
            )
            result = eval(code, namespace)
            if asyncio.iscoroutine(result):
                loop.run_until_complete(result)
            printed = capsys.readouterr().out.splitlines()
            assert printed == expected_output(block.text), f"{page_id(page)}:{block.line}"
    finally:
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.close()
    return len(examples)


def run_console_blocks(page: Path, cwd: Path) -> int:
    """Run every ``$ command`` of the page's console blocks in ``cwd``; return how many ran."""
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    # The commands run this checkout's lionmem, whether or not it is installed.
    paths = [str(ROOT), str(ROOT / "generated"), env.get("PYTHONPATH", "")]
    env["PYTHONPATH"] = os.pathsep.join(path for path in paths if path)
    count = 0
    for block in blocks(page, "console"):
        commands: list[tuple[str, list[str]]] = []
        for line in block.text.rstrip("\n").splitlines():
            if line.startswith("$ "):
                commands.append((line[2:], []))
            else:
                assert commands, f"{page_id(page)}:{block.line}: output before any $ command"
                commands[-1][1].append(line)
        for command, shown in commands:
            argv = shlex.split(command)
            if argv[0] == "python":
                argv[0] = sys.executable
            done = subprocess.run(
                argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=120, check=False
            )
            assert (done.returncode, done.stdout.splitlines()) == (0, shown), (
                f"{page_id(page)}:{block.line}: $ {command}\n{done.stderr}"
            )
            count += 1
    return count


def inject(page: Path, namespace: dict[str, object], request: pytest.FixtureRequest) -> None:
    """Give ``namespace`` the names that ``INJECTED`` lists for the page, from their fixtures."""
    for name, fixture in INJECTED.get(page_id(page), {}).items():
        namespace[name] = request.getfixturevalue(fixture)


def anchors(page: Path) -> set[str]:
    """The ``#fragment`` of each heading of the page, as GitHub derives it."""
    found: set[str] = set()
    for line in FENCE.sub("", page.read_text(encoding="utf-8")).splitlines():
        if line.startswith("#"):
            slug = re.sub(r"[^\w\- ]", "", line.lstrip("#").strip().lower()).replace(" ", "-")
            unique, suffix = slug, 0
            while unique in found:  # a repeated heading gets -1, -2, ...
                suffix += 1
                unique = f"{slug}-{suffix}"
            found.add(unique)
    return found


def broken_links(page: Path) -> list[str]:
    """The page's relative links whose file, or heading after ``#``, does not exist."""
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    broken: list[str] = []
    for target in (match[1] for match in LINK.finditer(text)):
        if "://" in target:
            continue
        path, _, fragment = target.partition("#")
        linked = (page.parent / path) if path else page
        if not linked.exists() or (
            fragment and linked.suffix == ".md" and fragment not in anchors(linked)
        ):
            broken.append(target)
    return broken


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_page_examples(
    page: Path,
    request: pytest.FixtureRequest,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The page's examples run in order and print what the page shows; its links resolve."""
    assert broken_links(page) == []
    monkeypatch.chdir(tmp_path)
    module = types.ModuleType(f"docs_example_{page.stem.lower()}")
    monkeypatch.setitem(sys.modules, module.__name__, module)
    namespace = module.__dict__
    inject(page, namespace, request)
    run_python_blocks(page, namespace, capsys)
    if page_id(page) in CONSOLE_PAGES:
        run_console_blocks(page, tmp_path)


def test_tables_name_existing_pages() -> None:
    """A misspelt page in ``INJECTED`` or ``CONSOLE_PAGES`` would silently run nothing."""
    known = {page_id(page) for page in PAGES}
    assert sorted((set(INJECTED) | set(CONSOLE_PAGES)) - known) == []
