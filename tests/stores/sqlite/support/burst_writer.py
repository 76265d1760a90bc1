"""Print ``<n> <id>`` lines for 1,000 writes in one burst, then wait to be killed.

Run by ``tests/stores/sqlite/test_durability.py`` to check that its reader of a writer's
acknowledgements keeps every line printed before the kill, those its first read buffered included.
"""

from __future__ import annotations

import sys
import time
from uuid import UUID

if __name__ == "__main__":
    burst = "".join(f"{n} {UUID(int=n + 1)}\n" for n in range(1_000))
    sys.stdout.buffer.write(burst.encode())  # one write to the empty pipe (under its 64 KiB)
    sys.stdout.buffer.flush()
    time.sleep(60)
