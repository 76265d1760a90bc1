"""Ctrl-C while a command waits for a locked database: what it reports is what was written.

Another process holds the SQLite write lock (``BEGIN EXCLUSIVE``) until the test frees it; the
command is started, interrupted (SIGINT) once it has opened the database and waits for the
lock, and then the lock is freed. ``add`` and ``delete`` hand their one write to the store,
which completes it once begun: they wait for it and report it. ``import`` rolls back and
stores nothing.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.cli.support import LIONMEM, clean_env, finished, lionmem

_HOLD_LOCK = """
import sqlite3, sys
connection = sqlite3.connect(sys.argv[1], isolation_level=None)
connection.execute("BEGIN EXCLUSIVE")
print("locked", flush=True)
sys.stdin.read()
connection.execute("COMMIT")
"""


@contextmanager
def _locked(db: Path) -> Iterator[Callable[[], None]]:
    """Hold the write lock of ``db`` from another process until the function given is called
    (or the block ends)."""
    with subprocess.Popen(
        [sys.executable, "-c", _HOLD_LOCK, str(db)], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    ) as holder:
        assert holder.stdin is not None
        assert holder.stdout is not None
        assert holder.stdout.readline() == b"locked\n"
        release = holder.stdin.close
        try:
            yield release
        finally:
            release()
        assert holder.wait(timeout=60) == 0


def _opened(pid: int, db: Path) -> bool:
    """Whether process ``pid`` has ``db`` open (its store is open: the write comes next)."""
    folder = Path(f"/proc/{pid}/fd")
    try:
        return any(os.path.realpath(folder / fd) == str(db) for fd in os.listdir(folder))
    except OSError:
        return False


def _interrupted_while_waiting(
    db: Path, *args: str, until_it_ends: bool = False, sent: signal.Signals = signal.SIGINT
) -> tuple[int, str, str]:
    """Run ``lionmem ARGS --db DB`` while another process holds the lock; once it has opened
    the database, send SIGINT (or ``sent``) twice, half a second apart, then free the lock (and,
    ``until_it_ends``, go on sending it every 50 ms until it exits); return its status and output."""
    with _locked(db) as release:
        process = subprocess.Popen(
            [str(LIONMEM), *args, "--db", str(db)],
            cwd=db.parent,
            env=clean_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        deadline = time.monotonic() + 30
        while not _opened(process.pid, db):
            assert process.poll() is None, process.communicate()
            assert time.monotonic() < deadline
            time.sleep(0.02)
        time.sleep(0.5)
        for _ in range(2):
            assert process.poll() is None, "the command ended before it could be interrupted"
            process.send_signal(sent)
            time.sleep(0.5)
        release()
        while until_it_ends and process.poll() is None:
            process.send_signal(sent)
            time.sleep(0.05)
        status, stdout, stderr = finished(process, timeout=60)
    return status, stdout.decode("utf-8"), stderr.decode("utf-8")


def _contents(db: Path) -> list[str]:
    listed = lionmem("search", "--limit", "100", "--db", db, cwd=db.parent)
    assert listed.status == 0, listed
    return [json.loads(line)["content"] for line in listed.stdout.splitlines()]


def test_add_interrupted_while_the_database_is_locked_reports_the_stored_item(
    tmp_path: Path,
) -> None:
    """The item handed to the store is stored once the lock is free: ``add`` says so, prints
    its id and exits 0, so a person does not add it again; the second Ctrl-C changes nothing."""
    db = tmp_path / "lk.db"
    assert lionmem("add", "first", "--db", db, cwd=tmp_path).status == 0
    status, stdout, stderr = _interrupted_while_waiting(db, "add", "zzz")
    assert (status, stderr) == (
        0,
        "lionmem add: interrupted; waiting for the write the store has begun\n",
    )
    stored = lionmem("get", stdout.strip(), "--db", db, cwd=tmp_path)
    assert (stored.status, json.loads(stored.stdout)["content"]) == (0, "zzz")
    assert _contents(db) == ["first", "zzz"]


def test_add_given_sigterm_while_the_database_is_locked_reports_the_stored_item(
    tmp_path: Path,
) -> None:
    """SIGTERM is handled as Ctrl-C, in its own words: ``add`` waits for the write it handed
    to the store, prints its id and exits 0; the second SIGTERM changes nothing."""
    db = tmp_path / "lk.db"
    assert lionmem("add", "first", "--db", db, cwd=tmp_path).status == 0
    status, stdout, stderr = _interrupted_while_waiting(db, "add", "zzz", sent=signal.SIGTERM)
    assert (status, stderr) == (
        0,
        "lionmem add: terminated; waiting for the write the store has begun\n",
    )
    stored = lionmem("get", stdout.strip(), "--db", db, cwd=tmp_path)
    assert (stored.status, json.loads(stored.stdout)["content"]) == (0, "zzz")
    assert _contents(db) == ["first", "zzz"]


def test_ctrl_c_after_the_interrupted_write_is_done_changes_nothing(tmp_path: Path) -> None:
    """Ctrl-C pressed again and again, past the write and while the store closes, is ignored:
    ``add`` still prints the id of the item stored and exits 0."""
    db = tmp_path / "lk.db"
    assert lionmem("add", "first", "--db", db, cwd=tmp_path).status == 0
    status, stdout, stderr = _interrupted_while_waiting(db, "add", "zzz", until_it_ends=True)
    assert (status, stderr) == (
        0,
        "lionmem add: interrupted; waiting for the write the store has begun\n",
    )
    stored = lionmem("get", stdout.strip(), "--db", db, cwd=tmp_path)
    assert (stored.status, json.loads(stored.stdout)["content"]) == (0, "zzz")


def test_delete_interrupted_while_the_database_is_locked_reports_the_deletion(
    tmp_path: Path,
) -> None:
    """``delete`` waits for the deletion it handed to the store and reports it."""
    db = tmp_path / "lk.db"
    added = lionmem("add", "gone", "--db", db, cwd=tmp_path)
    assert lionmem("add", "kept", "--db", db, cwd=tmp_path).status == 0
    item_id = added.stdout.strip()
    assert _interrupted_while_waiting(db, "delete", item_id) == (
        0,
        f"deleted {item_id}\n",
        "lionmem delete: interrupted; waiting for the write the store has begun\n",
    )
    assert _contents(db) == ["kept"]


def test_import_interrupted_while_the_database_is_locked_stores_nothing(tmp_path: Path) -> None:
    """``import`` stops at the interruption: exit 130, and none of the file is stored."""
    db = tmp_path / "lk.db"
    assert lionmem("add", "first", "--db", db, cwd=tmp_path).status == 0
    (tmp_path / "more.jsonl").write_text('{"content": "more"}\n', encoding="utf-8")
    assert _interrupted_while_waiting(db, "import", "more.jsonl") == (
        130,
        "",
        "lionmem import: interrupted\n",
    )
    assert _contents(db) == ["first"]


# Runs ``lionmem ARGS`` with the store's NAME (a function of lionmem.stores.sqlite, or a method
# of SQLiteMemoryStore when it holds a dot) held until the file GATE exists; "held" on stderr
# says it has begun.
_HELD_AT = """
import asyncio, functools, inspect, pathlib, sys, time
from lionmem.cli import main
from lionmem.stores import sqlite
name, gate, *args = sys.argv[1:]
owner, _, attribute = name.rpartition(".")
holder = sqlite.SQLiteMemoryStore if owner else sqlite
real = getattr(holder, attribute)

if inspect.iscoroutinefunction(real):
    @functools.wraps(real)
    async def held(*a, **k):
        print("held", file=sys.stderr, flush=True)
        while not pathlib.Path(gate).exists():
            await asyncio.sleep(0.01)
        return await real(*a, **k)
else:
    @functools.wraps(real)
    def held(*a, **k):
        print("held", file=sys.stderr, flush=True)
        while not pathlib.Path(gate).exists():
            time.sleep(0.01)
        return real(*a, **k)

setattr(holder, attribute, held)
raise SystemExit(main(args))
"""


def _interrupted_at(tmp_path: Path, name: str, *args: str) -> tuple[int, str, str]:
    """Run ``lionmem ARGS`` until the store reaches ``name``; there, send SIGINT twice, half a
    second apart, then let it go on; return its status and output."""
    gate = tmp_path / "gate"
    process = subprocess.Popen(
        [sys.executable, "-c", _HELD_AT, name, str(gate), *args],
        cwd=tmp_path,
        env=clean_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stderr is not None
    assert process.stderr.readline() == b"held\n", finished(process)
    for _ in range(2):
        process.send_signal(signal.SIGINT)
        time.sleep(0.5)
    gate.touch()
    status, stdout, stderr = finished(process, timeout=60)
    return status, stdout.decode("utf-8"), stderr.decode("utf-8")


def test_an_import_interrupted_once_every_line_is_read_reports_the_import(tmp_path: Path) -> None:
    """Ctrl-C while the store indexes and commits an import whose lines were all read: the store
    completes it, so the command says at once that it waits for it and reports the import
    (exit 0), ignoring the second Ctrl-C; a rerun would store the items twice."""
    db = tmp_path / "im.db"
    lines = "".join(f'{{"content": "item {n}"}}\n' for n in range(200))
    (tmp_path / "items.jsonl").write_text(lines, encoding="utf-8")
    assert _interrupted_at(tmp_path, "_index_all", "import", "items.jsonl", "--db", str(db)) == (
        0,
        "imported 200 items from items.jsonl\n",
        "lionmem import: interrupted after the last line was read; waiting for the store to "
        "commit the import\n",
    )
    assert lionmem("count", "--db", db, cwd=tmp_path).stdout == "200\n"


def test_a_command_interrupted_while_its_store_closes_reports_its_work(tmp_path: Path) -> None:
    """Ctrl-C once the work is done and reported, while the store closes: the command ends with
    the work's status and report (the store's files are consistent however the process ends)."""
    db = tmp_path / "cl.db"
    status, stdout, stderr = _interrupted_at(
        tmp_path, "SQLiteMemoryStore.close", "add", "kept", "--db", str(db)
    )
    assert (status, len(stdout), stderr) == (0, len("00000000-0000-0000-0000-000000000000\n"), "")
    assert _contents(db) == ["kept"]
