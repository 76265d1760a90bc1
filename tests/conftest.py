"""Shared test configuration: the Hypothesis profiles and the fixtures several test modules use.

``HYPOTHESIS_PROFILE`` picks the profile: ``dev`` (the default) runs few examples, for a quick
local loop; ``ci`` (what ``make test`` uses on the main Python) runs every property test with its
full example count, derandomised, so a CI run is reproducible.
"""

from __future__ import annotations

import signal
import time
from collections.abc import Callable, Iterator

import pytest
from hypothesis import HealthCheck, settings

from tests.postgres_support import Cluster, started_cluster
from tests.profiles import DEV_EXAMPLES, PROFILE

# No deadline: the machines are shared and noisy; speed is measured by the benchmark tools.
_COMMON = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow], print_blob=True)
# Tests that need more than the default 100 examples ask for tests.profiles.examples(n).
settings.register_profile("ci", parent=_COMMON, derandomize=True)
settings.register_profile("dev", parent=_COMMON, max_examples=DEV_EXAMPLES)
if PROFILE not in {"ci", "dev"}:
    msg = f"HYPOTHESIS_PROFILE must be 'ci' or 'dev', got {PROFILE!r}"
    raise pytest.UsageError(msg)
settings.load_profile(PROFILE)

# A suite started in the background of a shell without job control inherits SIGINT ignored,
# and so would every command the tests start: the tests of Ctrl-C need it delivered.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture
def local_tz(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[str], None]]:
    """Yield a setter of the process's local time zone, restoring the original one afterwards."""

    def set_tz(name: str) -> None:
        monkeypatch.setenv("TZ", name)
        time.tzset()

    yield set_tz
    monkeypatch.undo()
    time.tzset()


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[Cluster]:
    """A throwaway PostgreSQL cluster for the whole session; fails (never skips) without one."""
    cluster = started_cluster()
    yield cluster
    cluster.destroy()


@pytest.fixture
def postgres_dsn(postgres_server: Cluster) -> str:
    """The DSN of a new, empty database (with pg_trgm) on the session's cluster."""
    return postgres_server.dsn(postgres_server.fresh_database())
