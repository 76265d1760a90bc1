"""``import -``: standard input from a pipe or a terminal, read line by line as it arrives."""

from __future__ import annotations

import contextlib
import json
import os
import pty
import select
import subprocess
import time
from pathlib import Path

import pytest

from tests.cli.support import (
    LIONMEM,
    clean_env,
    finished,
    lionmem,
    piped_import,
)


def _export(db: Path) -> str:
    result = lionmem("export", "--db", db, cwd=db.parent)
    assert (result.status, result.stderr) == (0, ""), result
    return result.stdout


def _read_until_exit(process: subprocess.Popen[bytes], master: int, seconds: float) -> bytes:
    """What ``process`` writes on the pty ``master`` until it exits (or ``seconds`` pass)."""
    output = b""
    deadline = time.monotonic() + seconds
    while process.poll() is None and time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.1)
        if ready:
            with contextlib.suppress(OSError):
                output += os.read(master, 65536)
    return output


@pytest.mark.slow
def test_one_ctrl_d_ends_import_from_a_terminal(tmp_path: Path) -> None:
    """``import -`` on a terminal: the lines typed so far and one Ctrl-D finish the import."""
    master, slave = pty.openpty()
    process = subprocess.Popen(
        [str(LIONMEM), "import", "-", "--db", "t.db"],
        cwd=tmp_path,
        env=clean_env(),
        stdin=slave,
        stdout=slave,
        stderr=slave,
        close_fds=True,
    )
    os.close(slave)
    try:
        os.write(master, b'{"content": "a"}\n{"content": "b"}\n')
        _read_until_exit(process, master, 1)
        os.write(master, b"\x04")
        output = _read_until_exit(process, master, 30)
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(timeout=60)
        os.close(master)
    assert (process.returncode, output.replace(b"\r\n", b"\n")) == (
        0,
        b"imported 2 items from standard input\n",
    )


@pytest.mark.slow
def test_a_bad_line_from_a_pipe_is_reported_as_soon_as_it_arrives(tmp_path: Path) -> None:
    """A bad line written into a pipe that stays open aborts the import at once."""
    process = piped_import("p.db", tmp_path)
    assert process.stdin is not None
    process.stdin.write(b'{"content": "x"}\nbad\n')
    process.stdin.flush()
    assert finished(process) == (
        1,
        b"",
        b"lionmem import: line 2: Invalid JSON: expected value at line 1 column 1; "
        b"nothing was imported\n",
    )


def test_import_from_a_pipe_joins_lines_split_across_writes(tmp_path: Path) -> None:
    """Lines that arrive in pieces, the last without a line break, are read whole."""
    process = piped_import("p.db", tmp_path)
    assert process.stdin is not None
    for piece in (b'{"content": "a', b'"}\n{"con', b'tent": "b"}\n\n{"content": "c"}'):
        process.stdin.write(piece)
        process.stdin.flush()
        time.sleep(0.3)
    stdout, stderr = process.communicate(timeout=60)
    assert (process.returncode, stdout, stderr) == (
        0,
        b"imported 3 items from standard input\n",
        b"",
    )
    assert [json.loads(line)["content"] for line in _export(tmp_path / "p.db").splitlines()] == [
        "a",
        "b",
        "c",
    ]


def test_import_from_a_closed_standard_input_is_one_line(tmp_path: Path) -> None:
    """Started with standard input closed (``<&-``), ``import -`` says so, and stores nothing."""
    command = ["sh", "-c", 'exec "$@" <&-', "sh", str(LIONMEM), "import", "-", "--db", "t.db"]
    done = subprocess.run(
        command, cwd=tmp_path, capture_output=True, text=True, env=clean_env(), check=False
    )
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        "lionmem import: standard input is closed: give a file, or pipe the lines in\n"
    )
    assert not (tmp_path / "t.db").exists()


def test_import_from_a_non_blocking_pipe_waits_for_its_lines(tmp_path: Path) -> None:
    """A pipe made non-blocking (O_NONBLOCK, as a process sharing it may) is waited for while
    it is empty: the lines written later are imported, not an EAGAIN error."""
    read_end, write_end = os.pipe()
    os.set_blocking(read_end, False)
    process = piped_import("t.db", tmp_path, stdin=read_end)
    os.close(read_end)
    with os.fdopen(write_end, "wb", buffering=0) as lines:
        time.sleep(1)  # the command has started and finds the pipe empty
        if process.poll() is None:
            lines.write(b'{"content": "a"}\n')
            time.sleep(0.2)
        if process.poll() is None:
            lines.write(b'{"content": "b"}\n')
    assert finished(process) == (0, b"imported 2 items from standard input\n", b"")
    assert [json.loads(line)["content"] for line in _export(tmp_path / "t.db").splitlines()] == [
        "a",
        "b",
    ]
