"""The performance page shows the published InMemoryStore run: its tables and memory figures are
copied from docs/perf/results.md, line for line, and name the same run."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "performance.md"
RESULTS = ROOT / "docs" / "perf" / "results.md"


def in_memory_section() -> str:
    """The page's text from its ``InMemoryStore`` heading to the next heading of that level."""
    text = PAGE.read_text(encoding="utf-8")
    return text.split("\n## `InMemoryStore`\n", 1)[1].split("\n## ", 1)[0]


def tables(text: str) -> list[str]:
    """Each run of consecutive ``|`` lines, joined."""
    found: list[list[str]] = []
    previous = ""
    for line in text.splitlines():
        if line.startswith("|"):
            if not previous.startswith("|"):
                found.append([])
            found[-1].append(line)
        previous = line
    return ["\n".join(table) for table in found]


def test_every_table_of_the_section_is_a_table_of_the_published_run() -> None:
    published = tables(RESULTS.read_text(encoding="utf-8"))
    shown = tables(in_memory_section())
    assert len(shown) >= 3
    assert [table for table in shown if table not in published] == []


def test_memory_figures_are_the_published_ones_at_100000_items() -> None:
    published = RESULTS.read_text(encoding="utf-8").split("### N = 100,000\n", 1)[1]
    published = published.split("\n### ", 1)[0]
    memory = [line for line in in_memory_section().splitlines() if line.startswith("Memory per")]
    assert len(memory) == 1
    assert memory[0] in published.splitlines()


def test_tables_splits_on_gaps() -> None:
    assert tables("a\n| x |\n| y |\n\n| z |\nb") == ["| x |\n| y |", "| z |"]
