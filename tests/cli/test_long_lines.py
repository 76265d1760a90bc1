"""Lines longer than the CLI holds: dropped and reported, read to their end in bounded memory."""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path

import pytest

from lionmem.cli import _lines, _validate, main
from lionmem.cli._lines import TOO_LONG, Lines, lines_of
from tests.cli.support import finished, lionmem, piped_import

CAP = 64


@pytest.fixture
def small_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    """A cap of 64 bytes, so that a test line can pass it."""
    monkeypatch.setattr(_lines, "MAX_LINE_BYTES", CAP)
    monkeypatch.setattr(_validate, "MAX_LINE_BYTES", CAP)


def split(chunks: list[bytes]) -> list[bytes | int]:
    lines = Lines()
    found = [line for chunk in chunks for line in lines.feed(chunk)]
    return found + list(lines.end())


@pytest.mark.usefixtures("small_cap")
def test_lines_are_cut_at_line_breaks_whatever_the_chunks() -> None:
    """Lines keep their line break; a last line without one still comes out; a line over the
    cap (its line break counted) is its length, the line at the cap whole."""
    at_cap = b"a" * (CAP - 1) + b"\n"
    over = b"b" * CAP + b"\n"
    text = b"one\n" + at_cap + over + b"two\nlast"
    expected = [b"one\n", at_cap, CAP + 1, b"two\n", b"last"]
    for size in (1, 3, 64, 1000):
        chunks = [text[start : start + size] for start in range(0, len(text), size)]
        assert split(chunks) == expected, size


@pytest.mark.usefixtures("small_cap")
def test_a_last_line_over_the_cap_without_a_line_break_is_its_length() -> None:
    """The end of the input ends a line too long to hold like a line break would."""
    assert split([b"ok\n", b"c" * (CAP + 1)]) == [b"ok\n", CAP + 1]


@pytest.mark.usefixtures("small_cap")
def test_lines_of_reads_a_line_over_the_cap_to_its_end_without_holding_it() -> None:
    """A read function is called until it gives nothing; what it gives past the cap is not kept."""
    sizes: list[int] = []
    source = [b"x" * 40] * 1000 + [b"\nafter\n"]

    def read(size: int) -> bytes:
        sizes.append(size)
        return source.pop(0) if source else b""

    assert list(lines_of(read, b"start:")) == [len("start:") + 40 * 1000 + 1, b"after\n"]
    assert len(sizes) == 1002


@pytest.mark.usefixtures("small_cap")
def test_validate_reports_a_line_over_the_cap_and_reads_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """In JSON Lines, and in a file of another name too long to be one document, a line over the
    cap is a problem of its own line; the lines after it are checked."""
    good = json.dumps({"content": "ok"}).encode() + b"\n"
    long = json.dumps({"content": "x" * CAP}).encode() + b"\n"
    for name in ("m.jsonl", "m.txt"):
        (tmp_path / name).write_bytes(good + long + b"bad\n")
        assert main(["validate", str(tmp_path / name)]) == 1
        out = capsys.readouterr().out.splitlines()
        place = str(tmp_path / name)
        assert out[0] == f"{place}:2: {TOO_LONG}"
        assert out[1].startswith(f"{place}:3: not JSON")
        assert out[2] == f"{place}: 3 documents, 2 invalid (memory_item)"


@pytest.mark.usefixtures("small_cap")
def test_validate_refuses_a_json_document_over_the_cap(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A ``.json`` file is one document: over the cap, it is one problem, not read as lines."""
    path = tmp_path / "m.json"
    path.write_text(json.dumps({"content": "x" * CAP}, indent=2))
    assert main(["validate", str(path)]) == 1
    assert capsys.readouterr().out.splitlines()[0] == f"{path}:1: {TOO_LONG}"


@pytest.mark.usefixtures("small_cap")
def test_import_skips_a_line_over_the_cap_or_stops_at_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """With --skip-invalid the line is reported and the others stored; without, nothing is."""
    path = tmp_path / "m.jsonl"
    lines = [{"content": "a"}, {"content": "x" * CAP}, {"content": "b"}]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    db = str(tmp_path / "m.db")
    assert main(["import", str(path), "--db", db]) == 1
    assert f"line 2: {TOO_LONG}" in capsys.readouterr().err
    assert main(["import", str(path), "--db", db, "--skip-invalid"]) == 1
    assert f"line 2: {TOO_LONG}" in capsys.readouterr().err
    assert main(["count", "--db", db]) == 0
    assert capsys.readouterr().out == "2\n"


@pytest.mark.slow
def test_import_of_an_endless_line_from_a_device_stops_on_sigterm(tmp_path: Path) -> None:
    """``import /dev/zero``-like input (bytes, never a line break) is read in bounded memory,
    and SIGTERM stops it at once, though no line ever ends."""
    with Path("/dev/zero").open("rb") as zeros:
        process = piped_import("z.db", tmp_path, stdin=zeros)
    time.sleep(2)
    process.send_signal(signal.SIGTERM)
    assert finished(process, timeout=20) == (143, b"", b"lionmem import: terminated\n")
    assert lionmem("count", "--db", "z.db", cwd=tmp_path).stdout == "0\n"  # nothing stored
