"""``python -m lionmem schema [NAME] [--out DIR]`` gives the shipped schema files, byte for byte."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import lionmem
from lionmem.__main__ import main


def _shipped(name: str) -> bytes:
    return lionmem.schema_path(name).read_bytes()


def test_name_prints_that_schema_file() -> None:
    """``schema memory_item`` writes the shipped file's exact bytes to stdout."""
    completed = subprocess.run(
        [sys.executable, "-m", "lionmem", "schema", "memory_item"],
        capture_output=True,
        check=True,
    )
    assert completed.stdout == _shipped("memory_item")


def test_name_may_carry_the_json_suffix(capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    """``schema memory_query.json`` prints the same file as ``schema memory_query``."""
    assert main(["schema", "memory_query.json"]) == 0
    assert capsysbinary.readouterr().out == _shipped("memory_query")


def test_without_name_lists_every_schema_name(capsys: pytest.CaptureFixture[str]) -> None:
    """``schema`` alone prints the names of all shipped schemas, one per line, sorted."""
    assert main(["schema"]) == 0
    assert capsys.readouterr().out == "".join(f"{name}\n" for name in sorted(lionmem.schemas()))


def test_out_writes_every_schema_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``schema --out DIR`` writes each shipped file as DIR/<name>.json with the same bytes."""
    assert main(["schema", "--out", str(tmp_path)]) == 0
    written = {path.stem: path.read_bytes() for path in tmp_path.iterdir()}
    assert written == {name: _shipped(name) for name in lionmem.schemas()}


def test_out_prints_the_paths_it_wrote(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``schema --out DIR`` prints each written path, one per line."""
    main(["schema", "--out", str(tmp_path)])
    expected = "".join(f"{tmp_path / name}.json\n" for name in sorted(lionmem.schemas()))
    assert capsys.readouterr().out == expected


def test_name_with_out_writes_only_that_schema(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``schema element --out DIR`` writes DIR/element.json and nothing else."""
    assert main(["schema", "element", "--out", str(tmp_path)]) == 0
    assert {path.name: path.read_bytes() for path in tmp_path.iterdir()} == {
        "element.json": _shipped("element")
    }


def test_out_creates_missing_folders(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--out`` creates the folder and its missing parents."""
    target = tmp_path / "a" / "b"
    main(["schema", "memory_item", "--out", str(target)])
    assert (target / "memory_item.json").read_bytes() == _shipped("memory_item")


def test_unknown_name_exits_2_naming_the_available_schemas(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """An unknown name prints nothing to stdout, explains on stderr and returns 2."""
    status = main(["schema", "memory_itme"])
    captured = capsys.readouterr()
    available = ", ".join(sorted(lionmem.schemas()))
    assert (status, captured.out, captured.err) == (
        2,
        "",
        f"python -m lionmem schema: no lionmem schema named 'memory_itme'; available: {available}\n",
    )


def test_unknown_name_with_out_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An unknown name with ``--out`` fails before creating the folder."""
    target = tmp_path / "out"
    assert (main(["schema", "nope", "--out", str(target)]), target.exists()) == (2, False)
