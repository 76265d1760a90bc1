"""The Hypothesis profile in use (``HYPOTHESIS_PROFILE``, registered in ``tests/conftest.py``).

``examples(n)`` is the example count a property test asks for: its full count ``n`` under the
``ci`` profile, at most ``DEV_EXAMPLES`` under ``dev`` (the default).
"""

from __future__ import annotations

import os

__all__ = ["DEV_EXAMPLES", "PROFILE", "examples"]

PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "dev")
DEV_EXAMPLES = 20


def examples(full: int) -> int:
    """The number of examples to run for a test whose full count is ``full``."""
    return full if PROFILE == "ci" else min(full, DEV_EXAMPLES)
