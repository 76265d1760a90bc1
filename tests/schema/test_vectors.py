"""The shared vectors of tests/vectors/: jsonschema and the Pydantic models give the recorded verdicts.

Each file ``tests/vectors/<schema>/<NNN>-<slug>.json`` holds one document, the JSON Schema verdict
(format checking on) and, only where the model's verdict differs, a ``model`` entry with the reason:
``lax:`` when the model accepts more than the schema, ``stricter:`` when it accepts less. A listed
difference that no longer differs fails here. The JavaScript tests read the same files.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from tests.schema_support import MODELS, validator

VECTORS = Path(__file__).resolve().parents[1] / "vectors"
FILES = sorted(VECTORS.glob("*/*.json"))
NAME = re.compile(r"^[0-9]{3}-[a-z0-9]+(?:-[a-z0-9]+)*\.json$")


def _load(path: Path) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return loaded


def _id(path: Path) -> str:
    return f"{path.parent.name}/{path.stem}"


def _model_expects(vector: dict[str, Any]) -> bool:
    model = vector.get("model")
    return bool(vector["valid"] if model is None else model["valid"])


def _model_accepts(name: str, document: Any) -> bool:
    # Only a pydantic ValidationError counts as a rejection: any other exception is a bug (the
    # reference leaks raw TypeErrors for some metadata strings; lionmem must not, L1).
    try:
        MODELS[name].model_validate(document)
    except ValidationError:
        return False
    return True


def _model_accepts_json(name: str, text: str) -> bool:
    try:
        MODELS[name].model_validate_json(text)
    except ValidationError:
        return False
    return True


@pytest.mark.parametrize("path", FILES, ids=_id)
def test_vector_file_is_well_formed(path: Path) -> None:
    """A vector has exactly the fixed keys, sits in its schema's folder and is named NNN-slug."""
    vector = _load(path)
    assert set(vector) - {"model"} == {"schema", "description", "valid", "document"}
    assert (vector["schema"], isinstance(vector["valid"], bool)) == (path.parent.name, True)
    assert vector["schema"] in MODELS
    assert NAME.match(path.name)
    assert vector["description"].strip()


@pytest.mark.parametrize("path", [p for p in FILES if "model" in _load(p)], ids=_id)
def test_model_entry_records_a_real_difference(path: Path) -> None:
    """A ``model`` entry differs from ``valid`` and its reason names the direction (lax/stricter)."""
    vector = _load(path)
    model = vector["model"]
    direction = "lax: " if model["valid"] else "stricter: "
    assert set(model) == {"valid", "reason"}
    assert (model["valid"] != vector["valid"], model["reason"].startswith(direction)) == (
        True,
        True,
    )


@pytest.mark.parametrize("path", FILES, ids=_id)
def test_jsonschema_gives_the_recorded_verdict(path: Path) -> None:
    """jsonschema (2020-12, format checker on, cross-file refs resolved) agrees with ``valid``."""
    vector = _load(path)
    errors = [e.message for e in validator(vector["schema"]).iter_errors(vector["document"])]
    assert (not errors) is vector["valid"], errors


@pytest.mark.parametrize("path", FILES, ids=_id)
def test_model_validate_gives_the_recorded_verdict(path: Path) -> None:
    """``model_validate`` (python mode) accepts exactly when the model verdict says valid."""
    vector = _load(path)
    assert _model_accepts(vector["schema"], vector["document"]) is _model_expects(vector)


@pytest.mark.parametrize("path", FILES, ids=_id)
def test_model_validate_json_gives_the_recorded_verdict(path: Path) -> None:
    """``model_validate_json`` on the document's JSON text gives the same verdict as python mode."""
    vector = _load(path)
    text = json.dumps(vector["document"])
    assert _model_accepts_json(vector["schema"], text) is _model_expects(vector)


def test_there_are_at_least_30_vectors() -> None:
    """The shared vectors cover at least 30 documents across the four schemas."""
    assert len(FILES) >= 30


@pytest.mark.parametrize("name", sorted(MODELS))
def test_every_schema_has_valid_and_invalid_vectors(name: str) -> None:
    """Each schema has vectors of both verdicts, and both kinds of model difference are covered."""
    vectors = [_load(path) for path in FILES if path.parent.name == name]
    assert {v["valid"] for v in vectors} == {True, False}


def test_both_kinds_of_model_difference_are_covered() -> None:
    """The vectors list lax inputs (model accepts more) and stricter ones (model accepts less)."""
    kinds = {_load(path)["model"]["valid"] for path in FILES if "model" in _load(path)}
    assert kinds == {True, False}


def test_vector_folders_are_schema_names() -> None:
    """tests/vectors/ holds one folder per schema and no stray files."""
    assert sorted(p.name for p in VECTORS.iterdir()) == sorted(MODELS)
