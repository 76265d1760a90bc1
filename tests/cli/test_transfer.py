"""``import`` and ``export``: all or nothing, --skip-invalid, streaming, exact round trips, kill -9."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import time
from contextlib import closing
from pathlib import Path
from uuid import UUID

import pytest

from lionmem import MemoryItem
from lionmem.stores._sqlite_codec import MAX_DEPTH
from tests.cli.conftest import MIXED, SAMPLE
from tests.cli.support import (
    LIONMEM,
    clean_env,
    interrupt_once_waiting,
    lionmem,
    on_terminal,
    one_line_error,
    piped_import,
    vectors,
)
from tools.make_sample import sample_items

MIXED_PROBLEMS = [
    "lionmem import: line 3: tags.0: Input should be a valid string; tags.1: Input should be a valid string",
    "lionmem import: line 5: colour: Extra inputs are not permitted",
    "lionmem import: line 7: id: Value error, badly formed hexadecimal UUID string",
    "lionmem import: line 8: Invalid JSON: EOF while parsing a value at line 1 column 30",
]


def _export(db: Path) -> str:
    result = lionmem("export", "--db", db, cwd=db.parent)
    assert (result.status, result.stderr) == (0, ""), result
    return result.stdout


def _store_with_two_items(folder: Path) -> tuple[Path, str]:
    db = folder / "kept.db"
    for text in ("first", "second"):
        assert lionmem("add", text, "--db", db, cwd=folder).status == 0
    return db, _export(db)


def test_import_then_export_gives_the_sample_back_byte_for_byte(tmp_path: Path) -> None:
    """Every field of the 3,000 sample items comes back exactly, in the file's order."""
    imported = lionmem("import", SAMPLE, "--db", "s.db", cwd=tmp_path)
    assert (imported.status, imported.stdout, imported.stderr) == (
        0,
        f"imported 3000 items from {SAMPLE}\n",
        "",
    )
    assert _export(tmp_path / "s.db") == SAMPLE.read_text("utf-8")


def test_a_bad_line_aborts_the_import_and_keeps_what_was_stored(tmp_path: Path) -> None:
    """The first bad line is named with its number and reason; the store is as it was."""
    db, before = _store_with_two_items(tmp_path)
    result = lionmem("import", MIXED, "--db", db, cwd=tmp_path)
    assert (result.status, result.stdout, result.stderr) == (
        1,
        "",
        MIXED_PROBLEMS[0] + "; nothing was imported\n",
    )
    assert _export(db) == before


def test_skip_invalid_stores_the_good_lines_and_reports_each_bad_one(tmp_path: Path) -> None:
    """``--skip-invalid``: the six good lines are stored, the four bad ones listed, exit 1."""
    result = lionmem("import", MIXED, "--skip-invalid", "--db", "m.db", cwd=tmp_path)
    assert (result.status, result.stdout, result.stderr.splitlines()) == (
        1,
        f"imported 6 items from {MIXED} (4 invalid lines skipped)\n",
        MIXED_PROBLEMS,
    )
    good = [line for line in MIXED.read_text("utf-8").splitlines() if line.startswith('{"id":"')]
    assert _export(tmp_path / "m.db").splitlines() == good


def test_skip_invalid_with_only_good_lines_exits_0(tmp_path: Path) -> None:
    """Nothing skipped: the usual summary, exit 0."""
    result = lionmem("import", SAMPLE, "--skip-invalid", "--db", "s.db", cwd=tmp_path)
    assert (result.status, result.stdout) == (0, f"imported 3000 items from {SAMPLE}\n")


def test_a_value_the_store_cannot_keep_is_a_bad_line(tmp_path: Path) -> None:
    """A number JSON reads as infinity is refused by the store; its line is named, in both modes."""
    (tmp_path / "inf.jsonl").write_text(
        '{"content": "ok"}\n\n{"content": 1e400}\n{"content": "fine"}\n'
    )
    reason = "MemoryItem.content: a value of type float cannot be stored exactly: inf: JSON has no NaN or Infinity"
    strict = lionmem("import", "inf.jsonl", "--db", "a.db", cwd=tmp_path)
    lenient = lionmem("import", "inf.jsonl", "--skip-invalid", "--db", "b.db", cwd=tmp_path)
    assert (strict.status, strict.stderr) == (
        1,
        f"lionmem import: line 3: {reason}; nothing was imported\n",
    )
    assert (lenient.status, lenient.stderr) == (1, f"lionmem import: line 3: {reason}\n")
    assert lionmem("count", "--db", "a.db", cwd=tmp_path).stdout == "0\n"
    contents = [json.loads(line)["content"] for line in _export(tmp_path / "b.db").splitlines()]
    assert contents == ["ok", "fine"]


def test_import_reads_standard_input(tmp_path: Path) -> None:
    """``import -`` reads the lines from stdin and says so."""
    lines = SAMPLE.read_text("utf-8").splitlines()[:10]
    result = lionmem("import", "-", "--db", "in.db", cwd=tmp_path, stdin="\n".join(lines) + "\n")
    assert (result.status, result.stdout) == (0, "imported 10 items from standard input\n")
    assert _export(tmp_path / "in.db").splitlines() == lines


def test_a_repeated_id_keeps_its_first_place_and_last_value(tmp_path: Path) -> None:
    """Within a file and against the store, a known id replaces the item in place."""
    db, before = _store_with_two_items(tmp_path)
    first = json.loads(before.splitlines()[0])
    replaced = json.dumps({**first, "content": "replaced", "tags": ["new"]})
    again = json.dumps({**first, "content": "replaced again"})
    (tmp_path / "r.jsonl").write_text(f'{replaced}\n{{"content": "third"}}\n{again}\n')
    assert (
        lionmem("import", "r.jsonl", "--db", db, cwd=tmp_path).stdout
        == "imported 3 items from r.jsonl\n"
    )
    exported = [json.loads(line) for line in _export(db).splitlines()]
    assert [(item["content"], item["tags"]) for item in exported] == [
        ("replaced again", []),
        ("second", []),
        ("third", []),
    ]
    assert exported[0]["id"] == first["id"]


def test_import_counts_every_item_it_wrote_a_repeated_id_included(tmp_path: Path) -> None:
    """An id given twice is written twice (the second replaces the first): both are counted."""
    line = '{{"id": "12345678-1234-4678-9234-56781234567{}", "content": "{}"}}'
    lines = [line.format(0, "a"), line.format(1, "b"), "not json", line.format(0, "c")]
    (tmp_path / "d.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = lionmem("import", "d.jsonl", "--db", "d.db", "--skip-invalid", cwd=tmp_path)
    assert (result.status, result.stdout) == (
        1,
        "imported 3 items from d.jsonl (1 invalid line skipped)\n",
    )
    assert lionmem("count", "--db", "d.db", cwd=tmp_path).stdout == "2\n"


@pytest.mark.parametrize("source", ["file", "stdin"])
def test_a_byte_order_mark_at_the_start_of_the_input_is_skipped(
    tmp_path: Path, source: str
) -> None:
    """A UTF-8 byte-order mark before the first line (an editor's) is not part of the JSON."""
    lines = SAMPLE.read_text("utf-8").splitlines()[:2]
    data = b"\xef\xbb\xbf" + "\n".join(lines).encode() + b"\n"
    (tmp_path / "bom.jsonl").write_bytes(data)
    name, stdin = ("bom.jsonl", None) if source == "file" else ("-", data)
    result = lionmem("import", name, "--db", "bom.db", cwd=tmp_path, stdin=stdin)
    shown = "bom.jsonl" if source == "file" else "standard input"
    assert (result.status, result.stdout, result.stderr) == (
        0,
        f"imported 2 items from {shown}\n",
        "",
    )
    assert _export(tmp_path / "bom.db").splitlines() == lines


def test_a_byte_order_mark_after_the_start_is_a_bad_line(tmp_path: Path) -> None:
    """Only the very start of the input may hold a byte-order mark: on line 2 it is bad JSON."""
    lines = SAMPLE.read_text("utf-8").splitlines()[:2]
    data = lines[0].encode() + b"\n\xef\xbb\xbf" + lines[1].encode() + b"\n"
    result = lionmem("import", "-", "--db", "bom.db", cwd=tmp_path, stdin=data)
    assert (result.status, result.stdout) == (1, "")
    assert result.stderr == (
        "lionmem import: line 2: Invalid JSON: expected value at line 1 column 1; "
        "nothing was imported\n"
    )


def test_a_bad_line_is_reported_with_control_characters_escaped(tmp_path: Path) -> None:
    """A field name holding control or bidirectional characters is reported with them written
    as escapes, so a hostile file cannot retitle the window or reorder the message."""
    lines = [
        json.dumps({"content": "x", "\x1b]0;PWNED\x07\x9b2J": 1}),
        json.dumps({"content": "y", "a\u202eb": 1}),
    ]
    (tmp_path / "h.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    whole = lionmem("import", "h.jsonl", "--db", "h.db", cwd=tmp_path)
    skipping = lionmem("import", "h.jsonl", "--db", "h.db", "--skip-invalid", cwd=tmp_path)
    assert whole.stderr == (
        "lionmem import: line 1: \\x1b]0;PWNED\\x07\\x9b2J: Extra inputs are not permitted; "
        "nothing was imported\n"
    )
    assert skipping.stderr.splitlines() == [
        "lionmem import: line 1: \\x1b]0;PWNED\\x07\\x9b2J: Extra inputs are not permitted",
        "lionmem import: line 2: a\\u202eb: Extra inputs are not permitted",
    ]


def test_every_item_vector_the_model_accepts_round_trips_exactly(tmp_path: Path) -> None:
    """Each memory_item vector the model accepts (own id each) comes back as the same JSON line."""
    documents = [v["document"] for v in vectors("memory_item") if v.get("model", v)["valid"]]
    lines = [
        MemoryItem.model_validate(
            {**document, "id": str(UUID(int=number, version=4))}
        ).model_dump_json()
        for number, document in enumerate(documents, 1)
    ]
    (tmp_path / "v.jsonl").write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    assert lionmem("import", "v.jsonl", "--db", "v.db", cwd=tmp_path).status == 0
    assert _export(tmp_path / "v.db").splitlines() == lines
    assert len(lines) >= 15


def test_export_out_writes_the_file_and_says_so(tmp_path: Path, sample_db: Path) -> None:
    """``export --out FILE`` writes the lines to FILE and one summary line to stdout."""
    result = lionmem("export", "--db", sample_db, "--out", tmp_path / "e.jsonl", cwd=tmp_path)
    assert (result.status, result.stdout, result.stderr) == (
        0,
        f"exported 3000 items to {tmp_path / 'e.jsonl'}\n",
        "",
    )
    assert (tmp_path / "e.jsonl").read_text("utf-8") == SAMPLE.read_text("utf-8")


def test_export_of_an_empty_store_writes_nothing(tmp_path: Path) -> None:
    """An empty store exports no lines."""
    (tmp_path / "e.jsonl").write_text("")
    assert (
        lionmem("import", "e.jsonl", "--db", "e.db", cwd=tmp_path).stdout
        == "imported 0 items from e.jsonl\n"
    )
    assert _export(tmp_path / "e.db") == ""


def test_export_piped_into_import_reproduces_the_store(tmp_path: Path, sample_db: Path) -> None:
    """``lionmem export | lionmem import -`` between two stores: the second exports the same bytes."""
    pipeline = f"{LIONMEM} export --db {sample_db} | {LIONMEM} import - --db copy.db"
    done = subprocess.run(
        pipeline,
        shell=True,
        cwd=tmp_path,
        env=clean_env(),
        capture_output=True,
        text=True,
        check=False,
    )
    assert (done.returncode, done.stdout) == (0, "imported 3000 items from standard input\n")
    assert _export(tmp_path / "copy.db") == _export(sample_db)


def test_values_nested_as_deep_as_the_store_allows_are_copied(tmp_path: Path) -> None:
    """Content and a metadata value nested to the store's limit around a scalar export and import
    again (the item's document is one level deeper); one level more is refused by ``add``."""
    deepest = "[" * MAX_DEPTH + "1" + "]" * MAX_DEPTH
    meta = "k=" + '{"a":' * (MAX_DEPTH - 1) + "1" + "}" * (MAX_DEPTH - 1)
    for args in (("--json", deepest), ("note", "--meta", meta)):
        assert lionmem("add", *args, "--db", "deep.db", cwd=tmp_path).status == 0
    exported = _export(tmp_path / "deep.db")
    imported = lionmem("import", "-", "--db", "copy.db", cwd=tmp_path, stdin=exported)
    assert (imported.status, imported.stderr) == (0, "")
    assert _export(tmp_path / "copy.db") == exported
    deeper = lionmem("add", "--json", f"[{deepest}]", "--db", "deep.db", cwd=tmp_path)
    assert deeper.status == 2
    assert f"lists and dicts may nest at most {MAX_DEPTH} levels deep" in deeper.stderr


@pytest.mark.parametrize("command", ["export", "search --limit 3000"])
def test_export_stops_quietly_when_the_reader_goes_away(
    tmp_path: Path, sample_db: Path, command: str
) -> None:
    """``lionmem export | head -n 2`` prints two lines and no traceback, and the command exits
    1 (``search`` too): the rest of its output was not read."""
    pipeline = f'{LIONMEM} {command} --db {sample_db} | head -n 2; exit "${{PIPESTATUS[0]}}"'
    done = subprocess.run(
        ["bash", "-c", pipeline],
        cwd=tmp_path,
        env=clean_env(),
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.stdout.splitlines() == SAMPLE.read_text("utf-8").splitlines()[:2]
    assert (done.returncode, done.stderr) == (1, "")


def _big_file(path: Path, lines: int) -> None:
    with path.open("w", encoding="utf-8") as out:
        for index in range(lines):
            out.write(
                json.dumps(
                    {"content": f"line {index} of a large import", "tags": [f"t{index % 7}"]}
                )
                + "\n"
            )


def test_import_shows_a_progress_bar_on_a_terminal_for_a_big_file(tmp_path: Path) -> None:
    """Over a few thousand lines, a terminal shows the progress bar, finished at 100%."""
    _big_file(tmp_path / "big.jsonl", 5000)
    result = on_terminal("import", "big.jsonl", "--db", "b.db", cwd=tmp_path)
    assert result.status == 0
    assert "importing 5,000 items" in result.stdout
    assert "100%" in result.stdout
    assert result.stdout.endswith("imported 5000 items from big.jsonl\n")


def test_import_with_columns_0_draws_the_progress_bar_at_the_terminals_width(
    tmp_path: Path,
) -> None:
    """``COLUMNS=0`` (which rich takes for a terminal no column wide) is ignored: the bar is
    drawn as on the same terminal without it."""
    _big_file(tmp_path / "big.jsonl", 5000)
    result = on_terminal(
        "import", "big.jsonl", "--db", "b.db", cwd=tmp_path, env=clean_env(COLUMNS="0")
    )
    assert result.status == 0
    assert "importing 5,000 items" in result.stdout
    assert "100%" in result.stdout
    assert max(len(line) for line in result.stdout.splitlines()) <= 100


def test_import_shows_no_progress_bar_for_a_small_file_or_when_piped(tmp_path: Path) -> None:
    """A small file on a terminal, or a big one piped, prints only the summary."""
    _big_file(tmp_path / "small.jsonl", 100)
    _big_file(tmp_path / "big.jsonl", 5000)
    small = on_terminal("import", "small.jsonl", "--db", "s.db", cwd=tmp_path)
    piped = lionmem("import", "big.jsonl", "--db", "b.db", cwd=tmp_path)
    assert small.stdout == "imported 100 items from small.jsonl\n"
    assert (piped.stdout, piped.stderr) == ("imported 5000 items from big.jsonl\n", "")


def test_export_shows_progress_on_a_terminal_only_when_the_data_goes_elsewhere(
    tmp_path: Path, sample_db: Path
) -> None:
    """``export --out`` on a terminal draws the bar; ``export`` to the screen prints only items."""
    to_file = on_terminal("export", "--db", sample_db, "--out", "e.jsonl", cwd=tmp_path)
    to_screen = on_terminal("export", "--db", sample_db, cwd=tmp_path)
    assert "exporting 3,000 items" in to_file.stdout
    assert to_file.stdout.endswith("exported 3000 items to e.jsonl\n")
    assert to_screen.stdout == SAMPLE.read_text("utf-8")


@pytest.mark.slow
def test_sigkill_mid_import_leaves_none_of_that_import(tmp_path: Path) -> None:
    """An import killed with SIGKILL while it writes leaves exactly the items stored before it."""
    db, before = _store_with_two_items(tmp_path)
    _big_file(tmp_path / "big.jsonl", 400_000)
    wal = db.with_name(db.name + "-wal")
    process = subprocess.Popen(
        [str(LIONMEM), "import", "big.jsonl", "--db", str(db)],
        cwd=tmp_path,
        env=clean_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 120
    # Mid-import: the transaction has spilled several megabytes of pages into the WAL.
    while not (wal.exists() and wal.stat().st_size > 8_000_000):
        assert process.poll() is None, "the import ended before it could be killed"
        assert time.monotonic() < deadline
        time.sleep(0.01)
    os.kill(process.pid, signal.SIGKILL)
    assert process.wait() == -signal.SIGKILL
    assert _export(db) == before
    assert lionmem("count", "--db", db, cwd=tmp_path).stdout == "2\n"


@pytest.mark.slow
@pytest.mark.parametrize(
    ("sent", "done"),
    [(signal.SIGINT, (130, "interrupted")), (signal.SIGTERM, (143, "terminated"))],
    ids=["ctrl-c", "sigterm"],
)
def test_a_stop_mid_import_rolls_back_and_says_so(
    tmp_path: Path, sent: signal.Signals, done: tuple[int, str]
) -> None:
    """SIGINT (Ctrl-C) or SIGTERM while an import writes: it stops soon, says so, exits 130
    or 143 and stores none of it."""
    db, before = _store_with_two_items(tmp_path)
    _big_file(tmp_path / "big.jsonl", 400_000)
    wal = db.with_name(db.name + "-wal")
    process = subprocess.Popen(
        [str(LIONMEM), "import", "big.jsonl", "--db", str(db)],
        cwd=tmp_path,
        env=clean_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 120
    while not (wal.exists() and wal.stat().st_size > 8_000_000):
        assert process.poll() is None, "the import ended before it could be interrupted"
        assert time.monotonic() < deadline
        time.sleep(0.01)
    process.send_signal(sent)
    stdout, stderr = process.communicate(timeout=30)
    status, word = done
    assert (process.returncode, stdout, stderr) == (status, "", f"lionmem import: {word}\n")
    assert _export(db) == before


@pytest.mark.slow
def test_ctrl_c_while_standard_input_waits_stops_at_once_and_stores_nothing(
    tmp_path: Path,
) -> None:
    """SIGINT while ``import -`` waits for its next line: it exits 130 at once, with the pipe
    still open, and stores none of the lines it had read."""
    db, before = _store_with_two_items(tmp_path)
    lines = b'{"content": "read before the interrupt"}\n' * 3
    # After half a second the three lines are validated: the import waits for the fourth.
    done = interrupt_once_waiting(piped_import(db, tmp_path), lines, settle=0.5)
    assert done == (130, b"", b"lionmem import: interrupted\n")
    assert _export(db) == before


@pytest.mark.slow
def test_round_trip_of_100000_items_between_two_sqlite_stores(tmp_path: Path) -> None:
    """100,000 varied items: file -> store -> export is the file; export | import -> same export."""
    source = tmp_path / "100k.jsonl"
    with source.open("w", encoding="utf-8") as out:
        for item in sample_items(100_000):
            out.write(item.model_dump_json() + "\n")
    imported = lionmem("import", source, "--db", "a.db", cwd=tmp_path, timeout=600)
    assert imported.stdout == f"imported 100000 items from {source}\n"
    pipeline = f"{LIONMEM} export --db a.db | {LIONMEM} import - --db b.db"
    done = subprocess.run(
        pipeline,
        shell=True,
        cwd=tmp_path,
        env=clean_env(),
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    assert done.stdout == "imported 100000 items from standard input\n"
    first = lionmem("export", "--db", "a.db", "--out", "a.jsonl", cwd=tmp_path, timeout=600)
    second = lionmem("export", "--db", "b.db", "--out", "b.jsonl", cwd=tmp_path, timeout=600)
    assert (first.status, second.status) == (0, 0)
    assert (tmp_path / "a.jsonl").read_bytes() == source.read_bytes()
    assert (tmp_path / "b.jsonl").read_bytes() == source.read_bytes()


def test_a_damaged_row_stops_the_export_and_removes_the_file(
    tmp_path: Path, sample_copy: Path
) -> None:
    """A row the store cannot decode is one line, exit 2, and ``--out`` leaves no partial file."""
    with closing(sqlite3.connect(sample_copy)) as conn, conn:
        (item_id,) = conn.execute("SELECT id FROM items WHERE seq = 2500").fetchone()
        conn.execute("UPDATE items SET content = '{not json' WHERE seq = 2500")
    result = lionmem("export", "--db", sample_copy, "--out", "e.jsonl", cwd=tmp_path)
    assert result.status == 2
    assert result.stderr.startswith(
        f"lionmem export: the stored row of item {item_id!r} is malformed: "
    )
    assert len(result.stderr.splitlines()) == 1
    assert not (tmp_path / "e.jsonl").exists()


def test_a_malformed_row_whose_message_has_several_lines_is_one_line_of_spaces(
    tmp_path: Path,
) -> None:
    """The validation text of a malformed row spans lines; its line breaks are shown as
    spaces, as any white space of a message, not as escapes."""
    db, _ = _store_with_two_items(tmp_path)
    with closing(sqlite3.connect(db)) as conn, conn:
        (item_id,) = conn.execute("SELECT id FROM items ORDER BY seq LIMIT 1").fetchone()
        conn.execute(
            "UPDATE items SET created_at = '1e400' WHERE seq = (SELECT min(seq) FROM items)"
        )
    line = one_line_error(lionmem("export", "--db", db, cwd=tmp_path), "lionmem export: ")
    assert line.startswith(
        f"lionmem export: the stored row of item {item_id!r} is malformed: 1 validation error "
        "for MemoryItem created_at Value error, created_at must be a finite number of seconds, "
        "got inf [type=value_error, input_value=inf, input_type=float] For further information "
        "visit https://errors.pydantic.dev/"
    ), line
    assert "\\x0a" not in line


def _damage_row(db: Path, seq: int) -> None:
    with closing(sqlite3.connect(db)) as conn, conn:
        conn.execute("UPDATE items SET content = '{not json' WHERE seq = ?", (seq,))


def test_a_failed_export_leaves_the_file_it_would_replace_as_it_was(
    tmp_path: Path, sample_copy: Path
) -> None:
    """An existing ``--out`` file is replaced only by a complete export: a failure keeps it
    unchanged and leaves no temporary file behind."""
    _damage_row(sample_copy, 2500)
    (tmp_path / "e.jsonl").write_text("an earlier export\n", encoding="utf-8")
    result = lionmem("export", "--db", sample_copy, "--out", "e.jsonl", cwd=tmp_path)
    assert result.status == 2
    assert (tmp_path / "e.jsonl").read_text("utf-8") == "an earlier export\n"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["copy.db", "e.jsonl"]


def test_a_failed_export_through_a_link_or_a_pipe_deletes_neither(
    tmp_path: Path, sample_copy: Path
) -> None:
    """``--out`` naming a symbolic link replaces the file it points to only once complete, so
    a failure leaves that file as it was; a named pipe is written through; neither is removed."""
    _damage_row(sample_copy, 2500)
    (tmp_path / "target.txt").write_text("kept\n", encoding="utf-8")
    (tmp_path / "link.jsonl").symlink_to("target.txt")
    os.mkfifo(tmp_path / "pipe.jsonl")
    reader = subprocess.Popen(["wc", "-l", "pipe.jsonl"], cwd=tmp_path, stdout=subprocess.PIPE)
    to_link = lionmem("export", "--db", sample_copy, "--out", "link.jsonl", cwd=tmp_path)
    to_pipe = lionmem("export", "--db", sample_copy, "--out", "pipe.jsonl", cwd=tmp_path)
    piped, _ = reader.communicate(timeout=60)
    assert (to_link.status, to_pipe.status) == (2, 2)
    assert (tmp_path / "link.jsonl").is_symlink()
    assert (tmp_path / "target.txt").read_text("utf-8") == "kept\n"
    assert (tmp_path / "pipe.jsonl").is_fifo()
    assert piped == b"2000 pipe.jsonl\n"  # the pages before the damaged row


def test_export_out_keeps_the_usual_permissions(tmp_path: Path, sample_db: Path) -> None:
    """A new ``--out`` file gets the mode the umask gives, a replaced one keeps its mode."""
    (tmp_path / "old.jsonl").write_text("", encoding="utf-8")
    (tmp_path / "old.jsonl").chmod(0o640)
    for name in ("new.jsonl", "old.jsonl"):
        assert lionmem("export", "--db", sample_db, "--out", name, cwd=tmp_path).status == 0
    umask = os.umask(0)
    os.umask(umask)
    assert (tmp_path / "new.jsonl").stat().st_mode & 0o777 == 0o666 & ~umask
    assert (tmp_path / "old.jsonl").stat().st_mode & 0o777 == 0o640
    assert (tmp_path / "old.jsonl").read_bytes() == SAMPLE.read_bytes()


@pytest.mark.parametrize("out", ["copy.db", "copy.db-wal", "./copy.db"])
def test_export_refuses_to_write_over_its_own_database(sample_copy: Path, out: str) -> None:
    """``--out`` naming the database (or its WAL) is refused before anything is opened."""
    before = sample_copy.read_bytes()
    result = lionmem("export", "--db", "copy.db", "--out", out, cwd=sample_copy.parent)
    assert one_line_error(result, "") == (
        f"lionmem export: --out {out} is the database file itself; write the export to another file"
    )
    assert sample_copy.read_bytes() == before


def test_export_refuses_a_hard_link_to_its_own_database(sample_copy: Path) -> None:
    """``--out`` naming another path of the database file is refused and the store is kept."""
    os.link(sample_copy, sample_copy.with_name("linked.jsonl"))
    before = sample_copy.read_bytes()
    result = lionmem("export", "--db", "copy.db", "--out", "linked.jsonl", cwd=sample_copy.parent)
    assert one_line_error(result, "") == (
        "lionmem export: --out linked.jsonl is the database file itself; "
        "write the export to another file"
    )
    assert sample_copy.read_bytes() == before
    assert lionmem("count", "--db", sample_copy, cwd=sample_copy.parent).stdout == "3000\n"


def test_export_out_must_be_a_file_in_a_directory_that_exists(
    tmp_path: Path, sample_db: Path
) -> None:
    """``--out`` naming a directory, or a file in a missing directory, is one line and exit 2."""
    to_dir = lionmem("export", "--db", sample_db, "--out", tmp_path, cwd=tmp_path)
    to_missing = lionmem("export", "--db", sample_db, "--out", "no/such/e.jsonl", cwd=tmp_path)
    assert (
        one_line_error(to_dir, "") == f"lionmem export: --out {tmp_path} is a directory, not a file"
    )
    assert one_line_error(to_missing, "") == (
        "lionmem export: --out no/such/e.jsonl: the directory no/such does not exist"
    )
