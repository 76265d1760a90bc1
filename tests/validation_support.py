"""Helpers shared by the tests of the models' validation errors."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError


def only_error(exc: pytest.ExceptionInfo[ValidationError]) -> tuple[Any, str, str]:
    """Return ``(loc, type, msg)`` of the single error a ValidationError carries."""
    (error,) = exc.value.errors()
    return error["loc"], error["type"], error["msg"]
