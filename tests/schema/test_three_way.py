"""Three-way agreement on the shared vectors: Python's jsonschema, the Pydantic models and ajv.

jsonschema (draft 2020-12, format checker on) and ajv (draft 2020-12 build, ajv-formats, strict
mode, run in Node by ``tools/typescript/validate.mjs``) must both give each vector's ``valid``. The
model must give it too, unless the vector lists a deliberate difference in its ``model`` entry
(``lax: ...`` or ``stricter: ...``, with the reason); an entry the model no longer differs on fails.
The model reads the document as JSON text, as it would from a client in another language.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from functools import cache
from importlib import import_module
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from pydantic import BaseModel, ValidationError
from referencing import Registry, Resource

from lionmem._formats import format_checker

ROOT = Path(__file__).resolve().parents[2]
SCHEMA_DIR = ROOT / "schema"
FILES = sorted((ROOT / "tests" / "vectors").glob("*/*.json"))


def _load(path: Path) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return loaded


def _id(path: Path) -> str:
    return f"{path.parent.name}/{path.stem}"


@cache
def _schemas() -> dict[str, dict[str, Any]]:
    return {path.stem: _load(path) for path in sorted(SCHEMA_DIR.glob("*.json"))}


@cache
def _validator(name: str) -> Draft202012Validator:
    registry: Registry[Any] = Registry().with_resources(
        (schema["$id"], Resource.from_contents(schema)) for schema in _schemas().values()
    )
    return Draft202012Validator(
        _schemas()[name], registry=registry, format_checker=format_checker()
    )


def _model(name: str) -> type[BaseModel]:
    """The generated model of ``schema/<name>.json``: the class named by its title."""
    model: type[BaseModel] = getattr(
        import_module(f"lionmem_models.{name}"), _schemas()[name]["title"]
    )
    return model


def jsonschema_accepts(name: str, document: Any) -> bool:
    return bool(_validator(name).is_valid(document))


def model_accepts(name: str, document: Any) -> bool:
    # Only a ValidationError counts as a rejection; any other exception is a bug and propagates.
    try:
        _model(name).model_validate_json(json.dumps(document))
    except ValidationError:
        return False
    return True


def ajv_verdicts(cases: list[dict[str, Any]]) -> list[bool]:
    """Validate ``[{"schema": name, "document": ...}]`` with ajv in one Node process."""
    node = shutil.which("node")
    if node is None:  # fail, never skip: the JavaScript side is part of what this file proves
        pytest.fail("node is not on PATH: the three-way test needs Node.js 20 and `npm ci`")
    completed = subprocess.run(
        [node, str(ROOT / "tools" / "typescript" / "validate.mjs"), "--schemas", str(SCHEMA_DIR)],
        input=json.dumps(cases),
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
    )
    assert completed.returncode == 0, completed.stderr
    return [verdict["valid"] for verdict in json.loads(completed.stdout)]


@pytest.fixture(scope="module")
def ajv() -> dict[str, bool]:
    """ajv's verdict on every vector, keyed by vector id."""
    vectors = [_load(path) for path in FILES]
    cases = [{"schema": v["schema"], "document": v["document"]} for v in vectors]
    return dict(zip(map(_id, FILES), ajv_verdicts(cases), strict=True))


def disagreements(vector: dict[str, Any], ajv_valid: bool) -> list[str]:
    """Every way the three verdicts on ``vector`` differ from the recorded ones, as sentences."""
    name, document, valid = vector["schema"], vector["document"], vector["valid"]
    listed = vector.get("model")
    model_expected = valid if listed is None else listed["valid"]
    found = []
    if jsonschema_accepts(name, document) is not valid:
        found.append(f"jsonschema says valid={not valid}, the vector says {valid}")
    if ajv_valid is not valid:
        found.append(f"ajv says valid={ajv_valid}, the vector says {valid}")
    if model_accepts(name, document) is not model_expected:
        reason = "no difference is listed" if listed is None else f"listed: {listed['reason']}"
        found.append(f"the model says valid={not model_expected} ({reason})")
    return found


@pytest.mark.parametrize("path", FILES, ids=_id)
def test_jsonschema_ajv_and_model_agree(path: Path, ajv: dict[str, bool]) -> None:
    """jsonschema and ajv give ``valid``; the model gives it too or the listed difference."""
    assert disagreements(_load(path), ajv[_id(path)]) == []


def test_a_stale_difference_entry_is_reported() -> None:
    """A ``model`` entry on a document the model treats like the schema is a disagreement."""
    stale = {
        "schema": "memory_item",
        "valid": True,
        "document": {"tags": ["a"]},
        "model": {"valid": False, "reason": "stricter: (no longer true)"},
    }
    assert disagreements(stale, ajv_valid=True) == [
        "the model says valid=True (listed: stricter: (no longer true))"
    ]


def test_an_unlisted_difference_is_reported() -> None:
    """A document the model accepts against the schema's verdict, with no entry, is reported."""
    lax = {"schema": "element", "valid": False, "document": {"created_at": "2020-01-01T00:00:00Z"}}
    assert disagreements(lax, ajv_valid=False) == [
        "the model says valid=True (no difference is listed)"
    ]


def test_an_ajv_disagreement_is_reported() -> None:
    """ajv's verdict is checked against the vector's, not against the other validators."""
    vector = {"schema": "memory_query", "valid": True, "document": {"limit": 5}}
    assert disagreements(vector, ajv_valid=False) == ["ajv says valid=False, the vector says True"]


def test_ajv_in_node_tells_valid_from_invalid() -> None:
    """The Node runner reports a verdict per document, in order (a closed schema, a bad uuid)."""
    cases = [
        {"schema": "memory_item", "document": {"content": {"nested": [1, "é", None]}}},
        {"schema": "memory_item", "document": {"contents": 1}},
        {"schema": "element", "document": {"id": "not-a-uuid"}},
    ]
    assert ajv_verdicts(cases) == [True, False, False]


def test_every_vector_is_checked() -> None:
    """The vectors are found: at least 30, over the schemas in schema/."""
    names = {_load(path)["schema"] for path in FILES}
    assert (len(FILES) >= 30, names <= set(_schemas())) == (True, True)
