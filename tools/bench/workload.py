"""The seeded workload: item specifications and the queries every contender answers.

Each item has ~80 characters of mixed-case English-like text, 1-3 tags out of 50 and metadata
with 2-3 keys. Marker words are planted at known rates so that the text queries select about
1% (``quasar``) and about 8% (``harbor``) of the items; ``zyzzyva`` is never planted. The same
seed gives the same items, ids, timestamps and queries on every run and machine.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any
from uuid import UUID

__all__ = ["QUERIES", "ItemSpec", "QuerySpec", "make_specs"]

_VOCABULARY = (
    "the a of and to in is was for on that with as by at from it an be this are or have not "
    "but had his they were which one you all she there her would their we him been has when "
    "who will more no if out so said what up its about into than them can only other new some "
    "time could these two may then do first any my now such like our over man me even most made "
    "after also did many before must through back years where much your way well down should "
    "because each just those people how too little state good very make world still own see men "
    "work long get here between both life being under never day same another know while last "
    "might us great old year off come since against go came right used take three memory agent "
    "tool branch session record note plan task result paper model query signal window garden "
    "market coffee train letter bridge river mountain engine library window forest"
)
_WORDS = tuple(_VOCABULARY.split())
# Capitalised at random so that case-insensitive matching has work to do.
_PROPER = ("Paris", "Berlin", "Alice", "Bob", "Monday", "June", "Python", "Lion", "Ada", "Tokyo")
SELECTIVE = "quasar"  # planted in ~1% of the contents
COMMON = "harbor"  # planted in ~8%
MISSING = "zyzzyva"  # never planted
_SELECTIVE_RATE = 0.01
_COMMON_RATE = 0.08
_TARGET_LENGTH = 80
TAGS = tuple(f"t{n:02d}" for n in range(50))
_SOURCES = ("web", "chat", "email", "doc", "api")
_LANGS = ("en", "de", "fr", "es")
_BASE_TIME = 1_700_000_000.0


@dataclass(frozen=True, slots=True)
class ItemSpec:
    """Everything needed to build the same item for every contender."""

    id: UUID
    created_at: float
    content: str
    tags: tuple[str, ...]
    metadata: dict[str, Any]

    def kwargs(self) -> dict[str, Any]:
        """Keyword arguments for ``MemoryItem(...)`` (fresh containers each call)."""
        return {
            "id": self.id,
            "created_at": self.created_at,
            "content": self.content,
            "tags": list(self.tags),
            "metadata": dict(self.metadata),
        }


@dataclass(frozen=True, slots=True)
class QuerySpec:
    """One search operation of the benchmark: its name, the query fields and how to read it."""

    name: str
    text: str | None = None
    tags: tuple[str, ...] | None = None
    filters: tuple[tuple[str, Any], ...] | None = None
    limit: int = 20
    limit_above_n: bool = False  # the limit is N + 1, set per size
    langgraph: bool = False  # LangGraph's store answers it with the same meaning

    def fields(self, n: int) -> dict[str, Any]:
        """Keyword arguments for ``MemoryQuery(...)`` at size ``n``."""
        return {
            "text": self.text,
            "tags": None if self.tags is None else list(self.tags),
            "filters": None if self.filters is None else dict(self.filters),
            "limit": n + 1 if self.limit_above_n else self.limit,
        }


QUERIES: tuple[QuerySpec, ...] = (
    QuerySpec("search empty, limit 20", langgraph=True),
    QuerySpec("search empty, limit > N", limit_above_n=True, langgraph=True),
    QuerySpec("search empty, limit -1", limit=-1),
    QuerySpec("search text ~1%", text=SELECTIVE.upper()),
    QuerySpec("search text ~8%", text=COMMON.capitalize()),
    QuerySpec("search text missing", text=MISSING),
    QuerySpec("search text ~8%, limit -1", text=COMMON, limit=-1),
    QuerySpec("search tags", tags=("t03", "t41")),
    QuerySpec("search filters", filters=(("source", "chat"), ("lang", "de")), langgraph=True),
    QuerySpec(
        "search text+tags+filters",
        text=COMMON,
        tags=("t03", "t41", "t17"),
        filters=(("source", "chat"),),
    ),
)
"""The searches, in the order they are measured. Text needles are given in mixed case."""


def _uuid4(rng: random.Random) -> UUID:
    value = rng.getrandbits(128)
    value &= ~(0xC000 << 48)
    value |= 0x8000 << 48  # RFC 4122 variant
    value &= ~(0xF000 << 64)
    value |= 4 << 76  # version 4
    return UUID(int=value)


def _content(rng: random.Random) -> str:
    words: list[str] = []
    if rng.random() < _SELECTIVE_RATE:
        words.append(rng.choice((SELECTIVE, SELECTIVE.capitalize(), SELECTIVE.upper())))
    if rng.random() < _COMMON_RATE:
        words.append(rng.choice((COMMON, COMMON.capitalize())))
    length = sum(len(w) + 1 for w in words)
    while length < _TARGET_LENGTH - 4:
        word = rng.choice(_PROPER) if rng.random() < 0.08 else rng.choice(_WORDS)
        words.append(word)
        length += len(word) + 1
    rng.shuffle(words)
    text = " ".join(words)
    return text[0].upper() + text[1:] + "."


def make_specs(n: int, seed: int, stream: int = 0) -> list[ItemSpec]:
    """Return ``n`` item specifications; ``stream`` gives independent batches from one seed."""
    rng = random.Random(f"{seed}:{stream}")
    specs = []
    for i in range(n):
        metadata: dict[str, Any] = {"source": rng.choice(_SOURCES), "lang": rng.choice(_LANGS)}
        if rng.random() < 0.5:
            metadata["priority"] = rng.randrange(10)
        specs.append(
            ItemSpec(
                id=_uuid4(rng),
                created_at=_BASE_TIME + stream * 1e7 + i,
                content=_content(rng),
                tags=tuple(rng.sample(TAGS, rng.randint(1, 3))),
                metadata=metadata,
            )
        )
    return specs
