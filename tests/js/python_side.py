"""The Python half of the cross-language tests in tests/js/ (run by Node, not collected by pytest).

python tests/js/python_side.py write OUT_DIR [--count N] [--seed S]
    Build N random documents per schema with the Pydantic models and write each one as the model
    serialised it (``model_dump_json``), one per line, to ``OUT_DIR/<schema>.jsonl``.
python tests/js/python_side.py roundtrip IN_DIR OUT_DIR
    Load every line of ``IN_DIR/<schema>.jsonl`` into its model (``model_validate_json``) and
    write, one per line, ``{"dumped": <model_dump_json(exclude_unset=True)>}`` or
    ``{"error": "<the validation error>"}`` to ``OUT_DIR/<schema>.jsonl``.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
from collections.abc import Callable
from datetime import UTC, datetime, timedelta, timezone
from decimal import Decimal
from pathlib import Path
from typing import Any
from uuid import UUID

from pydantic import BaseModel, ValidationError

from lionmem import Element, MemoryItem, MemoryQuery

MODELS: dict[str, type[BaseModel]] = {
    "element": Element,
    "memory_item": MemoryItem,
    "memory_query": MemoryQuery,
}

# Text that tends to break serialisers: controls, quotes, escapes, every UTF-8 length, combining
# marks, right-to-left scripts, joiners, the BOM, line and paragraph separators, the last code point.
ALPHABET = (
    "abcXYZ019 _-."
    "\x00\x01\x1f\x7f\t\n\r\"'\\/"
    "éßÆøİıǅ"
    "ΟΔΟΣ Кириллица"
    "中文日本語한국어"
    "עבריתالعربية"
    "e\u0301\u200d\u200b\ufeff\u2028\u2029\ufffd\uffff"
    "🦁😀👩\u200d💻🏳️\u200d🌈\U0010ffff"
)
EDGE_INTEGERS = [0, 1, -1, 2**31 - 1, -(2**31), 2**53 - 1, -(2**53) + 1, 2**53 + 1, 2**64, -(2**70)]
EDGE_FLOATS = [
    0.0,
    -0.0,
    0.1,
    -2.5e-8,
    5e-324,
    2.2250738585072014e-308,
    1.7976931348623157e308,
    1e21,
]
EDGE_CREATED_AT: list[Any] = [
    0.0,
    -0.0,
    -1.5e9,
    1.0e15,
    5e-324,
    1.7976931348623157e308,
    1_700_000_000,
    "2024-02-29T23:59:59.999999+14:00",
    "1970-01-01 00:00:00",
    datetime(2000, 1, 1, tzinfo=UTC),
    datetime(2038, 1, 19, 3, 14, 8, tzinfo=timezone(timedelta(hours=-5))),
]
EDGE_LIMITS = [0, -1, 1, 20, 2**31 - 1, 2**53 - 1, -(2**63), 2**63, 10**30]


class Writer:
    """Random inputs for the models, from one seeded generator."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def text(self, longest: int = 12) -> str:
        return "".join(self.rng.choice(ALPHABET) for _ in range(self.rng.randint(0, longest)))

    def number(self) -> int | float:
        roll = self.rng.random()
        if roll < 0.3:
            return self.rng.choice(EDGE_INTEGERS)
        if roll < 0.5:
            return self.rng.choice(EDGE_FLOATS)
        if roll < 0.75:
            return self.rng.randint(-(10**6), 10**6)
        value = self.rng.uniform(-1e6, 1e6) * 10 ** self.rng.randint(-300, 300)
        return value if math.isfinite(value) else 0.0

    def key(self) -> str:
        # lion_class is a reserved metadata key whose value the models check: never a random one.
        key = self.text(6)
        return key if key != "lion_class" else "lion_class_"

    def json_value(self, depth: int = 0) -> Any:
        """Any JSON value, nested up to four levels."""
        kinds = ["null", "bool", "number", "text"] + (["list", "dict"] * 2 if depth < 4 else [])
        kind = self.rng.choice(kinds)
        if kind == "null":
            return None
        if kind == "bool":
            return self.rng.random() < 0.5
        if kind == "number":
            return self.number()
        if kind == "text":
            return self.text()
        if kind == "list":
            return [self.json_value(depth + 1) for _ in range(self.rng.randint(0, 4))]
        return {self.key(): self.json_value(depth + 1) for _ in range(self.rng.randint(0, 4))}

    def content(self) -> Any:
        """Mostly JSON values, sometimes Python values that pydantic serialises to JSON."""
        roll = self.rng.random()
        if roll < 0.05:
            return datetime(2024, 5, 17, 12, 30, tzinfo=UTC)
        if roll < 0.1:
            return UUID(int=self.rng.getrandbits(128))
        if roll < 0.15:
            return Decimal("-1234.5678")
        if roll < 0.2:
            return (self.text(), self.number(), None)
        return self.json_value()

    def metadata(self, lion_class: str) -> dict[str, Any]:
        metadata = {self.key(): self.json_value(1) for _ in range(self.rng.randint(0, 4))}
        if self.rng.random() < 0.1:
            metadata["lion_class"] = lion_class
        return metadata

    def tags(self) -> list[str]:
        return [self.text(5) for _ in range(self.rng.randint(0, 5))]

    def element_fields(self, lion_class: str) -> dict[str, Any]:
        fields: dict[str, Any] = {}
        if self.rng.random() < 0.5:
            identity = UUID(int=self.rng.getrandbits(128))
            fields["id"] = identity if self.rng.random() < 0.5 else str(identity).upper()
        if self.rng.random() < 0.6:
            fields["created_at"] = (
                self.rng.choice(EDGE_CREATED_AT)
                if self.rng.random() < 0.5
                else self.rng.uniform(0, 4e9)
            )
        if self.rng.random() < 0.8:
            fields["metadata"] = self.metadata(lion_class)
        return fields

    def element(self) -> Element:
        return Element(**self.element_fields("lionmem.Element"))

    def memory_item(self) -> MemoryItem:
        fields = self.element_fields("lionmem.MemoryItem")
        if self.rng.random() < 0.9:
            fields["content"] = self.content()
        if self.rng.random() < 0.8:
            fields["tags"] = self.tags()
        return MemoryItem(**fields)

    def memory_query(self) -> MemoryQuery:
        fields: dict[str, Any] = {}
        if self.rng.random() < 0.7:
            fields["text"] = None if self.rng.random() < 0.2 else self.text()
        if self.rng.random() < 0.7:
            fields["tags"] = None if self.rng.random() < 0.2 else self.tags()
        if self.rng.random() < 0.7:
            fields["filters"] = None if self.rng.random() < 0.2 else self.metadata("x")
        if self.rng.random() < 0.7:
            fields["limit"] = (
                self.rng.choice(EDGE_LIMITS)
                if self.rng.random() < 0.5
                else self.rng.randint(-100, 100)
            )
        return MemoryQuery(**fields)


def write(out: Path, count: int, seed: int) -> None:
    writer = Writer(seed)
    makers: dict[str, Callable[[], BaseModel]] = {
        "element": writer.element,
        "memory_item": writer.memory_item,
        "memory_query": writer.memory_query,
    }
    out.mkdir(parents=True, exist_ok=True)
    for name, make in makers.items():
        lines = [make().model_dump_json() for _ in range(count)]
        (out / f"{name}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


def roundtrip(source: Path, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for name, model in MODELS.items():
        path = source / f"{name}.jsonl"
        if not path.exists():
            continue
        results = []
        # Split on "\n" only: str.splitlines() also splits on U+2028, U+2029, U+0085 and others,
        # which JSON text carries unescaped (JSON.stringify does not escape them).
        for line in path.read_text(encoding="utf-8").split("\n")[:-1]:
            try:
                loaded = model.model_validate_json(line)
            except ValidationError as error:
                results.append(f'{{"error": {json.dumps(str(error))}}}')
                continue
            results.append(f'{{"dumped": {loaded.model_dump_json(exclude_unset=True)}}}')
        (out / f"{name}.jsonl").write_text("".join(f"{r}\n" for r in results), encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    write_command = commands.add_parser("write")
    write_command.add_argument("out", type=Path)
    write_command.add_argument("--count", type=int, default=500)
    write_command.add_argument("--seed", type=int, default=0)
    roundtrip_command = commands.add_parser("roundtrip")
    roundtrip_command.add_argument("source", type=Path)
    roundtrip_command.add_argument("out", type=Path)
    args = parser.parse_args(argv)
    if args.command == "write":
        write(args.out, args.count, args.seed)
    else:
        roundtrip(args.source, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
