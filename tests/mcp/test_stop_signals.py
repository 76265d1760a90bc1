"""Ctrl-C (SIGINT) and SIGTERM stop ``lionmem mcp`` over stdio after it closed its store.

What a supervisor sends (systemd, ``docker stop``) is handled as Ctrl-C, in its own words and
exit status. The server runs as a subprocess over pipes; stdin stays open, so the signal and
not the end of input stops it, whether requests are flowing or the client stopped reading.
"""

from __future__ import annotations

import fcntl
import json
import os
import signal
import subprocess
import sys
import termios
import threading
import time
from pathlib import Path

import pytest

from lionmem import SQLiteMemoryStore
from tests.mcp.support import RawServer, call_request, initialize_request, server_command

STOPS = pytest.mark.parametrize(
    ("sent", "done"),
    [(signal.SIGINT, (130, "interrupted")), (signal.SIGTERM, (143, "terminated"))],
    ids=["ctrl-c", "sigterm"],
)

F_GETPIPE_SZ = 1032  # Linux's fcntl command for a pipe's capacity (not in Python 3.11's fcntl)


async def _contents(db: Path) -> list[tuple[str, str]]:
    async with SQLiteMemoryStore(db) as store:
        return sorted([(str(item.id), item.content) async for item in store.items()])


def _stopped(server: RawServer, sent: signal.Signals) -> tuple[int, str]:
    """Send ``sent`` to the server; its exit status and stderr (``TimeoutExpired`` if it has
    not exited 30 s later)."""
    server.process.send_signal(sent)
    status = server.process.wait(timeout=30)
    assert server.process.stderr is not None
    return status, server.process.stderr.read().decode("utf-8")


def _assert_stopped(status: int, errors: str, db: Path, done: tuple[int, str]) -> None:
    """The server exited with ``done``'s status, said what stopped it, and closed its store
    (SQLite removes its write-ahead log and shared memory with the last connection)."""
    status_wanted, word = done
    assert (status, errors) == (
        status_wanted,
        f"lionmem mcp: serving {db} over stdio\nlionmem mcp: {word}\n",
    )
    assert sorted(path.name for path in db.parent.iterdir()) == [db.name]


def _unread(server: RawServer) -> int:
    """How many bytes the server wrote to its stdout that the test has not read."""
    count = bytearray(4)
    fcntl.ioctl(server.stdout.fileno(), termios.FIONREAD, count)
    return int.from_bytes(count, sys.byteorder)


def _flood(server: RawServer, lines: list[bytes]) -> threading.Thread:
    """Write ``lines`` to the server's stdin, again and again, from a thread, until the pipe
    breaks (the server exited)."""

    def write() -> None:
        try:
            while True:
                for line in lines:  # unbuffered, so that closing stdin writes nothing more
                    os.write(server.stdin.fileno(), line)
        except OSError:  # EPIPE, or EBADF once the test closed stdin
            return

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    return writer


@STOPS
async def test_a_stop_signal_closes_the_store_and_says_so(
    tmp_path: Path, sent: signal.Signals, done: tuple[int, str]
) -> None:
    """After answering a store, the server given the signal closes its store (SQLite removes
    its write-ahead log with the last connection), says so and exits 130 or 143."""
    db = tmp_path / "memory.db"
    wal = tmp_path / "memory.db-wal"
    server = RawServer(db)
    try:
        stored = server.call(2, "memory_store", {"content": "kept"})
        assert wal.exists()  # the store is open
        status, errors = _stopped(server, sent)
        rest = server.stdout.read()
    finally:
        server.kill()
    assert rest == b""
    _assert_stopped(status, errors, db, done)
    assert await _contents(db) == [(stored["structuredContent"]["id"], "kept")]


@STOPS
async def test_a_stop_while_requests_flow_closes_the_store_and_keeps_every_answered_store(
    tmp_path: Path, sent: signal.Signals, done: tuple[int, str]
) -> None:
    """The signal while the client writes stores and lists as fast as it can, and reads the
    answers: the server stops as it does when idle, and each store it answered is stored."""
    db = tmp_path / "memory.db"
    server = RawServer(db)
    acknowledged: list[tuple[str, str]] = []
    enough = threading.Event()

    def read() -> None:
        for line in server.stdout:
            answer = json.loads(line)
            content = answer["id"].removeprefix("store-")
            if content != answer["id"] and "result" in answer:  # a store answered
                acknowledged.append((answer["result"]["structuredContent"]["id"], content))
            if len(acknowledged) >= 50:
                enough.set()
        enough.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    lines = [
        json.dumps(call_request(f"store-{n}", "memory_store", {"content": f"{n}"})).encode()
        + b"\n"
        + b'{"jsonrpc":"2.0","id":"list","method":"tools/list"}\n'
        for n in range(100_000)
    ]
    writer = _flood(server, lines)
    try:
        assert enough.wait(timeout=60)
        assert server.process.poll() is None, "the server ended before it was stopped"
        status, errors = _stopped(server, sent)
        reader.join(timeout=30)
        writer.join(timeout=30)
    finally:
        server.kill()
    _assert_stopped(status, errors, db, done)
    assert set(acknowledged) <= set(await _contents(db))


@STOPS
def test_a_stop_while_the_client_reads_no_answer_closes_the_store(
    tmp_path: Path, sent: signal.Signals, done: tuple[int, str]
) -> None:
    """The signal while the server's answers fill stdout, which the client stopped reading:
    the answers not written are dropped, and the server stops as it does when idle."""
    db = tmp_path / "memory.db"
    server = RawServer(db)
    writer = _flood(server, [b'{"jsonrpc":"2.0","id":2,"method":"tools/list"}\n'])
    try:
        # Full: the answers fill half the pipe (it is never filled to the byte) and stop
        # growing, the server waiting to write the next.
        capacity = fcntl.fcntl(server.stdout.fileno(), F_GETPIPE_SZ)
        deadline = time.monotonic() + 60
        unread = [-1, _unread(server)]
        while unread[-1] < capacity // 2 or unread[-1] != unread[-2]:
            assert time.monotonic() < deadline, "the answers never filled the pipe"
            time.sleep(0.1)
            unread.append(_unread(server))
        status, errors = _stopped(server, sent)
        writer.join(timeout=30)
    finally:
        server.kill()
    _assert_stopped(status, errors, db, done)


def test_sigterm_ignored_from_the_start_stays_ignored(tmp_path: Path) -> None:
    """A server started with SIGTERM ignored (a parent's choice, as ``nohup`` makes it for
    SIGHUP) keeps ignoring it: it answers the next request and ends with stdin, exit 0."""
    db = tmp_path / "memory.db"
    ignoring = (
        "import os, signal, sys; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
        "os.execv(sys.executable, sys.argv[1:])"
    )
    server = RawServer(db, launcher=(sys.executable, "-c", ignoring))
    try:
        server.process.send_signal(signal.SIGTERM)
        answer = server.call(2, "memory_store", {"content": "after"})
        status, rest, errors = server.finish()
    finally:
        server.kill()
    assert answer["isError"] is False
    assert (status, rest, errors) == (0, b"", f"lionmem mcp: serving {db} over stdio\n".encode())


def test_a_failing_read_of_stdin_is_one_line_and_ends_the_input(tmp_path: Path) -> None:
    """stdin that cannot be read (here a file open for writing only: EBADF) ends the input:
    the server says so in one line, without a traceback, and exits 0 after closing its store."""
    db = tmp_path / "memory.db"
    write_only = os.open(tmp_path / "input", os.O_WRONLY | os.O_CREAT)
    try:
        done = subprocess.run(
            server_command("--db", str(db)),
            stdin=write_only,
            capture_output=True,
            cwd=tmp_path,
            timeout=60,
            check=False,
        )
    finally:
        os.close(write_only)
    assert (done.returncode, done.stdout, done.stderr.decode("utf-8")) == (
        0,
        b"",
        f"lionmem mcp: serving {db} over stdio\n"
        "lionmem mcp: cannot read standard input: Bad file descriptor\n",
    )
    assert sorted(path.name for path in tmp_path.iterdir()) == ["input", "memory.db"]


def _with_streams(streams: str, db: Path) -> subprocess.CompletedProcess[bytes]:
    """Run ``lionmem mcp --db db`` over stdio with the shell's ``streams`` redirection."""
    command = ["sh", "-c", f'exec "$@" {streams}', "sh", *server_command("--db", str(db))]
    return subprocess.run(command, capture_output=True, cwd=db.parent, timeout=30, check=False)


def test_a_closed_stdout_is_refused_before_the_store_opens(tmp_path: Path) -> None:
    """``>&-``: the server could not answer; one line, exit 2, and no database made."""
    done = _with_streams("</dev/null >&-", tmp_path / "memory.db")
    assert (done.returncode, done.stderr.decode()) == (
        2,
        "lionmem mcp: standard output is closed: the server answers on it; "
        "redirect it, or serve --http\n",
    )
    assert list(tmp_path.iterdir()) == []


def test_a_closed_stdin_is_the_end_of_input_at_once(tmp_path: Path) -> None:
    """``<&-``: no requests, so the server ends at once as at the end of its input."""
    db = tmp_path / "memory.db"
    done = _with_streams("<&-", db)
    assert (done.returncode, done.stdout, done.stderr.decode()) == (
        0,
        b"",
        f"lionmem mcp: serving {db} over stdio\n",
    )


def test_a_client_that_closes_stdout_stops_the_server_quietly_with_exit_1(tmp_path: Path) -> None:
    """The client closes its end of stdout and keeps stdin open: the next answer cannot be
    written, so the server stops at once, as a command whose reader went away (exit 1)."""
    db = tmp_path / "memory.db"
    server = RawServer(db)
    try:
        server.call(2, "memory_store", {"content": "kept"})
        server.stdout.close()
        server.send(json.dumps(call_request(3, "memory_count", {})).encode())
        status = server.process.wait(timeout=30)  # with stdin still open
        assert server.process.stderr is not None
        errors = server.process.stderr.read().decode()
    finally:
        server.kill()
    assert (status, errors) == (1, f"lionmem mcp: serving {db} over stdio\n")
    assert sorted(path.name for path in tmp_path.iterdir()) == ["memory.db"]


def test_an_answer_that_cannot_be_written_is_one_line_and_exit_2(tmp_path: Path) -> None:
    """stdout on a full disk (``/dev/full``): the first answer fails, and the server says so in
    one line naming standard output and exits 2, its store closed."""
    db = tmp_path / "memory.db"
    request = json.dumps(initialize_request(1)) + "\n"
    done = subprocess.run(
        ["sh", "-c", 'exec "$@" >/dev/full', "sh", *server_command("--db", str(db))],
        input=request.encode(), capture_output=True, cwd=tmp_path, timeout=30, check=False,
    )  # fmt: skip
    assert (done.returncode, done.stderr.decode()) == (
        2,
        f"lionmem mcp: serving {db} over stdio\n"
        "lionmem mcp: cannot write standard output: No space left on device\n",
    )
    assert sorted(path.name for path in tmp_path.iterdir()) == ["memory.db"]


@STOPS
def test_a_stop_while_big_arguments_are_checked_stops_as_when_idle(
    tmp_path: Path, sent: signal.Signals, done: tuple[int, str]
) -> None:
    """Two big calls are being checked (seconds each, in threads a stop cannot end) when the
    signal comes: the server stops as it does when idle, closing its store, with no word from
    the checks' threads."""
    db = tmp_path / "memory.db"
    server = RawServer(db)
    tags = ["t"] * 900_000  # seconds of checking, under the 4 MiB request cap
    try:
        for n in range(2):
            call = call_request(10 + n, "memory_search", {"tags": tags})
            server.send(json.dumps(call, separators=(",", ":")).encode())
        time.sleep(1.0)  # both lines read and their checks begun
        assert server.process.poll() is None
        status, errors = _stopped(server, sent)
    finally:
        server.kill()
    _assert_stopped(status, errors, db, done)
