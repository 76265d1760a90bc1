"""The command on a PostgreSQL database: ``--db postgresql://...`` with namespaces, and transfers."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.conftest import SAMPLE
from tests.cli.support import lionmem


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
