"""The command on a PostgreSQL database: ``--db postgresql://...`` with namespaces, and transfers."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.cli.conftest import SAMPLE
from tests.cli.support import (
    LIONMEM,
    clean_env,
    interrupt_once_waiting,
    lionmem,
    piped_import,
)
from tests.postgres_support import Cluster

# The sessions of the database that have written in a transaction not yet committed.
WRITING = (
    "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
    "AND state = 'idle in transaction' AND backend_xid IS NOT NULL"
)


def _database(dsn: str) -> str:
    return dsn.rsplit("/", 1)[1]


def _wait_for_a_writer(cluster: Cluster, database: str, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while cluster.psql(WRITING, database) != "1":
        assert process.poll() is None, "the import ended before it was seen writing"
        assert time.monotonic() < deadline, "the import was never seen writing"
        time.sleep(0.02)


def test_add_search_count_and_delete_in_a_namespace(postgres_dsn: str, tmp_path: Path) -> None:
    """An item added in one namespace is found, counted and deleted there, and unseen in another."""
    added = lionmem(
        "add", "on the server", "--tag", "pg", "--db", postgres_dsn, "--namespace", "a",
        cwd=tmp_path,
    )  # fmt: skip
    assert (added.status, added.stderr) == (0, "")
    item_id = added.stdout.strip()
    found = lionmem(
        "search", "--text", "SERVER", "--db", postgres_dsn, "--namespace", "a", cwd=tmp_path
    )
    assert [json.loads(line)["id"] for line in found.stdout.splitlines()] == [item_id]
    other = lionmem("count", "--db", postgres_dsn, "--namespace", "b", cwd=tmp_path)
    assert (other.status, other.stdout) == (0, "0\n")
    deleted = lionmem("delete", item_id, "--db", postgres_dsn, "--namespace", "a", cwd=tmp_path)
    assert deleted.status == 0
    left = lionmem("count", "--db", postgres_dsn, "--namespace", "a", cwd=tmp_path)
    assert (left.status, left.stdout) == (0, "0\n")


def test_sqlite_to_postgres_and_back_gives_every_field_exactly(
    postgres_dsn: str, tmp_path: Path
) -> None:
    """The shipped sample imported into PostgreSQL exports byte for byte as it was read."""
    imported = lionmem("import", SAMPLE, "--db", postgres_dsn, cwd=tmp_path)
    assert (imported.status, imported.stderr) == (0, "")
    exported = lionmem("export", "--db", postgres_dsn, cwd=tmp_path)
    assert (exported.status, exported.stderr) == (0, "")
    assert exported.stdout == SAMPLE.read_text("utf-8")
    back = lionmem("import", "-", "--db", tmp_path / "back.db", stdin=exported.stdout, cwd=tmp_path)
    assert (back.status, back.stderr) == (0, "")
    again = lionmem("export", "--db", tmp_path / "back.db", cwd=tmp_path)
    assert again.stdout == SAMPLE.read_text("utf-8")


def test_import_writes_into_postgres_while_it_reads(
    postgres_server: Cluster, postgres_dsn: str, tmp_path: Path
) -> None:
    """Lines piped in are written inside the open transaction before the input ends (the file
    is streamed, not read first), unseen by other sessions until the commit."""
    database = _database(postgres_dsn)
    lines = SAMPLE.read_bytes().splitlines(keepends=True)
    assert lionmem("add", "before", "--db", postgres_dsn, cwd=tmp_path).status == 0
    process = piped_import(postgres_dsn, tmp_path)
    assert process.stdin is not None
    try:
        process.stdin.write(b"".join(lines[:2500]))
        process.stdin.flush()
        _wait_for_a_writer(postgres_server, database, process)
        assert postgres_server.psql("SELECT count(*) FROM lionmem_items", database) == "1"
        process.stdin.write(b"".join(lines[2500:]))
    finally:
        stdout, stderr = process.communicate(timeout=60)
    assert (process.returncode, stdout, stderr) == (
        0,
        b"imported 3000 items from standard input\n",
        b"",
    )
    counted = lionmem("count", "--db", postgres_dsn, cwd=tmp_path)
    assert (counted.status, counted.stdout) == (0, "3001\n")


def test_a_bad_line_after_1500_good_ones_imports_nothing_and_names_it(
    postgres_dsn: str, tmp_path: Path
) -> None:
    """A value the store refuses on line 1,501 (after a first chunk was written) is reported
    with its line number; none of the file is stored, and the items stored before stay."""
    lines = SAMPLE.read_text("utf-8").splitlines(keepends=True)
    (tmp_path / "bad.jsonl").write_text(
        "".join(lines[:1500]) + '{"content": 1e400}\n' + "".join(lines[1500:]), "utf-8"
    )
    assert lionmem("add", "before", "--db", postgres_dsn, cwd=tmp_path).status == 0
    result = lionmem("import", "bad.jsonl", "--db", postgres_dsn, cwd=tmp_path)
    reason = "MemoryItem.content: a value of type float cannot be stored exactly: inf: JSON has no NaN or Infinity"
    assert (result.status, result.stdout, result.stderr) == (
        1,
        "",
        f"lionmem import: line 1501: {reason}; nothing was imported\n",
    )
    exported = lionmem("export", "--db", postgres_dsn, cwd=tmp_path)
    assert [json.loads(line)["content"] for line in exported.stdout.splitlines()] == ["before"]


@pytest.mark.slow
def test_ctrl_c_mid_import_into_postgres_rolls_back_and_exits_130(
    postgres_server: Cluster, postgres_dsn: str, tmp_path: Path
) -> None:
    """SIGINT while an import writes into PostgreSQL: exit 130, and none of it is stored."""
    database = _database(postgres_dsn)
    with (tmp_path / "big.jsonl").open("w", encoding="utf-8") as out:
        for index in range(200_000):
            out.write(json.dumps({"content": f"line {index} of a large import"}) + "\n")
    assert lionmem("add", "before", "--db", postgres_dsn, cwd=tmp_path).status == 0
    process = subprocess.Popen(
        [str(LIONMEM), "import", "big.jsonl", "--db", postgres_dsn],
        cwd=tmp_path,
        env=clean_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    _wait_for_a_writer(postgres_server, database, process)
    process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=30)
    assert (process.returncode, stdout, stderr) == (130, b"", b"lionmem import: interrupted\n")
    assert postgres_server.psql("SELECT count(*) FROM lionmem_items", database) == "1"


_HOLD_LOCK = """
import asyncio, sys
import asyncpg

async def main():
    connection = await asyncpg.connect(sys.argv[1])
    async with connection.transaction():
        await connection.execute("LOCK TABLE lionmem_items IN ACCESS EXCLUSIVE MODE")
        print("locked", flush=True)
        await asyncio.to_thread(sys.stdin.read)
    await connection.close()

asyncio.run(main())
"""
# The sessions of the database waiting for a lock.
LOCKED_OUT = (
    "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
    "AND wait_event_type = 'Lock'"
)


def test_ctrl_c_once_every_line_is_read_says_the_import_waits_for_its_commit(
    postgres_server: Cluster, postgres_dsn: str, tmp_path: Path
) -> None:
    """SIGINT while an import whose lines were all read waits for another session's lock: the
    command says at once that it waits for the store to commit, and once the lock is released
    reports the import done (exit 0)."""
    database = _database(postgres_dsn)
    assert lionmem("add", "before", "--db", postgres_dsn, cwd=tmp_path).status == 0
    lines = "".join(json.dumps({"content": f"line {n}"}) + "\n" for n in range(50))
    (tmp_path / "few.jsonl").write_text(lines, encoding="utf-8")
    with subprocess.Popen(
        [sys.executable, "-c", _HOLD_LOCK, postgres_dsn],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    ) as holder:
        assert holder.stdin is not None
        assert holder.stdout is not None
        assert holder.stdout.readline() == b"locked\n"
        process = subprocess.Popen(
            [str(LIONMEM), "import", "few.jsonl", "--db", postgres_dsn],
            cwd=tmp_path,
            env=clean_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert process.stderr is not None
        deadline = time.monotonic() + 60
        while postgres_server.psql(LOCKED_OUT, database) != "1":
            assert process.poll() is None, "the import ended before it waited for the lock"
            assert time.monotonic() < deadline, "the import never waited for the lock"
            time.sleep(0.02)
        process.send_signal(signal.SIGINT)
        assert process.stderr.readline() == (
            b"lionmem import: interrupted after the last line was read; waiting for the store "
            b"to commit the import\n"
        )
        holder.stdin.close()
        assert holder.wait(timeout=30) == 0
    stdout, stderr = process.communicate(timeout=30)
    assert (process.returncode, stdout, stderr) == (0, b"imported 50 items from few.jsonl\n", b"")
    assert postgres_server.psql("SELECT count(*) FROM lionmem_items", database) == "51"


@pytest.mark.slow
def test_ctrl_c_while_standard_input_waits_stops_an_import_into_postgres_at_once(
    postgres_dsn: str, tmp_path: Path
) -> None:
    """One SIGINT while ``import -`` into PostgreSQL waits for its next line: exit 130 with the
    pipe still open, and none of the lines read is stored."""
    assert lionmem("add", "before", "--db", postgres_dsn, cwd=tmp_path).status == 0
    lines = b'{"content": "read before the interrupt"}\n' * 3
    # After a second the three lines are validated: the import waits for the fourth.
    done = interrupt_once_waiting(piped_import(postgres_dsn, tmp_path), lines, settle=1)
    assert done == (130, b"", b"lionmem import: interrupted\n")
    exported = lionmem("export", "--db", postgres_dsn, cwd=tmp_path)
    assert [json.loads(line)["content"] for line in exported.stdout.splitlines()] == ["before"]
