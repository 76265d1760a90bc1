"""The construction fast path of ``Element`` and ``MemoryItem`` (``lionmem/_base.py``, issue 7).

``Model(...)`` first tries a validator with native checks and falls back to the class's own
validator. These tests prove the fast path invisible: on generated inputs, odd ones included,
construction gives what ``BaseModel.__init__`` (the class's own validator) gives, value for value,
type for type, error for error; and classes whose validation differs never take it.
"""

from __future__ import annotations

import functools
import inspect
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from enum import IntEnum, StrEnum
from types import GeneratorType, MappingProxyType
from typing import Any
from uuid import UUID

import lionagi  # the oracle (dependency group "oracle"): a missing oracle fails the run
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from lionmem import Element, MemoryItem
from lionmem._base import _fast_init, _fast_validator
from lionmem.session import Branch, Session

CANONICAL = "12345678-1234-5678-1234-567812345678"
EXAMPLES = 500


class UUIDChild(UUID):
    """A UUID subclass: kept as given by both paths."""


class FloatChild(float):
    """A float subclass: both paths give a plain float."""


class StrChild(str):
    """A str subclass: as a metadata key both paths give a plain str."""


class Colour(StrEnum):
    """A str enum: as a metadata key both paths give its value."""

    RED = "red"


class Level(IntEnum):
    """An int enum: as created_at both paths give a float."""

    ONE = 1


class ListChild(list[str]):
    """A list subclass whose __iter__ must not be needed."""

    def __iter__(self) -> Iterator[str]:
        return iter(list.copy(self))


class DictChild(dict[str, Any]):
    """A dict subclass: the fast path leaves it to the class's validator."""


class Payload(BaseModel):
    """A pydantic model given as metadata (dumped by the class's validator)."""

    a: int = 1


@dataclass(frozen=True)
class Fresh:
    """A value made anew for every construction (an iterator can be read only once)."""

    make: Callable[[], Any]


def _tags() -> Iterator[str]:
    yield from ("a", "b")


ABSENT = object()
IDS: list[Any] = [
    UUID(CANONICAL),
    UUIDChild(CANONICAL),
    UUID(int=0),
    CANONICAL,
    CANONICAL.replace("-", ""),
    "{" + CANONICAL + "}",
    "urn:uuid:" + CANONICAL,
    UUID(CANONICAL).bytes,
    123,
    None,
    "bad",
]
CREATED_AT: list[Any] = [
    1.5,
    0.0,
    -0.0,
    -1e300,
    FloatChild(2.5),
    3,
    Level.ONE,
    True,
    10**400,
    math.nan,
    math.inf,
    -math.inf,
    "2024-01-01T00:00:00Z",
    "1.5",
    "bad",
    datetime(2024, 1, 1, tzinfo=UTC),
    Decimal("1.5"),
    None,
]
METADATA: list[Any] = [
    {},
    {"a": 1},
    {"a": {"nested": [1]}, "b": None},
    {" Key ": " Value "},
    {"lion_class": "lionmem.MemoryItem"},
    {"lion_class": "lionmem.Element"},
    {"lion_class": "other"},
    {1: "a"},
    {StrChild("k"): 1},
    {Colour.RED: 1},
    {b"k": 1},
    DictChild(a=1),
    MappingProxyType({"a": 1}),
    '{"a": 1}',
    "[1]",
    [("a", 1)],
    Payload(),
    None,
    0,
    "",
]
TAGS: list[Any] = [
    [],
    ["a", "b"],
    ["a", "", "a"],
    [" Tag "],
    ("a",),
    Fresh(_tags),
    Fresh(lambda: ListChild(["x", "y"])),
    [1],
    [b"x"],
    [StrChild("s")],
    "abc",
    None,
]
CONTENT: list[Any] = [None, "text", {"k": [1]}, [1, 2], 7]
EXTRAS: list[dict[str, Any]] = [{}, {"bogus": 1}, {"lion_class": "x"}]


def _field(values: list[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(st.just(ABSENT), st.sampled_from(values))


@st.composite
def inputs(draw: st.DrawFn) -> dict[str, Any]:
    """Keyword arguments for a construction: each field absent or one of its listed values."""
    drawn = {
        "id": draw(_field(IDS)),
        "created_at": draw(_field(CREATED_AT)),
        "metadata": draw(_field(METADATA)),
        "content": draw(_field(CONTENT)),
        "tags": draw(_field(TAGS)),
    }
    spec = {name: value for name, value in drawn.items() if value is not ABSENT}
    spec.update(draw(st.sampled_from(EXTRAS)))
    return spec


def _kwargs(spec: dict[str, Any]) -> dict[str, Any]:
    return {name: v.make() if isinstance(v, Fresh) else v for name, v in spec.items()}


def _plain(value: Any) -> Any:
    """Comparable form of an error's input or context value."""
    if isinstance(value, GeneratorType):
        return "<generator>"
    if isinstance(value, BaseException):
        return (type(value), str(value))
    if isinstance(value, float) and math.isnan(value):
        return "nan"
    return repr(value)


def outcome(cls: type[BaseModel], kwargs: dict[str, Any], build: Callable[..., Any]) -> Any:
    """Everything observable about one construction: the values, their types, or the errors."""
    try:
        item = build(**kwargs)
    except ValidationError as exc:
        errors = [
            (
                error["type"],
                error["loc"],
                error["msg"],
                _plain(error["input"]),
                {key: _plain(v) for key, v in error.get("ctx", {}).items()},
            )
            for error in exc.errors(include_url=False)
        ]
        return ("error", exc.title, errors)
    dump = item.model_dump()
    for generated in ("id", "created_at"):
        if kwargs.get(generated) is None:
            dump.pop(generated)  # a new uuid4 or the current time, different on each call
    values = {name: getattr(item, name) for name in type(item).model_fields}
    return (
        "ok",
        type(item),
        dump,
        {name: type(value) for name, value in values.items()},
        [type(key) for key in item.metadata],
        sorted(item.model_fields_set),
        item.__pydantic_extra__,
        {name: values[name] is kwargs.get(name) for name in values},
    )


class Stripped(MemoryItem):
    """Settings that act on str validation: they must not reach metadata keys (no fast path)."""

    model_config = ConfigDict(str_strip_whitespace=True, str_to_lower=True)


class StrictItem(MemoryItem):
    """Strict mode: no fast path."""

    model_config = ConfigDict(strict=True)


class AllowExtra(MemoryItem):
    """Unknown keys kept in ``__pydantic_extra__``: no fast path."""

    model_config = ConfigDict(extra="allow")


class IgnoreExtra(MemoryItem):
    """Unknown keys ignored: a fast path of its own, unknown keys taking the class validator."""

    model_config = ConfigDict(extra="ignore")


CLASSES = [MemoryItem, Element, Stripped, StrictItem, AllowExtra, IgnoreExtra]


def reference(cls: type[BaseModel]) -> Callable[..., Any]:
    """Construction exactly as before the fast path: ``BaseModel.__init__`` on a new instance."""

    def build(**kwargs: Any) -> Any:
        item = cls.__new__(cls)
        BaseModel.__init__(item, **kwargs)
        return item

    return build


@functools.cache
def written_out(cls: type[BaseModel]) -> Callable[..., Any]:
    """Construction through the fast ``__init__`` the class gets when the C module is not built.

    Its pre-check is written out in Python; a class without a fast path builds as itself.
    """
    validator = _fast_validator(cls)
    if validator is None:
        return cls
    init = _fast_init(cls, validator, frozenset(cls.__pydantic_fields__), None)

    def build(**kwargs: Any) -> Any:
        item = cls.__new__(cls)
        init(item, **kwargs)
        return item

    return build


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
@settings(max_examples=EXAMPLES)
@given(spec=inputs())
def test_construction_matches_the_class_validator(
    cls: type[BaseModel], spec: dict[str, Any]
) -> None:
    """The installed ``__init__`` (C pre-check) and the written-out one both give the reference's."""
    expected = outcome(cls, _kwargs(spec), reference(cls))
    assert outcome(cls, _kwargs(spec), cls) == expected
    assert outcome(cls, _kwargs(spec), written_out(cls)) == expected


def test_both_fast_inits_take_the_fast_path_for_the_same_calls() -> None:
    """The written-out ``__init__`` differs from the installed one only in its pre-check."""
    installed = MemoryItem.__dict__["__init__"]
    validator = _fast_validator(MemoryItem)
    assert validator is not None
    python = _fast_init(MemoryItem, validator, frozenset(MemoryItem.__pydantic_fields__), None)
    assert "ready" in installed.__code__.co_freevars
    assert "ready" not in python.__code__.co_freevars
    assert installed.__qualname__ == python.__qualname__ == "MemoryItem.__init__"


def test_the_fast_path_is_taken_for_the_usual_call() -> None:
    # Proves the differential test above compares two different paths.
    fast_init = MemoryItem.__dict__["__init__"]
    assert getattr(fast_init, "__lionmem_fast_init__", False)
    assert getattr(Element.__dict__["__init__"], "__lionmem_fast_init__", False)
    calls: list[Any] = []
    original = MemoryItem.__pydantic_validator__

    class Spy:
        def validate_python(self, *args: Any, **kwargs: Any) -> Any:
            calls.append(args)
            return original.validate_python(*args, **kwargs)

    MemoryItem.__pydantic_validator__ = Spy()  # type: ignore[assignment]  # records slow-path calls
    try:
        item = MemoryItem(id=UUID(CANONICAL), created_at=1.5, metadata={"a": 1}, tags=["t"])
        assert calls == []
        MemoryItem(id=CANONICAL)  # a str id needs the class's validator
        assert len(calls) == 1
    finally:
        MemoryItem.__pydantic_validator__ = original
    assert item.model_dump() == {
        "id": CANONICAL,
        "created_at": 1.5,
        "metadata": {"a": 1},
        "content": None,
        "tags": ["t"],
    }


@pytest.mark.parametrize(
    ("cls", "fast"),
    [
        (MemoryItem, True),
        (Element, True),
        (IgnoreExtra, True),
        (Stripped, False),
        (StrictItem, False),
        (AllowExtra, False),
    ],
    ids=lambda v: getattr(v, "__name__", str(v)),
)
def test_only_classes_without_settings_that_matter_get_a_fast_path(
    cls: type[BaseModel], fast: bool
) -> None:
    own = cls.__dict__.get("__init__")
    assert getattr(own, "__lionmem_fast_init__", False) is fast


def test_settings_on_str_do_not_reach_metadata_keys() -> None:
    item = Stripped(metadata={" Key ": 1}, tags=[" Tag "])
    assert item.metadata == {" Key ": 1}
    assert item.tags == ["tag"]


def test_the_models_keep_pydantics_init_contract() -> None:
    for cls in (Element, MemoryItem):
        assert cls.__pydantic_custom_init__ is False  # model_validate does not call __init__
    assert list(inspect.signature(MemoryItem).parameters) == [
        "id",
        "created_at",
        "metadata",
        "content",
        "tags",
    ]


def test_an_unknown_key_is_rejected_even_when_the_rest_is_fast() -> None:
    with pytest.raises(ValidationError) as exc:
        MemoryItem(id=UUID(CANONICAL), created_at=1.5, content="x", colour="red")  # type: ignore[call-arg]  # the unknown key under test
    assert [(e["type"], e["loc"]) for e in exc.value.errors()] == [("extra_forbidden", ("colour",))]


def test_a_generator_of_tags_is_read_once_when_the_fast_attempt_fails() -> None:
    item = MemoryItem(id=CANONICAL, tags=(tag for tag in ["a", "b"]))
    assert item.tags == ["a", "b"]
    assert item.id == UUID(CANONICAL)


def test_metadata_naming_the_class_takes_the_class_validator() -> None:
    item = MemoryItem(metadata={"lion_class": "lionmem.MemoryItem", "k": 1})
    assert item.metadata == {"lion_class": "lionmem.MemoryItem", "k": 1}
    with pytest.raises(ValidationError, match="Metadata class mismatch"):
        MemoryItem(metadata={"lion_class": "lionmem.Element"})


class Note(MemoryItem):
    """A subclass with one more field: no fast path of its own."""

    priority: int = 0


class Wrapped(MemoryItem):
    """A subclass with its own __init__ that reaches MemoryItem's through super()."""

    priority: int = 0

    def __init__(self, **data: Any) -> None:
        data.setdefault("priority", 5)
        super().__init__(**data)


class Renamed(MemoryItem):
    """A subclass that changes nothing: it gets a fast path of its own."""


class CheckedId(MemoryItem):
    """A subclass that adds a check to ``id``: its validation differs, so no fast path."""

    @field_validator("id")
    @classmethod
    def _not_nil(cls, value: UUID) -> UUID:
        if value.int == 0:
            msg = "nil id"
            raise ValueError(msg)
        return value


def test_a_subclass_with_another_field_is_built_by_its_own_validator() -> None:
    assert "__init__" not in Note.__dict__
    note = Note(id=UUID(CANONICAL), content="x")
    assert (note.priority, note.content, note.id) == (0, "x", UUID(CANONICAL))
    assert Note(content="x", priority=3).priority == 3
    assert Note(content="x").model_fields_set == {"content"}


def test_a_subclass_init_calling_super_is_built_by_its_own_validator() -> None:
    assert Wrapped(content="x").priority == 5
    assert Wrapped.__pydantic_custom_init__ is True


def test_an_unchanged_subclass_has_its_own_fast_path() -> None:
    assert getattr(Renamed.__dict__["__init__"], "__lionmem_fast_init__", False)
    item = Renamed(id=UUID(CANONICAL), content="x")
    assert type(item) is Renamed
    assert item.model_dump()["id"] == CANONICAL


def test_a_subclass_with_another_id_check_never_skips_it() -> None:
    assert "__init__" not in CheckedId.__dict__
    with pytest.raises(ValidationError, match="nil id"):
        CheckedId(id=UUID(int=0))


@pytest.mark.parametrize("cls", [Branch, Session], ids=lambda c: c.__name__)
def test_branch_and_session_keep_their_own_init(cls: type[BaseModel]) -> None:
    init = cls.__dict__["__init__"]
    assert not getattr(init, "__lionmem_fast_init__", False)


class OwnFloat(float):
    """A float subclass whose ``__float__`` gives another value."""

    def __float__(self) -> float:
        return 99.0


def test_a_float_subclass_gives_its_own_value_on_both_paths_as_in_lionagi() -> None:
    # lionagi returns the float subclass from its before-validator and pydantic's float
    # validation then reads its value: 2.5, not __float__'s 99.0.
    assert lionagi.MemoryItem(created_at=OwnFloat(2.5)).created_at == 2.5
    assert reference(MemoryItem)(created_at=OwnFloat(2.5)).created_at == 2.5
    assert MemoryItem(created_at=OwnFloat(2.5)).created_at == 2.5
    assert MemoryItem.model_validate({"created_at": OwnFloat(2.5)}).created_at == 2.5


class HashesLikeLionClass(str):
    """A metadata key whose ``__eq__`` runs when ``"lion_class" in metadata`` is asked, and raises."""

    def __hash__(self) -> int:
        return hash("lion_class")

    def __eq__(self, other: object) -> bool:
        msg = "no comparison"
        raise ValueError(msg)


def test_an_error_raised_by_a_metadata_key_is_a_validation_error_on_both_paths() -> None:
    for build in (reference(MemoryItem), MemoryItem):
        with pytest.raises(ValidationError) as exc:
            build(metadata={HashesLikeLionClass("x"): 1})
        assert [(e["type"], e["loc"], e["msg"]) for e in exc.value.errors()] == [
            ("value_error", ("metadata",), "Value error, no comparison")
        ]


class WithInit(MemoryItem):
    """A subclass with its own ``__init__``."""

    def __init__(self, **data: Any) -> None:
        data.setdefault("content", "from WithInit")
        super().__init__(**data)


class ChildOfWithInit(WithInit):
    """Defines nothing: construction runs ``WithInit.__init__``."""


class InitMixin:
    """A mixin whose ``__init__`` comes before MemoryItem's in the MRO."""

    def __init__(self, **data: Any) -> None:
        data.setdefault("tags", ["mixin"])
        super().__init__(**data)


class Mixed(InitMixin, MemoryItem):
    """Defines nothing: construction runs ``InitMixin.__init__``."""


def test_an_inherited_init_of_a_user_class_is_kept() -> None:
    for cls in (ChildOfWithInit, Mixed):
        assert "__init__" not in cls.__dict__
    assert ChildOfWithInit().content == "from WithInit"
    assert ChildOfWithInit.model_validate({}).content == "from WithInit"  # custom init is called
    assert Mixed().tags == ["mixin"]


class ValidatedDefault(MemoryItem):
    """A metadata default that the Python validator checks (and rejects)."""

    metadata: dict[str, Any] = Field(
        default_factory=lambda: {"lion_class": "not.this.Class"}, validate_default=True
    )


def test_a_default_the_class_validates_is_validated_by_it() -> None:
    assert "__init__" not in ValidatedDefault.__dict__
    with pytest.raises(ValidationError, match="Metadata class mismatch"):
        ValidatedDefault()


_factory_calls: list[int] = []


def _next_number() -> int:
    _factory_calls.append(len(_factory_calls))
    return _factory_calls[-1]


class Sequenced(MemoryItem):
    """A default factory that would notice being called twice."""

    content: Any = Field(default_factory=_next_number)


def test_a_default_factory_of_a_user_runs_once_per_construction() -> None:
    assert "__init__" not in Sequenced.__dict__
    _factory_calls.clear()
    assert Sequenced(id=CANONICAL).content == 0  # a str id: the class validator decides
    assert Sequenced(id=UUID(CANONICAL)).content == 1
    assert _factory_calls == [0, 1]


def test_a_failed_second_init_leaves_the_instance_unchanged() -> None:
    # As with BaseModel.__init__: an unknown key is found before anything is written.
    item = MemoryItem(content=1)
    with pytest.raises(ValidationError):
        item.__init__(content=2, colour="red")  # type: ignore[misc]  # calling __init__ again is the case under test
    assert item.content == 1
    reference_item = MemoryItem(content=1)
    with pytest.raises(ValidationError):
        BaseModel.__init__(reference_item, content=2, colour="red")
    assert reference_item.content == 1


class Meddler:
    """A metadata key hashing like "lion_class": ``in`` calls its ``__eq__``, which counts."""

    calls = 0

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"Meddler({self.name!r})"  # the same in every error message

    def __hash__(self) -> int:
        return hash("lion_class")

    def __eq__(self, other: object) -> bool:
        Meddler.calls += 1
        return False


@pytest.mark.parametrize("key", [Meddler, StrChild], ids=["colliding", "str subclass"])
def test_user_code_in_keys_runs_as_often_as_in_the_reference(key: type) -> None:
    """No check before validation runs a key's user code; the class validator alone does."""
    seen = []
    for build in (reference(MemoryItem), MemoryItem, written_out(MemoryItem)):
        Meddler.calls = 0
        result = outcome(MemoryItem, {"metadata": {"a": 1, key("k"): 2}}, build)
        seen.append((result, Meddler.calls))
    assert seen[1] == seen[0]
    assert seen[2] == seen[0]
