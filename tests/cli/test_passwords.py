"""No message shows the password of a PostgreSQL address, however the address writes it."""

from __future__ import annotations

from pathlib import Path

import pytest

from lionmem import MemoryAdapterUnavailable
from lionmem.cli._store import StoreSelectionError, describe_target, open_store
from tests.cli.support import lionmem, one_line_error
from tests.cli.test_store_selection import FakePostgresStore, fake_postgres

__all__ = ["fake_postgres"]  # the fixture, used here by name


@pytest.mark.parametrize(
    ("target", "shown"),
    [
        ("postgresql://me:pa/ss@127.0.0.1:9/db", "postgresql://me:***@127.0.0.1:9/db"),
        ("postgresql://me:a:b/c@d@h:5432/db", "postgresql://me:***@h:5432/db"),
        ("postgresql://me:pa?ss@127.0.0.1:9/db", "postgresql://me:***@127.0.0.1:9/db"),
        ("postgresql://me:x?password=y@h/db", "postgresql://me:***"),  # two readings: both hidden
        ("postgresql://u@h:5432/d?password=long@secretpart", "postgresql://u@h:***"),
        ("postgresql://u@h/d?password=ab:cd@ef", "postgresql://u@h/d?password=***"),
        ("postgresql://me:s@h:5432/db?x=a@b", "postgresql://me:***@b"),  # hides too much, safely
        ("postgresql://u@h/d?pass%77ord=hunter2", "postgresql://u@h/d?pass%77ord=***"),
        ("postgresql://u@h/d?Pass%57ORD=x&a=b", "postgresql://u@h/d?Pass%57ORD=***&a=b"),
        ("postgresql://u@h/d?password=hunter2#top", "postgresql://u@h/d?password=***#top"),
        ("postgresql://u@h:5432/d?passwords=kept", "postgresql://u@h:5432/d?passwords=kept"),
        ("postgresql://u@h/d?sslmode=require&sslpassword=KEY", "postgresql://u@h/d?sslmode=require&sslpassword=***"),
        ("postgresql://u@h/d?SSLPass%77ord=KEY", "postgresql://u@h/d?SSLPass%77ord=***"),
        ("POSTGRESQL://me:secret@h/db", "POSTGRESQL://me:***@h/db"),
        ("postgresql+asyncpg://me:secret@h/db", "postgresql+asyncpg://me:***@h/db"),
        (" postgresql://me:secret@h/db", " postgresql://me:***@h/db"),
        ("mysql://me:secret@h/db?password=x", "mysql://me:***@h/db?password=***"),
    ],
)  # fmt: skip
def test_the_password_is_hidden_wherever_the_address_has_it(target: str, shown: str) -> None:
    """Whatever a driver could read as the password is hidden, in any address: from the first
    ``:`` after the scheme to the last ``@`` (before the query, and of all), and any parameter
    whose decoded name ends in ``password``, in whatever case, in the query after the first
    ``?`` or that ``@``."""
    assert describe_target(target) == shown


async def test_the_password_is_hidden_in_the_drivers_message(
    fake_postgres: type[FakePostgresStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A driver's message that quotes the password or a piece of it, or repeats a long one,
    shows neither."""
    target = "postgresql://me:pa/ss@db.example:5432/app?password=hunter2"

    async def refuse(self: FakePostgresStore) -> None:
        msg = "invalid literal for int() with base 10: 'pa'; for hunter2 and 'ss' ('pa/ss')"
        raise MemoryAdapterUnavailable(msg)

    monkeypatch.setattr(fake_postgres, "open", refuse)
    with pytest.raises(StoreSelectionError) as caught:
        await open_store(target)
    assert str(caught.value) == (
        "cannot open postgresql://me:***@db.example:5432/app?password=***: "
        "invalid literal for int() with base 10: '***'; for *** and '***' ('***')"
    )


@pytest.mark.parametrize(
    ("password", "message"),
    [
        ("pass", 'password authentication failed for user "alice"'),
        ("fail", 'password authentication failed for user "alice"'),
        ("user", 'password authentication failed for user "alice"'),
        ("alice1", "no pg_hba.conf entry for alice1x"),
    ],
)
async def test_words_of_the_message_are_not_taken_for_the_password(
    fake_postgres: type[FakePostgresStore],
    monkeypatch: pytest.MonkeyPatch,
    password: str,
    message: str,
) -> None:
    """Only the password quoted, or repeated whole and long enough not to be a word of the
    message, is hidden: a message is not garbled into one that spells the password out."""

    async def refuse(self: FakePostgresStore) -> None:
        raise MemoryAdapterUnavailable(message)

    monkeypatch.setattr(fake_postgres, "open", refuse)
    with pytest.raises(StoreSelectionError) as caught:
        await open_store(f"postgresql://alice:{password}@db.example/app")
    assert str(caught.value) == f"cannot open postgresql://alice:***@db.example/app: {message}"


@pytest.mark.parametrize(
    ("dsn", "shown"),
    [
        ("postgresql://me:pa/ss@127.0.0.1:9/db", "postgresql://me:***@127.0.0.1:9/db"),
        ("postgresql://me@127.0.0.1:9/db?pass%77ord=hunter2", "postgresql://me@127.0.0.1:9/db?pass%77ord=***"),
        ("postgresql://me:hunter?2secretpart@127.0.0.1:9/db", "postgresql://me:***@127.0.0.1:9/db"),
        ("postgresql://me@127.0.0.1:9/db?password=hunter2@secretpart", "postgresql://me@127.0.0.1:***"),
    ],
)  # fmt: skip
def test_the_command_shows_no_piece_of_the_password(tmp_path: Path, dsn: str, shown: str) -> None:
    """``lionmem count`` on an address whose password the driver parses wrongly (an unencoded
    ``/``) or that names its parameter in percent-encoding: one line, no piece of it."""
    line = one_line_error(lionmem("count", "--db", dsn, cwd=tmp_path), "lionmem count: ")
    assert line.startswith(f"lionmem count: cannot open {shown}: ")
    for secret in ("'pa'", "pa/ss", "hunter2", "2secretpart", "secretpart"):
        assert secret not in line


@pytest.mark.parametrize(
    ("dsn", "shown"),
    [
        ("postgresql+asyncpg://app:TopSecret9@db.internal/memory", "postgresql+asyncpg://app:***@db.internal/memory"),
        (" postgresql://app:TopSecret9@db.internal/memory", "postgresql://app:***@db.internal/memory"),
        ("mysql://app:TopSecret9@db.internal/memory", "mysql://app:***@db.internal/memory"),
    ],
)  # fmt: skip
def test_an_address_lionmem_does_not_take_is_refused_without_its_password(
    tmp_path: Path, dsn: str, shown: str
) -> None:
    """An address with another scheme, or with anything before ``postgresql://``, is not taken
    for a SQLite file name: it is refused, naming it without its password, and no file is made."""
    for command in ("count", "add"):
        result = lionmem(command, *(["x"] if command == "add" else []), "--db", dsn, cwd=tmp_path)
        assert (result.status, result.stdout) == (2, "")
        assert result.stderr == (
            f"lionmem {command}: --db {shown} reads as an address lionmem does not take: give a "
            "postgresql:// (or postgres://) address, nothing before it, or a SQLite file path\n"
        )
    assert list(tmp_path.iterdir()) == []


def test_the_scheme_is_read_in_any_case(tmp_path: Path) -> None:
    """``POSTGRESQL://`` is a PostgreSQL address, as the driver reads it, not a SQLite path."""
    line = one_line_error(
        lionmem("count", "--db", "POSTGRESQL://me:TopSecret9@127.0.0.1:9/db", cwd=tmp_path),
        "lionmem count: ",
    )
    assert line.startswith("lionmem count: cannot open POSTGRESQL://me:***@127.0.0.1:9/db: ")
    assert "TopSecret9" not in line
