"""`make demo`: the main job on real data, through the `lionmem` command, printed as it runs.

It validates the shipped sample (examples/notes.jsonl, 3,000 varied items) and a file with bad
lines, shows that a bad line aborts an import with nothing written, imports the sample into a
SQLite file, searches it several ways, exports it, imports the export into a second file,
exports that and compares the bytes with the first export and with the sample. Every step is
the command a person would type; its output is shown as it comes (tables on a terminal, JSON
Lines when piped). The files stay in demo-output/ to explore. Exit 1 if any step misbehaves.

Usage: python tools/demo.py [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "examples" / "notes.jsonl"
MIXED = ROOT / "examples" / "mixed.jsonl"


class DemoFailed(Exception):
    """A step gave another exit status or output than the demo expects."""


def _command() -> list[str]:
    script = Path(sys.executable).parent / "lionmem"
    return [str(script)] if script.exists() else [sys.executable, "-m", "lionmem"]


def _show(title: str) -> None:
    print(f"\n== {title}", flush=True)


def _shown(path: Path) -> str:
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def run(*args: str | Path, expect: int = 0, capture: bool = False) -> str:
    """Run one lionmem command, print it and its output; return stdout when captured."""
    words = [a if isinstance(a, str) else _shown(a) for a in args]
    print(f"$ lionmem {shlex.join(words)}", flush=True)
    started = time.perf_counter()
    completed = subprocess.run(
        [*_command(), *words], stdout=subprocess.PIPE if capture else None, text=True, check=False
    )
    elapsed = time.perf_counter() - started
    if completed.returncode != expect:
        msg = f"lionmem {shlex.join(words)} exited {completed.returncode}, expected {expect}"
        raise DemoFailed(msg)
    if capture:
        sys.stdout.write(completed.stdout)
    print(f"  (exit {completed.returncode}, {elapsed:.2f} s)", flush=True)
    return completed.stdout if capture else ""


def demo(out: Path) -> None:
    """Run every step in ``out`` (emptied first)."""
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    notes, copy = out / "notes.db", out / "copy.db"
    first, second = out / "export.jsonl", out / "copy-export.jsonl"
    sample_lines = SAMPLE.read_text(encoding="utf-8").count("\n")

    _show("Check documents against the shipped JSON schema (each problem: line and JSON path)")
    run("validate", SAMPLE, MIXED, expect=1)

    _show("Import is all or nothing: a bad line aborts it and nothing is written")
    run("import", MIXED, "--db", notes, expect=1)
    if run("count", "--db", notes, capture=True).strip() != "0":
        raise DemoFailed("the failed import left items behind")

    _show(f"Import the sample ({sample_lines:,} items) in one transaction")
    run("import", SAMPLE, "--db", notes)
    if run("count", "--db", notes, capture=True).strip() != str(sample_lines):
        raise DemoFailed("the store does not hold every line of the sample")

    _show("Search: text (any case, inside str(content)), tags (any of), metadata filters (all)")
    print("  (the text is compared after str.lower(), not casefold(): STRASSE is not straße)")
    run("search", "--db", notes, "--text", "STRASSE", "--limit", "3")
    run("search", "--db", notes, "--text", "STRAßE", "--limit", "3")
    run("search", "--db", notes, "--tag", "music", "--tag", "finance", "--limit", "3")
    run("search", "--db", notes, "--filter", 'lang="tr"', "--filter", "stars=5", "--limit", "3")
    run("search", "--db", notes, "--text", "kyoto", "--tag", "food", "--limit", "3")
    found = run("search", "--db", notes, "--text", "°C", "--limit", "1", "--json", capture=True)
    item_id = json.loads(found)["id"]
    run("get", item_id, "--db", notes)

    _show("Export, import the export into a second store, export that, and compare")
    run("export", "--db", notes, "--out", first)
    run("import", first, "--db", copy)
    run("export", "--db", copy, "--out", second)
    exported, again = first.read_bytes(), second.read_bytes()
    if exported != again:
        raise DemoFailed(f"{_shown(first)} and {_shown(second)} differ")
    if exported != SAMPLE.read_bytes():
        raise DemoFailed(f"{_shown(first)} differs from {_shown(SAMPLE)}")
    print(
        f"  the two exports and the sample are the same {len(exported):,} bytes: every field of "
        f"every item came back exactly, in insertion order"
    )

    _show("--skip-invalid stores the good lines and reports each bad one (exit 1)")
    run("import", MIXED, "--db", copy, "--skip-invalid", expect=1)
    run("delete", item_id, "--db", copy)
    run("count", "--db", copy)

    _show("Done")
    command = " ".join(_shown(Path(word)) if "/" in word else word for word in _command())
    print(f"  the databases and exports are in {_shown(out)}/; try:")
    print(f"  {command} search --db {_shown(notes)} --text paris")


def main(argv: list[str] | None = None) -> int:
    """Run the demo; exit 1 with the reason if a step misbehaves."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--out", type=Path, default=Path("demo-output"), help="folder for the files made"
    )
    args = parser.parse_args(argv)
    try:
        demo(args.out.resolve())
    except DemoFailed as failure:
        print(f"demo failed: {failure}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
