"""``lionmem.cli._store``: which store ``--db``/``--namespace`` name, for the command and other front ends.

A stand-in ``lionmem.stores.postgres`` module records how the PostgreSQL store is built and can
refuse to connect, so the selection is tested without a server.
"""

from __future__ import annotations

import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from lionmem import MemoryAdapterUnavailable, SQLiteMemoryStore
from lionmem.cli import main
from lionmem.cli._store import (
    DEFAULT_DB,
    StoreSelectionError,
    describe_target,
    open_store,
    select_store,
    store_target,
)
from lionmem.stores.sqlite import UnrepresentableValueError
from tests.cli.conftest import MIXED
from tests.cli.support import clean_env, lionmem, one_line_error

DSN = "postgresql://me:secret@db.example:5432/app"


class FakePostgresStore:
    """Records its arguments; ``open`` fails when the class says the server is down."""

    made: list[tuple[str, dict[str, Any]]] = []  # noqa: RUF012 - a test's shared record
    down = False
    last: FakePostgresStore | None = None

    def __init__(self, dsn: str, **options: Any) -> None:
        self.made.append((dsn, options))
        self.closed = False
        self.batches: list[list[Any]] = []
        FakePostgresStore.last = self

    async def open(self) -> None:
        if self.down:
            msg = "could not connect to db.example:5432 (Connection refused)"
            raise MemoryAdapterUnavailable(msg)

    async def close(self) -> None:
        self.closed = True

    async def count(self) -> int:
        return 7

    async def store_many(self, items: Any) -> list[Any]:
        batch = list(items)
        self.batches.append(batch)
        return [item.id for item in batch]


@pytest.fixture
def fake_postgres(monkeypatch: pytest.MonkeyPatch) -> type[FakePostgresStore]:
    module = ModuleType("lionmem.stores.postgres")
    module.PostgresMemoryStore = FakePostgresStore  # type: ignore[attr-defined]  # a stand-in module
    monkeypatch.setitem(sys.modules, "lionmem.stores.postgres", module)
    FakePostgresStore.made = []
    FakePostgresStore.down = False
    return FakePostgresStore


def test_the_target_is_db_then_the_environment_then_memory_db(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``--db`` wins over ``$LIONMEM_DB``, which wins over ``memory.db``; an empty
    ``$LIONMEM_DB`` counts as unset."""
    monkeypatch.delenv("LIONMEM_DB", raising=False)
    assert (store_target(None), store_target("x.db")) == (DEFAULT_DB, "x.db")
    monkeypatch.setenv("LIONMEM_DB", "env.db")
    assert (store_target(None), store_target("x.db")) == ("env.db", "x.db")
    monkeypatch.setenv("LIONMEM_DB", "")
    assert store_target(None) == DEFAULT_DB


@pytest.mark.parametrize(
    "args",
    [
        ["count"],
        ["add", "x"],
        ["import", "-"],
        ["export", "--out", "e.jsonl"],
        ["mcp"],
    ],
)
def test_an_empty_db_is_an_error_not_the_default(tmp_path: Path, args: list[str]) -> None:
    """``--db ''`` (an unset variable in ``--db "$X"``) is refused with one line, even with
    ``$LIONMEM_DB`` set, and no store is opened or created."""
    result = lionmem(*args, "--db", "", cwd=tmp_path, stdin="", env=clean_env(LIONMEM_DB="env.db"))
    assert one_line_error(result, f"lionmem {args[0]}: ") == (
        f"lionmem {args[0]}: --db is empty: give a SQLite file or a postgresql:// address "
        "(without --db the store is $LIONMEM_DB, else memory.db)"
    )
    assert list(tmp_path.iterdir()) == []


def test_a_path_selects_a_sqlite_store(tmp_path: Path) -> None:
    """A path (or ``:memory:``) is a SQLiteMemoryStore of that file, not opened yet."""
    store = select_store(str(tmp_path / "a.db"))
    assert (type(store), store.path, (tmp_path / "a.db").exists()) == (
        SQLiteMemoryStore,
        str(tmp_path / "a.db"),
        False,
    )
    assert type(select_store(":memory:")) is SQLiteMemoryStore


def test_postgres_addresses_select_the_postgres_store(
    fake_postgres: type[FakePostgresStore],
) -> None:
    """Both URL schemes build PostgresMemoryStore(dsn), with ``namespace=`` only when given."""
    select_store(DSN)
    select_store("postgres://db.example/app", namespace="team")
    assert fake_postgres.made == [(DSN, {}), ("postgres://db.example/app", {"namespace": "team"})]


async def test_open_store_returns_an_open_store_the_caller_closes(
    fake_postgres: type[FakePostgresStore],
) -> None:
    """``open_store`` opens the store; closing is the caller's."""
    store = await open_store(DSN)
    assert (await store.count(), store.closed) == (7, False)


async def test_an_unreachable_server_is_a_selection_error_without_the_password(
    fake_postgres: type[FakePostgresStore],
) -> None:
    """The store's own error, on one line, prefixed with the address without its password."""
    fake_postgres.down = True
    with pytest.raises(StoreSelectionError) as caught:
        await open_store(DSN)
    assert str(caught.value) == (
        "cannot open postgresql://me:***@db.example:5432/app: could not connect to "
        "db.example:5432 (Connection refused)"
    )
    assert isinstance(caught.value.__cause__, MemoryAdapterUnavailable)


async def test_a_password_in_the_store_error_is_hidden(
    fake_postgres: type[FakePostgresStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where the store's message repeats the address, the password is hidden there too."""

    async def refuse(self: FakePostgresStore) -> None:
        raise MemoryAdapterUnavailable(f"cannot reach {DSN}")

    monkeypatch.setattr(fake_postgres, "open", refuse)
    with pytest.raises(StoreSelectionError) as caught:
        await open_store(DSN)
    assert str(caught.value) == "cannot reach postgresql://me:***@db.example:5432/app"


def test_the_command_passes_the_namespace_and_reports_an_unreachable_server(
    fake_postgres: type[FakePostgresStore], capsys: pytest.CaptureFixture[str]
) -> None:
    """``lionmem count --db URL --namespace N``: the count; a server that is down: one line, exit 2."""
    assert main(["count", "--db", DSN, "--namespace", "team"]) == 0
    assert capsys.readouterr().out == "7\n"
    assert fake_postgres.made == [(DSN, {"namespace": "team"})]
    fake_postgres.down = True
    assert main(["count", "--db", DSN]) == 2
    assert capsys.readouterr().err == (
        "lionmem count: cannot open postgresql://me:***@db.example:5432/app: could not connect "
        "to db.example:5432 (Connection refused)\n"
    )


def test_a_store_without_an_extra_operation_is_named(
    fake_postgres: type[FakePostgresStore], capsys: pytest.CaptureFixture[str]
) -> None:
    """A command needing an operation the store lacks (``export`` needs ``items``) says which."""
    assert main(["export", "--db", DSN]) == 2
    assert capsys.readouterr().err == (
        "lionmem export: FakePostgresStore has no items(), which this command needs\n"
    )


@pytest.mark.parametrize(
    ("target", "shown"),
    [
        (DSN, "postgresql://me:***@db.example:5432/app"),
        ("postgresql://db.example/app", "postgresql://db.example/app"),
        ("postgres://u:p%40ss@h/d", "postgres://u:***@h/d"),
        ("postgresql://u:se@cret@h:5432/d", "postgresql://u:***@h:5432/d"),
        ("postgresql://u@h/d?password=hunter2", "postgresql://u@h/d?password=***"),
        (
            "postgresql://u:a@h/d?sslmode=require&PASSWORD=b&application_name=x",
            "postgresql://u:***@h/d?sslmode=require&PASSWORD=***&application_name=x",
        ),
        ("postgresql://h:5432/d?user=u", "postgresql://h:5432/d?user=u"),
        ("notes.db", "notes.db"),
    ],
)
def test_messages_never_show_a_password(target: str, shown: str) -> None:
    """``describe_target`` hides the password of an address and leaves paths alone."""
    assert describe_target(target) == shown


def test_a_missing_postgres_extra_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    """The store module failing on a missing driver becomes the extra to install."""

    def broken(name: str, *args: Any, **kwargs: Any) -> ModuleType:
        error = ModuleNotFoundError("No module named 'asyncpg'")
        error.name = "asyncpg"
        raise error

    monkeypatch.delitem(sys.modules, "lionmem.stores.postgres", raising=False)
    monkeypatch.setattr("lionmem.cli._store.importlib.import_module", broken)
    with pytest.raises(StoreSelectionError) as caught:
        select_store(DSN)
    assert str(caught.value) == (
        "PostgreSQL needs the 'postgres' extra: pip install 'lionmem[postgres]' "
        "(No module named 'asyncpg')"
    )


def test_import_into_a_store_without_store_stream_is_one_store_many_call(
    fake_postgres: type[FakePostgresStore], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Such a store gets every valid item in one ``store_many``, after the whole file is read."""
    assert main(["import", str(MIXED), "--db", DSN, "--skip-invalid"]) == 1
    captured = capsys.readouterr()
    assert captured.out == f"imported 6 items from {MIXED} (4 invalid lines skipped)\n"
    assert fake_postgres.last is not None
    (batch,) = fake_postgres.last.batches
    assert [item.model_dump_json() for item in batch] == [
        line for line in MIXED.read_text("utf-8").splitlines() if line.startswith('{"id":"')
    ]
    assert main(["import", str(MIXED), "--db", DSN]) == 1
    assert fake_postgres.last.batches == []


def test_a_value_store_many_refuses_aborts_the_import(
    fake_postgres: type[FakePostgresStore],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Such a store's refusal of a value is the import's bad input: named, nothing imported."""

    async def refuse(self: FakePostgresStore, items: Any) -> list[Any]:
        raise UnrepresentableValueError("content", "str", "it holds a NUL, which text cannot")

    monkeypatch.setattr(fake_postgres, "store_many", refuse)
    assert main(["import", str(MIXED), "--db", DSN, "--skip-invalid"]) == 1
    assert capsys.readouterr().err.splitlines()[-1] == (
        "lionmem import: MemoryItem.content: a value of type str cannot be stored exactly: "
        "it holds a NUL, which text cannot; nothing was imported"
    )


URI_REFUSED = (
    "{given} file:u.db reads as a SQLite URI, which lionmem does not take; a file of that name "
    "is ./file:u.db"
)


@pytest.mark.parametrize(
    ("args", "env"),
    [
        (["add", "hi", "--db", "file:u.db"], {}),
        (["import", "x.jsonl", "--db", "file:u.db"], {}),
        (["count", "--db", "file:u.db"], {}),
        (["add", "hi"], {"LIONMEM_DB": "file:u.db"}),
    ],
)
def test_a_db_that_reads_as_a_sqlite_uri_is_one_line(
    tmp_path: Path, args: list[str], env: dict[str, str]
) -> None:
    """A path starting ``file:`` (SQLite would read it as a URI) is refused, exit 2, with the
    name that means the file, and where the name came from; an existing file of that name is
    left as it was."""
    (tmp_path / "x.jsonl").write_text('{"content": "x"}\n', encoding="utf-8")
    assert lionmem("add", "kept", "--db", "./file:u.db", cwd=tmp_path).status == 0
    before = (tmp_path / "file:u.db").read_bytes()
    result = lionmem(*args, cwd=tmp_path, stdin="", env=clean_env(**env))
    given = "$LIONMEM_DB" if env else "--db"
    assert one_line_error(result, "") == f"lionmem {args[0]}: {URI_REFUSED.format(given=given)}"
    assert (tmp_path / "file:u.db").read_bytes() == before


def test_a_sqlite_uri_with_slashes_is_refused_as_a_uri(tmp_path: Path) -> None:
    """``file:///path`` reads as a SQLite URI too, not as an address of another kind."""
    result = lionmem("count", "--db", "file:///tmp/u.db", cwd=tmp_path)
    assert one_line_error(result, "") == (
        "lionmem count: --db file:///tmp/u.db reads as a SQLite URI, which lionmem does not "
        "take; a file of that name is ./file:///tmp/u.db"
    )


def test_a_file_named_like_a_uri_is_reached_through_its_relative_path(tmp_path: Path) -> None:
    """``./file:u.db`` names the file ``file:u.db`` in the working directory."""
    added = lionmem("add", "hi", "--db", "./file:u.db", cwd=tmp_path)
    assert added.status == 0, added
    counted = lionmem("count", "--db", "./file:u.db", cwd=tmp_path)
    assert (counted.status, counted.stdout) == (0, "1\n")
    assert sorted(path.name for path in tmp_path.iterdir()) == ["file:u.db"]


@pytest.mark.parametrize("create", [True, False])
def test_a_path_no_file_can_have_is_a_selection_error(create: bool) -> None:
    """The store's refusal of a path (a NUL in it) is a ``StoreSelectionError``, the one line
    a front end shows, not the constructor's ValueError."""
    with pytest.raises(StoreSelectionError) as caught:
        select_store("a\x00b.db", create=create)
    assert (
        str(caught.value) == "path 'a\\x00b.db' holds a NUL character, which no file name can hold"
    )
