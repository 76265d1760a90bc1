"""Output to a pipe or terminal that another process sharing it made non-blocking, full when the
command writes: the command waits until it is read, and every byte arrives as it would through
a blocking one, with the same exit status."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from tests.cli.conftest import SAMPLE
from tests.cli.support import lionmem, on_terminal, through_full_pipe

ITEM = "094546ce-1f76-463f-8330-df68e52fec14"
# Three problems a line (the unknown field, id, created_at): far more than a pipe holds.
INVALID = "".join(
    json.dumps({"id": "nope", "created_at": "x", "unknown": number}) + "\n"
    for number in range(2000)
)

# Checked in a moment: a command here writes well before the pipe is read.
VALID = "".join(SAMPLE.read_text(encoding="utf-8").splitlines(keepends=True)[:50])


@pytest.mark.parametrize(
    ("command", "status"),
    [
        (["validate", "invalid.jsonl"], 1),
        (["validate", "valid.jsonl"], 0),
        (["count", "--db", "s.db"], 0),
        (["delete", ITEM, "--db", "s.db"], 0),
        (["import", str(SAMPLE), "--db", "new.db"], 0),
        (["export", "--db", "s.db", "--out", "e.jsonl"], 0),
        (["schema"], 0),
        (["schema", "--out", "schemas"], 0),
        (["conformance", "lionmem.conformance.fake:FakeHarness"], 0),
    ],
)
def test_text_output_to_a_full_non_blocking_pipe_arrives_whole(
    tmp_path: Path, sample_db: Path, command: list[str], status: int
) -> None:
    """Report lines, summaries and the conformance table: the same lines and exit status as
    through a blocking pipe, and nothing on stderr."""
    results = []
    for run in (lionmem, through_full_pipe):
        folder = tmp_path / run.__name__
        folder.mkdir()
        shutil.copyfile(sample_db, folder / "s.db")
        (folder / "invalid.jsonl").write_text(INVALID, encoding="utf-8")
        (folder / "valid.jsonl").write_text(VALID, encoding="utf-8")
        results.append(run(*command, cwd=folder))
    blocking, full = results
    assert (blocking.status, blocking.stderr) == (status, "")
    assert blocking.stdout.endswith("\n")
    assert full == blocking


def test_validate_reports_every_problem_to_a_full_non_blocking_pipe(tmp_path: Path) -> None:
    (tmp_path / "invalid.jsonl").write_text(INVALID, encoding="utf-8")
    result = through_full_pipe("validate", "invalid.jsonl", cwd=tmp_path)
    *problems, summary = result.stdout.splitlines()
    assert (result.status, result.stderr) == (1, "")
    assert len(problems) == 3 * 2000
    assert problems[-3:] == [
        "invalid.jsonl:2000: $: Unevaluated properties are not allowed ('unknown' was unexpected)",
        "invalid.jsonl:2000: $.id: 'nope' is not a 'uuid'",
        "invalid.jsonl:2000: $.created_at: 'x' is not of type 'number'",
    ]
    assert summary == "invalid.jsonl: 2000 documents, 2000 invalid (memory_item)"


def test_add_prints_the_id_to_a_full_non_blocking_pipe(tmp_path: Path) -> None:
    result = through_full_pipe("add", "x", "--db", "t.db", cwd=tmp_path)
    assert (result.status, result.stderr) == (0, "")
    assert re.fullmatch(
        r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}\n", result.stdout
    )
    assert lionmem("count", "--db", "t.db", cwd=tmp_path).stdout == "1\n"


@pytest.mark.parametrize(
    "command",
    [
        ["search", "--limit", "3000"],
        ["get", ITEM],
        ["count"],
        ["search", "--text", "no such words"],
    ],
)
def test_tables_to_a_full_non_blocking_terminal_arrive_whole(
    sample_db: Path, command: list[str]
) -> None:
    """The table of items, one item's fields and the count on a terminal that is full: what a
    blocking terminal shows, line for line."""
    args = [*command, "--db", str(sample_db)]
    blocking = on_terminal(*args, cwd=sample_db.parent, columns=120)
    full = on_terminal(*args, cwd=sample_db.parent, columns=120, full=True)
    assert blocking.status == 0
    assert blocking.stdout.endswith("\n")
    assert full == blocking
