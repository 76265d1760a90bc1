"""Behaviour the JSON schemas cannot express, inherited by the generated models.

The generator is told (``base-class-map`` in ``pyproject.toml``) to derive ``Element`` from
``ElementBase`` and ``MemoryQuery`` from ``QueryBase``; ``MemoryItem`` inherits ``ElementBase``
through ``Element``. Every rule here is pinned by ``../shared/SEMANTICS.md`` (§2, §3 and the
decisions L1-L4 and L11 of §9); the tests in ``tests/test_element.py``,
``tests/test_memory_item.py``, ``tests/test_query.py`` and ``tests/test_model_*.py`` name the
point each one checks.
"""

from __future__ import annotations

import dataclasses
import json
import math
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from enum import Enum
from types import ModuleType
from typing import TYPE_CHECKING, Annotated, Any
from uuid import UUID, uuid4

from pydantic import (
    BaseModel,
    ConfigDict,
    TypeAdapter,
    WithJsonSchema,
    field_serializer,
    field_validator,
)
from pydantic_core import CoreConfig, CoreSchema, SchemaValidator, core_schema

__all__ = ["ElementBase", "QueryBase", "accepted_class_names", "utc_timestamp"]

utc_timestamp = time.time
"""Default factory of ``created_at``: the current time as UTC POSIX seconds (POSIX time is UTC)."""

# Names a serialised record may carry in ``metadata["lion_class"]`` besides the defining dotted
# name of its concrete class (L11): the public lionmem name, and lionagi's name for the same class
# so that data exported from lionagi loads. Keyed by the defining name so that the table needs no
# import of the classes it describes (the generated modules import this one).
_CLASS_ALIASES: dict[str, tuple[str, ...]] = {
    "lionmem_models.element.Element": (
        "lionmem.Element",
        "lionagi.protocols.generic.element.Element",
    ),
    "lionmem_models.memory_item.MemoryItem": (
        "lionmem.MemoryItem",
        "lionagi.protocols.memory.MemoryItem",
    ),
    "lionmem.session.Branch": ("lionmem.Branch", "lionagi.session.branch.Branch"),
    "lionmem.session.Session": ("lionmem.Session", "lionagi.session.session.Session"),
}
_accepted_cache: dict[type, frozenset[str]] = {}


def accepted_class_names(cls: type) -> frozenset[str]:
    """Return every ``lion_class`` value that names ``cls`` itself (never a parent class)."""
    names = _accepted_cache.get(cls)
    if names is None:
        defining = f"{cls.__module__}.{cls.__qualname__}"
        names = frozenset((defining, *_CLASS_ALIASES.get(defining, ())))
        _accepted_cache[cls] = names
    return names


def _finite(seconds: float) -> float:
    # L2: nan and inf cannot round-trip through JSON (they are written as null), so reject them.
    if not math.isfinite(seconds):
        msg = f"created_at must be a finite number of seconds, got {seconds!r}"
        raise ValueError(msg)
    return seconds


def coerce_created_at(value: Any) -> float:
    """Apply the ``created_at`` coercion table of SEMANTICS.md §2.3, rejecting non-finite values."""
    if isinstance(value, float):
        return _finite(value)
    if value is None:
        return utc_timestamp()
    if isinstance(value, datetime):
        # A naive datetime is read in the process's local time zone, as the reference does. Its
        # ValueError ("year 0 is out of range") passes through unchanged, as in the reference; an
        # OverflowError or OSError would escape pydantic unwrapped, so it becomes a ValueError.
        try:
            return _finite(value.timestamp())
        except (OverflowError, OSError):
            msg = f"Invalid created_at: {value}"
            raise ValueError(msg) from None
    if isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value.replace(" ", "T"))
        except ValueError:
            try:
                seconds = float(value)
            except ValueError:
                msg = f"Invalid datetime string: {value}"
                raise ValueError(msg) from None
            return _finite(seconds)
        # A naive ISO string is read as UTC (unlike a naive datetime object).
        if parsed.tzinfo is None:
            parsed = parsed.replace(tzinfo=UTC)
        return _finite(parsed.timestamp())
    try:
        seconds = float(value)
    except (TypeError, ValueError, OverflowError):
        msg = f"Invalid created_at: {value}"
        raise ValueError(msg) from None
    return _finite(seconds)


def _decode_json_object(text: str, source: str) -> dict[str, Any]:
    try:
        decoded = json.loads(text)
    except ValueError as exc:
        msg = f"Invalid metadata: {source} is not valid JSON ({exc})"
        raise ValueError(msg) from None
    except RecursionError:
        msg = f"Invalid metadata: {source} nests too deeply to decode"
        raise ValueError(msg) from None
    if not isinstance(decoded, dict):
        msg = f"Invalid metadata: {source} holds a JSON {_json_kind(decoded)}, not an object"
        raise ValueError(msg)
    return decoded


def _json_kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array"


def _not_a_mapping(value: Any, detail: str) -> ValueError:
    return ValueError(
        f"Invalid metadata: expected a mapping (dict, JSON object string, pydantic model or "
        f"dataclass), got {type(value).__name__}{detail}"
    )


def _object_to_mapping(value: Any) -> Any:
    """Convert an object the way the reference does: model_dump, then to_dict/dict/to_json/json."""
    if isinstance(value, type):
        # A class is not a record; its unbound model_dump() would fail with a confusing message.
        msg = f"Invalid metadata: expected a mapping instance, got the class {value.__qualname__}"
        raise ValueError(msg)
    for name in ("model_dump", "to_dict", "dict", "to_json", "json"):
        method = getattr(value, name, None)
        if method is not None:
            try:
                converted = method()
            except Exception as exc:
                msg = f"Invalid metadata: {type(value).__name__}.{name}() raised {exc!r}"
                raise ValueError(msg) from exc
            if isinstance(converted, str):
                return _decode_json_object(converted, f"the string from {name}()")
            if isinstance(converted, Mapping):
                return dict(converted)
            raise _not_a_mapping(converted, f" from {type(value).__name__}.{name}()")
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if isinstance(value, BaseException | ModuleType) or callable(value):
        # L1: the reference reads their __dict__, which is not their data (an exception keeps
        # its message in args, so it becomes {} silently; a function gives its attributes).
        raise _not_a_mapping(value, "")
    if hasattr(value, "__dict__"):
        return dict(vars(value))
    raise _not_a_mapping(value, "")


def coerce_metadata(value: Any) -> dict[str, Any]:
    """Turn a metadata input into a dict with string keys (SEMANTICS.md §2.4 and L1).

    What the reference converts is converted the same way: falsy values give ``{}``, a dict is kept
    (pydantic then copies it shallowly), any Mapping is copied, a string is parsed as a JSON object,
    a pydantic model is dumped, a dataclass goes through ``asdict``. What the reference would turn
    into ``{}`` silently, enumerate into an index-keyed dict or leak as a raw ``TypeError`` raises a
    ``ValueError`` here, which pydantic reports as a ``ValidationError`` on ``metadata``.
    """
    if type(value) is dict:
        result: dict[Any, Any] = value
    elif not value:
        return {}
    elif isinstance(value, Mapping):
        result = dict(value)
    elif isinstance(value, str):
        result = _decode_json_object(value, "the string")
    elif isinstance(value, type) and issubclass(value, Enum):
        result = dict(value.__members__)
    elif isinstance(value, list | tuple | set | frozenset | range | bytes | bytearray):
        raise _not_a_mapping(value, " (sequences and sets are not turned into dicts)")
    elif isinstance(value, bool | int | float | complex | UUID):
        raise _not_a_mapping(value, "")
    else:
        result = _object_to_mapping(value)
    for key in result:
        if not isinstance(key, str):
            msg = (
                f"Invalid metadata: keys must be strings, as in every JSON object; "
                f"got the {type(key).__name__} key {key!r}"
            )
            raise ValueError(msg)
    return result


_METADATA: TypeAdapter[dict[str, Any]] = TypeAdapter(dict[str, Any])
_UUIDString = Annotated[str, WithJsonSchema({"type": "string", "format": "uuid"})]


# Construction fast path (issue 7). ``Model(...)`` of a class whose fields are the Element fields
# and at most ``content`` and ``tags`` besides (Element and MemoryItem) first tries a validator
# built from the class's own core schema, in which the three Python validators are replaced by
# pydantic-core's strict native checks, ``tags`` must be a list, and unknown keys are ignored
# (pydantic-core's check for them costs more than the Python check below). The class must have
# no setting, default factory or ``__init__`` that could tell the two apart (see
# ``_fast_validator`` and ``__pydantic_on_complete__``). The attempt is made only when:
#
# - every key names a field, so ignoring unknown keys rejects nothing it should;
# - ``metadata`` is absent or an exact dict without ``lion_class``, the one rule no native check
#   expresses;
# - those keys, and the metadata's, are exact ``str``, so that checking runs no user code (a str
#   subclass's ``__hash__``, the ``__eq__`` of a key hashing like "lion_class"), which could
#   change the input before it is validated. This check is one call into C
#   (``_speedups.init_ready``), or written out in Python where that module is not built (that
#   version does hash a keyword name of a str subclass before looking at its type).
#
# The native checks accept a subset of what the Python validators accept and give the same value
# for it: a UUID instance as is, a finite float or an int as a plain float (a float subclass by
# its own value, as the Python validator does), a dict with str keys copied with plain str keys, a
# list of str copied. For anything else the attempt fails, having changed nothing and consumed no
# iterator (the strict checks reject a generator before reading it; a list or dict subclass is
# read natively), and the class's own validator runs, through ``BaseModel.__init__``, giving the
# result or the error it always gave. ``tests/test_fast_init.py`` compares both paths on
# generated inputs. Only two things can differ, both for objects built to notice. User code the
# attempt reaches may run once more (in the attempt, then in the class's validator): the
# ``__float__`` of an int subclass given as created_at, a ``__class__`` property of an object
# given as id; and the ``__hash__`` of a keyword name of a str subclass runs once more, as the
# keywords are unpacked again for ``BaseModel.__init__``. And a positional argument's TypeError
# names ``Model.__init__`` instead of ``BaseModel.__init__``.
_NATIVE_FIELD_SCHEMAS: dict[str, CoreSchema] = {
    "id": core_schema.uuid_schema(strict=True),
    "created_at": core_schema.float_schema(strict=True, allow_inf_nan=False),
    "metadata": core_schema.dict_schema(
        core_schema.str_schema(strict=True), core_schema.any_schema(), strict=True
    ),
}
# The other fields a fast-path class may have: the only schema each may have, and its fast one.
_PLAIN_FIELD_SCHEMAS: dict[str, tuple[CoreSchema, CoreSchema]] = {
    "content": (core_schema.any_schema(), core_schema.any_schema()),
    "tags": (
        core_schema.list_schema(core_schema.str_schema()),
        core_schema.list_schema(core_schema.str_schema(), strict=True),
    ),
}
_NO_METADATA: dict[str, Any] = {}
# The only core-config keys a fast-path class may have: any other setting (strict, str_to_lower,
# str_strip_whitespace, ...) could act on the native checks and not on the Python validators.
_FAST_CONFIG_KEYS = frozenset({"title", "extra_fields_behavior"})
# Default factories a failed attempt may call once more without anyone noticing.
_PURE_FACTORIES: tuple[Any, ...] = (uuid4, utc_timestamp, dict, list)


class _FastInitTarget:
    """The ``cls`` of a fast validator's schema.

    pydantic-core reuses the validator a complete model class already has when a model schema
    names that class, so the fast schema must name another; with ``self_instance`` given (the
    only way the fast validator is called) the class is not otherwise used.
    """


def _fast_validator(cls: type[BaseModel]) -> SchemaValidator | None:
    """Build the fast construction validator of ``cls``, or None when it has none (see above)."""
    schema: Any = cls.__pydantic_core_schema__
    if schema.get("type") != "model" or schema.get("post_init") or schema.get("root_model"):
        return None
    config = schema.get("config", {})
    if not config.keys() <= _FAST_CONFIG_KEYS or config.get("extra_fields_behavior") == "allow":
        return None  # a setting that could act on the native checks (str_strip_whitespace, ...)
    if type(cls.__pydantic_validator__) is not SchemaValidator:
        return None  # pydantic plugins observe validation: let them see every construction
    inner = schema["schema"]
    if inner.get("type") != "model-fields" or inner.get("computed_fields"):
        return None
    if not _NATIVE_FIELD_SCHEMAS.keys() <= inner["fields"].keys():
        return None  # ElementBase itself, or a class without the three fields
    validators = {
        "id": ElementBase._coerce_id.__func__,  # type: ignore[attr-defined]  # a classmethod's function
        "created_at": ElementBase._coerce_created_at.__func__,  # type: ignore[attr-defined]  # as above
        "metadata": ElementBase._coerce_metadata.__func__,  # type: ignore[attr-defined]  # as above
    }
    if not all(type(name) is str for name in inner["fields"]):
        return None  # a field name of a str subclass: comparing with it runs user code
    fields: dict[str, Any] = {}
    for name, field in inner["fields"].items():
        wrapped = field["schema"]
        if wrapped.get("type") != "default" or field.get("validation_alias") is not None:
            return None
        if wrapped.get("validate_default") or wrapped.get("default_factory_takes_data"):
            return None  # a default the Python validator would check, or built from the input
        if wrapped.get("default_factory", list) not in _PURE_FACTORIES:
            return None  # a factory that may notice being called twice (attempt, then fallback)
        if name in validators:
            function = wrapped["schema"].get("function", {}).get("function")
            if getattr(function, "__func__", None) is not validators[name]:
                return None  # a subclass changed the validation of this field
            native = _NATIVE_FIELD_SCHEMAS[name]
        elif name in _PLAIN_FIELD_SCHEMAS and _PLAIN_FIELD_SCHEMAS[name][0] == wrapped["schema"]:
            native = _PLAIN_FIELD_SCHEMAS[name][1]
        else:
            return None
        fields[name] = {**field, "schema": {**wrapped, "schema": native}}
    fast_config = CoreConfig(
        title=config.get("title", cls.__name__), extra_fields_behavior="ignore"
    )
    fast = {
        **schema,
        "cls": _FastInitTarget,
        "config": fast_config,
        "schema": {**inner, "fields": fields, "extra_behavior": "ignore"},
    }
    return SchemaValidator(fast, fast_config)


try:
    from lionmem._speedups import init_ready as _init_ready
except ImportError:  # not built (no C compiler where it was installed): the check in Python
    _INIT_READY: Callable[[dict[str, Any], frozenset[str]], bool] | None = None
else:
    _INIT_READY = _init_ready


def _fast_init(
    owner: type[BaseModel],
    validator: SchemaValidator,
    names: frozenset[str],
    ready: Callable[[dict[str, Any], frozenset[str]], bool] | None = _INIT_READY,
) -> Callable[..., None]:
    """The ``__init__`` of ``owner``: the fast attempt, else ``BaseModel.__init__`` (see above).

    ``ready`` is the C pre-check (``_speedups.init_ready``): it looks only at exact ``str`` keys,
    in the keywords and in the metadata, so that no user code runs before validation, and sends
    any other key to ``BaseModel.__init__``. Without it, the test is written out here, with one
    difference kept for speed: a keyword name of a ``str`` subclass is hashed by the check.
    """
    # Closure cells are read faster than module globals, and a bound method saves a lookup.
    no_metadata, base_init, validate = _NO_METADATA, BaseModel.__init__, validator.validate_python

    if ready is not None:

        def __init__(self: BaseModel, /, **data: Any) -> None:
            __tracebackhide__ = True  # as in BaseModel.__init__: pytest hides this frame
            if type(self) is owner and ready(data, names):
                try:
                    validate(data, self_instance=self)
                    return
                except Exception:  # any failure, even from user code: the class validator decides
                    pass
            base_init(self, **data)

    else:

        def __init__(self: BaseModel, /, **data: Any) -> None:
            __tracebackhide__ = True  # as in BaseModel.__init__: pytest hides this frame
            if (
                type(self) is owner
                and names.issuperset(data)
                and type(metadata := data.get("metadata", no_metadata)) is dict
            ):
                for key in metadata:  # only exact str keys, so that `in` runs no user __eq__
                    if type(key) is not str:
                        break
                else:
                    if "lion_class" not in metadata:
                        try:
                            validate(data, self_instance=self)
                            return
                        except Exception:  # any failure: the class validator decides
                            pass
            base_init(self, **data)

    __init__.__qualname__ = f"{owner.__qualname__}.__init__"
    __init__.__doc__ = BaseModel.__init__.__doc__
    # pydantic treats this __init__ as its own: no custom __init__ for model_validate to call.
    __init__.__pydantic_base_init__ = True  # type: ignore[attr-defined]  # pydantic's marker
    __init__.__lionmem_fast_init__ = True  # type: ignore[attr-defined]  # ours, replaceable
    return __init__


class ElementBase(BaseModel):
    """Identity, timestamp and metadata rules shared by every generated ``Element`` model."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    if TYPE_CHECKING:
        # Declared by the generated Element; named here so the methods below type-check.
        id: UUID

    @classmethod
    def __pydantic_on_complete__(cls) -> None:
        """Give the class its fast ``__init__`` once its schema is complete, when it can have one."""
        super().__pydantic_on_complete__()
        own = cls.__dict__.get("__init__")
        for klass in cls.__mro__:
            init = klass.__dict__.get("__init__")
            if init is None or getattr(init, "__lionmem_fast_init__", False):
                continue
            if init is not BaseModel.__init__:
                return  # an __init__ of its own, or inherited from a user class, is kept
            break
        validator = _fast_validator(cls)
        if validator is not None:
            names = frozenset(cls.__pydantic_fields__)
            cls.__init__ = _fast_init(cls, validator, names)  # type: ignore[method-assign]  # per class
        elif own is not None:
            del cls.__init__  # rebuilt into a schema without a fast path: inherit again

    # The three validators are plain (they replace pydantic's own UUID, float and dict checks,
    # and give the same results) so that a common input costs one Python call per field:
    # construction and model_validate stay close to a plain Pydantic model (issue 7).
    @field_validator("id", mode="plain", check_fields=False, json_schema_input_type=UUID)
    @classmethod
    def _coerce_id(cls, value: Any) -> UUID:
        # Any value: str() first, as the reference does, so 123, None and b"..." give the
        # "badly formed hexadecimal UUID string" error of uuid.UUID.
        if isinstance(value, UUID):
            return value
        return UUID(str(value))

    @field_validator("created_at", mode="plain", check_fields=False, json_schema_input_type=float)
    @classmethod
    def _coerce_created_at(cls, value: Any) -> float:
        if type(value) is float and math.isfinite(value):
            return value
        seconds = coerce_created_at(value)
        # pydantic's float validation, which this replaces (and which the reference applies after
        # its own coercion), gives a plain float: a float subclass's own value, not its __float__.
        return seconds if type(seconds) is float else float.__float__(seconds)

    # The common input, a dict with str keys and no lion_class, costs one loop and one shallow
    # copy. Everything else takes the full coercion, then pydantic's dict[str, Any] validation
    # as before (it turns str-subclass keys, str enums included, into plain str).
    @field_validator(
        "metadata", mode="plain", check_fields=False, json_schema_input_type=dict[str, Any]
    )
    @classmethod
    def _coerce_metadata(cls, value: Any) -> dict[str, Any]:
        if type(value) is dict and "lion_class" not in value:
            for key in value:
                if type(key) is not str:
                    break
            else:
                return value.copy()
        result = coerce_metadata(value)
        if "lion_class" in result:
            named = result["lion_class"]
            if not (isinstance(named, str) and named in accepted_class_names(cls)):
                msg = "Metadata class mismatch."
                raise ValueError(msg)
        return _METADATA.validate_python(result)

    # A str in both modes (SEMANTICS.md §2.9); described as the schema describes it, a UUID string.
    @field_serializer("id", check_fields=False)
    def _serialize_id(self, value: UUID) -> _UUIDString:
        return str(value)

    def __eq__(self, other: object) -> bool:
        """Compare by ``id`` only, against any Element; anything else is not comparable."""
        if not isinstance(other, ElementBase):
            return NotImplemented
        return bool(self.id == other.id)

    def __hash__(self) -> int:
        """Hash by ``id``, consistent with equality."""
        return hash(self.id)

    def __bool__(self) -> bool:
        """An element is always true, whatever its fields hold."""
        return True


class QueryBase(BaseModel):
    """Configuration of the generated ``MemoryQuery``: assignments are validated (L4), nothing else."""

    model_config = ConfigDict(validate_assignment=True)
