"""Write the sample data of examples/ (what `make demo` imports), or check it is current (--check).

examples/notes.jsonl holds SAMPLE_SIZE varied MemoryItem documents: notes in several languages,
travel plans, recipes, measurements, lists, numbers and nulls as content; tags from a few topics;
metadata with text, numbers, booleans, nulls and nested values. examples/mixed.jsonl holds a few
good documents and a few bad ones (a tag that is a number, an unknown field, an id that is not a
UUID, a line that is not JSON). Both come from one seeded random generator, so the bytes are the
same on every run; each line is the item's ``model_dump_json()``, which `lionmem export` writes.

Usage: python tools/make_sample.py [--check]
"""

from __future__ import annotations

import argparse
import random
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from uuid import UUID

from lionmem import MemoryItem

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
SAMPLE_SIZE = 3000
SEED = 20260101
START = 1_767_225_600.0  # 2026-01-01T00:00:00Z

CITIES = ["Paris", "İstanbul", "Lyon", "Kyoto", "São Paulo", "Zürich", "Kraków", "Reykjavík"]
WORDS = [
    "flight",
    "hotel",
    "museum",
    "train",
    "market",
    "dinner",
    "meeting",
    "deadline",
    "invoice",
    "garden",
    "library",
    "concert",
    "dentist",
    "birthday",
    "report",
    "budget",
    "ticket",
    "coffee",
]
PHRASES = [
    ("en", "Remember to book the {w} in {c}"),
    ("en", "The {w} in {c} was better than expected"),
    ("de", "Die Straße zum {w} in {c} ist gesperrt"),
    ("fr", "Réserver le {w} à {c} avant vendredi"),
    ("tr", "{c} için {w} planı hazır"),  # noqa: RUF001 - the Turkish dotless i is meant
    ("ja", "{c}の{w}は明日です"),
    ("es", "El {w} de {c} empieza a las ocho"),
]
TOPICS = ["travel", "work", "food", "health", "family", "finance", "music", "todo", "idea", "geo"]
SOURCES = ["chat", "email", "calendar", "web", "import", None]
DISHES = ["quenelles", "börek", "ramen", "pão de queijo", "fondue", "pierogi"]


def _uuid(rng: random.Random) -> str:
    return str(UUID(int=rng.getrandbits(128), version=4))


def _content(rng: random.Random, index: int) -> tuple[Any, str]:
    """Return a content value and its language."""
    city, word = rng.choice(CITIES), rng.choice(WORDS)
    kind = rng.random()
    if kind < 0.55:
        lang, pattern = rng.choice(PHRASES)
        return pattern.format(w=word, c=city), lang
    if kind < 0.70:
        return {"city": city, "dish": rng.choice(DISHES), "rating": rng.randint(1, 5)}, "en"
    if kind < 0.80:
        return [word, city, rng.randint(0, 1000), rng.random() < 0.5], "en"
    if kind < 0.88:
        return {"reading": round(rng.uniform(-40, 60), 2), "unit": "°C", "at": city}, "en"
    if kind < 0.93:
        return rng.choice([0, -1, 2**70, 1.5e-300, -0.0, 3.141592653589793]), "en"
    if kind < 0.96:
        return None, "en"
    long_text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(40, 120)))
    return f"Long note {index}: {long_text}", "en"


def _metadata(rng: random.Random, lang: str) -> dict[str, Any]:
    metadata: dict[str, Any] = {"lang": lang}
    source = rng.choice(SOURCES)
    if source is not None:
        metadata["source"] = source
    if rng.random() < 0.6:
        metadata["stars"] = rng.randint(1, 5)
    if rng.random() < 0.3:
        metadata["pinned"] = rng.random() < 0.5
    if rng.random() < 0.1:
        metadata["place"] = {"city": rng.choice(CITIES), "visits": [rng.randint(1, 9)]}
    if rng.random() < 0.05:
        metadata["reviewed_by"] = None
    return metadata


def sample_items(count: int = SAMPLE_SIZE) -> list[MemoryItem]:
    """Return the items of examples/notes.jsonl (or ``count`` such), the same on every call."""
    return list(iter_sample_items(count))


def iter_sample_items(count: int) -> Iterator[MemoryItem]:
    """Yield ``count`` sample items one by one (the first SAMPLE_SIZE are examples/notes.jsonl)."""
    rng = random.Random(SEED)
    created = START
    for index in range(count):
        created += rng.uniform(1, 7200)
        content, lang = _content(rng, index)
        tags = rng.sample(TOPICS, rng.choice([0, 1, 1, 2, 2, 3]))
        yield MemoryItem(
            id=_uuid(rng),
            created_at=round(created, 3),
            content=content,
            tags=tags,
            metadata=_metadata(rng, lang),
        )


def mixed_lines() -> list[str]:
    """Return the lines of examples/mixed.jsonl: valid documents with four bad lines among them."""
    good = [item.model_dump_json() for item in sample_items()[:6]]
    return [
        good[0],
        good[1],
        '{"content": "tags must be text", "tags": [1, 2]}',
        good[2],
        '{"content": "an unknown field", "colour": "red"}',
        good[3],
        '{"id": "not-a-uuid", "content": "a bad id"}',
        '{"content": "not JSON at all",',
        good[4],
        good[5],
    ]


def files() -> dict[Path, str]:
    """Return every file this script writes and its text."""
    notes = "".join(item.model_dump_json() + "\n" for item in sample_items())
    mixed = "".join(line + "\n" for line in mixed_lines())
    return {EXAMPLES / "notes.jsonl": notes, EXAMPLES / "mixed.jsonl": mixed}


def main(argv: list[str] | None = None) -> int:
    """Write the files, or with --check report the stale ones and exit 1."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare, do not write")
    args = parser.parse_args(argv)
    stale = []
    for path, text in files().items():
        if args.check:
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                stale.append(path)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8", newline="\n")
        print(f"wrote {path.relative_to(ROOT)}")
    for path in stale:
        print(
            f"{path.relative_to(ROOT)} is stale: run python tools/make_sample.py", file=sys.stderr
        )
    return 1 if stale else 0


if __name__ == "__main__":
    raise SystemExit(main())
