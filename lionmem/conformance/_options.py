"""The suite's two numeric options, read the same way by ``lionmem conformance`` and the plugin."""

from __future__ import annotations

import argparse
import math

__all__ = ["case_timeout", "examples_count"]


def examples_count(text: str) -> int:
    """The number of random examples: an int, 0 or more."""
    try:
        number = int(text)
    except ValueError:
        msg = f"invalid int value: {text!r}"
        raise argparse.ArgumentTypeError(msg) from None
    if number < 0:
        msg = f"must be 0 or more, got {number}"
        raise argparse.ArgumentTypeError(msg)
    return number


def case_timeout(text: str) -> float:
    """Seconds one case may take: a finite number, 0 or more (0: no limit)."""
    try:
        seconds = float(text)
    except ValueError:
        msg = f"invalid float value: {text!r}"
        raise argparse.ArgumentTypeError(msg) from None
    if not math.isfinite(seconds) or seconds < 0:
        msg = f"must be a finite number of seconds, 0 or more (0: no limit), got {text!r}"
        raise argparse.ArgumentTypeError(msg)
    return seconds
