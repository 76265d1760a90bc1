"""``add``, ``get``, ``search``, ``count`` and ``delete`` through the console script, piped and on a pty."""

from __future__ import annotations

import asyncio
import json
import re
import unicodedata
from pathlib import Path
from typing import Any

import pytest

from lionmem import InMemoryStore, MemoryItem, MemoryQuery
from tests.cli.conftest import SAMPLE
from tests.cli.support import clean_env, lionmem, on_terminal, one_line_error

UUID_LINE = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}\n$")


def _items(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stdout.splitlines()]


def _sample() -> list[MemoryItem]:
    return [MemoryItem.model_validate_json(line) for line in SAMPLE.read_text("utf-8").splitlines()]


def _reference(query: MemoryQuery) -> list[str]:
    async def run() -> list[str]:
        store = InMemoryStore()
        for item in _sample():
            await store.store(item)
        return [str(item.id) for item in await store.search(query)]

    return asyncio.run(run())


def test_add_prints_the_new_id_and_stores_every_field(tmp_path: Path) -> None:
    """``add`` prints one UUID; ``get --json`` gives back the content, tags and metadata given."""
    added = lionmem(
        "add", "Paris is the capital of France", "--tag", "geo", "--tag", "fact",
        "--meta", "stars=4", "--meta", 'source="atlas"', "--meta", "seen=[1, null]",
        cwd=tmp_path,
    )  # fmt: skip
    assert (added.status, added.stderr) == (0, "")
    assert UUID_LINE.match(added.stdout)
    got = lionmem("get", added.stdout.strip(), "--json", cwd=tmp_path)
    (item,) = _items(got.stdout)
    assert (item["id"], item["content"], item["tags"], item["metadata"]) == (
        added.stdout.strip(),
        "Paris is the capital of France",
        ["geo", "fact"],
        {"stars": 4, "source": "atlas", "seen": [1, None]},
    )


def test_add_creates_memory_db_in_the_working_directory(tmp_path: Path) -> None:
    """Without ``--db`` and ``LIONMEM_DB`` the store is ./memory.db."""
    assert lionmem("add", "x", cwd=tmp_path).status == 0
    assert (tmp_path / "memory.db").is_file()


def test_lionmem_db_names_the_default_store(tmp_path: Path) -> None:
    """``LIONMEM_DB`` is the store when ``--db`` is not given."""
    env = clean_env(LIONMEM_DB=str(tmp_path / "env.db"))
    assert lionmem("add", "x", cwd=tmp_path, env=env).status == 0
    assert (lionmem("count", cwd=tmp_path, env=env).stdout, (tmp_path / "memory.db").exists()) == (
        "1\n",
        False,
    )


def test_add_json_stores_a_json_value_as_content(tmp_path: Path) -> None:
    """``add --json`` parses CONTENT: an object stays an object, a number a number."""
    first = lionmem("add", "--json", '{"city": "Lyon", "n": [1, 2.5]}', cwd=tmp_path)
    second = lionmem("add", "--json", "42", cwd=tmp_path)
    listed = _items(lionmem("search", cwd=tmp_path).stdout)
    assert [item["content"] for item in listed] == [{"city": "Lyon", "n": [1, 2.5]}, 42]
    assert [item["id"] for item in listed] == [first.stdout.strip(), second.stdout.strip()]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--meta", "stars=four"],
            "lionmem add: --meta 'stars=four': the value after '=' is not JSON (Expecting value); "
            "write text in JSON quotes, for example --meta 'stars=\"four\"'",
        ),
        (
            ["--meta", "stars"],
            "lionmem add: --meta 'stars': expected KEY=JSON, for example --meta stars=4",
        ),
        (
            ["--meta", "=4"],
            "lionmem add: --meta '=4': expected KEY=JSON, for example --meta stars=4",
        ),
        (["--json"], "lionmem add: --json: CONTENT is not JSON (Expecting value)"),
        (
            ["--meta", "a=1", "--meta", "b=2", "--meta", "a=2"],
            "lionmem add: --meta key 'a' is given twice; give each key once",
        ),
        (
            ["--meta", "a=1", "--meta", "a=1"],
            "lionmem add: --meta key 'a' is given twice; give each key once",
        ),
    ],
)
def test_add_with_bad_arguments_exits_2_and_stores_nothing(
    tmp_path: Path, args: list[str], message: str
) -> None:
    """A malformed ``KEY=JSON`` or JSON content is one line on stderr, exit 2, no database made."""
    result = lionmem("add", "text", *args, cwd=tmp_path)
    assert one_line_error(result, "lionmem add: ") == message
    assert not (tmp_path / "memory.db").exists()


def test_get_missing_id_exits_1(sample_db: Path) -> None:
    """``get`` of an id no item has says so on stderr and exits 1."""
    missing = "12345678-1234-4678-9234-567812345678"
    result = lionmem("get", missing, "--db", sample_db, cwd=sample_db.parent)
    assert (result.status, result.stdout, result.stderr) == (
        1,
        "",
        f"lionmem get: no item with id {missing}\n",
    )


def test_get_of_a_non_uuid_exits_2(sample_db: Path) -> None:
    """``get`` of text that is not a UUID is a usage error."""
    result = lionmem("get", "nope", "--db", sample_db, cwd=sample_db.parent)
    assert one_line_error(result, "lionmem get: ") == (
        "lionmem get: 'nope' is not an item id (a UUID such as "
        "12345678-1234-5678-1234-567812345678)"
    )


def test_get_piped_prints_the_stored_json_line(sample_db: Path) -> None:
    """Piped, ``get`` prints the item's JSON exactly as the sample file holds it."""
    line = SAMPLE.read_text("utf-8").splitlines()[1234]
    item_id = json.loads(line)["id"]
    result = lionmem("get", item_id, "--db", sample_db, cwd=sample_db.parent)
    assert (result.status, result.stdout, result.stderr) == (0, line + "\n", "")


def test_get_on_a_terminal_shows_every_field_in_full(sample_db: Path) -> None:
    """On a terminal ``get`` lists id, created_at, tags, metadata and the whole content."""
    long = next(item for item in _sample() if str(item.content).startswith("Long note"))
    result = on_terminal("get", str(long.id), "--db", sample_db, cwd=sample_db.parent, columns=120)
    lines = result.stdout.splitlines()
    rows = {line.split()[0]: line.split(None, 1)[1].strip() for line in lines[:5]}
    # The content wraps at spaces onto the lines after its row.
    rows["content"] = " ".join([rows["content"], *(line.strip() for line in lines[5:])])
    assert result.status == 0
    assert rows == {
        "id": str(long.id),
        "created_at": f"{long.created_at!r} ({_iso(long.created_at)})",
        "tags": json.dumps(long.tags),
        "metadata": json.dumps(long.metadata, ensure_ascii=False),
        "content": long.content,
    }
    assert len(lines) > 6
    assert max(len(line.rstrip()) for line in lines) <= 120


def _iso(created_at: float) -> str:
    from datetime import UTC, datetime

    return datetime.fromtimestamp(created_at, UTC).isoformat()


SEARCHES: list[tuple[list[str], MemoryQuery]] = [
    ([], MemoryQuery()),
    (["--text", "STRAßE", "--limit", "50"], MemoryQuery(text="STRAßE", limit=50)),
    (["--text", "strasse"], MemoryQuery(text="strasse")),
    (["--tag", "music", "--tag", "geo", "--limit", "7"], MemoryQuery(tags=["music", "geo"], limit=7)),
    (
        ["--filter", 'lang="tr"', "--filter", "stars=5", "--limit", "1000"],
        MemoryQuery(filters={"lang": "tr", "stars": 5}, limit=1000),
    ),
    (["--filter", "stars=5.0", "--limit", "30"], MemoryQuery(filters={"stars": 5.0}, limit=30)),
    (["--filter", "reviewed_by=null", "--limit", "3000"], MemoryQuery(filters={"reviewed_by": None}, limit=3000)),
    (["--text", "kyoto", "--tag", "food", "--limit", "5"], MemoryQuery(text="kyoto", tags=["food"], limit=5)),
    (["--limit", "0"], MemoryQuery(limit=0)),
]  # fmt: skip


@pytest.mark.parametrize(
    ("args", "query"), SEARCHES, ids=lambda v: " ".join(v) if isinstance(v, list) else ""
)
def test_search_piped_gives_the_reference_results_as_json_lines(
    sample_db: Path, args: list[str], query: MemoryQuery
) -> None:
    """Piped, ``search`` prints the items InMemoryStore finds for the same query, in its order."""
    result = lionmem("search", *args, "--db", sample_db, cwd=sample_db.parent)
    assert (result.status, result.stderr) == (0, "")
    assert [item["id"] for item in _items(result.stdout)] == _reference(query)


def test_search_lines_are_the_items_json(sample_db: Path) -> None:
    """Each line ``search`` prints is the item's own JSON (as in the sample file), in full."""
    result = lionmem(
        "search", "--text", "long note", "--limit", "3", "--db", sample_db, cwd=sample_db.parent
    )
    by_id = {json.loads(line)["id"]: line for line in SAMPLE.read_text("utf-8").splitlines()}
    lines = result.stdout.splitlines()
    assert lines == [by_id[json.loads(line)["id"]] for line in lines]
    assert len(lines) == 3


def test_search_on_a_terminal_is_a_table_with_shortened_content(sample_db: Path) -> None:
    """On a terminal: a header, one row per item with its whole id, content cut with an ellipsis."""
    result = on_terminal(
        "search", "--text", "long note", "--limit", "4", "--db", sample_db,
        cwd=sample_db.parent, columns=100,
    )  # fmt: skip
    lines = result.stdout.splitlines()
    expected = _reference(MemoryQuery(text="long note", limit=4))
    assert result.status == 0
    assert lines[0].split() == ["id", "created", "tags", "content"]
    assert [line.split()[0] for line in lines[1:5]] == expected
    assert lines[5:] == ["4 items"]
    assert all(line.rstrip().endswith("…") and len(line.rstrip()) <= 100 for line in lines[1:5])


def test_search_json_on_a_terminal_prints_json_lines(sample_db: Path) -> None:
    """``--json`` gives JSON Lines even on a terminal."""
    result = on_terminal(
        "search", "--tag", "idea", "--limit", "3", "--json", "--db", sample_db, cwd=sample_db.parent
    )
    assert [item["id"] for item in _items(result.stdout)] == _reference(
        MemoryQuery(tags=["idea"], limit=3)
    )


@pytest.mark.parametrize(
    ("columns", "header"),
    [(80, ["id", "tags", "content"]), (60, ["id", "content"]), (50, ["id", "content"])],
)
def test_search_on_a_narrow_terminal_keeps_whole_ids(
    sample_db: Path, columns: int, header: list[str]
) -> None:
    """Narrower, the date and then the tags give way; ids stay whole, no line is too wide."""
    result = on_terminal(
        "search", "--limit", "5", "--db", sample_db, cwd=sample_db.parent, columns=columns
    )
    lines = result.stdout.splitlines()
    assert lines[0].split() == header
    assert [line.split()[0] for line in lines[1:6]] == _reference(MemoryQuery(limit=5))
    assert max(len(line.rstrip()) for line in lines) <= columns


def test_search_and_get_with_columns_0_use_the_terminals_width(sample_db: Path) -> None:
    """``COLUMNS=0`` (which rich takes for a terminal no column wide, printing nothing) is
    ignored: the table and the fields come out as on the same terminal without it."""
    env = clean_env(COLUMNS="0")
    args = ("search", "--limit", "5", "--db", str(sample_db))
    found = on_terminal(*args, cwd=sample_db.parent, env=env)
    assert found == on_terminal(*args, cwd=sample_db.parent)
    assert [line.split()[0] for line in found.stdout.splitlines()[1:6]] == _reference(
        MemoryQuery(limit=5)
    )
    first = _reference(MemoryQuery(limit=1))[0]
    shown = on_terminal("get", first, "--db", sample_db, cwd=sample_db.parent, env=env)
    assert (shown.status, shown.stdout.split()[:2]) == (0, ["id", first])


def test_search_on_a_terminal_narrower_than_an_id_keeps_whole_ids(sample_db: Path) -> None:
    """Below an id's width the lines are an id and its gap wide (the terminal wraps them)."""
    result = on_terminal(
        "search", "--limit", "5", "--db", sample_db, cwd=sample_db.parent, columns=10
    )
    lines = result.stdout.splitlines()
    assert [line.split()[0] for line in lines[1:6]] == _reference(MemoryQuery(limit=5))
    assert max(len(line.rstrip()) for line in lines) <= 36 + 2 + 1


def test_search_with_no_result_on_a_terminal_says_0_items(sample_db: Path) -> None:
    """An empty result on a terminal is the line ``0 items``; piped it is no output at all."""
    args = ("search", "--text", "no such text anywhere", "--db", str(sample_db))
    assert on_terminal(*args, cwd=sample_db.parent).stdout == "0 items\n"
    assert lionmem(*args, cwd=sample_db.parent).stdout == ""


def test_search_with_a_negative_limit_exits_2(sample_db: Path) -> None:
    """``--limit -1`` is refused before the store is asked."""
    result = lionmem("search", "--limit", "-1", "--db", sample_db, cwd=sample_db.parent)
    assert (
        one_line_error(result, "lionmem search: ")
        == "lionmem search: --limit must be 0 or more, got -1"
    )


def test_search_with_a_bad_filter_exits_2(sample_db: Path) -> None:
    """``--filter`` needs ``KEY=JSON`` too."""
    result = lionmem("search", "--filter", "lang=tr", "--db", sample_db, cwd=sample_db.parent)
    assert one_line_error(
        result, "lionmem search: --filter 'lang=tr': the value after '=' is not JSON"
    )


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ("NaN", "NaN is not a JSON number"),
        ("-Infinity", "-Infinity is not a JSON number"),
        ("[1, Infinity]", "Infinity is not a JSON number"),
        ("1e400", "1e400 is too large a number for a float"),
    ],
)
def test_a_value_that_is_no_json_number_is_refused(
    sample_db: Path, value: str, reason: str
) -> None:
    """NaN, infinities and numbers too large for a float, which Python's parser reads and JSON
    has not, are refused as ``import`` refuses them: a filter on them would match nothing."""
    result = lionmem("search", "--filter", f"n={value}", "--db", sample_db, cwd=sample_db.parent)
    assert one_line_error(result, "lionmem search: ").startswith(
        f"lionmem search: --filter {'n=' + value!r}: the value after '=' is not "
        f"{'valid JSON' if value.startswith('[') else 'JSON'} ({reason}"
    )
    added = lionmem("add", "--json", "--db", sample_db, "--", value, cwd=sample_db.parent)
    assert one_line_error(added, "lionmem add: ") == (
        f"lionmem add: --json: CONTENT is not JSON ({reason})"
    )


def test_an_integer_import_cannot_read_is_refused_whatever_python_reads(tmp_path: Path) -> None:
    """With Python's limit on integer digits lifted, an integer of more than the 4,300 digits
    import reads is still refused: stored, it could never be exported and imported again."""
    digits = "9" * 4301
    env = clean_env(PYTHONINTMAXSTRDIGITS="0")
    added = lionmem("add", "--json", digits, cwd=tmp_path, env=env)
    found = lionmem("search", "--filter", f"n={digits}", cwd=tmp_path, env=env)
    most = "holds an integer of more than 4300 digits, more than import reads; write it as text"
    assert (one_line_error(added, "lionmem add: "), one_line_error(found, "lionmem search: ")) == (
        f"lionmem add: --json: CONTENT {most}, in JSON quotes",
        f"lionmem search: --filter n=...: the value after '=' {most}, in JSON quotes",
    )
    assert lionmem("add", "--json", "9" * 4300, cwd=tmp_path, env=env).status == 0


@pytest.mark.parametrize("values", [("3", "4"), ("3", "3")])
def test_search_with_a_filter_key_given_twice_exits_2(
    sample_db: Path, values: tuple[str, str]
) -> None:
    """A ``--filter`` key given twice is refused, naming the key, not one condition dropped."""
    first, second = (f"stars={value}" for value in values)
    result = lionmem(
        "search", "--filter", first, "--filter", second, "--db", sample_db, cwd=sample_db.parent
    )
    assert one_line_error(result, "") == (
        "lionmem search: --filter key 'stars' is given twice; give each key once"
    )


def test_count_prints_the_number_piped_and_on_a_terminal(sample_db: Path) -> None:
    """``count`` prints the number of items, the same way on a terminal and in a pipe."""
    assert lionmem("count", "--db", sample_db, cwd=sample_db.parent).stdout == "3000\n"
    assert on_terminal("count", "--db", sample_db, cwd=sample_db.parent).stdout == "3000\n"


def test_delete_removes_the_item_and_a_second_delete_exits_1(sample_copy: Path) -> None:
    """``delete`` prints what it deleted; deleting the same id again exits 1; others stay."""
    item_id = json.loads(SAMPLE.read_text("utf-8").splitlines()[0])["id"]
    first = lionmem("delete", item_id, "--db", sample_copy, cwd=sample_copy.parent)
    second = lionmem("delete", item_id, "--db", sample_copy, cwd=sample_copy.parent)
    assert (first.status, first.stdout) == (0, f"deleted {item_id}\n")
    assert (second.status, second.stdout, second.stderr) == (
        1,
        "",
        f"lionmem delete: no item with id {item_id}\n",
    )
    assert lionmem("count", "--db", sample_copy, cwd=sample_copy.parent).stdout == "2999\n"
    assert lionmem("get", item_id, "--db", sample_copy, cwd=sample_copy.parent).status == 1


def test_delete_on_a_terminal_prints_the_same_line(sample_copy: Path) -> None:
    """On a terminal ``delete`` prints ``deleted ID`` too."""
    item_id = json.loads(SAMPLE.read_text("utf-8").splitlines()[5])["id"]
    result = on_terminal("delete", item_id, "--db", sample_copy, cwd=sample_copy.parent)
    assert (result.status, result.stdout) == (0, f"deleted {item_id}\n")


@pytest.mark.parametrize("command", ["get", "search", "count", "delete", "export"])
def test_reading_commands_do_not_create_a_missing_database(tmp_path: Path, command: str) -> None:
    """A command that only reads refuses a --db file that does not exist, and creates none."""
    args = [command] + (
        ["12345678-1234-4678-9234-567812345678"] if command in ("get", "delete") else []
    )
    result = lionmem(*args, "--db", "typo.db", cwd=tmp_path)
    assert one_line_error(result, f"lionmem {command}: ") == (
        f"lionmem {command}: no lionmem database at typo.db (lionmem add or lionmem import creates one)"
    )
    assert list(tmp_path.iterdir()) == []


def test_json_lines_are_utf8_whatever_the_locale(sample_db: Path) -> None:
    """With an ASCII-only stdout encoding, ``get`` and ``search`` still print the UTF-8 lines."""
    env = clean_env(PYTHONIOENCODING="ascii")
    line = next(line for line in SAMPLE.read_text("utf-8").splitlines() if "İstanbul" in line)
    item_id = json.loads(line)["id"]
    got = lionmem("get", item_id, "--db", sample_db, cwd=sample_db.parent, env=env)
    found = lionmem(
        "search",
        "--text",
        "i\u0307stanbul",
        "--limit",
        "1",
        "--db",
        sample_db,
        cwd=sample_db.parent,
        env=env,
    )
    assert (got.status, got.stdout) == (0, line + "\n")
    assert "İstanbul" in found.stdout


def test_a_creation_time_outside_the_calendar_on_a_terminal(tmp_path: Path) -> None:
    """A ``created_at`` no date can show (milliseconds given as seconds) is shown as its number
    in the table and in ``get``, instead of stopping the command."""
    item_id = "12345678-1234-4678-9234-567812345678"
    line = json.dumps({"id": item_id, "created_at": 1767253114000, "content": "from a browser"})
    assert lionmem("import", "-", "--db", "ms.db", cwd=tmp_path, stdin=line + "\n").status == 0
    table = on_terminal("search", "--db", "ms.db", cwd=tmp_path, columns=100)
    shown = on_terminal("get", item_id, "--db", "ms.db", cwd=tmp_path, columns=100)
    assert table.status == 0
    assert table.stdout.splitlines()[1].split() == [item_id, "1.767e+12", "from", "a", "browser"]
    assert shown.status == 0
    assert shown.stdout.splitlines()[1].strip().split(None, 1) == [
        "created_at",
        "1767253114000.0 (not a date between the years 1 and 9999)",
    ]


def test_get_on_a_terminal_shows_rich_markup_in_stored_text_literally(tmp_path: Path) -> None:
    """Square brackets and colons in stored text are shown as they are, not read as rich markup
    (an unmatched closing tag would otherwise stop ``get``)."""
    item_id = "12345678-1234-4678-9234-567812345678"
    content = "[red]hi[/red] :smile: [/]"
    line = json.dumps({"id": item_id, "content": content, "tags": ["[bold]t"]})
    assert lionmem("import", "-", "--db", "mk.db", cwd=tmp_path, stdin=line + "\n").status == 0
    shown = on_terminal("get", item_id, "--db", "mk.db", cwd=tmp_path, columns=100)
    assert shown.status == 0, shown
    rows = {row.split()[0]: row.split(None, 1)[1].strip() for row in shown.stdout.splitlines()}
    assert rows["content"] == content
    assert rows["tags"] == '["[bold]t"]'


_HOSTILE = "\x1b]0;PWNED\x07\x1b[2J\n\u202eab\x85\x7f\x9b"
# What a terminal acts on: C0 and C1 controls, DEL, bidirectional controls. Line ends are
# allowed through, and rich's own colour sequences are removed before looking.
_ACTED_ON = re.compile(
    "[\x00-\x09\x0b\x0c\x0e-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]"
)
_RICH_STYLE = re.compile(r"\x1b\[[0-9;]*m")


def _hostile_db(tmp_path: Path) -> str:
    item_id = "12345678-1234-4678-9234-567812345678"
    line = json.dumps(
        {"id": item_id, "content": _HOSTILE, "tags": ["\x1b[5mx"], "metadata": {"k": "\u202e"}}
    )
    assert lionmem("import", "-", "--db", "h.db", cwd=tmp_path, stdin=line + "\n").status == 0
    return item_id


def test_search_table_escapes_control_characters_in_stored_text(tmp_path: Path) -> None:
    """Control and bidirectional characters in stored content and tags reach the terminal as
    visible escapes (``\\x1b``, ``\\u202e``), never as themselves."""
    item_id = _hostile_db(tmp_path)
    table = on_terminal("search", "--db", "h.db", cwd=tmp_path, columns=160, raw=True)
    assert table.status == 0, table
    shown = _RICH_STYLE.sub("", table.stdout)
    assert _ACTED_ON.findall(shown) == []
    row = shown.split("\r\n")[1].split()
    assert re.fullmatch(r"\d{4}-\d\d-\d\d", row[1]), row
    assert row == [
        item_id,
        row[1],
        r"\x1b[5mx",
        r"\x1b]0;PWNED\x07\x1b[2J",
        r"\u202eab\x85\x7f\x9b",
    ]


def test_search_table_escapes_controls_python_counts_as_white_space(tmp_path: Path) -> None:
    """Information separators, NEL, vertical tab, form feed and the line and paragraph
    separators are shown as escapes in the table, never taken for spaces (so a tag ``ok\x1f``
    does not look like ``ok``); spaces, tabs and line ends become one space."""
    item_id = "12345678-1234-4678-9234-567812345678"
    content = "pay\x1c\x1d\x1e\x1fto\u2028at\u2029x\x85y\x0bz\x0c  end\t\r\nnow "
    line = json.dumps({"id": item_id, "content": content, "tags": ["ok\x1f", "ok"]})
    assert lionmem("import", "-", "--db", "s.db", cwd=tmp_path, stdin=line + "\n").status == 0
    table = on_terminal("search", "--db", "s.db", cwd=tmp_path, columns=160, raw=True)
    assert table.status == 0, table
    row = _RICH_STYLE.sub("", table.stdout).split("\r\n")[1].split(" ")
    assert [cell for cell in row if cell][2:] == [
        r"ok\x1f,",
        "ok",
        r"pay\x1c\x1d\x1e\x1fto\u2028at\u2029x\x85y\x0bz\x0c",
        "end",
        "now",
    ]


def test_get_escapes_control_characters_and_keeps_line_breaks(tmp_path: Path) -> None:
    """``get`` on a terminal escapes what the terminal would act on in every field; the content
    keeps its line breaks."""
    item_id = _hostile_db(tmp_path)
    shown = on_terminal("get", item_id, "--db", "h.db", cwd=tmp_path, columns=100, raw=True)
    assert shown.status == 0, shown
    text = _RICH_STYLE.sub("", shown.stdout)
    assert _ACTED_ON.findall(text) == []
    lines = [line.split() for line in text.split("\r\n")]
    assert lines[2:] == [
        ["tags", r'["\u001b[5mx"]'],
        ["metadata", r'{"k":', r'"\u202e"}'],
        ["content", r"\x1b]0;PWNED\x07\x1b[2J"],
        [r"\u202eab\x85\x7f\x9b"],
        [],
    ]


# Invisible characters: zero-width space, word joiner, byte-order mark, an Arabic number sign, a
# tag character (outside the BMP), a paragraph separator; the non-joiner, the joiner and the soft
# hyphen are ordinary text, shown as written.
_INVISIBLE = "a\u200bb\u200cc\u200dd\u2060e\ufefff\u00adg\u0600h\U000e0041i\u2029j"
_INVISIBLE_SHOWN = "a\\u200bb\u200cc\u200dd\\u2060e\\ufefff\u00adg\\u0600h\\U000e0041i\\u2029j"
_ORDINARY_FORMAT = "\u200c\u200d\u00ad"


def _unshown(text: str) -> list[str]:
    """The characters of ``text`` a terminal would act on or not show, line ends excepted."""
    hidden = {"Cc", "Cf", "Zl", "Zp", "Cs"}
    return [
        c for c in text if c not in "\r\n" + _ORDINARY_FORMAT and unicodedata.category(c) in hidden
    ]


# A Persian word with a zero-width non-joiner ("I want"), an emoji ZWJ sequence (woman
# technologist) and a German word with a soft hyphen.
_ORDINARY = "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645 \U0001f469\u200d\U0001f4bb Stra\u00dfen\u00adbahn"


def test_joiners_of_ordinary_text_are_shown_as_written(tmp_path: Path) -> None:
    """The zero-width non-joiner and joiner (Persian and Indic words, emoji sequences) and the
    soft hyphen are shown as written in ``get``, the table and a file name in a summary."""
    item_id = "12345678-1234-4678-9234-567812345678"
    line = json.dumps(
        {
            "id": item_id,
            "content": _ORDINARY,
            "tags": ["\u0646\u0627\u0645\u0647\u200c\u0647\u0627"],
        }
    )
    assert lionmem("import", "-", "--db", "o.db", cwd=tmp_path, stdin=line + "\n").status == 0
    shown = on_terminal("get", item_id, "--db", "o.db", cwd=tmp_path, columns=200, raw=True)
    table = on_terminal("search", "--db", "o.db", cwd=tmp_path, columns=200, raw=True)
    assert (shown.status, table.status) == (0, 0)
    fields = _RICH_STYLE.sub("", shown.stdout)
    rows = _RICH_STYLE.sub("", table.stdout)
    assert "\\u" not in fields + rows
    assert ["content", *_ORDINARY.split()] in [line.split() for line in fields.split("\r\n")]
    assert "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645" in rows.split("\r\n")[1].split()
    name = "\u0646\u0627\u0645\u0647\u200c\u0647\u0627 \U0001f469\u200d\U0001f4bb.jsonl"
    exported = lionmem("export", "--db", "o.db", "--out", name, cwd=tmp_path)
    assert (exported.status, exported.stdout, exported.stderr) == (
        0,
        f"exported 1 item to {name}\n",
        "",
    )


def test_invisible_characters_are_escaped_on_a_terminal(tmp_path: Path) -> None:
    """Zero-width and other format characters (category Cf), and line or paragraph separators,
    are shown as escapes in the table and in ``get``, like control characters."""
    item_id = "12345678-1234-4678-9234-567812345678"
    line = json.dumps({"id": item_id, "content": _INVISIBLE, "tags": ["t\u200bag"]})
    assert lionmem("import", "-", "--db", "i.db", cwd=tmp_path, stdin=line + "\n").status == 0
    table = on_terminal("search", "--db", "i.db", cwd=tmp_path, columns=200, raw=True)
    shown = on_terminal("get", item_id, "--db", "i.db", cwd=tmp_path, columns=200, raw=True)
    assert (table.status, shown.status) == (0, 0)
    rows = _RICH_STYLE.sub("", table.stdout)
    fields = _RICH_STYLE.sub("", shown.stdout)
    assert (_unshown(rows), _unshown(fields)) == ([], [])
    row = rows.split("\r\n")[1].split()
    assert row[2:] == [r"t\u200bag", _INVISIBLE_SHOWN]
    lines = [line.split() for line in fields.split("\r\n")]
    assert lines[2:] == [
        ["tags", r'["t\u200bag"]'],
        ["metadata", "{}"],
        ["content", _INVISIBLE_SHOWN],
        [],
    ]


def test_json_fields_on_a_terminal_are_valid_json_of_the_stored_values(tmp_path: Path) -> None:
    """``get`` on a terminal shows tags, metadata and JSON content as valid JSON whose escapes
    (``\\u001b``, ``\\u0085``, ``\\u200b``, a surrogate pair) give back the stored values."""
    hostile = "\x1b[2J\x85\x7f\u202e\u200b\U000e0041\u2028"
    item_id = "12345678-1234-4678-9234-567812345678"
    stored = {
        "id": item_id,
        "content": {"k": hostile, hostile: [hostile]},
        "tags": [hostile, "plain"],
        "metadata": {hostile: hostile, "n": 1},
    }
    line = json.dumps(stored)
    assert lionmem("import", "-", "--db", "j.db", cwd=tmp_path, stdin=line + "\n").status == 0
    shown = on_terminal("get", item_id, "--db", "j.db", cwd=tmp_path, columns=400, raw=True)
    assert shown.status == 0, shown
    text = _RICH_STYLE.sub("", shown.stdout)
    assert _unshown(text) == []
    rows = dict(line.strip().split(None, 1) for line in text.split("\r\n")[2:] if line.strip())
    assert rows.keys() == {"tags", "metadata", "content"}
    assert {field: json.loads(value) for field, value in rows.items()} == {
        field: stored[field] for field in rows
    }
    assert rows["tags"] == (r'["\u001b[2J\u0085\u007f\u202e\u200b\udb40\udc41\u2028", "plain"]')


def test_machine_output_keeps_control_characters_exact(tmp_path: Path) -> None:
    """Piped and ``--json`` output are the stored JSON, not the escaped display."""
    item_id = _hostile_db(tmp_path)
    piped = lionmem("get", item_id, "--db", "h.db", cwd=tmp_path)
    forced = on_terminal("search", "--json", "--db", "h.db", cwd=tmp_path, raw=True)
    for output in (piped.stdout, forced.stdout.replace("\r\n", "\n")):
        item = json.loads(output)
        assert (item["content"], item["tags"], item["metadata"]) == (
            _HOSTILE,
            ["\x1b[5mx"],
            {"k": "\u202e"},
        )


@pytest.mark.parametrize("command", ["get", "search", "count", "delete", "export"])
def test_reading_commands_refuse_an_empty_file_and_leave_it_empty(
    tmp_path: Path, command: str
) -> None:
    """A zero-byte --db file holds no database: a command that only reads says so and leaves
    the file at zero bytes, with nothing beside it."""
    args = [command] + (
        ["12345678-1234-4678-9234-567812345678"] if command in ("get", "delete") else []
    )
    (tmp_path / "z.db").write_bytes(b"")
    result = lionmem(*args, "--db", "z.db", cwd=tmp_path)
    assert one_line_error(result, f"lionmem {command}: ") == (
        f"lionmem {command}: no lionmem database at z.db: the file is empty "
        "(lionmem add or lionmem import creates one)"
    )
    assert [(path.name, path.stat().st_size) for path in tmp_path.iterdir()] == [("z.db", 0)]


def test_add_turns_an_empty_file_into_a_database(tmp_path: Path) -> None:
    """``add`` creates the database, in an empty file as in a missing one."""
    (tmp_path / "z.db").write_bytes(b"")
    assert lionmem("add", "first", "--db", "z.db", cwd=tmp_path).status == 0
    assert lionmem("count", "--db", "z.db", cwd=tmp_path).stdout == "1\n"


def test_a_terminal_that_cannot_encode_stored_text_shows_it_escaped(tmp_path: Path) -> None:
    """With an ASCII terminal (``PYTHONIOENCODING=ascii``), ``search``'s table and ``get`` write
    a character the terminal lacks as its escape instead of failing."""
    added = lionmem("add", "café → 😀", "--tag", "ü", cwd=tmp_path)
    assert added.status == 0, added
    item_id = added.stdout.strip()
    (item,) = _items(lionmem("search", cwd=tmp_path).stdout)
    ascii_env = clean_env(PYTHONIOENCODING="ascii")
    table = on_terminal("search", cwd=tmp_path, columns=120, env=ascii_env)
    shown = on_terminal("get", item_id, cwd=tmp_path, columns=120, env=ascii_env)
    assert (table.status, [line.split() for line in table.stdout.splitlines()]) == (
        0,
        [
            ["id", "created", "tags", "content"],
            [item_id, _iso(item["created_at"])[:10], "\\xfc", "caf\\xe9", "\\u2192", "\\U0001f600"],
            ["1", "item"],
        ],
    )
    rows = {line.split()[0]: line.split(None, 1)[1].strip() for line in shown.stdout.splitlines()}
    assert (shown.status, rows["tags"], rows["content"]) == (
        0,
        '["\\u00fc"]',
        "caf\\xe9 \\u2192 \\U0001f600",
    )


def test_a_cut_keeps_each_escape_whole(tmp_path: Path) -> None:
    """A cell is cut between the characters of the stored text, each as wide as its escape:
    no escape of an ASCII terminal (``\\u65e5``) or of a hidden character is cut in half."""
    for args in (
        ["日本語のテキスト" * 4, "--tag", "日本語です"],
        ["--json", '{"k": "\u200b日本語のテキスト"}', "--tag", "a"],
    ):
        assert lionmem("add", *args, cwd=tmp_path).status == 0
    table = on_terminal(
        "search", cwd=tmp_path, columns=100, env=clean_env(PYTHONIOENCODING="ascii")
    )
    header, *rows, count = table.stdout.splitlines()
    tags_at, content_at = header.index("tags"), header.index("content")
    cells = [(line[tags_at:content_at].rstrip(), line[content_at:].rstrip()) for line in rows]
    # The tags column is 19 cells (a third of what the id leaves), the content 26 (what is left):
    # each escape takes 6, the dots 3.
    assert (table.status, count, cells) == (
        0,
        "2 items",
        [
            ("\\u65e5\\u672c...", "\\u65e5\\u672c\\u8a9e..."),
            ("a", '{"k": "\\u200b\\u65e5...'),
        ],
    )


def test_a_cut_measures_what_it_keeps_as_the_terminal_shows_it(tmp_path: Path) -> None:
    """A heart with its emoji selector (two characters, two cells together) is measured whole:
    the cut content fits its column, and the table keeps its columns and the terminal's width."""
    from rich.cells import cell_len

    assert lionmem("add", "\u2764\ufe0f" * 60, "--tag", "love", cwd=tmp_path).status == 0
    table = on_terminal("search", cwd=tmp_path, columns=100)
    header, row, count = table.stdout.splitlines()
    assert (table.status, header.split(), count) == (
        0,
        ["id", "created", "tags", "content"],
        "1 item",
    )
    # The content column is 41 cells: 20 hearts of 2 and the ellipsis.
    assert row.split()[-2:] == ["love", "\u2764\ufe0f" * 20 + "\u2026"]
    assert max(cell_len(line) for line in table.stdout.splitlines()) <= 99


def test_an_ascii_terminal_table_is_aligned_and_json_fields_stay_json(tmp_path: Path) -> None:
    """On an ASCII terminal, the table's columns are measured with the escapes (each row's
    content starts under the header's, a cut ends in ``...``; on a terminal too narrow for an
    id and 8 cells of content, the ids are whole and the content cropped, no line wider than the
    terminal), and what ``get`` shows as JSON uses JSON's escapes, so it parses back to the
    stored value."""
    long_text = "ö" + "x" * 120
    for args in (
        ["grüße", "--tag", "ü"],
        [long_text, "--tag", "a"],
        ["--json", '{"k": "ü→😀"}', "--tag", "ä", "--meta", 'x="é"'],
    ):
        assert lionmem("add", *args, cwd=tmp_path).status == 0
    *_, last = found = _items(lionmem("search", cwd=tmp_path).stdout)
    ascii_env = clean_env(PYTHONIOENCODING="ascii")
    table = on_terminal("search", cwd=tmp_path, columns=100, env=ascii_env)
    header, *rows, count = table.stdout.splitlines()
    tags_at, content_at = header.index("tags"), header.index("content")
    cells = [(line[tags_at:content_at].rstrip(), line[content_at:].rstrip()) for line in rows]
    assert (table.status, count, cells) == (
        0,
        "3 items",
        [
            ("\\xfc", "gr\\xfc\\xdfe"),
            # 99 cells less the id, date and tags columns and their gaps: 41, the dots included.
            ("a", "\\xf6" + "x" * 34 + "..."),
            ("\\xe4", '{"k": "\\u00fc\\u2192\\ud83d\\ude00"}'),
        ],
    )
    narrow = on_terminal("search", cwd=tmp_path, columns=40, env=ascii_env).stdout.splitlines()
    # 40 cells: the id, its gap and one cell of content, the dots cut to it, without the padding
    # after the last column; the header cropped to the cells left.
    assert (narrow, max(map(len, narrow))) == (
        ["id" + " " * 36 + "co", *(f"{item['id']}  . " for item in found), "3 items"],
        40,
    )
    shown = on_terminal("get", last["id"], cwd=tmp_path, columns=100, env=ascii_env)
    fields = {line.split()[0]: line.split(None, 1)[1].strip() for line in shown.stdout.splitlines()}
    assert (
        shown.status,
        [json.loads(fields[name]) for name in ("tags", "metadata", "content")],
    ) == (
        0,
        [["ä"], {"x": "é"}, {"k": "ü→😀"}],
    )
