"""Errors a person can act on: one line naming the problem, no traceback, exit 2."""

from __future__ import annotations

import io
import json
import os
import re
import resource
import shlex
import shutil
import sqlite3
import subprocess
import sys
import time
from contextlib import closing
from pathlib import Path

import pytest

from lionmem._schemas import schemas
from lionmem.cli import main
from tests.cli.conftest import SAMPLE
from tests.cli.support import LIONMEM, Result, clean_env, lionmem, one_line_error


def test_a_missing_import_file(tmp_path: Path) -> None:
    """``import`` of a file that does not exist names it; no database is created."""
    result = lionmem("import", "nope.jsonl", cwd=tmp_path)
    assert one_line_error(result, "") == "lionmem import: nope.jsonl: no such file"
    assert not (tmp_path / "memory.db").exists()


def test_a_directory_as_import_file(tmp_path: Path) -> None:
    """``import`` of a directory says it is one."""
    result = lionmem("import", tmp_path, cwd=tmp_path)
    assert (
        one_line_error(result, "")
        == f"lionmem import: {tmp_path} is a directory, not a JSON Lines file"
    )


@pytest.mark.parametrize("command", [["count"], ["add", "x"], ["search"], ["import", "-"]])
def test_a_directory_as_db(tmp_path: Path, command: list[str]) -> None:
    """A directory given as ``--db`` is refused by every command, suggesting a file inside it."""
    result = lionmem(*command, "--db", tmp_path, cwd=tmp_path, stdin="")
    assert one_line_error(result, "") == (
        f"lionmem {command[0]}: --db {tmp_path} is a directory; give the path of a database "
        f"file, e.g. {tmp_path / 'memory.db'}"
    )


def test_a_refused_target_is_named_where_it_came_from(tmp_path: Path) -> None:
    """A target from ``$LIONMEM_DB`` or the default is refused naming that, not ``--db``,
    which the command was not given."""
    from_env = lionmem("count", cwd=tmp_path, env=clean_env(LIONMEM_DB=str(tmp_path)))
    assert one_line_error(from_env, "") == (
        f"lionmem count: $LIONMEM_DB {tmp_path} is a directory; give the path of a database "
        f"file, e.g. {tmp_path / 'memory.db'}"
    )
    (tmp_path / "memory.db").mkdir()
    default = lionmem("add", "x", cwd=tmp_path)
    assert one_line_error(default, "") == (
        "lionmem add: the default --db memory.db is a directory; give the path of a database "
        "file, e.g. memory.db/memory.db"
    )
    missing = lionmem("add", "x", cwd=tmp_path, env=clean_env(LIONMEM_DB="no/such/x.db"))
    assert one_line_error(missing, "") == (
        "lionmem add: $LIONMEM_DB no/such/x.db: the directory no/such does not exist"
    )


def test_a_blank_target_is_refused(tmp_path: Path) -> None:
    """A --db or $LIONMEM_DB of blanks only is refused, naming where it came from; no file named
    by blanks is made."""
    given = lionmem("add", "x", "--db", "\t", cwd=tmp_path)
    assert one_line_error(given, "") == (
        "lionmem add: --db is blank ('\\t'): give a SQLite file or a postgresql:// address"
    )
    from_env = lionmem("add", "x", cwd=tmp_path, env=clean_env(LIONMEM_DB=" \n"))
    assert one_line_error(from_env, "") == (
        "lionmem add: $LIONMEM_DB is blank (' \\n'): give a SQLite file or a postgresql:// address"
    )
    assert list(tmp_path.iterdir()) == []


def test_a_db_in_a_missing_directory(tmp_path: Path) -> None:
    """``add --db missing/dir/x.db`` names the missing directory."""
    result = lionmem("add", "x", "--db", "no/such/x.db", cwd=tmp_path)
    assert (
        one_line_error(result, "")
        == "lionmem add: --db no/such/x.db: the directory no/such does not exist"
    )


def test_a_database_of_another_application(tmp_path: Path) -> None:
    """A SQLite file lionmem did not create is refused and left unchanged."""
    other = tmp_path / "other.db"
    with closing(sqlite3.connect(other)) as conn, conn:
        conn.execute("CREATE TABLE invoices (n INTEGER)")
    before = other.read_bytes()
    result = lionmem("add", "x", "--db", other, cwd=tmp_path)
    line = one_line_error(result, "")
    assert line.startswith(
        f"lionmem add: {str(other)!r} is a SQLite database but not a lionmem one"
    )
    assert line.endswith("lionmem opens only files it created")
    assert other.read_bytes() == before


def test_a_file_that_is_not_a_database(tmp_path: Path) -> None:
    """A text file given as ``--db`` is named as not a SQLite file."""
    (tmp_path / "notes.txt").write_text("hello\n" * 100)
    result = lionmem("count", "--db", "notes.txt", cwd=tmp_path)
    assert one_line_error(result, "") == "lionmem count: 'notes.txt' is not a SQLite database file"


def test_a_namespace_for_a_sqlite_file(tmp_path: Path) -> None:
    """``--namespace`` with a SQLite file is refused: one file is one namespace."""
    result = lionmem("add", "x", "--namespace", "team", cwd=tmp_path)
    assert one_line_error(result, "") == (
        "lionmem add: --namespace 'team': a SQLite file has no namespaces (one file is one "
        "namespace); use another --db file instead"
    )
    assert not (tmp_path / "memory.db").exists()


_LONG = "9" * 4301
_UNREAD = "more than Python reads (PYTHONINTMAXSTRDIGITS sets the limit); write it as text, in JSON quotes"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["search", "--filter", "k"],
            "lionmem search: --filter 'k': expected KEY=JSON, for example --filter stars=4",
        ),
        (
            ["search", "--filter", "k={"],
            "lionmem search: --filter 'k={': the value after '=' is not valid JSON (Expecting "
            "property name enclosed in double quotes at column 2)",
        ),
        (
            ["search", "--filter", "a=[1,"],
            "lionmem search: --filter 'a=[1,': the value after '=' is not valid JSON "
            "(Expecting value at column 4)",
        ),
        (
            ["add", "x", "--meta", 'k="open'],
            "lionmem add: --meta 'k=\"open': the value after '=' is not valid JSON "
            "(Unterminated string starting at column 1)",
        ),
        (
            ["search", "--filter", 'k=he said "hi"'],
            "lionmem search: --filter 'k=he said \"hi\"': the value after '=' is not JSON "
            "(Expecting value); write text in JSON quotes, for example "
            '--filter \'k="he said \\"hi\\""\'',
        ),
        (
            ["add", "x", "--meta", "when=2026-01-01"],
            "lionmem add: --meta 'when=2026-01-01': the value after '=' is not JSON (Extra data); "
            "write text in JSON quotes, for example --meta 'when=\"2026-01-01\"'",
        ),
        *(
            (
                [*command, f"k=[{_LONG}]"],
                f"lionmem {command[0]}: {command[-1]} k=...: the value after '=' holds an "
                f"integer of more than 4300 digits, {_UNREAD}",
            )
            for command in (["add", "x", "--meta"], ["search", "--filter"])
        ),
        (
            ["add", "--json", _LONG],
            f"lionmem add: --json: CONTENT holds an integer of more than 4300 digits, {_UNREAD}",
        ),
    ],
)  # fmt: skip
def test_bad_key_json(tmp_path: Path, args: list[str], message: str) -> None:
    """A ``KEY=JSON`` argument without ``=`` or with a value that is not JSON: a broken list,
    object or string is named as invalid JSON with where it breaks; other text gets the quoted
    form to write instead (quoted for JSON and the shell); an integer longer than Python reads
    is named as such (in ``--json`` too)."""
    (tmp_path / "memory.db").touch()
    assert one_line_error(lionmem(*args, cwd=tmp_path), "") == message


def test_usage_errors_exit_2_with_argparse_usage(tmp_path: Path) -> None:
    """An unknown command or option is argparse's usage message and exit 2."""
    result = lionmem("frobnicate", cwd=tmp_path)
    assert result.status == 2
    assert "invalid choice: 'frobnicate'" in result.stderr
    assert result.stderr.startswith("usage: lionmem ")


@pytest.mark.parametrize(
    ("arguments", "usage"),
    [
        (
            ["export", "--bogus"],
            "usage: lionmem export [-h] [--out FILE] [--db PATH|URL] [--namespace NAME]",
        ),
        (["count", "extra"], "usage: lionmem count [-h] [--db PATH|URL] [--namespace NAME]"),
    ],
)
def test_an_argument_a_command_does_not_take_is_told_with_its_usage(
    tmp_path: Path, arguments: list[str], usage: str
) -> None:
    """An option or value after a command that the command does not take is reported with that
    command's usage and name, as a value it refuses is, not with the top-level usage."""
    result = lionmem(*arguments, cwd=tmp_path)
    assert (result.status, result.stdout, result.stderr.splitlines()) == (
        2,
        "",
        [usage, f"lionmem {arguments[0]}: error: unrecognized arguments: {arguments[1]}"],
    )


def test_an_option_before_the_command_is_told_with_the_top_level_usage(tmp_path: Path) -> None:
    """An option given before the command's name is lionmem's own, not the command's."""
    result = lionmem("--bogus", "count", cwd=tmp_path)
    assert (result.status, result.stderr.splitlines()) == (
        2,
        [
            "usage: lionmem [-h] [--version] COMMAND ...",
            "lionmem: error: unrecognized arguments: --bogus",
        ],
    )


def test_postgres_store_missing_from_this_lionmem(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A postgresql:// address where lionmem.stores.postgres cannot be imported says so."""
    monkeypatch.setitem(sys.modules, "lionmem.stores.postgres", None)
    status = main(["count", "--db", "postgresql://me:secret@127.0.0.1:9/db"])
    captured = capsys.readouterr()
    assert (status, captured.out, captured.err) == (
        2,
        "",
        "lionmem count: this lionmem has no PostgreSQL store (lionmem.stores.postgres is missing)\n",
    )


def test_an_unreachable_server(tmp_path: Path) -> None:
    """A server nobody listens for is one line (password hidden), exit 2, no traceback."""
    result = lionmem(
        "count", "--db", "postgresql://me:secret@127.0.0.1:9/db", cwd=tmp_path, timeout=120
    )
    line = one_line_error(result, "lionmem count: ")
    assert "secret" not in line
    assert "127.0.0.1" in line


def test_an_unreachable_server_with_the_password_as_a_parameter(tmp_path: Path) -> None:
    """A password given as ``?password=`` is hidden too."""
    dsn = "postgresql://me@127.0.0.1:9/db?password=hunter2"
    result = lionmem("count", "--db", dsn, cwd=tmp_path, timeout=120)
    line = one_line_error(result, "lionmem count: cannot open postgresql://me@127.0.0.1:9/db")
    assert "hunter2" not in line
    assert "?password=***" in line


def test_the_table_without_the_cli_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """On a terminal without rich installed, ``search`` names the extra to install."""

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.chdir(tmp_path)
    assert main(["add", "x"]) == 0
    capsys.readouterr()
    monkeypatch.setitem(sys.modules, "rich", None)
    monkeypatch.setattr(sys, "stdout", Terminal())
    assert main(["search"]) == 2
    assert capsys.readouterr().err == (
        "lionmem search: this command needs the 'cli' extra: pip install 'lionmem[cli]'\n"
    )


def test_validate_without_the_cli_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without jsonschema installed, ``validate`` names the extra to install."""
    (tmp_path / "a.json").write_text("{}")
    monkeypatch.setitem(sys.modules, "jsonschema", None)
    assert main(["validate", str(tmp_path / "a.json")]) == 2
    assert capsys.readouterr().err == (
        "lionmem validate: this command needs the 'cli' extra: pip install 'lionmem[cli]'\n"
    )


def test_import_lionmem_imports_no_terminal_library() -> None:
    """``import lionmem`` (and its stores) imports neither rich nor jsonschema nor the CLI."""
    import subprocess

    code = (
        "import sys, lionmem; lionmem.SQLiteMemoryStore; lionmem.MemoryItem; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('rich', 'jsonschema') "
        "or m.startswith('lionmem.cli')))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout == "[]\n"


def test_import_and_export_work_without_the_cli_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without rich, a big import on a terminal simply draws no progress bar."""

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.chdir(tmp_path)
    monkeypatch.setitem(sys.modules, "rich", None)
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert main(["import", str(SAMPLE)]) == 0
    assert capsys.readouterr().out == f"imported 3000 items from {SAMPLE}\n"
    assert terminal.getvalue() == ""
    assert main(["export", "--out", "e.jsonl"]) == 0
    assert (tmp_path / "e.jsonl").read_bytes() == SAMPLE.read_bytes()


def _run_into(
    stdout: Path | None, *args: str | Path, cwd: Path, file_limit: int | None = None
) -> Result:
    """Run the console script with stdout written to ``stdout`` (a file or device), stderr
    piped, and at most ``file_limit`` bytes per file written (``ulimit -f``) if given."""

    def limit() -> None:
        if file_limit is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (file_limit, file_limit))

    env = clean_env()
    if file_limit is not None:  # a measuring coverage could not write its own data file either
        env = {key: value for key, value in env.items() if not key.startswith("COVERAGE_")}
    with open(stdout or os.devnull, "wb") as out:
        done = subprocess.run(
            [str(LIONMEM), *map(str, args)],
            stdout=out,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env=env,
            preexec_fn=limit,
            timeout=120,
            check=False,
        )
    return Result(done.returncode, "", done.stderr.decode("utf-8"))


@pytest.mark.parametrize(
    "command",
    [["count"], ["search"], ["export"], ["get", "094546ce-1f76-463f-8330-df68e52fec14"]],
)
def test_a_full_disk_under_standard_output(sample_db: Path, command: list[str]) -> None:
    """Output that cannot be written (``> /dev/full``) is one line naming why, and exit 2."""
    result = _run_into(Path("/dev/full"), *command, "--db", sample_db, cwd=sample_db.parent)
    assert one_line_error(result, "") == f"lionmem {command[0]}: No space left on device"


@pytest.mark.parametrize("arguments", [["--help"], ["--version"], ["import", "--help"]])
def test_help_and_version_that_cannot_be_written_say_so(
    tmp_path: Path, arguments: list[str]
) -> None:
    """The help or the version written to a full disk is one line naming why, and exit 2, not
    an exit 0 with nothing written; the same to the null device is written and ends 0."""
    result = _run_into(Path("/dev/full"), *arguments, cwd=tmp_path)
    assert (
        one_line_error(result, "") == "lionmem: writing the output failed: No space left on device"
    )
    assert _run_into(Path(os.devnull), *arguments, cwd=tmp_path) == Result(0, "", "")


def test_a_full_disk_under_the_report_of_a_write_says_the_write_was_done(tmp_path: Path) -> None:
    """When stdout cannot take the line reporting a write, the message says the write was done
    (so that it is not done again) and what was lost; exit 2."""
    source = tmp_path / "two.jsonl"
    source.write_text('{"content": "a"}\n{"content": "b"}\n')
    full = Path("/dev/full")
    imported = _run_into(full, "import", source, "--db", "m.db", cwd=tmp_path)
    assert one_line_error(imported, "") == (
        f"lionmem import: imported 2 items from {source}, but standard output could not take "
        "this line: No space left on device"
    )
    added = _run_into(full, "add", "note", "--db", "m.db", cwd=tmp_path)
    line = one_line_error(added, "")
    stored = re.fullmatch(
        r"lionmem add: stored (\S+), but standard output could not take its id: "
        "No space left on device",
        line,
    )
    assert stored is not None, line
    deleted = _run_into(full, "delete", stored[1], "--db", "m.db", cwd=tmp_path)
    assert one_line_error(deleted, "") == (
        f"lionmem delete: deleted {stored[1]}, but standard output could not take this line: "
        "No space left on device"
    )
    assert lionmem("count", "--db", "m.db", cwd=tmp_path).stdout == "2\n"


def test_a_full_disk_under_the_conformance_table_keeps_the_json_report(tmp_path: Path) -> None:
    """``conformance --json`` writes its report before the table, so a table that cannot be
    printed loses no report."""
    result = _run_into(
        Path("/dev/full"),
        "conformance",
        "lionmem.conformance.fake:FakeHarness",
        "--case",
        "limit_zero_without_io",
        "--json",
        "r.json",
        cwd=tmp_path,
    )
    assert one_line_error(result, "") == "lionmem conformance: No space left on device"
    report = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert [(r["case"], r["status"]) for r in report["results"]] == [
        ("limit_zero_without_io", "passed")
    ]


@pytest.mark.parametrize("command", [["search", "--limit", "3000"], ["export"]])
def test_a_non_blocking_standard_output_is_waited_for(sample_db: Path, command: list[str]) -> None:
    """A pipe its reader made non-blocking, read late: the command waits while it is full and
    writes every byte, as to a blocking pipe."""
    read_end, write_end = os.pipe()
    os.set_blocking(write_end, False)
    with open(read_end, "rb") as reader:
        process = subprocess.Popen(
            [str(LIONMEM), *command, "--db", str(sample_db)],
            stdout=write_end,
            stderr=subprocess.PIPE,
            cwd=sample_db.parent,
            env=clean_env(),
        )
        os.close(write_end)
        time.sleep(0.5)  # the output is larger than the pipe: the command finds it full
        data = reader.read()
        stderr = process.communicate(timeout=120)[1]
    assert (process.returncode, stderr) == (0, b"")
    assert data == SAMPLE.read_bytes()


@pytest.mark.parametrize(
    ("command", "limit"),
    [
        (["search", "--limit", "3000"], 100_000),
        (["export"], 600_000),  # inside the last page of the export
        (["schema", "memory_item"], 100),
    ],
)
def test_standard_output_over_the_size_limit_is_one_line(
    tmp_path: Path, sample_db: Path, command: list[str], limit: int
) -> None:
    """Output that one large write takes only in part (a file-size limit reached in the middle
    of it) is an error, not a short file and exit 0."""
    store = [] if command[0] == "schema" else ["--db", str(sample_db)]
    result = _run_into(tmp_path / "out", *command, *store, cwd=tmp_path, file_limit=limit)
    assert one_line_error(result, "") == f"lionmem {command[0]}: File too large"
    assert (tmp_path / "out").stat().st_size == limit


def test_an_export_file_over_the_size_limit_is_one_line_and_removed(
    tmp_path: Path, sample_db: Path
) -> None:
    """``export --out`` that hits the file-size limit names the file, exits 2, leaves no file."""
    result = _run_into(
        None, "export", "--db", sample_db, "--out", "e.jsonl", cwd=tmp_path, file_limit=100_000
    )
    assert one_line_error(result, "") == (
        "lionmem export: --out e.jsonl: cannot write it (File too large)"
    )
    assert not (tmp_path / "e.jsonl").exists()


def test_files_the_schema_and_conformance_commands_cannot_write(tmp_path: Path) -> None:
    """``schema --out`` naming a file, and ``conformance --json`` naming a directory or a file in
    a directory that does not exist, are one line each naming the path; the suite does not run
    for a report it could not write."""
    (tmp_path / "taken").write_text("a file\n", encoding="utf-8")
    schema = lionmem("schema", "--out", "taken", cwd=tmp_path)
    report = lionmem(
        "conformance",
        "lionmem.conformance.fake:FakeHarness",
        "--case",
        "protocols",
        "--json",
        tmp_path,
        cwd=tmp_path,
    )
    assert (schema.status, schema.stdout) == (2, "")
    assert schema.stderr == "lionmem schema: taken: File exists\n"
    assert (report.status, report.stdout) == (2, "")
    assert report.stderr == f"lionmem conformance: --json {tmp_path} is a directory, not a file\n"
    nowhere = lionmem(
        "conformance", "lionmem.conformance.fake:FakeHarness", "--json", "no/r.json", cwd=tmp_path
    )
    assert (nowhere.status, nowhere.stdout) == (2, "")
    assert nowhere.stderr == "lionmem conformance: --json no/r.json: there is no directory 'no'\n"


def test_the_suggested_text_form_is_the_text_given(tmp_path: Path) -> None:
    """Running the suggested ``KEY=JSON`` stores exactly the text that was typed."""
    typed = """it's "quoted" \\ text"""
    result = lionmem("add", "x", "--meta", f"k={typed}", "--db", "s.db", cwd=tmp_path)
    suggested = shlex.split(result.stderr.rsplit(" for example ", 1)[1])
    assert suggested[0] == "--meta"
    assert lionmem("add", "x", *suggested, "--db", "s.db", cwd=tmp_path).status == 0
    (stored,) = [
        json.loads(line)
        for line in lionmem("export", "--db", "s.db", cwd=tmp_path).stdout.splitlines()
    ]
    assert stored["metadata"] == {"k": typed}


def _closed(streams: str, *args: str, cwd: Path, stdin: bytes = b"") -> tuple[int, str, str]:
    """Run the console script with the shell's ``streams`` redirection (``>&-``, ``2>&-``);
    return its exit status, stdout and stderr."""
    command = ["sh", "-c", f'exec "$@" {streams}', "sh", str(LIONMEM), *args]
    done = subprocess.run(
        command, input=stdin, cwd=cwd, capture_output=True, env=clean_env(), check=False
    )
    return done.returncode, done.stdout.decode("utf-8"), done.stderr.decode("utf-8")


@pytest.mark.parametrize(
    "command",
    [
        ["count"],
        ["search"],
        ["get", "094546ce-1f76-463f-8330-df68e52fec14"],
        ["delete", "094546ce-1f76-463f-8330-df68e52fec14"],
        ["add", "x"],
        ["import", "-"],
        ["validate", str(SAMPLE)],
    ],
)
def test_a_closed_standard_output_is_refused_before_the_work(
    tmp_path: Path, sample_db: Path, command: list[str]
) -> None:
    """Started with standard output closed, a command that prints its result refuses before
    doing anything (no item added, imported or deleted, whose confirmation would be lost)."""
    shutil.copyfile(sample_db, tmp_path / "s.db")
    before = (tmp_path / "s.db").read_bytes()
    status, stdout, stderr = _closed(
        ">&-",
        *command,
        *([] if command[0] == "validate" else ["--db", "s.db"]),
        cwd=tmp_path,
        stdin=SAMPLE.read_bytes(),
    )
    assert (status, stdout, stderr) == (
        2,
        "",
        f"lionmem {command[0]}: standard output is closed: redirect it "
        "(to /dev/null to drop what the command prints)\n",
    )
    assert (tmp_path / "s.db").read_bytes() == before
    assert sorted(path.name for path in tmp_path.iterdir()) == ["s.db"]


def test_a_command_writing_to_out_works_with_standard_output_closed(
    tmp_path: Path, sample_db: Path
) -> None:
    """``--out`` carries the data: only the closing summary line has nowhere to go."""
    status, stdout, stderr = _closed(
        ">&-", "export", "--db", str(sample_db), "--out", "e.jsonl", cwd=tmp_path
    )
    assert (status, stdout, stderr) == (0, "", "")
    assert (tmp_path / "e.jsonl").read_bytes() == SAMPLE.read_bytes()


def test_messages_never_go_to_standard_output_when_stderr_is_closed(tmp_path: Path) -> None:
    """Started with stderr closed, an error is not written into the data on stdout."""
    assert _closed("2>&-", "count", "--db", "nope.db", cwd=tmp_path) == (2, "", "")
    (tmp_path / "bad.jsonl").write_text('{"content": 1, "tags": 3}\n', encoding="utf-8")
    assert _closed("2>&-", "import", "bad.jsonl", "--db", "b.db", cwd=tmp_path) == (1, "", "")


@pytest.mark.parametrize("command", [["add", "x"], ["import", str(SAMPLE)], ["count"], ["export"]])
def test_an_in_memory_database_is_refused(tmp_path: Path, command: list[str]) -> None:
    """``:memory:`` (given, or from ``$LIONMEM_DB``) would lose what ``add`` or ``import``
    stores and show an empty store to the others: refused, nothing created."""
    given = lionmem(*command, "--db", ":memory:", cwd=tmp_path)
    from_env = lionmem(*command, cwd=tmp_path, env=clean_env(LIONMEM_DB=":memory:"))
    for result, option in ((given, "--db"), (from_env, "$LIONMEM_DB")):
        assert one_line_error(result, "") == (
            f"lionmem {command[0]}: {option} :memory: is a database that ends with the command: "
            "nothing stored in it is kept, nothing is found; give a file"
        )
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("kind", ["device", "pipe", "link to a device"])
def test_a_db_that_is_not_a_regular_file(tmp_path: Path, kind: str) -> None:
    """A device or a named pipe as ``--db`` is named as such, for reading and writing commands
    alike, and left as it is."""
    name = {"device": "/dev/null", "pipe": "fifo", "link to a device": "null.db"}[kind]
    if kind == "pipe":
        os.mkfifo(tmp_path / "fifo")
    if kind == "link to a device":
        (tmp_path / "null.db").symlink_to("/dev/null")
    before = sorted(path.name for path in tmp_path.iterdir())
    for command in (["add", "x"], ["count"]):
        result = lionmem(*command, "--db", name, cwd=tmp_path, timeout=30)
        assert one_line_error(result, "") == (
            f"lionmem {command[0]}: --db {name} is not a regular file; "
            "give the path of a database file"
        )
    assert sorted(path.name for path in tmp_path.iterdir()) == before


def test_file_names_that_are_not_utf8_are_shown_with_escapes(tmp_path: Path) -> None:
    """With stdout strictly UTF-8 (``PYTHONIOENCODING``, or a UTF-8 locale other than C), a
    file name that is not UTF-8 is shown with each such byte escaped (``\\xfe``) once the work
    is done, instead of a traceback."""
    name = os.fsdecode(b"\xfenotes.jsonl")
    shutil.copyfile(SAMPLE, tmp_path / name)
    env = clean_env(PYTHONIOENCODING="utf-8")
    results = [
        subprocess.run(
            [str(LIONMEM), *args], cwd=tmp_path, env=env, capture_output=True, check=False
        )
        for args in (
            ["import", name, "--db", "s.db"],
            ["export", "--db", "s.db", "--out", os.fsdecode(b"\xffcopy.jsonl")],
        )
    ]
    assert [(done.returncode, done.stdout, done.stderr) for done in results] == [
        (0, b"imported 3000 items from \\xfenotes.jsonl\n", b""),
        (0, b"exported 3000 items to \\xffcopy.jsonl\n", b""),
    ]
    assert (tmp_path / os.fsdecode(b"\xffcopy.jsonl")).read_bytes() == SAMPLE.read_bytes()


def test_schema_out_in_a_directory_not_utf8_prints_its_files_as_bytes(tmp_path: Path) -> None:
    """``schema --out`` prints the paths of the files it wrote, each a line for other commands
    to read: a directory name that is not UTF-8 is written as the bytes it is, with stdout
    strictly UTF-8 too, instead of a traceback."""
    folder = b"sch\xff"
    done = subprocess.run(
        [str(LIONMEM), "schema", "--out", os.fsdecode(folder)],
        cwd=tmp_path,
        env=clean_env(PYTHONIOENCODING="utf-8"),
        capture_output=True,
        check=False,
    )
    names = sorted(schemas())
    assert (done.returncode, done.stdout, done.stderr) == (
        0,
        b"".join(folder + b"/" + name.encode() + b".json\n" for name in names),
        b"",
    )
    assert sorted(os.listdir(tmp_path / os.fsdecode(folder))) == [f"{name}.json" for name in names]


_DEEP_JSON = "[" * 60_000 + "]" * 60_000  # deeper than json.loads can follow; fits in argv


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["add", "x", "--meta", f"k={_DEEP_JSON}"], "--meta k=...: the value after '=' is"),
        (["add", "--json", _DEEP_JSON], "--json: CONTENT is"),
        (["search", "--filter", f"k={_DEEP_JSON}"], "--filter k=...: the value after '=' is"),
    ],
)
def test_json_arguments_nested_too_deeply(tmp_path: Path, args: list[str], message: str) -> None:
    """A JSON argument deeper than the parser follows is one line (without the value), and
    nothing is stored."""
    result = lionmem(*args, "--db", "t.db", cwd=tmp_path)
    assert one_line_error(result, "") == (
        f"lionmem {args[0]}: {message} JSON nested too deeply to read"
    )
    assert list(tmp_path.iterdir()) == []


def test_file_names_with_terminal_escapes_are_shown_as_escapes(tmp_path: Path) -> None:
    """A file name holding a line break, a terminal's escape sequence or a bidirectional
    control is written with escapes in errors, summaries and validate's report (an error is
    one line: its line breaks, as any white space, are spaces)."""
    name = "e\x1b]0;PWNED\x07\n\u202e.jsonl"
    shown = r"e\x1b]0;PWNED\x07\x0a\u202e.jsonl"
    missing = lionmem("import", name, "--db", "t.db", cwd=tmp_path)
    assert one_line_error(missing, "") == (
        r"lionmem import: e\x1b]0;PWNED\x07 \u202e.jsonl: no such file"
    )
    (tmp_path / name).write_text('{"content": "x", "tags": [1]}\n', encoding="utf-8")
    checked = lionmem("validate", name, cwd=tmp_path)
    assert (checked.status, checked.stdout.splitlines()) == (
        1,
        [
            f"{shown}:1: $.tags[0]: 1 is not of type 'string'",
            f"{shown}: 1 document, 1 invalid (memory_item)",
        ],
    )
    (tmp_path / name).write_text('{"content": "x"}\n', encoding="utf-8")
    imported = lionmem("import", name, "--db", "t.db", cwd=tmp_path)
    exported = lionmem("export", "--db", "t.db", "--out", name, cwd=tmp_path)
    assert (imported.status, imported.stdout) == (0, f"imported 1 item from {shown}\n")
    assert (exported.status, exported.stdout) == (0, f"exported 1 item to {shown}\n")


def _ascii_run(*args: str, cwd: Path) -> subprocess.CompletedProcess[bytes]:
    """Run the console script with stdout and stderr in ASCII (``PYTHONIOENCODING=ascii``)."""
    return subprocess.run(
        [str(LIONMEM), *args],
        cwd=cwd,
        env=clean_env(PYTHONIOENCODING="ascii"),
        capture_output=True,
        check=False,
    )


def test_summaries_a_stdout_cannot_encode_are_written_with_escapes(tmp_path: Path) -> None:
    """With stdout in an encoding that lacks a character of a file name (ASCII), the import
    and export summaries write it as its escape once the work is done; the JSON Lines are UTF-8
    as always, and messages on stderr are escaped the same way."""
    shutil.copyfile(SAMPLE, tmp_path / "ünï.jsonl")
    imported = _ascii_run("import", "ünï.jsonl", "--db", "s.db", cwd=tmp_path)
    exported = _ascii_run("export", "--db", "s.db", "--out", "köpie→.jsonl", cwd=tmp_path)
    piped = _ascii_run("export", "--db", "s.db", cwd=tmp_path)
    missing = _ascii_run("import", "nöpe.jsonl", "--db", "s.db", cwd=tmp_path)
    assert [(done.returncode, done.stdout, done.stderr) for done in (imported, exported)] == [
        (0, b"imported 3000 items from \\xfcn\\xef.jsonl\n", b""),
        (0, b"exported 3000 items to k\\xf6pie\\u2192.jsonl\n", b""),
    ]
    assert (tmp_path / "köpie→.jsonl").read_bytes() == SAMPLE.read_bytes()
    assert (piped.returncode, piped.stdout, piped.stderr) == (0, SAMPLE.read_bytes(), b"")
    assert (missing.returncode, missing.stdout, missing.stderr) == (
        2,
        b"",
        b"lionmem import: n\\xf6pe.jsonl: no such file\n",
    )


def test_schema_out_escapes_what_stdout_cannot_encode_and_keeps_bytes_not_text(
    tmp_path: Path,
) -> None:
    """In one path printed by ``schema --out``, a character an ASCII stdout lacks is its
    escape, and a byte of the name that is not UTF-8 is written as that byte."""
    folder = "ü" + os.fsdecode(b"\xff")
    done = _ascii_run("schema", "memory_item", "--out", folder, cwd=tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (
        0,
        b"\\xfc\xff/memory_item.json\n",
        b"",
    )


def _names_a_directory(given: str, ending: str, kind: str) -> str:
    return f"{given} ends in '{ending}', so it names a directory; give the path of a {kind}"


_SLASH = "ends in '/', so it names a directory; give the path of a"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["export", "--db", "s.db", "--out", "backups/"], f"--out backups/ {_SLASH} file"),
        (["export", "--db", "s.db", "--out", "e.jsonl/"], f"--out e.jsonl/ {_SLASH} file"),
        (["add", "x", "--db", "newdir/"], f"--db newdir/ {_SLASH} database file"),
        (["count", "--db", "s.db/"], f"--db s.db/ {_SLASH} database file"),
        (["import", "e.jsonl/", "--db", "s.db"], f"e.jsonl/ {_SLASH} JSON Lines file"),
        (["validate", "e.jsonl/"], f"e.jsonl/ {_SLASH} JSON file"),
        (
            ["conformance", "lionmem.conformance.fake:FakeHarness", "--json", "rep/"],
            f"--json rep/ {_SLASH} file",
        ),
        (
            ["export", "--db", "s.db", "--out", "backups/."],
            _names_a_directory("--out backups/.", "/.", "file"),
        ),
        (
            ["export", "--db", "s.db", "--out", "e.jsonl/.."],
            _names_a_directory("--out e.jsonl/..", "/..", "file"),
        ),
        (
            ["add", "x", "--db", "newdir/."],
            _names_a_directory("--db newdir/.", "/.", "database file"),
        ),
        (
            ["add", "x", "--db", "newdir/.."],
            _names_a_directory("--db newdir/..", "/..", "database file"),
        ),
        (["count", "--db", "s.db/."], _names_a_directory("--db s.db/.", "/.", "database file")),
        (
            ["import", "e.jsonl/.", "--db", "s.db"],
            _names_a_directory("e.jsonl/.", "/.", "JSON Lines file"),
        ),
        (["validate", "e.jsonl/.."], _names_a_directory("e.jsonl/..", "/..", "JSON file")),
        (
            ["conformance", "lionmem.conformance.fake:FakeHarness", "--json", "rep/."],
            _names_a_directory("--json rep/.", "/.", "file"),
        ),
        (
            ["conformance", "lionmem.conformance.fake:FakeHarness", "--json", "."],
            "--json . is a directory, not a file",
        ),
        (
            ["conformance", "lionmem.conformance.fake:FakeHarness", "--json", ".."],
            "--json .. is a directory, not a file",
        ),
        (["export", "--db", "s.db", "--out", ".."], "--out .. is a directory, not a file"),
        (["validate", "."], ". is a directory, not a JSON file"),
        (["import", ""], "the file name is empty: give the path of a JSON Lines file"),
        (["validate", ""], "the file name is empty: give the path of a JSON file"),
        (["export", "--db", "s.db", "--out", ""], "--out is empty: give the path of a file"),
        (
            ["conformance", "lionmem.conformance.fake:FakeHarness", "--json", ""],
            "--json is empty: give the path of a file",
        ),
    ],
)
def test_a_file_path_that_names_a_directory_is_refused(
    tmp_path: Path, args: list[str], message: str
) -> None:
    """A file path ending in '/', '/.' or '/..', or that is '.' or '..', names a directory, as
    POSIX tools read it, and an empty one would name the working directory: refused with one
    line, exit 2, and no file is created, replaced or read in place of the one meant."""
    assert lionmem("add", "kept", "--db", "s.db", cwd=tmp_path).status == 0
    assert lionmem("export", "--db", "s.db", "--out", "e.jsonl", cwd=tmp_path).status == 0
    before = {path.name: path.read_bytes() for path in tmp_path.iterdir()}
    result = lionmem(*args, cwd=tmp_path)
    assert one_line_error(result, "") == f"lionmem {args[0]}: {message}"
    assert {path.name: path.read_bytes() for path in tmp_path.iterdir()} == before
