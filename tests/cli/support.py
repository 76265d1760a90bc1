"""Running the ``lionmem`` console script in a subprocess: piped, or on a pseudo-terminal.

Every run gets an environment without ``LIONMEM_DB``, ``COLUMNS`` and colour switches, so the
store and the terminal width are what the test gives. On a terminal the output is read from the
pty until the child closes it; ANSI escape sequences are removed and line ends become ``\\n``.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import pty
import re
import signal
import struct
import subprocess
import sys
import termios
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

__all__ = [
    "LIONMEM",
    "Result",
    "clean_env",
    "fill",
    "finished",
    "interrupt_once_waiting",
    "lionmem",
    "on_terminal",
    "one_line_error",
    "piped_import",
    "through_full_pipe",
    "vectors",
]

LIONMEM = Path(sys.executable).parent / "lionmem"
VECTORS = Path(__file__).resolve().parents[1] / "vectors"
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07|\x1b[()][A-Z0-9]")


def clean_env(**extra: str) -> dict[str, str]:
    """Return this process's environment without the variables that would steer the command."""
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in {"LIONMEM_DB", "COLUMNS", "LINES", "NO_COLOR", "FORCE_COLOR", "TERM"}
    }
    env["TERM"] = "xterm-256color"
    env.update(extra)
    return env


@dataclass(frozen=True)
class Result:
    """The exit status and output of one run (``stderr`` empty when it shared the terminal)."""

    status: int
    stdout: str
    stderr: str


def lionmem(
    *args: str | Path,
    cwd: Path,
    stdin: str | bytes | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 120,
) -> Result:
    """Run the console script with ``args``, every stream piped; return what it did."""
    completed = subprocess.run(
        [str(LIONMEM), *map(str, args)],
        input=stdin.encode() if isinstance(stdin, str) else stdin,
        capture_output=True,
        cwd=cwd,
        env=env or clean_env(),
        timeout=timeout,
        check=False,
    )
    return Result(
        completed.returncode,
        completed.stdout.decode("utf-8"),
        completed.stderr.decode("utf-8"),
    )


def on_terminal(  # noqa: PLR0913 - independent, keyword-only settings of one run on a pty
    *args: str | Path,
    cwd: Path,
    columns: int = 100,
    stderr_too: bool = True,
    timeout: float = 120,
    raw: bool = False,
    full: bool = False,
    env: dict[str, str] | None = None,
) -> Result:
    """Run the console script with stdout (and stderr, unless ``stderr_too`` is false) on a pty,
    in ``env`` (default ``clean_env()``);
    ``raw=True`` keeps the escape sequences and line ends the terminal received. ``full=True``
    makes the terminal non-blocking and full (``fill``) before the command starts, and reads it
    only once the command has waited on it (``_read_late``); the filling is left out of the
    result."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, columns, 0, 0))
    filled = fill(slave) if full else 0
    process = subprocess.Popen(
        [str(LIONMEM), *map(str, args)],
        stdin=slave,
        stdout=slave,
        stderr=slave if stderr_too else subprocess.PIPE,
        cwd=cwd,
        env=env or clean_env(),
        close_fds=True,
    )
    os.close(slave)
    if full:
        _read_late(process)
    chunks = []
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: every holder of the pty's other end has closed it
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(master)
    error = process.stderr.read().decode("utf-8") if process.stderr else ""
    status = process.wait(timeout=timeout)
    received = b"".join(chunks)
    assert received[:filled] == b"." * filled
    text = received[filled:].decode("utf-8")
    if not raw:
        text = _ANSI.sub("", text).replace("\r\n", "\n")
    return Result(status, text, error)


def fill(descriptor: int) -> int:
    """Make the pipe or terminal ``descriptor`` writes non-blocking, as a reader sharing it may,
    and write dots into it until it is full; return how many were written. A terminal moves
    what it holds to its reader's side a moment later, making room again: it is full once it
    still takes nothing a tenth of a second after it first refused."""
    os.set_blocking(descriptor, False)
    filled = 0
    refused = False
    while True:
        try:
            filled += os.write(descriptor, b"." * 4096)
        except BlockingIOError:
            if refused:
                return filled
            refused = True
            time.sleep(0.1)
        else:
            refused = False


def _read_late(process: subprocess.Popen[bytes]) -> None:
    """Wait until ``process`` has ended or two seconds have passed: a command writing to an
    output that is full and never read ends only by failing, and any command here is writing
    two seconds after it started."""
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=2)


def through_full_pipe(*args: str | Path, cwd: Path, timeout: float = 120) -> Result:
    """Run the console script with stdout a pipe made non-blocking and full (``fill``) before
    the command starts, read only once the command has waited on it (``_read_late``); stderr
    piped. The filling is left out of the result."""
    read_end, write_end = os.pipe()
    filled = fill(write_end)
    with open(read_end, "rb") as reader:
        process = subprocess.Popen(
            [str(LIONMEM), *map(str, args)],
            stdin=subprocess.DEVNULL,
            stdout=write_end,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env=clean_env(),
        )
        os.close(write_end)
        _read_late(process)
        received = reader.read()
        stderr = process.communicate(timeout=timeout)[1]
    assert received[:filled] == b"." * filled
    return Result(process.returncode, received[filled:].decode("utf-8"), stderr.decode("utf-8"))


def one_line_error(result: Result, prefix: str) -> str:
    """Assert ``result`` is exit 2 with one stderr line starting ``prefix``; return the line."""
    assert result.status == 2, result
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(prefix), lines[0]
    return lines[0]


def vectors(schema: str) -> list[dict[str, Any]]:
    """Return the shared schema vectors of ``schema`` (tests/vectors/<schema>/), in file order."""
    files = sorted((VECTORS / schema).glob("*.json"))
    return [json.loads(path.read_text(encoding="utf-8")) for path in files]


def piped_import(
    db: str | Path, cwd: Path, stdin: int | IO[bytes] = subprocess.PIPE
) -> subprocess.Popen[bytes]:
    """``lionmem import - --db DB`` started with every stream a pipe (standard input ``stdin``,
    when given: a descriptor or a file)."""
    return subprocess.Popen(
        [str(LIONMEM), "import", "-", "--db", str(db)],
        cwd=cwd,
        env=clean_env(),
        stdin=stdin,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def finished(process: subprocess.Popen[bytes], timeout: float = 30) -> tuple[int, bytes, bytes]:
    """Wait for ``process`` (killed if still running ``timeout`` seconds later); return its
    exit status, its stdout and its stderr."""
    try:
        status = process.wait(timeout=timeout)
    finally:
        if process.poll() is None:
            process.kill()
        stdout, stderr = process.communicate(timeout=60)
    return status, stdout, stderr


def interrupt_once_waiting(
    process: subprocess.Popen[bytes], lines: bytes, settle: float
) -> tuple[int, bytes, bytes]:
    """Write ``lines`` into ``process``'s stdin, wait until it has read them and ``settle``
    seconds more (it then waits for the next line, the pipe still open), send one SIGINT and
    return what ``finished`` returns."""
    assert process.stdin is not None
    process.stdin.write(lines)
    process.stdin.flush()
    deadline = time.monotonic() + 60
    while _unread_bytes(process.stdin.fileno()):
        assert process.poll() is None
        assert time.monotonic() < deadline
        time.sleep(0.01)
    time.sleep(settle)
    process.send_signal(signal.SIGINT)
    return finished(process, timeout=20)


def _unread_bytes(pipe: int) -> int:
    """The bytes written into ``pipe`` (its writing end) that the reader has not taken yet."""
    return struct.unpack("i", fcntl.ioctl(pipe, termios.FIONREAD, b"\0\0\0\0"))[0]  # type: ignore[no-any-return]  # struct.unpack gives Any
