"""The README's SQLiteMemoryStore example runs and prints what its trailing comments show."""

from __future__ import annotations

from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[3] / "README.md"


def test_readme_sqlite_example_prints_what_it_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The example stores, searches, reopens the file and prints the three commented lines."""
    section = README.read_text(encoding="utf-8").split("## Durable memory: `SQLiteMemoryStore`", 1)[
        1
    ]
    block = section.split("```python\n", 1)[1].split("```", 1)[0]
    monkeypatch.chdir(tmp_path)  # the example writes memory.db in the current directory
    exec(compile(block, "README.md", "exec"), {"__name__": "readme"})
    shown = [line[2:] for line in block.splitlines() if line.startswith("# ")]
    assert capsys.readouterr().out.splitlines() == shown
    assert len(shown) == 3
