"""The manifest schema states the D1 coherence rules too: jsonschema and the model always agree."""

from __future__ import annotations

import itertools
import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from pydantic import ValidationError

from lionmem import MemoryAdapterManifest

SCHEMA = json.loads(
    (Path(__file__).resolve().parents[2] / "schema" / "memory_adapter_manifest.json").read_text(
        encoding="utf-8"
    )
)
VALIDATOR = Draft202012Validator(SCHEMA)
FIELDS = ("id", "created_at", "metadata", "content", "tags")
FIDELITIES = ("full", "native_fields", "lossy")


def _subsets(pool: tuple[str, ...], sizes: range) -> list[list[str]]:
    return [list(chosen) for size in sizes for chosen in itertools.combinations(pool, size)]


@cache
def _documents() -> tuple[dict[str, Any], ...]:
    """Every classification of the five fields (32 x 32), each under 36 claim combinations."""
    classifications = list(itertools.product(_subsets(FIELDS, range(6)), repeat=2))
    claims = list(itertools.product(FIDELITIES, FIDELITIES, (False, True), (False, True)))
    documents = []
    for index, (native, dropped) in enumerate(classifications):
        # All 36 claim combinations for the coherent classifications and a rotating four for the
        # rest (their verdict is decided by the classification alone).
        coherent = set(native).isdisjoint(dropped) and set(native) | set(dropped) == set(FIELDS)
        chosen = claims if coherent else [claims[(index + k * 9) % len(claims)] for k in range(4)]
        for retrieve, search, tags, preserves in chosen:
            documents.append(
                {
                    "adapter": "agreement",
                    "native_item_fields": native,
                    "dropped_item_fields": dropped,
                    "supported_filters": [],
                    "search_consistency": "immediate",
                    "retrieve_fidelity": retrieve,
                    "search_fidelity": search,
                    "search_returns_tags": tags,
                    "preserves_metadata": preserves,
                }
            )
    return tuple(documents)


@cache
def _schema_verdicts() -> tuple[bool, ...]:
    return tuple(VALIDATOR.is_valid(document) for document in _documents())


def _model_accepts(document: dict[str, Any]) -> bool:
    try:
        MemoryAdapterManifest.model_validate(document)
    except ValidationError:
        return False
    return True


def test_schema_is_a_valid_2020_12_schema() -> None:
    """The manifest schema passes the draft 2020-12 metaschema."""
    Draft202012Validator.check_schema(SCHEMA)


def test_schema_and_model_agree_on_every_classification() -> None:
    """On all 1024 field classifications under the fidelity/tag/metadata claims, both verdicts match."""
    documents = _documents()
    disagreements = [
        document
        for document, verdict in zip(documents, _schema_verdicts(), strict=True)
        if verdict is not _model_accepts(document)
    ]
    assert (len(documents) > 4000, disagreements) == (True, [])


def test_agreement_corpus_holds_both_verdicts() -> None:
    """The corpus of the agreement test holds valid and invalid manifests alike."""
    assert set(_schema_verdicts()) == {True, False}


@pytest.mark.parametrize(
    ("any_key", "listed"), [(False, []), (False, ["a"]), (True, []), (True, ["a"])]
)
def test_schema_and_model_agree_on_any_filter_key(any_key: bool, listed: list[str]) -> None:
    """The any-filter-key rule gives the same verdict in the schema and the model."""
    document = {
        "adapter": "agreement",
        "native_item_fields": list(FIELDS),
        "dropped_item_fields": [],
        "supported_filters": listed,
        "supports_any_filter_key": any_key,
        "search_consistency": "eventual",
        "retrieve_fidelity": "full",
        "search_fidelity": "full",
        "search_returns_tags": True,
        "preserves_metadata": True,
    }
    assert VALIDATOR.is_valid(document) is _model_accepts(document)
